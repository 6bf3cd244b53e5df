//! The PCS verifier (protocol in the [`crate::pcs`] module doc): mirrors [`crate::pcs::open`] step by step.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::{
    fold_pair, fold_x, fri_shape, FriConfig, PcsError, PcsProof, QueryProof, MAX_LOG_HEIGHT,
};
use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::merkle::{verify_batch_many, Digest, MatrixDims, MerkleError, Opening};
use crate::poly::{domain_generator, eval_ext_poly, reverse_bits};
use crate::profile::span;
use crate::transcript::Transcript;

/// A committed round as the verifier sees it: the root and, per matrix (commit order), its dimensions and
/// the claimed `(point, values)` pairs (`values.len() == width`).
pub type VerifierRound = (Digest, Vec<(MatrixDims, Vec<(Ext3, Vec<Ext3>)>)>);

/// Verify a DEEP-FRI opening proof. Mirrors [`open`] step by step (same transcript operations); checks every
/// length and never panics on malformed proofs. `hiding`: zk mode, `salted[r]` says whether round `r` is a
/// salted tree; the FRI layers are salted too. Salted openings must carry salts of
/// [`crate::zk::SALT_WIDTH`] elements, unsalted ones none.
pub fn verify(
    config: &FriConfig,
    rounds: &[VerifierRound],
    proof: &PcsProof,
    transcript: &mut Transcript,
    hiding: Option<&[bool]>,
) -> Result<(), PcsError> {
    let salt_width = if hiding.is_some() {
        crate::zk::SALT_WIDTH
    } else {
        0
    };
    if hiding.is_some_and(|h| h.len() != rounds.len()) {
        return Err(PcsError::Shape("one salt flag per round".into()));
    }
    let round_salt = |r: usize| match hiding {
        Some(h) if h[r] => crate::zk::SALT_WIDTH,
        _ => 0,
    };
    if config.log_folding_arity != 1 {
        return Err(PcsError::Config("only log_folding_arity = 1 is supported"));
    }
    if config.query_grinding_bits > 64 {
        return Err(PcsError::Config("query_grinding_bits > 64"));
    }
    let lb = config.log_blowup;
    if lb > MAX_LOG_HEIGHT {
        return Err(PcsError::Config("log_blowup too large"));
    }
    if rounds.is_empty() {
        return Err(PcsError::Shape("no rounds".into()));
    }
    let mut round_lt = Vec::with_capacity(rounds.len());
    for (r, (_, mats)) in rounds.iter().enumerate() {
        if mats.is_empty() {
            return Err(PcsError::Shape(format!("round {r} has no matrices")));
        }
        for (m, (dims, pts)) in mats.iter().enumerate() {
            if dims.log_height < lb || dims.log_height > MAX_LOG_HEIGHT {
                return Err(PcsError::Shape(format!(
                    "round {r} matrix {m}: log_height out of range"
                )));
            }
            if dims.width == 0 {
                return Err(PcsError::Shape(format!("round {r} matrix {m}: zero width")));
            }
            for (_, vals) in pts {
                if vals.len() != dims.width {
                    return Err(PcsError::Shape(format!(
                        "round {r} matrix {m}: {} values for width {}",
                        vals.len(),
                        dims.width
                    )));
                }
            }
        }
        round_lt.push(mats.iter().map(|(d, _)| d.log_height).max().unwrap_or(0));
    }
    let (lmax, lf) = fri_shape(
        config,
        rounds
            .iter()
            .flat_map(|(_, mats)| mats.iter().map(|(d, _)| d.log_height)),
    );
    let num_layers = lmax - lf;
    if proof.fri_roots.len() != num_layers {
        return Err(PcsError::Shape(format!(
            "{} FRI roots, expected {num_layers}",
            proof.fri_roots.len()
        )));
    }
    let final_len = 1usize << (lf - lb);
    if proof.final_poly.len() != final_len {
        return Err(PcsError::Shape(format!(
            "final polynomial has {} coefficients, expected {final_len}",
            proof.final_poly.len()
        )));
    }
    if proof.queries.len() != config.num_queries {
        return Err(PcsError::Shape(format!(
            "{} queries, expected {}",
            proof.queries.len(),
            config.num_queries
        )));
    }

    // 1-2. Observe values, sample alpha.
    let s_transcript = span("transcript + grinding");
    for (_, mats) in rounds {
        for (_, pts) in mats {
            for (_, vals) in pts {
                transcript.observe_ext(vals);
            }
        }
    }
    let alpha = transcript.sample_ext();

    // 3-5. Betas, final polynomial, grinding.
    let betas: Vec<Ext3> = proof
        .fri_roots
        .iter()
        .map(|root| {
            transcript.observe_digest(root);
            transcript.sample_ext()
        })
        .collect();
    transcript.observe_ext(&proof.final_poly);
    if !transcript.check_grind(config.query_grinding_bits, proof.pow_nonce) {
        return Err(PcsError::Grinding);
    }
    drop(s_transcript);

    // Per (round, matrix): alpha^k0, alpha^width, and the combined claimed values per point.
    struct MatInfo {
        apow: Vec<Ext3>,
        alpha_w: Ext3,
        /// (index into `denoms`, Σ_c alpha^{k0+c} f_c(z)) per point `z`.
        pts: Vec<(usize, Ext3)>,
    }
    // The distinct (LDE log height, point) pairs: per query, `1 / (x_LH - z)` is computed once per pair
    // (one batch inversion), not once per matrix and point.
    let mut denoms: Vec<(usize, Ext3)> = Vec::new();
    let mut infos: Vec<Vec<MatInfo>> = Vec::with_capacity(rounds.len());
    let mut k = 0u64;
    for (_, mats) in rounds {
        let mut v = Vec::with_capacity(mats.len());
        for (dims, pts) in mats {
            let base = alpha.pow(k);
            let apow: Vec<Ext3> = alpha
                .powers_n(dims.width)
                .into_iter()
                .map(|a| a * base)
                .collect();
            let pts_c = pts
                .iter()
                .map(|(z, vals)| {
                    let key = (dims.log_height, *z);
                    let j = denoms.iter().position(|d| *d == key).unwrap_or_else(|| {
                        denoms.push(key);
                        denoms.len() - 1
                    });
                    (j, vals.iter().zip(&apow).map(|(&v, &a)| a * v).sum())
                })
                .collect();
            v.push(MatInfo {
                apow,
                alpha_w: alpha.pow(dims.width as u64),
                pts: pts_c,
            });
            k = k.saturating_add((pts.len() as u64).saturating_mul(dims.width as u64));
        }
        infos.push(v);
    }
    let mut heights: Vec<usize> = denoms.iter().map(|&(lh, _)| lh).collect();
    heights.sort_unstable();
    heights.dedup();

    // 6. Queries: indices sampled in order, then the queries checked in parallel; the error reported is
    // that of the first failing query.
    let root_of = |l: usize| &proof.fri_roots[l];
    let qs: Vec<usize> = proof
        .queries
        .iter()
        .map(|_| transcript.sample_bits(lmax))
        .collect();
    for (qi, qp) in proof.queries.iter().enumerate() {
        if qp.round_openings.len() != rounds.len() {
            return Err(PcsError::Shape(format!(
                "query {qi}: wrong number of round openings"
            )));
        }
        if qp.fri_openings.len() != num_layers {
            return Err(PcsError::Shape(format!(
                "query {qi}: wrong number of FRI openings"
            )));
        }
    }
    // Merkle paths of all queries, one batch per tree (round trees, then FRI layers), trees in parallel.
    let s_merkle = span("Merkle paths");
    let round_merkle: Vec<Vec<Result<(), MerkleError>>> = rounds
        .par_iter()
        .enumerate()
        .map(|(r, (root, mats))| {
            let dims: Vec<MatrixDims> = mats.iter().map(|(d, _)| *d).collect();
            let openings: Vec<Opening> = proof
                .queries
                .iter()
                .zip(&qs)
                .map(|(qp, &q)| Opening {
                    index: q >> (lmax - round_lt[r]),
                    rows: &qp.round_openings[r].rows,
                    proof: &qp.round_openings[r].proof,
                })
                .collect();
            verify_batch_many(root, &dims, &openings, round_salt(r))
        })
        .collect();
    let fri_merkle: Vec<Vec<Result<(), MerkleError>>> = (0..num_layers)
        .into_par_iter()
        .map(|l| {
            let dims = [MatrixDims {
                width: 6,
                log_height: lmax - l - 1,
            }];
            let rows: Vec<[Vec<F>; 1]> = proof
                .queries
                .iter()
                .map(|qp| [qp.fri_openings[l].pair.iter().flat_map(|e| e.0).collect()])
                .collect();
            let openings: Vec<Opening> = proof
                .queries
                .iter()
                .zip(&qs)
                .zip(&rows)
                .map(|((qp, &q), row)| Opening {
                    index: (q >> l) >> 1,
                    rows: row,
                    proof: &qp.fri_openings[l].proof,
                })
                .collect();
            verify_batch_many(root_of(l), &dims, &openings, salt_width)
        })
        .collect();
    drop(s_merkle);
    let _s = span("queries");
    let check_query = |qi: usize, qp: &QueryProof, q: usize| -> Result<(), PcsError> {
        // x per LDE height, then 1 / (x - z) per (height, point).
        let xs: Vec<(usize, F)> = heights
            .iter()
            .map(|&lh| (lh, crate::poly::coset_point(lh, q >> (lmax - lh))))
            .collect();
        let x_of = |lh: usize| xs.iter().find(|(h, _)| *h == lh).map(|&(_, x)| x);
        let diffs: Vec<Ext3> = denoms
            .iter()
            .map(|&(lh, z)| Ext3::from_base(x_of(lh).unwrap_or(F::ZERO)) - z)
            .collect();
        let invs = batch_inverse_small(&diffs).ok_or(PcsError::PointInDomain)?;
        // Reduced openings per height.
        let mut ro: BTreeMap<usize, Ext3> = BTreeMap::new();
        for (r, ((_, mats), opening)) in rounds.iter().zip(&qp.round_openings).enumerate() {
            round_merkle[r][qi]
                .clone()
                .map_err(|source| PcsError::Merkle {
                    round: r,
                    query: qi,
                    source,
                })?;
            for (((d, _), row), info) in mats.iter().zip(&opening.rows).zip(&infos[r]) {
                let m: Ext3 = row.iter().zip(&info.apow).map(|(&v, &a)| a * v).sum();
                let mut scale = Ext3::ONE;
                let mut sum = Ext3::ZERO;
                for &(j, mz) in &info.pts {
                    sum += scale * ((m - mz) * invs[j]);
                    scale *= info.alpha_w;
                }
                *ro.entry(d.log_height).or_insert(Ext3::ZERO) += sum;
            }
        }

        // FRI.
        let mut cur = ro.remove(&lmax).unwrap_or(Ext3::ZERO);
        let mut log_size = lmax;
        for (l, (fo, &beta)) in qp.fri_openings.iter().zip(&betas).enumerate() {
            let i = q >> l;
            fri_merkle[l][qi]
                .clone()
                .map_err(|source| PcsError::FriMerkle {
                    layer: l,
                    query: qi,
                    source,
                })?;
            if fo.pair[i & 1] != cur {
                return Err(PcsError::FriFold {
                    layer: l,
                    query: qi,
                });
            }
            let x = fold_x(log_size, i >> 1);
            let ih = (x + x).inverse();
            cur = fold_pair(fo.pair[0], fo.pair[1], beta, ih);
            log_size -= 1;
            if let Some(v) = ro.remove(&log_size) {
                cur += beta.square() * v;
            }
        }
        let fi = q >> num_layers;
        let x = domain_generator(lf).exp_u64(reverse_bits(fi, lf) as u64);
        if eval_ext_poly(&proof.final_poly, Ext3::from_base(x)) != cur {
            return Err(PcsError::FinalPoly { query: qi });
        }
        Ok(())
    };
    let results: Vec<Result<(), PcsError>> = proof
        .queries
        .par_iter()
        .zip(&qs)
        .enumerate()
        .map(|(qi, (qp, &q))| check_query(qi, qp, q))
        .collect();
    results.into_iter().collect()
}

/// Montgomery batch inversion of a few elements, sequential; `None` if any is zero.
fn batch_inverse_small(xs: &[Ext3]) -> Option<Vec<Ext3>> {
    let mut prefix = Vec::with_capacity(xs.len());
    let mut acc = Ext3::ONE;
    for &x in xs {
        prefix.push(acc);
        acc *= x;
    }
    let mut inv = acc.try_inverse()?;
    let mut out = vec![Ext3::ZERO; xs.len()];
    for i in (0..xs.len()).rev() {
        out[i] = prefix[i] * inv;
        inv *= xs[i];
    }
    Some(out)
}
