//! DEEP-FRI PCS: round trips over mixed heights, tampering, degree soundness.

use rand::{rngs::StdRng, Rng, SeedableRng};
use zkrv_stark::backend::eval_columns_at;
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{MerkleError, MerkleTree};
use zkrv_stark::pcs::*;
use zkrv_stark::poly::{domain_generator, eval_poly_ext, idft_batch, lde_batch};
use zkrv_stark::transcript::Transcript;

/// [`zkrv_stark::pcs::open`] on the CPU backend over stored trees (cloned into rounds).
fn open(
    cfg: &FriConfig,
    rounds: &[(&MerkleTree, Vec<Vec<Ext3>>)],
    tr: &mut Transcript,
    hiding: Option<&zkrv_stark::zk::ZkRng>,
) -> (OpenedValues, PcsProof) {
    use zkrv_stark::backend::{CpuBackend, CpuCommitted};
    let cs: Vec<CpuCommitted> = rounds
        .iter()
        .map(|(t, _)| CpuCommitted::stored((*t).clone(), cfg.log_blowup))
        .collect();
    let r: Vec<(&CpuCommitted, Vec<Vec<Ext3>>)> = cs
        .iter()
        .zip(rounds)
        .map(|(c, (_, p))| (c, p.clone()))
        .collect();
    zkrv_stark::pcs::open(&CpuBackend::default(), cfg, &r, tr, hiding).expect("open")
}

fn seed() -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xf41);
    println!("seed = {s}");
    s
}

fn config(grinding: u32) -> FriConfig {
    FriConfig {
        log_blowup: 2,
        num_queries: 12,
        query_grinding_bits: grinding,
        log_final_poly_len: 1,
        log_folding_arity: 1,
    }
}

fn rand_ext(rng: &mut StdRng) -> Ext3 {
    Ext3::from_u64s([rng.gen(), rng.gen(), rng.gen()])
}

struct Setup {
    traces: Vec<Vec<RowMajorMatrix>>,
    trees: Vec<MerkleTree>,
    points: Vec<Vec<Vec<Ext3>>>,
}

/// Two rounds: round 0 has traces of heights 8, 32, 4, 32 (unsorted, shared height), round 1 has one of
/// height 16. Points: zeta and zeta·ω_n for round 0, zeta for round 1.
fn setup(rng: &mut StdRng, cfg: &FriConfig) -> Setup {
    let shapes: Vec<Vec<(usize, usize)>> = vec![vec![(3, 3), (5, 2), (2, 1), (5, 3)], vec![(4, 4)]];
    let zeta = rand_ext(rng);
    let mut traces = Vec::new();
    let mut trees = Vec::new();
    let mut points = Vec::new();
    for (r, round) in shapes.iter().enumerate() {
        let ts: Vec<RowMajorMatrix> = round
            .iter()
            .map(|&(lh, w)| RowMajorMatrix::from_fn(1 << lh, w, |_, _| F::new(rng.gen())))
            .collect();
        let ldes = ts.iter().map(|t| lde_batch(t, cfg.log_blowup)).collect();
        trees.push(MerkleTree::new(ldes));
        points.push(
            round
                .iter()
                .map(|&(lh, _)| {
                    if r == 0 {
                        vec![zeta, zeta * domain_generator(lh)]
                    } else {
                        vec![zeta]
                    }
                })
                .collect(),
        );
        traces.push(ts);
    }
    Setup {
        traces,
        trees,
        points,
    }
}

fn prove(cfg: &FriConfig, s: &Setup) -> (OpenedValues, PcsProof) {
    let rounds: Vec<(&MerkleTree, Vec<Vec<Ext3>>)> = s
        .trees
        .iter()
        .zip(&s.points)
        .map(|(t, p)| (t, p.clone()))
        .collect();
    let mut tr = Transcript::new(b"pcs-test");
    open(cfg, &rounds, &mut tr, None)
}

fn verifier_rounds(s: &Setup, values: &OpenedValues) -> Vec<VerifierRound> {
    s.trees
        .iter()
        .zip(&s.points)
        .zip(values)
        .map(|((t, pts), vals)| {
            let mats = t
                .dims()
                .into_iter()
                .zip(pts)
                .zip(vals)
                .map(|((d, p), v)| (d, p.iter().copied().zip(v.iter().cloned()).collect()))
                .collect();
            (t.root(), mats)
        })
        .collect()
}

fn check(cfg: &FriConfig, vr: &[VerifierRound], proof: &PcsProof) -> Result<(), PcsError> {
    let mut tr = Transcript::new(b"pcs-test");
    verify(cfg, vr, proof, &mut tr, None).map(|_| ())
}

