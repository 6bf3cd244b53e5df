//! DVRM (docs/tables.md §6.14): DIV, DIVU, REM, REMU on 64-bit operands (and DIVW/DIVUW/REMW/REMUW through
//! CPU32, which sends extended operands), deduplicated: one row per distinct `(n, d, signed)`, answering
//! both the quotient (`m_q` requests) and the remainder (`m_r` requests).
//!
//! Results follow the RISC-V ISA manual (§ "Division Operations"): `n / 0 = 2^64 - 1` (all ones, signed or
//! not), `n % 0 = n`, `i64::MIN / -1 = i64::MIN`, `i64::MIN % -1 = 0`; otherwise truncating division
//! (`q = trunc(n / d)`, `r = n - q d`, the sign of r is the sign of n).
//!
//! Method (no 128-bit arithmetic in this table): when neither case above applies (`chk = 1`), the row asks
//! MUL for `t = (q d) mod 2^64` and for the high word `th` (MULH when signed, MULHU when not), proves
//! `q d + r = n` exactly over the (sign-extended) 128-bit integers by the word carries of `t + r = n +
//! 2^64 κ` and `th ≡ sr - sn - κ (mod 2^64)`, the sign of r by `(sn - sr) (r_lo + r_hi) = 0`, and
//! `|r| < |d|` by one `SLTU[|r|, |d|] = 1` request to LT. Those three requests go out with multiplicity
//! `chk = 1 - dz - ovf` (forced by the inputs, rule R2), never with the counters.
//!
//! Changes against the design text of §6.14 (same soundness argument, written out):
//! - `th` and `κ` are expressions, not columns: `th = (e + 2^32 neg_e, neg_e (2^32 - 1))` with
//!   `e = sr - sn - κ`, and `κ = (t_hi + r_hi + c - n_hi) 2^-32` with the low carry
//!   `c = (t_lo + r_lo - n_lo) 2^-32`; both c and κ are constrained boolean.
//! - `|x|` (for r and d) is `x` when its sign flag s is 0 and `2^64 - x` when s = 1, written per word with
//!   an is-non-zero flag β of the low word: `|x|_lo = x_lo + s (2^32 β - 2 x_lo)`,
//!   `|x|_hi = x_hi + s (2^32 - β - 2 x_hi)`, with `x_lo (1 - β) = 0` and `β (1 - x_lo inv) = 0` (so
//!   β = [x_lo ≠ 0] exactly; one inverse witness column). This keeps both words of |x| canonical
//!   (< 2^32), which LT assumes of its inputs (rule R1): when s = 1, x_hi ≥ 2^31, so `|x|_hi ≤ 2^31`.
//!   The design's "abs_x + x ≡ 0 (mod 2^64)" alone did not say how to keep the words canonical.
//! - The sign-bit columns are named `n_top, d_top` (top 16 bits of the high words) as in LT; the sign of r
//!   comes from `MSB16[r_3, sr_raw]`, which also range-checks r_3.
//!
//! Shape: `n x 34`, row-major, natural order; n = next power of two ≥ max(rows, min_height). Padding rows
//! are the division 0 / 0 (unsigned): `dz = 1`, `q = 2^64 - 1`, `r = 0`, counters 0.

use std::collections::BTreeMap;

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{Field, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu};
use crate::cols::columns;
use crate::tables::bitwise::{LookupKind, Lookups};
use crate::tables::cpu::{c, inv_pow2};
use crate::tables::decode::words;

