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
//! [`open`] drives the transcript and calls the backend's [`crate::backend::OpeningOps`] for the heavy steps
//! (values, DEEP codewords, FRI folds and layer commits, openings), so every backend follows this order.
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
//!    so the coset shift never enters folding. The layers are fixed by the heights alone ([`fri_layers`]):
//!    from `s = Lmax`, each layer folds by `2^a`, `a = min(log_folding_arity, s - next)` with `next` the
//!    largest height below `s` that holds a reduced codeword, else `Lf` (so every reduced codeword is rolled
//!    in at a layer boundary; Plonky3's `max_log_arity` does the same). Start with `cur = R_Lmax`; per layer:
//!    * commit the layer as a `MerkleTree` of one matrix, `2^(s-a)` rows x `3·2^a` columns; row `j` is
//!      `cur[j·2^a .. (j+1)·2^a]` (the `Ext3` coefficients `c0, c1, c2` of each), the values on the coset
//!      `x_j·H_{2^a}` in bit-reversed order, `x_j = ω_{2^s}^{bitrev_{s-a}(j)}`;
//!    * `observe_digest(root)`, `beta = sample_ext()`;
//!    * fold: `a` binary folds with `beta, beta^2, .., beta^(2^(a-1))`, the binary fold of a codeword of
//!      `2^t` values being `next[j] = (e0 + e1)/2 + b · (e0 - e1)/(2x)` with `e0 = cur[2j]`, `e1 = cur[2j+1]`,
//!      `x = ω_{2^t}^{bitrev_{t-1}(j)}`. This is the arity-`2^a` fold: writing `f(X) = Σ_{i<2^a} X^i f_i(X^(2^a))`,
//!      the result is `Σ_i beta^i f_i` on `H_{2^(s-a)}` (row `j` at `x_j^(2^a)`);
//!    * `s -= a`; if a reduced codeword of height `s` exists: `next[j] += beta^(2^a) · R_s[j]`.
//! 4. **Final polynomial.** `cur` (length `2^Lf`, bit-reversed on `H_{2^Lf}`) is interpolated; its first
//!    `2^(Lf - log_blowup)` coefficients (natural order, `X^0` first) are sent and observed with `observe_ext`.
//! 5. **Grinding.** `nonce = grind(query_grinding_bits)` (verifier: `check_grind`).
//! 6. **Queries.** `num_queries` times `q = sample_bits(Lmax)`. Every round tree is opened at the leaves
//!    `q >> (Lmax - Lt)` (`Lt` its largest height), the FRI layer of size `2^s` and arity `2^a` at row
//!    `(q >> (Lmax - s)) >> a`, all queries of a tree at once ([`TreeOpenings`]: each row, salt row and
//!    Merkle node sent once). The verifier recomputes `R_LH(x)` at row `q >> (Lmax - LH)` from the opened
//!    rows, checks that the running value equals entry `(q >> (Lmax - s)) mod 2^a` of each layer's opened
//!    row, folds the row ([`fold_row`]), rolls in, and finally checks
//!    `final_poly(ω_{2^Lf}^{bitrev_Lf(q >> (Lmax - Lf))})` equals the last folded value.
//!
//! `log_folding_arity` is 1, 2 or 3 (arity 2, 4, 8; [`MAX_LOG_FOLDING_ARITY`]).

use rayon::prelude::*;

use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::matrix::RowMajorMatrix;
use crate::merkle::{Digest, MerkleError, MerkleProof, MerkleTree, TreeOpenings};
use crate::poly::{bit_reverse_slice, domain_generator, reverse_bits};

mod open;
mod verify;

pub use open::open;
pub use verify::{verify, VerifierRound};

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
    /// log2 of the largest FRI folding arity: 1, 2 or 3 (arity 2, 4, 8; [`MAX_LOG_FOLDING_ARITY`]). A layer
    /// folds by less where a reduced codeword of a lower height must be rolled in ([`fri_layers`]).
    pub log_folding_arity: usize,
}

/// Most FRI queries a configuration may ask for (the proof file stores the count as a `u16`).
pub const MAX_NUM_QUERIES: usize = u16::MAX as usize;

