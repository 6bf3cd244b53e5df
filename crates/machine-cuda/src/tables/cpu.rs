//! Device fill of the CPU table with its MEMW_R register-access group (kernel `kernels/tables/cpu.cu`,
//! reference `zkrv_machine::tables::cpu::cpu_trace`).

use crate::kernels;
use cudarc::driver::LaunchConfig;
use zkrv_executor::CycleEvent;
use zkrv_machine::tables::cpu::{cpu_height, CpuDecode, RegWalk, NUM_CPU_COLS};
use zkrv_machine::tables::decode::NUM_DECODE_PREP_COLS;

use super::{alloc_trace, launch_1d, DeviceCycles, DeviceLookups, FILL_BLOCK};
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// The kernel's `end_pc` of a record that does not pause (`cpu.cu` `CPU_NO_END_PC`): its last real row goes
/// on at pc + 4.
pub const NO_END_PC: u64 = u64::MAX;

/// Stage name of the trace-generation uploads in [`TransferStats`].
pub const STAGE_TRACE_GEN: &str = "trace-gen";

/// Fills the CPU main trace on the device: `cpu_height(cycles, min_height) x 44` row-major u64, natural
/// order, padding rows included, exactly `cpu_trace(cycles, walk, decode, min_height, ..)` (with `end_pc`, a
/// paused segment's end pc, as the last real row's `next_pc`: `TraceStart::end_pc`; `None`: its pc + 4, as
/// `cpu_trace`); adds the rows'
/// BITWISE lookups to `lookups`, and each row's DECODE lookup to `lookups.decode` when it is not empty (see
/// `tables::decode`).
///
/// Inputs: the record's cycles (uploaded as they are, 32 B each, [`DeviceCycles::upload`]: ("trace-gen",
/// "record") host->device bytes), the register walk (`walk[i]` for cycle i, 20 B each) and the program's decode
/// data (`decode.rows`: `rows x 23` u64, `decode.row_of_pc`: u32 per instruction slot); those are recorded as
/// ("trace-gen", "CPU").
/// Every cycle's pc must have a DECODE row (`generate_split` checked it).
///
/// Errors (before anything is uploaded): mismatched lengths, a min height that is not a power of two, a
/// height outside the launch bounds ([`launch_1d`]); then allocation or launch failures. The kernel runs
/// asynchronously; errors during its execution surface at the next synchronize.
#[allow(clippy::too_many_arguments)]
pub fn fill_cpu(
    dev: &Device,
    cycles: &[CycleEvent],
    walk: &[RegWalk],
    decode: &CpuDecode,
    min_height: usize,
    end_pc: Option<u32>,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    check(cycles.len(), walk.len(), decode, min_height)?;
    let d_cycles = DeviceCycles::upload(dev, cycles, stats)?;
    fill_cpu_uploaded(
        dev, &d_cycles, walk, decode, min_height, end_pc, lookups, stats,
    )
}

/// [`fill_cpu`] from the record's cycles already on the device (shared with the record-path fills of LOAD,
/// STORE and MEMW_A).
#[allow(clippy::too_many_arguments)]
pub fn fill_cpu_uploaded(
    dev: &Device,
    cycles: &DeviceCycles,
    walk: &[RegWalk],
    decode: &CpuDecode,
    min_height: usize,
    end_pc: Option<u32>,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    check(cycles.len, walk.len(), decode, min_height)?;
    let d_walk = dev.upload::<u32>(bytemuck::cast_slice(walk))?;
    stats.add_h2d(STAGE_TRACE_GEN, "CPU", d_walk.num_bytes() as u64);
    fill_cpu_walked(
        dev, cycles, &d_walk, decode, min_height, end_pc, lookups, stats,
    )
}

