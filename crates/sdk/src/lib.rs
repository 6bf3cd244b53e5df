//! zkrv-sdk: the one crate a Rust host depends on to prove and verify runs of zkrv guests (RV64IM ELFs,
//! docs/abi.md).
//!
//! * [`Program::load`] / [`Program::from_elf`] load a guest; [`Program::id`] is its **program ID**, the
//!   commitment every proof's statement binds (`zkrv_machine::program_commitment`: Keccak-256 of the entry
//!   point and the loaded segments; docs/abi.md "What is proven"). Publish it before proving, as SP1's
//!   verifying key or RISC Zero's image ID; `zkrv program-id prog.elf` prints the same hex.
//! * [`io::Input`] builds the private input: typed values ([`io::Input::write`], any serde type, read in
//!   a Rust guest by `zkrv_guest::read::<T>()`) and fixed-width integers and byte strings
//!   ([`io::Input::write_u64`], [`io::Input::write_bytes`], ..., for C guests' `zkrv_read_u64`, ...); the
//!   encodings are docs/abi.md "Typed I/O".
//! * [`prove`] runs the guest on the private input and proves the run with [`ProveOptions`]: zero knowledge
//!   **on** by default, security preset (100 bits by default), backend CPU / GPU / auto, cycle limit, LDE
//!   memory mode, segment size. It returns a
//!   [`Receipt`] (statement + proof + the STARK parameters) and what the run printed to fd 2. A run longer
//!   than one proof holds ([`MAX_PROVABLE_CYCLES`]), or any run with [`ProveOptions::segment_cycles`], is
//!   proven in **segments** chained in one receipt ([`ReceiptProof::Segmented`], docs/continuations.md;
//!   the segment boundaries are public, memory written before a boundary included, which may hold the
//!   private input: such a receipt is zero-knowledge only within each segment, so a zk run that needs
//!   segments is refused unless [`ProveOptions::public_segment_boundaries`] accepts that).
//! * [`prove_with`] is [`prove`] reporting to a [`ProveObserver`] (the stages and the prover's spans as they
//!   start, notes, the guest's fd-2 text, the plan to accept or refuse before proving, each segment done):
//!   what `zkrv prove` prints. [`Proved`] carries the profile, the GPU transfers and trace report, the
//!   device figures. [`ProveOptions::from_env`] reads the prover's `ZKRV_*` switches once (docs/cli.md
//!   "Environment"); otherwise the SDK reads only a test switch (`ZKRV_TEST_WRITE_PAUSE_MS`, [`write_atomic`]).
//! * [`Receipt::to_bytes`] / [`Receipt::from_bytes`] / [`Receipt::save`] / [`Receipt::load`]: the `.zkrv`
//!   proof file ([`proof_file`], the format `zkrv prove` writes and `zkrv verify` reads).
//! * [`Receipt::verify`] checks a receipt against a program and that the run succeeded (exit code 0, as
//!   `zkrv verify`; [`Error::ExitCode`] otherwise); [`Receipt::verify_any_exit`] accepts a valid proof of
//!   any exit code (a failed guest's run is a valid statement too). [`Receipt::exit_code`] and
//!   [`Receipt::output`] are the proven public values. [`Receipt::output_reader`] reads the output back as the values the guest
//!   wrote (`zkrv_guest::commit(&v)`: [`io::OutputReader::read`]), [`Receipt::output_value`] as one value.
//! * Every failure is an [`Error`] naming its cause; nothing panics on untrusted input (ELF bytes, proof
//!   bytes, paths, public outputs).
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use zkrv_sdk::io::Input;
//! use zkrv_sdk::{prove, Program, ProveOptions, Receipt};
//!
//! // The bundled typedio guest (guests/rust/typedio): reads a typed `Request`, then a u64; commits a typed
//! // `Summary`, then the u64. The host's types need only match the guest's in the serde data model.
//! #[derive(Serialize)]
//! struct Request { name: String, values: Vec<i64>, scale: i32, tag: Option<[u8; 4]> }
//! #[derive(Deserialize, Debug, PartialEq)]
//! struct Summary {
//!     greeting: String,
//!     count: u32,
//!     scaled_sum: i64,
//!     min: Option<i64>,
//!     max: Option<i64>,
//!     tag: Option<[u8; 4]>,
//! }
//!
//! let program = Program::from_elf(include_bytes!("../../../guests/bin/typedio.elf"))?;
//! println!("program ID {}", program.id());
//!
//! let request = Request { name: "zkrv".into(), values: vec![3, -5, 8], scale: 10, tag: Some(*b"demo") };
//! let input = Input::new().write(&request)?.write_u64(7).into_bytes();
//! let proved = prove(&program, &input, &ProveOptions::default())?;
//! assert!(proved.receipt.is_zk()); // zero knowledge unless `ProveOptions { zk: false, .. }`
//! let bytes = proved.receipt.to_bytes()?; // the .zkrv file
//!
//! // The verifier needs the proof bytes and the program (or just its ID, to compare).
//! let receipt = Receipt::from_bytes(&bytes)?;
//! receipt.verify(&program)?;
//! assert_eq!(receipt.program_id(), program.id());
//! assert_eq!(receipt.exit_code(), 0);
//! let mut output = receipt.output_reader();
//! let summary: Summary = output.read()?;
//! assert_eq!(summary, Summary {
//!     greeting: "hello, zkrv".into(),
//!     count: 3,
//!     scaled_sum: 60,
//!     min: Some(-5),
//!     max: Some(8),
//!     tag: Some(*b"demo"),
//! });
//! assert_eq!(output.read_u64()?, 7);
//! output.finish()?;
//! # Ok::<(), zkrv_sdk::Error>(())
//! ```