impl FriConfig {
    /// Refuses parameters the PCS cannot run with: no query ([`PcsError::NoQueries`], a proof that would
    /// check no opening), more than [`MAX_NUM_QUERIES`] queries, a folding arity outside 2..=8, more than
    /// 64 grinding bits, a blowup or final polynomial above `2^MAX_LOG_HEIGHT`. Says nothing of the
    /// soundness of valid parameters ([`crate::security`] does). Checked first by [`verify`] and by
    /// [`crate::verify`], before anything derived from the parameters is computed.
    pub fn check(&self) -> Result<(), PcsError> {
        if self.num_queries == 0 {
            return Err(PcsError::NoQueries);
        }
        if self.num_queries > MAX_NUM_QUERIES {
            return Err(PcsError::Config("num_queries above MAX_NUM_QUERIES"));
        }
        if !(1..=MAX_LOG_FOLDING_ARITY).contains(&self.log_folding_arity) {
            return Err(PcsError::Config("log_folding_arity must be 1, 2 or 3"));
        }
        if self.query_grinding_bits > 64 {
            return Err(PcsError::Config("query_grinding_bits > 64"));
        }
        if self.log_blowup > MAX_LOG_HEIGHT {
            return Err(PcsError::Config("log_blowup too large"));
        }
        if self.log_final_poly_len > MAX_LOG_HEIGHT {
            return Err(PcsError::Config("log_final_poly_len too large"));
        }
        Ok(())
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

/// The opened row of one FRI layer of arity `2^a` at one query: its `2^a` values (the coset `x_j·H_{2^a}`,
/// bit-reversed), and their Merkle path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FriLayerOpening {
    pub values: Vec<Ext3>,
    pub proof: MerkleProof,
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
    /// The openings of every committed round at all queries (round order), each row and Merkle node sent
    /// once: round `r` is opened at leaves `q >> (Lmax - Lt_r)`.
    pub round_openings: Vec<TreeOpenings>,
    /// The openings of every FRI layer at all queries (outermost first): the layer of size `2^s` and arity
    /// `2^a` ([`fri_layers`]; one `2^(s-a) x 3·2^a` matrix, row `j` the values on the coset `x_j·H_{2^a}`) at
    /// rows `(q >> (Lmax - s)) >> a`.
    pub fri_openings: Vec<TreeOpenings>,
}

/// Why an opening proof was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PcsError {
    #[error("unsupported FRI configuration: {0}")]
    Config(&'static str),
    /// `num_queries == 0`: the verifier would check no opening (a prover's choice of parameters, refused
    /// whatever the minimum security level).
    #[error("the FRI configuration has no query (num_queries = 0): no opening would be checked")]
    NoQueries,
    #[error("malformed input or proof shape: {0}")]
    Shape(String),
    #[error("round {round}: {source}")]
    Merkle { round: usize, source: MerkleError },
    #[error("FRI layer {layer}: {source}")]
    FriMerkle { layer: usize, source: MerkleError },
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
pub(crate) const MAX_LOG_HEIGHT: usize = 32;

/// `1/2 = (p + 1) / 2` in Goldilocks (a constant: `F::TWO.inverse()` per fold pair was ~2% of a prove).
const INV_TWO: F = F::new(0x7FFF_FFFF_8000_0001);

pub(crate) fn inv_two() -> F {
    INV_TWO
}

/// FRI fold of one pair: `(e0 + e1)/2 + beta·(e0 - e1)/(2x)`, `x_inv_half = 1/(2x)`.
#[inline]
pub(crate) fn fold_pair(e0: Ext3, e1: Ext3, beta: Ext3, x_inv_half: F) -> Ext3 {
    (e0 + e1) * inv_two() + beta * ((e0 - e1) * x_inv_half)
}

/// Montgomery batch inversion, `None` if any input is zero.
pub(crate) fn batch_inverse_ext(xs: &[Ext3]) -> Option<Vec<Ext3>> {
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

/// Largest supported `log_folding_arity` (arity 8).
pub const MAX_LOG_FOLDING_ARITY: usize = 3;

/// One committed FRI layer: it commits a codeword of `2^log_size` values as `2^(log_size - log_arity)` rows of
/// `2^log_arity` values and folds it by `2^log_arity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FriLayerShape {
    pub log_size: usize,
    pub log_arity: usize,
}

impl FriLayerShape {
    /// The layer matrix: `3·2^a` columns (`2^a` `Ext3` values), `2^(s-a)` rows.
    pub fn dims(&self) -> crate::merkle::MatrixDims {
        crate::merkle::MatrixDims {
            width: 3 << self.log_arity,
            log_height: self.log_size - self.log_arity,
        }
    }
}

/// The FRI shape of a proof whose reduced codewords have the LDE heights `log_heights` (module doc, step 3):
/// `(Lmax, Lf, layers)`, layers outermost first. Each layer folds by `2^a`, `a = min(log_folding_arity,
/// s - next)` with `next` the largest height below `s` among `log_heights`, else `Lf`; so every reduced
/// codeword of a height below `Lmax` is rolled in right after the layer that ends at its height. Empty
/// heights give `(0, 0, [])`; `log_folding_arity` must be at least 1 (the callers check it).
pub fn fri_layers(
    config: &FriConfig,
    log_heights: impl Iterator<Item = usize> + Clone,
) -> (usize, usize, Vec<FriLayerShape>) {
    let lmax = log_heights.clone().max().unwrap_or(0);
    let lmin = log_heights.clone().min().unwrap_or(0);
    let lf = (config.log_final_poly_len + config.log_blowup).min(lmin);
    let max_a = config.log_folding_arity.max(1);
    let mut layers = Vec::new();
    let mut s = lmax;
    while s > lf {
        let next = log_heights
            .clone()
            .filter(|&h| h < s)
            .max()
            .unwrap_or(lf)
            .max(lf);
        let log_arity = max_a.min(s - next);
        layers.push(FriLayerShape {
            log_size: s,
            log_arity,
        });
        s -= log_arity;
    }
    (lmax, lf, layers)
}

/// Powers `[ω_{2^log_n}^{-bitrev_{log_n - 1}(j)} / 2]` for `j < 2^(log_n-1)`: the `1/(2x)` of each fold pair.
pub(crate) fn fold_inv_halves(log_n: usize) -> Vec<F> {
    let half = 1usize << (log_n - 1);
    let w_inv = domain_generator(log_n).inverse();
    let mut v: Vec<F> = w_inv.powers().take(half).map(|x| x * inv_two()).collect();
    bit_reverse_slice(&mut v);
    v
}

/// `x_j = ω_{2^log_size}^{bitrev_{log_size - log_arity}(j)}`: row `j` of a layer of size `2^log_size` and
/// arity `2^log_arity` holds the values on the coset `x_j·H_{2^log_arity}` (unshifted subgroup).
pub(crate) fn layer_row_x(log_size: usize, log_arity: usize, j: usize) -> F {
    domain_generator(log_size).exp_u64(reverse_bits(j, log_size - log_arity) as u64)
}

/// The arity-`2^a` fold of one layer row (`values.len() = 2^a`, the coset `x_j·H_{2^a}` in bit-reversed
/// order, `a >= 1`) by `beta`: the `a` binary folds of the module doc with `beta, beta^2, ..`, i.e.
/// `Σ_i beta^i f_i(x_j^(2^a))`. One inversion: at binary step `t`, pair `m`'s point is
/// `x_j^(2^t) · ω_{2^(a-t)}^{bitrev_{a-1-t}(m)}`. `None` if `values` is not a power of two above 1.
pub fn fold_row(values: &[Ext3], log_size: usize, j: usize, beta: Ext3) -> Option<Ext3> {
    let n = values.len();
    if n < 2 || !n.is_power_of_two() {
        return None;
    }
    let a = n.trailing_zeros() as usize;
    if a > log_size {
        return None;
    }
    let mut inv_x = layer_row_x(log_size, a, j).inverse();
    let mut cur: Vec<Ext3> = values.to_vec();
    let mut b = beta;
    for t in 0..a {
        let w_inv = domain_generator(a - t).inverse();
        let half = cur.len() / 2;
        let next: Vec<Ext3> = (0..half)
            .map(|m| {
                let ih = inv_x * w_inv.exp_u64(reverse_bits(m, a - 1 - t) as u64) * inv_two();
                fold_pair(cur[2 * m], cur[2 * m + 1], b, ih)
            })
            .collect();
        cur = next;
        inv_x = inv_x.square();
        b = b.square();
    }
    cur.first().copied()
}

/// How the CPU backend ([`crate::backend::CpuBackend`]) reads the LDE values of one committed round.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inv_two_is_the_inverse_of_two() {
        assert_eq!(INV_TWO * F::TWO, F::ONE);
        assert_eq!(INV_TWO, F::TWO.inverse());
    }
}
