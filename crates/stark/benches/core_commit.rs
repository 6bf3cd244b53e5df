//! Stark-core throughput: LDE (`poly::lde_batch`), Merkle commit (`MerkleTree::new`) and PCS opening.
//!
//! `cargo bench -p zkrv-stark --bench core_commit` (defaults: 2^20 rows x 32 columns, log_blowup 1).
//! Environment: `ZKRV_BENCH_LOG_N` (default 20), `ZKRV_BENCH_WIDTH` (32), `ZKRV_BENCH_LOG_BLOWUP` (1),
//! `ZKRV_BENCH_ITERS` (3), `ZKRV_BENCH_PCS` (1 to also time `pcs::open`).

use std::time::Instant;

use zkrv_stark::backend::{CpuBackend, CpuCommitted};
use zkrv_stark::field::{Ext3, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::MerkleTree;
use zkrv_stark::pcs::{open, FriConfig};
use zkrv_stark::poly::lde_batch;
use zkrv_stark::transcript::Transcript;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Process CPU time (user + system) in seconds, from /proc/self/stat (Linux; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses): utime is field 14, stime 15 (1-based).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Best wall time over `iters` runs, the CPU time of that run, and the last result.
fn best_of<T>(iters: usize, mut f: impl FnMut() -> T) -> (f64, f64, T) {
    let mut best = (f64::INFINITY, 0.0);
    let mut out = None;
    for _ in 0..iters {
        let c = cpu_seconds();
        let t = Instant::now();
        let r = f();
        let wall = t.elapsed().as_secs_f64();
        if wall < best.0 {
            best = (wall, cpu_seconds() - c);
        }
        out = Some(r);
    }
    (best.0, best.1, out.expect("iters >= 1"))
}

fn main() {
    let log_n = env("ZKRV_BENCH_LOG_N", 20);
    let width = env("ZKRV_BENCH_WIDTH", 32);
    let log_blowup = env("ZKRV_BENCH_LOG_BLOWUP", 1);
    let iters = env("ZKRV_BENCH_ITERS", 3).max(1);
    let n = 1usize << log_n;
    println!(
        "stark-core bench: 2^{log_n} x {width}, log_blowup {log_blowup}, {} rayon threads, best of {iters}",
        rayon::current_num_threads()
    );
    // Deterministic pseudo-random trace (xorshift).
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let values: Vec<F> = (0..n * width)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            F::new(s)
        })
        .collect();
    let trace = RowMajorMatrix::new(values, width);

    let (t_lde, c_lde, lde) = best_of(iters, || lde_batch(&trace, log_blowup));
    let in_elems = (n * width) as f64;
    let out_elems = (lde.values.len()) as f64;
    println!(
        "lde_batch:       {:8.3} s wall {:8.3} s cpu  {:7.1} M input elems/s  {:7.1} M output elems/s",
        t_lde,
        c_lde,
        in_elems / t_lde / 1e6,
        out_elems / t_lde / 1e6
    );

    let (t_merkle, c_merkle, tree) = best_of(iters, || MerkleTree::new(vec![lde.clone()]));
    // Subtract nothing: the clone is ~1% of the hashing time; reported as is.
    let bytes = out_elems * 8.0;
    println!(
        "merkle commit:   {:8.3} s wall {:8.3} s cpu  {:7.1} MiB/s hashed  {:7.2} M leaves/s",
        t_merkle,
        c_merkle,
        bytes / t_merkle / (1 << 20) as f64,
        lde.height() as f64 / t_merkle / 1e6
    );

    if env("ZKRV_BENCH_PCS", 0) == 1 {
        let cfg = FriConfig {
            log_blowup,
            num_queries: 100,
            query_grinding_bits: 16,
            log_final_poly_len: 0,
            log_folding_arity: 1,
        };
        let z = Ext3::from_u64s([3, 5, 7]);
        let round = CpuCommitted::stored(tree, log_blowup);
        let (t_open, c_open, _) = best_of(iters, || {
            let mut tr = Transcript::new(b"bench");
            open(
                &CpuBackend::default(),
                &cfg,
                &[(&round, vec![vec![z, z * F::new(11)]])],
                &mut tr,
                None,
            )
            .expect("open")
        });
        println!(
            "pcs open (2 points, {} queries, 16-bit grinding): {t_open:8.3} s wall {c_open:8.3} s cpu",
            cfg.num_queries
        );
    }
}
