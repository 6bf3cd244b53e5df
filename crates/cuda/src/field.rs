//! Launchers for the parity kernels of `kernels/field.cuh` (Goldilocks and `Ext3 = F[X]/(X^3 - 7)`, mirroring
//! `zkrv_stark::field`). The arithmetic itself is used by every other kernel; these entry points exist so that
//! tests can compare it element by element with the CPU.

use crate::device::{cfg, Device, KArg};
use crate::error::CudaError;
use crate::nvrtc;

/// For each i: `[a+b, a-b, a*b, a^-1]` of `a[i]`, `b[i]` (inputs any u64, reduced mod p; `0^-1 = 0`).
/// Output: `n x 4` row-major, canonical.
pub fn base_ops(dev: &Device, a: &[u64], b: &[u64]) -> Result<Vec<u64>, CudaError> {
    if a.len() != b.len() {
        return Err(CudaError::InvalidArgument(
            "a and b differ in length".into(),
        ));
    }
    let n = a.len();
    let (da, db) = (dev.upload(a)?, dev.upload(b)?);
    let out = dev.alloc::<u64>(4 * n)?;
    // SAFETY: a, b have n entries, out 4n; one thread per i.
    unsafe {
        dev.launch(
            &nvrtc::FIELD_TEST_CU,
            "field_ops_kernel",
            cfg((n as u32).div_ceil(256).max(1), 256, 0),
            &[
                KArg::U64(da.ptr()),
                KArg::U64(db.ptr()),
                KArg::U64(out.ptr()),
                KArg::U32(n as u32),
            ],
        )?;
    }
    dev.download(&out)
}

/// For each i: `[a+b, a-b, a*b, a^-1]` in `Ext3` of `a[i]`, `b[i]` (`[c0, c1, c2]` each).
/// Output: `n x 12` row-major (4 results of 3 coefficients), canonical.
pub fn ext3_ops(dev: &Device, a: &[[u64; 3]], b: &[[u64; 3]]) -> Result<Vec<u64>, CudaError> {
    if a.len() != b.len() {
        return Err(CudaError::InvalidArgument(
            "a and b differ in length".into(),
        ));
    }
    let n = a.len();
    let flat = |v: &[[u64; 3]]| v.iter().flatten().copied().collect::<Vec<u64>>();
    let (da, db) = (dev.upload(&flat(a))?, dev.upload(&flat(b))?);
    let out = dev.alloc::<u64>(12 * n)?;
    // SAFETY: a, b have 3n entries, out 12n; one thread per i.
    unsafe {
        dev.launch(
            &nvrtc::FIELD_TEST_CU,
            "ext3_ops_kernel",
            cfg((n as u32).div_ceil(256).max(1), 256, 0),
            &[
                KArg::U64(da.ptr()),
                KArg::U64(db.ptr()),
                KArg::U64(out.ptr()),
                KArg::U32(n as u32),
            ],
        )?;
    }
    dev.download(&out)
}
