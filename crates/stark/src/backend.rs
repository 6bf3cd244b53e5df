//! The backend seam: the proving phases a backend implements, with the CPU implementation.
//!
//! Phases (in protocol order, see docs/stark.md):
//! 1. [`ProverBackend::commit`]: traces (natural order, `n x w` each) -> bit-reversed LDEs on `g·H_{nB}` ->
//!    one mixed-height Merkle tree. Input is a [`TraceInput`]: a host matrix, or a buffer already resident
//!    on the backend (`Self::DeviceTrace`), so a trace generated on a GPU enters the commitment without a
//!    round trip through the host.
//! 2. [`ProverBackend::build_aux`]: the LogUp aux trace of one table, from the committed main (and
//!    preprocessed) round; it may stay resident on the backend for the aux commitment.
//! 3. [`ProverBackend::quotient`]: the quotient chunks of one table, from its LDEs.
//! 4. [`ProverBackend::open`]: DEEP openings + FRI over all committed rounds.
//!
//! Ownership: `Self::Committed` owns whatever the backend keeps of a round (LDEs, tree layers), on the host
//! or on a device. Phases 2 and 3 have default implementations that run on the host; they read host copies
//! through [`ProverBackend::host_trace`] / [`ProverBackend::host_lde`] (a device backend returns
//! `Cow::Owned` copies there, an explicit and documented download). A GPU backend overrides `commit` first
//! and may keep the defaults for the rest.
//!
//! Every phase is deterministic (same inputs, same bytes), so proofs from two backends can be compared
//! byte for byte.

use std::borrow::Cow;
use std::convert::Infallible;

use rayon::prelude::*;
use thiserror::Error;

use crate::air::CompiledAir;
use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::logup::{self, LogupChallenges, LogupError};
use crate::matrix::RowMajorMatrix;
use crate::merkle::{Digest, MatrixDims, MerkleTree};
use crate::pcs::{self, FriConfig, OpenedValues, PcsProof};
use crate::poly::{
    bit_reverse_slice, coset_idft_ext, coset_shift, dft_batch, domain_generator, idft_batch,
    lde_batch, lde_coset_block, lde_from_coeffs, lde_rows, reverse_bits,
};
use crate::profile::span;
use crate::symbolic::{BlockLeaves, Node};
use crate::transcript::Transcript;
use crate::zk::{self, ZkRng};

/// A trace handed to [`ProverBackend::commit`]: on the host, or already resident on the backend.
pub enum TraceInput<D> {
    /// `n x w` row-major, natural order.
    Host(RowMajorMatrix),
    /// A backend buffer holding the same data.
    Device(D),
}

/// Backend failures (device errors, unsupported inputs).
#[derive(Debug, Error)]
pub enum BackendError {
    #[error("commit: {0}")]
    Commit(String),
    #[error("device: {0}")]
    Device(String),
}

