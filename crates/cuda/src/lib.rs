//! zkrv-cuda: the CUDA backend of zkrv (docs/gpu.md): the device runtime (`device`, `nvrtc`, [`stats`],
//! [`error`]) and the generic STARK backend (`CudaBackend` over `zkrv_stark::backend`). It depends on
//! `zkrv-stark` only and knows no machine table: the RV64IM trace fills live in `zkrv-machine-cuda`, which
//! declares its own kernel programs (`nvrtc::KernelSource`) and launches them on this crate's [`Device`].
//!
//! Kernels live in `kernels/*.cu`, mirroring the CPU modules file for file (`field.cuh` <-> `zkrv_stark::field`,
//! `poly.cu` <-> `zkrv_stark::poly`, `merkle.cu` <-> `zkrv_stark::merkle`, `zk.cu` <-> `zkrv_stark::zk`,
//! `open.cu` <-> `zkrv_stark::backend`'s `backend/open.rs`), with launchers in the modules of the
//! same name. They are compiled at run time by NVRTC for the device's compute capability (CUBIN, cached in
//! memory and on disk), and `libcuda`/`libnvrtc` are loaded at run time, so `--features cuda` builds and its
//! tests run (printing skips) on machines without CUDA. Without the `cuda` feature only the error and
//! statistics types exist and [`Device::new`] returns [`CudaError::NotBuilt`].

pub mod error;
pub mod stats;

pub use error::CudaError;
pub use stats::{TraceOrigin, TransferBytes, TransferStats};

#[cfg(feature = "cuda")]
pub mod backend;
#[cfg(feature = "cuda")]
pub mod commit;
#[cfg(feature = "cuda")]
pub mod device;
#[cfg(feature = "cuda")]
pub mod field;
#[cfg(feature = "cuda")]
pub mod logup;
#[cfg(feature = "cuda")]
pub mod merkle;
#[cfg(feature = "cuda")]
pub mod nvrtc;
#[cfg(feature = "cuda")]
pub mod open;
#[cfg(feature = "cuda")]
pub mod poly;
#[cfg(feature = "cuda")]
pub mod quotient;
#[cfg(feature = "cuda")]
pub mod sort;
#[cfg(feature = "cuda")]
pub mod zk;

#[cfg(feature = "cuda")]
pub use backend::{
    CudaBackend, CudaCommitted, DeviceCodeword, DeviceFriLayer, DeviceTrace, GpuLdeMode,
};
#[cfg(feature = "cuda")]
pub use commit::{commit_lde, commit_lde_keep, commit_lde_salted, DeviceCommitted, TraceInput};
#[cfg(feature = "cuda")]
pub use device::{libcuda_available, Device, DeviceBuffer, KArg, PinnedBuffer};
#[cfg(feature = "cuda")]
pub use nvrtc::{Header, KernelSource};

/// `s` GiB (a decimal number, e.g. `24` or `7.5`) as bytes; `None` unless a finite number > 0. The unit of
/// `--gpu-memory` and `ZKRV_GPU_MEMORY`.
pub fn parse_gib(s: &str) -> Option<u64> {
    let g: f64 = s.trim().parse().ok()?;
    (g.is_finite() && g > 0.0).then_some((g * (1u64 << 30) as f64) as u64)
}

/// Stand-in for the device when the crate is built without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub struct Device {
    _private: (),
}

#[cfg(not(feature = "cuda"))]
impl Device {
    /// Always fails: this build has no CUDA support.
    pub fn new() -> Result<Device, CudaError> {
        Err(CudaError::NotBuilt)
    }

    /// Always fails: this build has no CUDA support.
    pub fn with_ordinal(_ordinal: usize) -> Result<Device, CudaError> {
        Err(CudaError::NotBuilt)
    }

    /// Always fails: this build has no CUDA support.
    pub fn count() -> Result<usize, CudaError> {
        Err(CudaError::NotBuilt)
    }
}
