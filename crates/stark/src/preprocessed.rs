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
use crate::field::{Ext3, Field, PrimeCharacteristicRing, PrimeField64, F};
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
                        min: MIN_LOG_HEIGHT,
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

/// `Σ_i a_i b_i` over `F` with one reduction at the end: 128-bit products of canonical values summed in a
/// `u128`, wrap-arounds counted.
#[derive(Clone, Copy, Default)]
struct DotAcc {
    lo: u128,
    carries: u64,
}

impl DotAcc {
    #[inline(always)]
    fn add(&mut self, a: u64, b: u64) {
        let (s, o) = self.lo.overflowing_add(a as u128 * b as u128);
        self.lo = s;
        self.carries += o as u64;
    }

    fn merge(&mut self, o: &DotAcc) {
        let (s, c) = self.lo.overflowing_add(o.lo);
        self.lo = s;
        self.carries += o.carries + c as u64;
    }

    /// `carries·2^128 + hi·2^64 + lo mod p`.
    fn reduce(&self) -> F {
        let r64 = F::new(u32::MAX as u64); // 2^64 mod p
        let r128 = r64 * r64;
        F::new(self.lo as u64) + F::new((self.lo >> 64) as u64) * r64 + F::new(self.carries) * r128
    }
}

/// The conjugates `σ(z)`, `σ²(z)` of `z` under the Frobenius `a -> a^p`: for `X^3 = W`, `σ(X) = ε X` with
/// `ε = W^((p-1)/3)` a primitive cube root of unity.
fn conjugates(z: Ext3) -> (Ext3, Ext3) {
    let eps = F::new(crate::field::EXT_W).exp_u64((crate::field::P - 1) / 3);
    let eps2 = eps * eps;
    let [c0, c1, c2] = z.0;
    (
        Ext3([c0, c1 * eps, c2 * eps2]),
        Ext3([c0, c1 * eps2, c2 * eps]),
    )
}

