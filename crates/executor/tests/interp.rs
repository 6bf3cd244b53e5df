//! Interpreter unit tests with hand-computed expectations.

mod common;
use common::*;
use zkrv_executor::asm::*;
use zkrv_executor::{execute, ExecError, ExecOptions, Program};

const MIN: i64 = i64::MIN;
const M1: u64 = u64::MAX; // -1

/// Loads a into x5, b into x6, runs `inst` (rd = x7, rs1 = x5, rs2 = x6), returns x7.
fn binop(inst: u32, a: i64, b: i64) -> u64 {
    let mut w = li(5, a);
    w.extend(li(6, b));
    w.push(inst);
    regs_after(&w)[7]
}

fn m(f3: u32) -> u32 {
    op(1, f3, 7, 5, 6)
}
fn mw(f3: u32) -> u32 {
    op32(1, f3, 7, 5, 6)
}

#[test]
fn li_materializes_any_constant() {
    for v in [
        0i64,
        1,
        -1,
        2047,
        -2048,
        2048,
        0x7fff_ffff,
        -0x8000_0000,
        0x8000_0000,
        0xffff_ffff,
        MIN,
        i64::MAX,
        0x1234_5678_9abc_def0,
    ] {
        assert_eq!(regs_after(&li(9, v))[9], v as u64, "li {v:#x}");
    }
}

#[test]
fn m_extension_edge_cases() {
    // (inst, a, b, expected)
    let cases: &[(u32, i64, i64, u64)] = &[
        // MUL / MULH / MULHSU / MULHU
        (m(0), 3, -7, (-21i64) as u64),
        (m(0), MIN, -1, MIN as u64),
        (m(1), MIN, MIN, 0x4000_0000_0000_0000),
        (m(1), -1, -1, 0),
        (m(1), -1, 1, M1),
        (m(2), -1, -1, M1), // -1 * (2^64-1) = -(2^64-1): high = -1
        (m(2), 1, -1, 0),   // 1 * (2^64-1): high 0
        (m(2), MIN, -1, 0x8000_0000_0000_0000), // -2^63 * (2^64-1) = -2^127 + 2^63
        (m(3), -1, -1, 0xffff_ffff_ffff_fffe),
        (m(3), MIN, 2, 1),
        // DIV
        (m(4), 7, 0, M1),
        (m(4), MIN, -1, MIN as u64),
        (m(4), -7, 2, (-3i64) as u64),
        (m(4), 7, -2, (-3i64) as u64),
        // DIVU
        (m(5), 7, 0, M1),
        (m(5), -1, 2, 0x7fff_ffff_ffff_ffff),
        // REM
        (m(6), 7, 0, 7),
        (m(6), MIN, -1, 0),
        (m(6), -7, 2, M1),
        (m(6), 7, -2, 1),
        // REMU
        (m(7), -7, 0, (-7i64) as u64),
        (m(7), -1, 10, 5), // 18446744073709551615 % 10 = 5
        // MULW
        (mw(0), 0x7fff_ffff, 2, M1 - 1), // 0xfffffffe sign-extended
        (mw(0), 0x1_0000_0003, 5, 15),
        // DIVW
        (mw(4), 5, 0, M1),
        (mw(4), -0x8000_0000, -1, 0xffff_ffff_8000_0000),
        (mw(4), 0x1_0000_0007, 2, 3), // upper bits ignored
        // DIVUW
        (mw(5), 5, 0, M1),
        (mw(5), 0xffff_fffe, 1, 0xffff_ffff_ffff_fffe),
        (mw(5), -1, 2, 0x7fff_ffff),
        // REMW
        (mw(6), 0x1_8000_0001, 0, 0xffff_ffff_8000_0001),
        (mw(6), -0x8000_0000, -1, 0),
        (mw(6), -7, 2, M1),
        // REMUW
        (mw(7), 0xffff_fff9, 0, 0xffff_ffff_ffff_fff9),
        (mw(7), 0xffff_fff9, 0x10, 9),
    ];
    for &(inst, a, b, want) in cases {
        assert_eq!(
            binop(inst, a, b),
            want,
            "inst {inst:#010x} a {a:#x} b {b:#x}"
        );
    }
}

