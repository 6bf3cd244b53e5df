//! SHIFT + POW2 tables (docs/tables.md §6.12, `tables/shift.rs`), proven with MUL: the CPU fill on every
//! shift amount 0..=63, masked amounts >= 64, the 5-bit forms and edge/random values passes the debug
//! checker and proves/verifies; wrong results (SRA as SRL, a lying POW2 row, amounts out of range, the
//! design's negative-amount attack) and random cell mutations are rejected.

mod alu_common;

use alu_common::*;
use zkrv_machine::bus::alu;
use zkrv_machine::tables::shift::{ShiftCols, NUM_SHIFT_COLS};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};

const SHIFT_OPS: [u64; 6] = [
    alu::SLL,
    alu::SRL,
    alu::SRA,
    alu::SLL5,
    alu::SRL5,
    alu::SRA5,
];

/// Shift amounts: every amount 0..=70, masked ones (bits above 6 set, b_hi set), `u64::MAX`.
fn amounts() -> Vec<u64> {
    let mut v: Vec<u64> = (0..=70).collect();
    v.extend([
        95,
        96,
        127,
        128 + 63,
        1 << 31,
        (1 << 32) - 1,
        (1 << 32) + 5,
        0xffff_ffff_ffff_ffc1,
        u64::MAX,
        u64::MAX - 31,
    ]);
    v
}

/// Every op on the first `edges` edge values and every amount, plus `n` random requests.
fn ops(seed: u64, edges: usize, n: usize) -> Ops {
    let mut v = Vec::new();
    for &op in &SHIFT_OPS {
        for &a in &EDGES[..edges] {
            for &b in &amounts() {
                v.push((op, a, b));
            }
        }
    }
    let mut rng = Rng(seed);
    for _ in 0..n {
        let op = SHIFT_OPS[rng.below(6) as usize];
        let b = if rng.below(2) == 0 {
            rng.below(64)
        } else {
            rng.next()
        };
        v.push((op, rng.operand(), b));
    }
    v.push((alu::SRA, u64::MAX, 3));
    v.push((alu::SRA, u64::MAX, 3));
    Ops(v)
}

fn u(x: F) -> u64 {
    x.as_canonical_u64()
}

fn shift_row(w: &W, op: u64, a: u64, b: u64) -> usize {
    let t = &w.traces[SHIFT];
    (0..t.height())
        .find(|&r| {
            let l = ShiftCols::from_row(t.row(r));
            let code = alu::SLL + u(l.is_srl) + 2 * u(l.is_sra) + 3 * u(l.w5);
            code == op && u(l.a[0]) | (u(l.a[1]) << 32) == a && u(l.b[0]) | (u(l.b[1]) << 32) == b
        })
        .expect("shift row")
}

fn words_f(x: u64) -> [F; 2] {
    [F::from_u64(x & 0xffff_ffff), F::from_u64(x >> 32)]
}

#[test]
fn shift_fill_checks_and_matches_rust() {
    let seed = seed("shift_fill");
    let w = witness(&ops(seed, EDGES.len(), 300));
    check(&w).unwrap();
    let t = &w.traces[SHIFT];
    let mut real = 0;
    for r in 0..t.height() {
        let l = ShiftCols::from_row(t.row(r));
        let op = alu::SLL + u(l.is_srl) + 2 * u(l.is_sra) + 3 * u(l.w5);
        let a = u(l.a[0]) | (u(l.a[1]) << 32);
        let b = u(l.b[0]) | (u(l.b[1]) << 32);
        let res = u(l.r[0]) | (u(l.r[1]) << 32);
        assert_eq!(
            res,
            reference(op, a, b),
            "row {r}: op {op} a {a:#x} b {b:#x}"
        );
        real += (l.m != F::ZERO) as usize;
    }
    println!(
        "{real} distinct shifts, SHIFT height {}, MUL height {}",
        t.height(),
        w.traces[MUL].height()
    );
}

#[test]
fn shift_proves_and_verifies() {
    let seed = seed("shift_prove");
    let w = witness(&ops(seed, 2, 60));
    let t0 = std::time::Instant::now();
    prove_verify(&w, true).unwrap();
    println!(
        "SHIFT {} rows + MUL {} rows + BITWISE: prove+verify {:?}",
        w.traces[SHIFT].height(),
        w.traces[MUL].height(),
        t0.elapsed()
    );
}

/// SRA computed as SRL (MULHU instead of MULHSU, a consistent MUL row), claimed as SRA.
#[test]
fn sra_as_srl_is_rejected() {
    let (a, b) = (0x8000_0000_0000_1234u64, 4u64);
    let mut w = witness(&Ops(vec![(alu::SRA, a, b)]));
    set_claim(&mut w, alu::SRA, a, b, a >> 4);
    let r = shift_row(&w, alu::SRA, a, b);
    let l = ShiftCols::from_row_mut(w.traces[SHIFT].row_mut(r));
    l.mop = F::from_u64(alu::MULHU);
    l.r = words_f(a >> 4);
    rebuild_mul(&mut w);
    expect_rejected(&w, "SRA as SRL");
}

