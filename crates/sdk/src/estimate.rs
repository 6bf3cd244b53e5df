//! How long a proof will take, known before proving starts (the run is executed first, so its cycle count
//! is known): `zkrv prove` prints it and, on the CPU, refuses a run above a threshold unless confirmed
//! (docs/cli.md "Estimate before proving").
//!
//! **CPU: measured on this machine.** [`calibrate`] times a fixed piece of the prover's own work (the
//! low-degree extension and Merkle commitment of a 2^14 x 32 trace at blowup 8, `poly::lde_batch` +
//! `MerkleTree::new`, on every core, best of 3; about 0.1-0.3 s) and compares it with the time of the
//! same work on the reference machine ([`REFERENCE`]), where a whole proof's time per CPU-table row was
//! measured with it (`crates/sdk/tests/estimate.rs`, `reference_figures`, ignored by default). The
//! estimate is the reference's time per row, times this machine's slowdown, times the rows to prove,
//! times a growth per doubling of the table height (memory traffic: [`REFERENCE`]'s `growth_*`, from the
//! SHA-256 figures of docs/PERF.md "Issue 4 figures"). Expect it within a factor of about 2: guests use
//! the tables differently, and other processes on the machine change its speed.
//!
//! **GPU: recorded, not measured.** The figures of one NVIDIA H200 (docs/PERF.md "Whole prover on the
//! GPU", README: SHA-256 at 2^22 cycles, 1.3 s `--no-zk`, 3.2 s zk of prover stages), scaled by rows; another
//! GPU may differ.

use std::time::Instant;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::MerkleTree;
use zkrv_stark::poly::lde_batch;
use zkrv_stark::StarkConfig;

/// The reference the CPU estimate scales: figures measured together on one machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reference {
    /// Where and when the figures were measured.
    pub source: &'static str,
    /// [`calibrate`]'s kernel time there, seconds.
    pub kernel_secs: f64,
    /// Seconds per CPU-table row of a whole proof (the prove stage) at 2^18 rows, the 100-bit preset,
    /// zero knowledge.
    pub row_secs_zk: f64,
    /// The same, `--no-zk`.
    pub row_secs_no_zk: f64,
    /// Factor on the time per row for each doubling of the height above 2^18 (below: divided), zk.
    pub growth_zk: f64,
    /// The same, `--no-zk`.
    pub growth_no_zk: f64,
}

/// The CPU reference: the 2-core dev box (AMD EPYC VM, 2 vCPUs with AVX-512), shared and loaded (load
/// average 9-15), measured by `cargo test -p zkrv -p zkrv-sdk --test estimate -- --ignored --nocapture`
/// (test profile, opt-level 3; SHA-256 over 3,900 bytes: 259,715 cycles, a 2^18-row CPU table; 100-bit
/// preset): zk 373.5 s, `--no-zk` 160.2 s; the kernel 0.938 s before and 0.651 s after, their mean here (the
/// load, and a release build, change both sides alike: the ratio is what the estimate uses). Growth per
/// doubling: docs/PERF.md "Issue 4 figures" (zk 2^18 -> 2^20: 10,922 -> 6,391 cycles/s, 1.31 per doubling;
/// no-zk 2^18 -> 2^22: 28,705 -> 17,122 cycles/s, 1.14).
pub const REFERENCE: Reference = Reference {
    source: "the 2-core dev box (crates/sdk/tests/estimate.rs)",
    kernel_secs: 0.794,
    row_secs_zk: 1.425e-3,
    row_secs_no_zk: 6.11e-4,
    growth_zk: 1.31,
    growth_no_zk: 1.14,
};

/// Seconds per CPU-table row of the prove stage on one NVIDIA H200 at 2^22 rows (README / docs/PERF.md:
/// SHA-256 over 2^22 cycles, 3.2 s zk, 1.3 s `--no-zk`).
pub const H200_ROW_SECS_ZK: f64 = 3.2 / 4_194_304.0;
/// [`H200_ROW_SECS_ZK`] for `--no-zk` proofs.
pub const H200_ROW_SECS_NO_ZK: f64 = 1.3 / 4_194_304.0;

/// This machine's speed at the prover's work, from [`calibrate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The kernel's best time here, seconds.
    pub kernel_secs: f64,
}

impl Calibration {
    /// The reference machine itself (slowdown 1): the estimate at [`REFERENCE`]'s speed, without
    /// measuring this machine (for runs too short to be worth the calibration's second or so).
    pub fn reference() -> Calibration {
        Calibration {
            kernel_secs: REFERENCE.kernel_secs,
        }
    }

