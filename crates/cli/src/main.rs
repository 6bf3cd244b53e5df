//! The `zkrv` command-line tool (usage: docs/cli.md).
//!
//! * `zkrv run prog.elf [--input FILE] [--max-cycles N]` executes a guest: the public output goes to stdout
//!   (raw bytes), the guest's fd-2 debug text and a summary (exit code, cycles, speed) to stderr. Exit status:
//!   the guest's exit code on a clean exit, 255 for a code above 255 (never 0 for a non-zero code).
//! * `zkrv prove prog.elf [--input FILE] -o proof.zkrv [--max-cycles N] [--backend auto|cpu|gpu] [--stats]
//!   [--profile] [--profile-json FILE]` proves a run and writes the proof file atomically ([`proof_file`]
//!   layout). The destinations are checked (distinct from each other, the ELF and the input; writable files)
//!   before proving.
//!   Progress and stage times on stderr, the statement and figures on stdout. Exit status 0.
//! * `zkrv verify proof.zkrv prog.elf [--any-exit-code] [--json] [--output-file F] [--expect-output F]`
//!   prints the statement and exits 0, exits 1 with the reason the proof is rejected, or 3 when the proof is
//!   valid but its exit code is not 0 (without `--any-exit-code`) or its output is not `--expect-output`.
//! * `zkrv program-id prog.elf` prints the program ID; `zkrv new NAME --lang c|rust` creates a guest
//!   project ([`new`]).
//!
//! Exit status 2: a host error (unreadable file, bad ELF, execution or proving error, no GPU for
//! `--backend gpu`). A stdout pipe whose reader has gone (`| head -1`) ends zkrv by SIGPIPE, quietly, as
//! Unix tools do (docs/cli.md, "Closed stdout"). A standard descriptor that is closed when zkrv starts
//! (`>&-`, `2>&-`, `<&-` where stdin is read) is an error, exit 2, before anything runs ([`closed_stdio`]).

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use zkrv_sdk::{
    Backend, Note, Plan, Profile, Program, ProveOptions, Proved, ReceiptProof, SecurityPreset,
    SecurityReport, StarkConfig, Statement, TransferStats, DEFAULT_MAX_CYCLES, MAX_ELF_BYTES,
    MAX_PROVABLE_CYCLES,
};

/// Exit status for errors of the host (bad arguments, files, ELF, execution or proving errors).
const HOST_ERROR: u8 = 2;
/// Exit status of `verify` when the proof is rejected.
const REJECTED: u8 = 1;
/// Exit status of `verify` when the proof is valid but its proven exit code is not 0 (and no
/// `--any-exit-code`).
const NONZERO_EXIT: u8 = 3;
/// Largest `--input` file accepted (1 GiB; files are read through a cap, so `/dev/zero` errors out).
const MAX_INPUT_BYTES: u64 = 1 << 30;
/// Largest proof file `verify` reads (1 GiB).
const MAX_PROOF_BYTES: u64 = 1 << 30;
/// A CPU proof estimated above this many seconds (1 hour) needs `--yes`.
const DEFAULT_CONFIRM_ABOVE_SECS: f64 = 3600.0;
/// A CPU proof estimated (at the reference machine's rate) above this many seconds, or above
/// `--confirm-above-secs`, has this machine measured first (`zkrv_sdk::estimate::calibrate`).
const CALIBRATE_ABOVE_SECS: f64 = 60.0;
/// The basis of the estimate line of a run below [`CALIBRATE_ABOVE_SECS`] at the reference rate.
const UNCALIBRATED: &str = "not measured on this machine: runs under a minute at the reference \
                            machine's rate are not calibrated";

#[derive(Parser)]
#[command(
    name = "zkrv",
    version,
    about = "zkrv: a zero-knowledge VM for RISC-V RV64IM"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    /// The GPU if one is usable, else the CPU.
    Auto,
    Cpu,
    /// The GPU; an error if none is usable.
    Gpu,
}

#[derive(Subcommand)]
enum Command {
    /// Execute a guest ELF (no proof): public output to stdout, summary to stderr.
    Run {
        /// The guest program (RV64IM ELF, see docs/abi.md).
        elf: PathBuf,
        /// File whose bytes are the private input (read with syscall 63); `-` reads stdin. Default: empty.
        #[arg(long)]
        input: Option<PathBuf>,
        /// Stop with an error after this many instructions.
        #[arg(long, default_value_t = DEFAULT_MAX_CYCLES)]
        max_cycles: u64,
    },
    /// Prove a run of a guest ELF and write the proof file.
    #[command(
        after_long_help = "Environment: ZKRV_LDE=auto|store|recompute (CPU backend memory mode: \
        `recompute` keeps only coefficients and Merkle digests, about 2.5x less peak memory, byte-identical \
        proofs; `auto`, the default, recomputes a round whose LDE would exceed a quarter of the available \
        memory). ZKRV_GPU_LDE=auto|store|recompute: the GPU backend's. ZKRV_GPU_MEMORY=GIB: caps the GPU \
        budget (as --gpu-memory). ZKRV_CPU_TRACE=1: GPU backend, host trace generation (as --cpu-trace). \
        Read once before anything runs; a bad value is an error. See docs/cli.md \"Environment\"."
    )]
    Prove(ProveArgs),
    /// Verify a proof file against a guest ELF; prints the public output and exit code.
    Verify(VerifyArgs),
    /// Print the program ID of a guest ELF (64 hex digits): the commitment a proof's statement carries.
    ProgramId {
        /// The guest program (RV64IM ELF).
        elf: PathBuf,
    },
    /// Create a new guest project (a directory NAME) that builds with one command (see its README.md).
    New {
        /// Directory to create (its last component names the guest).
        name: PathBuf,
        /// Language of the guest.
        #[arg(long, value_enum, default_value_t = new::Lang::C)]
        lang: new::Lang,
    },
    /// Print the round-by-round soundness table of a preset (docs/stark.md "Security"), every table at the
    /// given height (the worst case of proofs up to that height).
    Security {
        /// The preset: 100, 100-fast, 128 or dev.
        #[arg(long, value_name = "LEVEL", default_value = "100", value_parser = parse_preset)]
        security: SecurityPreset,
        /// Without zero knowledge.
        #[arg(long)]
        no_zk: bool,
        /// log2 of the table height (default and maximum: the largest the prover supports).
        #[arg(long, value_name = "LOG2", value_parser = parse_log_height)]
        log_height: Option<usize>,
    },
}

#[derive(clap::Args)]
struct VerifyArgs {
    /// The proof file (from `zkrv prove`).
    proof: PathBuf,
    /// The guest program the proof claims to be about.
    elf: PathBuf,
    /// Accept a proof whatever its proven exit code (by default a valid proof of a run that exited with
    /// a code other than 0 makes `verify` exit with status 3).
    #[arg(long)]
    any_exit_code: bool,
    /// Print the verdict and the whole statement as one JSON object on stdout (docs/cli.md).
    #[arg(long)]
    json: bool,
    /// Write the proven public output (raw bytes) to FILE when the proof is valid.
    #[arg(long, value_name = "FILE")]
    output_file: Option<PathBuf>,
    /// Exit with status 3 unless the proven public output equals the bytes of FILE.
    #[arg(long, value_name = "FILE")]
    expect_output: Option<PathBuf>,
    /// Refuse a proof whose own parameters give fewer bits provable than this (Johnson regime).
    #[arg(long, value_name = "BITS", default_value_t = 100)]
    min_security: u32,
}

fn parse_hash(s: &str) -> Result<zkrv_sdk::MerkleHash, String> {
    zkrv_sdk::MerkleHash::from_name(s)
        .ok_or_else(|| format!("unknown hash `{s}` (use keccak or poseidon2)"))
}

fn parse_preset(s: &str) -> Result<SecurityPreset, String> {
    SecurityPreset::from_name(s)
        .ok_or_else(|| format!("unknown security level `{s}` (use 100, 100-fast, 128 or dev)"))
}

fn parse_log_height(s: &str) -> Result<usize, String> {
    let max = zkrv_sdk::security::MAX_LOG_HEIGHT;
    match s.parse::<usize>() {
        Ok(h) if (1..=max).contains(&h) => Ok(h),
        _ => Err(format!("`{s}` is not a log2 height in 1..={max}")),
    }
}

