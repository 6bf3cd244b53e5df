//! DVRM fill on the device (mirrors `zkrv_machine::tables::dvrm::dvrm_trace`, kernel `kernels/tables/dvrm.cu`).
//! The requests DVRM makes of MUL and LT are made on the host (`zkrv_machine::tables::dvrm::dvrm_requests`,
//! called by `generate_split`) or, with `DeviceFill::requests`, on the device (`tables::requests::device_requests`).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::dvrm::{dvrm_height, DvrmRequests, NUM_DVRM_COLS};

use crate::tables::{fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One deduplicated DVRM request as uploaded (40 bytes, the kernel's `DvrmRequest`): `n / d` (signed = 1: DIV/REM,
/// 0: DIVU/REMU), answering `m_q` quotient and `m_r` remainder requests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DvrmRequest {
    pub n: u64,
    pub d: u64,
    pub signed: u64,
    pub m_q: u64,
    pub m_r: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for DvrmRequest {}

/// The upload form of the requests, in key order (= row order).
pub fn dvrm_upload(requests: &DvrmRequests) -> Vec<DvrmRequest> {
    requests
        .iter()
        .map(|(&(n, d, signed), &(m_q, m_r))| DvrmRequest {
            n,
            d,
            signed: signed as u64,
            m_q,
            m_r,
        })
        .collect()
}

/// The fill from deduplicated requests in key order already on the device (`tables::requests::device_requests`): `req.len()`
/// entries, row order; the same rows as `dvrm_trace` of the host list they equal. Uploads nothing.
/// Errors: launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
pub fn fill_dvrm_resident(
    dev: &Device,
    req: &DeviceBuffer<DvrmRequest>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    fill_from_uploaded(
        dev,
        &kernels::DVRM_CU,
        "dvrm_fill",
        "DVRM",
        req,
        dvrm_height(req.len(), min_height),
        NUM_DVRM_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The DVRM device fill ([`super::DeviceTableFill`]).
    DvrmFill: Dvrm, DVRM_CU, |cx, _stats| {
        let r = cx.need_requests("DVRM")?;
        fill_dvrm_resident(cx.dev, &r.dvrm, cx.min_height(), cx.lookups)
    }
}
