//! What a proof keeps in memory when every committed round is stored (LDE + Merkle tree), computed from the
//! tables' shapes before any work starts ([`ProofFootprint::estimate`]), so that a backend with a fixed
//! memory (a GPU) can refuse a proof it cannot hold with one clear error instead of failing mid-proof
//! ([`super::CommitOps::reserve`]).
//!
//! The model follows the prover (docs/stark.md §2-§5) and the buffers of a storing backend (docs/gpu.md,
//! "VRAM accounting"): every element is 8 bytes, every digest 32.
//! - A committed round of matrices `rows_i x w_i` with blowup `B`: LDEs `8 · rows_i · B · w_i` bytes, one
//!   mixed-height tree `32 · (2 H - 1)` bytes (`H` = the largest LDE height), in zk mode one salt matrix
//!   `H_l x 2` per distinct LDE height `H_l`.
//! - Natural-order traces of the main and preprocessed rounds stay until the last aux build
//!   (`8 · rows · w` each), the aux traces until the aux commitment.
//! - The opening: one DEEP codeword per LDE height (`24 · H_l` bytes, alive until FRI folds into them)
//!   and per FRI layer its codeword plus its tree (`24 · 2^s + 32 · 2^s`, kept to the end: `112 · H`).
//! - The quotient chunks of every table (and the zk random codeword) as traces, until their commitment.
//! - Scratch: the largest single LDE (`8 · rows · w` of coefficients) or quotient (`24 · M` values of
//!   `C / Z_H` on the quotient domain plus `2 · 8 · n · 3c` for the chunk transforms), whichever is larger.
//!
//! Phases: the main and preprocessed rounds live to the end; the traces and scratch peak in the aux phase;
//! the aux and quotient rounds and the opening's codewords come after ([`ProofFootprint::total`]).
//! It is an estimate of the resident set, not of the allocator's fragmentation; `docs/PERF.md` compares
//! it with measured peaks.

use std::fmt;

use crate::air::CompiledAir;
use crate::config::StarkConfig;

/// Bytes of one committed round when stored: LDEs, tree levels, salt matrices (zk).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundFootprint {
    pub lde: u64,
    pub tree: u64,
    pub salts: u64,
    /// log2 of the largest LDE height (0 for an empty round).
    pub log_top: usize,
    /// log2 of the round's blowup.
    pub log_blowup: usize,
}

impl RoundFootprint {
    /// The round committing `matrices[i] = (log_rows, width)` with blowup `2^log_blowup`.
    pub fn new(matrices: &[(usize, usize)], log_blowup: usize, zk: bool) -> Self {
        let mut r = RoundFootprint {
            log_blowup,
            ..RoundFootprint::default()
        };
        let mut heights: Vec<usize> = Vec::new();
        for &(lr, w) in matrices {
            let lh = lr + log_blowup;
            r.lde += (8 * w as u64) << lh;
            heights.push(lh);
        }
        heights.sort_unstable();
        heights.dedup();
        if let Some(&top) = heights.last() {
            r.tree = 32 * ((2u64 << top) - 1);
            r.log_top = top;
        }
        if zk {
            r.salts = heights.iter().map(|&lh| 16u64 << lh).sum();
        }
        r
    }

    pub fn total(&self) -> u64 {
        self.lde + self.tree + self.salts
    }

    /// Bytes of the traces' coefficients (`8 · rows · w` each): what a recomputing backend keeps instead of
    /// the LDEs.
    pub fn coeffs(&self) -> u64 {
        self.lde >> self.log_blowup
    }

    /// Bytes of the tree without its lowest `cap` levels (levels `0 ..= max(L - cap, log_blowup)`); 0 for
    /// an empty round.
    pub fn capped_tree(&self, cap: usize) -> u64 {
        if self.lde == 0 {
            return 0;
        }
        let c = self.log_top.saturating_sub(cap).max(self.log_blowup);
        32 * ((2u64 << c) - 1)
    }

    /// Bytes of hashing one coset block of the round at once: the block of every matrix (as much as the
    /// coefficients), its subtree (`32 · 2 H / B`) and, in zk mode, its salt rows.
    pub fn block(&self) -> u64 {
        if self.lde == 0 {
            return 0;
        }
        self.coeffs()
            + (64u64 << (self.log_top - self.log_blowup))
            + (self.salts >> self.log_blowup)
    }
}

