//! The two soundness flaws of docs/tables.md §6.12/§6.13 as written, shown on variant AIRs that follow the
//! design literally: the debug checker *accepts* a false fact there, while the implemented tables
//! (`tables/mul.rs`, `tables/shift.rs`) reject the same witness (`alu_mul::wrapped_carry_is_rejected`,
//! `alu_shift::negative_amount_is_rejected`). If these tests start failing because the variants reject,
//! the comparison is no longer meaningful; if the real tables are changed back to the design, the
//! `alu_mul`/`alu_shift` tests fail.

mod alu_common;

use alu_common::*;
use zkrv_machine::bus::{self, alu};
use zkrv_machine::tables::bitwise::{bitwise_preprocessed, BitwiseAir};
use zkrv_machine::tables::bytewise::BytewiseAir;
use zkrv_machine::tables::mul::{MulAir, MulCols};
use zkrv_machine::tables::shift::{ShiftAir, ShiftCols};
use zkrv_stark::air::{Air, AirBuilder, Direction};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

/// MUL with the design's carry ranges: `U16(c_k0)`, `U16(c_k1)` (instead of a byte `c_k1`).
struct DesignMulAir;

impl Air for DesignMulAir {
    fn name(&self) -> &str {
        "MUL"
    }
    fn width(&self) -> usize {
        MulAir.width()
    }
    fn eval(&self, b: &mut AirBuilder) {
        MulAir.eval(b);
        b.interactions.retain(|it| it.bus != bus::BYTE);
        let i = MulCols::<usize>::indices();
        for ck in i.c {
            let v = b.main(ck[1]);
            b.send(bus::RANGE16, vec![v], Expr::one());
        }
    }
}

/// SHIFT with the design's POW2 lookup `POW2[s + 64 w5, p_lo, p_hi, q_lo, q_hi, z]`.
struct DesignShiftAir;

impl Air for DesignShiftAir {
    fn name(&self) -> &str {
        "SHIFT"
    }
    fn width(&self) -> usize {
        ShiftAir.width()
    }
    fn eval(&self, b: &mut AirBuilder) {
        ShiftAir.eval(b);
        b.interactions.retain(|it| it.bus != bus::POW2);
        let i = ShiftCols::<usize>::indices();
        let m = |c: usize| b.main(c);
        let k = m(i.s) + m(i.w5) * Expr::constant(64);
        let v = vec![k, m(i.p[0]), m(i.p[1]), m(i.q[0]), m(i.q[1]), m(i.z)];
        b.send(bus::POW2, v, Expr::one());
    }
}

/// The design's POW2: rows k < 64 (shift k) and 64 <= k < 96 (5-bit shift k - 64), `[k, p, q, z]`.
struct DesignPow2Air;

impl Air for DesignPow2Air {
    fn name(&self) -> &str {
        "POW2"
    }
    fn width(&self) -> usize {
        1
    }
    fn preprocessed_width(&self) -> usize {
        6
    }
    fn eval(&self, b: &mut AirBuilder) {
        let v = (0..6).map(|c| b.preprocessed(c)).collect();
        let m = b.main(0);
        b.interactions.push(zkrv_stark::air::Interaction {
            bus: bus::POW2,
            values: v,
            multiplicity: m,
            direction: Direction::Receive,
        });
    }
}

fn design_pow2() -> RowMajorMatrix {
    let mut values = Vec::new();
    for k in 0..128u64 {
        let k = if k < 96 { k } else { 0 };
        let s = k % 64;
        let (p, q) = (1u64 << s, if s == 0 { 1 } else { 1u64 << (64 - s) });
        for v in [
            k,
            p & 0xffff_ffff,
            p >> 32,
            q & 0xffff_ffff,
            q >> 32,
            (s == 0) as u64,
        ] {
            values.push(F::from_u64(v));
        }
    }
    RowMajorMatrix::new(values, 6)
}

fn design_airs() -> Vec<&'static dyn Air> {
    vec![
        &DesignMulAir,
        &DesignShiftAir,
        &DesignPow2Air,
        &BytewiseAir,
        &BitwiseAir,
    ]
}

fn design_prep() -> Vec<Option<RowMajorMatrix>> {
    vec![
        None,
        None,
        Some(design_pow2()),
        None,
        Some(bitwise_preprocessed()),
    ]
}

fn words_f(x: u64) -> [F; 2] {
    [F::from_u64(x & 0xffff_ffff), F::from_u64(x >> 32)]
}

/// `MUL(0, 0) = 0xffff_ffff_0000_0001` through a carry of 2^32 - 1 that wraps mod p.
#[test]
fn design_mul_accepts_wrapped_carry() {
    let mut w = witness(&Ops(vec![(alu::MUL, 0, 0)]));
    let (airs, prep) = (design_airs(), design_prep());
    recount_with(&airs, &prep, &mut w);
    check_with(&airs, &prep, &w).expect("honest witness under the design");
    let t = &mut w.traces[MUL];
    let r = (0..t.height())
        .find(|&r| MulCols::from_row(t.row(r)).m_lo == F::ONE)
        .unwrap();
    let row = MulCols::from_row_mut(t.row_mut(r));
    row.p[0] = F::ONE;
    row.c[0] = [F::from_u64(0xffff), F::from_u64(0xffff)];
    row.p[2] = F::from_u64(0xffff);
    row.p[3] = F::from_u64(0xffff);
    set_claim(&mut w, alu::MUL, 0, 0, 0xffff_ffff_0000_0001);
    recount_with(&airs, &prep, &mut w);
    check_with(&airs, &prep, &w).expect("the design accepts MUL(0, 0) = 0xffff_ffff_0000_0001");
    // The implemented table does not.
    recount(&mut w);
    assert!(check(&w).is_err());
}

/// `SLL5(3, 5) = 3 << 37` through `s = 37 - 64`, `b_lo = 5 = s + 32 * 1`, POW2 row 37.
#[test]
fn design_shift_accepts_negative_amount() {
    let a = 3u64;
    let mut w = witness(&Ops(vec![(alu::SLL5, a, 5)]));
    let (airs, prep) = (design_airs(), design_prep());
    recount_with(&airs, &prep, &mut w);
    check_with(&airs, &prep, &w).expect("honest witness under the design");
    let t = &mut w.traces[SHIFT];
    let r = (0..t.height())
        .find(|&r| ShiftCols::from_row(t.row(r)).m == F::ONE)
        .unwrap();
    let l = ShiftCols::from_row_mut(t.row_mut(r));
    l.s = F::ZERO - F::from_u64(27);
    l.q0 = F::ONE;
    l.p = words_f(1 << 37);
    l.q = words_f(1 << 27);
    l.x = words_f(1 << 37);
    l.r = words_f(a << 37);
    set_claim(&mut w, alu::SLL5, a, 5, a << 37);
    rebuild_mul(&mut w);
    recount_with(&airs, &prep, &mut w);
    check_with(&airs, &prep, &w).expect("the design accepts SLL5(3, 5) = 3 << 37");
    recount(&mut w);
    assert!(check(&w).is_err());
}
