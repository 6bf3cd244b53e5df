//! zkrv-suite: prove and verify a fixed list of guests with the `zkrv` binary and write suite.json and suite.md
//! (see docs/PERF.md `## Suite`).
//!
//! ```text
//! cargo build --release -p zkrv && cargo build --release -p zkrv-bench --bin zkrv-suite
//! target/release/zkrv-suite --list quick --backend cpu --out suite-out
//! target/release/zkrv-suite --list standard --backend gpu --zkrv target/release/zkrv --out suite-gpu
//! target/release/zkrv-suite --list none --case exitcode --case sort:my-input.bin --out suite-out
//! ```

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::Parser;
use zkrv_bench::suite::{self, CaseSpec, Limits, Report, RunOptions};

#[derive(Parser, Debug)]
#[command(
    name = "zkrv-suite",
    about = "Prove and verify a fixed list of guests with zkrv; write DIR/suite.json and DIR/suite.md",
    after_help = "Lists: quick (exitcode, fibonacci n=90, sha256 ~2^14 cycles), standard (sha256 ~2^18 and ~2^20 \
                  cycles, sort, matmul, modexp, keccak on their example inputs), large (standard + sha256 ~2^22), \
                  none (only --case). SHA-256 inputs are 2^k/64 bytes of the xorshift64 stream from seed \
                  0x5eed202600070002."
)]
struct Args {
    /// Built-in case list: quick, standard, large or none.
    #[arg(long, default_value = "quick")]
    list: String,
    /// Extra case GUEST or GUEST:INPUTFILE (GUEST: a name in --guests, or a path to an .elf); repeatable.
    #[arg(long = "case", value_name = "GUEST[:INPUT]")]
    cases: Vec<String>,
    /// zkrv prove --backend value.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu", "auto"])]
    backend: String,
    /// The zkrv binary (build it with `cargo build --release -p zkrv`).
    #[arg(long, default_value = "target/release/zkrv")]
    zkrv: PathBuf,
    /// Output directory for suite.json and suite.md.
    #[arg(long, default_value = "suite-out")]
    out: PathBuf,
    /// Directory of the guest ELFs.
    #[arg(long, default_value = "guests/bin")]
    guests: PathBuf,
    /// Directory of the example inputs (<guest>.bin).
    #[arg(long, default_value = "guests/inputs")]
    inputs: PathBuf,
    /// zkrv verify runs per case (the report gives their median).
    #[arg(long, default_value_t = 3)]
    verify_runs: usize,
    /// Kill a prove that runs longer than this many seconds.
    #[arg(long, default_value_t = 900)]
    timeout_secs: u64,
    /// Kill a prove whose resident set exceeds this many GiB.
    #[arg(long, default_value_t = 18.0)]
    max_rss_gib: f64,
    /// Keep the scratch directory (generated inputs, profiles, stderr of each prove).
    #[arg(long)]
    keep_tmp: bool,
    /// Extra argument for every `zkrv prove` (repeatable), e.g. `--prove-arg=--no-zk`.
    #[arg(long = "prove-arg", value_name = "ARG", allow_hyphen_values = true)]
    prove_args: Vec<String>,
}

fn main() -> Result<()> {
    let a = Args::parse();
    if !a.zkrv.is_file() {
        bail!(
            "zkrv binary {} not found; build it with `cargo build --release -p zkrv` (or pass --zkrv PATH)",
            a.zkrv.display()
        );
    }
    let mut specs = suite::builtin_list(&a.list)?;
    for c in &a.cases {
        specs.push(CaseSpec::parse(c)?);
    }
    if specs.is_empty() {
        bail!("no cases: pick a --list other than none or add --case");
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let tmp = std::env::temp_dir().join(format!("zkrv-suite-{}-{now}", std::process::id()));
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let prepared = specs
        .iter()
        .enumerate()
        .map(|(i, s)| suite::prepare(s, i, &a.guests, &a.inputs, &tmp))
        .collect::<Result<Vec<_>, _>>()?;
    let opt = RunOptions {
        zkrv: a.zkrv.clone(),
        backend: a.backend.clone(),
        verify_runs: a.verify_runs,
        limits: Limits {
            timeout: Duration::from_secs(a.timeout_secs),
            max_rss_bytes: (a.max_rss_gib * (1u64 << 30) as f64) as u64,
        },
        tmp: tmp.clone(),
        prove_args: a.prove_args.clone(),
    };
    let mut report = Report {
        date: suite::utc_date(now),
        list: a.list.clone(),
        backend: a.backend.clone(),
        zkrv: a.zkrv.display().to_string(),
        commit: suite::git_commit(),
        host: suite::cpu_model(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        loadavg_start: suite::loadavg(),
        loadavg_end: None,
        input_seed: format!("{:#x}", suite::INPUT_SEED),
        verify_runs: a.verify_runs,
        prove_args: a.prove_args.clone(),
        cases: Vec::new(),
    };
    for (i, c) in prepared.iter().enumerate() {
        eprintln!(
            "[{}/{}] {} ({}) ...",
            i + 1,
            prepared.len(),
            c.spec.guest,
            c.spec.desc
        );
        let r = suite::run_case(c, i, &opt);
        match &r.profile {
            Some(p) => eprintln!(
                "    {}: {} cycles, prove {:.2} s, {:.0} cycles/s, proof {} B, verify {:.3} s",
                r.status,
                p.cycles,
                p.prove_secs,
                p.cycles_per_sec,
                p.proof_bytes,
                r.verify_median_secs.unwrap_or(f64::NAN)
            ),
            None => eprintln!("    {}", r.status),
        }
        report.cases.push(r);
        report.loadavg_end = suite::loadavg();
        // Written after every case so that a long run killed midway keeps what it measured.
        suite::write_reports(&report, &a.out)?;
    }
    let (j, m) = suite::write_reports(&report, &a.out)?;
    println!("{}", suite::render_markdown(&report));
    eprintln!("wrote {} and {}", j.display(), m.display());
    if a.keep_tmp {
        eprintln!("scratch kept in {}", tmp.display());
    } else {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let failed = report.cases.iter().filter(|c| !c.ok()).count();
    if failed > 0 {
        bail!("{failed} of {} cases failed", report.cases.len());
    }
    Ok(())
}