#[test]
fn pcs_roundtrip_mixed_heights() {
    let mut rng = StdRng::seed_from_u64(seed());
    let cfg = config(6);
    let s = setup(&mut rng, &cfg);
    let (values, proof) = prove(&cfg, &s);
    // Opened values are the true evaluations.
    for (r, ts) in s.traces.iter().enumerate() {
        for (m, t) in ts.iter().enumerate() {
            let coeffs = idft_batch(t.clone());
            for (p, &z) in s.points[r][m].iter().enumerate() {
                for (c, v) in values[r][m][p].iter().enumerate() {
                    assert_eq!(
                        *v,
                        eval_poly_ext(&coeffs.column(c), z),
                        "r={r} m={m} p={p} c={c}"
                    );
                }
            }
        }
    }
    assert_eq!(proof.round_openings.len(), 2);
    // Lmax = 5 + 2 = 7, Lf = min(1 + 2, 2 + 2) = 3: 4 FRI layers, final poly of 2 coefficients.
    assert_eq!(proof.fri_roots.len(), 4);
    assert_eq!(proof.final_poly.len(), 2);
    let vr = verifier_rounds(&s, &values);
    check(&cfg, &vr, &proof).unwrap();
    // Proving is deterministic.
    assert_eq!(prove(&cfg, &s).1, proof);
}

#[test]
fn pcs_roundtrip_single_matrix_no_fri_layers() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 1);
    let cfg = FriConfig {
        log_final_poly_len: 4,
        ..config(0)
    };
    let t = RowMajorMatrix::from_fn(8, 3, |_, _| F::new(rng.gen()));
    let tree = MerkleTree::new(vec![lde_batch(&t, cfg.log_blowup)]);
    let z = rand_ext(&mut rng);
    let mut tr = Transcript::new(b"x");
    let (values, proof) = open(&cfg, &[(&tree, vec![vec![z]])], &mut tr, None);
    assert!(proof.fri_roots.is_empty());
    assert_eq!(proof.final_poly.len(), 8);
    let vr: Vec<VerifierRound> = vec![(
        tree.root(),
        vec![(tree.dims()[0], vec![(z, values[0][0][0].clone())])],
    )];
    verify(&cfg, &vr, &proof, &mut Transcript::new(b"x"), None).unwrap();
    // Different transcript label: the verifier samples other queries / alpha.
    assert!(verify(&cfg, &vr, &proof, &mut Transcript::new(b"y"), None).is_err());
}

#[test]
fn pcs_tampering_is_rejected() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 2);
    let cfg = config(8);
    let s = setup(&mut rng, &cfg);
    let (values, proof) = prove(&cfg, &s);
    let vr = verifier_rounds(&s, &values);
    check(&cfg, &vr, &proof).unwrap();

    // A different opening point with the same claimed values: the PCS does not observe points (the caller
    // derives them from the transcript), so the queries are the same and a FRI check fails: round 1's LDE
    // (height 2^6) is rolled in after the first fold of the 2^7 codeword, so layer 1 catches it.
    let mut bad = vr.clone();
    bad[1].1[0].1[0].0 += Ext3::ONE;
    assert_eq!(
        check(&cfg, &bad, &proof),
        Err(PcsError::FriFold { layer: 1, query: 0 })
    );
    let mut bad = vr.clone();
    bad[0].1[1].1[1].0 += Ext3::ONE;
    assert_eq!(
        check(&cfg, &bad, &proof),
        Err(PcsError::FriFold { layer: 0, query: 0 })
    );

    // A claimed opened value: changes the transcript, so the proof-of-work no longer holds.
    let mut bad = vr.clone();
    bad[0].1[1].1[0].1[1] += Ext3::ONE;
    assert_eq!(check(&cfg, &bad, &proof), Err(PcsError::Grinding));

    // An opened row of a committed matrix.
    let mut p = proof.clone();
    p.round_openings[0].rows[2][3][0] += F::ONE;
    assert_eq!(
        check(&cfg, &vr, &p),
        Err(PcsError::Merkle {
            round: 0,
            source: MerkleError::RootMismatch
        })
    );

    // A Merkle sibling.
    let mut p = proof.clone();
    p.round_openings[1].siblings[2][5] ^= 0x40;
    assert_eq!(
        check(&cfg, &vr, &p),
        Err(PcsError::Merkle {
            round: 1,
            source: MerkleError::RootMismatch
        })
    );
    // A sibling more or less.
    let mut p = proof.clone();
    p.round_openings[1].siblings.push([0; 32]);
    assert!(matches!(
        check(&cfg, &vr, &p),
        Err(PcsError::Merkle {
            round: 1,
            source: MerkleError::ProofLength { .. }
        })
    ));
    let mut p = proof.clone();
    p.fri_openings[0].siblings.pop();
    assert!(matches!(
        check(&cfg, &vr, &p),
        Err(PcsError::FriMerkle {
            layer: 0,
            source: MerkleError::ProofLength { .. }
        })
    ));

    // A FRI layer value.
    let mut p = proof.clone();
    p.fri_openings[2].rows[0][1][4] += F::ONE;
    assert_eq!(
        check(&cfg, &vr, &p),
        Err(PcsError::FriMerkle {
            layer: 2,
            source: MerkleError::RootMismatch
        })
    );

    // The final polynomial (observed before grinding).
    let mut p = proof.clone();
    p.final_poly[0] += Ext3::ONE;
    assert_eq!(check(&cfg, &vr, &p), Err(PcsError::Grinding));

    // The nonce.
    let mut p = proof.clone();
    p.pow_nonce += 1;
    assert_eq!(check(&cfg, &vr, &p), Err(PcsError::Grinding));

    // Shapes.
    let mut p = proof.clone();
    p.round_openings.pop();
    assert!(matches!(check(&cfg, &vr, &p), Err(PcsError::Shape(_))));
    let mut p = proof.clone();
    p.final_poly.push(Ext3::ZERO);
    assert!(matches!(check(&cfg, &vr, &p), Err(PcsError::Shape(_))));
    let mut p = proof.clone();
    p.fri_roots.pop();
    assert!(matches!(check(&cfg, &vr, &p), Err(PcsError::Shape(_))));
    let mut p = proof.clone();
    p.fri_openings.clear();
    assert!(check(&cfg, &vr, &p).is_err());
    let mut p = proof.clone();
    p.round_openings[0].rows[0].pop();
    assert!(check(&cfg, &vr, &p).is_err());
    let mut p = proof.clone();
    p.round_openings[0].rows.pop();
    assert!(check(&cfg, &vr, &p).is_err());
    let mut bad = vr.clone();
    bad[0].1[0].1[0].1.pop();
    assert!(matches!(check(&cfg, &bad, &proof), Err(PcsError::Shape(_))));
    let mut bad = vr.clone();
    bad[0].1[0].0.log_height = 60;
    assert!(check(&cfg, &bad, &proof).is_err());
    assert!(check(&cfg, &[], &proof).is_err());
    for a in [0, 4] {
        let cfg_a = FriConfig {
            log_folding_arity: a,
            ..cfg.clone()
        };
        assert!(matches!(
            check(&cfg_a, &vr, &proof),
            Err(PcsError::Config(_))
        ));
    }
}