/// Reads at most `limit` bytes of `path` (`what` names it in errors): a larger or endless file (e.g.
/// `/dev/zero`) is an error after reading `limit + 1` bytes, not an unbounded allocation; a FIFO or a
/// socket is refused before it is opened (`zkrv_sdk::check_input_path`: opening a FIFO waits for a writer).
fn read_capped(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>> {
    use std::io::Read;
    let ctx = || format!("reading {what} {}", path.display());
    if !is_stdin_itself(path) {
        zkrv_sdk::check_input_path(path, what).map_err(|e| {
            let stdin = if what == "input" {
                ", or pipe it to stdin with `--input -` (e.g. `cat FIFO | zkrv run ... --input -`)"
            } else {
                ""
            };
            anyhow!("{e}; give a regular file{stdin}")
        })?;
    }
    let f = std::fs::File::open(path).with_context(ctx)?;
    if let Ok(m) = f.metadata() {
        if m.is_dir() {
            bail!("reading {what} {}: it is a directory", path.display());
        }
        if m.is_file() && m.len() > limit {
            bail!(
                "{what} {} is {} bytes, more than the limit of {limit} bytes",
                path.display(),
                m.len()
            );
        }
    }
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(ctx)?;
    if bytes.len() as u64 > limit {
        bail!(
            "{what} {} is larger than the limit of {limit} bytes",
            path.display()
        );
    }
    Ok(bytes)
}

/// `-` means stdin only for `--input`: refused (with `hint`) for the other paths, rather than read from or
/// written to a file named `-`.
fn refuse_dash(p: &Path, what: &str, hint: &str) -> Result<()> {
    if is_stdin(p) {
        bail!("{what} `-`: `-` means stdin only for --input; {hint}");
    }
    Ok(())
}

fn load_program(elf: &Path) -> Result<Program> {
    refuse_dash(
        elf,
        "the guest ELF",
        "give the ELF's path (/dev/stdin reads it from stdin)",
    )?;
    let bytes = read_capped(elf, MAX_ELF_BYTES, "ELF")?;
    if bytes.starts_with(&zkrv_sdk::proof_file::MAGIC) {
        bail!(
            "loading {}: not an ELF file: it is a zkrv proof file (give the guest's ELF here; \
             `zkrv verify PROOF ELF` takes the proof first)",
            elf.display()
        );
    }
    Program::from_elf(&bytes).map_err(|e| {
        let context = format!("loading {}", elf.display());
        match e {
            zkrv_sdk::Error::Elf(e) => anyhow::Error::new(e).context(context),
            e => anyhow::Error::new(e).context(context),
        }
    })
}

/// Whether `--input` names stdin (`-`).
fn is_stdin(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Whether `p` is the very file (pipe, terminal, file) on stdin, e.g. `/dev/stdin`.
fn is_stdin_itself(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(p), std::fs::metadata("/dev/stdin")) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The private input: the `--input` file, stdin for `-` (through the same cap), or empty. Without
/// `--input -`, a note on stderr says so when stdin is a file or a pipe (`zkrv run prog < input`).
fn read_input(input: Option<&Path>) -> Result<Vec<u8>> {
    use std::io::Read;
    match input {
        Some(p) if is_stdin(p) => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .take(MAX_INPUT_BYTES + 1)
                .read_to_end(&mut bytes)
                .context("reading the input from stdin")?;
            if bytes.len() as u64 > MAX_INPUT_BYTES {
                bail!("the input on stdin is larger than the limit of {MAX_INPUT_BYTES} bytes");
            }
            Ok(bytes)
        }
        other => {
            // `--input /dev/stdin` (or `/proc/self/fd/0`) reads stdin through the file: no note.
            let reads_stdin = other.is_some_and(is_stdin_itself);
            if stdin_has_data() && !reads_stdin {
                eprintln!(
                    "zkrv: note: stdin is ignored; the private input is {} (use `--input -` to read stdin)",
                    match other {
                        Some(p) => format!("the file {}", p.display()),
                        None => "empty".to_string(),
                    }
                );
            }
            match other {
                Some(p) => read_capped(p, MAX_INPUT_BYTES, "input"),
                None => Ok(Vec::new()),
            }
        }
    }
}

/// Whether stdin is redirected from a regular file or a pipe (not a terminal, not `/dev/null`).
fn stdin_has_data() -> bool {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata("/dev/stdin") {
        Ok(m) => {
            let t = m.file_type();
            (t.is_file() && m.len() > 0) || t.is_fifo() || t.is_socket()
        }
        Err(_) => false,
    }
}

/// Instructions per second for humans: "-" when the time is too short to measure, more digits when small.
fn per_sec(n: u64, secs: f64) -> String {
    if secs <= 0.0 || n == 0 {
        return "-".into();
    }
    let r = n as f64 / secs;
    if r >= 100.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.2}")
    }
}

/// The error of a failed guest run (`run`, `prove`), with the cycles it ran; the cycle limit's also names
/// the flag that raises it.
fn exec_error(elf: &Path, error: &zkrv_sdk::ExecError, cycles: u64) -> anyhow::Error {
    let hint = match error {
        zkrv_sdk::ExecError::CycleLimit { .. } => "; raise it with --max-cycles",
        _ => "",
    };
    anyhow!(
        "executing {} (after {cycles} cycles): {error}{hint}",
        elf.display(),
    )
}

fn run(elf: PathBuf, input: Option<PathBuf>, max_cycles: u64) -> Result<u8> {
    let program = load_program(&elf)?;
    let input = read_input(input.as_deref())?;
    let t = Instant::now();
    let result = program.execute(&input, max_cycles);
    let secs = t.elapsed().as_secs_f64();
    let exec = match result {
        Ok(e) => e,
        Err(zkrv_sdk::Error::Exec {
            error,
            cycles,
            debug_output,
            public_output,
        }) => {
            // Show what the guest produced before the error (its fd-2 text often explains it).
            let _ = std::io::stdout().write_all(&public_output);
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().write_all(&debug_output);
            return Err(exec_error(&elf, &error, cycles));
        }
        Err(e) => return Err(e.into()),
    };
    std::io::stdout()
        .write_all(&exec.public_output)
        .context("writing stdout")?;
    std::io::stdout().flush().context("writing stdout")?;
    let mut err = std::io::stderr();
    let _ = err.write_all(&exec.debug_output);
    let _ = writeln!(
        err,
        "exit code {} after {} cycles in {:.3} s ({} instructions/s)",
        exec.exit_code,
        exec.cycles,
        secs,
        per_sec(exec.cycles, secs)
    );
    let status = run_exit_status(exec.exit_code);
    if u32::from(status) != exec.exit_code {
        let _ = writeln!(
            err,
            "zkrv: the guest's exit code {} does not fit a process exit status (0-255): exiting with {status}",
            exec.exit_code
        );
    }
    Ok(status)
}

/// `zkrv run`'s exit status for the guest's exit code (u32): the code itself up to 255, else 255, so that
/// a non-zero code is never a success (the low 8 bits of 256 would be 0). The full code is on stderr.
fn run_exit_status(code: u32) -> u8 {
    u8::try_from(code).unwrap_or(u8::MAX)
}

// ---------------------------------------------------------------------------------------------------------
// Errors and panics

/// Ends the process as Unix tools do by default when the reader of their stdout has gone away
/// (`zkrv verify proof.zkrv prog.elf | head -1`): killed by SIGPIPE (a shell shows status 141), without a
/// message. Rust ignores SIGPIPE, so a write to the closed pipe fails with EPIPE (errno 32) instead; this
/// restores the default action and raises the signal. Whatever the command had done before (a proof file
/// written, a proof verified) is done; only the rest of its output is lost.
fn die_of_closed_stdout() -> ! {
    use signal_hook::consts::SIGPIPE;
    let _ = signal_hook::low_level::emulate_default_handler(SIGPIPE);
    std::process::exit(128 + SIGPIPE)
}

/// Whether `e` is a write to stdout that failed because its reader is gone (EPIPE): `run`'s output.
fn is_closed_stdout(e: &anyhow::Error) -> bool {
    e.to_string().starts_with("writing stdout")
        && e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        })
}

/// Runs `f`, turning a panic (e.g. a device failure inside a backend method that cannot return an error)
/// into an error.
fn no_panic<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            // `println!` panics when stdout is closed or full (`| head`, `> /dev/full`): that is an output
            // error, not a prover failure (a proof file is complete by the time the summary is printed).
            if let Some(io) = msg.strip_prefix("failed printing to stdout: ") {
                if io.contains("(os error 32)") {
                    die_of_closed_stdout();
                }
                return Err(anyhow!("writing stdout: {io}"));
            }
            Err(anyhow!("{what} failed: {msg}"))
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Progress

/// The stages of `zkrv prove`, in order (the progress shows `[k/n]`): the SDK's ([`zkrv_sdk::STAGES`]),
/// then the CLI's own two (the proof file's bytes, then the file).
const PROVE_STAGES: [&str; 5] = ["execute", "trace generation", "prove", "serialize", "write"];

/// What `zkrv prove` shows while proving ([`zkrv_sdk::ProveObserver`]): a spinner per stage on stderr
/// when it is a terminal (plain lines when it is not: the prover's sub-stages as they start), a time line
/// per stage, the notes and the estimate (which refuses a long CPU proof without `--yes`), one line per
/// segment.
struct Progress {
    bar: ProgressBar,
    tty: bool,
    /// The command's arguments (the notes name its flags).
    args: ProveArgs,
    /// When proving started (the one-proof path's execute stage, or the first segment): the `total`
    /// and the remaining time of segments count from it.
    started: std::sync::Mutex<Instant>,
}

