//! Zero-knowledge randomness: one prover RNG, counter-based so that any backend (the CUDA kernels of
//! `crates/cuda/kernels/zk.cu` mirror this file) reproduces every random value bit-exactly, and the trace
//! randomization of the zk mode (docs/stark.md, "Zero knowledge").
//!
//! # The PRF
//! A [`ZkRng`] is a 256-bit secret seed `s = (s0, s1, s2, s3)` (OS randomness by default, see
//! [`ZkRng::from_os`]; a fixed seed for tests, [`ZkRng::from_test_seed`]). The random field elements of one
//! *stream* `(domain, round, index, row)` are squeezed from Keccak (rate 136 bytes, original Keccak padding,
//! the sponge of `tiny_keccak::Keccak::v256`):
//! * absorb the 7 words `[s0, s1, s2, s3, domain | round << 32, index, row]` (one block: word 7 gets the pad
//!   byte `0x01`, word 16 the final bit `0x80 << 56`), permute;
//! * element `k` of the stream is read from block `k / 8` (block `b` = the state after `b + 1` permutations),
//!   words `2 (k % 8)` (low) and `2 (k % 8) + 1` (high): `(lo + hi * 2^64) mod p`, i.e.
//!   `lo mod p + hi mod p * (2^32 - 1)` in Goldilocks (statistical distance to uniform below `2^-64`).
//!
//! Streams: [`DOMAIN_TRACE`] (the random rows of a randomized trace: round, table, row), [`DOMAIN_SALT`]
//! (Merkle leaf salts: round, log height of the level, leaf row), [`DOMAIN_QUOTIENT`] (random coefficients
//! that mask quotient chunks: table, coefficient index), [`DOMAIN_CODEWORD`] (the random FRI codeword: row).
//! Rounds: [`ROUND_MAIN`], [`ROUND_AUX`], [`ROUND_QUOTIENT`], and `ROUND_FRI + layer` for FRI layers.

use crate::field::{PrimeCharacteristicRing, F};
use crate::keccak::keccak_f1600;
use crate::matrix::RowMajorMatrix;

/// Field elements of salt per Merkle leaf (and per injected row hash) in zk mode: 2 x 64 bits.
pub const SALT_WIDTH: usize = 2;

/// Stream domain of the random rows of a randomized trace.
pub const DOMAIN_TRACE: u32 = 1;
/// Stream domain of Merkle leaf salts.
pub const DOMAIN_SALT: u32 = 2;
/// Stream domain of the quotient-chunk masks.
pub const DOMAIN_QUOTIENT: u32 = 3;
/// Stream domain of the random FRI codeword.
pub const DOMAIN_CODEWORD: u32 = 4;

/// Commit round of the main traces.
pub const ROUND_MAIN: u32 = 1;
/// Commit round of the LogUp aux traces.
pub const ROUND_AUX: u32 = 2;
/// Commit round of the quotient chunks and the random codeword.
pub const ROUND_QUOTIENT: u32 = 3;
/// First FRI layer (layer `l` is round `ROUND_FRI + l`).
pub const ROUND_FRI: u32 = 16;

/// Elements per squeezed Keccak block (8 x 128 bits of the 17-word rate).
const PER_BLOCK: usize = 8;

/// Streams whose permutations are batched together by [`ZkRng::fill_rows`].
const BATCH: usize = 8;

/// `2^64 mod p`.
const TWO_64_MOD_P: u64 = 0xFFFF_FFFF;

/// The prover's random source (see the module docs). `Copy`: the seed is 4 words.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ZkRng {
    seed: [u64; 4],
}

impl std::fmt::Debug for ZkRng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a secret seed.
        f.write_str("ZkRng(..)")
    }
}

/// Why the OS random source failed.
#[derive(Debug, thiserror::Error)]
#[error("OS randomness unavailable: {0}")]
pub struct RngError(String);

