// Fill kernel of the MEMW table (mirrors crates/machine/src/tables/memw.rs `memw_trace`): see common.cuh for the
// conventions.
//
// Input: the cell-crossing accesses in cycle order (= row order), one `MemwIn` each
// (`zkrv_machine_cuda::tables::memw::MemwIn`, 56 bytes; `meta = offset | width_idx << 3 | is_write << 5`, checked by the
// packer). Output: `rows x 55` row-major (MemwCols order): row i < len is access i, rows len..rows are padding (an
// inactive 8-byte read of zeros at offset 0: sel[0] = w[3] = 1, every other cell 0). Lookups per real row: the
// two halves of each LT32 difference `ts - old_ts[h] - 1` (RANGE16) and PAIR of the eight new byte pairs,
// aggregated per warp; padding rows make none.
#include "table_common.cuh"

// MemwCols offsets (MEMW_COL_*) and MemwIn: layout.cuh (generated).

// Writes row `row` (< rows) of the MEMW trace and counts its lookups. `len <= rows`. `lanes`: on the device, the
// mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void memw_fill_row(u64 row, const MemwIn* ev, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes) {
    (void)rows;
    u64* o = trace + row * MEMW_WIDTH;
    for (int c = 0; c < MEMW_WIDTH; c++) o[c] = 0;
    const bool real = row < len;
    if (!real) {
        o[MEMW_COL_SEL] = 1;
        o[MEMW_COL_W + 3] = 1;
        for (int k = 0; k < 12; k++) lookup_key_warp(counts, LOOKUP_NONE, lanes);
        return;
    }
    const MemwIn e = ev[row];
    const u32 offset = e.meta & 7, width_idx = (e.meta >> 3) & 3, is_write = (e.meta >> 5) & 1;
    const u32 width = 1u << width_idx;
    u64 v = 0;
    for (u32 k = 0; k < width; k++) v |= (u64)e.new_bytes[offset + k] << (8 * k);
    o[MEMW_COL_CELL] = gl_canon(e.cell);
    o[MEMW_COL_TS] = e.ts;
    o[MEMW_COL_SEL + offset] = 1;
    o[MEMW_COL_W + width_idx] = 1;
    o[MEMW_COL_IS_WRITE] = is_write;
    for (int k = 0; k < 16; k++) {
        o[MEMW_COL_OLD + k] = e.old_bytes[k];
        o[MEMW_COL_NEW + k] = e.new_bytes[k];
    }
    o[MEMW_COL_V] = v & 0xffffffffull;
    o[MEMW_COL_V + 1] = v >> 32;
    o[MEMW_COL_TOP] = e.new_bytes[offset + width - 1];
    for (int h = 0; h < 2; h++) {
        // LT32(old_ts, ts; d0): d = ts - old_ts - 1 < 2^32, both halves RANGE16.
        const u64 d = (u64)e.ts - e.old_ts[h] - 1;
        o[MEMW_COL_OLD_TS + h] = e.old_ts[h];
        o[MEMW_COL_D0 + h] = d & 0xffff;
        lookup_key_warp(counts, lookup_key(LK_U16, d & 0xffff), lanes);
        lookup_key_warp(counts, lookup_key(LK_U16, (d >> 16) & 0xffff), lanes);
    }
    o[MEMW_COL_MU] = 1;
    for (int k = 0; k < 8; k++) {
        const u64 pair = ((u64)e.new_bytes[2 * k] << 8) | e.new_bytes[2 * k + 1];
        lookup_key_warp(counts, lookup_key(LK_PAIR, pair), lanes);
    }
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `ev`: len MemwIn; `trace`: rows x 55 u64;
// `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void memw_fill(const MemwIn* ev, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    memw_fill_row(row, ev, len, rows, trace, counts, lanes);
}
#endif
