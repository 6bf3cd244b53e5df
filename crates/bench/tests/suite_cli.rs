//! End-to-end test of zkrv-suite: one tiny case (exitcode) proved and verified by the workspace's release `zkrv`
//! (about 10-20 s on a loaded 2-core machine). The `zkrv` binary belongs to another crate, so it is looked up:
//! `$ZKRV_BIN`, then `$CARGO_TARGET_DIR/release/zkrv`, then `<workspace>/target/release/zkrv`; when none exists
//! the test prints a message and passes without running (build it with `cargo build --release -p zkrv`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn find_zkrv() -> Option<PathBuf> {
    let mut cands = Vec::new();
    if let Some(p) = std::env::var_os("ZKRV_BIN") {
        cands.push(PathBuf::from(p));
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        let t = PathBuf::from(t);
        let t = if t.is_absolute() {
            t
        } else {
            workspace().join(t)
        };
        cands.push(t.join("release/zkrv"));
    }
    cands.push(workspace().join("target/release/zkrv"));
    cands.into_iter().find(|p| p.is_file())
}

#[test]
fn exitcode_case_gives_json_and_markdown() {
    let Some(zkrv) = find_zkrv() else {
        eprintln!(
            "SKIPPED suite_cli: no zkrv binary ($ZKRV_BIN, $CARGO_TARGET_DIR/release/zkrv, target/release/zkrv); \
             build it with `cargo build --release -p zkrv`"
        );
        return;
    };
    let out = std::env::temp_dir().join(format!("zkrv-suite-test-{}", std::process::id()));
    let st = Command::new(env!("CARGO_BIN_EXE_zkrv-suite"))
        .current_dir(workspace())
        .args([
            "--list",
            "none",
            "--case",
            "exitcode",
            "--backend",
            "cpu",
            "--verify-runs",
            "1",
        ])
        .arg("--zkrv")
        .arg(&zkrv)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "zkrv-suite failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let json = std::fs::read_to_string(out.join("suite.json")).expect("suite.json written");
    let md = std::fs::read_to_string(out.join("suite.md")).expect("suite.md written");
    let _ = std::fs::remove_dir_all(&out);
    let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let cases = v["cases"].as_array().expect("cases array");
    assert_eq!(cases.len(), 1);
    let c = &cases[0];
    assert_eq!(c["guest"], "exitcode");
    assert_eq!(c["status"], "ok");
    assert_eq!(c["prove_exit"], 0);
    assert_eq!(c["verify_exit"], 0);
    // exitcode runs 138 cycles (guests/README.md); allow for guest rebuilds.
    let cycles = c["profile"]["cycles"].as_u64().expect("cycles");
    assert!((50..10_000).contains(&cycles), "cycles {cycles}");
    assert!(c["profile"]["proof_bytes"].as_u64().unwrap() > 1000);
    assert!(!c["profile"]["stages"].as_array().unwrap().is_empty());
    assert_eq!(c["verify_secs"].as_array().unwrap().len(), 1);
    assert_eq!(v["backend"], "cpu");
    // Markdown: the summary header and the case's row with its status.
    assert!(md.contains("| guest | input | cycles |"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| exitcode |"))
        .unwrap_or_else(|| panic!("no exitcode row in {md}"));
    assert!(row.ends_with("| ok |"), "{row}");
    assert!(row.contains(&format!("| {cycles} |")), "{row}");
    assert!(md.contains("### exitcode"), "{md}");
}

#[test]
fn missing_zkrv_names_the_build_command() {
    let st = Command::new(env!("CARGO_BIN_EXE_zkrv-suite"))
        .args(["--zkrv", "/nonexistent/zkrv", "--list", "quick"])
        .output()
        .unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("cargo build --release -p zkrv"), "{err}");
}
