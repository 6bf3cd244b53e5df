//! Zero-knowledge mode (docs/stark.md, "Zero knowledge"): proofs verify, differ with the seed, leak no trace
//! value, are refused in the other mode, and tampering is still rejected.

mod proto_common;

use proto_common::*;
use zkrv_stark::air::{Air, AirBuilder, CompiledAir};
use zkrv_stark::field::{f_to_le_bytes, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::pcs::PcsError;
use zkrv_stark::{
    preprocess, prove, verify, verify_bytes, Proof, ProveError, StarkConfig, VerifyError,
};

const STMT: &[u8] = b"zk";

fn zk_config(seed: u64) -> StarkConfig {
    StarkConfig {
        zk_seed: Some(seed),
        debug_check: true,
        ..StarkConfig::dev_zk()
    }
}

fn prove_fib(config: &StarkConfig, log_n: usize) -> (Fixture, zkrv_stark::PreprocessedData, Proof) {
    let fx = fixture(log_n);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let proof = prove(config, &airs(), &pre, fx.traces.clone(), &fx.public, STMT).unwrap();
    (fx, pre, proof)
}

fn check(
    config: &StarkConfig,
    fx: &Fixture,
    pre: &zkrv_stark::PreprocessedData,
    p: &Proof,
) -> Result<(), VerifyError> {
    verify(config, 0, &airs(), pre, &fx.public, STMT, p)
}

#[test]
fn zk_fib_and_bytes_prove_and_verify() {
    let config = zk_config(1);
    for log_n in [7usize, 9] {
        let t0 = std::time::Instant::now();
        let (fx, pre, proof) = prove_fib(&config, log_n);
        let prove_time = t0.elapsed();
        assert!(proof.zk);
        let bytes = proof.to_bytes();
        assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);
        let t0 = std::time::Instant::now();
        verify_bytes(&config, 0, &airs(), &pre, &fx.public, STMT, &bytes).unwrap();
        println!(
            "zk log_n {log_n}: prove {prove_time:?}, verify {:?}, proof {} bytes",
            t0.elapsed(),
            bytes.len()
        );
    }
}

#[test]
fn zk_os_randomness_proves() {
    let config = StarkConfig::dev_zk();
    assert_eq!(config.zk_seed, None);
    let (fx, pre, p1) = prove_fib(&config, 7);
    let (_, _, p2) = prove_fib(&config, 7);
    assert_ne!(
        p1.main_root, p2.main_root,
        "fresh OS seeds give fresh commitments"
    );
    check(&config, &fx, &pre, &p1).unwrap();
    check(&config, &fx, &pre, &p2).unwrap();
}

#[test]
fn seeds_make_proofs_differ_and_both_verify() {
    let (fx, pre, a) = prove_fib(&zk_config(11), 7);
    let (_, _, a2) = prove_fib(&zk_config(11), 7);
    let (_, _, b) = prove_fib(&zk_config(12), 7);
    println!("seeds 11, 12");
    assert_eq!(a.to_bytes(), a2.to_bytes(), "same seed, same proof");
    assert_ne!(a.main_root, b.main_root);
    assert_ne!(a.opened, b.opened);
    // The seed is not part of the statement: both verify under either config.
    check(&zk_config(12), &fx, &pre, &a).unwrap();
    check(&zk_config(11), &fx, &pre, &b).unwrap();
}

#[test]
fn mode_mismatch_is_a_specific_error() {
    let zk = zk_config(2);
    let plain = StarkConfig::dev();
    let (fx, pre, zk_proof) = prove_fib(&zk, 7);
    assert_eq!(
        check(&plain, &fx, &pre, &zk_proof),
        Err(VerifyError::ZkMode {
            proof: true,
            expected: false
        })
    );
    let (fx, pre, plain_proof) = prove_fib(&plain, 7);
    let err = check(&zk, &fx, &pre, &plain_proof).unwrap_err();
    assert_eq!(
        err,
        VerifyError::ZkMode {
            proof: false,
            expected: true
        }
    );
    println!("{err}");
    // Flipping the header flag does not help: the transcript absorbs the mode.
    let mut forged = zk_proof.clone();
    forged.zk = false;
    assert!(check(&plain, &fx, &pre, &forged).is_err());
}

