//! The quotient round (docs/stark.md §4): [`QuotientOps`] for the CPU backend and the host reference
//! [`quotient_host`].

use std::borrow::Cow;
use std::convert::Infallible;

use rayon::prelude::*;

use super::cpu::host_input;
use super::{BackendError, CpuBackend, CpuCommitted, QuotientOps, QuotientViews, TraceInput};
use crate::air::CompiledAir;
use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::logup::LogupChallenges;
use crate::matrix::RowMajorMatrix;
use crate::poly::{
    bit_reverse_slice, coset_idft_ext, coset_shift, dft_batch, domain_generator, reverse_bits,
};
use crate::symbolic::{BlockLeaves, Node};
use crate::zk::{self, ZkRng};

impl QuotientOps for CpuBackend {
    /// [`quotient_host`] reading the views in blocks of `2^log_n · 2^zk` storage rows: a stored LDE in
    /// place, a recomputed one coset block at a time.
    fn quotient(
        &self,
        air: &CompiledAir,
        v: QuotientViews<'_, CpuCommitted>,
        challenges: &LogupChallenges,
        bus_sum: Ext3,
        alpha: Ext3,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        // One block of committed-trace height: `n` rows, `2n` in zk mode (blowup `2B` over `H_n`).
        let committed_log_height = (v.log_n + v.log_blowup)
            .checked_sub(v.main.round.log_blowup)
            .ok_or_else(|| BackendError::Shape("quotient blowup below the main round's".into()))?;
        let block_rows = 1usize << committed_log_height;
        fn rows<'a>(
            m: super::MatrixView<'a, CpuCommitted>,
            start: usize,
            block_rows: usize,
        ) -> Result<(Cow<'a, RowMajorMatrix>, usize), BackendError> {
            m.round.lde_rows(m.index, start, block_rows)
        }
        let fetch = |b: usize| -> Result<QuotientInputs<'_>, BackendError> {
            let start = b * block_rows;
            let rows = |m| rows(m, start, block_rows);
            Ok(QuotientInputs {
                main: rows(v.main)?,
                preprocessed: v.preprocessed.map(rows).transpose()?,
                aux: v.aux.map(rows).transpose()?,
            })
        };
        let q = quotient_host(
            air,
            v.log_n,
            v.log_blowup,
            block_rows,
            &fetch,
            challenges,
            bus_sum,
            alpha,
        )?;
        Ok(TraceInput::Host(q))
    }

    fn randomize_quotient(
        &self,
        chunks: TraceInput<Infallible>,
        rng: &ZkRng,
        table: u64,
        num_queries: usize,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        Ok(TraceInput::Host(zk::randomize_quotient(
            host_input(chunks),
            rng,
            table,
            num_queries,
        )))
    }

    fn random_codeword(
        &self,
        rng: &ZkRng,
        log_height: usize,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        Ok(TraceInput::Host(zk::random_codeword(rng, log_height)))
    }
}

/// Batch inversion in `F` (all inputs nonzero by construction of the callers).
fn batch_inverse_f(v: &mut [F]) {
    const CHUNK: usize = 1 << 12;
    v.par_chunks_mut(CHUNK).for_each(|chunk| {
        let mut prefix = Vec::with_capacity(chunk.len());
        let mut acc = F::ONE;
        for x in chunk.iter() {
            prefix.push(acc);
            acc *= *x;
        }
        let mut inv = acc.try_inverse().unwrap_or(F::ZERO);
        for i in (0..chunk.len()).rev() {
            let x = chunk[i];
            chunk[i] = inv * prefix[i];
            inv *= x;
        }
    });
}

#[inline]
fn ext_at(row: &[F], c: usize) -> Ext3 {
    Ext3([row[3 * c], row[3 * c + 1], row[3 * c + 2]])
}

/// Rows per block of the block-wise constraint evaluation in [`quotient_host`].
const BLOCK: usize = 16;

/// Leaves of a block of quotient-domain rows: storage indices into the bit-reversed LDEs and selectors.
struct LdeBlock<'a> {
    /// Each matrix with the storage row at which the current quotient block starts in it.
    main: (&'a RowMajorMatrix, usize),
    prep: Option<(&'a RowMajorMatrix, usize)>,
    len: usize,
    /// Indices relative to the quotient block's first storage row.
    cur: [usize; BLOCK],
    nxt: [usize; BLOCK],
    /// `[L_0, L_{n-1}, x - ω^{n-1}]` per row.
    sel: [[F; BLOCK]; 3],
}

impl BlockLeaves for LdeBlock<'_> {
    fn rows(&self) -> usize {
        self.len
    }
    fn fill(&self, node: Node, out: &mut [F]) {
        let gather = |(m, off): (&RowMajorMatrix, usize), col: usize, next: bool, out: &mut [F]| {
            let idx = if next { &self.nxt } else { &self.cur };
            for (o, &i) in out.iter_mut().zip(&idx[..self.len]) {
                *o = m.values[(off + i) * m.width + col];
            }
        };
        match node {
            Node::Main { col, next } => gather(self.main, col, next, out),
            Node::Preprocessed { col, next } => match self.prep {
                Some(p) => gather(p, col, next, out),
                None => out.fill(F::ZERO),
            },
            Node::IsFirstRow => out.copy_from_slice(&self.sel[0][..self.len]),
            Node::IsLastRow => out.copy_from_slice(&self.sel[1][..self.len]),
            Node::IsTransition => out.copy_from_slice(&self.sel[2][..self.len]),
            _ => out.fill(F::ZERO),
        }
    }
}