/// Why [`ProverBackend::build_aux`] failed: the trace breaks a LogUp precondition, or the backend failed.
#[derive(Debug, Error)]
pub enum AuxError {
    #[error(transparent)]
    Logup(#[from] LogupError),
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// Rows `0, stride, 2 stride, ..` of `m` (`ceil(h / stride) x w`); `m` itself for a stride of 0 or 1. With
/// stride 2 this is [`crate::zk::even_rows`]: the trace inside a zk-randomized committed trace.
pub fn strided_rows(m: Cow<'_, RowMajorMatrix>, stride: usize) -> Cow<'_, RowMajorMatrix> {
    if stride <= 1 {
        return m;
    }
    let w = m.width;
    let v: Vec<F> = m
        .values
        .chunks(stride * w)
        .flat_map(|c| c[..w].iter().copied())
        .collect();
    Cow::Owned(RowMajorMatrix::new(v, w))
}

/// Shape of a committed trace (before the blowup).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceDims {
    pub width: usize,
    pub log_height: usize,
}

/// The proving phases. See the module docs.
pub trait ProverBackend: Sync {
    /// A trace resident on the backend (e.g. a device buffer). `Infallible` for the CPU.
    type DeviceTrace;
    /// One committed round: LDEs and Merkle tree (wherever the backend keeps them).
    type Committed;

    /// Commit `traces` (each `n_i x w_i`, natural order, `n_i` a power of two, `w_i >= 1`): LDE with
    /// blowup `2^log_blowup` (bit-reversed rows on `g·H`) and one mixed-height Merkle tree over all of them,
    /// in the given order. Returns the root.
    ///
    /// `salt = Some((rng, round))` (zk mode): a salted tree, [`MerkleTree::new_salted`] with the salts of
    /// stream `(DOMAIN_SALT, round, ..)` of `rng`, reproduced bit-exactly by every backend.
    fn commit(
        &self,
        traces: Vec<TraceInput<Self::DeviceTrace>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
    ) -> Result<(Digest, Self::Committed), BackendError>;

    /// zk mode: the randomized trace of [`zk::randomize_trace`] (`n x w` -> `2n x w`, even rows the trace,
    /// odd rows stream `(DOMAIN_TRACE, round, table, i)`), before [`ProverBackend::commit`]. The default
    /// randomizes host traces on the host and refuses device traces; a device backend overrides it for
    /// `TraceInput::Device` (bit-exact with the host function).
    fn randomize_trace(
        &self,
        trace: TraceInput<Self::DeviceTrace>,
        rng: &ZkRng,
        round: u32,
        table: u64,
    ) -> Result<TraceInput<Self::DeviceTrace>, BackendError> {
        match trace {
            TraceInput::Host(m) => Ok(TraceInput::Host(zk::randomize_trace(&m, rng, round, table))),
            TraceInput::Device(_) => Err(BackendError::Commit(
                "this backend cannot randomize a device-resident trace".into(),
            )),
        }
    }

    /// Called once per proof with the compiled tables (table order), before the main commitment, so that a
    /// backend can start work that depends only on the AIRs (e.g. compiling generated kernels in the
    /// background while the traces are committed). Default: nothing.
    fn prepare(&self, airs: &[CompiledAir]) {
        let _ = airs;
    }

    /// Shapes of the committed traces (before the blowup), in commit order.
    fn trace_dims(&self, committed: &Self::Committed) -> Vec<TraceDims>;

    /// Host view of committed trace `i` (`n x w`, natural order). A device backend may download it here;
    /// a failed download is [`BackendError::Device`].
    fn host_trace<'a>(
        &self,
        committed: &'a Self::Committed,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError>;

    /// Host view of the LDE of committed trace `i` (`nB x w`, bit-reversed rows). A device backend may
    /// download it here; a failed download is [`BackendError::Device`].
    fn host_lde<'a>(
        &self,
        committed: &'a Self::Committed,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError>;

    /// Storage rows `[start, start + rows)` of the LDE of committed trace `i` (bit-reversed; for `start`
    /// and `rows` multiples of a power of two `r`, the values on one coset of `H_r`), as a matrix `m` and
    /// the row of `m` where they begin: what the quotient reads, block by block. Default: the whole
    /// [`ProverBackend::host_lde`] and `start`.
    fn host_lde_rows<'a>(
        &self,
        committed: &'a Self::Committed,
        i: usize,
        start: usize,
        rows: usize,
    ) -> Result<(Cow<'a, RowMajorMatrix>, usize), BackendError> {
        let _ = rows;
        Ok((self.host_lde(committed, i)?, start))
    }

    /// LogUp aux trace of table `table` (`n x aux_width`, natural order) and its bus sum. The table's main
    /// trace is committed trace `table` of the round `main`, read with row stride `main_row_stride`
    /// (logical row `r` = committed row `main_row_stride * r`: 1, or 2 in zk mode where the committed main
    /// trace is the `2n`-row randomized one whose even rows are the trace); its preprocessed trace, if it
    /// has one, is `preprocessed = Some((round, index))` (stride 1: never randomized). The aux trace may come
    /// back resident on the backend (`TraceInput::Device`), ready for the aux commitment; it must equal
    /// [`logup::build_aux_trace`] on the host copies ([`strided_rows`] of the main one) bit for bit, and fail
    /// with the same [`LogupError`]. Default: host implementation [`logup::build_aux_trace`] on
    /// [`ProverBackend::host_trace`] copies.
    #[allow(clippy::too_many_arguments)]
    fn build_aux(
        &self,
        air: &CompiledAir,
        main: &Self::Committed,
        table: usize,
        main_row_stride: usize,
        preprocessed: Option<(&Self::Committed, usize)>,
        challenges: &LogupChallenges,
        log_max_multiplicity: u32,
    ) -> Result<(TraceInput<Self::DeviceTrace>, Ext3), AuxError> {
        let main = strided_rows(self.host_trace(main, table)?, main_row_stride);
        let prep = match preprocessed {
            Some((c, i)) => Some(self.host_trace(c, i)?),
            None => None,
        };
        let (aux, sum) = logup::build_aux_trace(
            air,
            &main,
            prep.as_deref(),
            challenges,
            log_max_multiplicity,
        )?;
        Ok((TraceInput::Host(aux), sum))
    }

    /// Called once the last reader of the committed traces (natural order) of `committed` is done: after
    /// the aux builds for the main and preprocessed rounds, right after `commit` for the others. A backend
    /// that keeps natural-order copies of committed traces for [`ProverBackend::build_aux`] frees them
    /// here; [`ProverBackend::host_trace`] may fail on this round afterwards. Default: nothing to free.
    fn release_traces(&self, committed: &Self::Committed) {
        let _ = committed;
    }

    /// Quotient chunks of one table as a trace: `n x 3c` (natural order on `H_n`), where extension column
    /// `j` (base columns `3j..3j+3`) holds `q_j`, and `q(X) = sum_j X^(j n) q_j(X)` with
    /// `q = C / Z_H`, `n = 2^log_n`. The LDE rows come block by block from `fetch` ([`QuotientInputs`],
    /// blocks of `block_rows` storage rows). Default: host implementation [`quotient_host`].
    #[allow(clippy::too_many_arguments)]
    fn quotient<'a>(
        &self,
        air: &CompiledAir,
        log_n: usize,
        log_blowup: usize,
        block_rows: usize,
        fetch: &QuotientFetch<'a>,
        challenges: &LogupChallenges,
        bus_sum: Ext3,
        alpha: Ext3,
    ) -> Result<RowMajorMatrix, BackendError> {
        quotient_host(
            air, log_n, log_blowup, block_rows, fetch, challenges, bus_sum, alpha,
        )
    }

