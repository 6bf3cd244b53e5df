//! SHA256 (docs/tables.md §6.19.2): the `sha256_compress` precompile (docs/abi.md, a7 = `0x0100_0002`), one
//! SHA-256 compression (FIPS 180-4 §6.2.2 steps 1-4) per call in 17 rows: 16 round rows of four rounds each
//! and a boundary row, which is the call's digest row and the next call's init row (the table's first row
//! is a padding boundary row: the first call's init).
//!
//! Method (the row shape of OpenVM's SHA-256 AIR: four rounds per row, only `a` and `e` kept as bits, with
//! our own columns). Round row i slot j (j = 0..3) holds the bits of `A_{4i+j-3}` and `E_{4i+j-3}`, where
//! `A_{t+1}`, `E_{t+1}` are the `a` and `e` after round t and `A_0..A_{-3} = H0..H3`, `E_0..E_{-3} = H4..H7`;
//! the boundary row holds `A_{j-3}`, `E_{j-3}` of the next call in slots 1..3, so round t = 4(i-1) + j finds
//! its `a, b, c, d` (`A_t..A_{t-3}`) and `e, f, g, h` in its own row and the row before (round 0 reads `d =
//! H3`, `h = H7` from the next row's `h`: they enter only as words). The round relations
//! `pack(E_{t+1}) + 2^32 ce = d + T1`, `pack(A_{t+1}) + 2^32 ca = T1 + T2` hold on **every** transition
//! (degree 3, no gate: a gate would make them degree 4); the carries are range-checked (BYTE) only on round
//! rows, so on the boundary row they are free and absorb whatever the relation gives. The message schedule
//! works the same way: row i slot j holds the bits of `W_{4(i-1)+j}` (the block's words on rows 1..4),
//! `W_t = σ1(W_{t-2}) + W_{t-7} + σ0(W_{t-15}) + W_{t-16}` holds on every transition with its carry
//! range-checked on rows 5..16 only, and `W_{t-16} + σ0(W_{t-15})` (`s4`, then `s8 = s4 + W_{t-7}` for
//! slots 0..2, then `s12 = s8`) is carried forward from rows the relation cannot see. The new state
//! `H + (a..h)` (each word's carry `(H + v - new) / 2^32` boolean): H2, H3 as bits of the boundary row's
//! slot 0 and H4..H7 as its `w` bits (free there: they feed only the unchecked schedule of rows 1..4); H0,
//! H1 as `ts - ots[k] - 1` of row 15, which has no memory access, range-checked by its slots' LT32.
//!
//! Row index: a degree-2 encoder ([`ROW_CODE`], [`row_selectors`]: 5 columns for 17 rows) and five degree-1
//! flags (sums of selectors) for the multiplicities and the degree-1 gates. Round constants `K_t` are
//! linear in the selectors (no preprocessed column).
//!
//! Bus: the boundary row receives `ECALL[ts, 0x0100_0002, 0, 8 (cell - 2), 0, 0, 0]` (its cell is the
//! state's third), row 5 reads a1 (`8 cell`) at ts (REG_TOKEN consumed and re-emitted, with memory slot 0's
//! LT32). Every row has two memory slots (cells `cell + s`, their old and new words as columns, bound to the
//! row's bits by degree-2 gates): rows 1..4 read the block's 8 cells (consume and re-emit the words as they
//! sit in memory, little-endian bytes of big-endian message words), row 16 and the boundary row consume the
//! 4 state cells (old value = `h`, the call's input state) and emit the new state; all at `ts = 4 clk + 1`
//! with `LT32(old_ts, ts)`, multiplicity `is_real · f_mem`. Padding groups compress the zero state and
//! block; the table's last group may be cut short (17 does not divide a power of two): it must be padding.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::bitwise::Lookups;
use crate::tables::cpu::{c, inv_pow2, lt32};

/// The `sha256_compress` ecall number (a7), docs/abi.md.
pub const SHA256_ECALL: u64 = zkrv_executor::precompile::SHA256_COMPRESS;
/// Rows per call: 16 round rows and a boundary row (the call's digest and the next call's init).
pub const SHA256_ROWS: usize = 17;
/// Variables of the row encoder.
pub const CODE_VARS: usize = 5;
/// The row encoder's points: row i is `ROW_CODE[i]`, the first 17 points `x ∈ {0, 1, 2}^5` with
/// `Σ x ≤ 2` in lexicographic order (row 0 is the zero point). With the slack `x_0 = 2 - Σ x`, the point
/// `p` has the degree-2 selector `Π_a binom(x_a, p_a)` (1 at p, 0 at every other point), as OpenVM's
/// `Encoder` (openvm-org/openvm `crates/circuits/primitives/src/encoder`).
pub const ROW_CODE: [[u8; CODE_VARS]; SHA256_ROWS] = [
    [0, 0, 0, 0, 0],
    [0, 0, 0, 0, 1],
    [0, 0, 0, 0, 2],
    [0, 0, 0, 1, 0],
    [0, 0, 0, 1, 1],
    [0, 0, 0, 2, 0],
    [0, 0, 1, 0, 0],
    [0, 0, 1, 0, 1],
    [0, 0, 1, 1, 0],
    [0, 0, 2, 0, 0],
    [0, 1, 0, 0, 0],
    [0, 1, 0, 0, 1],
    [0, 1, 0, 1, 0],
    [0, 1, 1, 0, 0],
    [0, 2, 0, 0, 0],
    [1, 0, 0, 0, 0],
    [1, 0, 0, 0, 1],
];

