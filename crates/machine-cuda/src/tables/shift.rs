//! SHIFT fill on the device (mirrors `zkrv_machine::tables::shift::shift_fill`, kernel
//! `kernels/tables/shift.cu`). The requests SHIFT makes of other tables (MUL checks, POW2 counters) are made on the
//! host (`zkrv_machine::tables::shift::shift_side_requests`, called by `generate_split`) or, with
//! `DeviceFill::requests`, by `tables::requests::device_requests`; when POW2 is built
//! resident the fill also counts its POW2 requests on the device ([`DeviceLookups::pow2`], [`fill_pow2`]).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::shift::{shift_height, ShiftRequests, NUM_SHIFT_COLS};

use crate::tables::{fill_counts_column, fill_from_uploaded, launch_1d, DeviceLookups, FILL_BLOCK};
use zkrv_cuda::device::KArg;
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;
use zkrv_machine::tables::shift::POW2_HEIGHT;

/// One deduplicated SHIFT request as uploaded (32 bytes, the kernel's `ShiftRequest`): `op(a, b)` with `op` the
/// ALU code (`ShiftOp::alu`, SLL..SRA5), answering `m` ALU requests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShiftRequest {
    pub a: u64,
    pub b: u64,
    pub op: u64,
    pub m: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for ShiftRequest {}

/// The upload form of the requests, in key order (= row order).
pub fn shift_requests(requests: &ShiftRequests) -> Vec<ShiftRequest> {
    requests
        .iter()
        .map(|(&(op, a, b), &m)| ShiftRequest {
            a,
            b,
            op: op.alu(),
            m,
        })
        .collect()
}

/// The SHIFT fill (exactly the host fill's rows, padding rows included; their BITWISE lookups added to
/// `lookups`) from deduplicated requests already on the device (`tables::requests::device_requests`):
/// `req.len()` entries in key order; counts the POW2 requests like the SHIFT fill. Uploads nothing. Errors: as
/// the SHIFT fill.
pub fn fill_shift_resident(
    dev: &Device,
    req: &DeviceBuffer<ShiftRequest>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    let rows = shift_height(req.len(), min_height);
    crate::layout::check_width("SHIFT", NUM_SHIFT_COLS)?;
    let cfg = launch_1d(rows as u64, NUM_SHIFT_COLS as u64, FILL_BLOCK)?;
    let count_pow2 = !lookups.pow2.is_empty();
    if count_pow2 && lookups.pow2.len() < POW2_USED_ROWS {
        return Err(CudaError::InvalidArgument(format!(
            "SHIFT fill: {} POW2 counters, at least {POW2_USED_ROWS}",
            lookups.pow2.len()
        )));
    }
    let trace = fill_from_uploaded(
        dev,
        &kernels::SHIFT_CU,
        "shift_fill",
        "SHIFT",
        req,
        rows,
        NUM_SHIFT_COLS,
        lookups,
    )?;
    if count_pow2 {
        // SAFETY: `req` holds req.len() <= rows requests, each with s < 64 (so its POW2 row s + 64 w5 < 96 <=
        // lookups.pow2.len()); the grid covers `rows` threads with full warps and the kernel skips the rest.
        unsafe {
            dev.launch(
                &kernels::SHIFT_CU,
                "pow2_count",
                cfg,
                &[
                    KArg::U64(req.ptr()),
                    KArg::U64(req.len() as u64),
                    KArg::U64(rows as u64),
                    KArg::U64(lookups.pow2.ptr()),
                ],
            )?;
        }
    }
    Ok(trace)
}

/// POW2 rows a SHIFT request can name: `s + 64 w5` for `s < 64` (`w5 = 0`) or `s < 32` (`w5 = 1`).
const POW2_USED_ROWS: usize = 96;
const _: () = assert!(POW2_USED_ROWS <= POW2_HEIGHT);

/// The POW2 main trace from the device counters: `lookups.pow2.len() x 1` row-major u64 (`pow2_height(min_height)`
/// rows, natural order), exactly `shift_side_requests`'s counters once the SHIFT fill has counted (run it first,
/// on the same stream). Uploads nothing. Errors: no counters ([`DeviceLookups::with_counters`] with 0 POW2 rows),
/// launch shape, allocation, launch.
pub fn fill_pow2(dev: &Device, lookups: &DeviceLookups) -> Result<DeviceTrace, CudaError> {
    fill_counts_column(dev, &kernels::SHIFT_CU, "pow2_fill", "POW2", &lookups.pow2)
}

super::device_fill! {
    /// The SHIFT device fill ([`super::DeviceTableFill`]).
    ShiftFill: Shift, SHIFT_CU, |cx, _stats| {
        let r = cx.need_requests("SHIFT")?;
        fill_shift_resident(cx.dev, &r.shift, cx.min_height(), cx.lookups)
    }
}

super::device_fill! {
    /// The POW2 (from the SHIFT fill's counters, which runs first) device fill ([`super::DeviceTableFill`]).
    Pow2Fill: Pow2, SHIFT_CU, |cx, _stats| {
        fill_pow2(cx.dev, cx.lookups)
    }
}
