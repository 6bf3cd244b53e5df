//! DVRM (DIV/DIVU/REM/REMU) and CPU32 (W instructions) tables: completeness on edge and random operands
//! (debug checker, prove + verify), soundness against forged results (division by zero, remainder too
//! large, W result not sign-extended, limb out of range) and randomized witness-cell mutation.
//!
//! The tables run in a small machine: the CPU's ALU requests are public Sends (the "claims"), DVRM and
//! CPU32 are the tables under test, and their requests go to the real LT, SHIFT (+ POW2) and MUL tables
//! (`tables/lt.rs`, `shift.rs`, `mul.rs`). The RANGE16/MSB16/BYTE lookups go to the real BITWISE table or,
//! in the faster mode the mutation tests use, to public Receives of exactly the *valid* lookups (a table of
//! true facts, like BITWISE). After a witness is tampered with, everything downstream of the
//! tampered table is rebuilt from what that table actually requests, as a cheating prover would: so a
//! rejection comes from the tables under test, not from stale bookkeeping.

use std::collections::BTreeMap;

use zkrv_machine::bus::{self, alu};
use zkrv_machine::tables::bitwise::{bitwise_preprocessed, BitwiseAir, LookupKind, Lookups};
use zkrv_machine::tables::cpu32::{cpu32_trace, w_result, Cpu32Air, Cpu32Cols, NUM_CPU32_COLS};
use zkrv_machine::tables::dvrm::{
    add_dvrm_request, divrem, dvrm_row_with, dvrm_trace, AluFact, DvrmAir, DvrmCols, DvrmRequests,
    NUM_DVRM_COLS,
};
use zkrv_machine::tables::lt::{lt_trace, LtAir};
use zkrv_machine::tables::mul::{mul_trace, MulAir, MulOp, MulRequests};
use zkrv_machine::tables::shift::{
    pow2_preprocessed, shift_trace, Pow2Air, ShiftAir, ShiftOp, ShiftRequests,
};
use zkrv_stark::air::{compile_all, Air, AirBuilder, Direction};
use zkrv_stark::check::check_traces;
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::logup::PublicInteraction;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;
use zkrv_stark::{preprocess, StarkConfig};

// ---------------------------------------------------------------------------------------------------------
// Reference semantics: Rust's own arithmetic and the ISA rules for the exceptional cases.

fn reference(op: u64, a: u64, b: u64) -> u64 {
    let (ai, bi) = (a as i64, b as i64);
    let (aw, bw) = (a as i32, b as i32);
    let (au, bu) = (a as u32, b as u32);
    let sh = (b & 31) as u32;
    let w = |x: i32| x as i64 as u64;
    match op {
        alu::DIV => ai
            .checked_div(bi)
            .unwrap_or(if bi == 0 { -1 } else { i64::MIN }) as u64,
        alu::DIVU => a.checked_div(b).unwrap_or(u64::MAX),
        alu::REM => ai.checked_rem(bi).unwrap_or(if bi == 0 { ai } else { 0 }) as u64,
        alu::REMU => a.checked_rem(b).unwrap_or(a),
        alu::ADDW => w(aw.wrapping_add(bw)),
        alu::SUBW => w(aw.wrapping_sub(bw)),
        alu::SLLW => w((au << sh) as i32),
        alu::SRLW => w((au >> sh) as i32),
        alu::SRAW => w(aw >> sh),
        alu::MULW => w(aw.wrapping_mul(bw)),
        alu::DIVW => w(aw
            .checked_div(bw)
            .unwrap_or(if bw == 0 { -1 } else { i32::MIN })),
        alu::DIVUW => w(au.checked_div(bu).unwrap_or(u32::MAX) as i32),
        alu::REMW => w(aw.checked_rem(bw).unwrap_or(if bw == 0 { aw } else { 0 })),
        alu::REMUW => w(au.checked_rem(bu).unwrap_or(au) as i32),
        _ => panic!("op {op}"),
    }
}

fn is_dvrm(op: u64) -> bool {
    (alu::DIV..=alu::REMU).contains(&op)
}

fn is_w(op: u64) -> bool {
    (alu::ADDW..=alu::REMUW).contains(&op)
}

