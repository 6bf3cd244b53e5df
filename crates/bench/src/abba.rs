//! ABBA paired comparison of two commands: the schedule, running and measuring one command, and the analysis
//! (per-pair relative differences, paired t interval, exact Wilcoxon signed-rank test, jitter, drift, verdict).
//!
//! Pair i (0-based) runs A then B when i is even and B then A when i is odd, so the sequence is
//! `A B B A A B B A ...`: a drift that is linear in time adds the same amount to A and B over every two pairs.

use std::process::{Command, Stdio};
use std::time::Instant;

use regex::Regex;
use serde::Serialize;

use crate::stats::{self, TInterval, Wilcoxon};

/// One of the two commands being compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Side {
    A,
    B,
}

/// The ABBA schedule for `pairs` pairs: `2 · pairs` entries `(pair index, side)` in run order.
pub fn abba_schedule(pairs: usize) -> Vec<(usize, Side)> {
    (0..pairs)
        .flat_map(|i| {
            if i % 2 == 0 {
                [(i, Side::A), (i, Side::B)]
            } else {
                [(i, Side::B), (i, Side::A)]
            }
        })
        .collect()
}

/// Errors from running a command or reading its metric.
#[derive(Debug, thiserror::Error)]
pub enum AbbaError {
    #[error("could not start `{cmd}`: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("`{cmd}` exited with {status}; stderr tail:\n{stderr_tail}")]
    Failed {
        cmd: String,
        status: std::process::ExitStatus,
        stderr_tail: String,
    },
    #[error("metric regex `{regex}` did not match the output of `{cmd}`")]
    MetricMissing { cmd: String, regex: String },
    #[error("metric regex `{regex}` captured `{captured}` in the output of `{cmd}`, which is not a number")]
    MetricNotNumber {
        cmd: String,
        regex: String,
        captured: String,
    },
    #[error("metric regex `{0}` has no capture group 1")]
    RegexNoGroup(String),
    #[error("need at least 2 pairs, got {0}")]
    TooFewPairs(usize),
    #[error("run {index} ({side:?}) measured {value}, which is not a positive finite number")]
    BadValue {
        index: usize,
        side: Side,
        value: f64,
    },
    #[error("run list does not hold exactly one A and one B measurement for pair {0}")]
    IncompletePair(usize),
}

/// A command to time: a shell line (run by `sh -c`) or an argument vector (run directly).
#[derive(Clone, Debug, Serialize)]
pub enum Cmd {
    Shell(String),
    Argv(Vec<String>),
}

