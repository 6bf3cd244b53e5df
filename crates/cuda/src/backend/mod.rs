//! [`CudaBackend`]: the CUDA implementation of the `zkrv_stark::backend` operation traits, one file per
//! protocol step, mirroring `crates/stark/src/backend`:
//!
//! | step | trait | file | where it runs now |
//! |---|---|---|---|
//! | commitments (LDE + Merkle), zk randomization of device traces | `CommitOps` | `backend/commit.rs` | device |
//! | LogUp aux build | `AuxOps` | `backend/aux.rs` | device ([`crate::logup::build_aux_device`]) |
//! | quotient chunks, zk masks, random codeword | `QuotientOps` | `backend/quotient.rs` | device ([`crate::quotient::quotient_device`]) |
//! | opened values, DEEP, FRI, query openings | `OpeningOps` | `backend/open.rs` | device ([`crate::open`]; openings gathered, one download per round) |
//! | explicit downloads (debug checker, tests) | `HostCopy` | this file | device -> host |
//!
//! Every step runs where the data are: no LDE or tree level is copied to the host while proving. The
//! opening step reads the resident LDEs and tree levels (stage "open": descriptors up; opened values,
//! roots, final codeword and query openings down).
//!
//! **Natural-order traces and VRAM.** Every round keeps its natural-order trace buffers (`8 n w` bytes per
//! `n x w` trace, `1 / blowup` of its LDE; host traces as uploaded) from `commit` until the prover calls
//! `release_traces` on it: for the main and preprocessed rounds after the last aux build, for the aux and
//! quotient rounds right after their commit. So during the aux phase the device holds, on top of the main
//! LDEs and trees, the main traces (`+1 / blowup` of the main LDE memory) and the aux traces built so far
//! (each `n x aux_width`, consumed by the aux commitment). This replaces one device->host copy of every
//! resident main trace (and one host->device copy of every aux trace); both are counted in
//! `TransferStats::avoided`. `ZKRV_CPU_AUX=1` forces the host aux build (for comparisons).
//!
//! **zk mode.** The committed main traces are the randomized `2n`-row ones (`randomize_trace`, on the
//! device for resident traces); the aux build reads their even rows in place (row stride 2,
//! [`crate::logup::build_aux_device_strided`]) and the `n`-row aux trace is randomized on the device in
//! turn, so no main trace crosses PCIe in zk mode either (preprocessed traces are not randomized).
//!
//! Every step is deterministic, so proofs are byte-identical to the CPU backend's (`tests/proof_parity.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use zkrv_stark::backend::{AuxError, Backend, BackendError, HostCopy, TraceDims};
use zkrv_stark::field::F;
use zkrv_stark::matrix::RowMajorMatrix;

use crate::commit::{DeviceCommitted, STAGE_HOST_COPY};
use crate::device::{Device, DeviceBuffer};
use crate::error::CudaError;
use crate::logup::AuxBuildError;
use crate::stats::TransferStats;

mod aux;
mod commit;
mod open;
mod quotient;

pub use open::{DeviceCodeword, DeviceFriLayer};

/// Device bytes a proof needs besides its [`zkrv_stark::backend::ProofFootprint`]: kernel descriptors,
/// per-proof parameter blocks, error flags, opening gathers (each well under 1 MiB), counted once.
pub const DEVICE_SLACK: u64 = 64 << 20;

/// A trace resident on the device: `2^log_height x width` row-major u64, natural row order.
pub struct DeviceTrace {
    pub data: DeviceBuffer<u64>,
    pub width: usize,
    pub log_height: u32,
}

/// The CUDA prover backend. Tables are named `c<round>.t<index>` in the transfer statistics (round = the
/// number of earlier `commit` calls on this backend), unless named with [`CudaBackend::name_tables`].
pub struct CudaBackend {
    dev: Device,
    stats: Mutex<TransferStats>,
    commits: AtomicUsize,
    names: Mutex<Vec<(usize, Vec<String>)>>,
    /// `(round, table)` of host traces uploaded by `randomize_trace` (zk) before their commit: they enter
    /// the commit resident but are reported as uploaded.
    zk_uploads: Mutex<Vec<(usize, usize)>>,
    /// The bytes the last `reserve` asked for ([`CudaBackend::device_bytes_needed`]).
    reserved: AtomicU64,
    /// Where the LDEs live ([`GpuLdeMode`]); `Auto` decides per proof in `reserve`.
    lde_mode: Mutex<GpuLdeMode>,
    /// Whether the current proof recomputes its LDEs (set by `reserve`).
    recompute: AtomicBool,
}