impl Progress {
    fn new(args: ProveArgs) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = if tty {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {prefix:<18} {elapsed:>4} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(100));
            b
        } else {
            ProgressBar::hidden()
        };
        Progress {
            bar,
            tty,
            args,
            started: std::sync::Mutex::new(Instant::now()),
        }
    }

    fn line(&self, s: &str) {
        if self.tty {
            self.bar.println(s);
        } else {
            eprintln!("{s}");
        }
    }

    fn started(&self) -> Instant {
        *self.started.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn restart(&self) {
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// `[k/n] name`, `name` one of [`PROVE_STAGES`].
    fn label(name: &str) -> String {
        let k = PROVE_STAGES
            .iter()
            .position(|s| *s == name)
            .map_or(0, |i| i + 1);
        format!("[{k}/{}] {name}", PROVE_STAGES.len())
    }

    /// Runs one of the CLI's own stages (serialize, write) as the SDK runs its: spinner, time line; its
    /// seconds are added to `profile`.
    fn stage<T>(&self, name: &str, profile: &mut zkrv_sdk::Profile, f: impl FnOnce() -> T) -> T {
        use zkrv_sdk::ProveObserver;
        self.stage_started(name);
        let t = Instant::now();
        let v = f();
        let secs = t.elapsed().as_secs_f64();
        self.stage_finished(name, secs);
        profile.add(name, secs);
        v
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl zkrv_sdk::ProveObserver for Progress {
    fn stage_started(&self, stage: &str) {
        self.bar.set_prefix(Self::label(stage));
        self.bar.set_message("");
        self.bar.reset_elapsed();
    }

    fn stage_finished(&self, stage: &str, secs: f64) {
        self.line(&format!("  {:<24} {secs:>9.3} s", Self::label(stage)));
    }

    fn substage(&self, path: &str) {
        if let Some((_, inner)) = path.split_once('/') {
            if self.tty {
                self.bar.set_message(inner.to_string());
            } else if !inner.contains('/') {
                // Plain lines for logs and CI: the prover's top-level sub-stages as they start.
                eprintln!("        {inner} ...");
            }
        }
    }

    /// Copies the guest's fd-2 text to stderr (above the bar).
    fn guest_stderr(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.bar.suspend(|| {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(bytes);
            if !bytes.ends_with(b"\n") {
                let _ = err.write_all(b"\n");
            }
        });
    }

    fn note(&self, note: &Note<'_>) {
        let a = &self.args;
        match *note {
            Note::GpuFallback { reason } => {
                self.line(&format!("zkrv: no usable GPU ({reason}); proving on the CPU"))
            }
            Note::FitsOneSegment { rows } => {
                for n in one_proof_notes(a, &format!("the run fits in one segment of {rows} rows")) {
                    self.line(&n);
                }
            }
            Note::ProvingOne { engine } => {
                let config = a.security.config(!a.no_zk).with_hash(a.hash);
                self.line(&format!(
                    "proving {} on {engine} ({}: blowup 2^{}, {} queries, {}, {} hash)",
                    a.elf.display(),
                    a.security,
                    config.fri.log_blowup,
                    config.fri.num_queries,
                    zk_mode(config.zk && a.zk_test_seed.is_none()),
                    config.hash.name()
                ));
                self.restart();
            }
            Note::FitsOneProof { cycles } => {
                let why = format!(
                    "the run ({cycles} cycles) fits in one proof (at most 2^26 - 1 cycles without \
                     --segment-cycles)"
                );
                for n in one_proof_notes(a, &why) {
                    self.line(&n);
                }
            }
            Note::TooLongForOneProof { rows, gpu } => self.line(&format!(
                "zkrv: the run is longer than one proof holds (2^26 - 1 = {MAX_PROVABLE_CYCLES} cycles): \
                 proving it in segments of {rows} rows (the {} backend's default; --segment-cycles \
                 chooses the size; docs/continuations.md)",
                if gpu { "GPU" } else { "CPU" }
            )),
            Note::ExitCode { code } => self.line(&format!(
                "zkrv: warning: the guest exited with code {code} (not 0); the proof will say so, and \
                 `zkrv verify` refuses it unless given --any-exit-code"
            )),
            Note::ProvingSegments(plan) => self.proving_segments(plan),
            _ => {}
        }
    }

    fn check_plan(&self, plan: &Plan) -> std::result::Result<(), String> {
        let line = estimate_gate(&self.args, plan)?;
        self.line(&line);
        if !plan.gpu {
            for n in gpu_only_notes(&self.args) {
                self.line(&n);
            }
        }
        Ok(())
    }

    fn segment_done(&self, d: &zkrv_sdk::SegmentDone) {
        if self.tty {
            self.bar
                .set_prefix(format!("segments {}/{}", d.done, d.count));
        }
        // Remaining time at the mean rate so far (segments are of one size; the last is shorter).
        let eta = if d.done < d.count && d.done > 0 {
            let left =
                self.started().elapsed().as_secs_f64() / d.done as f64 * (d.count - d.done) as f64;
            format!(", about {left:.0} s left")
        } else {
            String::new()
        };
        self.line(&format!(
            "  segment {:>4} of {} (worker {}): witness {:.3} s, prove {:.3} s  [{}/{} done{eta}]",
            d.index, d.count, d.worker, d.witness_secs, d.prove_secs, d.done, d.count
        ));
    }
}

impl Progress {
    /// The lines before the segments of a segmented proof: where they are proven, the zero-knowledge
    /// warning, the notes for the options that do not apply.
    fn proving_segments(&self, plan: &Plan) {
        let a = &self.args;
        let Some(seg) = plan.segments else {
            return;
        };
        let n = seg.count;
        let on = if plan.gpu {
            format!(
                "{} GPU(s) ({}), one segment at a time each, traces generated on the {}",
                plan.devices,
                plan.engine,
                if a.cpu_trace { "host" } else { "device" }
            )
        } else {
            format!("cpu, {} at a time", seg.jobs)
        };
        self.line(&format!(
            "proving {} in {n} segments of {} rows ({} cycles) on {on} ({}, {} hash); segment \
             boundaries (registers, pc, cursors, written memory) are public",
            a.elf.display(),
            seg.rows,
            plan.cycles,
            zk_mode(plan.config.zk && a.zk_test_seed.is_none()),
            plan.config.hash.name()
        ));
        if plan.config.zk {
            self.line(SEGMENTED_ZK_WARNING);
        }
        if a.cpu_trace && plan.gpu {
            self.line("zkrv: note: --cpu-trace: the segments' traces are generated on the host and uploaded");
        }
        if plan.gpu && a.segment_jobs.is_some() {
            self.line("zkrv: note: --segment-jobs is for the CPU backend; on the GPU each device of --gpus proves one segment at a time");
        } else if let Some(k) = a.segment_jobs.filter(|&k| k > n) {
            self.line(&format!(
                "zkrv: note: --segment-jobs {k}: the run has {n} segments, proving {n} at a time"
            ));
        }
        if !plan.gpu && a.gpus != zkrv_sdk::Gpus::Count(1) {
            self.line("zkrv: note: --gpus is for the GPU backend; the CPU proves --segment-jobs segments at a time");
        }
        self.bar.set_prefix(format!("segments 0/{n}"));
        self.restart();
    }
}

// ---------------------------------------------------------------------------------------------------------
// prove

/// Peak resident set of this process (`VmHWM` of /proc/self/status), bytes.
fn peak_host_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Installs handlers for SIGINT, SIGTERM and SIGHUP (remove the temporary files of
/// `zkrv_sdk::write_atomic` being written, then die of the signal as the default action would) and
/// SIGXFSZ (ignored, so that exceeding `ulimit -f` is a write error, `EFBIG`, which `write_atomic` cleans
/// up, instead of killing the process).
fn remove_temp_files_on_signals() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGXFSZ])
        .context("installing signal handlers")?;
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if sig == SIGXFSZ {
                continue;
            }
            for f in zkrv_sdk::temp_files_in_progress() {
                let _ = std::fs::remove_file(f);
            }
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    });
    Ok(())
}

/// [`zkrv_sdk::write_atomic`] (temporary file, fsync, rename; nothing left on error).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(zkrv_sdk::write_atomic(path, bytes)?)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The public output for humans: hex (first 64 bytes), plus the text if it is printable UTF-8.
fn show_output(out: &[u8]) -> String {
    let mut s = format!("{} bytes", out.len());
    if out.is_empty() {
        return s;
    }
    let shown = &out[..out.len().min(64)];
    s += &format!(
        ": {}{}",
        hex(shown),
        if out.len() > 64 { "..." } else { "" }
    );
    if let Ok(t) = std::str::from_utf8(out) {
        if t.chars().all(|c| !c.is_control() || c == '\n' || c == '\t') {
            s += &format!(" ({t:?})");
        }
    }
    s
}

fn print_statement(s: &Statement) {
    println!("program ID          {}", hex(&s.program));
    println!("exit code           {}", s.exit_code);
    println!("public output       {}", show_output(&s.output));
}

/// `--stats`: each main table resident (filled on the GPU) or uploaded, with its main-trace host->device bytes,
/// and the totals.
/// The host->device bytes of table `name` at the main commitment.
fn commit_h2d(s: &TransferStats, name: &str) -> u64 {
    s.bytes
        .get(&("commit".to_string(), name.to_string()))
        .map_or(0, |b| b.h2d)
}

