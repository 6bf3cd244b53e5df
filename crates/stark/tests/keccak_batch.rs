//! Batched Keccak-256 (`zkrv_stark::keccak`) against the reference `tiny_keccak::Keccak::v256`: the
//! permutation, every message length of whole words up to 600 bytes, leaves of one or several matrices
//! (non-canonical field representatives included), node compression, at every kernel width (1, 4, 8 lanes;
//! widths the CPU lacks fall back to a narrower kernel, still checked).

use rand::{rngs::StdRng, Rng, SeedableRng};
use tiny_keccak::{Hasher, Keccak};
use zkrv_stark::field::{PrimeField64, F};
use zkrv_stark::keccak::*;

fn seed() -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6b65);
    println!("seed = {s}");
    s
}

fn reference(data: &[u8]) -> [u8; 32] {
    let mut k = Keccak::v256();
    k.update(data);
    let mut o = [0u8; 32];
    k.finalize(&mut o);
    o
}

#[test]
fn permutation_matches_tiny_keccak() {
    let mut rng = StdRng::seed_from_u64(seed());
    for _ in 0..100 {
        let mut a: [u64; 25] = std::array::from_fn(|_| rng.gen());
        let mut b = a;
        keccak_f1600(&mut a);
        tiny_keccak::keccakf(&mut b);
        assert_eq!(a, b);
    }
}

#[test]
fn words_all_lengths_to_600_bytes() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 1);
    for n in 0..=75 {
        let words: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(keccak256_words(&words), reference(&bytes), "{n} words");
    }
}

#[test]
fn leaves_match_reference_all_widths_and_lanes() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 2);
    // Non-canonical representatives (>= p) must hash as their canonical value.
    let elem = |rng: &mut StdRng| {
        if rng.gen_bool(0.1) {
            F::new(u64::MAX - rng.gen_range(0..10u64))
        } else {
            F::new(rng.gen())
        }
    };
    for total_width in 1..=75usize {
        // Split the width over one to three matrices.
        let parts = 1 + total_width % 3;
        let mut widths = vec![total_width / parts; parts];
        widths[0] += total_width % parts;
        widths.retain(|&w| w > 0);
        let height = 1 + rng.gen_range(0..21usize);
        let mats: Vec<Vec<F>> = widths
            .iter()
            .map(|&w| (0..height * w).map(|_| elem(&mut rng)).collect())
            .collect();
        let refs: Vec<(&[F], usize)> = mats
            .iter()
            .zip(&widths)
            .map(|(m, &w)| (&m[..], w))
            .collect();
        let expect: Vec<[u8; 32]> = (0..height)
            .map(|i| {
                let bytes: Vec<u8> = refs
                    .iter()
                    .flat_map(|&(m, w)| m[i * w..(i + 1) * w].iter())
                    .flat_map(|x| x.as_canonical_u64().to_le_bytes())
                    .collect();
                reference(&bytes)
            })
            .collect();
        for lanes in [1, 4, 8] {
            let first = rng.gen_range(0..height);
            let mut out = vec![[0u8; 32]; height - first];
            hash_leaves_with(lanes, &refs, first, &mut out);
            assert_eq!(
                out,
                expect[first..],
                "width {total_width} lanes {lanes} first {first}"
            );
        }
    }
}

#[test]
fn compression_matches_reference() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 3);
    for n in 1..40usize {
        let children: Vec<[u8; 32]> = (0..2 * n).map(|_| rng.gen()).collect();
        let expect: Vec<[u8; 32]> = children.chunks(2).map(|p| reference(&p.concat())).collect();
        for lanes in [1, 4, 8] {
            let mut out = vec![[0u8; 32]; n];
            compress_with(
                lanes,
                |k| (&children[2 * k], &children[2 * k + 1]),
                &mut out,
            );
            assert_eq!(out, expect, "{n} nodes, lanes {lanes}");
        }
        let mut out = vec![[0u8; 32]; n];
        compress_layer(&children, &mut out);
        assert_eq!(out, expect);
        let mut inj = children[..n].to_vec();
        compress_inject(&mut inj, &children[n..]);
        let expect: Vec<[u8; 32]> = (0..n)
            .map(|k| reference(&[children[k], children[n + k]].concat()))
            .collect();
        assert_eq!(inj, expect);
    }
}