/// One round of traces of heights 2^8, 2^4, 2^3 (LDE heights 2^10, 2^6, 2^5 at blowup 4; `Lf = 3`).
fn tall_setup(rng: &mut StdRng, cfg: &FriConfig) -> Setup {
    let shapes = [(8usize, 2usize), (4, 3), (3, 1)];
    let zeta = rand_ext(rng);
    let ts: Vec<RowMajorMatrix> = shapes
        .iter()
        .map(|&(lh, w)| RowMajorMatrix::from_fn(1 << lh, w, |_, _| F::new(rng.gen())))
        .collect();
    let tree = MerkleTree::new(ts.iter().map(|t| lde_batch(t, cfg.log_blowup)).collect());
    let points = vec![shapes
        .iter()
        .map(|&(lh, _)| vec![zeta, zeta * domain_generator(lh)])
        .collect()];
    Setup {
        traces: vec![ts],
        trees: vec![tree],
        points,
    }
}

fn arity_config(log_folding_arity: usize) -> FriConfig {
    FriConfig {
        log_folding_arity,
        ..config(4)
    }
}

#[test]
fn fri_layer_schedule_rolls_in_every_height() {
    let shape = |a: usize, heights: &[usize]| {
        let (lmax, lf, layers) = fri_layers(&arity_config(a), heights.iter().copied());
        let v: Vec<(usize, usize)> = layers.iter().map(|l| (l.log_size, l.log_arity)).collect();
        (lmax, lf, v)
    };
    // Lf = min(log_final_poly_len + log_blowup, smallest height) = min(1 + 2, 5) = 3.
    assert_eq!(
        shape(1, &[10, 6, 5]),
        (10, 3, (4..=10).rev().map(|s| (s, 1)).collect())
    );
    assert_eq!(shape(2, &[10, 6, 5]).2, [(10, 2), (8, 2), (6, 1), (5, 2)]);
    assert_eq!(shape(3, &[10, 6, 5]).2, [(10, 3), (7, 1), (6, 1), (5, 2)]);
    // Heights in any order and repeated; the smallest height bounds Lf.
    assert_eq!(
        shape(3, &[4, 12, 4, 12]),
        (12, 3, vec![(12, 3), (9, 3), (6, 2), (4, 1)])
    );
    assert_eq!(shape(3, &[]), (0, 0, vec![]));
    // A layer's matrix: 2^(s-a) rows of 2^a Ext3 values.
    let l = FriLayerShape {
        log_size: 10,
        log_arity: 3,
    };
    assert_eq!((l.dims().width, l.dims().log_height), (24, 7));
}