#[test]
fn alu_and_shifts() {
    let cases: &[(u32, i64, i64, u64)] = &[
        (add(7, 5, 6), i64::MAX, 1, MIN as u64),
        (sub(7, 5, 6), 0, 1, M1),
        (op(0, 1, 7, 5, 6), 1, 63, 1 << 63), // SLL uses 6 bits
        (op(0, 1, 7, 5, 6), 1, 64 + 3, 8),   // ...and ignores the rest
        (op(0, 5, 7, 5, 6), MIN, 63, 1),     // SRL
        (op(0x20, 5, 7, 5, 6), MIN, 63, M1), // SRA
        (op(0, 2, 7, 5, 6), -1, 0, 1),       // SLT
        (op(0, 3, 7, 5, 6), -1, 0, 0),       // SLTU
        (op32(0, 0, 7, 5, 6), 0x7fff_ffff, 1, 0xffff_ffff_8000_0000), // ADDW
        (op32(0x20, 0, 7, 5, 6), 0, 1, M1),  // SUBW
        (op32(0, 1, 7, 5, 6), 1, 31 + 32, 0xffff_ffff_8000_0000), // SLLW: 5 bits
        (op32(0, 5, 7, 5, 6), 0xffff_ffff_8000_0000u64 as i64, 31, 1), // SRLW
        (op32(0x20, 5, 7, 5, 6), 0x8000_0000, 31, M1), // SRAW
        (slli(7, 5, 63), 1, 0, 1 << 63),
        (srli(7, 5, 60), MIN, 0, 8),
        (srai(7, 5, 60), MIN, 0, (-8i64) as u64),
        (slliw(7, 5, 31), 1, 0, 0xffff_ffff_8000_0000),
        (srliw(7, 5, 4), -1, 0, 0x0fff_ffff),
        (sraiw(7, 5, 4), 0x8000_0000, 0, 0xffff_ffff_f800_0000),
        (addiw(7, 5, 1), 0x7fff_ffff, 0, 0xffff_ffff_8000_0000),
        (addiw(7, 5, 0), 0x1_2345_6789, 0, 0x2345_6789),
        (slti(7, 5, -1), MIN, 0, 1),
        (sltiu(7, 5, -1), 5, 0, 1), // imm sign-extends to 2^64-1
        (xori(7, 5, -1), 0x0f, 0, !0x0fu64),
        (andi(7, 5, -2048), -1, 0, (-2048i64) as u64),
    ];
    for &(inst, a, b, want) in cases {
        assert_eq!(
            binop(inst, a, b),
            want,
            "inst {inst:#010x} a {a:#x} b {b:#x}"
        );
    }
}

#[test]
fn x0_is_hardwired_and_lui_auipc() {
    let r = regs_after(&[addi(0, 0, 5), lui(1, 0xfffff), auipc(2, 1), add(3, 0, 0)]);
    assert_eq!(r[0], 0);
    assert_eq!(r[1], 0xffff_ffff_ffff_f000);
    assert_eq!(r[2], BASE + 8 + 0x1000);
    assert_eq!(r[3], 0);
}

#[test]
fn branches_and_jumps() {
    // x5 counts taken paths.
    let w = vec![
        addi(6, 0, -1),
        blt(6, 0, 8), // taken (-1 < 0)
        addi(5, 5, 100),
        bltu(6, 0, 8), // not taken (2^64-1 > 0)
        addi(5, 5, 1),
        bge(0, 6, 8), // taken
        addi(5, 5, 100),
        bgeu(0, 6, 8), // not taken
        addi(5, 5, 1),
        beq(0, 0, 8), // taken
        addi(5, 5, 100),
        bne(0, 0, 8), // not taken
        addi(5, 5, 1),
        jal(1, 8), // x1 = pc+4
        addi(5, 5, 100),
        auipc(9, 0),
        jalr(18, 9, 17), // target (pc9 + 17) & !1 = pc9 + 16
        addi(5, 5, 100),
        addi(5, 5, 100),
        addi(5, 5, 1),
    ];
    let r = regs_after(&w);
    assert_eq!(r[5], 4);
    assert_eq!(r[1], BASE + 13 * 4 + 4);
    assert_eq!(r[18], BASE + 16 * 4 + 4);
}

