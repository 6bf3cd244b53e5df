//! DVRM fill on the device (mirrors `zkrv_machine::tables::dvrm::dvrm_trace`, kernel `kernels/tables/dvrm.cu`).
//! The requests DVRM makes of MUL and LT are made on the host (`zkrv_machine::tables::dvrm::dvrm_requests`,
//! called by `generate_split`) or, with `DeviceFill::requests`, on the device (`tables::requests::device_requests`).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::dvrm::{dvrm_height, DvrmRequests, NUM_DVRM_COLS};

use crate::tables::{fill_from_requests, fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::stats::TransferStats;
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

/// Fills the DVRM trace on the device from the deduplicated requests `(n, d, signed) -> (m_q, m_r)`: returns
/// `n x 34` row-major u64 (n = `dvrm_height(requests.len(), min_height)`, natural order, canonical field
/// elements), exactly `dvrm_trace`'s rows (padding rows included), and adds the rows' BITWISE lookups to
/// `lookups`. Makes no MUL/LT requests (see `dvrm_requests`). Uploads `40 * requests.len()` bytes (recorded as
/// H2D stage "trace-gen", table "DVRM").
/// Errors: launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
pub fn fill_dvrm(
    dev: &Device,
    requests: &DvrmRequests,
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    fill_from_requests(
        dev,
        &kernels::DVRM_CU,
        "dvrm_fill",
        "DVRM",
        &dvrm_upload(requests),
        dvrm_height(requests.len(), min_height),
        NUM_DVRM_COLS,
        lookups,
        stats,
    )
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
    DvrmFill: Dvrm, DVRM_CU, |cx, stats| {
        match cx.requests {
            Some(r) => fill_dvrm_resident(cx.dev, &r.dvrm, cx.min_height(), cx.lookups),
            None => {
                let reqs = &cx.split.inputs.dvrm;
                fill_dvrm(cx.dev, reqs, cx.min_height(), cx.lookups, stats)
            }
        }
    }
}