/// DVRM row (34 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DvrmCols<T> {
    /// Dividend, two words.
    pub n: [T; 2],
    /// Divisor, two words.
    pub d: [T; 2],
    /// Quotient, two words (range-checked by MUL when `chk`, a constant or `n` otherwise).
    pub q: [T; 2],
    /// Remainder, 16-bit halves (`r_lo = r0 + 2^16 r1`, `r_hi = r2 + 2^16 r3`).
    pub r: [T; 4],
    /// Top 16 bits of `n_hi` and `d_hi`.
    pub n_top: T,
    pub d_top: T,
    /// Bit 63 of n, d, r.
    pub sn_raw: T,
    pub sd_raw: T,
    pub sr_raw: T,
    /// `signed * raw`: the signs that matter.
    pub sn: T,
    pub sd: T,
    pub sr: T,
    /// `(q d) mod 2^64` (MUL's low word pair; any value satisfying the carries when `chk = 0`).
    pub t: [T; 2],
    /// `[e < 0]` for `e = sr - sn - κ` (then `th = 2^64 + e`).
    pub neg_e: T,
    /// `|r|` and `|d|` (two's-complement magnitude when the sign flag is set), two words each.
    pub abs_r: [T; 2],
    pub abs_d: [T; 2],
    /// `[r_lo ≠ 0]` and its inverse witness.
    pub beta_r: T,
    pub inv_r: T,
    /// `[d_lo ≠ 0]` and its inverse witness.
    pub beta_d: T,
    pub inv_d: T,
    /// 1 for DIV/REM, 0 for DIVU/REMU.
    pub signed: T,
    /// Division by zero.
    pub dz: T,
    /// Signed overflow (`i64::MIN / -1`).
    pub ovf: T,
    /// Number of quotient (DIV/DIVU) and remainder (REM/REMU) requests this row answers (free counters).
    pub m_q: T,
    pub m_r: T,
}
columns!(DvrmCols, NUM_DVRM_COLS);

/// The DVRM AIR.
pub struct DvrmAir;

const W: u64 = (1 << 32) - 1;

/// Writes the constraints of `|x|` (see the module doc) for a value `x` (two words) with sign flag `s`.
fn eval_abs(
    b: &mut AirBuilder,
    name: &str,
    x: &[Expr; 2],
    s: &Expr,
    abs: &[Expr; 2],
    beta: &Expr,
    inv: &Expr,
) {
    let one = Expr::one;
    b.assert_zero(
        format!("{name}: beta = 0 -> x_lo = 0"),
        x[0].clone() * (one() - beta),
    );
    b.assert_zero(
        format!("{name}: beta = 1 -> x_lo != 0"),
        beta.clone() * (one() - x[0].clone() * inv),
    );
    b.assert_eq(
        format!("{name}: abs lo"),
        abs[0].clone(),
        x[0].clone() + s.clone() * (beta.clone() * c(1 << 32) - x[0].clone() * c(2)),
    );
    b.assert_eq(
        format!("{name}: abs hi"),
        abs[1].clone(),
        x[1].clone() + s.clone() * (c(1 << 32) - beta - x[1].clone() * c(2)),
    );
}

impl Air for DvrmAir {
    fn name(&self) -> &str {
        "DVRM"
    }
    fn width(&self) -> usize {
        NUM_DVRM_COLS
    }
    fn column_names(&self) -> Vec<String> {
        DvrmCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_DVRM_COLS).map(|i| b.main(i)).collect();
        let l = DvrmCols::from_row(&m);
        let one = Expr::one;
        let two16 = c(1 << 16);
        let two32 = c(1 << 32);
        let inv32 = inv_pow2(32);

        // Range of r (16-bit halves, sign from the top half) and the sign bits of n and d.
        for h in &l.r[..3] {
            b.send(bus::RANGE16, vec![h.clone()], one());
        }
        b.send(bus::MSB16, vec![l.r[3].clone(), l.sr_raw.clone()], one());
        for (x_hi, top, s) in [
            (&l.n[1], &l.n_top, &l.sn_raw),
            (&l.d[1], &l.d_top, &l.sd_raw),
        ] {
            b.send(
                bus::RANGE16,
                vec![x_hi.clone() - top.clone() * two16.clone()],
                one(),
            );
            b.send(bus::MSB16, vec![top.clone(), s.clone()], one());
        }
        let r_lo = l.r[0].clone() + l.r[1].clone() * two16.clone();
        let r_hi = l.r[2].clone() + l.r[3].clone() * two16;

        b.assert_bool("signed bool", l.signed.clone());
        b.assert_eq("sn", l.sn.clone(), l.signed.clone() * &l.sn_raw);
        b.assert_eq("sd", l.sd.clone(), l.signed.clone() * &l.sd_raw);
        b.assert_eq("sr", l.sr.clone(), l.signed.clone() * &l.sr_raw);

