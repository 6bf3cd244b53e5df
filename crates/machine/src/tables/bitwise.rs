//! BITWISE (docs/tables.md §6.16): the preprocessed 2^16-row lookup table of byte operations and 16-bit
//! ranges. Row x = 256 A + B. Main columns are the per-row lookup counts of each kind, filled from the
//! histogram [`Lookups`] that every other table's fill adds to.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::cpu::c;

/// Height of BITWISE: 2^16 rows.
pub const BITWISE_LOG_HEIGHT: usize = 16;
const H: usize = 1 << BITWISE_LOG_HEIGHT;

/// Preprocessed row: `A = x >> 8`, `B = x & 255` and functions of them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitwisePrepCols<T> {
    pub a: T,
    pub b: T,
    pub and: T,
    pub or: T,
    pub xor: T,
    /// `A >> 7` = bit 15 of x = bit 7 of A.
    pub msb: T,
}
columns!(BitwisePrepCols, NUM_BITWISE_PREP_COLS);

/// Main row: how many times each kind of lookup hit this row.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitwiseCols<T> {
    /// `RANGE16[x]`.
    pub m_u16: T,
    /// `MSB16[x, x >> 15]`.
    pub m_msb16: T,
    /// `BYTE[PAIR, A, B, 0]`.
    pub m_pair: T,
    /// `BYTE[AND, A, B, A & B]`.
    pub m_and: T,
    /// `BYTE[OR, A, B, A | B]`.
    pub m_or: T,
    /// `BYTE[XOR, A, B, A ^ B]`.
    pub m_xor: T,
    /// `BYTE[MSB, A, B, A >> 7]`.
    pub m_msb8: T,
}
columns!(BitwiseCols, NUM_BITWISE_COLS);

/// Kinds of BITWISE lookups, in [`BitwiseCols`] order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupKind {
    U16 = 0,
    Msb16 = 1,
    Pair = 2,
    And = 3,
    Or = 4,
    Xor = 5,
    Msb8 = 6,
}

impl LookupKind {
    /// Every kind in histogram order (`ALL[k] as usize == k`).
    pub const ALL: [LookupKind; 7] = [
        LookupKind::U16,
        LookupKind::Msb16,
        LookupKind::Pair,
        LookupKind::And,
        LookupKind::Or,
        LookupKind::Xor,
        LookupKind::Msb8,
    ];
}

/// Histogram of BITWISE lookups: `counts[kind][x]`.
#[derive(Clone, Debug)]
pub struct Lookups {
    counts: Vec<Vec<u32>>,
}

impl Default for Lookups {
    fn default() -> Self {
        Self::new()
    }
}

impl Lookups {
    pub fn new() -> Self {
        Lookups {
            counts: vec![vec![0u32; H]; NUM_BITWISE_COLS],
        }
    }

    /// Count one lookup of `kind` at row `x` (< 2^16; a larger x is a fill bug and panics).
    pub fn add(&mut self, kind: LookupKind, x: u64) {
        self.counts[kind as usize][x as usize] += 1;
    }

    /// Count `n` lookups of `kind` at row `x` (< 2^16).
    pub fn add_n(&mut self, kind: LookupKind, x: u64, n: u32) {
        self.counts[kind as usize][x as usize] += n;
    }

