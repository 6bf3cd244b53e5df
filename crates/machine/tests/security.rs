//! The security presets against the estimator (zkrv_stark::security): each meets its level in the Johnson
//! regime for every table height up to 2^MAX_LOG_HEIGHT (all tables that tall: the worst case), in zk and
//! non-zk mode; the dev preset stays below 100 bits; the batch size the estimator derives from the AIRs is
//! the one a real proof has; the 100- and 128-bit presets keep at least [`MIN_MARGIN_BITS`] over their
//! level for every proof shape the machine produces.

use zkrv_executor::Program;
use zkrv_machine::VerifyError;
use zkrv_stark::air::CompiledAir;
use zkrv_stark::logup::MAX_LOG_HEIGHT;
use zkrv_stark::security::{ProofShape, SecurityReport};
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
        // The present tables (the precompile tables are absent in a run without calls: nothing of them is
        // committed or opened, docs/stark.md §10).
        let (present, heights): (Vec<_>, Vec<usize>) = airs
            .iter()
            .zip(proof.stark.table_log_heights())
            .filter_map(|(a, h)| h.map(|h| (a.clone(), h)))
            .unzip();
        assert_eq!(
            present.len(),
            airs.len() - 3,
            "the three precompile tables are absent"
        );
        let derived = ProofShape::for_config(&present, &heights, &config);
        println!("zk {zk}: batch {}", of_proof.batch_size);
        assert_eq!(of_proof, derived, "zk {zk}");
        assert_eq!(
            zkrv_machine::proof_security(&p, &proof, &config).unwrap(),
            config.security(&derived)
        );
    }
}

/// The margin every preset with a target keeps over it (bits, Johnson regime, not floored).
const MIN_MARGIN_BITS: f64 = 1.0;

/// The weakest shape of a proof of `airs` whose tallest table has `2^lh` rows: every table at `2^lh` rows
/// (the largest code dimension, LogUp and DEEP terms: each round's error grows with every height) and the
/// largest DEEP batch any heights up to that give (zk: a table below `4 * queries` rows commits more
/// quotient chunks, `zkrv_stark::zk::quotient_layout`). Every round's error is at least that of any real
/// proof of that tallest height, so its report bounds them all from below.
fn weakest_shape(airs: &[CompiledAir], config: &StarkConfig, lh: usize) -> ProofShape {
    let min_lh = config.min_log_height();
    let codeword = if config.zk {
        zkrv_stark::zk::CODEWORD_WIDTH
    } else {
        0
    };
    let batch: usize = (0..airs.len())
        .map(|t| {
            (min_lh..=lh)
                .map(|h| {
                    ProofShape::for_config(&airs[t..t + 1], &[h], config).batch_size - codeword
                })
                .max()
                .unwrap_or(0)
        })
        .sum();
    let mut shape = ProofShape::for_config(airs, &vec![lh; airs.len()], config);
    assert!(batch + codeword >= shape.batch_size);
    shape.batch_size = batch + codeword;
    shape
}

/// Sweeps the tallest table's log height over every height a proof may have (up to
/// `2^MAX_LOG_HEIGHT`), for a whole run's tables and a segment's (which pauses, publishing its registers
/// and pages), zk and not: both presets keep `MIN_MARGIN_BITS` over their level at every height.
#[test]
fn presets_keep_a_margin_at_every_height() {
    let p = guest("exitcode");
    let run = zkrv_machine::AirParams::run(&p).unwrap();
    let paused = zkrv_machine::AirParams {
        end_pc: Some(run.entry + 4),
        input_first: 5,
        eof: zkrv_machine::tables::input::EofRule::None,
        ..run
    };
    for preset in [
        SecurityPreset::Bits100,
        SecurityPreset::Bits100Fast,
        SecurityPreset::Bits128,
    ] {
        let target = preset.target_bits().unwrap();
        for zk in [false, true] {
            let config = preset.config(zk);
            let min_lh = zkrv_machine::min_height(&config).trailing_zeros() as usize;
            for (what, params) in [("run", &run), ("segment", &paused)] {
                let airs = zkrv_machine::compiled_airs_for(params, &config).unwrap();
                let mut least = (f64::INFINITY, 0);
                let mut line = String::new();
                for lh in min_lh..=MAX_LOG_HEIGHT {
                    let r = SecurityReport::new(&config, &weakest_shape(&airs, &config, lh));
                    let margin = r.margin_bits(target);
                    if [min_lh, 16, 20, 22, 24, MAX_LOG_HEIGHT].contains(&lh) {
                        line += &format!(" 2^{lh}: {:.2}", r.provable_round_bits());
                    }
                    if margin < least.0 {
                        least = (margin, lh);
                    }
                    assert!(
                        margin >= MIN_MARGIN_BITS,
                        "{preset} zk {zk} {what} at 2^{lh}: {:.3} bits, margin {margin:.3}\n{r}",
                        r.provable_round_bits()
                    );
                }
                println!(
                    "{preset}, zk {zk}, {what}: least margin {:.2} bits at 2^{};{line}",
                    least.0, least.1
                );
            }
        }
    }
}

