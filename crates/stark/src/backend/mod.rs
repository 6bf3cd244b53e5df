//! The backend seam: a types-only [`Backend`] trait and one small trait of operations per protocol step.
//!
//! The protocol itself (transcript, challenges, the order of every step) lives in [`crate::prover`] and
//! [`crate::pcs::open`]; a backend only runs the heavy operations on data it keeps where it computed them
//! (host memory for [`CpuBackend`], device memory for a GPU backend), so both backends follow the
//! transcript order by construction and their proofs can be compared byte for byte.
//!
//! | step (docs/stark.md) | trait | file (CPU) |
//! |---|---|---|
//! | main / preprocessed / aux / quotient commitment (LDE + Merkle), zk randomization of traces | [`CommitOps`] | `backend/cpu.rs` |
//! | LogUp aux trace of a table | [`AuxOps`] | `backend/cpu.rs` |
//! | quotient chunks of a table over views of the committed rounds, zk masks, random codeword | [`QuotientOps`] | `backend/quotient.rs` |
//! | opened values, DEEP codeword, FRI fold and layer commit, final layer, query openings | [`OpeningOps`] | `backend/open.rs` |
//! | explicit downloads for the debug checker and tests | [`HostCopy`] | `backend/cpu.rs` |
//!
//! Ownership: `Backend::Committed` owns whatever the backend keeps of a committed round (LDEs or
//! coefficients, tree levels, natural-order traces until [`CommitOps::release_traces`]);
//! `Backend::Codeword` is one `Ext3` codeword (a DEEP reduced codeword or a FRI layer, bit-reversed order);
//! `Backend::FriLayer` one committed FRI layer. Every operation returns a `Result`: a device failure is a
//! [`BackendError`], never a panic. No operation quietly runs on the host: a backend that cannot do a step
//! where its data is says so in its own documentation, and host copies are only made through
//! [`HostCopy`] (named, counted by a device backend).
//!
//! Design after stwo's `QuotientOps`/`FriOps` and OpenVM stark-backend's split of a types-only backend
//! from its operation traits (facts studied, code our own).

use std::borrow::Cow;

use thiserror::Error;

use crate::air::CompiledAir;
use crate::field::{Ext3, F};
use crate::logup::{LogupChallenges, LogupError};
use crate::matrix::RowMajorMatrix;
use crate::merkle::{Digest, MatrixDims, MerkleHash};
use crate::pcs::{BatchOpening, FriLayerOpening, OpenedValues};
use crate::transcript::GrindInput;
use crate::zk::ZkRng;

mod cpu;
mod footprint;
mod open;
mod quotient;

pub use cpu::{available_memory_bytes, CpuBackend, CpuCommitted, LdeMode};
pub use footprint::{gib, ProofFootprint, RoundFootprint};
pub use open::eval_columns_at;
pub use quotient::{
    quotient_chunks, quotient_host, quotient_log_extension, quotient_values, QuotientFetch,
    QuotientInputs,
};

/// A trace handed to [`CommitOps::commit`]: on the host, or already resident on the backend.
pub enum TraceInput<D> {
    /// `n x w` row-major, natural order.
    Host(RowMajorMatrix),
    /// A backend buffer holding the same data.
    Device(D),
}

impl<D> TraceInput<D> {
    /// The trace of an absent table (height 0, docs/stark.md §10): a `0 x width` host matrix. The prover
    /// hands no backend operation anything of it.
    pub fn absent(width: usize) -> Self {
        TraceInput::Host(RowMajorMatrix::new(Vec::new(), width.max(1)))
    }

    /// Whether this is an absent table's trace: a host matrix of height 0.
    pub fn is_absent(&self) -> bool {
        matches!(self, TraceInput::Host(m) if m.values.is_empty())
    }
}

/// Backend failures (device errors, inputs of the wrong shape).
#[derive(Debug, Error)]
pub enum BackendError {
    #[error("commit: {0}")]
    Commit(String),
    #[error("device: {0}")]
    Device(String),
    /// A caller error: shapes that do not match (one point list per matrix, a height out of range, ...).
    #[error("shape: {0}")]
    Shape(String),
    /// An opening point lies in an LDE domain `g·H_N` (probability about `N / p^3` for a sampled point).
    #[error("an opening point lies in the LDE domain of height 2^{log_height}")]
    PointInDomain { log_height: usize },
    /// The proof does not fit the backend's memory: found before any work starts
    /// ([`CommitOps::reserve`]).
    #[error(
        "device memory: this proof needs about {} ({detail}); {} is available (budget {}: \
         --gpu-memory / ZKRV_GPU_MEMORY, else the device's free memory)",
        gib(*needed), gib(*available), gib(*budget)
    )]
    Memory {
        needed: u64,
        available: u64,
        budget: u64,
        detail: String,
    },
    /// The opened values are not the evaluations of the committed columns (a backend bug).
    #[error("DEEP numerator does not vanish at an opening point of height 2^{log_height}")]
    DeepInconsistent { log_height: usize },
}

