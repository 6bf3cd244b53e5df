//! Polynomial commitment opening: DEEP batching + FRI over matrices of mixed heights.
//!
//! Model: Plonky3's `TwoAdicFriPcs` (re-derived, not copied); FRI as in Ben-Sasson, Bentov, Horesh, Riabzev,
//! "Fast Reed-Solomon Interactive Oracle Proofs of Proximity" (ICALP 2018); DEEP as in Ben-Sasson, Goldberg,
//! Kopparty, Saraf, "DEEP-FRI" (ITCS 2020) and the ethSTARK documentation (StarkWare, 2021, §3-§5).
//!
//! # Committed data
//! A *round* is a [`MerkleTree`] whose matrices are bit-reversed LDEs (docs/architecture.md): a matrix of
//! height `N = 2^LH = n·B` (`B = 2^log_blowup`) holds, in each column, the evaluations of a polynomial of
//! degree `< n` on `g·H_N`, row `i` at `x_i = coset_point(LH, i) = g·ω_N^{bitrev_LH(i)}`, `g = 7`.
//!
//! # Protocol (prover [`open`], verifier [`verify`]; every step is byte-exact)
//! The caller has already observed the round roots and sampled the opening points.
//! 1. **Values.** For every round `r`, matrix `m`, point `z` (in the given order) and column `c`, the prover
//!    computes `f_c(z)` (barycentric formula on the first `n` LDE rows, which are `g·H_n` in bit-reversed
//!    order) and the transcript observes them all: `observe_ext(values[r][m][p])` in order `r, m, p`.
//! 2. **DEEP batching.** `alpha = sample_ext()`. A global counter `k` runs over `(r, m, p, c)` in that order
//!    (column innermost) starting at 0. For each LDE height `LH`, the reduced codeword is
//!    `R_LH(x_i) = Σ_{(r,m,p,c): matrix m of height 2^LH} alpha^k · (f_c(x_i) - f_c(z_p)) / (x_i - z_p)`
//!    for all rows `i` of that height (bit-reversed order, `x_i` the true coset point).
//! 3. **FRI commit phase.** Let `Lmax` be the largest LDE height and
//!    `Lf = min(log_final_poly_len + log_blowup, smallest LDE height)`. FRI treats every codeword as
//!    evaluations on the *unshifted* subgroup `H` in bit-reversed order (evaluations of `R(gX)`, same degree),
//!    so the coset shift never enters folding. Start with `cur = R_Lmax`, `log_size = Lmax`; while
//!    `log_size > Lf`:
//!    * commit the layer as a `MerkleTree` of one matrix, `2^(log_size-1)` rows x 6 columns; row `j` is
//!      `[cur[2j].c0, c1, c2, cur[2j+1].c0, c1, c2]` (the two points `±x`, `x = ω_{2^log_size}^{bitrev_{log_size-1}(j)}`);
//!    * `observe_digest(root)`, `beta = sample_ext()`;
//!    * fold: `next[j] = (e0 + e1)/2 + beta · (e0 - e1)/(2x)` with `e0 = cur[2j]`, `e1 = cur[2j+1]`;
//!    * `log_size -= 1`; if a reduced codeword of height `log_size` exists: `next[j] += beta^2 · R_log_size[j]`.
//! 4. **Final polynomial.** `cur` (length `2^Lf`, bit-reversed on `H_{2^Lf}`) is interpolated; its first
//!    `2^(Lf - log_blowup)` coefficients (natural order, `X^0` first) are sent and observed with `observe_ext`.
//! 5. **Grinding.** `nonce = grind(query_grinding_bits)` (verifier: `check_grind`).
//! 6. **Queries.** `num_queries` times `q = sample_bits(Lmax)`. For each query: every round tree opened at
//!    `q >> (Lmax - Lt)` (`Lt` its largest height), then FRI layer `l` opened at row `(q >> l) >> 1`.
//!    The verifier recomputes `R_LH(x)` at row `q >> (Lmax - LH)` from the opened rows, checks that the
//!    running value equals entry `(q >> l) & 1` of each layer's opened pair, folds, rolls in, and finally
//!    checks `final_poly(ω_{2^Lf}^{bitrev_Lf(q >> (Lmax - Lf))})` equals the last folded value.
//!
//! Only `log_folding_arity = 1` is implemented.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::field::{Ext3, Field, PrimeCharacteristicRing, PrimeField64, F};
use crate::matrix::RowMajorMatrix;
use crate::merkle::{
    verify_batch_many, Digest, MatrixDims, MerkleError, MerkleProof, MerkleTree, Opening,
};
use crate::poly::{
    bit_reverse_slice, coset_dft_ext, coset_idft_ext, coset_point, coset_shift, domain_generator,
    eval_ext_poly, reverse_bits,
};
use crate::profile::span;
use crate::transcript::Transcript;
use crate::zk::ZkRng;

