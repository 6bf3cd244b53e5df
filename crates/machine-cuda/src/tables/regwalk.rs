//! The register walk on the device (kernels `kernels/tables/regwalk.cu`, reference: the register walk of
//! `zkrv_machine::trace::generate_split_at`): from the record's cycles resident on the device, every CPU
//! register access's previous timestamp and overwritten value (`RegWalk` per cycle, what the CPU fill reads) and
//! every register cell's final value and timestamp (what the REGFILE fill reads), by a per-register scan over
//! chunks of cycles (method in the kernel file). Uploads only what the record's cycles do not hold: the initial
//! registers (34 u64), one 16-byte [`WalkSyscall`] per `read`/`write` ECALL, and the program's decode data
//! (`CpuDecode`, program-sized). A precompile ECALL needs nothing uploaded: its number is a7 (the cycle's
//! `rs1_val`), and only sha256_compress touches a register besides the row's own (a1, at `ts + 1`).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_executor::precompile::{KECCAK_F, POSEIDON2, SHA256_COMPRESS};
use zkrv_executor::SyscallEvent;
use zkrv_machine::bus::{NUM_REG_CELLS, REG_INPUT_CURSOR, REG_OUTPUT_CURSOR};
use zkrv_machine::tables::cpu::CpuDecode;
use zkrv_machine::tables::decode::NUM_DECODE_PREP_COLS;
use zkrv_machine::tables::sysio::{SYS_READ, SYS_WRITE};

use crate::tables::regfile::RegfileIn;
use crate::tables::{launch_1d, DeviceCycles, FILL_BLOCK};
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;

/// `WalkSyscall::cursor` of a call that moves no cursor (a `write` to fd 2).
pub const WALK_NO_CURSOR: u32 = u32::MAX;

/// Cycles per walk chunk (one thread each) on the device.
pub const WALK_CHUNK: usize = 512;

/// One `read`/`write` ECALL as the walk needs it (16 bytes, `#[repr(C)]`, no padding; the kernel's `WalkSyscall`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkSyscall {
    /// Cycle of the ECALL.
    pub cycle: u32,
    /// The cursor cell it moves (32 input, 33 output) or [`WALK_NO_CURSOR`].
    pub cursor: u32,
    /// Bytes transferred (added to the cursor).
    pub count: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for WalkSyscall {}

/// The walk's syscall list from the record's syscall events (exits and precompile calls dropped: the kernel
/// reads a precompile's number from a7), in cycle order. Errors:
/// [`CudaError::InvalidArgument`] for a call other than `write` to fd 1/2 or `read` from fd 0, cycles out of
/// order, or a cycle at or beyond `n_cycles`.
pub fn pack_walk_syscalls(
    syscalls: &[SyscallEvent],
    n_cycles: usize,
) -> Result<Vec<WalkSyscall>, CudaError> {
    let mut out: Vec<WalkSyscall> = Vec::new();
    for (k, sc) in syscalls.iter().enumerate() {
        // Exits move nothing; a precompile's register access (sha256_compress's a1) is the kernel's, from a7.
        if matches!(sc.num, 93 | 94 | KECCAK_F | SHA256_COMPRESS | POSEIDON2) {
            continue;
        }
        let (cursor, count) = match (sc.num, sc.args[0]) {
            (SYS_READ, 0) => (REG_INPUT_CURSOR as u32, sc.ret),
            (SYS_WRITE, 1) => (REG_OUTPUT_CURSOR as u32, sc.args[2]),
            (SYS_WRITE, 2) => (WALK_NO_CURSOR, 0),
            (num, fd) => {
                return Err(CudaError::InvalidArgument(format!(
                    "register walk: syscall {k} ({num}, fd {fd}) is not provable"
                )))
            }
        };
        let cycle = u32::try_from(sc.cycle)
            .ok()
            .filter(|&c| (c as usize) < n_cycles && out.last().is_none_or(|p| p.cycle < c))
            .ok_or_else(|| {
                CudaError::InvalidArgument(format!(
                    "register walk: syscall {k} at cycle {} (out of order or past {n_cycles} cycles)",
                    sc.cycle
                ))
            })?;
        out.push(WalkSyscall {
            cycle,
            cursor,
            count,
        });
    }
    Ok(out)
}

/// The walk's result on the device.
pub struct DeviceRegWalk {
    /// `RegWalk` per cycle (`cycles x 5` u32, the CPU fill's `walk` input).
    pub walk: DeviceBuffer<u32>,
    /// Every register cell's final state (`NUM_REG_CELLS` [`RegfileIn`], the REGFILE fill's input).
    pub fin: DeviceBuffer<RegfileIn>,
}

/// The initial register cells: x0..x31 from the record, the input and output cursors from the start.
pub fn initial_regs(init_regs: &[u64; 32], input_cursor: u64, output_cursor: u64) -> Vec<u64> {
    let mut v = vec![0u64; NUM_REG_CELLS];
    v[..32].copy_from_slice(init_regs);
    v[REG_INPUT_CURSOR as usize] = input_cursor;
    v[REG_OUTPUT_CURSOR as usize] = output_cursor;
    v
}