/// Why [`AuxOps::build_aux`] failed: the trace breaks a LogUp precondition, or the backend failed.
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

/// The types a backend keeps its data in. See the module docs.
pub trait Backend: Sync {
    /// A trace resident on the backend (e.g. a device buffer). `Infallible` for the CPU.
    type DeviceTrace: Send;
    /// One committed round: LDEs (or what recomputes them) and the Merkle tree.
    type Committed: Sync;
    /// One `Ext3` codeword of `2^s` values in bit-reversed order (DEEP reduced codeword, FRI layer).
    type Codeword: Send;
    /// One committed FRI layer: its Merkle tree (and whatever opens it).
    type FriLayer: Sync;
}

/// Commitments (docs/stark.md §2, §3, §4; zk: §9).
pub trait CommitOps: Backend {
    /// Called once per proof with the compiled tables (table order), before the main commitment, so that a
    /// backend can start work that depends only on the AIRs (e.g. compiling generated kernels in the
    /// background while the traces are committed). Default: nothing.
    fn prepare(&self, airs: &[CompiledAir]) -> Result<(), BackendError> {
        let _ = airs;
        Ok(())
    }

    /// Commit `traces` (each `n_i x w_i`, natural order, `n_i` a power of two, `w_i >= 1`): LDE with
    /// blowup `2^log_blowup` (bit-reversed rows on `g·H`) and one mixed-height Merkle tree over all of them,
    /// in the given order, hashed with `hash` ([`crate::merkle::MerkleHash`]). Returns the root. A backend
    /// that cannot hash with `hash` fails with [`BackendError::Commit`] naming it.
    ///
    /// `salt = Some((rng, round))` (zk mode): a salted tree, [`crate::merkle::MerkleTree::new_salted`] with
    /// the salts of stream `(DOMAIN_SALT, round, ..)` of `rng`, reproduced bit-exactly by every backend.
    fn commit(
        &self,
        traces: Vec<TraceInput<Self::DeviceTrace>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
        hash: MerkleHash,
    ) -> Result<(Digest, Self::Committed), BackendError>;

    /// The shape of a trace handed to [`CommitOps::commit`] (known before any work).
    fn input_dims(&self, trace: &TraceInput<Self::DeviceTrace>) -> TraceDims;

    /// Called once per proof, before the main commitment, with what the proof will keep in memory if every
    /// round is stored ([`ProofFootprint::estimate`]). A backend with a fixed memory fails here, with
    /// [`BackendError::Memory`], when the proof cannot fit, instead of mid-proof. Default: nothing.
    fn reserve(&self, footprint: &ProofFootprint) -> Result<(), BackendError> {
        let _ = footprint;
        Ok(())
    }

    /// zk mode: the randomized trace of [`crate::zk::randomize_trace`] (`n x w` -> `2n x w`, even rows the
    /// trace, odd rows stream `(DOMAIN_TRACE, round, table, i)`), before [`CommitOps::commit`], bit-exact
    /// with the host function, computed where the trace is.
    fn randomize_trace(
        &self,
        trace: TraceInput<Self::DeviceTrace>,
        rng: &ZkRng,
        round: u32,
        table: u64,
    ) -> Result<TraceInput<Self::DeviceTrace>, BackendError>;

    /// Shapes of the committed traces (before the blowup), in commit order.
    fn trace_dims(&self, committed: &Self::Committed) -> Vec<TraceDims>;

    /// Shapes of the committed LDE matrices (`log_height` = trace height + blowup), in commit order: what
    /// the opening proves and the verifier checks.
    fn lde_dims(&self, committed: &Self::Committed) -> Vec<MatrixDims>;

    /// Called once the last reader of the committed traces (natural order) of `committed` is done: after
    /// the aux builds for the main and preprocessed rounds, right after `commit` for the others. A backend
    /// that keeps natural-order copies of committed traces for [`AuxOps::build_aux`] frees them here.
    fn release_traces(&self, committed: &Self::Committed) -> Result<(), BackendError> {
        let _ = committed;
        Ok(())
    }
}

