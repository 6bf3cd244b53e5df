//! Preprocessed (fixed) columns: traces that prover and verifier both know before the proof, e.g. a lookup
//! table of all byte pairs or the decoded program.
//!
//! # Protocol (docs/stark.md, "Preprocessed columns")
//! Preprocessed columns are **not committed** and not opened by the PCS. The verifier holds the traces (it
//! rebuilds them from data it trusts: the program and constants of the code) and evaluates their polynomials
//! itself at the two out-of-domain points of the table, `zeta` and `zeta·ω_n` ([`evaluate_at_ood`]), by the
//! barycentric formula on `H_n`. This replaces a Merkle commitment and its DEEP/FRI openings: exact values
//! instead of values bound through FRI, at `O(n · width)` field operations per table for the verifier (about
//! 1 ms for a 2^16 x 6 table) instead of an LDE and a Merkle tree over `nB` rows.
//!
//! Fiat-Shamir binding: the transcript absorbs every table's preprocessed width and height
//! ([`crate::statement::start_transcript`]) but not the preprocessed values. The caller must make the
//! preprocessed traces a function of the statement bytes and of the AIRs (the machine derives them from the
//! program, whose commitment is in the statement, and from constants of its code).

use rayon::prelude::*;

use crate::air::Air;
use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::logup::{MAX_LOG_HEIGHT, MIN_LOG_HEIGHT};
use crate::matrix::RowMajorMatrix;
use crate::poly::domain_generator;
use crate::prover::ProveError;

/// Preprocessed traces of all tables, checked against the AIRs by [`preprocess`]. Shared by prover and
/// verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreprocessedData {
    /// `traces[t]`: `n_t x preprocessed_width_t` (natural row order), `None` iff that width is 0.
    pub traces: Vec<Option<RowMajorMatrix>>,
    /// Per table: `Some(log2 n_t)` iff it has preprocessed columns.
    pub log_heights: Vec<Option<usize>>,
}

/// Checks the preprocessed traces against the AIRs (`traces[t]` is `Some` iff table `t` has preprocessed
/// columns; widths match; heights are powers of two in `[2^MIN_LOG_HEIGHT, 2^MAX_LOG_HEIGHT]`).
pub fn preprocess(
    airs: &[&dyn Air],
    traces: Vec<Option<RowMajorMatrix>>,
) -> Result<PreprocessedData, ProveError> {
    if traces.len() != airs.len() {
        return Err(ProveError::Shape(format!(
            "{} preprocessed entries for {} tables",
            traces.len(),
            airs.len()
        )));
    }
    let mut log_heights = Vec::with_capacity(airs.len());
    for (air, tr) in airs.iter().zip(&traces) {
        match (air.preprocessed_width(), tr) {
            (0, None) => log_heights.push(None),
            (w, Some(m)) if w > 0 && m.width == w => {
                let lh = m.log_height().ok_or_else(|| {
                    ProveError::Shape(format!(
                        "table `{}`: preprocessed height {} is not a power of two",
                        air.name(),
                        m.height()
                    ))
                })?;
                if !(MIN_LOG_HEIGHT..=MAX_LOG_HEIGHT).contains(&lh) {
                    return Err(ProveError::HeightOutOfRange {
                        table: air.name().into(),
                        log_height: lh,
                        max: MAX_LOG_HEIGHT,
                    });
                }
                log_heights.push(Some(lh));
            }
            _ => {
                return Err(ProveError::Shape(format!(
                    "table `{}`: preprocessed trace does not match preprocessed width {}",
                    air.name(),
                    air.preprocessed_width()
                )))
            }
        }
    }
    Ok(PreprocessedData {
        traces,
        log_heights,
    })
}

/// Rows per rayon task in [`evaluate_at_ood`].
const CHUNK: usize = 1 << 11;

