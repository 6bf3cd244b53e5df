//! DECODE multiplicities on the device (kernels `kernels/tables/decode.cu`; reference: the DECODE counts of
//! `zkrv_machine::trace::generate_split_at`). The CPU fill counts each row's DECODE lookup into
//! [`DeviceLookups::decode`] ([`count_decode`], launched by `cpu::fill_cpu_uploaded` when the counters exist);
//! [`fill_decode`] then writes the DECODE main trace from them. Nothing crosses PCIe.

use crate::kernels;
use crate::tables::{fill_counts_column, launch_1d, DeviceCycles, DeviceLookups, FILL_BLOCK};
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// Counts the DECODE lookups of the `height` CPU rows (the record's `cycles`, then padding rows at DECODE row
/// 0) into `lookups.decode`, one thread per row. `row_of_pc` (`n_slots` u32 on the device) and `base_pc` are
/// the CPU fill's `CpuDecode`; `n_decode_rows` the number of DECODE rows it indexes (every entry of
/// `row_of_pc` is below it or `NO_DECODE_ROW`). Errors: counters missing or shorter than `n_decode_rows`,
/// `height <= cycles.len`, launch shape, launch.
pub(crate) fn count_decode(
    dev: &Device,
    cycles: &DeviceCycles,
    row_of_pc: &DeviceBuffer<u32>,
    base_pc: u32,
    n_decode_rows: usize,
    height: usize,
    lookups: &DeviceLookups,
) -> Result<(), CudaError> {
    if lookups.decode.len() < n_decode_rows.max(1) || height <= cycles.len {
        return Err(CudaError::InvalidArgument(format!(
            "DECODE counts: {} counters for {n_decode_rows} DECODE rows, CPU height {height} for {} cycles",
            lookups.decode.len(),
            cycles.len
        )));
    }
    let n_slots = u32::try_from(row_of_pc.len())
        .map_err(|_| CudaError::InvalidArgument("DECODE counts: too many pc slots".into()))?;
    let cfg = launch_1d(height as u64, 1, FILL_BLOCK)?;
    // SAFETY: `cycles.data` holds `cycles.len` CycleEvents (4 u64 each), `row_of_pc` n_slots u32 whose entries
    // are DECODE rows < n_decode_rows <= lookups.decode.len() or NO_DECODE_ROW (counted at row 0); the grid
    // covers `height` threads with full warps (launch_1d) and the kernel skips the rest.
    unsafe {
        dev.launch(
            &kernels::DECODE_CU,
            "decode_count",
            cfg,
            &[
                KArg::U64(cycles.data.ptr()),
                KArg::U64(cycles.len as u64),
                KArg::U64(row_of_pc.ptr()),
                KArg::U32(base_pc),
                KArg::U32(n_slots),
                KArg::U64(lookups.decode.ptr()),
                KArg::U64(height as u64),
            ],
        )
    }
}

/// The DECODE main trace from the device counters: `lookups.decode.len() x 1` row-major u64 (the DECODE
/// height, natural order), the multiplicity of each DECODE row, exactly the host's DECODE trace once the CPU
/// fill has counted (run it first, on the same stream). Uploads nothing. Errors: no counters
/// ([`DeviceLookups::with_counters`] with 0 DECODE rows), launch shape, allocation, launch.
pub fn fill_decode(dev: &Device, lookups: &DeviceLookups) -> Result<DeviceTrace, CudaError> {
    crate::layout::check_width("DECODE", 1)?;
    fill_counts_column(
        dev,
        &kernels::DECODE_CU,
        "decode_fill",
        "DECODE",
        &lookups.decode,
    )
}

super::device_fill! {
    /// The DECODE (from the CPU fill's counters, which runs first) device fill ([`super::DeviceTableFill`]).
    DecodeFill: Decode, DECODE_CU, |cx, _stats| {
        fill_decode(cx.dev, cx.lookups)
    }
}
