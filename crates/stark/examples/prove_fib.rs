//! Prove and verify the two-table test machine (tests/proto_common) at a chosen fib height, printing times
//! and the proof size: `cargo run -p zkrv-stark --release --example prove_fib -- <log_n>` (default 16).

#[path = "../tests/proto_common/mod.rs"]
mod proto_common;

use std::time::Instant;

use zkrv_stark::{preprocess, prove, verify, StarkConfig};

fn main() {
    let log_n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let config = StarkConfig::default();
    let airs = proto_common::airs();
    let fx = proto_common::fixture(log_n);
    let pre = preprocess(&airs, fx.preprocessed.clone()).expect("preprocess");
    let t0 = Instant::now();
    let proof = prove(&config, &airs, &pre, fx.traces, &fx.public, b"bench").expect("prove");
    let prove_t = t0.elapsed();
    let t0 = Instant::now();
    verify(&config, 0, &airs, &pre, &fx.public, b"bench", &proof).expect("verify");
    println!(
        "fib 2^{log_n} x 3 + bytes 2^8: prove {prove_t:?}, verify {:?}, proof {} bytes, {} threads",
        t0.elapsed(),
        proof.to_bytes().len(),
        rayon::current_num_threads()
    );
}
