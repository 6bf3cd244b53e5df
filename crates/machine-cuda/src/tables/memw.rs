//! MEMW fill on the device (mirrors `zkrv_machine::tables::memw::memw_trace`, kernel `kernels/tables/memw.cu`).
//!
//! Each cell-crossing access is uploaded as a 56-byte [`MemwIn`]; the kernel expands it to the 55-column row
//! (440 bytes): the one-hot columns, the access value and top byte and the LT32 witnesses are computed on the
//! device. [`pack_memw`] refuses events the compact form cannot hold exactly.

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::memw::{memw_height, MemwEvent, NUM_MEMW_COLS};
use zkrv_machine::tables::memw_a::WIDTHS;

use crate::tables::DeviceLookups;
use zkrv_cuda::device::Device;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One cell-crossing access as uploaded (56 bytes, `#[repr(C)]`, no padding; the kernel's `MemwIn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemwIn {
    /// The first cell of the 16-byte window.
    pub cell: u64,
    /// Timestamp of the access (`4 clk + 1`).
    pub ts: u32,
    /// Timestamps of the two consumed tokens (each < ts).
    pub old_ts: [u32; 2],
    /// `offset | width_idx << 3 | is_write << 5` (offset < 8, width index < 4).
    pub meta: u32,
    /// The window's bytes before and after the access.
    pub old: [u8; 16],
    pub new: [u8; 16],
}

const _: () = assert!(std::mem::size_of::<MemwIn>() == 56);

// SAFETY: plain `#[repr(C)]` integers and byte arrays without padding, the layout `memw.cu` reads.
unsafe impl DeviceRepr for MemwIn {}

impl MemwIn {
    /// The struct as the kernel reads it: 7 little-endian u64 words.
    pub fn words(&self) -> [u64; 7] {
        let w = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        [
            self.cell,
            self.ts as u64 | (self.old_ts[0] as u64) << 32,
            self.old_ts[1] as u64 | (self.meta as u64) << 32,
            w(&self.old[..8]),
            w(&self.old[8..]),
            w(&self.new[..8]),
            w(&self.new[8..]),
        ]
    }
}

/// The upload form of the accesses, in row order. Errors: [`CudaError::InvalidArgument`] naming the first
/// access the compact form cannot hold (a timestamp >= 2^32, an old timestamp not below ts, an offset >= 8 or a
/// width index >= 4).
pub fn pack_memw(events: &[MemwEvent]) -> Result<Vec<MemwIn>, CudaError> {
    events
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let bad =
                |what: &str| CudaError::InvalidArgument(format!("MEMW access {k}: {what} ({e:?})"));
            let ts = u32::try_from(e.ts).map_err(|_| bad("timestamp >= 2^32"))?;
            if e.old_ts.iter().any(|&t| t >= e.ts) {
                return Err(bad("an old timestamp is not below the access's"));
            }
            if e.width_idx >= WIDTHS.len() {
                return Err(bad("width index >= 4"));
            }
            // offset < 8 and width <= 8 keep the access inside the 16-byte window.
            if e.offset >= 8 {
                return Err(bad("offset >= 8"));
            }
            Ok(MemwIn {
                cell: e.cell,
                ts,
                old_ts: e.old_ts.map(|t| t as u32),
                meta: e.offset as u32 | (e.width_idx as u32) << 3 | (e.is_write as u32) << 5,
                old: e.old,
                new: e.new,
            })
        })
        .collect()
}

/// The MEMW fill (exactly the host fill's rows, padding rows included; their BITWISE lookups added to
/// `lookups`) from the accesses already on the device (`events`: one [`MemwIn`] per cell-crossing access,
/// in row order; e.g. the device memory walk's, `tables::memwalk`): uploads nothing. Errors: launch shape,
/// allocation, launch.
pub fn fill_memw_resident(
    dev: &Device,
    events: &zkrv_cuda::device::DeviceBuffer<MemwIn>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    crate::tables::fill_from_uploaded(
        dev,
        &kernels::MEMW_CU,
        "memw_fill",
        "MEMW",
        events,
        memw_height(events.len(), min_height),
        NUM_MEMW_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The MEMW device fill ([`super::DeviceTableFill`]).
    MemwFill: Memw, MEMW_CU, |cx, _stats| {
        let m = cx.need_mem("MEMW")?;
        fill_memw_resident(cx.dev, &m.memw, cx.min_height(), cx.lookups)
    }
}
