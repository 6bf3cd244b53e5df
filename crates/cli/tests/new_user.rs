//! Regression tests for the findings of issue 16 (a new user's first hour): a failed guest does not verify
//! as "proof OK", `prove` forwards the guest's fd 2 and warns on a non-zero exit code, `--input -` reads
//! stdin and `run` says when stdin is ignored, the memory-touch and cycle limits are clear errors in bounded
//! time, the temporary proof file is removed on SIGINT/SIGTERM/SIGHUP and on a write error (`ulimit -f`).
//! The guests are tiny hand-assembled ELFs (proofs with `--no-zk` to keep the suite fast) and the bundled
//! `exitcode` guest.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use zkrv_executor::asm::*;

mod common;
use common::*;
// `s` is also the S-type encoder of `asm::*`: here it is the path helper.
use common::s;

/// Runs zkrv with `stdin` as its standard input.
fn zkrv_stdin(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = spawn_zkrv(args, Stdio::piped());
    // A zkrv that does not read its stdin (e.g. `run` without `--input -`) may exit before the write:
    // a broken pipe is then the expected outcome, not a failure.
    match child.stdin.take().unwrap().write_all(stdin) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.expect("write stdin"),
    }
    child.wait_with_output().unwrap()
}

/// Reads up to 16 bytes of input to 0x11000, writes them to the public output, exits 0.
fn echo_words() -> Vec<u32> {
    let mut w = Vec::new();
    ecall(&mut w, 63, 0, 0x11000, 16);
    // a2 = count read
    w.push(addi(12, 10, 0));
    w.extend(li(10, 1));
    w.extend(li(11, 0x11000));
    w.extend(li(17, 64));
    w.push(ECALL);
    ecall(&mut w, 93, 0, 0, 0);
    w
}

/// Stores one byte into each of `pages` consecutive 4 KiB pages from 0x1000_0000, then exits 0.
fn touch_pages_words(pages: u64) -> Vec<u32> {
    let start = 0x1000_0000i64;
    let mut w = Vec::new();
    w.extend(li(5, start));
    w.extend(li(6, 4096));
    w.extend(li(7, start + 4096 * pages as i64));
    w.push(sb(0, 5, 0));
    w.push(add(5, 5, 6));
    w.push(bltu(5, 7, -8));
    ecall(&mut w, 93, 0, 0, 0);
    w
}