    /// How much slower than [`REFERENCE`] this machine is (below 1: faster).
    pub fn slowdown(&self) -> f64 {
        self.kernel_secs / REFERENCE.kernel_secs
    }
}

/// The factor on the CPU estimate of a `--hash poseidon2` proof: the calibration kernel (LDE and Merkle
/// commitment, the module doc) timed with Poseidon2 over its time with Keccak-256 (the reference's hash),
/// measured by `crates/sdk/tests/estimate.rs` `poseidon2_kernel_ratio` (ignored by default) on the 2-core
/// dev box, loaded: Keccak 0.256 s, Poseidon2 2.581 s, 10.1x. Whole proofs there (new-user report of
/// 2026-12-04, a 1024-row guest): zk 106 s vs 22 s (4.8x), `--no-zk` 53.4 s vs 5.6 s (9.5x); per Merkle
/// commitment 8.5 s vs 0.39 s. The GPU estimate has no such factor (Poseidon2 commits faster there:
/// docs/recursion.md §4).
pub const POSEIDON2_CPU_FACTOR: f64 = 10.0;

/// The factor on the CPU time of a proof hashed with `config.hash` ([`POSEIDON2_CPU_FACTOR`] or 1).
pub fn hash_factor(config: &StarkConfig) -> f64 {
    match config.hash {
        zkrv_stark::merkle::MerkleHash::Keccak256 => 1.0,
        zkrv_stark::merkle::MerkleHash::Poseidon2 => POSEIDON2_CPU_FACTOR,
    }
}

/// Times the calibration kernel (see the module doc): best of 3 runs, on the current rayon pool.
pub fn calibrate() -> Calibration {
    Calibration {
        kernel_secs: kernel_secs(zkrv_stark::merkle::MerkleHash::Keccak256),
    }
}

/// The calibration kernel's best time of 3 with the Merkle hash `hash`, seconds.
pub fn kernel_secs(hash: zkrv_stark::merkle::MerkleHash) -> f64 {
    const LOG_ROWS: usize = 14;
    const WIDTH: usize = 32;
    const LOG_BLOWUP: usize = 3;
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let values = (0..(WIDTH << LOG_ROWS))
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            zkrv_stark::field::F::new(s)
        })
        .collect();
    let trace = RowMajorMatrix::new(values, WIDTH);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let tree = MerkleTree::with_salts(hash, vec![lde_batch(&trace, LOG_BLOWUP)], Vec::new());
        std::hint::black_box(tree.root());
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// The CPU-table rows a run of `cycles` cycles proves: one table of the next power of two above `cycles`
/// (one row per cycle and a padding row) or, with `segment_rows`, `segments` tables of that many rows.
pub fn rows_to_prove(cycles: u64, segments: Option<(u64, u64)>) -> Work {
    match segments {
        Some((count, segment_rows)) if count > 1 => Work {
            tables: count,
            rows_per_table: segment_rows,
        },
        _ => Work {
            tables: 1,
            rows_per_table: (cycles + 1).next_power_of_two(),
        },
    }
}

/// What a proof proves: `tables` CPU tables of `rows_per_table` rows (one, or one per segment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// Proofs (1, or the segment count).
    pub tables: u64,
    /// CPU-table rows of each (a power of two).
    pub rows_per_table: u64,
}

impl Work {
    /// All the rows.
    pub fn rows(&self) -> u64 {
        self.tables.saturating_mul(self.rows_per_table)
    }
}

/// The scale of the `blowup` on the work relative to the reference's blowup 8 (the 100- and 128-bit
/// presets; the dev preset's 4 halves the committed rows).
fn blowup_scale(config: &StarkConfig) -> f64 {
    (1u64 << config.fri.log_blowup) as f64 / 8.0
}

/// Seconds the prove stage of `work` takes on the CPU of the machine `calibration` measured, with the
/// proof's hash ([`hash_factor`]).
pub fn cpu_secs(work: Work, config: &StarkConfig, calibration: &Calibration) -> f64 {
    let (row, growth) = if config.zk {
        (REFERENCE.row_secs_zk, REFERENCE.growth_zk)
    } else {
        (REFERENCE.row_secs_no_zk, REFERENCE.growth_no_zk)
    };
    // Small tables cost as much as 2^16 rows (fixed-height tables, e.g. BITWISE, and fixed costs).
    let rows = work.rows_per_table.max(1 << 16) as f64;
    let doublings = rows.log2() - 18.0;
    let per_table = rows * row * growth.powf(doublings) * blowup_scale(config);
    per_table * work.tables as f64 * calibration.slowdown() * hash_factor(config)
}