/// Memory of one proof with every round stored (see the module docs), in bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProofFootprint {
    pub main: RoundFootprint,
    pub preprocessed: RoundFootprint,
    pub aux: RoundFootprint,
    pub quotient: RoundFootprint,
    /// Natural-order main and preprocessed traces and the aux traces, alive together during the aux phase.
    pub traces: u64,
    /// Every table's quotient chunks (and the zk random codeword) as traces, alive together from the
    /// quotient phase into the quotient commitment.
    pub quotient_traces: u64,
    /// DEEP codewords and FRI layers (values and trees).
    pub fri: u64,
    /// The largest transient buffer (one LDE's coefficients or one table's quotient).
    pub scratch: u64,
    /// Bytes of input traces already resident on the backend when the proof starts (part of `traces`).
    pub resident_inputs: u64,
    /// log2 of the largest DEEP codeword (the first FRI layer's height).
    pub fri_log_top: usize,
    /// The largest single committed trace (`8 · rows · w`; main, aux, quotient): one coset block of it is
    /// what a recomputing backend holds while it evaluates or builds DEEP terms.
    pub largest_trace: u64,
    /// A recomputing backend's quotient transients, the largest over the tables: `C / Z_H` and its natural
    /// copy (`48 · M`), the chunk transforms and zk masking (`8 · 3c · n` five times over), and one
    /// `n`-row block of each LDE the table's quotient reads (`8 n (w + aux + preprocessed)`).
    pub quotient_blocks: u64,
    /// log2 of the largest (I)DFT the proof runs (a committed trace, a quotient domain, a zk quotient
    /// chunk): what a backend's twiddle tables must cover.
    pub log_max_transform: usize,
}

impl ProofFootprint {
    /// The footprint of proving `airs` with main traces of `2^log_heights[t]` rows (before zk
    /// randomization), preprocessed traces of `prep_widths[t]` columns where a table has one, under
    /// `config`. `resident_inputs`: bytes of the main traces already on the backend.
    pub fn estimate(
        airs: &[CompiledAir],
        log_heights: &[usize],
        prep_widths: &[Option<usize>],
        config: &StarkConfig,
        resident_inputs: u64,
    ) -> Self {
        let zk = config.zk as usize;
        let lb = config.fri.log_blowup;
        let main: Vec<(usize, usize)> = airs
            .iter()
            .zip(log_heights)
            .map(|(a, &lh)| (lh + zk, a.width))
            .collect();
        let prep: Vec<(usize, usize)> = log_heights
            .iter()
            .zip(prep_widths)
            .filter_map(|(&lh, w)| w.map(|w| (lh, w)))
            .collect();
        let aux: Vec<(usize, usize)> = airs
            .iter()
            .zip(log_heights)
            .filter(|(a, _)| !a.interactions.is_empty())
            .map(|(a, &lh)| (lh + zk, a.logup.aux_width()))
            .collect();
        let mut quot: Vec<(usize, usize)> = airs
            .iter()
            .zip(log_heights)
            .map(|(a, &lh)| {
                if config.zk {
                    let (count, _) = crate::zk::quotient_layout(
                        a.num_quotient_chunks,
                        lh,
                        config.fri.num_queries,
                    );
                    (lh + 1, 3 * count)
                } else {
                    (lh, 3 * a.num_quotient_chunks)
                }
            })
            .collect();
        let log_max = log_heights.iter().copied().max().unwrap_or(0);
        if config.zk {
            quot.push((crate::zk::codeword_log_height(&config.fri, log_max + 1), 3));
        }
        let bytes =
            |m: &[(usize, usize)]| -> u64 { m.iter().map(|&(lr, w)| (8 * w as u64) << lr).sum() };
        let traces = bytes(&main) + bytes(&prep) + bytes(&aux);
        let quotient_traces = bytes(&quot);
        // DEEP codewords: one per LDE height of the opened rounds; FRI layers below the largest.
        let mut heights: Vec<usize> = main
            .iter()
            .chain(&aux)
            .chain(&quot)
            .map(|&(lr, _)| lr + lb)
            .collect();
        heights.sort_unstable();
        heights.dedup();
        let top = heights.last().copied().unwrap_or(0);
        // Every FRI layer of `2^s` values (s <= top) keeps its values and tree (`24 + 32` bytes per value)
        // to the end: `112 · 2^top` in all; the lower DEEP codewords wait to be rolled in.
        let fri = heights[..heights.len().saturating_sub(1)]
            .iter()
            .map(|&lh| 24u64 << lh)
            .sum::<u64>()
            + (112u64 << top);
        let lde_scratch = main
            .iter()
            .chain(&aux)
            .chain(&quot)
            .map(|&(lr, w)| (8 * w as u64) << lr);
        let quotient_scratch = airs.iter().zip(log_heights).map(|(a, &lh)| {
            let c = a.num_quotient_chunks;
            let log_q = (c.next_power_of_two().trailing_zeros() as usize).min(lb + zk);
            (24u64 << (lh + log_q)) + ((2 * 8 * 3 * c as u64) << lh)
        });
        let scratch = lde_scratch.chain(quotient_scratch).max().unwrap_or(0);
        let log_max_transform = airs
            .iter()
            .zip(log_heights)
            .map(|(a, &lh)| {
                let c = a.num_quotient_chunks;
                let log_q = (c.next_power_of_two().trailing_zeros() as usize).min(lb + zk);
                (lh + zk).max(lh + log_q)
            })
            .chain(quot.iter().map(|&(lr, _)| lr))
            .max()
            .unwrap_or(0);
        let largest_trace = main
            .iter()
            .chain(&aux)
            .chain(&quot)
            .map(|&(lr, w)| (8 * w as u64) << lr)
            .max()
            .unwrap_or(0);
        let quotient_blocks = airs
            .iter()
            .zip(log_heights)
            .zip(prep_widths)
            .map(|((a, &lh), pw)| {
                let c = a.num_quotient_chunks as u64;
                let log_q = (a.num_quotient_chunks.next_power_of_two().trailing_zeros() as usize)
                    .min(lb + zk);
                let aux_w = if a.interactions.is_empty() {
                    0
                } else {
                    a.logup.aux_width()
                };
                let w = (a.width + aux_w + pw.unwrap_or(0)) as u64;
                (48u64 << (lh + log_q)) + ((5 * 8 * 3 * c) << (lh + zk)) + ((8 * w) << lh)
            })
            .max()
            .unwrap_or(0);
        ProofFootprint {
            main: RoundFootprint::new(&main, lb, config.zk),
            preprocessed: RoundFootprint::new(&prep, lb + zk, false),
            aux: RoundFootprint::new(&aux, lb, config.zk),
            quotient: RoundFootprint::new(&quot, lb, config.zk),
            traces,
            quotient_traces,
            fri,
            scratch,
            resident_inputs,
            fri_log_top: top,
            largest_trace,
            quotient_blocks,
            log_max_transform,
        }
    }

