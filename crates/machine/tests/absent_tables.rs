//! Absent tables (docs/stark.md §10) and the machine: only POSEIDON2 (a precompile table) may be absent (a
//! run without calls proves it absent); a proof whose height byte marks any other table absent is refused by the verifier with `RequiredTableAbsent` naming
//! the table, and by `proof_security` with `ProofShape`, never a panic.

use zkrv_executor::Program;
use zkrv_machine::{MachineError, VerifyError, TABLE_NAMES};
use zkrv_stark::proof::ABSENT_LOG_HEIGHT;
use zkrv_stark::StarkConfig;

fn guest(name: &str) -> Program {
    let path = format!("{}/../../guests/bin/{name}.elf", env!("CARGO_MANIFEST_DIR"));
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn no_machine_table_may_be_absent() {
    let p = guest("fibonacci");
    let config = StarkConfig::dev();
    let airs = zkrv_machine::compiled_airs(&p, &config).unwrap();
    assert_eq!(airs.len(), TABLE_NAMES.len());
    let optional: Vec<&str> = airs
        .iter()
        .filter(|a| a.may_be_absent)
        .map(|a| a.name.as_str())
        .collect();
    // Only the precompile tables (docs/tables.md §6.19) may be absent; fibonacci calls none.
    assert_eq!(optional, ["POSEIDON2"]);

    let (statement, proof) = zkrv_machine::prove(&p, &30u64.to_le_bytes(), &config).unwrap();
    zkrv_machine::verify(&p, &statement, &proof, &config, 0).unwrap();
    let p2 = zkrv_machine::table_id::POSEIDON2;
    assert_eq!(
        proof.stark.log_heights[p2], ABSENT_LOG_HEIGHT,
        "no call: POSEIDON2 absent"
    );
    for (t, air) in airs.iter().enumerate().filter(|(_, a)| !a.may_be_absent) {
        let mut forged = proof.clone();
        forged.stark.log_heights[t] = ABSENT_LOG_HEIGHT;
        let err = zkrv_machine::verify(&p, &statement, &forged, &config, 0).unwrap_err();
        assert!(
            matches!(
                &err,
                VerifyError::Stark(zkrv_stark::VerifyError::RequiredTableAbsent { table })
                    if *table == air.name
            ),
            "table {t}: {err:?}"
        );
        match zkrv_machine::proof_security(&p, &forged, &config) {
            Err(MachineError::ProofShape(m)) => {
                assert!(m.contains(&format!("`{}` is absent", air.name)), "{m}")
            }
            other => panic!("table {t}: {other:?}"),
        }
    }
}
