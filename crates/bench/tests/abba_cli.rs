//! End-to-end tests of the zkrv-abba binary (a couple of seconds in total).

use std::process::Command;

fn abba() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zkrv-abba"))
}

fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("json written");
    serde_json::from_str(&text).expect("valid json")
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("zkrv-abba-{}-{name}.json", std::process::id()))
}

#[test]
fn sleep_short_vs_long_says_a_faster() {
    // 0.01 s vs 0.08 s: a 70 ms gap, far above process-spawn noise even on a loaded 2-core machine.
    let json = tmp("sleep");
    let out = abba()
        .args([
            "--a",
            "sleep 0.01",
            "--b",
            "sleep 0.08",
            "--pairs",
            "8",
            "--warmup",
            "0",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("verdict") && stdout.contains("A faster"),
        "{stdout}"
    );
    let v = read_json(&json);
    let _ = std::fs::remove_file(&json);
    assert_eq!(v["analysis"]["verdict"], "AFaster");
    assert_eq!(v["runs"].as_array().unwrap().len(), 16);
    let order: String = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["side"].as_str().unwrap())
        .collect();
    assert_eq!(order, "ABBAABBAABBAABBA");
    assert_eq!(v["analysis"]["wilcoxon"]["method"], "Exact");
    let lo = v["analysis"]["t"]["low"].as_f64().unwrap();
    assert!(lo > 0.0, "B should be slower, CI low {lo}");
}

#[test]
fn bin_mode_with_metric_regex() {
    // Same binary on both sides, metric parsed from its output: every difference is exactly 0 -> no verdict.
    let json = tmp("regex");
    let out = abba()
        .args([
            "--bin-a", "sh", "--bin-b", "sh", "--pairs", "3", "--warmup", "1", "--quiet",
        ])
        .args(["--metric-regex", r"prove: ([0-9.]+) s", "--json"])
        .arg(&json)
        .args(["--", "-c", "echo 'prove: 1.50 s'"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = read_json(&json);
    let _ = std::fs::remove_file(&json);
    assert_eq!(v["analysis"]["verdict"], "NoSignificantDifference");
    assert_eq!(v["analysis"]["a"]["median"].as_f64(), Some(1.5));
    assert_eq!(v["analysis"]["wilcoxon"]["n_zeros"], 3);
}

#[test]
fn failing_command_is_an_error() {
    let out = abba()
        .args([
            "--a", "true", "--b", "exit 7", "--pairs", "2", "--warmup", "0", "-q",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exit"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