mod engine;
pub mod estimate;
pub mod io;
pub mod proof_file;
mod proving;
pub mod security;

use std::fmt;
use std::path::{Path, PathBuf};

pub use engine::{Backend, Engine, Gpus};
pub use proving::{
    default_segment_jobs, prove, prove_with, DeviceBuffers, DeviceReport, Note, Plan,
    ProveObserver, Proved, SegmentPlan, STAGES,
};
pub use security::SecurityReport;
/// The host<->device transfer statistics of a GPU proof ([`Proved::transfers`]; `zkrv prove --stats`):
/// bytes per (stage, table) each way and each main trace's [`TraceOrigin`].
pub use zkrv_cuda::{TraceOrigin, TransferStats};
/// A guest's run without a proof ([`Program::execute`]) and why one fails ([`Error::Exec`]).
pub use zkrv_executor::{ElfError, ExecError, Execution, DEFAULT_MAX_CYCLES};
pub use zkrv_machine::segment::{
    default_segment_rows, SegmentDone, SegmentProof, DEFAULT_CPU_SEGMENT_ROWS, DEFAULT_SEGMENT_ROWS,
};
/// The tables of a proof, in proof order (the names [`TransferStats`] uses).
pub use zkrv_machine::TABLE_NAMES;
pub use zkrv_machine::{Proof, Statement, MAX_PROVABLE_CYCLES, MAX_TOUCHED_PAGES};
pub use zkrv_stark::backend::LdeMode;
pub use zkrv_stark::merkle::MerkleHash;
/// Stage timings ([`Proved::profile`]): stages in order of first entry, each with its path, depth,
/// seconds and calls.
pub use zkrv_stark::profile::{Profile, Stage as ProfileStage};
pub use zkrv_stark::{SecurityPreset, StarkConfig};

/// Largest ELF file [`Program::load`] reads (256 MiB, the executor's limit).
pub const MAX_ELF_BYTES: u64 = zkrv_executor::MAX_ELF_BYTES;
/// Largest proof file [`Receipt::load`] reads (1 GiB).
pub const MAX_PROOF_BYTES: u64 = 1 << 30;