    /// The peak of a backend that keeps only coefficients and trees without their lowest `cap` levels, and
    /// recomputes LDE rows one coset block at a time where they are read (the CUDA backend's `Recompute`
    /// mode), as the largest of its phases, each the rounds alive then (coefficients + capped trees) plus
    /// its transients: main commit (inputs turned into coefficients, one block hashed), aux phase (the aux
    /// traces, one natural main trace rebuilt), aux commit, quotient (the chunks, one table's `C / Z_H` and
    /// its LDE blocks), quotient commit, opening (DEEP codewords, FRI layer values, capped FRI trees and the
    /// tree of the layer being committed, one matrix block for DEEP and evaluation). In zk mode the FRI layer
    /// salts are counted whether or not the backend keeps them.
    pub fn total_recompute(&self, cap: usize) -> u64 {
        let kept = |r: &RoundFootprint| r.coeffs() + r.capped_tree(cap);
        let (m, p, a, q) = (
            kept(&self.main),
            kept(&self.preprocessed),
            kept(&self.aux),
            kept(&self.quotient),
        );
        let main_commit = self.main.coeffs() + self.main.block() + self.main.capped_tree(cap);
        let aux_phase = m + p + self.aux.coeffs() + 2 * self.largest_trace;
        let aux_commit = m + p + self.aux.coeffs() + self.aux.block() + self.aux.capped_tree(cap);
        let quotient = m + p + a + self.quotient_traces + self.quotient_blocks;
        let quotient_commit = m
            + p
            + a
            + self.quotient.coeffs()
            + self.quotient.block()
            + self.quotient.capped_tree(cap);
        // Opening: the DEEP codewords of every height (`24 · 2^lh`), then FRI: layer 0's full tree and salts
        // while it is committed (`40 · 2^top`), at the end every layer's values and salts (`64 · 2^top`)
        // and capped trees.
        let top = self.fri_log_top;
        let deep = self.fri.saturating_sub(88u64 << top);
        let opening = m
            + p
            + a
            + q
            + (64u64 << top.saturating_sub(cap))
            + (deep + self.largest_trace)
                .max(deep + (40u64 << top))
                .max(64u64 << top);
        main_commit
            .max(aux_phase)
            .max(aux_commit)
            .max(quotient)
            .max(quotient_commit)
            .max(opening)
    }

