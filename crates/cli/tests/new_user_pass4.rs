//! Findings of the fourth new-user pass (task nufix): the proof's hash is named by `prove` and `verify`
//! (and in the estimate), GPU-only flags on the CPU backend get a note, and `verify --json` tells a
//! policy refusal (`--min-security`) from an invalid proof.

use std::path::PathBuf;
use std::process::{Command, Output};

const GUESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
const ZKRV: &str = env!("CARGO_BIN_EXE_zkrv");

fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zkrv-nu4-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn zkrv(args: &[&str]) -> Output {
    Command::new(ZKRV).args(args).output().expect("zkrv runs")
}

fn fib() -> (String, String) {
    (
        format!("{GUESTS}/bin/fibonacci.elf"),
        format!("{GUESTS}/inputs/fibonacci.bin"),
    )
}

/// A `--security dev --no-zk` proof of fibonacci on the CPU hashed with `hash`, plus `extra` options;
/// returns the proof path and the prove output.
fn prove(dir: &std::path::Path, hash: &str, extra: &[&str]) -> (String, Output) {
    let (elf, input) = fib();
    let p = dir
        .join(format!("{hash}.zkrv"))
        .to_str()
        .unwrap()
        .to_string();
    let mut args = vec![
        "prove",
        &elf,
        "--input",
        &input,
        "-o",
        &p,
        "--no-zk",
        "--security",
        "dev",
        "--backend",
        "cpu",
        "--hash",
        hash,
    ];
    args.extend_from_slice(extra);
    let out = zkrv(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (p, out)
}

/// Item 1: `prove`'s header and summary, `verify`'s lines and `verify --json` (`hash`) name the hash; the
/// estimate of a Poseidon2 proof says it includes Poseidon2's factor.
#[test]
fn the_proofs_hash_is_named() {
    let dir = scratch("hash");
    let (elf, _) = fib();
    for hash in ["keccak", "poseidon2"] {
        let (p, out) = prove(&dir, hash, &[]);
        let (o, e) = (text(&out.stdout), text(&out.stderr));
        assert!(o.contains(&format!("hash                {hash}\n")), "{o}");
        assert!(
            e.contains(&format!("NOT zero-knowledge, {hash} hash)")),
            "{e}"
        );
        let factor = e.contains("--hash poseidon2: 10x the Keccak time");
        assert_eq!(factor, hash == "poseidon2", "{e}");
        let out = zkrv(&["verify", &p, &elf, "--min-security", "0"]);
        let o = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{o}{}", text(&out.stderr));
        assert!(o.contains(&format!("hash                {hash}\n")), "{o}");
        let out = zkrv(&["verify", &p, &elf, "--min-security", "0", "--json"]);
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(j["hash"], hash, "{j}");
        assert_eq!(j["valid"], true, "{j}");
    }
}

/// Item 3: `--gpu-memory` and `--cpu-trace` on the CPU backend say they have no effect (as `--gpus`).
#[test]
fn gpu_only_flags_on_the_cpu_get_a_note() {
    let dir = scratch("gpuflags");
    let (_, out) = prove(&dir, "keccak", &["--gpu-memory", "4", "--cpu-trace"]);
    let e = text(&out.stderr);
    assert!(
        e.contains(
            "zkrv: note: --gpu-memory 4 has no effect: it caps the GPU backend's device memory"
        ),
        "{e}"
    );
    assert!(
        e.contains("zkrv: note: --cpu-trace has no effect: it is for the GPU backend"),
        "{e}"
    );
    // Without them, no note.
    let (_, out) = prove(&dir, "keccak", &[]);
    let e = text(&out.stderr);
    assert!(
        !e.contains("--gpu-memory") && !e.contains("--cpu-trace"),
        "{e}"
    );
}

/// Item 4: a valid dev proof below `--min-security` is `"error_kind": "too_weak"` with `"proof_valid":
/// true`; the same proof with a flipped byte is not `proof_valid`; another program is `wrong_program`.
#[test]
fn verify_json_tells_policy_from_forgery() {
    let dir = scratch("policy");
    let (elf, _) = fib();
    let (p, _) = prove(&dir, "keccak", &[]);
    let out = zkrv(&["verify", &p, &elf, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(j["valid"], false, "{j}");
    assert_eq!(j["accepted"], false, "{j}");
    assert_eq!(j["error_kind"], "too_weak", "{j}");
    assert_eq!(j["proof_valid"], true, "{j}");
    let e = text(&out.stderr);
    assert!(e.contains("below --min-security 100"), "{e}");
    assert!(
        e.contains("the proof itself is valid (a policy refusal, not a forgery)"),
        "{e}"
    );
    // A flipped byte in the proof's last part (the FRI openings): a dev proof that is also invalid.
    let mut bytes = std::fs::read(&p).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 1;
    let q = dir.join("flipped.zkrv");
    std::fs::write(&q, &bytes).unwrap();
    let q = q.to_str().unwrap();
    let out = zkrv(&["verify", q, &elf, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["valid"], false, "{j}");
    assert_ne!(j["proof_valid"], true, "{j}");
    let out = zkrv(&["verify", q, &elf, "--json", "--min-security", "0"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        j["error_kind"] == "invalid" || j["error_kind"] == "malformed",
        "{j}"
    );
    let other = format!("{GUESTS}/bin/exitcode.elf");
    let out = zkrv(&["verify", &p, &other, "--json", "--min-security", "0"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["error_kind"], "wrong_program", "{j}");
}
