//! Every prebuilt guest under `qemu-riscv64 -cpu rv64,c=false,a=false,f=false,d=false` (Linux user mode, the
//! input on stdin) gives the same exit code, public output (stdout) and debug output (stderr) as zkrv's
//! executor. Skipped, with a message, when `qemu-riscv64` is not on the PATH (CI installs qemu-user).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{cases, load, run, GUESTS};

const QEMU: &str = "qemu-riscv64";
const QEMU_CPU: &str = "rv64,c=false,a=false,f=false,d=false";

struct QemuRun {
    exit_code: u32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn qemu_available() -> bool {
    let ok = Command::new(QEMU)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: {QEMU} not found on the PATH (apt-get install qemu-user)");
    }
    ok
}

fn run_qemu(name: &str, input: &[u8]) -> QemuRun {
    let path = common::elf_path(name);
    let mut child = Command::new(QEMU)
        .args(["-cpu", QEMU_CPU])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {QEMU} {}: {e}", path.display()));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let data = input.to_vec();
    // Feed stdin from a thread so a guest that stops reading early cannot deadlock the pipes.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait for {QEMU}: {e}"));
    let _ = feeder.join();
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("{name} under {QEMU} killed by a signal: {}", out.status));
    QemuRun {
        exit_code: code as u32,
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

#[test]
fn every_guest_matches_qemu() {
    if !qemu_available() {
        return;
    }
    for name in GUESTS {
        let program = load(name);
        for input in cases(name) {
            let q = run_qemu(name, &input);
            let z = run(name, &program, &input);
            let what = format!("{name} on a {}-byte input", input.len());
            // Linux exit codes are 8 bits: compare the low byte (the guests' codes are all < 256).
            assert_eq!(
                z.exit_code & 0xFF,
                q.exit_code,
                "{what}: exit code (zkrv vs qemu)"
            );
            assert_eq!(
                z.public_output, q.stdout,
                "{what}: public output (zkrv) vs stdout (qemu)"
            );
            assert_eq!(
                z.debug_output, q.stderr,
                "{what}: debug output (zkrv) vs stderr (qemu)"
            );
        }
    }
}

/// Checks the host model of the rv64im guest against qemu alone (independent of zkrv's executor).
#[test]
fn rv64im_qemu_matches_isa_semantics() {
    if !qemu_available() {
        return;
    }
    let q = run_qemu("rv64im", b"");
    assert_eq!(q.exit_code, 0);
    let (want, known) = common::rv64im_expected();
    common::assert_masked_eq("rv64im under qemu", &q.stdout, &want, &known);
}

/// Checks the host model of every other guest against qemu alone.
#[test]
fn host_models_match_qemu() {
    if !qemu_available() {
        return;
    }
    for name in GUESTS.iter().filter(|&&n| n != "rv64im") {
        for input in cases(name) {
            let q = run_qemu(name, &input);
            let (code, out) = common::expected(name, &input);
            assert_eq!(
                (q.exit_code, &q.stdout),
                (code, &out),
                "{name} on a {}-byte input under qemu",
                input.len()
            );
        }
    }
}
