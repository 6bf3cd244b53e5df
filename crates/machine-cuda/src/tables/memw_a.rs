//! MEMW_A fill on the device (mirrors `zkrv_machine::tables::memw_a` and `kernels/tables/memw_a.cu`).
//!
//! Each in-cell access is uploaded as a 28-byte [`MemwAIn`]; the kernel expands it to the 37-column MEMW_A row
//! (296 bytes), so the upload is under 1/10 of the trace it replaces. The cell and the offset travel as one byte
//! address, the width index and the write flag in the top bits of the timestamp (timestamps are `4 clk + 1`
//! with `clk < 2^26`, so below `2^28`); the access value, top byte, one-hot columns and the LT32 witness are
//! computed on the device. [`pack_accesses`] refuses events outside those bounds.

use crate::kernels;
use zkrv_machine::tables::memw_a::{MemwAEvent, NUM_MEMW_A_COLS, WIDTHS};

use crate::tables::{
    alloc_trace, clk_of, event_table_height, launch_1d, par_pack, DeviceCycles, DeviceLookups,
    FILL_BLOCK,
};
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// Bits of [`MemwAIn::ts_meta`] that hold the timestamp (`MEMW_A_TS_BITS` in the generated layout.cuh).
pub const MEMW_A_TS_BITS: u32 = 29;

/// One in-cell access as the kernel reads it: 28 bytes, `#[repr(C)]`, no padding (mirrors `struct MemwAIn` in
/// `kernels/tables/memw_a.cu`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemwAIn {
    /// Byte address `cell * 8 + offset` (< 2^32).
    pub addr: u32,
    /// `ts | width_idx << 29 | is_write << 31` (ts < 2^29).
    pub ts_meta: u32,
    /// Timestamp of the consumed token (< ts).
    pub old_ts: u32,
    /// The cell's bytes before and after the access.
    pub old: [u8; 8],
    pub new: [u8; 8],
}

const _: () = assert!(std::mem::size_of::<MemwAIn>() == 28);

// SAFETY: plain `#[repr(C)]` integers and byte arrays without padding, the layout `memw_a.cu` reads.
unsafe impl cudarc::driver::DeviceRepr for MemwAIn {}

impl MemwAIn {
    /// The struct's bytes as the kernel reads them (little-endian fields in declaration order).
    pub fn to_le_bytes(&self) -> [u8; 28] {
        let mut b = [0u8; 28];
        b[0..4].copy_from_slice(&self.addr.to_le_bytes());
        b[4..8].copy_from_slice(&self.ts_meta.to_le_bytes());
        b[8..12].copy_from_slice(&self.old_ts.to_le_bytes());
        b[12..20].copy_from_slice(&self.old);
        b[20..28].copy_from_slice(&self.new);
        b
    }
}

/// One access for the record path (16 bytes, `#[repr(C)]`, no padding; mirrors `struct MemwARecIn` in
/// `kernels/tables/memw_a.cu`): what the record does not hold.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemwARecIn {
    /// The cycle of the load/store (`ts = 4 clk + 1`).
    pub clk: u32,
    /// Timestamp of the consumed token (< ts).
    pub old_ts: u32,
    /// The cell's bytes before the access.
    pub old: [u8; 8],
}

const _: () = assert!(std::mem::size_of::<MemwARecIn>() == 16);

// SAFETY: plain `#[repr(C)]` integers and bytes without padding, the layout `memw_a.cu` reads.
unsafe impl cudarc::driver::DeviceRepr for MemwARecIn {}

impl MemwARecIn {
    /// The struct's bytes as the kernel reads them.
    pub fn to_le_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.clk.to_le_bytes());
        b[4..8].copy_from_slice(&self.old_ts.to_le_bytes());
        b[8..16].copy_from_slice(&self.old);
        b
    }
}

fn bad(i: usize, e: &MemwAEvent, why: &str) -> CudaError {
    CudaError::InvalidArgument(format!("MEMW_A event {i} ({e:?}): {why}"))
}

