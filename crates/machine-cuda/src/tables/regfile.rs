//! REGFILE fill on the device (mirrors `zkrv_machine::tables::regfile::regfile_trace`, kernel
//! `kernels/tables/regfile.cu`). The register walk runs on the host (`generate_split`); each register cell's
//! final state is uploaded as a 16-byte [`RegfileIn`] (34 of them).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::bus::NUM_REG_CELLS;
use zkrv_machine::tables::regfile::{NUM_REGFILE_COLS, REGFILE_HEIGHT};

use crate::tables::{fill_from_uploaded, DeviceLookups};
use zkrv_cuda::device::Device;
use zkrv_cuda::device::DeviceBuffer;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One register cell's final state as uploaded (16 bytes, `#[repr(C)]`, no padding; the kernel's `RegfileIn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegfileIn {
    /// The final value.
    pub v: u64,
    /// Timestamp of the last access (0 if never accessed).
    pub ts: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for RegfileIn {}

/// REGFILE height for `min_height` (a power of two): `max(REGFILE_HEIGHT, min_height)`, as `regfile_trace`.
pub fn regfile_height(min_height: usize) -> usize {
    REGFILE_HEIGHT.max(min_height).next_power_of_two()
}

/// The REGFILE fill (exactly the host fill's rows, padding rows included; their BITWISE lookups added to
/// `lookups`) from the register cells' final states already on the device (`fin`: the register walk's,
/// `tables::regwalk::reg_walk`): uploads nothing. Errors: more than `NUM_REG_CELLS` cells, launch shape,
/// allocation, launch.
pub fn fill_regfile_resident(
    dev: &Device,
    fin: &DeviceBuffer<RegfileIn>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    if fin.len() > NUM_REG_CELLS {
        return Err(CudaError::InvalidArgument(format!(
            "REGFILE fill: {} registers, at most {NUM_REG_CELLS}",
            fin.len()
        )));
    }
    fill_from_uploaded(
        dev,
        &kernels::REGFILE_CU,
        "regfile_fill",
        "REGFILE",
        fin,
        regfile_height(min_height),
        NUM_REGFILE_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The REGFILE device fill ([`super::DeviceTableFill`]).
    RegfileFill: Regfile, REGFILE_CU, |cx, _stats| {
        let w = cx.need_walk("REGFILE")?;
        fill_regfile_resident(cx.dev, &w.fin, cx.min_height(), cx.lookups)
    }
}
