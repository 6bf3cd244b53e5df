// Fill kernel of the EQ table (mirrors crates/machine/src/tables/eq.rs `eq_trace`): see common.cuh for the
// conventions.
//
// Input: the deduplicated requests `(a, b) -> m` in key order (= row order), one `EqRequest` each
// (`zkrv_machine_cuda::tables::eq::EqRequest`, 24 bytes). Output: `rows x 8` row-major (EqCols order): row i < len is
// request i, rows len..rows are padding (0 == 0, m = 0). EQ makes no BITWISE lookups.
#include "table_common.cuh"

// EqCols offsets (EQ_COL_*) and EqRequest: layout.cuh (generated).

// Writes row `row` (< rows) of the EQ trace. `len <= rows`.
ZKRV_HD void eq_fill_row(u64 row, const EqRequest* req, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes) {
    (void)rows;
    (void)counts;
    (void)lanes;
    u64 a = 0, b = 0, m = 0;
    if (row < len) {
        const EqRequest q = req[row];
        a = q.a;
        b = q.b;
        m = q.m;
    }
    const u64 a_lo = a & 0xffffffffull, a_hi = a >> 32, b_lo = b & 0xffffffffull, b_hi = b >> 32;
    u64* o = trace + row * EQ_WIDTH;
    o[EQ_COL_A] = a_lo;
    o[EQ_COL_A + 1] = a_hi;
    o[EQ_COL_B] = b_lo;
    o[EQ_COL_B + 1] = b_hi;
    o[EQ_COL_R] = a == b;
    // One inverse witness: of the low words' difference if they differ, else of the high words'.
    o[EQ_COL_INV] = a != b && a_lo != b_lo ? gl_inv(gl_sub(a_lo, b_lo)) : 0;
    o[EQ_COL_INV + 1] = a != b && a_lo == b_lo ? gl_inv(gl_sub(a_hi, b_hi)) : 0;
    o[EQ_COL_M] = gl_canon(m);
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `req`: len EqRequest; `trace`: rows x 8
// u64; `counts`: the lookup histogram (unused: EQ makes no lookups; the launch shape of every request fill).
extern "C" __global__ void eq_fill(const EqRequest* req, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    if (row >= rows) return;
    eq_fill_row(row, req, len, rows, trace, counts, 0u);
}
#endif
