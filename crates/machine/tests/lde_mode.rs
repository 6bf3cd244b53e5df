//! The CPU prover's LDE modes on a real guest: `LdeMode::Recompute` (coefficients and digest-only trees)
//! and `LdeMode::Store` give byte-identical proofs that verify.

use zkrv_executor::Program;
use zkrv_machine::{prove_witness_with, verify, witness_for};
use zkrv_stark::backend::{CpuBackend, LdeMode};
use zkrv_stark::StarkConfig;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn guest(name: &str) -> Program {
    let path = format!("{ROOT}/guests/bin/{name}.elf");
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

fn store_and_recompute_agree(name: &str, input: &[u8], config: &StarkConfig) {
    let p = guest(name);
    let w = witness_for(&p, input, config).unwrap();
    let rows: usize = w.traces.iter().map(|t| t.height()).sum();
    let t0 = std::time::Instant::now();
    let (st_s, store) =
        prove_witness_with(&CpuBackend::new(LdeMode::Store), &p, w.clone(), config).unwrap();
    let t_store = t0.elapsed();
    let t0 = std::time::Instant::now();
    let (st_r, recompute) =
        prove_witness_with(&CpuBackend::new(LdeMode::Recompute), &p, w, config).unwrap();
    println!(
        "{name} (zk {}, {rows} trace rows): store {t_store:?}, recompute {:?}",
        config.zk,
        t0.elapsed()
    );
    assert_eq!(st_r, st_s);
    let bytes = store.to_bytes();
    assert_eq!(recompute.to_bytes(), bytes, "{name} zk {}", config.zk);
    verify(&p, &st_r, &recompute, config, 0).unwrap();
}

#[test]
fn fibonacci_store_and_recompute_are_byte_identical() {
    let input = std::fs::read(format!("{ROOT}/guests/inputs/fibonacci.bin")).unwrap();
    store_and_recompute_agree("fibonacci", &input, &StarkConfig::dev());
}

#[test]
fn exitcode_zk_store_and_recompute_are_byte_identical() {
    let seed = 20261130;
    println!("zk seed = {seed}");
    let config = StarkConfig {
        zk_seed: Some(seed),
        ..StarkConfig::dev_zk()
    };
    store_and_recompute_agree("exitcode", b"", &config);
}
