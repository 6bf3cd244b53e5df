//! zkrv-machine: the RV64IM machine tables (design: docs/tables.md) and `prove`/`verify` of a program run.
//!
//! A host program should depend on `zkrv-sdk` (crates/sdk), which wraps this crate with the proof file,
//! backend choice, limits and zero knowledge on by default. Directly:
//!
//! ```no_run
//! use zkrv_executor::Program;
//! use zkrv_stark::StarkConfig;
//! let program = Program::from_elf(&std::fs::read("prog.elf").unwrap()).unwrap();
//! // Zero knowledge: `default_zk()`. (`StarkConfig::default()` is the `--no-zk` configuration, whose
//! // proofs reveal information about the private input; docs/stark.md "Zero knowledge".)
//! let config = StarkConfig::default_zk();
//! let (statement, proof) = zkrv_machine::prove(&program, b"private input", &config).unwrap();
//! zkrv_machine::verify(&program, &statement, &proof, &config, 100).unwrap();
//! ```
//!
//! Status: the whole of RV64IM ([`supported`]: every instruction but illegal words) with the `exit`, `read`
//! and `write` system calls, proven by the tables of [`registry`] ([`TABLE_NAMES`], in proof order;
//! docs/tables.md), one proof per run of at most [`MAX_PROVABLE_CYCLES`] cycles or a run in segments
//! ([`segment`], docs/continuations.md). An instruction outside [`supported`] is refused by [`prove`] with
//! [`MachineError::Unsupported`].

pub mod bus;
mod cols;
pub mod registry;
pub mod segment;
pub mod tables;
pub mod trace;

use thiserror::Error;
use tiny_keccak::{Hasher, Keccak};
use zkrv_executor::{decode, execute, ExecError, ExecOptions, Op, Program};
use zkrv_stark::air::{Air, Direction};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::logup::{PublicInteraction, PublicSource};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::profile::span;
use zkrv_stark::{preprocess, ProveError, StarkConfig};

pub use registry::{table_id, PerTable, Table, TableSet, TABLE_NAMES};

use tables::bitwise::{bitwise_preprocessed, BitwiseAir};
use tables::bytewise::BytewiseAir;
use tables::cpu::CpuAir;
use tables::cpu32::Cpu32Air;
use tables::decode::{words, DecodeAir, DecodeTable};
use tables::dvrm::DvrmAir;
use tables::eq::EqAir;
use tables::input::InputAir;
use tables::keccakf::KeccakfAir;
use tables::load::LoadAir;
use tables::lt::LtAir;
use tables::memw::MemwAir;
use tables::memw_a::MemwAAir;
use tables::mul::MulAir;
use tables::page::{PageAir, CELLS_PER_PAGE};
use tables::regfile::RegfileAir;
use tables::sha256::Sha256Air;
use tables::shift::{pow2_preprocessed, Pow2Air, ShiftAir};
use tables::store::StoreAir;
use tables::sysio::{SyscallAir, SysioAir};

/// Smallest table height (rows) without zk; every table is padded to a power of two at least this.
pub const MIN_HEIGHT: usize = 8;

/// Smallest table height under `config`: [`MIN_HEIGHT`], or in zk mode at least
/// `2^zkrv_stark::zk::min_log_height(num_queries)` (128 rows with 32 to 63 queries, 256 with 64 to 127), so that the random
/// part of every committed column hides all the evaluations a proof reveals (docs/stark.md, "Zero
/// knowledge"). Prover and verifier derive the heights of DECODE and POW2 from it (BITWISE, 2^16 rows, is
/// taller than any minimum a file-format query count, < 2^15, gives).
pub fn min_height(config: &StarkConfig) -> usize {
    MIN_HEIGHT.max(1 << config.min_log_height())
}

/// Most cycles a provable run may have: one CPU row per cycle plus a padding row, at most
/// `2^MAX_LOG_HEIGHT` = 2^26 rows, so 2^26 - 1 = 67,108,863.
pub const MAX_PROVABLE_CYCLES: u64 = (1 << zkrv_stark::logup::MAX_LOG_HEIGHT) - 1;

/// Most touched 4 KiB pages a provable run may have: the PAGE table has one row per 8-byte cell of every
/// touched page (512 rows per page) and at most 2^26 rows, so 2^17 = 131,072 pages (512 MiB). Checked by
/// [`run_for_proof`] right after execution, before any trace is allocated (docs/abi.md, "Memory limit").
pub const MAX_TOUCHED_PAGES: usize = (1 << zkrv_stark::logup::MAX_LOG_HEIGHT) / CELLS_PER_PAGE;

/// Longest public output a proof can carry, in bytes: the executor refuses a run that writes more than
/// `zkrv_executor::MAX_OUTPUT` (256 MiB) to fd 1 in total (docs/abi.md), whether it is proven as one proof
/// or in segments (the SYSIO table, one row per 8-byte cell and at most 2^26 rows, could hold 512 MiB).
/// A verifier refuses a longer statement output before any work ([`VerifyError::OutputTooLong`]).
pub const MAX_PUBLIC_OUTPUT: u64 = zkrv_executor::MAX_OUTPUT;

/// [`VerifyError::OutputTooLong`] when `len` exceeds [`MAX_PUBLIC_OUTPUT`].
pub fn check_output_len(len: u64) -> Result<(), VerifyError> {
    if len > MAX_PUBLIC_OUTPUT {
        return Err(VerifyError::OutputTooLong { len });
    }
    Ok(())
}

/// What a proof proves: the program (by commitment) ran on some private input, wrote `output` to the
/// public output and exited with `exit_code`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// [`program_commitment`] of the program.
    pub program: [u8; 32],
    /// Low 32 bits of a0 at `exit`.
    pub exit_code: u32,
    /// Bytes written to fd 1.
    pub output: Vec<u8>,
}

impl Statement {
    /// Canonical bytes (absorbed by the transcript): `program (32) || exit_code (u32 LE) ||
    /// output length (u64 LE) || output`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(44 + self.output.len());
        v.extend_from_slice(&self.program);
        v.extend_from_slice(&self.exit_code.to_le_bytes());
        v.extend_from_slice(&(self.output.len() as u64).to_le_bytes());
        v.extend_from_slice(&self.output);
        v
    }
}

/// A machine proof: the touched-page list (public: the verifier derives the memory init tokens from it and
/// the ELF) and one STARK proof over all tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// Sorted base addresses of the touched 4 KiB pages.
    pub pages: Vec<u32>,
    pub stark: zkrv_stark::Proof,
}

