//! `zkrv prove` / `zkrv verify` end to end on the `exitcode` guest (the bundled guest the machine AIR supports
//! today: 138 cycles, output "bye", exit code 42). One proof is made (about 8 s in release on 2 cores) and
//! shared by the tests; each tampered copy must be rejected with its own message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod common;
use common::*;

/// The shared proof of `exitcode` (path to the proof file, prove's output).
fn fixture() -> &'static (PathBuf, Output) {
    static F: OnceLock<(PathBuf, Output)> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempdir("fixture");
        let proof = dir.join("exitcode.zkrv");
        let json = dir.join("profile.json");
        let out = zkrv(&[
            "prove",
            &bundled("exitcode"),
            "-o",
            proof.to_str().unwrap(),
            "--backend",
            "cpu",
            "--profile",
            "--stats",
            "--profile-json",
            json.to_str().unwrap(),
        ]);
        (proof, out)
    })
}

fn proof_bytes() -> Vec<u8> {
    let (path, out) = fixture();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::read(path).unwrap()
}

/// Verifies `bytes` (written to a temp file) against `elf_name`.
fn verify_bytes(tag: &str, bytes: &[u8], elf_name: &str) -> Output {
    let dir = tempdir(tag);
    let p = dir.join("p.zkrv");
    std::fs::write(&p, bytes).unwrap();
    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        p.to_str().unwrap(),
        &bundled(elf_name),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn assert_rejected(out: &Output, msg: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains("proof rejected"), "{err}");
    assert!(err.contains(msg), "expected {msg:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn prove_then_verify() {
    let (path, out) = fixture();
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(so.contains("exit code           42"), "{so}");
    assert!(so.contains("(\"bye\")"), "{so}");
    assert!(so.contains("cycles              138"), "{so}");
    assert!(so.contains("cycles/s"), "{so}");
    // One honest security line for the default preset (docs/stark.md "Security").
    assert!(
        so.contains(
            "security            102 bits provable (Johnson regime, BCHKS25); 100-bit preset"
        ),
        "{so}"
    );
    // --profile table names the prover stages; --stats on the CPU says there are no transfers.
    for stage in [
        "main commit",
        "LDE",
        "Merkle",
        "LogUp aux",
        "quotient",
        "DEEP+FRI open",
    ] {
        assert!(so.contains(stage), "missing stage {stage}: {so}");
    }
    assert!(so.contains("peak host memory"), "{so}");
    assert!(so.contains("no host<->device transfers"), "{so}");
    // The directory holds the proof and the profile, no temporary file.
    let dir = path.parent().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["exitcode.zkrv", "profile.json"]);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("profile.json")).unwrap()).unwrap();
    assert_eq!(json["cycles"], 138);
    assert_eq!(json["proof_bytes"], std::fs::metadata(path).unwrap().len());
    let stages = json["stages"].as_array().unwrap();
    assert!(stages
        .iter()
        .any(|s| s["name"] == "prove/main commit/LDE" && s["secs"].as_f64().unwrap() > 0.0));

    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        path.to_str().unwrap(),
        &bundled("exitcode"),
    ]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(so.contains("proof OK"), "{so}");
    assert!(so.contains("exit code           42"), "{so}");
    assert!(so.contains("627965 (\"bye\")"), "{so}");
    assert!(so.contains("security            102 bits provable"), "{so}");
    // The default preset's proof is below a 128-bit demand.
    let out = zkrv(&[
        "verify",
        path.to_str().unwrap(),
        &bundled("exitcode"),
        "--min-security",
        "128",
    ]);
    assert_rejected(&out, "102 bits provable, below --min-security 128");
    // The hint names a preset that meets the minimum asked for (103, above the default preset's 102 bits:
    // the 128-bit one), or says none does.
    for (min, hint) in [
        (
            "103",
            "below --min-security 103 (prove with `--security 128`, built for 128 bits provable",
        ),
        (
            "129",
            "below --min-security 129 (no preset reaches 129 bits: the strongest, `--security 128`",
        ),
    ] {
        let out = zkrv(&[
            "verify",
            path.to_str().unwrap(),
            &bundled("exitcode"),
            "--min-security",
            min,
        ]);
        assert_rejected(&out, hint);
        assert!(!text(&out.stderr).contains("--security 100"), "{min}");
    }
}

