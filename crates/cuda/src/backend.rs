//! [`CudaBackend`]: the CUDA implementation of `zkrv_stark::backend::ProverBackend`.
//!
//! On the GPU now: **commit** (LDE + Merkle tree of every round: main, preprocessed, aux, quotient), through
//! [`commit_lde`]. Still on the host (the trait's defaults and `pcs::open`): aux build, quotient, DEEP/FRI open.
//! Those phases read host copies, made explicitly and counted in [`CudaBackend::stats`] under stage
//! "host-copy":
//! * `host_trace`: the host matrix when the trace came from the host (no copy); a resident trace is copied
//!   to the host once at commit, before its device buffer is dropped (the LDE is its last device consumer);
//! * `host_lde`: all LDEs of a round are downloaded once, on first use (a device failure there is
//!   `BackendError::Device`);
//! * `open`: `pcs::open` needs a host `MerkleTree`: the GPU tree levels are downloaded (counted as
//!   "merkle-layers") and wrapped with `MerkleTree::from_layers`, no rehash on the CPU (root checked against
//!   the GPU root; debug builds also compare every layer with a CPU rebuild). `open` cannot return an error:
//!   a device failure there panics with the CUDA error (the quotient phase has downloaded the LDEs already).

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use zkrv_stark::backend::{BackendError, ProverBackend, TraceDims, TraceInput};
use zkrv_stark::field::{Ext3, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{Digest, MerkleTree};
use zkrv_stark::pcs::{self, FriConfig, OpenedValues, PcsProof};
use zkrv_stark::transcript::Transcript;

use crate::commit::{self, commit_lde, DeviceCommitted, STAGE_HOST_COPY};
use crate::device::{Device, DeviceBuffer};
use crate::error::CudaError;
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

/// One committed round: LDEs and tree on the device, host copies made on demand.
pub struct CudaCommitted {
    gpu: DeviceCommitted,
    dims: Vec<TraceDims>,
    host_traces: Vec<RowMajorMatrix>,
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
        self.record(|s| s.add_d2h(STAGE_HOST_COPY, "merkle-layers", bytes));
        let tree = MerkleTree::from_layers(ldes, layers)
            .map_err(|e| CudaError::InvalidArgument(format!("GPU Merkle levels: {e}")))?;
        if tree.root() != c.gpu.root {
            return Err(CudaError::InvalidArgument(
                "GPU Merkle levels do not end in the committed root".into(),
            ));
        }
        debug_assert_eq!(
            tree.layers(),
            MerkleTree::new(tree.matrices().to_vec()).layers(),
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
    ) -> Result<(Digest, CudaCommitted), BackendError> {
        if traces.is_empty() {
            return Err(BackendError::Commit("no traces".into()));
        }
        let round = self.commits.fetch_add(1, Ordering::Relaxed);
        let mut host_traces = Vec::with_capacity(traces.len());
        let mut resident = Vec::with_capacity(traces.len());
        let mut dims = Vec::with_capacity(traces.len());
        for (i, t) in traces.into_iter().enumerate() {
            let name = self.table_name(round, i);
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
                    host_traces.push(m);
                    resident.push(None);
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
                    // Host copy for the phases still on the CPU (aux build reads the main trace).
                    let v = self.dev.download(&d.data).map_err(dev_err)?;
                    self.record(|s| s.add_d2h(STAGE_HOST_COPY, &name, (v.len() * 8) as u64));
                    host_traces.push(RowMajorMatrix::new(
                        v.into_iter().map(F::new).collect(),
                        d.width,
                    ));
                    dims.push(TraceDims {
                        width: d.width,
                        log_height: d.log_height as usize,
                    });
                    resident.push(Some(d));
                }
            }
        }
        let inputs: Vec<commit::TraceInput<'_>> = resident
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let name = self.table_name(round, i);
                match r {
                    None => commit::TraceInput::Host {
                        name,
                        trace: &host_traces[i],
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
        let gpu = commit_lde(&self.dev, inputs, log_blowup as u32).map_err(dev_err)?;
        self.record(|s| s.merge(&gpu.stats));
        let root = gpu.root;
        Ok((
            root,
            CudaCommitted {
                gpu,
                dims,
                host_traces,
                host_ldes: OnceLock::new(),
                host_tree: OnceLock::new(),
            },
        ))
    }

    fn trace_dims(&self, c: &CudaCommitted) -> Vec<TraceDims> {
        c.dims.clone()
    }

    fn host_trace<'a>(
        &self,
        c: &'a CudaCommitted,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError> {
        Ok(Cow::Borrowed(&c.host_traces[i]))
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
        pcs::open(fri, &trees, transcript)
    }
}
