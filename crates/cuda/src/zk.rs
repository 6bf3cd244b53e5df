//! Launchers for `kernels/zk.cu`: the zk-mode randomness of `zkrv_stark::zk` on the device (Merkle salts,
//! randomized traces, stream matrices for the quotient masks and the random codeword), bit-exact with the
//! host functions.

use zkrv_stark::zk::{ZkRng, SALT_WIDTH};

use crate::device::{cfg, Device, DeviceBuffer, KArg};
use crate::error::CudaError;
use crate::nvrtc;

fn seed_args(rng: &ZkRng) -> [KArg; 4] {
    rng.seed_words().map(KArg::U64)
}

/// Salt matrix of one Merkle level, as `zkrv_stark::zk::salt_matrix`: `2^log_height x SALT_WIDTH` row-major
/// u64 (canonical), row `r` = stream `(DOMAIN_SALT, round, log_height, r)`.
pub fn salt_matrix(
    dev: &Device,
    rng: &ZkRng,
    round: u32,
    log_height: u32,
) -> Result<DeviceBuffer<u64>, CudaError> {
    salt_rows(dev, rng, round, log_height, 0, 1usize << log_height)
}

/// Rows `[row0, row0 + height)` of [`salt_matrix`] (`height x SALT_WIDTH`), for trees hashed one coset
/// block at a time.
pub fn salt_rows(
    dev: &Device,
    rng: &ZkRng,
    round: u32,
    log_height: u32,
    row0: usize,
    height: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    if row0 + height > 1usize << log_height || height == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "salt rows {row0}..{} of 2^{log_height}",
            row0 + height
        )));
    }
    let out = dev.alloc::<u64>(height * SALT_WIDTH)?;
    let [s0, s1, s2, s3] = seed_args(rng);
    // SAFETY: out holds height x SALT_WIDTH u64; the kernel writes rows < height only.
    unsafe {
        dev.launch(
            &nvrtc::ZK_CU,
            "zk_salt_kernel",
            cfg(height.div_ceil(128) as u32, 128, 0),
            &[
                s0,
                s1,
                s2,
                s3,
                KArg::U32(round),
                KArg::U32(log_height),
                KArg::U64(height as u64),
                KArg::U32(SALT_WIDTH as u32),
                KArg::U64(out.ptr()),
                KArg::U64(row0 as u64),
            ],
        )?;
    }
    Ok(out)
}

/// Randomized trace, as `zkrv_stark::zk::randomize_trace`: `trace` is `2^log_n x width` (natural order), the
/// result `2^(log_n + 1) x width`, even rows the trace, row `2i + 1` stream `(DOMAIN_TRACE, round, table, i)`.
pub fn randomize_trace(
    dev: &Device,
    rng: &ZkRng,
    round: u32,
    table: u64,
    trace: &DeviceBuffer<u64>,
    width: usize,
    log_n: u32,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let n = 1usize << log_n;
    if width == 0 || trace.len() != n * width {
        return Err(CudaError::InvalidArgument(format!(
            "randomize_trace: buffer of {} is not 2^{log_n} x {width}",
            trace.len()
        )));
    }
    let out = dev.alloc::<u64>(2 * n * width)?;
    let [s0, s1, s2, s3] = seed_args(rng);
    // SAFETY: trace holds n x width u64, out 2n x width; one thread per input row i < n.
    unsafe {
        dev.launch(
            &nvrtc::ZK_CU,
            "zk_randomize_trace_kernel",
            cfg(n.div_ceil(128) as u32, 128, 0),
            &[
                s0,
                s1,
                s2,
                s3,
                KArg::U32(round),
                KArg::U64(table),
                KArg::U64(trace.ptr()),
                KArg::U64(width as u64),
                KArg::U64(n as u64),
                KArg::U64(out.ptr()),
            ],
        )?;
    }
    Ok(out)
}

/// A stream matrix, as `zkrv_stark::zk::ZkRng::matrix`: `rows x width` row-major u64 (canonical), row `r` =
/// the first `width` elements of stream `(domain, round, index, r)`.
pub fn stream_matrix(
    dev: &Device,
    rng: &ZkRng,
    domain: u32,
    round: u32,
    index: u64,
    rows: usize,
    width: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    if width == 0 || width > u32::MAX as usize || rows.div_ceil(128) > u32::MAX as usize {
        return Err(CudaError::InvalidArgument(format!(
            "stream matrix of {rows} x {width}"
        )));
    }
    let out = dev.alloc::<u64>(rows * width)?;
    let [s0, s1, s2, s3] = seed_args(rng);
    // SAFETY: out holds rows x width u64; the kernel writes rows < rows only.
    unsafe {
        dev.launch(
            &nvrtc::ZK_CU,
            "zk_matrix_kernel",
            cfg(rows.div_ceil(128).max(1) as u32, 128, 0),
            &[
                s0,
                s1,
                s2,
                s3,
                KArg::U32(domain),
                KArg::U32(round),
                KArg::U64(index),
                KArg::U64(rows as u64),
                KArg::U32(width as u32),
                KArg::U64(out.ptr()),
            ],
        )?;
    }
    Ok(out)
}