/// A secret column of distinctive 8-byte values (they do not occur by chance in a proof): `x = marker + i`.
const MARKER: u64 = 0x5eed_f00d_0000_0000;

/// `x` free (secret), `key` a secret constant, `y = x^2 + key` checked.
struct Secret;
impl Air for Secret {
    fn name(&self) -> &str {
        "secret"
    }
    fn width(&self) -> usize {
        3
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, key, y) = (b.main(0), b.main(1), b.main(2));
        b.assert_zero("y=x*x+key", y - x.clone() * x - key.clone());
        b.assert_zero("key'=key", b.is_transition() * (b.main_next(1) - key));
    }
}

const KEY: u64 = 0x0b5e_55ed_c0de_beef;

fn secret_trace(n: u64) -> RowMajorMatrix {
    RowMajorMatrix::new(
        (0..n)
            .flat_map(|i| {
                let x = F::new(MARKER + i);
                [x, F::new(KEY), x * x + F::new(KEY)]
            })
            .collect(),
        3,
    )
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// What any verifier can do with a proof: replay the verification to learn the query indices, read the
/// opened main rows at them, interpolate column `col` through the distinct opened points, and evaluate the
/// result on `H_n`. Returns how many trace cells `secret[i]` it recovers.
fn interpolation_attack(
    proof: &Proof,
    config: &StarkConfig,
    airs: &[&dyn Air],
    pre: &zkrv_stark::PreprocessedData,
    n: usize,
    col: usize,
    secret: &[F],
) -> usize {
    use zkrv_stark::field::Field;
    use zkrv_stark::merkle::distinct_rows;
    use zkrv_stark::poly::{coset_point, domain_generator};
    let qs = zkrv_stark::verifier::verify_queries(config, 0, airs, pre, &[], b"", proof)
        .expect("the proof verifies");
    // One table: the main round is one matrix, of the largest height.
    let lh = n.trailing_zeros() as usize + config.zk as usize + config.fri.log_blowup;
    // The largest LDE height: the main trace's, or the zk random codeword's when taller.
    let lmax = if config.zk {
        let log_trace = n.trailing_zeros() as usize + 1;
        lh.max(zkrv_stark::zk::codeword_log_height(&config.fri, log_trace) + config.fri.log_blowup)
    } else {
        lh
    };
    let leaves: Vec<usize> = qs.iter().map(|&q| q >> (lmax - lh)).collect();
    let rows = distinct_rows(&leaves, 0);
    let pts: Vec<(F, F)> = rows
        .iter()
        .zip(&proof.pcs.round_openings[0].rows[0])
        .map(|(&i, r)| (coset_point(lh, i), r[col]))
        .collect();
    let omega = domain_generator(n.trailing_zeros() as usize);
    (0..n)
        .filter(|&i| {
            let t = omega.exp_u64(i as u64);
            let mut v = F::ZERO;
            for (j, &(xj, yj)) in pts.iter().enumerate() {
                let mut l = F::ONE;
                for (m, &(xm, _)) in pts.iter().enumerate() {
                    if m != j {
                        l *= (t - xm) * (xj - xm).inverse();
                    }
                }
                v += yj * l;
            }
            v == secret[i]
        })
        .count()
}

#[test]
fn zk_proof_does_not_reveal_the_witness() {
    let airs: Vec<&dyn Air> = vec![&Secret];
    // Non-zk, 16 rows: the 44 queries open more distinct points than the degree bound.
    let plain = StarkConfig::dev();
    let zk = zk_config(5);
    let run = |config: &StarkConfig, n: u64| {
        let trace = secret_trace(n);
        let pre = preprocess(&airs, vec![None]).unwrap();
        let proof = prove(config, &airs, &pre, vec![trace.clone()], &[], b"").unwrap();
        verify(config, 0, &airs, &pre, &[], b"", &proof).unwrap();
        let bytes = proof.to_bytes();
        let key_in_bytes = contains(&bytes, &f_to_le_bytes(F::new(KEY)));
        let xs = trace.column(0);
        let recovered = interpolation_attack(&proof, config, &airs, &pre, n as usize, 0, &xs);
        (key_in_bytes, recovered)
    };
    let (key_plain, rec_plain) = run(&plain, 16);
    let (key_zk16, rec_zk) = run(&zk, 128);
    println!(
        "non-zk (16 rows): key in proof bytes {key_plain}, x cells recovered {rec_plain}/16; \
         zk (128 rows): key in proof bytes {key_zk16}, x cells recovered {rec_zk}/128"
    );
    // Non-zk leaks: the LDE of a constant column is that constant, and a short column is interpolated.
    assert!(key_plain, "the constant secret appears in non-zk openings");
    assert_eq!(rec_plain, 16, "non-zk openings determine a 16-row column");
    // zk: neither.
    assert!(
        !key_zk16,
        "the constant secret does not appear in zk proof bytes"
    );
    assert!(
        rec_zk <= 1,
        "the attack recovers nothing from a zk proof ({rec_zk} cells)"
    );
    // The same attack on a non-zk proof of 128 rows does not interpolate either (too few points), but the
    // constant still shows: the leak the randomization removes.
    let (key_plain128, _) = run(&plain, 128);
    assert!(key_plain128);
}

/// Degree 4 (the zk maximum with blowup 4): 7 quotient chunks.
struct Pow4;
impl Air for Pow4 {
    fn name(&self) -> &str {
        "pow4"
    }
    fn width(&self) -> usize {
        2
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, y) = (b.main(0), b.main(1));
        let x4: zkrv_stark::symbolic::Expr = (0..4).map(|_| x.clone()).product();
        b.assert_zero("y=x^4", y - x4);
        b.assert_zero(
            "x'=x+1",
            b.is_transition() * (b.main_next(0) - x.clone() - 1u64),
        );
        b.assert_zero("x0=0", b.is_first_row() * x);
    }
}

