//! The prover backends behind one choice ([`Backend`]): the CPU (`zkrv_stark`'s `CpuBackend`) or the CUDA
//! backend of `zkrv-cuda` (feature `cuda`), which also generates the traces that have a device fill
//! (docs/gpu.md, "Trace generation"). The same tables, preprocessed traces and public interactions on
//! either: GPU and CPU proofs are byte-identical for the same randomness.

use crate::Error;
use zkrv_executor::Program;
use zkrv_machine::{Proof, Statement};
use zkrv_stark::backend::{CpuBackend, LdeMode};
use zkrv_stark::StarkConfig;

/// Which prover backend to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The GPU if one is usable (feature `cuda`, a driver, NVRTC, a device), else the CPU.
    Auto,
    /// The CPU backend (default: the only one without a GPU, and the one the tests pin).
    #[default]
    Cpu,
    /// The GPU; [`Error::NoGpu`] if none is usable.
    Gpu,
}

/// How many GPUs a segmented proof uses (`zkrv prove --gpus N|all`): one worker per device, each proving
/// one segment at a time (docs/continuations.md "GPU"). A run proven as one proof uses the first only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gpus {
    /// Devices `0..n` (at least 1).
    Count(usize),
    /// Every device `cuDeviceGetCount` reports.
    All,
}

impl Default for Gpus {
    fn default() -> Self {
        Gpus::Count(1)
    }
}

impl Gpus {
    /// The number of devices: `n`, or the device count for [`Gpus::All`] ([`Error::NoGpu`] if it cannot
    /// be read).
    pub fn resolve(self) -> Result<usize, Error> {
        match self {
            Gpus::Count(n) => Ok(n.max(1)),
            Gpus::All => device_count(),
        }
    }
}

impl std::str::FromStr for Gpus {
    type Err = String;
    /// `all`, or a count of at least 1.
    fn from_str(s: &str) -> Result<Gpus, String> {
        match s {
            "all" => Ok(Gpus::All),
            _ => match s.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(Gpus::Count(n)),
                _ => Err(format!(
                    "`{s}` is not a number of GPUs (1, 2, ... or `all`)"
                )),
            },
        }
    }
}

/// An opened prover backend: the CPU, or one CUDA device (feature `cuda`). Opaque: [`crate::prove`] opens
/// and drives the engines; a host opens one itself only to ask what is there ([`Engine::open`],
/// [`Engine::open_gpus`], [`Engine::name`]).
pub struct Engine(Inner);

enum Inner {
    Cpu,
    #[cfg(feature = "cuda")]
    Gpu(Box<zkrv_cuda::CudaBackend>),
}

impl Engine {
    /// Opens `backend`. For [`Backend::Auto`] without a usable GPU: the CPU engine and the reason, for the
    /// caller to show.
    pub fn open(backend: Backend) -> Result<(Engine, Option<String>), Error> {
        Self::open_with(backend, None)
    }

    /// [`Engine::open`] with the GPU's memory budget capped at `gpu_memory` bytes (the device's own budget
    /// is its free memory, capped by `ZKRV_GPU_MEMORY` where the device runtime is opened). A proof that
    /// does not fit fails before it starts, naming the bytes needed and available.
    pub fn open_with(
        backend: Backend,
        gpu_memory: Option<u64>,
    ) -> Result<(Engine, Option<String>), Error> {
        if backend == Backend::Cpu {
            return Ok((Engine(Inner::Cpu), None));
        }
        match open_gpu_ordinal(0, gpu_memory) {
            Ok(e) => Ok((e, None)),
            Err(e) if backend == Backend::Auto => Ok((Engine(Inner::Cpu), Some(e))),
            Err(e) => Err(Error::NoGpu(e)),
        }
    }

    /// [`Engine::open_with`], then for a GPU engine and `gpus` above 1 the devices `1..n` too
    /// (`Device::with_ordinal`), each with the same memory cap: one engine per device, in ordinal order.
    /// Asking for more devices than there are is [`Error::NoGpu`] naming both counts (never fewer engines
    /// than asked); a CPU engine (also `Backend::Auto` without a GPU) is one engine whatever `gpus` says.
    pub fn open_gpus(
        backend: Backend,
        gpu_memory: Option<u64>,
        gpus: Gpus,
    ) -> Result<(Vec<Engine>, Option<String>), Error> {
        let (first, fallback) = Self::open_with(backend, gpu_memory)?;
        if !first.is_gpu() {
            return Ok((vec![first], fallback));
        }
        let mut engines = vec![first];
        for ordinal in 1..gpus.resolve()? {
            engines.push(Self::open_ordinal(ordinal, gpu_memory)?);
        }
        Ok((engines, fallback))
    }

    /// Opens GPU `ordinal` (`Device::with_ordinal`) with its memory budget capped at `gpu_memory` bytes;
    /// [`Error::NoGpu`] naming the device if it cannot be used.
    pub fn open_ordinal(ordinal: usize, gpu_memory: Option<u64>) -> Result<Engine, Error> {
        open_gpu_ordinal(ordinal, gpu_memory).map_err(Error::NoGpu)
    }

