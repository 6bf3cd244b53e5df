//! Issue 16, a second new-user pass: output paths ending in `/` refused before proving; `--segment-cycles`
//! checked before the cycle limit; `read`/`write` arguments of 2^32 or more refused before proving (one
//! proof or segments); the zero-knowledge label of a segmented proof says that memory written before a
//! boundary (which may hold the private input) is public; tampered segments named once; a closed stdout
//! pipe ends zkrv by SIGPIPE, quietly; a FIFO given as a file is refused, not a hang. Tiny hand-assembled
//! ELFs.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use zkrv_executor::asm::*;
use zkrv_sdk::proof_file::{decode_any, encode_segmented, Decoded};

mod common;
use common::*;
// `s` is also the S-type encoder of `asm::*`: here it is the path helper.
use common::s;

/// `n` iterations of a two-instruction loop.
fn spin(w: &mut Vec<u32>, n: i32) {
    w.push(addi(6, 0, n));
    w.push(addi(5, 5, 1));
    w.push(blt(5, 6, -4));
}

/// [`assert_refused_early`], and also before the stage-2 progress line (`[2/5]`) was printed.
fn assert_refused_before_stage_2(out: &Output, msg: &str) {
    assert_refused_early(out, msg);
    let err = text(&out.stderr);
    assert!(
        !err.contains("[2/5]"),
        "refused only after proving started: {err}"
    );
}

