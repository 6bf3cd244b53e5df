//! SHIFT (docs/tables.md §6.12): SLL/SRL/SRA (register and immediate forms) and the 5-bit forms
//! SLL5/SRL5/SRA5 that CPU32 uses for SLLW/SRLW/SRAW, deduplicated: one row per distinct `(op, a, b)`,
//! the count in `m`. And POW2, the preprocessed table of powers of two SHIFT looks up.
//!
//! Method: a shift is a multiplication by a power of two, checked by MUL through the ALU bus:
//! `SLL(a, s) = MUL(a, 2^s)`, `SRL(a, s) = MULHU(a, 2^(64-s))`, `SRA(a, s) = MULHSU(a, 2^(64-s))` for
//! s >= 1, and `MUL(a, 1) = a` for s = 0. The shift amount is `s = b_lo mod 64` (`mod 32` for the 5-bit
//! forms): `b_lo = s + (64 - 32 w5) (q0 + 2^16 q1)` with `U16(q0)`, `U16(q1)` and s bounded by POW2
//! (< 64, or < 32 when w5). The 5-bit forms compute the 64-bit shift of the (pre-extended) a by
//! `b mod 32`; CPU32 keeps the low word.
//!
//! **Change from the design (docs/tables.md §6.12), soundness.** The design looks up
//! `POW2[s + 64 w5, p, q, z]` in a 96-row table whose rows 64..95 are the 5-bit shifts. That bounds only the
//! sum `s + 64 w5`: with w5 = 1, `s = k - 64` (a field element "below zero") reaches every 6-bit row k, and
//! `b_lo = s + 32 Q` still holds with an in-range Q whenever `b_lo = k mod 32`. So `SLL5(a, 5)` could be
//! proven equal to `a << 37` (row k = 37, `Q = 1`). Here the row kind is part of the tuple:
//! **`POW2[s, w5, p_lo, p_hi, q_lo, q_hi, z]`** (7 values) with rows `(s, 0)` for s < 64 and `(s, 1)` for
//! s < 32, so s itself is bounded by the row of its kind. The test `alu_shift::negative_amount_is_rejected`
//! runs that attack.
//!
//! POW2 shape: [`pow2_height`] (128, more in zk mode with 64 queries or more) preprocessed rows x 7 columns `[s, w5, p_lo, p_hi, q_lo, q_hi, z]` (natural order): row
//! i < 64 is `(s = i, w5 = 0)`, row 64 + i (i < 32) is `(s = i, w5 = 1)`, rows from 96 on repeat row 0 (a
//! true fact; their counter is always 0). `p = 2^s`, `q = 2^(64 - s)` (1 when s = 0), `z = [s = 0]`, words
//! as `(lo, hi)`. Main: one column, the counter `m`. The verifier builds the preprocessed trace itself
//! ([`pow2_preprocessed`]).

use std::collections::BTreeMap;

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu};
use crate::cols::columns;
use crate::tables::bitwise::Lookups;
use crate::tables::cpu::c;
use crate::tables::decode::words;
use crate::tables::mul::{MulOp, MulRequests};

/// SHIFT row (22 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShiftCols<T> {
    /// The shifted value (words).
    pub a: [T; 2],
    /// The shift operand (words; only the low 6 or 5 bits of `b_lo` matter, `b_hi` is not constrained).
    pub b: [T; 2],
    /// Shift amount: `b_lo mod 64` (mod 32 when `w5`).
    pub s: T,
    /// `(b_lo - s) / (64 - 32 w5)` as two 16-bit halves.
    pub q0: T,
    pub q1: T,
    /// One-hot kind.
    pub is_sll: T,
    pub is_srl: T,
    pub is_sra: T,
    /// 1 for the 5-bit forms (SLL5/SRL5/SRA5).
    pub w5: T,
    /// `2^s` (words), from POW2.
    pub p: [T; 2],
    /// `2^(64 - s)`, or 1 when s = 0 (words), from POW2.
    pub q: [T; 2],
    /// `[s = 0]`, from POW2.
    pub z: T,
    /// ALU op sent to MUL: MUL for SLL and for s = 0, else MULHU (SRL) or MULHSU (SRA).
    pub mop: T,
    /// Multiplier sent to MUL: p for SLL, q for SRL/SRA.
    pub x: [T; 2],
    /// The result (words), as MUL proves it.
    pub r: [T; 2],
    /// Number of ALU requests this row answers (free counter).
    pub m: T,
}
columns!(ShiftCols, NUM_SHIFT_COLS);

