// Fill kernel of the SHIFT table (mirrors crates/machine/src/tables/shift.rs `shift_fill`): see common.cuh for the
// conventions.
//
// Input: the deduplicated requests `(op, a, b) -> m` in key order (= row order), one `ShiftRequest` each
// (`zkrv_machine_cuda::tables::shift::ShiftRequest`, 32 bytes; `op` the ALU code SLL..SRA5 = 7..12). Output: `rows x 22`
// row-major (ShiftCols order): row i < len is request i, rows len..rows are padding (SLL(0, 0) = 0 with m = 0).
// Lookups per row: RANGE16 of the two 16-bit halves of the amount quotient, aggregated per warp (equal lookups of
// a warp's rows are one atomic). The padding rows' lookups (both at 0) are counted in one addition by the thread
// of row `len`. The requests SHIFT makes of MUL are counted on the host (`shift_side_requests`); its POW2
// requests are counted on the host too, and on the device by `pow2_count` (mirrors the POW2 half of
// `shift_side_requests`) when POW2 is built resident (`pow2_fill`, the POW2 main trace from the counters).
#include "table_common.cuh"

// ShiftCols offsets (SHIFT_COL_*), ShiftRequest and the ALU codes: layout.cuh (generated).

// Adds `n` lookups of `kind` at row `x`.
ZKRV_HD void shift_lookup_add_n(u32* counts, u32 kind, u64 x, u32 n) {
#ifdef ZKRV_HOST_EMU
    counts[kind * LK_ROWS + (u32)x] += n;
#else
    atomicAdd(&counts[kind * LK_ROWS + (u32)x], n);
#endif
}

// No lookup (a padding row's slot in the warp-wide lookup calls).
#define SHIFT_NO_LOOKUP 0xffffffffu

// Counts one lookup at histogram index `key` (kind * 2^16 + x), or none for SHIFT_NO_LOOKUP. On the device every
// lane in `lanes` (the warp's lanes that run a row) must make the same sequence of calls: lanes with equal keys are
// merged into one atomic (warp aggregation; the hot key RANGE16[0] of small amounts would otherwise serialise).
ZKRV_HD void shift_lookup(u32* counts, u32 key, u32 lanes) {
#ifdef ZKRV_HOST_EMU
    (void)lanes;
    if (key != SHIFT_NO_LOOKUP) counts[key] += 1;
#else
    u32 peers = __match_any_sync(lanes, key);
    if (key != SHIFT_NO_LOOKUP && (u32)(__ffs(peers) - 1) == (threadIdx.x & 31u))
        atomicAdd(&counts[key], (u32)__popc(peers));
#endif
}

