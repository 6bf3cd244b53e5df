//! MEMW (docs/tables.md §6.6): the general memory access, over the 16-byte window of cells `cell` and
//! `cell + 1`, for the loads/stores that cross a cell boundary (misaligned). Same constraints as MEMW_A
//! (§6.5) with byte positions 0..15 and two tokens; no inside-the-cell constraint.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::cpu::{c, lt32};

/// MEMW row (55 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemwCols<T> {
    /// First cell `addr >> 3` (the window is `cell`, `cell + 1`).
    pub cell: T,
    /// Timestamp of the access (`4 clk + 1`).
    pub ts: T,
    /// One-hot byte offset `addr & 7`.
    pub sel: [T; 8],
    /// One-hot width: `w[0..4]` = 1, 2, 4, 8 bytes.
    pub w: [T; 4],
    pub is_write: T,
    /// Window bytes (both cells) before and after the access.
    pub old: [T; 16],
    pub new: [T; 16],
    /// The access value (the w bytes at the offset, zero-extended), two words.
    pub v: [T; 2],
    /// Most significant byte of the access value.
    pub top: T,
    /// Timestamps of the two consumed tokens, and the LT32 witnesses.
    pub old_ts: [T; 2],
    pub d0: [T; 2],
    /// Boolean: the row is an access.
    pub mu: T,
}
columns!(MemwCols, NUM_MEMW_COLS);

use crate::tables::memw_a::WIDTHS;

/// `[k < width]` as a linear expression of the width flags.
fn below(w: &[Expr; 4], k: usize) -> Expr {
    let mut e = Expr::zero();
    for (wi, &width) in w.iter().zip(&WIDTHS) {
        if k < width {
            e = e + wi;
        }
    }
    e
}

/// Packs four bytes little-endian.
pub(crate) fn pack4(b: &[Expr]) -> Expr {
    b.iter().enumerate().fold(Expr::zero(), |acc, (j, x)| {
        acc + x.clone() * c(1u64 << (8 * j))
    })
}

/// The MEMW_A AIR.
pub struct MemwAir;

impl Air for MemwAir {
    fn name(&self) -> &str {
        "MEMW"
    }
    fn width(&self) -> usize {
        NUM_MEMW_COLS
    }
    fn column_names(&self) -> Vec<String> {
        MemwCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_MEMW_COLS).map(|i| b.main(i)).collect();
        let l = MemwCols::from_row(&m);
        let one = Expr::one;
        for s in &l.sel {
            b.assert_bool("sel bool", s.clone());
        }
        for w in &l.w {
            b.assert_bool("w bool", w.clone());
        }
        b.assert_bool("is_write bool", l.is_write.clone());
        b.assert_bool("mu bool", l.mu.clone());
        let sum = |v: &[Expr]| v.iter().fold(Expr::zero(), |a, x| a + x);
        b.assert_eq("sel one-hot", sum(&l.sel), one());
        b.assert_eq("w one-hot", sum(&l.w), one());
        // Byte j is accessed iff offset <= j < offset + w.
        for j in 0..16 {
            let mut mask = Expr::zero();
            for i in 0..=j.min(7) {
                if j - i < 8 {
                    mask = mask + l.sel[i].clone() * below(&l.w, j - i);
                }
            }
            let delta = l.new[j].clone() - &l.old[j];
            b.assert_zero("read keeps bytes", (one() - &l.is_write) * delta.clone());
            b.assert_zero("write keeps unaccessed bytes", (one() - mask) * delta);
        }
        // Access value and top byte.
        let (mut v_lo, mut v_hi, mut top) = (Expr::zero(), Expr::zero(), Expr::zero());
        for (i, s) in l.sel.iter().enumerate() {
            let (mut lo, mut hi, mut t) = (Expr::zero(), Expr::zero(), Expr::zero());
            for k in 0..8 {
                let term = below(&l.w, k) * &l.new[i + k];
                if k < 4 {
                    lo = lo + term * c(1u64 << (8 * k));
                } else {
                    hi = hi + term * c(1u64 << (8 * (k - 4)));
                }
            }
            for (wi, &width) in l.w.iter().zip(&WIDTHS) {
                t = t + wi.clone() * &l.new[i + width - 1];
            }
            v_lo = v_lo + s.clone() * lo;
            v_hi = v_hi + s.clone() * hi;
            top = top + s.clone() * t;
        }
        b.assert_eq("v lo", l.v[0].clone(), v_lo);
        b.assert_eq("v hi", l.v[1].clone(), v_hi);
        b.assert_eq("top", l.top.clone(), top);
        for k in 0..8 {
            b.send(
                bus::BYTE,
                vec![
                    c(bus::BYTE_PAIR),
                    l.new[2 * k].clone(),
                    l.new[2 * k + 1].clone(),
                    Expr::zero(),
                ],
                l.mu.clone(),
            );
        }
        let offset = l
            .sel
            .iter()
            .enumerate()
            .fold(Expr::zero(), |a, (i, s)| a + s.clone() * c(i as u64));
        let width =
            l.w.iter()
                .zip(&WIDTHS)
                .fold(Expr::zero(), |a, (wi, &k)| a + wi.clone() * c(k as u64));
        b.receive(
            bus::MEMW,
            vec![
                l.cell.clone() * c(8) + offset,
                l.ts.clone(),
                width,
                l.v[0].clone(),
                l.v[1].clone(),
                l.top.clone(),
                l.is_write.clone(),
            ],
            l.mu.clone(),
        );
        for h in 0..2 {
            let cell = l.cell.clone() + c(h as u64);
            let (old, new) = (&l.old[8 * h..8 * h + 8], &l.new[8 * h..8 * h + 8]);
            b.receive(
                bus::MEM_TOKEN,
                vec![
                    cell.clone(),
                    l.old_ts[h].clone(),
                    pack4(&old[..4]),
                    pack4(&old[4..]),
                ],
                l.mu.clone(),
            );
            b.send(
                bus::MEM_TOKEN,
                vec![cell, l.ts.clone(), pack4(&new[..4]), pack4(&new[4..])],
                l.mu.clone(),
            );
            lt32(b, &l.old_ts[h], &l.ts, &l.d0[h], &l.mu);
        }
    }
}