const EDGES: [u64; 18] = [
    0,
    1,
    2,
    3,
    7,
    u64::MAX,              // -1
    u64::MAX - 1,          // -2
    -7i64 as u64,          // -7
    1 << 63,               // i64::MIN
    (1 << 63) - 1,         // i64::MAX
    (1 << 63) + 1,         // i64::MIN + 1
    0x8000_0000,           // 2^31 (i32::MIN as u32)
    0x7fff_ffff,           // i32::MAX
    0xffff_ffff_8000_0000, // i32::MIN sign-extended
    0xffff_ffff,           // u32::MAX
    0x1_0000_0000,         // 2^32
    0x1_0000_0001,         // 2^32 + 1 (low word 1)
    0xdead_beef_0000_0000, // low word 0, high set
];

const ALL_OPS: [u64; 14] = [
    alu::DIV,
    alu::DIVU,
    alu::REM,
    alu::REMU,
    alu::ADDW,
    alu::SUBW,
    alu::SLLW,
    alu::SRLW,
    alu::SRAW,
    alu::MULW,
    alu::DIVW,
    alu::DIVUW,
    alu::REMW,
    alu::REMUW,
];

/// Requests with a larger multiplicity (only ever made by a mutated flag) are left unanswered by the
/// rebuilt fact tables instead of being counted one by one (a real prover could not make 2^32 of them).
const MAX_M: u64 = 1 << 20;

/// Smallest table height the prover takes (log height >= 1).
const MIN_H: usize = 2;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// An operand: an edge value, a small value, a 32-bit value or a full random value.
    fn operand(&mut self) -> u64 {
        match self.below(5) {
            0 => EDGES[self.below(EDGES.len() as u64) as usize],
            1 => self.below(20).wrapping_sub(10),
            2 => self.next() & 0xffff_ffff,
            3 => self.next() >> self.below(64),
            _ => self.next(),
        }
    }
}

fn seed() -> u64 {
    let s = std::env::var("DVRM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("seed {s} (rerun with DVRM_SEED={s})");
    s
}

// ---------------------------------------------------------------------------------------------------------
// The small machine around DVRM and CPU32.

/// What the CPU claims: `op(a, b) = r`, one public ALU Send each.
fn claims_of(ops: &[(u64, u64, u64)]) -> Vec<AluFact> {
    ops.iter()
        .map(|&(op, a, b)| AluFact {
            op,
            a,
            b,
            r: reference(op, a, b),
        })
        .collect()
}

/// Every interaction of `air` on every row of `trace` with a non-zero multiplicity:
/// `(direction, bus, tuple, multiplicity)` (canonical values).
fn interactions(air: &dyn Air, trace: &RowMajorMatrix) -> Vec<(Direction, u32, Vec<u64>, u64)> {
    let mut b = AirBuilder::new(air.width(), air.preprocessed_width());
    air.eval(&mut b);
    let mut out = Vec::new();
    for row in 0..trace.height() {
        let leaf = |e: &Expr| -> F {
            match e {
                Expr::Main { col, next: false } => trace.row(row)[*col],
                _ => panic!("unexpected leaf {e:?}"),
            }
        };
        for it in &b.interactions {
            let m = it.multiplicity.eval(&leaf).as_canonical_u64();
            if m != 0 {
                let v = it
                    .values
                    .iter()
                    .map(|e| e.eval(&leaf).as_canonical_u64())
                    .collect();
                out.push((it.direction, it.bus, v, m));
            }
        }
    }
    out
}

/// A 64-bit value from two words, if both are canonical words.
fn value(lo: u64, hi: u64) -> Option<u64> {
    (lo < 1 << 32 && hi < 1 << 32).then_some(lo | hi << 32)
}

fn alu_tuple(f: &AluFact) -> Vec<u64> {
    vec![
        f.op,
        f.a & 0xffff_ffff,
        f.a >> 32,
        f.b & 0xffff_ffff,
        f.b >> 32,
        f.r & 0xffff_ffff,
        f.r >> 32,
    ]
}

/// A complete instance: tables, preprocessed traces and public interactions.
struct Instance {
    traces: Vec<RowMajorMatrix>,
    prep: Vec<Option<RowMajorMatrix>>,
    public: Vec<PublicInteraction>,
    real_bitwise: bool,
}

impl Instance {
    fn airs(&self) -> Vec<&'static dyn Air> {
        let mut a: Vec<&'static dyn Air> =
            vec![&DvrmAir, &Cpu32Air, &LtAir, &ShiftAir, &Pow2Air, &MulAir];
        if self.real_bitwise {
            a.push(&BitwiseAir);
        }
        a
    }

    fn check(&self) -> Result<(), String> {
        let config = StarkConfig::dev();
        let compiled = compile_all(&self.airs(), config.max_constraint_degree()).unwrap();
        check_traces(
            &compiled,
            &self.traces,
            &self.prep,
            &self.public,
            config.log_max_multiplicity,
        )
        .map_err(|e| e.to_string())
    }

    /// Prove with the checker off, then verify. `Err` if either refuses.
    fn prove_verify(&self) -> Result<(), String> {
        let config = StarkConfig::dev();
        let airs = self.airs();
        let pre = preprocess(&airs, self.prep.clone()).map_err(|e| e.to_string())?;
        let t0 = std::time::Instant::now();
        let proof = zkrv_stark::prove(
            &config,
            &airs,
            &pre,
            self.traces.clone(),
            &self.public,
            b"dvrm test",
        )
        .map_err(|e| format!("prove: {e}"))?;
        let prove_time = t0.elapsed();
        let t0 = std::time::Instant::now();
        zkrv_stark::verify(&config, 0, &airs, &pre, &self.public, b"dvrm test", &proof)
            .map_err(|e| format!("verify: {e}"))?;
        println!(
            "heights {:?}: prove {prove_time:?}, verify {:?}",
            self.traces.iter().map(|t| t.height()).collect::<Vec<_>>(),
            t0.elapsed()
        );
        Ok(())
    }
}