/// Seconds the prove stage of `work` takes on one NVIDIA H200 (recorded figures, not measured here:
/// [`H200_ROW_SECS_ZK`]), with a floor of 0.5 s.
pub fn gpu_secs(work: Work, config: &StarkConfig) -> f64 {
    let row = if config.zk {
        H200_ROW_SECS_ZK
    } else {
        H200_ROW_SECS_NO_ZK
    };
    (work.rows() as f64 * row * blowup_scale(config)).max(0.5)
}

/// A duration for people: `42 s`, `17 min`, `3.2 h`, `12.6 days`.
pub fn human_secs(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.0} min", secs / 60.0)
    } else if secs < 2.0 * 86400.0 {
        format!("{:.1} h", secs / 3600.0)
    } else {
        format!("{:.1} days", secs / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_scaling() {
        assert_eq!(
            rows_to_prove(138, None),
            Work {
                tables: 1,
                rows_per_table: 256
            }
        );
        // 2^18 - 1 cycles need 2^18 rows, 2^18 cycles 2^19.
        assert_eq!(rows_to_prove((1 << 18) - 1, None).rows(), 1 << 18);
        assert_eq!(rows_to_prove(1 << 18, None).rows(), 1 << 19);
        let seg = rows_to_prove(2_500_000_000, Some((2401, 1 << 20)));
        assert_eq!(seg.rows(), 2401 << 20);
        let cal = Calibration {
            kernel_secs: REFERENCE.kernel_secs,
        };
        let zk = zkrv_stark::SecurityPreset::Bits100.config(true);
        let no_zk = zkrv_stark::SecurityPreset::Bits100.config(false);
        // At the reference's height, the reference's rate.
        let w18 = rows_to_prove((1 << 18) - 1, None);
        let t = cpu_secs(w18, &zk, &cal);
        assert!(
            (t - REFERENCE.row_secs_zk * (1 << 18) as f64).abs() < 1e-9,
            "{t}"
        );
        // Twice the rows: twice the time times the growth; twice as slow a machine: twice the time.
        let w19 = rows_to_prove(1 << 18, None);
        let t19 = cpu_secs(w19, &zk, &cal);
        assert!((t19 / t - 2.0 * REFERENCE.growth_zk).abs() < 1e-9);
        let slow = Calibration {
            kernel_secs: 2.0 * REFERENCE.kernel_secs,
        };
        assert!((cpu_secs(w18, &zk, &slow) / t - 2.0).abs() < 1e-9);
        assert!(cpu_secs(w18, &no_zk, &cal) < t);
        // The dev preset (blowup 4) is half the reference's work.
        let dev = zkrv_stark::SecurityPreset::Dev.config(true);
        assert!((cpu_secs(w18, &dev, &cal) / t - 0.5).abs() < 1e-9);
        // Segments: each one's rate at its height, summed.
        let two = Work {
            tables: 2,
            rows_per_table: 1 << 18,
        };
        assert!((cpu_secs(two, &zk, &cal) / t - 2.0).abs() < 1e-9);
        // Tiny runs cost what 2^16 rows cost.
        assert_eq!(
            cpu_secs(rows_to_prove(10, None), &zk, &cal),
            cpu_secs(rows_to_prove(60_000, None), &zk, &cal)
        );
        assert!(gpu_secs(seg, &zk) < cpu_secs(seg, &zk, &cal) / 50.0);
        // Poseidon2: the measured factor on the Keccak time.
        let p2 = zk
            .clone()
            .with_hash(zkrv_stark::merkle::MerkleHash::Poseidon2);
        assert!((cpu_secs(w18, &p2, &cal) / t - POSEIDON2_CPU_FACTOR).abs() < 1e-9);
    }

    #[test]
    fn human_durations() {
        assert_eq!(human_secs(42.4), "42 s");
        assert_eq!(human_secs(1020.0), "17 min");
        assert_eq!(human_secs(3.2 * 3600.0), "3.2 h");
        assert_eq!(human_secs(1_090_865.0), "12.6 days");
    }

    #[test]
    fn calibration_is_short_and_positive() {
        let t = Instant::now();
        let c = calibrate();
        assert!(c.kernel_secs > 0.0 && c.kernel_secs.is_finite());
        // Generous for a loaded 2-core machine: the point is that it is not a proof.
        assert!(t.elapsed().as_secs_f64() < 20.0, "{:?}", t.elapsed());
    }
}