    /// DEEP + FRI opening of `rounds` (`points[m]` per matrix of the round), as [`pcs::open`] (`hiding`:
    /// zk mode, salted FRI layers).
    fn open(
        &self,
        fri: &FriConfig,
        rounds: &[(&Self::Committed, Vec<Vec<Ext3>>)],
        transcript: &mut Transcript,
        hiding: Option<&ZkRng>,
    ) -> (OpenedValues, PcsProof);
}

/// Where [`CpuBackend`] keeps the LDE of a committed round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LdeMode {
    /// [`LdeMode::Recompute`] for a round whose LDE (`Σ 2^LH · w · 8` bytes) exceeds a quarter of the
    /// memory available when it is committed ([`available_memory_bytes`]: system, cgroup and `ulimit -v`),
    /// else [`LdeMode::Store`].
    #[default]
    Auto,
    /// Keep the whole bit-reversed LDE (`B` times the trace) and the natural-order traces: fastest, and
    /// `(1 + B) · 8` bytes per trace cell.
    Store,
    /// Keep only the coefficients (`8` bytes per trace cell) and the tree's digests: the commitment hashes
    /// one coset block of the LDE at a time ([`MerkleTree::from_coset_blocks`]), and every later reader
    /// recomputes what it needs (the quotient its cosets, the opening [`pcs::RoundLde::Coeffs`], the aux
    /// build the natural trace). Byte-identical proofs.
    Recompute,
}