/// Why an SDK call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed. The I/O error is part of the message (not also reported as a
    /// source, which would print it twice).
    #[error("{what} {path}: {error}")]
    Io {
        /// What was read or written (`ELF`, `proof file`, `writing`, ...).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS's error.
        error: std::io::Error,
    },
    /// A file above the size its reader takes ([`MAX_ELF_BYTES`], [`MAX_PROOF_BYTES`], ...).
    #[error("{what} {path} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// What was read.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The limit, bytes.
        limit: u64,
    },
    /// The bytes are not an ELF the executor runs (docs/abi.md lists what is refused).
    #[error("bad ELF: {0}")]
    Elf(#[from] zkrv_executor::ElfError),
    /// The guest did not run to its `exit`. A cycle limit names the option that raises it.
    #[error("execution failed after {cycles} cycles: {error}{}", exec_hint(error))]
    Exec {
        /// Why the run stopped (boxed: an [`Error`] stays small).
        error: Box<zkrv_executor::ExecError>,
        /// Instructions executed before it stopped.
        cycles: u64,
        /// What the guest wrote to fd 2 before the error (often the reason).
        debug_output: Vec<u8>,
        /// What the guest wrote to fd 1 before the error (not proven).
        public_output: Vec<u8>,
    },
    /// `ProveOptions::max_cycles` above what one proof file can hold: 2^32 - 1 segments of
    /// `segment_rows - 1` cycles (`zkrv_machine::segment::max_run_cycles`); refused before the guest runs.
    #[error("max_cycles {max_cycles}: a proof holds at most 2^32 - 1 segments of {} cycles = {limit} cycles (segments of {segment_rows} rows)", segment_rows.saturating_sub(1))]
    CycleLimitTooLarge {
        /// The limit asked for.
        max_cycles: u64,
        /// CPU rows per segment.
        segment_rows: u64,
        /// The most cycles a proof file of such segments holds.
        limit: u64,
    },
    /// `ProveOptions::segment_cycles` is not a usable segment size (power of two, table minimum, 2^26).
    #[error("segment_cycles {rows}: {reason}")]
    SegmentSize {
        /// The size asked for.
        rows: u64,
        /// Why it is refused.
        reason: String,
    },
    /// `ProveOptions::segment_jobs` is `Some(0)`: at least one segment must be proven at a time.
    #[error("segment_jobs 0: at least one segment must be proven at a time")]
    SegmentJobs,
    /// A zero-knowledge run that needs more than one segment, without
    /// [`ProveOptions::public_segment_boundaries`]: refused after the first (execution) pass, before any
    /// segment is proven, because a segmented proof publishes every segment boundary (docs/continuations.md
    /// "Zero knowledge").
    #[error(
        "the run needs {segments} segments of {segment_rows} rows, and a segmented proof makes every \
         segment boundary public: the registers, pc and I/O cursors at each boundary and every memory cell \
         written before it, which may hold the private input (docs/continuations.md \"Zero knowledge\"); \
         set ProveOptions::public_segment_boundaries to accept that, or prove with zk: false, or in one \
         segment (a run of at most 2^26 - 1 cycles without segment_cycles, or a segment_cycles it fits in)"
    )]
    PublicSegmentBoundaries {
        /// Segments the run needs.
        segments: usize,
        /// CPU rows per segment.
        segment_rows: u64,
        /// Cycles of the run.
        cycles: u64,
    },
    /// The [`ProveObserver`] refused the plan before any proving ([`ProveObserver::check_plan`]; its
    /// reason).
    #[error("{0}")]
    Refused(String),
    /// Fewer usable GPUs than [`ProveOptions::gpus`] asks for a segmented proof (`want`: the count, when
    /// it could be read); no segment was proven.
    #[error("gpus{}: {reason}", want.map_or(String::new(), |n| format!(" {n}")))]
    GpuCount {
        /// Devices asked for.
        want: Option<usize>,
        /// Why a device could not be counted or opened.
        reason: String,
    },
    /// An environment switch ([`ProveOptions::from_env`]) has a value it does not take.
    #[error("{var}={value:?}: expected {expected}")]
    Env {
        /// The variable (`ZKRV_LDE`, ...).
        var: &'static str,
        /// Its value (lossily decoded when not UTF-8).
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// Proving failed (limits, unsupported instruction, prover error).
    #[error(transparent)]
    Machine(#[from] zkrv_machine::MachineError),
    /// [`Backend::Gpu`] and no usable GPU (no driver, no NVRTC, no device, feature `cuda` off): the reason.
    #[error("no usable GPU: {0}")]
    NoGpu(String),
    /// The GPU failed outside the prover (trace generation on the device): the device's error.
    #[error("GPU: {0}")]
    Gpu(String),
    /// Not a readable proof file.
    #[error(transparent)]
    ProofFile(#[from] proof_file::FileError),
    /// The proof is for another program: its program ID is `proof`, the program's `program`.
    #[error("the proof is for another program (program ID {proof}, expected {program})")]
    WrongProgram {
        /// The program ID in the proof's statement.
        proof: ProgramId,
        /// The program's ID.
        program: ProgramId,
    },
    /// The proof does not verify.
    #[error("invalid proof: {0}")]
    Invalid(zkrv_machine::VerifyError),
    /// The proof is valid, but the run it proves exited with `code`, not 0: the guest failed
    /// ([`Receipt::verify`], [`Receipt::check`]; [`Receipt::verify_any_exit`] accepts any exit code).
    #[error(
        "the proof is valid, but the guest exited with code {code} (not 0: the run failed); \
         Receipt::verify_any_exit accepts any exit code"
    )]
    ExitCode {
        /// The proven exit code.
        code: u32,
    },
    /// A value does not encode into a private input ([`io::Input::write`]).
    #[error(transparent)]
    Encode(#[from] io::EncodeError),
    /// A public output does not decode as the values asked for ([`Receipt::output_value`],
    /// [`io::OutputReader`]).
    #[error(transparent)]
    Decode(#[from] io::DecodeError),
    /// The proof's parameters give fewer bits of provable security than the verifier requires
    /// ([`Receipt::check_with`]).
    #[error("the proof's parameters give {bits} bits provable, below the required {min}{}", too_weak_hint(*min))]
    TooWeak {
        /// Bits provable of the proof's parameters (Johnson regime; the first segment below `min`).
        bits: u32,
        /// Bits required.
        min: u32,
    },
    /// A path [`Receipt::save`] / [`write_atomic`] refuses to write ([`check_output_path`]); nothing was
    /// written and the path is untouched.
    #[error("cannot write {}: {reason}", .path.display())]
    OutputPath {
        /// The path refused.
        path: PathBuf,
        /// Why.
        reason: OutputPathError,
    },
    /// A path that is not a regular file or a character device (a FIFO or a socket), refused before it is
    /// opened: opening a FIFO blocks until something writes to it ([`check_input_path`]).
    #[error("{what} {} is a {kind}, not a file: opening it would wait for a writer, reading it may never end", .path.display())]
    NotAFile {
        /// What would have been read.
        what: &'static str,
        /// The path refused.
        path: PathBuf,
        /// `FIFO (named pipe)` or `socket`.
        kind: &'static str,
    },
    /// A bug or an unexpected state (a panic inside the prover or verifier, caught; its message).
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<zkrv_executor::Failure> for Error {
    fn from(f: zkrv_executor::Failure) -> Error {
        Error::Exec {
            error: Box::new(f.error),
            cycles: f.cycles,
            debug_output: f.debug_output,
            public_output: f.public_output,
        }
    }
}

/// How to raise the limit an [`Error::Exec`] hit (the SDK's names, not the CLI's flags).
fn exec_hint(e: &zkrv_executor::ExecError) -> &'static str {
    match e {
        zkrv_executor::ExecError::CycleLimit { .. } => {
            "; raise it with `ProveOptions::max_cycles` (`Program::execute`: its `max_cycles` argument)"
        }
        _ => "",
    }
}

/// The remedy for [`Error::TooWeak`]: the weakest preset that meets `min` bits, or that none does.
fn too_weak_hint(min: u32) -> String {
    match SecurityPreset::weakest_meeting(min) {
        Some(p) => format!(
            " (prove with `ProveOptions::security` = `SecurityPreset::{p:?}`, built for {} bits provable, or \
             accept fewer bits with `Receipt::check_with`)",
            p.target_bits().unwrap_or(min)
        ),
        None => format!(
            " (no preset reaches {min} bits: the strongest, `SecurityPreset::Bits128`, gives 128; accept fewer \
             bits with `Receipt::check_with`)"
        ),
    }
}

/// A program ID: `zkrv_machine::program_commitment` of the program, 32 bytes; shown as 64 lowercase hex
/// digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProgramId(pub [u8; 32]);

impl ProgramId {
    /// Parses 64 hex digits (either case); `None` otherwise.
    pub fn from_hex(s: &str) -> Option<ProgramId> {
        let b = s.as_bytes();
        if b.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in b.chunks_exact(2).enumerate() {
            let d = |c: u8| (c as char).to_digit(16);
            out[i] = (d(pair[0])? * 16 + d(pair[1])?) as u8;
        }
        Some(ProgramId(out))
    }
}

impl fmt::Display for ProgramId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

impl fmt::Debug for ProgramId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProgramId({self})")
    }
}

