//! End-to-end tests of the first vertical slice: a tiny program (ADD/ADDI/SUB/LUI/AUIPC/JAL/JALR/FENCE and
//! the exit ECALL) proves and verifies; tampered witnesses and statements are rejected by the debug
//! checker and by the verifier.

use zkrv_executor::asm::*;
use zkrv_executor::Program;
use zkrv_machine::tables::cpu::{CpuCols, NUM_CPU_COLS};
use zkrv_machine::{
    program_commitment, prove, prove_witness, verify, witness, MachineError, Proof, Statement,
};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::StarkConfig;

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
        ..StarkConfig::default()
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
    verify(&p, &st, &proof, &config(false)).unwrap();
    let bytes = proof.to_bytes();
    println!(
        "prove {prove_time:?}, verify {:?}, proof {} bytes",
        t0.elapsed(),
        bytes.len()
    );
    let back = Proof::from_bytes(&bytes).unwrap();
    verify(&p, &st, &back, &config(false)).unwrap();
}

#[test]
fn wrong_statement_is_rejected() {
    let p = program();
    let (st, proof) = prove(&p, b"", &config(false)).unwrap();
    let lie = Statement {
        exit_code: 43,
        ..st.clone()
    };
    assert!(verify(&p, &lie, &proof, &config(false)).is_err());
    let lie = Statement {
        output: b"x".to_vec(),
        ..st.clone()
    };
    assert!(verify(&p, &lie, &proof, &config(false)).is_err());
    // Another program (one instruction changed) does not accept the proof.
    let mut other = program();
    other.segments[0].data[0] ^= 1 << 7; // addi rd: x10 -> x11
    assert!(verify(&other, &st, &proof, &config(false)).is_err());
}

#[test]
fn unsupported_instruction_is_refused() {
    let words = vec![addi(10, 0, 1), mul(10, 10, 10), addi(17, 0, 93), ECALL];
    let p = Program::from_words(BASE, &words).unwrap();
    match prove(&p, b"", &config(false)) {
        Err(MachineError::Unsupported { pc, .. }) => assert_eq!(pc, 0x1004),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// Applies `tamper` to the CPU row of the instruction at `pc`, then expects the debug checker to reject
/// the witness and, with the checker off, the verifier to reject the proof (if the prover makes one).
fn expect_rejected(pc: u64, what: &str, tamper: impl Fn(&mut CpuCols<F>)) {
    let p = program();
    let mut w = witness(&p, b"").unwrap();
    let cpu = &mut w.traces[0];
    let row = (0..cpu.height())
        .find(|&r| cpu.row(r)[0] == F::from_u64(pc))
        .unwrap_or_else(|| panic!("no row with pc {pc:#x}"));
    tamper(CpuCols::from_row_mut(cpu.row_mut(row)));
    assert_eq!(cpu.width, NUM_CPU_COLS);
    let checked = prove_witness(&p, w.clone(), &config(true));
    println!("{what}: {checked:?}");
    assert!(
        matches!(checked, Err(MachineError::Prove(_))),
        "{what}: debug checker accepted: {checked:?}"
    );
    if let Ok((st, proof)) = prove_witness(&p, w, &config(false)) {
        assert!(
            verify(&p, &st, &proof, &config(false)).is_err(),
            "{what}: verifier accepted"
        );
    }
}

#[test]
fn wrong_add_result_is_rejected() {
    // add a2, a0, a1 at 0x1008: 5 + (-3) = 2; claim 3.
    expect_rejected(0x1008, "add result", |r| r.res[0] = F::from_u64(3));
}

#[test]
fn nonzero_x0_read_is_rejected() {
    // addi a0, x0, 5 at 0x1000: claim x0 = 1 and a0 = 6 (the adder alone would accept it).
    expect_rejected(0x1000, "x0 read", |r| {
        r.rv1[0] = F::ONE;
        r.res[0] = F::from_u64(6);
    });
}

#[test]
fn wrong_jump_target_is_rejected() {
    // jal at 0x101c must go to 0x1024.
    expect_rejected(0x101c, "jal target", |r| r.next_pc = F::from_u64(0x1020));
}

#[test]
fn stale_register_read_is_rejected() {
    // add a2, a0, a1 at 0x1008 reads a0 = 5; claim the token is the init one (ts 0, value 0).
    expect_rejected(0x1008, "stale read", |r| {
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
        matches!(checked, Err(MachineError::Prove(_))),
        "debug checker accepted"
    );
    if let Ok((st, proof)) = prove_witness(&p, w, &config(false)) {
        assert!(verify(&p, &st, &proof, &config(false)).is_err());
    }
}