#[test]
fn fri_fold_row_matches_the_backend_fold() {
    use zkrv_stark::backend::{CpuBackend, OpeningOps};
    let mut rng = StdRng::seed_from_u64(seed() ^ 0x21);
    let cpu = CpuBackend::default();
    for a in 1..=3usize {
        for s in a..=9usize {
            let cw: Vec<Ext3> = (0..1 << s).map(|_| rand_ext(&mut rng)).collect();
            let roll: Vec<Ext3> = (0..1 << (s - a)).map(|_| rand_ext(&mut rng)).collect();
            let beta = rand_ext(&mut rng);
            let folded = cpu.fold_fri_layer(cw.clone(), s, a, beta, None).unwrap();
            assert_eq!(folded.len(), 1 << (s - a));
            for (j, row) in cw.chunks(1 << a).enumerate() {
                assert_eq!(
                    fold_row(row, s, j, beta),
                    Some(folded[j]),
                    "a={a} s={s} j={j}"
                );
            }
            // The roll-in adds beta^(2^a) times the lower codeword.
            let rolled = cpu
                .fold_fri_layer(cw.clone(), s, a, beta, Some(roll.clone()))
                .unwrap();
            let b = beta.pow(1 << a);
            for j in 0..roll.len() {
                assert_eq!(rolled[j], folded[j] + b * roll[j]);
            }
            // Arity 2^a is `a` binary folds with beta, beta^2, ...
            let mut step = cw.clone();
            let mut bt = beta;
            for t in 0..a {
                step = cpu.fold_fri_layer(step, s - t, 1, bt, None).unwrap();
                bt = bt.square();
            }
            assert_eq!(step, folded, "a={a} s={s}");
            assert!(cpu.fold_fri_layer(cw.clone(), s, 4, beta, None).is_err());
            assert!(cpu
                .fold_fri_layer(cw.clone(), s + 1, a, beta, None)
                .is_err());
        }
    }
    // Rows that are not 2^a values.
    assert_eq!(fold_row(&[Ext3::ONE; 3], 4, 0, Ext3::ONE), None);
    assert_eq!(fold_row(&[Ext3::ONE; 1], 4, 0, Ext3::ONE), None);
    assert_eq!(fold_row(&[Ext3::ONE; 8], 2, 0, Ext3::ONE), None);
}

#[test]
fn pcs_roundtrip_every_arity() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 0x22);
    for (a, layers) in [(1usize, 7usize), (2, 4), (3, 4)] {
        let cfg = arity_config(a);
        let s = tall_setup(&mut rng, &cfg);
        let (values, proof) = prove(&cfg, &s);
        assert_eq!(proof.fri_roots.len(), layers, "arity 2^{a}");
        assert_eq!(proof.final_poly.len(), 2);
        let vr = verifier_rounds(&s, &values);
        check(&cfg, &vr, &proof).unwrap();
        assert_eq!(prove(&cfg, &s).1, proof);
        // Another arity's verifier rejects the proof (other layer count or widths, other transcript).
        let other = arity_config(if a == 3 { 2 } else { 3 });
        assert!(check(&other, &vr, &proof).is_err());
        // Tampered layer rows: every entry of the first and last layers' first row.
        let (_, _, shapes) = fri_layers(&cfg, [10usize, 6, 5].into_iter());
        for l in [0, layers - 1] {
            assert_eq!(
                proof.fri_openings[l].rows[0][0].len(),
                shapes[l].dims().width
            );
            for k in 0..shapes[l].dims().width {
                let mut p = proof.clone();
                p.fri_openings[l].rows[0][0][k] += F::ONE;
                assert_eq!(
                    check(&cfg, &vr, &p),
                    Err(PcsError::FriMerkle {
                        layer: l,
                        source: MerkleError::RootMismatch
                    }),
                    "arity 2^{a} layer {l} entry {k}"
                );
            }
        }
        // A claimed opened value of the 2^6-row-LDE matrix (rolled in after the layer ending at 2^6) moves
        // the reduced opening at that height: the layer after the roll-in sees it (grinding aside: the
        // point, not the value, is changed, so the transcript is the same).
        let mut bad = vr.clone();
        bad[0].1[1].1[0].0 += Ext3::ONE;
        let roll_layer = shapes.iter().position(|l| l.log_size == 6).unwrap();
        assert_eq!(
            check(&cfg, &bad, &proof),
            Err(PcsError::FriFold {
                layer: roll_layer,
                query: 0
            }),
            "arity 2^{a}"
        );
    }
}

