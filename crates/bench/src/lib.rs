//! zkrv-bench: the zkrv benchmark suite and the ABBA paired-comparison tool (`zkrv-abba`, see docs/PERF.md
//! `## ABBA tool`).
//!
//! - [`stats`]: paired t interval, exact Wilcoxon signed-rank test, moments, drift slope;
//! - [`abba`]: ABBA schedule, running/measuring commands, analysis, verdict and report;
//! - [`suite`]: the `zkrv-suite` case lists, runner and JSON/Markdown reports (docs/PERF.md `## Suite`).

pub mod abba;
pub mod stats;
pub mod suite;
