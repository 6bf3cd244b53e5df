//! BYTEWISE table (docs/tables.md §6.15, `tables/bytewise.rs`): the CPU fill of AND/OR/XOR on edge and
//! random operands passes the debug checker and proves/verifies; wrong result bytes, out-of-range bytes,
//! the PAIR-op trick (`is_or = is_xor = 1`), an op swap and random cell mutations are rejected.

mod alu_common;

use alu_common::*;
use zkrv_machine::bus::alu;
use zkrv_machine::tables::bytewise::{BytewiseCols, NUM_BYTEWISE_COLS};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};

const BW_OPS: [u64; 3] = [alu::AND, alu::OR, alu::XOR];

fn ops(seed: u64, edges: usize, n: usize) -> Ops {
    let mut v = Vec::new();
    for &op in &BW_OPS {
        for &a in &EDGES[..edges] {
            for &b in &EDGES[..edges] {
                v.push((op, a, b));
            }
        }
    }
    let mut rng = Rng(seed);
    for _ in 0..n {
        v.push((BW_OPS[rng.below(3) as usize], rng.operand(), rng.operand()));
    }
    v.push((alu::XOR, 5, u64::MAX));
    v.push((alu::XOR, 5, u64::MAX));
    Ops(v)
}

fn u(x: F) -> u64 {
    x.as_canonical_u64()
}

fn pack(x: &[F]) -> u64 {
    x.iter()
        .enumerate()
        .fold(0, |acc, (k, v)| acc | (u(*v) << (8 * k)))
}

fn bw_row(w: &W, op: u64, a: u64, b: u64) -> usize {
    let t = &w.traces[BYTEWISE];
    (0..t.height())
        .find(|&r| {
            let l = BytewiseCols::from_row(t.row(r));
            alu::AND + u(l.is_or) + 2 * u(l.is_xor) == op && pack(&l.a) == a && pack(&l.b) == b
        })
        .expect("bytewise row")
}

#[test]
fn bytewise_fill_checks_and_matches_rust() {
    let seed = seed("bytewise_fill");
    let w = witness(&ops(seed, EDGES.len(), 300));
    check(&w).unwrap();
    let t = &w.traces[BYTEWISE];
    for r in 0..t.height() {
        let l = BytewiseCols::from_row(t.row(r));
        let op = alu::AND + u(l.is_or) + 2 * u(l.is_xor);
        assert_eq!(pack(&l.r), reference(op, pack(&l.a), pack(&l.b)), "row {r}");
    }
}

#[test]
fn bytewise_proves_and_verifies() {
    let seed = seed("bytewise_prove");
    let w = witness(&ops(seed, 8, 60));
    let t0 = std::time::Instant::now();
    prove_verify(&w, true).unwrap();
    println!(
        "BYTEWISE {} rows + BITWISE: prove+verify {:?}",
        w.traces[BYTEWISE].height(),
        t0.elapsed()
    );
}

/// A wrong result byte (AND claimed with one bit more).
#[test]
fn wrong_result_byte_is_rejected() {
    let (a, b) = (0xf0f0_1234_5678_9abcu64, 0x0ff0_ffff_0000_1111u64);
    let mut w = witness(&Ops(vec![(alu::AND, a, b)]));
    let bad = (a & b) ^ (1 << 40);
    set_claim(&mut w, alu::AND, a, b, bad);
    let r = bw_row(&w, alu::AND, a, b);
    let l = BytewiseCols::from_row_mut(w.traces[BYTEWISE].row_mut(r));
    l.r[5] += F::ONE;
    recount(&mut w);
    expect_rejected(&w, "wrong AND byte");
}

/// XOR claimed as OR: the row keeps the XOR flag but holds OR result bytes.
#[test]
fn xor_as_or_is_rejected() {
    let (a, b) = (0xffu64, 0x0fu64);
    let mut w = witness(&Ops(vec![(alu::XOR, a, b)]));
    set_claim(&mut w, alu::XOR, a, b, a | b);
    let r = bw_row(&w, alu::XOR, a, b);
    BytewiseCols::from_row_mut(w.traces[BYTEWISE].row_mut(r)).r[0] = F::from_u64(a | b);
    recount(&mut w);
    expect_rejected(&w, "XOR as OR");
}

/// An operand byte out of range (byte + 256, next byte - 1: the packed word is unchanged).
#[test]
fn byte_out_of_range_is_rejected() {
    let (a, b) = (0x0100u64, 0xffffu64);
    let mut w = witness(&Ops(vec![(alu::OR, a, b)]));
    let r = bw_row(&w, alu::OR, a, b);
    let l = BytewiseCols::from_row_mut(w.traces[BYTEWISE].row_mut(r));
    l.a[0] += F::from_u64(256);
    l.a[1] -= F::ONE;
    recount(&mut w);
    expect_check_rejects(&w, "byte out of range");
}

/// `is_or = is_xor = 1`: byte op 3 (PAIR, result 0) and ALU code AND + 3 = SLL, i.e. a false
/// `SLL(a, b) = 0` from the PAIR range checks alone. The one-hot constraint rejects it.
#[test]
fn pair_trick_is_rejected() {
    let (a, b) = (0x0102u64, 0x0304u64);
    let mut w = witness(&Ops(vec![(alu::AND, a, b)]));
    set_claim(&mut w, alu::AND, a, b, 0);
    // The claim becomes SLL(a, b) = 0.
    let p = w
        .public
        .iter_mut()
        .find(|p| p.values[0] == F::from_u64(alu::AND))
        .unwrap();
    p.values[0] = F::from_u64(alu::SLL);
    let r = bw_row(&w, alu::AND, a, b);
    let l = BytewiseCols::from_row_mut(w.traces[BYTEWISE].row_mut(r));
    l.is_and = F::ZERO;
    l.is_or = F::ONE;
    l.is_xor = F::ONE;
    l.r = [F::ZERO; 8];
    recount(&mut w);
    expect_rejected(&w, "PAIR trick");
}

/// Random cell mutations (uniform non-zero deltas anywhere, ±1 on rows that answer requests): all rejected.
#[test]
fn random_mutations_are_rejected() {
    let seed = seed("bytewise_mutations");
    let base = witness(&ops(seed, 3, 10));
    let mut rng = Rng(seed ^ 0x5eed);
    let t = &base.traces[BYTEWISE];
    for it in 0..60 {
        let mut w = base.clone();
        let row = rng.below(t.height() as u64) as usize;
        let col = rng.below(NUM_BYTEWISE_COLS as u64) as usize;
        let real = BytewiseCols::from_row(t.row(row)).m != F::ZERO;
        let delta = if it % 2 == 1 && real {
            if rng.below(2) == 0 {
                F::ONE
            } else {
                -F::ONE
            }
        } else {
            F::from_u64(1 + rng.below(u64::MAX - 2))
        };
        w.traces[BYTEWISE].row_mut(row)[col] += delta;
        recount(&mut w);
        expect_check_rejects(&w, &format!("BYTEWISE row {row} col {col} += {delta:?}"));
    }
}
