//! KECCAKF fill on the device (mirrors `zkrv_machine::tables::keccakf::keccakf_trace`, kernel
//! `kernels/tables/keccakf.cu`): 24 rows per call from the record's `KeccakEvent`s resident on the device
//! ([`DeviceCalls`], uploaded once with the record's cycles) and the device memory walk's previous timestamps of
//! the calls' 25 cells; uploads only the permutation's constants (56 u64, `keccakf::constants_u64`).

use crate::kernels;
use zkrv_machine::tables::keccakf::{constants_u64, keccakf_height, NUM_KECCAKF_COLS};

use crate::tables::{
    alloc_trace, launch_1d, DeviceCalls, DeviceLookups, FILL_BLOCK, MAX_FILL_LOG_ROWS,
};
use zkrv_cuda::device::{Device, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// The KECCAKF trace (`n x 2402`, n = `keccakf_height(calls, min_height)`; exactly the host fill's rows,
/// padding groups included; the calls' LT32 lookups added to `lookups`) from the calls on the device and
/// `old_ts`, the device address of their cells' previous timestamps (`calls.n_keccak x 25` u32, e.g.
/// `DeviceMemWalk::call_old_ts(0)`). Uploads the constants (H2D stage "trace-gen", table "KECCAKF").
/// Errors: no call (the table is absent: nothing to fill), `min_height` not a power of two, a height over
/// 2^26 rows, launch shape, allocation, launch.
pub fn fill_keccakf_resident(
    dev: &Device,
    calls: &DeviceCalls,
    old_ts: u64,
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let n = calls.n_keccak;
    if n == 0 {
        return Err(CudaError::InvalidArgument(
            "KECCAKF fill: no call (the table is absent)".into(),
        ));
    }
    if !min_height.is_power_of_two() {
        return Err(CudaError::InvalidArgument(format!(
            "min_height {min_height} is not a power of two"
        )));
    }
    crate::layout::check_width("KECCAKF", NUM_KECCAKF_COLS)?;
    let rows = keccakf_height(n, min_height);
    if rows > 1 << MAX_FILL_LOG_ROWS {
        return Err(CudaError::InvalidArgument(format!(
            "KECCAKF fill: {n} calls need {rows} rows, over 2^{MAX_FILL_LOG_ROWS}"
        )));
    }
    let cfg = launch_1d(rows as u64, NUM_KECCAKF_COLS as u64, FILL_BLOCK)?;
    let consts = constants_u64();
    let d_consts = dev.upload(&consts)?;
    stats.add_h2d("trace-gen", "KECCAKF", 8 * consts.len() as u64);
    let trace = alloc_trace(dev, rows, NUM_KECCAKF_COLS)?;
    // SAFETY: `calls.keccak` holds n KeccakEvents (52 u64 each, layout.cuh's struct), `old_ts` n x 25 u32,
    // `d_consts` the 56 constants, `trace` rows x 2402 u64, `counts` the 7 x 2^16 histogram; the grid covers
    // `rows` threads and the kernel skips the rest.
    unsafe {
        dev.launch(
            &kernels::KECCAKF_CU,
            "keccakf_fill",
            cfg,
            &[
                KArg::U64(calls.keccak.ptr()),
                KArg::U64(n as u64),
                KArg::U64(old_ts),
                KArg::U64(d_consts.ptr()),
                KArg::U64(rows as u64),
                KArg::U64(trace.data.ptr()),
                KArg::U64(lookups.counts.ptr()),
            ],
        )?;
    }
    Ok(trace)
}

super::device_fill! {
    /// The KECCAKF device fill ([`super::DeviceTableFill`]): absent (not filled) without calls.
    KeccakfFill: Keccakf, KECCAKF_CU, |cx, stats| {
        let calls = cx.need_calls("KECCAKF")?;
        let m = cx.need_mem("KECCAKF")?;
        fill_keccakf_resident(cx.dev, calls, m.call_old_ts(0), cx.min_height(), cx.lookups, stats)
    }
}
