// Fill kernel of the LOAD table (mirrors crates/machine/src/tables/load.rs): see common.cuh for the conventions.
//
// Input: one `LoadIn` per load (20 bytes, layout = `zkrv_machine_cuda::tables::load::LoadIn`), in row order. Every
// LOAD cell is a function of it: base = addr - imm (mod 2^64; the walk guarantees base + imm < 2^32), the
// loaded value r is v sign- or zero-extended (the executor's rd_val), top/sbit/s come from v and the width.
// Or (`load_fill_rec`) from the record resident on the device plus one u32 cycle index per load (4 bytes).
// Output: `rows x 20` u64 (`LoadCols` order), padding rows (row >= n_events) an inactive 8-byte load of 0;
// one BYTE[MSB] lookup (Msb8 at row `top << 8`) per load.
#include "table_common.cuh"

// LoadCols offsets (LOAD_COL_*), LoadIn (flags: bits 0-1 width index, width 1 << idx bytes; bit 2 unsigned,
// LBU/LHU/LWU) and CycleEvent: layout.cuh (generated).

// Writes the padding row at `t`: an inactive 8-byte load of 0 at address 0 (no lookup).
ZKRV_HD void load_pad_row(u64* t) {
#pragma unroll
    for (int c = 0; c < LOAD_WIDTH; c++) t[c] = 0;
    t[LOAD_COL_W + 3] = 1;
}

// Writes the row of a load at `t` (the row logic of `load_trace`) and counts its lookup. `v`: the raw access
// value (zero-extended from the width `1 << widx`), `uns`: zero-extending; `lanes`: see lookup_add_warp.
ZKRV_HD void load_row(u64* t, u64 ts, u64 base, u64 imm, u32 widx, u64 uns, u64 v, u32* counts, u32 lanes) {
    const u32 width = 1u << widx;
    const u64 top = (v >> (8 * (width - 1))) & 0xff;
    const u64 sbit = top >> 7;
    const u64 s = (1 - uns) * sbit;
    const u64 ext = width == 8 ? 0 : ~0ULL << (8 * width);
    const u64 r = s ? (v | ext) : v;
    t[LOAD_COL_TS] = ts;
    t[LOAD_COL_BASE] = base & 0xffffffffULL;
    t[LOAD_COL_BASE + 1] = base >> 32;
    t[LOAD_COL_IMM] = imm & 0xffffffffULL;
    t[LOAD_COL_IMM + 1] = imm >> 32;
    t[LOAD_COL_ADDR] = (base + imm) & 0xffffffffULL;
    t[LOAD_COL_C0] = ((base & 0xffffffffULL) + (imm & 0xffffffffULL)) >> 32;
#pragma unroll
    for (u32 k = 0; k < 4; k++) t[LOAD_COL_W + k] = k == widx;
    t[LOAD_COL_UNSIGNED] = uns;
    t[LOAD_COL_V] = v & 0xffffffffULL;
    t[LOAD_COL_V + 1] = v >> 32;
    t[LOAD_COL_TOP] = top;
    t[LOAD_COL_SBIT] = sbit;
    t[LOAD_COL_S] = s;
    t[LOAD_COL_R] = r & 0xffffffffULL;
    t[LOAD_COL_R + 1] = r >> 32;
    t[LOAD_COL_MU] = 1;
    lookup_add_warp(counts, LK_MSB8, top << 8, lanes);
}

// Row `row` of the trace from the packed loads; `lanes`: the warp's lanes that fill real rows.
ZKRV_HD void load_fill_row(u64 row, u64* trace, const LoadIn* events, u32 n_events, u32* counts,
                           u32 lanes) {
    u64* t = trace + row * LOAD_WIDTH;
    if (row >= n_events) {
        load_pad_row(t);
        return;
    }
    const LoadIn e = events[row];
    const u64 imm = (u64)(long long)e.imm;
    const u64 v = (u64)e.v[0] | ((u64)e.v[1] << 32);
    load_row(t, e.ts, (u64)e.addr - imm, imm, e.flags & 3u, (e.flags >> 2) & 1u, v, counts, lanes);
}

// Row `row` of the trace from the resident record: `cycles` holds the record's `CycleEvent`s as they are,
// `clks[row]` is the cycle of load `row` (< the cycle count,
// checked by the launcher). ts = 4 clk + 1, base = rs1_val, imm = the I-immediate of the word, width and
// signedness from funct3, v = rd_val (the loaded value, extended) truncated to the width.
ZKRV_HD void load_fill_rec_row(u64 row, u64* trace, const CycleEvent* cycles, const u32* clks, u32 n_events,
                               u32* counts, u32 lanes) {
    u64* t = trace + row * LOAD_WIDTH;
    if (row >= n_events) {
        load_pad_row(t);
        return;
    }
    const u64 clk = clks[row];
    const CycleEvent ev = cycles[clk];
    const u32 word = ev.word;
    const u64 rd_val = ev.rd_val;
    const u64 imm = (u64)(long long)((int)word >> 20);
    const u32 funct3 = (word >> 12) & 7u;
    const u32 widx = funct3 & 3u;
    const u64 v = widx == 3 ? rd_val : rd_val & ((1ULL << (8u << widx)) - 1);
    load_row(t, 4 * clk + 1, ev.rs1_val, imm, widx, funct3 >> 2, v, counts, lanes);
}

#ifndef ZKRV_HOST_EMU
// One thread per row of a `rows x 20` trace; launch shape from `zkrv_machine_cuda::tables::launch_1d(rows, 20, ..)`.
extern "C" __global__ void load_fill(u64* trace, const LoadIn* events, u32 n_events, u32 rows, u32* counts) {
    const u64 row = global_row();
    // Every lane of the warp is live here (launch_1d blocks are whole warps): the lanes of real rows.
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) load_fill_row(row, trace, events, n_events, counts, lanes);
}

// The same from the resident record (`load_fill_rec_row`); launch shape as `load_fill`.
extern "C" __global__ void load_fill_rec(u64* trace, const CycleEvent* cycles, const u32* clks, u32 n_events, u32 rows,
                                         u32* counts) {
    const u64 row = global_row();
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) load_fill_rec_row(row, trace, cycles, clks, n_events, counts, lanes);
}
#endif
