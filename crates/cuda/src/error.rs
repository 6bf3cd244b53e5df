//! Errors of the CUDA backend. Every failure of device setup, compilation, allocation or launch is one of these
//! variants; nothing on those paths panics.

/// Errors of the CUDA backend.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// The crate was compiled without its `cuda` feature.
    #[error("zkrv-cuda was built without the `cuda` feature (rebuild with `--features cuda`)")]
    NotBuilt,
    /// `libcuda.so` (installed with the NVIDIA driver) could not be loaded.
    #[error(
        "libcuda (the NVIDIA driver library) could not be loaded: no NVIDIA driver on this machine"
    )]
    NoLibCuda,
    /// `libnvrtc.so.13` could not be loaded.
    #[error(
        "libnvrtc (CUDA 13.0 runtime compiler) could not be loaded: add its folder to LD_LIBRARY_PATH \
         (/usr/local/cuda/lib64, or site-packages/nvidia/cu13/lib after scripts/ci-nvrtc.sh)"
    )]
    NoNvrtc,
    /// The driver loaded but reports no usable GPU.
    #[error("no CUDA GPU available: {0}")]
    NoGpu(String),
    /// A device allocation failed.
    #[error("out of device memory allocating {bytes} bytes")]
    OutOfMemory { bytes: usize },
    /// An allocation would take the live device buffers past the device-memory budget
    /// (`Device::set_memory_budget`, `--gpu-memory`, `ZKRV_GPU_MEMORY`).
    #[error(
        "device memory budget exceeded: allocating {requested} bytes with {in_use} in use, budget {budget} \
         bytes (raise --gpu-memory / ZKRV_GPU_MEMORY, or use a GPU with more memory)"
    )]
    Budget {
        requested: u64,
        in_use: u64,
        budget: u64,
    },
    /// A CUDA driver call failed.
    #[error("CUDA error {code} ({name}) in {what}")]
    Driver {
        what: String,
        code: u32,
        name: String,
    },
    /// A kernel launch (or the work it queued, seen at the next synchronisation) failed.
    #[error("kernel {kernel} failed: CUDA error {code} ({name})")]
    Launch {
        kernel: String,
        code: u32,
        name: String,
    },
    /// NVRTC rejected a kernel file.
    #[error("NVRTC failed to compile {file} for {arch}: {log}")]
    Compile {
        file: String,
        arch: String,
        log: String,
    },
    /// A caller passed shapes the kernels cannot handle.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Kernel cache I/O (the on-disk CUBIN cache) failed in a way that matters.
    #[error("kernel cache: {0}")]
    Cache(String),
}

#[cfg(feature = "cuda")]
pub(crate) fn driver_err(what: impl Into<String>, e: cudarc::driver::DriverError) -> CudaError {
    let code = e.0 as u32;
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown".to_string());
    if e.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
        return CudaError::OutOfMemory { bytes: 0 };
    }
    CudaError::Driver {
        what: what.into(),
        code,
        name,
    }
}

#[cfg(feature = "cuda")]
pub(crate) fn launch_err(kernel: &str, e: cudarc::driver::DriverError) -> CudaError {
    let code = e.0 as u32;
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown".to_string());
    CudaError::Launch {
        kernel: kernel.to_string(),
        code,
        name,
    }
}
