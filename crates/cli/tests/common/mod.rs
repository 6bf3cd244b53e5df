//! Helpers shared by the CLI integration tests (each test file says `mod common; use common::*;`): running
//! the `zkrv` binary, temporary directories, the bundled guests, and tiny hand-assembled RISC-V ELFs.
//! Not every test file uses every helper, hence the `#[allow(dead_code)]`s.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use zkrv_executor::asm::{li, ECALL};

/// A `Command` for the `zkrv` binary built with these tests.
#[allow(dead_code)]
pub fn zkrv_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zkrv"))
}

/// Runs `zkrv args` to completion and returns its exit status, stdout and stderr.
#[allow(dead_code)]
pub fn zkrv(args: &[&str]) -> Output {
    zkrv_bin().args(args).output().expect("zkrv runs")
}

/// Starts `zkrv args` with `stdin` as its standard input and stdout, stderr piped (read them with
/// `wait_with_output`).
#[allow(dead_code)]
pub fn spawn_zkrv(args: &[&str], stdin: Stdio) -> Child {
    zkrv_bin()
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zkrv runs")
}

/// `b` as text (invalid UTF-8 replaced).
#[allow(dead_code)]
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh, empty directory `zkrv-<test file>-<tag>-<pid>` under the system temp dir (the test file's name
/// keeps the test binaries, which run at the same time, apart).
#[allow(dead_code)]
pub fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "zkrv-{}-{tag}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `p` as a `&str` (the test paths are UTF-8).
#[allow(dead_code)]
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Path of the prebuilt bundled guest `guests/bin/<name>.elf` (it may be absent: callers that need it skip).
#[allow(dead_code)]
pub fn bundled(name: &str) -> String {
    format!("{}/../../guests/bin/{name}.elf", env!("CARGO_MANIFEST_DIR"))
}

/// Asserts a host error (exit 2) raised before proving started, whose message contains `msg`.
#[allow(dead_code)]
pub fn assert_refused_early(out: &Output, msg: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(msg), "expected {msg:?} in: {err}");
    assert!(
        !err.contains("proving "),
        "refused only after proving started: {err}"
    );
}

/// Load and entry address of the ELFs made by [`elf_bytes`].
#[allow(dead_code)]
pub const BASE: u64 = 0x10000;

/// A minimal ELF64 LE RISC-V ET_EXEC: one RWX segment with `words` at [`BASE`] (memsz 0x1000), entry there.
#[allow(dead_code)]
pub fn elf_bytes(words: &[u32]) -> Vec<u8> {
    let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut out = Vec::new();
    out.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
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

/// Writes [`elf_bytes`]`(words)` to `dir/name` and returns that path.
#[allow(dead_code)]
pub fn write_elf(dir: &Path, name: &str, words: &[u32]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, elf_bytes(words)).unwrap();
    p
}

/// Appends syscall `num` with arguments a0, a1, a2 (loaded with `li`, then `ecall`) to `w`.
#[allow(dead_code)]
pub fn ecall(w: &mut Vec<u32>, num: i64, a0: i64, a1: i64, a2: i64) {
    w.extend(li(10, a0));
    w.extend(li(11, a1));
    w.extend(li(12, a2));
    w.extend(li(17, num));
    w.push(ECALL);
}

/// `w` followed by exit(0).
#[allow(dead_code)]
pub fn exit0(mut w: Vec<u32>) -> Vec<u32> {
    ecall(&mut w, 93, 0, 0, 0);
    w
}