/// The main traces' host->device bytes at the commitment (0 when every table is built on the device).
fn main_trace_h2d(s: &TransferStats) -> u64 {
    zkrv_sdk::TABLE_NAMES
        .iter()
        .map(|name| commit_h2d(s, name))
        .sum()
}

fn print_trace_origins(s: &TransferStats, report: Option<&str>) {
    println!("\nmain traces (host->device bytes at the main commitment):");
    let (mut main_h2d, mut resident) = (0u64, 0usize);
    for name in zkrv_sdk::TABLE_NAMES {
        let h2d = commit_h2d(s, name);
        let origin = match s.origin.get(name) {
            Some(zkrv_sdk::TraceOrigin::Resident) => {
                resident += 1;
                "resident"
            }
            Some(zkrv_sdk::TraceOrigin::Uploaded) => "uploaded",
            None => "?",
        };
        main_h2d += h2d;
        println!("  {name:<9} {origin:<9} {h2d:>14}");
    }
    let inputs = s.stage("trace-gen").h2d;
    println!(
        "main-trace host->device {main_h2d} bytes ({resident} of {} tables resident); trace-gen inputs host->device {inputs} bytes",
        zkrv_sdk::TABLE_NAMES.len()
    );
    if let Some(r) = report {
        println!("\ntrace generation:\n{r}");
    }
}

/// `--stats`: the host<->device transfers (GPU), per table and stage, and the totals.
fn print_stats(transfers: Option<&TransferStats>, report: Option<&str>) {
    match transfers {
        Some(s) => {
            println!("\nhost<->device transfers (bytes):");
            print!("{s}");
            print_trace_origins(s, report);
            let mut stages: Vec<&str> = s.bytes.keys().map(|(st, _)| st.as_str()).collect();
            stages.dedup();
            for st in stages {
                let b = s.stage(st);
                println!("stage {st}: {} host->device, {} device->host", b.h2d, b.d2h);
            }
            println!(
                "total: {} host->device, {} device->host",
                s.total_h2d(),
                s.total_d2h()
            );
        }
        None => println!("\n--stats: CPU backend, no host<->device transfers"),
    }
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

#[derive(Clone, clap::Args)]
struct ProveArgs {
    /// The guest program (RV64IM ELF).
    elf: PathBuf,
    /// File whose bytes are the private input; `-` reads stdin. Default: empty.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Where to write the proof (written atomically: the whole file or nothing).
    #[arg(short, long)]
    output: PathBuf,
    /// Stop with an error after this many instructions (as `zkrv run`). A run longer than one proof
    /// holds (2^26 - 1 cycles) is proven in segments (--segment-cycles).
    #[arg(long, default_value_t = DEFAULT_MAX_CYCLES)]
    max_cycles: u64,
    /// Prove the run in segments of N CPU rows, not cycles (a power of two, at least the smallest
    /// table: 128 in zk mode, at most 2^26), each holding at most N - 1 cycles (a row is the padding
    /// row), chained in one proof file
    /// (docs/continuations.md). A run that fits in one segment gives the one-segment proof. Default:
    /// one proof for a run of at most 2^26 - 1 cycles; a longer one in segments of 4194304 (2^22) rows
    /// on a GPU, 1048576 (2^20) on the CPU (a zk segment within 16 GiB of host memory).
    #[arg(long, value_name = "N")]
    segment_cycles: Option<u64>,
    /// CPU backend, segmented runs: segments proven at the same time (at least 1, at most the segment
    /// count; default: 2 up to 2^19 rows, else 1; each holds one segment's prover memory). A run proven
    /// as one proof ignores it (with a note).
    #[arg(long, value_name = "K", value_parser = parse_segment_jobs)]
    segment_jobs: Option<usize>,
    /// GPU backend, segmented runs: the devices to prove on, one segment at a time each (a number, or
    /// `all`; default 1). A run proven as one proof uses the first.
    #[arg(long, value_name = "N|all", default_value = "1")]
    gpus: zkrv_sdk::Gpus,
    /// Prover backend.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print the host<->device transfer statistics (GPU backend): each table resident or uploaded, its
    /// main-trace host->device bytes, and the totals.
    #[arg(long)]
    stats: bool,
    /// GPU backend: generate every trace on the host and upload it (as `ZKRV_CPU_TRACE=1`); by default
    /// the tables with a device fill are generated on the GPU.
    #[arg(long)]
    cpu_trace: bool,
    /// Print a per-stage time table, peak memory and transfer totals.
    #[arg(long)]
    profile: bool,
    /// Write the profile as JSON to this file.
    #[arg(long, value_name = "FILE")]
    profile_json: Option<PathBuf>,
    /// Prove without zero knowledge (smaller and faster proofs that reveal information about the
    /// private input; docs/stark.md "Zero knowledge"). Default: zero-knowledge proofs.
    #[arg(long)]
    no_zk: bool,
    /// Testing only: take the zk randomness from this fixed, public seed instead of the OS, so that two
    /// runs (e.g. CPU and GPU backends) give byte-identical proofs. Such proofs are NOT zero-knowledge.
    #[arg(long, value_name = "N", conflicts_with = "no_zk")]
    zk_test_seed: Option<u64>,
    /// Security preset: 100 (default) or 128 bits provable; `100-fast` (100 bits, blowup 4: ~1/3 faster
    /// proving, ~40% larger proofs); or `dev` (fast, below 100 bits; for development only). See `zkrv
    /// security` and docs/stark.md "Security".
    #[arg(long, value_name = "LEVEL", default_value = "100", value_parser = parse_preset)]
    security: SecurityPreset,
    /// Merkle and transcript hash: `keccak` (default) or `poseidon2` (for proofs a recursion circuit
    /// verifies; docs/stark.md §11). Recorded in the proof; `zkrv verify` reads it from there.
    #[arg(long, value_name = "HASH", default_value = "keccak", value_parser = parse_hash)]
    hash: zkrv_sdk::MerkleHash,
    /// Print the round-by-round soundness table of the proof (both regimes).
    #[arg(long)]
    security_report: bool,
    /// GPU backend: cap the device memory the prover may use, in GiB (also `ZKRV_GPU_MEMORY`; default:
    /// the device's free memory). A proof that does not fit stops before it starts, naming the bytes
    /// needed and available.
    #[arg(long, value_name = "GIB", value_parser = parse_gpu_memory)]
    gpu_memory: Option<u64>,
    /// Zero-knowledge runs proven in segments: accept that every segment boundary becomes public in
    /// the proof file (the registers, pc and I/O cursors at each boundary and every memory cell
    /// written before it, which may hold the private input; docs/continuations.md "Zero knowledge").
    /// Without it such a run is refused before any segment is proven. --no-zk runs and runs proven as
    /// one proof need no flag.
    #[arg(long)]
    public_segment_boundaries: bool,
    /// Prove on the CPU even when the estimate printed before proving is above 1 hour (without it
    /// such a run is refused before any proving; docs/cli.md "Estimate before proving").
    #[arg(long)]
    yes: bool,
    /// Testing: the estimate (seconds) above which a CPU proof needs --yes (default 3600).
    #[arg(long, hide = true, value_name = "SECS", default_value_t = DEFAULT_CONFIRM_ABOVE_SECS)]
    confirm_above_secs: f64,
}

/// `--segment-jobs K`: a positive number of segments proven at a time.
fn parse_segment_jobs(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 segments at a time: give at least 1".into()),
        Ok(k) => Ok(k),
        Err(_) => Err(format!("{s:?} is not a number of segments (1, 2, ...)")),
    }
}

/// The notes for options of segmented runs given to a run proven as one proof (`why`: why it is one).
fn one_proof_notes(a: &ProveArgs, why: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(k) = a.segment_jobs {
        notes.push(format!(
            "zkrv: note: --segment-jobs {k} has no effect: {why}, proven as one proof"
        ));
    }
    if a.gpus != zkrv_sdk::Gpus::Count(1) {
        notes.push(format!(
            "zkrv: note: --gpus has no effect: {why}, proven as one proof on one device"
        ));
    }
    notes
}

/// The notes for GPU-only options given to a proof on the CPU backend (as `--gpus`'s).
fn gpu_only_notes(a: &ProveArgs) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(b) = a.gpu_memory {
        notes.push(format!(
            "zkrv: note: --gpu-memory {} has no effect: it caps the GPU backend's device memory; \
             this proof is on the CPU",
            b as f64 / (1u64 << 30) as f64
        ));
    }
    if a.cpu_trace {
        notes.push(
            "zkrv: note: --cpu-trace has no effect: it is for the GPU backend (the CPU backend \
             always generates the traces on the host)"
                .into(),
        );
    }
    notes
}

/// `--gpu-memory GIB`: a positive number of GiB, as bytes.
fn parse_gpu_memory(s: &str) -> std::result::Result<u64, String> {
    zkrv_sdk::parse_gib(s)
        .ok_or_else(|| format!("{s:?} is not a positive number of GiB (e.g. 24 or 7.5)"))
}

