//! The POSEIDON2 table (docs/tables.md §6.19): a program that calls the `poseidon2` precompile proves and
//! verifies on the CPU; tampered rounds, ECALL tuples, memory tokens and non-canonical encodings are named by
//! the debug checker; a run with calls is refused by device (GPU) trace generation.

use zkrv_executor::asm::*;
use zkrv_executor::precompile::{self, GOLDILOCKS_P, POSEIDON2};
use zkrv_executor::Program;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::poseidon2::{fill_row, Poseidon2Cols, NUM_POSEIDON2_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{
    bus, prove, recount_lookups, run_for_proof, split_traces, table_id, verify, witness,
    MachineError, Witness, WitnessChecker,
};
use zkrv_stark::check::CheckError;
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::StarkConfig;

const BASE: u64 = 0x1000;
const BUF: i64 = 0x7ff0_0000;

fn ecall(w: &mut Vec<u32>, num: i64, a0: i64, a1: i64, a2: i64) {
    w.extend(li(10, a0));
    w.extend(li(11, a1));
    w.extend(li(12, a2));
    w.extend(li(17, num));
    w.push(ECALL);
}

/// read 64 bytes to BUF; poseidon2 twice (the second call consumes the first's tokens); a load and a store
/// of one element in between; write the state out; exit.
fn program() -> Program {
    let mut w = Vec::new();
    ecall(&mut w, 63, 0, BUF, 64);
    ecall(&mut w, POSEIDON2 as i64, BUF, 0, 0);
    w.extend(li(5, BUF));
    w.push(ld(6, 5, 8));
    w.push(sd(6, 5, 16)); // element 2 := element 1
    ecall(&mut w, POSEIDON2 as i64, BUF, 0, 0);
    ecall(&mut w, 64, 1, BUF, 64);
    ecall(&mut w, 93, 0, 0, 0);
    Program::from_words(BASE, &w).unwrap()
}

fn input() -> Vec<u8> {
    // Element 0 is 0 (so that the non-canonical test can encode it as p), element 7 is p - 1.
    let mut v = [0u64; 8];
    for (i, x) in v.iter_mut().enumerate().skip(1) {
        *x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) % GOLDILOCKS_P;
    }
    v[7] = GOLDILOCKS_P - 1;
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn expected_output() -> Vec<u8> {
    let inp = input();
    let mut s: [u64; 8] =
        std::array::from_fn(|i| u64::from_le_bytes(inp[8 * i..8 * i + 8].try_into().unwrap()));
    precompile::poseidon2(&mut s);
    s[2] = s[1];
    precompile::poseidon2(&mut s);
    s.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn poseidon2_calls_prove_and_verify() {
    let p = program();
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    let (st, proof) = prove(&p, &input(), &config).unwrap();
    assert_eq!(st.output, expected_output());
    verify(&p, &st, &proof, &config, 0).unwrap();
    // The table has rows: a proof claiming it absent is refused (the CPU's ECALL sends go unmatched).
    let mut forged = proof.clone();
    forged.stark.log_heights[table_id::POSEIDON2] = zkrv_stark::proof::ABSENT_LOG_HEIGHT;
    assert!(verify(&p, &st, &forged, &config, 0).is_err());
    let mut bad = st.clone();
    bad.output[5] ^= 1;
    assert!(verify(&p, &bad, &proof, &config, 0).is_err());
}

/// The witness, the checker and the index of the first POSEIDON2 row.
fn setup() -> (Program, Witness, WitnessChecker) {
    let p = program();
    let w = witness(&p, &input()).unwrap();
    let t = &w.traces[table_id::POSEIDON2];
    assert_eq!(t.width, NUM_POSEIDON2_COLS);
    assert_eq!(t.row(0)[2], F::ONE, "row 0 is a call");
    assert_eq!(t.row(1)[2], F::ONE, "row 1 is a call");
    assert_eq!(t.row(2)[2], F::ZERO, "row 2 is padding");
    let checker = WitnessChecker::new(&p, &StarkConfig::dev()).unwrap();
    checker.check(&w).expect("the honest witness passes");
    (p, w, checker)
}

/// Tampers POSEIDON2 row `row`, recounts the lookups as a cheating prover would, and returns the checker's
/// verdict.
fn tampered(row: usize, f: impl Fn(&mut Poseidon2Cols<F>)) -> CheckError {
    let (p, mut w, checker) = setup();
    f(Poseidon2Cols::from_row_mut(
        w.traces[table_id::POSEIDON2].row_mut(row),
    ));
    recount_lookups(&p, &mut w).unwrap();
    checker.check(&w).expect_err("tampered witness accepted")
}

fn constraint_name(e: &CheckError) -> String {
    match e {
        CheckError::Constraint {
            table, constraint, ..
        } => {
            assert_eq!(table, "POSEIDON2", "{e}");
            constraint.clone()
        }
        e => panic!("expected a POSEIDON2 constraint failure, got {e}"),
    }
}

fn unbalanced_buses(e: &CheckError) -> Vec<u32> {
    match e {
        CheckError::BusImbalance { bus, more, .. } => {
            let mut v = vec![*bus];
            v.extend(more.iter().map(|m| m.0));
            v
        }
        e => panic!("expected a bus imbalance, got {e}"),
    }
}

#[test]
fn tampered_round_cells_are_named() {
    let e = tampered(0, |r| r.full_sbox[2][3] += F::ONE);
    assert_eq!(constraint_name(&e), "full round 2: sbox x^3 [3]");
    let e = tampered(1, |r| r.full_post[5][0] += F::ONE);
    assert_eq!(constraint_name(&e), "full round 5: state [0]");
    let e = tampered(0, |r| r.partial_sbox[7] += F::ONE);
    assert_eq!(constraint_name(&e), "partial round 7: sbox x^3");
    let e = tampered(0, |r| r.partial_post[21] -= F::ONE);
    assert_eq!(constraint_name(&e), "partial round 21: sbox x^7");
    // The output halves are the last round's state.
    let e = tampered(1, |r| r.output[4][1] += F::ONE);
    assert!(
        constraint_name(&e).starts_with("full round 7: state"),
        "{e}"
    );
    // A padding row must hold a permutation too (R3).
    let e = tampered(3, |r| r.full_sbox[0][0] += F::ONE);
    assert_eq!(constraint_name(&e), "full round 0: sbox x^3 [0]");
    let e = tampered(0, |r| r.mu = F::from_u64(2));
    assert_eq!(constraint_name(&e), "mu bool");
}

/// Re-fills row `row` consistently (every round constraint holds) for another input, timestamp or cell.
fn refill(row: usize, input: Option<[u64; 8]>, ts_delta: i64, cell_delta: i64) -> CheckError {
    tampered(row, |r| {
        let get = |x: F| x.as_canonical_u64();
        let inp = input.unwrap_or(std::array::from_fn(|i| {
            get(r.input[i][0]) | (get(r.input[i][1]) << 32)
        }));
        let old_ts: [u64; 8] = std::array::from_fn(|i| get(r.old_ts[i]));
        let ts = get(r.ts).wrapping_add(ts_delta as u64);
        let cell = get(r.cell).wrapping_add(cell_delta as u64);
        let mut lk = Lookups::new();
        fill_row(r, &inp, ts, cell, &old_ts, Some(&mut lk));
    })
}

#[test]
fn a_consistent_row_for_another_call_unbalances_the_ecall_bus() {
    // Another timestamp: the CPU sent no such ECALL; the 8 memory tokens move with it (2 x 8 tuples), the
    // ECALL bus has its 2 unmatched tuples (the list is truncated before them).
    let e = refill(0, None, 4, 0);
    match &e {
        CheckError::BusImbalance { unbalanced, .. } => assert_eq!(*unbalanced, 18, "{e}"),
        e => panic!("expected a bus imbalance, got {e}"),
    }
    // The CPU's side of the tuple: the ECALL row claims another a7 (its a7 register read moves with it).
    let (p, mut w, checker) = setup();
    let cpu = &mut w.traces[table_id::CPU];
    let row = (0..cpu.height())
        .find(|&r| {
            let c = zkrv_machine::tables::cpu::CpuCols::from_row(cpu.row(r));
            c.rv1[0] == F::from_u64(POSEIDON2) && c.rv1[1] == F::ZERO && c.pc != F::ZERO
        })
        .expect("a poseidon2 ECALL row");
    zkrv_machine::tables::cpu::CpuCols::from_row_mut(cpu.row_mut(row)).rv1[0] =
        F::from_u64(POSEIDON2 + 1);
    recount_lookups(&p, &mut w).unwrap();
    let e = checker.check(&w).expect_err("accepted");
    assert!(unbalanced_buses(&e).contains(&bus::ECALL), "{e}");
    // Another state pointer (cells one to the right): memory tokens of cells the call does not own.
    let e = refill(1, None, 0, 1);
    assert_eq!(unbalanced_buses(&e)[0], bus::MEM_TOKEN, "{e}");
}

#[test]
fn a_permutation_of_other_memory_unbalances_the_memory_tokens() {
    // A correct permutation of a state the memory does not hold.
    let mut other = [0u64; 8];
    other[3] = 12345;
    let e = refill(0, Some(other), 0, 0);
    assert_eq!(unbalanced_buses(&e)[0], bus::MEM_TOKEN, "{e}");
    // A stale token: the second call consumes element 0's initial token (ts 0) instead of the one the load
    // before it emitted (its LT32 witness adjusted, so that only the token is wrong).
    let e = tampered(1, |r| {
        r.old_ts[0] = F::ZERO;
        r.d0[0] = F::from_u64((r.ts.as_canonical_u64() - 1) & 0xffff);
    });
    assert_eq!(unbalanced_buses(&e)[0], bus::MEM_TOKEN, "{e}");
}

#[test]
fn a_non_canonical_input_encoding_is_named() {
    // Element 0 of the first call is 0; encoded as p (lo = 1, hi = 2^32 - 1) it is the same field element,
    // so every round holds: only canonicity (and the memory value) tell.
    let e = tampered(0, |r| {
        r.input[0] = [F::ONE, F::from_u64(0xffff_ffff)];
        r.in_inv[0] = F::ZERO;
    });
    assert_eq!(
        constraint_name(&e),
        "input canonical: hi = 2^32 - 1 needs lo = 0"
    );
}

#[test]
fn device_memory_walk_refuses_poseidon2_calls_filled_on_the_host() {
    let p = program();
    // POSEIDON2 on the device with the memory walk is the GPU prover's selection (the split leaves it empty).
    let ok = split_traces(&p, run_for_proof(&p, &input()).unwrap(), DeviceFill::ALL).unwrap();
    let run = run_for_proof(&p, &input()).unwrap();
    assert_eq!(ok.traces.tables[zkrv_machine::Table::Poseidon2].height(), 0);
    match split_traces(
        &p,
        run,
        DeviceFill::ALL.without(zkrv_machine::Table::Poseidon2),
    ) {
        Err(
            e @ MachineError::NoDeviceFill {
                table: "POSEIDON2",
                rows: 2,
            },
        ) => {
            let msg = e.to_string();
            assert!(
                msg.contains("POSEIDON2") && msg.contains("no GPU fill"),
                "{msg}"
            );
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("device fill accepted a POSEIDON2 run"),
    }
}

#[test]
fn segments_with_poseidon2_calls_pass_the_checker() {
    use zkrv_machine::segment::{check_segment, segment_witness};
    let p = program();
    let config = StarkConfig::default();
    for seg in [7u64, 13, 20] {
        let cps = zkrv_executor::execute_segmented(&p, &input(), seg, 1 << 20)
            .unwrap()
            .checkpoints;
        assert!(cps.len() >= 2, "{} segments", cps.len());
        let mut calls = 0;
        for cp in &cps {
            let w = segment_witness(&p, &input(), cp, cps.len() as u32, [7; 32], &config).unwrap();
            let t = &w.traces[table_id::POSEIDON2];
            calls += (0..t.height()).filter(|&r| t.row(r)[2] == F::ONE).count();
            check_segment(&p, &w, &config)
                .unwrap_or_else(|e| panic!("segments of {seg} cycles, segment {}: {e}", cp.index));
        }
        assert_eq!(calls, 2, "segments of {seg} cycles");
    }
}
