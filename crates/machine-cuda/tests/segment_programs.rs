//! The generated GPU programs of a segmented run (issue 28 item 1): the AIRs' instance constants (the CPU's
//! start pc, end pc and cycles, INPUT's first index and end-of-input index) are public values read from the
//! kernels' parameter blocks, so two middle segments of one run have byte-identical LogUp aux and quotient
//! sources for every table (one NVRTC compile per table for the whole run), while their parameter blocks
//! differ exactly where the public values sit. No GPU needed.
#![cfg(feature = "cuda")]

use zkrv_cuda::logup::{aux_kernel_source, aux_params};
use zkrv_cuda::quotient::{quotient_kernel_sources, quotient_params};
use zkrv_executor::{execute_segmented, Program};
use zkrv_machine::compiled_airs_for;
use zkrv_machine::registry::Table;
use zkrv_machine::segment::{segment_run, SegmentHeader};
use zkrv_machine::tables::input::EofRule;
use zkrv_stark::field::{Ext3, PrimeField64, F};
use zkrv_stark::logup::LogupChallenges;
use zkrv_stark::StarkConfig;

fn guest(name: &str) -> (Program, Vec<u8>) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
    let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
    let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap_or_default();
    (Program::from_elf(&elf).unwrap(), input)
}

/// The headers of `name`'s segments of `cycles` cycles (each segment executed, no traces built).
fn headers(name: &str, cycles: u64) -> Vec<SegmentHeader> {
    let (program, input) = guest(name);
    let cps = execute_segmented(&program, &input, cycles, 1 << 26)
        .unwrap()
        .checkpoints;
    cps.iter()
        .map(|cp| {
            segment_run(&program, &input, cp, cps.len() as u32, [7; 32])
                .unwrap()
                .header
        })
        .collect()
}

#[test]
fn middle_segments_share_their_generated_programs() {
    let hs = headers("sha256", 2047);
    assert!(hs.len() >= 5, "{} segments", hs.len());
    let kind = |h: &SegmentHeader| std::mem::discriminant(&h.air_params().eof);
    // Two middle segments with the same end-of-input kind and different start pcs, and two with different
    // first input indices where the run has them.
    let middle = &hs[1..hs.len() - 1];
    let mut pairs = Vec::new();
    for (i, a) in middle.iter().enumerate() {
        for b in &middle[i + 1..] {
            if kind(a) == kind(b) && a.start.pc != b.start.pc {
                pairs.push((a, b));
                break;
            }
        }
    }
    let by_input = middle
        .iter()
        .zip(&middle[1..])
        .find(|(a, b)| kind(a) == kind(b) && a.start.input_cursor != b.start.input_cursor);
    pairs.truncate(2);
    pairs.extend(by_input);
    assert!(!pairs.is_empty());
    let e = |k: u64| Ext3::from_u64s([k, 3 * k + 1, k * k + 5]);
    let ch = LogupChallenges::new(e(1), e(2), 8);
    for config in [StarkConfig::default(), StarkConfig::dev_zk()] {
        for &(a, b) in &pairs {
            let ca = compiled_airs_for(&a.air_params(), &config).unwrap();
            let cb = compiled_airs_for(&b.air_params(), &config).unwrap();
            for (x, y) in ca.iter().zip(&cb) {
                let what = format!("segments {} and {}: {}", a.index, b.index, x.name);
                assert_eq!(x.circuit.nodes, y.circuit.nodes, "{what}");
                assert_eq!(aux_kernel_source(x), aux_kernel_source(y), "{what}: aux");
                assert_eq!(
                    quotient_kernel_sources(x),
                    quotient_kernel_sources(y),
                    "{what}: quotient"
                );
                if x.public_values.is_empty() {
                    assert!(y.public_values.is_empty(), "{what}");
                    continue;
                }
                // The per-proof parameter blocks carry the values, at the end of the aux block and right
                // before the Z_H table of the quotient block.
                let pa = aux_params(x, 10, &ch, 20).unwrap();
                let pb = aux_params(y, 10, &ch, 20).unwrap();
                let k = x.public_values.len();
                let canon = |v: &[F]| v.iter().map(|f| f.as_canonical_u64()).collect::<Vec<_>>();
                assert_eq!(pa[pa.len() - k..], canon(&x.public_values)[..], "{what}");
                assert_eq!(pa[..pa.len() - k], pb[..pb.len() - k], "{what}");
                let (qa, qb) = (
                    quotient_params(x, 10, 2, &ch, e(3), e(4)),
                    quotient_params(y, 10, 2, &ch, e(3), e(4)),
                );
                let zh = 2 * 4;
                assert_eq!(
                    qa[qa.len() - zh - k..qa.len() - zh],
                    canon(&x.public_values)[..],
                    "{what}"
                );
                assert_eq!(qa.len(), qb.len());
                let differ: Vec<usize> = (0..qa.len()).filter(|&i| qa[i] != qb[i]).collect();
                assert!(
                    differ
                        .iter()
                        .all(|&i| (qa.len() - zh - k..qa.len() - zh).contains(&i)),
                    "{what}: parameters differ outside the public values at {differ:?}"
                );
                if x.public_values != y.public_values {
                    assert!(!differ.is_empty(), "{what}");
                }
            }
            let cpu = Table::Cpu.index();
            assert_ne!(ca[cpu].public_values, cb[cpu].public_values);
        }
    }
    // The input-cursor pair (if any) differs in INPUT's first index.
    if let Some((a, b)) = by_input {
        let p = |h: &SegmentHeader| h.air_params();
        assert_ne!(p(a).input_first, p(b).input_first);
        assert!(!matches!(p(a).eof, EofRule::Any));
    }
}
