//! LOAD fill on the device (mirrors `zkrv_machine::tables::load` and `kernels/tables/load.cu`).
//!
//! Each load is uploaded as a 20-byte [`LoadIn`]; the kernel expands it to the 20-column LOAD row (160 bytes),
//! so the upload is 1/8 of the trace it replaces. `base` and the loaded value `r` are not uploaded: the walk
//! guarantees `base + imm mod 2^64 = addr < 2^32` (so `base = addr - imm`) and `r` is the raw access value `v`
//! sign- or zero-extended (the executor's `rd_val`); [`pack_loads`] checks both and refuses events that break them.

use crate::kernels;
use zkrv_machine::tables::load::{LoadEvent, NUM_LOAD_COLS};

use crate::tables::{
    alloc_trace, clk_of, event_table_height, launch_1d, par_pack, DeviceCycles, DeviceLookups,
    FILL_BLOCK,
};
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One load as the kernel reads it: 20 bytes, `#[repr(C)]`, no padding (mirrors `struct LoadIn` in
/// `kernels/tables/load.cu`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadIn {
    /// Effective address `base + imm mod 2^64` (< 2^32).
    pub addr: u32,
    /// Timestamp `4 clk + 1`.
    pub ts: u32,
    /// Raw access value (zero-extended from the width), low word first.
    pub v: [u32; 2],
    /// Sign-extended offset (a 12-bit I-immediate in practice).
    pub imm: i16,
    /// Bits 0-1: width index (width `1 << idx` bytes); bit 2: zero-extending (LBU, LHU, LWU).
    pub flags: u16,
}

const _: () = assert!(std::mem::size_of::<LoadIn>() == 20);

// SAFETY: plain `#[repr(C)]` integers without padding, the layout `load.cu` reads.
unsafe impl cudarc::driver::DeviceRepr for LoadIn {}

impl LoadIn {
    /// The struct's bytes as the kernel reads them (little-endian fields in declaration order).
    pub fn to_le_bytes(&self) -> [u8; 20] {
        let mut b = [0u8; 20];
        b[0..4].copy_from_slice(&self.addr.to_le_bytes());
        b[4..8].copy_from_slice(&self.ts.to_le_bytes());
        b[8..12].copy_from_slice(&self.v[0].to_le_bytes());
        b[12..16].copy_from_slice(&self.v[1].to_le_bytes());
        b[16..18].copy_from_slice(&self.imm.to_le_bytes());
        b[18..20].copy_from_slice(&self.flags.to_le_bytes());
        b
    }
}

/// The loaded value of a load of `width` bytes with raw value `v`: `v` sign-extended from bit `8 width - 1`,
/// or `v` itself when `unsigned` or `width = 8`.
pub fn extend_load(v: u64, width: usize, unsigned: bool) -> u64 {
    if unsigned || width >= 8 {
        return v;
    }
    let sign = (v >> (8 * width - 1)) & 1;
    if sign == 1 {
        v | (!0u64 << (8 * width))
    } else {
        v
    }
}

fn bad(i: usize, e: &LoadEvent, why: &str) -> CudaError {
    CudaError::InvalidArgument(format!("LOAD event {i} ({e:?}): {why}"))
}

/// Packs the host's load events (row order) into the kernel's input. Errors name the first event that the
/// compact form cannot represent exactly: width index >= 4, `ts >= 2^32`, `imm` outside `i16`, `base + imm`
/// outside `[0, 2^32)`, `v` not zero-extended from the width, or `r` not the extension of `v`.
pub fn pack_loads(events: &[LoadEvent]) -> Result<Vec<LoadIn>, CudaError> {
    par_pack(events, |i, e| {
        if e.width_idx >= 4 {
            return Err(bad(i, e, "width index >= 4"));
        }
        let width = 1usize << e.width_idx;
        let ts = u32::try_from(e.ts).map_err(|_| bad(i, e, "ts >= 2^32"))?;
        let imm = i16::try_from(e.imm as i64).map_err(|_| bad(i, e, "imm outside i16"))?;
        let addr = u32::try_from(e.base.wrapping_add(e.imm))
            .map_err(|_| bad(i, e, "base + imm outside [0, 2^32)"))?;
        if width < 8 && e.v >> (8 * width) != 0 {
            return Err(bad(i, e, "v has bits above the width"));
        }
        if e.r != extend_load(e.v, width, e.unsigned) {
            return Err(bad(i, e, "r is not the extension of v"));
        }
        Ok(LoadIn {
            addr,
            ts,
            v: [e.v as u32, (e.v >> 32) as u32],
            imm,
            flags: e.width_idx as u16 | (e.unsigned as u16) << 2,
        })
    })
}