/// The selectors of the 17 rows at the encoder point `x` (degree 2; `[i]` is 1 on row i's code and 0 on
/// the other rows').
pub fn row_selectors(x: &[Expr; CODE_VARS]) -> Vec<Expr> {
    let slack = x.iter().fold(c(2), |acc, v| acc - v);
    let half = inv_pow2(1);
    let binom = |v: &Expr, k: u8| match k {
        0 => Expr::one(),
        1 => v.clone(),
        _ => v.clone() * (v.clone() - Expr::one()) * half,
    };
    ROW_CODE
        .iter()
        .map(|p| {
            let s0: u8 = 2 - p.iter().sum::<u8>();
            p.iter()
                .zip(x)
                .fold(binom(&slack, s0), |acc, (&k, v)| acc * binom(v, k))
        })
        .collect()
}
/// The round constants K_0..K_63 (FIPS 180-4 §4.2.2).
pub const K: [u32; 64] = zkrv_executor::precompile::SHA256_K;

/// SHA256 row (441 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sha256Cols<T> {
    /// The row index i in the group (0 boundary, 1..=16 rounds) as a point of the degree-2 encoder
    /// ([`ROW_CODE`]`[i]`; its selectors [`row_selectors`] are degree 2).
    pub code: [T; CODE_VARS],
    /// Degree-1 row flags (each the sum of its rows' selectors): the boundary row 0, the block rows 1..4,
    /// the memory rows 1..4, 16, 0, the a1 read's row 5, the range-check row 15.
    pub f_bound: T,
    pub f_block: T,
    pub f_mem: T,
    pub f_a1: T,
    pub f_r15: T,
    /// 1 on the rows of a call, 0 on padding; constant on a call's rows 1..16 and its boundary row.
    pub is_real: T,
    /// The call's memory timestamp `4 clk + 1`; constant like `is_real`.
    pub ts: T,
    /// The cell of the row's memory slot 0: `a1 / 8 + 2(i-1)` on block row i (1..4), a1 / 8 on row 5 (the
    /// a1 read), a0 / 8 (the state's first cell) on row 16, `a0 / 8 + 2` on the boundary row (the ECALL's
    /// a0 is `8 (cell - 2)` there); free (0) on the other rows.
    pub cell: T,
    /// H0..H7 before the call (words); constant like `is_real`.
    pub h: [T; 8],
    /// Bits of `A_{4i+j-3}` and `E_{4i+j-3}` on round row i. Boundary row: slots 1..3 hold the next
    /// call's input (`A_{j-3}`, `E_{j-3}`), slot 0 the new words H2 (`a`) and H3 (`e`) of its own call.
    pub a: [[T; 32]; 4],
    pub e: [[T; 32]; 4],
    /// Carries of slot j's `a` and `e` sums (range-checked on round rows).
    pub ca: [T; 4],
    pub ce: [T; 4],
    /// Bits of `W_{4(i-1)+j}` on round row i; the new words H4..H7 on the boundary row.
    pub w: [[T; 32]; 4],
    /// Carries of the schedule sums (range-checked on rows 5..16).
    pub cw: [T; 4],
    /// Schedule pipeline of slot j (for `W_t`, t = 4(i-1) + j, on row i): `s4 = W_{t-16} + σ0(W_{t-15})`
    /// on row i-3, `s8 = s4 + W_{t-7}` (j < 3; j = 3: `s8 = s4`) on row i-2, `s12 = s8` on row i-1.
    pub s4: [T; 4],
    pub s8: [T; 4],
    pub s12: [T; 4],
    /// Memory slots s = 0, 1 of the row (cells `cell + s`): old timestamps, LT32 witnesses, the old and the
    /// new words. Rows 1..4: the block (new = old); row 16: state cells 0, 1; boundary row: state cells
    /// 2, 3. Row 5: `ots[0], d0[0]` are the a1 read's (old timestamp and LT32 witness). Row 15 (no
    /// access): slot k's LT32 range-checks `ts - ots[k] - 1`, the new word Hk of row 16.
    pub ots: [T; 2],
    pub d0: [T; 2],
    pub old: [[T; 2]; 2],
    pub new: [[T; 2]; 2],
}
columns!(Sha256Cols, NUM_SHA256_COLS);

fn xor3(a: &Expr, b: &Expr, c: &Expr) -> Expr {
    let two = Expr::constant(2);
    let four = Expr::constant(4);
    a.clone() + b + c - (a.clone() * b + a.clone() * c + b.clone() * c) * two
        + a.clone() * b * c * four
}

fn xor2(a: &Expr, b: &Expr) -> Expr {
    a.clone() + b - a.clone() * b * Expr::constant(2)
}

/// `Σ_k 2^k bit(k)` over 32 bits.
fn word(bit: impl Fn(usize) -> Expr) -> Expr {
    (0..32).fold(Expr::zero(), |acc, k| acc + bit(k) * c(1 << k))
}

fn pack(bits: &[Expr; 32]) -> Expr {
    word(|k| bits[k].clone())
}

