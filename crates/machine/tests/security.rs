//! The security presets against the estimator (zkrv_stark::security): each meets its level in the Johnson
//! regime for every table height up to 2^MAX_LOG_HEIGHT (all tables that tall: the worst case), in zk and
//! non-zk mode; the dev preset stays below 100 bits; the batch size the estimator derives from the AIRs is
//! the one a real proof has.

use zkrv_executor::Program;
use zkrv_stark::logup::MAX_LOG_HEIGHT;
use zkrv_stark::security::ProofShape;
use zkrv_stark::{SecurityPreset, StarkConfig};

fn guest(name: &str) -> Program {
    let path = format!("{}/../../guests/bin/{name}.elf", env!("CARGO_MANIFEST_DIR"));
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn presets_meet_their_level_at_every_height() {
    let p = guest("exitcode");
    for preset in SecurityPreset::ALL {
        for zk in [false, true] {
            let config = preset.config(zk);
            let min_lh = zkrv_machine::min_height(&config).trailing_zeros() as usize;
            let mut weakest = (u32::MAX, 0);
            for lh in min_lh..=MAX_LOG_HEIGHT {
                let r = zkrv_machine::worst_case_security(&p, &config, lh).unwrap();
                let bits = r.johnson.total_bits();
                if bits < weakest.0 {
                    weakest = (bits, lh);
                }
                if let Some(target) = preset.target_bits() {
                    assert!(
                        bits >= target,
                        "{preset} zk {zk} at 2^{lh}: {bits} bits\n{r}"
                    );
                }
            }
            let top = zkrv_machine::worst_case_security(&p, &config, MAX_LOG_HEIGHT).unwrap();
            println!(
                "{preset}, zk {zk}: weakest {} bits at 2^{}; at 2^{MAX_LOG_HEIGHT}: {}\n{top}",
                weakest.0,
                weakest.1,
                top.summary()
            );
            if preset == SecurityPreset::Dev {
                assert!(top.provable_bits() < 100, "{top}");
                assert!(top.summary().contains("below 100 bits"));
            }
        }
    }
}

/// The DEEP batch size the estimator derives from the AIRs (`ProofShape::for_config`, what `zkrv
/// security` uses) is the number of values a real proof opens, zk and not.
#[test]
fn derived_batch_size_is_the_proofs() {
    let p = guest("fibonacci");
    for zk in [false, true] {
        let config = StarkConfig {
            zk_seed: Some(3),
            ..StarkConfig::dev()
        };
        let config = StarkConfig { zk, ..config };
        let (_, proof) = zkrv_machine::prove(&p, &30u64.to_le_bytes(), &config).unwrap();
        let airs = zkrv_machine::compiled_airs(&p, &config).unwrap();
        let of_proof = ProofShape::of_proof(&airs, &proof.stark);
        let heights: Vec<usize> = proof
            .stark
            .log_heights
            .iter()
            .map(|&h| h as usize)
            .collect();
        let derived = ProofShape::for_config(&airs, &heights, &config);
        println!("zk {zk}: batch {}", of_proof.batch_size);
        assert_eq!(of_proof, derived, "zk {zk}");
        assert_eq!(
            zkrv_machine::proof_security(&p, &proof, &config).unwrap(),
            config.security(&derived)
        );
    }
}
