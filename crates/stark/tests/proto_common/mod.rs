//! A small two-table machine used by the protocol tests.
//!
//! * `fib` (height 2^log_n, no preprocessed columns): columns `[a, b, carry]`, Fibonacci modulo 256:
//!   row 0 is (0, 1); `a' = b`, `b' = a + b - 256 carry`; `carry` is boolean (degree-2 and degree-3 forms).
//!   Sends `a` and `b` to the byte bus (two interactions, batched into one term column) and sends the last
//!   row's `a` on the output bus (multiplicity `is_last_row`).
//! * `bytes` (height 256): preprocessed column `value = row index`, main column `mult`; receives `value`
//!   on the byte bus `mult` times.
//! * public: the caller receives `(final a)` on the output bus once.
#![allow(dead_code)]

pub mod hooked;

use zkrv_stark::air::{Air, AirBuilder, Direction};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::logup::PublicInteraction;
use zkrv_stark::matrix::RowMajorMatrix;

pub const BYTE_BUS: u32 = 1;
pub const OUT_BUS: u32 = 2;

pub struct FibAir;

impl Air for FibAir {
    fn name(&self) -> &str {
        "fib"
    }
    fn width(&self) -> usize {
        3
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (a, bb, carry) = (b.main(0), b.main(1), b.main(2));
        let (a_n, b_n) = (b.main_next(0), b.main_next(1));
        b.assert_zero("first_a", b.is_first_row() * a.clone());
        b.assert_zero("first_b", b.is_first_row() * (bb.clone() - 1u64));
        b.assert_zero("next_a", b.is_transition() * (a_n - bb.clone()));
        b.assert_zero(
            "next_b",
            b.is_transition() * (b_n - (a.clone() + bb.clone() - carry.clone() * 256u64)),
        );
        b.assert_bool("carry_bool", carry.clone());
        b.assert_zero(
            "carry_cube",
            carry.clone() * carry.clone() * carry.clone() - carry,
        );
        b.send(BYTE_BUS, vec![a.clone()], 1u64);
        b.send(BYTE_BUS, vec![bb], 1u64);
        b.send(OUT_BUS, vec![a], b.is_last_row());
    }
}

pub struct BytesAir;

impl Air for BytesAir {
    fn name(&self) -> &str {
        "bytes"
    }
    fn width(&self) -> usize {
        1
    }
    fn preprocessed_width(&self) -> usize {
        1
    }
    fn eval(&self, b: &mut AirBuilder) {
        let v = b.preprocessed(0);
        let m = b.main(0);
        b.receive(BYTE_BUS, vec![v], m);
    }
}

pub struct Fixture {
    pub traces: Vec<RowMajorMatrix>,
    pub preprocessed: Vec<Option<RowMajorMatrix>>,
    pub public: Vec<PublicInteraction>,
}

pub fn airs() -> Vec<&'static dyn Air> {
    vec![&FibAir, &BytesAir]
}

pub fn bytes_preprocessed() -> RowMajorMatrix {
    RowMajorMatrix::new((0..256u64).map(F::from_u64).collect(), 1)
}

/// Honest traces for a fib table of height `2^log_n`.
pub fn fixture(log_n: usize) -> Fixture {
    let n = 1usize << log_n;
    let mut fib = Vec::with_capacity(3 * n);
    let mut counts = [0u64; 256];
    let (mut a, mut b) = (0u64, 1u64);
    let mut last_a = 0;
    for _ in 0..n {
        let s = a + b;
        let carry = s >> 8;
        fib.extend([a, b, carry].map(F::from_u64));
        counts[a as usize] += 1;
        counts[b as usize] += 1;
        last_a = a;
        (a, b) = (b, s & 0xff);
    }
    let bytes = RowMajorMatrix::new(counts.iter().map(|&c| F::from_u64(c)).collect(), 1);
    Fixture {
        traces: vec![RowMajorMatrix::new(fib, 3), bytes],
        preprocessed: vec![None, Some(bytes_preprocessed())],
        public: vec![PublicInteraction {
            bus: OUT_BUS,
            values: vec![F::from_u64(last_a)],
            multiplicity: F::ONE,
            direction: Direction::Receive,
        }],
    }
}

pub fn canonical(x: F) -> u64 {
    x.as_canonical_u64()
}

/// Bus of the `square` "precompile": tuples `(x, x^2)`.
pub const SQUARE_BUS: u32 = 3;

/// A precompile-like table that may be absent: columns `[x, y, m]`, `m` boolean, `y = x^2` where `m = 1`;
/// sends `(x, y)` on [`SQUARE_BUS`] `m` times. Its padding trace (all zeros) satisfies it, as
/// [`Air::may_be_absent`] requires.
pub struct SquareAir;

impl Air for SquareAir {
    fn name(&self) -> &str {
        "square"
    }
    fn width(&self) -> usize {
        3
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, y, m) = (b.main(0), b.main(1), b.main(2));
        b.assert_bool("m_bool", m.clone());
        b.assert_zero("square", m.clone() * (y.clone() - x.clone() * x.clone()));
        b.send(SQUARE_BUS, vec![x, y], m);
    }
    fn may_be_absent(&self) -> bool {
        true
    }
}

/// A required table that calls `square`: columns `[x, y, call]`, `call` boolean; receives `(x, y)` from
/// [`SQUARE_BUS`] `call` times (so `y = x^2` on its calling rows is proven by `square`).
pub struct CallerAir;

impl Air for CallerAir {
    fn name(&self) -> &str {
        "caller"
    }
    fn width(&self) -> usize {
        3
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, y, call) = (b.main(0), b.main(1), b.main(2));
        b.assert_bool("call_bool", call.clone());
        b.receive(SQUARE_BUS, vec![x, y], call);
    }
}

/// The machine with a table that may be absent: `[fib, bytes, square, caller]` (`square` in the middle, so
/// present tables are not a prefix).
pub fn airs_absent() -> Vec<&'static dyn Air> {
    vec![&FibAir, &BytesAir, &SquareAir, &CallerAir]
}

/// Index of `square` in [`airs_absent`].
pub const SQUARE: usize = 2;

/// Honest traces for [`airs_absent`], every table of height `2^log_n` (but `bytes`, 256): `caller` calls
/// `square` on `calls` rows (`x = i + 2`, `y = x^2`); `square` holds those calls (then zero rows) when
/// `square_present`, else it is absent (a `0 x 3` trace).
pub fn fixture_absent(log_n: usize, calls: usize, square_present: bool) -> Fixture {
    let n = 1usize << log_n;
    assert!(calls <= n);
    let mut fx = fixture(log_n);
    let rows = |flag_rows: usize| {
        RowMajorMatrix::new(
            (0..n as u64)
                .flat_map(|i| {
                    if (i as usize) < flag_rows {
                        [i + 2, (i + 2) * (i + 2), 1]
                    } else {
                        [0, 0, 0]
                    }
                })
                .map(F::from_u64)
                .collect(),
            3,
        )
    };
    let square = if square_present {
        rows(calls)
    } else {
        RowMajorMatrix::new(Vec::new(), 3)
    };
    fx.traces.extend([square, rows(calls)]);
    fx.preprocessed.extend([None, None]);
    fx
}
