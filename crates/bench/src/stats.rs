//! Statistics for paired benchmark comparisons: sample moments, a paired Student-t confidence interval, an exact
//! Wilcoxon signed-rank test and a least-squares drift slope.
//!
//! All functions take plain `f64` slices of paired differences `d_i` (for zkrv-abba, the relative differences
//! `d_i = b_i / a_i - 1` of pair i). They are checked against scipy 1.17 in the unit tests below.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Largest number of non-zero differences for which [`wilcoxon_signed_rank`] uses the exact null distribution;
/// above it, the normal approximation (with tie correction, without continuity correction, as scipy's
/// `method="approx", correction=False`).
pub const WILCOXON_EXACT_MAX_N: usize = 50;

/// Two values `x <= y` of |d| are one tie group when `y - x <= TIE_REL_TOL * y`. Relative differences computed
/// from rounded metrics (e.g. `1.24 / 1.23 - 1` and `2.48 / 2.46 - 1`) can differ in the last bits while being
/// equal in truth; the tolerance keeps them tied.
pub const TIE_REL_TOL: f64 = 1e-9;

/// Arithmetic mean; `NaN` for an empty slice.
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample standard deviation (denominator n - 1); `NaN` when `x.len() < 2`.
pub fn sample_sd(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return f64::NAN;
    }
    let m = mean(x);
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    (ss / (x.len() - 1) as f64).sqrt()
}

/// Coefficient of variation `sample_sd / mean` (a fraction, not %).
pub fn coefficient_of_variation(x: &[f64]) -> f64 {
    sample_sd(x) / mean(x)
}

/// Median (mean of the two middle values for even length); `NaN` for an empty slice.
pub fn median(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Least-squares slope of `y` against `x` (units of y per unit of x); `NaN` if fewer than 2 points or all x equal.
pub fn ls_slope(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "ls_slope: x and y differ in length");
    let (mx, my) = (mean(x), mean(y));
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    if x.len() < 2 || sxx == 0.0 {
        return f64::NAN;
    }
    sxy / sxx
}

/// One-sample (paired) Student-t result for the mean of the differences.
#[derive(Clone, Debug, Serialize)]
pub struct TInterval {
    /// Number of differences.
    pub n: usize,
    /// Mean of the differences.
    pub mean: f64,
    /// Sample standard deviation of the differences.
    pub sd: f64,
    /// Confidence level of `[low, high]`, e.g. 0.95.
    pub confidence: f64,
    /// Lower end of the two-sided confidence interval for the mean.
    pub low: f64,
    /// Upper end of the two-sided confidence interval for the mean.
    pub high: f64,
    /// Two-sided p-value of H0: mean = 0 (`NaN` if sd = 0).
    pub p_value: f64,
}

/// Paired t confidence interval `mean ± t_{(1+confidence)/2, n-1} · sd / sqrt(n)` and the two-sided p-value.
/// Returns `None` for fewer than 2 differences. If all differences are equal (sd = 0) the interval is the point.
pub fn paired_t_interval(d: &[f64], confidence: f64) -> Option<TInterval> {
    let n = d.len();
    if n < 2 || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    let (m, sd) = (mean(d), sample_sd(d));
    let df = (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let se = sd / (n as f64).sqrt();
    let q = t.inverse_cdf(0.5 + confidence / 2.0);
    let p_value = if se > 0.0 {
        2.0 * t.sf((m / se).abs())
    } else {
        f64::NAN
    };
    Some(TInterval {
        n,
        mean: m,
        sd,
        confidence,
        low: m - q * se,
        high: m + q * se,
        p_value,
    })
}

/// How [`wilcoxon_signed_rank`] computed its p-value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WilcoxonMethod {
    /// Exact null distribution (conditional on the observed tie pattern), by dynamic programming.
    Exact,
    /// Normal approximation with tie correction, no continuity correction.
    Normal,
    /// No non-zero differences: p = 1.
    Degenerate,
}

/// Two-sided Wilcoxon signed-rank test of H0: the differences are symmetric about 0.
#[derive(Clone, Debug, Serialize)]
pub struct Wilcoxon {
    /// Non-zero differences used (n).
    pub n_used: usize,
    /// Exact zeros dropped (Wilcoxon's convention, scipy `zero_method="wilcox"`).
    pub n_zeros: usize,
    /// Sum of the ranks of the positive differences.
    pub w_plus: f64,
    /// Sum of the ranks of the negative differences (`w_plus + w_minus = n(n+1)/2`).
    pub w_minus: f64,
    /// Two-sided p-value `min(1, 2·min(P(W+ <= w), P(W+ >= w)))`.
    pub p_value: f64,
    /// Exact or normal approximation.
    pub method: WilcoxonMethod,
}

