//! `zkrv run` end to end on the prebuilt guests (skipped when guests/bin is absent).

mod common;
use common::*;

#[test]
fn run_prints_output_and_exits_with_guest_code() {
    let elf = bundled("exitcode");
    if !std::path::Path::new(&elf).exists() {
        eprintln!("skipping: {elf} not built");
        return;
    }
    let out = zkrv(&["run", &elf]);
    assert_eq!(out.status.code(), Some(42));
    assert_eq!(out.stdout, b"bye");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exit code 42") && err.contains("cycles"),
        "{err}"
    );
}

#[test]
fn run_with_input_file() {
    let elf = bundled("fibonacci");
    if !std::path::Path::new(&elf).exists() {
        eprintln!("skipping: {elf} not built");
        return;
    }
    let input = std::env::temp_dir().join(format!("zkrv-cli-test-{}.bin", std::process::id()));
    std::fs::write(&input, 10u64.to_le_bytes()).unwrap();
    let out = zkrv(&["run", &elf, "--input", input.to_str().unwrap()]);
    let _ = std::fs::remove_file(&input);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, 55u64.to_le_bytes()); // fib(10)
}

#[test]
fn host_errors_exit_2() {
    let out = zkrv(&["run", "/nonexistent.elf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("zkrv: error"));
    let not_elf = std::env::temp_dir().join(format!("zkrv-cli-test-{}.txt", std::process::id()));
    std::fs::write(&not_elf, b"hello").unwrap();
    let out = zkrv(&["run", not_elf.to_str().unwrap()]);
    let _ = std::fs::remove_file(&not_elf);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("64-byte ELF64 header"));
    let elf = bundled("sort");
    if std::path::Path::new(&elf).exists() {
        let out = zkrv(&["run", &elf, "--max-cycles", "100"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("cycle limit of 100"));
    }
}

/// `--gpu-memory` takes a positive number of GiB; anything else is a usage error naming the value, before
/// any work (no proof file written).
#[test]
fn gpu_memory_flag_is_validated() {
    let out_path =
        std::env::temp_dir().join(format!("zkrv-cli-gpumem-{}.zkrv", std::process::id()));
    for bad in ["0", "-3", "abc", "inf"] {
        let flag = format!("--gpu-memory={bad}");
        let out = zkrv(&[
            "prove",
            "/nonexistent.elf",
            "-o",
            out_path.to_str().unwrap(),
            &flag,
        ]);
        assert_eq!(out.status.code(), Some(2), "--gpu-memory {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("positive number of GiB"),
            "--gpu-memory {bad}: {err}"
        );
        assert!(!out_path.exists());
    }
}

/// `verify --output-file` never overwrites the proof, the ELF or the --expect-output file (found by a
/// new-user pass: it used to replace the proof with the public output).
#[test]
fn verify_output_file_refuses_its_inputs() {
    let elf = bundled("fibonacci");
    if !std::path::Path::new(&elf).exists() {
        eprintln!("skipping: {elf} not built");
        return;
    }
    let dir = std::env::temp_dir().join(format!("zkrv-cli-outfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let proof = dir.join("p.zkrv");
    let expect = dir.join("expect.bin");
    std::fs::write(&proof, b"not a proof, but must survive").unwrap();
    std::fs::write(&expect, b"xyz").unwrap();
    let elf_copy = dir.join("f.elf");
    std::fs::copy(&elf, &elf_copy).unwrap();
    let (p, e, x) = (
        proof.to_str().unwrap(),
        elf_copy.to_str().unwrap(),
        expect.to_str().unwrap(),
    );
    for (target, what) in [
        (p, "the proof file"),
        (e, "the guest ELF"),
        (x, "--expect-output"),
    ] {
        let out = zkrv(&[
            "verify",
            p,
            e,
            "--expect-output",
            x,
            "--output-file",
            target,
        ]);
        assert_eq!(out.status.code(), Some(2), "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("refusing to overwrite") && err.contains(what),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read(&proof).unwrap(),
        b"not a proof, but must survive"
    );
    assert_eq!(std::fs::read(&expect).unwrap(), b"xyz");
    assert_eq!(
        std::fs::read(&elf_copy).unwrap(),
        std::fs::read(&elf).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--input /dev/stdin` reads stdin through the file: the run sees the piped bytes and no "stdin is
/// ignored" note is printed (found by a new-user pass).
#[test]
fn input_dev_stdin_reads_stdin_without_a_note() {
    use std::io::Write;
    let elf = bundled("fibonacci");
    if !std::path::Path::new(&elf).exists() || !std::path::Path::new("/dev/stdin").exists() {
        eprintln!("skipping: {elf} or /dev/stdin missing");
        return;
    }
    let mut child = spawn_zkrv(
        &["run", &elf, "--input", "/dev/stdin"],
        std::process::Stdio::piped(),
    );
    // zkrv may finish reading before the write returns; a closed pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(&10u64.to_le_bytes());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, 55u64.to_le_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("stdin is ignored"), "{err}");
}

/// `verify --json` prints one JSON object on stdout even for a host error (exit 2).
#[test]
fn verify_json_on_host_error() {
    let out = zkrv(&["verify", "--json", "/nonexistent.zkrv", "/nonexistent.elf"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert!(v["valid"].is_null(), "{v}");
    assert!(
        v["error"].as_str().unwrap_or("").contains("nonexistent"),
        "{v}"
    );
}

/// `zkrv new` refuses a NAME whose parent directory is missing (no `mkdir -p`), and a trailing slash names
/// the same directory.
#[test]
fn new_needs_an_existing_parent() {
    let base = std::env::temp_dir().join(format!("zkrv-cli-new-{}", std::process::id()));
    let missing = base.join("no/such/parent/g");
    let out = zkrv(&["new", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    assert!(!base.exists(), "nothing created");
    std::fs::create_dir_all(&base).unwrap();
    let slash = format!("{}/", base.join("g").display());
    let out = zkrv(&["new", &slash]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!said.contains("//"), "{said}");
    assert!(base.join("g/build.sh").exists());
    let _ = std::fs::remove_dir_all(&base);
}