impl Cmd {
    /// A printable form (argv elements single-quoted when they contain anything but `[A-Za-z0-9_./=:,+-]`).
    pub fn display(&self) -> String {
        match self {
            Cmd::Shell(s) => s.clone(),
            Cmd::Argv(v) => v
                .iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:,+-".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// What one run measures.
#[derive(Clone, Debug)]
pub enum Metric {
    /// Wall-clock seconds from spawn to exit.
    WallClock,
    /// The number in capture group 1 of the **last** match of the regex in the run's stdout followed by its
    /// stderr (units as printed by the command).
    Regex(Regex),
}

impl Metric {
    /// Builds a regex metric; the regex must have a capture group 1.
    pub fn regex(pattern: &str) -> Result<Metric, Box<dyn std::error::Error + Send + Sync>> {
        let re = Regex::new(pattern)?;
        if re.captures_len() < 2 {
            return Err(Box::new(AbbaError::RegexNoGroup(pattern.to_string())));
        }
        Ok(Metric::Regex(re))
    }
}

/// Runs `cmd` once (stdout and stderr captured, stdin null) and returns its measurement.
pub fn measure(cmd: &Cmd, metric: &Metric) -> Result<f64, AbbaError> {
    let mut command = match cmd {
        Cmd::Shell(s) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(s);
            c
        }
        Cmd::Argv(v) => {
            let mut c = Command::new(v.first().map(String::as_str).unwrap_or(""));
            c.args(v.iter().skip(1));
            c
        }
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let out = command.output().map_err(|source| AbbaError::Spawn {
        cmd: cmd.display(),
        source,
    })?;
    let wall = start.elapsed().as_secs_f64();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: String = err
            .lines()
            .rev()
            .take(10)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(AbbaError::Failed {
            cmd: cmd.display(),
            status: out.status,
            stderr_tail: tail,
        });
    }
    match metric {
        Metric::WallClock => Ok(wall),
        Metric::Regex(re) => {
            let text = format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let caps = re
                .captures_iter(&text)
                .last()
                .ok_or_else(|| AbbaError::MetricMissing {
                    cmd: cmd.display(),
                    regex: re.to_string(),
                })?;
            let captured = caps.get(1).map(|m| m.as_str()).unwrap_or("");
            captured
                .trim()
                .parse::<f64>()
                .map_err(|_| AbbaError::MetricNotNumber {
                    cmd: cmd.display(),
                    regex: re.to_string(),
                    captured: captured.to_string(),
                })
        }
    }
}

/// One timed run.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// Position in the measured sequence (0-based, warm-ups excluded).
    pub index: usize,
    /// Pair this run belongs to.
    pub pair: usize,
    pub side: Side,
    /// The measurement (seconds for wall clock, else the regex's units).
    pub value: f64,
}

/// Runs `warmup` unmeasured runs of each side (A then B), then `pairs` ABBA pairs, calling `progress` after each
/// measured run. Stops at the first failing run.
pub fn run_abba(
    a: &Cmd,
    b: &Cmd,
    metric: &Metric,
    pairs: usize,
    warmup: usize,
    mut progress: impl FnMut(&Run),
) -> Result<Vec<Run>, AbbaError> {
    if pairs < 2 {
        return Err(AbbaError::TooFewPairs(pairs));
    }
    for _ in 0..warmup {
        measure(a, metric)?;
        measure(b, metric)?;
    }
    let mut runs = Vec::with_capacity(2 * pairs);
    for (index, (pair, side)) in abba_schedule(pairs).into_iter().enumerate() {
        let cmd = if side == Side::A { a } else { b };
        let value = measure(cmd, metric)?;
        let run = Run {
            index,
            pair,
            side,
            value,
        };
        progress(&run);
        runs.push(run);
    }
    Ok(runs)
}

/// Which command is better, when both tests agree at level alpha.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    AFaster,
    BFaster,
    NoSignificantDifference,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::AFaster => "A faster",
            Verdict::BFaster => "B faster",
            Verdict::NoSignificantDifference => "no significant difference",
        })
    }
}

/// The verdict on relative differences `d = b/a - 1`: "B faster" needs the t interval entirely below 0 **and**
/// the Wilcoxon p-value < alpha with W- > W+; "A faster" the mirror image; anything else (including the tests
/// disagreeing) is "no significant difference". With `higher_is_better` (throughput metrics) A and B swap.
pub fn verdict(t: &TInterval, w: &Wilcoxon, alpha: f64, higher_is_better: bool) -> Verdict {
    let w_sig = w.p_value < alpha;
    let b_lower = t.high < 0.0 && w_sig && w.w_minus > w.w_plus;
    let b_higher = t.low > 0.0 && w_sig && w.w_plus > w.w_minus;
    match (b_lower, b_higher, higher_is_better) {
        (true, _, false) | (_, true, true) => Verdict::BFaster,
        (_, true, false) | (true, _, true) => Verdict::AFaster,
        _ => Verdict::NoSignificantDifference,
    }
}

/// Summary of one side.
#[derive(Clone, Debug, Serialize)]
pub struct SideSummary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Run-to-run jitter: coefficient of variation (sd / mean), in %.
    pub cv_pct: f64,
    /// Within-session drift: least-squares slope of the value against the global run index, in % of the mean per
    /// run (positive: getting slower over the session).
    pub drift_pct_per_run: f64,
}