/// FRI parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FriConfig {
    /// log2 of the blowup `B` (rate `ρ = 2^-log_blowup`).
    pub log_blowup: usize,
    /// Number of FRI queries.
    pub num_queries: usize,
    /// Proof-of-work bits before sampling query indices.
    pub query_grinding_bits: u32,
    /// log2 of the number of final-polynomial coefficients (before the blowup).
    pub log_final_poly_len: usize,
    /// log2 of the folding arity; only 1 is supported.
    pub log_folding_arity: usize,
}

/// log2 of the size of the extension field, `3·log2(p)`.
const EXT_FIELD_BITS: f64 = 3.0 * 63.999_999_999_664;

impl FriConfig {
    /// Conjectured security in bits (ethSTARK documentation, Conjecture 5.1 / "toy problem" regime):
    /// `num_queries · log_blowup + query_grinding_bits`, capped at `log2|Ext3| - 1` (≈ 191) for the
    /// out-of-domain and batching challenges.
    pub fn conjectured_security_bits(&self) -> f64 {
        let q = (self.num_queries * self.log_blowup) as f64 + self.query_grinding_bits as f64;
        q.min(EXT_FIELD_BITS - 1.0)
    }

    /// Provable security in bits (list-decoding / Johnson regime), an estimate following the ethSTARK
    /// documentation Theorem 1 and Ben-Sasson, Carmon, Ishai, Kopparty, Saraf, "Proximity Gaps for
    /// Reed-Solomon Codes" (FOCS 2020), Theorem 8.3, with proximity parameter `m = 16`:
    /// * query phase: each query passes with probability at most `sqrt(ρ)·(1 + 1/(2m))`, so it gives
    ///   `num_queries · -log2(sqrt(ρ)(1 + 1/2m)) + query_grinding_bits` bits;
    /// * commit phase (and batching of `num_polys` columns/points with powers of alpha):
    ///   `ε_C = num_polys · (m + 1/2)^7 · |D|^2 / (2 ρ^{3/2} |K|) + (2m + 1)(|D| + 1) · (#fold rounds) / (sqrt(ρ)|K|)`,
    ///   `|D| = 2^log_max_lde_height`, `|K| = p^3`.
    ///
    /// Returns the minimum of the two.
    pub fn provable_security_bits(&self, log_max_lde_height: usize, num_polys: usize) -> f64 {
        let m = 16.0_f64;
        let log_rho = -(self.log_blowup as f64);
        let per_query = -(0.5 * log_rho + (1.0 + 1.0 / (2.0 * m)).log2());
        let query_bits = self.num_queries as f64 * per_query + self.query_grinding_bits as f64;
        let log_d = log_max_lde_height as f64;
        let rounds = log_max_lde_height
            .saturating_sub(self.log_final_poly_len + self.log_blowup)
            .max(1) as f64;
        let t1 = (num_polys.max(1) as f64).log2() + 7.0 * (m + 0.5).log2() + 2.0 * log_d
            - 1.0
            - 1.5 * log_rho
            - EXT_FIELD_BITS;
        let t2 = (2.0 * m + 1.0).log2() + (log_d.exp2() + 1.0).log2() + rounds.log2()
            - 0.5 * log_rho
            - EXT_FIELD_BITS;
        let eps_c = t1.exp2() + t2.exp2();
        query_bits.min(-eps_c.log2())
    }
}

