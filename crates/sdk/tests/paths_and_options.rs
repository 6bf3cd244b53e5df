//! Issue 16 follow-up: `Receipt::save` / `write_atomic` refuse paths the atomic rename would damage or
//! cannot create (a symbolic link, a FIFO, a trailing `/`) with `Error::OutputPath`, leaving them as they
//! were; a FIFO given to `Program::load` / `Receipt::load` is refused instead of blocking; a bad
//! `segment_cycles` is `Error::SegmentSize` (never a panic or a message about the cycle limit); a run with a
//! `read`/`write` argument of 2^32 or more is refused before proving, one proof or segmented.

use std::path::{Path, PathBuf};
use std::time::Duration;
use zkrv_executor::asm::*;
use zkrv_sdk::{
    check_output_path, prove, write_atomic, Error, OutputPathError, Program, ProveOptions, Receipt,
    ReceiptProof, StarkConfig,
};

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zkrv-sdk16-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A FIFO at `path` (`mkfifo`), or `false` where mkfifo is missing.
fn mkfifo(path: &Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// A receipt that is never encoded: the path checks come first.
fn dummy_receipt() -> Receipt {
    Receipt {
        statement: zkrv_sdk::Statement {
            program: [0; 32],
            exit_code: 0,
            output: Vec::new(),
        },
        proof: ReceiptProof::Segmented {
            segment_rows: 128,
            segments: Vec::new(),
        },
        config: StarkConfig::default_zk(),
    }
}

fn reason(r: Result<(), Error>) -> OutputPathError {
    match r {
        Err(Error::OutputPath { reason, .. }) => reason,
        other => panic!("expected OutputPath, got {other:?}"),
    }
}

#[test]
fn save_refuses_symlinks_fifos_and_trailing_slashes() {
    let dir = tempdir("save");
    let receipt = dummy_receipt();
    // A symbolic link to a file: the link and its target stay as they were.
    let target = dir.join("target.txt");
    std::fs::write(&target, b"keep me").unwrap();
    let link = dir.join("link.zkrv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_eq!(reason(receipt.save(&link)), OutputPathError::Symlink);
    assert_eq!(reason(write_atomic(&link, b"x")), OutputPathError::Symlink);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
    // A FIFO stays a FIFO.
    let fifo = dir.join("fifo.zkrv");
    if mkfifo(&fifo) {
        assert_eq!(reason(receipt.save(&fifo)), OutputPathError::NotRegularFile);
        assert_eq!(
            reason(write_atomic(&fifo, b"x")),
            OutputPathError::NotRegularFile
        );
        assert!(is_fifo(&fifo));
    } else {
        eprintln!("mkfifo unavailable: FIFO case skipped");
    }
    // A trailing slash names a directory: refused before writing (was `Not a directory` at the rename).
    let slash = PathBuf::from(format!("{}/", dir.join("new.zkrv").display()));
    assert_eq!(reason(receipt.save(&slash)), OutputPathError::TrailingSlash);
    let e = write_atomic(&slash, b"x").unwrap_err();
    assert!(e.to_string().contains("ends in `/`"), "{e}");
    // A directory, a missing directory, a name over 255 bytes.
    assert_eq!(reason(check_output_path(&dir)), OutputPathError::Directory);
    assert!(matches!(
        reason(check_output_path(&dir.join("no/such/p.zkrv"))),
        OutputPathError::NoDirectory { .. }
    ));
    assert_eq!(
        reason(check_output_path(&dir.join("a".repeat(256)))),
        OutputPathError::NameTooLong { len: 256 }
    );
    // Nothing was created besides the test's own files; a regular path still works.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want = vec!["link.zkrv", "target.txt"];
    if fifo.exists() {
        want.insert(0, "fifo.zkrv");
    }
    assert_eq!(names, want);
    let ok = dir.join("ok.bin");
    write_atomic(&ok, b"bytes").unwrap();
    assert_eq!(std::fs::read(&ok).unwrap(), b"bytes");
    write_atomic(&ok, b"again").unwrap();
    assert_eq!(std::fs::read(&ok).unwrap(), b"again");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loading_a_fifo_is_refused_not_a_hang() {
    let dir = tempdir("fifo-in");
    let fifo = dir.join("in.fifo");
    if !mkfifo(&fifo) {
        eprintln!("SKIPPED: mkfifo unavailable");
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let f = fifo.clone();
    std::thread::spawn(move || {
        let elf = Program::load(&f).map(|_| ());
        let proof = Receipt::load(&f).map(|_| ());
        let _ = tx.send((elf, proof));
    });
    let (elf, proof) = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("loading a FIFO blocked (no writer)");
    for (r, what) in [(elf, "ELF"), (proof, "proof file")] {
        match r {
            Err(e @ Error::NotAFile { .. }) => {
                let m = e.to_string();
                assert!(m.starts_with(what) && m.contains("FIFO"), "{m}");
            }
            other => panic!("{what}: expected NotAFile, got {other:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `exit(0)` after `words`.
fn program(mut words: Vec<u32>) -> Program {
    words.extend([addi(10, 0, 0), addi(17, 0, 93), ECALL]);
    Program::from_inner(zkrv_executor::Program::from_words(0x1000, &words).unwrap())
}

#[test]
fn bad_segment_sizes_are_typed_errors_before_the_cycle_limit() {
    let p = program(vec![]);
    for rows in [0u64, 1, 2, 3, 64, 100, 1 << 27] {
        let opts = ProveOptions {
            segment_cycles: Some(rows),
            ..ProveOptions::default()
        };
        match prove(&p, b"", &opts) {
            Err(e @ Error::SegmentSize { .. }) => {
                let m = e.to_string();
                assert!(m.starts_with(&format!("segment_cycles {rows}: ")), "{m}");
                assert!(!m.contains("18446744073709551615"), "{m}");
            }
            other => panic!("segment_cycles {rows}: expected SegmentSize, got {other:?}"),
        }
    }
}

/// `read(0, sp - 256, len)` with `len` of 2^32 (the executor returns 0 on an empty input).
fn huge_read(spin: i32) -> Program {
    let mut w = vec![addi(6, 0, spin), addi(5, 5, 1), blt(5, 6, -4)];
    w.push(addi(10, 0, 0));
    w.push(addi(11, 2, -256));
    w.extend(li(12, 1 << 32));
    w.extend([addi(17, 0, 63), ECALL]);
    program(w)
}

#[test]
fn unprovable_syscall_arguments_are_refused_before_proving() {
    for (p, segment_cycles) in [(huge_read(1), None), (huge_read(200), Some(128))] {
        assert!(p.execute(b"", 1 << 20).is_ok(), "the executor runs it");
        let opts = ProveOptions {
            segment_cycles,
            ..ProveOptions::default()
        };
        let t = std::time::Instant::now();
        match prove(&p, b"", &opts) {
            Err(Error::Machine(e @ zkrv_machine::MachineError::SyscallArgument { .. })) => {
                let m = e.to_string();
                assert!(
                    m.contains("`read` ECALL at cycle") && m.contains("a2 (length) = 0x100000000"),
                    "{m}"
                );
            }
            other => panic!("{segment_cycles:?}: expected SyscallArgument, got {other:?}"),
        }
        // Refused from the execution alone (no segment, no proof was started).
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
}