/// The LogUp aux trace (docs/stark.md §3).
pub trait AuxOps: Backend {
    /// LogUp aux trace of table `table` (`n x aux_width`, natural order) and its bus sum. The table's main
    /// trace is committed trace `table` of the round `main`, read with row stride `main_row_stride`
    /// (logical row `r` = committed row `main_row_stride * r`: 1, or 2 in zk mode where the committed main
    /// trace is the `2n`-row randomized one whose even rows are the trace); its preprocessed trace, if it
    /// has one, is `preprocessed = Some((round, index))` (stride 1: never randomized). The aux trace may come
    /// back resident on the backend (`TraceInput::Device`), ready for the aux commitment; it must equal
    /// [`crate::logup::build_aux_trace`] on the host copies ([`strided_rows`] of the main one) bit for bit,
    /// and fail with the same [`LogupError`].
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
    ) -> Result<(TraceInput<Self::DeviceTrace>, Ext3), AuxError>;
}

/// One matrix of a committed round: the round and the matrix's index in commit order.
pub struct MatrixView<'a, C> {
    pub round: &'a C,
    pub index: usize,
}

impl<C> Clone for MatrixView<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C> Copy for MatrixView<'_, C> {}

/// What the quotient of one table reads: the committed LDEs of its main, preprocessed and aux traces, all
/// of height `n · 2^log_blowup` (bit-reversed on `g·H`), `n = 2^log_n` the table's trace height.
pub struct QuotientViews<'a, C> {
    pub main: MatrixView<'a, C>,
    pub preprocessed: Option<MatrixView<'a, C>>,
    pub aux: Option<MatrixView<'a, C>>,
    pub log_n: usize,
    /// The LDEs' blowup over `H_n`: `log_blowup` of the config, plus one in zk mode (the committed main and
    /// aux traces are `2n` rows; the preprocessed round is committed with that blowup too).
    pub log_blowup: usize,
}

impl<C> Clone for QuotientViews<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C> Copy for QuotientViews<'_, C> {}

/// The quotient round (docs/stark.md §4; zk: §9).
pub trait QuotientOps: Backend {
    /// Quotient chunks of one table as a trace: `n x 3c` (natural order on `H_n`), where extension column
    /// `j` (base columns `3j..3j+3`) holds `q_j`, and `q(X) = sum_j X^(j n) q_j(X)` with `q = C / Z_H`,
    /// `C` the table's folded constraints ([`CompiledAir::fold_challenge`]) and `c =
    /// air.num_quotient_chunks`. The result stays where the backend computed it, ready for
    /// [`QuotientOps::randomize_quotient`] and the quotient commitment. Reference: [`quotient_host`].
    fn quotient(
        &self,
        air: &CompiledAir,
        views: QuotientViews<'_, Self::Committed>,
        challenges: &LogupChallenges,
        bus_sum: Ext3,
        alpha: Ext3,
    ) -> Result<TraceInput<Self::DeviceTrace>, BackendError>;

    /// zk mode: [`crate::zk::randomize_quotient`] of table `table`'s chunks, bit-exact, where they are.
    fn randomize_quotient(
        &self,
        chunks: TraceInput<Self::DeviceTrace>,
        rng: &ZkRng,
        table: u64,
        num_queries: usize,
    ) -> Result<TraceInput<Self::DeviceTrace>, BackendError>;

    /// zk mode: [`crate::zk::random_codeword`] (`2^log_height x 3`), committed last in the quotient round.
    fn random_codeword(
        &self,
        rng: &ZkRng,
        log_height: usize,
    ) -> Result<TraceInput<Self::DeviceTrace>, BackendError>;
}

/// One matrix's share of a DEEP reduced codeword: its opening points, the opened values
/// (`values[p][c] = f_c(points[p])`), and `k0`, the global index of its first `(point, column)` pair in the
/// batching order (the term of point `p`, column `c` has weight `alpha^(k0 + p·w + c)`).
pub struct DeepTerm<'a, C> {
    pub matrix: MatrixView<'a, C>,
    pub points: &'a [Ext3],
    pub values: &'a [Vec<Ext3>],
    pub k0: u64,
}

/// DEEP + FRI operations (docs/stark.md §5; the protocol is [`crate::pcs::open`]).
pub trait OpeningOps: Backend {
    /// Opened values `values[r][m][p][c] = f_{r,m,c}(points[r][m][p])` of every committed column
    /// (degree `< n = 2^LH / 2^log_blowup`, read from the first `n` LDE rows or the coefficients).
    fn evaluate(
        &self,
        rounds: &[(&Self::Committed, &[Vec<Ext3>])],
        log_blowup: usize,
    ) -> Result<OpenedValues, BackendError>;

