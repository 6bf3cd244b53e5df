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

/// An opened prover backend.
pub enum Engine {
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

    /// [`Engine::open`] with the GPU's memory budget capped at `gpu_memory` bytes (`--gpu-memory`; the
    /// default budget is the device's free memory, capped by `ZKRV_GPU_MEMORY`). A proof that does not fit
    /// fails before it starts, naming the bytes needed and available.
    pub fn open_with(
        backend: Backend,
        gpu_memory: Option<u64>,
    ) -> Result<(Engine, Option<String>), Error> {
        if backend == Backend::Cpu {
            return Ok((Engine::Cpu, None));
        }
        match open_gpu(gpu_memory) {
            Ok(e) => Ok((e, None)),
            Err(e) if backend == Backend::Auto => Ok((Engine::Cpu, Some(e))),
            Err(e) => Err(Error::NoGpu(e)),
        }
    }

    /// `cpu`, or `gpu (<device name>)`.
    pub fn name(&self) -> String {
        match self {
            Engine::Cpu => "cpu".into(),
            #[cfg(feature = "cuda")]
            Engine::Gpu(b) => format!("gpu ({})", b.device().name()),
        }
    }

    /// Device memory in use (bytes, `cuMemGetInfo`: total - free), GPU only.
    pub fn device_used(&self) -> Option<u64> {
        match self {
            Engine::Cpu => None,
            #[cfg(feature = "cuda")]
            Engine::Gpu(b) => b
                .device()
                .mem_info()
                .ok()
                .map(|(free, total)| total.saturating_sub(free) as u64),
        }
    }

    /// GPU only: (high-water mark of the bytes held by live device buffers, the budget, the last proof's
    /// estimate before it started) in bytes, and whether that proof recomputed its LDEs per coset block.
    pub fn device_memory(&self) -> Option<(u64, u64, u64, bool)> {
        match self {
            Engine::Cpu => None,
            #[cfg(feature = "cuda")]
            Engine::Gpu(b) => Some((
                b.device().memory_peak(),
                b.device().memory_budget(),
                b.reserved_bytes(),
                b.recomputes(),
            )),
        }
    }

    /// Generates the main traces of a run of `program` on `input` for this engine: on the GPU, device
    /// fills unless `cpu_trace` or `ZKRV_CPU_TRACE=1`. Runs the program with recording
    /// (`zkrv_machine::run_for_proof`: the cycle and memory-touch limits are checked there).
    pub fn prepare_traces(
        &self,
        program: &Program,
        input: &[u8],
        cpu_trace: bool,
        config: &StarkConfig,
    ) -> Result<Prepared, Error> {
        #[cfg(not(feature = "cuda"))]
        let _ = cpu_trace;
        match self {
            Engine::Cpu => Ok(Prepared::Host(zkrv_machine::witness_for(
                program, input, config,
            )?)),
            #[cfg(feature = "cuda")]
            Engine::Gpu(b) => {
                let mut opts = zkrv_cuda::TraceGenOptions::from_env();
                opts.host_traces |= cpu_trace;
                opts.min_height = zkrv_machine::min_height(config);
                zkrv_cuda::trace_gen::generate_traces(b.as_ref(), program, input, opts)
                    .map(Prepared::Gpu)
                    .map_err(|e| Error::Gpu(e.to_string()))
            }
        }
    }

    /// Proves prepared traces (from [`Engine::prepare_traces`] on this engine). `lde` is the CPU backend's
    /// memory mode (no effect on the GPU).
    pub fn prove(
        &self,
        program: &Program,
        prepared: Prepared,
        config: &StarkConfig,
        lde: LdeMode,
    ) -> Result<(Statement, Proof), Error> {
        match (self, prepared) {
            (Engine::Cpu, Prepared::Host(w)) => Ok(zkrv_machine::prove_witness_with(
                &CpuBackend::new(lde),
                program,
                w,
                config,
            )?),
            #[cfg(feature = "cuda")]
            (Engine::Gpu(b), Prepared::Gpu(g)) => Ok(zkrv_machine::prove_inputs_with(
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

#[cfg(feature = "cuda")]
fn open_gpu(gpu_memory: Option<u64>) -> Result<Engine, String> {
    let dev = zkrv_cuda::Device::new().map_err(|e| e.to_string())?;
    if let Some(cap) = gpu_memory {
        dev.set_memory_budget(dev.memory_budget().min(cap));
    }
    let mode = zkrv_cuda::GpuLdeMode::from_env()?;
    let b = zkrv_cuda::CudaBackend::new(dev);
    b.set_lde_mode(mode);
    Ok(Engine::Gpu(Box::new(b)))
}

#[cfg(not(feature = "cuda"))]
fn open_gpu(_gpu_memory: Option<u64>) -> Result<Engine, String> {
    Err(
        "this build has no GPU support (feature `cuda` of zkrv-sdk, or of the zkrv binary, is off)"
            .into(),
    )
}

/// The main traces of a run, ready to prove on an [`Engine`].
pub enum Prepared {
    /// Host traces (CPU backend).
    Host(zkrv_machine::Witness),
    /// GPU backend: device-filled tables resident, the others host matrices.
    #[cfg(feature = "cuda")]
    Gpu(zkrv_cuda::trace_gen::GpuTraces),
}