impl LdeMode {
    /// `ZKRV_LDE=store|recompute|auto`; unset or empty means `auto`. Any other value (including one that is
    /// not UTF-8) is an error naming the variable.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("ZKRV_LDE") {
            Err(std::env::VarError::NotPresent) => Ok(LdeMode::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(format!(
                "ZKRV_LDE={v:?} is not UTF-8: expected `auto`, `store` or `recompute`"
            )),
            Ok(v) => match v.as_str() {
                "" | "auto" => Ok(LdeMode::Auto),
                "store" => Ok(LdeMode::Store),
                "recompute" => Ok(LdeMode::Recompute),
                other => Err(format!(
                    "ZKRV_LDE={other:?}: expected `auto`, `store` or `recompute`"
                )),
            },
        }
    }
}

/// Bytes this process can still allocate, as far as the OS says: the smallest of `MemAvailable`
/// (`/proc/meminfo`), the cgroup's `memory.max - memory.current` (cgroup v2, when a limit is set), and
/// `RLIMIT_AS` minus the current virtual size (`ulimit -v`, when set). `None` when none can be read.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = || -> Option<u64> {
        let s = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
        Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
    };
    let cgroup = || -> Option<u64> {
        let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
        let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max" (no limit) does not parse
        let cur: u64 = read("memory.current")?.trim().parse().ok()?;
        Some(max.saturating_sub(cur))
    };
    let rlimit_as = || -> Option<u64> {
        let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max address space"))?;
        let soft: u64 = line.split_whitespace().nth(3)?.parse().ok()?; // "unlimited" does not parse
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let vm = status.lines().find(|l| l.starts_with("VmSize:"))?;
        let size = vm.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024;
        Some(soft.saturating_sub(size))
    };
    [meminfo(), cgroup(), rlimit_as()]
        .into_iter()
        .flatten()
        .min()
}

/// The CPU backend (rayon-parallel host code). `lde` chooses, per committed round, whether the LDE is
/// stored or recomputed ([`LdeMode`]); proofs are byte-identical either way.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend {
    pub lde: LdeMode,
}

impl CpuBackend {
    /// A CPU backend with the given LDE mode.
    pub const fn new(lde: LdeMode) -> Self {
        Self { lde }
    }
}

/// A round committed by [`CpuBackend`]: the tree over the LDEs and what the round keeps to read them.
#[derive(Debug)]
pub struct CpuCommitted {
    /// With [`LdeMode::Store`] the tree holds the LDEs; with [`LdeMode::Recompute`] only digests.
    pub tree: MerkleTree,
    data: CpuRound,
}

#[derive(Debug)]
enum CpuRound {
    /// The natural-order traces (`n x w`); the LDEs are the tree's matrices.
    Stored { traces: Vec<RowMajorMatrix> },
    /// The coefficients of every column (`n x w`, `X^0` first).
    Coeffs {
        coeffs: Vec<RowMajorMatrix>,
        log_blowup: usize,
    },
}

impl CpuCommitted {
    /// Whether the round keeps coefficients and recomputes its LDE ([`LdeMode::Recompute`]).
    pub fn recomputes_lde(&self) -> bool {
        matches!(self.data, CpuRound::Coeffs { .. })
    }
}

impl ProverBackend for CpuBackend {
    type DeviceTrace = Infallible;
    type Committed = CpuCommitted;