/// One MEMW access, as the fill produces it.
#[derive(Clone, Copy, Debug)]
pub struct MemwEvent {
    pub cell: u64,
    pub ts: u64,
    pub offset: usize,
    /// Width index into [`WIDTHS`].
    pub width_idx: usize,
    pub is_write: bool,
    pub old: [u8; 16],
    pub new: [u8; 16],
    pub old_ts: [u64; 2],
}

/// Height of the MEMW table for `len` accesses: the next power of two `>= max(len, min_height)`.
pub fn memw_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The MEMW trace (`n x 55`, n = next power of two >= max(events, min_height)); padding rows are an
/// inactive 8-byte read of zeros. Adds the lookups to `lookups`.
pub fn memw_trace(
    events: &[MemwEvent],
    min_height: usize,
    lookups: &mut crate::tables::bitwise::Lookups,
) -> RowMajorMatrix {
    let n = memw_height(events.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_MEMW_COLS];
    for (r, chunk) in values.chunks_mut(NUM_MEMW_COLS).enumerate() {
        let row = MemwCols::from_row_mut(chunk);
        let Some(e) = events.get(r) else {
            row.sel[0] = F::ONE;
            row.w[3] = F::ONE;
            continue;
        };
        let width = WIDTHS[e.width_idx];
        let mut v = 0u64;
        for k in 0..width {
            v |= (e.new[e.offset + k] as u64) << (8 * k);
        }
        row.cell = F::from_u64(e.cell);
        row.ts = F::from_u64(e.ts);
        row.sel[e.offset] = F::ONE;
        row.w[e.width_idx] = F::ONE;
        row.is_write = F::from_bool(e.is_write);
        row.old = e.old.map(|x| F::from_u64(x as u64));
        row.new = e.new.map(|x| F::from_u64(x as u64));
        row.v = [F::from_u64(v & 0xffff_ffff), F::from_u64(v >> 32)];
        row.top = F::from_u64(e.new[e.offset + width - 1] as u64);
        row.old_ts = e.old_ts.map(F::from_u64);
        row.d0 = [0, 1].map(|h| F::from_u64(lookups.lt32(e.old_ts[h], e.ts)));
        row.mu = F::ONE;
        for k in 0..8 {
            lookups.pair(e.new[2 * k] as u64, e.new[2 * k + 1] as u64);
        }
    }
    RowMajorMatrix::new(values, NUM_MEMW_COLS)
}
