//! The `zkrv` command-line tool.
//!
//! `zkrv run prog.elf [--input FILE] [--max-cycles N]` executes a guest: the public output goes
//! to stdout (raw bytes), the guest's fd-2 debug text and a summary (exit code, cycles, speed)
//! to stderr. Exit status: the guest's exit code (low 8 bits) on a clean exit; 2 on a host
//! error (unreadable file, bad ELF, execution error such as an illegal instruction or the cycle
//! limit).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use zkrv_executor::{execute, ExecOptions, Program, DEFAULT_MAX_CYCLES};

/// Exit status for errors of the host (bad arguments, files, ELF, execution errors).
const HOST_ERROR: u8 = 2;

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

#[derive(Subcommand)]
enum Command {
    /// Execute a guest ELF (no proof): public output to stdout, summary to stderr.
    Run {
        /// The guest program (RV64IM ELF, see docs/abi.md).
        elf: PathBuf,
        /// File whose bytes are the private input (read with syscall 63). Default: empty.
        #[arg(long)]
        input: Option<PathBuf>,
        /// Stop with an error after this many instructions.
        #[arg(long, default_value_t = DEFAULT_MAX_CYCLES)]
        max_cycles: u64,
    },
}

fn run(elf: PathBuf, input: Option<PathBuf>, max_cycles: u64) -> Result<u8> {
    let bytes = std::fs::read(&elf).with_context(|| format!("reading {}", elf.display()))?;
    let program =
        Program::from_elf(&bytes).with_context(|| format!("loading {}", elf.display()))?;
    let input = match input {
        Some(p) => std::fs::read(&p).with_context(|| format!("reading input {}", p.display()))?,
        None => Vec::new(),
    };
    let t = Instant::now();
    let result = execute(
        &program,
        &input,
        &ExecOptions {
            max_cycles,
            record: false,
        },
    );
    let secs = t.elapsed().as_secs_f64();
    let exec = result.with_context(|| format!("executing {}", elf.display()))?;
    std::io::stdout()
        .write_all(&exec.public_output)
        .context("writing stdout")?;
    std::io::stdout().flush().context("writing stdout")?;
    let mut err = std::io::stderr();
    let _ = err.write_all(&exec.debug_output);
    let _ = writeln!(
        err,
        "exit code {} after {} cycles in {:.3} s ({:.1} M instructions/s)",
        exec.exit_code,
        exec.cycles,
        secs,
        exec.cycles as f64 / secs.max(1e-9) / 1e6
    );
    Ok(exec.exit_code as u8)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Run {
            elf,
            input,
            max_cycles,
        } => run(elf, input, max_cycles),
    };
    match res {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("zkrv: error: {e:#}");
            ExitCode::from(HOST_ERROR)
        }
    }
}
