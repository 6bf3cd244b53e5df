//! MUL (docs/tables.md §6.13): 64 x 64-bit multiplication, deduplicated: one row per distinct
//! `(a, b, sa_en, sb_en)`. A row proves the 128-bit product of the sign-extended operands (mod 2^128) and
//! answers two kinds of ALU requests: `MUL` (low 64 bits, counter `m_lo`) and one of `MULHU` / `MULHSU` /
//! `MULH` (high 64 bits, counter `m_hi`), chosen by the sign flags `(sa_en, sb_en)` = (0,0) / (1,0) / (1,1).
//! SHIFT (`SLL` = MUL by 2^s, `SRL` = MULHU by 2^(64-s), `SRA` = MULHSU by 2^(64-s)) and DVRM send their
//! checks here.
//!
//! Method: 16-bit limbs `a[4]`, `b[4]`, sign-extended to 8 limbs (`A_i = sa * 0xffff` for i >= 4), product
//! limbs `p[8]`, and one carry `c_k` per 32-bit column k = 0..3:
//! `p_{2k} + 2^16 p_{2k+1} + 2^32 c_k = sum_{i+j=2k} A_i B_j + 2^16 sum_{i+j=2k+1} A_i B_j + c_{k-1}` (deg 2).
//!
//! **Change from the design (docs/tables.md §6.13), soundness.** The design range-checks a carry as two
//! 16-bit halves (`c_k < 2^32`). Then the left side reaches `2^32 + 2^32 (2^32 - 1) > p` and wraps (rule R4):
//! for a = b = 0 the witness `p_0 = 1, c_0 = 2^32 - 1, p_2 = p_3 = 0xffff` satisfies every equation mod p
//! and proves `MUL(0, 0) = 0xffff_ffff_0000_0001`. Here the high half `c_k1` of every carry is a **byte**
//! (two carries per `BYTE[PAIR]` lookup), so `c_k < 2^24` and both sides stay below `2^57 < p/2`. True
//! carries are `< 2^20` (column 3 sums at most 7 products of 32 bits plus 2^16 times 8 of them plus
//! `c_2`). The test `alu_mul::wrapped_carry_is_rejected` runs that attack.
//!
//! **Also**: the raw sign bits are columns (`sa_raw`, `sb_raw`, from `MSB16[a_3, sa_raw]`) and
//! `sa = sa_en * sa_raw` a degree-2 constraint, so the row has 32 columns (the design counted 30).

use std::collections::BTreeMap;

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu};
use crate::cols::columns;
use crate::tables::bitwise::{LookupKind, Lookups};
use crate::tables::cpu::c;

/// MUL row (32 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MulCols<T> {
    /// 16-bit limbs of a (little-endian): `a_lo = a_0 + 2^16 a_1`, `a_hi = a_2 + 2^16 a_3`.
    pub a: [T; 4],
    /// 16-bit limbs of b.
    pub b: [T; 4],
    /// 1 iff a is signed (MULHSU, MULH).
    pub sa_en: T,
    /// 1 iff b is signed (MULH); `sb_en = 1` implies `sa_en = 1`.
    pub sb_en: T,
    /// Bit 63 of a (`MSB16[a_3, sa_raw]`), of b.
    pub sa_raw: T,
    pub sb_raw: T,
    /// `sa_en * sa_raw`, `sb_en * sb_raw`: the sign-extension bits.
    pub sa: T,
    pub sb: T,
    /// 16-bit limbs of the 128-bit product (of the sign-extended operands, mod 2^128).
    pub p: [T; 8],
    /// Carry out of 32-bit column k as `(c_k0, c_k1)`: `c_k = c_k0 + 2^16 c_k1`, `c_k0 < 2^16`, `c_k1 < 2^8`.
    pub c: [[T; 2]; 4],
    /// Number of `MUL` requests answered (free counter).
    pub m_lo: T,
    /// Number of `MULHU`/`MULHSU`/`MULH` requests answered (free counter).
    pub m_hi: T,
}
columns!(MulCols, NUM_MUL_COLS);

/// The four multiplication ops MUL answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MulOp {
    /// Low 64 bits.
    Mul,
    /// High 64 bits, signed x signed.
    Mulh,
    /// High 64 bits, signed x unsigned.
    Mulhsu,
    /// High 64 bits, unsigned x unsigned.
    Mulhu,
}

impl MulOp {
    /// The op of an ALU code (`alu::MUL ..= alu::MULHU`), `None` for any other code.
    pub fn from_alu(code: u64) -> Option<Self> {
        match code {
            alu::MUL => Some(MulOp::Mul),
            alu::MULH => Some(MulOp::Mulh),
            alu::MULHSU => Some(MulOp::Mulhsu),
            alu::MULHU => Some(MulOp::Mulhu),
            _ => None,
        }
    }

    /// The ALU code.
    pub fn alu(self) -> u64 {
        match self {
            MulOp::Mul => alu::MUL,
            MulOp::Mulh => alu::MULH,
            MulOp::Mulhsu => alu::MULHSU,
            MulOp::Mulhu => alu::MULHU,
        }
    }