impl ZkRng {
    /// A seed of 32 bytes from the operating system.
    pub fn from_os() -> Result<Self, RngError> {
        let mut b = [0u8; 32];
        getrandom::getrandom(&mut b).map_err(|e| RngError(e.to_string()))?;
        Ok(Self::from_bytes(b))
    }

    /// A seed from 32 bytes (4 little-endian words).
    pub fn from_bytes(b: [u8; 32]) -> Self {
        let mut seed = [0u64; 4];
        for (k, w) in seed.iter_mut().enumerate() {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[8 * k..8 * k + 8]);
            *w = u64::from_le_bytes(a);
        }
        Self { seed }
    }

    /// A deterministic seed for tests and CPU/GPU parity runs (not secret: never use it for real proofs).
    pub fn from_test_seed(seed: u64) -> Self {
        Self {
            seed: [seed, 0x7a6b_7276_2d74_6573, 0x742d_7365_6564, 0],
        }
    }

    /// The 4 seed words (for a device kernel that reproduces the streams).
    pub fn seed_words(&self) -> [u64; 4] {
        self.seed
    }

    /// Fill `out` with the first `out.len()` elements of stream `(domain, round, index, row)`.
    pub fn fill(&self, domain: u32, round: u32, index: u64, row: u64, out: &mut [F]) {
        let mut st = [0u64; 25];
        st[..4].copy_from_slice(&self.seed);
        st[4] = domain as u64 | (round as u64) << 32;
        st[5] = index;
        st[6] = row;
        st[7] ^= 0x01;
        st[16] ^= 0x8000_0000_0000_0000;
        for chunk in out.chunks_mut(PER_BLOCK) {
            keccak_f1600(&mut st);
            for (k, o) in chunk.iter_mut().enumerate() {
                *o = element(st[2 * k], st[2 * k + 1]);
            }
        }
    }

    /// Rows `first .. first + out.len() / width` of streams `(domain, round, index, row)`, `width` elements
    /// each, into `out` (row-major): the same values as [`ZkRng::fill`] row by row, with the permutations
    /// of [`BATCH`] rows batched ([`crate::keccak::permute_many`], AVX-512 / AVX2).
    pub fn fill_rows(
        &self,
        domain: u32,
        round: u32,
        index: u64,
        first: u64,
        width: usize,
        out: &mut [F],
    ) {
        let mut states = [[0u64; 25]; BATCH];
        for (c, chunk) in out.chunks_mut(BATCH * width).enumerate() {
            let rows = chunk.len() / width;
            for (k, st) in states.iter_mut().enumerate().take(rows) {
                *st = [0u64; 25];
                st[..4].copy_from_slice(&self.seed);
                st[4] = domain as u64 | (round as u64) << 32;
                st[5] = index;
                st[6] = first + (c * BATCH + k) as u64;
                st[7] ^= 0x01;
                st[16] ^= 0x8000_0000_0000_0000;
            }
            for k0 in (0..width).step_by(PER_BLOCK) {
                crate::keccak::permute_many(&mut states[..rows]);
                for (st, row) in states.iter().zip(chunk.chunks_mut(width)) {
                    let end = (k0 + PER_BLOCK).min(width);
                    for (k, o) in row[k0..end].iter_mut().enumerate() {
                        *o = element(st[2 * k], st[2 * k + 1]);
                    }
                }
            }
        }
    }

    /// `rows x width` random matrix, row `r` = stream `(domain, round, index, r)`.
    pub fn matrix(
        &self,
        domain: u32,
        round: u32,
        index: u64,
        rows: usize,
        width: usize,
    ) -> RowMajorMatrix {
        use rayon::prelude::*;
        let mut v = vec![F::ZERO; rows * width];
        let per_task = BATCH * 64;
        v.par_chunks_mut(per_task * width)
            .enumerate()
            .for_each(|(t, part)| {
                self.fill_rows(domain, round, index, (t * per_task) as u64, width, part)
            });
        RowMajorMatrix::new(v, width)
    }
}