/// Random structural mutations of arity-4 and arity-8 proofs: an error (or Ok for a no-op), never a panic.
#[test]
fn pcs_malformed_high_arity_proofs_never_panic() {
    let seed = seed() ^ 0x23;
    let mut rng = StdRng::seed_from_u64(seed);
    for a in [2usize, 3] {
        let cfg = arity_config(a);
        let s = tall_setup(&mut rng, &cfg);
        let (values, proof) = prove(&cfg, &s);
        let vr = verifier_rounds(&s, &values);
        let mut rejected = 0;
        for iter in 0..200 {
            let mut p = proof.clone();
            let l = rng.gen_range(0..p.fri_openings.len());
            match rng.gen_range(0..6) {
                0 => {
                    let rows = &mut p.fri_openings[l].rows[0];
                    let k = rng.gen_range(0..rows.len());
                    let n = rng.gen_range(0..30);
                    rows[k].resize(n, F::ONE);
                }
                1 => {
                    let n = rng.gen_range(0..60);
                    p.fri_openings[l].rows[0].truncate(n);
                }
                2 => {
                    let n = rng.gen_range(0..3);
                    p.fri_openings[l].rows.resize(n, Vec::new());
                }
                3 => {
                    let n = rng.gen_range(0..100);
                    p.fri_openings[l].siblings.resize(n, [7; 32]);
                }
                4 => {
                    let n = rng.gen_range(0..9);
                    p.fri_roots.resize(n, [3; 32]);
                    p.fri_openings.truncate(rng.gen_range(0..9));
                }
                _ => {
                    let rows = &mut p.fri_openings[l].rows[0];
                    let k = rng.gen_range(0..rows.len());
                    let e = rng.gen_range(0..rows[k].len());
                    rows[k][e] = F::new(rng.gen());
                }
            }
            if check(&cfg, &vr, &p).is_err() {
                rejected += 1;
            } else {
                assert!(
                    p == proof,
                    "arity 2^{a}, iteration {iter} (seed {seed}): a mutated proof verified"
                );
            }
        }
        assert!(rejected > 150, "{rejected}");
    }
}

#[test]
fn pcs_rejects_too_high_degree() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 3);
    let cases = (1..=3).flat_map(|a| {
        [(0, 6usize), (5, 5), (0, 9)].map(|(final_len, lh)| {
            let cfg = FriConfig {
                log_final_poly_len: final_len.max(config(0).log_final_poly_len),
                log_folding_arity: a,
                ..config(0)
            };
            (cfg, lh)
        })
    });
    for (cfg, lh) in cases {
        // A "LDE" of random values: degree ~ 2^lh, claimed < 2^(lh - log_blowup).
        let fake = RowMajorMatrix::from_fn(1 << lh, 2, |_, _| F::new(rng.gen()));
        let tree = MerkleTree::new(vec![fake]);
        let z = rand_ext(&mut rng);
        let (values, proof) = open(
            &cfg,
            &[(&tree, vec![vec![z]])],
            &mut Transcript::new(b"d"),
            None,
        );
        let vr: Vec<VerifierRound> = vec![(
            tree.root(),
            vec![(tree.dims()[0], vec![(z, values[0][0][0].clone())])],
        )];
        let res = verify(&cfg, &vr, &proof, &mut Transcript::new(b"d"), None);
        assert!(
            matches!(
                res,
                Err(PcsError::FinalPoly { .. }) | Err(PcsError::FriFold { .. })
            ),
            "{res:?}"
        );
    }
}

/// A configuration with no query is refused by the PCS verifier with its own error, before anything
/// else: a prover may choose it (the proof states its parameters), and a proof made with it opens
/// nothing, so every other check would pass. The same proof with its queries is accepted.
#[test]
fn pcs_refuses_no_queries() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 9);
    let cfg = FriConfig {
        num_queries: 0,
        ..config(0)
    };
    let s = setup(&mut rng, &cfg);
    let (values, proof) = prove(&cfg, &s);
    assert!(proof
        .round_openings
        .iter()
        .all(|o| o.rows.iter().all(|r| r.is_empty())));
    let vr = verifier_rounds(&s, &values);
    assert_eq!(check(&cfg, &vr, &proof), Err(PcsError::NoQueries));
    assert!(PcsError::NoQueries.to_string().contains("num_queries = 0"));
    // Even with a bogus final polynomial: nothing is checked against it.
    let mut bad = proof.clone();
    bad.final_poly[0] += Ext3::ONE;
    assert_eq!(check(&cfg, &vr, &bad), Err(PcsError::NoQueries));
    assert_eq!(cfg.check(), Err(PcsError::NoQueries));
    let one = FriConfig {
        num_queries: 1,
        ..cfg.clone()
    };
    let (values, proof) = prove(&one, &s);
    check(&one, &verifier_rounds(&s, &values), &proof).unwrap();
    // Parameters the PCS cannot run with are refused by name, never a panic.
    for (bad, what) in [
        (
            FriConfig {
                num_queries: MAX_NUM_QUERIES + 1,
                ..one.clone()
            },
            "num_queries",
        ),
        (
            FriConfig {
                log_folding_arity: 0,
                ..one.clone()
            },
            "log_folding_arity",
        ),
        (
            FriConfig {
                log_folding_arity: 4,
                ..one.clone()
            },
            "log_folding_arity",
        ),
        (
            FriConfig {
                query_grinding_bits: 65,
                ..one.clone()
            },
            "query_grinding_bits",
        ),
        (
            FriConfig {
                log_blowup: 40,
                ..one.clone()
            },
            "log_blowup",
        ),
        (
            FriConfig {
                log_final_poly_len: 40,
                ..one.clone()
            },
            "log_final_poly_len",
        ),
    ] {
        match check(&bad, &verifier_rounds(&s, &values), &proof) {
            Err(PcsError::Config(m)) => assert!(m.contains(what), "{m}"),
            e => panic!("{what}: {e:?}"),
        }
    }
}

