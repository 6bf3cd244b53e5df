//! A CPU backend with test hooks: every operation is [`CpuBackend`]'s, except that commit call `k` may use
//! another [`LdeMode`], a built aux trace may be altered before it is committed, and a FRI fold's result may
//! be altered before the next layer is committed (a cheating prover).

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};

use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::{
    AuxError, AuxOps, Backend, BackendError, CommitOps, CpuBackend, CpuCommitted, DeepTerm,
    HostCopy, LdeMode, OpeningOps, QuotientOps, QuotientViews, TraceDims, TraceInput,
};
use zkrv_stark::field::Ext3;
use zkrv_stark::logup::LogupChallenges;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{Digest, MatrixDims, MerkleTree};
use zkrv_stark::pcs::{BatchOpening, FriLayerOpening, OpenedValues};
use zkrv_stark::transcript::GrindInput;
use zkrv_stark::zk::ZkRng;

/// The LDE mode of the `k`-th commit.
type ModeHook = Box<dyn Fn(usize) -> LdeMode + Sync>;
/// Alters a built aux trace.
type AuxHook = Box<dyn Fn(&CompiledAir, &mut RowMajorMatrix) + Sync>;
/// Alters the result of FRI fold `l` (0 = the fold of the outermost layer).
type FoldHook = Box<dyn Fn(usize, &mut Vec<Ext3>) + Sync>;
/// Replaces the grinding nonce found for `(input, bits)`.
type GrindHook = Box<dyn Fn(&GrindInput, u32, u64) -> u64 + Sync>;

/// See the module doc. `mode(k)` picks the LDE mode of the `k`-th commit; `aux(air, trace)` may change a
/// built aux trace; `fold(l, codeword)` ([`Hooked::with_fold`], default none) may change the result of fold `l`;
/// `grind(input, bits, nonce)` ([`Hooked::with_grind`], default none) may replace the grinding nonce.
pub struct Hooked {
    pub mode: ModeHook,
    pub aux: AuxHook,
    pub fold: FoldHook,
    pub grind: GrindHook,
    pub commits: AtomicUsize,
    pub folds: AtomicUsize,
}

impl Hooked {
    pub fn new(
        mode: impl Fn(usize) -> LdeMode + Sync + 'static,
        aux: impl Fn(&CompiledAir, &mut RowMajorMatrix) + Sync + 'static,
    ) -> Self {
        Hooked {
            mode: Box::new(mode),
            aux: Box::new(aux),
            fold: Box::new(|_, _| {}),
            grind: Box::new(|_, _, n| n),
            commits: AtomicUsize::new(0),
            folds: AtomicUsize::new(0),
        }
    }
    /// The same backend with the fold hook `fold`.
    #[allow(dead_code)] // not every test binary uses it
    pub fn with_fold(self, fold: impl Fn(usize, &mut Vec<Ext3>) + Sync + 'static) -> Self {
        Hooked {
            fold: Box::new(fold),
            ..self
        }
    }
    /// The same backend with the grinding hook `grind`.
    #[allow(dead_code)] // not every test binary uses it
    pub fn with_grind(self, grind: impl Fn(&GrindInput, u32, u64) -> u64 + Sync + 'static) -> Self {
        Hooked {
            grind: Box::new(grind),
            ..self
        }
    }
    fn cpu(&self) -> CpuBackend {
        CpuBackend::new(LdeMode::Store)
    }
}

impl Backend for Hooked {
    type DeviceTrace = Infallible;
    type Committed = CpuCommitted;
    type Codeword = Vec<Ext3>;
    type FriLayer = MerkleTree;
}

impl CommitOps for Hooked {
    fn input_dims(&self, t: &TraceInput<Infallible>) -> TraceDims {
        self.cpu().input_dims(t)
    }
    fn commit(
        &self,
        traces: Vec<TraceInput<Infallible>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
        hash: zkrv_stark::merkle::MerkleHash,
    ) -> Result<(Digest, CpuCommitted), BackendError> {
        let k = self.commits.fetch_add(1, Ordering::SeqCst);
        CpuBackend::new((self.mode)(k)).commit(traces, log_blowup, salt, hash)
    }
    fn randomize_trace(
        &self,
        t: TraceInput<Infallible>,
        rng: &ZkRng,
        round: u32,
        table: u64,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        self.cpu().randomize_trace(t, rng, round, table)
    }
    fn trace_dims(&self, c: &CpuCommitted) -> Vec<TraceDims> {
        self.cpu().trace_dims(c)
    }
    fn lde_dims(&self, c: &CpuCommitted) -> Vec<MatrixDims> {
        self.cpu().lde_dims(c)
    }
}

