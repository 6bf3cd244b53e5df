//! End-to-end tests of the first vertical slice: a tiny program (ADD/ADDI/SUB/LUI/AUIPC/JAL/JALR/FENCE and
//! the exit ECALL) proves and verifies; tampered witnesses and statements are rejected by the debug
//! checker and by the verifier.

use zkrv_executor::asm::*;
use zkrv_executor::Program;
use zkrv_machine::tables::cpu::{CpuCols, NUM_CPU_COLS};
use zkrv_machine::{
    program_commitment, prove, prove_witness, recount_lookups, verify, witness, MachineError,
    Proof, Statement,
};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::{ProveError, StarkConfig};

const BASE: u64 = 0x1000;

/// a0 = 5; a1 = -3; a2 = a0 + a1; a3 = a1 - a0; a4 = lui 0x80000 (sign-extended); a5 = a4 + a4 (carry out);
/// a6 = auipc; jal over a poisoned addi; auipc/jalr with bit 0 set in the target; write to x0; fence;
/// a0 = a2 + 40 = 42; exit(a0).
fn program() -> Program {
    let words = vec![
        addi(10, 0, 5),   // 0x00
        addi(11, 0, -3),  // 0x04
        add(12, 10, 11),  // 0x08
        sub(13, 11, 10),  // 0x0c
        lui(14, 0x80000), // 0x10
        add(15, 14, 14),  // 0x14
        auipc(16, 1),     // 0x18
        jal(1, 8),        // 0x1c -> 0x24
        addi(10, 0, 99),  // 0x20 (skipped)
        auipc(5, 0),      // 0x24: t0 = 0x1024
        jalr(6, 5, 13),   // 0x28: -> (0x1024 + 13) & !1 = 0x1030
        addi(10, 0, 77),  // 0x2c (skipped)
        addi(0, 10, 1),   // 0x30: write to x0
        FENCE,            // 0x34
        addi(10, 12, 40), // 0x38: a0 = 42
        addi(17, 0, 93),  // 0x3c: a7 = exit
        ECALL,            // 0x40
    ];
    Program::from_words(BASE, &words).unwrap()
}

fn config(debug_check: bool) -> StarkConfig {
    StarkConfig {
        debug_check,
        ..StarkConfig::dev()
    }
}

#[test]
fn tiny_program_proves_and_verifies() {
    let p = program();
    let t0 = std::time::Instant::now();
    let (st, proof) = prove(&p, b"", &config(true)).unwrap();
    let prove_time = t0.elapsed();
    assert_eq!(st.exit_code, 42);
    assert!(st.output.is_empty());
    assert_eq!(st.program, program_commitment(&p));
    let t0 = std::time::Instant::now();
    verify(&p, &st, &proof, &config(false), 0).unwrap();
    let bytes = proof.to_bytes();
    println!(
        "prove {prove_time:?}, verify {:?}, proof {} bytes",
        t0.elapsed(),
        bytes.len()
    );
    let back = Proof::from_bytes(&bytes).unwrap();
    verify(&p, &st, &back, &config(false), 0).unwrap();
}

#[test]
fn wrong_statement_is_rejected() {
    let p = program();
    let (st, proof) = prove(&p, b"", &config(false)).unwrap();
    let lie = Statement {
        exit_code: 43,
        ..st.clone()
    };
    assert!(verify(&p, &lie, &proof, &config(false), 0).is_err());
    let lie = Statement {
        output: b"x".to_vec(),
        ..st.clone()
    };
    assert!(verify(&p, &lie, &proof, &config(false), 0).is_err());
    // Another program (one instruction changed) does not accept the proof.
    let mut other = program();
    other.segments[0].data[0] ^= 1 << 7; // addi rd: x10 -> x11
    assert!(verify(&other, &st, &proof, &config(false), 0).is_err());
}