/// A positive decimal number of GiB (`24`, `7.5`) as bytes (`--gpu-memory`, `ZKRV_GPU_MEMORY`); `None`
/// for anything else.
pub fn parse_gib(s: &str) -> Option<u64> {
    zkrv_cuda::parse_gib(s)
}

/// Lowercase hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Why [`check_output_path`] refuses a path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutputPathError {
    /// An existing directory, or a path without a file name (`.`, `..`, `/`).
    #[error("is a directory, expected a file path")]
    Directory,
    /// The path ends in `/`: it names a directory, which the rename of an atomic write cannot create.
    #[error("ends in `/`, which names a directory; expected a file path (drop the trailing `/`)")]
    TrailingSlash,
    /// An existing symbolic link (dangling or not): the atomic rename would replace the link, not write
    /// to its target.
    #[error(
        "is a symbolic link; zkrv replaces its output atomically, give the path of a regular file"
    )]
    Symlink,
    /// An existing device, FIFO or socket: the rename would replace it with a regular file.
    #[error("exists and is not a regular file (a device, FIFO or socket); refusing to replace it")]
    NotRegularFile,
    /// A last component longer than [`MAX_FILE_NAME`] bytes.
    #[error("file name of {len} bytes is longer than {MAX_FILE_NAME} bytes")]
    NameTooLong {
        /// The name's length, bytes.
        len: usize,
    },
    /// The directory the file would be in does not exist (or is not a directory).
    #[error("cannot write: directory {} does not exist", .dir.display())]
    NoDirectory {
        /// The directory.
        dir: PathBuf,
    },
}

/// Longest file name (one path component) most filesystems accept, in bytes (Linux `NAME_MAX`).
pub const MAX_FILE_NAME: usize = 255;

/// The checks every output path passes before anything is written ([`write_atomic`], [`Receipt::save`],
/// the `zkrv` CLI's `-o`, `--profile-json`, `--output-file`; docs/cli.md "Output paths"): not a directory
/// and not ending in `/`; if it exists, a regular file (not a symbolic link, device, FIFO or socket, which
/// the atomic rename would replace); a file name of at most [`MAX_FILE_NAME`] bytes; in an existing
/// directory. Looks at the path only (creates nothing). Errors: [`Error::OutputPath`].
pub fn check_output_path(path: &Path) -> Result<(), Error> {
    use std::os::unix::ffi::OsStrExt;
    let refuse = |reason| {
        Err(Error::OutputPath {
            path: path.to_path_buf(),
            reason,
        })
    };
    if path.file_name().is_none() || path.is_dir() {
        return refuse(OutputPathError::Directory);
    }
    if path.as_os_str().as_bytes().ends_with(b"/") {
        return refuse(OutputPathError::TrailingSlash);
    }
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let kind = m.file_type();
        if kind.is_symlink() {
            return refuse(OutputPathError::Symlink);
        }
        if !kind.is_file() {
            return refuse(OutputPathError::NotRegularFile);
        }
    }
    if let Some(name) = path.file_name() {
        if name.len() > MAX_FILE_NAME {
            return refuse(OutputPathError::NameTooLong { len: name.len() });
        }
    }
    let dir = output_dir(path);
    if !dir.is_dir() {
        return refuse(OutputPathError::NoDirectory { dir });
    }
    Ok(())
}

/// The directory an output file `path` is written in (`.` for a bare file name).
fn output_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuses, before it is opened, an input path (`what`: "ELF", "proof file", ...) that is a FIFO or a
/// socket ([`Error::NotAFile`]): opening a FIFO blocks until a writer opens it, reading one may never end.
/// A path that is this process's own stdin (`/dev/stdin`, `/proc/self/fd/0`) or another of its open file
/// descriptors (`/dev/fd/N`, `/proc/self/fd/N`: a shell's `<(command)`) is allowed: it is open already.
/// Regular files and character devices (`/dev/zero`: read through the size cap) pass; a path that does not
/// exist passes too (opening it gives the error).
pub fn check_input_path(path: &Path, what: &'static str) -> Result<(), Error> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(m) = std::fs::metadata(path) else {
        return Ok(());
    };
    let t = m.file_type();
    let kind = if t.is_fifo() {
        "FIFO (named pipe)"
    } else if t.is_socket() {
        "socket"
    } else {
        return Ok(());
    };
    let open_fd = ["/dev/stdin", "/dev/fd/", "/proc/self/fd/"]
        .iter()
        .any(|p| path.starts_with(p));
    if open_fd {
        return Ok(());
    }
    Err(Error::NotAFile {
        what,
        path: path.to_path_buf(),
        kind,
    })
}