/// `(lo + hi * 2^64) mod p`.
#[inline]
pub fn element(lo: u64, hi: u64) -> F {
    F::from_u64(lo) + F::from_u64(hi) * F::from_u64(TWO_64_MOD_P)
}

/// Randomize an `n x w` trace (natural order) into the `2n x w` trace whose even rows are the trace and whose
/// odd rows are random (row `2i + 1` = stream `(DOMAIN_TRACE, round, table, i)`).
///
/// Its interpolant `f` on `H_2n` has degree `< 2n` and `f(ω_n^i) = f(ω_2n^{2i}) = trace[i]`: constraints
/// still hold on `H_n`, and `f = f_T + Z_{H_n} r` with `r` a uniformly random polynomial of degree `< n`,
/// so any `k <= n` evaluations of `f` outside `H_n` are uniform and independent of the trace.
pub fn randomize_trace(
    trace: &RowMajorMatrix,
    rng: &ZkRng,
    round: u32,
    table: u64,
) -> RowMajorMatrix {
    use rayon::prelude::*;
    let w = trace.width;
    let n = trace.height();
    let per_task = BATCH * 16;
    let mut v = vec![F::ZERO; 2 * n * w];
    v.par_chunks_mut(2 * w * per_task)
        .enumerate()
        .for_each(|(t, part)| {
            let rows = part.len() / (2 * w);
            let first = t * per_task;
            let mut odd = vec![F::ZERO; rows * w];
            rng.fill_rows(DOMAIN_TRACE, round, table, first as u64, w, &mut odd);
            for (k, pair) in part.chunks_mut(2 * w).enumerate() {
                let (even, o) = pair.split_at_mut(w);
                even.copy_from_slice(trace.row(first + k));
                o.copy_from_slice(&odd[k * w..(k + 1) * w]);
            }
        });
    RowMajorMatrix::new(v, w)
}

/// Committed quotient chunks of one table in zk mode: `(count, m)`. The quotient `q` (degree `< c n`, `c` =
/// `CompiledAir::num_quotient_chunks` = `2d - 1`) is split into `count = ceil(c n / m)` chunks of `m = 2n - h`
/// coefficients, `q = sum_i X^(i m) q_i`, each masked with `h` random coefficients into a polynomial of degree
/// `< 2n` ([`randomize_quotient`]). `h = n / 4` when that covers the `num_queries + 1` evaluations a proof
/// reveals of a chunk, else `n / 2` (`>= num_queries + 1` by the minimum height): about `c / 2` chunks of
/// height `2n` instead of `c` (5 -> 3 for degree 3 once `n >= 256`).
pub fn quotient_layout(c: usize, log_n: usize, num_queries: usize) -> (usize, usize) {
    let n = 1usize << log_n;
    let h = if n / 4 > num_queries { n / 4 } else { n / 2 };
    let m = 2 * n - h;
    ((c * n).div_ceil(m), m)
}

