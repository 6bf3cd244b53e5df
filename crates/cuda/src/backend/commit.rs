//! Commitments on the device (`CommitOps`): LDE + Merkle of every round ([`crate::commit`]), zk
//! randomization of resident traces ([`crate::zk`]). Mirrors `zkrv_stark::backend` (`backend/cpu.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::{BackendError, CommitOps, ProofFootprint, TraceDims, TraceInput};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{Digest, MatrixDims, MerkleHash};
use zkrv_stark::zk::{self as host_zk, ZkRng};

use super::{cpu_aux_forced, dev_err, CudaBackend, CudaCommitted, DeviceTrace, GpuLdeMode};
use crate::commit::TREE_CAP_LEVELS;
use crate::commit::{self, commit_lde_keep_salted, STAGE_HOST_COPY};
use crate::TraceOrigin;

impl CommitOps for CudaBackend {
    fn prepare(&self, airs: &[CompiledAir]) -> Result<(), BackendError> {
        // NVRTC compiles of the aux and quotient programs overlap the main commitment (aux first: needed
        // first).
        let mut jobs = Vec::new();
        if !cpu_aux_forced() {
            jobs = crate::logup::aux_compile_jobs(airs);
        }
        jobs.extend(crate::quotient::quotient_compile_jobs(airs));
        crate::logup::precompile(self.dev.arch(), jobs);
        Ok(())
    }

    fn input_dims(&self, t: &TraceInput<DeviceTrace>) -> TraceDims {
        match t {
            TraceInput::Host(m) => TraceDims {
                width: m.width,
                log_height: m.height().max(1).ilog2() as usize,
            },
            TraceInput::Device(d) => TraceDims {
                width: d.width,
                log_height: d.log_height as usize,
            },
        }
    }

    /// Fails with [`BackendError::Memory`] unless [`CudaBackend::device_bytes_needed`], less the input
    /// traces already resident, fits in the device budget left (`Device::memory_budget` -
    /// `Device::memory_in_use`).
    /// In `Auto` mode ([`super::GpuLdeMode`]) stores the LDEs when the stored proof fits, else recomputes
    /// them when that fits; `Store` / `Recompute` try that mode only.
    fn reserve(&self, f: &ProofFootprint) -> Result<(), BackendError> {
        let budget = self.dev.memory_budget();
        let in_use = self.dev.memory_in_use();
        let available = budget.saturating_sub(in_use) + f.resident_inputs;
        let store = self.device_bytes_needed(f);
        let recompute = self.device_bytes_needed_recompute(f);
        let (needed, mode_recompute, detail) = match self.lde_mode() {
            GpuLdeMode::Store => (store, false, f.to_string()),
            GpuLdeMode::Recompute => (
                recompute,
                true,
                f.recompute_summary(TREE_CAP_LEVELS as usize),
            ),
            GpuLdeMode::Auto if store <= available => (store, false, String::new()),
            GpuLdeMode::Auto => (
                recompute,
                true,
                format!(
                    "{}; stored LDEs would need {}",
                    f.recompute_summary(TREE_CAP_LEVELS as usize),
                    zkrv_stark::backend::gib(store)
                ),
            ),
        };
        self.reserved.store(needed, Ordering::Relaxed);
        self.recompute.store(mode_recompute, Ordering::Relaxed);
        if needed > available {
            return Err(BackendError::Memory {
                needed,
                available,
                budget,
                detail,
            });
        }
        Ok(())
    }

    fn commit(
        &self,
        traces: Vec<TraceInput<DeviceTrace>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
        hash: MerkleHash,
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
        let mut resident: Vec<bool> = inputs_dev.iter().map(Option::is_some).collect();
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
        let salt_ref = salt.as_ref().map(|(r, round)| (r, *round));
        let (gpu, naturals) = if self.recomputes() {
            // No natural traces kept: the aux build recomputes them from the coefficients.
            let c = commit::commit_coeffs(&self.dev, inputs, log_blowup as u32, salt_ref, hash)
                .map_err(dev_err)?;
            let n = c.ldes.len();
            (c, (0..n).map(|_| None).collect::<Vec<_>>())
        } else {
            let (c, kept) =
                commit_lde_keep_salted(&self.dev, inputs, log_blowup as u32, salt_ref, hash)
                    .map_err(dev_err)?;
            (c, kept.into_iter().map(Some).collect())
        };
        self.record(|s| s.merge(&gpu.stats));
        let uploaded: Vec<usize> = match self.zk_uploads.lock() {
            Ok(mut u) => {
                let mine = u
                    .iter()
                    .filter(|(r, _)| *r == round)
                    .map(|(_, t)| *t)
                    .collect();
                u.retain(|(r, _)| *r != round);
                mine
            }
            Err(_) => Vec::new(),
        };
        for t in uploaded {
            let name = self.table_name(round, t);
            self.record(|s| s.set_origin(&name, TraceOrigin::Uploaded));
            // Uploaded by `randomize_trace`: not a resident input (no copy avoided).
            if let Some(r) = resident.get_mut(t) {
                *r = false;
            }
        }
        let root = gpu.root;
        Ok((
            root,
            CudaCommitted {
                gpu,
                round,
                log_blowup,
                dims,
                resident,
                naturals: Mutex::new(naturals),
                aux_read: AtomicBool::new(false),
                host_traces,
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
        let trace = match trace {
            // Upload the `n`-row trace and randomize it on the device: half the bytes of uploading the
            // `2n`-row host result, and no host PRF. Counted as the commit upload of trace `table` of the
            // next commit round (for aux traces built on the host, `ZKRV_CPU_AUX=1`, `table` is the machine
            // table's index, not the aux round's: only the statistics' label differs).
            TraceInput::Host(m) => {
                let Some(log_height) = m.log_height().filter(|_| m.width > 0) else {
                    return Ok(TraceInput::Host(host_zk::randomize_trace(
                        &m, rng, round, table,
                    )));
                };
                // Raw (possibly non-canonical) values, no host pass: the kernel reduces on load.
                let raw = commit::as_u64(&m.values);
                let data = self.dev.upload(raw).map_err(dev_err)?;
                let commit_round = self.next_round();
                let name = self.table_name(commit_round, table as usize);
                self.record(|s| s.add_h2d(commit::STAGE_COMMIT, &name, (raw.len() * 8) as u64));
                if let Ok(mut u) = self.zk_uploads.lock() {
                    u.push((commit_round, table as usize));
                }
                DeviceTrace {
                    data,
                    width: m.width,
                    log_height: log_height as u32,
                }
            }
            TraceInput::Device(d) => d,
        };
        let data = crate::zk::randomize_trace(
            &self.dev,
            rng,
            round,
            table,
            &trace.data,
            trace.width,
            trace.log_height,
        )
        .map_err(dev_err)?;
        Ok(TraceInput::Device(DeviceTrace {
            data,
            width: trace.width,
            log_height: trace.log_height + 1,
        }))
    }

    fn trace_dims(&self, c: &CudaCommitted) -> Vec<TraceDims> {
        c.dims.clone()
    }

    fn lde_dims(&self, c: &CudaCommitted) -> Vec<MatrixDims> {
        c.dims
            .iter()
            .map(|d| MatrixDims {
                width: d.width,
                log_height: d.log_height + c.log_blowup,
            })
            .collect()
    }

    fn release_traces(&self, c: &CudaCommitted) -> Result<(), BackendError> {
        let mut naturals = c
            .naturals
            .lock()
            .map_err(|_| BackendError::Device("poisoned lock".into()))?;
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
        Ok(())
    }
}