#[test]
fn misaligned_accesses_prove_and_verify() {
    // Loads and stores that cross an 8-byte cell (MEMW) mixed with in-cell ones (MEMW_A) on the same cells.
    let words = vec![
        addi(2, 2, -64),    // sp -= 64
        addi(5, 0, -3),     // t0 = -3
        sd(5, 2, 4),        // [sp+4..12] = -3 (crosses)
        store(2, 5, 2, 14), // sw [sp+14..18] = -3 (crosses)
        store(1, 5, 2, 23), // sh [sp+23..25] (crosses)
        ld(6, 2, 4),        // t1 = -3 (crosses)
        load(2, 7, 2, 6),   // lw t2 = [sp+6..10] (crosses)
        load(5, 28, 2, 23), // lhu t3 (crosses)
        load(1, 29, 2, 15), // lh t4 = [sp+15..17] (crosses)
        ld(30, 2, 8),       // t5 = [sp+8..16] (in-cell, after crossing writes)
        add(10, 6, 7),      // a0 = t1 + t2
        add(10, 10, 28),    // + t3
        add(10, 10, 29),    // + t4
        add(10, 10, 30),    // + t5
        addi(17, 0, 93),
        ECALL,
    ];
    let p = Program::from_words(BASE, &words).unwrap();
    let (st, proof) = prove(&p, b"", &config(true)).unwrap();
    verify(&p, &st, &proof, &config(false), 0).unwrap();
    // Model: a 64-byte zeroed frame.
    let mut m = [0u8; 64];
    let t0 = (-3i64) as u64;
    m[4..12].copy_from_slice(&t0.to_le_bytes());
    m[14..18].copy_from_slice(&t0.to_le_bytes()[..4]);
    m[23..25].copy_from_slice(&t0.to_le_bytes()[..2]);
    let rd = |o: usize, n: usize| {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&m[o..o + n]);
        u64::from_le_bytes(b)
    };
    let sext = |x: u64, n: usize| ((x << (64 - 8 * n)) as i64 >> (64 - 8 * n)) as u64;
    let a0 = rd(4, 8)
        .wrapping_add(sext(rd(6, 4), 4))
        .wrapping_add(rd(23, 2))
        .wrapping_add(sext(rd(15, 2), 2))
        .wrapping_add(rd(8, 8));
    assert_eq!(st.exit_code, a0 as u32);
}

/// Applies `tamper` to the CPU row of the instruction at `pc`, then expects the debug checker to reject
/// the witness and, when `full`, with the checker off, the verifier to reject the proof (if the prover
/// makes one). The full path costs a proof, so only one test takes it (test time on CI).
fn expect_rejected(pc: u64, what: &str, full: bool, tamper: impl Fn(&mut CpuCols<F>)) {
    let p = program();
    let mut w = witness(&p, b"").unwrap();
    let cpu = &mut w.traces[0];
    let row = (0..cpu.height())
        .find(|&r| cpu.row(r)[0] == F::from_u64(pc))
        .unwrap_or_else(|| panic!("no row with pc {pc:#x}"));
    tamper(CpuCols::from_row_mut(cpu.row_mut(row)));
    assert_eq!(cpu.width, NUM_CPU_COLS);
    recount_lookups(&p, &mut w).unwrap();
    let checked = prove_witness(&p, w.clone(), &config(true));
    println!("{what}: {checked:?}");
    assert!(
        matches!(checked, Err(MachineError::Prove(ProveError::Check(_)))),
        "{what}: debug checker accepted: {checked:?}"
    );
    if !full {
        return;
    }
    if let Ok((st, proof)) = prove_witness(&p, w, &config(false)) {
        assert!(
            verify(&p, &st, &proof, &config(false), 0).is_err(),
            "{what}: verifier accepted"
        );
    }
}

#[test]
fn recount_of_an_untouched_witness_is_identity() {
    let p = program();
    let w = witness(&p, b"").unwrap();
    let mut w2 = w.clone();
    recount_lookups(&p, &mut w2).unwrap();
    assert_eq!(w.traces[2], w2.traces[2]);
}

#[test]
fn wrong_add_result_is_rejected() {
    // add a2, a0, a1 at 0x1008: 5 + (-3) = 2; claim 3.
    expect_rejected(0x1008, "add result", true, |r| r.res[0] = F::from_u64(3));
}

#[test]
fn nonzero_x0_read_is_rejected() {
    // addi a0, x0, 5 at 0x1000: claim x0 = 1 and a0 = 6 (the adder alone would accept it).
    expect_rejected(0x1000, "x0 read", false, |r| {
        r.rv1[0] = F::ONE;
        r.res[0] = F::from_u64(6);
    });
}

#[test]
fn wrong_jump_target_is_rejected() {
    // jal at 0x101c must go to 0x1024.
    expect_rejected(0x101c, "jal target", false, |r| {
        r.next_pc = F::from_u64(0x1020)
    });
}

#[test]
fn stale_register_read_is_rejected() {
    // add a2, a0, a1 at 0x1008 reads a0 = 5; claim the token is the init one (ts 0, value 0).
    expect_rejected(0x1008, "stale read", false, |r| {
        r.r1.old_ts = F::ZERO;
        r.rv1[0] = F::ZERO;
        // Keep the adder satisfied (0 + (-3)), so only the register memory argument can object.
        r.res = [0xfffd, 0xffff, 0xffff, 0xffff].map(F::from_u64);
    });
}