/// Randomize the quotient chunks of one table (zk mode). Input: `n x 3c` evaluations on `H_n` (natural
/// order) of the degree-`< n` chunks `q_j` (extension column `j` = base columns `3j..3j+3`),
/// `q = sum_j X^(jn) q_j`. Output: `2n x 3 count` evaluations on `H_2n` of
/// `q'_i = Q_i + X^m r_i - r_{i-1}` (`r_{-1} = r_{count-1} = 0`), where `(count, m)` =
/// [`quotient_layout`], `Q_i` holds the coefficients `i m .. (i + 1) m` of `q`, and `r_i` (`i < count - 1`,
/// `h = 2n - m` `Ext3` coefficients) has coefficient `k` = elements `3i..3i+3` of stream
/// `(DOMAIN_QUOTIENT, ROUND_QUOTIENT, table, k)`. Then `sum_i X^(i m) q'_i = q`, and the chunks' values at
/// up to `h` points are uniform subject to that one relation (which the verifier's out-of-domain check uses
/// anyway).
pub fn randomize_quotient(
    q: RowMajorMatrix,
    rng: &ZkRng,
    table: u64,
    num_queries: usize,
) -> RowMajorMatrix {
    let c = q.width / 3;
    let n = q.height();
    let (count, m) = quotient_layout(c, n.trailing_zeros() as usize, num_queries);
    let h = 2 * n - m;
    let w = 3 * count;
    let coeffs = crate::poly::idft_batch(q);
    let mut v = vec![F::ZERO; 2 * n * w];
    // Coefficient `g` of q (`g = j n + k`) goes to chunk `g / m`, row `g % m`.
    for j in 0..c {
        for k in 0..n {
            let g = j * n + k;
            let (i, row) = (g / m, g % m);
            for e in 0..3 {
                v[row * w + 3 * i + e] = coeffs.values[k * 3 * c + 3 * j + e];
            }
        }
    }
    if count > 1 {
        let masks = rng.matrix(DOMAIN_QUOTIENT, ROUND_QUOTIENT, table, h, 3 * (count - 1));
        for k in 0..h {
            let r = masks.row(k);
            for i in 0..count - 1 {
                for e in 0..3 {
                    let x = r[3 * i + e];
                    v[(m + k) * w + 3 * i + e] += x;
                    v[k * w + 3 * (i + 1) + e] -= x;
                }
            }
        }
    }
    crate::poly::dft_batch(RowMajorMatrix::new(v, w))
}

/// The random FRI codeword (zk mode): `2^log_height x 3` random evaluations (natural order on
/// `H_{2^log_height}`; row `r` = stream `(DOMAIN_CODEWORD, ROUND_QUOTIENT, 0, r)`), committed with the
/// quotient chunks at the largest trace height, so that it enters the DEEP batch and masks every FRI layer.
pub fn random_codeword(rng: &ZkRng, log_height: usize) -> RowMajorMatrix {
    rng.matrix(
        DOMAIN_CODEWORD,
        ROUND_QUOTIENT,
        0,
        1 << log_height,
        CODEWORD_WIDTH,
    )
}

/// log2 of the random codeword's height (its degree bound), at least `log_max_trace` (the largest committed
/// trace height, `2n` in zk mode). Per query FRI reveals one value of the batched codeword through the opened
/// rows and `2^a - 1` new values of each layer of arity `2^a` (its row, less the entry the previous fold
/// determines), over `D = lh - log_final_poly_len` halvings, plus the final polynomial's
/// `2^log_final_poly_len` coefficients; the codeword's `2^lh` random coefficients must cover them all:
/// `2^lh >= num_queries · (1 + V) + 2^log_final_poly_len + 1`, `V = ⌊D/A⌋ (2^A - 1) + 2^(D mod A) - 1` with
/// `A = log_folding_arity` (the most any split of `D` into layers of at most `2^A` reveals; `V = D` for
/// arity 2). A codeword taller than every trace raises the FRI domain (more layers), which small machines
/// pay for.
pub fn codeword_log_height(fri: &crate::pcs::FriConfig, log_max_trace: usize) -> usize {
    let mut lh = log_max_trace.max(1);
    let lf = fri.log_final_poly_len;
    let a = fri
        .log_folding_arity
        .clamp(1, crate::pcs::MAX_LOG_FOLDING_ARITY);
    let revealed = |lh: usize| {
        let d = lh.saturating_sub(lf);
        1 + (d / a) * ((1 << a) - 1) + (1 << (d % a)) - 1
    };
    while (1usize << lh) < fri.num_queries * revealed(lh) + (1 << lf) + 1 {
        lh += 1;
    }
    lh
}

/// Width of the random codeword: one `Ext3` column.
pub const CODEWORD_WIDTH: usize = 3;