/// Runs zkrv, killing it (its own child, by handle) if it has not exited after `secs`.
fn zkrv_within(args: &[&str], secs: u64) -> Output {
    let mut child = spawn_zkrv(args, Stdio::null());
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("zkrv {args:?} still running after {secs} s (blocked)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn output_paths_ending_in_a_slash_are_refused_before_proving() {
    let dir = tempdir("slash");
    let elf = write_elf(&dir, "g.elf", &exit0(vec![]));
    let slash = format!("{}/", dir.join("new.zkrv").display());
    let out = zkrv(&[
        "prove",
        s(&elf),
        "-o",
        &slash,
        "--no-zk",
        "--backend",
        "cpu",
    ]);
    assert_refused_before_stage_2(&out, "ends in `/`");
    let p = dir.join("p.zkrv");
    let out = zkrv(&[
        "prove",
        s(&elf),
        "-o",
        s(&p),
        "--no-zk",
        "--backend",
        "cpu",
        "--profile-json",
        &format!("{}/", dir.join("prof.json").display()),
    ]);
    assert_refused_before_stage_2(&out, "--profile-json");
    assert!(!p.exists());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1, "only the ELF: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn segment_size_is_checked_before_the_cycle_limit() {
    let dir = tempdir("segsize");
    let elf = write_elf(&dir, "g.elf", &exit0(vec![]));
    let p = dir.join("p.zkrv");
    for rows in ["0", "1", "2", "100"] {
        let out = zkrv(&["prove", s(&elf), "-o", s(&p), "--segment-cycles", rows]);
        assert_refused_before_stage_2(&out, &format!("--segment-cycles {rows}: "));
        let err = text(&out.stderr);
        assert!(!err.contains("--max-cycles"), "{err}");
    }
    assert!(!p.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn syscall_arguments_over_32_bits_are_refused_before_proving() {
    let dir = tempdir("sysargs");
    let p = dir.join("p.zkrv");
    // read(0, buf, 2^32) right away; a zero-length write from 0xffffffffffff0000; the same read after 300
    // cycles of spinning, proven in segments of 128 rows (refused in the first pass, no segment proven).
    let mut read = Vec::new();
    ecall(&mut read, 63, 0, 0x7fff_ff00, 1 << 32);
    let mut write = Vec::new();
    ecall(&mut write, 64, 1, 0xffff_ffff_ffff_0000u64 as i64, 0);
    let mut late = Vec::new();
    spin(&mut late, 150);
    ecall(&mut late, 63, 0, 0x7fff_ff00, 1 << 32);
    for (name, words, segments, want) in [
        ("read", read, false, "a2 (length) = 0x100000000"),
        ("write", write, false, "a1 (buffer) = 0xffffffffffff0000"),
        ("late", late, true, "a2 (length) = 0x100000000"),
    ] {
        let elf = write_elf(&dir, &format!("{name}.elf"), &exit0(words));
        let run = zkrv(&["run", s(&elf)]);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
        let mut args = vec!["prove", s(&elf), "-o", s(&p), "--no-zk", "--backend", "cpu"];
        if segments {
            args.extend(["--segment-cycles", "128"]);
        }
        let out = zkrv(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(want) && err.contains("ECALL at cycle") && err.contains("docs/abi.md"),
            "{name}: {err}"
        );
        assert!(!err.contains("[3/5] prove"), "{name}: {err}");
        assert!(!err.contains("segment    0"), "{name}: {err}");
        assert!(!p.exists(), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The guest reads an 8-byte private input into memory, spins past a segment boundary and exits: a
/// segmented zk proof publishes that memory (the input bytes are in the file), and both `prove` and
/// `verify` say so; then tampered segments are rejected with their reason said once.
#[test]
fn segmented_zk_label_says_written_memory_is_public() {
    let dir = tempdir("zklabel");
    let mut w = Vec::new();
    ecall(&mut w, 63, 0, 0x7fff_ff00, 8);
    spin(&mut w, 80);
    let elf = write_elf(&dir, "g.elf", &exit0(w));
    let input = dir.join("in.bin");
    let secret = b"SECRET!!";
    std::fs::write(&input, secret).unwrap();
    let p = dir.join("p.zkrv");
    let out = zkrv(&[
        "prove",
        s(&elf),
        "--input",
        s(&input),
        "-o",
        s(&p),
        "--segment-cycles",
        "128",
        "--public-segment-boundaries",
        "--security",
        "dev",
        "--backend",
        "cpu",
    ]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(so.contains("segments            2 of 128 rows"), "{so}");
    let label = "zero knowledge      only within each segment: the memory written before each segment \
                 boundary (which may include the private input) and the registers at the boundaries are \
                 public in this proof";
    assert!(so.contains(label), "{so}");
    assert!(!so.contains("zero knowledge      yes"), "{so}");
    assert!(
        se.contains(
            "zkrv: warning: a segmented proof is zero-knowledge only within each segment: the memory \
             written before each segment boundary (which may include the private input)"
        ),
        "{se}"
    );
    // What the label warns of: the input, read into memory in segment 0, is in the file.
    let bytes = std::fs::read(&p).unwrap();
    assert!(bytes.windows(8).any(|x| x == secret), "the published write");
    let out = zkrv(&["verify", s(&p), s(&elf), "--min-security", "50"]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(so.contains(label), "{so}");

    // Tampered segments: the reason once, with the segment named once.
    let Ok(Decoded::Segmented {
        statement,
        segment_rows,
        segments,
        config,
    }) = decode_any(&bytes)
    else {
        panic!("not a segmented file")
    };
    let q = dir.join("q.zkrv");
    let rejected = |segs: &[zkrv_sdk::SegmentProof]| {
        std::fs::write(
            &q,
            encode_segmented(&config, &statement, segment_rows, segs).unwrap(),
        )
        .unwrap();
        let out = zkrv(&["verify", s(&q), s(&elf), "--min-security", "50"]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        err
    };
    let mut t = segments.clone();
    t[0].header.cycles = 0;
    let err = rejected(&t);
    assert!(
        err.contains("segment 0 claims 0 cycles; a segment runs at least 1"),
        "{err}"
    );
    assert!(!err.contains("more than"), "{err}");
    let mut t = segments.clone();
    if let zkrv_machine::segment::SegmentEnd::Pause(b) = &mut t[0].header.end {
        b.regs[0] = 0x10000;
    }
    let err = rejected(&t);
    assert!(
        err.contains(": segment 0: x0 is 0x10000 at its end"),
        "{err}"
    );
    assert_eq!(err.matches("segment 0").count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `zkrv verify proof elf | head -1`: the reader goes away; zkrv dies of SIGPIPE without a message (as
/// Unix tools do), instead of `zkrv: error: writing stdout: Broken pipe`, exit 2. Same for `run` and
/// `program-id`.
#[test]
fn a_closed_stdout_pipe_ends_zkrv_quietly_by_sigpipe() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempdir("sigpipe");
    let mut w = li(5, 0x6968);
    w.push(sd(5, 2, -8));
    ecall(&mut w, 64, 1, 0x7fff_fff8, 2);
    let elf = write_elf(&dir, "g.elf", &exit0(w));
    let p = dir.join("p.zkrv");
    let out = zkrv(&["prove", s(&elf), "-o", s(&p), "--no-zk", "--backend", "cpu"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for args in [
        vec!["verify", s(&p), s(&elf)],
        vec!["verify", "--json", s(&p), s(&elf)],
        vec!["run", s(&elf)],
        vec!["program-id", s(&elf)],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = zkrv_bin()
            .args(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.signal(), Some(13), "{args:?}: {err}");
        assert!(!err.contains("error"), "{args:?}: {err}");
    }
    // Not a pipe: a full disk is still an error naming stdout.
    if Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = zkrv_bin()
            .args(["verify", s(&p), s(&elf)])
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains("writing stdout"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fifos_given_as_files_are_refused_not_a_hang() {
    let dir = tempdir("fifo");
    let elf = write_elf(&dir, "g.elf", &exit0(vec![]));
    let fifo = dir.join("in.fifo");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|st| st.success());
    if !made {
        eprintln!("SKIPPED: mkfifo unavailable");
        return;
    }
    let p = dir.join("p.zkrv");
    for (args, what) in [
        (vec!["run", s(&elf), "--input", s(&fifo)], "input"),
        (
            vec!["prove", s(&elf), "--input", s(&fifo), "-o", s(&p)],
            "input",
        ),
        (vec!["verify", s(&fifo), s(&elf)], "proof file"),
        (vec!["run", s(&fifo)], "ELF"),
    ] {
        let out = zkrv_within(&args, 20);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{what} {} is a FIFO (named pipe)", s(&fifo))),
            "{args:?}: {err}"
        );
        assert_eq!(err.contains("--input -"), what == "input", "{err}");
    }
    assert!(!p.exists());
    // A shell's `<(command)` (an open pipe, /dev/fd/N) is still read.
    let script = format!(
        "exec '{}' run '{}' --input <(printf abc)",
        env!("CARGO_BIN_EXE_zkrv"),
        s(&elf)
    );
    if let Ok(out) = Command::new("bash").args(["-c", &script]).output() {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
