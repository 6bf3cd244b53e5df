//! LOAD (docs/tables.md §6.7): one row per load. Receives the CPU's MEMOP (base, imm, loaded value),
//! computes the address, asks MEMW_A/MEMW for the raw access value and its top byte, and sign- or
//! zero-extends it.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::bitwise::{LookupKind, Lookups};
use crate::tables::cpu::c;
use crate::tables::decode::words;
use crate::tables::memw_a::WIDTHS;

/// LOAD row (20 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadCols<T> {
    pub ts: T,
    /// rs1 value (two words).
    pub base: [T; 2],
    /// Sign-extended offset (two words).
    pub imm: [T; 2],
    /// `base + imm mod 2^64` (its high word is 0).
    pub addr: T,
    /// Carry out of the low word of `base + imm`.
    pub c0: T,
    /// One-hot width 1, 2, 4, 8.
    pub w: [T; 4],
    /// Zero-extending load (LBU, LHU, LWU).
    pub unsigned: T,
    /// Raw access value (two words) and its most significant byte.
    pub v: [T; 2],
    pub top: T,
    /// Bit 7 of `top`.
    pub sbit: T,
    /// `(1 - unsigned) sbit`: the sign that is extended.
    pub s: T,
    /// The loaded value after extension (two words).
    pub r: [T; 2],
    pub mu: T,
}
columns!(LoadCols, NUM_LOAD_COLS);

/// Address constraints shared by LOAD and STORE: `addr = base_lo + imm_lo - 2^32 c0`, c0 boolean, and the
/// high word of `base + imm` is 0.
pub(crate) fn eval_address(
    b: &mut AirBuilder,
    base: &[Expr; 2],
    imm: &[Expr; 2],
    addr: &Expr,
    c0: &Expr,
) {
    b.assert_bool("address carry bool", c0.clone());
    b.assert_eq(
        "address low word",
        addr.clone(),
        base[0].clone() + &imm[0] - c0.clone() * c(1 << 32),
    );
    let h = base[1].clone() + &imm[1] + c0;
    b.assert_zero("address high word is 0", h.clone() * (h - c(1 << 32)));
}

/// The LOAD AIR.
pub struct LoadAir;

impl Air for LoadAir {
    fn name(&self) -> &str {
        "LOAD"
    }
    fn width(&self) -> usize {
        NUM_LOAD_COLS
    }
    fn column_names(&self) -> Vec<String> {
        LoadCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_LOAD_COLS).map(|i| b.main(i)).collect();
        let l = LoadCols::from_row(&m);
        let one = Expr::one;
        eval_address(b, &l.base, &l.imm, &l.addr, &l.c0);
        for w in &l.w {
            b.assert_bool("w bool", w.clone());
        }
        let [w1, w2, w4, w8] = &l.w;
        b.assert_eq("w one-hot", w1.clone() + w2 + w4 + w8, one());
        b.assert_bool("unsigned bool", l.unsigned.clone());
        b.assert_bool("mu bool", l.mu.clone());
        b.assert_zero("no LDU", l.unsigned.clone() * w8);
        b.send(
            bus::BYTE,
            vec![
                c(bus::BYTE_MSB),
                l.top.clone(),
                Expr::zero(),
                l.sbit.clone(),
            ],
            l.mu.clone(),
        );
        b.assert_eq("sign", l.s.clone(), (one() - &l.unsigned) * &l.sbit);
        let ext_lo = w1.clone() * c((1 << 32) - (1 << 8)) + w2.clone() * c((1 << 32) - (1 << 16));
        let ext_hi = (w1.clone() + w2 + w4) * c((1 << 32) - 1);
        b.assert_eq(
            "extend lo",
            l.r[0].clone(),
            l.v[0].clone() + l.s.clone() * ext_lo,
        );
        b.assert_eq(
            "extend hi",
            l.r[1].clone(),
            l.v[1].clone() + l.s.clone() * ext_hi,
        );
        let op = w2.clone() + w4.clone() * c(2) + w8.clone() * c(3) + l.unsigned.clone() * c(4);
        let width = w1.clone() + w2.clone() * c(2) + w4.clone() * c(4) + w8.clone() * c(8);
        b.receive(
            bus::MEMOP,
            vec![
                l.ts.clone(),
                l.base[0].clone(),
                l.base[1].clone(),
                l.imm[0].clone(),
                l.imm[1].clone(),
                l.r[0].clone(),
                l.r[1].clone(),
                op,
            ],
            l.mu.clone(),
        );
        b.send(
            bus::MEMW,
            vec![
                l.addr.clone(),
                l.ts.clone(),
                width,
                l.v[0].clone(),
                l.v[1].clone(),
                l.top.clone(),
                Expr::zero(),
            ],
            l.mu.clone(),
        );
    }
}

/// One load, as the fill produces it.
#[derive(Clone, Copy, Debug)]
pub struct LoadEvent {
    pub ts: u64,
    pub base: u64,
    pub imm: u64,
    pub width_idx: usize,
    pub unsigned: bool,
    /// Raw access value (zero-extended) and the loaded value.
    pub v: u64,
    pub r: u64,
}

/// The LOAD trace (`n x 20`); padding rows are an inactive 8-byte load of 0 at address 0.
pub fn load_trace(
    events: &[LoadEvent],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = events.len().next_power_of_two().max(min_height);
    let mut values = vec![F::ZERO; n * NUM_LOAD_COLS];
    for (r, chunk) in values.chunks_mut(NUM_LOAD_COLS).enumerate() {
        let row = LoadCols::from_row_mut(chunk);
        let Some(e) = events.get(r) else {
            row.w[3] = F::ONE;
            continue;
        };
        let width = WIDTHS[e.width_idx];
        let sum = e.base as u128 + e.imm as u128;
        let top = (e.v >> (8 * (width - 1))) & 0xff;
        let sbit = top >> 7;
        let s = (!e.unsigned as u64) * sbit;
        *row = LoadCols {
            ts: F::from_u64(e.ts),
            base: words(e.base).map(F::from_u64),
            imm: words(e.imm).map(F::from_u64),
            addr: F::from_u64((sum as u64) & 0xffff_ffff),
            c0: F::from_u64((((e.base & 0xffff_ffff) + (e.imm & 0xffff_ffff)) >> 32) & 1),
            w: core::array::from_fn(|k| F::from_bool(k == e.width_idx)),
            unsigned: F::from_bool(e.unsigned),
            v: words(e.v).map(F::from_u64),
            top: F::from_u64(top),
            sbit: F::from_u64(sbit),
            s: F::from_u64(s),
            r: words(e.r).map(F::from_u64),
            mu: F::ONE,
        };
        lookups.add(LookupKind::Msb8, top << 8);
    }
    RowMajorMatrix::new(values, NUM_LOAD_COLS)
}