/// SRL by 0 claimed as `MULHU(a, 1) = 0` through a POW2 tuple with z = 0 (not a row of POW2).
#[test]
fn zero_amount_lie_is_rejected() {
    let a = 0xdead_beef_1234_5678u64;
    let mut w = witness(&Ops(vec![(alu::SRL, a, 64)]));
    set_claim(&mut w, alu::SRL, a, 64, 0);
    let r = shift_row(&w, alu::SRL, a, 64);
    let l = ShiftCols::from_row_mut(w.traces[SHIFT].row_mut(r));
    assert_eq!(l.s, F::ZERO);
    l.z = F::ZERO;
    l.mop = F::from_u64(alu::MULHU);
    l.r = [F::ZERO, F::ZERO];
    rebuild_mul(&mut w);
    expect_check_rejects(&w, "zero amount, z = 0");
}

/// SLL by 67 claimed as `a << 67` reduced differently: s = 67, quotient 0 (no POW2 row (67, 0)).
#[test]
fn amount_not_reduced_is_rejected() {
    let a = 0x1234_5678u64;
    let mut w = witness(&Ops(vec![(alu::SRL, a, 67)]));
    set_claim(&mut w, alu::SRL, a, 67, 0);
    let r = shift_row(&w, alu::SRL, a, 67);
    let l = ShiftCols::from_row_mut(w.traces[SHIFT].row_mut(r));
    l.s = F::from_u64(67);
    l.q0 = F::ZERO;
    // Pretend POW2 had 2^67 = 0 and 2^(64-67): q = 0, so the MULHU result is 0.
    l.p = [F::ZERO, F::ZERO];
    l.q = [F::ZERO, F::ZERO];
    l.x = [F::ZERO, F::ZERO];
    l.r = [F::ZERO, F::ZERO];
    rebuild_mul(&mut w);
    expect_check_rejects(&w, "amount 67 unreduced");
}

/// SRL5 by 40 claimed as `a >> 40` (s = 40 >= 32 with w5 = 1, quotient 0): no POW2 row (40, 1).
#[test]
fn five_bit_amount_out_of_range_is_rejected() {
    let a = 0x8765_4321_0000_0000u64;
    let mut w = witness(&Ops(vec![(alu::SRL5, a, 40)]));
    set_claim(&mut w, alu::SRL5, a, 40, a >> 40);
    let r = shift_row(&w, alu::SRL5, a, 40);
    let l = ShiftCols::from_row_mut(w.traces[SHIFT].row_mut(r));
    l.s = F::from_u64(40);
    l.q0 = F::ZERO;
    l.p = words_f(1 << 40);
    l.q = words_f(1 << 24);
    l.x = words_f(1 << 24);
    l.r = words_f(a >> 40);
    rebuild_mul(&mut w);
    expect_check_rejects(&w, "5-bit amount 40");
}

/// The design's POW2 lookup `POW2[s + 64 w5, ...]` bounds only the sum: with w5 = 1 and s = 37 - 64,
/// `b_lo = 5 = s + 32 * 1` holds and row 37 gives p = 2^37, proving `SLL5(a, 5) = a << 37`. With the kind in
/// the tuple (`POW2[s, w5, ...]`) the tuple `(-27, 1, ...)` is in no row.
#[test]
fn negative_amount_is_rejected() {
    let a = 0x3u64;
    let mut w = witness(&Ops(vec![(alu::SLL5, a, 5)]));
    set_claim(&mut w, alu::SLL5, a, 5, a << 37);
    let r = shift_row(&w, alu::SLL5, a, 5);
    let l = ShiftCols::from_row_mut(w.traces[SHIFT].row_mut(r));
    l.s = F::ZERO - F::from_u64(27);
    l.q0 = F::ONE;
    l.p = words_f(1 << 37);
    l.q = words_f(1 << 27);
    l.x = words_f(1 << 37);
    l.r = words_f(a << 37);
    rebuild_mul(&mut w);
    // Every constraint holds (the amount equation included); only POW2 objects.
    match check(&w) {
        Err(zkrv_stark::check::CheckError::Constraint { constraint, .. }) => {
            panic!("expected a bus imbalance, got constraint {constraint}")
        }
        Err(e) => println!("negative amount: {e}"),
        Ok(()) => panic!("negative amount accepted"),
    }
    expect_rejected(&w, "negative amount");
}

/// Random cell mutations (uniform non-zero deltas, and ±1 on rows that answer requests) with the MUL
/// table rebuilt from the mutated SHIFT rows, as a prover would: all rejected. Excluded: `b_hi` on rows
/// with m = 0 (it appears only in the receive, whose multiplicity is then 0).
#[test]
fn random_mutations_are_rejected() {
    let seed = seed("shift_mutations");
    let base = witness(&ops(seed, 1, 20));
    let mut rng = Rng(seed ^ 0x5eed);
    let t = &base.traces[SHIFT];
    let idx = ShiftCols::<usize>::indices();
    let mut done = 0;
    while done < 60 {
        let mut w = base.clone();
        let row = rng.below(t.height() as u64) as usize;
        let col = rng.below(NUM_SHIFT_COLS as u64) as usize;
        let real = ShiftCols::from_row(t.row(row)).m != F::ZERO;
        if col == idx.b[1] && !real {
            continue;
        }
        let delta = if done % 2 == 1 && real {
            if rng.below(2) == 0 {
                F::ONE
            } else {
                -F::ONE
            }
        } else {
            F::from_u64(1 + rng.below(u64::MAX - 2))
        };
        w.traces[SHIFT].row_mut(row)[col] += delta;
        rebuild_mul(&mut w);
        expect_check_rejects(&w, &format!("SHIFT row {row} col {col} += {delta:?}"));
        done += 1;
    }
}