/// 20 iterations of a two-instruction loop, then `exit(0)`: 48 cycles, 4 segments of 16 rows.
fn spin_program() -> Program {
    use zkrv_executor::asm::*;
    let mut w = vec![addi(6, 0, 20), addi(5, 5, 1), blt(5, 6, -4)];
    w.extend(li(10, 0));
    w.extend(li(17, 93));
    w.push(ECALL);
    Program::from_words(0x1000, &w).unwrap()
}

fn weak(e: &VerifyError) -> (u32, u32) {
    e.weak_parameters()
        .unwrap_or_else(|| panic!("expected weak parameters, got {e:?}"))
}

/// The four verifier APIs refuse a proof made with parameters below the minimum (the dev preset, one
/// query) with `WeakParameters` naming the proof's own level, and accept it with a minimum of 0; the
/// 100-bit preset passes 100 (segmented: `continuation.rs` verifies with a minimum of 100).
#[test]
fn every_verifier_refuses_weak_parameters() {
    use zkrv_machine::segment::{
        plan_run, prove_plan, prove_segment_with, segment_security, segment_witness, verify_run,
        verify_segment,
    };
    let p = spin_program();
    let one_query = {
        let mut c = StarkConfig::dev();
        c.fri.num_queries = 1;
        c
    };
    for (config, weak_config) in [
        (StarkConfig::dev(), true),
        (one_query, true),
        (SecurityPreset::Bits100.config(false), false),
    ] {
        // One proof: zkrv_machine::verify (and zkrv_stark::verify inside it).
        let (st, proof) = zkrv_machine::prove(&p, b"", &config).unwrap();
        let bits = zkrv_machine::proof_security(&p, &proof, &config)
            .unwrap()
            .provable_bits();
        assert_eq!(bits < 100, weak_config, "{bits}");
        let r = zkrv_machine::verify(&p, &st, &proof, &config, 100);
        if weak_config {
            let e = r.unwrap_err();
            assert!(
                matches!(
                    e,
                    VerifyError::Stark(zkrv_stark::VerifyError::WeakParameters { min: 100, .. })
                ),
                "{e:?}"
            );
            assert_eq!(weak(&e), (bits, 100));
        } else {
            r.unwrap();
        }
        zkrv_machine::verify(&p, &st, &proof, &config, 0).unwrap();
        if config != StarkConfig::dev() {
            continue; // the segment APIs with the dev preset only (the 100-bit preset: continuation.rs)
        }

        // A run in segments: verify_run, and verify_segment on its own.
        let plan = plan_run(&p, b"", 16, 1 << 20, &config).unwrap();
        let n = plan.checkpoints.len();
        assert!(n >= 3, "{n} segments");
        let segs = prove_plan(&p, b"", &plan, &config, 1).unwrap();
        let least = segs
            .iter()
            .map(|s| segment_security(s, &config).unwrap().provable_bits())
            .min()
            .unwrap();
        let r = verify_run(&p, &plan.statement, 16, &segs, &config, 100);
        if weak_config {
            let e = r.unwrap_err();
            assert!(
                matches!(&e, VerifyError::Chain(c)
                    if matches!(c.as_ref(), zkrv_machine::segment::ChainError::Segment { .. })),
                "{e:?}"
            );
            assert_eq!(weak(&e).1, 100);
            assert!(weak(&e).0 >= least && weak(&e).0 < 100, "{e:?}");
        } else {
            r.unwrap();
        }
        verify_run(&p, &plan.statement, 16, &segs, &config, 0).unwrap();

        let w = segment_witness(&p, b"", &plan.checkpoints[1], n as u32, [3; 32], &config).unwrap();
        let (init, out) = (w.init.clone(), w.output.clone());
        let seg = prove_segment_with(&zkrv_stark::backend::CpuBackend::default(), &p, w, &config)
            .unwrap();
        let bits = segment_security(&seg, &config).unwrap().provable_bits();
        let r = verify_segment(&p, &seg, &init, &out, &config, 100);
        if weak_config {
            assert_eq!(weak(&r.unwrap_err()), (bits, 100));
        } else {
            r.unwrap();
        }
        verify_segment(&p, &seg, &init, &out, &config, 0).unwrap();
        verify_segment(&p, &seg, &init, &out, &config, bits).unwrap();
        let r = verify_segment(&p, &seg, &init, &out, &config, bits + 1);
        assert_eq!(weak(&r.unwrap_err()), (bits, bits + 1));
    }
}

/// A proof made with no FRI query (a malicious prover's choice: it opens nothing) is refused with the
/// PCS's own error whatever the minimum.
#[test]
fn no_queries_is_refused_whatever_the_minimum() {
    let p = spin_program();
    for zk in [false, true] {
        let mut config = StarkConfig {
            zk,
            zk_seed: Some(5),
            ..StarkConfig::dev()
        };
        config.fri.num_queries = 0;
        let (st, proof) = zkrv_machine::prove(&p, b"", &config).unwrap();
        for min in [0, 100] {
            let r = zkrv_machine::verify(&p, &st, &proof, &config, min);
            assert!(
                matches!(
                    r,
                    Err(VerifyError::Stark(zkrv_stark::VerifyError::Pcs(
                        zkrv_stark::pcs::PcsError::NoQueries
                    )))
                ),
                "zk {zk} min {min}: {r:?}"
            );
        }
    }
}