/// Where [`CudaBackend`] keeps the LDEs of the committed rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuLdeMode {
    /// Stored when the whole proof fits in the device budget stored ([`CudaBackend::device_bytes_needed`]),
    /// else recomputed when that fits ([`CudaBackend::device_bytes_needed_recompute`]), else the budget
    /// error before any work.
    #[default]
    Auto,
    /// Every LDE and tree level resident (fastest).
    Store,
    /// Coefficients only, LDE rows recomputed one coset block at a time where they are read, trees capped
    /// [`crate::commit::TREE_CAP_LEVELS`] levels above the leaves (commit, quotient, DEEP, openings;
    /// `crate::commit::commit_coeffs`): about `1 / blowup` of the LDE memory, byte-identical proofs.
    Recompute,
}

impl GpuLdeMode {
    /// `ZKRV_GPU_LDE=auto|store|recompute` (unset or empty: `auto`); any other value is an error naming the
    /// variable.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("ZKRV_GPU_LDE") {
            Err(std::env::VarError::NotPresent) => Ok(GpuLdeMode::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(format!(
                "ZKRV_GPU_LDE={v:?} is not UTF-8: expected `auto`, `store` or `recompute`"
            )),
            Ok(v) => match v.as_str() {
                "" | "auto" => Ok(GpuLdeMode::Auto),
                "store" => Ok(GpuLdeMode::Store),
                "recompute" => Ok(GpuLdeMode::Recompute),
                other => Err(format!(
                    "ZKRV_GPU_LDE={other:?}: expected `auto`, `store` or `recompute`"
                )),
            },
        }
    }
}

/// One committed round: LDEs and tree on the device, the natural-order traces on the device until
/// `release_traces`, host copies made on demand.
pub struct CudaCommitted {
    gpu: DeviceCommitted,
    /// Number of earlier `commit` calls on the backend (names the tables `c<round>.t<i>`).
    round: usize,
    log_blowup: usize,
    dims: Vec<TraceDims>,
    /// Whether trace `i` entered resident (`TraceInput::Device`).
    resident: Vec<bool>,
    /// Natural-order trace buffers (`n x w` each), `None` once released.
    naturals: Mutex<Vec<Option<DeviceBuffer<u64>>>>,
    /// Whether `build_aux` read this round (it is a main round: the old design downloaded its resident
    /// traces at commit).
    aux_read: AtomicBool,
    /// Host traces: set at commit for host inputs, on first download for resident ones.
    host_traces: Vec<OnceLock<RowMajorMatrix>>,
}

impl CudaCommitted {
    /// The device side (LDEs, tree levels).
    pub fn device(&self) -> &DeviceCommitted {
        &self.gpu
    }

    /// Natural-order trace `i` rebuilt from its coefficients when the round recomputes its LDEs
    /// ([`crate::commit::LdeKind::Coeffs`]); `None` for a stored round.
    pub(crate) fn natural_from_coeffs(
        &self,
        dev: &Device,
        i: usize,
    ) -> Result<Option<DeviceBuffer<u64>>, BackendError> {
        let l = self
            .gpu
            .ldes
            .get(i)
            .ok_or_else(|| BackendError::Shape(format!("round has no matrix {i}")))?;
        match l.coeffs_log_height() {
            None => Ok(None),
            Some(log_n) => crate::poly::natural_from_coeffs(dev, &l.data, log_n, l.width)
                .map(Some)
                .map_err(dev_err),
        }
    }
}

pub(crate) fn dev_err(e: CudaError) -> BackendError {
    BackendError::Device(e.to_string())
}

