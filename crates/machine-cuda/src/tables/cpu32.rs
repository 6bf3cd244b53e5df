//! CPU32 fill on the device (mirrors `zkrv_machine::tables::cpu32::cpu32_trace`, kernel
//! `kernels/tables/cpu32.cu`). The inner requests CPU32 makes of SHIFT, MUL and DVRM are made on the host
//! (`zkrv_machine::tables::cpu32::cpu32_requests`, called by `generate_split`) or, with `DeviceFill::requests`,
//! on the device with the W-op list (`tables::requests::device_requests`).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::bus::alu;
use zkrv_machine::tables::cpu32::{cpu32_height, NUM_CPU32_COLS};

use crate::tables::{fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::{Device, DeviceBuffer};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One W operation as uploaded (24 bytes, the kernel's `Cpu32In`): `op(a, b)` with `op` the ALU code
/// ADDW..=REMUW, a and b the 64-bit register / immediate operands.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cpu32In {
    pub a: u64,
    pub b: u64,
    pub op: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for Cpu32In {}

/// The upload form of the W operations `(op, a, b)`, in row order. Errors: [`CudaError::InvalidArgument`] for
/// an op that is not a W code (the host fill refuses it too).
pub fn cpu32_inputs(ops: &[(u64, u64, u64)]) -> Result<Vec<Cpu32In>, CudaError> {
    ops.iter()
        .enumerate()
        .map(|(k, &(op, a, b))| {
            if (alu::ADDW..=alu::REMUW).contains(&op) {
                Ok(Cpu32In { a, b, op })
            } else {
                Err(CudaError::InvalidArgument(format!(
                    "CPU32 operation {k}: ALU code {op} is not a W op"
                )))
            }
        })
        .collect()
}

/// The fill from W operations in execution order already on the device (`tables::requests::device_requests`): `req.len()`
/// entries, row order; the same rows as `cpu32_trace` of the host list they equal. Uploads nothing.
/// Errors: launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
pub fn fill_cpu32_resident(
    dev: &Device,
    req: &DeviceBuffer<Cpu32In>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    fill_from_uploaded(
        dev,
        &kernels::CPU32_CU,
        "cpu32_fill",
        "CPU32",
        req,
        cpu32_height(req.len(), min_height),
        NUM_CPU32_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The CPU32 device fill ([`super::DeviceTableFill`]).
    Cpu32Fill: Cpu32, CPU32_CU, |cx, _stats| {
        let r = cx.need_requests("CPU32")?;
        fill_cpu32_resident(cx.dev, &r.cpu32, cx.min_height(), cx.lookups)
    }
}