/// The CPU32 trace for the W claims (honest fill).
fn cpu32_of(claims: &[AluFact]) -> RowMajorMatrix {
    let w: Vec<(u64, u64, u64)> = claims
        .iter()
        .filter(|f| is_w(f.op))
        .map(|f| (f.op, f.a, f.b))
        .collect();
    cpu32_trace(&w, MIN_H, &mut Lookups::new()).unwrap().0
}

/// Builds everything around the tables under test. `dvrm`: the DVRM trace, or `None` to fill it from the
/// claims and CPU32's requests.
fn complete(
    claims: &[AluFact],
    cpu32: RowMajorMatrix,
    dvrm: Option<RowMajorMatrix>,
    real_bitwise: bool,
) -> Instance {
    let cpu32_ints = interactions(&Cpu32Air, &cpu32);
    let dvrm = dvrm.unwrap_or_else(|| {
        let mut req = DvrmRequests::new();
        for f in claims.iter().filter(|f| is_dvrm(f.op)) {
            add_dvrm_request(&mut req, f.op, f.a, f.b);
        }
        for (dir, b, v, m) in &cpu32_ints {
            if *dir == Direction::Send && *b == bus::ALU && is_dvrm(v[0]) && *m <= MAX_M {
                if let (Some(a), Some(x)) = (value(v[1], v[2]), value(v[3], v[4])) {
                    for _ in 0..*m {
                        add_dvrm_request(&mut req, v[0], a, x);
                    }
                }
            }
        }
        dvrm_trace(&req, MIN_H, &mut Lookups::new()).0
    });
    let dvrm_ints = interactions(&DvrmAir, &dvrm);

    // Facts answered by the real LT, SHIFT and MUL tables, rebuilt from what DVRM and CPU32 request.
    let mut lt_req = BTreeMap::new();
    let mut shift_req = ShiftRequests::new();
    let mut mul_req = MulRequests::new();
    for (dir, b, v, m) in cpu32_ints.iter().chain(&dvrm_ints) {
        if *dir != Direction::Send || *b != bus::ALU || is_dvrm(v[0]) || *m > MAX_M {
            continue;
        }
        let (Some(a), Some(x)) = (value(v[1], v[2]), value(v[3], v[4])) else {
            continue;
        };
        if v[0] == alu::SLTU || v[0] == alu::SLT {
            *lt_req.entry((a, x, v[0] == alu::SLT)).or_insert(0) += m;
        } else if let Some(op) = ShiftOp::from_alu(v[0]) {
            *shift_req.entry((op, a, x)).or_insert(0) += m;
        } else if let Some(op) = MulOp::from_alu(v[0]) {
            mul_req.add_n(op, a, x, *m);
        }
    }
    let lt = lt_trace(&lt_req, MIN_H, &mut Lookups::new());
    let shift = shift_trace(&shift_req, MIN_H, &mut Lookups::new(), &mut mul_req);
    let mul = mul_trace(&mul_req, MIN_H, &mut Lookups::new());

    // Lookups: valid ones only.
    let mut public_recv: BTreeMap<(u32, Vec<u64>), u64> = BTreeMap::new();
    let mut lookups = Lookups::new();
    let all = [
        interactions(&LtAir, &lt),
        interactions(&ShiftAir, &shift.shift),
        interactions(&MulAir, &mul),
    ];
    for (dir, b, v, m) in dvrm_ints
        .iter()
        .chain(&cpu32_ints)
        .chain(all.iter().flatten())
    {
        if *dir != Direction::Send || *m > MAX_M {
            continue;
        }
        let x = match (*b, v.as_slice()) {
            (bus::RANGE16, [x]) if *x < 1 << 16 => (LookupKind::U16, *x),
            (bus::MSB16, [x, s]) if *x < 1 << 16 && *s == *x >> 15 => (LookupKind::Msb16, *x),
            (bus::BYTE, [op, a, b, c])
                if *op == bus::BYTE_PAIR && *a < 256 && *b < 256 && *c == 0 =>
            {
                (LookupKind::Pair, a << 8 | b)
            }
            _ => continue,
        };
        for _ in 0..*m {
            lookups.add(x.0, x.1);
        }
        if !real_bitwise {
            *public_recv.entry((*b, v.clone())).or_insert(0) += m;
        }
    }

    let mut public: Vec<PublicInteraction> = public_recv
        .into_iter()
        .map(|((bus, v), m)| PublicInteraction {
            bus,
            values: v.into_iter().map(F::from_u64).collect(),
            multiplicity: F::from_u64(m),
            direction: Direction::Receive,
        })
        .collect();
    let mut sends: BTreeMap<Vec<u64>, u64> = BTreeMap::new();
    for f in claims {
        *sends.entry(alu_tuple(f)).or_insert(0) += 1;
    }
    public.extend(sends.into_iter().map(|(v, m)| PublicInteraction {
        bus: bus::ALU,
        values: v.into_iter().map(F::from_u64).collect(),
        multiplicity: F::from_u64(m),
        direction: Direction::Send,
    }));

    let mut traces = vec![dvrm, cpu32, lt, shift.shift, shift.pow2, mul];
    let mut prep = vec![
        None,
        None,
        None,
        None,
        Some(pow2_preprocessed(zkrv_machine::MIN_HEIGHT)),
        None,
    ];
    if real_bitwise {
        traces.push(lookups.trace());
        prep.push(Some(bitwise_preprocessed()));
    }
    Instance {
        traces,
        prep,
        public,
        real_bitwise,
    }
}

