//! zkrv-executor: ELF loading, the RV64IM interpreter, the guest syscalls (docs/abi.md) and the
//! execution record (docs/record.md).
//!
//! - [`Program::from_elf`] validates and loads an ELF (checks in docs/abi.md) and pre-decodes its
//!   executable segments; [`execute`] runs it on a private input and returns the public output,
//!   exit code, cycle count and, with [`ExecOptions::record`], the [`Record`] (one 32-byte
//!   [`CycleEvent`] per instruction, syscalls, touched pages before/after).
//! - [`execute_segmented`] cuts a run into segments with a [`Checkpoint`] each, and
//!   [`execute_segment`] re-executes one segment alone from its checkpoint (continuations,
//!   docs/continuations.md).
//! - [`Vm`] steps the same interpreter one instruction at a time (debugging, differential tests).
//! - [`asm`] encodes RV64IM instructions for tests and benchmarks; [`decode`] is the decoder.
//!
//! ```no_run
//! use zkrv_executor::{execute, ExecOptions, Program};
//! let elf = std::fs::read("guests/bin/sha256.elf").unwrap();
//! let program = Program::from_elf(&elf).unwrap();
//! let run = execute(&program, b"input", &ExecOptions::default()).unwrap();
//! println!("exit {} after {} cycles", run.exit_code, run.cycles);
//! ```

pub mod asm;
mod decode;
mod elf;
mod exec;
mod mem;
pub mod precompile;
mod record;
mod segment;
mod vm;

pub use decode::{decode, Inst, Op};
pub use elf::{ElfError, Program, Segment, MAX_ELF_BYTES, MAX_EXEC_SPAN, MAX_SEGMENTS};
pub use exec::{div, divu, divuw, divw, mulh, mulhsu, mulhu, rem, remu, remuw, remw};
pub use precompile::PrecompileFault;
pub use record::{CycleEvent, KeccakEvent, Poseidon2Event, Record, Sha256Event, SyscallEvent};
pub use segment::{
    execute_segment, execute_segmented, execute_segmented_checked, Checkpoint, SegmentRun,
    SegmentedExecution,
};
pub use vm::Vm;

/// Lowest valid guest address (below it: the unmapped guard page).
pub const GUEST_MEM_START: u64 = 0x1000;
/// End (exclusive) of the guest address space: every address is < 2^31.
pub const GUEST_MEM_END: u64 = 0x8000_0000;
/// Program segments must lie in `[PROGRAM_START, PROGRAM_END)`.
pub const PROGRAM_START: u64 = 0x1000;
/// End (exclusive) of the program region; the stack is `[PROGRAM_END, GUEST_MEM_END)`.
pub const PROGRAM_END: u64 = 0x7F00_0000;
/// Initial stack pointer (x2).
pub const STACK_TOP: u64 = 0x8000_0000;
/// Page size of [`Record::pages`], bytes.
pub const PAGE_SIZE: u64 = 4096;

/// Most bytes a guest may write to each of fd 1 and fd 2 (256 MiB), so that a guest cannot
/// exhaust host memory through `write`.
pub const MAX_OUTPUT: u64 = 256 << 20;

/// Default [`ExecOptions::max_cycles`]: 2^32 instructions (about 20 s of plain execution).
pub const DEFAULT_MAX_CYCLES: u64 = 1 << 32;

/// Execution options.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// Stop with [`ExecError::CycleLimit`] once this many instructions have executed without
    /// an exit. Default [`DEFAULT_MAX_CYCLES`].
    pub max_cycles: u64,
    /// Produce the [`Record`] (32 bytes per cycle plus touched pages; see docs/record.md): size
    /// `max_cycles` to the host memory when recording.
    pub record: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            max_cycles: DEFAULT_MAX_CYCLES,
            record: false,
        }
    }
}

/// Result of a run that reached `exit`.
#[derive(Clone, Debug)]
pub struct Execution {
    /// Bytes written to fd 1 (proven).
    pub public_output: Vec<u8>,
    /// Low 32 bits of a0 at `exit` (proven).
    pub exit_code: u32,
    /// Instructions executed, including the final ECALL.
    pub cycles: u64,
    /// Bytes written to fd 2 (not proven; the CLI copies them to stderr).
    pub debug_output: Vec<u8>,
    /// The execution record, if [`ExecOptions::record`] was set.
    pub record: Option<Record>,
}