    /// The RISC-V result (reference semantics, Rust widening arithmetic).
    pub fn eval(self, a: u64, b: u64) -> u64 {
        match self {
            MulOp::Mul => a.wrapping_mul(b),
            MulOp::Mulh => ((a as i64 as i128 * b as i64 as i128) >> 64) as u64,
            MulOp::Mulhsu => ((a as i64 as i128 * b as i128) >> 64) as u64,
            MulOp::Mulhu => ((a as u128 * b as u128) >> 64) as u64,
        }
    }

    /// Sign flags `(sa_en, sb_en)` of the row that answers this op (`Mul` uses the unsigned row).
    fn signs(self) -> (bool, bool) {
        match self {
            MulOp::Mul | MulOp::Mulhu => (false, false),
            MulOp::Mulhsu => (true, false),
            MulOp::Mulh => (true, true),
        }
    }
}

/// Deduplicated MUL requests: `(a, b, sa_en, sb_en) -> [count of MUL, count of the high op]`.
/// Filled by the CPU routing (MUL, MULH, MULHSU, MULHU events), by [`crate::tables::shift::shift_trace`]
/// (one request per SHIFT row, padding included) and by DVRM; read by [`mul_trace`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MulRequests {
    pub rows: BTreeMap<(u64, u64, bool, bool), [u64; 2]>,
}

impl MulRequests {
    pub fn new() -> Self {
        Self::default()
    }

    /// One request `op(a, b)`.
    pub fn add(&mut self, op: MulOp, a: u64, b: u64) {
        self.add_n(op, a, b, 1);
    }

    /// `n` requests `op(a, b)`.
    pub fn add_n(&mut self, op: MulOp, a: u64, b: u64, n: u64) {
        let (sa, sb) = op.signs();
        let e = self.rows.entry((a, b, sa, sb)).or_default();
        e[(op != MulOp::Mul) as usize] += n;
    }