    /// One line for the budget error of a recomputing proof: its total and the coefficients and capped
    /// trees it keeps.
    pub fn recompute_summary(&self, cap: usize) -> String {
        let c = self.main.coeffs()
            + self.preprocessed.coeffs()
            + self.aux.coeffs()
            + self.quotient.coeffs();
        let t = [&self.main, &self.preprocessed, &self.aux, &self.quotient]
            .iter()
            .map(|r| r.capped_tree(cap))
            .sum::<u64>();
        format!(
            "{} at the peak with LDEs recomputed per coset block: coefficients {}, trees {}, DEEP/FRI {}, scratch {}",
            gib(self.total_recompute(cap)),
            gib(c),
            gib(t),
            gib(self.fri),
            gib(self.scratch)
        )
    }

    /// The peak of a backend that stores every round until the opening is done: the main and
    /// preprocessed rounds, plus the larger of the aux phase (natural-order and aux traces, scratch) and
    /// the later phases (aux and quotient rounds, plus the opening's codewords or the quotient chunks and
    /// scratch of the quotient commitment).
    pub fn total(&self) -> u64 {
        self.main.total()
            + self.preprocessed.total()
            + (self.traces + self.scratch).max(
                self.aux.total()
                    + self.quotient.total()
                    + self.fri.max(self.quotient_traces + self.scratch),
            )
    }
}

/// `x` bytes in GiB with two decimals.
pub fn gib(x: u64) -> String {
    format!("{:.2} GiB", x as f64 / (1u64 << 30) as f64)
}

impl fmt::Display for ProofFootprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at the peak: main round {}, preprocessed {}, aux {}, quotient {}, traces {}, quotient chunks {}, DEEP/FRI {}, scratch {}",
            gib(self.total()),
            gib(self.main.total()),
            gib(self.preprocessed.total()),
            gib(self.aux.total()),
            gib(self.quotient.total()),
            gib(self.traces),
            gib(self.quotient_traces),
            gib(self.fri),
            gib(self.scratch)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{CommitOps, CpuBackend, LdeMode, TraceInput};
    use crate::field::{PrimeCharacteristicRing, F};
    use crate::matrix::RowMajorMatrix;

    /// The round model counts exactly the bytes a storing backend keeps: every LDE value, every tree
    /// digest, every salt value (mixed heights, zk and not).
    #[test]
    fn round_footprint_matches_a_stored_commitment() {
        let shapes = [(5usize, 3usize), (7, 1), (5, 10), (3, 4)];
        for (lb, zk) in [(1usize, false), (2, true), (3, false)] {
            let traces: Vec<TraceInput<std::convert::Infallible>> = shapes
                .iter()
                .map(|&(lr, w)| {
                    let v = (0..(w << lr))
                        .map(|i| F::from_u64(i as u64 * 7 + 1))
                        .collect();
                    TraceInput::Host(RowMajorMatrix::new(v, w))
                })
                .collect();
            let rng = crate::zk::ZkRng::from_test_seed(9);
            let salt = zk.then_some((rng, 3u32));
            let (_, c) = CpuBackend::new(LdeMode::Store)
                .commit(traces, lb, salt, crate::merkle::MerkleHash::Keccak256)
                .unwrap();
            let lde: u64 = c
                .tree
                .matrices()
                .iter()
                .map(|m| 8 * m.values.len() as u64)
                .sum();
            let tree: u64 = c.tree.layers().iter().map(|l| 32 * l.len() as u64).sum();
            let salts: u64 = c
                .tree
                .salts()
                .iter()
                .map(|m| 8 * m.values.len() as u64)
                .sum();
            let model = RoundFootprint::new(&shapes, lb, zk);
            assert_eq!(
                (model.lde, model.tree, model.salts),
                (lde, tree, salts),
                "lb {lb} zk {zk}"
            );
            let coeffs: u64 = shapes.iter().map(|&(lr, w)| (8 * w as u64) << lr).sum();
            assert_eq!(model.coeffs(), coeffs, "lb {lb}");
            // Levels 0 ..= L - 2 of a tree of 2^L leaves (L = 7 + lb) keep 2^(L-1) - 1 digests.
            assert_eq!(model.capped_tree(2), 32 * ((1u64 << (6 + lb)) - 1));
            assert_eq!(zk, salts > 0);
        }
    }
}
