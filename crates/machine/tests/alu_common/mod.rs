//! Shared harness of the `alu_*` tests: the MUL, SHIFT, POW2, BYTEWISE and BITWISE tables proven together,
//! with the ALU requests a CPU would send given as public interactions (`Send ALU[op, a, b, r]`, one per
//! distinct claim, multiplicity = count), so that every bus balances without a CPU table.
#![allow(dead_code)]

use std::collections::BTreeMap;

use zkrv_machine::bus::{self, alu};
use zkrv_machine::tables::bitwise::{bitwise_preprocessed, BitwiseAir, LookupKind, Lookups};
use zkrv_machine::tables::bytewise::{bytewise_trace, BytewiseAir};
use zkrv_machine::tables::mul::{mul_trace, MulAir, MulOp, MulRequests};
use zkrv_machine::tables::shift::{
    pow2_preprocessed, shift_trace, Pow2Air, ShiftAir, ShiftCols, ShiftOp, ShiftRequests,
    NUM_SHIFT_COLS,
};
use zkrv_stark::air::{compile_all, Air, AirBuilder, Direction};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::logup::PublicInteraction;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;
use zkrv_stark::{check, StarkConfig};

/// Table order.
pub const MUL: usize = 0;
pub const SHIFT: usize = 1;
pub const POW2: usize = 2;
pub const BYTEWISE: usize = 3;
pub const BITWISE: usize = 4;
const MIN_HEIGHT: usize = 8;

pub fn airs() -> Vec<&'static dyn Air> {
    vec![&MulAir, &ShiftAir, &Pow2Air, &BytewiseAir, &BitwiseAir]
}

pub fn preprocessed() -> Vec<Option<RowMajorMatrix>> {
    vec![
        None,
        None,
        Some(pow2_preprocessed(zkrv_machine::MIN_HEIGHT)),
        None,
        Some(bitwise_preprocessed()),
    ]
}

/// Edge operands: 0, ±1, 2, the i64 extremes, 2^31 / 2^32 boundaries, 16-bit boundaries.
pub const EDGES: [u64; 16] = [
    0,
    1,
    2,
    u64::MAX,
    u64::MAX - 1,
    i64::MIN as u64,
    i64::MAX as u64,
    (i64::MIN as u64) + 1,
    1 << 31,
    (1 << 31) - 1,
    1 << 32,
    (1 << 32) - 1,
    (1 << 32) + 1,
    0xffff,
    0x1_0000,
    0xffff_ffff_8000_0000,
];

/// SplitMix64: a tiny seeded generator (the crate has no `rand` dependency).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A random operand: half the time uniform, else an edge value or a small one.
    pub fn operand(&mut self) -> u64 {
        match self.below(4) {
            0 | 1 => self.next(),
            2 => EDGES[self.below(EDGES.len() as u64) as usize],
            _ => self.below(300).wrapping_sub(150),
        }
    }
}