        // Division by zero: q = all ones, r = n.
        b.assert_bool("dz bool", l.dz.clone());
        b.assert_zero("dz -> d = 0", l.dz.clone() * (l.d[0].clone() + &l.d[1]));
        b.assert_zero("dz: q_lo", l.dz.clone() * (l.q[0].clone() - c(W)));
        b.assert_zero("dz: q_hi", l.dz.clone() * (l.q[1].clone() - c(W)));
        b.assert_zero("dz: r_lo", l.dz.clone() * (r_lo.clone() - &l.n[0]));
        b.assert_zero("dz: r_hi", l.dz.clone() * (r_hi.clone() - &l.n[1]));

        // Signed overflow: n = -2^63, d = -1; q = n, r = 0.
        b.assert_bool("ovf bool", l.ovf.clone());
        b.assert_zero("ovf -> signed", l.ovf.clone() * (one() - &l.signed));
        b.assert_zero("ovf: n_lo", l.ovf.clone() * &l.n[0]);
        b.assert_zero("ovf: n_hi", l.ovf.clone() * (l.n[1].clone() - c(1 << 31)));
        b.assert_zero("ovf: d_lo", l.ovf.clone() * (l.d[0].clone() - c(W)));
        b.assert_zero("ovf: d_hi", l.ovf.clone() * (l.d[1].clone() - c(W)));
        b.assert_zero("ovf: q_lo", l.ovf.clone() * (l.q[0].clone() - &l.n[0]));
        b.assert_zero("ovf: q_hi", l.ovf.clone() * (l.q[1].clone() - &l.n[1]));
        b.assert_zero("ovf: r_lo", l.ovf.clone() * r_lo.clone());
        b.assert_zero("ovf: r_hi", l.ovf.clone() * r_hi.clone());

        // q d + r = n over the integers (see the module doc).
        let carry = (l.t[0].clone() + &r_lo - &l.n[0]) * inv32;
        let kappa = (l.t[1].clone() + &r_hi + &carry - &l.n[1]) * inv32;
        b.assert_bool("carry lo", carry.clone());
        b.assert_bool("kappa", kappa.clone());
        b.assert_bool("neg_e bool", l.neg_e.clone());
        let e = l.sr.clone() - &l.sn - kappa;
        let th = [e + l.neg_e.clone() * two32, l.neg_e.clone() * c(W)];
        b.assert_zero("sign of r", (l.sn.clone() - &l.sr) * (r_lo.clone() + &r_hi));

        // |r| < |d|.
        let r2 = [r_lo, r_hi];
        eval_abs(b, "abs r", &r2, &l.sr, &l.abs_r, &l.beta_r, &l.inv_r);
        eval_abs(b, "abs d", &l.d, &l.sd, &l.abs_d, &l.beta_d, &l.inv_d);

        let chk = one() - &l.dz - &l.ovf;
        let alu_tuple = |op: Expr, a: &[Expr; 2], x: &[Expr; 2], r: &[Expr; 2]| {
            vec![
                op,
                a[0].clone(),
                a[1].clone(),
                x[0].clone(),
                x[1].clone(),
                r[0].clone(),
                r[1].clone(),
            ]
        };
        b.send(
            bus::ALU,
            alu_tuple(c(alu::MUL), &l.q, &l.d, &l.t),
            chk.clone(),
        );
        let mulh = c(alu::MULHU) - l.signed.clone() * c(alu::MULHU - alu::MULH);
        b.send(bus::ALU, alu_tuple(mulh, &l.q, &l.d, &th), chk.clone());
        b.send(
            bus::ALU,
            alu_tuple(c(alu::SLTU), &l.abs_r, &l.abs_d, &[one(), Expr::zero()]),
            chk,
        );

        // The answers.
        b.receive(
            bus::ALU,
            alu_tuple(c(alu::DIVU) - &l.signed, &l.n, &l.d, &l.q),
            l.m_q.clone(),
        );
        b.receive(
            bus::ALU,
            alu_tuple(c(alu::REMU) - &l.signed, &l.n, &l.d, &r2),
            l.m_r.clone(),
        );
    }
}