/// The little-endian memory word of a big-endian message word given by its bits: byte b of memory is
/// bits `8(3 - b)..` of the word.
fn pack_bswap(bits: &[Expr; 32]) -> Expr {
    (0..32).fold(Expr::zero(), |acc, k| {
        acc + bits[k].clone() * c(1 << ((k % 8) + 8 * (3 - k / 8)))
    })
}

/// `ROTR_r1 ^ ROTR_r2 ^ (ROTR_r3 or SHR_r3)` of `x` as a word (Σ0, Σ1, σ0, σ1 of FIPS 180-4 §4.1.2).
fn sigma(x: &[Expr; 32], r1: usize, r2: usize, r3: usize, shr: bool) -> Expr {
    word(|k| {
        let (p, q) = (&x[(k + r1) % 32], &x[(k + r2) % 32]);
        if !shr {
            xor3(p, q, &x[(k + r3) % 32])
        } else if k + r3 < 32 {
            xor3(p, q, &x[k + r3])
        } else {
            xor2(p, q)
        }
    })
}

/// The SHA256 AIR.
pub struct Sha256Air;

impl Air for Sha256Air {
    fn name(&self) -> &str {
        "SHA256"
    }
    /// A run without calls has no rows here: the table is absent (height 0, docs/stark.md §10). Its padding
    /// groups satisfy every constraint with every multiplicity 0, so absence proves what padding would.
    fn may_be_absent(&self) -> bool {
        true
    }
    fn width(&self) -> usize {
        NUM_SHA256_COLS
    }
    fn column_names(&self) -> Vec<String> {
        Sha256Cols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_SHA256_COLS).map(|i| b.main(i)).collect();
        let n: Vec<Expr> = (0..NUM_SHA256_COLS).map(|i| b.main_next(i)).collect();
        let (l, n) = (Sha256Cols::from_row(&m), Sha256Cols::from_row(&n));
        let one = Expr::one;
        let two32 = c(1 << 32);
        let first = b.is_first_row();
        let tr = b.is_transition();
        let sel = row_selectors(&l.code);
        let sel_next = row_selectors(&n.code);
        let bound = l.f_bound.clone();

        // 1. Row codes: the zero point (row 0) on the first row, advanced by every transition; the
        //    degree-1 flags are sums of selectors.
        for x in &l.code {
            b.assert_zero("first row is row 0", first.clone() * x);
        }
        for (v, x) in n.code.iter().enumerate() {
            let next = (0..SHA256_ROWS).fold(Expr::zero(), |acc, r| {
                acc + sel[r].clone() * c(ROW_CODE[(r + 1) % SHA256_ROWS][v] as u64)
            });
            b.assert_zero("row code advances", tr.clone() * (x.clone() - next));
        }
        let sum = |rows: &[usize]| rows.iter().fold(Expr::zero(), |acc, &r| acc + &sel[r]);
        for (name, flag, rows) in [
            ("row flag f_bound", &l.f_bound, &[0][..]),
            ("row flag f_block", &l.f_block, &[1, 2, 3, 4][..]),
            ("row flag f_mem", &l.f_mem, &[1, 2, 3, 4, 16, 0][..]),
            ("row flag f_a1", &l.f_a1, &[5][..]),
            ("row flag f_r15", &l.f_r15, &[15][..]),
        ] {
            b.assert_zero(name, flag.clone() - sum(rows));
        }

        // 2. Group constants: equal on a call's rows 1..16 and its boundary row (not across a boundary
        //    row to the next call's row 1).
        b.assert_bool("is_real bool", l.is_real.clone());
        let in_group = tr.clone() * (one() - &bound);
        let mut same = vec![("is_real", &l.is_real, &n.is_real), ("ts", &l.ts, &n.ts)];
        for k in 0..8 {
            same.push(("h", &l.h[k], &n.h[k]));
        }
        for (name, x, y) in same {
            b.assert_zero(
                format!("group constant {name}"),
                in_group.clone() * (y.clone() - x),
            );
        }
        b.assert_zero(
            "a cut group is padding",
            b.is_last_row() * &l.is_real * (one() - &bound),
        );
        // The first row is a boundary row with no call before it: a real one would receive an ECALL and
        // write state cells 2, 3 of a call whose rounds no row proves.
        b.assert_zero("the first row is padding", first.clone() * &l.is_real);

        // 3. Bits; the boundary row's slots 1..3 hold the next call's input state (slot 0's words, H3 and
        //    H7, enter round 0 from the next row's `h`, below).
        for bits in l.a.iter().chain(&l.e).chain(&l.w) {
            for x in bits {
                b.assert_bool("bit", x.clone());
            }
        }
        for j in 1..4 {
            b.assert_zero(
                "init a",
                bound.clone() * (n.h[3 - j].clone() - pack(&l.a[j])),
            );
            b.assert_zero(
                "init e",
                bound.clone() * (n.h[7 - j].clone() - pack(&l.e[j])),
            );
        }