fn summarize(runs: &[&Run]) -> SideSummary {
    let v: Vec<f64> = runs.iter().map(|r| r.value).collect();
    let x: Vec<f64> = runs.iter().map(|r| r.index as f64).collect();
    let m = stats::mean(&v);
    SideSummary {
        n: v.len(),
        mean: m,
        median: stats::median(&v),
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        cv_pct: 100.0 * stats::coefficient_of_variation(&v),
        drift_pct_per_run: 100.0 * stats::ls_slope(&x, &v) / m,
    }
}

/// One pair.
#[derive(Clone, Debug, Serialize)]
pub struct PairResult {
    pub pair: usize,
    /// "AB" or "BA".
    pub order: String,
    pub a: f64,
    pub b: f64,
    /// `b / a - 1` (e.g. -0.05: B 5% lower than A).
    pub rel_diff: f64,
}

/// The full analysis of a set of ABBA runs.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    pub pairs: Vec<PairResult>,
    pub a: SideSummary,
    pub b: SideSummary,
    /// Median of `b/a - 1` over pairs.
    pub median_rel_diff: f64,
    /// Paired t interval on `b/a - 1` at confidence `1 - alpha`.
    pub t: TInterval,
    /// Wilcoxon signed-rank test on `b/a - 1`.
    pub wilcoxon: Wilcoxon,
    pub alpha: f64,
    pub higher_is_better: bool,
    pub verdict: Verdict,
}

/// Analyzes runs produced by [`run_abba`] (each pair needs one A and one B with positive finite values).
pub fn analyze(runs: &[Run], alpha: f64, higher_is_better: bool) -> Result<Analysis, AbbaError> {
    for r in runs {
        if !(r.value.is_finite() && r.value > 0.0) {
            return Err(AbbaError::BadValue {
                index: r.index,
                side: r.side,
                value: r.value,
            });
        }
    }
    let n_pairs = runs.iter().map(|r| r.pair + 1).max().unwrap_or(0);
    if n_pairs < 2 {
        return Err(AbbaError::TooFewPairs(n_pairs));
    }
    let mut pairs = Vec::with_capacity(n_pairs);
    for p in 0..n_pairs {
        let of =
            |s: Side| -> Vec<&Run> { runs.iter().filter(|r| r.pair == p && r.side == s).collect() };
        let (ra, rb) = (of(Side::A), of(Side::B));
        if ra.len() != 1 || rb.len() != 1 {
            return Err(AbbaError::IncompletePair(p));
        }
        let (ra, rb) = (ra[0], rb[0]);
        pairs.push(PairResult {
            pair: p,
            order: if ra.index < rb.index { "AB" } else { "BA" }.to_string(),
            a: ra.value,
            b: rb.value,
            rel_diff: rb.value / ra.value - 1.0,
        });
    }
    let d: Vec<f64> = pairs.iter().map(|p| p.rel_diff).collect();
    let t = stats::paired_t_interval(&d, 1.0 - alpha).ok_or(AbbaError::TooFewPairs(n_pairs))?;
    let wilcoxon = stats::wilcoxon_signed_rank(&d);
    let side = |s: Side| -> Vec<&Run> { runs.iter().filter(|r| r.side == s).collect() };
    Ok(Analysis {
        a: summarize(&side(Side::A)),
        b: summarize(&side(Side::B)),
        median_rel_diff: stats::median(&d),
        verdict: verdict(&t, &wilcoxon, alpha, higher_is_better),
        pairs,
        t,
        wilcoxon,
        alpha,
        higher_is_better,
    })
}