/// `path` made absolute with symlinks resolved: the file itself if it exists, else its directory joined
/// with its name, else `path` unchanged.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (dir.canonicalize(), path.file_name()) {
        (Ok(d), Some(n)) => d.join(n),
        _ => path.to_path_buf(),
    }
}

/// Whether `a` and `b` name the same file (same canonical path, or same device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    if canonical(a) == canonical(b) {
        return true;
    }
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Checks, before the (long) proof, that `path` (`what`: `-o`, `--profile-json`) can be written:
/// `zkrv_sdk::check_output_path` (not a directory nor ending in `/`, not an existing symbolic link, device,
/// FIFO or socket, a name of at most 255 bytes, an existing directory), and a file can be created in its
/// directory (a temporary file is created and removed).
fn check_writable(path: &Path, what: &str) -> Result<()> {
    let shown = path.display();
    // The SDK's checks (one definition: `Receipt::save` and `write_atomic` make the same ones).
    match zkrv_sdk::check_output_path(path) {
        Err(zkrv_sdk::Error::OutputPath { reason, .. }) => bail!("{what} {shown}: {reason}"),
        Err(e) => return Err(e.into()),
        Ok(()) => {}
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let probe = dir.join(format!(".zkrv-write-check.{}.tmp", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .with_context(|| {
            format!(
                "{what} {shown}: cannot create a file in directory {}",
                dir.display()
            )
        })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The checks of `prove` that need no proof: distinct output paths, writable destinations.
fn check_prove_paths(a: &ProveArgs) -> Result<()> {
    let out = &a.output;
    refuse_dash(
        out,
        "-o",
        "a proof is written to a file (atomically): give its path",
    )?;
    if same_file(out, &a.elf) {
        bail!(
            "-o {} is the guest ELF: refusing to overwrite it",
            out.display()
        );
    }
    if let Some(i) = a.input.as_deref().filter(|i| !is_stdin(i)) {
        if same_file(out, i) {
            bail!(
                "-o {} is the --input file: refusing to overwrite it",
                out.display()
            );
        }
    }
    if let Some(j) = &a.profile_json {
        if same_file(out, j) {
            bail!(
                "-o {} and --profile-json {} are the same file: the profile would replace the proof",
                out.display(),
                j.display()
            );
        }
        if same_file(j, &a.elf)
            || a.input
                .as_deref()
                .is_some_and(|i| !is_stdin(i) && same_file(j, i))
        {
            bail!(
                "--profile-json {} is the guest ELF or the --input file: refusing to overwrite it",
                j.display()
            );
        }
    }
    check_writable(out, "-o")?;
    if let Some(j) = &a.profile_json {
        check_writable(j, "--profile-json")?;
    }
    Ok(())
}

/// The one-line security figure: "security            100 bits provable (Johnson regime, BCHKS25)".
fn security_line(r: &SecurityReport, config: &StarkConfig) -> String {
    let preset = SecurityPreset::of(config).map_or(String::new(), |p| format!("; {p}"));
    format!("security            {}{preset}", r.summary())
}

/// `zkrv security`: the round-by-round table of a preset with every table at `2^log_height` rows.
fn security(preset: SecurityPreset, no_zk: bool, log_height: Option<usize>) -> Result<u8> {
    let config = preset.config(!no_zk);
    let mut lh = log_height.unwrap_or(zkrv_sdk::security::MAX_LOG_HEIGHT);
    // No proof of this preset has a table below its smallest height (zk: `2 * queries + 2` rows rounded up
    // to a power of two): show that height instead of one no proof has.
    let min_lh = zkrv_sdk::security::min_log_height(&config);
    if lh < min_lh {
        eprintln!(
            "zkrv: note: --log-height {lh}: every table of a {} proof at this preset has at least 2^{min_lh} \
             rows; showing 2^{min_lh}",
            if config.zk { "zk" } else { "--no-zk" }
        );
        lh = min_lh;
    }
    let r = zkrv_sdk::security::worst_case(&config, lh).context("estimating the security")?;
    let f = &config.fri;
    println!(
        "{preset}: blowup 2^{}, {} queries, {} grinding bits, {}; every table 2^{lh} rows",
        f.log_blowup,
        f.num_queries,
        f.query_grinding_bits,
        zk_mode(config.zk)
    );
    print!("{r}");
    println!("security            {}", r.summary());
    // The margin: the weakest round before flooring (and the hash cap) over the preset's level.
    match preset.target_bits() {
        Some(t) => println!(
            "margin              {:+.2} bits over {t} (weakest round {:.2} bits, not floored)",
            r.margin_bits(t),
            r.provable_round_bits()
        ),
        None => println!(
            "margin              none: the dev preset has no level (weakest round {:.2} bits)",
            r.provable_round_bits()
        ),
    }
    Ok(0)
}

/// The SDK's options for `zkrv prove`'s arguments, over the environment's switches
/// ([`zkrv_sdk::ProveOptions::from_env`]), checked before anything runs.
fn prove_options(a: &ProveArgs) -> Result<ProveOptions> {
    let env = ProveOptions::from_env()?;
    let opts = ProveOptions {
        zk: !a.no_zk,
        security: a.security,
        hash: a.hash,
        backend: match a.backend {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Gpu => Backend::Gpu,
        },
        max_cycles: a.max_cycles,
        segment_cycles: a.segment_cycles,
        segment_jobs: a.segment_jobs,
        gpus: a.gpus,
        zk_test_seed: a.zk_test_seed,
        // The flag and `ZKRV_GPU_MEMORY` both cap the budget: the smaller wins.
        gpu_memory: match (a.gpu_memory, env.gpu_memory) {
            (Some(f), Some(e)) => Some(f.min(e)),
            (f, e) => f.or(e),
        },
        cpu_trace: a.cpu_trace || env.cpu_trace,
        public_segment_boundaries: a.public_segment_boundaries,
        ..env
    };
    opts.validate().map_err(|e| prove_error(a, e))?;
    Ok(opts)
}

/// An error of [`zkrv_sdk::prove_with`] in the words of `zkrv prove` (its flags instead of the SDK's
/// option names).
fn prove_error(a: &ProveArgs, e: zkrv_sdk::Error) -> anyhow::Error {
    use zkrv_sdk::Error as E;
    match e {
        E::SegmentSize { rows, reason } => anyhow!("--segment-cycles {rows}: {reason}"),
        E::CycleLimitTooLarge {
            max_cycles,
            segment_rows: rows,
            limit,
        } => anyhow!(
            "--max-cycles {max_cycles}: a proof holds at most 2^32 - 1 segments of {} cycles = {limit} \
             cycles (segments of {rows} rows); `zkrv run` has no such limit",
            rows.saturating_sub(1)
        ),
        E::Exec { error, cycles, .. } => exec_error(&a.elf, &error, cycles),
        E::PublicSegmentBoundaries {
            segments,
            segment_rows,
            cycles,
        } => anyhow!(
            "{} needs {segments} segments of {segment_rows} rows ({cycles} cycles), and a segmented proof \
             makes every segment boundary public: the registers, pc and I/O cursors at each boundary and \
             every memory cell written before it, which may hold the private input (docs/continuations.md \
             \"Zero knowledge\"). Pass --public-segment-boundaries to accept that; or prove with --no-zk \
             (no zero knowledge at all); or prove it as one zero-knowledge proof: {}",
            a.elf.display(),
            if cycles > MAX_PROVABLE_CYCLES {
                // No segment size holds it: one proof holds at most 2^26 - 1 cycles.
                "a run of at most 2^26 - 1 cycles (fewer cycles; this one is longer than one proof holds)"
            } else {
                "without --segment-cycles, or with a --segment-cycles the run fits in (more than its \
                 cycles, at most 2^26)"
            }
        ),
        E::NoGpu(e) => anyhow!("--backend gpu: no usable GPU: {e}"),
        E::GpuCount { want, reason } => match want {
            Some(n) => anyhow!("--gpus {n}: {reason}"),
            None => anyhow!("--gpus: {reason}"),
        },
        e => e.into(),
    }
}

fn prove(a: ProveArgs) -> Result<u8> {
    // Refuse bad destinations, options and environment switches before the (long) proof.
    check_prove_paths(&a)?;
    let opts = prove_options(&a)?;
    remove_temp_files_on_signals()?;
    let program = load_program(&a.elf)?;
    let input = read_input(a.input.as_deref())?;
    if a.zk_test_seed.is_some() {
        eprintln!("zkrv: --zk-test-seed: fixed public randomness, the proof is NOT zero-knowledge");
    }
    let progress = Arc::new(Progress::new(a.clone()));
    let observer: Arc<dyn zkrv_sdk::ProveObserver> = progress.clone();
    let proved = zkrv_sdk::prove_with(&program, &input, &opts, observer);
    let proved = match proved {
        Ok(p) => p,
        Err(e) => {
            progress.finish();
            return Err(prove_error(&a, e));
        }
    };
    let receipt = &proved.receipt;
    let segmented = matches!(receipt.proof, ReceiptProof::Segmented { .. });
    let mut prof = proved.profile.clone();
    let bytes = if segmented {
        let bytes = receipt.to_bytes()?;
        write_atomic(&a.output, &bytes)?;
        bytes
    } else {
        let bytes = progress.stage("serialize", &mut prof, || -> Result<Vec<u8>> {
            Ok(receipt.to_bytes()?)
        })?;
        progress.stage("write", &mut prof, || write_atomic(&a.output, &bytes))?;
        bytes
    };
    let security = receipt
        .security_report(&program)
        .context("estimating the proof's security")?;
    progress.finish();
    let total = progress.started().elapsed().as_secs_f64();
    prof.add("total", total);
    let fig = Figures {
        proved: &proved,
        prof,
        total,
        size: bytes.len(),
        peak_host: peak_host_bytes(),
    };

    let (config, cycles) = (&receipt.config, proved.cycles);
    print_statement(&receipt.statement);
    if let ReceiptProof::Segmented { segment_rows, .. } = &receipt.proof {
        println!(
            "segments            {} of {segment_rows} rows",
            receipt.segments()
        );
    }
    println!("cycles              {cycles}");
    println!(
        "proof               {} ({} bytes)",
        a.output.display(),
        fig.size
    );
    if config.zk && a.zk_test_seed.is_some() {
        println!("zero knowledge      no (--zk-test-seed: zk mode with public randomness)");
    } else if segmented {
        println!("zero knowledge      {}", zk_segmented(config.zk));
    } else {
        println!("zero knowledge      {}", yes_no(config.zk));
    }
    println!("hash                {}", config.hash.name());
    let prove_secs = proved.prove_secs;
    if segmented {
        println!(
            "prove time          {prove_secs:.3} s ({} cycles/s)",
            per_sec(cycles, prove_secs)
        );
        println!("{} (the weakest segment)", security_line(&security, config));
    } else {
        println!(
            "prove time          {prove_secs:.3} s ({} cycles/s; {total:.3} s in all)",
            per_sec(cycles, prove_secs)
        );
        println!("{}", security_line(&security, config));
    }
    if a.security_report {
        println!();
        print!("{security}");
    }
    if a.stats {
        print_stats(proved.transfers.as_ref(), proved.trace_report.as_deref());
    }
    if let (true, true, Some(t)) = (a.stats || a.profile, segmented, proved.transfers.as_ref()) {
        let n = receipt.segments().max(1) as u64;
        println!(
            "(summed over the {n} segments: main-trace host->device {} bytes per segment)",
            main_trace_h2d(t) / n
        );
    }
    if a.profile {
        println!();
        print_profile(&fig.prof, total);
        print_profile_figures(&fig);
    }
    if let Some(path) = &a.profile_json {
        let json = profile_json(&a, &fig);
        let text = serde_json::to_string_pretty(&json).context("encoding the profile")?;
        write_atomic(path, text.as_bytes())?;
    }
    Ok(0)
}

/// What `--profile` and `--profile-json` show of a proof.
struct Figures<'a> {
    proved: &'a Proved,
    /// [`Proved::profile`] with the CLI's stages and the total.
    prof: zkrv_sdk::Profile,
    /// Seconds from the start of proving to the written proof file.
    total: f64,
    /// Bytes of the proof file.
    size: usize,
    /// Peak resident set of the process.
    peak_host: Option<u64>,
}

impl Figures<'_> {
    fn segmented(&self) -> bool {
        !self.proved.segments.is_empty()
    }

    /// How a segmented proof's traces were made, with the main-trace host->device bytes per segment.
    fn trace_gen(&self) -> String {
        let t = match (&self.proved.transfers, self.proved.devices.is_empty()) {
            (Some(t), false) => t,
            _ => return "host".into(),
        };
        let per_segment = main_trace_h2d(t) / self.proved.segments.len().max(1) as u64;
        match per_segment {
            0 => "device (every segment's main traces built on the GPU from its record and start state; \
                  main-trace host->device 0 bytes per segment)"
                .into(),
            b => format!("host (--cpu-trace), uploaded: main-trace host->device {b} bytes per segment"),
        }
    }
}

/// `--profile` after the stage table: the segments' table, the rates, sizes and memory figures.
fn print_profile_figures(f: &Figures<'_>) {
    let p = f.proved;
    let segmented = f.segmented();
    if segmented {
        println!("trace generation    {}", f.trace_gen());
        println!(
            "{:<9} {:>6} {:>12} {:>12} {:>12}",
            "segment", "worker", "witness s", "prove s", "wait s"
        );
        for d in &p.segments {
            println!(
                "{:<9} {:>6} {:>12.3} {:>12.3} {:>12.3}",
                d.index, d.worker, d.witness_secs, d.prove_secs, d.wait_secs
            );
        }
    }
    println!("cycles/s            {}", per_sec(p.cycles, p.prove_secs));
    println!("proof size          {} bytes", f.size);
    if let Some(h) = f.peak_host {
        println!("peak host memory    {} (VmHWM)", mib(h));
    }
    for (k, d) in p.devices.iter().enumerate() {
        // Segments name each device; one proof has one.
        let gpu = if segmented {
            format!("GPU {k}: ")
        } else {
            String::new()
        };
        if let Some(m) = d.memory_used {
            println!(
                "peak device memory  {gpu}{} (memory pool high-water)",
                mib(m)
            );
        }
        let Some(b) = d.buffers else { continue };
        let (estimate, recomputed) = match segmented {
            true => (String::new(), "; LDEs recomputed per coset block"),
            false => (
                format!(" (estimated {} before the proof)", mib(b.estimate)),
                "; LDEs recomputed per coset block (the stored proof did not fit, or ZKRV_GPU_LDE)",
            ),
        };
        println!(
            "device buffers      {gpu}{} peak of live buffers{estimate}, budget {}{}",
            mib(b.peak),
            mib(b.budget),
            if b.recomputed { recomputed } else { "" }
        );
    }
    print_transfer_totals(p.transfers.as_ref());
}

fn print_transfer_totals(transfers: Option<&TransferStats>) {
    if let Some(s) = transfers {
        println!(
            "host<->device       {} host->device, {} device->host",
            mib(s.total_h2d()),
            mib(s.total_d2h())
        );
    }
}

/// `--profile-json`: the figures as one JSON object (docs/cli.md).
fn profile_json(a: &ProveArgs, f: &Figures<'_>) -> serde_json::Value {
    let p = f.proved;
    let stages: Vec<_> = f
        .prof
        .stages
        .iter()
        .map(|s| serde_json::json!({"name": s.name, "depth": s.depth, "secs": s.secs, "calls": s.calls}))
        .collect();
    let mut json = serde_json::json!({
        "elf": a.elf.display().to_string(),
        "backend": match (&p.devices[..], f.segmented()) {
            ([first, ..], true) => format!("{} x {}", p.devices.len(), first.name),
            _ => p.devices.first().map_or_else(|| "cpu".to_string(), |d| d.name.clone()),
        },
        "cycles": p.cycles,
        "prove_secs": p.prove_secs,
        "total_secs": f.total,
        "cycles_per_sec": p.cycles as f64 / p.prove_secs.max(1e-9),
        "proof_bytes": f.size,
        "peak_host_bytes": f.peak_host,
        "peak_device_bytes": p.devices.iter().filter_map(|d| d.memory_used).max(),
        "h2d_bytes": p.transfers.as_ref().map(|s| s.total_h2d()),
        "d2h_bytes": p.transfers.as_ref().map(|s| s.total_d2h()),
        "stages": stages,
    });
    if let ReceiptProof::Segmented { segment_rows, .. } = &p.receipt.proof {
        let per_segment: Vec<_> = p
            .segments
            .iter()
            .map(|d| {
                serde_json::json!({
                    "index": d.index,
                    "worker": d.worker,
                    "witness_secs": d.witness_secs,
                    "prove_secs": d.prove_secs,
                    "wait_secs": d.wait_secs,
                })
            })
            .collect();
        json["segment_rows"] = (*segment_rows).into();
        json["segment_count"] = p.segments.len().into();
        json["trace_generation"] = f.trace_gen().into();
        json["segments"] = per_segment.into();
    }
    json
}

/// The estimate of the prove stage of `plan` (docs/cli.md "Estimate before proving"), as the line to
/// print; on the CPU, an error above `--confirm-above-secs` (1 hour) without `--yes`, naming the ways out
/// (before any proving).
fn estimate_gate(a: &ProveArgs, plan: &Plan) -> std::result::Result<String, String> {
    use zkrv_sdk::estimate::{calibrate, cpu_secs, gpu_secs, human_secs, Calibration};
    let (work, config) = (plan.work, &plan.config);
    let what = if work.tables > 1 {
        format!("{} segments of {} rows", work.tables, work.rows_per_table)
    } else {
        format!("{} rows", work.rows_per_table)
    };
    let gpu = gpu_secs(work, config);
    if plan.gpu {
        return Ok(format!(
            "zkrv: estimate: about {} to prove {what} on the GPU (recorded on one NVIDIA H200, \
             docs/PERF.md; another GPU may differ)",
            human_secs(gpu)
        ));
    }
    let hash = if config.hash == zkrv_sdk::MerkleHash::Poseidon2 {
        format!(
            "; --hash poseidon2: {:.0}x the Keccak time on the CPU, zkrv_sdk::estimate::POSEIDON2_CPU_FACTOR",
            zkrv_sdk::estimate::POSEIDON2_CPU_FACTOR
        )
    } else {
        String::new()
    };
    // This machine is measured (about a second) only for a run that may take a while, or that the
    // threshold is about. A shorter one is below the threshold (no refusal) and gets no figure: the
    // reference rate is that of a loaded machine, several times slower than most (a zk 2^16-row
    // fibonacci proof it puts at 54 s took 4.9 s on a 2-core box, 2026-12-04), so a number would mislead.
    let at_reference = cpu_secs(work, config, &Calibration::reference());
    if at_reference < a.confirm_above_secs.min(CALIBRATE_ABOVE_SECS) {
        return Ok(format!(
            "zkrv: estimate: under a minute to prove {what} on the CPU ({UNCALIBRATED}{hash}; docs/cli.md \
             \"Estimate before proving\")"
        ));
    }
    let t = Instant::now();
    let cal = calibrate();
    let secs = cpu_secs(work, config, &cal);
    let basis = format!(
        "this machine measured in {:.2} s at {:.2}x the time of the reference machine",
        t.elapsed().as_secs_f64(),
        cal.slowdown()
    );
    if secs > a.confirm_above_secs && !a.yes {
        return Err(format!(
            "the estimated CPU proving time is about {} ({what}), above {}: pass --yes to prove on the CPU \
             anyway; --backend gpu proves it in about {} on one NVIDIA H200 (docs/gpu.md); \
             --segment-cycles N sets the segment size (the memory a segment needs, not the total time); \
             a run of fewer cycles proves sooner. Nothing was proven",
            human_secs(secs),
            human_secs(a.confirm_above_secs),
            human_secs(gpu)
        ));
    }
    Ok(format!(
        "zkrv: estimate: about {} to prove {what} on the CPU ({basis}{hash}; within about 2x; docs/cli.md \
         \"Estimate before proving\")",
        human_secs(secs)
    ))
}

fn print_profile(p: &Profile, total: f64) {
    println!(
        "{:<40} {:>10} {:>7} {:>6}",
        "stage", "seconds", "%", "calls"
    );
    for s in &p.stages {
        if s.name == "total" {
            continue;
        }
        let leaf = s.name.rsplit('/').next().unwrap_or(&s.name);
        let label = format!("{}{}", "  ".repeat(s.depth), leaf);
        println!(
            "{label:<40} {:>10.4} {:>6.1}% {:>6}",
            s.secs,
            100.0 * s.secs / total.max(1e-12),
            s.calls
        );
    }
    println!("{:<40} {total:>10.4} {:>6.1}%", "total", 100.0);
}

// ---------------------------------------------------------------------------------------------------------
// verify

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no (--no-zk: the proof may reveal information about the private input)"
    }
}