pub(crate) fn aux_err(e: AuxBuildError) -> AuxError {
    match e {
        AuxBuildError::Logup(e) => AuxError::Logup(e),
        AuxBuildError::Cuda(e) => AuxError::Backend(dev_err(e)),
    }
}

/// `ZKRV_CPU_AUX=1` (any value but "0" or empty) forces the host aux build.
pub(crate) fn cpu_aux_forced() -> bool {
    std::env::var("ZKRV_CPU_AUX").is_ok_and(|v| !v.is_empty() && v != "0")
}

impl CudaBackend {
    /// The device bytes the last proof's `reserve` estimated ([`CudaBackend::device_bytes_needed`]), to
    /// compare with `Device::memory_peak`; 0 before any proof.
    pub fn reserved_bytes(&self) -> u64 {
        self.reserved.load(Ordering::Relaxed)
    }

    /// Device bytes a proof of footprint `f` needs on this backend: `f.total()`, the twiddle tables
    /// (`2 x 8 x 2^max(L, 16)` bytes for transforms up to `2^L`) when the device's are smaller, and
    /// [`DEVICE_SLACK`] for descriptors, parameter blocks and opening gathers.
    pub fn device_bytes_needed(&self, f: &zkrv_stark::backend::ProofFootprint) -> u64 {
        let have = self
            .dev
            .twiddles
            .lock()
            .ok()
            .and_then(|t| t.as_ref().map(|t| t.log_max as usize));
        let twiddles = match have {
            Some(l) if l >= f.log_max_transform => 0,
            _ => 16u64 << f.log_max_transform.max(16),
        };
        f.total() + twiddles + DEVICE_SLACK
    }

    /// Device bytes a proof of footprint `f` needs when its LDEs are recomputed ([`GpuLdeMode::Recompute`]):
    /// [`zkrv_stark::backend::ProofFootprint::total_recompute`] with the trees capped
    /// [`crate::commit::TREE_CAP_LEVELS`] levels, plus twiddles and [`DEVICE_SLACK`] as for
    /// [`Self::device_bytes_needed`].
    pub fn device_bytes_needed_recompute(&self, f: &zkrv_stark::backend::ProofFootprint) -> u64 {
        self.device_bytes_needed(f) - f.total()
            + f.total_recompute(crate::commit::TREE_CAP_LEVELS as usize)
    }

    /// A backend on `dev`.
    pub fn new(dev: Device) -> Self {
        CudaBackend {
            dev,
            stats: Mutex::new(TransferStats::default()),
            commits: AtomicUsize::new(0),
            names: Mutex::new(Vec::new()),
            zk_uploads: Mutex::new(Vec::new()),
            reserved: AtomicU64::new(0),
            lde_mode: Mutex::new(GpuLdeMode::Auto),
            recompute: AtomicBool::new(false),
        }
    }

    /// Sets where the LDEs of the next proofs live ([`GpuLdeMode`]; default `Auto`).
    pub fn set_lde_mode(&self, mode: GpuLdeMode) {
        if let Ok(mut m) = self.lde_mode.lock() {
            *m = mode;
        }
        if mode != GpuLdeMode::Auto {
            self.recompute
                .store(mode == GpuLdeMode::Recompute, Ordering::Relaxed);
        }
    }

    /// The configured [`GpuLdeMode`].
    pub fn lde_mode(&self) -> GpuLdeMode {
        self.lde_mode.lock().map(|m| *m).unwrap_or_default()
    }

    /// Whether the current (or last) proof recomputes its LDEs.
    pub fn recomputes(&self) -> bool {
        self.recompute.load(Ordering::Relaxed)
    }

    /// Names the traces of commit round `round` (0 = the first `commit` call on this backend: the main
    /// traces of a proof) in the transfer statistics, e.g. with the machine's table names; traces past the
    /// end of `names` keep the `c<round>.t<index>` name.
    pub fn name_tables(&self, round: usize, names: Vec<String>) {
        if let Ok(mut n) = self.names.lock() {
            n.retain(|(r, _)| *r != round);
            n.push((round, names));
        }
    }

