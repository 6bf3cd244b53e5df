//! MUL table (docs/tables.md §6.13, `tables/mul.rs`): the CPU fill on edge and random operands passes the
//! debug checker and proves/verifies; wrong results, out-of-range limbs, off-by-one and wrapped carries and
//! random cell mutations are rejected.

mod alu_common;

use alu_common::*;
use zkrv_machine::bus::alu;
use zkrv_machine::tables::mul::{MulCols, NUM_MUL_COLS};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};

const MUL_OPS: [u64; 4] = [alu::MUL, alu::MULH, alu::MULHSU, alu::MULHU];

/// Every MUL op on every pair of the first `edges` edge operands, plus `n` random ones.
fn ops(seed: u64, edges: usize, n: usize) -> Ops {
    let mut v = Vec::new();
    for &a in &EDGES[..edges] {
        for &b in &EDGES[..edges] {
            for &op in &MUL_OPS {
                v.push((op, a, b));
            }
        }
    }
    let mut rng = Rng(seed);
    for _ in 0..n {
        let op = MUL_OPS[rng.below(4) as usize];
        v.push((op, rng.operand(), rng.operand()));
    }
    // Duplicates exercise the counters.
    v.push((alu::MULH, 3, u64::MAX));
    v.push((alu::MULH, 3, u64::MAX));
    Ops(v)
}

fn mul_row(w: &W, a: u64, b: u64, sa: bool, sb: bool) -> usize {
    let i = MulCols::<usize>::indices();
    let l = |x: u64| [x & 0xffff, (x >> 16) & 0xffff, (x >> 32) & 0xffff, x >> 48];
    let (la, lb) = (l(a), l(b));
    find_row(
        w,
        MUL,
        &[
            i.a[0], i.a[1], i.a[2], i.a[3], i.b[0], i.b[1], i.b[2], i.b[3], i.sa_en, i.sb_en,
        ],
        &[
            la[0], la[1], la[2], la[3], lb[0], lb[1], lb[2], lb[3], sa as u64, sb as u64,
        ],
    )
}

#[test]
fn mul_fill_checks_and_matches_rust() {
    let seed = seed("mul_fill");
    let w = witness(&ops(seed, EDGES.len(), 400));
    check(&w).unwrap();
    // The product limbs are the Rust widening product of the sign-extended operands.
    let t = &w.traces[MUL];
    for r in 0..t.height() {
        let row = MulCols::from_row(t.row(r));
        let g = |x: &[F]| {
            x.iter()
                .enumerate()
                .fold(0u64, |acc, (k, v)| acc | (v.as_canonical_u64() << (16 * k)))
        };
        let (a, b) = (g(&row.a), g(&row.b));
        let sa = row.sa_en == F::ONE;
        let sb = row.sb_en == F::ONE;
        let wa = if sa { a as i64 as i128 } else { a as i128 };
        let wb = if sb { b as i64 as i128 } else { b as i128 };
        let prod = wa.wrapping_mul(wb) as u128;
        assert_eq!(g(&row.p[..4]), prod as u64, "row {r}");
        assert_eq!(g(&row.p[4..]), (prod >> 64) as u64, "row {r}");
    }
}

#[test]
fn mul_proves_and_verifies() {
    let seed = seed("mul_prove");
    let w = witness(&ops(seed, 8, 100));
    let t0 = std::time::Instant::now();
    prove_verify(&w, true).unwrap();
    println!(
        "MUL {} rows + BITWISE: prove+verify {:?}",
        w.traces[MUL].height(),
        t0.elapsed()
    );
}

/// MULH claimed to return the low half of the product.
#[test]
fn mulh_low_half_is_rejected() {
    let (a, b) = (0x1234_5678_9abc_def0u64, 0xfedc_ba98_7654_3210u64);
    let mut w = witness(&Ops(vec![(alu::MULH, a, b)]));
    set_claim(&mut w, alu::MULH, a, b, a.wrapping_mul(b));
    let r = mul_row(&w, a, b, true, true);
    let row = MulCols::from_row_mut(w.traces[MUL].row_mut(r));
    let lo = [row.p[0], row.p[1], row.p[2], row.p[3]];
    row.p[4..].copy_from_slice(&lo);
    recount(&mut w);
    expect_rejected(&w, "MULH low half");
}

/// MULH answered by the MULHU row (sign flags cleared).
#[test]
fn mulh_as_mulhu_is_rejected() {
    let (a, b) = (u64::MAX - 5, 7u64);
    let mut w = witness(&Ops(vec![(alu::MULH, a, b)]));
    let hu = ((a as u128 * b as u128) >> 64) as u64;
    set_claim(&mut w, alu::MULH, a, b, hu);
    // Make the MULH row an honest MULHU row (the product limbs of the unsigned product), still sending MULH.
    let r = mul_row(&w, a, b, true, true);
    let prod = a as u128 * b as u128;
    let row = MulCols::from_row_mut(w.traces[MUL].row_mut(r));
    row.sa = F::ZERO;
    row.sb = F::ZERO;
    for k in 0..8 {
        row.p[k] = F::from_u64(((prod >> (16 * k)) & 0xffff) as u64);
    }
    recount(&mut w);
    expect_rejected(&w, "MULH as MULHU");
}