/// Reads at most `limit` bytes of `path`: a larger or endless file (`/dev/zero`) is an error after
/// `limit + 1` bytes, not an unbounded allocation; a FIFO or socket is refused before it is opened
/// ([`check_input_path`]).
pub fn read_capped(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let io = |error| Error::Io {
        what,
        path: path.to_path_buf(),
        error,
    };
    check_input_path(path, what)?;
    let f = std::fs::File::open(path).map_err(io)?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(io(std::io::Error::other("it is a directory")));
    }
    let mut bytes = Vec::new();
    f.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(Error::TooLarge {
            what,
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(bytes)
}

/// A loaded guest program and its [`ProgramId`].
#[derive(Clone, Debug)]
pub struct Program {
    inner: zkrv_executor::Program,
    id: ProgramId,
}

impl Program {
    /// Parses and checks an ELF (docs/abi.md lists what is refused).
    pub fn from_elf(bytes: &[u8]) -> Result<Program, Error> {
        let inner = zkrv_executor::Program::from_elf(bytes)?;
        let id = ProgramId(zkrv_machine::program_commitment(&inner));
        Ok(Program { inner, id })
    }

    /// A program the executor has loaded already (its ID computed here).
    pub fn from_inner(inner: zkrv_executor::Program) -> Program {
        let id = ProgramId(zkrv_machine::program_commitment(&inner));
        Program { inner, id }
    }

    /// Reads (at most [`MAX_ELF_BYTES`]) and parses the ELF at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Program, Error> {
        Program::from_elf(&read_capped(path.as_ref(), MAX_ELF_BYTES, "ELF")?)
    }

    /// The program ID a proof's statement must carry.
    pub fn id(&self) -> ProgramId {
        self.id
    }

    /// The executor's program (segments, entry).
    pub fn inner(&self) -> &zkrv_executor::Program {
        &self.inner
    }

    /// Runs the program on `input` without proving (at most `max_cycles` instructions).
    pub fn execute(
        &self,
        input: &[u8],
        max_cycles: u64,
    ) -> Result<zkrv_executor::Execution, Error> {
        zkrv_executor::execute_keep_output(
            &self.inner,
            input,
            &zkrv_executor::ExecOptions {
                max_cycles,
                record: false,
            },
        )
        .map_err(Error::from)
    }
}

/// How [`prove`] proves.
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Zero knowledge (default `true`): the proof reveals nothing about the private input beyond the
    /// statement and the table heights. `false` gives smaller, faster proofs that leak (docs/stark.md).
    pub zk: bool,
    /// Security preset (default [`SecurityPreset::Bits100`], >= 100 bits provable; `Bits128` for 128 bits,
    /// `Dev` for fast proofs below 100 bits that [`Receipt::verify`] refuses). docs/stark.md "Security".
    pub security: SecurityPreset,
    /// Merkle and transcript hash (default [`MerkleHash::Keccak256`]; [`MerkleHash::Poseidon2`] for proofs a
    /// recursion circuit verifies, docs/stark.md §11). Recorded in the proof: a verifier reads it there.
    pub hash: MerkleHash,
    /// Prover backend (default [`Backend::Cpu`]; [`Backend::Gpu`] and [`Backend::Auto`] use the GPU only
    /// with this crate's `cuda` feature).
    pub backend: Backend,
    /// Stop with an error after this many instructions (default `zkrv_executor::DEFAULT_MAX_CYCLES`,
    /// 2^32, as `zkrv run`); at most `zkrv_machine::segment::max_run_cycles` of the segment size
    /// ([`Error::CycleLimitTooLarge`]).
    pub max_cycles: u64,
    /// CPU rows per segment (a power of two, at least the smallest table: 128 in zk mode, at most 2^26;
    /// docs/continuations.md). `None` (default): one proof for a run of at most [`MAX_PROVABLE_CYCLES`]
    /// cycles; a longer one in segments of [`default_segment_rows`]: [`DEFAULT_SEGMENT_ROWS`] (2^22) on a
    /// GPU, [`DEFAULT_CPU_SEGMENT_ROWS`] (2^20, within 16 GiB in zk mode) on the CPU. `Some(n)`: segments
    /// of `n` rows. A run that fits in one segment is the one-segment proof either way (the same bytes).
    pub segment_cycles: Option<u64>,
    /// CPU backend: segments proven at the same time (default [`default_segment_jobs`]: 2 up to 2^19 rows,
    /// else 1; each holds one segment's prover memory; no more workers than segments are started).
    /// `Some(0)` is [`Error::SegmentJobs`]. No effect on a run proven as one proof.
    pub segment_jobs: Option<usize>,
    /// GPU backend: the devices a segmented proof uses, one worker each (default 1; a one-proof run
    /// uses the first).
    pub gpus: Gpus,
    /// CPU backend memory mode (default [`LdeMode::Auto`]: recompute a round's LDE when it would not fit
    /// in a quarter of the available memory; byte-identical proofs either way).
    pub lde_mode: LdeMode,
    /// Testing only: take the zk randomness from this public seed (deterministic proofs that are NOT
    /// zero-knowledge). Default `None`: a fresh seed from the OS per proof.
    pub zk_test_seed: Option<u64>,
    /// GPU backend: cap the device-memory budget at this many bytes (default: the device's free memory,
    /// capped by `ZKRV_GPU_MEMORY` in GiB). A proof that does not fit fails before it starts.
    pub gpu_memory: Option<u64>,
    /// GPU backend: where the device keeps the LDEs of the committed rounds (default [`LdeMode::Auto`]:
    /// stored when the proof fits in the device budget, else recomputed one coset block at a time;
    /// byte-identical proofs either way; docs/gpu.md).
    pub gpu_lde: LdeMode,
    /// GPU backend: generate every main trace on the host and upload it, for one proof and for each
    /// segment (default `false`: the tables with a device fill are generated on the GPU, a segment's from
    /// its record and start state: docs/continuations.md §5a).
    pub cpu_trace: bool,
    /// Zero-knowledge runs that need more than one segment: accept that every segment boundary becomes
    /// public (the registers, pc and I/O cursors at each boundary and every memory cell written before it,
    /// which may hold the private input; docs/continuations.md "Zero knowledge"). Default `false`: such a
    /// run is refused with [`Error::PublicSegmentBoundaries`] before any segment is proven. No effect with
    /// `zk: false` or on a run proven as one proof (as the CLI's `--public-segment-boundaries`).
    pub public_segment_boundaries: bool,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions {
            zk: true,
            security: SecurityPreset::Bits100,
            hash: MerkleHash::Keccak256,
            backend: Backend::Cpu,
            max_cycles: zkrv_executor::DEFAULT_MAX_CYCLES,
            segment_cycles: None,
            segment_jobs: None,
            gpus: Gpus::default(),
            lde_mode: LdeMode::Auto,
            zk_test_seed: None,
            gpu_memory: None,
            gpu_lde: LdeMode::Auto,
            cpu_trace: false,
            public_segment_boundaries: false,
        }
    }
}