        // 4. Rounds (every transition; next row slot j is round 4(i-1) + j of next row i).
        for j in 0..4 {
            // A_{t-m}: slot j-1-m of the next row, or slot j+3-m of this row.
            let av = |v: &[[Expr; 32]; 4], w: &[[Expr; 32]; 4], m: usize| -> [Expr; 32] {
                if j > m {
                    w[j - 1 - m].clone()
                } else {
                    v[j + 3 - m].clone()
                }
            };
            let (a, bb, cc, d) = (
                av(&l.a, &n.a, 0),
                av(&l.a, &n.a, 1),
                av(&l.a, &n.a, 2),
                av(&l.a, &n.a, 3),
            );
            let (e, f, g, h) = (
                av(&l.e, &n.e, 0),
                av(&l.e, &n.e, 1),
                av(&l.e, &n.e, 2),
                av(&l.e, &n.e, 3),
            );
            // Round 0 after a boundary row reads d = H3 and h = H7 of the next call's `h` (slot 0 of the
            // boundary row holds new words); both enter only as words, so the select is degree 2.
            let (d, h) = if j == 0 {
                let (pd, ph) = (pack(&d), pack(&h));
                (
                    pd.clone() + bound.clone() * (n.h[3].clone() - pd),
                    ph.clone() + bound.clone() * (n.h[7].clone() - ph),
                )
            } else {
                (pack(&d), pack(&h))
            };
            let sum1 = sigma(&e, 6, 11, 25, false);
            let ch = word(|k| e[k].clone() * &f[k] + (one() - &e[k]) * &g[k]);
            let sum0 = sigma(&a, 2, 13, 22, false);
            let maj = word(|k| {
                let (x, y, z) = (&a[k], &bb[k], &cc[k]);
                x.clone() * y + x.clone() * z + y.clone() * z - x.clone() * y * z * c(2)
            });
            let k_t = (1..=16).fold(Expr::zero(), |acc, i| {
                acc + sel_next[i].clone() * c(K[4 * (i - 1) + j] as u64)
            });
            let t1 = h + sum1 + ch + k_t + pack(&n.w[j]);
            b.assert_eq(
                "round e",
                pack(&n.e[j]) + n.ce[j].clone() * two32.clone(),
                d + t1.clone(),
            );
            b.assert_eq(
                "round a",
                pack(&n.a[j]) + n.ca[j].clone() * two32.clone(),
                t1 + sum0 + maj,
            );
        }

        // 5. Message schedule (every transition): W_t of next row i slot j, the local row holding
        //    `s12 = W_{t-16} + σ0(W_{t-15}) + W_{t-7}` (j < 3) and W_{t-7} itself (j = 3: slot 0).
        for j in 0..4 {
            let wt2 = if j >= 2 { &n.w[j - 2] } else { &l.w[j + 2] };
            let wt7 = if j == 3 { pack(&l.w[0]) } else { Expr::zero() };
            b.assert_eq(
                "schedule",
                pack(&n.w[j]) + n.cw[j].clone() * two32.clone(),
                sigma(wt2, 17, 19, 10, true) + wt7 + &l.s12[j],
            );
            let w1 = if j < 3 { &l.w[j + 1] } else { &n.w[0] };
            b.assert_eq(
                "s4",
                n.s4[j].clone(),
                pack(&l.w[j]) + sigma(w1, 7, 18, 3, true),
            );
            // W_{t-7} of the row two on (j < 3) sits in slot j + 1 of the row after this one.
            let wt7_next = if j < 3 {
                pack(&n.w[j + 1])
            } else {
                Expr::zero()
            };
            b.assert_eq("s8", n.s8[j].clone(), l.s4[j].clone() + wt7_next);
            b.assert_eq("s12", n.s12[j].clone(), l.s8[j].clone());
        }

        // 6. Digest: H + (a..h) of row 16 mod 2^32, each word's carry `(H + v - new) / 2^32` boolean (so
        //    `new`, a u32, is the sum mod 2^32). H2..H7 are bits of the boundary row (next: `a`, `e` slot 0,
        //    `w`), checked on 16 -> boundary; H0, H1 are row 15's range-checked `ts - ots[k] - 1`, checked on
        //    15 -> 16 and bound there to row 16's memory slot 0.
        let inv32 = inv_pow2(32);
        // v of the new word m (H0..H7 order) on row 16 `r`: `a` slot 3 - m for m < 4, `e` slot 7 - m.
        let v = |r: &Sha256Cols<Expr>, m: usize| {
            if m < 4 {
                pack(&r.a[3 - m])
            } else {
                pack(&r.e[7 - m])
            }
        };
        // The new word m >= 2 on the boundary row `d`.
        let digest_word = |d: &Sha256Cols<Expr>, m: usize| match m {
            2 => pack(&d.a[0]),
            3 => pack(&d.e[0]),
            _ => pack(&d.w[m - 4]),
        };
        for m in 2..8 {
            let carry = (l.h[m].clone() + v(l, m) - digest_word(n, m)) * inv32;
            b.assert_zero(
                "digest",
                n.f_bound.clone() * carry.clone() * (carry - one()),
            );
        }
        for k in 0..2 {
            let word_k = l.ts.clone() - &l.ots[k] - one();
            let carry = (n.h[k].clone() + v(n, k) - word_k.clone()) * inv32;
            b.assert_zero("digest", l.f_r15.clone() * carry.clone() * (carry - one()));
            b.assert_zero(
                "digest word of row 16",
                tr.clone() * &l.f_r15 * (n.new[0][k].clone() - word_k),
            );
        }

