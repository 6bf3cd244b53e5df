//! [`CudaBackend`]: the CUDA implementation of `zkrv_stark::backend::ProverBackend`.
//!
//! On the GPU now: **commit** (LDE + Merkle tree of every round: main, preprocessed, aux, quotient), through
//! [`commit_lde_keep`], and the **LogUp aux build** ([`crate::logup::build_aux_device`]), which reads the
//! committed main (and preprocessed) traces where they already are, on the device, and leaves the aux trace
//! resident for the aux commitment. Still on the host (the trait's defaults and `pcs::open`): quotient,
//! DEEP/FRI open. Those phases read host copies, made explicitly and counted in [`CudaBackend::stats`] under
//! stage "host-copy":
//! * `host_trace`: the host matrix when the trace came from the host (no copy); a resident trace is
//!   downloaded on first use only (the debug checker, or `ZKRV_CPU_AUX=1`), while its natural-order buffer
//!   is still alive (until `release_traces`);
//! * `host_lde`: all LDEs of a round are downloaded once, on first use (a device failure there is
//!   `BackendError::Device`);
//! * `open`: `pcs::open` needs a host `MerkleTree`: the GPU tree levels are downloaded (counted as
//!   "merkle-layers") and wrapped with `MerkleTree::from_layers`, no rehash on the CPU (root checked against
//!   the GPU root; debug builds also compare every layer with a CPU rebuild). `open` cannot return an error:
//!   a device failure there panics with the CUDA error (the quotient phase has downloaded the LDEs already).
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
//! Every phase is deterministic, so proofs are byte-identical to the CPU backend's (`tests/proof_parity.rs`).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::{AuxError, BackendError, ProverBackend, TraceDims, TraceInput};
use zkrv_stark::field::{Ext3, F};
use zkrv_stark::logup::LogupChallenges;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{Digest, MerkleTree};
use zkrv_stark::pcs::{self, FriConfig, OpenedValues, PcsProof};
use zkrv_stark::transcript::Transcript;
use zkrv_stark::zk::{self as host_zk, ZkRng};

use crate::commit::{self, commit_lde_keep_salted, DeviceCommitted, STAGE_HOST_COPY};
use crate::device::{Device, DeviceBuffer};
use crate::error::CudaError;
use crate::logup::{build_aux_device, AuxBuildError};
use crate::stats::TransferStats;

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
}

/// One committed round: LDEs and tree on the device, the natural-order traces on the device until
/// `release_traces`, host copies made on demand.
pub struct CudaCommitted {
    gpu: DeviceCommitted,
    /// Number of earlier `commit` calls on the backend (names the tables `c<round>.t<i>`).
    round: usize,
    dims: Vec<TraceDims>,
    /// Whether trace `i` entered resident (`TraceInput::Device`).
    resident: Vec<bool>,
    /// Natural-order trace buffers (`n x w` each), `None` once released.
    naturals: Mutex<Vec<Option<DeviceBuffer<u64>>>>,
    /// Whether `build_aux` read this round (it is a main round: the old design downloaded its resident
    /// traces at commit).
    aux_read: AtomicBool,
    /// Host traces: set at commit for host inputs, on first `host_trace` for resident ones.
    host_traces: Vec<OnceLock<RowMajorMatrix>>,
    host_ldes: OnceLock<Vec<RowMajorMatrix>>,
    host_tree: OnceLock<MerkleTree>,
}

impl CudaCommitted {
    /// The device side (LDEs, tree levels).
    pub fn device(&self) -> &DeviceCommitted {
        &self.gpu
    }
}

fn dev_err(e: CudaError) -> BackendError {
    BackendError::Device(e.to_string())
}

fn aux_err(e: AuxBuildError) -> AuxError {
    match e {
        AuxBuildError::Logup(e) => AuxError::Logup(e),
        AuxBuildError::Cuda(e) => AuxError::Backend(dev_err(e)),
    }
}

/// `ZKRV_CPU_AUX=1` (any value but "0" or empty) forces the host aux build.
fn cpu_aux_forced() -> bool {
    std::env::var("ZKRV_CPU_AUX").is_ok_and(|v| !v.is_empty() && v != "0")
}

