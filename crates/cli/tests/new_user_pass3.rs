//! Findings of the third new-user pass (issue 30): closed standard descriptors are errors (not
//! `/dev/null`), the estimate before a long CPU proof and its confirmation, `zkrv` on PATH in the README,
//! the Rust template's typed-input helper.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GUESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
const ZKRV: &str = env!("CARGO_BIN_EXE_zkrv");

/// A fresh empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zkrv-nu3-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `zkrv args` run by `sh` with the redirection `redir` (e.g. `>&-`: stdout closed, not `/dev/null`), in
/// `dir`; stdout and stderr captured unless the redirection closes them.
fn zkrv_sh(dir: &Path, redir: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("exec \"$0\" \"$@\" {redir}"))
        .arg(ZKRV)
        .args(args)
        .output()
        .expect("sh runs")
}

fn guest(name: &str) -> String {
    format!("{GUESTS}/bin/{name}.elf")
}

/// Asserts exit 2 with `want` on stderr, nothing on stdout.
fn assert_closed(o: &Output, want: &str, what: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains(want), "{what}: {want:?} not in {err}");
    assert!(o.stdout.is_empty(), "{what}: {}", text(&o.stdout));
}

/// Issue 30 item 2: `run ... >&-` lost the public output and exited 0; now every command refuses a closed
/// stdout up front (exit 2, naming fd 1 and the `/dev/null` redirection), while `>/dev/null` still works.
#[test]
fn closed_stdout_is_an_error_for_every_command() {
    let dir = scratch("stdout");
    let fib = guest("fibonacci");
    let input = format!("{GUESTS}/inputs/fibonacci.bin");
    let proof = dir.join("p.zkrv");
    let proof = proof.to_str().unwrap();
    for (what, args) in [
        ("run", vec!["run", &fib, "--input", &input]),
        (
            "prove",
            vec!["prove", &fib, "--input", &input, "-o", proof, "--no-zk"],
        ),
        ("verify", vec!["verify", proof, &fib]),
        ("program-id", vec!["program-id", &fib]),
        ("security", vec!["security"]),
        ("new", vec!["new", "g", "--lang", "c"]),
    ] {
        let o = zkrv_sh(&dir, ">&-", &args);
        assert_closed(
            &o,
            &format!("stdout (fd 1) is closed: `zkrv {what}` writes"),
            what,
        );
        assert!(text(&o.stderr).contains("`>/dev/null`"), "{what}");
    }
    // Nothing was done: no proof, no project.
    assert!(!Path::new(proof).exists() && !dir.join("g").exists());
    // `>/dev/null` discards the output as asked.
    for args in [
        vec!["run", fib.as_str(), "--input", input.as_str()],
        vec!["program-id", fib.as_str()],
        vec!["security"],
    ] {
        let o = zkrv_sh(&dir, ">/dev/null", &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    }
}

/// A closed stderr: exit 2 for every command (there is nowhere to write the message: the status says it),
/// and nothing done; `2>/dev/null` works.
#[test]
fn closed_stderr_is_an_error() {
    let dir = scratch("stderr");
    let fib = guest("fibonacci");
    let o = zkrv_sh(&dir, "2>&-", &["program-id", &fib]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    let o = zkrv_sh(&dir, "2>&-", &["new", "g"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.join("g").exists());
    let o = zkrv_sh(&dir, "2>/dev/null", &["program-id", &fib]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout.len(), 65, "{}", text(&o.stdout));
}

/// Issue 30 item 2: `prove --input - <&-` proved an empty input; now a closed stdin is an error where it
/// is read (`--input -`, `/dev/stdin` paths), naming fd 0 and the argument; commands that do not read it
/// run with it closed, and `< /dev/null` is an empty input.
#[test]
fn closed_stdin_is_an_error_where_it_is_read() {
    let dir = scratch("stdin");
    let exitcode = guest("exitcode");
    let proof = dir.join("p.zkrv");
    let proof = proof.to_str().unwrap();
    let o = zkrv_sh(
        &dir,
        "<&-",
        &["prove", &exitcode, "--input", "-", "-o", proof, "--no-zk"],
    );
    assert_closed(
        &o,
        "stdin (fd 0) is closed, but `--input -` reads it",
        "prove",
    );
    assert!(!Path::new(proof).exists());
    let o = zkrv_sh(&dir, "<&-", &["run", &exitcode, "--input", "-"]);
    assert_closed(
        &o,
        "stdin (fd 0) is closed, but `--input -` reads it",
        "run",
    );
    let o = zkrv_sh(&dir, "<&-", &["program-id", "/dev/stdin"]);
    assert_closed(
        &o,
        "stdin (fd 0) is closed, but `/dev/stdin` reads it",
        "program-id",
    );
    let o = zkrv_sh(&dir, "<&-", &["verify", "/dev/stdin", &exitcode]);
    assert_closed(
        &o,
        "stdin (fd 0) is closed, but `/dev/stdin` reads it",
        "verify",
    );
    // Not read: no error.
    let o = zkrv_sh(&dir, "<&-", &["program-id", &exitcode]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // `< /dev/null`: an empty input (exitcode ignores its input and exits 42).
    let o = zkrv_sh(&dir, "</dev/null", &["run", &exitcode, "--input", "-"]);
    assert_eq!(o.status.code(), Some(42), "{}", text(&o.stderr));
}

/// A fresh, non-captured `zkrv` command in `dir`.
fn zkrv_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(ZKRV)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("zkrv runs")
}

/// Issue 30 item 1: the estimate is printed after the execution and before trace generation; on the CPU a
/// run estimated above the threshold (here 0 s, through the hidden `--confirm-above-secs`) is refused
/// before proving unless `--yes`, the message naming the GPU backend and `--segment-cycles`.
#[test]
fn cpu_estimate_is_printed_first_and_a_long_one_needs_yes() {
    let dir = scratch("estimate");
    let exitcode = guest("exitcode");
    let fast = ["--no-zk", "--security", "dev", "--backend", "cpu"];
    let mut args = vec!["prove", exitcode.as_str(), "-o", "p.zkrv"];
    args.extend(fast);
    args.extend(["--confirm-above-secs", "0"]);
    let o = zkrv_in(&dir, &args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for want in [
        "zkrv: error: the estimated CPU proving time is about ",
        "(256 rows), above 0 s: pass --yes to prove on the CPU anyway",
        "--backend gpu proves it in about ",
        "--segment-cycles N sets the segment size",
        "Nothing was proven",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    assert!(
        !err.contains("[2/5]"),
        "refused before trace generation: {err}"
    );
    assert!(!dir.join("p.zkrv").exists());

    // With --yes: the estimate line after `[1/5] execute`, before `[2/5] trace generation`; proven.
    args.push("--yes");
    let o = zkrv_in(&dir, &args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let est = err
        .find("zkrv: estimate: about ")
        .unwrap_or_else(|| panic!("no estimate in {err}"));
    let (exec, trace) = (
        err.find("[1/5] execute").unwrap(),
        err.find("[2/5] trace generation").unwrap(),
    );
    assert!(exec < est && est < trace, "{err}");
    assert!(
        err.contains("to prove 256 rows on the CPU (this machine measured in "),
        "{err}"
    );
    assert!(dir.join("p.zkrv").exists());
    // Below the default threshold (1 hour): no --yes needed; a run this short is not calibrated, and
    // gets no figure: the reference rate (a loaded machine) put every run of up to 2^16 rows at "about
    // 54 s" (zk) and "within about 2x", for proofs of 1-5 s (new-user report of 2026-12-04).
    for zk in [false, true] {
        let mut args = vec!["prove", exitcode.as_str(), "-o", "q.zkrv"];
        if zk {
            args.extend(["--backend", "cpu"]);
        } else {
            args.extend(fast);
        }
        let o = zkrv_in(&dir, &args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        let line = err
            .lines()
            .find(|l| l.starts_with("zkrv: estimate: "))
            .unwrap_or_else(|| panic!("no estimate in {err}"));
        assert!(
            line.starts_with(
                "zkrv: estimate: under a minute to prove 256 rows on the CPU (not measured on this \
                 machine: runs under a minute at the reference machine's rate are not calibrated; "
            ),
            "{line}"
        );
        assert!(
            !line.contains("about") && !line.contains("within"),
            "{line}"
        );
    }
}

/// Segmented runs: the estimate names the segments and comes before any segment is proven; the refusal
/// applies as well.
#[test]
fn segmented_estimate_names_the_segments() {
    let dir = scratch("estimate-seg");
    let exitcode = guest("exitcode");
    let base = [
        "prove",
        exitcode.as_str(),
        "-o",
        "p.zkrv",
        "--no-zk",
        "--security",
        "dev",
        "--backend",
        "cpu",
        "--segment-cycles",
        "64",
    ];
    let mut args = base.to_vec();
    args.extend(["--confirm-above-secs", "0"]);
    let o = zkrv_in(&dir, &args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("(3 segments of 64 rows), above 0 s: pass --yes"),
        "{err}"
    );
    assert!(!err.contains("segment    0"), "{err}");
    let o = zkrv_in(&dir, &base);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let est = err.find("zkrv: estimate: ").expect("estimate");
    assert!(
        err.contains("to prove 3 segments of 64 rows on the CPU"),
        "{err}"
    );
    assert!(
        est < err.find("segment    0").expect("segment lines"),
        "{err}"
    );
}

/// Issue 30 item 5: a jump to a 2-byte boundary (what code built with the C extension does) names the C
/// extension and the -march flag in the error.
#[test]
fn misaligned_jump_names_the_c_extension() {
    use zkrv_executor::asm::{auipc, jalr};
    let dir = scratch("rvc");
    let elf = dir.join("rvc.elf");
    std::fs::write(&elf, elf_bytes(&[auipc(5, 0), jalr(0, 5, 2)])).unwrap();
    let o = zkrv_in(&dir, &["run", elf.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for want in [
        "misaligned jump at pc 0x10004 to 0x10002",
        "built with the C extension",
        "-march=rv64im -mabi=lp64",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
}

/// A minimal ELF64 RISC-V executable: `words` at 0x10000, the entry.
fn elf_bytes(words: &[u32]) -> Vec<u8> {
    const BASE: u64 = 0x10000;
    let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut out = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    out.extend_from_slice(&243u16.to_le_bytes()); // EM_RISCV
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&BASE.to_le_bytes()); // entry
    out.extend_from_slice(&64u64.to_le_bytes()); // phoff
    out.extend_from_slice(&0u64.to_le_bytes()); // shoff
    out.extend_from_slice(&0u32.to_le_bytes());
    for v in [64u16, 56, 1, 64, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    out.extend_from_slice(&7u32.to_le_bytes()); // RWX
    out.extend_from_slice(&120u64.to_le_bytes()); // offset
    out.extend_from_slice(&BASE.to_le_bytes());
    out.extend_from_slice(&BASE.to_le_bytes());
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&0x1000u64.to_le_bytes());
    out.extend_from_slice(&0x1000u64.to_le_bytes());
    out.extend_from_slice(&data);
    out
}

/// Issue 30 item 3: the README's first section says how to put `zkrv` on the PATH, and the command names
/// the package that builds the `zkrv` binary.
#[test]
fn readme_says_how_to_install_zkrv() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let quick = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quick start"))
        .expect("a Quick start section");
    let cmd = "cargo install --locked --path crates/cli";
    assert!(quick.contains(cmd), "{cmd:?} not in the Quick start");
    // The first two commands stay the demo and the test script.
    let block = quick.split("```sh\n").nth(1).unwrap();
    assert!(
        block.starts_with("bash scripts/demo.sh\nbash scripts/test.sh\n```"),
        "{block}"
    );
    let manifest = std::fs::read_to_string(format!("{root}/crates/cli/Cargo.toml")).unwrap();
    assert!(manifest.contains("[[bin]]\nname = \"zkrv\""), "{manifest}");
    for doc in ["docs/cli.md", "guests/README.md"] {
        let t = std::fs::read_to_string(format!("{root}/{doc}")).unwrap();
        assert!(t.contains(cmd), "{doc} does not say {cmd:?}");
    }
}

/// Issue 30 item 4: the Rust template's host helper writes the typed input from JSON (no hand-written
/// postcard): the frame of `Job { n }` for n = 100 and 300 (a two-byte varint), and an error naming the type
/// for JSON that is not a `Job`. Needs a host cargo and crates.io (serde, serde_json, postcard); skipped
/// with a `SKIPPED` line when the helper cannot be built for want of them.
#[test]
fn rust_template_writes_typed_input_from_json() {
    let dir = scratch("template");
    let o = zkrv_in(&dir, &["new", "g", "--lang", "rust"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let g = dir.join("g");
    let readme = std::fs::read_to_string(g.join("README.md")).unwrap();
    assert!(
        readme.contains(r#"(cd host && cargo run -q -- '{"n": 100}') > input.bin"#),
        "{readme}"
    );
    let job = std::fs::read_to_string(g.join("src/job.rs")).unwrap();
    assert!(job.contains("pub struct Job"), "{job}");
    let main = std::fs::read_to_string(g.join("src/main.rs")).unwrap();
    assert!(
        main.contains("mod job;") && main.contains("zkrv_guest::read()"),
        "{main}"
    );
    let config = std::fs::read_to_string(g.join("host/.cargo/config.toml")).unwrap();
    assert!(config.contains("target = \""), "{config}");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let make_input = |json: &str| {
        Command::new(&cargo)
            .current_dir(g.join("host"))
            .args(["run", "-q", "--", json])
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .output()
            .expect("cargo runs")
    };
    let o = make_input(r#"{"n": 100}"#);
    if !o.status.success() && o.stdout.is_empty() {
        let err = text(&o.stderr);
        if err.contains("failed to get")
            || err.contains("Could not resolve")
            || err.contains("download")
        {
            eprintln!(
                "SKIPPED rust_template_writes_typed_input_from_json: crates.io unreachable: {err}"
            );
            return;
        }
        panic!("make-input failed: {err}");
    }
    assert_eq!(o.stdout, [1, 0, 0, 0, 100], "{}", text(&o.stderr));
    let o = make_input(r#"{"n": 300}"#);
    assert_eq!(o.stdout, [2, 0, 0, 0, 0xac, 0x02], "{}", text(&o.stderr));
    let o = make_input(r#"{"m": 1}"#);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("make-input: the JSON is not a Job (../src/job.rs)"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

/// The issue's case in small: a run longer than one proof holds (2^26 + 6 cycles: 65 CPU segments of 2^20
/// rows) is refused right after the plan, with the estimate of the whole job, before any segment is proven
/// (threshold 60 s, which 65 such segments exceed on any CPU; the child is killed after 300 s if it is
/// proving after all).
#[test]
fn long_cpu_run_is_refused_with_its_estimate_before_any_segment() {
    use zkrv_executor::asm::{addi, blt, li, lui, ECALL};
    let dir = scratch("long");
    // t0 counts to 2^25 in a two-instruction loop, then exit(0).
    let mut w = vec![lui(6, 1 << 13), addi(5, 5, 1), blt(5, 6, -4)];
    w.extend(li(10, 0));
    w.extend(li(17, 93));
    w.push(ECALL);
    let elf = dir.join("loop.elf");
    std::fs::write(&elf, elf_bytes(&w)).unwrap();
    let mut child = Command::new(ZKRV)
        .current_dir(&dir)
        .args([
            "prove",
            elf.to_str().unwrap(),
            "-o",
            "p.zkrv",
            "--no-zk",
            "--backend",
            "cpu",
            "--confirm-above-secs",
            "60",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("zkrv runs");
    let t = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed().as_secs() > 300 {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(2), "{err}");
    assert!(
        err.contains("the estimated CPU proving time is about ")
            && err.contains("(65 segments of 1048576 rows), above 60 s: pass --yes"),
        "{err}"
    );
    assert!(!err.contains("segment    0"), "{err}");
    assert!(!dir.join("p.zkrv").exists());
}