    fn commit(
        &self,
        traces: Vec<TraceInput<Infallible>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
    ) -> Result<(Digest, CpuCommitted), BackendError> {
        let traces: Vec<RowMajorMatrix> = traces
            .into_iter()
            .map(|t| match t {
                TraceInput::Host(m) => m,
                TraceInput::Device(never) => match never {},
            })
            .collect();
        if traces.is_empty() {
            return Err(BackendError::Commit("no traces".into()));
        }
        for (i, t) in traces.iter().enumerate() {
            if t.width == 0 || t.log_height().is_none() {
                return Err(BackendError::Commit(format!(
                    "trace {i}: {} x {} is not a power-of-two height with width >= 1",
                    t.height(),
                    t.width
                )));
            }
        }
        let lde_bytes: u64 = traces
            .iter()
            .map(|t| ((t.values.len() as u64) << log_blowup) * 8)
            .sum();
        let recompute = match self.lde {
            LdeMode::Store => false,
            LdeMode::Recompute => true,
            LdeMode::Auto => available_memory_bytes().is_some_and(|a| lde_bytes > a / 4),
        };
        let salt = salt.as_ref().map(|(r, round)| (r, *round));
        if !recompute {
            let s_lde = span("LDE");
            let ldes: Vec<RowMajorMatrix> = traces
                .par_iter()
                .map(|t| lde_batch(t, log_blowup))
                .collect();
            drop(s_lde);
            let tree = {
                let _s = span("Merkle");
                MerkleTree::new_salted(ldes, salt)
            };
            return Ok((
                tree.root(),
                CpuCommitted {
                    tree,
                    data: CpuRound::Stored { traces },
                },
            ));
        }
        // Recompute: natural -> coefficients in place, then the tree one coset block at a time.
        let s_lde = span("LDE");
        let coeffs: Vec<RowMajorMatrix> = traces.into_par_iter().map(idft_batch).collect();
        drop(s_lde);
        let dims: Vec<MatrixDims> = coeffs
            .iter()
            .map(|c| MatrixDims {
                width: c.width,
                log_height: c.height().trailing_zeros() as usize + log_blowup,
            })
            .collect();
        let salts = match salt {
            None => Vec::new(),
            Some((rng, round)) => crate::merkle::level_heights_of(&dims)
                .into_iter()
                .map(|lh| zk::salt_matrix(rng, round, lh))
                .collect(),
        };
        let tree = {
            let _s = span("LDE blocks + Merkle");
            MerkleTree::from_coset_blocks(dims, salts, log_blowup, |c| {
                coeffs
                    .par_iter()
                    .map(|m| lde_coset_block(m, log_blowup, c))
                    .collect()
            })
        };
        Ok((
            tree.root(),
            CpuCommitted {
                tree,
                data: CpuRound::Coeffs { coeffs, log_blowup },
            },
        ))
    }

    fn trace_dims(&self, c: &CpuCommitted) -> Vec<TraceDims> {
        let lb = match &c.data {
            CpuRound::Stored { traces } => {
                return traces
                    .iter()
                    .map(|t| TraceDims {
                        width: t.width,
                        log_height: t.height().trailing_zeros() as usize,
                    })
                    .collect()
            }
            CpuRound::Coeffs { log_blowup, .. } => *log_blowup,
        };
        c.tree
            .dims()
            .iter()
            .map(|d| TraceDims {
                width: d.width,
                log_height: d.log_height - lb,
            })
            .collect()
    }

