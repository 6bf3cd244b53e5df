//! STORE (docs/tables.md §6.8): one row per store. Receives the CPU's MEMOP (base, imm, rs2 value),
//! computes the address, truncates the value to the width and asks MEMW_A/MEMW to write it.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::bitwise::Lookups;
use crate::tables::cpu::c;
use crate::tables::decode::words;
use crate::tables::load::eval_address;
use crate::tables::memw_a::WIDTHS;

/// STORE row (20 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreCols<T> {
    pub ts: T,
    pub base: [T; 2],
    pub imm: [T; 2],
    pub addr: T,
    pub c0: T,
    /// The rs2 value (two words).
    pub val: [T; 2],
    /// One-hot width 1, 2, 4, 8.
    pub w: [T; 4],
    /// `val_lo = b0 + 2^8 b1 + 2^16 hh` (bytes b0, b1; 16-bit hh).
    pub b0: T,
    pub b1: T,
    pub hh: T,
    /// The stored value truncated to the width (two words).
    pub v: [T; 2],
    /// Free: MEMW_A defines it (the top byte of the access); STORE only forwards it.
    pub top: T,
    pub mu: T,
}
columns!(StoreCols, NUM_STORE_COLS);

/// The STORE AIR.
pub struct StoreAir;

impl Air for StoreAir {
    fn name(&self) -> &str {
        "STORE"
    }
    fn width(&self) -> usize {
        NUM_STORE_COLS
    }
    fn column_names(&self) -> Vec<String> {
        StoreCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_STORE_COLS).map(|i| b.main(i)).collect();
        let l = StoreCols::from_row(&m);
        let one = Expr::one;
        eval_address(b, &l.base, &l.imm, &l.addr, &l.c0);
        for w in &l.w {
            b.assert_bool("w bool", w.clone());
        }
        let [w1, w2, w4, w8] = &l.w;
        b.assert_eq("w one-hot", w1.clone() + w2 + w4 + w8, one());
        b.assert_bool("mu bool", l.mu.clone());
        b.send(
            bus::BYTE,
            vec![c(bus::BYTE_PAIR), l.b0.clone(), l.b1.clone(), Expr::zero()],
            l.mu.clone(),
        );
        b.send(bus::RANGE16, vec![l.hh.clone()], l.mu.clone());
        b.assert_eq(
            "value split",
            l.val[0].clone(),
            l.b0.clone() + l.b1.clone() * c(1 << 8) + l.hh.clone() * c(1 << 16),
        );
        b.assert_eq(
            "truncate lo",
            l.v[0].clone(),
            w1.clone() * &l.b0
                + w2.clone() * (l.b0.clone() + l.b1.clone() * c(256))
                + (w4.clone() + w8) * &l.val[0],
        );
        b.assert_eq("truncate hi", l.v[1].clone(), w8.clone() * &l.val[1]);
        let op = c(8) + w2.clone() + w4.clone() * c(2) + w8.clone() * c(3);
        let width = w1.clone() + w2.clone() * c(2) + w4.clone() * c(4) + w8.clone() * c(8);
        b.receive(
            bus::MEMOP,
            vec![
                l.ts.clone(),
                l.base[0].clone(),
                l.base[1].clone(),
                l.imm[0].clone(),
                l.imm[1].clone(),
                l.val[0].clone(),
                l.val[1].clone(),
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
                one(),
            ],
            l.mu.clone(),
        );
    }
}

/// One store, as the fill produces it.
#[derive(Clone, Copy, Debug)]
pub struct StoreEvent {
    pub ts: u64,
    pub base: u64,
    pub imm: u64,
    pub width_idx: usize,
    pub val: u64,
    /// Top byte of the access (from the memory walk).
    pub top: u64,
}

/// The STORE trace (`n x 20`); padding rows are an inactive 8-byte store of 0 at address 0.
pub fn store_trace(
    events: &[StoreEvent],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = events.len().next_power_of_two().max(min_height);
    let mut values = vec![F::ZERO; n * NUM_STORE_COLS];
    for (r, chunk) in values.chunks_mut(NUM_STORE_COLS).enumerate() {
        let row = StoreCols::from_row_mut(chunk);
        let Some(e) = events.get(r) else {
            row.w[3] = F::ONE;
            continue;
        };
        let width = WIDTHS[e.width_idx];
        let v = if width == 8 {
            e.val
        } else {
            e.val & ((1u64 << (8 * width)) - 1)
        };
        let sum = e.base.wrapping_add(e.imm);
        let lo = e.val & 0xffff_ffff;
        *row = StoreCols {
            ts: F::from_u64(e.ts),
            base: words(e.base).map(F::from_u64),
            imm: words(e.imm).map(F::from_u64),
            addr: F::from_u64(sum & 0xffff_ffff),
            c0: F::from_u64((((e.base & 0xffff_ffff) + (e.imm & 0xffff_ffff)) >> 32) & 1),
            val: words(e.val).map(F::from_u64),
            w: core::array::from_fn(|k| F::from_bool(k == e.width_idx)),
            b0: F::from_u64(lo & 0xff),
            b1: F::from_u64((lo >> 8) & 0xff),
            hh: F::from_u64(lo >> 16),
            v: words(v).map(F::from_u64),
            top: F::from_u64(e.top),
            mu: F::ONE,
        };
        lookups.pair(lo & 0xff, (lo >> 8) & 0xff);
        lookups.u16(lo >> 16);
    }
    RowMajorMatrix::new(values, NUM_STORE_COLS)
}
