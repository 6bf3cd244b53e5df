//! Shared harness of the precompile table tests: a precompile table next to BITWISE (its range checks),
//! with the CPU's ECALL sends and the memory's tokens supplied as public interactions, so that the table's
//! constraints and bus interactions are checked alone by `zkrv_stark::check::violations`.
#![allow(dead_code)]

use zkrv_machine::bus;
use zkrv_machine::tables::bitwise::{bitwise_preprocessed, BitwiseAir, Lookups};
use zkrv_stark::air::{Air, CompiledAir, Direction};
use zkrv_stark::check::{violations, CheckError};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::logup::PublicInteraction;
use zkrv_stark::matrix::RowMajorMatrix;

/// SplitMix64 (the crate has no `rand` dependency).
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
}

/// A seed from `ZKRV_SEED` or the clock, printed.
pub fn seed(test: &str) -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    println!("{test}: seed {s} (rerun with ZKRV_SEED={s})");
    s
}

/// The public side of the calls: what the CPU and the memory would send and receive.
#[derive(Default)]
pub struct Env {
    pub public: Vec<PublicInteraction>,
}

impl Env {
    fn push(&mut self, bus: u32, values: &[u64], direction: Direction) {
        self.public.push(PublicInteraction {
            bus,
            values: values.iter().map(|&v| F::from_u64(v)).collect(),
            multiplicity: F::ONE,
            direction,
        });
    }

    /// The CPU's `ECALL[ts, a7, a0, ret = 0]`.
    pub fn ecall(&mut self, ts: u64, a7: u64, a0: u64) {
        let v = [
            ts,
            a7 & 0xffff_ffff,
            a7 >> 32,
            a0 & 0xffff_ffff,
            a0 >> 32,
            0,
            0,
        ];
        self.push(bus::ECALL, &v, Direction::Send);
    }

    /// A register read the precompile does: the old token is sent, the new one at `ts` received.
    pub fn reg_read(&mut self, reg: u64, old_ts: u64, ts: u64, value: u64) {
        let (lo, hi) = (value & 0xffff_ffff, value >> 32);
        self.push(bus::REG_TOKEN, &[reg, old_ts, lo, hi], Direction::Send);
        self.push(bus::REG_TOKEN, &[reg, ts, lo, hi], Direction::Receive);
    }

    /// One cell access of the precompile: the old token is offered, the new one (at `ts`) taken back.
    pub fn cell(&mut self, cell: u64, old_ts: u64, old: u64, ts: u64, new: u64) {
        let w = |x: u64| [x & 0xffff_ffff, x >> 32];
        let (o, n) = (w(old), w(new));
        self.push(bus::MEM_TOKEN, &[cell, old_ts, o[0], o[1]], Direction::Send);
        self.push(bus::MEM_TOKEN, &[cell, ts, n[0], n[1]], Direction::Receive);
    }
}

/// A table under test with its BITWISE lookups.
pub struct Harness {
    pub airs: Vec<CompiledAir>,
    pub traces: Vec<RowMajorMatrix>,
    pub prep: Vec<Option<RowMajorMatrix>>,
    pub env: Env,
}

impl Harness {
    pub fn new(air: &dyn Air, trace: RowMajorMatrix, lookups: &Lookups, env: Env) -> Harness {
        // Degree cap 3: the machine's tables stay at degree <= 3 (docs/tables.md §1.4).
        let airs = vec![
            CompiledAir::new(air, 3).expect("table compiles at degree 3"),
            CompiledAir::new(&BitwiseAir, 3).expect("BITWISE compiles"),
        ];
        Harness {
            airs,
            traces: vec![trace, lookups.trace()],
            prep: vec![None, Some(bitwise_preprocessed())],
            env,
        }
    }

    pub fn violations(&self) -> Vec<CheckError> {
        violations(&self.airs, &self.traces, &self.prep, &self.env.public, 32).expect("shapes")
    }

    /// Sets column `col` of row `row` of the table under test.
    pub fn set(&mut self, row: usize, col: usize, v: F) {
        let w = self.traces[0].width;
        self.traces[0].values[row * w + col] = v;
    }

    pub fn get(&self, row: usize, col: usize) -> F {
        let w = self.traces[0].width;
        self.traces[0].values[row * w + col]
    }
}

/// Names of the failing constraints.
pub fn failed_constraints(v: &[CheckError]) -> Vec<String> {
    v.iter()
        .filter_map(|e| match e {
            CheckError::Constraint { constraint, .. } => Some(constraint.clone()),
            _ => None,
        })
        .collect()
}

/// The unbalanced buses (first and further ones).
pub fn unbalanced_buses(v: &[CheckError]) -> Vec<u32> {
    let mut buses = Vec::new();
    for e in v {
        if let CheckError::BusImbalance { bus, more, .. } = e {
            buses.push(*bus);
            buses.extend(more.iter().map(|m| m.0));
        }
    }
    buses.sort_unstable();
    buses.dedup();
    buses
}

/// Asserts that `v` reports constraint `name` (and prints everything on failure).
#[track_caller]
pub fn assert_constraint(v: &[CheckError], name: &str) {
    assert!(
        failed_constraints(v).iter().any(|c| c == name),
        "expected constraint `{name}` to fail, got {v:#?}"
    );
}

/// Asserts that `v` reports bus `bus` unbalanced.
#[track_caller]
pub fn assert_bus(v: &[CheckError], bus: u32) {
    assert!(
        unbalanced_buses(v).contains(&bus),
        "expected bus {bus} unbalanced, got {v:#?}"
    );
}