    /// The name of trace `i` of commit round `round` in the statistics.
    pub fn table_name(&self, round: usize, i: usize) -> String {
        let named = self.names.lock().ok().and_then(|n| {
            n.iter()
                .find(|(r, _)| *r == round)
                .and_then(|(_, v)| v.get(i).cloned())
        });
        named.unwrap_or_else(|| format!("c{round}.t{i}"))
    }

    /// The round number the next `commit` call gets (see [`Self::name_tables`]).
    pub fn next_round(&self) -> usize {
        self.commits.load(Ordering::Relaxed)
    }

    /// Clears the transfer statistics (e.g. between proofs on one backend).
    pub fn reset_stats(&self) {
        if let Ok(mut s) = self.stats.lock() {
            *s = TransferStats::default();
        }
    }

    /// Adds transfers made outside the backend (e.g. trace generation's input uploads) to [`Self::stats`].
    pub fn record_stats(&self, other: &TransferStats) {
        self.record(|s| s.merge(other));
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// All transfers so far (every commit, host copy and opening).
    pub fn stats(&self) -> TransferStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub(crate) fn record(&self, f: impl FnOnce(&mut TransferStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    /// A resident trace's host copy, downloaded on first use while its natural-order buffer is alive.
    fn host_trace<'a>(
        &self,
        c: &'a CudaCommitted,
        i: usize,
    ) -> Result<&'a RowMajorMatrix, BackendError> {
        let cell = c
            .host_traces
            .get(i)
            .ok_or_else(|| BackendError::Shape(format!("round {} has no trace {i}", c.round)))?;
        if let Some(m) = cell.get() {
            return Ok(m);
        }
        let naturals = c
            .naturals
            .lock()
            .map_err(|_| BackendError::Device("poisoned lock".into()))?;
        let rebuilt;
        let buf = match naturals.get(i).and_then(Option::as_ref) {
            Some(b) => b,
            None => match c.natural_from_coeffs(&self.dev, i)? {
                Some(b) => {
                    rebuilt = b;
                    &rebuilt
                }
                None => {
                    return Err(BackendError::Device(format!(
                        "trace c{}.t{i} was released (downloaded after release_traces)",
                        c.round
                    )))
                }
            },
        };
        let v = self.dev.download(buf).map_err(dev_err)?;
        let name = self.table_name(c.round, i);
        self.record(|s| s.add_d2h(STAGE_HOST_COPY, &name, (v.len() * 8) as u64));
        let _ = cell.set(RowMajorMatrix::new(
            v.into_iter().map(F::new).collect(),
            c.dims[i].width,
        ));
        cell.get()
            .ok_or_else(|| BackendError::Device("host trace copy missing".into()))
    }
}

impl Backend for CudaBackend {
    type DeviceTrace = DeviceTrace;
    type Committed = CudaCommitted;
    /// A device codeword (`2^s x 3` u64, bit-reversed; `backend/open.rs`).
    type Codeword = DeviceCodeword;
    /// A device FRI layer (values shared with its codeword, tree, zk salts; `backend/open.rs`).
    type FriLayer = DeviceFriLayer;
}

impl HostCopy for CudaBackend {
    fn download_trace(&self, c: &CudaCommitted, i: usize) -> Result<RowMajorMatrix, BackendError> {
        self.host_trace(c, i).cloned()
    }

    fn download_lde(&self, c: &CudaCommitted, i: usize) -> Result<RowMajorMatrix, BackendError> {
        let l =
            c.gpu.ldes.get(i).ok_or_else(|| {
                BackendError::Shape(format!("round {} has no trace {i}", c.round))
            })?;
        let v = match l.coeffs_log_height() {
            None => self.dev.download(&l.data),
            Some(log_n) => l
                .rows(
                    &self.dev,
                    log_n,
                    &(0..1usize << c.log_blowup).collect::<Vec<_>>(),
                )
                .and_then(|d| self.dev.download(&d)),
        }
        .map_err(dev_err)?;
        self.record(|s| s.add_d2h(STAGE_HOST_COPY, &l.name, (v.len() * 8) as u64));
        Ok(RowMajorMatrix::new(
            v.into_iter().map(F::new).collect(),
            l.width,
        ))
    }
}
