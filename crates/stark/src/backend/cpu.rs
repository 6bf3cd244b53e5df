//! The CPU backend (rayon-parallel host code): commitments (stored or recomputed LDEs, [`LdeMode`]), the
//! LogUp aux build and explicit host copies. Its quotient is in `backend/quotient.rs`, its opening
//! operations in `backend/open.rs`. It is the reference every other backend is compared with, byte for
//! byte.

use std::borrow::Cow;
use std::convert::Infallible;

use rayon::prelude::*;

use super::{AuxError, AuxOps, Backend, BackendError, CommitOps, HostCopy, TraceDims, TraceInput};
use crate::air::CompiledAir;
use crate::field::Ext3;
use crate::logup::{self, LogupChallenges};
use crate::matrix::RowMajorMatrix;
use crate::merkle::{Digest, MatrixDims, MerkleHash, MerkleTree};
use crate::pcs::RoundLde;
use crate::poly::{dft_batch, idft_batch, lde_batch, lde_coset_block, lde_from_coeffs, lde_rows};
use crate::profile::span;
use crate::zk::{self, ZkRng};

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
    /// The mode named `auto`, `store` or `recompute` (`ZKRV_LDE`, read by the host: `zkrv_sdk::ProveOptions::from_env`);
    /// empty means `auto`; `None` for any other name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "" | "auto" => Some(LdeMode::Auto),
            "store" => Some(LdeMode::Store),
            "recompute" => Some(LdeMode::Recompute),
            _ => None,
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
    pub(crate) log_blowup: usize,
    data: CpuRound,
}

#[derive(Debug)]
enum CpuRound {
    /// The natural-order traces (`n x w`; empty for [`CpuCommitted::stored`]); the LDEs are the tree's
    /// matrices.
    Stored { traces: Vec<RowMajorMatrix> },
    /// The coefficients of every column (`n x w`, `X^0` first).
    Coeffs { coeffs: Vec<RowMajorMatrix> },
}

impl CpuCommitted {
    /// Whether the round keeps coefficients and recomputes its LDE ([`LdeMode::Recompute`]).
    pub fn recomputes_lde(&self) -> bool {
        matches!(self.data, CpuRound::Coeffs { .. })
    }

    /// A round from a tree whose matrices are bit-reversed LDEs of blowup `2^log_blowup` (no natural-order
    /// traces: [`AuxOps::build_aux`] and [`HostCopy::download_trace`] fail on it). For opening tests.
    pub fn stored(tree: MerkleTree, log_blowup: usize) -> Self {
        CpuCommitted {
            tree,
            log_blowup,
            data: CpuRound::Stored { traces: Vec::new() },
        }
    }

    /// A round from a digest-only tree ([`MerkleTree::from_coset_blocks`]) and, per matrix in commit
    /// order, its coefficients (`n x w`, `X^0` first, `n · 2^log_blowup` the matrix's LDE height).
    pub fn from_coeffs(tree: MerkleTree, coeffs: Vec<RowMajorMatrix>, log_blowup: usize) -> Self {
        CpuCommitted {
            tree,
            log_blowup,
            data: CpuRound::Coeffs { coeffs },
        }
    }

    /// How the opening reads this round's LDE values.
    pub(crate) fn round_lde(&self) -> RoundLde<'_> {
        match &self.data {
            CpuRound::Stored { .. } => RoundLde::Stored(&self.tree),
            CpuRound::Coeffs { coeffs } => RoundLde::Coeffs {
                tree: &self.tree,
                coeffs,
            },
        }
    }

    /// Natural-order trace `i` (`n x w`): borrowed when stored, recomputed from the coefficients.
    pub(crate) fn trace(&self, i: usize) -> Result<Cow<'_, RowMajorMatrix>, BackendError> {
        match &self.data {
            CpuRound::Stored { traces } => traces
                .get(i)
                .map(Cow::Borrowed)
                .ok_or_else(|| BackendError::Shape(format!("round holds no natural trace {i}"))),
            CpuRound::Coeffs { coeffs } => coeffs
                .get(i)
                .map(|c| Cow::Owned(dft_batch(c.clone())))
                .ok_or_else(|| BackendError::Shape(format!("round has no trace {i}"))),
        }
    }

    /// Storage rows `[start, start + rows)` of the LDE of matrix `i` (bit-reversed; for `start` and `rows`
    /// multiples of a power of two `r`, the values on one coset of `H_r`), as a matrix `m` and the row of
    /// `m` where they begin: the whole stored LDE and `start`, or the recomputed block and 0.
    pub fn lde_rows(
        &self,
        i: usize,
        start: usize,
        rows: usize,
    ) -> Result<(Cow<'_, RowMajorMatrix>, usize), BackendError> {
        let missing = || BackendError::Shape(format!("round has no matrix {i}"));
        match &self.data {
            CpuRound::Stored { .. } => Ok((
                Cow::Borrowed(self.tree.matrices().get(i).ok_or_else(missing)?),
                start,
            )),
            CpuRound::Coeffs { coeffs } => Ok((
                Cow::Owned(lde_rows(
                    coeffs.get(i).ok_or_else(missing)?,
                    self.log_blowup,
                    start,
                    rows,
                )),
                0,
            )),
        }
    }
}

