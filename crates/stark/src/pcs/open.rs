//! The PCS prover: one generic function that alone drives the transcript through the protocol steps of the
//! [`crate::pcs`] module doc (numbered the same here) and calls a backend's [`OpeningOps`] for the work.

use std::collections::BTreeMap;

use super::{fri_layers, FriConfig, OpenedValues, PcsProof, MAX_LOG_FOLDING_ARITY, MAX_LOG_HEIGHT};
use crate::backend::{BackendError, CommitOps, DeepTerm, MatrixView, OpeningOps};
use crate::field::{Ext3, PrimeCharacteristicRing, F};
use crate::merkle::{compress_openings, MatrixDims, MerkleProof, TreeOpenings};
use crate::poly::{bit_reverse_slice, coset_idft_ext};
use crate::profile::span;
use crate::transcript::Transcript;
use crate::zk::{self, ZkRng};

/// Open the committed `rounds` at the given points and prove it with DEEP-FRI.
///
/// `rounds[r] = (committed, points)` with `points[m]` the opening points of matrix `m` of the round (commit
/// order; every matrix an LDE of blowup `2^config.log_blowup`). Returns `values[r][m][p][c] =
/// f_{r,m,c}(points[m][p])` and the proof. The caller must have observed the round roots (and whatever
/// determined the points) before calling.
///
/// `hiding`: zk mode; every FRI layer tree is salted (round `zk::ROUND_FRI + layer`). The committed rounds
/// must then be salted trees too (the caller's job), and the caller must have added a random codeword to a
/// round so that the layers' values are masked.
///
/// Errors: [`BackendError::Shape`] for caller errors (`points.len()` differing from the number of
/// matrices, a matrix shorter than the blowup, `log_folding_arity` outside `[1, 3]`, heights above 2^32), the
/// backend's errors, and [`BackendError::PointInDomain`] for an opening point inside an LDE domain
/// (points must be sampled out of domain; for a random `Ext3` point this has probability about `N / p^3`).
pub fn open<B: CommitOps + OpeningOps>(
    backend: &B,
    config: &FriConfig,
    rounds: &[(&B::Committed, Vec<Vec<Ext3>>)],
    transcript: &mut Transcript,
    hiding: Option<&ZkRng>,
) -> Result<(OpenedValues, PcsProof), BackendError> {
    let shape = |s: String| Err(BackendError::Shape(s));
    if !(1..=MAX_LOG_FOLDING_ARITY).contains(&config.log_folding_arity) {
        return shape(format!(
            "log_folding_arity {} outside [1, {MAX_LOG_FOLDING_ARITY}]",
            config.log_folding_arity
        ));
    }
    let lb = config.log_blowup;
    if rounds.is_empty() {
        return shape("no rounds to open".into());
    }
    let dims: Vec<Vec<MatrixDims>> = rounds.iter().map(|(c, _)| backend.lde_dims(c)).collect();
    for (r, ((_, points), dims)) in rounds.iter().zip(&dims).enumerate() {
        if points.len() != dims.len() {
            return shape(format!(
                "round {r}: {} point lists for {} matrices",
                points.len(),
                dims.len()
            ));
        }
        if let Some(d) = dims
            .iter()
            .find(|d| d.log_height < lb || d.log_height > MAX_LOG_HEIGHT)
        {
            return shape(format!(
                "round {r}: LDE height 2^{} outside [2^{lb}, 2^{MAX_LOG_HEIGHT}]",
                d.log_height
            ));
        }
    }

    // 1. Values.
    let s_values = span("opened values");
    let requests: Vec<(&B::Committed, &[Vec<Ext3>])> =
        rounds.iter().map(|(c, p)| (*c, p.as_slice())).collect();
    let values = backend.evaluate(&requests, lb)?;
    drop(s_values);
    let shapes_match = values.len() == rounds.len()
        && values
            .iter()
            .zip(rounds)
            .zip(&dims)
            .all(|((v, (_, pts)), dims)| {
                v.len() == pts.len()
                    && v.iter().zip(pts).zip(dims).all(|((vm, pm), d)| {
                        vm.len() == pm.len() && vm.iter().all(|vals| vals.len() == d.width)
                    })
            });
    if !shapes_match {
        return Err(BackendError::Device(
            "opened values do not have the shape of the points".into(),
        ));
    }
    for round in &values {
        for mat in round {
            for pt in mat {
                transcript.observe_ext(pt);
            }
        }
    }

    // 2. DEEP batching into one reduced codeword per height; `k` counts (round, matrix, point, column).
    let alpha = transcript.sample_ext();
    let s_deep = span("DEEP codewords");
    let mut by_height: BTreeMap<usize, Vec<DeepTerm<'_, B::Committed>>> = BTreeMap::new();
    let mut k = 0u64;
    for (((c, points), round_vals), dims) in rounds.iter().zip(&values).zip(&dims) {
        for (m, ((pts, vals), d)) in points.iter().zip(round_vals).zip(dims).enumerate() {
            by_height.entry(d.log_height).or_default().push(DeepTerm {
                matrix: MatrixView {
                    round: *c,
                    index: m,
                },
                points: pts,
                values: vals,
                k0: k,
            });
            k += (pts.len() * d.width) as u64;
        }
    }
    let mut reduced: BTreeMap<usize, B::Codeword> = BTreeMap::new();
    for (&lh, terms) in &by_height {
        reduced.insert(lh, backend.deep_codeword(lh, lb, terms, alpha)?);
    }
    drop(s_deep);

    // 3. FRI commit phase.
    let s_fri = span("FRI layers");
    let (lmax, lf, shapes) = fri_layers(config, by_height.keys().copied());
    let Some(mut cur) = reduced.remove(&lmax) else {
        return shape("no matrices to open".into());
    };
    let mut layers: Vec<B::FriLayer> = Vec::new();
    let mut fri_roots = Vec::new();
    for l in &shapes {
        let round = zk::ROUND_FRI + layers.len() as u32;
        let hash = transcript.hash();
        let (root, layer) =
            backend.commit_fri_layer(&cur, l.log_arity, hiding.map(|r| (r, round)), hash)?;
        transcript.observe_digest(&root);
        let beta = transcript.sample_ext();
        let roll_in = reduced.remove(&(l.log_size - l.log_arity));
        cur = backend.fold_fri_layer(cur, l.log_size, l.log_arity, beta, roll_in)?;
        layers.push(layer);
        fri_roots.push(root);
    }
    drop(s_fri);

    // 4. Final polynomial.
    let s_final = span("final polynomial");
    let mut last = backend.final_codeword(cur)?;
    if last.len() != 1 << lf {
        return Err(BackendError::Device(format!(
            "final codeword of {} values, expected 2^{lf}",
            last.len()
        )));
    }
    bit_reverse_slice(&mut last);
    let mut final_poly = coset_idft_ext(&last, F::ONE);
    final_poly.truncate(1 << (lf - lb));
    transcript.observe_ext(&final_poly);
    drop(s_final);

    // 5. Grinding, 6. queries.
    let s_grind = span("grinding");
    let bits = config.query_grinding_bits;
    let grind_input = transcript.grind_input();
    let pow_nonce = backend.grind(&grind_input, bits)?;
    if !grind_input.ok(bits, pow_nonce) {
        return Err(BackendError::Device(format!(
            "the backend's grinding nonce {pow_nonce} does not have {bits} leading zero bits"
        )));
    }
    transcript.observe_u64(pow_nonce);
    drop(s_grind);
    let query_indices: Vec<usize> = (0..config.num_queries)
        .map(|_| transcript.sample_bits(lmax))
        .collect();
    let s_rows = span("query rows");
    let mut round_openings = Vec::with_capacity(rounds.len());
    for ((c, _), dims) in rounds.iter().zip(&dims) {
        let lt = dims.iter().map(|d| d.log_height).max().unwrap_or(0);
        let idx: Vec<usize> = query_indices.iter().map(|&q| q >> (lmax - lt)).collect();
        let opened: Vec<(Vec<Vec<F>>, MerkleProof)> = backend
            .open_rows(c, &idx)?
            .into_iter()
            .map(|o| (o.rows, o.proof))
            .collect();
        round_openings.push(compress(dims, &idx, &opened)?);
    }
    let mut fri_openings = Vec::with_capacity(layers.len());
    for (l, layer) in shapes.iter().zip(&layers) {
        let idx: Vec<usize> = query_indices
            .iter()
            .map(|&q| (q >> (lmax - l.log_size)) >> l.log_arity)
            .collect();
        let opened: Vec<(Vec<Vec<F>>, MerkleProof)> = backend
            .open_fri_layer(layer, &idx)?
            .into_iter()
            .map(|o| (vec![o.values.iter().flat_map(|e| e.0).collect()], o.proof))
            .collect();
        fri_openings.push(compress(&[l.dims()], &idx, &opened)?);
    }
    drop(s_rows);

    Ok((
        values,
        PcsProof {
            fri_roots,
            final_poly,
            pow_nonce,
            round_openings,
            fri_openings,
        },
    ))
}

/// [`compress_openings`] of a backend's per-query openings; a shape error there is the backend's fault.
fn compress(
    dims: &[MatrixDims],
    indices: &[usize],
    opened: &[(Vec<Vec<F>>, MerkleProof)],
) -> Result<TreeOpenings, BackendError> {
    compress_openings(dims, indices, opened)
        .map_err(|e| BackendError::Device(format!("opened rows or paths of the wrong shape: {e}")))
}