/// The ISA result `(quotient, remainder)` of `n / d` (signed: DIV/REM, else DIVU/REMU), division by zero
/// and signed overflow included.
pub fn divrem(n: u64, d: u64, signed: bool) -> (u64, u64) {
    if d == 0 {
        return (u64::MAX, n);
    }
    if signed {
        let (a, b) = (n as i64, d as i64);
        (a.wrapping_div(b) as u64, a.wrapping_rem(b) as u64)
    } else {
        (n / d, n % d)
    }
}

/// One ALU bus fact `op(a, b) = r` (64-bit values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AluFact {
    pub op: u64,
    pub a: u64,
    pub b: u64,
    pub r: u64,
}

/// DVRM requests: `(n, d, signed) -> (quotient requests, remainder requests)`.
pub type DvrmRequests = BTreeMap<(u64, u64, bool), (u64, u64)>;

/// Adds one request `op(n, d)` for op ∈ {DIV, DIVU, REM, REMU} (ALU codes, [`alu`]); other codes are a
/// caller bug and panic.
pub fn add_dvrm_request(requests: &mut DvrmRequests, op: u64, n: u64, d: u64) {
    let (signed, rem) = match op {
        alu::DIV => (true, false),
        alu::DIVU => (false, false),
        alu::REM => (true, true),
        alu::REMU => (false, true),
        _ => panic!("not a DVRM op: {op}"),
    };
    let e = requests.entry((n, d, signed)).or_insert((0, 0));
    if rem {
        e.1 += 1;
    } else {
        e.0 += 1;
    }
}

/// One DVRM row for `(n, d, signed)` with counters `m_q`, `m_r` (field values, ready to write), and its
/// `chk` requests: MUL low, MULH/MULHU high, SLTU (empty when `d = 0` or on signed overflow).
pub fn dvrm_row(n: u64, d: u64, signed: bool, m_q: u64, m_r: u64) -> (DvrmCols<F>, Vec<AluFact>) {
    let (q, r) = divrem(n, d, signed);
    let dz = d == 0;
    let ovf = signed && n == 1 << 63 && d == u64::MAX;
    let row = dvrm_row_with(n, d, signed, q, r, dz, ovf, m_q, m_r);
    let mut facts = Vec::new();
    dvrm_facts(n, d, signed, &mut facts);
    (row, facts)
}

/// The requests of the DVRM rows of `requests` (what [`dvrm_trace`] returns besides the trace, without
/// building it; padding rows make none): for a caller that fills the rows elsewhere (a GPU).
pub fn dvrm_requests(requests: &DvrmRequests) -> Vec<AluFact> {
    let mut facts = Vec::new();
    for &(n, d, signed) in requests.keys() {
        dvrm_facts(n, d, signed, &mut facts);
    }
    facts
}

/// Appends the `chk` requests of the row for `(n, d, signed)` (none when `d = 0` or on signed overflow).
fn dvrm_facts(n: u64, d: u64, signed: bool, facts: &mut Vec<AluFact>) {
    let (q, r) = divrem(n, d, signed);
    let dz = d == 0;
    let ovf = signed && n == 1 << 63 && d == u64::MAX;
    if !dz && !ovf {
        let s = signed as u64;
        let (sr, sd) = (s & (r >> 63), s & (d >> 63));
        let abs = |x: u64, s: u64| if s == 1 { x.wrapping_neg() } else { x };
        let (mulh, th) = if signed {
            (
                alu::MULH,
                ((q as i64 as i128 * d as i64 as i128) >> 64) as u64,
            )
        } else {
            (alu::MULHU, ((q as u128 * d as u128) >> 64) as u64)
        };
        let t = q.wrapping_mul(d);
        facts.push(AluFact {
            op: alu::MUL,
            a: q,
            b: d,
            r: t,
        });
        facts.push(AluFact {
            op: mulh,
            a: q,
            b: d,
            r: th,
        });
        facts.push(AluFact {
            op: alu::SLTU,
            a: abs(r, sr),
            b: abs(d, sd),
            r: 1,
        });
    }
}