#[test]
fn pcs_blowups_empty_point_lists_and_transcript_sync() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 4);
    for log_blowup in [1usize, 3] {
        let cfg = FriConfig {
            log_blowup,
            num_queries: 8,
            query_grinding_bits: 2,
            log_final_poly_len: 0,
            log_folding_arity: 1,
        };
        // Heights 2^6, 2^1 and 2^0 (a constant column), one matrix without opening points.
        let traces: Vec<RowMajorMatrix> = [(6usize, 2usize), (1, 3), (0, 1), (4, 2)]
            .iter()
            .map(|&(lh, w)| RowMajorMatrix::from_fn(1 << lh, w, |_, _| F::new(rng.gen())))
            .collect();
        let tree = MerkleTree::new(traces.iter().map(|t| lde_batch(t, log_blowup)).collect());
        let z = rand_ext(&mut rng);
        let points = vec![vec![z, z * z], vec![z], vec![z], vec![]];
        let mut pt = Transcript::new(b"sync");
        let (values, proof) = open(&cfg, &[(&tree, points.clone())], &mut pt, None);
        // The constant column evaluates to its value everywhere.
        assert_eq!(values[0][2][0][0], Ext3::from_base(traces[2].values[0]));
        assert!(values[0][3].is_empty());
        let mats = tree
            .dims()
            .into_iter()
            .zip(&points)
            .zip(&values[0])
            .map(|((d, p), v)| (d, p.iter().copied().zip(v.iter().cloned()).collect()))
            .collect();
        let vr: Vec<VerifierRound> = vec![(tree.root(), mats)];
        let mut vt = Transcript::new(b"sync");
        verify(&cfg, &vr, &proof, &mut vt, None).unwrap();
        // Prover and verifier transcripts end in the same state.
        assert_eq!(pt.sample_ext(), vt.sample_ext());
    }
}

/// Random structural mutations of the proof and of the verifier's shapes: `verify` must return an error (or,
/// for a harmless mutation, Ok), never panic.
#[test]
fn pcs_malformed_inputs_never_panic() {
    let seed = seed() ^ 5;
    let mut rng = StdRng::seed_from_u64(seed);
    let cfg = config(2);
    let s = setup(&mut rng, &cfg);
    let (values, proof) = prove(&cfg, &s);
    let vr = verifier_rounds(&s, &values);
    let mut rejected = 0;
    for iter in 0..300 {
        let mut p = proof.clone();
        let mut v = vr.clone();
        match rng.gen_range(0..12) {
            0 => {
                let n = rng.gen_range(0..8);
                p.fri_roots.resize(n, [1; 32]);
            }
            1 => {
                let n = rng.gen_range(0..6);
                p.final_poly.resize(n, Ext3::ONE);
            }
            2 => {
                let r = rng.gen_range(0..2);
                let m = rng.gen_range(0..p.round_openings[r].rows.len());
                let n = rng.gen_range(0..20);
                p.round_openings[r].rows[m].truncate(n);
            }
            3 => {
                let r = rng.gen_range(0..2);
                let n = rng.gen_range(0..200);
                p.round_openings[r].siblings.resize(n, [0; 32]);
            }
            4 => {
                let r = rng.gen_range(0..2);
                let rows = &mut p.round_openings[r].rows;
                let m = rng.gen_range(0..rows.len());
                let k = rng.gen_range(0..rows[m].len());
                let n = rng.gen_range(0..10);
                rows[m][k].resize(n, F::ONE);
            }
            5 => {
                let n = rng.gen_range(0..4);
                p.round_openings.truncate(n);
            }
            6 => {
                let l = rng.gen_range(0..p.fri_openings.len());
                let n = rng.gen_range(0..200);
                p.fri_openings[l].siblings.resize(n, [0; 32]);
            }
            7 => {
                let n = rng.gen_range(0..6);
                p.fri_openings.truncate(n);
            }
            8 => {
                let r = rng.gen_range(0..2);
                let m = rng.gen_range(0..v[r].1.len());
                v[r].1[m].0.log_height = rng.gen_range(0..70);
            }
            9 => {
                let r = rng.gen_range(0..2);
                let m = rng.gen_range(0..v[r].1.len());
                v[r].1[m].0.width = rng.gen_range(0..9);
            }
            10 => {
                let r = rng.gen_range(0..2);
                let m = rng.gen_range(0..v[r].1.len());
                v[r].1[m].1.clear();
            }
            _ => {
                p.pow_nonce = rng.gen();
                let r = rng.gen_range(0..2);
                v[r].1.truncate(rng.gen_range(0..3));
            }
        }
        if check(&cfg, &v, &p).is_err() {
            rejected += 1;
        } else {
            // Only no-op mutations may pass (e.g. resizing to the same length).
            assert!(
                p == proof && v == vr,
                "iteration {iter} (seed {seed}): a mutated proof verified"
            );
        }
    }
    assert!(rejected > 200, "{rejected}");
}

