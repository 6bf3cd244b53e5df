//! The PCS verifier (protocol in the [`crate::pcs`] module doc): mirrors [`crate::pcs::open`] step by step.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::{fold_row, fri_layers, FriConfig, PcsError, PcsProof, MAX_LOG_HEIGHT};
use crate::field::{Ext3, PrimeCharacteristicRing, F};
use crate::merkle::{distinct_rows, verify_tree_openings, Digest, MatrixDims};
use crate::poly::{domain_generator, eval_ext_poly, reverse_bits};
use crate::profile::span;
use crate::transcript::Transcript;

/// A committed round as the verifier sees it: the root and, per matrix (commit order), its dimensions and
/// the claimed `(point, values)` pairs (`values.len() == width`).
pub type VerifierRound = (Digest, Vec<(MatrixDims, Vec<(Ext3, Vec<Ext3>)>)>);

/// Verify a DEEP-FRI opening proof; returns the sampled query indices (`q < 2^Lmax`). Mirrors [`open`] step by step (same transcript operations); checks every
/// length and never panics on malformed proofs. `hiding`: zk mode, `salted[r]` says whether round `r` is a
/// salted tree; the FRI layers are salted too. Salted openings must carry salts of
/// [`crate::zk::SALT_WIDTH`] elements, unsalted ones none.
pub fn verify(
    config: &FriConfig,
    rounds: &[VerifierRound],
    proof: &PcsProof,
    transcript: &mut Transcript,
    hiding: Option<&[bool]>,
) -> Result<Vec<usize>, PcsError> {
    config.check()?;
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
    let lb = config.log_blowup;
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
    let (lmax, lf, layers) = fri_layers(
        config,
        rounds
            .iter()
            .flat_map(|(_, mats)| mats.iter().map(|(d, _)| d.log_height)),
    );
    let num_layers = layers.len();
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
    if proof.round_openings.len() != rounds.len() {
        return Err(PcsError::Shape(format!(
            "openings of {} rounds, expected {}",
            proof.round_openings.len(),
            rounds.len()
        )));
    }
    if proof.fri_openings.len() != num_layers {
        return Err(PcsError::Shape(format!(
            "openings of {} FRI layers, expected {num_layers}",
            proof.fri_openings.len()
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

    // 6. Queries: indices sampled in order; every tree's openings verified at once (trees in parallel),
    // then the queries checked in parallel; the error reported is that of the first failing query.
    let qs: Vec<usize> = (0..config.num_queries)
        .map(|_| transcript.sample_bits(lmax))
        .collect();
    let s_merkle = span("Merkle paths");
    let round_idx: Vec<Vec<usize>> = round_lt
        .iter()
        .map(|&lt| qs.iter().map(|&q| q >> (lmax - lt)).collect())
        .collect();
    let fri_idx: Vec<Vec<usize>> = layers
        .iter()
        .map(|l| {
            qs.iter()
                .map(|&q| (q >> (lmax - l.log_size)) >> l.log_arity)
                .collect()
        })
        .collect();
    let round_dims: Vec<Vec<MatrixDims>> = rounds
        .iter()
        .map(|(_, mats)| mats.iter().map(|(d, _)| *d).collect())
        .collect();
    let hash = transcript.hash();
    let merkle: Vec<Result<(), PcsError>> = (0..rounds.len() + num_layers)
        .into_par_iter()
        .map(|t| {
            if t < rounds.len() {
                let o = &proof.round_openings[t];
                verify_tree_openings(
                    hash,
                    &rounds[t].0,
                    &round_dims[t],
                    &round_idx[t],
                    o,
                    round_salt(t),
                )
                .map_err(|source| PcsError::Merkle { round: t, source })
            } else {
                let l = t - rounds.len();
                let dims = [layers[l].dims()];
                let o = &proof.fri_openings[l];
                verify_tree_openings(hash, &proof.fri_roots[l], &dims, &fri_idx[l], o, salt_width)
                    .map_err(|source| PcsError::FriMerkle { layer: l, source })
            }
        })
        .collect();
    merkle.into_iter().collect::<Result<(), PcsError>>()?;
    drop(s_merkle);
    // Per tree and matrix, its distinct opened rows (ascending): where query `q`'s row is.
    let round_rows: Vec<Vec<Vec<usize>>> = round_dims
        .iter()
        .zip(&round_idx)
        .zip(&round_lt)
        .map(|((dims, idx), &lt)| {
            dims.iter()
                .map(|d| distinct_rows(idx, lt - d.log_height))
                .collect()
        })
        .collect();
    let fri_rows: Vec<Vec<usize>> = fri_idx.iter().map(|idx| distinct_rows(idx, 0)).collect();
    let _s = span("queries");
    let check_query = |qi: usize, q: usize| -> Result<(), PcsError> {
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
        // Reduced openings per height (the Merkle checks above fixed every row's shape).
        let mut ro: BTreeMap<usize, Ext3> = BTreeMap::new();
        for (r, (_, mats)) in rounds.iter().enumerate() {
            for (m, ((d, _), info)) in mats.iter().zip(&infos[r]).enumerate() {
                let leaf = round_idx[r][qi] >> (round_lt[r] - d.log_height);
                let row = round_rows[r][m]
                    .binary_search(&leaf)
                    .ok()
                    .and_then(|k| proof.round_openings[r].rows[m].get(k))
                    .ok_or_else(|| PcsError::Shape(format!("round {r}: row {leaf} not opened")))?;
                let mv: Ext3 = row.iter().zip(&info.apow).map(|(&v, &a)| a * v).sum();
                let mut scale = Ext3::ONE;
                let mut sum = Ext3::ZERO;
                for &(j, mz) in &info.pts {
                    sum += scale * ((mv - mz) * invs[j]);
                    scale *= info.alpha_w;
                }
                *ro.entry(d.log_height).or_insert(Ext3::ZERO) += sum;
            }
        }

        // FRI.
        let mut cur = ro.remove(&lmax).unwrap_or(Ext3::ZERO);
        for (l, (layer, &beta)) in layers.iter().zip(&betas).enumerate() {
            let a = layer.log_arity;
            let i = q >> (lmax - layer.log_size);
            let r = fri_rows[l]
                .binary_search(&(i >> a))
                .ok()
                .and_then(|k| proof.fri_openings[l].rows[0].get(k))
                .filter(|r| r.len() == 3 << a)
                .ok_or_else(|| PcsError::Shape(format!("FRI layer {l}: row not opened")))?;
            let row: Vec<Ext3> = r
                .chunks_exact(3)
                .map(|c| Ext3([c[0], c[1], c[2]]))
                .collect();
            if row[i & ((1 << a) - 1)] != cur {
                return Err(PcsError::FriFold {
                    layer: l,
                    query: qi,
                });
            }
            cur = fold_row(&row, layer.log_size, i >> a, beta)
                .ok_or_else(|| PcsError::Shape(format!("FRI layer {l}: row not foldable")))?;
            if let Some(v) = ro.remove(&(layer.log_size - a)) {
                cur += beta.pow(1 << a) * v;
            }
        }
        let fi = q >> (lmax - lf);
        let x = domain_generator(lf).exp_u64(reverse_bits(fi, lf) as u64);
        if eval_ext_poly(&proof.final_poly, Ext3::from_base(x)) != cur {
            return Err(PcsError::FinalPoly { query: qi });
        }
        Ok(())
    };
    let results: Vec<Result<(), PcsError>> = qs
        .par_iter()
        .enumerate()
        .map(|(qi, &q)| check_query(qi, q))
        .collect();
    results.into_iter().collect::<Result<(), PcsError>>()?;
    Ok(qs)
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
