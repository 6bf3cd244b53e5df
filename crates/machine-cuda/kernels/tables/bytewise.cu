// Fill kernel of the BYTEWISE table (mirrors crates/machine/src/tables/bytewise.rs `bytewise_trace`): see
// common.cuh for the conventions.
//
// Input: the deduplicated requests `(op, a, b) -> m` in key order (= row order), one `BytewiseRequest` each
// (`zkrv_machine_cuda::tables::bytewise::BytewiseRequest`, 32 bytes; `op` the ALU code AND, OR or XOR). Output:
// `rows x 28` row-major (BytewiseCols order): row i < len is request i, rows len..rows are padding (AND of zeros,
// m = 0). Lookups per row: BYTE[AND|OR|XOR] of each byte pair `a_k << 8 | b_k`, aggregated per warp. The padding
// rows' lookups (8 AND at 0 each) are counted in one addition by the thread of row `len`.
#include "table_common.cuh"

// BytewiseCols offsets (BYTEWISE_COL_*), BytewiseRequest and the ALU codes: layout.cuh (generated).

// Writes row `row` (< rows) of the BYTEWISE trace and counts its lookups. `len <= rows`. `lanes`: on the device,
// the mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void bytewise_fill_row(u64 row, const BytewiseRequest* req, u64 len, u64 rows, u64* trace, u32* counts,
                               u32 lanes) {
    u64 op = ALU_AND, a = 0, b = 0, m = 0;
    const bool real = row < len;
    if (real) {
        const BytewiseRequest q = req[row];
        op = q.op;
        a = q.a;
        b = q.b;
        m = q.m;
    }
    // Any op but AND and OR is filled as XOR (as the host fill does; the requests hold AND, OR, XOR only).
    u64 r;
    u32 kind;
    if (op == ALU_AND) {
        r = a & b;
        kind = LK_AND;
    } else if (op == ALU_OR) {
        r = a | b;
        kind = LK_OR;
    } else {
        r = a ^ b;
        kind = LK_XOR;
    }
    u64* o = trace + row * BYTEWISE_WIDTH;
    for (int k = 0; k < 8; k++) {
        const u64 ak = (a >> (8 * k)) & 0xff, bk = (b >> (8 * k)) & 0xff;
        lookup_key_warp(counts, real ? lookup_key(kind, (ak << 8) | bk) : LOOKUP_NONE, lanes);
        o[BYTEWISE_COL_A + k] = ak;
        o[BYTEWISE_COL_B + k] = bk;
        o[BYTEWISE_COL_R + k] = (r >> (8 * k)) & 0xff;
    }
    if (row == len) lookup_add_n(counts, LK_AND, 0, 8u * (u32)(rows - len));
    o[BYTEWISE_COL_IS_AND] = op == ALU_AND;
    o[BYTEWISE_COL_IS_OR] = op == ALU_OR;
    o[BYTEWISE_COL_IS_XOR] = op == ALU_XOR;
    o[BYTEWISE_COL_M] = gl_canon(m);
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `req`: len BytewiseRequest; `trace`:
// rows x 28 u64; `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void bytewise_fill(const BytewiseRequest* req, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    bytewise_fill_row(row, req, len, rows, trace, counts, lanes);
}
#endif
