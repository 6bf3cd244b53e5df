//! Mixed-height Keccak Merkle tree: naive recomputation, mixed heights, tamper detection.

use rand::{rngs::StdRng, Rng, SeedableRng};
use tiny_keccak::{Hasher, Keccak};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::*;

fn seed() -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x3e41);
    println!("seed = {s}");
    s
}

fn rand_matrix(rng: &mut StdRng, h: usize, w: usize) -> RowMajorMatrix {
    RowMajorMatrix::from_fn(h, w, |_, _| F::new(rng.gen()))
}

fn keccak(parts: &[&[u8]]) -> [u8; 32] {
    let mut k = Keccak::v256();
    for p in parts {
        k.update(p);
    }
    let mut o = [0u8; 32];
    k.finalize(&mut o);
    o
}

fn row_bytes(rows: &[&[F]]) -> Vec<u8> {
    rows.iter()
        .flat_map(|r| r.iter().flat_map(|x| x.as_canonical_u64().to_le_bytes()))
        .collect()
}

/// Naive recomputation straight from the docs/architecture.md description.
fn naive_root(mats: &[RowMajorMatrix]) -> [u8; 32] {
    let lh: Vec<usize> = mats.iter().map(|m| m.log_height().unwrap()).collect();
    let l = *lh.iter().max().unwrap();
    let rows_hash = |level: usize, j: usize| {
        let rows: Vec<&[F]> = mats
            .iter()
            .zip(&lh)
            .filter(|(_, &h)| h == level)
            .map(|(m, _)| m.row(j))
            .collect();
        (!rows.is_empty()).then(|| keccak(&[&row_bytes(&rows)]))
    };
    let mut layer: Vec<[u8; 32]> = (0..1 << l).map(|j| rows_hash(l, j).unwrap()).collect();
    for level in (0..l).rev() {
        layer = (0..1 << level)
            .map(|j| {
                let p = keccak(&[&layer[2 * j], &layer[2 * j + 1]]);
                match rows_hash(level, j) {
                    Some(r) => keccak(&[&p, &r]),
                    None => p,
                }
            })
            .collect();
    }
    layer[0]
}

#[test]
fn merkle_single_matrix_matches_naive() {
    let mut rng = StdRng::seed_from_u64(seed());
    for log_h in [0usize, 1, 3, 11] {
        let m = rand_matrix(&mut rng, 1 << log_h, 5);
        let tree = MerkleTree::new(vec![m.clone()]);
        assert_eq!(tree.root(), naive_root(std::slice::from_ref(&m)));
        let dims = tree.dims();
        for idx in [0, (1usize << log_h) - 1, (1usize << log_h) / 2] {
            let (rows, proof) = tree.open(idx);
            assert_eq!(rows[0], m.row(idx));
            verify_batch(&tree.root(), &dims, idx, &rows, &proof, 0).unwrap();
        }
    }
    // Leaf of a single row of width 1 is keccak of its 8 LE canonical bytes.
    let m = RowMajorMatrix::new(vec![F::new(5)], 1);
    assert_eq!(
        MerkleTree::new(vec![m]).root(),
        keccak(&[&5u64.to_le_bytes()])
    );
}

#[test]
fn merkle_mixed_heights() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 1);
    // Unsorted heights, two matrices sharing a height, a height-1 matrix, a gap (no height 2^2).
    let mats = vec![
        rand_matrix(&mut rng, 8, 3),
        rand_matrix(&mut rng, 32, 2),
        rand_matrix(&mut rng, 1, 4),
        rand_matrix(&mut rng, 8, 1),
        rand_matrix(&mut rng, 32, 7),
        rand_matrix(&mut rng, 2, 2),
    ];
    let tree = MerkleTree::new(mats.clone());
    assert_eq!(tree.root(), naive_root(&mats));
    let dims = tree.dims();
    for idx in 0..32 {
        let (rows, proof) = tree.open(idx);
        assert_eq!(proof.siblings.len(), 5);
        for (m, r) in mats.iter().zip(&rows) {
            let lh = m.log_height().unwrap();
            assert_eq!(r.as_slice(), m.row(idx >> (5 - lh)));
        }
        verify_batch(&tree.root(), &dims, idx, &rows, &proof, 0).unwrap();
    }
    // Order within a height matters.
    let mut swapped = mats.clone();
    swapped.swap(1, 4);
    assert_ne!(MerkleTree::new(swapped).root(), tree.root());
}

