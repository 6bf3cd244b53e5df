//! SHIFT fill on the device (mirrors `zkrv_machine::tables::shift::shift_fill`, kernel
//! `kernels/tables/shift.cu`). The requests SHIFT makes of other tables (MUL checks, POW2 counters) stay on the
//! host (`zkrv_machine::tables::shift::shift_side_requests`, called by `generate_split`).

use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::shift::{shift_height, ShiftRequests, NUM_SHIFT_COLS};

use crate::backend::DeviceTrace;
use crate::device::{Device, KArg, Program};
use crate::error::CudaError;
use crate::stats::TransferStats;
use crate::tables::{alloc_trace, launch_1d, DeviceLookups, FILL_BLOCK};

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

/// Fills the SHIFT trace on the device from the deduplicated requests `(op, a, b) -> count`: returns
/// `n x 22` row-major u64 (n = `shift_height(requests.len(), min_height)`, natural order, canonical field
/// elements), exactly `shift_fill`'s rows (padding rows included), and adds the rows' BITWISE lookups to
/// `lookups`. Makes no MUL/POW2 requests (see `shift_side_requests`). Uploads `32 * requests.len()` bytes
/// (recorded as H2D stage "trace-gen", table "SHIFT").
/// Errors: launch shape out of bounds ([`launch_1d`]), allocation, launch.
pub fn fill_shift(
    dev: &Device,
    requests: &ShiftRequests,
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let rows = shift_height(requests.len(), min_height);
    let cfg = launch_1d(rows as u64, NUM_SHIFT_COLS as u64, FILL_BLOCK)?;
    let host = shift_requests(requests);
    let req = if host.is_empty() {
        dev.alloc::<ShiftRequest>(0)?
    } else {
        dev.upload(&host)?
    };
    stats.add_h2d(
        "trace-gen",
        "SHIFT",
        (host.len() * std::mem::size_of::<ShiftRequest>()) as u64,
    );
    let trace = alloc_trace(dev, rows, NUM_SHIFT_COLS)?;
    // SAFETY: `req` holds `host.len()` requests (at least one slot), `trace` rows x 22 u64, `counts` the
    // 7 x 2^16 histogram; the grid covers `rows` threads (launch_1d) and the kernel skips the rest.
    unsafe {
        dev.launch(
            Program::TableShift,
            "shift_fill",
            cfg,
            &[
                KArg::U64(req.ptr()),
                KArg::U64(host.len() as u64),
                KArg::U64(rows as u64),
                KArg::U64(trace.data.ptr()),
                KArg::U64(lookups.counts.ptr()),
            ],
        )?;
    }
    // `req` is freed stream-ordered after the kernel.
    drop(req);
    Ok(trace)
}