#[test]
fn wrong_exit_code_witness_is_rejected() {
    // The exit ecall at 0x1040 reads a0 = 42; claim 43 in the witness and the statement.
    let p = program();
    let mut w = witness(&p, b"").unwrap();
    w.statement.exit_code = 43;
    let checked = prove_witness(&p, w.clone(), &config(true));
    println!("exit code: {checked:?}");
    assert!(
        matches!(checked, Err(MachineError::Prove(ProveError::Check(_)))),
        "debug checker accepted"
    );
    if let Ok((st, proof)) = prove_witness(&p, w, &config(false)) {
        assert!(verify(&p, &st, &proof, &config(false), 0).is_err());
    }
}

/// A loop with every branch kind and the set-less-than ops: sum of 1..=10 (= 55), checked with
/// BLT/BGE/BLTU/BGEU/BEQ/SLT/SLTU/SLTI/SLTIU on signed and unsigned edge values; exits with 55 + errors.
fn loop_program() -> Program {
    let words = vec![
        addi(5, 0, 10),   // 0x00 t0 = 10
        addi(6, 0, 0),    // 0x04 t1 = 0 (sum)
        add(6, 6, 5),     // 0x08 loop: sum += t0
        addi(5, 5, -1),   // 0x0c t0 -= 1
        bne(5, 0, -8),    // 0x10 -> 0x08 while t0 != 0
        addi(7, 0, -1),   // 0x14 t2 = -1 (u64::MAX)
        addi(28, 0, 1),   // 0x18 t3 = 1
        blt(7, 28, 8),    // 0x1c -1 < 1 signed: taken -> 0x24
        addi(6, 6, 100),  // 0x20 (error marker, skipped)
        bltu(7, 28, 8),   // 0x24 u64::MAX < 1 unsigned: not taken
        bge(7, 28, 8),    // 0x28 -1 >= 1: not taken
        bgeu(7, 28, 8),   // 0x2c MAX >= 1 unsigned: taken -> 0x34
        addi(6, 6, 100),  // 0x30 (skipped)
        beq(28, 28, 8),   // 0x34 taken -> 0x3c
        addi(6, 6, 100),  // 0x38 (skipped)
        slt(29, 7, 28),   // 0x3c t4 = (-1 < 1) = 1
        sltu(30, 7, 28),  // 0x40 t5 = (MAX < 1) = 0
        slti(31, 28, -5), // 0x44 t6 = (1 < -5) = 0
        sltiu(8, 28, -5), // 0x48 s0 = (1 <u MAX-4) = 1
        add(6, 6, 29),    // 0x4c sum += 1
        add(6, 6, 30),    // 0x50 sum += 0
        add(6, 6, 31),    // 0x54 sum += 0
        add(6, 6, 8),     // 0x58 sum += 1
        addi(10, 6, 0),   // 0x5c a0 = sum = 57
        addi(17, 0, 93),  // 0x60
        ECALL,            // 0x64
    ];
    Program::from_words(BASE, &words).unwrap()
}

#[test]
fn loop_with_branches_proves_and_verifies() {
    let p = loop_program();
    let (st, proof) = prove(&p, b"", &config(true)).unwrap();
    assert_eq!(st.exit_code, 57);
    verify(&p, &st, &proof, &config(false), 0).unwrap();
}

#[test]
fn wrong_branch_outcome_is_rejected() {
    // blt at 0x101c is taken; claim it falls through (taken = 0, next pc = 0x1020, comparison result 0).
    let p = loop_program();
    let mut w = witness(&p, b"").unwrap();
    let cpu = &mut w.traces[0];
    let row = (0..cpu.height())
        .find(|&r| cpu.row(r)[0] == F::from_u64(0x101c))
        .unwrap();
    let r = CpuCols::from_row_mut(cpu.row_mut(row));
    r.taken = F::ZERO;
    r.next_pc = F::from_u64(0x1020);
    r.res[0] = F::ZERO;
    recount_lookups(&p, &mut w).unwrap();
    let checked = prove_witness(&p, w, &config(true));
    println!("branch: {checked:?}");
    assert!(matches!(
        checked,
        Err(MachineError::Prove(ProveError::Check(_)))
    ));
}

const fn slt(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(0, 2, rd, rs1, rs2)
}

const fn sltu(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(0, 3, rd, rs1, rs2)
}

