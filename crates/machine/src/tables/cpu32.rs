//! CPU32 (docs/tables.md §6.2): the RV64 "W" instructions ADDW, SUBW, SLLW, SRLW, SRAW, MULW, DIVW, DIVUW,
//! REMW, REMUW (and ADDIW, SLLIW, SRLIW, SRAIW, which share the codes): 32-bit operands (the low words),
//! 32-bit result sign-extended to 64 bits. One row per executed W instruction (+ padding).
//!
//! ADDW and SUBW are checked inline (one word carry). The others send a 64-bit request on the ALU bus with
//! extended operands and keep the low word `t_lo` of its answer: SLLW → SLL5(a, b), SRLW → SRL5(zext a_lo,
//! b), SRAW → SRA5(sext a_lo, b), MULW → MUL(a, b), DIVW/REMW → DIV/REM(sext a_lo, sext b_lo),
//! DIVUW/REMUW → DIVU/REMU(zext a_lo, zext b_lo). The low word of each 64-bit result is the W result
//! (division by zero and DIVW's overflow included: `sext(-2^31) / -1 = 2^31`, low word `0x8000_0000`).
//! The row answers `ALU[opW, a, b, t_lo, st (2^32 - 1)]` with st = bit 31 of t_lo.
//!
//! Change against the design text of §6.2: the op is a one-hot of ten flag columns (`f`, in code order
//! ADDW..REMUW, Σ f = 1 on every row) instead of `is_addw, is_subw, is_inner` plus a free `inner_op`
//! column: the received code `opW`, the inner code and the operand extensions must all be tied to one
//! op, which the three-flag form did not do (nothing bound `inner_op` or the extension choice to `opW`).
//! With one-hot flags, `opW = Σ (21 + i) f_i` and the inner code are linear, and the inner request's
//! multiplicity `Σ_{i ≥ 2} f_i` is a boolean forced by the op (R2), so no `inner_mult` column is needed.
//! Padding rows are ADDW 0 + 0 = 0 with `μ = 0`. Width 25 (the design said 16).
//!
//! Shape: `n x 25`, row-major, natural order; n = next power of two ≥ max(rows, min_height).

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu};
use crate::cols::columns;
use crate::tables::bitwise::{LookupKind, Lookups};
use crate::tables::cpu::{c, inv_pow2};
use crate::tables::decode::words;
use crate::tables::dvrm::{divrem, AluFact};

/// CPU32 row (25 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cpu32Cols<T> {
    /// First operand (rs1 value), two words.
    pub a: [T; 2],
    /// Second operand (rs2 value or the immediate), two words.
    pub b: [T; 2],
    /// Top 16 bits of `a_lo` and bit 31 of a.
    pub a_top: T,
    pub sa: T,
    /// Top 16 bits of `b_lo` and bit 31 of b.
    pub b_top: T,
    pub sb: T,
    /// The inner 64-bit result (ADDW/SUBW: `t_lo` is the 32-bit sum/difference, `t_hi = 0`).
    pub t: [T; 2],
    /// Top 16 bits of `t_lo` and bit 31 of t (the sign of the W result).
    pub t_top: T,
    pub st: T,
    /// One-hot op flags, index i is ALU code `ADDW + i` (ADDW, SUBW, SLLW, SRLW, SRAW, MULW, DIVW, DIVUW,
    /// REMW, REMUW).
    pub f: [T; 10],
    /// High words of the inner request's operands (`a_hi`, `sext` or `zext` of the low word).
    pub a2_hi: T,
    pub b2_hi: T,
    /// 1 on rows that answer a CPU request, 0 on padding.
    pub mu: T,
}
columns!(Cpu32Cols, NUM_CPU32_COLS);

/// Flag indices in [`Cpu32Cols::f`].
const ADDW: usize = 0;
const SUBW: usize = 1;
const SLLW: usize = 2;
const SRLW: usize = 3;
const SRAW: usize = 4;
const MULW: usize = 5;
const DIVW: usize = 6;
const DIVUW: usize = 7;
const REMW: usize = 8;
const REMUW: usize = 9;

/// The inner ALU code of each W op (0 for ADDW/SUBW, which are inline).
const INNER: [u64; 10] = [
    0,
    0,
    alu::SLL5,
    alu::SRL5,
    alu::SRA5,
    alu::MUL,
    alu::DIV,
    alu::DIVU,
    alu::REM,
    alu::REMU,
];

/// How the inner request extends an operand's high word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ext {
    Keep,
    Sext,
    Zext,
}

