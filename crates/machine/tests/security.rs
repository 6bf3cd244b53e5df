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
