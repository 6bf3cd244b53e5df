//! LT fill on the device (mirrors `zkrv_machine::tables::lt::lt_trace`, kernel `kernels/tables/lt.cu`).

use crate::kernels;
use std::collections::BTreeMap;

use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::lt::{lt_height, NUM_LT_COLS};

use crate::tables::{fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One deduplicated LT request as uploaded (32 bytes, the kernel's `LtRequest`): `[a <s b]` (signed = 1) or
/// `[a <u b]` (signed = 0), answering `m` ALU requests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LtRequest {
    pub a: u64,
    pub b: u64,
    pub signed: u64,
    pub m: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for LtRequest {}

/// The upload form of the requests, in key order (= row order).
pub fn lt_requests(requests: &BTreeMap<(u64, u64, bool), u64>) -> Vec<LtRequest> {
    requests
        .iter()
        .map(|(&(a, b, signed), &m)| LtRequest {
            a,
            b,
            signed: signed as u64,
            m,
        })
        .collect()
}

/// The fill from deduplicated requests in key order already on the device (`tables::requests::device_requests`): `req.len()`
/// entries, row order; the same rows as `lt_trace` of the host list they equal. Uploads nothing.
/// Errors: launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
pub fn fill_lt_resident(
    dev: &Device,
    req: &DeviceBuffer<LtRequest>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    fill_from_uploaded(
        dev,
        &kernels::LT_CU,
        "lt_fill",
        "LT",
        req,
        lt_height(req.len(), min_height),
        NUM_LT_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The LT device fill ([`super::DeviceTableFill`]).
    LtFill: Lt, LT_CU, |cx, _stats| {
        let r = cx.need_requests("LT")?;
        fill_lt_resident(cx.dev, &r.lt, cx.min_height(), cx.lookups)
    }
}
