// Fill kernel of the MEMW_A table (mirrors crates/machine/src/tables/memw_a.rs): see common.cuh for the conventions.
//
// Input: one `MemwAIn` per in-cell access (28 bytes, layout = `zkrv_machine_cuda::tables::memw_a::MemwAIn`), in row
// order: the byte address (cell = addr >> 3, offset = addr & 7), the timestamp with the width index and the
// write flag packed in its top bits, the consumed token's timestamp and the cell's bytes before and after.
// Output: `rows x 37` u64 (`MemwACols` order), padding rows (row >= n_events) an inactive 8-byte read of zeros
// (sel[0] = w[3] = 1); per access two RANGE16 lookups (the LT32 halves of ts - old_ts - 1) and four BYTE[PAIR]
// lookups (the new bytes in pairs). Or (`memw_a_fill_rec`) from the record resident on the device plus a
// 16-byte `MemwARecIn` per access (cycle index, old_ts, old bytes: what only the memory walk knows).
#include "table_common.cuh"

// MemwACols offsets (MEMW_A_COL_*), MemwAIn (ts_meta: bits 0-28 the timestamp, bits 29-30 the width index,
// bit 31 is_write; MEMW_A_TS_BITS), MemwARecIn and CycleEvent: layout.cuh (generated).

// Writes the padding row at `t`: an inactive 8-byte read of zeros (no lookup).
ZKRV_HD void memw_a_pad_row(u64* t) {
#pragma unroll
    for (int c = 0; c < MEMW_A_WIDTH; c++) t[c] = 0;
    t[MEMW_A_COL_SEL] = 1;
    t[MEMW_A_COL_W + 3] = 1;
}

// Writes the row of an access at `t` (the row logic of `memw_a_trace`) and counts its lookups. `old_ts < ts`
// (so d = ts - old_ts - 1 < 2^32 and its halves are lookup rows); `lanes`: see lookup_add_warp.
ZKRV_HD void memw_a_row(u64* t, u64 cell, u32 offset, u64 ts, u32 widx, u64 is_write, u64 old_ts,
                        const unsigned char* old_b, const unsigned char* new_b, u32* counts, u32 lanes) {
    const u32 width = 1u << widx;
    const u64 d = ts - old_ts - 1;
    u64 v = 0;
#pragma unroll
    for (u32 k = 0; k < 8; k++) {
        if (k < width) v |= (u64)new_b[(offset + k) & 7] << (8 * k);
    }
    t[MEMW_A_COL_CELL] = cell;
    t[MEMW_A_COL_TS] = ts;
#pragma unroll
    for (u32 k = 0; k < 8; k++) t[MEMW_A_COL_SEL + k] = k == offset;
#pragma unroll
    for (u32 k = 0; k < 4; k++) t[MEMW_A_COL_W + k] = k == widx;
    t[MEMW_A_COL_IS_WRITE] = is_write;
#pragma unroll
    for (u32 k = 0; k < 8; k++) {
        t[MEMW_A_COL_OLD + k] = old_b[k];
        t[MEMW_A_COL_NEW + k] = new_b[k];
    }
    t[MEMW_A_COL_V] = v & 0xffffffffULL;
    t[MEMW_A_COL_V + 1] = v >> 32;
    t[MEMW_A_COL_TOP] = new_b[(offset + width - 1) & 7];
    t[MEMW_A_COL_OLD_TS] = old_ts;
    t[MEMW_A_COL_D0] = d & 0xffff;
    t[MEMW_A_COL_MU] = 1;
    lookup_add_warp(counts, LK_U16, d & 0xffff, lanes);
    lookup_add_warp(counts, LK_U16, d >> 16, lanes);
#pragma unroll
    for (u32 k = 0; k < 4; k++) {
        lookup_add_warp(counts, LK_PAIR, ((u64)new_b[2 * k] << 8) | new_b[2 * k + 1], lanes);
    }
}

// Row `row` of the trace from the packed accesses; `lanes`: the warp's lanes that fill real rows.
ZKRV_HD void memw_a_fill_row(u64 row, u64* trace, const MemwAIn* events, u32 n_events, u32* counts,
                             u32 lanes) {
    u64* t = trace + row * MEMW_A_WIDTH;
    if (row >= n_events) {
        memw_a_pad_row(t);
        return;
    }
    const MemwAIn e = events[row];
    memw_a_row(t, e.addr >> 3, e.addr & 7u, e.ts_meta & ((1u << MEMW_A_TS_BITS) - 1),
               (e.ts_meta >> MEMW_A_TS_BITS) & 3u, e.ts_meta >> 31, e.old_ts, e.old_bytes, e.new_bytes, counts,
               lanes);
}

// MemwARecIn (layout.cuh): one access for the record path, the cycle of the load/store and what the memory
// walk knows (`zkrv_machine_cuda::tables::memw_a::MemwARecIn`).

// Row `row` of the trace from the resident record (see `load_fill_rec_row` in load.cu for `cycles`): ts =
// 4 clk + 1, is_write = the word is a store, addr = rs1_val + its I- or S-immediate, width from funct3, new =
// old with the low `width` bytes of rs2_val at the offset for a store.
ZKRV_HD void memw_a_fill_rec_row(u64 row, u64* trace, const CycleEvent* cycles, const MemwARecIn* events,
                                 u32 n_events, u32* counts, u32 lanes) {
    u64* t = trace + row * MEMW_A_WIDTH;
    if (row >= n_events) {
        memw_a_pad_row(t);
        return;
    }
    const MemwARecIn e = events[row];
    const u64 clk = e.clk;
    const CycleEvent ev = cycles[clk];
    const u32 word = ev.word;
    const bool is_write = (word & 0x7fu) == 0x23u;
    const u32 imm12 = is_write ? ((word >> 25) << 5) | ((word >> 7) & 31u) : word >> 20;
    const u64 imm = (u64)(long long)((int)(imm12 << 20) >> 20);
    const u64 addr = ev.rs1_val + imm;
    const u32 offset = (u32)addr & 7u;
    const u32 widx = (word >> 12) & 3u;
    const u64 val = ev.rs2_val;
    unsigned char new_b[8];
#pragma unroll
    for (u32 k = 0; k < 8; k++) {
        // byte k of the cell: the stored byte k - offset when written, else the old byte
        const u32 j = k - offset;  // wraps for k < offset
        new_b[k] = is_write && j < (1u << widx) ? (unsigned char)(val >> (8 * j)) : e.old_bytes[k];
    }
    memw_a_row(t, addr >> 3, offset, 4 * clk + 1, widx, is_write, e.old_ts, e.old_bytes, new_b, counts, lanes);
}

#ifndef ZKRV_HOST_EMU
// One thread per row of a `rows x 37` trace; launch shape from `zkrv_machine_cuda::tables::launch_1d(rows, 37, ..)`.
extern "C" __global__ void memw_a_fill(u64* trace, const MemwAIn* events, u32 n_events, u32 rows, u32* counts) {
    const u64 row = global_row();
    // Every lane of the warp is live here (launch_1d blocks are whole warps): the lanes of real rows.
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) memw_a_fill_row(row, trace, events, n_events, counts, lanes);
}

// The same from the resident record (`memw_a_fill_rec_row`); launch shape as `memw_a_fill`.
extern "C" __global__ void memw_a_fill_rec(u64* trace, const CycleEvent* cycles, const MemwARecIn* events, u32 n_events,
                                           u32 rows, u32* counts) {
    const u64 row = global_row();
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) memw_a_fill_rec_row(row, trace, cycles, events, n_events, counts, lanes);
}
#endif