impl ProveOptions {
    /// The defaults with the prover's environment switches applied, read here once (docs/cli.md
    /// "Environment"): `ZKRV_LDE` ([`ProveOptions::lde_mode`]) and `ZKRV_GPU_LDE`
    /// ([`ProveOptions::gpu_lde`]), each `auto`, `store` or `recompute` (unset or empty: `auto`);
    /// `ZKRV_GPU_MEMORY` ([`ProveOptions::gpu_memory`], GiB, e.g. `24` or `7.5`); `ZKRV_CPU_TRACE`
    /// ([`ProveOptions::cpu_trace`]: set to anything but empty or `0`). A value a switch does not take
    /// (including one that is not UTF-8) is [`Error::Env`] naming the variable.
    pub fn from_env() -> Result<ProveOptions, Error> {
        let var = |name: &'static str| -> Option<String> {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        };
        let env_err = |var: &'static str, value: &str, expected: &'static str| Error::Env {
            var,
            value: value.to_string(),
            expected,
        };
        let lde = |name: &'static str| match std::env::var(name) {
            Err(std::env::VarError::NotPresent) => Ok(LdeMode::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(env_err(
                name,
                &v.to_string_lossy(),
                "UTF-8: `auto`, `store` or `recompute`",
            )),
            Ok(v) => LdeMode::from_name(&v)
                .ok_or_else(|| env_err(name, &v, "`auto`, `store` or `recompute`")),
        };
        let gpu_memory = match var("ZKRV_GPU_MEMORY") {
            Some(v) if !v.trim().is_empty() => Some(
                parse_gib(&v)
                    .ok_or_else(|| env_err("ZKRV_GPU_MEMORY", &v, "GiB, e.g. 24 or 7.5"))?,
            ),
            _ => None,
        };
        Ok(ProveOptions {
            lde_mode: lde("ZKRV_LDE")?,
            gpu_lde: lde("ZKRV_GPU_LDE")?,
            gpu_memory,
            cpu_trace: var("ZKRV_CPU_TRACE").is_some_and(|v| !v.is_empty() && v != "0"),
            ..ProveOptions::default()
        })
    }

    /// Checks the options that need no run, as [`prove`] does before anything else: the segment size
    /// ([`Error::SegmentSize`]: a power of two, at least the smallest table of these parameters, at most
    /// 2^26) and the job count ([`Error::SegmentJobs`]).
    pub fn validate(&self) -> Result<(), Error> {
        if let Some(rows) = self.segment_cycles {
            zkrv_machine::segment::check_segment_rows(rows, &self.stark_config())
                .map_err(|reason| Error::SegmentSize { rows, reason })?;
        }
        if self.segment_jobs == Some(0) {
            return Err(Error::SegmentJobs);
        }
        Ok(())
    }

    /// The STARK configuration these options prove with: the preset's parameters, zk or not.
    pub fn stark_config(&self) -> StarkConfig {
        StarkConfig {
            zk_seed: if self.zk { self.zk_test_seed } else { None },
            ..self.security.config(self.zk).with_hash(self.hash)
        }
    }
}

/// The proof of a [`Receipt`]: one proof of the whole run, or the run's segments.
#[allow(clippy::large_enum_variant)] // one per receipt
#[derive(Clone, Debug)]
pub enum ReceiptProof {
    /// One proof (proof file version 3).
    Single(Proof),
    /// The run's segments in order, each `segment_rows` CPU rows (proof file version 4; the segment
    /// boundaries are public: docs/continuations.md).
    Segmented {
        /// CPU rows per segment.
        segment_rows: u64,
        /// The segments' proofs, in run order.
        segments: Vec<SegmentProof>,
    },
}

/// A proven statement with its proof: what a `.zkrv` file holds.
#[derive(Clone, Debug)]
pub struct Receipt {
    /// What is proven: program ID, exit code, public output.
    pub statement: Statement,
    /// The proof of it.
    pub proof: ReceiptProof,
    /// The STARK parameters (this build's, in the proof's zk mode).
    pub config: StarkConfig,
}

/// What [`Receipt::check`] found in a valid proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Segments (1 for a one-proof receipt).
    pub segments: usize,
    /// Cycles of the run, proven: each segment's CPU table has exactly its header's count of real rows
    /// (docs/continuations.md §4). `None` for one proof: its statement does not count them.
    pub cycles: Option<u64>,
    /// What the proof bounds the cycles by: `2^h - 1` per proof, `h` its CPU table's log height, summed.
    pub cycles_at_most: u64,
}