#[test]
fn merkle_tamper_detection() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 2);
    let mats = vec![rand_matrix(&mut rng, 16, 3), rand_matrix(&mut rng, 4, 2)];
    let tree = MerkleTree::new(mats);
    let root = tree.root();
    let dims = tree.dims();
    let idx = 6;
    let (rows, proof) = tree.open(idx);

    let mut bad = rows.clone();
    bad[1][0] += F::ONE;
    assert_eq!(
        verify_batch(&root, &dims, idx, &bad, &proof, 0),
        Err(MerkleError::RootMismatch)
    );

    let mut badp = proof.clone();
    badp.siblings[2][7] ^= 1;
    assert_eq!(
        verify_batch(&root, &dims, idx, &rows, &badp, 0),
        Err(MerkleError::RootMismatch)
    );

    assert_eq!(
        verify_batch(&root, &dims, idx ^ 1, &rows, &proof, 0),
        Err(MerkleError::RootMismatch)
    );
    assert!(matches!(
        verify_batch(&root, &dims, 16, &rows, &proof, 0),
        Err(MerkleError::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        verify_batch(&root, &dims, usize::MAX, &rows, &proof, 0),
        Err(MerkleError::IndexOutOfRange { .. })
    ));
    let mut short = proof.clone();
    short.siblings.pop();
    assert!(matches!(
        verify_batch(&root, &dims, idx, &rows, &short, 0),
        Err(MerkleError::ProofLength { .. })
    ));
    assert!(matches!(
        verify_batch(&root, &dims, idx, &rows[..1], &proof, 0),
        Err(MerkleError::RowCount { .. })
    ));
    let mut wide = rows.clone();
    wide[0].push(F::ZERO);
    assert!(matches!(
        verify_batch(&root, &dims, idx, &wide, &proof, 0),
        Err(MerkleError::RowWidth { .. })
    ));
    assert_eq!(
        verify_batch(&root, &[], idx, &[], &proof, 0),
        Err(MerkleError::NoMatrices)
    );
    let huge = [
        MatrixDims {
            width: 3,
            log_height: 1000,
        },
        dims[1],
    ];
    assert!(verify_batch(&root, &huge, idx, &rows, &proof, 0).is_err());
    // Non-canonical representation of the same value still verifies (hash uses canonical form).
    let mut noncanon = rows.clone();
    let v = noncanon[0][0].as_canonical_u64();
    if v < (1u64 << 32) - 1 {
        noncanon[0][0] = F::new(v + 0xffff_ffff_0000_0001);
        verify_batch(&root, &dims, idx, &noncanon, &proof, 0).unwrap();
    }
}

#[test]
fn merkle_from_layers_round_trip_and_shape_checks() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 3);
    let mats = vec![
        rand_matrix(&mut rng, 64, 5),
        rand_matrix(&mut rng, 16, 3),
        rand_matrix(&mut rng, 64, 2),
    ];
    let tree = MerkleTree::new(mats.clone());
    let rebuilt =
        MerkleTree::from_layers(mats.clone(), Vec::new(), tree.layers().to_vec()).unwrap();
    assert_eq!(rebuilt.root(), tree.root());
    let dims = tree.dims();
    for index in [0, 17, 63] {
        assert_eq!(rebuilt.open(index), tree.open(index));
        let (rows, proof) = rebuilt.open(index);
        verify_batch(&tree.root(), &dims, index, &rows, &proof, 0).unwrap();
    }
    let mut short = tree.layers().to_vec();
    short.pop();
    assert_eq!(
        MerkleTree::from_layers(mats.clone(), Vec::new(), short).unwrap_err(),
        MerkleError::LayerCount {
            expected: 7,
            got: 6
        }
    );
    let mut bad = tree.layers().to_vec();
    bad[2].push([0; 32]);
    assert_eq!(
        MerkleTree::from_layers(mats.clone(), Vec::new(), bad).unwrap_err(),
        MerkleError::LayerSize {
            layer: 2,
            expected: 16,
            got: 17
        }
    );
    let odd = vec![RowMajorMatrix::new(vec![F::new(1); 6], 2)];
    assert_eq!(
        MerkleTree::from_layers(odd, Vec::new(), vec![vec![[0; 32]]]).unwrap_err(),
        MerkleError::MatrixShape(0)
    );
    assert_eq!(
        MerkleTree::from_layers(Vec::new(), Vec::new(), vec![]).unwrap_err(),
        MerkleError::NoMatrices
    );
}

#[test]
fn verify_batch_many_agrees_with_verify_batch() {
    let mut rng = StdRng::seed_from_u64(seed());
    // Mixed heights (injections at two levels), a non-multiple-of-8 number of openings.
    let mats = vec![
        rand_matrix(&mut rng, 64, 5),
        rand_matrix(&mut rng, 16, 3),
        rand_matrix(&mut rng, 64, 2),
        rand_matrix(&mut rng, 4, 7),
    ];
    let dims: Vec<MatrixDims> = mats
        .iter()
        .map(|m| MatrixDims {
            width: m.width,
            log_height: m.log_height().unwrap(),
        })
        .collect();
    let tree = MerkleTree::new(mats);
    let root = tree.root();
    let mut cases: Vec<(usize, Vec<Vec<F>>, MerkleProof)> = (0..21)
        .map(|_| {
            let i = rng.gen_range(0..64);
            let (rows, proof) = tree.open(i);
            (i, rows, proof)
        })
        .collect();
    // Tamper some: a row value, a sibling, the index, the path length, a row width, the row count.
    cases[1].1[1][2] += F::ONE;
    cases[4].2.siblings[3][0] ^= 1;
    cases[6].0 ^= 1;
    cases[9].2.siblings.pop();
    cases[11].1[3].push(F::ONE);
    cases[13].1.pop();
    cases[15].0 = 64;
    cases[17].1[0][0] += F::ONE;
    cases[17].2.siblings[0][5] ^= 4;
    let openings: Vec<Opening> = cases
        .iter()
        .map(|(index, rows, proof)| Opening {
            index: *index,
            rows,
            proof,
        })
        .collect();
    let many = verify_batch_many(&root, &dims, &openings, 0);
    assert_eq!(many.len(), cases.len());
    let mut rejected = 0;
    for (k, (index, rows, proof)) in cases.iter().enumerate() {
        let one = verify_batch(&root, &dims, *index, rows, proof, 0);
        assert_eq!(many[k], one, "opening {k}");
        rejected += one.is_err() as usize;
    }
    assert_eq!(
        rejected, 8,
        "the 8 tampered openings are rejected, the others accepted"
    );
    assert_eq!(
        verify_batch_many(&root, &[], &openings[..1], 0),
        vec![Err(MerkleError::NoMatrices)]
    );
    assert!(verify_batch_many(&root, &dims, &[], 0).is_empty());
}