    /// Adds every counter of `other` (panics if a counter overflows u32: a fill bug, never prover input).
    pub fn merge(&mut self, other: &Lookups) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            for (c, &x) in mine.iter_mut().zip(theirs) {
                *c += x;
            }
        }
    }

    /// `RANGE16[x]`.
    pub fn u16(&mut self, x: u64) {
        self.add(LookupKind::U16, x);
    }

    /// `BYTE[PAIR, a, b, 0]`.
    pub fn pair(&mut self, a: u64, b: u64) {
        self.add(LookupKind::Pair, (a << 8) | b);
    }

    /// `LT32(old_ts, ts; d0)`: returns d0 and counts both halves.
    pub fn lt32(&mut self, old_ts: u64, ts: u64) -> u64 {
        let d = ts - old_ts - 1;
        debug_assert!(d < 1 << 32);
        self.u16(d & 0xffff);
        self.u16(d >> 16);
        d & 0xffff
    }

    /// Adds a kind-major histogram `counts[kind * 2^16 + x]` (`7 x 2^16` values, e.g. one counted on a GPU).
    /// Errors if the length is wrong or a counter overflows u32.
    pub fn add_histogram(&mut self, counts: &[u32]) -> Result<(), String> {
        if counts.len() != NUM_BITWISE_COLS * H {
            return Err(format!(
                "histogram of {} counters, expected {}",
                counts.len(),
                NUM_BITWISE_COLS * H
            ));
        }
        for (k, chunk) in counts.chunks_exact(H).enumerate() {
            for (c, &x) in self.counts[k].iter_mut().zip(chunk) {
                *c = c
                    .checked_add(x)
                    .ok_or_else(|| format!("lookup counter of kind {k} overflows"))?;
            }
        }
        Ok(())
    }

    /// The counters of one kind: `2^16` values, row order.
    pub fn counts(&self, kind: LookupKind) -> &[u32] {
        &self.counts[kind as usize]
    }

    /// The main trace: `2^16 x 7`, natural order.
    pub fn trace(&self) -> RowMajorMatrix {
        let mut values = Vec::with_capacity(H * NUM_BITWISE_COLS);
        for x in 0..H {
            for k in 0..NUM_BITWISE_COLS {
                values.push(F::from_u64(self.counts[k][x] as u64));
            }
        }
        RowMajorMatrix::new(values, NUM_BITWISE_COLS)
    }
}

/// The fixed preprocessed trace: `2^16 x 6`, natural order.
pub fn bitwise_preprocessed() -> RowMajorMatrix {
    let mut values = Vec::with_capacity(H * NUM_BITWISE_PREP_COLS);
    for x in 0..H as u64 {
        let (a, b) = (x >> 8, x & 255);
        for v in [a, b, a & b, a | b, a ^ b, a >> 7] {
            values.push(F::from_u64(v));
        }
    }
    RowMajorMatrix::new(values, NUM_BITWISE_PREP_COLS)
}

/// The BITWISE AIR: seven receives, no constraints.
pub struct BitwiseAir;

impl Air for BitwiseAir {
    fn name(&self) -> &str {
        "BITWISE"
    }
    fn width(&self) -> usize {
        NUM_BITWISE_COLS
    }
    fn column_names(&self) -> Vec<String> {
        BitwiseCols::<usize>::column_names()
    }
    fn preprocessed_width(&self) -> usize {
        NUM_BITWISE_PREP_COLS
    }
    fn eval(&self, b: &mut AirBuilder) {
        let p: Vec<Expr> = (0..NUM_BITWISE_PREP_COLS)
            .map(|i| b.preprocessed(i))
            .collect();
        let p = BitwisePrepCols::from_row(&p);
        let m: Vec<Expr> = (0..NUM_BITWISE_COLS).map(|i| b.main(i)).collect();
        let m = BitwiseCols::from_row(&m);
        let x = p.a.clone() * c(256) + &p.b;
        b.receive(bus::RANGE16, vec![x.clone()], m.m_u16.clone());
        b.receive(bus::MSB16, vec![x, p.msb.clone()], m.m_msb16.clone());
        let byte = |op: u64, out: Expr| vec![c(op), p.a.clone(), p.b.clone(), out];
        b.receive(
            bus::BYTE,
            byte(bus::BYTE_PAIR, Expr::zero()),
            m.m_pair.clone(),
        );
        b.receive(
            bus::BYTE,
            byte(bus::BYTE_AND, p.and.clone()),
            m.m_and.clone(),
        );
        b.receive(bus::BYTE, byte(bus::BYTE_OR, p.or.clone()), m.m_or.clone());
        b.receive(
            bus::BYTE,
            byte(bus::BYTE_XOR, p.xor.clone()),
            m.m_xor.clone(),
        );
        b.receive(
            bus::BYTE,
            byte(bus::BYTE_MSB, p.msb.clone()),
            m.m_msb8.clone(),
        );
    }
}