    /// Whether this is a GPU engine.
    pub fn is_gpu(&self) -> bool {
        !matches!(self.0, Inner::Cpu)
    }

    /// `cpu`, or `gpu (<device name>)`.
    pub fn name(&self) -> String {
        match &self.0 {
            Inner::Cpu => "cpu".into(),
            #[cfg(feature = "cuda")]
            Inner::Gpu(b) => format!("gpu ({})", b.device().name()),
        }
    }

    /// GPU only: where the device keeps its LDEs (`auto`, `store`, `recompute`: the same three modes as the
    /// CPU's [`LdeMode`]; no effect on the CPU, whose mode is given to each proof).
    pub(crate) fn set_gpu_lde(&self, mode: LdeMode) {
        #[cfg(not(feature = "cuda"))]
        let _ = mode;
        #[cfg(feature = "cuda")]
        if let Inner::Gpu(b) = &self.0 {
            b.set_lde_mode(match mode {
                LdeMode::Auto => zkrv_cuda::GpuLdeMode::Auto,
                LdeMode::Store => zkrv_cuda::GpuLdeMode::Store,
                LdeMode::Recompute => zkrv_cuda::GpuLdeMode::Recompute,
            });
        }
    }

    /// Re-executes the segment of checkpoint `cp` for this engine ([`SegmentInput`]): on a GPU, unless
    /// `cpu_trace`, only the re-execution (`zkrv_machine::segment::segment_run`: its traces are built on the
    /// device by [`Engine::prove_segment`]); else with its host traces
    /// (`zkrv_machine::segment::segment_witness`). Runs on the scheduler's producer thread (no device
    /// access).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn segment_input(
        &self,
        program: &Program,
        input: &[u8],
        cp: &zkrv_executor::Checkpoint,
        count: u32,
        run_id: [u8; 32],
        cpu_trace: bool,
        config: &StarkConfig,
    ) -> Result<SegmentInput, zkrv_machine::MachineError> {
        use zkrv_machine::segment::{segment_run, segment_witness};
        if self.is_gpu() && !cpu_trace {
            return Ok(SegmentInput::Device(segment_run(
                program, input, cp, count, run_id,
            )?));
        }
        Ok(SegmentInput::Host(segment_witness(
            program, input, cp, count, run_id, config,
        )?))
    }

    /// Proves one segment on this engine. On the GPU a [`SegmentInput::Device`] segment's main traces are
    /// built on the device from its record and start state (`zkrv_machine_cuda::trace_gen::
    /// generate_segment_traces`: no main trace crosses PCIe), a [`SegmentInput::Host`] one's are uploaded
    /// at the main commitment; the tables are named in the transfer statistics, which add up over the
    /// segments.
    pub(crate) fn prove_segment(
        &self,
        program: &Program,
        segment: SegmentInput,
        config: &StarkConfig,
        lde: LdeMode,
    ) -> Result<zkrv_machine::segment::SegmentProof, zkrv_machine::MachineError> {
        match (&self.0, segment) {
            (Inner::Cpu, SegmentInput::Host(w)) => {
                zkrv_machine::segment::prove_segment_with(&CpuBackend::new(lde), program, w, config)
            }
            #[cfg(feature = "cuda")]
            (Inner::Gpu(b), SegmentInput::Host(w)) => {
                b.name_tables(
                    b.next_round(),
                    zkrv_machine::TABLE_NAMES
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                );
                zkrv_machine::segment::prove_segment_with(b.as_ref(), program, w, config)
            }
            #[cfg(feature = "cuda")]
            (Inner::Gpu(b), SegmentInput::Device(run)) => {
                let opts = zkrv_machine_cuda::TraceGenOptions {
                    min_height: zkrv_machine::min_height(config),
                    ..Default::default()
                };
                // A stage of the segment's profile (`--profile`: segments/prove (sum)/trace generation).
                let (w, _) = zkrv_stark::profile::time("trace generation", || {
                    zkrv_machine_cuda::trace_gen::generate_segment_traces(
                        b.as_ref(),
                        program,
                        run,
                        opts,
                    )
                })
                .map_err(|e| match e {
                    zkrv_machine_cuda::trace_gen::TraceGenError::Machine(e) => e,
                    e => zkrv_machine::MachineError::Internal(format!(
                        "device trace generation: {e}"
                    )),
                })?;
                zkrv_machine::segment::prove_segment_inputs_with(b.as_ref(), program, w, config)
            }
            _ => Err(zkrv_machine::MachineError::Internal(
                "segment prepared for another backend".into(),
            )),
        }
    }

    /// GPU only: the transfer statistics of every proof on this engine so far.
    pub(crate) fn transfers(&self) -> Option<zkrv_cuda::TransferStats> {
        match &self.0 {
            Inner::Cpu => None,
            #[cfg(feature = "cuda")]
            Inner::Gpu(b) => Some(b.stats()),
        }
    }

    /// Device memory in use (bytes, `cuMemGetInfo`: total - free), GPU only.
    pub(crate) fn device_used(&self) -> Option<u64> {
        match &self.0 {
            Inner::Cpu => None,
            #[cfg(feature = "cuda")]
            Inner::Gpu(b) => b
                .device()
                .mem_info()
                .ok()
                .map(|(free, total)| total.saturating_sub(free) as u64),
        }
    }

    /// GPU only: the device's live-buffer figures ([`crate::DeviceBuffers`]).
    pub(crate) fn device_buffers(&self) -> Option<crate::DeviceBuffers> {
        match &self.0 {
            Inner::Cpu => None,
            #[cfg(feature = "cuda")]
            Inner::Gpu(b) => Some(crate::DeviceBuffers {
                peak: b.device().memory_peak(),
                budget: b.device().memory_budget(),
                estimate: b.reserved_bytes(),
                recomputed: b.recomputes(),
            }),
        }
    }

    /// Generates the main traces of a run of `program` on `input` for this engine: on the GPU, device
    /// fills unless `cpu_trace`. Runs the program with recording (`zkrv_machine::run_for_proof`: the cycle
    /// and memory-touch limits are checked there).
    pub(crate) fn prepare_traces(
        &self,
        program: &Program,
        input: &[u8],
        cpu_trace: bool,
        config: &StarkConfig,
    ) -> Result<Prepared, Error> {
        #[cfg(not(feature = "cuda"))]
        let _ = cpu_trace;
        match &self.0 {
            Inner::Cpu => Ok(Prepared::Host(zkrv_machine::witness_for(
                program, input, config,
            )?)),
            #[cfg(feature = "cuda")]
            Inner::Gpu(b) => {
                let opts = zkrv_machine_cuda::TraceGenOptions {
                    host_traces: cpu_trace,
                    min_height: zkrv_machine::min_height(config),
                    ..Default::default()
                };
                zkrv_machine_cuda::trace_gen::generate_traces(b.as_ref(), program, input, opts)
                    .map(Prepared::Gpu)
                    .map_err(|e| Error::Gpu(e.to_string()))
            }
        }
    }

    /// Proves prepared traces (from [`Engine::prepare_traces`] on this engine). `lde` is the CPU backend's
    /// memory mode (no effect on the GPU).
    pub(crate) fn prove(
        &self,
        program: &Program,
        prepared: Prepared,
        config: &StarkConfig,
        lde: LdeMode,
    ) -> Result<(Statement, Proof), Error> {
        match (&self.0, prepared) {
            (Inner::Cpu, Prepared::Host(w)) => Ok(zkrv_machine::prove_witness_with(
                &CpuBackend::new(lde),
                program,
                w,
                config,
            )?),
            #[cfg(feature = "cuda")]
            (Inner::Gpu(b), Prepared::Gpu(g)) => Ok(zkrv_machine::prove_inputs_with(
                b.as_ref(),
                program,
                g.statement,
                g.pages,
                g.traces,
                config,
            )?),
            #[cfg(feature = "cuda")]
            _ => Err(Error::Internal(
                "traces prepared for another backend".into(),
            )),
        }
    }
}

