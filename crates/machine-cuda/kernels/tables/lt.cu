// Fill kernel of the LT table (mirrors crates/machine/src/tables/lt.rs): see common.cuh for the conventions.
//
// Input: the deduplicated requests `(a, b, signed) -> m` in key order (= row order), one `LtRequest` each
// (`zkrv_machine_cuda::tables::lt::LtRequest`, 32 bytes). Output: `rows x 16` row-major (LtCols order): row i < len is
// request i, rows len..rows are padding (the fact 0 <u 0 = 0 with m = 0). Lookups per row: RANGE16 of the four
// 16-bit halves of `a - b` and of bits 32..47 of a and b, MSB16 of the top 16 bits of a and b, aggregated per warp
// (equal lookups of a warp's rows are one atomic). The padding rows' lookups (all at 0) are counted in one
// addition by the thread of row `len` instead of one atomic per row.
#include "table_common.cuh"

// LtCols offsets (LT_COL_*) and LtRequest: layout.cuh (generated).

// Adds `n` lookups of `kind` at row `x`.
ZKRV_HD void lt_lookup_add_n(u32* counts, u32 kind, u64 x, u32 n) {
#ifdef ZKRV_HOST_EMU
    counts[kind * LK_ROWS + (u32)x] += n;
#else
    atomicAdd(&counts[kind * LK_ROWS + (u32)x], n);
#endif
}

// No lookup (a padding row's slot in the warp-wide lookup calls).
#define LT_NO_LOOKUP 0xffffffffu

// Counts one lookup at histogram index `key` (kind * 2^16 + x), or none for LT_NO_LOOKUP. On the device every lane
// in `lanes` (the warp's lanes that run a row) must make the same sequence of calls: lanes with equal keys are
// merged into one atomic (warp aggregation; the hot keys, e.g. RANGE16[0] of small operands, would otherwise
// serialise).
ZKRV_HD void lt_lookup(u32* counts, u32 key, u32 lanes) {
#ifdef ZKRV_HOST_EMU
    (void)lanes;
    if (key != LT_NO_LOOKUP) counts[key] += 1;
#else
    u32 peers = __match_any_sync(lanes, key);
    if (key != LT_NO_LOOKUP && (u32)(__ffs(peers) - 1) == (threadIdx.x & 31u))
        atomicAdd(&counts[key], (u32)__popc(peers));
#endif
}

// Writes row `row` (< rows) of the LT trace and counts its lookups. `len <= rows`. `lanes`: on the device, the
// mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void lt_fill_row(u64 row, const LtRequest* req, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes) {
    u64 a = 0, b = 0, is_signed = 0, m = 0;
    bool real = row < len;
    if (real) {
        LtRequest q = req[row];
        a = q.a;
        b = q.b;
        is_signed = q.is_signed != 0;
        m = q.m;
    }
    u64 d = a - b;
    u64 sa = a >> 63, sb = b >> 63;
    u64 r = is_signed ? (u64)((long long)a < (long long)b) : (u64)(a < b);
    u64 sx = is_signed * (sa ^ sb);
    u64 dh[LT_COL_D_LEN] = {d & 0xffff, (d >> 16) & 0xffff, (d >> 32) & 0xffff, d >> 48};
    // Real rows: RANGE16 of the halves of d and of bits 32..47 of a and b, MSB16 of the tops of a and b. Padding
    // rows make no call-time lookups (counted below in one addition), but take part in the warp-wide calls.
    u32 keys[8] = {
        LK_U16 * LK_ROWS + (u32)dh[0],
        LK_U16 * LK_ROWS + (u32)dh[1],
        LK_U16 * LK_ROWS + (u32)dh[2],
        LK_U16 * LK_ROWS + (u32)dh[3],
        LK_U16 * LK_ROWS + (u32)((a >> 32) & 0xffff),
        LK_MSB16 * LK_ROWS + (u32)(a >> 48),
        LK_U16 * LK_ROWS + (u32)((b >> 32) & 0xffff),
        LK_MSB16 * LK_ROWS + (u32)(b >> 48),
    };
    for (int k = 0; k < 8; k++) lt_lookup(counts, real ? keys[k] : LT_NO_LOOKUP, lanes);
    if (row == len) {
        u32 pad = (u32)(rows - len);
        lt_lookup_add_n(counts, LK_U16, 0, 6u * pad);
        lt_lookup_add_n(counts, LK_MSB16, 0, 2u * pad);
    }
    u64* o = trace + row * LT_WIDTH;
    o[LT_COL_A] = a & 0xffffffffull;
    o[LT_COL_A + 1] = a >> 32;
    o[LT_COL_B] = b & 0xffffffffull;
    o[LT_COL_B + 1] = b >> 32;
    for (int k = 0; k < LT_COL_D_LEN; k++) o[LT_COL_D + k] = dh[k];
    o[LT_COL_A_TOP] = a >> 48;
    o[LT_COL_B_TOP] = b >> 48;
    o[LT_COL_SA] = sa;
    o[LT_COL_SB] = sb;
    o[LT_COL_SIGNED] = is_signed;
    o[LT_COL_SX] = sx;
    o[LT_COL_R] = r;
    o[LT_COL_M] = gl_canon(m);
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `req`: len LtRequest; `trace`: rows x 16 u64;
// `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void lt_fill(const LtRequest* req, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    lt_fill_row(row, req, len, rows, trace, counts, lanes);
}
#endif