/// Three rounds over blowup `2^lb`, a zk round id each; `coeff_rounds[r]` says whether round `r` is opened from
/// coefficients (`CpuCommitted::from_coeffs`, a digest-only tree from coset blocks) or from the stored LDEs.
struct LdeSetup {
    traces: Vec<Vec<RowMajorMatrix>>,
    points: Vec<Vec<Vec<Ext3>>>,
}

/// Round 0: heights 8, 32, 4, 32 (points zeta, zeta·ω_n); round 1: heights 32 and 1 (a constant column, LDE
/// height exactly B), point zeta (shared with round 0 at the same height); round 2: heights 16 and 2, the
/// second without points.
fn lde_setup(rng: &mut StdRng) -> LdeSetup {
    let shapes: Vec<Vec<(usize, usize)>> = vec![
        vec![(3, 3), (5, 2), (2, 1), (5, 3)],
        vec![(5, 2), (0, 2)],
        vec![(4, 4), (1, 3)],
    ];
    let zeta = rand_ext(rng);
    let traces: Vec<Vec<RowMajorMatrix>> = shapes
        .iter()
        .map(|round| {
            round
                .iter()
                .map(|&(lh, w)| RowMajorMatrix::from_fn(1 << lh, w, |_, _| F::new(rng.gen())))
                .collect()
        })
        .collect();
    let points = vec![
        shapes[0]
            .iter()
            .map(|&(lh, _)| vec![zeta, zeta * domain_generator(lh)])
            .collect(),
        vec![vec![zeta], vec![zeta]],
        vec![vec![zeta * zeta, zeta], vec![]],
    ];
    LdeSetup { traces, points }
}

fn open_with_modes(
    cfg: &FriConfig,
    s: &LdeSetup,
    coeff_rounds: &[bool],
    hiding: Option<&zkrv_stark::zk::ZkRng>,
) -> (Vec<MerkleTree>, OpenedValues, PcsProof) {
    use zkrv_stark::merkle::{level_heights_of, MatrixDims};
    use zkrv_stark::poly::lde_coset_block;
    let lb = cfg.log_blowup;
    let coeffs: Vec<Vec<RowMajorMatrix>> = s
        .traces
        .iter()
        .map(|ts| ts.iter().map(|t| idft_batch(t.clone())).collect())
        .collect();
    let trees: Vec<MerkleTree> = s
        .traces
        .iter()
        .zip(&coeffs)
        .zip(coeff_rounds)
        .enumerate()
        .map(|(r, ((ts, cs), &from_coeffs))| {
            let dims: Vec<MatrixDims> = ts
                .iter()
                .map(|t| MatrixDims {
                    width: t.width,
                    log_height: t.log_height().unwrap() + lb,
                })
                .collect();
            // Salt the rounds 0 and 2 in zk mode (round 1 stays unsalted).
            let salts: Vec<RowMajorMatrix> = match hiding {
                Some(rng) if r != 1 => level_heights_of(&dims)
                    .into_iter()
                    .map(|lh| zkrv_stark::zk::salt_matrix(rng, r as u32 + 1, lh))
                    .collect(),
                _ => Vec::new(),
            };
            if from_coeffs {
                MerkleTree::from_coset_blocks(
                    zkrv_stark::merkle::MerkleHash::Keccak256,
                    dims,
                    salts,
                    lb,
                    |c| cs.iter().map(|m| lde_coset_block(m, lb, c)).collect(),
                )
            } else {
                MerkleTree::with_salts(
                    zkrv_stark::merkle::MerkleHash::Keccak256,
                    ts.iter().map(|t| lde_batch(t, lb)).collect(),
                    salts,
                )
            }
        })
        .collect();
    use zkrv_stark::backend::{CpuBackend, CpuCommitted};
    let committed: Vec<CpuCommitted> = trees
        .iter()
        .zip(&coeffs)
        .zip(coeff_rounds)
        .map(|((tree, cs), &from_coeffs)| {
            if from_coeffs {
                CpuCommitted::from_coeffs(tree.clone(), cs.clone(), lb)
            } else {
                CpuCommitted::stored(tree.clone(), lb)
            }
        })
        .collect();
    let rounds: Vec<(&CpuCommitted, Vec<Vec<Ext3>>)> = committed
        .iter()
        .zip(&s.points)
        .map(|(c, pts)| (c, pts.clone()))
        .collect();
    let mut tr = Transcript::new(b"pcs-lde");
    let (values, proof) =
        zkrv_stark::pcs::open(&CpuBackend::default(), cfg, &rounds, &mut tr, hiding).unwrap();
    (trees, values, proof)
}

