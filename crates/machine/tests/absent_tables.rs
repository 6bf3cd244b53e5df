//! Absent tables (docs/stark.md §10) and the machine: only the precompile tables (KECCAKF, SHA256,
//! POSEIDON2) may be absent (a run without calls has none of their rows), so a proof whose height byte marks
//! any other table absent is refused by the verifier with `RequiredTableAbsent` naming the table, and by
//! `proof_security` with `ProofShape`, never a panic.

use zkrv_executor::Program;
use zkrv_machine::{MachineError, VerifyError, TABLE_NAMES};
use zkrv_stark::proof::ABSENT_LOG_HEIGHT;
use zkrv_stark::StarkConfig;

fn guest(name: &str) -> Program {
    let path = format!("{}/../../guests/bin/{name}.elf", env!("CARGO_MANIFEST_DIR"));
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn only_the_precompile_tables_may_be_absent() {
    let p = guest("fibonacci");
    let config = StarkConfig::dev();
    let airs = zkrv_machine::compiled_airs(&p, &config).unwrap();
    assert_eq!(airs.len(), TABLE_NAMES.len());
    let optional: Vec<&str> = airs
        .iter()
        .filter(|a| a.may_be_absent)
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(optional, ["KECCAKF", "SHA256", "POSEIDON2"]);

    let (statement, proof) = zkrv_machine::prove(&p, &30u64.to_le_bytes(), &config).unwrap();
    zkrv_machine::verify(&p, &statement, &proof, &config, 0).unwrap();
    for (t, air) in airs.iter().enumerate() {
        if air.may_be_absent {
            // Absent already: the run calls no precompile.
            assert_eq!(
                proof.stark.log_heights[t], ABSENT_LOG_HEIGHT,
                "{}",
                air.name
            );
            continue;
        }
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