    fn host_trace<'a>(
        &self,
        c: &'a CpuCommitted,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError> {
        match &c.data {
            CpuRound::Stored { traces } => Ok(Cow::Borrowed(&traces[i])),
            CpuRound::Coeffs { coeffs, .. } => Ok(Cow::Owned(dft_batch(coeffs[i].clone()))),
        }
    }

    fn host_lde<'a>(
        &self,
        c: &'a CpuCommitted,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError> {
        match &c.data {
            CpuRound::Stored { .. } => Ok(Cow::Borrowed(&c.tree.matrices()[i])),
            CpuRound::Coeffs { coeffs, log_blowup } => {
                Ok(Cow::Owned(lde_from_coeffs(&coeffs[i], *log_blowup)))
            }
        }
    }

    fn host_lde_rows<'a>(
        &self,
        c: &'a CpuCommitted,
        i: usize,
        start: usize,
        rows: usize,
    ) -> Result<(Cow<'a, RowMajorMatrix>, usize), BackendError> {
        match &c.data {
            CpuRound::Stored { .. } => Ok((Cow::Borrowed(&c.tree.matrices()[i]), start)),
            CpuRound::Coeffs { coeffs, log_blowup } => Ok((
                Cow::Owned(lde_rows(&coeffs[i], *log_blowup, start, rows)),
                0,
            )),
        }
    }

    fn open(
        &self,
        fri: &FriConfig,
        rounds: &[(&CpuCommitted, Vec<Vec<Ext3>>)],
        transcript: &mut Transcript,
        hiding: Option<&ZkRng>,
    ) -> (OpenedValues, PcsProof) {
        let rounds: Vec<(pcs::RoundLde, Vec<Vec<Ext3>>)> = rounds
            .iter()
            .map(|(c, p)| {
                let lde = match &c.data {
                    CpuRound::Stored { .. } => pcs::RoundLde::Stored(&c.tree),
                    CpuRound::Coeffs { coeffs, .. } => pcs::RoundLde::Coeffs {
                        tree: &c.tree,
                        coeffs,
                    },
                };
                (lde, p.clone())
            })
            .collect();
        pcs::open_rounds(fri, &rounds, transcript, hiding)
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
    let n = 1usize << log_n;
    let chunks = air.num_quotient_chunks;
    let log_q = (chunks.next_power_of_two().trailing_zeros() as usize).min(log_blowup);
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
                air.circuit.eval_block(&blk, &mut vals);
                // Same fold as `CompiledAir::eval_folded`: own constraints with precomputed powers, then the
                // LogUp constraints by Horner.
                let mut acc = [Ext3::ZERO; BLOCK];
                for (c, p) in air.constraints.iter().zip(&fold.powers) {
                    let v = &vals[c.node as usize * len..(c.node as usize + 1) * len];
                    for (a, x) in acc.iter_mut().zip(v) {
                        *a += *p * *x;
                    }
                }
                if let (Some((a, off)), false) = (aux, air.interactions.is_empty()) {
                    for r in 0..len {
                        let (row, row_next) = (a.row(off + blk.cur[r]), a.row(off + blk.nxt[r]));
                        for c in 0..n_ext {
                            aux_local[c] = ext_at(row, c);
                            aux_next[c] = ext_at(row_next, c);
                        }
                        let mut l = Ext3::ZERO;
                        logup::fold_constraints(
                            &air.logup,
                            &air.interactions,
                            |k| vals[k as usize * len + r],
                            [blk.sel[0][r], blk.sel[1][r], blk.sel[2][r]],
                            &aux_local,
                            &aux_next,
                            challenges,
                            bus_sum,
                            fold.alpha,
                            &mut l,
                        );
                        acc[r] += l;
                    }
                }
                for ((o, a), z) in out.iter_mut().zip(acc).zip(zinv) {
                    *o = a * z;
                }
            }
        });
    }
    bit_reverse_slice(&mut q);
    let coeffs = coset_idft_ext(&q, g);
    let mut m = vec![F::ZERO; n * 3 * chunks];
    for j in 0..chunks {
        for r in 0..n {
            let c = coeffs.get(j * n + r).copied().unwrap_or(Ext3::ZERO);
            m[r * 3 * chunks + 3 * j..r * 3 * chunks + 3 * j + 3].copy_from_slice(&c.0);
        }
    }
    Ok(dft_batch(RowMajorMatrix::new(m, 3 * chunks)))
}