/// A seed from `ALU_SEED` or the clock, printed.
pub fn seed(test: &str) -> u64 {
    let s = std::env::var("ALU_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    println!("{test}: seed {s} (rerun with ALU_SEED={s})");
    s
}

/// The ALU requests of a test (ALU op code, a, b), in any order, duplicates allowed.
#[derive(Clone, Debug, Default)]
pub struct Ops(pub Vec<(u64, u64, u64)>);

/// The reference result of an ALU op (Rust wrapping / widening arithmetic).
pub fn reference(op: u64, a: u64, b: u64) -> u64 {
    if let Some(m) = MulOp::from_alu(op) {
        let r = match m {
            MulOp::Mul => a.wrapping_mul(b),
            MulOp::Mulh => (((a as i64 as i128) * (b as i64 as i128)) >> 64) as u64,
            MulOp::Mulhsu => (((a as i64 as i128) * (b as i128)) >> 64) as u64,
            MulOp::Mulhu => (((a as u128) * (b as u128)) >> 64) as u64,
        };
        assert_eq!(r, m.eval(a, b));
        return r;
    }
    if let Some(s) = ShiftOp::from_alu(op) {
        let r = match op {
            alu::SLL => a.wrapping_shl(b as u32),
            alu::SRL => a.wrapping_shr(b as u32),
            alu::SRA => (a as i64).wrapping_shr(b as u32) as u64,
            alu::SLL5 => a.wrapping_shl((b & 31) as u32),
            alu::SRL5 => a.wrapping_shr((b & 31) as u32),
            _ => (a as i64).wrapping_shr((b & 31) as u32) as u64,
        };
        assert_eq!(r, s.eval(a, b));
        return r;
    }
    match op {
        alu::AND => a & b,
        alu::OR => a | b,
        alu::XOR => a ^ b,
        _ => panic!("op {op} not an ALU op of these tables"),
    }
}

/// A witness of the five tables plus the public ALU claims.
#[derive(Clone)]
pub struct W {
    pub traces: Vec<RowMajorMatrix>,
    pub public: Vec<PublicInteraction>,
    /// The MUL requests the public claims make (SHIFT adds its own in [`rebuild_mul`]).
    pub mul_public: MulRequests,
}

fn words(x: u64) -> [u64; 2] {
    [x & 0xffff_ffff, x >> 32]
}

pub fn alu_tuple(op: u64, a: u64, b: u64, r: u64) -> Vec<F> {
    let [a0, a1] = words(a);
    let [b0, b1] = words(b);
    let [r0, r1] = words(r);
    [op, a0, a1, b0, b1, r0, r1].map(F::from_u64).to_vec()
}

/// The honest witness of `ops`.
pub fn witness(ops: &Ops) -> W {
    let mut claims: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
    for &(op, a, b) in &ops.0 {
        *claims.entry((op, a, b)).or_default() += 1;
    }
    let mut mul = MulRequests::new();
    let mut shift = ShiftRequests::new();
    let mut bw: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
    let mut public = Vec::new();
    for (&(op, a, b), &n) in &claims {
        if let Some(m) = MulOp::from_alu(op) {
            mul.add_n(m, a, b, n);
        } else if let Some(s) = ShiftOp::from_alu(op) {
            *shift.entry((s, a, b)).or_default() += n;
        } else {
            *bw.entry((op, a, b)).or_default() += n;
        }
        public.push(PublicInteraction {
            bus: bus::ALU,
            values: alu_tuple(op, a, b, reference(op, a, b)),
            multiplicity: F::from_u64(n),
            direction: Direction::Send,
        });
    }
    let mut lookups = Lookups::new();
    let mut mul_all = mul.clone();
    let st = shift_trace(&shift, MIN_HEIGHT, &mut lookups, &mut mul_all);
    let mt = mul_trace(&mul_all, MIN_HEIGHT, &mut lookups);
    let bt = bytewise_trace(&bw, MIN_HEIGHT, &mut lookups);
    let w = W {
        traces: vec![mt, st.shift, st.pow2, bt, lookups.trace()],
        public,
        mul_public: mul,
    };
    // The fill's lookup histogram is what the sends make.
    let mut w2 = w.clone();
    recount(&mut w2);
    assert!(w2.traces == w.traces, "fill lookups differ from a recount");
    w
}

/// Replace the public claim `op(a, b) = _` by `op(a, b) = r`.
pub fn set_claim(w: &mut W, op: u64, a: u64, b: u64, r: u64) {
    let key = &alu_tuple(op, a, b, 0)[..5];
    let p = w
        .public
        .iter_mut()
        .find(|p| &p.values[..5] == key)
        .expect("no such claim");
    p.values = alu_tuple(op, a, b, r);
}

/// The row of `table` whose column `col0`.. hold `vals`.
pub fn find_row(w: &W, table: usize, cols: &[usize], vals: &[u64]) -> usize {
    let t = &w.traces[table];
    (0..t.height())
        .find(|&r| {
            cols.iter()
                .zip(vals)
                .all(|(&c, &v)| t.row(r)[c] == F::from_u64(v))
        })
        .expect("row not found")
}

fn u(x: F) -> u64 {
    x.as_canonical_u64()
}

/// Recompute the MUL trace from the public MUL claims and what the SHIFT rows send (as a prover that edited
/// SHIFT would), then [`recount`].
pub fn rebuild_mul(w: &mut W) {
    let mut mul = w.mul_public.clone();
    let s = &w.traces[SHIFT];
    for r in 0..s.height() {
        let row = ShiftCols::from_row(s.row(r));
        let (a, x) = (
            u(row.a[0]) | (u(row.a[1]) << 32),
            u(row.x[0]) | (u(row.x[1]) << 32),
        );
        // A row whose op is not a MUL op sends a request nobody answers (left unbalanced).
        mul.add_alu(u(row.mop), a, x);
    }
    let mut scratch = Lookups::new();
    w.traces[MUL] = mul_trace(&mul, MIN_HEIGHT, &mut scratch);
    recount(w);
}

/// Recompute the POW2 counters and the BITWISE counters from what the other tables send, as any prover
/// could after editing a trace (tuples that are not in the lookup tables stay uncounted, so the bus stays
/// unbalanced). MUL is left as it is.
pub fn recount(w: &mut W) {
    recount_with(&airs(), &preprocessed(), w)
}

/// [`recount`] for another set of tables in the same order (a variant AIR in a test).
pub fn recount_with(airs: &[&dyn Air], prep: &[Option<RowMajorMatrix>], w: &mut W) {
    let pow2 = prep[POW2].as_ref().unwrap();
    let mut pow2_m = vec![0u64; pow2.height()];
    let mut lookups = Lookups::new();
    for (t, air) in airs.iter().enumerate() {
        if t == BITWISE || t == POW2 {
            continue;
        }
        let mut b = AirBuilder::new(air.width(), air.preprocessed_width());
        air.eval(&mut b);
        let main = &w.traces[t];
        for row in 0..main.height() {
            let leaf = |e: &Expr| -> F {
                match e {
                    Expr::Main { col, next: false } => main.row(row)[*col],
                    _ => panic!("unexpected leaf"),
                }
            };
            for it in &b.interactions {
                if it.direction != Direction::Send {
                    continue;
                }
                let m = u(it.multiplicity.eval(&leaf));
                let v: Vec<F> = it.values.iter().map(|e| e.eval(&leaf)).collect();
                let vu: Vec<u64> = v.iter().map(|&x| u(x)).collect();
                if it.bus == bus::POW2 {
                    if let Some(r) = (0..pow2.height()).find(|&r| pow2.row(r) == v.as_slice()) {
                        pow2_m[r] += m;
                    }
                    continue;
                }
                let (kind, x) = match (it.bus, vu.as_slice()) {
                    (bus::RANGE16, [x]) => (LookupKind::U16, *x),
                    (bus::MSB16, [x, s]) if *x < 1 << 16 && *s == *x >> 15 => {
                        (LookupKind::Msb16, *x)
                    }
                    (bus::BYTE, [op, a, b, c]) if *a < 256 && *b < 256 => {
                        let kind = match *op {
                            bus::BYTE_AND if *c == a & b => LookupKind::And,
                            bus::BYTE_OR if *c == a | b => LookupKind::Or,
                            bus::BYTE_XOR if *c == a ^ b => LookupKind::Xor,
                            bus::BYTE_PAIR if *c == 0 => LookupKind::Pair,
                            bus::BYTE_MSB if *c == a >> 7 => LookupKind::Msb8,
                            _ => continue,
                        };
                        (kind, (a << 8) | b)
                    }
                    _ => continue,
                };
                if x < 1 << 16 && m < 1 << 20 {
                    for _ in 0..m {
                        lookups.add(kind, x);
                    }
                }
            }
        }
    }
    w.traces[BITWISE] = lookups.trace();
    w.traces[POW2] = RowMajorMatrix::new(pow2_m.into_iter().map(F::from_u64).collect(), 1);
}

pub fn config(debug_check: bool) -> StarkConfig {
    StarkConfig {
        debug_check,
        ..StarkConfig::dev()
    }
}

/// The debug checker on the witness.
pub fn check(w: &W) -> Result<(), check::CheckError> {
    check_with(&airs(), &preprocessed(), w)
}

/// [`check`] for another set of tables in the same order.
pub fn check_with(
    airs: &[&dyn Air],
    prep: &[Option<RowMajorMatrix>],
    w: &W,
) -> Result<(), check::CheckError> {
    let c = config(true);
    let compiled = compile_all(airs, c.max_constraint_degree()).unwrap();
    check::check_traces(
        &compiled,
        &w.traces,
        prep,
        &w.public,
        c.log_max_multiplicity,
    )
}

const STATEMENT: &[u8] = b"zkrv alu tables test";

/// Prove (with or without the debug checker) and verify.
pub fn prove_verify(w: &W, debug_check: bool) -> Result<(), String> {
    let c = config(debug_check);
    let airs = airs();
    let pre = zkrv_stark::preprocess(&airs, preprocessed()).map_err(|e| e.to_string())?;
    let proof = zkrv_stark::prove(&c, &airs, &pre, w.traces.clone(), &w.public, STATEMENT)
        .map_err(|e| format!("prove: {e}"))?;
    zkrv_stark::verify(&c, 0, &airs, &pre, &w.public, STATEMENT, &proof)
        .map_err(|e| format!("verify: {e}"))
}

/// Expect `w` rejected: by the debug checker, and (checker off) by the prover or the verifier.
pub fn expect_rejected(w: &W, what: &str) {
    let checked = check(w);
    println!("{what}: checker: {checked:?}");
    assert!(checked.is_err(), "{what}: debug checker accepted");
    let proved = prove_verify(w, false);
    println!("{what}: prove/verify: {proved:?}");
    assert!(proved.is_err(), "{what}: verifier accepted");
}

/// Expect `w` rejected by the debug checker only (cheap: for the randomized mutations and the secondary
/// tamper cases; every table also has wrong-result cases that go through [`expect_rejected`]).
pub fn expect_check_rejects(w: &W, what: &str) {
    let checked = check(w);
    assert!(checked.is_err(), "{what}: debug checker accepted");
    if what.contains(' ') && !what.contains("+=") {
        println!("{what}: checker: {checked:?}");
    }
}

/// Shift row column indices.
pub fn shift_cols() -> ShiftCols<usize> {
    ShiftCols::indices()
}

pub const SHIFT_WIDTH: usize = NUM_SHIFT_COLS;
