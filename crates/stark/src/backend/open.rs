//! DEEP + FRI operations of the CPU backend ([`OpeningOps`]); the protocol that calls them is
//! [`crate::pcs::open`]. Every value is the same field element whichever way it is computed (barycentric
//! on stored LDE rows, or from coefficients), so proofs do not depend on the LDE mode.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::{BackendError, CpuBackend, CpuCommitted, DeepTerm, OpeningOps};
use crate::field::{Ext3, Field, PrimeCharacteristicRing, PrimeField64, F};
use crate::matrix::RowMajorMatrix;
use crate::merkle::{Digest, MerkleHash, MerkleTree};
use crate::pcs::{
    batch_inverse_ext, fold_inv_halves, fold_pair, BatchOpening, FriLayerOpening, OpenedValues,
    RoundLde, MAX_LOG_FOLDING_ARITY,
};
use crate::poly::{
    bit_reverse_slice, coset_dft_ext, coset_idft_ext, coset_point, coset_shift, domain_generator,
};
use crate::transcript::GrindInput;
use crate::zk::ZkRng;

/// Whether `z` is a point of the LDE domain `g·H_{2^lh}` (then a DEEP quotient at `z` is undefined):
/// `(z/g)^(2^lh) = 1`.
fn xs_contain(lh: usize, z: Ext3) -> bool {
    let mut t = z * coset_shift().inverse();
    for _ in 0..lh {
        t = t.square();
    }
    t == Ext3::ONE
}

/// Barycentric evaluation data for one LDE height and point `z`.
enum Bary {
    /// `w_k = s · x_k / (z - x_k)` for the first `n` LDE rows, `s = (z^n - g^n) / (n·g^n)`, so that
    /// `f(z) = Σ_k w_k f(x_k)`.
    Weights(Vec<Ext3>),
    /// `z` equals the point of LDE row `k` (`k < n`).
    InDomain(usize),
}

/// Weights for evaluating polynomials of degree `< n = 2^(lh - log_blowup)` at `z` from the first `n` rows of
/// their bit-reversed LDE, which hold the values on `g·H_n` in bit-reversed order (row `k` at
/// `x_k = g·ω_n^{bitrev(k)}`).
fn bary_weights(lh: usize, log_blowup: usize, z: Ext3) -> Bary {
    let log_n = lh - log_blowup;
    let n = 1usize << log_n;
    let g = coset_shift();
    let mut xs: Vec<F> = domain_generator(log_n).shifted_powers(g).take(n).collect();
    bit_reverse_slice(&mut xs);
    let diffs: Vec<Ext3> = xs.par_iter().map(|&x| z - x).collect();
    let Some(inv) = batch_inverse_ext(&diffs) else {
        let k = diffs.iter().position(|d| d.is_zero()).unwrap_or(0);
        return Bary::InDomain(k);
    };
    let gn = g.exp_u64(n as u64);
    let scale = (z.pow(n as u64) - gn) * (F::from_u64(n as u64) * gn).inverse();
    Bary::Weights(
        inv.par_iter()
            .zip(&xs)
            .map(|(&i, &x)| i * (scale * x))
            .collect(),
    )
}

/// `f_c(z)` for every column `c` of `mat` (see [`bary_weights`]).
fn bary_apply(mat: &RowMajorMatrix, bary: &Bary) -> Vec<Ext3> {
    let w = mat.width;
    match bary {
        Bary::InDomain(k) => mat.row(*k).iter().map(|&v| Ext3::from_base(v)).collect(),
        Bary::Weights(weights) => (0..weights.len())
            .into_par_iter()
            .with_min_len(256)
            .fold(
                || vec![Ext3::ZERO; w],
                |mut acc, k| {
                    let wk = weights[k];
                    for (a, &v) in acc.iter_mut().zip(mat.row(k)) {
                        *a += wk * v;
                    }
                    acc
                },
            )
            .reduce(
                || vec![Ext3::ZERO; w],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        *x += y;
                    }
                    a
                },
            ),
    }
}