impl Receipt {
    /// The `.zkrv` proof file bytes ([`proof_file`] layout; version 3 for one proof, 4 for segments).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        Ok(match &self.proof {
            ReceiptProof::Single(p) => proof_file::encode(&self.config, &self.statement, p)?,
            ReceiptProof::Segmented {
                segment_rows,
                segments,
            } => proof_file::encode_segmented(
                &self.config,
                &self.statement,
                *segment_rows,
                segments,
            )?,
        })
    }

    /// Parses a `.zkrv` file of either version; its STARK parameters must be one of the presets (either zk
    /// mode). Never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Receipt, Error> {
        Ok(match proof_file::decode_any(bytes)? {
            proof_file::Decoded::Single {
                statement,
                proof,
                config,
            } => Receipt {
                statement,
                proof: ReceiptProof::Single(proof),
                config,
            },
            proof_file::Decoded::Segmented {
                statement,
                segment_rows,
                segments,
                config,
            } => Receipt {
                statement,
                proof: ReceiptProof::Segmented {
                    segment_rows,
                    segments,
                },
                config,
            },
        })
    }

    /// Reads (at most [`MAX_PROOF_BYTES`]) and parses a `.zkrv` file.
    pub fn load(path: impl AsRef<Path>) -> Result<Receipt, Error> {
        Receipt::from_bytes(&read_capped(path.as_ref(), MAX_PROOF_BYTES, "proof file")?)
    }

    /// Writes the `.zkrv` file atomically (a temporary file `.zkrv.<pid>.<nonce>.tmp` beside `path`, then a
    /// rename; on any error the temporary file is removed and `path` is untouched). `path` must be a
    /// regular file or not exist ([`check_output_path`]: a symbolic link, a device, a FIFO or a path
    /// ending in `/` is an [`Error::OutputPath`], checked before the proof is encoded).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        check_output_path(path.as_ref())?;
        write_atomic(path.as_ref(), &self.to_bytes()?)
    }

    /// Checks that the receipt proves a **successful** run of `program`, as `zkrv verify` does by default:
    /// the statement's program ID is `program.id()`, the STARK proof verifies (every segment, and that they
    /// chain: `zkrv_machine::segment::verify_run`), and the proven exit code is 0. A valid proof of a run
    /// that exited with another code (the guest failed: `exit(1)`, a Rust panic's 101) is
    /// [`Error::ExitCode`]; [`Receipt::verify_any_exit`] accepts it.
    ///
    /// The proof's own parameters must give at least [`DEFAULT_MIN_SECURITY`] bits provable (as `zkrv verify`
    /// requires by default): a prover cannot pick weaker ones ([`Error::TooWeak`]). Use
    /// [`Receipt::check_with`] to set another minimum.
    pub fn verify(&self, program: &Program) -> Result<(), Error> {
        self.check(program).map(|_| ())
    }

    /// [`Receipt::verify`] without the exit-code check: the proof is valid for `program`, whatever exit code
    /// it proves (read it with [`Receipt::exit_code`]; as `zkrv verify --any-exit-code`).
    pub fn verify_any_exit(&self, program: &Program) -> Result<(), Error> {
        self.check_with(program, DEFAULT_MIN_SECURITY).map(|_| ())
    }

    /// [`Receipt::verify`] (exit code 0 required), returning what the proof states about its length
    /// ([`Verified`]).
    pub fn check(&self, program: &Program) -> Result<Verified, Error> {
        let v = self.check_with(program, DEFAULT_MIN_SECURITY)?;
        match self.statement.exit_code {
            0 => Ok(v),
            code => Err(Error::ExitCode { code }),
        }
    }

    /// The proof check under a minimum of `min_bits` bits provable (Johnson regime, BCHKS25, for the proof's
    /// own heights and batch: [`Receipt::security_bits`]), checked by the verifier itself
    /// (`zkrv_machine::verify` / `verify_run`, for every segment): [`Error::TooWeak`] below it, with the
    /// bits of the first segment below it. 0 accepts any parameters the verifier supports. Like
    /// [`Receipt::verify_any_exit`], it does **not** look at the exit code: the caller decides
    /// ([`Receipt::exit_code`]; `zkrv verify` reports a valid proof of a failed run and exits 3).
    pub fn check_with(&self, program: &Program, min_bits: u32) -> Result<Verified, Error> {
        // The verifier compares the program ID (`VerifyError::WrongProgram`, mapped below): once.
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &self.proof {
            ReceiptProof::Single(p) => {
                zkrv_machine::verify(&program.inner, &self.statement, p, &self.config, min_bits)
                    .map(|()| {
                        let log_h = p
                            .stark
                            .log_heights
                            .get(zkrv_machine::table_id::CPU)
                            .copied()
                            .unwrap_or(0);
                        Verified {
                            segments: 1,
                            cycles: None,
                            cycles_at_most: (1u64 << log_h.min(63)) - 1,
                        }
                    })
            }
            ReceiptProof::Segmented {
                segment_rows,
                segments,
            } => zkrv_machine::segment::verify_run(
                &program.inner,
                &self.statement,
                *segment_rows,
                segments,
                &self.config,
                min_bits,
            )
            .map(|s| Verified {
                segments: s.segments,
                cycles: Some(s.cycles),
                cycles_at_most: s.cycles_at_most,
            }),
        }));
        match res {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(zkrv_machine::VerifyError::WrongProgram)) => Err(Error::WrongProgram {
                proof: self.program_id(),
                program: program.id,
            }),
            Ok(Err(e)) => match e.weak_parameters() {
                Some((bits, min)) => Err(Error::TooWeak { bits, min }),
                None => Err(Error::Invalid(e)),
            },
            Err(_) => Err(Error::Internal("the verifier panicked".into())),
        }
    }

    /// log2 of the CPU table's height in a one-proof receipt (its cycles are below `2^h`); `None` for
    /// segments (their cycles are proven: [`Verified::cycles`]).
    pub fn cpu_log_height(&self) -> Option<u8> {
        match &self.proof {
            ReceiptProof::Single(p) => p
                .stark
                .log_heights
                .get(zkrv_machine::table_id::CPU)
                .copied(),
            ReceiptProof::Segmented { .. } => None,
        }
    }

    /// The program ID in the statement.
    pub fn program_id(&self) -> ProgramId {
        ProgramId(self.statement.program)
    }

    /// The proven exit code (low 32 bits of a0 at `exit`); 0 for a run that succeeded by convention, 101 for
    /// a Rust guest's panic.
    pub fn exit_code(&self) -> u32 {
        self.statement.exit_code
    }

    /// The proven public output (the bytes the guest wrote to fd 1).
    pub fn output(&self) -> &[u8] {
        &self.statement.output
    }

    /// A reader of the proven public output as values, in the order the guest wrote them: typed frames
    /// (`zkrv_guest::commit`) with [`io::OutputReader::read`], fixed-width integers and byte strings with
    /// its `read_*` methods ([`io`], docs/abi.md "Typed I/O").
    pub fn output_reader(&self) -> io::OutputReader<'_> {
        io::OutputReader::new(&self.statement.output)
    }

    /// The proven public output as one typed value: a single frame (`zkrv_guest::commit(&v)` called once)
    /// and nothing after it. Errors ([`io::DecodeError`]): the output is shorter than its frame, the frame
    /// does not decode as a `T` or leaves bytes unread, or bytes follow it. A guest that commits several
    /// values: [`Receipt::output_reader`], or commit one tuple.
    pub fn output_value<T: serde::de::DeserializeOwned>(&self) -> Result<T, io::DecodeError> {
        let mut r = self.output_reader();
        let v = r.read()?;
        r.finish()?;
        Ok(v)
    }

    /// Whether the proof is zero-knowledge (the mode; a `zk_test_seed` proof is in zk mode too). A
    /// segmented proof is zero-knowledge only within each segment: its boundaries are public, including
    /// the value of every memory cell written before a boundary (which may hold the private input) and
    /// the registers there (docs/continuations.md, "Zero knowledge").
    pub fn is_zk(&self) -> bool {
        self.config.zk
    }

    /// Segments in the proof (1 for one proof).
    pub fn segments(&self) -> usize {
        match &self.proof {
            ReceiptProof::Single(_) => 1,
            ReceiptProof::Segmented { segments, .. } => segments.len(),
        }
    }

    /// The security report of this proof's own parameters, for its table heights and DEEP batch size
    /// (`zkrv_machine::proof_security`, docs/stark.md "Security"); of the weakest segment (fewest bits
    /// provable) for a segmented proof. `program` is the program the proof is about (its tables' shapes).
    /// Errors (never panics) on a proof whose shape does not fit the machine.
    pub fn security_report(&self, program: &Program) -> Result<SecurityReport, Error> {
        match &self.proof {
            ReceiptProof::Single(p) => Ok(zkrv_machine::proof_security(
                &program.inner,
                p,
                &self.config,
            )?),
            ReceiptProof::Segmented { segments, .. } => {
                let mut weakest: Option<SecurityReport> = None;
                for s in segments {
                    let r =
                        zkrv_machine::segment::segment_security(s, &self.config).map_err(|e| {
                            Error::Machine(zkrv_machine::MachineError::Segment {
                                index: s.header.index as usize,
                                count: segments.len(),
                                source: Box::new(e),
                            })
                        })?;
                    if weakest
                        .as_ref()
                        .is_none_or(|w| r.provable_bits() < w.provable_bits())
                    {
                        weakest = Some(r);
                    }
                }
                weakest.ok_or_else(|| Error::Internal("a segmented proof without segments".into()))
            }
        }
    }

    /// Bits of security this proof's own parameters give, provable in the Johnson regime (BCHKS25 bounds)
    /// ([`Receipt::security_report`]).
    pub fn security_bits(&self, program: &Program) -> Result<u32, Error> {
        Ok(self.security_report(program)?.provable_bits())
    }
}

