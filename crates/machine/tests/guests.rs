//! Real compiled guests (guests/bin, built from guests/c) that the current tables can prove.

use zkrv_executor::Program;
use zkrv_machine::{prove, verify, Statement};
use zkrv_stark::StarkConfig;

fn guest(name: &str) -> Program {
    let path = format!("{}/../../guests/bin/{name}.elf", env!("CARGO_MANIFEST_DIR"));
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn exitcode_guest_proves_and_verifies() {
    // guests/c/programs/exitcode.c: writes "bye" to the public output, a debug line, exits with 42.
    let p = guest("exitcode");
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::default()
    };
    let t0 = std::time::Instant::now();
    let (st, proof) = prove(&p, b"", &config).unwrap();
    println!(
        "exitcode.elf: prove {:?}, proof {} bytes",
        t0.elapsed(),
        proof.to_bytes().len()
    );
    assert_eq!(st.exit_code, 42);
    assert_eq!(st.output, b"bye");
    verify(&p, &st, &proof, &config).unwrap();
    // Another output, or the right bytes in another order, is rejected.
    for output in [b"bye!".to_vec(), b"eby".to_vec(), Vec::new()] {
        let lie = Statement {
            output,
            ..st.clone()
        };
        assert!(verify(&p, &lie, &proof, &config).is_err());
    }
}