/// Runs the register walk of the record's `cycles` (resident) on the device, in chunks of `chunk` cycles
/// ([`WALK_CHUNK`] in production; any size >= 1 gives the same result). `decode` is the program's `CpuDecode`
/// (every cycle's pc has a row), `init` the 34 initial register cells ([`initial_regs`]), `syscalls` the
/// record's syscall events. Uploads `init`, the packed syscalls and the decode data (H2D stage "trace-gen",
/// table "REGWALK"). Errors: inputs the packer refuses, more than 2^30 - 1 cycles (timestamps must fit 32 bits),
/// `chunk` 0, allocation, launch.
pub fn reg_walk(
    dev: &Device,
    cycles: &DeviceCycles,
    decode: &CpuDecode,
    init: &[u64],
    syscalls: &[SyscallEvent],
    chunk: usize,
    stats: &mut TransferStats,
) -> Result<DeviceRegWalk, CudaError> {
    let n = cycles.len;
    if 4 * n as u64 + 4 > u32::MAX as u64 || chunk == 0 || init.len() != NUM_REG_CELLS {
        return Err(CudaError::InvalidArgument(format!(
            "register walk: {n} cycles (timestamps must fit 32 bits), chunk {chunk}, {} initial cells",
            init.len()
        )));
    }
    if decode.is_empty() || !decode.rows.len().is_multiple_of(NUM_DECODE_PREP_COLS) {
        return Err(CudaError::InvalidArgument(
            "register walk: DECODE rows missing or not rows of 23".into(),
        ));
    }
    let n_slots = u32::try_from(decode.row_of_pc.len())
        .map_err(|_| CudaError::InvalidArgument("register walk: too many pc slots".into()))?;
    let sys = pack_walk_syscalls(syscalls, n)?;
    let n_chunks = n.div_ceil(chunk).max(1);
    let chunk_cfg = launch_1d(n_chunks as u64, 1, FILL_BLOCK)?;
    let reg_cfg = launch_1d(NUM_REG_CELLS as u64, 1, 64)?;
    let d_init = dev.upload(init)?;
    let d_sys = if sys.is_empty() {
        dev.alloc::<WalkSyscall>(0)?
    } else {
        dev.upload(&sys)?
    };
    let d_slots = dev.upload::<u32>(&decode.row_of_pc)?;
    let d_decode = dev.upload::<u64>(&decode.rows)?;
    stats.add_h2d(
        "trace-gen",
        "REGWALK",
        (d_init.num_bytes() + d_sys.num_bytes() + d_slots.num_bytes() + d_decode.num_bytes())
            as u64,
    );
    let sums = n_chunks * NUM_REG_CELLS;
    let sum_ts = dev.alloc::<u32>(sums)?;
    let sum_wrote = dev.alloc::<u32>(sums)?;
    let sum_val = dev.alloc::<u64>(sums)?;
    let walk = dev.alloc::<u32>(5 * n)?;
    let fin = dev.alloc::<RegfileIn>(NUM_REG_CELLS)?;
    let common = [
        KArg::U64(chunk as u64),
        KArg::U64(n_chunks as u64),
        KArg::U64(cycles.data.ptr()),
        KArg::U64(n as u64),
        KArg::U64(d_slots.ptr()),
        KArg::U32(decode.base_pc),
        KArg::U32(n_slots),
        KArg::U64(d_decode.ptr()),
        KArg::U64(d_sys.ptr()),
        KArg::U64(sys.len() as u64),
    ];
    // SAFETY (all three): `cycles.data` holds n CycleEvents, `d_slots` n_slots u32 (DECODE rows of `d_decode`
    // or NO_DECODE_ROW, read as row 0), `d_decode` whole rows of 23 u64 with row 0, `d_sys` sys.len() syscalls
    // in cycle order; the summaries hold n_chunks x 34 entries, `walk` n x 5 u32, `fin` 34 RegfileIn, `d_init`
    // 34 u64; every register index the kernels use is a DECODE rs1/rs2/rd (< 32) or a cursor (32, 33); the grids
    // cover n_chunks (resp. 34) threads and the kernels skip the rest.
    unsafe {
        let mut args = common.to_vec();
        args.extend([
            KArg::U64(sum_ts.ptr()),
            KArg::U64(sum_wrote.ptr()),
            KArg::U64(sum_val.ptr()),
        ]);
        dev.launch(&kernels::REGWALK_CU, "regwalk_summarize", chunk_cfg, &args)?;
        dev.launch(
            &kernels::REGWALK_CU,
            "regwalk_scan",
            reg_cfg,
            &[
                KArg::U64(n_chunks as u64),
                KArg::U64(d_init.ptr()),
                KArg::U64(sum_ts.ptr()),
                KArg::U64(sum_wrote.ptr()),
                KArg::U64(sum_val.ptr()),
                KArg::U64(fin.ptr()),
            ],
        )?;
        let mut args = common.to_vec();
        args.extend([
            KArg::U64(sum_ts.ptr()),
            KArg::U64(sum_val.ptr()),
            KArg::U64(walk.ptr()),
        ]);
        dev.launch(&kernels::REGWALK_CU, "regwalk_replay", chunk_cfg, &args)?;
    }
    Ok(DeviceRegWalk { walk, fin })
}
