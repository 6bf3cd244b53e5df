// Fill kernel of the INPUT table (mirrors crates/machine/src/tables/input.rs `input_trace`): see common.cuh for
// the conventions.
//
// Input: one `InputIn` per index 0..=input length (`zkrv_machine_cuda::tables::input::InputIn`, 8 bytes: the byte, or
// INPUT_EOF on the end-of-input entry (byte 0 there in a segment that ends before the input does), and the
// index's lookup count), and `first`, the index of row 0 (a segment's start input cursor; 0 for a whole run:
// `input_trace_at`). Output: `rows x 4` row-major (InputCols order): row i < len is entry i with index
// first + i, rows len..rows are padding (index first + i, byte 0, m = 0). Lookups per row: PAIR of
// `byte << 8` (0 on the end row and the padding rows), aggregated per warp; the padding rows' are counted in one
// addition by the thread of row `len`.
#include "table_common.cuh"

// InputCols offsets (INPUT_COL_*), InputIn and INPUT_EOF: layout.cuh (generated).

// Writes row `row` (< rows) of the INPUT trace and counts its lookups. `len <= rows`. `lanes`: on the device, the
// mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void input_fill_row(u64 row, const InputIn* in, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes,
                            u64 first) {
    u64 byte = 0, m = 0;
    const bool real = row < len;
    if (real) {
        const InputIn q = in[row];
        byte = q.byte;
        m = q.m;
    }
    const u64 is_eof = byte == INPUT_EOF;
    lookup_key_warp(counts, real ? lookup_key(LK_PAIR, is_eof ? 0 : byte << 8) : LOOKUP_NONE, lanes);
    if (row == len) lookup_add_n(counts, LK_PAIR, 0, (u32)(rows - len));
    u64* o = trace + row * INPUT_WIDTH;
    o[INPUT_COL_INDEX] = first + row;
    o[INPUT_COL_BYTE] = byte;
    o[INPUT_COL_IS_EOF] = is_eof;
    o[INPUT_COL_M] = m;
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `in`: len InputIn; `trace`: rows x 4 u64;
// `counts`: the 7 x 2^16 u32 lookup histogram; `first + rows` < p (the index column's field elements).
extern "C" __global__ void input_fill(const InputIn* in, u64 len, u64 rows, u64* trace, u32* counts, u64 first) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    input_fill_row(row, in, len, rows, trace, counts, lanes, first);
}
#endif
