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
            verify_batch(
                zkrv_stark::merkle::MerkleHash::Keccak256,
                &tree.root(),
                &dims,
                idx,
                &rows,
                &proof,
                0,
            )
            .unwrap();
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
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &tree.root(),
            &dims,
            idx,
            &rows,
            &proof,
            0,
        )
        .unwrap();
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
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            idx,
            &bad,
            &proof,
            0
        ),
        Err(MerkleError::RootMismatch)
    );

    let mut badp = proof.clone();
    badp.siblings[2][7] ^= 1;
    assert_eq!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            idx,
            &rows,
            &badp,
            0
        ),
        Err(MerkleError::RootMismatch)
    );

    assert_eq!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            idx ^ 1,
            &rows,
            &proof,
            0
        ),
        Err(MerkleError::RootMismatch)
    );
    assert!(matches!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            16,
            &rows,
            &proof,
            0
        ),
        Err(MerkleError::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            usize::MAX,
            &rows,
            &proof,
            0
        ),
        Err(MerkleError::IndexOutOfRange { .. })
    ));
    let mut short = proof.clone();
    short.siblings.pop();
    assert!(matches!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            idx,
            &rows,
            &short,
            0
        ),
        Err(MerkleError::ProofLength { .. })
    ));
    assert!(matches!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            idx,
            &rows[..1],
            &proof,
            0
        ),
        Err(MerkleError::RowCount { .. })
    ));
    let mut wide = rows.clone();
    wide[0].push(F::ZERO);
    assert!(matches!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            idx,
            &wide,
            &proof,
            0
        ),
        Err(MerkleError::RowWidth { .. })
    ));
    assert_eq!(
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &[],
            idx,
            &[],
            &proof,
            0
        ),
        Err(MerkleError::NoMatrices)
    );
    let huge = [
        MatrixDims {
            width: 3,
            log_height: 1000,
        },
        dims[1],
    ];
    assert!(verify_batch(
        zkrv_stark::merkle::MerkleHash::Keccak256,
        &root,
        &huge,
        idx,
        &rows,
        &proof,
        0
    )
    .is_err());
    // Non-canonical representation of the same value still verifies (hash uses canonical form).
    let mut noncanon = rows.clone();
    let v = noncanon[0][0].as_canonical_u64();
    if v < (1u64 << 32) - 1 {
        noncanon[0][0] = F::new(v + 0xffff_ffff_0000_0001);
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            idx,
            &noncanon,
            &proof,
            0,
        )
        .unwrap();
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
    let rebuilt = MerkleTree::from_layers(
        zkrv_stark::merkle::MerkleHash::Keccak256,
        mats.clone(),
        Vec::new(),
        tree.layers().to_vec(),
    )
    .unwrap();
    assert_eq!(rebuilt.root(), tree.root());
    let dims = tree.dims();
    for index in [0, 17, 63] {
        assert_eq!(rebuilt.open(index), tree.open(index));
        let (rows, proof) = rebuilt.open(index);
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &tree.root(),
            &dims,
            index,
            &rows,
            &proof,
            0,
        )
        .unwrap();
    }
    let mut short = tree.layers().to_vec();
    short.pop();
    assert_eq!(
        MerkleTree::from_layers(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            mats.clone(),
            Vec::new(),
            short
        )
        .unwrap_err(),
        MerkleError::LayerCount {
            expected: 7,
            got: 6
        }
    );
    let mut bad = tree.layers().to_vec();
    bad[2].push([0; 32]);
    assert_eq!(
        MerkleTree::from_layers(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            mats.clone(),
            Vec::new(),
            bad
        )
        .unwrap_err(),
        MerkleError::LayerSize {
            layer: 2,
            expected: 16,
            got: 17
        }
    );
    let odd = vec![RowMajorMatrix::new(vec![F::new(1); 6], 2)];
    assert_eq!(
        MerkleTree::from_layers(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            odd,
            Vec::new(),
            vec![vec![[0; 32]]]
        )
        .unwrap_err(),
        MerkleError::MatrixShape(0)
    );
    assert_eq!(
        MerkleTree::from_layers(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            Vec::new(),
            Vec::new(),
            vec![]
        )
        .unwrap_err(),
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
    let many = verify_batch_many(
        zkrv_stark::merkle::MerkleHash::Keccak256,
        &root,
        &dims,
        &openings,
        0,
    );
    assert_eq!(many.len(), cases.len());
    let mut rejected = 0;
    for (k, (index, rows, proof)) in cases.iter().enumerate() {
        let one = verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &dims,
            *index,
            rows,
            proof,
            0,
        );
        assert_eq!(many[k], one, "opening {k}");
        rejected += one.is_err() as usize;
    }
    assert_eq!(
        rejected, 8,
        "the 8 tampered openings are rejected, the others accepted"
    );
    assert_eq!(
        verify_batch_many(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &root,
            &[],
            &openings[..1],
            0
        ),
        vec![Err(MerkleError::NoMatrices)]
    );
    assert!(verify_batch_many(
        zkrv_stark::merkle::MerkleHash::Keccak256,
        &root,
        &dims,
        &[],
        0
    )
    .is_empty());
}