// The segment scheduler shares the engines between its worker threads.
#[cfg(feature = "cuda")]
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Engine>();
};

/// The number of CUDA devices, or why there is none to count.
fn device_count() -> Result<usize, Error> {
    zkrv_cuda::Device::count().map_err(|e| Error::NoGpu(e.to_string()))
}

#[cfg(feature = "cuda")]
fn open_gpu_ordinal(ordinal: usize, gpu_memory: Option<u64>) -> Result<Engine, String> {
    let dev = zkrv_cuda::Device::with_ordinal(ordinal).map_err(|e| match ordinal {
        0 => e.to_string(),
        _ => format!("GPU {ordinal}: {e}"),
    })?;
    if let Some(cap) = gpu_memory {
        dev.set_memory_budget(dev.memory_budget().min(cap));
    }
    Ok(Engine(Inner::Gpu(Box::new(zkrv_cuda::CudaBackend::new(
        dev,
    )))))
}

#[cfg(not(feature = "cuda"))]
fn open_gpu_ordinal(_ordinal: usize, _gpu_memory: Option<u64>) -> Result<Engine, String> {
    Err(
        "this build has no GPU support (feature `cuda` of zkrv-sdk, or of the zkrv binary, is off)"
            .into(),
    )
}

/// One segment as the scheduler's producer hands it to an [`Engine`] ([`Engine::segment_input`]).
#[allow(clippy::large_enum_variant)] // one per segment in flight; boxing buys nothing
pub(crate) enum SegmentInput {
    /// Its witness with host traces (the CPU backend; the GPU with `cpu_trace`).
    Host(zkrv_machine::segment::SegmentWitness),
    /// Its re-execution only: the GPU builds its traces on the device.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Device(zkrv_machine::segment::SegmentRun),
}

/// The main traces of a run, ready to prove on an [`Engine`].
pub(crate) enum Prepared {
    /// Host traces (CPU backend).
    Host(zkrv_machine::Witness),
    /// GPU backend: device-filled tables resident, the others host matrices.
    #[cfg(feature = "cuda")]
    Gpu(zkrv_machine_cuda::trace_gen::GpuTraces),
}