/// `--security dev` proofs say they are below 100 bits; `verify` refuses them by default with a clear message
/// and accepts them with `--min-security 0`. `--security-report` prints the round-by-round table.
#[test]
fn dev_preset_is_refused_below_min_security() {
    let dir = tempdir("dev");
    let proof = dir.join("dev.zkrv");
    let p = proof.to_str().unwrap();
    let out = zkrv(&[
        "prove",
        &bundled("exitcode"),
        "-o",
        p,
        "--security",
        "dev",
        "--backend",
        "cpu",
        "--security-report",
    ]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        so.contains("59 bits provable (Johnson regime, BCHKS25), below 100 bits; dev preset (below 100 bits)"),
        "{so}"
    );
    for row in [
        "unique decoding",
        "batching (",
        "FRI fold 1 ",
        "FRI queries (44)",
        "DEEP",
        "ALI",
        "LogUp",
    ] {
        assert!(so.contains(row), "missing {row}: {so}");
    }
    let out = zkrv(&["verify", p, &bundled("exitcode")]);
    assert_rejected(
        &out,
        "the proof's parameters (dev preset (below 100 bits)) give 59 bits provable, below --min-security 100",
    );
    let out = zkrv(&[
        "verify",
        p,
        &bundled("exitcode"),
        "--min-security",
        "0",
        "--any-exit-code",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("below 100 bits"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `zkrv security` prints a preset's table at the largest height; a bad level or height is a usage error.
#[test]
fn security_command_prints_the_table() {
    let out = zkrv(&["security", "--security", "128"]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(so.contains("every table 2^26 rows"), "{so}");
    assert!(so.contains("total (hash cap 128)"), "{so}");
    assert!(
        so.contains("security            128 bits provable (Johnson regime, BCHKS25)"),
        "{so}"
    );
    // The margin over the level, at least 1 bit (crates/machine/tests/security.rs sweeps every height).
    let margin: f64 = so
        .lines()
        .find_map(|l| l.strip_prefix("margin"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("no margin line: {so}"));
    assert!(margin >= 1.0, "{so}");
    assert!(so.contains("bits over 128 (weakest round 129."), "{so}");
    let out = zkrv(&[
        "security",
        "--security",
        "dev",
        "--no-zk",
        "--log-height",
        "22",
    ]);
    assert!(
        text(&out.stdout).contains("59 bits provable"),
        "{}",
        text(&out.stdout)
    );
    for bad in [
        &["security", "--security", "80"][..],
        &["security", "--log-height", "27"],
    ] {
        let out = zkrv(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!text(&out.stderr).contains("panicked"));
    }
}

/// zk is the default (`zero knowledge      yes`); `--no-zk` proves without it; `verify` accepts both and says
/// which; two zk proofs of the same run differ (fresh OS randomness) and both verify.
#[test]
fn zk_by_default_and_no_zk_on_request() {
    let (path, out) = fixture();
    let so = text(&out.stdout);
    assert!(so.contains("zero knowledge      yes"), "{so}");
    assert!(text(&out.stderr).contains("zero-knowledge"));
    let zk_a = std::fs::read(path).unwrap();

    let dir = tempdir("nozk");
    let plain = dir.join("plain.zkrv");
    let again = dir.join("again.zkrv");
    let out = zkrv(&[
        "prove",
        &bundled("exitcode"),
        "-o",
        plain.to_str().unwrap(),
        "--backend",
        "cpu",
        "--no-zk",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let so = text(&out.stdout);
    assert!(so.contains("zero knowledge      no"), "{so}");
    assert!(text(&out.stderr).contains("NOT zero-knowledge"));
    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        plain.to_str().unwrap(),
        &bundled("exitcode"),
    ]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        so.contains("proof OK") && so.contains("zero knowledge      no"),
        "{so}"
    );
    let plain_bytes = std::fs::read(&plain).unwrap();
    assert!(plain_bytes.len() < zk_a.len(), "a --no-zk proof is smaller");

    let out = zkrv(&[
        "prove",
        &bundled("exitcode"),
        "-o",
        again.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let zk_b = std::fs::read(&again).unwrap();
    assert_ne!(zk_a, zk_b, "two zk proofs of one run differ");
    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        again.to_str().unwrap(),
        &bundled("exitcode"),
    ]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(so.contains("zero knowledge      yes"), "{so}");

    // --zk-test-seed: deterministic (for CPU/GPU parity), warned about, still verifies.
    let s1 = dir.join("s1.zkrv");
    let s2 = dir.join("s2.zkrv");
    for p in [&s1, &s2] {
        let out = zkrv(&[
            "prove",
            &bundled("exitcode"),
            "-o",
            p.to_str().unwrap(),
            "--backend",
            "cpu",
            "--zk-test-seed",
            "7",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("NOT zero-knowledge"));
    }
    assert_eq!(std::fs::read(&s1).unwrap(), std::fs::read(&s2).unwrap());
    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        s1.to_str().unwrap(),
        &bundled("exitcode"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // The header's mode byte (offset 8 + 4 + 7) disagreeing with the proof is rejected.
    let mut forged = zk_a.clone();
    forged[19] = 0;
    assert_rejected(&verify_bytes("zkflag", &forged, "exitcode"), "zk flag");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_rejects_truncated_proof() {
    let b = proof_bytes();
    for cut in [b.len() - 1, b.len() / 2, 40, 10, 3] {
        let out = verify_bytes("trunc", &b[..cut], "exitcode");
        assert_rejected(&out, "truncated");
    }
}

#[test]
fn verify_rejects_flipped_byte() {
    let b = proof_bytes();
    // A byte deep in the STARK proof (query openings / Merkle paths).
    // (zk proofs draw fresh randomness, so the byte may be a value or a length prefix: either rejection.)
    let mut t = b.clone();
    let i = t.len() - 1000;
    t[i] ^= 0x01;
    let out = verify_bytes("flip", &t, "exitcode");
    let err = text(&out.stderr);
    let msg = if err.contains("malformed proof") {
        "malformed proof"
    } else {
        "invalid proof"
    };
    assert_rejected(&out, msg);
    // The public output byte: "bye" -> "cye" no longer matches what was proved.
    let i = b.windows(3).position(|w| w == b"bye").unwrap();
    let mut t = b.clone();
    t[i] = b'c';
    assert_rejected(&verify_bytes("flipout", &t, "exitcode"), "invalid proof");
}

#[test]
fn verify_rejects_other_program() {
    let b = proof_bytes();
    assert_rejected(
        &verify_bytes("other", &b, "fibonacci"),
        "the proof is for another program",
    );
}

#[test]
fn verify_rejects_other_files_and_versions() {
    let b = proof_bytes();
    // An ELF is not a proof file.
    let not_proof = std::fs::read(bundled("exitcode")).unwrap();
    assert_rejected(
        &verify_bytes("notzkrv", &not_proof, "exitcode"),
        "not a zkrv proof file",
    );
    assert_rejected(
        &verify_bytes("empty", b"", "exitcode"),
        "not a zkrv proof file",
    );
    let mut t = b.clone();
    t[8] = 99; // format version
    assert_rejected(
        &verify_bytes("version", &t, "exitcode"),
        "format version 99, but this zkrv reads versions 3 (one proof) and 4 (segments) only",
    );
    // The other version's number on this version-3 file: the version field is named, not the layout.
    let mut t = b.clone();
    t[8] = 4;
    assert_rejected(
        &verify_bytes("version4", &t, "exitcode"),
        "the version field says 4 (segments), but the file is laid out as version 3 (one proof)",
    );
    // Tampered table heights (the STARK proof's header): checked by the verifier before its security
    // estimate, and named with the table, not an "internal error". Offsets: the statement section
    // at 20, the proof section after it: page count u64, pages u32 each, then the STARK proof's magic 4,
    // version 2, zk 1, statement digest 32, table count 4, heights.
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize;
    let proof = 28 + u64_at(20) + 8;
    let heights = proof + 8 + 4 * u64_at(proof) + 43;
    let mut t = b.clone();
    t[heights] ^= 0x80;
    let out = verify_bytes("heights", &t, "exitcode");
    assert_rejected(&out, "invalid proof: table CPU: log height ");
    assert!(text(&out.stderr).contains("out of range [1, 26]"));
    assert!(!text(&out.stderr).contains("internal"));
    let mut t = b.clone();
    t.push(0);
    assert_rejected(&verify_bytes("trailing", &t, "exitcode"), "trailing bytes");
    let mut t = b.clone();
    t[13] = 1; // num_queries low byte: weaker parameters are refused
    assert_rejected(&verify_bytes("params", &t, "exitcode"), "STARK parameters");
}

#[test]
fn verify_missing_file_is_a_host_error() {
    let out = zkrv(&["verify", "/nonexistent/p.zkrv", &bundled("exitcode")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("reading proof file /nonexistent/p.zkrv"),
        "{err}"
    );
}

#[test]
fn prove_into_missing_directory_fails_cleanly() {
    let dir = tempdir("nodir");
    let target = dir.join("missing").join("p.zkrv");
    let out = zkrv(&[
        "prove",
        &bundled("exitcode"),
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
    assert!(!Path::new(&target).exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn prove_failure_leaves_no_file() {
    // Not an ELF: fails before proving; nothing at the destination.
    let dir = tempdir("fail");
    let bad = dir.join("bad.elf");
    std::fs::write(&bad, b"not an elf").unwrap();
    let target = dir.join("p.zkrv");
    let out = zkrv(&[
        "prove",
        bad.to_str().unwrap(),
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!target.exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn backend_gpu_without_gpu_is_a_clear_error() {
    let dir = tempdir("gpu");
    let target = dir.join("p.zkrv");
    let out = zkrv(&[
        "prove",
        &bundled("exitcode"),
        "-o",
        target.to_str().unwrap(),
        "--backend",
        "gpu",
    ]);
    let err = text(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    if out.status.code() == Some(0) {
        eprintln!("a GPU is present: --backend gpu proved");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--backend gpu: no usable GPU"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn prove_verify_fibonacci_with_input() {
    let dir = tempdir("fib");
    let proof = dir.join("fib.zkrv");
    let input = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../guests/inputs/fibonacci.bin"
    );
    let out = zkrv(&[
        "prove",
        &bundled("fibonacci"),
        "--input",
        input,
        "-o",
        proof.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = zkrv(&["verify", proof.to_str().unwrap(), &bundled("fibonacci")]);
    let _ = std::fs::remove_dir_all(&dir);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // fib(90) = 2880067194370816120, little-endian.
    let want: String = 2880067194370816120u64
        .to_le_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(so.contains(&format!("8 bytes: {want}")), "{so}");
    assert!(so.contains("exit code           0"), "{so}");
}

fn zkrv_env(env: &[(&str, &str)], args: &[&str]) -> Output {
    zkrv_bin()
        .envs(env.iter().copied())
        .args(args)
        .output()
        .expect("zkrv runs")
}

/// `ZKRV_LDE` (CPU prover LDE mode): an unknown value is a host error naming the variable, raised before any
/// work; `store` and `recompute` give byte-identical proofs (with `--no-zk`, deterministic), which verify.
#[test]
fn zkrv_lde_env_selects_the_lde_mode() {
    let dir = tempdir("lde");
    let prove = |mode: &str, name: &str| {
        let proof = dir.join(name);
        let out = zkrv_env(
            &[("ZKRV_LDE", mode)],
            &[
                "prove",
                &bundled("exitcode"),
                "-o",
                proof.to_str().unwrap(),
                "--backend",
                "cpu",
                "--no-zk",
            ],
        );
        (proof, out)
    };
    for bad in ["bogus", "Recompute", " store"] {
        let (proof, out) = prove(bad, "bad.zkrv");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "ZKRV_LDE={bad:?}: {err}");
        assert!(err.contains("ZKRV_LDE"), "ZKRV_LDE={bad:?}: {err}");
        assert!(
            !err.contains("proving ") && !err.contains("panicked"),
            "ZKRV_LDE={bad:?} refused late: {err}"
        );
        assert!(!proof.exists(), "ZKRV_LDE={bad:?} left a proof file");
    }
    let (p_store, out) = prove("store", "store.zkrv");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (p_rec, out) = prove("recompute", "recompute.zkrv");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let store = std::fs::read(&p_store).unwrap();
    assert_eq!(
        std::fs::read(&p_rec).unwrap(),
        store,
        "ZKRV_LDE=store and =recompute give the same proof file"
    );
    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        p_rec.to_str().unwrap(),
        &bundled("exitcode"),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("exit code           42"),
        "{}",
        text(&out.stdout)
    );
}

/// A `ZKRV_LDE` value that is not UTF-8 is refused like any unknown value (fresh-user finding: it was taken as
/// `auto`).
#[test]
#[cfg(unix)]
fn zkrv_lde_non_utf8_is_refused() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempdir("lde-nonutf8");
    let proof = dir.join("p.zkrv");
    let out = zkrv_bin()
        .env("ZKRV_LDE", OsStr::from_bytes(b"st\xffore"))
        .args([
            "prove",
            &bundled("exitcode"),
            "-o",
            proof.to_str().unwrap(),
            "--backend",
            "cpu",
            "--no-zk",
        ])
        .output()
        .expect("zkrv runs");
    let err = text(&out.stderr);
    let written = proof.exists();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ZKRV_LDE") && err.contains("UTF-8"), "{err}");
    assert!(!written, "a non-UTF-8 ZKRV_LDE left a proof file");
}

/// A summary that cannot be written to stdout (`> /dev/full`) is an output error naming stdout, not a
/// "failed" prover or verifier (fresh-user finding); the proof file is complete.
#[test]
#[cfg(target_os = "linux")]
fn stdout_write_failure_is_reported_as_such() {
    let (proof, _) = fixture();
    let full = || std::fs::File::create("/dev/full").expect("/dev/full");
    let out = zkrv_bin()
        .args([
            "verify",
            "--any-exit-code",
            proof.to_str().unwrap(),
            &bundled("exitcode"),
        ])
        .stdout(full())
        .output()
        .expect("zkrv runs");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("writing stdout"), "{err}");
    assert!(!err.contains("failed:"), "{err}");
    let dir = tempdir("devfull");
    let p = dir.join("p.zkrv");
    let out = zkrv_bin()
        .args([
            "prove",
            &bundled("exitcode"),
            "-o",
            p.to_str().unwrap(),
            "--no-zk",
        ])
        .args(["--backend", "cpu"])
        .stdout(full())
        .output()
        .expect("zkrv runs");
    let err = text(&out.stderr);
    let verified = zkrv(&[
        "verify",
        "--any-exit-code",
        p.to_str().unwrap(),
        &bundled("exitcode"),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("writing stdout"), "{err}");
    assert_eq!(
        verified.status.code(),
        Some(0),
        "the proof file is complete"
    );
}

/// `ZKRV_LDE=auto` respects `ulimit -v` (fresh-user finding: under a 3 GB address-space limit the zk proof of
/// `sort` aborted with `memory allocation failed` because `auto` only looked at the system's free memory):
/// with the limit it recomputes LDEs, proves and verifies, and the proof equals the unlimited one.
#[test]
#[cfg(target_os = "linux")]
fn auto_lde_mode_respects_ulimit_v() {
    let dir = tempdir("ulimit");
    let bin = env!("CARGO_BIN_EXE_zkrv");
    let sort = bundled("sort");
    let input = format!(
        "{}/../../guests/inputs/sort.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let prove = |name: &str, limit: &str| {
        let p = dir.join(name);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{limit} exec \"$0\" prove \"$1\" --input \"$2\" -o \"$3\" --backend cpu --zk-test-seed 11 --profile"
            ))
            .args([bin, &sort, &input, p.to_str().unwrap()])
            .env_remove("ZKRV_LDE")
            .output()
            .expect("sh runs");
        (p, out)
    };
    let (limited, out) = prove("limited.zkrv", "ulimit -v 3000000 &&");
    let log = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}{}", log, text(&out.stderr));
    assert!(
        log.contains("LDE blocks + Merkle"),
        "auto did not recompute under the limit:\n{log}"
    );
    let (free, out) = prove("free.zkrv", "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (a, b) = (
        std::fs::read(&limited).unwrap(),
        std::fs::read(&free).unwrap(),
    );
    let verified = zkrv(&["verify", limited.to_str().unwrap(), &sort]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(a, b, "proofs under and without the limit differ");
    assert_eq!(
        verified.status.code(),
        Some(0),
        "{}",
        text(&verified.stderr)
    );
}

/// A malformed GPU setting (`ZKRV_GPU_MEMORY`, `ZKRV_GPU_LDE`) with `--backend auto` is a host error naming
/// the variable (exit 2, no proof file), not a silent fall back to the CPU.
#[test]
fn bad_gpu_env_is_an_error_not_a_cpu_fallback() {
    let dir = tempdir("gpuenv");
    for (var, bad) in [("ZKRV_GPU_MEMORY", "bogus"), ("ZKRV_GPU_LDE", "Store")] {
        let proof = dir.join("p.zkrv");
        let out = zkrv_env(
            &[(var, bad)],
            &[
                "prove",
                &bundled("exitcode"),
                "-o",
                proof.to_str().unwrap(),
                "--no-zk",
            ],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}={bad}: {err}");
        assert!(err.contains(var), "{var}={bad}: {err}");
        assert!(!proof.exists(), "{var}={bad} left a proof file");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
