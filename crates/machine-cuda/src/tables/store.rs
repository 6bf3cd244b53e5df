//! STORE fill on the device (mirrors `zkrv_machine::tables::store` and `kernels/tables/store.cu`).
//!
//! Each store is uploaded as a 20-byte [`StoreIn`]; the kernel expands it to the 20-column STORE row (160 bytes),
//! so the upload is 1/8 of the trace it replaces. `base` and `top` are not uploaded: the walk guarantees
//! `base + imm mod 2^64 = addr < 2^32` (so `base = addr - imm`), and the access's top byte after the write is
//! byte `width - 1` of the stored value; [`pack_stores`] checks both and refuses events that break them.

use crate::kernels;
use zkrv_machine::tables::store::{StoreEvent, NUM_STORE_COLS};

use crate::tables::{
    alloc_trace, clk_of, event_table_height, launch_1d, par_pack, DeviceCycles, DeviceLookups,
    FILL_BLOCK,
};
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One store as the kernel reads it: 20 bytes, `#[repr(C)]`, no padding (mirrors `struct StoreIn` in
/// `kernels/tables/store.cu`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreIn {
    /// Effective address `base + imm mod 2^64` (< 2^32).
    pub addr: u32,
    /// Timestamp `4 clk + 1`.
    pub ts: u32,
    /// The rs2 value (all 64 bits), low word first.
    pub val: [u32; 2],
    /// Sign-extended offset (a 12-bit S-immediate in practice).
    pub imm: i16,
    /// Width index: the store writes `1 << width_idx` bytes.
    pub width_idx: u16,
}

const _: () = assert!(std::mem::size_of::<StoreIn>() == 20);

// SAFETY: plain `#[repr(C)]` integers without padding, the layout `store.cu` reads.
unsafe impl cudarc::driver::DeviceRepr for StoreIn {}

impl StoreIn {
    /// The struct's bytes as the kernel reads them (little-endian fields in declaration order).
    pub fn to_le_bytes(&self) -> [u8; 20] {
        let mut b = [0u8; 20];
        b[0..4].copy_from_slice(&self.addr.to_le_bytes());
        b[4..8].copy_from_slice(&self.ts.to_le_bytes());
        b[8..12].copy_from_slice(&self.val[0].to_le_bytes());
        b[12..16].copy_from_slice(&self.val[1].to_le_bytes());
        b[16..18].copy_from_slice(&self.imm.to_le_bytes());
        b[18..20].copy_from_slice(&self.width_idx.to_le_bytes());
        b
    }
}

fn bad(i: usize, e: &StoreEvent, why: &str) -> CudaError {
    CudaError::InvalidArgument(format!("STORE event {i} ({e:?}): {why}"))
}

/// Packs the host's store events (row order) into the kernel's input. Errors name the first event that the
/// compact form cannot represent exactly: width index >= 4, `ts >= 2^32`, `imm` outside `i16`, `base + imm`
/// outside `[0, 2^32)`, or `top` not byte `width - 1` of `val`.
pub fn pack_stores(events: &[StoreEvent]) -> Result<Vec<StoreIn>, CudaError> {
    par_pack(events, |i, e| {
        if e.width_idx >= 4 {
            return Err(bad(i, e, "width index >= 4"));
        }
        let width = 1usize << e.width_idx;
        let ts = u32::try_from(e.ts).map_err(|_| bad(i, e, "ts >= 2^32"))?;
        let imm = i16::try_from(e.imm as i64).map_err(|_| bad(i, e, "imm outside i16"))?;
        let addr = u32::try_from(e.base.wrapping_add(e.imm))
            .map_err(|_| bad(i, e, "base + imm outside [0, 2^32)"))?;
        if e.top != (e.val >> (8 * (width - 1))) & 0xff {
            return Err(bad(i, e, "top is not byte width - 1 of val"));
        }
        Ok(StoreIn {
            addr,
            ts,
            val: [e.val as u32, (e.val >> 32) as u32],
            imm,
            width_idx: e.width_idx as u16,
        })
    })
}