/// Finding 3: a guest that exits non-zero is proven with a warning and its fd-2 text on stderr; `verify`
/// exits 3 (not "proof OK") unless `--any-exit-code`.
#[test]
fn failed_guest_is_flagged_by_prove_and_verify() {
    let dir = tempdir("exit");
    let p = dir.join("p.zkrv");
    let out = zkrv(&[
        "prove",
        &bundled("exitcode"),
        "-o",
        s(&p),
        "--backend",
        "cpu",
        "--no-zk",
    ]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    // exitcode.elf writes "exitcode: exiting with 42" to fd 2 and exits 42.
    assert!(err.contains("exiting with 42"), "fd 2 not forwarded: {err}");
    assert!(
        err.contains("warning: the guest exited with code 42"),
        "{err}"
    );
    let out = zkrv(&["verify", s(&p), &bundled("exitcode")]);
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{o}{e}");
    assert!(!o.contains("proof OK"), "{o}");
    assert!(o.contains("proven exit code is 42"), "{o}");
    assert!(e.contains("--any-exit-code"), "{e}");
    let out = zkrv(&["verify", "--any-exit-code", s(&p), &bundled("exitcode")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("proof OK"));
    // --json: the whole statement, the verdict, the security line.
    let out = zkrv(&["verify", "--json", s(&p), &bundled("exitcode")]);
    assert_eq!(out.status.code(), Some(3));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(j["valid"], true);
    assert_eq!(j["accepted"], false);
    assert_eq!(j["exit_code"], 42);
    assert_eq!(j["output_hex"], "627965");
    assert_eq!(j["zero_knowledge"], false);
    assert!(j["cycles_at_most"].as_u64().unwrap() >= 138);
    assert!(j["security"]["line"]
        .as_str()
        .unwrap()
        .contains("bits provable"));
    let id = zkrv(&["program-id", &bundled("exitcode")]);
    assert!(id.status.success());
    assert_eq!(text(&id.stdout).trim(), j["program_id"].as_str().unwrap());
    assert_eq!(text(&id.stdout).trim().len(), 64);
    // A rejected proof is JSON too.
    let out = zkrv(&["verify", "--json", s(&p), &bundled("fibonacci")]);
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["valid"], false);
    assert!(j["error"].as_str().unwrap().contains("another program"));
    // --output-file and --expect-output.
    let got = dir.join("out.bin");
    let good = dir.join("good.bin");
    let bad = dir.join("bad.bin");
    std::fs::write(&good, b"bye").unwrap();
    std::fs::write(&bad, b"byd").unwrap();
    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        "--output-file",
        s(&got),
        "--expect-output",
        s(&good),
        s(&p),
        &bundled("exitcode"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&got).unwrap(), b"bye");
    let out = zkrv(&[
        "verify",
        "--any-exit-code",
        "--expect-output",
        s(&bad),
        s(&p),
        &bundled("exitcode"),
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("differs from"),
        "{}",
        text(&out.stderr)
    );
    // docs/cli.md `--output-file`: a valid proof that is not accepted (exit 3: the exit code is not 0,
    // or the output is not `--expect-output`'s) still has its proven output written.
    for extra in [vec![], vec!["--any-exit-code", "--expect-output", s(&bad)]] {
        let _ = std::fs::remove_file(&got);
        let mut args = vec!["verify", "--output-file", s(&got)];
        args.extend(extra);
        let exitcode = bundled("exitcode");
        args.extend([s(&p), exitcode.as_str()]);
        let out = zkrv(&args);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        assert_eq!(std::fs::read(&got).unwrap(), b"bye", "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding 7: `--input -` reads stdin (run and prove); `run < file` without it says that stdin is ignored.
#[test]
fn input_dash_reads_stdin_and_ignored_stdin_is_noted() {
    let dir = tempdir("stdin");
    let elf = write_elf(&dir, "echo.elf", &echo_words());
    let out = zkrv_stdin(&["run", s(&elf), "--input", "-"], b"from stdin");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"from stdin");
    assert!(!text(&out.stderr).contains("ignored"));
    let out = zkrv_stdin(&["run", s(&elf)], b"from stdin");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"");
    let err = text(&out.stderr);
    assert!(
        err.contains("stdin is ignored") && err.contains("--input -"),
        "{err}"
    );
    // No note when stdin is /dev/null (Command::output's default).
    let out = zkrv(&["run", s(&elf)]);
    assert!(!text(&out.stderr).contains("ignored"));

    let p = dir.join("p.zkrv");
    let out = zkrv_stdin(
        &[
            "prove",
            s(&elf),
            "--input",
            "-",
            "-o",
            s(&p),
            "--backend",
            "cpu",
            "--no-zk",
        ],
        b"proven",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = zkrv(&["verify", s(&p), s(&elf)]);
    let o = text(&out.stdout);
    assert!(out.status.success(), "{o}{}", text(&out.stderr));
    assert!(o.contains("\"proven\""), "{o}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding 2: a guest touching 548 MiB gets a clear error naming pages and bytes, in bounded time, instead
/// of an allocation abort in the PAGE trace.
#[test]
fn memory_touch_limit_is_a_clear_error() {
    let dir = tempdir("mem");
    let pages = 548 * 256;
    let elf = write_elf(&dir, "touch.elf", &touch_pages_words(pages));
    let p = dir.join("p.zkrv");
    let t = Instant::now();
    let out = zkrv(&["prove", s(&elf), "-o", s(&p), "--backend", "cpu"]);
    let secs = t.elapsed().as_secs_f64();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "touches {pages} pages of 4 KiB ({} bytes)",
            pages * 4096
        )),
        "{err}"
    );
    assert!(
        err.contains("at most 131072 pages (536870912 bytes = 512 MiB"),
        "{err}"
    );
    assert!(secs < 120.0, "took {secs:.1} s");
    assert!(!p.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding 7, revised with continuations: `prove`'s default cycle limit is `zkrv run`'s (2^32, shown in
/// `--help`); a limit above one proof's 2^26 - 1 cycles is accepted (the run would be proven in segments)
/// and an endless run stops there with the executor's error; a limit above what a proof file holds (2^32
/// - 1 segments) is refused before running; a small limit says how to raise it.
#[test]
fn prove_cycle_limit_is_the_provable_limit() {
    let dir = tempdir("cycles");
    let elf = write_elf(&dir, "loop.elf", &[jal(0, 0)]);
    let p = dir.join("p.zkrv");
    let help = text(&zkrv(&["prove", "--help"]).stdout);
    assert!(help.contains("[default: 4294967296]"), "{help}");
    let t = Instant::now();
    let out = zkrv(&[
        "prove",
        s(&elf),
        "-o",
        s(&p),
        "--backend",
        "cpu",
        "--max-cycles",
        "67108864",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cycle limit of 67108864 instruction(s) reached"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(120));
    // (The CPU backend's default segments of 2^20 rows; 2^22 on a GPU.)
    let out = zkrv(&[
        "prove",
        s(&elf),
        "-o",
        s(&p),
        "--backend",
        "cpu",
        "--max-cycles",
        "18446744073709551615",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "--max-cycles 18446744073709551615: a proof holds at most 2^32 - 1 segments of 1048575 cycles"
        ),
        "{err}"
    );
    assert!(
        !err.contains(" on cpu"),
        "refused only after proving started: {err}"
    );
    // A smaller limit names the limit, the cycles run and how to raise it, as `run` does.
    for cmd in ["prove", "run"] {
        let mut args = vec![cmd, s(&elf), "--max-cycles", "1000"];
        if cmd == "prove" {
            args.extend(["-o", s(&p)]);
        }
        let out = zkrv(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(
                "(after 1000 cycles): cycle limit of 1000 instruction(s) reached without an exit"
            ) && err.contains("raise it with --max-cycles"),
            "{cmd}: {err}"
        );
    }
    assert!(!p.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding of the issue-16 pass: a never-exiting guest in tiny segments took minutes and gigabytes before
/// the cycle-limit error (one checkpoint kept per segment up to the limit). Now the run is executed plainly
/// first: 2^30 cycles in segments of 128 rows (8.5 M segments before) fail with the limit and how to raise
/// it after that pass alone (about 3 s of execution), before any proving starts, and write nothing. The
/// time bound is a hang guard only (before: 13.5 s and 193 MB for 2^26 cycles, growing linearly).
#[test]
fn never_exiting_guest_in_tiny_segments_fails_fast() {
    let dir = tempdir("spin");
    let elf = write_elf(&dir, "loop.elf", &[jal(0, 0)]);
    let p = dir.join("p.zkrv");
    let t = Instant::now();
    let out = zkrv(&[
        "prove",
        s(&elf),
        "-o",
        s(&p),
        "--backend",
        "cpu",
        "--segment-cycles",
        "128",
        "--max-cycles",
        "1073741824",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cycle limit of 1073741824 instruction(s) reached")
            && err.contains("raise it with --max-cycles"),
        "{err}"
    );
    assert!(!err.contains("proving "), "proving started: {err}");
    assert!(t.elapsed() < Duration::from_secs(300), "hang guard");
    assert!(!p.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Findings of the issue-16 pass on `--segment-jobs`: 0 is refused by name; given to a run proven as one
/// proof (no `--segment-cycles`, or a segment size the run fits in) it is noted as without effect (and the
/// proof is the plain one, byte for byte); more jobs than segments are capped to the segment count, noted.
#[test]
fn segment_jobs_is_checked_noted_and_capped() {
    let dir = tempdir("jobs");
    // About 206 cycles: two segments of 128 rows (127 cycles), one of 256.
    let mut w = vec![addi(5, 0, 100), addi(5, 5, -1), bne(5, 0, -4)];
    ecall(&mut w, 93, 0, 0, 0);
    let elf = write_elf(&dir, "count.elf", &w);
    let p = dir.join("p.zkrv");
    let prove = |extra: &[&str]| {
        let mut args = vec!["prove", s(&elf), "-o", s(&p), "--backend", "cpu", "--no-zk"];
        args.extend_from_slice(extra);
        zkrv(&args)
    };
    let out = prove(&["--segment-cycles", "128", "--segment-jobs", "0"]);
    assert_refused_early(&out, "0 segments at a time: give at least 1");
    let out = prove(&["--segment-jobs", "x"]);
    assert_refused_early(&out, "is not a number of segments");
    // One proof: no --segment-cycles.
    let out = prove(&["--segment-jobs", "2"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("zkrv: note: --segment-jobs 2 has no effect: the run (")
            && err.contains("cycles) fits in one proof"),
        "{err}"
    );
    let plain = std::fs::read(&p).unwrap();
    // One proof: the run fits in one segment; the same bytes as the plain proof.
    let out = prove(&["--segment-cycles", "256", "--segment-jobs", "3"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "zkrv: note: --segment-jobs 3 has no effect: the run fits in one segment of 256 rows"
        ),
        "{err}"
    );
    assert!(
        std::fs::read(&p).unwrap() == plain,
        "one segment is not the plain proof"
    );
    // Two segments, 8 jobs: 2 at a time.
    let out = prove(&["--segment-cycles", "128", "--segment-jobs", "8"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("zkrv: note: --segment-jobs 8: the run has 2 segments, proving 2 at a time")
            && err.contains("on cpu, 2 at a time"),
        "{err}"
    );
    assert!(text(&out.stdout).contains("segments            2 of 128 rows"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `zkrv run`'s exit status for a guest exit code that does not fit 8 bits: 255, never the low 8 bits (256
/// would exit 0, a success); the full code is on stderr. Codes up to 255 are the status itself.
#[test]
fn run_exit_status_never_hides_a_nonzero_exit_code() {
    let dir = tempdir("exit256");
    for (code, status) in [
        (0i64, 0),
        (1, 1),
        (255, 255),
        (256, 255),
        (512, 255),
        (257, 255),
        (4_294_967_295, 255),
    ] {
        let mut w = Vec::new();
        ecall(&mut w, 93, code, 0, 0);
        let elf = write_elf(&dir, &format!("exit{code}.elf"), &w);
        let out = zkrv(&["run", s(&elf)]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "exit({code}): {err}");
        assert!(err.contains(&format!("exit code {code} after")), "{err}");
        assert_eq!(
            err.contains("does not fit a process exit status"),
            code > 255,
            "exit({code}): {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".zkrv.") && n.ends_with(".tmp"))
        .collect()
}

/// Finding 7: SIGINT, SIGTERM or SIGHUP while the proof file is being written removes the temporary file
/// (`ZKRV_TEST_WRITE_PAUSE_MS` holds the write half-way so that the signal lands there).
#[test]
fn signal_during_the_write_removes_the_temporary_file() {
    let dir = tempdir("signal");
    let elf = write_elf(&dir, "echo.elf", &echo_words());
    for sig in ["INT", "TERM", "HUP"] {
        let p = dir.join(format!("p-{sig}.zkrv"));
        let mut child = zkrv_bin()
            .args(["prove", s(&elf), "-o", s(&p), "--backend", "cpu", "--no-zk"])
            .env("ZKRV_TEST_WRITE_PAUSE_MS", "60000")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t = Instant::now();
        while temp_files(&dir).is_empty() {
            assert!(
                t.elapsed() < Duration::from_secs(300),
                "no temporary file appeared"
            );
            assert!(child.try_wait().unwrap().is_none(), "zkrv exited early");
            std::thread::sleep(Duration::from_millis(20));
        }
        let st = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let status = child.wait().unwrap();
        assert!(!status.success(), "SIG{sig}: {status:?}");
        assert_eq!(temp_files(&dir), Vec::<String>::new(), "SIG{sig}");
        assert!(!p.exists(), "SIG{sig}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding 7: a write error (the file size limit, `ulimit -f`, which would otherwise kill zkrv with
/// SIGXFSZ) is reported and leaves neither the proof nor the temporary file.
#[test]
fn write_error_removes_the_temporary_file() {
    let dir = tempdir("efbig");
    let elf = write_elf(&dir, "echo.elf", &echo_words());
    let p = dir.join("p.zkrv");
    let script = format!(
        "ulimit -f 64 && exec '{}' prove '{}' -o '{}' --backend cpu --no-zk",
        env!("CARGO_BIN_EXE_zkrv"),
        s(&elf),
        s(&p)
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("writing") && err.contains("p.zkrv"), "{err}");
    assert_eq!(temp_files(&dir), Vec::<String>::new());
    assert!(!p.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `zkrv new`, then the README's commands, from a directory outside the checkout: build, run, program-id,
/// prove, verify (and --json). Runs only where the guest toolchain is installed.
fn new_guest_end_to_end(lang: &str, tools: &[&str]) {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        eprintln!(
            "SKIPPED new {lang} guest end to end: {} not installed (scripts/test.sh installs them where apt \
             has them, as scripts/install-guest-toolchains.sh does)",
            missing.join(", ")
        );
        return;
    }
    let dir = tempdir(&format!("new-{lang}"));
    let g = dir.join("hello");
    let out = zkrv(&["new", s(&g), "--lang", lang]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let again = zkrv(&["new", s(&g), "--lang", lang]);
    assert!(text(&again.stderr).contains("already exists"));
    let built = Command::new("sh")
        .arg(g.join("build.sh"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}{}",
        text(&built.stdout),
        text(&built.stderr)
    );
    let elf = g.join("hello.elf");
    // The input as the README writes it: n = 100, a u64 LE for C (its `printf ... > input.bin` line), a
    // typed frame of `Job { n: 100 }` for Rust (the SDK's encoding of it), written from JSON by the
    // template's host helper (its `(cd host && cargo run -q -- '{"n": 100}') > input.bin` line).
    let readme = std::fs::read_to_string(g.join("README.md")).unwrap();
    let printf = readme
        .lines()
        .find(|l| l.starts_with("printf ") || l.starts_with("(cd host && cargo run"))
        .expect("the README writes the input");
    let made = Command::new("sh")
        .args(["-c", printf])
        .current_dir(&g)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(made.status.success(), "{printf}: {}", text(&made.stderr));
    let input = g.join("input.bin");
    let (want_input, want_output) = if lang == "rust" {
        let framed = |v: u64| zkrv_sdk::io::Input::new().write(&v).unwrap().into_bytes();
        (framed(100), framed(5050))
    } else {
        (
            100u64.to_le_bytes().to_vec(),
            5050u64.to_le_bytes().to_vec(),
        )
    };
    assert_eq!(std::fs::read(&input).unwrap(), want_input, "{printf}");
    let run = zkrv(&["run", s(&elf), "--input", s(&input)]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(run.stdout, want_output);
    if lang == "rust" {
        assert!(
            readme.contains("02 00 00 00 ba 27") && want_output == [2, 0, 0, 0, 0xba, 0x27],
            "the README shows the output frame"
        );
        // The guest uses the typed API (`read::<T>()`, `commit(&v)`).
        let main = std::fs::read_to_string(g.join("src/main.rs")).unwrap();
        assert!(main.contains("zkrv_guest::read()") && main.contains("zkrv_guest::commit(&sum)"));
    }
    let id = text(&zkrv(&["program-id", s(&elf)]).stdout)
        .trim()
        .to_string();
    let proof = g.join("hello.zkrv");
    let out = zkrv(&[
        "prove",
        s(&elf),
        "--input",
        s(&input),
        "-o",
        s(&proof),
        "--backend",
        "cpu",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("summed"), "fd 2 forwarded");
    let out = zkrv(&["verify", s(&proof), s(&elf)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = zkrv(&["verify", "--json", s(&proof), s(&elf)]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["accepted"], true);
    assert_eq!(j["zero_knowledge"], true);
    assert_eq!(j["program_id"].as_str().unwrap(), id);
    let hex: String = want_output.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(j["output_hex"].as_str().unwrap(), hex);
    if lang == "rust" {
        rust_template_hashes_on_the_precompiles(&g);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The cycle count of a `zkrv run` summary line (`exit code 0 after N cycles ...`).
fn run_cycles(stderr: &[u8]) -> u64 {
    let t = text(stderr);
    t.split("after ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cycle count in {t:?}"))
}

/// The Rust template's drop-in route: with its commented `sha2` and `tiny-keccak` dependencies enabled, code
/// written against those crates builds against the drop-ins of `zkrv-dropin/` (`[patch.crates-io]`), gives
/// the digests of the bundled software guests (crates.io `sha2`, `tiny-keccak`) and runs on the precompiles
/// (far fewer cycles).
fn rust_template_hashes_on_the_precompiles(g: &Path) {
    let manifest = std::fs::read_to_string(g.join("Cargo.toml")).unwrap();
    let enabled = manifest
        .replace("# sha2 = ", "sha2 = ")
        .replace("# tiny-keccak = ", "tiny-keccak = ");
    let deps = |m: &str| {
        m.lines()
            .filter(|l| {
                l.starts_with("sha2 = { version") || l.starts_with("tiny-keccak = { version")
            })
            .count()
    };
    assert_eq!(
        (deps(&manifest), deps(&enabled)),
        (0, 2),
        "the template's Cargo.toml lists both drop-in dependencies, commented"
    );
    assert!(manifest.contains("[patch.crates-io]"));
    std::fs::write(g.join("Cargo.toml"), enabled).unwrap();
    std::fs::write(
        g.join("src/main.rs"),
        r#"#![no_std]
#![no_main]
use sha2::{Digest, Sha256};
use tiny_keccak::{Hasher, Keccak};
zkrv_guest::entry!(main);
fn main() {
    let data = zkrv_guest::read_input_to_end();
    let d: [u8; 32] = Sha256::digest(&data).into();
    zkrv_guest::write_output(&d);
    let mut k = Keccak::v256();
    k.update(&data);
    let mut out = [0u8; 32];
    k.finalize(&mut out);
    zkrv_guest::write_output(&out);
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
    let input = g.join("hash-input.bin");
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 131 + 7) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let run = zkrv(&["run", s(&g.join("hello.elf")), "--input", s(&input)]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let guests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guests/bin");
    let (mut want, mut software_cycles) = (Vec::new(), 0);
    for soft in ["sha256", "keccak"] {
        let r = zkrv(&[
            "run",
            s(&guests.join(format!("{soft}.elf"))),
            "--input",
            s(&input),
        ]);
        assert!(r.status.success(), "{soft}: {}", text(&r.stderr));
        want.extend_from_slice(&r.stdout);
        software_cycles += run_cycles(&r.stderr);
    }
    assert_eq!(
        run.stdout, want,
        "the drop-ins' digests are the software guests'"
    );
    let cycles = run_cycles(&run.stderr);
    assert!(
        cycles * 5 < software_cycles,
        "{cycles} cycles on the precompiles vs {software_cycles} for the software guests"
    );
}

#[test]
fn new_c_guest_builds_runs_proves_and_verifies_outside_the_checkout() {
    new_guest_end_to_end("c", &["riscv64-unknown-elf-gcc"]);
}

#[test]
fn new_rust_guest_builds_runs_proves_and_verifies_outside_the_checkout() {
    new_guest_end_to_end("rust", &["/usr/bin/cargo", "/usr/bin/rustc", "ld.lld-14"]);
}

#[test]
fn new_refuses_bad_names() {
    let dir = tempdir("newbad");
    for bad in ["Hello", "1x", "a b", "x.y"] {
        let out = zkrv(&["new", s(&dir.join(bad))]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(text(&out.stderr).contains("use lowercase letters"), "{bad}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
