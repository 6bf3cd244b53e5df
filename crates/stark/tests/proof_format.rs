//! The proof byte format: round trip, typed errors, and a seeded mutation fuzz of `verify_bytes` (it must
//! never panic and never accept a changed proof). Set `ZKRV_FUZZ_ITERS` / `ZKRV_FUZZ_SEED` for longer runs.

mod proto_common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use proto_common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zkrv_stark::proof::{ProofFormatError, MAGIC};
use zkrv_stark::{preprocess, prove, verify_bytes, Proof, StarkConfig, VerifyError};

const STMT: &[u8] = b"fuzz";

/// Config, fixture, preprocessed data and proof bytes.
type Setup = (StarkConfig, Fixture, zkrv_stark::PreprocessedData, Vec<u8>);

fn proof_bytes() -> Setup {
    proof_bytes_with(StarkConfig::dev(), 3)
}

fn proof_bytes_with(config: StarkConfig, log_n: usize) -> Setup {
    let fx = fixture(log_n);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let proof = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, STMT).unwrap();
    (config, fx, pre, proof.to_bytes())
}

#[test]
fn round_trip_and_typed_errors() {
    let (_, _, _, bytes) = proof_bytes();
    let proof = Proof::from_bytes(&bytes).unwrap();
    assert_eq!(proof.to_bytes(), bytes);
    assert_eq!(&bytes[..4], MAGIC);

    let mut b = bytes.clone();
    b[0] = b'X';
    assert_eq!(Proof::from_bytes(&b), Err(ProofFormatError::Magic));
    let mut b = bytes.clone();
    b[4] = 9;
    assert_eq!(Proof::from_bytes(&b), Err(ProofFormatError::Version(9)));
    // The previous versions (6: instance constants in the machine's circuits; 5: the AIRs before the 17-row
    // SHA256 table; 4: FRI of arity 2 only): refused by name, with what to do.
    for old in [4u8, 5, 6] {
        b[4] = old;
        let e = Proof::from_bytes(&b).unwrap_err();
        assert_eq!(e, ProofFormatError::Version(old as u16));
        assert!(
            e.to_string().starts_with(&format!(
                "unsupported proof version {old} (this zkrv reads version 7 only"
            )) && e.to_string().ends_with("prove again with this zkrv)"),
            "{e}"
        );
    }
    let mut b = bytes.clone();
    b.push(0);
    assert_eq!(Proof::from_bytes(&b), Err(ProofFormatError::Trailing(1)));
    // Every truncation is an error (sampled prefixes to keep the test fast).
    for len in (0..bytes.len()).step_by(61) {
        assert!(Proof::from_bytes(&bytes[..len]).is_err(), "prefix {len}");
    }
    // A huge length is rejected before allocating: log_heights length at offset 39.
    let mut b = bytes.clone();
    b[39..43].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        Proof::from_bytes(&b),
        Err(ProofFormatError::Length { offset: 39, .. })
    ));
    // Non-canonical field element: the first bus sum coefficient.
    // Layout: 4 magic + 2 version + 1 zk flag + 32 digest + 4 len + 2 heights + 32 main root + 1 flag
    // + 32 aux root
    // + 4 bus-sum count = offset 114.
    let mut b = bytes.clone();
    b[114..122].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        Proof::from_bytes(&b),
        Err(ProofFormatError::NonCanonical(114))
    );
}