#[test]
fn loads_stores_misaligned_and_extension() {
    let mut w = li(5, 0x20001); // odd address
    w.extend(li(6, 0x8877_6655_4433_2211u64 as i64));
    w.extend([
        sd(6, 5, 0),
        ld(7, 5, 0),
        load(0, 8, 5, 7),  // LB 0x88 -> sign-extended
        load(4, 9, 5, 7),  // LBU
        load(1, 18, 5, 6), // LH 0x8877
        load(5, 11, 5, 6), // LHU
        load(2, 12, 5, 4), // LW 0x88776655
        load(6, 13, 5, 4), // LWU
        store(1, 0, 5, 1), // SH x0 at +1 -> bytes 2,3 zero
        ld(14, 5, 0),
        sb(6, 5, 8), // byte 0x11 at +8
        ld(15, 5, 1),
    ]);
    let r = regs_after(&w);
    assert_eq!(r[7], 0x8877_6655_4433_2211);
    assert_eq!(r[8], 0xffff_ffff_ffff_ff88);
    assert_eq!(r[9], 0x88);
    assert_eq!(r[18], 0xffff_ffff_ffff_8877);
    assert_eq!(r[11], 0x8877);
    assert_eq!(r[12], 0xffff_ffff_8877_6655);
    assert_eq!(r[13], 0x8877_6655);
    assert_eq!(r[14], 0x8877_6655_4400_0011);
    assert_eq!(r[15], 0x1188_7766_5544_0000);
}

#[test]
fn memory_bounds() {
    // null page
    let e = run_rec(&[ld(5, 0, 8)], &[]).unwrap_err();
    assert_eq!(e, ExecError::MemoryOutOfBounds { pc: BASE, addr: 8 });
    // last 8 bytes below 2^31 are fine, one more is not
    let mut w = li(5, 0x8000_0000);
    w.push(sd(5, 5, -8));
    w.push(ld(6, 5, -8));
    assert_eq!(regs_after(&w)[6], 0x8000_0000);
    let mut w = li(5, 0x8000_0000);
    let pc = BASE + 4 * w.len() as u64;
    w.push(sd(5, 5, -7));
    let e = run_rec(&w, &[]).unwrap_err();
    assert_eq!(
        e,
        ExecError::MemoryOutOfBounds {
            pc,
            addr: 0x7fff_fff9
        }
    );
    assert!(e.to_string().contains("0x7ffffff9"));
    // 64-bit address wrap-around
    let e = run_rec(&[load(0, 5, 0, -1)], &[]).unwrap_err();
    assert_eq!(
        e,
        ExecError::MemoryOutOfBounds {
            pc: BASE,
            addr: u64::MAX
        }
    );
    // stack pointer starts at 0x8000_0000 and the stack is usable
    let r = regs_after(&[addi(2, 2, -16), sd(2, 2, 8), ld(5, 2, 8)]);
    assert_eq!(r[5], 0x8000_0000 - 16);
}

