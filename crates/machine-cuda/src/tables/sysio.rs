//! SYSCALL and SYSIO fills on the device (mirror `zkrv_machine::tables::sysio::{syscall_trace, sysio_trace}`,
//! kernels `kernels/tables/sysio.cu`). The host walk produces the rows' events (`generate_split`); each is
//! uploaded as a [`SyscallIn`] (72 B vs 144 B/row of trace) or a [`SysioIn`] (64 B vs 320 B/row).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::sysio::{
    SyscallEventRow, SysioEventRow, NUM_SYSCALL_COLS, NUM_SYSIO_COLS,
};

use crate::tables::{event_table_height, fill_from_requests, DeviceLookups};
use zkrv_cuda::device::Device;
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One SYSCALL row's event as uploaded (72 bytes, `#[repr(C)]`, no padding; the kernel's `SyscallIn`): the
/// fields of [`SyscallEventRow`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyscallIn {
    pub ts: u64,
    /// 0 (read), 1 or 2 (write).
    pub fd: u64,
    pub count: u64,
    pub buf: u64,
    pub len: u64,
    pub a1_old_ts: u64,
    pub a2_old_ts: u64,
    pub cursor: u64,
    pub cursor_old_ts: u64,
}

/// One SYSIO row's event as uploaded (64 bytes, `#[repr(C)]`, no padding; the kernel's `SysioIn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SysioIn {
    pub ts: u64,
    pub cell: u64,
    pub pos: u64,
    pub rem: u64,
    pub old_ts: u64,
    /// The cell's bytes before and after, little-endian.
    pub old: u64,
    pub new: u64,
    /// `offset | n << 8 | is_read << 16`: first transferred byte (< 8), bytes transferred (1..=8 - offset).
    pub meta: u64,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for SyscallIn {}
// SAFETY: as above.
unsafe impl DeviceRepr for SysioIn {}

/// Whether LT32(old_ts, ts) has a witness: `old_ts < ts` and `ts - old_ts - 1 < 2^32`.
fn lt32_ok(old_ts: u64, ts: u64) -> bool {
    old_ts < ts && ts - old_ts - 1 < 1 << 32
}

/// The upload form of the SYSCALL events. Errors: [`CudaError::InvalidArgument`] naming the first row with an
/// fd other than 0, 1, 2, or an LT32 gap (a1, a2, cursor, `count < len`) that is not in `[0, 2^32)`.
pub fn pack_syscall(rows: &[SyscallEventRow]) -> Result<Vec<SyscallIn>, CudaError> {
    rows.iter()
        .enumerate()
        .map(|(k, e)| {
            let cursor_ok = e.fd == 2
                || e.ts
                    .checked_add(2)
                    .is_some_and(|t| lt32_ok(e.cursor_old_ts, t));
            let short_ok = !(e.fd == 0 && e.count < e.len) || lt32_ok(e.count, e.len);
            if e.fd > 2
                || !lt32_ok(e.a1_old_ts, e.ts)
                || !lt32_ok(e.a2_old_ts, e.ts)
                || !cursor_ok
                || !short_ok
            {
                return Err(CudaError::InvalidArgument(format!(
                    "SYSCALL row {k}: fd {} or an LT32 gap out of range ({e:?})",
                    e.fd
                )));
            }
            Ok(SyscallIn {
                ts: e.ts,
                fd: e.fd,
                count: e.count,
                buf: e.buf,
                len: e.len,
                a1_old_ts: e.a1_old_ts,
                a2_old_ts: e.a2_old_ts,
                cursor: e.cursor,
                cursor_old_ts: e.cursor_old_ts,
            })
        })
        .collect()
}

/// The upload form of the SYSIO events. Errors: [`CudaError::InvalidArgument`] naming the first row whose
/// byte run (offset, n) is not within the cell (`n >= 1`, `offset + n <= 8`) or whose LT32 gap is out of range.
pub fn pack_sysio(rows: &[SysioEventRow]) -> Result<Vec<SysioIn>, CudaError> {
    rows.iter()
        .enumerate()
        .map(|(k, e)| {
            if e.n == 0 || e.offset + e.n > 8 || !lt32_ok(e.old_ts, e.ts) {
                return Err(CudaError::InvalidArgument(format!(
                    "SYSIO row {k}: bytes {}..{} of the cell or LT32({}, {}) out of range",
                    e.offset,
                    e.offset + e.n,
                    e.old_ts,
                    e.ts
                )));
            }
            Ok(SysioIn {
                ts: e.ts,
                cell: e.cell,
                pos: e.pos,
                rem: e.rem,
                old_ts: e.old_ts,
                old: u64::from_le_bytes(e.old),
                new: u64::from_le_bytes(e.new),
                meta: e.offset as u64 | (e.n as u64) << 8 | (e.is_read as u64) << 16,
            })
        })
        .collect()
}

/// Fills the SYSCALL trace on the device: `n x 18` row-major u64 (n = the next power of two `>= max(rows,
/// min_height)`, natural order, canonical field elements), exactly `syscall_trace`'s rows (padding included),
/// adding the rows' BITWISE lookups to `lookups`. Uploads `72 * rows.len()` bytes (H2D stage "trace-gen",
/// table "SYSCALL"). Errors: rows [`pack_syscall`] refuses, heights out of bounds, allocation, launch.
pub fn fill_syscall(
    dev: &Device,
    rows: &[SyscallEventRow],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    fill_from_requests(
        dev,
        &kernels::SYSIO_CU,
        "syscall_fill",
        "SYSCALL",
        &pack_syscall(rows)?,
        event_table_height(rows.len(), min_height)?,
        NUM_SYSCALL_COLS,
        lookups,
        stats,
    )
}

/// The SYSIO fill (exactly the host fill's rows, padding rows included; their BITWISE lookups added to
/// `lookups`) from the rows already on the device (`rows`: one [`SysioIn`] per SYSIO row, in row order; e.g.
/// the device memory walk's, `tables::memwalk`): uploads nothing. Errors: heights out of bounds, allocation,
/// launch.
pub fn fill_sysio_resident(
    dev: &Device,
    rows: &zkrv_cuda::device::DeviceBuffer<SysioIn>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    crate::tables::fill_from_uploaded(
        dev,
        &kernels::SYSIO_CU,
        "sysio_fill",
        "SYSIO",
        rows,
        event_table_height(rows.len(), min_height)?,
        NUM_SYSIO_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The SYSCALL device fill ([`super::DeviceTableFill`]).
    SyscallFill: Syscall, SYSIO_CU, |cx, stats| {
        let syscall = &cx.inputs.syscall;
        fill_syscall(cx.dev, syscall, cx.min_height(), cx.lookups, stats)
    }
}

super::device_fill! {
    /// The SYSIO device fill ([`super::DeviceTableFill`]).
    SysioFill: Sysio, SYSIO_CU, |cx, _stats| {
        let m = cx.need_mem("SYSIO")?;
        fill_sysio_resident(cx.dev, &m.sysio, cx.min_height(), cx.lookups)
    }
}