/// Evaluations of every column of `coeffs` (`n x w` coefficients, `X^0` first) at each base-field point of
/// `xs`: `out[j][c] = Σ_k coeffs[k][c] · xs[j]^k`. One pass over the coefficients, `|xs| · n · w`
/// multiply-adds (the opened rows of a round kept as coefficients). The sums are accumulated unreduced:
/// each 128-bit product `x^k · c_k` (canonical 64-bit operands) is added as its high and low 64-bit halves
/// into two `u128` sums, reduced mod `p` once per 4096 rows (at most `2^76` each), which costs about a third
/// of a reduced field multiply-add.
pub fn eval_columns_at(coeffs: &RowMajorMatrix, xs: &[F]) -> Vec<Vec<F>> {
    let w = coeffs.width;
    let p = xs.len();
    if w == 0 {
        return vec![Vec::new(); p];
    }
    const CHUNK: usize = 1 << 12;
    const P: u128 = 0xFFFF_FFFF_0000_0001;
    let reduce = |lo: u128, hi: u128| -> F {
        // lo + hi·2^64 mod p, with lo, hi < 2^76.
        let hi_shifted = ((hi % P) << 64) % P;
        F::new(((lo % P + hi_shifted) % P) as u64)
    };
    let sums = coeffs
        .values
        .par_chunks(CHUNK * w)
        .enumerate()
        .map(|(ci, rows)| {
            let mut lo = vec![0u128; p * w];
            let mut hi = vec![0u128; p * w];
            let mut xp: Vec<F> = xs.iter().map(|x| x.exp_u64((ci * CHUNK) as u64)).collect();
            let mut row_u = vec![0u64; w];
            for row in rows.chunks_exact(w) {
                for (u, v) in row_u.iter_mut().zip(row) {
                    *u = v.as_canonical_u64();
                }
                for (j, x) in xp.iter_mut().enumerate() {
                    let xu = x.as_canonical_u64() as u128;
                    let (l, h) = (&mut lo[j * w..(j + 1) * w], &mut hi[j * w..(j + 1) * w]);
                    for ((l, h), &v) in l.iter_mut().zip(h.iter_mut()).zip(&row_u) {
                        let prod = xu * v as u128;
                        *l += prod as u64 as u128;
                        *h += prod >> 64;
                    }
                    *x *= xs[j];
                }
            }
            lo.iter()
                .zip(&hi)
                .map(|(&l, &h)| reduce(l, h))
                .collect::<Vec<F>>()
        })
        .reduce(
            || vec![F::ZERO; p * w],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        );
    sums.chunks(w).map(|r| r.to_vec()).collect()
}