impl Proof {
    /// `#pages (u64 LE) || pages (u32 LE each) || STARK proof bytes`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = (self.pages.len() as u64).to_le_bytes().to_vec();
        for p in &self.pages {
            v.extend_from_slice(&p.to_le_bytes());
        }
        v.extend_from_slice(&self.stark.to_bytes());
        v
    }

    /// Parses [`Proof::to_bytes`]; never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Proof, VerifyError> {
        let bad = VerifyError::Format;
        let n = bytes.get(..8).ok_or_else(|| {
            bad(format!(
                "truncated: the page count takes 8 bytes, {} present",
                bytes.len()
            ))
        })?;
        let n = u64::from_le_bytes([n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]]);
        let body = &bytes[8..];
        let len = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(4))
            .filter(|&len| len <= body.len())
            .ok_or_else(|| {
                bad(format!(
                    "page count {n} (4 bytes each) is more than the {} bytes that follow can hold",
                    body.len()
                ))
            })?;
        let list = &body[..len];
        let pages = list
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let stark = zkrv_stark::Proof::from_bytes(&body[len..])
            .map_err(|e| VerifyError::Format(format!("STARK proof: {e}")))?;
        Ok(Proof { pages, stark })
    }
}

/// Why proving failed.
#[derive(Debug, Error)]
pub enum MachineError {
    #[error("execution failed: {0}")]
    Exec(#[from] ExecError),
    #[error("bad program: {0}")]
    BadProgram(String),
    #[error("instruction {op:?} at pc {pc:#x} is not supported by this version of the machine")]
    Unsupported { pc: u32, op: Op },
    #[error("pc {pc:#x} has no DECODE row")]
    NotInDecode { pc: u32 },
    #[error("{cycles} cycles need a CPU table taller than 2^{max_log} rows")]
    TooManyCycles { cycles: usize, max_log: usize },
    /// The run did not exit within [`MAX_PROVABLE_CYCLES`] cycles.
    #[error("the run did not exit within {limit} cycles, the most zkrv can prove (2^26 - 1: one CPU table row \
             per cycle plus a padding row, at most 2^26 rows)")]
    CycleLimit { limit: u64 },
    /// The run touched more than [`MAX_TOUCHED_PAGES`] pages of memory.
    #[error("the run touches {pages} pages of 4 KiB ({bytes} bytes) of memory; proving supports at most \
             {max_pages} pages ({max_bytes} bytes = 512 MiB: the PAGE table has 512 rows per touched page and \
             at most 2^26 rows; docs/abi.md, \"Limits of a provable run\")")]
    TooMuchMemory {
        /// Touched 4 KiB pages (loads, stores, syscall buffers; instruction fetches excluded).
        pages: usize,
        /// `pages * 4096`.
        bytes: u64,
        /// [`MAX_TOUCHED_PAGES`].
        max_pages: usize,
        /// `max_pages * 4096`.
        max_bytes: u64,
    },
    /// A `read`/`write` ECALL whose a1 (buffer) or a2 (length) is 2^32 or more: the executor runs it (a
    /// zero-length transfer succeeds whatever a1 is), the SYSCALL table cannot prove it (docs/abi.md,
    /// "System calls"). `cycle` is the run's cycle index of the ECALL.
    #[error("the `{call}` ECALL at cycle {cycle} (pc {pc:#x}) has {register} = {value:#x}; proving needs \
             a1 (buffer) and a2 (length) of `read` and `write` below 2^32 (docs/abi.md, \"System calls\"; \
             `zkrv run` executes it)")]
    SyscallArgument {
        cycle: u64,
        pc: u32,
        /// `read` or `write`.
        call: &'static str,
        /// `a1 (buffer)` or `a2 (length)`.
        register: &'static str,
        value: u64,
    },
    /// The prover's error (shown once: not also reported as this error's source).
    #[error("prover: {0}")]
    Prove(ProveError),
    /// A proof whose table count or heights do not fit the machine (found before verifying it, e.g. by
    /// [`proof_security`]): a malformed or tampered proof.
    #[error("malformed proof: {0}")]
    ProofShape(String),
    /// A run with precompile calls traced with the memory walk on the device but their table on the host
    /// (e.g. a table whose device fill does not exist yet): the host fill would lack the calls' old
    /// timestamps, so it is refused rather than filled behind the device's back.
    #[error("the run has {rows} {table} row(s) (precompile calls), and {table} has no GPU fill in this \
             selection (the device memory walk needs it on the device): prove it with `--backend cpu`, or on \
             the GPU with host trace generation (ZKRV_CPU_TRACE=1)")]
    NoDeviceFill { table: &'static str, rows: usize },
    #[error("internal error: {0}")]
    Internal(String),
    /// Proving segment `index` of `count` failed (docs/continuations.md).
    #[error("segment {index} of {count}: {source}")]
    Segment {
        index: usize,
        count: usize,
        source: Box<MachineError>,
    },
}

impl From<ProveError> for MachineError {
    fn from(e: ProveError) -> Self {
        MachineError::Prove(e)
    }
}