/// Why execution stopped without a clean `exit`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The word at `pc` is not a supported RV64IM instruction.
    #[error("illegal instruction {word:#010x} at pc {pc:#x}: {reason}")]
    IllegalInstruction {
        /// Address of the instruction.
        pc: u64,
        /// Raw instruction word.
        word: u32,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A load or store touched memory outside `[0x1000, 0x8000_0000)`.
    #[error("memory access out of bounds at pc {pc:#x}: address {addr:#x}")]
    MemoryOutOfBounds {
        /// Address of the instruction.
        pc: u64,
        /// First address of the access.
        addr: u64,
    },
    /// A read/write buffer `[addr, addr + len)` (len >= 1) reaches outside `[0x1000, 0x8000_0000)`.
    #[error("ecall at pc {pc:#x}: buffer [{addr:#x}, {addr:#x} + {len:#x}) (length {len} bytes) reaches outside guest memory [0x1000, 0x80000000)")]
    BufferOutOfBounds {
        /// Address of the ECALL.
        pc: u64,
        /// Buffer address (a1).
        addr: u64,
        /// Bytes to transfer.
        len: u64,
    },
    /// The pc left the executable segments.
    #[error("instruction fetch at pc {pc:#x} outside the executable segments")]
    FetchOutOfBounds {
        /// The bad pc.
        pc: u64,
    },
    /// A jump or taken branch to an address that is not a multiple of 4. The message says why this
    /// usually happens: a target 2 bytes past a word is where code built for the C extension (compressed
    /// 2-byte instructions, `rv64imac`/`rv64gc`) jumps, and zkrv runs RV64IM only.
    #[error(
        "misaligned jump at pc {pc:#x} to {target:#x}{}",
        if target & 3 == 2 {
            " (a 2-byte-aligned target: the program was probably built with the C extension, compressed \
             instructions, e.g. -march=rv64imac or rv64gc; zkrv runs RV64IM only: build with -march=rv64im \
             -mabi=lp64 for C, the riscv64im-unknown-none-elf target for Rust; docs/abi.md)"
        } else {
            ""
        }
    )]
    MisalignedJump {
        /// Address of the jump/branch.
        pc: u64,
        /// The misaligned target.
        target: u64,
    },
    /// A precompile call (docs/abi.md, "Precompiles") with a bad argument: refused before it touches memory.
    #[error("the `{call}` ecall (a7 = {num:#x}) at pc {pc:#x}, cycle {cycle}: {fault}")]
    Precompile {
        /// Address of the ECALL.
        pc: u64,
        /// Cycle index of the ECALL (from the start of the run or re-executed segment).
        cycle: u64,
        /// Call number (a7).
        num: u64,
        /// `"keccak_f"`, `"sha256_compress"` or `"poseidon2"`.
        call: &'static str,
        /// What is wrong, with the offending value (boxed: keeps `ExecError` small).
        fault: Box<PrecompileFault>,
    },
    /// ECALL with an unsupported call number in a7.
    #[error("unknown ecall {num} at pc {pc:#x}")]
    UnknownEcall {
        /// Address of the ECALL.
        pc: u64,
        /// Call number (a7).
        num: u64,
    },
    /// read/write with a file descriptor other than 0 (read) or 1/2 (write).
    #[error("ecall {num} at pc {pc:#x}: bad file descriptor {fd}")]
    BadFd {
        /// Address of the ECALL.
        pc: u64,
        /// Call number (a7).
        num: u64,
        /// The fd (a0).
        fd: u64,
    },
    /// `max_cycles` instructions ran without an exit. (The caller names how to raise the limit: the
    /// CLI's `--max-cycles`, the SDK's `ProveOptions::max_cycles`.)
    #[error("cycle limit of {limit} instruction(s) reached without an exit (next pc {pc:#x})")]
    CycleLimit {
        /// The limit.
        limit: u64,
        /// pc of the next instruction.
        pc: u64,
    },
    /// The guest wrote more than [`MAX_OUTPUT`] bytes to fd 1 or fd 2.
    #[error("ecall write at pc {pc:#x}: more than {MAX_OUTPUT} bytes written to fd {fd}")]
    OutputLimit {
        /// Address of the ECALL.
        pc: u64,
        /// The fd (1 or 2).
        fd: u64,
    },
    /// A segment's re-execution does not match its checkpoint ([`execute_segment`]: a checkpoint of
    /// another program or input).
    #[error("segment replay does not match its checkpoint: {reason}")]
    CheckpointMismatch {
        /// What differs.
        reason: String,
    },
    /// The host could not reserve the 2 GiB guest address space.
    #[error("host could not allocate the 2 GiB guest memory")]
    HostOutOfMemory,
}

/// A run that stopped with an error, with what the guest produced before it.
#[derive(Clone, Debug)]
pub struct Failure {
    /// Why execution stopped.
    pub error: ExecError,
    /// Bytes written to fd 1 before the error.
    pub public_output: Vec<u8>,
    /// Bytes written to fd 2 before the error.
    pub debug_output: Vec<u8>,
    /// Instructions executed before the error.
    pub cycles: u64,
}

/// Runs `program` on the private `input` until it exits.
pub fn execute(
    program: &Program,
    input: &[u8],
    opts: &ExecOptions,
) -> Result<Execution, ExecError> {
    execute_keep_output(program, input, opts).map_err(|f| f.error)
}

/// [`execute`], but an error keeps the fd 1 / fd 2 bytes written before it (for `zkrv run`).
pub fn execute_keep_output(
    program: &Program,
    input: &[u8],
    opts: &ExecOptions,
) -> Result<Execution, Failure> {
    let mut m = exec::Machine::new(program, input).map_err(|error| Failure {
        error,
        public_output: Vec::new(),
        debug_output: Vec::new(),
        cycles: 0,
    })?;
    let res = run_machine(program, &mut m, opts);
    match res {
        Ok((exit_code, record)) => Ok(Execution {
            public_output: m.public_output,
            exit_code,
            cycles: m.cycles,
            debug_output: m.debug_output,
            record,
        }),
        Err(error) => Err(Failure {
            error,
            public_output: m.public_output,
            debug_output: m.debug_output,
            cycles: m.cycles,
        }),
    }
}

fn run_machine(
    program: &Program,
    m: &mut exec::Machine,
    opts: &ExecOptions,
) -> Result<(u32, Option<Record>), ExecError> {
    let regs = m.regs;
    Ok(if opts.record {
        let mut r = exec::Recorder {
            record: Record {
                init_regs: regs,
                ..Record::default()
            },
            touched: record::PageBitmap::new(),
            soft_cap: 0,
        };
        let code = exec::run::<true, true>(program, m, opts.max_cycles, Some(&mut r))?;
        let mut rec = r.record;
        rec.final_regs = m.regs;
        rec.collect_pages(&r.touched, program, &m.mem);
        (code, Some(rec))
    } else {
        (
            exec::run::<false, false>(program, m, opts.max_cycles, None)?,
            None,
        )
    })
}