/// Extension of (a, b) per op.
const EXT: [(Ext, Ext); 10] = [
    (Ext::Keep, Ext::Keep), // ADDW (unused)
    (Ext::Keep, Ext::Keep), // SUBW (unused)
    (Ext::Keep, Ext::Keep), // SLLW
    (Ext::Zext, Ext::Keep), // SRLW
    (Ext::Sext, Ext::Keep), // SRAW
    (Ext::Keep, Ext::Keep), // MULW
    (Ext::Sext, Ext::Sext), // DIVW
    (Ext::Zext, Ext::Zext), // DIVUW
    (Ext::Sext, Ext::Sext), // REMW
    (Ext::Zext, Ext::Zext), // REMUW
];

const W: u64 = (1 << 32) - 1;

/// The CPU32 AIR.
pub struct Cpu32Air;

impl Air for Cpu32Air {
    fn name(&self) -> &str {
        "CPU32"
    }
    fn width(&self) -> usize {
        NUM_CPU32_COLS
    }
    fn column_names(&self) -> Vec<String> {
        Cpu32Cols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_CPU32_COLS).map(|i| b.main(i)).collect();
        let l = Cpu32Cols::from_row(&m);
        let one = Expr::one;
        let two16 = c(1 << 16);
        let inv32 = inv_pow2(32);

        // Sign bits of the low words of a, b and t (t_lo is also range-checked: it is the W result).
        for (x_lo, top, s) in [
            (&l.a[0], &l.a_top, &l.sa),
            (&l.b[0], &l.b_top, &l.sb),
            (&l.t[0], &l.t_top, &l.st),
        ] {
            b.send(
                bus::RANGE16,
                vec![x_lo.clone() - top.clone() * two16.clone()],
                one(),
            );
            b.send(bus::MSB16, vec![top.clone(), s.clone()], one());
        }

        for (i, f) in l.f.iter().enumerate() {
            b.assert_bool(format!("flag {i} bool"), f.clone());
        }
        b.assert_eq("one-hot", l.f.iter().cloned().sum::<Expr>(), one());
        b.assert_bool("mu bool", l.mu.clone());

        // Inline ADDW / SUBW: one word carry, t_hi = 0 (unused, fixed for a canonical row).
        let k = (l.a[0].clone() + &l.b[0] - &l.t[0]) * inv32;
        b.assert_zero("addw carry", l.f[ADDW].clone() * k.clone() * (k - one()));
        let k2 = (l.t[0].clone() + &l.b[0] - &l.a[0]) * inv32;
        b.assert_zero("subw borrow", l.f[SUBW].clone() * k2.clone() * (k2 - one()));
        b.assert_zero("inline t_hi", (l.f[ADDW].clone() + &l.f[SUBW]) * &l.t[1]);

        // Extended operands of the inner request.
        let ext_hi = |which: fn(&(Ext, Ext)) -> Ext, hi: &Expr, s: &Expr| -> Expr {
            (0..10)
                .map(|i| match which(&EXT[i]) {
                    Ext::Keep => l.f[i].clone() * hi,
                    Ext::Sext => l.f[i].clone() * s * c(W),
                    Ext::Zext => Expr::zero(),
                })
                .sum()
        };
        b.assert_eq("a2_hi", l.a2_hi.clone(), ext_hi(|e| e.0, &l.a[1], &l.sa));
        b.assert_eq("b2_hi", l.b2_hi.clone(), ext_hi(|e| e.1, &l.b[1], &l.sb));

        let inner_op: Expr = (0..10).map(|i| l.f[i].clone() * c(INNER[i])).sum();
        let inner_mult: Expr = l.f[SLLW..].iter().cloned().sum();
        b.send(
            bus::ALU,
            vec![
                inner_op,
                l.a[0].clone(),
                l.a2_hi.clone(),
                l.b[0].clone(),
                l.b2_hi.clone(),
                l.t[0].clone(),
                l.t[1].clone(),
            ],
            inner_mult,
        );
        let op_w: Expr = (0..10)
            .map(|i| l.f[i].clone() * c(alu::ADDW + i as u64))
            .sum();
        b.receive(
            bus::ALU,
            vec![
                op_w,
                l.a[0].clone(),
                l.a[1].clone(),
                l.b[0].clone(),
                l.b[1].clone(),
                l.t[0].clone(),
                l.st.clone() * c(W),
            ],
            l.mu.clone(),
        );
    }
}

fn sext32(x: u64) -> u64 {
    x as u32 as i32 as i64 as u64
}

/// The ISA result of the W op `op` (ALU code ADDW..REMUW) on 64-bit register values a, b; `None` for other
/// codes.
pub fn w_result(op: u64, a: u64, b: u64) -> Option<u64> {
    Some(sext32(inner(op, a, b)?.1.r))
}

