//! MEMW_A (docs/tables.md §6.5): one memory access that stays inside one 8-byte cell. Consumes the cell's
//! token, emits the updated one, proves the timestamp order, and answers the MEMW request of LOAD/STORE
//! with the access value, positioned by the one-hot byte offset `sel`.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::cpu::{c, lt32};

/// MEMW_A row (37 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemwACols<T> {
    /// Cell index `addr >> 3`.
    pub cell: T,
    /// Timestamp of the access (`4 clk + 1`).
    pub ts: T,
    /// One-hot byte offset `addr & 7`.
    pub sel: [T; 8],
    /// One-hot width: `w[0..4]` = 1, 2, 4, 8 bytes.
    pub w: [T; 4],
    pub is_write: T,
    /// Cell bytes before and after the access.
    pub old: [T; 8],
    pub new: [T; 8],
    /// The access value (the w bytes at the offset, zero-extended), two words.
    pub v: [T; 2],
    /// Most significant byte of the access value.
    pub top: T,
    /// Timestamp of the consumed token, and the LT32 witness.
    pub old_ts: T,
    pub d0: T,
    /// Boolean: the row is an access.
    pub mu: T,
}
columns!(MemwACols, NUM_MEMW_A_COLS);

/// Widths in `w` order.
pub const WIDTHS: [usize; 4] = [1, 2, 4, 8];

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
pub struct MemwAAir;

impl Air for MemwAAir {
    fn name(&self) -> &str {
        "MEMW_A"
    }
    fn width(&self) -> usize {
        NUM_MEMW_A_COLS
    }
    fn column_names(&self) -> Vec<String> {
        MemwACols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_MEMW_A_COLS).map(|i| b.main(i)).collect();
        let l = MemwACols::from_row(&m);
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
        // Inside the cell: offset i with width w needs i + w <= 8.
        for (i, s) in l.sel.iter().enumerate() {
            let mut over = Expr::zero();
            for (wi, &width) in l.w.iter().zip(&WIDTHS) {
                if i + width > 8 {
                    over = over + wi;
                }
            }
            b.assert_zero("inside the cell", s.clone() * over);
        }
        // Byte j is accessed iff offset <= j < offset + w.
        for j in 0..8 {
            let mut mask = Expr::zero();
            for i in 0..=j {
                mask = mask + l.sel[i].clone() * below(&l.w, j - i);
            }
            let delta = l.new[j].clone() - &l.old[j];
            b.assert_zero("read keeps bytes", (one() - &l.is_write) * delta.clone());
            b.assert_zero("write keeps unaccessed bytes", (one() - mask) * delta);
        }
        // Access value and top byte.
        let (mut v_lo, mut v_hi, mut top) = (Expr::zero(), Expr::zero(), Expr::zero());
        for (i, s) in l.sel.iter().enumerate() {
            let (mut lo, mut hi, mut t) = (Expr::zero(), Expr::zero(), Expr::zero());
            for k in 0..8 - i {
                let term = below(&l.w, k) * &l.new[i + k];
                if k < 4 {
                    lo = lo + term * c(1u64 << (8 * k));
                } else {
                    hi = hi + term * c(1u64 << (8 * (k - 4)));
                }
            }
            for (wi, &width) in l.w.iter().zip(&WIDTHS) {
                if i + width <= 8 {
                    t = t + wi.clone() * &l.new[i + width - 1];
                }
            }
            v_lo = v_lo + s.clone() * lo;
            v_hi = v_hi + s.clone() * hi;
            top = top + s.clone() * t;
        }
        b.assert_eq("v lo", l.v[0].clone(), v_lo);
        b.assert_eq("v hi", l.v[1].clone(), v_hi);
        b.assert_eq("top", l.top.clone(), top);
        for k in 0..4 {
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
        b.receive(
            bus::MEM_TOKEN,
            vec![
                l.cell.clone(),
                l.old_ts.clone(),
                pack4(&l.old[..4]),
                pack4(&l.old[4..]),
            ],
            l.mu.clone(),
        );
        b.send(
            bus::MEM_TOKEN,
            vec![
                l.cell.clone(),
                l.ts.clone(),
                pack4(&l.new[..4]),
                pack4(&l.new[4..]),
            ],
            l.mu.clone(),
        );
        lt32(b, &l.old_ts, &l.ts, &l.d0, &l.mu);
    }
}

/// One MEMW_A access, as the fill produces it.
#[derive(Clone, Copy, Debug)]
pub struct MemwAEvent {
    pub cell: u64,
    pub ts: u64,
    pub offset: usize,
    /// Width index into [`WIDTHS`].
    pub width_idx: usize,
    pub is_write: bool,
    pub old: [u8; 8],
    pub new: [u8; 8],
    pub old_ts: u64,
}

/// The MEMW_A trace (`n x 37`, n = next power of two >= max(events, min_height)); padding rows are an
/// inactive 8-byte read of zeros. Adds the lookups to `lookups`.
pub fn memw_a_trace(
    events: &[MemwAEvent],
    min_height: usize,
    lookups: &mut crate::tables::bitwise::Lookups,
) -> RowMajorMatrix {
    let n = events.len().next_power_of_two().max(min_height);
    let mut values = vec![F::ZERO; n * NUM_MEMW_A_COLS];
    for (r, chunk) in values.chunks_mut(NUM_MEMW_A_COLS).enumerate() {
        let row = MemwACols::from_row_mut(chunk);
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
        row.old_ts = F::from_u64(e.old_ts);
        row.d0 = F::from_u64(lookups.lt32(e.old_ts, e.ts));
        row.mu = F::ONE;
        for k in 0..4 {
            lookups.pair(e.new[2 * k] as u64, e.new[2 * k + 1] as u64);
        }
    }
    RowMajorMatrix::new(values, NUM_MEMW_A_COLS)
}
