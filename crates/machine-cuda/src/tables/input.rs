//! INPUT fill on the device (mirrors `zkrv_machine::tables::input::input_trace`, kernel
//! `kernels/tables/input.cu`): one 8-byte [`InputIn`] per index (vs 32 B/row of trace).

use crate::kernels;
use cudarc::driver::DeviceRepr;
use zkrv_machine::tables::input::{input_height, NUM_INPUT_COLS};
use zkrv_machine::tables::sysio::INPUT_EOF;

use crate::tables::{
    fill_from_uploaded_with, launch_1d, upload_requests, DeviceLookups, FILL_BLOCK,
};
use zkrv_cuda::device::Device;
use zkrv_cuda::device::KArg;
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::DeviceTrace;

/// One INPUT index as uploaded (8 bytes, `#[repr(C)]`, no padding; the kernel's `InputIn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputIn {
    /// The byte, or `INPUT_EOF` (256) on the end-of-input entry.
    pub byte: u32,
    /// How many times the index is looked up (< 2^32).
    pub m: u32,
}

// SAFETY: plain-old-data, `#[repr(C)]`, no padding, any bit pattern valid.
unsafe impl DeviceRepr for InputIn {}

/// The upload form of the input bytes and the per-index lookup counts `uses` (index `input.len()` is the end
/// row, byte `INPUT_EOF`, or with `eof_row` false a padding entry of byte 0: a segment that ends before the
/// input does; missing counts are 0): `input.len() + 1` entries. Errors: [`CudaError::InvalidArgument`] for
/// more counts than indices or a count of 2^32 or more.
pub fn pack_input(input: &[u8], uses: &[u64], eof_row: bool) -> Result<Vec<InputIn>, CudaError> {
    if uses.len() > input.len() + 1 {
        return Err(CudaError::InvalidArgument(format!(
            "INPUT: {} lookup counts for {} indices",
            uses.len(),
            input.len() + 1
        )));
    }
    (0..=input.len())
        .map(|i| {
            let m = uses.get(i).copied().unwrap_or(0);
            let m = u32::try_from(m).map_err(|_| {
                CudaError::InvalidArgument(format!(
                    "INPUT index {i}: {m} lookups do not fit 32 bits"
                ))
            })?;
            let end = if eof_row { INPUT_EOF as u32 } else { 0 };
            let byte = input.get(i).map_or(end, |&b| b as u32);
            Ok(InputIn { byte, m })
        })
        .collect()
}

/// Fills the INPUT trace on the device from the input bytes and per-index lookup counts: returns `n x 4`
/// row-major u64 (n = `input_height(input.len(), min_height)`, natural order, canonical field elements), exactly
/// `input_trace_at(input, first, eof_row, uses, min_height, ..)`'s rows (padding rows included; `first` the
/// index of row 0, a segment's start input cursor, `eof_row` whether the end-of-input row follows the bytes:
/// 0 and true for a whole run), and adds the rows' BITWISE lookups to `lookups`. Uploads `8 * (input.len() +
/// 1)` bytes (recorded as H2D stage "trace-gen", table "INPUT").
/// Errors: inputs [`pack_input`] refuses, an index `first + n` of 2^63 or more (the kernel writes it as a
/// field element), launch shape out of bounds ([`crate::tables::launch_1d`]), allocation, launch.
#[allow(clippy::too_many_arguments)]
pub fn fill_input(
    dev: &Device,
    input: &[u8],
    uses: &[u64],
    first: u64,
    eof_row: bool,
    min_height: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    let rows = input_height(input.len(), min_height);
    if first
        .checked_add(rows as u64)
        .is_none_or(|end| end >= 1 << 63)
    {
        return Err(CudaError::InvalidArgument(format!(
            "INPUT fill: first index {first} + {rows} rows is not below 2^63"
        )));
    }
    let packed = pack_input(input, uses, eof_row)?;
    crate::layout::check_width("INPUT", NUM_INPUT_COLS)?;
    launch_1d(rows as u64, NUM_INPUT_COLS as u64, FILL_BLOCK)?;
    let req = upload_requests(dev, "INPUT", &packed, stats)?;
    fill_from_uploaded_with(
        dev,
        &kernels::INPUT_CU,
        "input_fill",
        "INPUT",
        &req,
        rows,
        NUM_INPUT_COLS,
        lookups,
        &[KArg::U64(first)],
    )
}

super::device_fill! {
    /// The INPUT device fill ([`super::DeviceTableFill`]).
    InputFill: Input, INPUT_CU, |cx, stats| {
        let i = &cx.inputs;
        fill_input(
            cx.dev,
            &i.input,
            &i.input_uses,
            i.input_first,
            i.input_eof_row,
            cx.min_height(),
            cx.lookups,
            stats,
        )
    }
}
