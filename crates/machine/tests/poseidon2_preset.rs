//! A guest proved and verified with the Poseidon2 Merkle and transcript hash (docs/stark.md §11) on the CPU
//! backend: the proof verifies (also after a round trip through its bytes), carries the hash, and a verifier
//! of the other hash, a flipped byte or a tampered statement is refused. (zk mode and the comparison with the
//! Keccak proof are covered on the unit machine, `crates/stark/tests/poseidon2_hash.rs`; one machine proof
//! here keeps CI short.) The recursion verifier program of the same proof accepts it and rejects its
//! tamperings.

use zkrv_executor::Program;
use zkrv_machine::{prove, recursion_program, verify, Proof};
use zkrv_stark::merkle::MerkleHash;
use zkrv_stark::recursion::execute;
use zkrv_stark::StarkConfig;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

#[test]
fn exitcode_proves_and_verifies_with_poseidon2() {
    let path = format!("{ROOT}/guests/bin/exitcode.elf");
    let p = Program::from_elf(&std::fs::read(&path).unwrap()).unwrap();
    let config = StarkConfig::dev().with_hash(MerkleHash::Poseidon2);
    let t0 = std::time::Instant::now();
    let (st, proof) = prove(&p, b"", &config).unwrap();
    println!("proved in {:?}", t0.elapsed());
    assert_eq!(proof.stark.hash, MerkleHash::Poseidon2);
    verify(&p, &st, &proof, &config, 0).unwrap();
    let bytes = proof.to_bytes();
    let back = Proof::from_bytes(&bytes).unwrap();
    verify(&p, &st, &back, &config, 0).unwrap();

    let keccak_cfg = config.clone().with_hash(MerkleHash::Keccak256);
    let e = verify(&p, &st, &proof, &keccak_cfg, 0).unwrap_err();
    assert!(
        e.to_string().contains("hashed with poseidon2") && e.to_string().contains("keccak"),
        "{e}"
    );

    // A flipped byte in the middle of the STARK proof (an opening or a path) and near its end.
    for at in [bytes.len() / 2, bytes.len() - 40] {
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        match Proof::from_bytes(&b) {
            Err(_) => {}
            Ok(bad) => assert!(verify(&p, &st, &bad, &config, 0).is_err(), "byte {at}"),
        }
    }
    // Another exit code in the statement.
    let mut st2 = st.clone();
    st2.exit_code ^= 1;
    assert!(verify(&p, &st2, &proof, &config, 0).is_err());

    // The recursion verifier program (docs/recursion.md §4) of the machine's tables accepts the proof, and
    // rejects it for the other statement (other challenges) and with a flipped opened value.
    let vp = recursion_program(&p, &st, &proof, &config).unwrap();
    let start = (0..vp.program.instrs.len())
        .filter(|&i| vp.program.label(i) == "transcript start")
        .count();
    println!(
        "recursion program: {} instructions, {} public inputs, {start} instructions of the transcript start",
        vp.program.instrs.len(),
        vp.program.public_inputs.len()
    );
    execute(&vp.program, &vp.witness).unwrap();
    let vp2 = recursion_program(&p, &st2, &proof, &config).unwrap();
    assert_eq!(
        vp2.program, vp.program,
        "the program depends on the shape only"
    );
    assert!(execute(&vp2.program, &vp2.witness).is_err());
    let mut bad = proof.clone();
    bad.stark.opened[0][0][0][0] += zkrv_stark::field::Ext3::from(zkrv_stark::field::F::new(1));
    assert!(verify(&p, &st, &bad, &config, 0).is_err());
    let vb = recursion_program(&p, &st, &bad, &config).unwrap();
    let e = execute(&vb.program, &vb.witness).unwrap_err();
    println!("flipped opened value: {e}");
}