#[derive(Debug)]
enum Mutation {
    FlipBits(Vec<(usize, u8)>),
    SetByte(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    BigLength(usize, u32),
    NonCanonical(usize),
    CopyChunk(usize, usize, usize),
}

fn random_mutation(rng: &mut StdRng, len: usize) -> Mutation {
    match rng.gen_range(0..8) {
        0 => Mutation::FlipBits(
            (0..rng.gen_range(1..8))
                .map(|_| (rng.gen_range(0..len), 1u8 << rng.gen_range(0..8)))
                .collect(),
        ),
        1 => Mutation::SetByte(rng.gen_range(0..len), rng.gen()),
        2 => Mutation::Truncate(rng.gen_range(0..len)),
        3 => {
            let k = rng.gen_range(1..64);
            Mutation::Insert(rng.gen_range(0..len), (0..k).map(|_| rng.gen()).collect())
        }
        4 => {
            let at = rng.gen_range(0..len);
            Mutation::Delete(at, rng.gen_range(1..64).min(len - at))
        }
        5 => {
            let v = match rng.gen_range(0..4) {
                0 => u32::MAX,
                1 => rng.gen_range(0..8),
                2 => rng.gen_range(0..1 << 20),
                _ => rng.gen(),
            };
            Mutation::BigLength(rng.gen_range(0..len.saturating_sub(4)), v)
        }
        6 => Mutation::NonCanonical(rng.gen_range(0..len.saturating_sub(8))),
        _ => {
            let from = rng.gen_range(0..len);
            let to = rng.gen_range(0..len);
            Mutation::CopyChunk(from, to, rng.gen_range(1..256))
        }
    }
}

fn apply(m: &Mutation, b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    match m {
        Mutation::FlipBits(bits) => {
            for &(i, mask) in bits {
                v[i] ^= mask;
            }
        }
        Mutation::SetByte(i, x) => v[*i] = *x,
        Mutation::Truncate(n) => v.truncate(*n),
        Mutation::Insert(at, bytes) => {
            v.splice(*at..*at, bytes.iter().copied());
        }
        Mutation::Delete(at, k) => {
            v.drain(*at..*at + *k);
        }
        Mutation::BigLength(at, x) => v[*at..*at + 4].copy_from_slice(&x.to_le_bytes()),
        Mutation::NonCanonical(at) => {
            v[*at..*at + 8].copy_from_slice(&(0xffff_ffff_0000_0001u64 + 5).to_le_bytes())
        }
        Mutation::CopyChunk(from, to, k) => {
            let k = (*k).min(v.len() - from).min(v.len() - to);
            let chunk = v[*from..*from + k].to_vec();
            v[*to..*to + k].copy_from_slice(&chunk);
        }
    }
    v
}

#[test]
fn mutated_proofs_never_panic_nor_verify() {
    let iters: usize = std::env::var("ZKRV_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    mutation_fuzz(proof_bytes(), iters);
}

/// The same over a zk proof (salted paths, randomized quotient, codeword), fewer iterations.
#[test]
fn mutated_zk_proofs_never_panic_nor_verify() {
    let iters: usize = std::env::var("ZKRV_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let config = StarkConfig {
        zk_seed: Some(9),
        ..StarkConfig::dev_zk()
    };
    mutation_fuzz(proof_bytes_with(config, 7), iters);
}

fn mutation_fuzz((config, fx, pre, bytes): Setup, iters: usize) {
    let seed: u64 = std::env::var("ZKRV_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    println!(
        "mutation fuzz (zk {}): seed {seed}, {iters} iterations (ZKRV_FUZZ_SEED={seed} to replay)",
        config.zk
    );
    let original = Proof::from_bytes(&bytes).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut rejected_format = 0usize;
    let mut accepted_same = 0usize;
    let t0 = std::time::Instant::now();
    for i in 0..iters {
        let m = random_mutation(&mut rng, bytes.len());
        let mutated = apply(&m, &bytes);
        let r = catch_unwind(AssertUnwindSafe(|| {
            verify_bytes(&config, 0, &airs(), &pre, &fx.public, STMT, &mutated)
        }));
        match r {
            Err(_) => panic!("seed {seed} iteration {i}: verify_bytes panicked on {m:?}"),
            Ok(Err(VerifyError::Format(_))) => rejected_format += 1,
            Ok(Err(_)) => {}
            Ok(Ok(())) => {
                // Only a byte-identical proof (e.g. a bit flipped twice) may verify.
                let p = Proof::from_bytes(&mutated).unwrap();
                assert_eq!(
                    p, original,
                    "seed {seed} iteration {i}: mutated proof verified: {m:?}"
                );
                accepted_same += 1;
            }
        }
    }
    println!(
        "{iters} mutants in {:?}: {rejected_format} rejected by the decoder, {accepted_same} unchanged",
        t0.elapsed()
    );
}

/// Structure-aware mutations: grow or shrink one nested vector of the proof (then verify the struct
/// directly). Shapes the byte mutations rarely reach; must never panic nor verify.
#[test]
fn reshaped_proofs_never_panic_nor_verify() {
    use zkrv_stark::field::Ext3;
    use zkrv_stark::verify;
    let seed: u64 = std::env::var("ZKRV_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    println!("reshape fuzz: seed {seed}");
    let (config, fx, pre, bytes) = proof_bytes();
    let original = Proof::from_bytes(&bytes).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    fn edit<T: Clone>(v: &mut Vec<T>, rng: &mut StdRng, fresh: T) {
        match rng.gen_range(0..3) {
            0 => {
                v.pop();
            }
            1 => v.push(fresh),
            _ => {
                if !v.is_empty() {
                    let i = rng.gen_range(0..v.len());
                    v.insert(i, v[i].clone());
                }
            }
        }
    }
    for i in 0..600 {
        let mut p = original.clone();
        match rng.gen_range(0..12) {
            0 => edit(&mut p.log_heights, &mut rng, 3),
            1 => edit(&mut p.bus_sums, &mut rng, Ext3::ONE),
            2 => {
                let r = rng.gen_range(0..p.opened.len());
                edit(&mut p.opened[r], &mut rng, vec![]);
            }
            3 => {
                let r = rng.gen_range(0..p.opened.len());
                let m = rng.gen_range(0..p.opened[r].len());
                edit(&mut p.opened[r][m], &mut rng, vec![Ext3::ONE]);
            }
            4 => edit(&mut p.opened, &mut rng, vec![]),
            5 => edit(&mut p.pcs.fri_roots, &mut rng, [7u8; 32]),
            6 => edit(&mut p.pcs.final_poly, &mut rng, Ext3::ONE),
            7 => {
                let first = p.pcs.round_openings[0].clone();
                edit(&mut p.pcs.round_openings, &mut rng, first)
            }
            8 => {
                let o = &mut p.pcs.round_openings;
                let r = rng.gen_range(0..o.len());
                let m = rng.gen_range(0..o[r].rows.len());
                edit(&mut o[r].rows[m], &mut rng, vec![]);
            }
            9 => {
                let o = &mut p.pcs.round_openings;
                let r = rng.gen_range(0..o.len());
                edit(&mut o[r].siblings, &mut rng, [1u8; 32]);
            }
            10 => {
                let f = p.pcs.fri_openings[0].clone();
                edit(&mut p.pcs.fri_openings, &mut rng, f);
            }
            _ => {
                let o = &mut p.pcs.round_openings;
                let r = rng.gen_range(0..o.len());
                if let Some(row) = o[r].rows.first_mut().and_then(|m| m.first_mut()) {
                    edit(row, &mut rng, zkrv_stark::field::F::new(1));
                }
            }
        }
        if p == original {
            continue;
        }
        let r = catch_unwind(AssertUnwindSafe(|| {
            verify(&config, 0, &airs(), &pre, &fx.public, STMT, &p)
        }));
        match r {
            Err(_) => panic!("seed {seed} iteration {i}: verify panicked"),
            Ok(Ok(())) => panic!("seed {seed} iteration {i}: reshaped proof verified"),
            Ok(Err(_)) => {}
        }
    }
}