/// The reduced codeword of one height in coefficient form (the values are the same field elements as the
/// formula of [`OpeningOps::deep_codeword`], so the proof does not depend on how): per matrix the combined
/// polynomial `M = Σ_c alpha^{k0+c} f_c` (from the coefficients, or from the first `n` stored LDE rows,
/// which are `g·H_n`, by one coset IDFT), per point `z` the sum `G_z = Σ scale·M` and `G_z(z)` from the
/// opened values, then `Σ_z (G_z(X) - G_z(z)) / (X - z)` by synthetic division (exact: the opened values are
/// the true evaluations) and one LDE of the result. That is `n·w` multiply-adds per matrix instead of
/// `nB·w`, and no inversion of `x_i - z` over the LDE domain.
fn deep_codeword_host(
    lh: usize,
    lb: usize,
    terms: &[DeepTerm<'_, CpuCommitted>],
    alpha: Ext3,
) -> Result<Vec<Ext3>, BackendError> {
    let n_lde = 1usize << lh;
    let n = n_lde >> lb;
    // Per point `z`: `G_z` (n coefficients) and `G_z(z)`.
    let mut sums: Vec<(Ext3, Vec<Ext3>, Ext3)> = Vec::new();
    for t in terms {
        let lde = t.matrix.round.round_lde();
        let (mat, from_coeffs) = match lde {
            RoundLde::Stored(tree) => (tree.matrices().get(t.matrix.index), false),
            RoundLde::Coeffs { coeffs, .. } => (coeffs.get(t.matrix.index), true),
        };
        let mat = mat.ok_or_else(|| BackendError::Shape("DEEP term of a missing matrix".into()))?;
        if mat.height() < n {
            return Err(BackendError::Shape(
                "DEEP term shorter than its height".into(),
            ));
        }
        let w = mat.width;
        let base = alpha.pow(t.k0);
        let apow: Vec<Ext3> = alpha.powers_n(w).into_iter().map(|a| a * base).collect();
        let mut coeffs: Vec<Ext3> = (0..n)
            .into_par_iter()
            .with_min_len(256)
            .map(|i| {
                mat.row(i)
                    .iter()
                    .zip(&apow)
                    .fold(Ext3::ZERO, |s, (&v, &a)| s + a * v)
            })
            .collect();
        if !from_coeffs {
            bit_reverse_slice(&mut coeffs);
            coeffs = coset_idft_ext(&coeffs, coset_shift());
        }
        let alpha_w = alpha.pow(w as u64);
        let mut scale = Ext3::ONE;
        for (&z, zv) in t.points.iter().zip(t.values) {
            let mz: Ext3 = zv.iter().zip(&apow).map(|(&v, &a)| a * v).sum();
            let pos = match sums.iter().position(|(p, _, _)| *p == z) {
                Some(pos) => pos,
                None => {
                    sums.push((z, vec![Ext3::ZERO; n], Ext3::ZERO));
                    sums.len() - 1
                }
            };
            let (_, g, gz) = &mut sums[pos];
            g.par_iter_mut()
                .zip(&coeffs)
                .with_min_len(256)
                .for_each(|(a, &m)| *a += scale * m);
            *gz += scale * mz;
            scale *= alpha_w;
        }
    }
    let mut total = vec![Ext3::ZERO; n];
    for (z, g, gz) in sums {
        if xs_contain(lh, z) {
            return Err(BackendError::PointInDomain { log_height: lh });
        }
        // (G(X) - G(z)) / (X - z): q_{k-1} = g_k + z q_k, from the top; remainder g_0 - G(z) + z q_0 = 0.
        let mut q = Ext3::ZERO;
        for k in (1..n).rev() {
            q = g[k] + z * q;
            total[k - 1] += q;
        }
        if !(g[0] - gz + z * q).is_zero() {
            return Err(BackendError::DeepInconsistent { log_height: lh });
        }
    }
    total.resize(n_lde, Ext3::ZERO);
    let mut evals = coset_dft_ext(&total, coset_shift());
    bit_reverse_slice(&mut evals);
    Ok(evals)
}

impl OpeningOps for CpuBackend {
    /// Matrices are visited height by height so that the barycentric weights of a (height, point) are
    /// computed once (shared by every round) and dropped before the next height; rounds kept as
    /// coefficients use the powers `z^k` instead.
    fn evaluate(
        &self,
        rounds: &[(&CpuCommitted, &[Vec<Ext3>])],
        lb: usize,
    ) -> Result<OpenedValues, BackendError> {
        let mut values: OpenedValues = rounds
            .iter()
            .map(|(_, points)| points.iter().map(|p| vec![Vec::new(); p.len()]).collect())
            .collect();
        let mut mats_by_height: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for (r, (c, points)) in rounds.iter().enumerate() {
            let dims = c.tree.dims();
            if dims.len() != points.len() {
                return Err(BackendError::Shape(format!(
                    "round {r}: {} point lists for {} matrices",
                    points.len(),
                    dims.len()
                )));
            }
            for (m, d) in dims.iter().enumerate() {
                if d.log_height < lb {
                    return Err(BackendError::Shape("LDE shorter than the blowup".into()));
                }
                mats_by_height.entry(d.log_height).or_default().push((r, m));
            }
        }
        for (&lh, list) in &mats_by_height {
            let mut cache: Vec<(Ext3, Bary)> = Vec::new();
            let mut pow_cache: Vec<(Ext3, Bary)> = Vec::new();
            for &(r, m) in list {
                let (c, points) = rounds[r];
                for (p, &z) in points[m].iter().enumerate() {
                    type Weights = fn(usize, usize, Ext3) -> Bary;
                    let (mat, cache, weights): (&RowMajorMatrix, _, Weights) = match c.round_lde() {
                        RoundLde::Stored(tree) => (&tree.matrices()[m], &mut cache, bary_weights),
                        RoundLde::Coeffs { coeffs, .. } => {
                            (&coeffs[m], &mut pow_cache, |lh, lb, z| {
                                Bary::Weights(z.powers_n(1 << (lh - lb)))
                            })
                        }
                    };
                    let pos = match cache.iter().position(|(q, _)| *q == z) {
                        Some(pos) => pos,
                        None => {
                            cache.push((z, weights(lh, lb, z)));
                            cache.len() - 1
                        }
                    };
                    values[r][m][p] = bary_apply(mat, &cache[pos].1);
                }
            }
        }
        Ok(values)
    }

    fn deep_codeword(
        &self,
        log_height: usize,
        log_blowup: usize,
        terms: &[DeepTerm<'_, CpuCommitted>],
        alpha: Ext3,
    ) -> Result<Vec<Ext3>, BackendError> {
        deep_codeword_host(log_height, log_blowup, terms, alpha)
    }

    fn commit_fri_layer(
        &self,
        codeword: &Vec<Ext3>,
        log_arity: usize,
        salt: Option<(&ZkRng, u32)>,
        hash: MerkleHash,
    ) -> Result<(Digest, MerkleTree), BackendError> {
        if log_arity == 0
            || log_arity > MAX_LOG_FOLDING_ARITY
            || codeword.len() < 1 << log_arity
            || !codeword.len().is_power_of_two()
        {
            return Err(BackendError::Shape(format!(
                "FRI layer of {} values, arity 2^{log_arity}",
                codeword.len()
            )));
        }
        let flat: Vec<F> = codeword.iter().flat_map(|e| e.0).collect();
        let tree =
            MerkleTree::new_salted(hash, vec![RowMajorMatrix::new(flat, 3 << log_arity)], salt);
        Ok((tree.root(), tree))
    }

    fn fold_fri_layer(
        &self,
        codeword: Vec<Ext3>,
        log_size: usize,
        log_arity: usize,
        beta: Ext3,
        roll_in: Option<Vec<Ext3>>,
    ) -> Result<Vec<Ext3>, BackendError> {
        if log_arity == 0
            || log_arity > MAX_LOG_FOLDING_ARITY
            || log_size < log_arity
            || codeword.len() != 1 << log_size
        {
            return Err(BackendError::Shape(format!(
                "FRI fold of {} values as 2^{log_size}, arity 2^{log_arity}",
                codeword.len()
            )));
        }
        let mut next = codeword;
        let mut b = beta;
        for t in 0..log_arity {
            let inv_halves = fold_inv_halves(log_size - t);
            next = next
                .par_chunks_exact(2)
                .zip(&inv_halves)
                .with_min_len(256)
                .map(|(p, &ih)| fold_pair(p[0], p[1], b, ih))
                .collect();
            b = b.square();
        }
        if let Some(r) = roll_in {
            if r.len() != next.len() {
                return Err(BackendError::Shape("FRI roll-in of another height".into()));
            }
            next.par_iter_mut().zip(&r).for_each(|(a, &v)| *a += b * v);
        }
        Ok(next)
    }

    fn final_codeword(&self, codeword: Vec<Ext3>) -> Result<Vec<Ext3>, BackendError> {
        Ok(codeword)
    }

    /// On the host cores ([`GrindInput::search`]).
    fn grind(&self, input: &GrindInput, bits: u32) -> Result<u64, BackendError> {
        Ok(input.search(bits))
    }

    /// Stored rounds open the tree's rows; a round kept as coefficients evaluates each matrix at all the
    /// distinct query points of its height at once ([`eval_columns_at`]).
    fn open_rows(
        &self,
        c: &CpuCommitted,
        indices: &[usize],
    ) -> Result<Vec<BatchOpening>, BackendError> {
        let tree = &c.tree;
        let lt = tree.log_max_height();
        if let Some(&i) = indices.iter().find(|&&i| i >> lt != 0) {
            return Err(BackendError::Shape(format!(
                "query index {i} beyond 2^{lt} rows"
            )));
        }
        let coeff_rows: Vec<BTreeMap<usize, Vec<F>>> = match c.round_lde() {
            RoundLde::Stored(_) => Vec::new(),
            RoundLde::Coeffs { coeffs, .. } => coeffs
                .par_iter()
                .zip(tree.dims())
                .map(|(m, d)| {
                    let mut rows: Vec<usize> =
                        indices.iter().map(|&q| q >> (lt - d.log_height)).collect();
                    rows.sort_unstable();
                    rows.dedup();
                    let xs: Vec<F> = rows.iter().map(|&i| coset_point(d.log_height, i)).collect();
                    rows.into_iter().zip(eval_columns_at(m, &xs)).collect()
                })
                .collect(),
        };
        let dims = tree.dims();
        Ok(indices
            .iter()
            .map(|&q| {
                let (rows, proof) = tree.open(q);
                let rows = if coeff_rows.is_empty() {
                    rows
                } else {
                    dims.iter()
                        .zip(&coeff_rows)
                        .map(|(d, map)| map[&(q >> (lt - d.log_height))].clone())
                        .collect()
                };
                BatchOpening { rows, proof }
            })
            .collect())
    }

    fn open_fri_layer(
        &self,
        layer: &MerkleTree,
        indices: &[usize],
    ) -> Result<Vec<FriLayerOpening>, BackendError> {
        let lt = layer.log_max_height();
        indices
            .iter()
            .map(|&i| {
                if i >> lt != 0 {
                    return Err(BackendError::Shape(format!(
                        "FRI query row {i} beyond 2^{lt}"
                    )));
                }
                let (rows, proof) = layer.open(i);
                let r = rows
                    .first()
                    .filter(|r| r.len() >= 6 && r.len() % 3 == 0)
                    .ok_or_else(|| {
                        BackendError::Shape("FRI layer rows are not Ext3 rows".into())
                    })?;
                Ok(FriLayerOpening {
                    values: r
                        .chunks_exact(3)
                        .map(|c| Ext3([c[0], c[1], c[2]]))
                        .collect(),
                    proof,
                })
            })
            .collect()
    }
}