/// Wilcoxon signed-rank test on differences `d`.
///
/// Conventions (documented in docs/PERF.md `## ABBA tool`):
/// - zeros (`d_i == 0.0`) are dropped before ranking (Wilcoxon 1945; scipy `zero_method="wilcox"`);
/// - |d| values tied (within [`TIE_REL_TOL`]) get the average of their ranks;
/// - for n <= [`WILCOXON_EXACT_MAX_N`] the p-value is exact: the null distribution of W+ is that of
///   `sum_i s_i r_i` with independent fair signs s_i ∈ {0, 1} over the observed (average) ranks r_i, computed by
///   dynamic programming over doubled ranks (integers even with ties), in O(n · n²) time. Without ties this is the
///   classic exact distribution (equal to scipy's `method="exact"`); with ties it is the exact permutation
///   distribution conditional on the ties;
/// - above that, the normal approximation with the tie-corrected variance
///   `n(n+1)(2n+1)/24 - sum(t³ - t)/48` and no continuity correction.
pub fn wilcoxon_signed_rank(d: &[f64]) -> Wilcoxon {
    let nonzero: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
    let n_zeros = d.len() - nonzero.len();
    let n = nonzero.len();
    if n == 0 {
        return Wilcoxon {
            n_used: 0,
            n_zeros,
            w_plus: 0.0,
            w_minus: 0.0,
            p_value: 1.0,
            method: WilcoxonMethod::Degenerate,
        };
    }
    // Doubled average ranks (integers): a tie group occupying ranks k..=m (1-based) gets (k + m) each.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| nonzero[i].abs().total_cmp(&nonzero[j].abs()));
    let mut rank2 = vec![0u64; n];
    let mut tie_sizes = Vec::new();
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n {
            let (lo, hi) = (nonzero[order[end - 1]].abs(), nonzero[order[end]].abs());
            if hi - lo <= TIE_REL_TOL * hi {
                end += 1;
            } else {
                break;
            }
        }
        let r2 = (start + 1 + end) as u64; // ranks start+1 ..= end, doubled average
        for &i in &order[start..end] {
            rank2[i] = r2;
        }
        tie_sizes.push(end - start);
        start = end;
    }
    let w2_plus: u64 = (0..n).filter(|&i| nonzero[i] > 0.0).map(|i| rank2[i]).sum();
    let total2: u64 = rank2.iter().sum();
    let w_plus = w2_plus as f64 / 2.0;
    let w_minus = (total2 - w2_plus) as f64 / 2.0;

    let (p_value, method) = if n <= WILCOXON_EXACT_MAX_N {
        // prob[s] = P(sum of doubled ranks with a positive sign = s) under H0.
        let mut prob = vec![0.0f64; total2 as usize + 1];
        prob[0] = 1.0;
        let mut reach = 0usize;
        for &r in &rank2 {
            let r = r as usize;
            for s in (0..=reach).rev() {
                let p = prob[s] * 0.5;
                prob[s] = p;
                prob[s + r] += p;
            }
            reach += r;
        }
        let w = w2_plus as usize;
        let p_le: f64 = prob[..=w].iter().sum();
        let p_ge: f64 = prob[w..].iter().sum();
        ((2.0 * p_le.min(p_ge)).min(1.0), WilcoxonMethod::Exact)
    } else {
        let nf = n as f64;
        let mean_w = nf * (nf + 1.0) / 4.0;
        let tie_term: f64 = tie_sizes
            .iter()
            .map(|&t| (t * t * t - t) as f64)
            .sum::<f64>()
            / 48.0;
        let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term;
        let z = (w_plus - mean_w) / var.sqrt();
        // Normal::new(0, 1) cannot fail.
        let normal = Normal::standard();
        ((2.0 * normal.sf(z.abs())).min(1.0), WilcoxonMethod::Normal)
    };
    Wilcoxon {
        n_used: n,
        n_zeros,
        w_plus,
        w_minus,
        p_value,
        method,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    /// Hollander & Wolfe depression data (the example of R's `wilcox.test`): d = x - y.
    const HW_D: [f64; 9] = [
        0.952, -0.147, 1.022, 0.430, 0.620, 0.590, 0.490, -0.080, 0.010,
    ];

    #[test]
    fn t_interval_matches_scipy() {
        // scipy 1.17.1: stats.ttest_1samp(d, 0) -> pvalue 0.016176627434908088,
        // .confidence_interval(0.95) -> (0.10377871227216856, 0.7599990655056093)
        let t = paired_t_interval(&HW_D, 0.95).unwrap();
        assert!(close(t.low, 0.10377871227216856, 1e-9), "low {}", t.low);
        assert!(close(t.high, 0.7599990655056093, 1e-9), "high {}", t.high);
        assert!(
            close(t.p_value, 0.016176627434908088, 1e-7),
            "p {}",
            t.p_value
        );
        // scipy: d4 = [0.031, 0.052, -0.004, 0.018, 0.027, 0.044] -> CI (0.007190455992260973, 0.04880954400773902),
        // p 0.01806540085845594
        let t = paired_t_interval(&[0.031, 0.052, -0.004, 0.018, 0.027, 0.044], 0.95).unwrap();
        assert!(close(t.low, 0.007190455992260973, 1e-8), "low {}", t.low);
        assert!(close(t.high, 0.04880954400773902, 1e-9), "high {}", t.high);
        assert!(
            close(t.p_value, 0.01806540085845594, 1e-7),
            "p {}",
            t.p_value
        );
        assert!(paired_t_interval(&[1.0], 0.95).is_none());
    }

    #[test]
    fn t_quantiles_match_scipy() {
        // scipy: stats.t.ppf(0.975, [1, 2, 5, 9, 29])
        let expect = [
            (1.0, 12.70620474),
            (2.0, 4.30265273),
            (5.0, 2.57058184),
            (9.0, 2.26215716),
            (29.0, 2.04522964),
        ];
        for (df, q) in expect {
            let got = StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.975);
            assert!(close(got, q, 1e-8), "df {df}: {got} vs {q}");
        }
    }

    #[test]
    fn wilcoxon_exact_no_ties_matches_scipy() {
        // scipy 1.17.1: stats.wilcoxon(d, method="exact") -> statistic 5.0 (= W-), pvalue 0.0390625
        let w = wilcoxon_signed_rank(&HW_D);
        assert_eq!(w.method, WilcoxonMethod::Exact);
        assert_eq!((w.w_plus, w.w_minus), (40.0, 5.0));
        assert!(close(w.p_value, 0.0390625, 1e-12), "p {}", w.p_value);
        // Same as 2/2^6: all six positive is the most extreme outcome (scipy: statistic 1.0, pvalue 0.0625 for d4
        // below, where one of six is negative with the smallest rank).
        let w = wilcoxon_signed_rank(&[0.031, 0.052, -0.004, 0.018, 0.027, 0.044]);
        assert!(close(w.p_value, 0.0625, 1e-12), "p {}", w.p_value);
        let w = wilcoxon_signed_rank(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert!(close(w.p_value, 2.0 / 64.0, 1e-12), "p {}", w.p_value);
        // Sign symmetry.
        let neg: Vec<f64> = HW_D.iter().map(|v| -v).collect();
        let w = wilcoxon_signed_rank(&neg);
        assert_eq!((w.w_plus, w.w_minus), (5.0, 40.0));
        assert!(close(w.p_value, 0.0390625, 1e-12));
    }

    #[test]
    fn wilcoxon_exact_with_ties_and_zero() {
        // Reference computed with python3 + scipy 1.17.1: drop the zero, ranks = stats.rankdata(|d|) =
        // [1.5 1.5 4 4 6.5 4 8 6.5 9], W+ = 39.5, and the two-sided p over all 2^9 sign vectors (itertools.product)
        // = 2·min(P(W <= 39.5), P(W >= 39.5)) = 0.05078125.
        let d = [0.5, -0.5, 1.0, 1.0, 2.0, -1.0, 3.0, 0.0, 2.0, 4.0];
        let w = wilcoxon_signed_rank(&d);
        assert_eq!((w.n_used, w.n_zeros), (9, 1));
        assert_eq!((w.w_plus, w.w_minus), (39.5, 5.5));
        assert!(close(w.p_value, 0.05078125, 1e-12), "p {}", w.p_value);
        // Ties within the relative tolerance: 1.24/1.23 - 1 vs 2.48/2.46 - 1.
        let w = wilcoxon_signed_rank(&[1.24 / 1.23 - 1.0, -(2.48 / 2.46 - 1.0)]);
        assert_eq!((w.w_plus, w.w_minus), (1.5, 1.5));
        assert!(close(w.p_value, 1.0, 1e-12));
        // All zeros.
        let w = wilcoxon_signed_rank(&[0.0, 0.0]);
        assert_eq!((w.method, w.p_value), (WilcoxonMethod::Degenerate, 1.0));
    }

    #[test]
    fn wilcoxon_normal_matches_scipy() {
        // 60 values: np.round(np.random.default_rng(7).normal(0.3, 1.0, 60), 2); scipy 1.17.1
        // stats.wilcoxon(d, method="approx", zero_method="wilcox", correction=False) -> statistic 794.5,
        // pvalue 0.375021718859592 (ties present, tie-corrected variance).
        let d = [
            0.30, 0.60, 0.03, -0.59, -0.15, -0.69, 0.36, 1.64, -0.19, -0.32, 0.79, 0.66, 0.41,
            -0.63, 0.27, 1.00, -1.04, -0.16, -1.60, -0.99, -1.54, 0.06, -0.97, 0.57, 0.46, 0.11,
            -2.22, -0.24, 0.25, 0.41, -1.23, -0.18, -0.68, -0.51, 1.36, -0.51, 0.27, 1.18, -0.28,
            0.19, 0.41, 0.36, -0.93, 0.38, 1.66, -1.25, 1.16, 0.42, -0.34, 2.30, 1.06, -0.90, 0.37,
            0.88, 0.11, 0.98, 0.23, 0.97, 1.74, -0.38,
        ];
        let w = wilcoxon_signed_rank(&d);
        assert_eq!(w.method, WilcoxonMethod::Normal);
        assert_eq!(w.w_plus.min(w.w_minus), 794.5);
        assert!(close(w.p_value, 0.375021718859592, 1e-9), "p {}", w.p_value);
    }

    #[test]
    fn exact_matches_brute_force_enumeration() {
        // Deterministic pseudo-random data with ties; compare the DP with enumeration of all 2^n sign vectors.
        let mut state = 0x9e3779b97f4a7c15u64;
        for n in 1..=12 {
            let d: Vec<f64> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let v = ((state >> 33) % 7) as f64 + 1.0; // few distinct magnitudes -> ties
                    if (state >> 20) & 1 == 1 {
                        v
                    } else {
                        -v
                    }
                })
                .collect();
            let w = wilcoxon_signed_rank(&d);
            // Recompute average ranks naively.
            let abs: Vec<f64> = d.iter().map(|v| v.abs()).collect();
            let ranks: Vec<f64> = abs
                .iter()
                .map(|a| {
                    let less = abs.iter().filter(|b| *b < a).count() as f64;
                    let eq = abs.iter().filter(|b| *b == a).count() as f64;
                    less + (eq + 1.0) / 2.0
                })
                .collect();
            let obs: f64 = (0..n).filter(|&i| d[i] > 0.0).map(|i| ranks[i]).sum();
            let (mut le, mut ge) = (0u64, 0u64);
            for mask in 0u32..(1 << n) {
                let s: f64 = (0..n)
                    .filter(|&i| mask >> i & 1 == 1)
                    .map(|i| ranks[i])
                    .sum();
                le += (s <= obs) as u64;
                ge += (s >= obs) as u64;
            }
            let p = (2.0 * le.min(ge) as f64 / (1u64 << n) as f64).min(1.0);
            assert_eq!(w.w_plus, obs, "n {n} d {d:?}");
            assert!(
                close(w.p_value, p, 1e-12),
                "n {n}: dp {} brute {p}",
                w.p_value
            );
        }
    }

    #[test]
    fn moments_and_slope() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(close(
            sample_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]),
            2.138089935299395,
            1e-12
        ));
        assert!(close(
            ls_slope(&[0.0, 1.0, 2.0, 3.0], &[1.0, 3.0, 5.0, 7.0]),
            2.0,
            1e-12
        ));
        assert!(ls_slope(&[1.0], &[1.0]).is_nan());
    }
}
