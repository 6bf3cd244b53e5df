//! SHA256 fill on the device (mirrors `zkrv_machine::tables::sha256::sha256_trace`, kernel
//! `kernels/tables/sha256.cu`): 17 rows per call (and a padding boundary row first) from the record's `Sha256Event`s resident on the device
//! ([`DeviceCalls`], uploaded once with the record's cycles), the device memory walk's previous timestamps of
//! the calls' 12 cells and each call's a1 read's previous timestamp (4 B per call, from the host's register
//! walk, `FillInputs::sha256_a1`); uploads those and the constants (149 u64, `sha256::constants_u64`).

use crate::kernels;
use zkrv_machine::tables::sha256::{constants_u64, sha256_height, NUM_SHA256_COLS};

use crate::tables::{
    alloc_trace, launch_1d, upload_requests, DeviceCalls, DeviceLookups, FILL_BLOCK,
    MAX_FILL_LOG_ROWS,
};
use zkrv_cuda::device::{Device, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// The SHA256 trace (`n x 441`, n = `sha256_height(calls, min_height)`; exactly the host fill's rows, padding
/// groups included; the calls' lookups added to `lookups`) from the calls on the device, `old_ts`, the device
/// address of their cells' previous timestamps (`calls.n_sha256 x 12` u32: 4 state cells then 8 block cells,
/// e.g. `DeviceMemWalk::call_old_ts(1)`), and `a1_old_ts` (one per call, uploaded). Uploads `a1_old_ts` and the
/// constants (H2D stage "trace-gen", table "SHA256"). Errors: no call (the table is absent), `a1_old_ts` not one
/// per call or a timestamp over 32 bits, `min_height` not a power of two, a height over 2^26 rows, launch
/// shape, allocation, launch.
pub fn fill_sha256_resident(
    dev: &Device,
    calls: &DeviceCalls,
    old_ts: u64,
    a1_old_ts: &[u64],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let n = calls.n_sha256;
    let bad = |m: String| Err(CudaError::InvalidArgument(format!("SHA256 fill: {m}")));
    if n == 0 {
        return bad("no call (the table is absent)".into());
    }
    if a1_old_ts.len() != n {
        return bad(format!("{} a1 timestamps for {n} calls", a1_old_ts.len()));
    }
    if !min_height.is_power_of_two() {
        return bad(format!("min_height {min_height} is not a power of two"));
    }
    crate::layout::check_width("SHA256", NUM_SHA256_COLS)?;
    let rows = sha256_height(n, min_height);
    if rows > 1 << MAX_FILL_LOG_ROWS {
        return bad(format!(
            "{n} calls need {rows} rows, over 2^{MAX_FILL_LOG_ROWS}"
        ));
    }
    let cfg = launch_1d(rows as u64, NUM_SHA256_COLS as u64, FILL_BLOCK)?;
    let a1: Vec<u32> = a1_old_ts
        .iter()
        .map(|&t| u32::try_from(t))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            CudaError::InvalidArgument("SHA256 fill: an a1 timestamp over 32 bits".into())
        })?;
    let d_a1 = upload_requests(dev, "SHA256", &a1, stats)?;
    let consts = constants_u64();
    let d_consts = dev.upload(&consts)?;
    stats.add_h2d("trace-gen", "SHA256", 8 * consts.len() as u64);
    let trace = alloc_trace(dev, rows, NUM_SHA256_COLS)?;
    // SAFETY: `calls.sha256` holds n Sha256Events (19 u64 each, layout.cuh's struct), `old_ts` n x 12 u32,
    // `d_a1` n u32, `d_consts` the 149 constants, `trace` rows x 441 u64, `counts` the 7 x 2^16 histogram; the
    // grid covers `rows` threads and the kernel skips the rest.
    unsafe {
        dev.launch(
            &kernels::SHA256_CU,
            "sha256_fill",
            cfg,
            &[
                KArg::U64(calls.sha256.ptr()),
                KArg::U64(n as u64),
                KArg::U64(old_ts),
                KArg::U64(d_a1.ptr()),
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
    /// The SHA256 device fill ([`super::DeviceTableFill`]): absent (not filled) without calls.
    Sha256Fill: Sha256, SHA256_CU, |cx, stats| {
        let calls = cx.need_calls("SHA256")?;
        let m = cx.need_mem("SHA256")?;
        fill_sha256_resident(
            cx.dev,
            calls,
            m.call_old_ts(1),
            &cx.inputs.sha256_a1,
            cx.min_height(),
            cx.lookups,
            stats,
        )
    }
}
