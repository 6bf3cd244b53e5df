//! The recursion AIR set (docs/recursion.md §4.4) on a machine proof: the verifier program of the
//! `exitcode` guest's Poseidon2-hashed, no-zk proof (`zkrv_machine::recursion_program`, as
//! `poseidon2_preset.rs` builds it) is proven by `prove_program` and verified by `verify_program` with
//! the program's public inputs (the statement and the public interactions); the same proof is rejected
//! for another statement's public inputs. Prints the figures docs/recursion.md §4.4 quotes; the
//! `#[ignore]`d measurement (`cargo test --release -p zkrv-machine --test recursion_air -- --ignored
//! --nocapture`) does the same for a sha256 proof of the 100-bit preset (the §4.3 program).

use zkrv_executor::Program;
use zkrv_machine::{prove, recursion_program};
use zkrv_stark::merkle::MerkleHash;
use zkrv_stark::recursion::air::{airs, log_height};
use zkrv_stark::recursion::{execute, prove_program, verify_program, VerifyProgramError};
use zkrv_stark::{SecurityPreset, StarkConfig, VerifyError};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Proves and verifies `vp`'s program under `outer_cfg`; prints rows, widths, prove and verify time and
/// proof size; returns the public inputs and the proof.
fn prove_and_report(
    vp: &zkrv_stark::recursion::VerifierProgram,
    outer_cfg: &StarkConfig,
    what: &str,
) -> (Vec<zkrv_stark::field::F>, zkrv_stark::Proof) {
    let exec = execute(&vp.program, &vp.witness).expect("the program accepts the proof");
    let public = exec.public_inputs(&vp.program);
    let t = std::time::Instant::now();
    let outer = prove_program(&vp.program, &vp.witness, outer_cfg).unwrap();
    let prove_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    verify_program(&vp.program, &public, &outer, outer_cfg, 0).unwrap();
    let verify_s = t.elapsed().as_secs_f64();
    println!(
        "{what}: {} instructions, {} public inputs",
        vp.program.instrs.len(),
        public.len()
    );
    let mut cells = 0usize;
    for ((t, rows), air) in vp.program.table_rows().into_iter().zip(airs()) {
        let lh = log_height(rows, outer_cfg);
        let c = zkrv_stark::air::CompiledAir::new(air, outer_cfg.max_constraint_degree()).unwrap();
        cells += (air.width() + c.aux_width()) << lh;
        println!(
            "  {}: {rows} rows (2^{lh}), main {} + aux {} (+ preprocessed {}) columns, degree {}",
            t.name(),
            air.width(),
            c.aux_width(),
            air.preprocessed_width(),
            c.degree
        );
    }
    println!(
        "  recursion proof ({}, {:?}, zk {}): {cells} committed main + aux cells, {} bytes, prove \
         {prove_s:.2} s, verify {verify_s:.2} s (this host: {} threads)",
        SecurityPreset::of(outer_cfg).map_or("custom".into(), |p| p.to_string()),
        outer_cfg.hash,
        outer_cfg.zk,
        outer.to_bytes().len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    (public, outer)
}

#[test]
fn exitcode_verifier_program_is_proven_by_the_recursion_airs() {
    let path = format!("{ROOT}/guests/bin/exitcode.elf");
    let p = Program::from_elf(&std::fs::read(&path).unwrap()).unwrap();
    let inner_cfg = StarkConfig::dev().with_hash(MerkleHash::Poseidon2);
    let (st, proof) = prove(&p, b"", &inner_cfg).unwrap();
    let vp = recursion_program(&p, &st, &proof, &inner_cfg).unwrap();
    let outer_cfg = StarkConfig::dev();
    let (public, outer) = prove_and_report(&vp, &outer_cfg, "exitcode verifier program");

    // Another statement's public inputs (one statement element changed) against this proof.
    let mut other = public.clone();
    other[0] += zkrv_stark::field::F::new(1);
    assert_eq!(
        verify_program(&vp.program, &other, &outer, &outer_cfg, 0),
        Err(VerifyProgramError::Verify(VerifyError::Statement))
    );
}

/// Measurement (docs/recursion.md §4.4): the verifier program of a sha256 proof (1,000 input bytes, the
/// 100-bit preset, Poseidon2, no zk: the §4.3 program) proven under the dev preset (Keccak) and the
/// 100-bit preset (Poseidon2, what an aggregation layer would use).
#[test]
#[ignore = "measurement: about 6 minutes on 2 cores"]
fn sha256_verifier_program_measured() {
    let path = format!("{ROOT}/guests/bin/sha256.elf");
    let p = Program::from_elf(&std::fs::read(&path).unwrap()).unwrap();
    let inner_cfg = SecurityPreset::Bits100
        .config(false)
        .with_hash(MerkleHash::Poseidon2);
    let input: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
    let t = std::time::Instant::now();
    let (st, proof) = prove(&p, &input, &inner_cfg).unwrap();
    println!(
        "inner sha256 proof: {:?} log heights, {:.2} s",
        proof.stark.table_log_heights(),
        t.elapsed().as_secs_f64()
    );
    let vp = recursion_program(&p, &st, &proof, &inner_cfg).unwrap();
    prove_and_report(&vp, &StarkConfig::dev(), "sha256 verifier program");
    prove_and_report(
        &vp,
        &SecurityPreset::Bits100
            .config(false)
            .with_hash(MerkleHash::Poseidon2),
        "sha256 verifier program",
    );
}
