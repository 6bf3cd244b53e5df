//! BITWISE multiplicities on the device (mirrors `zkrv_machine::tables::bitwise::Lookups::trace`, kernel
//! `kernels/tables/bitwise.cu`): the BITWISE main trace from the device lookup histogram every device fill
//! counts into, plus the host fills' lookups when there are any (uploaded then, 1.75 MiB; with every table on
//! the device there are none and nothing crosses PCIe).

use crate::kernels;
use zkrv_machine::tables::bitwise::{LookupKind, Lookups, BITWISE_LOG_HEIGHT, NUM_BITWISE_COLS};

use crate::tables::{alloc_trace, launch_1d, DeviceLookups, FILL_BLOCK};
use zkrv_cuda::device::{Device, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// The host histogram in the device layout (`counts[kind * 2^16 + x]`), or `None` if every counter is 0.
pub fn host_histogram(host: &Lookups) -> Option<Vec<u32>> {
    let any = LookupKind::ALL
        .iter()
        .any(|&k| host.counts(k).iter().any(|&c| c != 0));
    any.then(|| {
        LookupKind::ALL
            .iter()
            .flat_map(|&k| host.counts(k).iter().copied())
            .collect()
    })
}

/// Fills the BITWISE main trace on the device: `2^16 x 7` row-major u64 (natural order, BitwiseCols order),
/// row x holding each kind's count at x in `lookups` plus `host` (the host fills' lookups), exactly
/// `Lookups::trace` of the merged histogram. Run it after every other fill (on the same stream). Uploads the host
/// histogram only if it is not all zero (`4 x 7 x 2^16` bytes, H2D stage "trace-gen", table "BITWISE").
/// Errors: allocation, launch.
pub fn fill_bitwise(
    dev: &Device,
    lookups: &DeviceLookups,
    host: &Lookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    crate::layout::check_width("BITWISE", NUM_BITWISE_COLS)?;
    let rows = 1usize << BITWISE_LOG_HEIGHT;
    let cfg = launch_1d(rows as u64, NUM_BITWISE_COLS as u64, FILL_BLOCK)?;
    let d_host = match host_histogram(host) {
        Some(h) => {
            stats.add_h2d("trace-gen", "BITWISE", 4 * h.len() as u64);
            Some(dev.upload(&h)?)
        }
        None => None,
    };
    let trace = alloc_trace(dev, rows, NUM_BITWISE_COLS)?;
    // SAFETY: `counts` and the host histogram (if any; else a null pointer, which the kernel skips) hold
    // 7 x 2^16 u32, `trace` 2^16 x 7 u64; the grid covers 2^16 threads.
    unsafe {
        dev.launch(
            &kernels::BITWISE_CU,
            "bitwise_fill",
            cfg,
            &[
                KArg::U64(lookups.counts.ptr()),
                KArg::U64(d_host.as_ref().map_or(0, |h| h.ptr())),
                KArg::U64(trace.data.ptr()),
            ],
        )?;
    }
    Ok(trace)
}

super::device_fill! {
    /// The BITWISE (from the histogram of every fill, run last, plus the host fills' lookups) device fill ([`super::DeviceTableFill`]).
    BitwiseFill: Bitwise, BITWISE_CU, |cx, stats| {
        fill_bitwise(cx.dev, cx.lookups, cx.host_lookups, stats)
    }
}