/// The six shift ops SHIFT answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShiftOp {
    Sll,
    Srl,
    Sra,
    /// 64-bit `a << (b mod 32)`.
    Sll5,
    /// 64-bit `a >> (b mod 32)`, logical.
    Srl5,
    /// 64-bit `a >> (b mod 32)`, arithmetic.
    Sra5,
}

impl ShiftOp {
    /// The op of an ALU code (`alu::SLL ..= alu::SRA5`), `None` for any other code.
    pub fn from_alu(code: u64) -> Option<Self> {
        Some(match code {
            alu::SLL => ShiftOp::Sll,
            alu::SRL => ShiftOp::Srl,
            alu::SRA => ShiftOp::Sra,
            alu::SLL5 => ShiftOp::Sll5,
            alu::SRL5 => ShiftOp::Srl5,
            alu::SRA5 => ShiftOp::Sra5,
            _ => return None,
        })
    }

    /// The ALU code.
    pub fn alu(self) -> u64 {
        match self {
            ShiftOp::Sll => alu::SLL,
            ShiftOp::Srl => alu::SRL,
            ShiftOp::Sra => alu::SRA,
            ShiftOp::Sll5 => alu::SLL5,
            ShiftOp::Srl5 => alu::SRL5,
            ShiftOp::Sra5 => alu::SRA5,
        }
    }

    /// 1 for the 5-bit forms.
    pub fn is_w5(self) -> bool {
        matches!(self, ShiftOp::Sll5 | ShiftOp::Srl5 | ShiftOp::Sra5)
    }

    /// 0 = left, 1 = logical right, 2 = arithmetic right.
    fn kind(self) -> u64 {
        match self {
            ShiftOp::Sll | ShiftOp::Sll5 => 0,
            ShiftOp::Srl | ShiftOp::Srl5 => 1,
            ShiftOp::Sra | ShiftOp::Sra5 => 2,
        }
    }

    /// The result (reference semantics, Rust shifts): the amount is `b mod 64` (`mod 32` for the 5-bit
    /// forms), the result the 64-bit shift of a.
    pub fn eval(self, a: u64, b: u64) -> u64 {
        let s = (b & if self.is_w5() { 31 } else { 63 }) as u32;
        match self.kind() {
            0 => a << s,
            1 => a >> s,
            _ => ((a as i64) >> s) as u64,
        }
    }
}

/// Deduplicated SHIFT requests: `(op, a, b) -> count`.
pub type ShiftRequests = BTreeMap<(ShiftOp, u64, u64), u64>;

/// The SHIFT AIR.
pub struct ShiftAir;

impl Air for ShiftAir {
    fn name(&self) -> &str {
        "SHIFT"
    }
    fn width(&self) -> usize {
        NUM_SHIFT_COLS
    }
    fn column_names(&self) -> Vec<String> {
        ShiftCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let cols: Vec<Expr> = (0..NUM_SHIFT_COLS).map(|i| b.main(i)).collect();
        let l = ShiftCols::from_row(&cols);
        let one = Expr::one;
        b.assert_bool("is_sll bool", l.is_sll.clone());
        b.assert_bool("is_srl bool", l.is_srl.clone());
        b.assert_bool("is_sra bool", l.is_sra.clone());
        b.assert_bool("w5 bool", l.w5.clone());
        b.assert_eq("one kind", l.is_sll.clone() + &l.is_srl + &l.is_sra, one());
        // Shift amount: b_lo = s + (64 - 32 w5)(q0 + 2^16 q1); both sides < 2^39 (R4).
        b.send(bus::RANGE16, vec![l.q0.clone()], one());
        b.send(bus::RANGE16, vec![l.q1.clone()], one());
        b.assert_eq(
            "shift amount",
            l.b[0].clone(),
            l.s.clone()
                + (c(64) - l.w5.clone() * c(32)) * (l.q0.clone() + l.q1.clone() * c(1 << 16)),
        );
        b.send(
            bus::POW2,
            vec![
                l.s.clone(),
                l.w5.clone(),
                l.p[0].clone(),
                l.p[1].clone(),
                l.q[0].clone(),
                l.q[1].clone(),
                l.z.clone(),
            ],
            one(),
        );
        let right = l.is_srl.clone() + &l.is_sra;
        for k in 0..2 {
            b.assert_eq(
                format!("multiplier {k}"),
                l.x[k].clone(),
                l.is_sll.clone() * &l.p[k] + right.clone() * &l.q[k],
            );
        }
        let mop = l.is_sll.clone() * c(alu::MUL)
            + l.is_srl.clone() * (c(alu::MULHU) + l.z.clone() * (c(alu::MUL) - c(alu::MULHU)))
            + l.is_sra.clone() * (c(alu::MULHSU) + l.z.clone() * (c(alu::MUL) - c(alu::MULHSU)));
        b.assert_eq("mul op", l.mop.clone(), mop);
        b.send(
            bus::ALU,
            vec![
                l.mop.clone(),
                l.a[0].clone(),
                l.a[1].clone(),
                l.x[0].clone(),
                l.x[1].clone(),
                l.r[0].clone(),
                l.r[1].clone(),
            ],
            one(),
        );
        b.receive(
            bus::ALU,
            vec![
                c(alu::SLL) + &l.is_srl + l.is_sra.clone() * c(2) + l.w5.clone() * c(3),
                l.a[0].clone(),
                l.a[1].clone(),
                l.b[0].clone(),
                l.b[1].clone(),
                l.r[0].clone(),
                l.r[1].clone(),
            ],
            l.m.clone(),
        );
    }
}

