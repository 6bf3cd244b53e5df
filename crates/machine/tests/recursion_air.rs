//! The recursion AIR set (docs/recursion.md §4.4) on a machine proof: the verifier program of the
//! `exitcode` guest's Poseidon2-hashed, no-zk proof (`zkrv_machine::recursion_program`, as
//! `poseidon2_preset.rs` builds it) is proven by `prove_program` and verified by `verify_program` with
//! the program's public inputs (the statement and the public interactions); the same proof is rejected
//! for another statement's public inputs. Prints the figures docs/recursion.md §4.4 quotes.

use zkrv_executor::Program;
use zkrv_machine::{prove, recursion_program};
use zkrv_stark::merkle::MerkleHash;
use zkrv_stark::recursion::air::{airs, log_height};
use zkrv_stark::recursion::{execute, prove_program, verify_program, VerifyProgramError};
use zkrv_stark::{StarkConfig, VerifyError};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

#[test]
fn exitcode_verifier_program_is_proven_by_the_recursion_airs() {
    let path = format!("{ROOT}/guests/bin/exitcode.elf");
    let p = Program::from_elf(&std::fs::read(&path).unwrap()).unwrap();
    let inner_cfg = StarkConfig::dev().with_hash(MerkleHash::Poseidon2);
    let (st, proof) = prove(&p, b"", &inner_cfg).unwrap();
    let vp = recursion_program(&p, &st, &proof, &inner_cfg).unwrap();
    let exec = execute(&vp.program, &vp.witness).expect("the program accepts the proof");
    let public = exec.public_inputs(&vp.program);

    let outer_cfg = StarkConfig::dev();
    let t = std::time::Instant::now();
    let outer = prove_program(&vp.program, &vp.witness, &outer_cfg).unwrap();
    let prove_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    verify_program(&vp.program, &public, &outer, &outer_cfg, 0).unwrap();
    let verify_s = t.elapsed().as_secs_f64();
    println!(
        "exitcode verifier program: {} instructions, {} public inputs",
        vp.program.instrs.len(),
        public.len()
    );
    for ((t, rows), air) in vp.program.table_rows().into_iter().zip(airs()) {
        println!(
            "  {}: {rows} rows (2^{}), main {} + preprocessed {} columns",
            t.name(),
            log_height(rows, &outer_cfg),
            air.width(),
            air.preprocessed_width()
        );
    }
    println!(
        "  recursion proof (dev preset, Keccak): {} bytes, prove {prove_s:.2} s, verify {verify_s:.2} s",
        outer.to_bytes().len()
    );

    // Another statement's public inputs (one statement element changed) against this proof.
    let mut other = public.clone();
    other[0] += zkrv_stark::field::F::new(1);
    assert_eq!(
        verify_program(&vp.program, &other, &outer, &outer_cfg, 0),
        Err(VerifyProgramError::Verify(VerifyError::Statement))
    );
}