impl CudaBackend {
    /// A backend on `dev`.
    pub fn new(dev: Device) -> Self {
        CudaBackend {
            dev,
            stats: Mutex::new(TransferStats::default()),
            commits: AtomicUsize::new(0),
            names: Mutex::new(Vec::new()),
        }
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

    fn record(&self, f: impl FnOnce(&mut TransferStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    /// Host copies of all LDEs of a round, downloaded once on first use.
    fn host_ldes<'a>(&self, c: &'a CudaCommitted) -> Result<&'a [RowMajorMatrix], CudaError> {
        if let Some(v) = c.host_ldes.get() {
            return Ok(v);
        }
        let mut ldes = Vec::with_capacity(c.gpu.ldes.len());
        for l in &c.gpu.ldes {
            let v = self.dev.download(&l.data)?;
            self.record(|s| s.add_d2h(STAGE_HOST_COPY, &l.name, (v.len() * 8) as u64));
            ldes.push(RowMajorMatrix {
                values: v.into_iter().map(F::new).collect(),
                width: l.width,
            });
        }
        // A concurrent first use may have won the race; both copies are equal.
        let _ = c.host_ldes.set(ldes);
        Ok(c.host_ldes.get().expect("set above"))
    }

    /// Host Merkle tree of a round: the LDE copies plus the GPU tree levels (downloaded once, no rehash).
    fn host_tree<'a>(&self, c: &'a CudaCommitted) -> Result<&'a MerkleTree, CudaError> {
        if let Some(t) = c.host_tree.get() {
            return Ok(t);
        }
        let ldes = self.host_ldes(c)?.to_vec();
        // Device `levels[l]` is level l (2^l x 4 u64 lanes); host `layers[k]` is level L - k.
        let mut layers = Vec::with_capacity(c.gpu.tree.levels.len());
        let mut bytes = 0u64;
        for level in c.gpu.tree.levels.iter().rev() {
            let v = self.dev.download(level)?;
            bytes += (v.len() * 8) as u64;
            layers.push(
                v.chunks_exact(4)
                    .map(|l| {
                        let mut d = [0u8; 32];
                        for (k, x) in l.iter().enumerate() {
                            d[8 * k..8 * k + 8].copy_from_slice(&x.to_le_bytes());
                        }
                        d
                    })
                    .collect::<Vec<Digest>>(),
            );
        }
        let mut salts = Vec::with_capacity(c.gpu.salts.len());
        for l in &c.gpu.salts {
            let v = self.dev.download(&l.data)?;
            bytes += (v.len() * 8) as u64;
            salts.push(RowMajorMatrix::new(
                v.into_iter().map(F::new).collect(),
                l.width,
            ));
        }
        self.record(|s| s.add_d2h(STAGE_HOST_COPY, "merkle-layers", bytes));
        let tree = MerkleTree::from_layers(ldes, salts, layers)
            .map_err(|e| CudaError::InvalidArgument(format!("GPU Merkle levels: {e}")))?;
        if tree.root() != c.gpu.root {
            return Err(CudaError::InvalidArgument(
                "GPU Merkle levels do not end in the committed root".into(),
            ));
        }
        debug_assert_eq!(
            tree.layers(),
            MerkleTree::with_salts(tree.matrices().to_vec(), tree.salts().to_vec()).layers(),
            "GPU and CPU Merkle layers differ"
        );
        let _ = c.host_tree.set(tree);
        Ok(c.host_tree.get().expect("set above"))
    }
}

impl ProverBackend for CudaBackend {
    type DeviceTrace = DeviceTrace;
    type Committed = CudaCommitted;