/// Opened values: `[round][matrix][point][column]`.
pub type OpenedValues = Vec<Vec<Vec<Vec<Ext3>>>>;

/// The opened rows of one round at one query, and their Merkle path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchOpening {
    /// One row per matrix of the round, in commit order.
    pub rows: Vec<Vec<F>>,
    pub proof: MerkleProof,
}

/// The opened pair of one FRI layer at one query: the values at `x` and `-x`, and their Merkle path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FriLayerOpening {
    pub pair: [Ext3; 2],
    pub proof: MerkleProof,
}

/// Everything revealed for one query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryProof {
    /// One per committed round, in round order.
    pub round_openings: Vec<BatchOpening>,
    /// One per FRI layer, outermost first.
    pub fri_openings: Vec<FriLayerOpening>,
}

/// A DEEP-FRI opening proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcsProof {
    /// Roots of the FRI layers, outermost first.
    pub fri_roots: Vec<Digest>,
    /// Final polynomial coefficients, `X^0` first.
    pub final_poly: Vec<Ext3>,
    /// Proof-of-work nonce.
    pub pow_nonce: u64,
    /// One per query.
    pub queries: Vec<QueryProof>,
}

/// Why an opening proof was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PcsError {
    #[error("unsupported FRI configuration: {0}")]
    Config(&'static str),
    #[error("malformed input or proof shape: {0}")]
    Shape(String),
    #[error("round {round}, query {query}: {source}")]
    Merkle {
        round: usize,
        query: usize,
        source: MerkleError,
    },
    #[error("FRI layer {layer}, query {query}: {source}")]
    FriMerkle {
        layer: usize,
        query: usize,
        source: MerkleError,
    },
    #[error("FRI layer {layer}, query {query}: opened value does not match the folded value")]
    FriFold { layer: usize, query: usize },
    #[error("query {query}: final polynomial does not match the folded value")]
    FinalPoly { query: usize },
    #[error("proof-of-work nonce is invalid")]
    Grinding,
    #[error("an opening point lies in the evaluation domain")]
    PointInDomain,
}

// ---------------------------------------------------------------------------------------------------------
// Shared helpers

/// Largest supported LDE height (Goldilocks two-adicity).
const MAX_LOG_HEIGHT: usize = 32;

/// `1/2 = (p + 1) / 2` in Goldilocks (a constant: `F::TWO.inverse()` per fold pair was ~2% of a prove).
const INV_TWO: F = F::new(0x7FFF_FFFF_8000_0001);

fn inv_two() -> F {
    INV_TWO
}

/// FRI fold of one pair: `(e0 + e1)/2 + beta·(e0 - e1)/(2x)`, `x_inv_half = 1/(2x)`.
#[inline]
fn fold_pair(e0: Ext3, e1: Ext3, beta: Ext3, x_inv_half: F) -> Ext3 {
    (e0 + e1) * inv_two() + beta * ((e0 - e1) * x_inv_half)
}

/// Montgomery batch inversion, `None` if any input is zero.
fn batch_inverse_ext(xs: &[Ext3]) -> Option<Vec<Ext3>> {
    const CHUNK: usize = 1 << 12;
    let chunks: Vec<Option<Vec<Ext3>>> = xs
        .par_chunks(CHUNK)
        .map(|c| {
            let mut prefix = Vec::with_capacity(c.len());
            let mut acc = Ext3::ONE;
            for &x in c {
                prefix.push(acc);
                acc *= x;
            }
            let mut inv = acc.try_inverse()?;
            let mut out = vec![Ext3::ZERO; c.len()];
            for i in (0..c.len()).rev() {
                out[i] = prefix[i] * inv;
                inv *= c[i];
            }
            Some(out)
        })
        .collect();
    let mut out = Vec::with_capacity(xs.len());
    for c in chunks {
        out.extend(c?);
    }
    Some(out)
}