/// POW2 preprocessed row.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pow2PrepCols<T> {
    pub s: T,
    pub w5: T,
    pub p: [T; 2],
    pub q: [T; 2],
    pub z: T,
}
columns!(Pow2PrepCols, NUM_POW2_PREP_COLS);

/// Smallest height of POW2: 128 rows (96 used); taller when the smallest table height is
/// ([`pow2_height`]).
pub const POW2_HEIGHT: usize = 128;

/// Height of POW2 for the smallest table height `min_height` (a power of two; in zk mode it grows with the
/// query count, `zkrv_machine::min_height`): `max(128, min_height)`. Rows from 96 on are `(0, 0)` rows.
pub fn pow2_height(min_height: usize) -> usize {
    POW2_HEIGHT.max(min_height)
}

/// POW2 row index of `(s, w5)`.
pub fn pow2_row(s: u64, w5: bool) -> usize {
    s as usize + 64 * w5 as usize
}

/// `(p, q, z)` of shift amount s < 64.
fn pow2_values(s: u64) -> (u64, u64, u64) {
    let q = if s == 0 { 1 } else { 1u64 << (64 - s) };
    (1u64 << s, q, (s == 0) as u64)
}

/// The POW2 preprocessed trace: `pow2_height(min_height) x 7`, natural order (layout in the module doc).
pub fn pow2_preprocessed(min_height: usize) -> RowMajorMatrix {
    let h = pow2_height(min_height);
    let mut values = Vec::with_capacity(h * NUM_POW2_PREP_COLS);
    for i in 0..h as u64 {
        let (s, w5) = match i {
            0..=63 => (i, 0),
            64..=95 => (i - 64, 1),
            _ => (0, 0),
        };
        let (p, q, z) = pow2_values(s);
        let [p_lo, p_hi] = words(p);
        let [q_lo, q_hi] = words(q);
        for v in [s, w5, p_lo, p_hi, q_lo, q_hi, z] {
            values.push(F::from_u64(v));
        }
    }
    RowMajorMatrix::new(values, NUM_POW2_PREP_COLS)
}

/// The POW2 AIR: one receive `POW2[s, w5, p, q, z]` with the counter `m` (main column 0).
pub struct Pow2Air;

impl Air for Pow2Air {
    fn name(&self) -> &str {
        "POW2"
    }
    fn width(&self) -> usize {
        1
    }
    fn column_names(&self) -> Vec<String> {
        vec!["m".into()]
    }
    fn preprocessed_width(&self) -> usize {
        NUM_POW2_PREP_COLS
    }
    fn eval(&self, b: &mut AirBuilder) {
        let values = (0..NUM_POW2_PREP_COLS).map(|i| b.preprocessed(i)).collect();
        let m = b.main(0);
        b.receive(bus::POW2, values, m);
    }
}

/// SHIFT and POW2 main traces.
pub struct ShiftTraces {
    /// SHIFT: `n x 22`, natural order.
    pub shift: RowMajorMatrix,
    /// POW2 main (the counters): `pow2_height(min_height) x 1`.
    pub pow2: RowMajorMatrix,
}

/// Height of the SHIFT trace for `len` deduplicated requests: the next power of two >= max(len, min_height).
pub fn shift_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// What one SHIFT row `(op, a, b)` derives: the amount, its quotient, the POW2 row values, the MUL check.
struct ShiftRow {
    w5: bool,
    s: u64,
    quot: u64,
    p: u64,
    q: u64,
    z: u64,
    kind: u64,
    /// The multiplier sent to MUL (p for SLL, q for SRL/SRA) and the MUL op.
    x: u64,
    mop: MulOp,
    r: u64,
}

