// Fill kernel of the STORE table (mirrors crates/machine/src/tables/store.rs): see common.cuh for the conventions.
//
// Input: one `StoreIn` per store (20 bytes, layout = `zkrv_machine_cuda::tables::store::StoreIn`), in row order. Every
// STORE cell is a function of it: base = addr - imm (mod 2^64; the walk guarantees base + imm < 2^32), v is val
// truncated to the width, and top (the access's top byte after the write) is byte `width - 1` of val.
// Or (`store_fill_rec`) from the record resident on the device plus one u32 cycle index per store (4 bytes).
// Output: `rows x 20` u64 (`StoreCols` order), padding rows (row >= n_events) an inactive 8-byte store of 0;
// per store one BYTE[PAIR] lookup (Pair at `b0 << 8 | b1`) and one RANGE16 lookup (U16 at `hh`).
#include "table_common.cuh"

// StoreCols offsets (STORE_COL_*), StoreIn and CycleEvent: layout.cuh (generated).

// Writes the padding row at `t`: an inactive 8-byte store of 0 at address 0 (no lookup).
ZKRV_HD void store_pad_row(u64* t) {
#pragma unroll
    for (int c = 0; c < STORE_WIDTH; c++) t[c] = 0;
    t[STORE_COL_W + 3] = 1;
}

// Writes the row of a store at `t` (the row logic of `store_trace`) and counts its lookups; `lanes`: see
// lookup_add_warp.
ZKRV_HD void store_row(u64* t, u64 ts, u64 base, u64 imm, u32 widx, u64 val, u32* counts, u32 lanes) {
    const u32 width = 1u << widx;
    const u64 v = width == 8 ? val : val & ((1ULL << (8 * width)) - 1);
    const u64 lo = val & 0xffffffffULL;
    t[STORE_COL_TS] = ts;
    t[STORE_COL_BASE] = base & 0xffffffffULL;
    t[STORE_COL_BASE + 1] = base >> 32;
    t[STORE_COL_IMM] = imm & 0xffffffffULL;
    t[STORE_COL_IMM + 1] = imm >> 32;
    t[STORE_COL_ADDR] = (base + imm) & 0xffffffffULL;
    t[STORE_COL_C0] = ((base & 0xffffffffULL) + (imm & 0xffffffffULL)) >> 32;
    t[STORE_COL_VAL] = lo;
    t[STORE_COL_VAL + 1] = val >> 32;
#pragma unroll
    for (u32 k = 0; k < 4; k++) t[STORE_COL_W + k] = k == widx;
    t[STORE_COL_B0] = lo & 0xff;
    t[STORE_COL_B1] = (lo >> 8) & 0xff;
    t[STORE_COL_HH] = lo >> 16;
    t[STORE_COL_V] = v & 0xffffffffULL;
    t[STORE_COL_V + 1] = v >> 32;
    t[STORE_COL_TOP] = (val >> (8 * (width - 1))) & 0xff;
    t[STORE_COL_MU] = 1;
    lookup_add_warp(counts, LK_PAIR, ((lo & 0xff) << 8) | ((lo >> 8) & 0xff), lanes);
    lookup_add_warp(counts, LK_U16, lo >> 16, lanes);
}

// Row `row` of the trace from the packed stores; `lanes`: the warp's lanes that fill real rows.
ZKRV_HD void store_fill_row(u64 row, u64* trace, const StoreIn* events, u32 n_events, u32* counts,
                            u32 lanes) {
    u64* t = trace + row * STORE_WIDTH;
    if (row >= n_events) {
        store_pad_row(t);
        return;
    }
    const StoreIn e = events[row];
    const u64 imm = (u64)(long long)e.imm;
    const u64 val = (u64)e.val[0] | ((u64)e.val[1] << 32);
    store_row(t, e.ts, (u64)e.addr - imm, imm, e.width_idx & 3u, val, counts, lanes);
}

// Row `row` of the trace from the resident record (see `load_fill_rec_row` in load.cu for `cycles`, `clks`):
// ts = 4 clk + 1, base = rs1_val, imm = the S-immediate of the word, width from funct3, val = rs2_val.
ZKRV_HD void store_fill_rec_row(u64 row, u64* trace, const CycleEvent* cycles, const u32* clks, u32 n_events,
                                u32* counts, u32 lanes) {
    u64* t = trace + row * STORE_WIDTH;
    if (row >= n_events) {
        store_pad_row(t);
        return;
    }
    const u64 clk = clks[row];
    const CycleEvent ev = cycles[clk];
    const u32 word = ev.word;
    const u32 imm12 = ((word >> 25) << 5) | ((word >> 7) & 31u);
    const u64 imm = (u64)(long long)((int)(imm12 << 20) >> 20);
    store_row(t, 4 * clk + 1, ev.rs1_val, imm, (word >> 12) & 3u, ev.rs2_val, counts, lanes);
}

#ifndef ZKRV_HOST_EMU
// One thread per row of a `rows x 20` trace; launch shape from `zkrv_machine_cuda::tables::launch_1d(rows, 20, ..)`.
extern "C" __global__ void store_fill(u64* trace, const StoreIn* events, u32 n_events, u32 rows, u32* counts) {
    const u64 row = global_row();
    // Every lane of the warp is live here (launch_1d blocks are whole warps): the lanes of real rows.
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) store_fill_row(row, trace, events, n_events, counts, lanes);
}

// The same from the resident record (`store_fill_rec_row`); launch shape as `store_fill`.
extern "C" __global__ void store_fill_rec(u64* trace, const CycleEvent* cycles, const u32* clks, u32 n_events,
                                          u32 rows, u32* counts) {
    const u64 row = global_row();
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) store_fill_rec_row(row, trace, cycles, clks, n_events, counts, lanes);
}
#endif