/// `(Lmax, Lf)` for the given LDE heights (see module doc).
fn fri_shape(
    config: &FriConfig,
    log_heights: impl Iterator<Item = usize> + Clone,
) -> (usize, usize) {
    let lmax = log_heights.clone().max().unwrap_or(0);
    let lmin = log_heights.min().unwrap_or(0);
    (
        lmax,
        (config.log_final_poly_len + config.log_blowup).min(lmin),
    )
}

/// Powers `[ω_{2^log_n}^{-bitrev_{log_n - 1}(j)} / 2]` for `j < 2^(log_n-1)`: the `1/(2x)` of each fold pair.
fn fold_inv_halves(log_n: usize) -> Vec<F> {
    let half = 1usize << (log_n - 1);
    let w_inv = domain_generator(log_n).inverse();
    let mut v: Vec<F> = w_inv.powers().take(half).map(|x| x * inv_two()).collect();
    bit_reverse_slice(&mut v);
    v
}

/// The value `x` paired at fold row `j` of a layer of size `2^log_n` (unshifted subgroup).
fn fold_x(log_n: usize, j: usize) -> F {
    domain_generator(log_n).exp_u64(reverse_bits(j, log_n - 1) as u64)
}

// ---------------------------------------------------------------------------------------------------------
// Prover

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

/// How [`open_rounds`] reads the LDE values of one committed round.
#[derive(Clone, Copy, Debug)]
pub enum RoundLde<'a> {
    /// The tree's matrices are the bit-reversed LDEs, read in place.
    Stored(&'a MerkleTree),
    /// A digest-only tree ([`MerkleTree::from_coset_blocks`]) and, per matrix in commit order, the
    /// coefficients of its columns (`n x w`, row `k` the coefficient of `X^k`, `n = 2^LH / 2^log_blowup`).
    /// Every value the opening needs is recomputed from them: `f_c(z)` as `Σ_k c_k z^k`, the DEEP
    /// combination in coefficient form (one `Ext3` polynomial per height and point, then its LDE), and the
    /// opened rows at the query points. The LDE is never held; the values are the same field elements, so
    /// the proof is byte-identical to [`RoundLde::Stored`].
    Coeffs {
        tree: &'a MerkleTree,
        coeffs: &'a [RowMajorMatrix],
    },
}

