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

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Item 5: the Rust template's `src/job.rs` is compiled by the `no_std` guest and the `std` host helper;
/// a `Job` with `Vec` and `String` fields builds in both (the host helper failed with "cannot find module
/// or crate `alloc`"), and the guest reads what the helper wrote. Skips where the toolchain or crates.io
/// is missing.
#[test]
fn rust_template_job_with_vec_and_string_fields() {
    if !["/usr/bin/cargo", "/usr/bin/rustc", "ld.lld-14"]
        .iter()
        .all(|t| have(t))
    {
        eprintln!("SKIPPED rust_template_job_with_vec_and_string_fields: guest toolchain missing");
        return;
    }
    let dir = scratch("rustjob");
    let o = Command::new(ZKRV)
        .current_dir(&dir)
        .args(["new", "g", "--lang", "rust"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let g = dir.join("g");
    // Only the struct changes: the template's header (its `alloc` imports) stays.
    let job = std::fs::read_to_string(g.join("src/job.rs")).unwrap();
    let at = job.find("/// What the guest sums").expect("the Job's doc");
    let job = format!(
        "{}#[derive(serde::Serialize, serde::Deserialize)]\npub struct Job {{\n    pub items: Vec<u64>,\n    pub name: String,\n}}\n",
        &job[..at]
    );
    std::fs::write(g.join("src/job.rs"), job).unwrap();
    let main = std::fs::read_to_string(g.join("src/main.rs")).unwrap();
    let main = main.replace(
        "let sum: u64 = (1..=job.n).sum();",
        "let sum: u64 = job.items.iter().sum::<u64>() + job.name.len() as u64;",
    );
    assert!(main.contains("job.items"), "{main}");
    std::fs::write(g.join("src/main.rs"), main).unwrap();
    let clean = |c: &mut Command| {
        c.env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
    };
    // The host's cargo, as `rust_template_writes_typed_input_from_json` (tests/new_user_pass3.rs).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = Command::new(cargo);
    c.current_dir(g.join("host")).args([
        "run",
        "-q",
        "--",
        r#"{"items": [1, 2, 300], "name": "abcd"}"#,
    ]);
    clean(&mut c);
    let o = c.output().unwrap();
    let err = text(&o.stderr);
    if !o.status.success()
        && (err.contains("failed to get")
            || err.contains("Could not resolve")
            || err.contains("download"))
    {
        eprintln!(
            "SKIPPED rust_template_job_with_vec_and_string_fields: crates.io unreachable: {err}"
        );
        return;
    }
    assert!(o.status.success(), "make-input: {err}");
    // postcard: varint length 3, varints 1 2 300 (ac 02), varint length 4, "abcd"; framed by a u32 LE length.
    assert_eq!(
        o.stdout,
        [10, 0, 0, 0, 3, 1, 2, 0xac, 0x02, 4, b'a', b'b', b'c', b'd'],
        "{err}"
    );
    let input = g.join("input.bin");
    std::fs::write(&input, &o.stdout).unwrap();
    let mut c = Command::new("sh");
    c.arg(g.join("build.sh")).current_dir(&g);
    clean(&mut c);
    let built = c.output().unwrap();
    assert!(
        built.status.success(),
        "{}{}",
        text(&built.stdout),
        text(&built.stderr)
    );
    let run = zkrv(&[
        "run",
        g.join("g.elf").to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    // 1 + 2 + 300 + 4 = 307: the u64 frame [2 0 0 0, b3 02].
    assert_eq!(run.stdout, [2, 0, 0, 0, 0xb3, 0x02]);
}

/// Item 6: the C template links `printf`, `puts`, `fprintf(stderr, ...)`, `assert` and `abort` (they
/// failed with undefined `stdout`, `getpid`, `kill`): stdout is the public output (fd 1), stderr the debug
/// text (fd 2), abort and a failed assert exit 134. Skips where the toolchain is missing.
#[test]
fn c_template_links_printf_puts_assert_abort() {
    if !have("riscv64-unknown-elf-gcc") {
        eprintln!(
            "SKIPPED c_template_links_printf_puts_assert_abort: riscv64-unknown-elf-gcc missing"
        );
        return;
    }
    let dir = scratch("cstdio");
    let o = Command::new(ZKRV)
        .current_dir(&dir)
        .args(["new", "g", "--lang", "c"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let g = dir.join("g");
    std::fs::write(
        g.join("src/main.c"),
        r#"#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include "zkrv.h"
int main(void)
{
    uint64_t n = zkrv_read_u64(0);
    printf("n=%d\n", (int)n);
    puts("hi");
    fprintf(stderr, "debug %d\n", 7);
    if (n == 1)
        abort();
    assert(n != 2);
    return 0;
}
"#,
    )
    .unwrap();
    let built = Command::new("sh").arg(g.join("build.sh")).output().unwrap();
    assert!(
        built.status.success(),
        "{}{}",
        text(&built.stdout),
        text(&built.stderr)
    );
    let elf = g.join("g.elf");
    for (n, code) in [(0u64, 0), (1, 134), (2, 134)] {
        let input = dir.join(format!("in{n}"));
        std::fs::write(&input, n.to_le_bytes()).unwrap();
        let run = zkrv(&[
            "run",
            elf.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
        ]);
        let err = text(&run.stderr);
        assert_eq!(run.status.code(), Some(code), "n={n}: {err}");
        assert_eq!(text(&run.stdout), format!("n={n}\nhi\n"), "n={n}");
        assert!(err.contains("debug 7"), "n={n}: {err}");
        assert!(err.contains(&format!("exit code {code} ")), "n={n}: {err}");
        assert_eq!(err.contains("assertion \"n != 2\" failed"), n == 2, "{err}");
    }
}

/// Item 7: the refusal of a zk run in segments names a way out that exists: a `--segment-cycles` the run
/// fits in is offered as "more than its cycles, at most 2^26" (for a run of more than 2^26 - 1 cycles no
/// segment size holds it, and the hint says so instead); `--help` says the flag counts rows.
#[test]
fn segment_refusal_hint_and_help_count_rows() {
    let dir = scratch("hint");
    let elf = format!("{GUESTS}/bin/exitcode.elf");
    let p = dir.join("p.zkrv");
    let out = zkrv(&[
        "prove",
        &elf,
        "-o",
        p.to_str().unwrap(),
        "--backend",
        "cpu",
        "--segment-cycles",
        "128",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "or with a --segment-cycles the run fits in (more than its cycles, at most 2^26)"
        ),
        "{err}"
    );
    assert!(!err.contains("a --segment-cycles it fits in"), "{err}");
    let help = text(&zkrv(&["prove", "--help"]).stdout);
    assert!(
        help.contains("segments of N CPU rows, not cycles"),
        "{help}"
    );
    assert!(help.contains("at most N - 1 cycles"), "{help}");
}