fn honest(ops: &[(u64, u64, u64)], real_bitwise: bool) -> Instance {
    let claims = claims_of(ops);
    complete(&claims, cpu32_of(&claims), None, real_bitwise)
}

/// Every op on every pair of edge operands.
fn edge_ops() -> Vec<(u64, u64, u64)> {
    let mut ops = Vec::new();
    for &a in &EDGES {
        for &b in &EDGES {
            for &op in &ALL_OPS {
                ops.push((op, a, b));
            }
        }
    }
    ops
}

fn random_ops(rng: &mut Rng, n: usize) -> Vec<(u64, u64, u64)> {
    (0..n)
        .map(|_| {
            let op = ALL_OPS[rng.below(ALL_OPS.len() as u64) as usize];
            let (a, b) = (rng.operand(), rng.operand());
            // Some divisions by zero and overflows on purpose.
            match rng.below(8) {
                0 => (op, a, 0),
                1 => (op, 1 << 63, u64::MAX),
                2 => (op, 0xffff_ffff_8000_0000, u64::MAX),
                _ => (op, a, b),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------------------
// Completeness.

#[test]
fn table_semantics_match_rust_arithmetic() {
    let mut rng = Rng(seed());
    let mut ops = edge_ops();
    ops.extend(random_ops(&mut rng, 20000));
    for (op, a, b) in ops {
        let want = reference(op, a, b);
        let got = if is_dvrm(op) {
            let (q, r) = divrem(a, b, op == alu::DIV || op == alu::REM);
            if op == alu::DIV || op == alu::DIVU {
                q
            } else {
                r
            }
        } else {
            w_result(op, a, b).unwrap()
        };
        assert_eq!(got, want, "op {op} a {a:#x} b {b:#x}");
    }
    // The ISA's special cases, spelled out.
    assert_eq!(divrem(5, 0, true), (u64::MAX, 5));
    assert_eq!(divrem(5, 0, false), (u64::MAX, 5));
    assert_eq!(divrem(1 << 63, u64::MAX, true), (1 << 63, 0));
    assert_eq!(
        reference(alu::DIVW, 0x8000_0000, u64::MAX),
        0xffff_ffff_8000_0000
    );
    assert_eq!(reference(alu::REMW, 0x8000_0000, u64::MAX), 0);
    assert_eq!(reference(alu::DIVUW, 9, 0x1_0000_0000), u64::MAX);
    assert_eq!(reference(alu::REMUW, 0xffff_ffff, 0), u64::MAX);
}

#[test]
fn edge_and_random_operands_pass_the_checker() {
    let mut rng = Rng(seed());
    let mut ops = edge_ops();
    ops.extend(random_ops(&mut rng, 300));
    let inst = honest(&ops, true);
    println!(
        "heights: DVRM {}, CPU32 {}, LT {}",
        inst.traces[0].height(),
        inst.traces[1].height(),
        inst.traces[2].height()
    );
    inst.check().unwrap();
}

#[test]
fn prove_and_verify() {
    let mut rng = Rng(seed());
    let mut ops: Vec<_> = EDGES
        .iter()
        .flat_map(|&a| [(alu::DIV, a, 0), (alu::REM, a, u64::MAX), (alu::DIVW, a, 3)])
        .collect();
    ops.extend(random_ops(&mut rng, 200));
    ops.extend([
        (alu::DIV, 1 << 63, u64::MAX),
        (alu::REM, 1 << 63, u64::MAX),
        (alu::DIVW, 0x8000_0000, u64::MAX),
        (alu::REMUW, 7, 0),
    ]);
    let inst = honest(&ops, true);
    inst.check().unwrap();
    inst.prove_verify().unwrap();
}

// ---------------------------------------------------------------------------------------------------------
// Soundness.

/// The claims and traces of a forged instance must be rejected by the checker and by the verifier.
fn expect_rejected(what: &str, inst: &Instance) {
    let checked = inst.check();
    println!("{what}: checker says {checked:?}");
    assert!(checked.is_err(), "{what}: checker accepted");
    let verified = inst.prove_verify();
    println!("{what}: prove/verify says {verified:?}");
    assert!(verified.is_err(), "{what}: verifier accepted");
}

/// Replaces the DVRM row for `(n, d, signed)` by `row`.
fn with_dvrm_row(claims: &[AluFact], n: u64, d: u64, signed: bool, row: DvrmCols<F>) -> Instance {
    let honest = complete(claims, cpu32_of(claims), None, false);
    let mut dvrm = honest.traces[0].clone();
    let i = (0..dvrm.height())
        .find(|&i| {
            let r = DvrmCols::from_row(dvrm.row(i));
            r.n == [n & 0xffff_ffff, n >> 32].map(F::from_u64)
                && r.d == [d & 0xffff_ffff, d >> 32].map(F::from_u64)
                && r.signed == F::from_bool(signed)
        })
        .expect("row");
    *DvrmCols::from_row_mut(dvrm.row_mut(i)) = row;
    complete(claims, cpu32_of(claims), Some(dvrm), false)
}

fn claim(op: u64, a: u64, b: u64, r: u64) -> AluFact {
    AluFact { op, a, b, r }
}

#[test]
fn division_by_zero_returning_zero_is_rejected() {
    let n = 12345;
    let claims = [claim(alu::DIV, n, 0, 0), claim(alu::REM, n, 0, n)];
    // (a) keep the division-by-zero flag, claim q = 0: the dz constraints object.
    let row = dvrm_row_with(n, 0, true, 0, n, true, false, 1, 1);
    expect_rejected("dz, q = 0", &with_dvrm_row(&claims, n, 0, true, row));
    // (b) drop the flag, claim q = 0, r = n (0 * 0 + n = n holds): |r| < |0| is false.
    let row = dvrm_row_with(n, 0, true, 0, n, false, false, 1, 1);
    expect_rejected("no dz, q = 0", &with_dvrm_row(&claims, n, 0, true, row));
    // (c) unsigned as well.
    let claims = [claim(alu::DIVU, n, 0, 0), claim(alu::REMU, n, 0, n)];
    let row = dvrm_row_with(n, 0, false, 0, n, false, false, 1, 1);
    expect_rejected("DIVU no dz", &with_dvrm_row(&claims, n, 0, false, row));
}

#[test]
fn overflow_must_be_flagged() {
    // i64::MIN / -1 without the ovf flag: q = 2^63, r = 0 satisfies the low word but not the high word.
    let (n, d) = (1u64 << 63, u64::MAX);
    let claims = [claim(alu::DIV, n, d, n), claim(alu::REM, n, d, 0)];
    let row = dvrm_row_with(n, d, true, n, 0, false, false, 1, 1);
    expect_rejected("ovf unflagged", &with_dvrm_row(&claims, n, d, true, row));
    // ovf flag on inputs that do not overflow (i64::MIN / 1).
    let claims = [claim(alu::DIV, n, 1, n), claim(alu::REM, n, 1, 0)];
    let row = dvrm_row_with(n, 1, true, n, 0, false, true, 1, 1);
    expect_rejected("ovf on /1", &with_dvrm_row(&claims, n, 1, true, row));
}

#[test]
fn remainder_not_below_divisor_is_rejected() {
    // 7 = 1 * 3 + 4 (unsigned): r = 4 >= 3.
    let claims = [claim(alu::DIVU, 7, 3, 1), claim(alu::REMU, 7, 3, 4)];
    let row = dvrm_row_with(7, 3, false, 1, 4, false, false, 1, 1);
    expect_rejected("REMU r >= d", &with_dvrm_row(&claims, 7, 3, false, row));
    // -7 = (-1) * 3 + (-4) (signed): |r| = 4 >= 3.
    let m7 = -7i64 as u64;
    let claims = [
        claim(alu::DIV, m7, 3, u64::MAX),
        claim(alu::REM, m7, 3, -4i64 as u64),
    ];
    let row = dvrm_row_with(m7, 3, true, u64::MAX, -4i64 as u64, false, false, 1, 1);
    expect_rejected("REM |r| >= |d|", &with_dvrm_row(&claims, m7, 3, true, row));
    // 7 = 3 * 3 + (-2): |r| < 3 but the sign of r differs from the sign of n.
    let claims = [
        claim(alu::DIV, 7, 3, 3),
        claim(alu::REM, 7, 3, -2i64 as u64),
    ];
    let row = dvrm_row_with(7, 3, true, 3, -2i64 as u64, false, false, 1, 1);
    expect_rejected("REM sign of r", &with_dvrm_row(&claims, 7, 3, true, row));
    // Wrong quotient with a consistent-looking remainder (q d + r != n).
    let claims = [claim(alu::DIVU, 100, 7, 13), claim(alu::REMU, 100, 7, 2)];
    let row = dvrm_row_with(100, 7, false, 13, 2, false, false, 1, 1);
    expect_rejected(
        "DIVU q d + r != n",
        &with_dvrm_row(&claims, 100, 7, false, row),
    );
}

/// Replaces CPU32's first row by `tamper(row)`.
fn with_cpu32_row(claims: &[AluFact], tamper: impl Fn(&mut Cpu32Cols<F>)) -> Instance {
    let mut cpu32 = cpu32_of(claims);
    tamper(Cpu32Cols::from_row_mut(cpu32.row_mut(0)));
    complete(claims, cpu32, None, false)
}

#[test]
fn w_result_not_sign_extended_is_rejected() {
    // ADDW 0x7fff_ffff + 1 = 0xffff_ffff_8000_0000; claim the zero-extended 0x8000_0000.
    let claims = [claim(alu::ADDW, 0x7fff_ffff, 1, 0x8000_0000)];
    expect_rejected(
        "ADDW zero-extended",
        &with_cpu32_row(&claims, |r| r.st = F::ZERO),
    );
    // DIVW: -8 / 2 = -4; claim 0x0000_0000_ffff_fffc.
    let m8 = -8i64 as u64;
    let claims = [claim(alu::DIVW, m8, 2, 0xffff_fffc)];
    expect_rejected(
        "DIVW zero-extended",
        &with_cpu32_row(&claims, |r| r.st = F::ZERO),
    );
    // DIVUW with the high words of the operands taken into account (a 64-bit division) instead of zext.
    let (a, b) = (0x1_0000_0006u64, 3u64);
    let claims = [claim(alu::DIVUW, a, b, (a / b) & 0xffff_ffff)];
    expect_rejected(
        "DIVUW 64-bit operands",
        &with_cpu32_row(&claims, |r| {
            r.a2_hi = F::ONE;
            r.t = [F::from_u64((a / b) & 0xffff_ffff), F::ZERO];
            r.t_top = F::from_u64(((a / b) >> 16) & 0xffff);
            r.st = F::ZERO;
        }),
    );
}

#[test]
fn limb_out_of_range_is_rejected() {
    // ADDW 0xffff_ffff + 1 = 0: claim the non-canonical word t_lo = 2^32 (no carry), high word 0.
    let claims = [claim(alu::ADDW, 0xffff_ffff, 1, 0)];
    let mut inst = with_cpu32_row(&claims, |r| {
        r.t[0] = F::from_u64(1 << 32);
        r.t_top = F::from_u64(1 << 16);
        r.st = F::ZERO;
    });
    let claimed = alu_tuple(&claims[0])
        .into_iter()
        .map(F::from_u64)
        .collect::<Vec<_>>();
    let p = inst
        .public
        .iter_mut()
        .find(|p| p.direction == Direction::Send && p.values == claimed)
        .unwrap();
    p.values[5] = F::from_u64(1 << 32);
    expect_rejected("ADDW t_lo = 2^32", &inst);
    // DVRM remainder halves: r0 = 2^16 + 1, r1 = 0 carries the same r_lo = 2^16 + 1 as (1, 1).
    let (n, d) = (3 * 70000 + 65537, 70000u64);
    let claims = [claim(alu::DIVU, n, d, 3), claim(alu::REMU, n, d, 65537)];
    let mut row = dvrm_row_with(n, d, false, 3, 65537, false, false, 1, 1);
    row.r[0] = F::from_u64(65537);
    row.r[1] = F::ZERO;
    expect_rejected("DVRM r0 >= 2^16", &with_dvrm_row(&claims, n, d, false, row));
}

#[test]
fn random_cell_mutations_are_rejected() {
    let seed = seed();
    let mut rng = Rng(seed);
    let mut ops = random_ops(&mut rng, 40);
    ops.extend([
        (alu::DIV, 5, 0),
        (alu::REM, 1 << 63, u64::MAX),
        (alu::SRAW, 0x8000_0000, 3),
    ]);
    let claims = claims_of(&ops);
    let base = complete(&claims, cpu32_of(&claims), None, false);
    base.check().unwrap();
    let dcols = DvrmCols::<usize>::indices();
    let mut tried = 0;
    while tried < 200 {
        let mutate_dvrm = rng.below(2) == 0;
        let trace = base.traces[if mutate_dvrm { 0 } else { 1 }].clone();
        let width = if mutate_dvrm {
            NUM_DVRM_COLS
        } else {
            NUM_CPU32_COLS
        };
        let row = rng.below(trace.height() as u64) as usize;
        let col = rng.below(width as u64) as usize;
        let cells = trace.row(row);
        if mutate_dvrm {
            let r = DvrmCols::from_row(cells);
            if r.m_q + r.m_r == F::ZERO {
                continue; // padding/unused rows may legitimately be any true fact with count 0
            }
            // Free witnesses: the inverse of a zero word, and neg_e when no MUL check is sent.
            let free = (col == dcols.inv_r && r.beta_r == F::ZERO)
                || (col == dcols.inv_d && r.beta_d == F::ZERO)
                || (col == dcols.neg_e && r.dz + r.ovf == F::ONE);
            if free {
                continue;
            }
        } else if Cpu32Cols::from_row(cells).mu == F::ZERO {
            continue;
        }
        let old = cells[col];
        let new = match rng.below(4) {
            0 => old + F::ONE,
            1 => old - F::ONE,
            2 => F::from_u64(rng.below(1 << 16)),
            _ => F::from_u64(rng.next()),
        };
        if new == old {
            continue;
        }
        tried += 1;
        let mut t = trace;
        t.row_mut(row)[col] = new;
        let inst = if mutate_dvrm {
            complete(&claims, base.traces[1].clone(), Some(t), false)
        } else {
            complete(&claims, t, None, false)
        };
        let table = if mutate_dvrm { "DVRM" } else { "CPU32" };
        assert!(
            inst.check().is_err(),
            "seed {seed}: {table} row {row} col {col}: {old} -> {new} accepted"
        );
        // A few of them through the verifier too.
        if tried % 50 == 0 {
            assert!(
                inst.prove_verify().is_err(),
                "seed {seed}: {table} row {row} col {col}: verifier accepted"
            );
        }
    }
}