/// Human-readable report: per-pair table, side summaries, tests and verdict. `unit` labels the values ("s").
pub fn render_report(an: &Analysis, a: &Cmd, b: &Cmd, unit: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "A: {}", a.display());
    let _ = writeln!(s, "B: {}", b.display());
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>4}  {:>5}  {:>12}  {:>12}  {:>9}",
        "pair",
        "order",
        format!("A [{unit}]"),
        format!("B [{unit}]"),
        "B/A-1"
    );
    for p in &an.pairs {
        let _ = writeln!(
            s,
            "{:>4}  {:>5}  {:>12.6}  {:>12.6}  {:>+8.2}%",
            p.pair,
            p.order,
            p.a,
            p.b,
            100.0 * p.rel_diff
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>4}  {:>12}  {:>12}  {:>12}  {:>12}  {:>8}  {:>12}",
        "side", "mean", "median", "min", "max", "CV", "drift/run"
    );
    for (name, x) in [("A", &an.a), ("B", &an.b)] {
        let _ = writeln!(
            s,
            "{:>4}  {:>12.6}  {:>12.6}  {:>12.6}  {:>12.6}  {:>7.2}%  {:>+11.3}%",
            name, x.mean, x.median, x.min, x.max, x.cv_pct, x.drift_pct_per_run
        );
    }
    let _ = writeln!(s);
    let t = &an.t;
    let _ = writeln!(
        s,
        "B/A-1: median {:+.2}%, mean {:+.2}%, paired t {:.0}% CI [{:+.2}%, {:+.2}%] (p = {:.4})",
        100.0 * an.median_rel_diff,
        100.0 * t.mean,
        100.0 * t.confidence,
        100.0 * t.low,
        100.0 * t.high,
        t.p_value
    );
    let w = &an.wilcoxon;
    let _ = writeln!(
        s,
        "Wilcoxon signed-rank ({:?}, n = {}, {} zero(s) dropped): W+ = {}, W- = {}, p = {:.4}",
        w.method, w.n_used, w.n_zeros, w.w_plus, w.w_minus, w.p_value
    );
    if w.n_used > 0 && w.n_used <= stats::WILCOXON_EXACT_MAX_N {
        let min_p = 2.0 / 2f64.powi(w.n_used as i32);
        if min_p >= an.alpha {
            let _ = writeln!(
                s,
                "note: with {} non-zero pairs the smallest possible Wilcoxon p is {:.4} >= alpha {}: use more pairs",
                w.n_used, min_p, an.alpha
            );
        }
    }
    let _ = writeln!(
        s,
        "verdict ({} is better, both tests at alpha = {}): {}",
        if an.higher_is_better {
            "higher"
        } else {
            "lower"
        },
        an.alpha,
        an.verdict
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_abba() {
        let s: String = abba_schedule(4)
            .iter()
            .map(|(_, side)| if *side == Side::A { 'A' } else { 'B' })
            .collect();
        assert_eq!(s, "ABBAABBA");
        let pairs: Vec<usize> = abba_schedule(3).iter().map(|(p, _)| *p).collect();
        assert_eq!(pairs, [0, 0, 1, 1, 2, 2]);
    }

    /// Builds runs following the schedule with `f(global index, side)` as value.
    fn synth(pairs: usize, f: impl Fn(usize, Side) -> f64) -> Vec<Run> {
        abba_schedule(pairs)
            .into_iter()
            .enumerate()
            .map(|(index, (pair, side))| Run {
                index,
                pair,
                side,
                value: f(index, side),
            })
            .collect()
    }

    #[test]
    fn abba_cancels_linear_drift() {
        // Same true cost for A and B plus a strong linear drift: the differences alternate in sign and cancel.
        let runs = synth(8, |i, _| 1.0 + 0.01 * i as f64);
        let an = analyze(&runs, 0.05, false).unwrap();
        assert_eq!(an.verdict, Verdict::NoSignificantDifference);
        assert!(an.t.mean.abs() < 2e-3, "mean rel diff {}", an.t.mean);
        assert!((an.a.drift_pct_per_run - an.b.drift_pct_per_run).abs() < 0.1);
        assert!(
            an.a.drift_pct_per_run > 0.5,
            "drift {}",
            an.a.drift_pct_per_run
        );
        let orders: Vec<&str> = an.pairs.iter().map(|p| p.order.as_str()).collect();
        assert_eq!(orders, ["AB", "BA", "AB", "BA", "AB", "BA", "AB", "BA"]);
    }

    #[test]
    fn verdict_directions() {
        // B 10% slower with small deterministic jitter -> A faster.
        let jitter = |i: usize| 1.0 + 0.002 * ((i * 7919) % 5) as f64;
        let runs = synth(8, |i, s| jitter(i) * if s == Side::B { 1.1 } else { 1.0 });
        let an = analyze(&runs, 0.05, false).unwrap();
        assert_eq!(an.verdict, Verdict::AFaster);
        assert!(an.t.low > 0.05 && an.t.high < 0.15, "{:?}", an.t);
        // Higher-is-better flips it.
        assert_eq!(
            analyze(&runs, 0.05, true).unwrap().verdict,
            Verdict::BFaster
        );
        // B 10% faster -> B faster.
        let runs = synth(8, |i, s| jitter(i) * if s == Side::B { 0.9 } else { 1.0 });
        assert_eq!(
            analyze(&runs, 0.05, false).unwrap().verdict,
            Verdict::BFaster
        );
    }

    #[test]
    fn verdict_needs_both_tests() {
        // 6 pairs, one against the trend: t-test significant (p = 0.018) but exact Wilcoxon p = 0.0625 (see
        // stats tests: scipy values for this d) -> no verdict.
        let d = [0.031, 0.052, -0.004, 0.018, 0.027, 0.044];
        let t = stats::paired_t_interval(&d, 0.95).unwrap();
        let w = stats::wilcoxon_signed_rank(&d);
        assert!(t.low > 0.0 && w.p_value > 0.05);
        assert_eq!(
            verdict(&t, &w, 0.05, false),
            Verdict::NoSignificantDifference
        );
        // Wilcoxon significant (all positive) but one huge outlier widens the t interval across 0.
        let d = [0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 3.0];
        let d: Vec<f64> = d
            .iter()
            .enumerate()
            .map(|(i, v)| v + 1e-4 * i as f64)
            .collect();
        let t = stats::paired_t_interval(&d, 0.95).unwrap();
        let w = stats::wilcoxon_signed_rank(&d);
        assert!(t.low < 0.0 && w.p_value < 0.05, "{t:?} {w:?}");
        assert_eq!(
            verdict(&t, &w, 0.05, false),
            Verdict::NoSignificantDifference
        );
    }

    #[test]
    fn analyze_rejects_bad_input() {
        let mut runs = synth(3, |_, _| 1.0);
        runs[2].value = 0.0;
        assert!(matches!(
            analyze(&runs, 0.05, false),
            Err(AbbaError::BadValue { index: 2, .. })
        ));
        let runs = synth(3, |_, _| 1.0);
        assert!(matches!(
            analyze(&runs[..5], 0.05, false),
            Err(AbbaError::IncompletePair(2))
        ));
        assert!(matches!(
            analyze(&runs[..2], 0.05, false),
            Err(AbbaError::TooFewPairs(1))
        ));
    }

    #[test]
    fn regex_metric_and_failures() {
        let m = Metric::regex(r"prove: ([0-9.]+) s").unwrap();
        let cmd = Cmd::Shell("echo 'prove: 9.0 s'; echo 'prove: 1.25 s' >&2".into());
        assert_eq!(measure(&cmd, &m).unwrap(), 1.25);
        assert!(matches!(
            measure(&Cmd::Shell("echo nothing".into()), &m),
            Err(AbbaError::MetricMissing { .. })
        ));
        assert!(matches!(
            measure(&Cmd::Shell("exit 3".into()), &Metric::WallClock),
            Err(AbbaError::Failed { .. })
        ));
        assert!(Metric::regex("no group").is_err());
        let argv = Cmd::Argv(vec!["sh".into(), "-c".into(), "echo 'prove: 2 s'".into()]);
        assert_eq!(measure(&argv, &m).unwrap(), 2.0);
        assert_eq!(argv.display(), "sh -c 'echo '\\''prove: 2 s'\\'''");
        assert!(matches!(
            measure(&Cmd::Argv(vec!["/nonexistent/zkrv".into()]), &m),
            Err(AbbaError::Spawn { .. })
        ));
    }
}
