//! POSEIDON2 fill on the device (mirrors `zkrv_machine::tables::poseidon2::poseidon2_trace`, kernel
//! `kernels/tables/poseidon2.cu`): one row per call from the record's `Poseidon2Event`s resident on the device
//! ([`DeviceCalls`], uploaded once with the record's cycles) and the device memory walk's previous timestamps
//! of the calls' cells; uploads only the permutation's constants (94 u64, `poseidon2::constants_u64`).

use crate::kernels;
use zkrv_machine::tables::poseidon2::{constants_u64, NUM_POSEIDON2_COLS, WIDTH};

use crate::tables::{
    alloc_trace, event_table_height, launch_1d, DeviceCalls, DeviceLookups, FILL_BLOCK,
};
use zkrv_cuda::device::{Device, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// The POSEIDON2 trace (`n x 247`, n = the next power of two >= calls, at least `min_height`; exactly the host
/// fill's rows, padding included; the calls' lookups added to `lookups`) from the calls on the device and
/// `old_ts`, the device address of their cells' previous timestamps (`calls.n_poseidon2 x 8` u32, e.g.
/// `DeviceMemWalk::call_old_ts(2)`). Uploads the constants (H2D stage "trace-gen", table "POSEIDON2") and
/// reads back one error flag. Errors: no call (the table is absent: nothing to fill), a call whose output is
/// not the permutation of its input or whose state pointer is not 8-aligned (naming the call and its cycle,
/// as the host fill does), launch shape, allocation, launch.
pub fn fill_poseidon2_resident(
    dev: &Device,
    calls: &DeviceCalls,
    old_ts: u64,
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let n = calls.n_poseidon2;
    if n == 0 {
        return Err(CudaError::InvalidArgument(
            "POSEIDON2 fill: no call (the table is absent)".into(),
        ));
    }
    crate::layout::check_width("POSEIDON2", NUM_POSEIDON2_COLS)?;
    let rows = event_table_height(n, min_height)?;
    let cfg = launch_1d(rows as u64, NUM_POSEIDON2_COLS as u64, FILL_BLOCK)?;
    let consts = constants_u64();
    let d_consts = dev.upload(&consts)?;
    stats.add_h2d("trace-gen", "POSEIDON2", 8 * consts.len() as u64);
    let err = dev.upload(&[u32::MAX])?;
    let trace = alloc_trace(dev, rows, NUM_POSEIDON2_COLS)?;
    // SAFETY: `calls.poseidon2` holds n Poseidon2Events (18 u64 each, layout.cuh's struct), `old_ts` n x WIDTH
    // u32, `d_consts` the 94 constants, `trace` rows x 247 u64, `counts` the 7 x 2^16 histogram, `err` one u32;
    // the grid covers `rows >= n` threads and the kernel skips the rest.
    unsafe {
        dev.launch(
            &kernels::POSEIDON2_CU,
            "poseidon2_fill",
            cfg,
            &[
                KArg::U64(calls.poseidon2.ptr()),
                KArg::U64(n as u64),
                KArg::U64(old_ts),
                KArg::U64(d_consts.ptr()),
                KArg::U64(rows as u64),
                KArg::U64(trace.data.ptr()),
                KArg::U64(lookups.counts.ptr()),
                KArg::U64(err.ptr()),
            ],
        )?;
    }
    check_error(dev.download(&err)?[0], |k| {
        // The cycle, for the message (one event downloaded).
        let words = 2 + 2 * WIDTH;
        let at = dev.alloc::<u64>(1)?;
        dev.copy_dtod(&calls.poseidon2, k * words, &at, 0, 1)?;
        Ok(dev.download(&at)?[0])
    })?;
    Ok(trace)
}

/// The kernel's error flag `err` (the smallest bad row, `u32::MAX`: none) as the host fill's error, naming the
/// call and its cycle (`cycle_of(row)`). Errors: that message, or `cycle_of`'s error.
pub fn check_error(
    err: u32,
    cycle_of: impl FnOnce(usize) -> Result<u64, CudaError>,
) -> Result<(), CudaError> {
    if err == u32::MAX {
        return Ok(());
    }
    let k = err as usize;
    Err(CudaError::InvalidArgument(format!(
        "poseidon2 call {k} (cycle {}): the record's output is not the permutation of its input (or its \
         state pointer is not 8-aligned)",
        cycle_of(k)?
    )))
}

super::device_fill! {
    /// The POSEIDON2 device fill ([`super::DeviceTableFill`]): absent (not filled) without calls.
    Poseidon2Fill: Poseidon2, POSEIDON2_CU, |cx, stats| {
        let calls = cx.need_calls("POSEIDON2")?;
        let m = cx.need_mem("POSEIDON2")?;
        fill_poseidon2_resident(cx.dev, calls, m.call_old_ts(2), cx.min_height(), cx.lookups, stats)
    }
}