/// The `zero knowledge` line of a segmented proof (prove and verify): each segment is a zk proof, but its
/// boundary is public, memory included (docs/continuations.md, "Zero knowledge").
fn zk_segmented(zk: bool) -> &'static str {
    if zk {
        "only within each segment: the memory written before each segment boundary (which may include \
         the private input) and the registers at the boundaries are public in this proof"
    } else {
        yes_no(false)
    }
}

/// The warning `prove` prints on stderr for a segmented proof.
const SEGMENTED_ZK_WARNING: &str = "zkrv: warning: a segmented proof is zero-knowledge only within each \
    segment: the memory written before each segment boundary (which may include the private input) and the \
    registers, pc and I/O cursors at every boundary are public in the proof file (docs/continuations.md, \
    \"Zero knowledge\"); a run of at most 2^26 - 1 cycles proven without --segment-cycles is one proof that \
    reveals none of it";

fn zk_mode(zk: bool) -> &'static str {
    if zk {
        "zero-knowledge"
    } else {
        "NOT zero-knowledge"
    }
}

/// Where two byte strings first differ (`None` if equal).
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len())),
    )
}

/// `zkrv verify`; with `--json`, a host error (exit 2: unreadable file, bad ELF, ...) also prints
/// `{"valid": null, "error": "<reason>"}` on stdout, so that a script always gets one JSON object.
fn verify(a: VerifyArgs) -> Result<u8> {
    let json = a.json;
    let r = verify_checked(a);
    if let (true, Err(e)) = (json, &r) {
        println!(
            "{}",
            serde_json::json!({"valid": serde_json::Value::Null, "error": format!("{e:#}")})
        );
    }
    r
}