struct Pow5;
impl Air for Pow5 {
    fn name(&self) -> &str {
        "pow5"
    }
    fn width(&self) -> usize {
        2
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, y) = (b.main(0), b.main(1));
        let x5: zkrv_stark::symbolic::Expr = (0..5).map(|_| x.clone()).product();
        b.assert_zero("y=x^5", y - x5);
    }
}

#[test]
fn zk_max_degree_is_blowup() {
    let config = zk_config(3);
    assert_eq!(config.max_constraint_degree(), 4);
    let airs: Vec<&dyn Air> = vec![&Pow4];
    let compiled = zkrv_stark::air::compile_for(&airs, &config).unwrap();
    assert_eq!(compiled[0].num_quotient_chunks, 7);
    assert_eq!(CompiledAir::new(&Pow4, 5).unwrap().num_quotient_chunks, 3);
    let trace = RowMajorMatrix::new(
        (0..128u64)
            .flat_map(|i| [F::from_u64(i), F::from_u64(i).exp_u64(4)])
            .collect(),
        2,
    );
    let pre = preprocess(&airs, vec![None]).unwrap();
    let proof = prove(&config, &airs, &pre, vec![trace], &[], b"").unwrap();
    verify(&config, 0, &airs, &pre, &[], b"", &proof).unwrap();
    let airs5: Vec<&dyn Air> = vec![&Pow5];
    let err = preprocess(&airs5, vec![None])
        .and_then(|pre| {
            prove(
                &config,
                &airs5,
                &pre,
                vec![RowMajorMatrix::zeros(128, 2)],
                &[],
                b"",
            )
        })
        .unwrap_err();
    assert!(matches!(err, ProveError::Air(_)), "{err}");
}

#[test]
fn zk_refuses_short_tables() {
    let config = zk_config(4);
    assert_eq!(config.min_log_height(), 7);
    let fx = fixture(6);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let err = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, STMT).unwrap_err();
    assert!(
        matches!(
            err,
            ProveError::HeightOutOfRange {
                log_height: 6,
                min: 7,
                ..
            }
        ),
        "{err}"
    );
    // Fewer queries allow shorter tables: 2 * 8 + 2 <= 32.
    let mut few = zk_config(4);
    few.fri.num_queries = 8;
    few.fri.query_grinding_bits = 0;
    assert_eq!(few.min_log_height(), 5);
    let fx = fixture(5);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let p = prove(&few, &airs(), &pre, fx.traces.clone(), &fx.public, STMT).unwrap();
    check(&few, &fx, &pre, &p).unwrap();
}

