//! Regression tests for user-reported findings: zero-length syscalls, error messages, partial output.

mod common;
use common::*;
use zkrv_executor::asm::*;
use zkrv_executor::{execute_keep_output, ElfError, ExecError, ExecOptions, Program};

/// `write(fd, buf, len)` as instructions.
fn write(fd: i64, buf: i64, len: i64) -> Vec<u32> {
    let mut w = li(10, fd);
    w.extend(li(11, buf));
    w.extend(li(12, len));
    w.extend(li(17, 64));
    w.push(ECALL);
    w
}

/// `read(0, buf, len)` as instructions.
fn read(buf: i64, len: i64) -> Vec<u32> {
    let mut w = li(10, 0);
    w.extend(li(11, buf));
    w.extend(li(12, len));
    w.extend(li(17, 63));
    w.push(ECALL);
    w
}

#[test]
fn zero_length_write_and_read_with_any_buffer_succeed() {
    for buf in [0i64, 0x10, 0x7fff_ffff, -1] {
        // write(1, buf, 0); x5 = ret; read(0, buf, 0); x6 = ret; then exit
        let mut w = write(1, buf, 0);
        w.push(addi(5, 10, 0));
        w.extend(write(2, buf, 0));
        w.push(add(5, 5, 10));
        w.extend(read(buf, 0));
        w.push(addi(6, 10, 0));
        let e = run_rec(&w, b"abc").unwrap_or_else(|e| panic!("buf {buf:#x}: {e}"));
        let regs = e.record.as_ref().unwrap().final_regs;
        assert_eq!((regs[5], regs[6]), (0, 0), "buf {buf:#x}");
        assert!(e.public_output.is_empty());
    }
    // A read at the end of the input transfers nothing and needs no valid buffer either.
    let mut w = read(0x20000, 3);
    w.extend(read(0, 8));
    w.push(addi(6, 10, 0));
    let e = run_rec(&w, b"abc").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(e.record.unwrap().final_regs[6], 0);
}

#[test]
fn nonzero_length_with_a_bad_buffer_names_the_range() {
    // A huge length from a valid start: the error names the length, not just the (valid) start.
    let e = run_rec(&write(1, 0x20000, 0x1_0000_0000), &[]).unwrap_err();
    assert!(
        matches!(
            e,
            ExecError::BufferOutOfBounds {
                addr: 0x20000,
                len: 0x1_0000_0000,
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("length 4294967296") && msg.contains("0x20000"),
        "{msg}"
    );
    // A one-byte write from null is still an error.
    let e = run_rec(&write(1, 0, 1), &[]).unwrap_err();
    assert!(
        matches!(
            e,
            ExecError::BufferOutOfBounds {
                addr: 0,
                len: 1,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn all_zero_word_is_not_called_compressed() {
    let p = Program::from_words(BASE, &[0]).unwrap();
    let e = execute_keep_output(&p, &[], &ExecOptions::default()).unwrap_err();
    let msg = e.error.to_string();
    assert!(
        msg.contains("all-zero word") && !msg.contains("compressed"),
        "{msg}"
    );
}

#[test]
fn cycle_limit_message_reads_well_for_one() {
    let p = Program::from_words(BASE, &[addi(5, 5, 1), addi(5, 5, 1)]).unwrap();
    let opts = ExecOptions {
        max_cycles: 1,
        ..Default::default()
    };
    let e = execute_keep_output(&p, &[], &opts).unwrap_err();
    assert!(
        e.error
            .to_string()
            .contains("cycle limit of 1 instruction(s)"),
        "{}",
        e.error
    );
}

#[test]
fn failure_keeps_output_written_before_the_error() {
    // "hi" to fd 1, "dbg" to fd 2 (from the stack), then an illegal all-zero word.
    let mut w = li(5, 0x6968); // "hi"
    w.push(sd(5, 2, -16));
    w.extend(li(5, 0x676264)); // "dbg"
    w.push(sd(5, 2, -8));
    w.extend(li(10, 1));
    w.push(addi(11, 2, -16));
    w.extend(li(12, 2));
    w.extend(li(17, 64));
    w.push(ECALL);
    w.extend(li(10, 2));
    w.push(addi(11, 2, -8));
    w.extend(li(12, 3));
    w.push(ECALL);
    w.push(0);
    let p = Program::from_words(BASE, &w).unwrap();
    let f = execute_keep_output(&p, &[], &ExecOptions::default()).unwrap_err();
    assert!(matches!(
        f.error,
        ExecError::IllegalInstruction { word: 0, .. }
    ));
    assert_eq!(f.public_output, b"hi");
    assert_eq!(f.debug_output, b"dbg");
    assert_eq!(f.cycles as usize, w.len() - 1);
}

#[test]
fn elf_messages_name_the_real_cause() {
    let seg = || Seg {
        vaddr: BASE,
        data: words_to_bytes(&with_exit(&[])),
        memsz: 0x100,
        flags: 5,
    };
    // Program header table cut off.
    let mut e = build_elf(BASE, &[seg(), seg()]);
    e.truncate(64 + 56 + 20);
    let err = Program::from_elf(&e).unwrap_err();
    assert!(
        matches!(err, ElfError::TruncatedProgramHeaders { count: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("program header table truncated"));
    // No PT_LOAD at all (type changed to PT_NOTE), or only empty ones.
    let mut e = build_elf(BASE, &[seg()]);
    e[64..68].copy_from_slice(&4u32.to_le_bytes());
    assert_eq!(
        Program::from_elf(&e).unwrap_err(),
        ElfError::NoLoadableSegments
    );
    let e = build_elf(BASE, &[]);
    let err = Program::from_elf(&e).unwrap_err();
    assert_eq!(err, ElfError::NoLoadableSegments);
    assert!(err.to_string().contains("no loadable segments"));
}