#[test]
fn illegal_and_misaligned() {
    for (word, reason) in [
        (0x0000_4501u32, "compressed"),
        (0x1005_202f, "atomic"),
        (0x0000_2007, "floating"),
        (EBREAK, "EBREAK"),
        (0xc000_2573, "CSR"), // rdcycle a0
        (0, "all-zero word"),
    ] {
        let e = run_rec(&[addi(5, 0, 1), word], &[]).unwrap_err();
        match &e {
            ExecError::IllegalInstruction {
                pc,
                word: w,
                reason: r,
            } => {
                assert_eq!((*pc, *w), (BASE + 4, word));
                assert!(r.contains(reason), "{r}");
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains(&format!("{word:#010x}")));
    }
    // JAL by 2 (no C extension): misaligned
    assert_eq!(
        run_rec(&[jal(0, 6)], &[]).unwrap_err(),
        ExecError::MisalignedJump {
            pc: BASE,
            target: BASE + 6
        }
    );
    // JALR to +2
    let e = run_rec(&[auipc(5, 0), jalr(0, 5, 2)], &[]).unwrap_err();
    assert_eq!(
        e,
        ExecError::MisalignedJump {
            pc: BASE + 4,
            target: BASE + 2
        }
    );
    // The message names the likely cause (code built with the C extension) and the fix.
    let msg = e.to_string();
    assert!(
        msg.contains("C extension") && msg.contains("-march=rv64im") && msg.contains("rv64imac"),
        "{msg}"
    );
    // taken branch misaligned, not-taken branch fine
    assert!(regs_after(&[bne(0, 0, 6)])[0] == 0);
    assert!(matches!(
        run_rec(&[beq(0, 0, 6)], &[]),
        Err(ExecError::MisalignedJump { .. })
    ));
    // jump out of the code
    let e = run_rec(&[jal(0, -0x1000)], &[]).unwrap_err();
    assert_eq!(e, ExecError::FetchOutOfBounds { pc: BASE - 0x1000 });
    // FENCE / FENCE.I are no-ops
    assert_eq!(regs_after(&[FENCE, 0x0000_100f, addi(5, 0, 3)])[5], 3);
}

#[test]
fn syscalls() {
    // write "hi" to fd 1 and "dbg" to fd 2, read 3 bytes (of 5), read the rest (2), read again (0)
    let mut w = li(5, 0x30000);
    w.extend(li(6, 0x6968)); // "hi"
    w.push(sw(6, 5, 0));
    w.extend(li(6, 0x676264)); // "dbg"
    w.push(sw(6, 5, 8));
    let sys = |w: &mut Vec<u32>, num: i64, a0: i64, a1_off: i32, a2: i64| {
        w.extend(li(17, num));
        w.extend(li(10, a0));
        w.push(addi(11, 5, a1_off));
        w.extend(li(12, a2));
        w.push(ECALL);
    };
    sys(&mut w, 64, 1, 0, 2);
    w.push(add(20, 10, 0));
    sys(&mut w, 64, 2, 8, 3);
    sys(&mut w, 63, 0, 16, 3);
    w.push(add(21, 10, 0));
    sys(&mut w, 63, 0, 19, 100);
    w.push(add(22, 10, 0));
    sys(&mut w, 63, 0, 32, 100);
    w.push(add(23, 10, 0));
    w.push(ld(24, 5, 16));
    let e = run_rec(&w, b"ABCDE").unwrap();
    assert_eq!(e.public_output, b"hi");
    assert_eq!(e.debug_output, b"dbg");
    let r = e.record.as_ref().unwrap().final_regs;
    assert_eq!((r[20], r[21], r[22], r[23]), (2, 3, 2, 0));
    assert_eq!(r[24], u64::from_le_bytes(*b"ABCDE\0\0\0"));
    let rec = e.record.unwrap();
    assert_eq!(rec.syscalls.len(), 6);
    let rd = rec.syscalls[2];
    assert_eq!((rd.num, rd.data_len, rd.ret), (63, 3, 3));
    let off = rd.data_offset as usize;
    assert_eq!(&rec.syscall_data[off..off + 6], b"ABC\0\0\0"); // new bytes, then the old zeros
    assert_eq!(rec.cycles[rd.cycle as usize].word, ECALL);
    assert_eq!(rec.cycles[rd.cycle as usize].rs1_val, 63);

    // exit code and exit_group
    for num in [93, 94] {
        let mut w = li(17, num);
        w.extend(li(10, -2));
        w.push(ECALL);
        let prog = Program::from_words(BASE, &w).unwrap();
        let e = execute(&prog, &[], &ExecOptions::default()).unwrap();
        assert_eq!(e.exit_code, 0xffff_fffe);
        assert_eq!(e.cycles, w.len() as u64);
    }
    // unknown call, bad fds, bad buffer
    let mut w = li(17, 1234);
    w.push(ECALL);
    assert_eq!(
        run_rec(&w, &[]).unwrap_err(),
        ExecError::UnknownEcall {
            pc: BASE + 4 * (w.len() as u64 - 1),
            num: 1234
        }
    );
    let mut w = Vec::new();
    sys(&mut w, 64, 3, 0, 1);
    assert!(matches!(
        run_rec(&w, &[]).unwrap_err(),
        ExecError::BadFd { num: 64, fd: 3, .. }
    ));
    let mut w = Vec::new();
    sys(&mut w, 63, 1, 0, 1);
    assert!(matches!(
        run_rec(&w, &[]).unwrap_err(),
        ExecError::BadFd { num: 63, fd: 1, .. }
    ));
    let mut w = li(17, 64);
    w.extend([addi(10, 0, 1), addi(11, 0, 16), addi(12, 0, 1), ECALL]);
    assert!(matches!(
        run_rec(&w, &[]).unwrap_err(),
        ExecError::BufferOutOfBounds {
            addr: 16,
            len: 1,
            ..
        }
    ));
}

#[test]
fn output_limit() {
    // write(1, 0x1000, MAX_OUTPUT - 0x1000) twice: the second call exceeds the limit
    let mut w = Vec::new();
    for _ in 0..2 {
        w.extend(li(17, 64));
        w.extend(li(10, 1));
        w.extend(li(11, 0x1000));
        w.extend(li(12, zkrv_executor::MAX_OUTPUT as i64 - 0x1000));
        w.push(ECALL);
    }
    let prog = Program::from_words(BASE, &with_exit(&w)).unwrap();
    let e = execute(&prog, &[], &ExecOptions::default()).unwrap_err();
    assert!(matches!(e, ExecError::OutputLimit { fd: 1, .. }), "{e}");
}

#[test]
fn cycle_limit() {
    let prog = Program::from_words(BASE, &[jal(0, 0)]).unwrap();
    for record in [false, true] {
        let e = execute(
            &prog,
            &[],
            &ExecOptions {
                max_cycles: 1000,
                record,
            },
        )
        .unwrap_err();
        assert_eq!(
            e,
            ExecError::CycleLimit {
                limit: 1000,
                pc: BASE
            }
        );
    }
}

#[test]
fn record_contents() {
    let mut w = li(5, 0x40000); // lui + addiw? 0x40000 -> lui 0x40
    let n0 = w.len();
    w.extend([
        addi(6, 0, 7),
        sd(6, 5, 0),
        addi(6, 0, 9),
        sd(6, 5, 0),
        ld(0, 5, 0),
        add(0, 6, 6),
    ]);
    let e = run_rec(&w, &[]).unwrap();
    let rec = e.record.unwrap();
    assert_eq!(rec.cycles.len() as u64, e.cycles);
    assert_eq!(rec.init_regs[2], 0x8000_0000);
    let c = &rec.cycles[n0..];
    // first store: old 0, new 7
    assert_eq!(
        (c[1].mem_addr(), c[1].rd_val, c[1].rs2_val, c[1].rs1_val),
        (Some(0x40000), 0, 7, 0x40000)
    );
    // second store: old 7
    assert_eq!((c[3].rd_val, c[3].rs2_val), (7, 9));
    // load into x0 still records the loaded value; add into x0 records the sum
    assert_eq!(
        (c[4].mem_addr(), c[4].rd_val, c[4].mem_width()),
        (Some(0x40000), 9, 8)
    );
    assert_eq!((c[5].mem_addr(), c[5].rd_val), (None, 18));
    assert_eq!(c[0].pc as u64, BASE + 4 * n0 as u64);
    assert_eq!(c[0].word, addi(6, 0, 7));
    assert_eq!(rec.final_regs[0], 0);
    // the touched page, before and after
    assert_eq!(rec.pages, vec![0x40000]);
    assert!(rec.init_pages.iter().all(|&b| b == 0));
    assert_eq!(&rec.final_pages[..8], &9u64.to_le_bytes());
    assert!(rec.bytes_per_cycle() > 32.0);
    assert_eq!(size_of::<zkrv_executor::CycleEvent>(), 32);
}

#[test]
fn plain_and_recorded_runs_agree() {
    let mut w = li(5, 0x50000);
    w.extend([
        addi(6, 0, 100),
        sd(6, 5, 0),
        ld(7, 5, 0),
        addi(7, 7, -1),
        sd(7, 5, 0),
        bne(7, 0, -12),
    ]);
    let prog = Program::from_words(BASE, &with_exit(&w)).unwrap();
    let a = execute(&prog, &[], &ExecOptions::default()).unwrap();
    let b = execute(
        &prog,
        &[],
        &ExecOptions {
            record: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(a.cycles, b.cycles);
    assert_eq!(a.cycles, w.len() as u64 - 4 + 100 * 4 + 3);
}