/// A product limb out of range (limb + 2^16, next limb - 1: the packed word is unchanged).
#[test]
fn product_limb_out_of_range_is_rejected() {
    let (a, b) = (0x1_0003u64, 0x2_0005u64);
    let mut w = witness(&Ops(vec![(alu::MUL, a, b)]));
    let r = mul_row(&w, a, b, false, false);
    let row = MulCols::from_row_mut(w.traces[MUL].row_mut(r));
    assert!(row.p[1] != F::ZERO);
    row.p[0] += F::from_u64(1 << 16);
    row.p[1] -= F::ONE;
    recount(&mut w);
    expect_check_rejects(&w, "limb out of range");
}

/// An operand limb out of range (the packed operand unchanged).
#[test]
fn operand_limb_out_of_range_is_rejected() {
    let (a, b) = (0x5_0000u64, 3u64);
    let mut w = witness(&Ops(vec![(alu::MULHU, a, b)]));
    let r = mul_row(&w, a, b, false, false);
    let row = MulCols::from_row_mut(w.traces[MUL].row_mut(r));
    row.a[0] += F::from_u64(1 << 16);
    row.a[1] -= F::ONE;
    recount(&mut w);
    expect_check_rejects(&w, "operand limb out of range");
}

/// A carry off by one.
#[test]
fn carry_off_by_one_is_rejected() {
    let (a, b) = (u64::MAX, u64::MAX);
    let mut w = witness(&Ops(vec![(alu::MULHU, a, b)]));
    let r = mul_row(&w, a, b, false, false);
    let row = MulCols::from_row_mut(w.traces[MUL].row_mut(r));
    row.c[1][0] += F::ONE;
    // Keep the next column's equation: its result word absorbs the extra carry.
    row.p[4] += F::ONE;
    let mut w2 = w.clone();
    recount(&mut w2);
    expect_check_rejects(&w2, "carry off by one");
    // Same with the low half of column 1 lowered to compensate (2^32 too much on the left).
    let row = MulCols::from_row_mut(w.traces[MUL].row_mut(r));
    row.p[4] -= F::ONE;
    recount(&mut w);
    expect_check_rejects(&w, "carry off by one (no compensation)");
}

/// The wrap of the design's 32-bit carries (docs/tables.md §6.13 as written): `MUL(0, 0) =
/// 0xffff_ffff_0000_0001` with `p_0 = 1`, `c_0 = 2^32 - 1`, `p_2 = p_3 = 0xffff` satisfies every product
/// equation mod p; the byte range of the carry's high half rejects it.
#[test]
fn wrapped_carry_is_rejected() {
    let mut w = witness(&Ops(vec![(alu::MUL, 0, 0)]));
    let r = mul_row(&w, 0, 0, false, false);
    let row = MulCols::from_row_mut(w.traces[MUL].row_mut(r));
    assert_eq!(row.m_lo, F::ONE);
    row.p[0] = F::ONE;
    row.c[0] = [F::from_u64(0xffff), F::from_u64(0xffff)];
    row.p[2] = F::from_u64(0xffff);
    row.p[3] = F::from_u64(0xffff);
    set_claim(&mut w, alu::MUL, 0, 0, 0xffff_ffff_0000_0001);
    recount(&mut w);
    // Only the carry range objects: every constraint holds.
    match check(&w) {
        Err(zkrv_stark::check::CheckError::Constraint { .. }) => {
            panic!("expected a bus imbalance, got a constraint failure")
        }
        Err(e) => println!("wrapped carry: {e}"),
        Ok(()) => panic!("wrapped carry accepted"),
    }
    expect_rejected(&w, "wrapped carry");
}

/// Random cell mutations (uniform non-zero field deltas anywhere; ±1 on rows that answer requests, except
/// the sign enables of rows without a high request, which do not change any fact) are all rejected.
#[test]
fn random_mutations_are_rejected() {
    let seed = seed("mul_mutations");
    let base = witness(&ops(seed, 4, 20));
    let mut rng = Rng(seed ^ 0x5eed);
    let t = &base.traces[MUL];
    let idx = MulCols::<usize>::indices();
    for it in 0..60 {
        let mut w = base.clone();
        let row = rng.below(t.height() as u64) as usize;
        let col = rng.below(NUM_MUL_COLS as u64) as usize;
        let cells = MulCols::from_row(t.row(row));
        let real = cells.m_lo != F::ZERO || cells.m_hi != F::ZERO;
        let small = it % 2 == 1 && real;
        if small && cells.m_hi == F::ZERO && (col == idx.sa_en || col == idx.sb_en) {
            continue;
        }
        let delta = if small {
            if rng.below(2) == 0 {
                F::ONE
            } else {
                -F::ONE
            }
        } else {
            F::from_u64(1 + rng.below(u64::MAX - 2))
        };
        w.traces[MUL].row_mut(row)[col] += delta;
        recount(&mut w);
        expect_check_rejects(&w, &format!("MUL row {row} col {col} += {delta:?}"));
    }
}
