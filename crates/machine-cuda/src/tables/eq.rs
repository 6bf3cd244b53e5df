//! EQ fill on the device (mirrors `zkrv_machine::tables::eq::eq_trace`, kernel `kernels/tables/eq.cu`).

use crate::kernels;
use std::collections::BTreeMap;

use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::eq::{eq_height, NUM_EQ_COLS};

use crate::tables::{fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One deduplicated EQ request as uploaded (24 bytes, the kernel's `EqRequest`): `[a == b]`, answering `m` ALU
/// requests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EqRequest {
    pub a: u64,
    pub b: u64,
    pub m: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for EqRequest {}

/// The upload form of the requests `(a, b) -> m`, in key order (= row order).
pub fn eq_requests(requests: &BTreeMap<(u64, u64), u64>) -> Vec<EqRequest> {
    requests
        .iter()
        .map(|(&(a, b), &m)| EqRequest { a, b, m })
        .collect()
}

/// The fill from deduplicated requests in key order already on the device (`tables::requests::device_requests`): `req.len()`
/// entries, row order; the same rows as `eq_trace` of the host list they equal. Uploads nothing.
/// Errors: launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
pub fn fill_eq_resident(
    dev: &Device,
    req: &DeviceBuffer<EqRequest>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    fill_from_uploaded(
        dev,
        &kernels::EQ_CU,
        "eq_fill",
        "EQ",
        req,
        eq_height(req.len(), min_height),
        NUM_EQ_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The EQ device fill ([`super::DeviceTableFill`]).
    EqFill: Eq, EQ_CU, |cx, _stats| {
        let r = cx.need_requests("EQ")?;
        fill_eq_resident(cx.dev, &r.eq, cx.min_height(), cx.lookups)
    }
}