/// Storage rows `[c·h/B, (c+1)·h/B)` of `m` (`h` its height, `B = 2^log_blowup`).
fn coset_block_of(m: &RowMajorMatrix, log_blowup: usize, c: usize) -> RowMajorMatrix {
    let h = m.height() >> log_blowup;
    RowMajorMatrix::new(
        m.values[c * h * m.width..(c + 1) * h * m.width].to_vec(),
        m.width,
    )
}

/// `from_coset_blocks` (a digest-only tree hashed one coset block at a time) equals `with_salts` over the
/// whole matrices: root, layers, dims, opening paths and salts; its openings carry no rows, and the whole
/// tree's rows verify against its path.
#[test]
fn merkle_from_coset_blocks_matches_whole_tree() {
    use zkrv_stark::zk::{salt_matrix, ZkRng, SALT_WIDTH};
    let seed = seed() ^ 4;
    let mut rng = StdRng::seed_from_u64(seed);
    println!("zk rng test seed = {seed}");
    let zk = ZkRng::from_test_seed(seed);
    for log_blowup in 1..=3usize {
        let b = 1usize << log_blowup;
        // Unsorted mixed heights: two matrices at the top height 32·B, two at 8·B, two of height exactly
        // B (one row per block), one of height 2·B, no matrix at 4·B or 16·B.
        let shapes: Vec<(usize, usize)> = vec![
            (log_blowup + 3, 3),
            (log_blowup + 5, 2),
            (log_blowup, 4),
            (log_blowup + 3, 1),
            (log_blowup + 5, 7),
            (log_blowup, 1),
            (log_blowup + 1, 2),
        ];
        let mats: Vec<RowMajorMatrix> = shapes
            .iter()
            .map(|&(lh, w)| rand_matrix(&mut rng, 1 << lh, w))
            .collect();
        let dims: Vec<MatrixDims> = mats
            .iter()
            .map(|m| MatrixDims {
                width: m.width,
                log_height: m.log_height().unwrap(),
            })
            .collect();
        assert_eq!(
            level_heights_of(&dims),
            vec![log_blowup + 5, log_blowup + 3, log_blowup + 1, log_blowup]
        );
        let lmax = log_blowup + 5;
        for salted in [false, true] {
            let round = 3 + log_blowup as u32;
            let salts: Vec<RowMajorMatrix> = if salted {
                level_heights_of(&dims)
                    .into_iter()
                    .map(|lh| salt_matrix(&zk, round, lh))
                    .collect()
            } else {
                Vec::new()
            };
            let whole = MerkleTree::with_salts(
                zkrv_stark::merkle::MerkleHash::Keccak256,
                mats.clone(),
                salts.clone(),
            );
            if salted {
                // The same salts new_salted draws.
                let ns = MerkleTree::new_salted(
                    zkrv_stark::merkle::MerkleHash::Keccak256,
                    mats.clone(),
                    Some((&zk, round)),
                );
                assert_eq!(ns.root(), whole.root());
            } else {
                assert_eq!(whole.root(), naive_root(&mats));
            }
            let mut calls = Vec::new();
            let blocks = MerkleTree::from_coset_blocks(
                zkrv_stark::merkle::MerkleHash::Keccak256,
                dims.clone(),
                salts,
                log_blowup,
                |c| {
                    calls.push(c);
                    mats.iter()
                        .map(|m| coset_block_of(m, log_blowup, c))
                        .collect()
                },
            );
            let ctx = format!("seed {seed} log_blowup {log_blowup} salted {salted}");
            assert_eq!(
                calls,
                (0..b).collect::<Vec<_>>(),
                "{ctx}: each block once, in order"
            );
            assert_eq!(blocks.root(), whole.root(), "{ctx}");
            assert_eq!(blocks.layers(), whole.layers(), "{ctx}");
            assert_eq!(blocks.dims(), whole.dims(), "{ctx}");
            assert_eq!(blocks.dims(), dims, "{ctx}");
            assert_eq!(blocks.log_max_height(), lmax, "{ctx}");
            assert_eq!(blocks.salts(), whole.salts(), "{ctx}");
            assert!(blocks.matrices().is_empty(), "{ctx}");
            let salt_width = if salted { SALT_WIDTH } else { 0 };
            let mut idxs = vec![
                0,
                1,
                (1 << lmax) - 1,
                1 << (lmax - 1),
                (1 << (lmax - 1)) - 1,
            ];
            idxs.extend((0..8).map(|_| rng.gen_range(0..1usize << lmax)));
            for i in idxs {
                let (rows_w, proof_w) = whole.open(i);
                let (rows_b, proof_b) = blocks.open(i);
                assert!(
                    rows_b.is_empty(),
                    "{ctx} i {i}: a digest-only tree opens no rows"
                );
                assert_eq!(proof_b, proof_w, "{ctx} i {i}");
                assert_eq!(
                    proof_b.salts.len(),
                    if salted { 4 } else { 0 },
                    "{ctx} i {i}"
                );
                verify_batch(
                    zkrv_stark::merkle::MerkleHash::Keccak256,
                    &blocks.root(),
                    &dims,
                    i,
                    &rows_w,
                    &proof_b,
                    salt_width,
                )
                .unwrap();
                // A wrong row is still caught.
                let mut bad = rows_w.clone();
                bad[2][0] += F::ONE;
                assert_eq!(
                    verify_batch(
                        zkrv_stark::merkle::MerkleHash::Keccak256,
                        &blocks.root(),
                        &dims,
                        i,
                        &bad,
                        &proof_b,
                        salt_width
                    ),
                    Err(MerkleError::RootMismatch),
                    "{ctx} i {i}"
                );
            }
        }
    }
}