/// Opening rounds from coefficients (`CpuCommitted::from_coeffs`) gives the same values and the same proof as from
/// the stored LDEs, for every mix of rounds, with and without hiding; the proof verifies.
#[test]
fn pcs_open_rounds_from_coefficients_is_identical() {
    let seed = seed() ^ 6;
    let mut rng = StdRng::seed_from_u64(seed);
    for log_blowup in [1usize, 2, 3] {
        let cfg = FriConfig {
            log_blowup,
            num_queries: 10,
            query_grinding_bits: 2,
            log_final_poly_len: 1,
            log_folding_arity: 1,
        };
        let s = lde_setup(&mut rng);
        for zk in [false, true] {
            let zk_rng = zkrv_stark::zk::ZkRng::from_test_seed(seed ^ log_blowup as u64);
            let hiding = zk.then_some(&zk_rng);
            let (trees, values, proof) = open_with_modes(&cfg, &s, &[false; 3], hiding);
            // The values are the true evaluations.
            for (r, ts) in s.traces.iter().enumerate() {
                for (m, t) in ts.iter().enumerate() {
                    let coeffs = idft_batch(t.clone());
                    for (p, &z) in s.points[r][m].iter().enumerate() {
                        for (c, v) in values[r][m][p].iter().enumerate() {
                            assert_eq!(*v, eval_poly_ext(&coeffs.column(c), z), "seed {seed}");
                        }
                    }
                }
            }
            for modes in [
                [true, true, true],
                [true, false, false],
                [false, true, false],
                [false, false, true],
                [true, false, true],
            ] {
                let ctx = format!("seed {seed} log_blowup {log_blowup} zk {zk} coeffs {modes:?}");
                let (t2, v2, p2) = open_with_modes(&cfg, &s, &modes, hiding);
                for (a, b) in t2.iter().zip(&trees) {
                    assert_eq!(a.root(), b.root(), "{ctx}");
                }
                assert_eq!(v2, values, "{ctx}");
                assert_eq!(p2, proof, "{ctx}");
            }
            let vr: Vec<VerifierRound> = trees
                .iter()
                .zip(&s.points)
                .zip(&values)
                .map(|((t, pts), vals)| {
                    let mats = t
                        .dims()
                        .into_iter()
                        .zip(pts)
                        .zip(vals)
                        .map(|((d, p), v)| (d, p.iter().copied().zip(v.iter().cloned()).collect()))
                        .collect();
                    (t.root(), mats)
                })
                .collect();
            let salted = [true, false, true];
            let hv = zk.then_some(&salted[..]);
            verify(&cfg, &vr, &proof, &mut Transcript::new(b"pcs-lde"), hv)
                .unwrap_or_else(|e| panic!("seed {seed} log_blowup {log_blowup} zk {zk}: {e}"));
        }
    }
}

/// `eval_columns_at` against Horner per column, across the internal chunk boundary (`n > 4096`), at random
/// points, `0`, `1` and points of the trace domain and the LDE coset.
#[test]
fn pcs_eval_columns_at_matches_horner() {
    use zkrv_stark::poly::coset_point;
    let seed = seed() ^ 7;
    let mut rng = StdRng::seed_from_u64(seed);
    let horner = |col: &[F], x: F| col.iter().rev().fold(F::ZERO, |acc, &c| acc * x + c);
    for (log_n, w) in [(0usize, 3usize), (1, 1), (4, 5), (13, 2)] {
        let n = 1usize << log_n;
        let coeffs = RowMajorMatrix::from_fn(n, w, |_, _| F::new(rng.gen()));
        let mut xs = vec![F::ZERO, F::ONE, F::new(rng.gen()), F::new(rng.gen())];
        xs.push(domain_generator(log_n).exp_u64(3));
        xs.push(coset_point(log_n + 2, 5));
        let out = eval_columns_at(&coeffs, &xs);
        assert_eq!(out.len(), xs.len());
        let cols: Vec<Vec<F>> = (0..w).map(|c| coeffs.column(c)).collect();
        for (j, &x) in xs.iter().enumerate() {
            let want: Vec<F> = cols.iter().map(|col| horner(col, x)).collect();
            assert_eq!(out[j], want, "seed {seed} log_n {log_n} point {j}");
        }
        // A trace-domain point gives the trace value: x = ω_n^3 is natural row 3 of dft(coeffs).
        if n > 3 {
            let evals = zkrv_stark::poly::dft_batch(coeffs.clone());
            assert_eq!(out[4], evals.row(3), "seed {seed} log_n {log_n}");
        }
    }
    assert!(eval_columns_at(&RowMajorMatrix::new(vec![F::ONE; 4], 2), &[]).is_empty());
}
