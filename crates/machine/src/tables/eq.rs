//! EQ (docs/tables.md §6.10): `r = [a == b]` for 64-bit a, b (BEQ/BNE), deduplicated: one row per distinct
//! (a, b), with the number of requests in `m`.

use std::collections::BTreeMap;

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{Field, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu};
use crate::cols::columns;
use crate::tables::cpu::c;
use crate::tables::decode::words;

/// EQ row (8 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EqCols<T> {
    pub a: [T; 2],
    pub b: [T; 2],
    /// `[a == b]`.
    pub r: T,
    /// Inverse witnesses: `(a_lo - b_lo) inv_lo + (a_hi - b_hi) inv_hi = 1` when a ≠ b.
    pub inv: [T; 2],
    /// Number of ALU requests this row answers (free counter).
    pub m: T,
}
columns!(EqCols, NUM_EQ_COLS);

/// The EQ AIR.
pub struct EqAir;

impl Air for EqAir {
    fn name(&self) -> &str {
        "EQ"
    }
    fn width(&self) -> usize {
        NUM_EQ_COLS
    }
    fn column_names(&self) -> Vec<String> {
        EqCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_EQ_COLS).map(|i| b.main(i)).collect();
        let l = EqCols::from_row(&m);
        let dl = l.a[0].clone() - &l.b[0];
        let dh = l.a[1].clone() - &l.b[1];
        b.assert_zero("equal lo", l.r.clone() * &dl);
        b.assert_zero("equal hi", l.r.clone() * &dh);
        b.assert_zero(
            "different",
            Expr::one() - &l.r - dl * &l.inv[0] - dh * &l.inv[1],
        );
        b.receive(
            bus::ALU,
            vec![
                c(alu::EQ),
                l.a[0].clone(),
                l.a[1].clone(),
                l.b[0].clone(),
                l.b[1].clone(),
                l.r.clone(),
                Expr::zero(),
            ],
            l.m.clone(),
        );
    }
}

/// Height of the EQ table for `len` requests: the next power of two `>= max(len, min_height)`.
pub fn eq_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The EQ trace from the requests `(a, b) -> count`: `n x 8`, n = next power of two >= max(requests,
/// min_height); padding rows are the fact 0 == 0 with m = 0.
pub fn eq_trace(requests: &BTreeMap<(u64, u64), u64>, min_height: usize) -> RowMajorMatrix {
    let n = eq_height(requests.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_EQ_COLS];
    let rows = requests
        .iter()
        .map(|(&(a, b), &m)| (a, b, m))
        .chain(std::iter::repeat((0, 0, 0)));
    for (chunk, (a, b, m)) in values.chunks_mut(NUM_EQ_COLS).zip(rows) {
        let row = EqCols::from_row_mut(chunk);
        let (aw, bw) = (words(a), words(b));
        row.a = aw.map(F::from_u64);
        row.b = bw.map(F::from_u64);
        row.m = F::from_u64(m);
        if a == b {
            row.r = F::ONE;
        } else if aw[0] != bw[0] {
            row.inv[0] = (F::from_u64(aw[0]) - F::from_u64(bw[0])).inverse();
        } else {
            row.inv[1] = (F::from_u64(aw[1]) - F::from_u64(bw[1])).inverse();
        }
    }
    RowMajorMatrix::new(values, NUM_EQ_COLS)
}
