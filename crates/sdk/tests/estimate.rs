//! The figures behind `zkrv_sdk::estimate::REFERENCE` (ignored by default: two proofs of a 2^18-row run,
//! minutes on a small machine). Run on the reference machine, quiet:
//! `cargo test --release -p zkrv-sdk --test estimate -- --ignored --nocapture`; it prints the calibration
//! kernel's time and the prove stage's seconds per CPU-table row (zk and `--no-zk`, 100-bit preset), the
//! numbers `REFERENCE` holds, and what the estimate says for this machine against the measured times.

use std::time::Instant;
use zkrv_sdk::estimate::{calibrate, cpu_secs, rows_to_prove, REFERENCE};
use zkrv_sdk::{prove, Program, ProveOptions};

#[test]
#[ignore]
fn reference_figures() {
    let program = Program::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../guests/bin/sha256.elf"
    ))
    .expect("sha256 guest loads");
    // 3,900 pseudo-random bytes: 259,715 cycles, a 2^18-row CPU table (docs/PERF.md "Issue 4 figures").
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let input: Vec<u8> = (0..3900)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect();
    let before = calibrate();
    println!("calibration kernel: {:.4} s", before.kernel_secs);
    for zk in [true, false] {
        let opts = ProveOptions {
            zk,
            ..ProveOptions::default()
        };
        let t = Instant::now();
        let proved = prove(&program, &input, &opts).expect("proves");
        let secs = t.elapsed().as_secs_f64();
        let work = rows_to_prove(proved.cycles, None);
        assert_eq!(work.rows(), 1 << 18, "{} cycles", proved.cycles);
        let est = cpu_secs(work, &opts.stark_config(), &before);
        println!(
            "{}: {} cycles, {:.2} s, {:.3e} s per row; estimate from REFERENCE {:.2} s ({:.2}x)",
            if zk { "zk" } else { "no-zk" },
            proved.cycles,
            secs,
            secs / work.rows() as f64,
            est,
            est / secs
        );
    }
    let after = calibrate();
    println!(
        "calibration kernel after: {:.4} s (REFERENCE.kernel_secs {})",
        after.kernel_secs, REFERENCE.kernel_secs
    );
}

/// The figure behind `zkrv_sdk::estimate::POSEIDON2_CPU_FACTOR`: the calibration kernel (LDE + Merkle
/// commitment) with Poseidon2 over its time with Keccak-256, on this machine. Prints both; asserts only
/// that Poseidon2 is the slower on the CPU (the reason for the factor).
#[test]
#[ignore]
fn poseidon2_kernel_ratio() {
    use zkrv_sdk::estimate::{kernel_secs, POSEIDON2_CPU_FACTOR};
    use zkrv_sdk::MerkleHash;
    let k = kernel_secs(MerkleHash::Keccak256);
    let p = kernel_secs(MerkleHash::Poseidon2);
    println!(
        "calibration kernel: keccak {k:.4} s, poseidon2 {p:.4} s, ratio {:.2} (POSEIDON2_CPU_FACTOR {POSEIDON2_CPU_FACTOR})",
        p / k
    );
    assert!(p > k, "poseidon2 {p} s, keccak {k} s");
}