/// Packs the host's MEMW_A events (row order) into the kernel's input. Errors name the first event that the
/// compact form cannot represent or the fill cannot take: width index >= 4, an access leaving its cell
/// (`offset + width > 8`), `cell >= 2^29`, `ts >= 2^29`, or `old_ts >= ts`.
pub fn pack_accesses(events: &[MemwAEvent]) -> Result<Vec<MemwAIn>, CudaError> {
    par_pack(events, |i, e| {
        let width = *WIDTHS
            .get(e.width_idx)
            .ok_or_else(|| bad(i, e, "width index >= 4"))?;
        if e.offset > 8 - width {
            return Err(bad(i, e, "access leaves its cell (offset + width > 8)"));
        }
        if e.cell >= 1 << 29 {
            return Err(bad(i, e, "cell >= 2^29"));
        }
        if e.ts >= 1 << MEMW_A_TS_BITS {
            return Err(bad(i, e, "ts >= 2^29"));
        }
        if e.old_ts >= e.ts {
            return Err(bad(i, e, "old_ts >= ts"));
        }
        Ok(MemwAIn {
            addr: (e.cell * 8) as u32 | e.offset as u32,
            ts_meta: e.ts as u32
                | (e.width_idx as u32) << MEMW_A_TS_BITS
                | (e.is_write as u32) << 31,
            old_ts: e.old_ts as u32,
            old: e.old,
            new: e.new,
        })
    })
}

/// Fills the MEMW_A trace on the device: `n x 37` row-major u64 (`MemwACols` order, natural row order,
/// canonical field elements), `n = max(events.len(), min_height)` rounded up to a power of two, exactly the
/// rows of `memw_a_trace(events, min_height, ..)` (padding rows included), and adds their BITWISE lookups (two
/// `U16` and four `Pair` per access) to `lookups`. Uploads `28 x events.len()` bytes, recorded as H2D
/// ("trace-gen", "MEMW_A"). Errors: invalid events (see [`pack_accesses`]), launch limits, device failures.
pub fn fill_memw_a(
    dev: &Device,
    events: &[MemwAEvent],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let rows = event_table_height(events.len(), min_height)?;
    crate::layout::check_width("MEMW_A", NUM_MEMW_A_COLS)?;
    let cfg = launch_1d(rows as u64, NUM_MEMW_A_COLS as u64, FILL_BLOCK)?;
    let packed = pack_accesses(events)?;
    // No copy for an empty table (the kernel then reads no event).
    let d_events = if packed.is_empty() {
        dev.alloc::<MemwAIn>(0)?
    } else {
        dev.upload(&packed)?
    };
    stats.add_h2d(
        "trace-gen",
        "MEMW_A",
        (packed.len() * std::mem::size_of::<MemwAIn>()) as u64,
    );
    let trace = alloc_trace(dev, rows, NUM_MEMW_A_COLS)?;
    // SAFETY: `trace` holds rows x 37 u64, `d_events` holds events.len() MemwAIn (at least one element),
    // `lookups.counts` holds 7 x 2^16 u32 and every lookup row is < 2^16 (ts - old_ts - 1 < 2^29); the grid
    // covers `rows` threads and the kernel returns for row >= rows.
    unsafe {
        dev.launch(
            &kernels::MEMW_A_CU,
            "memw_a_fill",
            cfg,
            &[
                KArg::U64(trace.data.ptr()),
                KArg::U64(d_events.ptr()),
                KArg::U32(events.len() as u32),
                KArg::U32(rows as u32),
                KArg::U64(lookups.counts.ptr()),
            ],
        )?;
    }
    // `d_events` is freed on drop, ordered after the kernel on the device's stream.
    Ok(trace)
}

/// Packs the host's MEMW_A events for the record path ([`fill_memw_a_rec`]) against a record of `cycles`
/// cycles. Errors name the first event whose `ts` is not `4 clk + 1` of a cycle of the record or whose
/// `old_ts >= ts`.
pub fn pack_accesses_rec(
    events: &[MemwAEvent],
    cycles: usize,
) -> Result<Vec<MemwARecIn>, CudaError> {
    par_pack(events, |i, e| {
        let clk = clk_of(e.ts, cycles)
            .ok_or_else(|| bad(i, e, "ts is not 4 clk + 1 of a cycle of the record"))?;
        if e.old_ts >= e.ts {
            return Err(bad(i, e, "old_ts >= ts"));
        }
        Ok(MemwARecIn {
            clk,
            old_ts: e.old_ts as u32,
            old: e.old,
        })
    })
}