/// One block of a table's LDE rows for the quotient: each matrix with the row of it where the block's
/// first storage row is ([`ProverBackend::host_lde_rows`]).
pub struct QuotientInputs<'a> {
    pub main: (Cow<'a, RowMajorMatrix>, usize),
    pub preprocessed: Option<(Cow<'a, RowMajorMatrix>, usize)>,
    pub aux: Option<(Cow<'a, RowMajorMatrix>, usize)>,
}

/// `fetch(b)`: the quotient's LDE inputs for storage rows `[b·block_rows, (b+1)·block_rows)`.
pub type QuotientFetch<'a> = dyn Fn(usize) -> Result<QuotientInputs<'a>, BackendError> + 'a;

/// Host quotient (see [`ProverBackend::quotient`]) of a table of `n = 2^log_n` rows. LDEs are bit-reversed;
/// only their first `M` storage rows (below) are read, in blocks of `block_rows` (a power of two `>= n`,
/// or `>= M`) fetched one at a time with `fetch` and read in place: every block is a union of cosets of
/// `H_n`, so a row and its next row lie in the same block.
///
/// With `c` chunks, `q = C / Z_H` has degree `< c n`, so it is evaluated only on the quotient domain
/// `g·H_M`, `M = n · 2^ceil(log2 c)` (`<= nB`): the first `M` storage rows of every bit-reversed LDE are
/// exactly `g·H_M` in bit-reversed order (row `s` holds `x = g ω_M^{bitrev_M(s)}`). On the natural-order
/// points `x_i = g ω_M^i`, the next row of `x_i` is `x_i ω_n = x_{i + M/n}`. The values `C(x_i) / Z_H(x_i)`
/// are interpolated (coset IDFT of size `M`), the coefficients split into `c` chunks of `n` (coefficients
/// at index `>= c n` are dropped; they are zero when the constraints hold), and each chunk is evaluated on
/// `H_n`.
///
/// In two steps: [`quotient_values`] (`C / Z_H` on the quotient domain, storage order) then
/// [`quotient_chunks`].
#[allow(clippy::too_many_arguments)]
pub fn quotient_host(
    air: &CompiledAir,
    log_n: usize,
    log_blowup: usize,
    block_rows: usize,
    fetch: &QuotientFetch<'_>,
    challenges: &LogupChallenges,
    bus_sum: Ext3,
    alpha: Ext3,
) -> Result<RowMajorMatrix, BackendError> {
    let q = quotient_values(
        air, log_n, log_blowup, block_rows, fetch, challenges, bus_sum, alpha,
    )?;
    Ok(quotient_chunks(q, log_n, air.num_quotient_chunks))
}

/// `log2(M / n)` of the quotient domain `g·H_M` of a table with `chunks` quotient chunks read from LDEs of
/// blowup `2^log_blowup` (see [`quotient_host`]): `min(ceil(log2 chunks), log_blowup)`.
pub fn quotient_log_extension(chunks: usize, log_blowup: usize) -> usize {
    (chunks.next_power_of_two().trailing_zeros() as usize).min(log_blowup)
}

/// The first step of [`quotient_host`]: `q = C / Z_H` on the quotient domain `g·H_M`
/// (`M = n · 2^`[`quotient_log_extension`]), `M` values in **storage order** (entry `s` at the natural point
/// `bitrev_M(s)`, i.e. LDE storage row `s`).
#[allow(clippy::too_many_arguments)]
pub fn quotient_values(
    air: &CompiledAir,
    log_n: usize,
    log_blowup: usize,
    block_rows: usize,
    fetch: &QuotientFetch<'_>,
    challenges: &LogupChallenges,
    bus_sum: Ext3,
    alpha: Ext3,
) -> Result<Vec<Ext3>, BackendError> {
    let n = 1usize << log_n;
    let log_q = quotient_log_extension(air.num_quotient_chunks, log_blowup);
    let log_m = log_n + log_q;
    let m_size = 1usize << log_m;
    let bq = 1usize << log_q;
    // Storage row s < M holds natural point bitrev_M(s). `q` is computed in storage order, then permuted
    // to natural order for the interpolation.
    let block_rows = block_rows.min(m_size);
    if !block_rows.is_power_of_two() || block_rows < n {
        return Err(BackendError::Commit(format!(
            "quotient block of {block_rows} rows for a table of {n} rows"
        )));
    }
    let br = |i: usize| reverse_bits(i, log_m);
    let g = coset_shift();
    let omega_m = domain_generator(log_m);
    let omega_last = domain_generator(log_n).exp_u64(n as u64 - 1);
    let n_inv = F::from_u64(n as u64).inverse();
    // Points, Z_H (period M/n), selector denominators.
    let mut xs = Vec::with_capacity(m_size);
    let mut x = g;
    for _ in 0..m_size {
        xs.push(x);
        x *= omega_m;
    }
    let g_n = g.exp_u64(n as u64);
    let omega_q = domain_generator(log_q);
    let zh: Vec<F> = (0..bq)
        .map(|i| g_n * omega_q.exp_u64(i as u64) - F::ONE)
        .collect();
    let mut zh_inv = zh.clone();
    batch_inverse_f(&mut zh_inv);
    let mut inv_first: Vec<F> = xs.iter().map(|&x| x - F::ONE).collect();
    batch_inverse_f(&mut inv_first);
    let mut inv_last: Vec<F> = xs.iter().map(|&x| x - omega_last).collect();
    batch_inverse_f(&mut inv_last);
    let n_ext = air.logup.num_ext_columns();
    let fold = air.fold_challenge(alpha);
    const CHUNK: usize = 1 << 10;
    let mut q = vec![Ext3::ZERO; m_size];
    for (b, q) in q.chunks_mut(block_rows).enumerate() {
        let inputs = fetch(b)?;
        let main = (inputs.main.0.as_ref(), inputs.main.1);
        let prep = inputs.preprocessed.as_ref().map(|(m, o)| (m.as_ref(), *o));
        let aux = inputs.aux.as_ref().map(|(m, o)| (m.as_ref(), *o));
        let first = b * block_rows;
        q.par_chunks_mut(CHUNK).enumerate().for_each(|(ci, out)| {
            let mut vals: Vec<F> = Vec::new();
            let mut aux_local = vec![Ext3::ZERO; n_ext];
            let mut aux_next = vec![Ext3::ZERO; n_ext];
            for (bi, out) in out.chunks_mut(BLOCK).enumerate() {
                let len = out.len();
                let mut blk = LdeBlock {
                    main,
                    prep,
                    len,
                    cur: [0; BLOCK],
                    nxt: [0; BLOCK],
                    sel: [[F::ZERO; BLOCK]; 3],
                };
                let mut zinv = [F::ZERO; BLOCK];
                for (r, zi) in zinv.iter_mut().enumerate().take(len) {
                    // Storage row `cur` (bit-reversed) holds natural point `i`; its next point `i + M/n` lies
                    // in the same block of n storage rows (one coset of H_n), which keeps the reads local.
                    let cur = first + ci * CHUNK + bi * BLOCK + r;
                    let i = br(cur);
                    let z = zh[i % bq];
                    blk.cur[r] = cur - first;
                    blk.nxt[r] = br((i + bq) % m_size) - first;
                    blk.sel[0][r] = z * n_inv * inv_first[i];
                    blk.sel[1][r] = omega_last * z * n_inv * inv_last[i];
                    blk.sel[2][r] = xs[i] - omega_last;
                    *zi = zh_inv[i % bq];
                }
                air.circuit.eval_block(&blk, &air.public_values, &mut vals);
                // The table's fold plan (`CompiledAir::fold_row`, as the verifier's `eval_folded`).
                let mut acc = [Ext3::ZERO; BLOCK];
                for (r, a) in acc.iter_mut().enumerate().take(len) {
                    if let Some((m, off)) = aux {
                        let (row, row_next) = (m.row(off + blk.cur[r]), m.row(off + blk.nxt[r]));
                        for c in 0..n_ext {
                            aux_local[c] = ext_at(row, c);
                            aux_next[c] = ext_at(row_next, c);
                        }
                    }
                    *a = air.fold_row(
                        |k| vals[k as usize * len + r],
                        [blk.sel[0][r], blk.sel[1][r], blk.sel[2][r]],
                        &aux_local,
                        &aux_next,
                        challenges,
                        bus_sum,
                        &fold,
                    );
                }
                for ((o, a), z) in out.iter_mut().zip(acc).zip(zinv) {
                    *o = a * z;
                }
            }
        });
    }
    Ok(q)
}

/// The second step of [`quotient_host`]: from `q` on `g·H_M` in storage order ([`quotient_values`], `M` a
/// power of two `>= n`), the `n x 3 chunks` matrix of the chunks `q_j` on `H_n` (natural order): bit-reverse
/// to natural order, coset IDFT of size `M` with shift `g`, coefficients `j n .. (j + 1) n` to chunk `j`
/// (those at `>= chunks · n` dropped), DFT of each chunk.
pub fn quotient_chunks(mut q: Vec<Ext3>, log_n: usize, chunks: usize) -> RowMajorMatrix {
    let n = 1usize << log_n;
    let g = coset_shift();
    bit_reverse_slice(&mut q);
    let coeffs = coset_idft_ext(&q, g);
    let mut m = vec![F::ZERO; n * 3 * chunks];
    for j in 0..chunks {
        for r in 0..n {
            let c = coeffs.get(j * n + r).copied().unwrap_or(Ext3::ZERO);
            m[r * 3 * chunks + 3 * j..r * 3 * chunks + 3 * j + 3].copy_from_slice(&c.0);
        }
    }
    dft_batch(RowMajorMatrix::new(m, 3 * chunks))
}