        // 7. Range checks of the carries.
        let rounds = one() - &bound;
        let late = rounds.clone() - &l.f_block;
        let m_round = l.is_real.clone() * rounds;
        let m_late = l.is_real.clone() * late;
        let pair = |x: &Expr, y: &Expr| vec![c(bus::BYTE_PAIR), x.clone(), y.clone(), Expr::zero()];
        for j in 0..4 {
            b.send(bus::BYTE, pair(&l.ca[j], &l.ce[j]), m_round.clone());
        }
        for j in [0, 2] {
            b.send(bus::BYTE, pair(&l.cw[j], &l.cw[j + 1]), m_late.clone());
        }

        // 8. Memory: two slots per row, cells `cell + s`, consumed with `old` at `ots` and emitted with
        //    `new` at ts (LT32(ots, ts)) on the block rows 1..4, row 16 and the boundary row; the row's
        //    words are bound to its slots here (degree 2), the tuples read only the slot columns (degree 1).
        //    The gates of row 16 (next: the boundary row) and of the block cells need no `is_transition`
        //    (which would make them degree 4): the table's last row has index `2^k - 1 ≡ 0, 1, 3, 7, 8,
        //    12, 14 or 15 (mod 17)`, never 16, and its next row (row 0) is no block row.
        let block_rows = l.f_block.clone();
        let d16 = sel[16].clone();
        b.assert_zero(
            "cell of the block rows",
            n.f_block.clone() * (n.cell.clone() - &l.cell - c(2)) * &l.f_block,
        );
        b.assert_zero(
            "cell of the a1 read",
            n.f_a1.clone() * (n.cell.clone() - &l.cell + c(6)),
        );
        b.assert_zero(
            "cell of state cells 2, 3",
            d16.clone() * (n.cell.clone() - &l.cell - c(2)),
        );
        for s in 0..2 {
            for k in 0..2 {
                let w = &l.w[2 * s + k];
                b.assert_zero(
                    "memory block word",
                    block_rows.clone() * (l.old[s][k].clone() - pack_bswap(w)),
                );
                b.assert_zero(
                    "memory block word",
                    block_rows.clone() * (l.new[s][k].clone() - &l.old[s][k]),
                );
                let (m16, mb) = (2 * s + k, 4 + 2 * s + k);
                b.assert_zero(
                    "memory state old",
                    d16.clone() * (l.old[s][k].clone() - &l.h[m16]),
                );
                b.assert_zero(
                    "memory state old",
                    bound.clone() * (l.old[s][k].clone() - &l.h[mb]),
                );
                if s == 1 {
                    b.assert_zero(
                        "memory state new",
                        d16.clone() * (l.new[s][k].clone() - digest_word(n, m16)),
                    );
                }
                b.assert_zero(
                    "memory state new",
                    bound.clone() * (l.new[s][k].clone() - digest_word(l, mb)),
                );
            }
        }
        let at_a1 = l.is_real.clone() * &l.f_a1;
        let at_mem = l.is_real.clone() * &l.f_mem;
        // Slot 0's LT32 also serves the a1 read on row 5; both slots' range-check H0, H1 on row 15.
        let at_lt = [
            l.is_real.clone() * (l.f_mem.clone() + &l.f_a1 + &l.f_r15),
            l.is_real.clone() * (l.f_mem.clone() + &l.f_r15),
        ];
        for (s, lt_mult) in at_lt.iter().enumerate() {
            let cell = l.cell.clone() + c(s as u64);
            b.receive(
                bus::MEM_TOKEN,
                vec![
                    cell.clone(),
                    l.ots[s].clone(),
                    l.old[s][0].clone(),
                    l.old[s][1].clone(),
                ],
                at_mem.clone(),
            );
            b.send(
                bus::MEM_TOKEN,
                vec![cell, l.ts.clone(), l.new[s][0].clone(), l.new[s][1].clone()],
                at_mem.clone(),
            );
            lt32(b, &l.ots[s], &l.ts, &l.d0[s], lt_mult);
        }
        b.receive(
            bus::ECALL,
            vec![
                l.ts.clone(),
                c(SHA256_ECALL & 0xffff_ffff),
                c(SHA256_ECALL >> 32),
                (l.cell.clone() - c(2)) * c(8),
                Expr::zero(),
                Expr::zero(),
                Expr::zero(),
            ],
            l.is_real.clone() * &bound,
        );
        let a1 = l.cell.clone() * c(8);
        b.receive(
            bus::REG_TOKEN,
            vec![c(11), l.ots[0].clone(), a1.clone(), Expr::zero()],
            at_a1.clone(),
        );
        b.send(
            bus::REG_TOKEN,
            vec![c(11), l.ts.clone(), a1, Expr::zero()],
            at_a1,
        );
    }
}

/// One `sha256_compress` call as the fill needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sha256Call {
    /// The call's memory timestamp `4 clk + 1`.
    pub ts: u64,
    /// a0 and a1: the state's and the block's byte addresses (8-aligned, disjoint).
    pub state_ptr: u64,
    pub block_ptr: u64,
    /// H0..H7 before the call.
    pub state: [u32; 8],
    /// The block as in memory (message order).
    pub block: [u8; 64],
    /// Timestamps of the state's 4 cells, the block's 8 cells and of a1 before the call (each < ts).
    pub state_old_ts: [u64; 4],
    pub block_old_ts: [u64; 8],
    pub a1_old_ts: u64,
}

/// Number of u64 in [`constants_u64`]: the 17 x 5 row codes, the 64 round constants.
pub const NUM_CONSTANTS: usize = SHA256_ROWS * CODE_VARS + 64;