    fn commit(
        &self,
        traces: Vec<TraceInput<DeviceTrace>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
    ) -> Result<(Digest, CudaCommitted), BackendError> {
        if traces.is_empty() {
            return Err(BackendError::Commit("no traces".into()));
        }
        let round = self.commits.fetch_add(1, Ordering::Relaxed);
        let mut host_traces: Vec<OnceLock<RowMajorMatrix>> = Vec::with_capacity(traces.len());
        let mut inputs_dev = Vec::with_capacity(traces.len());
        let mut dims = Vec::with_capacity(traces.len());
        for (i, t) in traces.into_iter().enumerate() {
            match t {
                TraceInput::Host(m) => {
                    let Some(lh) = m.log_height().filter(|_| m.width > 0) else {
                        return Err(BackendError::Commit(format!(
                            "trace {i}: {} x {} is not a power-of-two height with width >= 1",
                            m.height(),
                            m.width
                        )));
                    };
                    dims.push(TraceDims {
                        width: m.width,
                        log_height: lh,
                    });
                    host_traces.push(OnceLock::from(m));
                    inputs_dev.push(None);
                }
                TraceInput::Device(d) => {
                    if d.width == 0 || d.data.len() != d.width << d.log_height {
                        return Err(BackendError::Commit(format!(
                            "trace {i}: device buffer of {} is not 2^{} x {}",
                            d.data.len(),
                            d.log_height,
                            d.width
                        )));
                    }
                    // No host copy: the aux build reads the device buffer (kept below).
                    dims.push(TraceDims {
                        width: d.width,
                        log_height: d.log_height as usize,
                    });
                    host_traces.push(OnceLock::new());
                    inputs_dev.push(Some(d));
                }
            }
        }
        let resident: Vec<bool> = inputs_dev.iter().map(Option::is_some).collect();
        let inputs: Vec<commit::TraceInput<'_>> = inputs_dev
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let name = self.table_name(round, i);
                match r {
                    None => commit::TraceInput::Host {
                        name,
                        trace: host_traces[i].get().expect("host input set above"),
                    },
                    Some(d) => commit::TraceInput::Device {
                        name,
                        data: d.data,
                        width: d.width,
                        log_height: d.log_height,
                    },
                }
            })
            .collect();
        let (gpu, naturals) = commit_lde_keep_salted(
            &self.dev,
            inputs,
            log_blowup as u32,
            salt.as_ref().map(|(r, round)| (r, *round)),
        )
        .map_err(dev_err)?;
        self.record(|s| s.merge(&gpu.stats));
        let root = gpu.root;
        Ok((
            root,
            CudaCommitted {
                gpu,
                round,
                dims,
                resident,
                naturals: Mutex::new(naturals.into_iter().map(Some).collect()),
                aux_read: AtomicBool::new(false),
                host_traces,
                host_ldes: OnceLock::new(),
                host_tree: OnceLock::new(),
            },
        ))
    }

    /// Host traces: the host function; device traces: `zk.cu` on the device (bit-exact), no round trip.
    fn randomize_trace(
        &self,
        trace: TraceInput<DeviceTrace>,
        rng: &ZkRng,
        round: u32,
        table: u64,
    ) -> Result<TraceInput<DeviceTrace>, BackendError> {
        match trace {
            TraceInput::Host(m) => Ok(TraceInput::Host(host_zk::randomize_trace(
                &m, rng, round, table,
            ))),
            TraceInput::Device(d) => {
                let data = crate::zk::randomize_trace(
                    &self.dev,
                    rng,
                    round,
                    table,
                    &d.data,
                    d.width,
                    d.log_height,
                )
                .map_err(dev_err)?;
                Ok(TraceInput::Device(DeviceTrace {
                    data,
                    width: d.width,
                    log_height: d.log_height + 1,
                }))
            }
        }
    }

    fn prepare(&self, airs: &[CompiledAir]) {
        if !cpu_aux_forced() {
            // NVRTC compiles of the aux programs overlap the main commitment.
            crate::logup::precompile(self.dev.arch(), airs);
        }
    }

    fn trace_dims(&self, c: &CudaCommitted) -> Vec<TraceDims> {
        c.dims.clone()
    }

    fn host_trace<'a>(
        &self,
        c: &'a CudaCommitted,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError> {
        let cell = c
            .host_traces
            .get(i)
            .ok_or_else(|| BackendError::Device(format!("round {} has no trace {i}", c.round)))?;
        if let Some(m) = cell.get() {
            return Ok(Cow::Borrowed(m));
        }
        let naturals = c
            .naturals
            .lock()
            .map_err(|_| BackendError::Device("poisoned lock".into()))?;
        let Some(buf) = naturals.get(i).and_then(Option::as_ref) else {
            return Err(BackendError::Device(format!(
                "trace c{}.t{i} was released (host_trace after release_traces)",
                c.round
            )));
        };
        let v = self.dev.download(buf).map_err(dev_err)?;
        let name = self.table_name(c.round, i);
        self.record(|s| s.add_d2h(STAGE_HOST_COPY, &name, (v.len() * 8) as u64));
        let _ = cell.set(RowMajorMatrix::new(
            v.into_iter().map(F::new).collect(),
            c.dims[i].width,
        ));
        Ok(Cow::Borrowed(cell.get().expect("set above")))
    }

    fn build_aux(
        &self,
        air: &CompiledAir,
        main: &CudaCommitted,
        table: usize,
        preprocessed: Option<(&CudaCommitted, usize)>,
        challenges: &LogupChallenges,
        log_max_multiplicity: u32,
    ) -> Result<(TraceInput<DeviceTrace>, Ext3), AuxError> {
        if cpu_aux_forced() {
            let m = self.host_trace(main, table)?;
            let p = match preprocessed {
                Some((c, i)) => Some(self.host_trace(c, i)?),
                None => None,
            };
            let (aux, sum) = zkrv_stark::logup::build_aux_trace(
                air,
                &m,
                p.as_deref(),
                challenges,
                log_max_multiplicity,
            )?;
            return Ok((TraceInput::Host(aux), sum));
        }
        let poisoned = || AuxError::Backend(BackendError::Device("poisoned lock".into()));
        let released = |c: &CudaCommitted, i: usize| {
            AuxError::Backend(BackendError::Device(format!(
                "trace c{}.t{i} was released before its aux build",
                c.round
            )))
        };
        let dims = main
            .dims
            .get(table)
            .ok_or_else(|| AuxError::Backend(BackendError::Device(format!("no trace {table}"))))?;
        let naturals = main.naturals.lock().map_err(|_| poisoned())?;
        let d_main = naturals
            .get(table)
            .and_then(Option::as_ref)
            .ok_or_else(|| released(main, table))?;
        let prep_guard = match preprocessed {
            Some((c, _)) => Some(c.naturals.lock().map_err(|_| poisoned())?),
            None => None,
        };
        let d_prep = match (preprocessed, &prep_guard) {
            (Some((c, i)), Some(g)) => Some(
                g.get(i)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| released(c, i))?,
            ),
            _ => None,
        };
        main.aux_read.store(true, Ordering::Relaxed);
        let name = self.table_name(main.round, table);
        let mut stats = TransferStats::default();
        let built = build_aux_device(
            &self.dev,
            air,
            d_main,
            dims.log_height as u32,
            d_prep,
            challenges,
            log_max_multiplicity,
            &mut stats,
            &name,
        );
        self.record(|s| s.merge(&stats));
        let (aux, sum) = built.map_err(aux_err)?;
        // The aux trace enters the aux commitment resident: the host build's upload is gone.
        self.record(|s| s.add_avoided_h2d("aux-upload", &name, aux.data.num_bytes() as u64));
        Ok((TraceInput::Device(aux), sum))
    }

    fn release_traces(&self, c: &CudaCommitted) {
        let Ok(mut naturals) = c.naturals.lock() else {
            return;
        };
        let main_round = c.aux_read.load(Ordering::Relaxed);
        for (i, slot) in naturals.iter_mut().enumerate() {
            if let Some(buf) = slot.take() {
                if main_round && c.resident[i] && c.host_traces[i].get().is_none() {
                    // A resident main trace that never crossed PCIe: the host aux build needed a copy of
                    // every resident trace of the round, made at commit.
                    let name = self.table_name(c.round, i);
                    self.record(|s| {
                        s.add_avoided_d2h(STAGE_HOST_COPY, &name, buf.num_bytes() as u64)
                    });
                }
            }
        }
    }

    fn host_lde<'a>(
        &self,
        c: &'a CudaCommitted,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError> {
        Ok(Cow::Borrowed(&self.host_ldes(c).map_err(dev_err)?[i]))
    }

    fn open(
        &self,
        fri: &FriConfig,
        rounds: &[(&CudaCommitted, Vec<Vec<Ext3>>)],
        transcript: &mut Transcript,
        hiding: Option<&ZkRng>,
    ) -> (OpenedValues, PcsProof) {
        let trees: Vec<(&MerkleTree, Vec<Vec<Ext3>>)> = rounds
            .iter()
            .map(|(c, points)| {
                // `open` cannot return an error; a device failure here (not reachable from prover input)
                // stops the proof loudly rather than feeding a placeholder tree on.
                let tree = match self.host_tree(c) {
                    Ok(t) => t,
                    Err(e) => panic!("zkrv-cuda: host copy of the Merkle tree failed: {e}"),
                };
                (tree, points.clone())
            })
            .collect();
        pcs::open(fri, &trees, transcript, hiding)
    }
}