/// Values of every column of `trace` (`n x w`, natural order, `n = 2^log_n >= 1`, row `i` at `ω_n^i`) at
/// `z` and at `z·ω_n`: `[f_c(z) for c < w]`, `[f_c(z ω_n) for c < w]`. `None` if `z` or `z·ω_n` lies in
/// `H_n` (never for `z` outside the base field, as the out-of-domain point is).
///
/// Barycentric formula on `H_n`: `f(z) = (z^n - 1)/n · Σ_i f_i · ω^i / (z - ω^i)`. The weights
/// `w_i = ω^i / (z - ω^i)` for `z·ω` are the weights for `z` rotated by one row
/// (`ω^i / (zω - ω^i) = ω^(i-1) / (z - ω^(i-1))`), so one batch inversion serves both points.
pub fn evaluate_at_ood(trace: &RowMajorMatrix, z: Ext3) -> Option<[Vec<Ext3>; 2]> {
    let n = trace.height();
    let w = trace.width;
    if n == 0 || !n.is_power_of_two() {
        return None;
    }
    let log_n = n.trailing_zeros() as usize;
    let omega = domain_generator(log_n);
    // Per chunk of rows: ω^i for its first row, then the weights by Montgomery batch inversion.
    let n_chunks = n.div_ceil(CHUNK);
    let weights: Vec<Option<Vec<Ext3>>> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let len = CHUNK.min(n - start);
            let mut x = omega.exp_u64(start as u64);
            let mut xs = Vec::with_capacity(len);
            let mut prefix = Vec::with_capacity(len);
            let mut acc = Ext3::ONE;
            for _ in 0..len {
                let d = z - x;
                prefix.push(acc);
                acc *= d;
                xs.push((x, d));
                x *= omega;
            }
            let mut inv = acc.try_inverse()?;
            let mut out = vec![Ext3::ZERO; len];
            for i in (0..len).rev() {
                let (x, d) = xs[i];
                out[i] = prefix[i] * inv * x;
                inv *= d;
            }
            Some(out)
        })
        .collect();
    let mut wts = Vec::with_capacity(n);
    for c in weights {
        wts.extend(c?);
    }
    // at z: Σ_i w_i f_i; at zω: Σ_i w_{i-1} f_i (indices mod n).
    let sums = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let mut a = vec![Ext3::ZERO; w];
            let mut b = vec![Ext3::ZERO; w];
            for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                let row = trace.row(i);
                let wi = wts[i];
                let wp = wts[(i + n - 1) % n];
                for ((a, b), &v) in a.iter_mut().zip(b.iter_mut()).zip(row) {
                    *a += wi * v;
                    *b += wp * v;
                }
            }
            (a, b)
        })
        .reduce(
            || (vec![Ext3::ZERO; w], vec![Ext3::ZERO; w]),
            |(mut a, mut b), (a2, b2)| {
                for (x, y) in a.iter_mut().zip(a2) {
                    *x += y;
                }
                for (x, y) in b.iter_mut().zip(b2) {
                    *x += y;
                }
                (a, b)
            },
        );
    let n_inv = F::from_u64(n as u64).inverse();
    let zn = z.pow(n as u64);
    // (zω)^n = z^n.
    let scale = (zn - F::ONE) * n_inv;
    let (a, b) = sums;
    Some([
        a.into_iter().map(|v| v * scale).collect(),
        b.into_iter().map(|v| v * scale).collect(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::eval_poly_ext;
    use crate::poly::idft_batch;

    /// xorshift64 (13, 7, 17).
    fn next(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    #[test]
    fn barycentric_matches_the_interpolant() {
        let seed = 0x9e37_79b9_7f4a_7c15u64;
        println!("seed {seed:#x}");
        let mut s = seed;
        for log_n in [0usize, 1, 3, 7, 12] {
            let n = 1 << log_n;
            let w = 3;
            let trace = RowMajorMatrix::from_fn(n, w, |_, _| F::from_u64(next(&mut s)));
            let z = Ext3([
                F::from_u64(next(&mut s)),
                F::from_u64(next(&mut s)),
                F::from_u64(next(&mut s)),
            ]);
            let [at_z, at_zw] = evaluate_at_ood(&trace, z).expect("z outside H");
            let coeffs = idft_batch(trace.clone());
            let zw = z * domain_generator(log_n);
            for c in 0..w {
                let col: Vec<F> = (0..n).map(|r| coeffs.values[r * w + c]).collect();
                assert_eq!(
                    at_z[c],
                    eval_poly_ext(&col, z),
                    "log_n {log_n} col {c} at z"
                );
                assert_eq!(
                    at_zw[c],
                    eval_poly_ext(&col, zw),
                    "log_n {log_n} col {c} at zw"
                );
            }
        }
    }

    #[test]
    fn a_point_of_the_domain_is_refused() {
        let trace = RowMajorMatrix::from_fn(8, 2, |r, c| F::from_u64((r * 2 + c) as u64));
        let z = Ext3::from_base(domain_generator(3).exp_u64(5));
        assert!(evaluate_at_ood(&trace, z).is_none());
    }
}