/// Loads and stores of every width on the stack (and a load from the program image): exit code
/// 255 + 298 - 2 - 2 - 1 = 548.
fn memory_program() -> Program {
    let words = vec![
        addi(2, 2, -64),     // 0x00 sp -= 64
        addi(5, 0, -2),      // 0x04 t0 = -2
        sd(5, 2, 0),         // 0x08 [sp] = -2
        ld(6, 2, 0),         // 0x0c t1 = -2
        load(2, 7, 2, 0),    // 0x10 lw t2 = -2
        load(6, 28, 2, 0),   // 0x14 lwu t3 = 0xfffffffe
        load(0, 29, 2, 1),   // 0x18 lb t4 = -1
        load(4, 30, 2, 1),   // 0x1c lbu t5 = 255
        addi(11, 0, 0x12a),  // 0x20 a1 = 298
        store(0, 11, 2, 8),  // 0x24 sb [sp+8] = 0x2a
        store(1, 11, 2, 10), // 0x28 sh [sp+10] = 0x012a
        load(1, 12, 2, 10),  // 0x2c lh a2 = 298
        load(5, 13, 2, 10),  // 0x30 lhu a3 = 298
        store(2, 5, 2, 16),  // 0x34 sw [sp+16] = 0xfffffffe
        auipc(9, 0),         // 0x38 s1 = 0x1038
        ld(18, 9, -0x38),    // 0x3c s2 = first 8 bytes of the program
        load(4, 19, 2, 8),   // 0x40 lbu s3 = 0x2a
        add(10, 30, 12),     // 0x44 a0 = 255 + 298
        add(10, 10, 6),      // 0x48 a0 -= 2
        add(10, 10, 7),      // 0x4c a0 -= 2
        add(10, 10, 29),     // 0x50 a0 -= 1
        addi(17, 0, 93),     // 0x54
        ECALL,               // 0x58
    ];
    Program::from_words(BASE, &words).unwrap()
}

#[test]
fn loads_and_stores_prove_and_verify() {
    let p = memory_program();
    let (st, proof) = prove(&p, b"", &config(true)).unwrap();
    assert_eq!(st.exit_code, 548);
    assert_eq!(proof.pages, vec![0x1000, 0x7fff_f000]);
    verify(&p, &st, &proof, &config(false), 0).unwrap();
    let back = Proof::from_bytes(&proof.to_bytes()).unwrap();
    assert_eq!(back, proof);
    // A page list that differs from the proven one is rejected.
    let mut bad = proof.clone();
    bad.pages.reverse();
    assert!(verify(&p, &st, &bad, &config(false), 0).is_err());
}

#[test]
fn wrong_loaded_value_is_rejected() {
    // ld t1 at 0x100c loads -2; claim 5 in the CPU and in LOAD (consistent), so only the memory argument
    // (MEMW request and cell token) can object.
    let p = memory_program();
    let mut w = witness(&p, b"").unwrap();
    let cpu = &mut w.traces[0];
    let row = (0..cpu.height())
        .find(|&r| cpu.row(r)[0] == F::from_u64(0x100c))
        .unwrap();
    CpuCols::from_row_mut(cpu.row_mut(row)).res = [5, 0, 0, 0].map(F::from_u64);
    let load = &mut w.traces[6];
    // LOAD rows are in execution order: the ld is the first load.
    let lr = zkrv_machine::tables::load::LoadCols::from_row_mut(load.row_mut(0));
    lr.r = [F::from_u64(5), F::ZERO];
    lr.v = [F::from_u64(5), F::ZERO];
    recount_lookups(&p, &mut w).unwrap();
    let checked = prove_witness(&p, w, &config(true));
    println!("load: {checked:?}");
    assert!(matches!(
        checked,
        Err(MachineError::Prove(ProveError::Check(_)))
    ));
}

#[test]
fn bitwise_ops_prove_and_verify() {
    // a0 = ((0x0ff0 & 0x3c3c) | 0x1001) ^ -1 ... computed by the executor; AND/OR/XOR and immediates.
    let words = vec![
        lui(5, 0xf0f0f),     // t0 = 0xffff_ffff_f0f0_f000
        addi(6, 0, 0x3c3),   // t1 = 0x3c3
        and(7, 5, 6),        // t2 = t0 & t1
        or(28, 5, 6),        // t3 = t0 | t1
        xor(29, 5, 6),       // t4 = t0 ^ t1
        andi(30, 28, 0x7ff), // t5 = t3 & 0x7ff
        ori(31, 7, -16),     // t6 = t2 | -16
        xori(10, 29, -1),    // a0 = !t4
        add(10, 10, 30),     // a0 += t5
        add(10, 10, 31),     // a0 += t6
        and(10, 10, 10),     // same request as... (distinct)
        and(7, 5, 6),        // duplicate request: deduplicated row, m = 2
        addi(17, 0, 93),
        ECALL,
    ];
    let p = Program::from_words(BASE, &words).unwrap();
    let (st, proof) = prove(&p, b"", &config(true)).unwrap();
    let (t0, t1) = (0xffff_ffff_f0f0_f000u64, 0x3c3u64);
    let a0 = (!(t0 ^ t1))
        .wrapping_add((t0 | t1) & 0x7ff)
        .wrapping_add((t0 & t1) | (-16i64 as u64));
    assert_eq!(st.exit_code, a0 as u32);
    verify(&p, &st, &proof, &config(false), 0).unwrap();
}