/// The fill's constants in the order a device fill reads them (one definition: [`ROW_CODE`], [`K`]):
/// `ROW_CODE[i][v]` at `5 i + v`, then `K[t]` at `85 + t`.
pub fn constants_u64() -> Vec<u64> {
    let mut v: Vec<u64> = ROW_CODE.iter().flatten().map(|&x| x as u64).collect();
    v.extend(K.iter().map(|&k| k as u64));
    debug_assert_eq!(v.len(), NUM_CONSTANTS);
    v
}

/// Height of the SHA256 trace for `calls` calls: 0 (absent) without calls, else the next power of two >=
/// max(17 calls + 1, min_height) (the first row is a padding boundary row; call k has rows 17k + 1 ..=
/// 17k + 17, its boundary row last).
pub fn sha256_height(calls: usize, min_height: usize) -> usize {
    if calls == 0 {
        return 0;
    }
    (calls * SHA256_ROWS + 1)
        .next_power_of_two()
        .max(min_height)
}

fn ssig(x: u32, r1: u32, r2: u32, s: u32) -> u32 {
    x.rotate_right(r1) ^ x.rotate_right(r2) ^ (x >> s)
}

fn bsig(x: u32, r1: u32, r2: u32, r3: u32) -> u32 {
    x.rotate_right(r1) ^ x.rotate_right(r2) ^ x.rotate_right(r3)
}

/// The words of one call: `a`, `e`, `w` slots of its round rows 1..16 (`[0]`: the input state `A_{j-3}`,
/// `E_{j-3}` as a boundary row holds it in slots 1..3), and the new state.
struct GroupWords {
    a: [[u32; 4]; SHA256_ROWS],
    e: [[u32; 4]; SHA256_ROWS],
    w: [[u32; 4]; SHA256_ROWS],
    out: [u32; 8],
}

fn group_words(h: &[u32; 8], block: &[u8; 64]) -> GroupWords {
    let mut w = [0u32; 64];
    for (t, x) in w.iter_mut().enumerate().take(16) {
        *x = u32::from_be_bytes(block[4 * t..4 * t + 4].try_into().expect("4 bytes"));
    }
    for t in 16..64 {
        w[t] = ssig(w[t - 2], 17, 19, 10)
            .wrapping_add(w[t - 7])
            .wrapping_add(ssig(w[t - 15], 7, 18, 3))
            .wrapping_add(w[t - 16]);
    }
    // av[t + 3] = A_t, t = -3..=64.
    let mut av = [0u32; 68];
    let mut ev = [0u32; 68];
    for m in 0..4 {
        av[3 - m] = h[m];
        ev[3 - m] = h[4 + m];
    }
    for t in 0..64 {
        let (a, bb, cc, d) = (av[t + 3], av[t + 2], av[t + 1], av[t]);
        let (e, f, g, hh) = (ev[t + 3], ev[t + 2], ev[t + 1], ev[t]);
        let t1 = hh
            .wrapping_add(bsig(e, 6, 11, 25))
            .wrapping_add((e & f) ^ (!e & g))
            .wrapping_add(K[t])
            .wrapping_add(w[t]);
        let t2 = bsig(a, 2, 13, 22).wrapping_add((a & bb) ^ (a & cc) ^ (bb & cc));
        ev[t + 4] = d.wrapping_add(t1);
        av[t + 4] = t1.wrapping_add(t2);
    }
    let mut g = GroupWords {
        a: [[0; 4]; SHA256_ROWS],
        e: [[0; 4]; SHA256_ROWS],
        w: [[0; 4]; SHA256_ROWS],
        out: [0; 8],
    };
    for i in 0..SHA256_ROWS {
        for j in 0..4 {
            // A_{4i+j-3} = av[4i + j].
            g.a[i][j] = av[4 * i + j];
            g.e[i][j] = ev[4 * i + j];
            if i >= 1 {
                g.w[i][j] = w[4 * (i - 1) + j];
            }
        }
    }
    for j in 0..4 {
        g.out[3 - j] = h[3 - j].wrapping_add(av[64 + j]);
        g.out[7 - j] = h[7 - j].wrapping_add(ev[64 + j]);
    }
    g
}

/// The new word m (H0..H7 order) from a row 16's `h` and slot words (`(h + v) mod 2^32`, v: `a` slot
/// 3 - m for m < 4, `e` slot 7 - m).
fn new_word(h: &[u32; 8], a: &[u32; 4], e: &[u32; 4], m: usize) -> u32 {
    h[m].wrapping_add(if m < 4 { a[3 - m] } else { e[7 - m] })
}

/// The two memory slots of a row: slot 0's cell, the old timestamps, the old and the new words.
struct Slots {
    cell: u64,
    old_ts: [u64; 2],
    old: [[F; 2]; 2],
    new: [[F; 2]; 2],
}

