//! BYTEWISE fill on the device (mirrors `zkrv_machine::tables::bytewise::bytewise_trace`, kernel
//! `kernels/tables/bytewise.cu`).

use crate::kernels;
use std::collections::BTreeMap;

use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::bytewise::{bytewise_height, NUM_BYTEWISE_COLS};

use crate::tables::{fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One deduplicated BYTEWISE request as uploaded (32 bytes, the kernel's `BytewiseRequest`): `op(a, b)` with
/// `op` the ALU code AND, OR or XOR, answering `m` ALU requests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BytewiseRequest {
    pub op: u64,
    pub a: u64,
    pub b: u64,
    pub m: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for BytewiseRequest {}

/// The upload form of the requests `(op, a, b) -> m`, in key order (= row order).
pub fn bytewise_requests(requests: &BTreeMap<(u64, u64, u64), u64>) -> Vec<BytewiseRequest> {
    requests
        .iter()
        .map(|(&(op, a, b), &m)| BytewiseRequest { op, a, b, m })
        .collect()
}

/// The fill from deduplicated requests in key order already on the device (`tables::requests::device_requests`): `req.len()`
/// entries, row order; the same rows as `bytewise_trace` of the host list they equal. Uploads nothing.
/// Errors: launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
pub fn fill_bytewise_resident(
    dev: &Device,
    req: &DeviceBuffer<BytewiseRequest>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    fill_from_uploaded(
        dev,
        &kernels::BYTEWISE_CU,
        "bytewise_fill",
        "BYTEWISE",
        req,
        bytewise_height(req.len(), min_height),
        NUM_BYTEWISE_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The BYTEWISE device fill ([`super::DeviceTableFill`]).
    BytewiseFill: Bytewise, BYTEWISE_CU, |cx, _stats| {
        let r = cx.need_requests("BYTEWISE")?;
        fill_bytewise_resident(cx.dev, &r.bytewise, cx.min_height(), cx.lookups)
    }
}