fn shift_row(op: ShiftOp, a: u64, b: u64) -> ShiftRow {
    let w5 = op.is_w5();
    let b_lo = b & 0xffff_ffff;
    let s = b_lo & if w5 { 31 } else { 63 };
    let quot = (b_lo - s) >> if w5 { 5 } else { 6 };
    let (p, q, z) = pow2_values(s);
    let kind = op.kind();
    let x = if kind == 0 { p } else { q };
    let mop = match (kind, z) {
        (0, _) | (_, 1) => MulOp::Mul,
        (1, _) => MulOp::Mulhu,
        _ => MulOp::Mulhsu,
    };
    let r = op.eval(a, b);
    debug_assert_eq!(r, mop.eval(a, x));
    ShiftRow {
        w5,
        s,
        quot,
        p,
        q,
        z,
        kind,
        x,
        mop,
        r,
    }
}

/// The requests SHIFT makes of other tables, without building its rows: each row's MUL check (padding rows
/// included: `MUL(0, 1)` each) added to `mul`, and the POW2 counters returned (`pow2_height(min_height) x 1`, natural order).
/// Row `i` of the SHIFT trace ([`shift_fill`]) makes exactly these requests; so call this before MUL.
pub fn shift_side_requests(
    requests: &ShiftRequests,
    min_height: usize,
    mul: &mut MulRequests,
) -> RowMajorMatrix {
    let n = shift_height(requests.len(), min_height);
    let mut pow2 = vec![0u64; pow2_height(min_height)];
    for &(op, a, b) in requests.keys() {
        let row = shift_row(op, a, b);
        mul.add(row.mop, a, row.x);
        pow2[pow2_row(row.s, row.w5)] += 1;
    }
    // Padding rows SLL(0, 0): MUL(0, 2^0) and POW2 row (0, 0).
    let pad = (n - requests.len()) as u64;
    if pad > 0 {
        let row = shift_row(ShiftOp::Sll, 0, 0);
        mul.add_n(row.mop, 0, row.x, pad);
        pow2[pow2_row(row.s, row.w5)] += pad;
    }
    RowMajorMatrix::new(pow2.into_iter().map(F::from_u64).collect(), 1)
}

/// The SHIFT rows from the deduplicated requests: `n x 22` (n = [`shift_height`]; one row per request key in
/// key order, then padding rows: SLL(0, 0) = 0 with m = 0), adding the rows' own BITWISE lookups (two
/// `RANGE16` per row, padding rows included) to `lookups`. Makes no requests of other tables (see
/// [`shift_side_requests`]).
pub fn shift_fill(
    requests: &ShiftRequests,
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = shift_height(requests.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_SHIFT_COLS];
    let rows = requests
        .iter()
        .map(|(&(op, a, b), &m)| (op, a, b, m))
        .chain(std::iter::repeat((ShiftOp::Sll, 0, 0, 0)));
    let f = F::from_u64;
    for (chunk, (op, a, b, m)) in values.chunks_mut(NUM_SHIFT_COLS).zip(rows) {
        let ShiftRow {
            w5,
            s,
            quot,
            p,
            q,
            z,
            kind,
            x,
            mop,
            r,
        } = shift_row(op, a, b);
        lookups.u16(quot & 0xffff);
        lookups.u16(quot >> 16);
        *ShiftCols::from_row_mut(chunk) = ShiftCols {
            a: words(a).map(f),
            b: words(b).map(f),
            s: f(s),
            q0: f(quot & 0xffff),
            q1: f(quot >> 16),
            is_sll: F::from_bool(kind == 0),
            is_srl: F::from_bool(kind == 1),
            is_sra: F::from_bool(kind == 2),
            w5: F::from_bool(w5),
            p: words(p).map(f),
            q: words(q).map(f),
            z: f(z),
            mop: f(mop.alu()),
            x: words(x).map(f),
            r: words(r).map(f),
            m: f(m),
        };
    }
    RowMajorMatrix::new(values, NUM_SHIFT_COLS)
}

/// The SHIFT trace from the deduplicated requests: `n x 22` (n = next power of two >= max(requests,
/// min_height); one row per request key in key order, then padding rows: SLL(0, 0) = 0 with m = 0), and the
/// POW2 counters. Adds each row's MUL check (padding rows included: `MUL(0, 1)`) to `mul` and the BITWISE
/// lookups to `lookups`; so fill SHIFT before MUL. The composition of [`shift_side_requests`] and
/// [`shift_fill`].
pub fn shift_trace(
    requests: &ShiftRequests,
    min_height: usize,
    lookups: &mut Lookups,
    mul: &mut MulRequests,
) -> ShiftTraces {
    let pow2 = shift_side_requests(requests, min_height, mul);
    ShiftTraces {
        shift: shift_fill(requests, min_height, lookups),
        pow2,
    }
}
