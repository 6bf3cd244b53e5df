//! PAGE fill on the device (mirrors `zkrv_machine::tables::page::page_trace`, kernel `kernels/tables/page.cu`).
//! The memory walk gathers and checks the final cells on the host (`generate_split`); each is uploaded as a
//! 16-byte [`PageIn`] (vs 40 B/row of trace).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::page::{page_height, NUM_PAGE_COLS};

use crate::tables::DeviceLookups;
use zkrv_cuda::device::Device;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One final cell as uploaded (16 bytes, `#[repr(C)]`, no padding; the kernel's `PageIn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageIn {
    /// The cell's final value (8 bytes, little-endian).
    pub v: u64,
    /// The cell index (`addr >> 3`, < 2^32).
    pub cell: u32,
    /// Timestamp of the last access (0 if never accessed; < 2^32).
    pub ts: u32,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for PageIn {}

/// The upload form of the cells `(cell, final value, ts)`, in row order. Errors: [`CudaError::InvalidArgument`]
/// naming the first cell whose index or timestamp does not fit 32 bits.
pub fn pack_page(cells: &[(u64, u64, u64)]) -> Result<Vec<PageIn>, CudaError> {
    cells
        .iter()
        .enumerate()
        .map(
            |(k, &(cell, v, ts))| match (u32::try_from(cell), u32::try_from(ts)) {
                (Ok(cell), Ok(ts)) => Ok(PageIn { v, cell, ts }),
                _ => Err(CudaError::InvalidArgument(format!(
                    "PAGE cell {k}: index {cell:#x} or timestamp {ts} does not fit 32 bits"
                ))),
            },
        )
        .collect()
}

/// The PAGE fill (exactly the host fill's rows, padding rows included; their BITWISE lookups added to
/// `lookups`) from the final cells already on the device (`cells`: one [`PageIn`] per cell of every touched
/// page, in page order; e.g. the device memory walk's, `tables::memwalk`): uploads nothing. Errors: launch
/// shape, allocation, launch.
pub fn fill_page_resident(
    dev: &Device,
    cells: &zkrv_cuda::device::DeviceBuffer<PageIn>,
    min_height: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    crate::tables::fill_from_uploaded(
        dev,
        &kernels::PAGE_CU,
        "page_fill",
        "PAGE",
        cells,
        page_height(cells.len(), min_height),
        NUM_PAGE_COLS,
        lookups,
    )
}

super::device_fill! {
    /// The PAGE device fill ([`super::DeviceTableFill`]).
    PageFill: Page, PAGE_CU, |cx, _stats| {
        let m = cx.need_mem("PAGE")?;
        fill_page_resident(cx.dev, &m.page, cx.min_height(), cx.lookups)
    }
}