    /// The reduced codeword of LDE height `2^log_height` (bit-reversed, on the unshifted subgroup as FRI
    /// reads it): `R(x_i) = Σ_terms Σ_{p,c} alpha^(k0 + p·w + c) (f_c(x_i) - f_c(z_p)) / (x_i - z_p)` at the
    /// true coset points `x_i`. Errors: [`BackendError::PointInDomain`], [`BackendError::DeepInconsistent`].
    fn deep_codeword(
        &self,
        log_height: usize,
        log_blowup: usize,
        terms: &[DeepTerm<'_, Self::Committed>],
        alpha: Ext3,
    ) -> Result<Self::Codeword, BackendError>;

    /// Commit a FRI layer of arity `2^log_arity` (`1 <= log_arity <= log_size`, the codeword holding
    /// `2^log_size` values): one matrix of `2^(log_size - log_arity)` rows x `3·2^log_arity` columns, row `j`
    /// = `cw[j·2^a .. (j+1)·2^a]` (salted with `salt` in zk mode), hashed with `hash`. Returns the root.
    fn commit_fri_layer(
        &self,
        codeword: &Self::Codeword,
        log_arity: usize,
        salt: Option<(&ZkRng, u32)>,
        hash: MerkleHash,
    ) -> Result<(Digest, Self::FriLayer), BackendError>;

    /// Fold a codeword of `2^log_size` values by `2^log_arity` (`1 <= log_arity <= log_size`): `log_arity`
    /// binary folds with `beta, beta^2, .., beta^(2^(log_arity-1))`, the binary fold of `2^t` values being
    /// `next[j] = (e0 + e1)/2 + b (e0 - e1)/(2x)`, `x = ω_{2^t}^{bitrev_{t-1}(j)}` ([`crate::pcs`] module doc,
    /// step 3); then `next += beta^(2^log_arity) · roll_in` if given (`2^(log_size - log_arity)` values).
    fn fold_fri_layer(
        &self,
        codeword: Self::Codeword,
        log_size: usize,
        log_arity: usize,
        beta: Ext3,
        roll_in: Option<Self::Codeword>,
    ) -> Result<Self::Codeword, BackendError>;

    /// Proof of work: the smallest nonce `n >= 0` whose value for `input` has `bits <= 64` leading zero
    /// bits ([`GrindInput::ok`]), the nonce [`GrindInput::search`] finds on the host.
    fn grind(&self, input: &GrindInput, bits: u32) -> Result<u64, BackendError>;

    /// The last folded codeword's values (bit-reversed), for the final polynomial: `2^Lf` elements.
    fn final_codeword(&self, codeword: Self::Codeword) -> Result<Vec<Ext3>, BackendError>;

    /// The opened rows (one per matrix, commit order) and Merkle path of `committed` at each index of the
    /// round's largest height.
    fn open_rows(
        &self,
        committed: &Self::Committed,
        indices: &[usize],
    ) -> Result<Vec<BatchOpening>, BackendError>;

    /// The opened row (`2^log_arity` values) and Merkle path of a FRI layer at each row index.
    fn open_fri_layer(
        &self,
        layer: &Self::FriLayer,
        indices: &[usize],
    ) -> Result<Vec<FriLayerOpening>, BackendError>;
}

/// Explicit downloads of committed data to the host: for the debug checker ([`crate::check`]) and tests,
/// never part of proving. A device backend counts them (its transfer statistics).
pub trait HostCopy: Backend {
    /// Committed trace `i` of `committed` (`n x w`, natural order, as committed: in zk mode the
    /// randomized `2n`-row trace). A device backend may refuse after [`CommitOps::release_traces`].
    fn download_trace(
        &self,
        committed: &Self::Committed,
        i: usize,
    ) -> Result<RowMajorMatrix, BackendError>;

    /// The LDE of committed trace `i` (`nB x w`, bit-reversed rows).
    fn download_lde(
        &self,
        committed: &Self::Committed,
        i: usize,
    ) -> Result<RowMajorMatrix, BackendError>;
}

/// Everything the prover needs: every operation trait.
pub trait ProverBackend: CommitOps + AuxOps + QuotientOps + OpeningOps + HostCopy {}

impl<B: CommitOps + AuxOps + QuotientOps + OpeningOps + HostCopy> ProverBackend for B {}
