// Fill kernel of the MEMW_A table (mirrors crates/machine/src/tables/memw_a.rs): see common.cuh for the conventions.
//
// Input: one `MemwAIn` per in-cell access (28 bytes, layout = `zkrv_cuda::tables::memw_a::MemwAIn`), in row
// order: the byte address (cell = addr >> 3, offset = addr & 7), the timestamp with the width index and the
// write flag packed in its top bits, the consumed token's timestamp and the cell's bytes before and after.
// Output: `rows x 37` u64 (`MemwACols` order), padding rows (row >= n_events) an inactive 8-byte read of zeros
// (sel[0] = w[3] = 1); per access two RANGE16 lookups (the LT32 halves of ts - old_ts - 1) and four BYTE[PAIR]
// lookups (the new bytes in pairs).
#include "table_common.cuh"

// MemwACols column offsets (crates/machine/src/tables/memw_a.rs).
#define MEMW_A_CELL 0
#define MEMW_A_TS 1
#define MEMW_A_SEL 2
#define MEMW_A_W 10
#define MEMW_A_IS_WRITE 14
#define MEMW_A_OLD 15
#define MEMW_A_NEW 23
#define MEMW_A_V 31
#define MEMW_A_TOP 33
#define MEMW_A_OLD_TS 34
#define MEMW_A_D0 35
#define MEMW_A_MU 36
#define MEMW_A_WIDTH 37

// ts_meta: bits 0-28 the timestamp, bits 29-30 the width index, bit 31 is_write.
#define MEMW_A_TS_BITS 29

// One in-cell access.
struct MemwAIn {
    u32 addr;     // cell * 8 + offset
    u32 ts_meta;  // ts | width_idx << 29 | is_write << 31
    u32 old_ts;   // timestamp of the consumed token (< ts)
    unsigned char old_bytes[8];  // the cell before the access
    unsigned char new_bytes[8];  // the cell after it
};

// Row `row` of the trace; `lanes`: the warp's lanes that fill real rows (see lookup_add_warp).
ZKRV_HD void memw_a_fill_row(u64 row, u64* trace, const MemwAIn* events, u32 n_events, u32* counts,
                             u32 lanes) {
    u64* t = trace + row * MEMW_A_WIDTH;
    if (row >= n_events) {
#pragma unroll
        for (int c = 0; c < MEMW_A_WIDTH; c++) t[c] = 0;
        t[MEMW_A_SEL] = 1;
        t[MEMW_A_W + 3] = 1;
        return;
    }
    const MemwAIn e = events[row];
    const u32 offset = e.addr & 7u;
    const u64 ts = e.ts_meta & ((1u << MEMW_A_TS_BITS) - 1);
    const u32 widx = (e.ts_meta >> MEMW_A_TS_BITS) & 3u;
    const u32 width = 1u << widx;
    const u64 d = ts - e.old_ts - 1;
    u64 v = 0;
#pragma unroll
    for (u32 k = 0; k < 8; k++) {
        if (k < width) v |= (u64)e.new_bytes[(offset + k) & 7] << (8 * k);
    }
    t[MEMW_A_CELL] = e.addr >> 3;
    t[MEMW_A_TS] = ts;
#pragma unroll
    for (u32 k = 0; k < 8; k++) t[MEMW_A_SEL + k] = k == offset;
#pragma unroll
    for (u32 k = 0; k < 4; k++) t[MEMW_A_W + k] = k == widx;
    t[MEMW_A_IS_WRITE] = e.ts_meta >> 31;
#pragma unroll
    for (u32 k = 0; k < 8; k++) {
        t[MEMW_A_OLD + k] = e.old_bytes[k];
        t[MEMW_A_NEW + k] = e.new_bytes[k];
    }
    t[MEMW_A_V] = v & 0xffffffffULL;
    t[MEMW_A_V + 1] = v >> 32;
    t[MEMW_A_TOP] = e.new_bytes[(offset + width - 1) & 7];
    t[MEMW_A_OLD_TS] = e.old_ts;
    t[MEMW_A_D0] = d & 0xffff;
    t[MEMW_A_MU] = 1;
    lookup_add_warp(counts, LK_U16, d & 0xffff, lanes);
    lookup_add_warp(counts, LK_U16, d >> 16, lanes);
#pragma unroll
    for (u32 k = 0; k < 4; k++) {
        lookup_add_warp(counts, LK_PAIR, ((u64)e.new_bytes[2 * k] << 8) | e.new_bytes[2 * k + 1], lanes);
    }
}

#ifndef ZKRV_HOST_EMU
// One thread per row of a `rows x 37` trace; launch shape from `zkrv_cuda::tables::launch_1d(rows, 37, ..)`.
extern "C" __global__ void memw_a_fill(u64* trace, const MemwAIn* events, u32 n_events, u32 rows, u32* counts) {
    const u64 row = global_row();
    // Every lane of the warp is live here (launch_1d blocks are whole warps): the lanes of real rows.
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) memw_a_fill_row(row, trace, events, n_events, counts, lanes);
}
#endif