/// Fills the LOAD trace on the device: `n x 20` row-major u64 (`LoadCols` order, natural row order,
/// canonical field elements), `n = max(events.len(), min_height)` rounded up to a power of two, exactly the
/// rows of `load_trace(events, min_height, ..)` (padding rows included), and adds their BITWISE lookups
/// (one `Msb8` per load) to `lookups`. Uploads `20 x events.len()` bytes, recorded as H2D
/// ("trace-gen", "LOAD"). Errors: invalid events (see [`pack_loads`]), launch limits, device failures.
pub fn fill_load(
    dev: &Device,
    events: &[LoadEvent],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let rows = event_table_height(events.len(), min_height)?;
    crate::layout::check_width("LOAD", NUM_LOAD_COLS)?;
    let cfg = launch_1d(rows as u64, NUM_LOAD_COLS as u64, FILL_BLOCK)?;
    let packed = pack_loads(events)?;
    // No copy for an empty table (the kernel then reads no event).
    let d_events = if packed.is_empty() {
        dev.alloc::<LoadIn>(0)?
    } else {
        dev.upload(&packed)?
    };
    stats.add_h2d(
        "trace-gen",
        "LOAD",
        (packed.len() * std::mem::size_of::<LoadIn>()) as u64,
    );
    let trace = alloc_trace(dev, rows, NUM_LOAD_COLS)?;
    // SAFETY: `trace` holds rows x 20 u64, `d_events` holds events.len() LoadIn (at least one element),
    // `lookups.counts` holds 7 x 2^16 u32 and every lookup row is < 2^16; the grid covers `rows` threads and
    // the kernel returns for row >= rows; rows <= 2^26 so the counts fit u32.
    unsafe {
        dev.launch(
            &kernels::LOAD_CU,
            "load_fill",
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
    // `d_events` is freed on drop; the stream orders the free after the kernel.
    Ok(trace)
}

/// [`fill_load`] from the record resident on the device: each row is read from the loads's cycle in `cycles`
/// (`ts = 4 clk + 1`), so only the cycle indices are uploaded: 4 bytes per load (1/40 of the 160-byte row),
/// recorded as H2D ("trace-gen", "LOAD"). `events` must be the loads of that record, as `generate_split` derives
/// them from the same cycles (then the rows equal `load_trace(events, ..)`); an event whose cycle is not in
/// `cycles` is an error.
pub fn fill_load_rec(
    dev: &Device,
    cycles: &DeviceCycles,
    events: &[LoadEvent],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    // Shape errors before anything is uploaded.
    let rows = event_table_height(events.len(), min_height)?;
    launch_1d(rows as u64, NUM_LOAD_COLS as u64, FILL_BLOCK)?;
    let clks = par_pack(events, |i, e| {
        clk_of(e.ts, cycles.len)
            .ok_or_else(|| bad(i, e, "ts is not 4 clk + 1 of a cycle of the record"))
    })?;
    let d_clks = if clks.is_empty() {
        dev.alloc::<u32>(0)?
    } else {
        dev.upload(&clks)?
    };
    stats.add_h2d("trace-gen", "LOAD", 4 * clks.len() as u64);
    fill_load_resident(dev, cycles, &d_clks, min_height, lookups)
}

/// [`fill_load_rec`] from the cycle indices already on the device (`clks`: one u32 per load, in row order,
/// each < `cycles.len`; e.g. the device memory walk's list, `tables::memwalk`): uploads nothing. Errors: launch
/// limits, allocation, launch.
pub fn fill_load_resident(
    dev: &Device,
    cycles: &DeviceCycles,
    clks: &DeviceBuffer<u32>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    let rows = event_table_height(clks.len(), min_height)?;
    crate::layout::check_width("LOAD", NUM_LOAD_COLS)?;
    let cfg = launch_1d(rows as u64, NUM_LOAD_COLS as u64, FILL_BLOCK)?;
    let trace = alloc_trace(dev, rows, NUM_LOAD_COLS)?;
    // SAFETY: `trace` holds rows x 20 u64, `clks` holds clks.len() <= rows u32, each < the `cycles.len` cycles of
    // `cycles.data` (4 u64 each); `lookups.counts` holds 7 x 2^16 u32 and every lookup row is < 2^16; the grid
    // covers `rows` threads and the kernel returns for row >= rows.
    unsafe {
        dev.launch(
            &kernels::LOAD_CU,
            "load_fill_rec",
            cfg,
            &[
                KArg::U64(trace.data.ptr()),
                KArg::U64(cycles.data.ptr()),
                KArg::U64(clks.ptr()),
                KArg::U32(clks.len() as u32),
                KArg::U32(rows as u32),
                KArg::U64(lookups.counts.ptr()),
            ],
        )?;
    }
    Ok(trace)
}

super::device_fill! {
    /// The LOAD device fill ([`super::DeviceTableFill`]).
    LoadFill: Load, LOAD_CU, |cx, stats| {
        let (dev, h, l) = (cx.dev, cx.min_height(), cx.lookups);
        if let Some(m) = cx.mem {
            let c = cx.need_cycles("LOAD from the device memory walk")?;
            return fill_load_resident(dev, c, &m.load_clks, h, l);
        }
        match cx.cycles {
            Some(c) => fill_load_rec(dev, c, &cx.inputs.loads, h, l, stats),
            None => fill_load(dev, &cx.inputs.loads, h, l, stats),
        }
    }
}