impl<'a> RoundLde<'a> {
    /// The round's Merkle tree.
    pub fn tree(&self) -> &'a MerkleTree {
        match self {
            RoundLde::Stored(t) | RoundLde::Coeffs { tree: t, .. } => t,
        }
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

/// [`open_rounds`] with every round's LDE stored in its tree ([`RoundLde::Stored`]).
pub fn open(
    config: &FriConfig,
    rounds: &[(&MerkleTree, Vec<Vec<Ext3>>)],
    transcript: &mut Transcript,
    hiding: Option<&ZkRng>,
) -> (OpenedValues, PcsProof) {
    let rounds: Vec<(RoundLde, Vec<Vec<Ext3>>)> = rounds
        .iter()
        .map(|(t, p)| (RoundLde::Stored(t), p.clone()))
        .collect();
    open_rounds(config, &rounds, transcript, hiding)
}

/// Open the committed `rounds` at the given points and prove it with DEEP-FRI.
///
/// `rounds[r] = (lde, points)` with `points[m]` the opening points of matrix `m` of the round (commit
/// order). Returns `values[r][m][p][c] = f_{r,m,c}(points[m][p])` and the proof. The caller must have
/// observed the round roots (and whatever determined the points) before calling.
///
/// # Panics
/// On caller errors: `points.len()` differing from the number of matrices, a matrix shorter than the blowup,
/// `log_folding_arity != 1`, heights above 2^32, coefficient matrices not matching the tree's shapes, or an
/// opening point inside an LDE domain `g·H_N` (points must be sampled out of domain; for a random `Ext3`
/// point this has probability about `N / p^3`).
///
/// `hiding`: zk mode; every FRI layer tree is salted ([`MerkleTree::new_salted`], round
/// `zk::ROUND_FRI + layer`). The committed rounds must then be salted trees too (the caller's job), and the
/// caller must have added a random codeword to a round so that the layers' values are masked.
pub fn open_rounds(
    config: &FriConfig,
    rounds: &[(RoundLde, Vec<Vec<Ext3>>)],
    transcript: &mut Transcript,
    hiding: Option<&ZkRng>,
) -> (OpenedValues, PcsProof) {
    assert_eq!(
        config.log_folding_arity, 1,
        "only folding arity 2 is implemented"
    );
    let lb = config.log_blowup;
    let dims: Vec<Vec<MatrixDims>> = rounds.iter().map(|(r, _)| r.tree().dims()).collect();
    for ((lde, points), dims) in rounds.iter().zip(&dims) {
        assert_eq!(points.len(), dims.len(), "one point list per matrix");
        for d in dims {
            assert!(
                d.log_height >= lb && d.log_height <= MAX_LOG_HEIGHT,
                "LDE height out of range"
            );
        }
        if let RoundLde::Coeffs { coeffs, .. } = lde {
            assert_eq!(
                coeffs.len(),
                dims.len(),
                "one coefficient matrix per matrix"
            );
            for (c, d) in coeffs.iter().zip(dims) {
                assert!(
                    c.width == d.width && c.height() << lb == 1 << d.log_height,
                    "coefficient matrix shape"
                );
            }
        }
    }

    // 1. Values. Matrices are visited height by height so the barycentric weights of a (height, point)
    // are computed once and dropped before the next height.
    let mut values: OpenedValues = rounds
        .iter()
        .map(|(_, points)| points.iter().map(|p| vec![Vec::new(); p.len()]).collect())
        .collect();
    let s_values = span("opened values");
    let mut mats_by_height: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
    for (r, dims) in dims.iter().enumerate() {
        for (m, d) in dims.iter().enumerate() {
            mats_by_height.entry(d.log_height).or_default().push((r, m));
        }
    }
    for (&lh, list) in &mats_by_height {
        // Per point: barycentric weights on the stored LDE rows, or the powers `z^k` for coefficients.
        let mut cache: Vec<(Ext3, Bary)> = Vec::new();
        let mut pow_cache: Vec<(Ext3, Bary)> = Vec::new();
        for &(r, m) in list {
            let (lde, points) = &rounds[r];
            for (p, &z) in points[m].iter().enumerate() {
                type Weights = fn(usize, usize, Ext3) -> Bary;
                let (mat, cache, weights): (&RowMajorMatrix, _, Weights) = match lde {
                    RoundLde::Stored(tree) => (&tree.matrices()[m], &mut cache, bary_weights),
                    RoundLde::Coeffs { coeffs, .. } => (&coeffs[m], &mut pow_cache, |lh, lb, z| {
                        Bary::Weights(z.powers_n(1 << (lh - lb)))
                    }),
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
    drop(s_values);
    for round in &values {
        for mat in round {
            for pt in mat {
                transcript.observe_ext(pt);
            }
        }
    }

    // 2. DEEP batching into one reduced codeword per height.
    let alpha = transcript.sample_ext();
    let s_deep = span("DEEP codewords");
    // (log_height) -> list of (LDE source, points, values, alpha power base k0)
    type Item<'a> = (Source<'a>, &'a [Ext3], &'a [Vec<Ext3>], u64);
    #[derive(Clone, Copy)]
    enum Source<'a> {
        Lde(&'a RowMajorMatrix),
        Coeffs(&'a RowMajorMatrix),
    }
    let mut by_height: BTreeMap<usize, Vec<Item>> = BTreeMap::new();
    let mut k = 0u64;
    for (((lde, points), round_vals), dims) in rounds.iter().zip(&values).zip(&dims) {
        for (m, ((pts, vals), d)) in points.iter().zip(round_vals).zip(dims).enumerate() {
            let src = match lde {
                RoundLde::Stored(tree) => Source::Lde(&tree.matrices()[m]),
                RoundLde::Coeffs { coeffs, .. } => Source::Coeffs(&coeffs[m]),
            };
            by_height
                .entry(d.log_height)
                .or_default()
                .push((src, pts, vals, k));
            k += (pts.len() * d.width) as u64;
        }
    }
    // The reduced codeword of a height is computed in coefficient form (the values are the same field
    // elements as the formula above, so the proof does not depend on how): per matrix the combined polynomial
    // `M = Σ_c alpha^{k0+c} f_c` (from the coefficients, or from the first `n` stored LDE rows, which are
    // `g·H_n`, by one coset IDFT), per point `z` the sum `G_z = Σ scale·M` and `G_z(z)` from the opened values,
    // then `Σ_z (G_z(X) - G_z(z)) / (X - z)` by synthetic division (exact: the opened values are the true
    // evaluations) and one LDE of the result. That is `n·w` multiply-adds per matrix instead of `nB·w`, and no
    // inversion of `x_i - z` over the LDE domain.
    let mut reduced: BTreeMap<usize, Vec<Ext3>> = BTreeMap::new();
    for (&lh, items) in &by_height {
        let n_lde = 1usize << lh;
        let n = n_lde >> lb;
        // Per point `z`: `G_z` (n coefficients) and `G_z(z)`.
        let mut sums: Vec<(Ext3, Vec<Ext3>, Ext3)> = Vec::new();
        for &(src, pts, vals, k0) in items {
            let mat = match src {
                Source::Lde(m) | Source::Coeffs(m) => m,
            };
            let w = mat.width;
            let base = alpha.pow(k0);
            let apow: Vec<Ext3> = alpha.powers_n(w).into_iter().map(|a| a * base).collect();
            let combine = |rows: usize| -> Vec<Ext3> {
                (0..rows)
                    .into_par_iter()
                    .with_min_len(256)
                    .map(|i| {
                        mat.row(i)
                            .iter()
                            .zip(&apow)
                            .fold(Ext3::ZERO, |s, (&v, &a)| s + a * v)
                    })
                    .collect()
            };
            let coeffs: Vec<Ext3> = match src {
                Source::Coeffs(_) => combine(n),
                Source::Lde(_) => {
                    let mut v = combine(n);
                    bit_reverse_slice(&mut v);
                    coset_idft_ext(&v, coset_shift())
                }
            };
            let alpha_w = alpha.pow(w as u64);
            let mut scale = Ext3::ONE;
            for (&z, zv) in pts.iter().zip(vals) {
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
            assert!(!xs_contain(lh, z), "opening point lies in the LDE domain");
            // (G(X) - G(z)) / (X - z): q_{k-1} = g_k + z q_k, from the top; remainder g_0 - G(z) + z q_0 = 0.
            let mut q = Ext3::ZERO;
            for k in (1..n).rev() {
                q = g[k] + z * q;
                total[k - 1] += q;
            }
            assert!(
                (g[0] - gz + z * q).is_zero(),
                "DEEP numerator does not vanish at the opening point (opened values inconsistent)"
            );
        }
        total.resize(n_lde, Ext3::ZERO);
        let mut evals = coset_dft_ext(&total, coset_shift());
        bit_reverse_slice(&mut evals);
        reduced.insert(lh, evals);
    }

    drop(s_deep);

    // 3. FRI commit phase.
    let s_fri = span("FRI layers");
    let (lmax, lf) = fri_shape(config, by_height.keys().copied());
    let mut cur = reduced.remove(&lmax).expect("largest height present");
    let mut layers: Vec<MerkleTree> = Vec::new();
    let mut log_size = lmax;
    while log_size > lf {
        let flat: Vec<F> = cur.iter().flat_map(|e| e.0).collect();
        let round = crate::zk::ROUND_FRI + layers.len() as u32;
        let tree = MerkleTree::new_salted(
            vec![RowMajorMatrix::new(flat, 6)],
            hiding.map(|r| (r, round)),
        );
        transcript.observe_digest(&tree.root());
        let beta = transcript.sample_ext();
        let inv_halves = fold_inv_halves(log_size);
        let mut next: Vec<Ext3> = cur
            .par_chunks_exact(2)
            .zip(&inv_halves)
            .with_min_len(256)
            .map(|(p, &ih)| fold_pair(p[0], p[1], beta, ih))
            .collect();
        log_size -= 1;
        if let Some(r) = reduced.remove(&log_size) {
            let b2 = beta.square();
            next.par_iter_mut().zip(&r).for_each(|(a, &v)| *a += b2 * v);
        }
        layers.push(tree);
        cur = next;
    }

    drop(s_fri);

    // 4. Final polynomial.
    bit_reverse_slice(&mut cur);
    let mut final_poly = coset_idft_ext(&cur, F::ONE);
    final_poly.truncate(1 << (lf - config.log_blowup));
    transcript.observe_ext(&final_poly);

    // 5. Grinding, 6. queries.
    let pow_nonce = transcript.grind(config.query_grinding_bits);
    let query_indices: Vec<usize> = (0..config.num_queries)
        .map(|_| transcript.sample_bits(lmax))
        .collect();
    // Rounds kept as coefficients: the opened rows, evaluated at all query points of a matrix at once.
    let s_rows = span("query rows");
    let coeff_rows: Vec<Vec<BTreeMap<usize, Vec<F>>>> = rounds
        .iter()
        .zip(&dims)
        .map(|((lde, _), dims)| match lde {
            RoundLde::Stored(_) => Vec::new(),
            RoundLde::Coeffs { coeffs, .. } => coeffs
                .par_iter()
                .zip(dims)
                .map(|(c, d)| {
                    let mut rows: Vec<usize> = query_indices
                        .iter()
                        .map(|&q| q >> (lmax - d.log_height))
                        .collect();
                    rows.sort_unstable();
                    rows.dedup();
                    let xs: Vec<F> = rows.iter().map(|&i| coset_point(d.log_height, i)).collect();
                    rows.into_iter().zip(eval_columns_at(c, &xs)).collect()
                })
                .collect(),
        })
        .collect();
    drop(s_rows);
    let queries = query_indices
        .iter()
        .map(|&q| {
            let round_openings = rounds
                .iter()
                .zip(&dims)
                .zip(&coeff_rows)
                .map(|(((lde, _), dims), crow)| {
                    let tree = lde.tree();
                    let (rows, proof) = tree.open(q >> (lmax - tree.log_max_height()));
                    let rows = match lde {
                        RoundLde::Stored(_) => rows,
                        RoundLde::Coeffs { .. } => dims
                            .iter()
                            .zip(crow)
                            .map(|(d, map)| map[&(q >> (lmax - d.log_height))].clone())
                            .collect(),
                    };
                    BatchOpening { rows, proof }
                })
                .collect();
            let fri_openings = layers
                .iter()
                .enumerate()
                .map(|(l, tree)| {
                    let (rows, proof) = tree.open((q >> l) >> 1);
                    let r = &rows[0];
                    FriLayerOpening {
                        pair: [Ext3([r[0], r[1], r[2]]), Ext3([r[3], r[4], r[5]])],
                        proof,
                    }
                })
                .collect();
            QueryProof {
                round_openings,
                fri_openings,
            }
        })
        .collect();

    (
        values,
        PcsProof {
            fri_roots: layers.iter().map(|t| t.root()).collect(),
            final_poly,
            pow_nonce,
            queries,
        },
    )
}

// ---------------------------------------------------------------------------------------------------------
// Verifier

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inv_two_is_the_inverse_of_two() {
        assert_eq!(INV_TWO * F::TWO, F::ONE);
        assert_eq!(INV_TWO, F::TWO.inverse());
    }
}