/// Fills the STORE trace on the device: `n x 20` row-major u64 (`StoreCols` order, natural row order,
/// canonical field elements), `n = max(events.len(), min_height)` rounded up to a power of two, exactly the
/// rows of `store_trace(events, min_height, ..)` (padding rows included), and adds their BITWISE lookups (one
/// `Pair` and one `U16` per store) to `lookups`. Uploads `20 x events.len()` bytes, recorded as H2D
/// ("trace-gen", "STORE"). Errors: invalid events (see [`pack_stores`]), launch limits, device failures.
pub fn fill_store(
    dev: &Device,
    events: &[StoreEvent],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let rows = event_table_height(events.len(), min_height)?;
    crate::layout::check_width("STORE", NUM_STORE_COLS)?;
    let cfg = launch_1d(rows as u64, NUM_STORE_COLS as u64, FILL_BLOCK)?;
    let packed = pack_stores(events)?;
    // No copy for an empty table (the kernel then reads no event).
    let d_events = if packed.is_empty() {
        dev.alloc::<StoreIn>(0)?
    } else {
        dev.upload(&packed)?
    };
    stats.add_h2d(
        "trace-gen",
        "STORE",
        (packed.len() * std::mem::size_of::<StoreIn>()) as u64,
    );
    let trace = alloc_trace(dev, rows, NUM_STORE_COLS)?;
    // SAFETY: `trace` holds rows x 20 u64, `d_events` holds events.len() StoreIn (at least one element),
    // `lookups.counts` holds 7 x 2^16 u32 and every lookup row is < 2^16; the grid covers `rows` threads and
    // the kernel returns for row >= rows; rows <= 2^26 so the counts fit u32.
    unsafe {
        dev.launch(
            &kernels::STORE_CU,
            "store_fill",
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

/// [`fill_store`] from the record resident on the device: each row is read from the stores's cycle in `cycles`
/// (`ts = 4 clk + 1`), so only the cycle indices are uploaded: 4 bytes per store (1/40 of the 160-byte row),
/// recorded as H2D ("trace-gen", "STORE"). `events` must be the stores of that record, as `generate_split` derives
/// them from the same cycles (then the rows equal `store_trace(events, ..)`); an event whose cycle is not in
/// `cycles` is an error.
pub fn fill_store_rec(
    dev: &Device,
    cycles: &DeviceCycles,
    events: &[StoreEvent],
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    // Shape errors before anything is uploaded.
    let rows = event_table_height(events.len(), min_height)?;
    launch_1d(rows as u64, NUM_STORE_COLS as u64, FILL_BLOCK)?;
    let clks = par_pack(events, |i, e| {
        clk_of(e.ts, cycles.len)
            .ok_or_else(|| bad(i, e, "ts is not 4 clk + 1 of a cycle of the record"))
    })?;
    let d_clks = if clks.is_empty() {
        dev.alloc::<u32>(0)?
    } else {
        dev.upload(&clks)?
    };
    stats.add_h2d("trace-gen", "STORE", 4 * clks.len() as u64);
    fill_store_resident(dev, cycles, &d_clks, min_height, lookups)
}

/// [`fill_store_rec`] from the cycle indices already on the device (`clks`: one u32 per store, in row order,
/// each < `cycles.len`; e.g. the device memory walk's list, `tables::memwalk`): uploads nothing. Errors: launch
/// limits, allocation, launch.
pub fn fill_store_resident(
    dev: &Device,
    cycles: &DeviceCycles,
    clks: &DeviceBuffer<u32>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    let rows = event_table_height(clks.len(), min_height)?;
    crate::layout::check_width("STORE", NUM_STORE_COLS)?;
    let cfg = launch_1d(rows as u64, NUM_STORE_COLS as u64, FILL_BLOCK)?;
    let trace = alloc_trace(dev, rows, NUM_STORE_COLS)?;
    // SAFETY: `trace` holds rows x 20 u64, `clks` holds clks.len() <= rows u32, each < the `cycles.len` cycles of
    // `cycles.data` (4 u64 each); `lookups.counts` holds 7 x 2^16 u32 and every lookup row is < 2^16; the grid
    // covers `rows` threads and the kernel returns for row >= rows.
    unsafe {
        dev.launch(
            &kernels::STORE_CU,
            "store_fill_rec",
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
    /// The STORE device fill ([`super::DeviceTableFill`]).
    StoreFill: Store, STORE_CU, |cx, stats| {
        let (dev, h, l) = (cx.dev, cx.min_height(), cx.lookups);
        if let Some(m) = cx.mem {
            let c = cx.need_cycles("STORE from the device memory walk")?;
            return fill_store_resident(dev, c, &m.store_clks, h, l);
        }
        match cx.cycles {
            Some(c) => fill_store_rec(dev, c, &cx.inputs.stores, h, l, stats),
            None => fill_store(dev, &cx.inputs.stores, h, l, stats),
        }
    }
}