fn verify_checked(a: VerifyArgs) -> Result<u8> {
    // `kind`: the `error_kind` of `--json` (docs/cli.md); `proof_valid`: for a policy refusal, whether
    // the proof itself verifies.
    let reject_as = |kind: &str, proof_valid: Option<bool>, why: String| {
        eprintln!("zkrv: proof rejected: {why}");
        if a.json {
            let mut j = serde_json::json!({"valid": false, "error": why, "error_kind": kind});
            if let Some(v) = proof_valid {
                j["proof_valid"] = v.into();
                j["accepted"] = false.into();
            }
            println!("{j}");
        }
        Ok(REJECTED)
    };
    let reject = |why: String| reject_as("malformed", None, why);
    refuse_dash(
        &a.proof,
        "the proof file",
        "give its path (/dev/stdin reads it from stdin)",
    )?;
    refuse_dash(
        &a.elf,
        "the guest ELF",
        "give the ELF's path (/dev/stdin reads it from stdin)",
    )?;
    if let Some(p) = &a.expect_output {
        refuse_dash(
            p,
            "--expect-output",
            "give a file's path (/dev/stdin reads it from stdin)",
        )?;
    }
    if let Some(p) = &a.output_file {
        refuse_dash(
            p,
            "--output-file",
            "give a file's path (the output is also printed, and is in --json's output_hex)",
        )?;
    }
    let bytes = read_capped(&a.proof, MAX_PROOF_BYTES, "proof file")?;
    if bytes.starts_with(b"\x7fELF") {
        // Checked before loading the ELF argument, so that swapped arguments get this hint.
        return reject(format!(
            "not a zkrv proof file: {} is an ELF file (the order is `zkrv verify PROOF ELF`)",
            a.proof.display()
        ));
    }
    let program = load_program(&a.elf)?;
    let expected = match &a.expect_output {
        Some(p) => Some(read_capped(p, MAX_INPUT_BYTES, "--expect-output file")?),
        None => None,
    };
    if let Some(o) = &a.output_file {
        for (other, what) in [
            (Some(&a.proof), "the proof file"),
            (Some(&a.elf), "the guest ELF"),
            (a.expect_output.as_ref(), "the --expect-output file"),
        ] {
            if other.is_some_and(|p| same_file(o, p)) {
                bail!(
                    "--output-file {} is {what}: refusing to overwrite it",
                    o.display()
                );
            }
        }
        check_writable(o, "--output-file")?;
    }
    // Either version: one proof (3) or segments (4), checked the same way below.
    let receipt = match zkrv_sdk::Receipt::from_bytes(&bytes) {
        Ok(r) => r,
        Err(e) => return reject(e.to_string()),
    };
    let (statement, config) = (&receipt.statement, &receipt.config);
    let segmented = matches!(receipt.proof, zkrv_sdk::ReceiptProof::Segmented { .. });
    // The verifier refuses parameters below the minimum itself (for every segment): `Error::TooWeak`.
    let verified = match receipt.check_with(&program, a.min_security) {
        Ok(v) => v,
        Err(zkrv_sdk::Error::TooWeak { bits, min }) => {
            let preset =
                SecurityPreset::of(config).map_or("unknown".to_string(), |p| p.to_string());
            // Policy, not forgery: say whether the proof verifies at any level.
            let proof_valid = receipt.check_with(&program, 0).is_ok();
            return reject_as(
                "too_weak",
                Some(proof_valid),
                format!(
                    "the proof's parameters ({preset}) give {bits} bits provable, below --min-security \
                     {min}{}; the proof itself is {}",
                    min_security_hint(min),
                    if proof_valid {
                        "valid (a policy refusal, not a forgery)"
                    } else {
                        "also invalid"
                    }
                ),
            );
        }
        Err(zkrv_sdk::Error::WrongProgram { .. }) => {
            return reject_as(
                "wrong_program",
                None,
                format!(
                    "the proof is for another program (its program ID is not that of {})",
                    a.elf.display()
                ),
            )
        }
        Err(zkrv_sdk::Error::Invalid(e)) => {
            return reject_as("invalid", None, format!("invalid proof: {e}"))
        }
        Err(e) => return reject_as("invalid", None, e.to_string()),
    };
    // The level of the proof's own parameters (the weakest segment's), for the report.
    let report = match no_panic("estimating the security", || {
        receipt
            .security_report(&program)
            .context("estimating the proof's security")
    }) {
        Ok(r) => r,
        Err(e) => return reject(format!("{e:#}")),
    };
    if let Some(o) = &a.output_file {
        write_atomic(o, &statement.output)?;
    }
    let exit_ok = statement.exit_code == 0 || a.any_exit_code;
    let mismatch = expected
        .as_deref()
        .and_then(|e| first_difference(&statement.output, e));
    let accepted = exit_ok && mismatch.is_none();
    let mut security = security_line(&report, config);
    if segmented {
        security += " (the weakest segment)";
    }
    let zk = if segmented {
        zk_segmented(config.zk).to_string()
    } else {
        yes_no(config.zk).to_string()
    };
    if a.json {
        let prov = report.provable_bits();
        let mut json = serde_json::json!({
            "valid": true,
            "accepted": accepted,
            "elf": a.elf.display().to_string(),
            "program_id": hex(&statement.program),
            "exit_code": statement.exit_code,
            "output_hex": hex(&statement.output),
            "output_len": statement.output.len(),
            "expected_output_matches": expected.as_ref().map(|_| mismatch.is_none()),
            // A segmented proof publishes its boundaries (memory written before each, possibly the
            // private input): zero knowledge of the whole run only for one zk proof.
            "zero_knowledge": config.zk && !segmented,
            "segments_zero_knowledge": config.zk,
            "boundaries_public": segmented,
            "hash": config.hash.name(),
            "cycles_at_most": verified.cycles_at_most,
            "segments": verified.segments,
            "security": {"provable_bits": prov, "regime": "Johnson, BCHKS25", "line": security},
        });
        match (receipt.cpu_log_height(), verified.cycles) {
            (Some(h), _) => json["cpu_table_log_height"] = h.into(),
            (None, Some(c)) => json["cycles"] = c.into(),
            _ => {}
        }
        println!("{json}");
    } else {
        if !exit_ok {
            println!(
                "proof valid for {}, but the proven exit code is {} (not 0)",
                a.elf.display(),
                statement.exit_code
            );
        } else if mismatch.is_some() {
            println!(
                "proof valid for {}, but the public output is not the expected one",
                a.elf.display()
            );
        } else {
            println!("proof OK for {}", a.elf.display());
        }
        println!("zero knowledge      {zk}");
        println!("hash                {}", config.hash.name());
        print_statement(statement);
        if segmented {
            println!("segments            {}", verified.segments);
            if let Some(c) = verified.cycles {
                // Proven per segment (docs/continuations.md §4), not a bound.
                println!("cycles              {c} (proven)");
            }
        }
        println!("{security}");
    }
    if !exit_ok {
        eprintln!(
            "zkrv: the proof is valid, but the guest exited with code {} (not 0: the run failed); \
             pass --any-exit-code to accept any exit code",
            statement.exit_code
        );
    }
    if let (Some(at), Some(e), Some(p)) = (mismatch, &expected, &a.expect_output) {
        eprintln!(
            "zkrv: the proof is valid, but its public output ({} bytes) differs from {} ({} bytes) at byte {at}",
            statement.output.len(),
            p.display(),
            e.len()
        );
    }
    Ok(if accepted { 0 } else { NONZERO_EXIT })
}

