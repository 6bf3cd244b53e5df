//! MUL fill on the device (mirrors `zkrv_machine::tables::mul::mul_trace`, kernel `kernels/tables/mul.cu`).
//! Every MUL request (CPU, CPU32, DVRM, SHIFT's checks) is counted on the host (`generate_split`) or, with
//! `DeviceFill::requests`, on the device (`tables::requests::device_requests`); the fill writes the rows.

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::mul::{mul_height, MulRequests, NUM_MUL_COLS};

use crate::tables::{fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One deduplicated MUL request as uploaded (40 bytes, the kernel's `MulRequest`): the product `a x b` with
/// `signs = sa_en | sb_en << 1`, answering `m_lo` MUL and `m_hi` MULHU/MULHSU/MULH requests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MulRequest {
    pub a: u64,
    pub b: u64,
    pub signs: u64,
    pub m_lo: u64,
    pub m_hi: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for MulRequest {}

/// The upload form of the requests, in key order (= row order).
pub fn mul_requests(requests: &MulRequests) -> Vec<MulRequest> {
    requests
        .rows
        .iter()
        .map(|(&(a, b, sa, sb), &[m_lo, m_hi])| MulRequest {
            a,
            b,
            signs: sa as u64 | (sb as u64) << 1,
            m_lo,
            m_hi,
        })
        .collect()
}

/// The fill from deduplicated requests in key order already on the device (`tables::requests::device_requests`): `req.len()`
/// entries, row order; the same rows as `mul_trace` of the host list they equal. Uploads nothing.
/// Errors: launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
pub fn fill_mul_resident(
    dev: &Device,
    req: &DeviceBuffer<MulRequest>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    fill_from_uploaded(
        dev,
        &kernels::MUL_CU,
        "mul_fill",
        "MUL",
        req,
        mul_height(req.len(), min_height),
        NUM_MUL_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The MUL device fill ([`super::DeviceTableFill`]).
    MulFill: Mul, MUL_CU, |cx, _stats| {
        let r = cx.need_requests("MUL")?;
        fill_mul_resident(cx.dev, &r.mul, cx.min_height(), cx.lookups)
    }
}