/// Values of every column of `trace` (`n x w`, natural order, `n = 2^log_n >= 1`, row `i` at `ω_n^i`) at
/// `z` and at `z·ω_n`: `[f_c(z) for c < w]`, `[f_c(z ω_n) for c < w]`. `None` if `z` lies in `H_n` (then
/// so does `z·ω_n`; never for `z` outside the base field, as the out-of-domain point is).
///
/// Barycentric formula on `H_n`: `f(z) = (z^n - 1)/n · Σ_i f_i · ω^i / (z - ω^i)`, computed in the base
/// field: with `z1 = σ(z)`, `z2 = σ²(z)` the conjugates of `z` and `x = ω^i`,
/// `1 / (z - x) = (z1 - x)(z2 - x) / N(x)` where `N(x) = (z - x)(z1 - x)(z2 - x) ∈ F` (a cubic in `x` with
/// base coefficients), so `Σ_i f_i ω^i / (z - ω^i) = A_2 - (z1 + z2) A_1 + z1 z2 A_0` with the base-field
/// sums `A_k = Σ_i f_i u_i ω^(k i)`, `u_i = ω^i / N(ω^i)`: one base batch inversion and `3 w` base dot
/// products. For `z·ω` the weights are those of `z` rotated by one row
/// (`ω^i / (zω - ω^i) = ω^(i-1) / (z - ω^(i-1))`): `3 w` more dot products against the rotated vectors.
pub fn evaluate_at_ood(trace: &RowMajorMatrix, z: Ext3) -> Option<[Vec<Ext3>; 2]> {
    let n = trace.height();
    let w = trace.width;
    if n == 0 || !n.is_power_of_two() {
        return None;
    }
    let log_n = n.trailing_zeros() as usize;
    let omega = domain_generator(log_n);
    let (z1, z2) = conjugates(z);
    let sym = |e: Ext3| e.as_base();
    let t = sym(z + z1 + z2)?;
    let s = sym(z * z1 + z * z2 + z1 * z2)?;
    let nz = sym(z * z1 * z2)?;
    // Per chunk of rows `start..start + len`: the weight vectors `v[k][j] = u_i ω^(k i)` for
    // `i = start - 1 + j` (mod n), `j <= len`, with `u_i = ω^i / N(ω^i)`, `N(x) = nz - s x + t x^2 - x^3`
    // (canonical u64s; entry 0 is the previous row, for the rotated sums), then the chunk's dot products:
    // `acc[c][k] += f_i v_k[i]`, `acc[c][3 + k] += f_i v_k[i - 1]`.
    let n_chunks = n.div_ceil(CHUNK);
    let sums: Option<Vec<[DotAcc; 6]>> = (0..n_chunks)
        .into_par_iter()
        .map(|ch| {
            let start = ch * CHUNK;
            let len = CHUNK.min(n - start);
            let mut x = omega.exp_u64(((start + n - 1) & (n - 1)) as u64);
            let mut xs = Vec::with_capacity(len + 1);
            let mut prefix = Vec::with_capacity(len + 1);
            let mut acc = F::ONE;
            for _ in 0..=len {
                let norm = nz - x * (s - x * (t - x));
                prefix.push(acc);
                acc *= norm;
                xs.push((x, norm));
                x *= omega;
            }
            let mut inv = acc.try_inverse()?;
            let mut v = vec![[0u64; 3]; len + 1];
            for j in (0..=len).rev() {
                let (x, norm) = xs[j];
                let u = prefix[j] * inv * x;
                inv *= norm;
                let ux = u * x;
                v[j] = [
                    u.as_canonical_u64(),
                    ux.as_canonical_u64(),
                    (ux * x).as_canonical_u64(),
                ];
            }
            let mut acc = vec![[DotAcc::default(); 6]; w];
            for j in 0..len {
                let (cur, prev) = (v[j + 1], v[j]);
                let vi = [cur[0], cur[1], cur[2], prev[0], prev[1], prev[2]];
                for (a, f) in acc.iter_mut().zip(trace.row(start + j)) {
                    let f = f.as_canonical_u64();
                    for k in 0..6 {
                        a[k].add(f, vi[k]);
                    }
                }
            }
            Some(acc)
        })
        .try_reduce(
            || vec![[DotAcc::default(); 6]; w],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(&b) {
                    for k in 0..6 {
                        x[k].merge(&y[k]);
                    }
                }
                Some(a)
            },
        );
    let sums = sums?;
    let scale = (z.pow(n as u64) - F::ONE) * F::from_u64(n as u64).inverse(); // (zω)^n = z^n
    let c1 = -(z1 + z2);
    let c0 = z1 * z2;
    let combine = |a: &[DotAcc]| -> Ext3 {
        (Ext3::from_base(a[2].reduce()) + c1 * a[1].reduce() + c0 * a[0].reduce()) * scale
    };
    Some([
        sums.iter().map(|a| combine(&a[..3])).collect(),
        sums.iter().map(|a| combine(&a[3..])).collect(),
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
            check_against_interpolant(&trace, z);
            // A base-field point outside H_n (its conjugates are itself).
            check_against_interpolant(&trace, Ext3::from_base(F::from_u64(12345)));
        }
        // All values p - 1 (largest products in the delayed reduction), 2^16 rows.
        let trace = RowMajorMatrix::from_fn(1 << 16, 2, |_, _| F::NEG_ONE);
        check_against_interpolant(&trace, Ext3::from_u64s([3, 5, 7]));
    }

    fn check_against_interpolant(trace: &RowMajorMatrix, z: Ext3) {
        let (n, w) = (trace.height(), trace.width);
        let log_n = n.trailing_zeros() as usize;
        let [at_z, at_zw] = evaluate_at_ood(trace, z).expect("z outside H");
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

    #[test]
    fn a_point_of_the_domain_is_refused() {
        let trace = RowMajorMatrix::from_fn(8, 2, |r, c| F::from_u64((r * 2 + c) as u64));
        let z = Ext3::from_base(domain_generator(3).exp_u64(5));
        assert!(evaluate_at_ood(&trace, z).is_none());
    }
}