// Writes row `row` (< rows) of the SHIFT trace and counts its lookups. `len <= rows`. `lanes`: on the device, the
// mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void shift_fill_row(u64 row, const ShiftRequest* req, u64 len, u64 rows, u64* trace, u32* counts,
                            u32 lanes) {
    u64 a = 0, b = 0, op = ALU_SLL, m = 0;
    bool real = row < len;
    if (real) {
        ShiftRequest q = req[row];
        a = q.a;
        b = q.b;
        op = q.op;
        m = q.m;
    }
    u64 w5 = op >= ALU_SLL5;
    u64 kind = (op - ALU_SLL) % 3;  // 0 left, 1 logical right, 2 arithmetic right
    u64 b_lo = b & 0xffffffffull;
    u64 s = b_lo & (w5 ? 31 : 63);
    u64 quot = (b_lo - s) >> (w5 ? 5 : 6);
    u64 p = 1ull << s;
    u64 q = s == 0 ? 1 : 1ull << (64 - s);
    u64 z = s == 0;
    u64 x = kind == 0 ? p : q;
    u64 mop = (kind == 0 || z) ? ALU_MUL : (kind == 1 ? ALU_MULHU : ALU_MULHSU);
    u64 r = kind == 0 ? a << s : (kind == 1 ? a >> s : (u64)((long long)a >> s));
    // Real rows: RANGE16 of q0 and q1. Padding rows make no call-time lookups (counted below in one addition),
    // but take part in the warp-wide calls.
    shift_lookup(counts, real ? LK_U16 * LK_ROWS + (u32)(quot & 0xffff) : SHIFT_NO_LOOKUP, lanes);
    shift_lookup(counts, real ? LK_U16 * LK_ROWS + (u32)(quot >> 16) : SHIFT_NO_LOOKUP, lanes);
    if (row == len) shift_lookup_add_n(counts, LK_U16, 0, 2u * (u32)(rows - len));
    u64* o = trace + row * SHIFT_WIDTH;
    o[SHIFT_COL_A] = a & 0xffffffffull;
    o[SHIFT_COL_A + 1] = a >> 32;
    o[SHIFT_COL_B] = b_lo;
    o[SHIFT_COL_B + 1] = b >> 32;
    o[SHIFT_COL_S] = s;
    o[SHIFT_COL_Q0] = quot & 0xffff;
    o[SHIFT_COL_Q1] = quot >> 16;
    o[SHIFT_COL_IS_SLL] = kind == 0;
    o[SHIFT_COL_IS_SRL] = kind == 1;
    o[SHIFT_COL_IS_SRA] = kind == 2;
    o[SHIFT_COL_W5] = w5;
    o[SHIFT_COL_P] = p & 0xffffffffull;
    o[SHIFT_COL_P + 1] = p >> 32;
    o[SHIFT_COL_Q] = q & 0xffffffffull;
    o[SHIFT_COL_Q + 1] = q >> 32;
    o[SHIFT_COL_Z] = z;
    o[SHIFT_COL_MOP] = mop;
    o[SHIFT_COL_X] = x & 0xffffffffull;
    o[SHIFT_COL_X + 1] = x >> 32;
    o[SHIFT_COL_R] = r & 0xffffffffull;
    o[SHIFT_COL_R + 1] = r >> 32;
    o[SHIFT_COL_M] = gl_canon(m);
}

// The POW2 row of SHIFT row `row` (< rows): `s + 64 w5` of its request, row 0 (SLL by 0) for a padding row.
ZKRV_HD u32 pow2_row_of(u64 row, const ShiftRequest* req, u64 len) {
    if (row >= len) return 0;
    const ShiftRequest q = req[row];
    const u64 w5 = q.op >= ALU_SLL5;
    const u64 s = (q.b & 0xffffffffull) & (w5 ? 31 : 63);
    return (u32)(s + 64 * w5);
}

// Counts SHIFT row `row`'s POW2 request into `pow2` (u32 per POW2 row, at least 96), aggregated per warp; the
// padding rows' are added at once by the thread of row `len`. `lanes` as in `shift_fill_row`.
ZKRV_HD void pow2_count_row(u64 row, const ShiftRequest* req, u64 len, u64 rows, u32* pow2, u32 lanes) {
    lookup_key_warp(pow2, row < len ? pow2_row_of(row, req, len) : LOOKUP_NONE, lanes);
    if (row == len) lookup_add_n(pow2, 0, pow2_row_of(row, req, len), (u32)(rows - len));
}

#ifndef ZKRV_HOST_EMU
// One thread per SHIFT row: `rows` threads or more. `req`: len ShiftRequest; `pow2`: the POW2 counters.
extern "C" __global__ void pow2_count(const ShiftRequest* req, u64 len, u64 rows, u32* pow2) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    pow2_count_row(row, req, len, rows, pow2, lanes);
}

// One thread per POW2 row: `rows` threads or more. `pow2`: rows u32; `trace`: rows x 1 u64.
extern "C" __global__ void pow2_fill(const u32* pow2, u64 rows, u64* trace) {
    u64 row = global_row();
    if (row >= rows) return;
    counts_column_row(row, pow2, trace);
}

// One thread per row: `rows` threads or more (extra threads return). `req`: len ShiftRequest; `trace`: rows x 22
// u64; `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void shift_fill(const ShiftRequest* req, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    shift_fill_row(row, req, len, rows, trace, counts, lanes);
}
#endif