#[test]
fn zk_tampering_is_rejected() {
    let config = zk_config(6);
    let (fx, pre, proof) = prove_fib(&config, 7);
    check(&config, &fx, &pre, &proof).unwrap();

    // A bad trace (the debug checker off): the OOD identity fails.
    let mut bad = fx.traces.clone();
    bad[0].row_mut(6)[0] += F::ONE;
    let nocheck = StarkConfig {
        debug_check: false,
        ..config.clone()
    };
    let p = prove(&nocheck, &airs(), &pre, bad, &fx.public, STMT).unwrap();
    assert!(matches!(
        check(&config, &fx, &pre, &p),
        Err(VerifyError::OodMismatch { .. })
    ));

    // An opened row of the main round.
    let mut p = proof.clone();
    p.pcs.round_openings[0].rows[0][0][0] += F::ONE;
    assert!(matches!(
        check(&config, &fx, &pre, &p),
        Err(VerifyError::Pcs(PcsError::Merkle { round: 0, .. }))
    ));
    // A salt of the main round.
    let mut p = proof.clone();
    p.pcs.round_openings[0].salts[0][1][0] += F::ONE;
    assert!(matches!(
        check(&config, &fx, &pre, &p),
        Err(VerifyError::Pcs(PcsError::Merkle { round: 0, .. }))
    ));
    // A missing salt.
    let mut p = proof.clone();
    p.pcs.round_openings[1].salts[0].pop();
    assert!(matches!(
        check(&config, &fx, &pre, &p),
        Err(VerifyError::Pcs(PcsError::Merkle { round: 1, .. }))
    ));
    // A salt of a FRI layer.
    let mut p = proof.clone();
    p.pcs.fri_openings[1].salts[0][2][0] += F::ONE;
    assert!(matches!(
        check(&config, &fx, &pre, &p),
        Err(VerifyError::Pcs(PcsError::FriMerkle { layer: 1, .. }))
    ));
    // The opened value of the random codeword.
    let mut p = proof.clone();
    let q = p.opened.len() - 1;
    let last = p.opened[q].len() - 1;
    p.opened[q][last][0][0] += F::ONE;
    assert!(check(&config, &fx, &pre, &p).is_err());
    // The bus sums.
    let mut p = proof.clone();
    p.bus_sums[0] += F::ONE;
    assert!(check(&config, &fx, &pre, &p).is_err());
}

#[test]
fn zk_proves_at_every_folding_arity() {
    // Salted FRI layers of 3·2^a columns; the random codeword covers the 2^a - 1 new values per layer.
    for a in [2usize, 3] {
        let mut config = zk_config(7);
        config.fri.log_folding_arity = a;
        let (fx, pre, proof) = prove_fib(&config, 7);
        check(&config, &fx, &pre, &proof).unwrap();
        verify_bytes(
            &config,
            0,
            &airs(),
            &pre,
            &fx.public,
            STMT,
            &proof.to_bytes(),
        )
        .unwrap();
        assert!(proof.pcs.fri_openings.iter().all(|o| o.salts.len() == 1));
        // A FRI layer's salt, and its row.
        let mut p = proof.clone();
        p.pcs.fri_openings[0].salts[0][0][1] += F::ONE;
        assert!(
            matches!(
                check(&config, &fx, &pre, &p),
                Err(VerifyError::Pcs(PcsError::FriMerkle { layer: 0, .. }))
            ),
            "arity 2^{a}"
        );
        let mut p = proof.clone();
        let l = p.pcs.fri_openings.len() - 1;
        p.pcs.fri_openings[l].rows[0][0][0] += F::ONE;
        assert!(
            matches!(
                check(&config, &fx, &pre, &p),
                Err(VerifyError::Pcs(PcsError::FriMerkle { layer, .. })) if layer == l
            ),
            "arity 2^{a}"
        );
        // The arity is part of the configuration (transcript): another arity's verifier refuses.
        let mut other = config.clone();
        other.fri.log_folding_arity = 1;
        assert!(check(&other, &fx, &pre, &proof).is_err());
    }
}