/// What to do about a proof below `--min-security BITS`: the weakest preset that meets BITS, or that none
/// does.
fn min_security_hint(bits: u32) -> String {
    match SecurityPreset::weakest_meeting(bits) {
        Some(p) => format!(
            " (prove with `--security {}`, built for {} bits provable, or lower --min-security to accept it)",
            p.name(),
            p.target_bits().unwrap_or(bits)
        ),
        None => {
            let top = SecurityPreset::ALL[SecurityPreset::ALL.len() - 1];
            format!(
                " (no preset reaches {bits} bits: the strongest, `--security {}`, gives {})",
                top.name(),
                top.target_bits().unwrap_or(0)
            )
        }
    }
}

fn program_id(elf: PathBuf) -> Result<u8> {
    let program = load_program(&elf)?;
    println!("{}", program.id());
    Ok(0)
}

// ---------------------------------------------------------------------------------------------------------
// Closed standard descriptors

/// Bit `k` set: fd `k` (0 stdin, 1 stdout, 2 stderr) was closed when the process started. Recorded by
/// [`record_closed_stdio`] before `main`, because the Rust runtime then reopens a closed standard descriptor
/// on `/dev/null` (after which a closed stdout would swallow the output and a closed stdin read as empty).
static CLOSED_AT_START: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Runs from the ELF's `.init_array`, before the Rust runtime's start-up code (which runs from `main`):
/// records which of fds 0-2 are closed (`fcntl(F_GETFD)` fails with `EBADF`).
extern "C" fn record_closed_stdio() {
    let mut mask = 0u8;
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor's flags; any integer is a valid argument.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            mask |= 1 << fd;
        }
    }
    CLOSED_AT_START.store(mask, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static RECORD_CLOSED_STDIO: extern "C" fn() = record_closed_stdio;

/// Whether fd `fd` (0-2) was closed when zkrv started.
fn was_closed(fd: u8) -> bool {
    CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) & (1 << fd) != 0
}

/// Whether `p` names stdin itself: `-` (`--input -`) or one of stdin's paths.
fn names_stdin(p: &Path) -> bool {
    is_stdin(p)
        || ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"].contains(&p.to_str().unwrap_or(""))
}

/// The error for a standard descriptor that was closed at start (`>&-`, `2>&-`, `<&-`), before the command
/// does anything: stdout (fd 1) for every command (each writes its result there: a run's public output,
/// the statement, the program ID), stderr (fd 2) for every command (errors, warnings, the guest's fd-2
/// text; this error then has nowhere to go but the exit status 2), stdin (fd 0) where it is read
/// (`--input -`, a path that is stdin). Redirecting to or from `/dev/null` is the way to discard or give
/// nothing.
fn closed_stdio(command: &Command) -> Result<()> {
    let (name, writes) = match command {
        Command::Run { .. } => ("run", "the guest's public output"),
        Command::Prove(_) => ("prove", "the proven statement and the proof's figures"),
        Command::Verify(_) => ("verify", "the verdict and the proven statement"),
        Command::ProgramId { .. } => ("program-id", "the program ID"),
        Command::New { .. } => ("new", "what it created"),
        Command::Security { .. } => ("security", "the soundness table"),
    };
    let mut closed = Vec::new();
    if was_closed(1) {
        closed.push(format!(
            "stdout (fd 1) is closed: `zkrv {name}` writes {writes} there; redirect it (`>/dev/null` \
             discards it) instead of closing it (`>&-`)"
        ));
    }
    if was_closed(2) {
        closed.push(
            "stderr (fd 2) is closed: zkrv writes errors, warnings and progress there; redirect it \
             (`2>/dev/null`) instead of closing it (`2>&-`)"
                .to_string(),
        );
    }
    // The arguments read from stdin when they name it (`--input -`, `/dev/stdin`), as shown in the error.
    let stdin_read: Vec<(String, &Path)> = match command {
        Command::Run { input, .. } | Command::Prove(ProveArgs { input, .. }) => input
            .iter()
            .map(|p| (format!("--input {}", p.display()), p.as_path()))
            .collect(),
        Command::Verify(a) => [Some(&a.proof), Some(&a.elf), a.expect_output.as_ref()]
            .into_iter()
            .flatten()
            .map(|p| (p.display().to_string(), p.as_path()))
            .collect(),
        Command::ProgramId { elf } => vec![(elf.display().to_string(), elf.as_path())],
        Command::New { .. } | Command::Security { .. } => Vec::new(),
    };
    if was_closed(0) {
        if let Some((arg, _)) = stdin_read.into_iter().find(|(_, p)| names_stdin(p)) {
            closed.push(format!(
                "stdin (fd 0) is closed, but `{arg}` reads it; give it on stdin (`< FILE`; `< /dev/null` \
                 for an empty input) instead of closing it (`<&-`)"
            ));
        }
    }
    if closed.is_empty() {
        return Ok(());
    }
    bail!("{}", closed.join("; "))
}

mod new;

fn main() -> ExitCode {
    // Panics are turned into errors where they can happen (see `no_panic`); keep their text off the default
    // hook's output unless asked for.
    if std::env::var_os("ZKRV_PANIC_TRACE").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    let cli = Cli::parse();
    let res = no_panic("zkrv", || closed_stdio(&cli.command)).and_then(|()| {
        no_panic("zkrv", || match cli.command {
            Command::Run {
                elf,
                input,
                max_cycles,
            } => run(elf, input, max_cycles),
            Command::Prove(a) => prove(a),
            Command::Verify(a) => verify(a),
            Command::ProgramId { elf } => program_id(elf),
            Command::New { name, lang } => new::create(&name, lang).map(|()| 0),
            Command::Security {
                security: preset,
                no_zk,
                log_height,
            } => security(preset, no_zk, log_height),
        })
    });
    match res {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_closed_stdout(&e) => die_of_closed_stdout(),
        Err(e) => {
            eprintln!("zkrv: error: {e:#}");
            ExitCode::from(HOST_ERROR)
        }
    }
}
