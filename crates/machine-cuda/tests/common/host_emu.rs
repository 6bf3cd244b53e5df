//! Host emulation of this crate's kernels: zkrv-cuda's `tests/common/host_emu.rs` with this crate's headers
//! (`table_common.cuh`, `layout.cuh` besides zkrv-cuda's) on the include path.

#![allow(dead_code)]

#[path = "../../../cuda/tests/common/host_emu.rs"]
mod emu;

#[allow(unused_imports)]
pub use emu::{compiler, u32s, u64s};

/// Compiles `kernel_src` (e.g. `zkrv_machine_cuda::kernels::LT_CU.src`) with `driver` as C++ and runs it on
/// `input` (see zkrv-cuda's `host_emu::run_with`): `None` without a C++ compiler.
pub fn run(name: &str, kernel_src: &str, driver: &str, input: &[u8]) -> Option<Vec<u8>> {
    emu::run_with(
        zkrv_machine_cuda::kernels::HEADERS,
        name,
        kernel_src,
        driver,
        input,
    )
}