/// The bits of provable security [`Receipt::verify`] requires by default (the default of `zkrv verify
/// --min-security`).
pub const DEFAULT_MIN_SECURITY: u32 = 100;

/// Temporary files of [`write_atomic`] being written now. An application that handles SIGINT/SIGTERM
/// (as `zkrv prove` does) removes them before it exits, so that a signal leaves no partial file.
pub fn temp_files_in_progress() -> Vec<PathBuf> {
    TEMP_FILES.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

static TEMP_FILES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Testing only: `ZKRV_TEST_WRITE_PAUSE_MS=N` sleeps N ms (at most 60 s) in the middle of writing the
/// temporary file, so that a test can signal the process while the file exists.
fn test_write_pause() {
    if let Some(ms) = std::env::var("ZKRV_TEST_WRITE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms.min(60_000)));
    }
}

/// Writes `bytes` to `path` atomically: a temporary file `.zkrv.<pid>.<nonce>.tmp` in the same directory
/// (listed by [`temp_files_in_progress`] while it exists), fsync, rename, fsync of the directory (best
/// effort). A path [`check_output_path`] refuses (a directory, a trailing `/`, a symbolic link, a device,
/// FIFO or socket, ...) is an [`Error::OutputPath`] before anything is written. On any error (e.g. `EFBIG`
/// past `ulimit -f`, `ENOSPC`) the temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    let err = |error| Error::Io {
        what: "writing",
        path: path.to_path_buf(),
        error,
    };
    check_output_path(path)?;
    let dir = output_dir(path);
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // The temporary name does not grow with the final one (a name near the 255-byte limit must still work).
    let tmp = dir.join(format!(".zkrv.{}.{nonce}.tmp", std::process::id()));
    // Registered before it exists, so that a signal at any point after the creation finds it.
    TEMP_FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(tmp.clone());
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let (head, tail) = bytes.split_at(bytes.len() / 2);
        f.write_all(head)?;
        test_write_pause();
        f.write_all(tail)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        // Make the rename durable (best effort: some filesystems refuse fsync on directories).
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    TEMP_FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|t| t != &tmp);
    res.map_err(err)
}