/// [`fill_cpu_uploaded`] with the register walk on the device too (`walk`: `cycles x 5` u32 `RegWalk`s, e.g.
/// `tables::regwalk::reg_walk`'s): uploads only the decode data.
#[allow(clippy::too_many_arguments)]
pub fn fill_cpu_walked(
    dev: &Device,
    cycles: &DeviceCycles,
    d_walk: &DeviceBuffer<u32>,
    decode: &CpuDecode,
    min_height: usize,
    end_pc: Option<u32>,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    if d_walk.len() != 5 * cycles.len {
        return Err(CudaError::InvalidArgument(format!(
            "CPU fill: device register walk of {} u32 for {} cycles",
            d_walk.len(),
            cycles.len
        )));
    }
    let (height, cfg, n_slots) = check(cycles.len, cycles.len, decode, min_height)?;
    if cycles.data.len() != 4 * cycles.len {
        return Err(CudaError::InvalidArgument(format!(
            "CPU fill: device cycles of {} u64 for {} cycles",
            cycles.data.len(),
            cycles.len
        )));
    }
    let d_slots = dev.upload::<u32>(&decode.row_of_pc)?;
    let d_decode = dev.upload::<u64>(&decode.rows)?;
    stats.add_h2d(
        STAGE_TRACE_GEN,
        "CPU",
        (d_slots.num_bytes() + d_decode.num_bytes()) as u64,
    );
    let d_cycles = &cycles.data;
    let out = alloc_trace(dev, height, NUM_CPU_COLS)?;
    // SAFETY: `out` holds height x 44 u64; `cycles` and `walk` hold n_cycles entries of the kernel's
    // CycleEvent (32 B) / RegWalk (20 B) layout (checked against layout.cuh by the generated static_asserts); `row_of_pc` n_slots u32; `decode` whole
    // rows of 23 u64 with at least row 0, and every entry of `row_of_pc` is NO_DECODE_ROW or a row index
    // (`CpuDecode::new`; a stale index is the caller's bug, the kernel maps NO_DECODE_ROW to row 0);
    // `counts` is 7 x 2^16 u32; the grid covers `height` rows with full warps (launch_1d).
    unsafe {
        dev.launch(
            &kernels::CPU_CU,
            "cpu_fill",
            cfg,
            &[
                KArg::U64(out.data.ptr()),
                KArg::U64(d_cycles.ptr()),
                KArg::U64(d_walk.ptr()),
                KArg::U64(cycles.len as u64),
                KArg::U64(d_slots.ptr()),
                KArg::U32(decode.base_pc),
                KArg::U32(n_slots),
                KArg::U64(d_decode.ptr()),
                KArg::U64(lookups.counts.ptr()),
                KArg::U64(height as u64),
                KArg::U64(end_pc.map_or(NO_END_PC, u64::from)),
            ],
        )?;
    }
    if !lookups.decode.is_empty() {
        let n_rows = decode.rows.len() / NUM_DECODE_PREP_COLS;
        super::decode::count_decode(
            dev,
            cycles,
            &d_slots,
            decode.base_pc,
            n_rows,
            height,
            lookups,
        )?;
    }
    Ok(out)
}

/// Checks the fill's inputs: returns the height, the launch shape and the number of pc slots.
fn check(
    n_cycles: usize,
    walk_len: usize,
    decode: &CpuDecode,
    min_height: usize,
) -> Result<(usize, LaunchConfig, u32), CudaError> {
    // cpu.cu addresses CpuCols and DecodePrepCols through layout.cuh: it must match the Rust structs.
    crate::layout::check_width("CPU", NUM_CPU_COLS)?;
    crate::layout::check_width("DECODE_PREP", NUM_DECODE_PREP_COLS)?;
    if walk_len != n_cycles {
        return Err(CudaError::InvalidArgument(format!(
            "CPU fill: register walk of {walk_len} entries for {n_cycles} cycles",
        )));
    }
    if decode.is_empty() || !decode.rows.len().is_multiple_of(NUM_DECODE_PREP_COLS) {
        return Err(CudaError::InvalidArgument(format!(
            "CPU fill: {} DECODE values are not rows of {NUM_DECODE_PREP_COLS} (padding row first)",
            decode.rows.len()
        )));
    }
    let n_slots = u32::try_from(decode.row_of_pc.len()).map_err(|_| {
        CudaError::InvalidArgument(format!(
            "CPU fill: {} instruction slots",
            decode.row_of_pc.len()
        ))
    })?;
    if !min_height.is_power_of_two() {
        return Err(CudaError::InvalidArgument(format!(
            "CPU fill: min height {min_height} is not a power of two"
        )));
    }
    let height = cpu_height(n_cycles, min_height);
    let cfg = launch_1d(height as u64, NUM_CPU_COLS as u64, FILL_BLOCK)?;
    Ok((height, cfg, n_slots))
}

super::device_fill! {
    /// The CPU device fill ([`super::DeviceTableFill`]).
    CpuFill: Cpu, CPU_CU, |cx, stats| {
        let cpu = cx.inputs.cpu.as_ref().ok_or_else(|| {
            CudaError::InvalidArgument("CPU fill inputs missing (DeviceFill::cpu unset)".into())
        })?;
        let (dev, h, e, l) = (cx.dev, cx.min_height(), cpu.end_pc, cx.lookups);
        match (cx.cycles, cx.walk) {
            (Some(c), Some(w)) => fill_cpu_walked(dev, c, &w.walk, &cpu.decode, h, e, l, stats),
            (None, Some(_)) => Err(CudaError::InvalidArgument(
                "CPU fill: a device register walk without the record's cycles on the device".into(),
            )),
            (Some(c), None) => fill_cpu_uploaded(dev, c, &cpu.walk, &cpu.decode, h, e, l, stats),
            (None, None) => {
                let cycles = &cx.record.cycles;
                fill_cpu(dev, cycles, &cpu.walk, &cpu.decode, h, e, l, stats)
            }
        }
    }
}