impl AuxOps for Hooked {
    fn build_aux(
        &self,
        air: &CompiledAir,
        main: &CpuCommitted,
        table: usize,
        stride: usize,
        prep: Option<(&CpuCommitted, usize)>,
        ch: &LogupChallenges,
        bits: u32,
    ) -> Result<(TraceInput<Infallible>, Ext3), AuxError> {
        let (aux, sum) = self
            .cpu()
            .build_aux(air, main, table, stride, prep, ch, bits)?;
        let TraceInput::Host(mut aux) = aux;
        (self.aux)(air, &mut aux);
        Ok((TraceInput::Host(aux), sum))
    }
}

impl QuotientOps for Hooked {
    fn quotient(
        &self,
        air: &CompiledAir,
        views: QuotientViews<'_, CpuCommitted>,
        ch: &LogupChallenges,
        bus_sum: Ext3,
        alpha: Ext3,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        self.cpu().quotient(air, views, ch, bus_sum, alpha)
    }
    fn randomize_quotient(
        &self,
        q: TraceInput<Infallible>,
        rng: &ZkRng,
        table: u64,
        num_queries: usize,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        self.cpu().randomize_quotient(q, rng, table, num_queries)
    }
    fn random_codeword(
        &self,
        rng: &ZkRng,
        lh: usize,
    ) -> Result<TraceInput<Infallible>, BackendError> {
        self.cpu().random_codeword(rng, lh)
    }
}

impl OpeningOps for Hooked {
    fn evaluate(
        &self,
        rounds: &[(&CpuCommitted, &[Vec<Ext3>])],
        lb: usize,
    ) -> Result<OpenedValues, BackendError> {
        self.cpu().evaluate(rounds, lb)
    }
    fn deep_codeword(
        &self,
        lh: usize,
        lb: usize,
        terms: &[DeepTerm<'_, CpuCommitted>],
        alpha: Ext3,
    ) -> Result<Vec<Ext3>, BackendError> {
        self.cpu().deep_codeword(lh, lb, terms, alpha)
    }
    fn commit_fri_layer(
        &self,
        cw: &Vec<Ext3>,
        log_arity: usize,
        salt: Option<(&ZkRng, u32)>,
        hash: zkrv_stark::merkle::MerkleHash,
    ) -> Result<(Digest, MerkleTree), BackendError> {
        self.cpu().commit_fri_layer(cw, log_arity, salt, hash)
    }
    fn fold_fri_layer(
        &self,
        cw: Vec<Ext3>,
        log_size: usize,
        log_arity: usize,
        beta: Ext3,
        roll_in: Option<Vec<Ext3>>,
    ) -> Result<Vec<Ext3>, BackendError> {
        let mut next = self
            .cpu()
            .fold_fri_layer(cw, log_size, log_arity, beta, roll_in)?;
        (self.fold)(self.folds.fetch_add(1, Ordering::SeqCst), &mut next);
        Ok(next)
    }
    fn final_codeword(&self, cw: Vec<Ext3>) -> Result<Vec<Ext3>, BackendError> {
        Ok(cw)
    }
    fn grind(&self, input: &GrindInput, bits: u32) -> Result<u64, BackendError> {
        let n = self.cpu().grind(input, bits)?;
        Ok((self.grind)(input, bits, n))
    }
    fn open_rows(
        &self,
        c: &CpuCommitted,
        indices: &[usize],
    ) -> Result<Vec<BatchOpening>, BackendError> {
        self.cpu().open_rows(c, indices)
    }
    fn open_fri_layer(
        &self,
        layer: &MerkleTree,
        indices: &[usize],
    ) -> Result<Vec<FriLayerOpening>, BackendError> {
        self.cpu().open_fri_layer(layer, indices)
    }
}

impl HostCopy for Hooked {
    fn download_trace(&self, c: &CpuCommitted, i: usize) -> Result<RowMajorMatrix, BackendError> {
        self.cpu().download_trace(c, i)
    }
    fn download_lde(&self, c: &CpuCommitted, i: usize) -> Result<RowMajorMatrix, BackendError> {
        self.cpu().download_lde(c, i)
    }
}
