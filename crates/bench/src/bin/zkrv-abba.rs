//! zkrv-abba: paired ABBA comparison of two commands (see docs/PERF.md `## ABBA tool`).
//!
//! ```text
//! zkrv-abba --a "./old/zkrv prove guests/bin/sha256.elf" --b "./new/zkrv prove guests/bin/sha256.elf" --pairs 10
//! zkrv-abba --bin-a ./old/zkrv --bin-b ./new/zkrv --pairs 10 -- prove guests/bin/sha256.elf
//! zkrv-abba --a "..." --b "..." --metric-regex 'prove: ([0-9.]+) s' --json abba.json
//! ```

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Parser;
use serde::Serialize;
use zkrv_bench::abba::{self, Analysis, Cmd, Metric, Run, Side};

#[derive(Parser, Debug)]
#[command(
    name = "zkrv-abba",
    about = "Compare two commands with ABBA-ordered pairs, a paired t interval and an exact Wilcoxon test",
    after_help = "Pair i runs A then B for even i and B then A for odd i (ABBA ABBA ...). The verdict is given only \
                  when the paired t interval on B/A-1 excludes 0 and the Wilcoxon p-value is below alpha, in the \
                  same direction. With fewer than 6 pairs the exact Wilcoxon test can never reach p < 0.05."
)]
struct Args {
    /// Command A, run by `sh -c`.
    #[arg(
        long = "a",
        value_name = "CMD",
        conflicts_with = "bin_a",
        required_unless_present = "bin_a"
    )]
    a: Option<String>,
    /// Command B, run by `sh -c`.
    #[arg(
        long = "b",
        value_name = "CMD",
        conflicts_with = "bin_b",
        required_unless_present = "bin_b"
    )]
    b: Option<String>,
    /// Binary A, run directly with the arguments after `--`.
    #[arg(long, value_name = "PATH", requires = "bin_b")]
    bin_a: Option<String>,
    /// Binary B, run directly with the arguments after `--`.
    #[arg(long, value_name = "PATH", requires = "bin_a")]
    bin_b: Option<String>,
    /// Number of pairs (each pair one run of A and one of B).
    #[arg(long, default_value_t = 10)]
    pairs: usize,
    /// Unmeasured warm-up runs of each side before the pairs.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Measure the number in capture group 1 of the last match in stdout+stderr instead of the wall clock.
    #[arg(long, value_name = "REGEX")]
    metric_regex: Option<String>,
    /// Unit label of the metric in the report (default: "s" for the wall clock, "" for a regex).
    #[arg(long)]
    unit: Option<String>,
    /// Significance level of both tests (the t interval has confidence 1 - alpha).
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// The metric is a throughput (higher is better) instead of a time.
    #[arg(long)]
    higher_is_better: bool,
    /// Also write the runs and the analysis as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Do not print progress to stderr.
    #[arg(long, short)]
    quiet: bool,
    /// Arguments passed to --bin-a and --bin-b.
    #[arg(last = true)]
    args: Vec<String>,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    a: &'a Cmd,
    b: &'a Cmd,
    metric: String,
    unit: &'a str,
    pairs: usize,
    warmup: usize,
    runs: &'a [Run],
    analysis: &'a Analysis,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        bail!("--alpha must be in (0, 1), got {}", args.alpha);
    }
    let (a, b) = match (&args.a, &args.b, &args.bin_a, &args.bin_b) {
        (Some(a), Some(b), None, None) => {
            if !args.args.is_empty() {
                bail!("arguments after `--` are only used with --bin-a/--bin-b");
            }
            (Cmd::Shell(a.clone()), Cmd::Shell(b.clone()))
        }
        (None, None, Some(x), Some(y)) => {
            let argv = |bin: &String| {
                std::iter::once(bin.clone())
                    .chain(args.args.iter().cloned())
                    .collect()
            };
            (Cmd::Argv(argv(x)), Cmd::Argv(argv(y)))
        }
        _ => bail!("give either --a and --b, or --bin-a and --bin-b"),
    };
    let metric = match &args.metric_regex {
        Some(re) => Metric::regex(re).map_err(|e| anyhow::anyhow!("--metric-regex: {e}"))?,
        None => Metric::WallClock,
    };
    let unit = args
        .unit
        .clone()
        .unwrap_or_else(|| if args.metric_regex.is_some() { "" } else { "s" }.to_string());

    let total = 2 * args.pairs;
    let quiet = args.quiet;
    let runs = abba::run_abba(&a, &b, &metric, args.pairs, args.warmup, |r| {
        if !quiet {
            let side = if r.side == Side::A { "A" } else { "B" };
            eprintln!(
                "run {:>3}/{total} pair {:>3} {side}: {:.6} {unit}",
                r.index + 1,
                r.pair,
                r.value
            );
        }
    })?;
    let analysis = abba::analyze(&runs, args.alpha, args.higher_is_better)?;
    print!("{}", abba::render_report(&analysis, &a, &b, &unit));

    if let Some(path) = &args.json {
        let out = JsonOut {
            a: &a,
            b: &b,
            metric: args
                .metric_regex
                .clone()
                .unwrap_or_else(|| "wall-clock".into()),
            unit: &unit,
            pairs: args.pairs,
            warmup: args.warmup,
            runs: &runs,
            analysis: &analysis,
        };
        let text = serde_json::to_string_pretty(&out)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
