//! zkrv-machine-cuda: GPU trace generation for the RV64IM machine (docs/gpu.md, "Trace generation").
//!
//! It sits on `zkrv-cuda` (the device runtime and the generic STARK backend, which knows nothing of the
//! machine) and `zkrv-machine` (the tables): the fill kernels `kernels/tables/<table>.cu` with their launchers
//! in [`tables`] (mirroring `zkrv_machine::tables::<table>` file for file), the device register and memory
//! walks and request lists, the generated layout header ([`layout`]) and the end-to-end driver
//! ([`trace_gen`]). Its kernel programs are declared in [`kernels`] and compiled by `zkrv-cuda`'s NVRTC cache
//! like the backend's own. Without the `cuda` feature the crate is empty.

#[cfg(feature = "cuda")]
pub mod kernels;
#[cfg(feature = "cuda")]
pub mod layout;
#[cfg(feature = "cuda")]
pub mod tables;
#[cfg(feature = "cuda")]
pub mod trace_gen;

#[cfg(feature = "cuda")]
pub use trace_gen::{
    prove_gpu_tracegen, prove_gpu_tracegen_with, TraceGenError, TraceGenOptions, TraceGenReport,
};