/// The even rows of a randomized trace (`2n x w` -> the `n x w` trace).
pub fn even_rows(m: &RowMajorMatrix) -> RowMajorMatrix {
    let w = m.width;
    let v: Vec<F> = m
        .values
        .chunks(2 * w)
        .flat_map(|p| p[..w].iter().copied())
        .collect();
    RowMajorMatrix::new(v, w)
}

/// Salt matrix of one Merkle level: `2^log_height x SALT_WIDTH`, row `r` = stream
/// `(DOMAIN_SALT, round, log_height, r)`.
pub fn salt_matrix(rng: &ZkRng, round: u32, log_height: usize) -> RowMajorMatrix {
    rng.matrix(
        DOMAIN_SALT,
        round,
        log_height as u64,
        1 << log_height,
        SALT_WIDTH,
    )
}

/// Minimum log height of every table in zk mode for `num_queries` queries: the random part of a trace
/// column (a polynomial of degree `< n`) must hide every revealed evaluation: 2 out-of-domain points
/// (`zeta`, `zeta ω`), and per query the opened row plus its next row (which the verifier can reach through
/// the opened quotient, `q(x) = C(x, x ω) / Z_H(x)`), i.e. `n >= 2 num_queries + 2`; the quotient masks
/// (degree `< n`) hide `num_queries + 1` evaluations per chunk.
pub fn min_log_height(num_queries: usize) -> usize {
    (2 * num_queries + 2).next_power_of_two().trailing_zeros() as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::PrimeField64;

    #[test]
    fn streams_are_deterministic_and_separated() {
        let rng = ZkRng::from_test_seed(7);
        let mut a = [F::ZERO; 20];
        let mut b = [F::ZERO; 20];
        rng.fill(DOMAIN_TRACE, 1, 2, 3, &mut a);
        rng.fill(DOMAIN_TRACE, 1, 2, 3, &mut b);
        assert_eq!(a, b);
        // A prefix of a longer stream is the shorter stream.
        let mut c = [F::ZERO; 5];
        rng.fill(DOMAIN_TRACE, 1, 2, 3, &mut c);
        assert_eq!(&a[..5], &c);
        for (d, r, i, row) in [(2, 1, 2, 3), (1, 2, 2, 3), (1, 1, 3, 3), (1, 1, 2, 4)] {
            rng.fill(d, r, i, row, &mut b);
            assert_ne!(a, b);
        }
        ZkRng::from_test_seed(8).fill(DOMAIN_TRACE, 1, 2, 3, &mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn batched_rows_equal_single_streams() {
        let rng = ZkRng::from_test_seed(42);
        for width in [1usize, 2, 7, 8, 9, 17, 33] {
            for rows in [1usize, 5, 8, 19] {
                let mut batched = vec![F::ZERO; rows * width];
                rng.fill_rows(DOMAIN_SALT, 3, 9, 100, width, &mut batched);
                for r in 0..rows {
                    let mut one = vec![F::ZERO; width];
                    rng.fill(DOMAIN_SALT, 3, 9, 100 + r as u64, &mut one);
                    assert_eq!(
                        &batched[r * width..(r + 1) * width],
                        &one[..],
                        "w {width} r {r}"
                    );
                }
            }
        }
        let m = rng.matrix(DOMAIN_TRACE, 1, 2, 1000, 3);
        let mut one = [F::ZERO; 3];
        rng.fill(DOMAIN_TRACE, 1, 2, 777, &mut one);
        assert_eq!(m.row(777), &one);
        let t = RowMajorMatrix::from_fn(300, 5, |r, c| F::from_u64((r * 5 + c) as u64));
        let z = randomize_trace(&t, &rng, 1, 4);
        rng.fill(DOMAIN_TRACE, 1, 4, 299, &mut one);
        assert_eq!(&z.row(599)[..3], &one);
    }

    #[test]
    fn element_reduces_128_bits() {
        let p = F::ORDER_U64 as u128;
        for (lo, hi) in [
            (0u64, 0u64),
            (u64::MAX, u64::MAX),
            (12345, 1 << 63),
            (u64::MAX, 0),
        ] {
            let full = (((hi as u128 % p) * ((1u128 << 64) % p) + lo as u128 % p) % p) as u64;
            assert_eq!(element(lo, hi).as_canonical_u64(), full);
        }
    }

    #[test]
    fn randomized_trace_keeps_even_rows() {
        let t = RowMajorMatrix::from_fn(8, 3, |r, c| F::from_u64((10 * r + c) as u64));
        let z = randomize_trace(&t, &ZkRng::from_test_seed(1), ROUND_MAIN, 0);
        assert_eq!(z.height(), 16);
        assert_eq!(even_rows(&z), t);
        assert_ne!(z.row(1), z.row(3));
    }

    #[test]
    fn randomized_quotient_recombines() {
        use crate::field::Ext3;
        // c chunks of degree < n; check sum_i x^(i m) q'_i(x) = sum_j x^(jn) q_j(x) at x off H.
        for (log_n, c, queries) in [
            (3usize, 3usize, 1usize),
            (5, 5, 7),
            (4, 7, 1),
            (3, 1, 1),
            (7, 5, 44),
        ] {
            let n = 1usize << log_n;
            let q = RowMajorMatrix::from_fn(n, 3 * c, |r, col| {
                F::from_u64((r * 31 + col * 7 + 1) as u64)
            });
            let qc = crate::poly::idft_batch(q.clone());
            let qz = randomize_quotient(q, &ZkRng::from_test_seed(3), 5, queries);
            let (count, m) = quotient_layout(c, log_n, queries);
            assert_eq!((qz.height(), qz.width), (2 * n, 3 * count));
            assert!(count * m >= c * n && 2 * n - m > queries);
            let qzc = crate::poly::idft_batch(qz);
            let x = F::from_u64(123456789);
            let eval = |mat: &RowMajorMatrix, j: usize| -> Ext3 {
                let mut acc = Ext3::ZERO;
                for r in (0..mat.height()).rev() {
                    let row = mat.row(r);
                    acc = acc * x + Ext3([row[3 * j], row[3 * j + 1], row[3 * j + 2]]);
                }
                acc
            };
            let total = |mat: &RowMajorMatrix, k: usize, step: usize| -> Ext3 {
                let xs = x.exp_u64(step as u64);
                (0..k)
                    .rev()
                    .fold(Ext3::ZERO, |acc, j| acc * xs + eval(mat, j))
            };
            assert_eq!(total(&qc, c, n), total(&qzc, count, m), "n {n} c {c}");
            if count > 1 {
                assert_ne!(eval(&qzc, 0), total(&qc, c, n), "chunk 0 is masked");
            }
        }
    }

    #[test]
    fn codeword_covers_fri_openings() {
        let fri = crate::pcs::FriConfig {
            log_folding_arity: 1,
            ..crate::StarkConfig::dev().fri
        };
        assert_eq!(codeword_log_height(&fri, 8), 9);
        assert_eq!(codeword_log_height(&fri, 17), 17);
        // Arity 8: 44 (1 + 2·7 + 2^1 - 1) + 5 = 709 at lh = 9 (D = 7) > 512, 44 (1 + 2·7 + 3) + 5 = 797 <= 1024.
        let fri8 = crate::pcs::FriConfig {
            log_folding_arity: 3,
            ..fri
        };
        assert_eq!(codeword_log_height(&fri8, 8), 10);
        assert_eq!(codeword_log_height(&fri8, 17), 17);
    }

    #[test]
    fn min_height_covers_queries() {
        assert_eq!(min_log_height(44), 7);
        assert!(1usize << min_log_height(100) >= 202);
    }
}
