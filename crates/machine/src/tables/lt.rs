//! LT (docs/tables.md §6.9): `r = [a < b]`, signed or unsigned, for 64-bit a, b (SLT, SLTU, SLTI, SLTIU,
//! BLT, BGE, BLTU, BGEU), deduplicated: one row per distinct (a, b, signed), the count in `m`.
//!
//! Method: `a - b = d - 2^64 ult` with d in 16-bit halves (so `ult = [a <u b]`), and
//! `[a <s b] = ult xor sa xor sb` with sa, sb the sign bits.

use std::collections::BTreeMap;

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu};
use crate::cols::columns;
use crate::tables::bitwise::{LookupKind, Lookups};
use crate::tables::cpu::{c, inv_pow2};
use crate::tables::decode::words;

/// LT row (16 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LtCols<T> {
    pub a: [T; 2],
    pub b: [T; 2],
    /// `a - b mod 2^64` in 16-bit halves.
    pub d: [T; 4],
    /// Top 16 bits of `a_hi` (and `b_hi`).
    pub a_top: T,
    pub b_top: T,
    /// Sign bits of a and b (bit 63).
    pub sa: T,
    pub sb: T,
    /// 1 for SLT (signed), 0 for SLTU.
    pub signed: T,
    /// `signed * (sa xor sb)`.
    pub sx: T,
    /// The result `[a < b]`.
    pub r: T,
    /// Number of ALU requests this row answers (free counter).
    pub m: T,
}
columns!(LtCols, NUM_LT_COLS);

/// The LT AIR.
pub struct LtAir;

impl Air for LtAir {
    fn name(&self) -> &str {
        "LT"
    }
    fn width(&self) -> usize {
        NUM_LT_COLS
    }
    fn column_names(&self) -> Vec<String> {
        LtCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_LT_COLS).map(|i| b.main(i)).collect();
        let l = LtCols::from_row(&m);
        let one = Expr::one;
        let two16 = c(1 << 16);
        for h in &l.d {
            b.send(bus::RANGE16, vec![h.clone()], one());
        }
        // Sign bits: a_hi = low + 2^16 a_top with U16(low) and MSB16[a_top, sa].
        for (x_hi, top, s) in [(&l.a[1], &l.a_top, &l.sa), (&l.b[1], &l.b_top, &l.sb)] {
            b.send(
                bus::RANGE16,
                vec![x_hi.clone() - top.clone() * two16.clone()],
                one(),
            );
            b.send(bus::MSB16, vec![top.clone(), s.clone()], one());
        }
        let d_lo = l.d[0].clone() + l.d[1].clone() * two16.clone();
        let d_hi = l.d[2].clone() + l.d[3].clone() * two16;
        let inv32 = inv_pow2(32);
        let c0 = (d_lo - &l.a[0] + &l.b[0]) * inv32;
        let ult = (d_hi - &l.a[1] + &l.b[1] + &c0) * inv32;
        b.assert_bool("borrow lo", c0);
        b.assert_bool("borrow hi", ult.clone());
        b.assert_bool("signed bool", l.signed.clone());
        let xor = l.sa.clone() + &l.sb - l.sa.clone() * &l.sb * c(2);
        b.assert_eq("sx", l.sx.clone(), l.signed.clone() * xor);
        b.assert_eq(
            "result",
            l.r.clone(),
            ult.clone() + &l.sx - ult * &l.sx * c(2),
        );
        b.receive(
            bus::ALU,
            vec![
                c(alu::SLTU) - &l.signed,
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

/// Height of the LT trace for `len` deduplicated requests: the next power of two >= max(len, min_height).
pub fn lt_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The LT trace from the requests `(a, b, signed) -> count` (`n x 16`, n = next power of two >=
/// max(requests, min_height); padding rows are the fact 0 <u 0 = 0 with m = 0), adding its lookups.
pub fn lt_trace(
    requests: &BTreeMap<(u64, u64, bool), u64>,
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = lt_height(requests.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_LT_COLS];
    let rows = requests
        .iter()
        .map(|(&(a, b, s), &m)| (a, b, s, m))
        .chain(std::iter::repeat((0, 0, false, 0)));
    for (chunk, (a, b, signed, m)) in values.chunks_mut(NUM_LT_COLS).zip(rows) {
        let d = a.wrapping_sub(b);
        let (sa, sb) = (a >> 63, b >> 63);
        let r = if signed {
            (a as i64) < (b as i64)
        } else {
            a < b
        } as u64;
        let sx = (signed as u64) * (sa ^ sb);
        let dh = [d & 0xffff, (d >> 16) & 0xffff, (d >> 32) & 0xffff, d >> 48];
        for h in dh {
            lookups.u16(h);
        }
        for x in [a, b] {
            lookups.u16((x >> 32) & 0xffff);
            lookups.add(LookupKind::Msb16, x >> 48);
        }
        let row = LtCols::from_row_mut(chunk);
        *row = LtCols {
            a: words(a).map(F::from_u64),
            b: words(b).map(F::from_u64),
            d: dh.map(F::from_u64),
            a_top: F::from_u64(a >> 48),
            b_top: F::from_u64(b >> 48),
            sa: F::from_u64(sa),
            sb: F::from_u64(sb),
            signed: F::from_bool(signed),
            sx: F::from_u64(sx),
            r: F::from_u64(r),
            m: F::from_u64(m),
        };
    }
    RowMajorMatrix::new(values, NUM_LT_COLS)
}