impl Backend for CpuBackend {
    type DeviceTrace = Infallible;
    type Committed = CpuCommitted;
    type Codeword = Vec<Ext3>;
    type FriLayer = MerkleTree;
}

/// The host matrix of a CPU trace input.
pub(crate) fn host_input(t: TraceInput<Infallible>) -> RowMajorMatrix {
    match t {
        TraceInput::Host(m) => m,
        TraceInput::Device(never) => match never {},
    }
}

impl CommitOps for CpuBackend {
    fn input_dims(&self, trace: &TraceInput<Infallible>) -> TraceDims {
        match trace {
            TraceInput::Host(m) => TraceDims {
                width: m.width,
                log_height: m.height().max(1).ilog2() as usize,
            },
            TraceInput::Device(never) => match *never {},
        }
    }

    fn commit(
        &self,
        traces: Vec<TraceInput<Infallible>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
        hash: MerkleHash,
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
                MerkleTree::new_salted(hash, ldes, salt)
            };
            return Ok((
                tree.root(),
                CpuCommitted {
                    tree,
                    log_blowup,
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
            MerkleTree::from_coset_blocks(hash, dims, salts, log_blowup, |c| {
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
                log_blowup,
                data: CpuRound::Coeffs { coeffs },
            },
        ))
    }

    fn randomize_trace(
        &self,
        trace: TraceInput<Infallible>,
        rng: &ZkRng,
        round: u32,
        table: u64,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        Ok(TraceInput::Host(zk::randomize_trace(
            &host_input(trace),
            rng,
            round,
            table,
        )))
    }

    fn trace_dims(&self, c: &CpuCommitted) -> Vec<TraceDims> {
        c.tree
            .dims()
            .iter()
            .map(|d| TraceDims {
                width: d.width,
                log_height: d.log_height - c.log_blowup,
            })
            .collect()
    }

    fn lde_dims(&self, c: &CpuCommitted) -> Vec<MatrixDims> {
        c.tree.dims()
    }
}

impl AuxOps for CpuBackend {
    fn build_aux(
        &self,
        air: &CompiledAir,
        main: &CpuCommitted,
        table: usize,
        main_row_stride: usize,
        preprocessed: Option<(&CpuCommitted, usize)>,
        challenges: &LogupChallenges,
        log_max_multiplicity: u32,
    ) -> Result<(TraceInput<Infallible>, Ext3), AuxError> {
        let main = super::strided_rows(main.trace(table)?, main_row_stride);
        let prep = match preprocessed {
            Some((c, i)) => Some(c.trace(i)?),
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
}

impl HostCopy for CpuBackend {
    fn download_trace(&self, c: &CpuCommitted, i: usize) -> Result<RowMajorMatrix, BackendError> {
        Ok(c.trace(i)?.into_owned())
    }

    fn download_lde(&self, c: &CpuCommitted, i: usize) -> Result<RowMajorMatrix, BackendError> {
        match &c.data {
            CpuRound::Stored { .. } => c
                .tree
                .matrices()
                .get(i)
                .cloned()
                .ok_or_else(|| BackendError::Shape(format!("round has no matrix {i}"))),
            CpuRound::Coeffs { coeffs } => coeffs
                .get(i)
                .map(|m| lde_from_coeffs(m, c.log_blowup))
                .ok_or_else(|| BackendError::Shape(format!("round has no matrix {i}"))),
        }
    }
}