/// A DVRM row that claims quotient `q` and remainder `r` for `(n, d, signed)` with the flags `dz`, `ovf`:
/// every other column is derived from these as an honest prover would (`t = n - r mod 2^64`, the carries,
/// the signs, `|r|`, `|d|`). With the true `(q, r)` and flags this is [`dvrm_row`]'s row; tests use it to
/// forge rows for false claims.
#[allow(clippy::too_many_arguments)]
pub fn dvrm_row_with(
    n: u64,
    d: u64,
    signed: bool,
    q: u64,
    r: u64,
    dz: bool,
    ovf: bool,
    m_q: u64,
    m_r: u64,
) -> DvrmCols<F> {
    let s = signed as u64;
    let (sn, sd, sr) = (s & (n >> 63), s & (d >> 63), s & (r >> 63));
    let t = n.wrapping_sub(r);
    let kappa = ((t as u128 + r as u128) >> 64) as i64;
    let e = sr as i64 - sn as i64 - kappa;
    let abs = |x: u64, s: u64| if s == 1 { x.wrapping_neg() } else { x };
    let inv = |x: u64| {
        let x = x & W;
        if x == 0 {
            (F::ZERO, F::ZERO)
        } else {
            (F::ONE, F::from_u64(x).inverse())
        }
    };
    let (beta_r, inv_r) = inv(r);
    let (beta_d, inv_d) = inv(d);
    let fw = |x: u64| words(x).map(F::from_u64);
    DvrmCols {
        n: fw(n),
        d: fw(d),
        q: fw(q),
        r: [r & 0xffff, (r >> 16) & 0xffff, (r >> 32) & 0xffff, r >> 48].map(F::from_u64),
        n_top: F::from_u64(n >> 48),
        d_top: F::from_u64(d >> 48),
        sn_raw: F::from_u64(n >> 63),
        sd_raw: F::from_u64(d >> 63),
        sr_raw: F::from_u64(r >> 63),
        sn: F::from_u64(sn),
        sd: F::from_u64(sd),
        sr: F::from_u64(sr),
        t: fw(t),
        neg_e: F::from_bool(e < 0),
        abs_r: fw(abs(r, sr)),
        abs_d: fw(abs(d, sd)),
        beta_r,
        inv_r,
        beta_d,
        inv_d,
        signed: F::from_bool(signed),
        dz: F::from_bool(dz),
        ovf: F::from_bool(ovf),
        m_q: F::from_u64(m_q),
        m_r: F::from_u64(m_r),
    }
}

/// The BITWISE lookups of a DVRM row for `(n, d)` with remainder `r`.
fn add_lookups(lookups: &mut Lookups, n: u64, d: u64, r: u64) {
    for k in 0..3 {
        lookups.u16((r >> (16 * k)) & 0xffff);
    }
    lookups.add(LookupKind::Msb16, r >> 48);
    for x in [n, d] {
        lookups.u16((x >> 32) & 0xffff);
        lookups.add(LookupKind::Msb16, x >> 48);
    }
}

/// Height of the DVRM table for `len` requests: the next power of two `>= max(len, min_height)`.
pub fn dvrm_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The DVRM trace (`n x 34`, see the module doc) from the requests, adding its BITWISE lookups. Returns
/// the trace and the facts its rows request from MUL (ops MUL, MULH, MULHU) and LT (SLTU, result 1), one
/// entry per request (the caller feeds them to the MUL and LT fills).
pub fn dvrm_trace(
    requests: &DvrmRequests,
    min_height: usize,
    lookups: &mut Lookups,
) -> (RowMajorMatrix, Vec<AluFact>) {
    let n = dvrm_height(requests.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_DVRM_COLS];
    let mut facts = Vec::new();
    let rows = requests
        .iter()
        .map(|(&(a, b, s), &(mq, mr))| (a, b, s, mq, mr))
        .chain(std::iter::repeat((0, 0, false, 0, 0)));
    for (chunk, (a, b, signed, mq, mr)) in values.chunks_mut(NUM_DVRM_COLS).zip(rows) {
        let (row, f) = dvrm_row(a, b, signed, mq, mr);
        add_lookups(lookups, a, b, divrem(a, b, signed).1);
        *DvrmCols::from_row_mut(chunk) = row;
        facts.extend(f);
    }
    (RowMajorMatrix::new(values, NUM_DVRM_COLS), facts)
}