/// The SHA256 trace (`n x 441`, n = [`sha256_height`]): a padding boundary row, 17 rows per call (rounds
/// 1..16, then its boundary row), then padding (the zero state and block, `is_real = 0`; the last group cut
/// at the table's end), adding the calls' BYTE and LT32 lookups.
///
/// # Panics
/// If a call's old timestamps are not below its ts (the memory walk guarantees it: a fill bug).
pub fn sha256_trace(
    calls: &[Sha256Call],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = sha256_height(calls.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_SHA256_COLS];
    let f = F::from_u64;
    let bits = |x: u32| -> [F; 32] { std::array::from_fn(|k| f(((x >> k) & 1) as u64)) };
    let pad_call = Sha256Call {
        ts: 0,
        state_ptr: 0,
        block_ptr: 0,
        state: [0; 8],
        block: [0; 64],
        state_old_ts: [0; 4],
        block_old_ts: [0; 8],
        a1_old_ts: 0,
    };
    let pad_words = group_words(&pad_call.state, &pad_call.block);
    let words: Vec<GroupWords> = calls
        .iter()
        .map(|c| group_words(&c.state, &c.block))
        .collect();
    let gw = |g: usize| words.get(g).unwrap_or(&pad_words);
    // The call of row r (its rows 1..16 and its boundary row), None for padding.
    let owner = |r: usize| {
        let (g, i) = (r / SHA256_ROWS, r % SHA256_ROWS);
        let k = if i == 0 { g.checked_sub(1)? } else { g };
        calls.get(k).map(|c| (k, c))
    };
    // Slot words and `h` of every row, for the relations between rows.
    let mut aw = vec![[0u32; 4]; n];
    let mut ew = vec![[0u32; 4]; n];
    let mut ww = vec![[0u32; 4]; n];
    let mut hw = vec![[0u32; 8]; n];
    for r in 0..n {
        let (g, i) = (r / SHA256_ROWS, r % SHA256_ROWS);
        hw[r] = owner(r).map_or([0; 8], |(_, c)| c.state);
        if i >= 1 {
            (aw[r], ew[r], ww[r]) = (gw(g).a[i], gw(g).e[i], gw(g).w[i]);
        } else {
            // Slots 1..3: the input of the call whose rounds follow (padding past the calls).
            (aw[r], ew[r]) = (gw(g).a[0], gw(g).e[0]);
        }
    }
    // A boundary row's new words: from the row before (row 16 of its call; row 0: the table's last row).
    for r in (SHA256_ROWS..n)
        .step_by(SHA256_ROWS)
        .chain((n > 0).then_some(0))
    {
        let p = (r + n - 1) % n;
        let (h, a, e) = (hw[p], aw[p], ew[p]);
        aw[r][0] = new_word(&h, &a, &e, 2);
        ew[r][0] = new_word(&h, &a, &e, 3);
        ww[r] = std::array::from_fn(|k| new_word(&h, &a, &e, 4 + k));
    }
    let word = |b: &[u8]| f(u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64);
    let pair = |v: &[u32], k: usize| [f(v[2 * k] as u64), f(v[2 * k + 1] as u64)];
    for r in 0..n {
        let i = r % SHA256_ROWS;
        let (real, call) = match owner(r) {
            Some((_, c)) => (true, c),
            None => (false, &pad_call),
        };
        let row =
            Sha256Cols::from_row_mut(&mut values[r * NUM_SHA256_COLS..(r + 1) * NUM_SHA256_COLS]);
        row.code = ROW_CODE[i].map(|x| f(x as u64));
        row.f_bound = F::from_bool(i == 0);
        row.f_block = F::from_bool((1..=4).contains(&i));
        row.f_mem = F::from_bool(matches!(i, 0..=4 | 16));
        row.f_a1 = F::from_bool(i == 5);
        row.f_r15 = F::from_bool(i == 15);
        row.is_real = F::from_bool(real);
        row.ts = f(call.ts);
        row.h = hw[r].map(|x| f(x as u64));
        row.a = aw[r].map(bits);
        row.e = ew[r].map(bits);
        row.w = ww[r].map(bits);
        let (block_cell, state_cell) = (call.block_ptr / 8, call.state_ptr / 8);
        // The row's memory slots: (slot 0's cell, old timestamps, old and new words).
        let slots: Option<Slots> = match i {
            1..=4 => {
                let c0 = 2 * (i - 1);
                let old: [[F; 2]; 2] = std::array::from_fn(|s| {
                    let b = &call.block[8 * (c0 + s)..8 * (c0 + s + 1)];
                    [word(&b[..4]), word(&b[4..])]
                });
                let ts = [call.block_old_ts[c0], call.block_old_ts[c0 + 1]];
                Some(Slots {
                    cell: block_cell + c0 as u64,
                    old_ts: ts,
                    old,
                    new: old,
                })
            }
            16 => {
                let out = &gw(r / SHA256_ROWS).out;
                let ts = [call.state_old_ts[0], call.state_old_ts[1]];
                let (old, new) = (
                    std::array::from_fn(|s| pair(&call.state, s)),
                    std::array::from_fn(|s| pair(out, s)),
                );
                Some(Slots {
                    cell: state_cell,
                    old_ts: ts,
                    old,
                    new,
                })
            }
            0 => {
                let ts = [call.state_old_ts[2], call.state_old_ts[3]];
                let (old, new) = (
                    std::array::from_fn(|s| pair(&hw[r], 2 + s)),
                    std::array::from_fn(|s| pair(&ww[r], s)),
                );
                Some(Slots {
                    cell: state_cell + 2,
                    old_ts: ts,
                    old,
                    new,
                })
            }
            _ => None,
        };
        if let Some(m) = slots {
            (row.cell, row.old, row.new) = (f(m.cell), m.old, m.new);
            if real {
                row.ots = m.old_ts.map(f);
                row.d0 = m.old_ts.map(|t| f(lookups.lt32(t, call.ts)));
            }
        }
        if i == 5 {
            row.cell = f(block_cell);
            if real {
                row.ots[0] = f(call.a1_old_ts);
                row.d0[0] = f(lookups.lt32(call.a1_old_ts, call.ts));
            }
        }
        if i == 15 {
            // H0, H1 of the next row (row 16; at the table's end, row 0) as `ts - ots[k] - 1`.
            let q = (r + 1) % n;
            for k in 0..2 {
                let u = new_word(&hw[q], &aw[q], &ew[q], k) as u64;
                row.ots[k] = f(call.ts) - F::ONE - f(u);
                row.d0[k] = f(u & 0xffff);
                if real {
                    lookups.u16(u & 0xffff);
                    lookups.u16(u >> 16);
                }
            }
        }
    }
    // The relations between rows (local r, next r + 1, cyclic): helpers first, then the carries.
    let prev = |r: usize| (r + n - 1) % n;
    let s4: Vec<[u64; 4]> = (0..n)
        .map(|r| {
            let p = prev(r);
            std::array::from_fn(|j| {
                let w1 = if j < 3 { ww[p][j + 1] } else { ww[r][0] };
                ww[p][j] as u64 + ssig(w1, 7, 18, 3) as u64
            })
        })
        .collect();
    // s8 of row r: s4 of the row before plus (j < 3) the word of slot j + 1 of row r.
    let s8: Vec<[u64; 4]> = (0..n)
        .map(|r| {
            std::array::from_fn(|j| s4[prev(r)][j] + if j < 3 { ww[r][j + 1] as u64 } else { 0 })
        })
        .collect();
    let inv = inv_pow2(32);
    for r in 0..n {
        let p = prev(r);
        let (i, ip) = (r % SHA256_ROWS, p % SHA256_ROWS);
        // This row's helpers, and the local row's s12 (which the schedule reads).
        let chunk = &mut values[r * NUM_SHA256_COLS..(r + 1) * NUM_SHA256_COLS];
        let row = Sha256Cols::from_row_mut(chunk);
        row.s4 = s4[r].map(f);
        row.s8 = s8[r].map(f);
        row.s12 = s8[p].map(f);
        let s12_local = s8[prev(p)];
        // Carries of row r from (local p, next r); field division off the round rows.
        let carry = |rhs: u64, lhs: u32| (f(rhs) - f(lhs as u64)) * inv;
        let round_row = i >= 1;
        let mut sum_ca = [0u64; 4];
        let mut sum_ce = [0u64; 4];
        for j in 0..4 {
            let sel = |v: &Vec<[u32; 4]>, m: usize| {
                if j > m {
                    v[r][j - 1 - m]
                } else {
                    v[p][j + 3 - m]
                }
            };
            let (a, bb, cc, mut d) = (sel(&aw, 0), sel(&aw, 1), sel(&aw, 2), sel(&aw, 3));
            let (e, ff, g, mut h) = (sel(&ew, 0), sel(&ew, 1), sel(&ew, 2), sel(&ew, 3));
            if ip == 0 && j == 0 {
                // After a boundary row, round 0's d and h are the next row's H3 and H7.
                (d, h) = (hw[r][3], hw[r][7]);
            }
            let k_t = if round_row { K[4 * (i - 1) + j] } else { 0 };
            let t1 = h as u64
                + bsig(e, 6, 11, 25) as u64
                + ((e & ff) ^ (!e & g)) as u64
                + k_t as u64
                + ww[r][j] as u64;
            let t2 = bsig(a, 2, 13, 22) as u64 + ((a & bb) ^ (a & cc) ^ (bb & cc)) as u64;
            sum_ce[j] = d as u64 + t1;
            sum_ca[j] = t1 + t2;
            row.ce[j] = carry(sum_ce[j], ew[r][j]);
            row.ca[j] = carry(sum_ca[j], aw[r][j]);
            let wt2 = if j >= 2 { ww[r][j - 2] } else { ww[p][j + 2] };
            let wt7 = if j == 3 { ww[p][0] as u64 } else { 0 };
            let sum_w = ssig(wt2, 17, 19, 10) as u64 + wt7 + s12_local[j];
            row.cw[j] = carry(sum_w, ww[r][j]);
        }
        let is_real = row.is_real == F::ONE;
        if is_real && round_row {
            for j in 0..4 {
                lookups.pair(sum_ca[j] >> 32, sum_ce[j] >> 32);
            }
        }
        if is_real && i >= 5 {
            for j in [0, 2] {
                let cw = |j: usize| {
                    let wt2 = if j >= 2 { ww[r][j - 2] } else { ww[p][j + 2] };
                    let wt7 = if j == 3 { ww[p][0] as u64 } else { 0 };
                    (ssig(wt2, 17, 19, 10) as u64 + wt7 + s12_local[j]) >> 32
                };
                lookups.pair(cw(j), cw(j + 1));
            }
        }
    }
    RowMajorMatrix::new(values, NUM_SHA256_COLS)
}

/// SHA-256 compression of `state` by `block` (FIPS 180-4 §6.2.2 steps 1-4), the table's reference.
pub fn sha256_compress(state: &[u32; 8], block: &[u8; 64]) -> [u32; 8] {
    group_words(state, block).out
}