/// Edge shapes: every matrix of height exactly `B` (the subtrees are single leaves), and one matrix.
#[test]
fn merkle_from_coset_blocks_edge_shapes() {
    let seed = seed() ^ 5;
    let mut rng = StdRng::seed_from_u64(seed);
    for log_blowup in 1..=3usize {
        for shapes in [
            vec![(log_blowup, 2usize), (log_blowup, 5)],
            vec![(log_blowup + 4, 3)],
            vec![(log_blowup + 1, 1), (log_blowup + 2, 1)],
        ] {
            let mats: Vec<RowMajorMatrix> = shapes
                .iter()
                .map(|&(lh, w)| rand_matrix(&mut rng, 1 << lh, w))
                .collect();
            let dims: Vec<MatrixDims> = shapes
                .iter()
                .map(|&(lh, w)| MatrixDims {
                    width: w,
                    log_height: lh,
                })
                .collect();
            let whole = MerkleTree::new(mats.clone());
            let blocks = MerkleTree::from_coset_blocks(
                zkrv_stark::merkle::MerkleHash::Keccak256,
                dims.clone(),
                Vec::new(),
                log_blowup,
                |c| {
                    mats.iter()
                        .map(|m| coset_block_of(m, log_blowup, c))
                        .collect()
                },
            );
            let ctx = format!("seed {seed} log_blowup {log_blowup} shapes {shapes:?}");
            assert_eq!(blocks.root(), whole.root(), "{ctx}");
            assert_eq!(blocks.layers(), whole.layers(), "{ctx}");
            for i in 0..1usize << whole.log_max_height() {
                let (rows, proof) = whole.open(i);
                assert_eq!(blocks.open(i).1, proof, "{ctx} i {i}");
                verify_batch(
                    zkrv_stark::merkle::MerkleHash::Keccak256,
                    &blocks.root(),
                    &dims,
                    i,
                    &rows,
                    &blocks.open(i).1,
                    0,
                )
                .unwrap();
            }
        }
    }
}