/// The inner computation of a W op: the flag index and the 64-bit fact whose low word is the W result (for
/// ADDW/SUBW, the fact's op is 0 and r is the 32-bit result).
fn inner(op: u64, a: u64, b: u64) -> Option<(usize, AluFact)> {
    if !(alu::ADDW..=alu::REMUW).contains(&op) {
        return None;
    }
    let i = (op - alu::ADDW) as usize;
    let ext = |x: u64, e: Ext| match e {
        Ext::Keep => x,
        Ext::Sext => sext32(x),
        Ext::Zext => x & W,
    };
    let (a2, b2) = (ext(a, EXT[i].0), ext(b, EXT[i].1));
    let r = match i {
        ADDW => a.wrapping_add(b) & W,
        SUBW => a.wrapping_sub(b) & W,
        SLLW => a2 << (b & 31),
        SRLW => a2 >> (b & 31),
        SRAW => ((a2 as i64) >> (b & 31)) as u64,
        MULW => a2.wrapping_mul(b2),
        DIVW | REMW => {
            let (q, r) = divrem(a2, b2, true);
            if i == DIVW {
                q
            } else {
                r
            }
        }
        DIVUW | REMUW => {
            let (q, r) = divrem(a2, b2, false);
            if i == DIVUW {
                q
            } else {
                r
            }
        }
        _ => unreachable!("op range checked above"),
    };
    Some((
        i,
        AluFact {
            op: INNER[i],
            a: a2,
            b: b2,
            r,
        },
    ))
}

/// One CPU32 row for the W op `op(a, b)` with `mu` (1 for a real row), and its inner request (`None` for
/// ADDW/SUBW). `None` if `op` is not a W code.
pub fn cpu32_row(op: u64, a: u64, b: u64, mu: bool) -> Option<(Cpu32Cols<F>, Option<AluFact>)> {
    let (i, fact) = inner(op, a, b)?;
    let t = fact.r;
    let mut f = [F::ZERO; 10];
    f[i] = F::ONE;
    let fw = |x: u64| words(x).map(F::from_u64);
    let row = Cpu32Cols {
        a: fw(a),
        b: fw(b),
        a_top: F::from_u64((a >> 16) & 0xffff),
        sa: F::from_u64((a >> 31) & 1),
        b_top: F::from_u64((b >> 16) & 0xffff),
        sb: F::from_u64((b >> 31) & 1),
        t: fw(t),
        t_top: F::from_u64((t >> 16) & 0xffff),
        st: F::from_u64((t >> 31) & 1),
        f,
        a2_hi: F::from_u64(fact.a >> 32),
        b2_hi: F::from_u64(fact.b >> 32),
        mu: F::from_bool(mu),
    };
    Some((row, (i >= SLLW).then_some(fact)))
}

/// Height of the CPU32 table for `len` W operations: the next power of two `>= max(len, min_height)`.
pub fn cpu32_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The inner requests of the W operations `(op, a, b)` (what [`cpu32_trace`] returns besides the trace, without
/// building it): for a caller that fills the rows elsewhere (a GPU). `None` if an op is not a W code.
pub fn cpu32_requests(ops: &[(u64, u64, u64)]) -> Option<Vec<AluFact>> {
    let mut facts = Vec::new();
    for &(op, a, b) in ops {
        let (i, fact) = inner(op, a, b)?;
        if i >= SLLW {
            facts.push(fact);
        }
    }
    Some(facts)
}

/// The CPU32 trace (`n x 25`, see the module doc) from the W operations `(op, a, b)` in execution order
/// (one row each), adding its BITWISE lookups. Returns the trace and the inner requests (SLL5/SRL5/SRA5
/// for SHIFT, MUL for MUL, DIV/DIVU/REM/REMU for DVRM), one per row that has one. `None` if an op is not a
/// W code.
pub fn cpu32_trace(
    ops: &[(u64, u64, u64)],
    min_height: usize,
    lookups: &mut Lookups,
) -> Option<(RowMajorMatrix, Vec<AluFact>)> {
    let n = cpu32_height(ops.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_CPU32_COLS];
    let mut facts = Vec::new();
    let rows = ops
        .iter()
        .map(|&(op, a, b)| (op, a, b, true))
        .chain(std::iter::repeat((alu::ADDW, 0, 0, false)));
    for (chunk, (op, a, b, mu)) in values.chunks_mut(NUM_CPU32_COLS).zip(rows) {
        let (row, fact) = cpu32_row(op, a, b, mu)?;
        let t_lo = row.t[0].as_canonical_u64();
        for x in [a & W, b & W, t_lo] {
            lookups.u16(x & 0xffff);
            lookups.add(LookupKind::Msb16, x >> 16);
        }
        *Cpu32Cols::from_row_mut(chunk) = row;
        facts.extend(fact);
    }
    Some((RowMajorMatrix::new(values, NUM_CPU32_COLS), facts))
}