/// [`fill_memw_a`] from the record resident on the device: the access's cell, offset, width, direction and
/// stored bytes are read from its cycle in `cycles`, so only a 16-byte [`MemwARecIn`] per access is uploaded
/// (cycle, old_ts, old bytes: 1/18.5 of the 296-byte row), recorded as H2D ("trace-gen", "MEMW_A"). `events`
/// must be the in-cell accesses of that record, as `generate_split` derives them from the same cycles (then the
/// rows equal `memw_a_trace(events, ..)`); errors: see [`pack_accesses_rec`].
pub fn fill_memw_a_rec(
    dev: &Device,
    cycles: &DeviceCycles,
    events: &[MemwAEvent],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    // Shape errors before anything is uploaded.
    let rows = event_table_height(events.len(), min_height)?;
    launch_1d(rows as u64, NUM_MEMW_A_COLS as u64, FILL_BLOCK)?;
    let packed = pack_accesses_rec(events, cycles.len)?;
    let d_events = if packed.is_empty() {
        dev.alloc::<MemwARecIn>(0)?
    } else {
        dev.upload(&packed)?
    };
    stats.add_h2d(
        "trace-gen",
        "MEMW_A",
        std::mem::size_of_val(packed.as_slice()) as u64,
    );
    fill_memw_a_resident(dev, cycles, &d_events, min_height, lookups)
}

/// [`fill_memw_a_rec`] from the accesses already on the device (`events`: one [`MemwARecIn`] per in-cell access,
/// in row order, each clk < `cycles.len` and old_ts < 4 clk + 1; e.g. the device memory walk's list,
/// `tables::memwalk`): uploads nothing. Errors: launch limits, allocation, launch.
pub fn fill_memw_a_resident(
    dev: &Device,
    cycles: &DeviceCycles,
    events: &DeviceBuffer<MemwARecIn>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    let rows = event_table_height(events.len(), min_height)?;
    crate::layout::check_width("MEMW_A", NUM_MEMW_A_COLS)?;
    let cfg = launch_1d(rows as u64, NUM_MEMW_A_COLS as u64, FILL_BLOCK)?;
    let trace = alloc_trace(dev, rows, NUM_MEMW_A_COLS)?;
    // SAFETY: `trace` holds rows x 37 u64, `events` holds events.len() <= rows MemwARecIn, each clk < the
    // `cycles.len` cycles of `cycles.data` (4 u64 each) and old_ts < 4 clk + 1 (so the LT32 halves are lookup
    // rows < 2^16); `lookups.counts` holds 7 x 2^16 u32; the grid covers `rows` threads and the kernel returns
    // for row >= rows.
    unsafe {
        dev.launch(
            &kernels::MEMW_A_CU,
            "memw_a_fill_rec",
            cfg,
            &[
                KArg::U64(trace.data.ptr()),
                KArg::U64(cycles.data.ptr()),
                KArg::U64(events.ptr()),
                KArg::U32(events.len() as u32),
                KArg::U32(rows as u32),
                KArg::U64(lookups.counts.ptr()),
            ],
        )?;
    }
    Ok(trace)
}

super::device_fill! {
    /// The MEMW_A device fill ([`super::DeviceTableFill`]).
    MemwAFill: MemwA, MEMW_A_CU, |cx, stats| {
        let (dev, h, l) = (cx.dev, cx.min_height(), cx.lookups);
        if let Some(m) = cx.mem {
            let c = cx.need_cycles("MEMW_A from the device memory walk")?;
            return fill_memw_a_resident(dev, c, &m.memw_a, h, l);
        }
        match cx.cycles {
            Some(c) => fill_memw_a_rec(dev, c, &cx.inputs.accesses, h, l, stats),
            None => fill_memw_a(dev, &cx.inputs.accesses, h, l, stats),
        }
    }
}