    /// One request for the ALU code `op` (MUL, MULH, MULHSU, MULHU); false (nothing added) for another code.
    pub fn add_alu(&mut self, op: u64, a: u64, b: u64) -> bool {
        match MulOp::from_alu(op) {
            Some(op) => {
                self.add(op, a, b);
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// The MUL AIR.
pub struct MulAir;

/// `x0 + 2^16 x1`.
fn word(x0: &Expr, x1: &Expr) -> Expr {
    x0.clone() + x1.clone() * c(1 << 16)
}

impl Air for MulAir {
    fn name(&self) -> &str {
        "MUL"
    }
    fn width(&self) -> usize {
        NUM_MUL_COLS
    }
    fn column_names(&self) -> Vec<String> {
        MulCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let cols: Vec<Expr> = (0..NUM_MUL_COLS).map(|i| b.main(i)).collect();
        let l = MulCols::from_row(&cols);
        let one = Expr::one;
        // Operand limbs: U16 for the three low limbs, MSB16 for the top one (also gives the raw sign).
        for (x, raw) in [(&l.a, &l.sa_raw), (&l.b, &l.sb_raw)] {
            for limb in &x[..3] {
                b.send(bus::RANGE16, vec![limb.clone()], one());
            }
            b.send(bus::MSB16, vec![x[3].clone(), raw.clone()], one());
        }
        b.assert_bool("sa_en bool", l.sa_en.clone());
        b.assert_bool("sb_en bool", l.sb_en.clone());
        b.assert_zero("sb_en implies sa_en", l.sb_en.clone() * (one() - &l.sa_en));
        b.assert_eq("sa", l.sa.clone(), l.sa_en.clone() * &l.sa_raw);
        b.assert_eq("sb", l.sb.clone(), l.sb_en.clone() * &l.sb_raw);
        for p in &l.p {
            b.send(bus::RANGE16, vec![p.clone()], one());
        }
        for ck in &l.c {
            b.send(bus::RANGE16, vec![ck[0].clone()], one());
        }
        for k in [0, 2] {
            b.send(
                bus::BYTE,
                vec![
                    c(bus::BYTE_PAIR),
                    l.c[k][1].clone(),
                    l.c[k + 1][1].clone(),
                    Expr::zero(),
                ],
                one(),
            );
        }
        // Sign-extended limbs.
        let ext = |x: &[Expr; 4], s: &Expr, i: usize| -> Expr {
            if i < 4 {
                x[i].clone()
            } else {
                s.clone() * c(0xffff)
            }
        };
        let conv = |s: usize| -> Expr {
            (0..=s)
                .filter(|&i| i < 8 && s - i < 8)
                .map(|i| ext(&l.a, &l.sa, i) * ext(&l.b, &l.sb, s - i))
                .sum()
        };
        let carry = |k: usize| word(&l.c[k][0], &l.c[k][1]);
        for k in 0..4 {
            let mut rhs = conv(2 * k) + conv(2 * k + 1) * c(1 << 16);
            if k > 0 {
                rhs = rhs + carry(k - 1);
            }
            let lhs = word(&l.p[2 * k], &l.p[2 * k + 1]) + carry(k) * c(1 << 32);
            b.assert_eq(format!("product column {k}"), lhs, rhs);
        }
        let a = [word(&l.a[0], &l.a[1]), word(&l.a[2], &l.a[3])];
        let bb = [word(&l.b[0], &l.b[1]), word(&l.b[2], &l.b[3])];
        let tuple = |op: Expr, r: [Expr; 2]| {
            vec![
                op,
                a[0].clone(),
                a[1].clone(),
                bb[0].clone(),
                bb[1].clone(),
                r[0].clone(),
                r[1].clone(),
            ]
        };
        b.receive(
            bus::ALU,
            tuple(
                c(alu::MUL),
                [word(&l.p[0], &l.p[1]), word(&l.p[2], &l.p[3])],
            ),
            l.m_lo.clone(),
        );
        let hi_op = c(alu::MULHU)
            - l.sa_en.clone() * c(alu::MULHU - alu::MULHSU)
            - l.sb_en.clone() * c(alu::MULHSU - alu::MULH);
        b.receive(
            bus::ALU,
            tuple(hi_op, [word(&l.p[4], &l.p[5]), word(&l.p[6], &l.p[7])]),
            l.m_hi.clone(),
        );
    }
}

/// 16-bit limbs of x, little-endian.
fn limbs(x: u64) -> [u64; 4] {
    [x & 0xffff, (x >> 16) & 0xffff, (x >> 32) & 0xffff, x >> 48]
}

/// Fills one row for `(a, b, sa_en, sb_en)` with counters `m`, adding its lookups.
fn fill_row(
    row: &mut MulCols<F>,
    (a, b, sa_en, sb_en): (u64, u64, bool, bool),
    m: [u64; 2],
    lookups: &mut Lookups,
) {
    let f = F::from_u64;
    let (al, bl) = (limbs(a), limbs(b));
    let (sa_raw, sb_raw) = (a >> 63, b >> 63);
    let sa = sa_en as u64 & sa_raw;
    let sb = sb_en as u64 & sb_raw;
    let ext = |x: &[u64; 4], s: u64, i: usize| if i < 4 { x[i] } else { s * 0xffff };
    let conv = |s: usize| -> u128 {
        (0..=s)
            .filter(|&i| i < 8 && s - i < 8)
            .map(|i| ext(&al, sa, i) as u128 * ext(&bl, sb, s - i) as u128)
            .sum()
    };
    let mut p = [0u64; 8];
    let mut cs = [[0u64; 2]; 4];
    let mut carry: u128 = 0;
    for k in 0..4 {
        let sum = conv(2 * k) + (conv(2 * k + 1) << 16) + carry;
        let low = (sum & 0xffff_ffff) as u64;
        carry = sum >> 32;
        debug_assert!(carry < 1 << 20);
        p[2 * k] = low & 0xffff;
        p[2 * k + 1] = low >> 16;
        cs[k] = [(carry & 0xffff) as u64, (carry >> 16) as u64];
    }
    for x in [&al, &bl] {
        for &limb in &x[..3] {
            lookups.u16(limb);
        }
        lookups.add(LookupKind::Msb16, x[3]);
    }
    for &v in &p {
        lookups.u16(v);
    }
    for ck in &cs {
        lookups.u16(ck[0]);
    }
    lookups.pair(cs[0][1], cs[1][1]);
    lookups.pair(cs[2][1], cs[3][1]);
    *row = MulCols {
        a: al.map(f),
        b: bl.map(f),
        sa_en: F::from_bool(sa_en),
        sb_en: F::from_bool(sb_en),
        sa_raw: f(sa_raw),
        sb_raw: f(sb_raw),
        sa: f(sa),
        sb: f(sb),
        p: p.map(f),
        c: cs.map(|x| x.map(f)),
        m_lo: f(m[0]),
        m_hi: f(m[1]),
    };
}

/// Height of the MUL table for `len` requests: the next power of two `>= max(len, min_height)`.
pub fn mul_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The MUL trace from the deduplicated requests: `n x 32` (row-major, natural order), n = next power of
/// two >= max(requests, min_height), one row per key of `requests` in key order, then padding rows (the
/// fact 0 x 0 = 0, unsigned, with both counters 0). Adds the rows' BITWISE lookups to `lookups`.
pub fn mul_trace(
    requests: &MulRequests,
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = mul_height(requests.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_MUL_COLS];
    let rows = requests
        .rows
        .iter()
        .map(|(&key, &m)| (key, m))
        .chain(std::iter::repeat(((0, 0, false, false), [0, 0])));
    for (chunk, (key, m)) in values.chunks_mut(NUM_MUL_COLS).zip(rows) {
        fill_row(MulCols::from_row_mut(chunk), key, m, lookups);
    }
    RowMajorMatrix::new(values, NUM_MUL_COLS)
}
