//! SHIFT fill on the device (mirrors `zkrv_machine::tables::shift::shift_fill`, kernel
//! `kernels/tables/shift.cu`). The requests SHIFT makes of other tables (MUL checks, POW2 counters) stay on the
//! host (`zkrv_machine::tables::shift::shift_side_requests`, called by `generate_split`).

use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::shift::{shift_height, ShiftRequests, NUM_SHIFT_COLS};

use crate::backend::DeviceTrace;
use crate::device::{Device, Program};
use crate::error::CudaError;
use crate::stats::TransferStats;
use crate::tables::{fill_from_requests, DeviceLookups};

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
    fill_from_requests(
        dev,
        Program::TableShift,
        "shift_fill",
        "SHIFT",
        &shift_requests(requests),
        rows,
        NUM_SHIFT_COLS,
        lookups,
        stats,
    )
}