/// Why verification failed.
#[derive(Debug, Error)]
pub enum VerifyError {
    #[error("the statement is for another program")]
    WrongProgram,
    /// The statement claims a public output longer than any provable run writes ([`MAX_PUBLIC_OUTPUT`]).
    #[error(
        "the statement claims {len} bytes of public output, more than any provable run writes \
         (MAX_PUBLIC_OUTPUT = MAX_OUTPUT = {MAX_PUBLIC_OUTPUT} bytes, docs/abi.md)"
    )]
    OutputTooLong { len: u64 },
    #[error("bad program: {0}")]
    BadProgram(String),
    #[error("bad page list: {0}")]
    BadPages(String),
    #[error("proof format: {0}")]
    Format(String),
    #[error("preprocessing: {0}")]
    Preprocess(String),
    /// A segment's header, pages or writes are malformed (docs/continuations.md).
    #[error("bad segment: {0}")]
    BadSegment(String),
    /// A multi-segment proof's segments do not form the run (docs/continuations.md "Verifier").
    #[error(transparent)]
    Chain(Box<segment::ChainError>),
    #[error(transparent)]
    Stark(#[from] zkrv_stark::VerifyError),
    /// No recursion verifier program for the proof ([`recursion_program`]).
    #[error(transparent)]
    Recursion(#[from] zkrv_stark::recursion::RecursionError),
}

impl VerifyError {
    /// `Some((bits, min))` if the proof was refused because its parameters give `bits` bits provable, below
    /// the verifier's minimum `min` ([`zkrv_stark::VerifyError::WeakParameters`]), for one proof or for a
    /// segment of a run ([`segment::ChainError::Segment`]).
    pub fn weak_parameters(&self) -> Option<(u32, u32)> {
        match self {
            VerifyError::Stark(zkrv_stark::VerifyError::WeakParameters { bits, min }) => {
                Some((*bits, *min))
            }
            VerifyError::Chain(c) => match c.as_ref() {
                segment::ChainError::Segment { source, .. } => source.weak_parameters(),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Keccak-256 of the program: entry (u64 LE), number of segments (u64 LE), then per segment vaddr, memsz
/// (u64 LE), executable (1 byte), data length (u64 LE) and data.
pub fn program_commitment(program: &Program) -> [u8; 32] {
    let mut h = Keccak::v256();
    h.update(&program.entry.to_le_bytes());
    h.update(&(program.segments.len() as u64).to_le_bytes());
    for s in &program.segments {
        h.update(&s.vaddr.to_le_bytes());
        h.update(&s.memsz.to_le_bytes());
        h.update(&[s.executable as u8]);
        h.update(&(s.data.len() as u64).to_le_bytes());
        h.update(&s.data);
    }
    let mut out = [0u8; 32];
    h.finalize(&mut out);
    out
}

/// Whether this version of the machine can prove executions of `op` (ECALL: exit, read, write).
pub fn supported(op: Op) -> bool {
    // Every RV64IM instruction.
    !matches!(op, Op::Illegal | Op::NoCode)
}

/// The instance constants of the machine's AIRs: those of a whole run ([`AirParams::run`]), or of one
/// segment of a run (docs/continuations.md), which starts elsewhere and may pause instead of halting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AirParams {
    /// The CPU's first pc (the ELF entry for a whole run).
    pub entry: u32,
    /// `Some(pc)`: the segment pauses and goes on at `pc`; REGFILE and PAGE publish their final values.
    pub end_pc: Option<u32>,
    /// The first INPUT index (the input cursor at the start).
    pub input_first: u64,
    /// Where INPUT may hold the end-of-input row.
    pub eof: tables::input::EofRule,
    /// `Some(n)`: the CPU table has exactly `n >= 1` real rows (a segment: its last real row, the one that
    /// pauses or halts, has `clk = n - 1`; docs/continuations.md §4). `None`: a whole run, whose cycle count
    /// is not part of its statement (the table height bounds it).
    pub cycles: Option<u64>,
}

impl AirParams {
    /// A whole run of `program`: starts at its entry, ends with a halt.
    pub fn run(program: &Program) -> Result<AirParams, String> {
        let entry = u32::try_from(program.entry)
            .map_err(|_| format!("entry {:#x} >= 2^32", program.entry))?;
        Ok(AirParams {
            entry,
            end_pc: None,
            input_first: 0,
            eof: tables::input::EofRule::Any,
            cycles: None,
        })
    }
}

/// The AIR of `table` ([`Table`] order is proof order).
fn air(table: Table, p: &AirParams) -> Box<dyn Air> {
    let publish = p.end_pc.is_some();
    match table {
        Table::Cpu => Box::new(CpuAir {
            entry: p.entry,
            end_pc: p.end_pc,
            cycles: p.cycles,
        }),
        Table::Decode => Box::new(DecodeAir),
        Table::Bitwise => Box::new(BitwiseAir),
        Table::Regfile => Box::new(RegfileAir { publish }),
        Table::Eq => Box::new(EqAir),
        Table::Lt => Box::new(LtAir),
        Table::Load => Box::new(LoadAir),
        Table::Store => Box::new(StoreAir),
        Table::MemwA => Box::new(MemwAAir),
        Table::Page => Box::new(PageAir { publish }),
        Table::Bytewise => Box::new(BytewiseAir),
        Table::Syscall => Box::new(SyscallAir),
        Table::Sysio => Box::new(SysioAir),
        Table::Input => Box::new(InputAir {
            first: p.input_first,
            eof: p.eof,
        }),
        Table::Cpu32 => Box::new(Cpu32Air),
        Table::Dvrm => Box::new(DvrmAir),
        Table::Shift => Box::new(ShiftAir),
        Table::Pow2 => Box::new(Pow2Air),
        Table::Mul => Box::new(MulAir),
        Table::Memw => Box::new(MemwAir),
        Table::Keccakf => Box::new(KeccakfAir),
        Table::Sha256 => Box::new(Sha256Air),
        Table::Poseidon2 => Box::new(tables::poseidon2::Poseidon2Air),
    }
}

/// The calls in the precompile tables of `traces` (main traces in table order): `(table, calls)` for KECCAKF
/// and SHA256, counted from their `is_real` rows (a call is one row group, docs/tables.md §6.19).
pub fn precompile_calls(traces: &[RowMajorMatrix]) -> Vec<(Table, usize)> {
    use tables::keccakf::{KeccakfCols, NUM_ROUNDS};
    use tables::sha256::{Sha256Cols, SHA256_ROWS};
    [
        (
            Table::Keccakf,
            KeccakfCols::<usize>::indices().is_real,
            NUM_ROUNDS,
        ),
        (
            Table::Sha256,
            Sha256Cols::<usize>::indices().is_real,
            SHA256_ROWS,
        ),
    ]
    .into_iter()
    .map(|(t, col, rows)| {
        let n = traces.get(t.index()).map_or(0, |m| {
            m.values
                .chunks(m.width.max(1))
                .filter(|row| row.get(col) == Some(&F::ONE))
                .count()
        });
        (t, n / rows)
    })
    .collect()
}

/// The number of main columns of `table` (its AIR's [`Air::width`]; the same for a whole run and a segment).
pub fn main_width(table: Table) -> usize {
    let p = AirParams {
        entry: 0,
        end_pc: None,
        input_first: 0,
        eof: tables::input::EofRule::Any,
        cycles: None,
    };
    air(table, &p).width()
}

/// The AIRs of the tables, in proof order ([`Table::ALL`]).
struct Machine {
    airs: Vec<Box<dyn Air>>,
}

impl Machine {
    fn new(program: &Program) -> Result<Self, String> {
        Ok(Self::with(&AirParams::run(program)?))
    }

    fn with(params: &AirParams) -> Self {
        Machine {
            airs: Table::ALL.into_iter().map(|t| air(t, params)).collect(),
        }
    }

    fn airs(&self) -> Vec<&dyn Air> {
        self.airs.iter().map(|a| a.as_ref()).collect()
    }

    /// Preprocessed traces in table order (DECODE and BITWISE).
    fn preprocessed(&self, decode: &DecodeTable, min_height: usize) -> Vec<Option<RowMajorMatrix>> {
        let mut v = vec![None; self.airs().len()];
        v[Table::Decode.index()] = Some(decode.preprocessed_trace(min_height));
        v[Table::Bitwise.index()] = Some(bitwise_preprocessed());
        v[Table::Pow2.index()] = Some(pow2_preprocessed(min_height));
        v
    }
}

/// Refuses a page list that is not strictly increasing, not page-aligned or outside the guest space
/// `[0x1000, 2^31)`.
pub fn check_page_list(pages: &[u32]) -> Result<(), String> {
    let mut prev: Option<u32> = None;
    for &p in pages {
        if p % 4096 != 0
            || (p as u64) < zkrv_executor::GUEST_MEM_START
            || p as u64 >= zkrv_executor::GUEST_MEM_END
        {
            return Err(format!(
                "page {p:#x} is not an aligned page of the guest space"
            ));
        }
        if prev.is_some_and(|q| q >= p) {
            return Err(format!("page list is not strictly increasing at {p:#x}"));
        }
        prev = Some(p);
    }
    Ok(())
}

/// The memory init tokens (docs/tables.md §3.2): `MEM_TOKEN[cell, 0, init_lo, init_hi]` sent for every cell
/// of every page, the initial bytes taken from the program. Refuses a page list that is not strictly
/// increasing, not page-aligned or outside the guest space `[0x1000, 2^31)`. The expanded form of
/// [`MemoryInit`] (one heap value per cell: the prover's and the debug checker's).
pub fn memory_init_interactions(
    program: &Program,
    pages: &[u32],
) -> Result<Vec<PublicInteraction>, String> {
    Ok(MemoryInit::new(program, pages)?.expand())
}

/// The memory init tokens of [`memory_init_interactions`] produced on the fly, page by page, from the page
/// list and the program's initial bytes (the verifier's form: the same interactions, in the same order,
/// hence the same transcript and public LogUp sum, in memory independent of the number of pages).
pub struct MemoryInit<'a> {
    program: &'a Program,
    pages: &'a [u32],
}

impl<'a> MemoryInit<'a> {
    /// Checks the page list ([`check_page_list`]).
    pub fn new(program: &'a Program, pages: &'a [u32]) -> Result<Self, String> {
        check_page_list(pages)?;
        Ok(MemoryInit { program, pages })
    }
}

impl zkrv_stark::logup::PublicSource for MemoryInit<'_> {
    fn count(&self) -> usize {
        self.pages.len() * CELLS_PER_PAGE
    }
    fn for_each(&self, f: &mut dyn FnMut(zkrv_stark::logup::PublicRef<'_>)) {
        let mut buf = [0u8; 4096];
        for &p in self.pages {
            self.program.initial_bytes(p as u64, &mut buf);
            for (j, cell_bytes) in buf.chunks_exact(8).enumerate() {
                let lo = u32::from_le_bytes([
                    cell_bytes[0],
                    cell_bytes[1],
                    cell_bytes[2],
                    cell_bytes[3],
                ]);
                let hi = u32::from_le_bytes([
                    cell_bytes[4],
                    cell_bytes[5],
                    cell_bytes[6],
                    cell_bytes[7],
                ]);
                f(zkrv_stark::logup::PublicRef {
                    bus: bus::MEM_TOKEN,
                    values: &[
                        F::from_u64(p as u64 / 8 + j as u64),
                        F::ZERO,
                        F::from_u64(lo as u64),
                        F::from_u64(hi as u64),
                    ],
                    multiplicity: F::ONE,
                    direction: Direction::Send,
                });
            }
        }
    }
}

/// The public interactions of a statement: the initial register tokens (sent), the public output bytes
/// `OUTPUT[i, byte_i]` and the exit code (received).
/// Memory init tokens come separately ([`memory_init_interactions`]).
pub fn public_interactions(statement: &Statement) -> Vec<PublicInteraction> {
    let mut v = register_init_interactions();
    for (i, &byte) in statement.output.iter().enumerate() {
        v.push(PublicInteraction {
            bus: bus::OUTPUT,
            values: vec![F::from_u64(i as u64), F::from_u64(byte as u64)],
            multiplicity: F::ONE,
            direction: Direction::Receive,
        });
    }
    v.push(halt_interaction(statement.exit_code));
    v
}

/// [`public_interactions`] followed by `tail`, with the output bytes kept as bytes (the verifier's form:
/// memory linear in the output with a constant of one byte; the same interactions, transcript and sum).
pub fn public_source<'a>(
    statement: &'a Statement,
    tail: Vec<PublicInteraction>,
) -> zkrv_stark::logup::PublicWithBytes<'a> {
    let mut t = vec![halt_interaction(statement.exit_code)];
    t.extend(tail);
    zkrv_stark::logup::PublicWithBytes {
        head: register_init_interactions(),
        bytes_bus: bus::OUTPUT,
        start: 0,
        bytes: &statement.output,
        direction: Direction::Receive,
        tail: t,
    }
}

fn halt_interaction(exit_code: u32) -> PublicInteraction {
    PublicInteraction {
        bus: bus::HALT,
        values: vec![F::from_u64(exit_code as u64)],
        multiplicity: F::ONE,
        direction: Direction::Receive,
    }
}

/// The initial register tokens of a whole run (sent): every register 0 but sp (`STACK_TOP`).
fn register_init_interactions() -> Vec<PublicInteraction> {
    let mut v = Vec::new();
    for r in 0..bus::NUM_REG_CELLS as u64 {
        let init = if r == 2 { zkrv_executor::STACK_TOP } else { 0 };
        let [lo, hi] = words(init);
        v.push(PublicInteraction {
            bus: bus::REG_TOKEN,
            values: vec![F::from_u64(r), F::ZERO, F::from_u64(lo), F::from_u64(hi)],
            multiplicity: F::ONE,
            direction: Direction::Send,
        });
    }
    v
}

/// Everything the prover commits to for one run: the statement and the main traces in table order
/// ([`Table::ALL`]). Exposed so that tests can tamper with a witness cell.
#[derive(Clone, Debug)]
pub struct Witness {
    pub statement: Statement,
    /// Main traces, `n_t x width_t`, natural row order, in table order.
    pub traces: Vec<RowMajorMatrix>,
    /// Touched 4 KiB pages (sorted base addresses): their cells get public init tokens.
    pub pages: Vec<u32>,
}

/// A run prepared for trace generation split between the host and a device ([`witness_split`]).
pub struct SplitWitness {
    pub statement: Statement,
    /// Host traces; the tables selected in the [`trace::DeviceFill`] are `0 x width` and their own BITWISE
    /// lookups are missing from `traces.lookups` (add the device's before [`trace::Traces::into_table_order`]).
    pub traces: trace::Traces,
    /// Compact inputs of the device-filled tables.
    pub inputs: trace::FillInputs,
    /// The execution record (the CPU fill reads `record.cycles`).
    pub record: zkrv_executor::Record,
}

/// Runs `program` on the private `input` and builds the witness (traces) of the run.
pub fn witness(program: &Program, input: &[u8]) -> Result<Witness, MachineError> {
    witness_min_height(program, input, MIN_HEIGHT)
}

/// [`witness`] with the table heights `config` needs ([`min_height`]; taller in zk mode).
pub fn witness_for(
    program: &Program,
    input: &[u8],
    config: &StarkConfig,
) -> Result<Witness, MachineError> {
    witness_min_height(program, input, min_height(config))
}

fn witness_min_height(
    program: &Program,
    input: &[u8],
    min_height: usize,
) -> Result<Witness, MachineError> {
    let run = run_for_proof(program, input)?;
    let s = split_traces_min(program, run, trace::DeviceFill::NONE, min_height)?;
    let (traces, pages) = s.traces.into_table_order();
    Ok(Witness {
        statement: s.statement,
        traces,
        pages,
    })
}

/// Runs `program` on the private `input` and builds the host part of its traces, leaving the tables selected
/// in `device` to the caller (a GPU fill from [`SplitWitness::inputs`] and [`SplitWitness::record`]).
pub fn witness_split(
    program: &Program,
    input: &[u8],
    device: trace::DeviceFill,
) -> Result<SplitWitness, MachineError> {
    let run = run_for_proof(program, input)?;
    split_traces(program, run, device)
}

/// [`MachineError::TooMuchMemory`] if `pages` touched 4 KiB pages exceed [`MAX_TOUCHED_PAGES`].
pub fn check_touched_pages(pages: usize) -> Result<(), MachineError> {
    if pages > MAX_TOUCHED_PAGES {
        return Err(MachineError::TooMuchMemory {
            pages,
            bytes: pages as u64 * zkrv_executor::PAGE_SIZE,
            max_pages: MAX_TOUCHED_PAGES,
            max_bytes: MAX_TOUCHED_PAGES as u64 * zkrv_executor::PAGE_SIZE,
        });
    }
    Ok(())
}

/// Checks that a record (a run or a segment) is provable: at most [`MAX_TOUCHED_PAGES`] touched pages
/// ([`MachineError::TooMuchMemory`]), only provable instructions ([`MachineError::Unsupported`]) and
/// `read`/`write` arguments below 2^32 ([`MachineError::SyscallArgument`]). Cycles are named as the record
/// counts them ([`check_provable_at`] for a segment's).
pub fn check_provable(rec: &zkrv_executor::Record) -> Result<(), MachineError> {
    check_provable_at(rec, 0)
}

/// [`check_provable`] of a record whose first cycle is the run's cycle `cycle_base` (a segment's record,
/// re-executed from its checkpoint: its own cycle indices start at 0), so that errors name the run's cycle.
pub fn check_provable_at(rec: &zkrv_executor::Record, cycle_base: u64) -> Result<(), MachineError> {
    check_touched_pages(rec.pages.len())?;
    for ev in &rec.cycles {
        let op = decode(ev.word).map(|i| i.op).unwrap_or(Op::Illegal);
        let known = op != Op::Ecall
            || matches!(
                ev.rs1_val,
                93 | 94
                    | 64
                    | 63
                    | zkrv_executor::precompile::KECCAK_F
                    | zkrv_executor::precompile::SHA256_COMPRESS
                    | zkrv_executor::precompile::POSEIDON2
            );
        if !supported(op) || !known {
            return Err(MachineError::Unsupported { pc: ev.pc, op });
        }
    }
    check_syscall_args(rec, cycle_base)
}

/// [`MachineError::SyscallArgument`] for the first `read`/`write` of `rec` whose a1 or a2 is 2^32 or more:
/// the SYSCALL table holds a1 and a2 as two 32-bit words with the high one constrained to 0 (docs/tables.md
/// §6.18). `rec` is a segment's (or a run's) full record, whose syscall events count cycles from 0 at its
/// first cycle event; `cycle_base` is added to that index in the error.
pub(crate) fn check_syscall_args(
    rec: &zkrv_executor::Record,
    cycle_base: u64,
) -> Result<(), MachineError> {
    let Some((sc, call, register, value)) = first_bad_syscall(&rec.syscalls) else {
        return Ok(());
    };
    let pc = usize::try_from(sc.cycle)
        .ok()
        .and_then(|i| rec.cycles.get(i))
        .map(|ev| ev.pc)
        .ok_or_else(|| {
            MachineError::Internal(format!(
                "no cycle event for the ECALL at cycle {}",
                sc.cycle
            ))
        })?;
    Err(MachineError::SyscallArgument {
        cycle: cycle_base.saturating_add(sc.cycle),
        pc,
        call,
        register,
        value,
    })
}

/// The first `read`/`write` of `syscalls` whose a1 or a2 is 2^32 or more, with the call's and the
/// register's names and the value ([`check_syscall_args`] makes the error of it).
pub(crate) fn first_bad_syscall(
    syscalls: &[zkrv_executor::SyscallEvent],
) -> Option<(
    &zkrv_executor::SyscallEvent,
    &'static str,
    &'static str,
    u64,
)> {
    use tables::sysio::{SYS_READ, SYS_WRITE};
    syscalls.iter().find_map(|sc| {
        let call = match sc.num {
            SYS_READ => "read",
            SYS_WRITE => "write",
            _ => return None,
        };
        [("a1 (buffer)", sc.args[1]), ("a2 (length)", sc.args[2])]
            .into_iter()
            .find(|&(_, v)| v >> 32 != 0)
            .map(|(register, value)| (sc, call, register, value))
    })
}

/// A run of a program, checked provable, ready for trace generation ([`run_for_proof`]).
pub struct ProofRun {
    pub statement: Statement,
    pub record: zkrv_executor::Record,
    /// The consumed prefix of the private input (what the INPUT table holds).
    pub input: Vec<u8>,
}

/// Runs `program` on the private `input` with recording (at most [`MAX_PROVABLE_CYCLES`] cycles, else
/// [`MachineError::CycleLimit`]) and checks that the run is provable: at most [`MAX_TOUCHED_PAGES`] touched
/// pages ([`MachineError::TooMuchMemory`], checked before any trace is allocated) and only provable
/// instructions ([`MachineError::Unsupported`]).
pub fn run_for_proof(program: &Program, input: &[u8]) -> Result<ProofRun, MachineError> {
    let max_cycles = MAX_PROVABLE_CYCLES;
    let run = execute(
        program,
        input,
        &ExecOptions {
            max_cycles,
            record: true,
        },
    )
    .map_err(|e| match e {
        ExecError::CycleLimit { limit, .. } if limit == max_cycles => {
            MachineError::CycleLimit { limit }
        }
        e => MachineError::Exec(e),
    })?;
    let rec = run
        .record
        .ok_or_else(|| MachineError::Internal("no record".into()))?;
    check_provable(&rec)?;
    let statement = Statement {
        program: program_commitment(program),
        exit_code: run.exit_code,
        output: run.public_output,
    };
    // The INPUT table holds only the consumed prefix of the input (docs/tables.md §6.18, INPUT): `read`
    // returns min(len, remaining), so if no read came back short, every read returned its full len and the
    // prefix gives the same reads; if one came back short, the guest consumed everything and the prefix is
    // the whole input. The run, its record and the statement are unchanged; only the (private) INPUT rows
    // that no lookup uses are dropped, which saves ~4 GB and ~55 s of proving per unread MiB.
    let consumed = rec
        .syscalls
        .iter()
        .filter(|sc| sc.num == tables::sysio::SYS_READ && sc.args[0] == 0)
        .fold(0u64, |n, sc| n.saturating_add(sc.ret));
    let input = input[..(consumed.min(input.len() as u64)) as usize].to_vec();
    Ok(ProofRun {
        statement,
        record: rec,
        input,
    })
}

/// The host part of the traces of `run` (see [`witness_split`]): the sequential walk and every table not
/// selected in `device`.
pub fn split_traces(
    program: &Program,
    run: ProofRun,
    device: trace::DeviceFill,
) -> Result<SplitWitness, MachineError> {
    split_traces_min(program, run, device, MIN_HEIGHT)
}

/// [`split_traces`] with another smallest table height (a power of two; [`min_height`] of the config in zk
/// mode).
pub fn split_traces_min(
    program: &Program,
    run: ProofRun,
    device: trace::DeviceFill,
    min_height: usize,
) -> Result<SplitWitness, MachineError> {
    let decode_table = DecodeTable::new(program)?;
    let (traces, inputs) =
        trace::generate_split(&decode_table, &run.record, &run.input, min_height, device)?;
    Ok(SplitWitness {
        statement: run.statement,
        traces,
        inputs,
        record: run.record,
    })
}

/// Proves a witness of `program` (from [`witness`], possibly modified by a test) on the CPU backend.
pub fn prove_witness(
    program: &Program,
    witness: Witness,
    config: &StarkConfig,
) -> Result<(Statement, Proof), MachineError> {
    prove_witness_with(
        &zkrv_stark::backend::CpuBackend::default(),
        program,
        witness,
        config,
    )
}

/// Proves a witness of `program` on any prover backend (the CPU one, or the CUDA one from `zkrv-cuda`).
/// The traces enter the backend as host matrices; backends that build traces on the device take them from
/// there instead. Proofs are byte-identical across backends (deterministic grinding, bit-exact kernels).
pub fn prove_witness_with<B: zkrv_stark::backend::ProverBackend>(
    backend: &B,
    program: &Program,
    witness: Witness,
    config: &StarkConfig,
) -> Result<(Statement, Proof), MachineError> {
    let traces = witness
        .traces
        .into_iter()
        .map(zkrv_stark::backend::TraceInput::Host)
        .collect();
    prove_inputs_with(
        backend,
        program,
        witness.statement,
        witness.pages,
        traces,
        config,
    )
}

/// Proves a run of `program` from prepared trace inputs: the main traces in table order ([`TABLE_NAMES`]),
/// each a host matrix or a buffer already resident on `backend` (e.g. filled there by a GPU kernel), the
/// run's `statement` and touched `pages`. [`prove_witness_with`] is this with every trace on the host.
pub fn prove_inputs_with<B: zkrv_stark::backend::ProverBackend>(
    backend: &B,
    program: &Program,
    statement: Statement,
    pages: Vec<u32>,
    traces: Vec<zkrv_stark::backend::TraceInput<B::DeviceTrace>>,
    config: &StarkConfig,
) -> Result<(Statement, Proof), MachineError> {
    let s_pre = span("preprocessed traces + public");
    let decode_table = DecodeTable::new(program)?;
    let machine = Machine::new(program).map_err(MachineError::BadProgram)?;
    let airs = machine.airs();
    let pre = preprocess(
        &airs,
        machine.preprocessed(&decode_table, min_height(config)),
    )?;
    let mut public = public_interactions(&statement);
    public.extend(memory_init_interactions(program, &pages).map_err(MachineError::BadProgram)?);
    drop(s_pre);
    let stark = zkrv_stark::prove_with(
        backend,
        config,
        &airs,
        &pre,
        traces,
        &public,
        &statement.to_bytes(),
    )?;
    Ok((statement, Proof { pages, stark }))
}

/// Recomputes the BITWISE multiplicities (table 2) from the lookups that the other tables' traces make, as
/// any prover could after editing a trace. Tamper tests call this so that they exercise the constraint or
/// bus they target instead of tripping over stale lookup counts. Lookups of out-of-range values are left
/// uncounted (the bus then stays unbalanced, which is the right outcome). Slow (symbolic evaluation per
/// row): for tests on small traces.
pub fn recount_lookups(program: &Program, witness: &mut Witness) -> Result<(), MachineError> {
    use tables::bitwise::{LookupKind, Lookups};
    use zkrv_stark::air::AirBuilder;
    use zkrv_stark::field::PrimeField64;
    use zkrv_stark::symbolic::Expr;

    let decode_table = DecodeTable::new(program)?;
    let machine = Machine::new(program).map_err(MachineError::BadProgram)?;
    let decode_height = witness
        .traces
        .get(Table::Decode.index())
        .map_or(MIN_HEIGHT, |t| t.height());
    let prep = machine.preprocessed(&decode_table, decode_height);
    let mut lookups = Lookups::new();
    for (t, air) in machine.airs().iter().enumerate() {
        if t == Table::Bitwise.index() {
            continue;
        }
        let mut b = AirBuilder::for_air(*air);
        air.eval(&mut b);
        let public = air.public_values();
        let main = &witness.traces[t];
        let n = main.height();
        for row in 0..n {
            let leaf = |e: &Expr| -> F {
                let r = |next: bool| if next { (row + 1) % n } else { row };
                match e {
                    Expr::Main { col, next } => main.row(r(*next))[*col],
                    Expr::Preprocessed { col, next } => prep[t]
                        .as_ref()
                        .map(|p| p.row(r(*next))[*col])
                        .unwrap_or(F::ZERO),
                    Expr::IsFirstRow => F::from_bool(row == 0),
                    Expr::IsLastRow => F::from_bool(row == n - 1),
                    Expr::IsTransition => F::from_bool(row != n - 1),
                    Expr::Public(i) => public[*i],
                    _ => F::ZERO,
                }
            };
            for it in &b.interactions {
                if it.direction != Direction::Send {
                    continue;
                }
                let m = it.multiplicity.eval(&leaf).as_canonical_u64();
                let v: Vec<u64> = it
                    .values
                    .iter()
                    .map(|e| e.eval(&leaf).as_canonical_u64())
                    .collect();
                let (kind, x) = match (it.bus, v.as_slice()) {
                    (bus::RANGE16, [x]) => (LookupKind::U16, *x),
                    (bus::MSB16, [x, s]) if *x < 1 << 16 && *s == *x >> 15 => {
                        (LookupKind::Msb16, *x)
                    }
                    (bus::BYTE, [op, a, b, c]) if *a < 256 && *b < 256 => {
                        let kind = match *op {
                            bus::BYTE_AND if *c == a & b => LookupKind::And,
                            bus::BYTE_OR if *c == a | b => LookupKind::Or,
                            bus::BYTE_XOR if *c == a ^ b => LookupKind::Xor,
                            bus::BYTE_PAIR if *c == 0 => LookupKind::Pair,
                            bus::BYTE_MSB if *c == a >> 7 => LookupKind::Msb8,
                            _ => continue,
                        };
                        (kind, (a << 8) | b)
                    }
                    _ => continue,
                };
                if x < 1 << 16 {
                    for _ in 0..m.min(1 << 32) {
                        lookups.add(kind, x);
                    }
                }
            }
        }
    }
    witness.traces[Table::Bitwise.index()] = lookups.trace();
    Ok(())
}

/// The debug checker ([`zkrv_stark::check::check_traces`]) over witnesses of one program: every constraint
/// of every table on every row, multiplicity bounds, and every bus balanced with the public interactions of
/// the witness's statement and pages, with no commitment. Built once per program (compiled AIRs and the
/// preprocessed DECODE/BITWISE/POW2 traces), so that tests can check many tampered witnesses cheaply.
pub struct WitnessChecker {
    program: Program,
    compiled: Vec<zkrv_stark::air::CompiledAir>,
    prep: Vec<Option<RowMajorMatrix>>,
    log_max_multiplicity: u32,
}

impl WitnessChecker {
    /// Compiles the tables of `program` under `config` (its constraint degree and multiplicity bound).
    pub fn new(program: &Program, config: &StarkConfig) -> Result<Self, MachineError> {
        let decode_table = DecodeTable::new(program)?;
        let machine = Machine::new(program).map_err(MachineError::BadProgram)?;
        let compiled = zkrv_stark::air::compile_for(&machine.airs(), config)
            .map_err(|e| MachineError::Internal(e.to_string()))?;
        Ok(WitnessChecker {
            program: program.clone(),
            compiled,
            prep: machine.preprocessed(&decode_table, min_height(config)),
            log_max_multiplicity: config.log_max_multiplicity,
        })
    }

    /// The compiled AIRs, in table order (for backends' and kernels' parity tests).
    pub fn compiled(&self) -> &[zkrv_stark::air::CompiledAir] {
        &self.compiled
    }

    /// The preprocessed traces in table order (`Some` for DECODE, BITWISE and POW2).
    pub fn preprocessed(&self) -> &[Option<RowMajorMatrix>] {
        &self.prep
    }

    /// Checks `witness` (traces in table order, see [`Witness`]); the error names the table, row and
    /// constraint, or the unbalanced bus tuple.
    pub fn check(&self, witness: &Witness) -> Result<(), zkrv_stark::check::CheckError> {
        let mut public = public_interactions(&witness.statement);
        match memory_init_interactions(&self.program, &witness.pages) {
            Ok(m) => public.extend(m),
            Err(reason) => {
                return Err(zkrv_stark::check::CheckError::Shape {
                    table: "PAGE".into(),
                    reason,
                })
            }
        }
        zkrv_stark::check::check_traces(
            &self.compiled,
            &witness.traces,
            &self.prep,
            &public,
            self.log_max_multiplicity,
        )
    }
}

/// Runs `program` on the private `input` and proves the run. Returns the statement and the proof.
pub fn prove(
    program: &Program,
    input: &[u8],
    config: &StarkConfig,
) -> Result<(Statement, Proof), MachineError> {
    prove_witness(program, witness_for(program, input, config)?, config)
}

/// Verifies `proof` of `statement` for `program` (the verifier rebuilds the preprocessed DECODE, BITWISE and
/// POW2 traces itself and evaluates them at the out-of-domain point; nothing of them is taken from the proof).
/// `config` must be the prover's (it is part of the transcript). `min_bits`: the least provable security
/// the verifier accepts, in bits (Johnson regime, BCHKS25, for the proof's own heights and batch:
/// [`proof_security`]); below it `VerifyError::Stark(zkrv_stark::VerifyError::WeakParameters { .. })`.
/// 0 accepts any parameters the PCS runs with; `zkrv verify` uses 100 by default.
pub fn verify(
    program: &Program,
    statement: &Statement,
    proof: &Proof,
    config: &StarkConfig,
    min_bits: u32,
) -> Result<(), VerifyError> {
    with_verifier_inputs(
        program,
        statement,
        proof,
        config,
        |airs, pre, public, stmt| {
            let _s = span("STARK verify");
            zkrv_stark::verify(config, min_bits, airs, pre, public, stmt, &proof.stark)?;
            Ok(())
        },
    )
}

/// The recursion verifier program of `proof` and its witness (docs/recursion.md §4): [`verify`]'s tables,
/// preprocessed traces, public interactions and statement bytes given to
/// [`zkrv_stark::recursion::build_verifier`] (a Poseidon2, non-zk proof; else
/// [`VerifyError::Recursion`]).
pub fn recursion_program(
    program: &Program,
    statement: &Statement,
    proof: &Proof,
    config: &StarkConfig,
) -> Result<zkrv_stark::recursion::VerifierProgram, VerifyError> {
    with_verifier_inputs(
        program,
        statement,
        proof,
        config,
        |airs, pre, public, stmt| {
            Ok(zkrv_stark::recursion::build_verifier(
                config,
                airs,
                pre,
                public,
                stmt,
                &proof.stark,
            )?)
        },
    )
}

/// What the STARK verifier of a one-proof run reads, after the statement's checks: the tables, the
/// preprocessed traces, the public interactions and the statement bytes, given to `f`.
fn with_verifier_inputs<R>(
    program: &Program,
    statement: &Statement,
    proof: &Proof,
    config: &StarkConfig,
    f: impl FnOnce(
        &[&dyn Air],
        &zkrv_stark::PreprocessedData,
        &dyn PublicSource,
        &[u8],
    ) -> Result<R, VerifyError>,
) -> Result<R, VerifyError> {
    check_output_len(statement.output.len() as u64)?;
    if statement.program != program_commitment(program) {
        return Err(VerifyError::WrongProgram);
    }
    let s_decode = span("preprocessed traces");
    let decode_table =
        DecodeTable::new(program).map_err(|e| VerifyError::BadProgram(e.to_string()))?;
    let machine = Machine::new(program).map_err(VerifyError::BadProgram)?;
    let airs = machine.airs();
    let prep_traces = machine.preprocessed(&decode_table, min_height(config));
    drop(s_decode);
    let pre = preprocess(&airs, prep_traces).map_err(|e| VerifyError::Preprocess(e.to_string()))?;
    let s_public = span("public interactions");
    let public = (
        public_source(statement, Vec::new()),
        MemoryInit::new(program, &proof.pages).map_err(VerifyError::BadPages)?,
    );
    drop(s_public);
    f(&airs, &pre, &public, &statement.to_bytes())
}

/// The compiled AIRs of `program`'s tables under `config` (its degree bound and zk mode), in table order.
pub fn compiled_airs(
    program: &Program,
    config: &StarkConfig,
) -> Result<Vec<zkrv_stark::air::CompiledAir>, MachineError> {
    compiled_airs_for(
        &AirParams::run(program).map_err(MachineError::BadProgram)?,
        config,
    )
}

/// The compiled AIRs of the tables with instance constants `params` (a whole run's, or a segment's:
/// [`segment::SegmentHeader::air_params`]) under `config`, in table order.
pub fn compiled_airs_for(
    params: &AirParams,
    config: &StarkConfig,
) -> Result<Vec<zkrv_stark::air::CompiledAir>, MachineError> {
    zkrv_stark::air::compile_for(&Machine::with(params).airs(), config)
        .map_err(|e| MachineError::Internal(e.to_string()))
}

/// The security of `proof` under `config`: its own table heights and DEEP batch size, the tables of
/// `program` ([`zkrv_stark::security`], docs/stark.md "Security"). Checks nothing of the proof beyond
/// its table count and heights (at most `2^MAX_LOG_HEIGHT`): an error otherwise, never a panic.
pub fn proof_security(
    program: &Program,
    proof: &Proof,
    config: &StarkConfig,
) -> Result<zkrv_stark::security::SecurityReport, MachineError> {
    let airs = compiled_airs(program, config)?;
    check_heights(&airs, &proof.stark.log_heights)?;
    let shape = zkrv_stark::security::ProofShape::of_proof(&airs, &proof.stark);
    Ok(config.security(&shape))
}

/// Checks that a proof's table heights (`log_heights`, in table order) are one per table of `airs`, each
/// at most `2^MAX_LOG_HEIGHT` rows or absent ([`zkrv_stark::proof::ABSENT_LOG_HEIGHT`]) where the table
/// may be absent (`CompiledAir::may_be_absent`; only the precompile tables may): [`MachineError::ProofShape`]
/// naming the table otherwise.
pub(crate) fn check_heights(
    airs: &[zkrv_stark::air::CompiledAir],
    log_heights: &[u8],
) -> Result<(), MachineError> {
    if log_heights.len() != airs.len() {
        return Err(MachineError::ProofShape(format!(
            "the proof has {} table heights, the machine {} tables",
            log_heights.len(),
            airs.len()
        )));
    }
    let max = zkrv_stark::logup::MAX_LOG_HEIGHT;
    let absent = zkrv_stark::proof::ABSENT_LOG_HEIGHT;
    if let Some((air, _)) = airs
        .iter()
        .zip(log_heights)
        .find(|(a, &h)| h == absent && !a.may_be_absent)
    {
        return Err(MachineError::ProofShape(format!(
            "table `{}` is absent from the proof, but the machine requires it",
            air.name
        )));
    }
    if let Some((air, &h)) = airs
        .iter()
        .zip(log_heights)
        .find(|(_, &h)| h != absent && h as usize > max)
    {
        return Err(MachineError::ProofShape(format!(
            "table `{}` has a height of 2^{h} rows, more than the 2^{max} a table may have",
            air.name
        )));
    }
    Ok(())
}

/// The security of proofs under `config` whose tables all have `2^log_height` rows (the worst case of
/// that height bound; `program` gives the table list, whose shapes do not depend on it).
pub fn worst_case_security(
    program: &Program,
    config: &StarkConfig,
    log_height: usize,
) -> Result<zkrv_stark::security::SecurityReport, MachineError> {
    let airs = compiled_airs(program, config)?;
    let heights = vec![log_height; airs.len()];
    let shape = zkrv_stark::security::ProofShape::for_config(&airs, &heights, config);
    Ok(config.security(&shape))
}

/// The preprocessed traces of `program`'s tables, by table name (DECODE, BITWISE, POW2), each `n x w`,
/// natural row order: what [`verify`] evaluates at the out-of-domain point. For benches and tests.
pub fn preprocessed_traces(
    program: &Program,
) -> Result<Vec<(String, RowMajorMatrix)>, MachineError> {
    let decode_table = DecodeTable::new(program)?;
    let machine = Machine::new(program).map_err(MachineError::BadProgram)?;
    let names: Vec<String> = machine
        .airs()
        .iter()
        .map(|a| a.name().to_string())
        .collect();
    Ok(machine
        .preprocessed(&decode_table, MIN_HEIGHT)
        .into_iter()
        .enumerate()
        .filter_map(|(t, m)| m.map(|m| (names[t].clone(), m)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_the_air_names_in_proof_order() {
        let program = Program::from_words(0x1000, &[zkrv_executor::asm::ECALL]).unwrap();
        let machine = Machine::new(&program).unwrap();
        let names: Vec<&str> = machine.airs().iter().map(|a| a.name()).collect();
        assert_eq!(names, TABLE_NAMES);
        for t in Table::ALL {
            assert_eq!(machine.airs()[t.index()].name(), t.name());
        }
    }
}
