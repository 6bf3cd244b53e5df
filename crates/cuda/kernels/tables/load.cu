// Fill kernel of the LOAD table (mirrors crates/machine/src/tables/load.rs): see common.cuh for the conventions.
//
// Input: one `LoadIn` per load (20 bytes, layout = `zkrv_cuda::tables::load::LoadIn`), in row order. Every
// LOAD cell is a function of it: base = addr - imm (mod 2^64; the walk guarantees base + imm < 2^32), the
// loaded value r is v sign- or zero-extended (the executor's rd_val), top/sbit/s come from v and the width.
// Output: `rows x 20` u64 (`LoadCols` order), padding rows (row >= n_events) an inactive 8-byte load of 0;
// one BYTE[MSB] lookup (Msb8 at row `top << 8`) per load.
#include "table_common.cuh"

// LoadCols column offsets (crates/machine/src/tables/load.rs).
#define LOAD_TS 0
#define LOAD_BASE 1
#define LOAD_IMM 3
#define LOAD_ADDR 5
#define LOAD_C0 6
#define LOAD_W 7
#define LOAD_UNSIGNED 11
#define LOAD_V 12
#define LOAD_TOP 14
#define LOAD_SBIT 15
#define LOAD_S 16
#define LOAD_R 17
#define LOAD_MU 19
#define LOAD_WIDTH 20

// One load. flags: bits 0-1 width index (width 1 << idx bytes), bit 2 unsigned (LBU/LHU/LWU).
struct LoadIn {
    u32 addr;     // base + imm (mod 2^64), < 2^32
    u32 ts;       // 4 clk + 1
    u32 v[2];     // raw access value, zero-extended, low word first
    short imm;    // sign-extended offset (12-bit I-immediate)
    unsigned short flags;
};

// Row `row` of the trace; `lanes`: the warp's lanes that fill real rows (see lookup_add_warp).
ZKRV_HD void load_fill_row(u64 row, u64* trace, const LoadIn* events, u32 n_events, u32* counts,
                           u32 lanes) {
    u64* t = trace + row * LOAD_WIDTH;
    if (row >= n_events) {
#pragma unroll
        for (int c = 0; c < LOAD_WIDTH; c++) t[c] = 0;
        t[LOAD_W + 3] = 1;
        return;
    }
    const LoadIn e = events[row];
    const u32 widx = e.flags & 3u;
    const u64 uns = (e.flags >> 2) & 1u;
    const u64 imm = (u64)(long long)e.imm;
    const u64 addr = e.addr;
    const u64 base = addr - imm;
    const u64 v = (u64)e.v[0] | ((u64)e.v[1] << 32);
    const u32 width = 1u << widx;
    const u64 top = (v >> (8 * (width - 1))) & 0xff;
    const u64 sbit = top >> 7;
    const u64 s = (1 - uns) * sbit;
    const u64 ext = width == 8 ? 0 : ~0ULL << (8 * width);
    const u64 r = s ? (v | ext) : v;
    t[LOAD_TS] = e.ts;
    t[LOAD_BASE] = base & 0xffffffffULL;
    t[LOAD_BASE + 1] = base >> 32;
    t[LOAD_IMM] = imm & 0xffffffffULL;
    t[LOAD_IMM + 1] = imm >> 32;
    t[LOAD_ADDR] = addr;
    t[LOAD_C0] = ((base & 0xffffffffULL) + (imm & 0xffffffffULL)) >> 32;
#pragma unroll
    for (u32 k = 0; k < 4; k++) t[LOAD_W + k] = k == widx;
    t[LOAD_UNSIGNED] = uns;
    t[LOAD_V] = v & 0xffffffffULL;
    t[LOAD_V + 1] = v >> 32;
    t[LOAD_TOP] = top;
    t[LOAD_SBIT] = sbit;
    t[LOAD_S] = s;
    t[LOAD_R] = r & 0xffffffffULL;
    t[LOAD_R + 1] = r >> 32;
    t[LOAD_MU] = 1;
    lookup_add_warp(counts, LK_MSB8, top << 8, lanes);
}

#ifndef ZKRV_HOST_EMU
// One thread per row of a `rows x 20` trace; launch shape from `zkrv_cuda::tables::launch_1d(rows, 20, ..)`.
extern "C" __global__ void load_fill(u64* trace, const LoadIn* events, u32 n_events, u32 rows, u32* counts) {
    const u64 row = global_row();
    // Every lane of the warp is live here (launch_1d blocks are whole warps): the lanes of real rows.
    const u32 lanes = __ballot_sync(0xffffffffu, row < n_events);
    if (row < rows) load_fill_row(row, trace, events, n_events, counts, lanes);
}
#endif
