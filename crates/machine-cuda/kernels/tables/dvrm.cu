// Fill kernel of the DVRM table (mirrors crates/machine/src/tables/dvrm.rs `dvrm_trace`): see common.cuh for the
// conventions.
//
// Input: the deduplicated requests `(n, d, signed) -> (m_q, m_r)` in key order (= row order), one `DvrmRequest`
// each (`zkrv_machine_cuda::tables::dvrm::DvrmRequest`, 40 bytes). Output: `rows x 34` row-major (DvrmCols order): row
// i < len is request i, rows len..rows are padding (0 / 0 unsigned: dz = 1, q = 2^64 - 1, r = 0, counters 0).
// Lookups per row: RANGE16 of the three low halves of r and of bits 32..47 of n and d, MSB16 of the top 16 bits of
// r, n and d, aggregated per warp. The padding rows' lookups (all at 0) are counted in one addition per kind by
// the thread of row `len`. The requests DVRM makes of MUL and LT are counted on the host (`dvrm_requests`).
#include "table_common.cuh"

// DvrmCols offsets (DVRM_COL_*) and DvrmRequest: layout.cuh (generated).

#define DVRM_W 0xffffffffull

// Writes row `row` (< rows) of the DVRM trace and counts its lookups. `len <= rows`. `lanes`: on the device, the
// mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void dvrm_fill_row(u64 row, const DvrmRequest* req, u64 len, u64 rows, u64* trace, u32* counts,
                           u32 lanes) {
    u64 n = 0, d = 0, s = 0, m_q = 0, m_r = 0;
    const bool real = row < len;
    if (real) {
        const DvrmRequest x = req[row];
        n = x.n;
        d = x.d;
        s = x.is_signed != 0;
        m_q = x.m_q;
        m_r = x.m_r;
    }
    u64 q, r;
    rv_divrem(n, d, s != 0, &q, &r);
    const u64 dz = d == 0;
    const u64 ovf = s && n == 0x8000000000000000ull && d == ~0ull;
    const u64 sn = s & (n >> 63), sd = s & (d >> 63), sr = s & (r >> 63);
    const u64 t = n - r;
    // kappa: the carry of t + r = n + 2^64 kappa; e = sr - sn - kappa < 0 iff sr < sn + kappa.
    const u64 kappa = t + r < t;
    const u64 neg_e = sr < sn + kappa;
    const u64 abs_r = sr ? 0 - r : r, abs_d = sd ? 0 - d : d;
    const u64 r_lo = r & DVRM_W, d_lo = d & DVRM_W;

    const u32 keys[8] = {
        lookup_key(LK_U16, r & 0xffff),
        lookup_key(LK_U16, (r >> 16) & 0xffff),
        lookup_key(LK_U16, (r >> 32) & 0xffff),
        lookup_key(LK_MSB16, r >> 48),
        lookup_key(LK_U16, (n >> 32) & 0xffff),
        lookup_key(LK_MSB16, n >> 48),
        lookup_key(LK_U16, (d >> 32) & 0xffff),
        lookup_key(LK_MSB16, d >> 48),
    };
    for (int k = 0; k < 8; k++) lookup_key_warp(counts, real ? keys[k] : LOOKUP_NONE, lanes);
    if (row == len) {
        const u32 pad = (u32)(rows - len);
        lookup_add_n(counts, LK_U16, 0, 5u * pad);
        lookup_add_n(counts, LK_MSB16, 0, 3u * pad);
    }

    u64* o = trace + row * DVRM_WIDTH;
    o[DVRM_COL_N] = n & DVRM_W;
    o[DVRM_COL_N + 1] = n >> 32;
    o[DVRM_COL_D] = d_lo;
    o[DVRM_COL_D + 1] = d >> 32;
    o[DVRM_COL_Q] = q & DVRM_W;
    o[DVRM_COL_Q + 1] = q >> 32;
    for (int k = 0; k < DVRM_COL_R_LEN; k++) o[DVRM_COL_R + k] = (r >> (16 * k)) & 0xffff;
    o[DVRM_COL_N_TOP] = n >> 48;
    o[DVRM_COL_D_TOP] = d >> 48;
    o[DVRM_COL_SN_RAW] = n >> 63;
    o[DVRM_COL_SD_RAW] = d >> 63;
    o[DVRM_COL_SR_RAW] = r >> 63;
    o[DVRM_COL_SN] = sn;
    o[DVRM_COL_SD] = sd;
    o[DVRM_COL_SR] = sr;
    o[DVRM_COL_T] = t & DVRM_W;
    o[DVRM_COL_T + 1] = t >> 32;
    o[DVRM_COL_NEG_E] = neg_e;
    o[DVRM_COL_ABS_R] = abs_r & DVRM_W;
    o[DVRM_COL_ABS_R + 1] = abs_r >> 32;
    o[DVRM_COL_ABS_D] = abs_d & DVRM_W;
    o[DVRM_COL_ABS_D + 1] = abs_d >> 32;
    // beta = [x_lo != 0] and its inverse witness (x_lo < 2^32 < p is a canonical field element).
    o[DVRM_COL_BETA_R] = r_lo != 0;
    o[DVRM_COL_INV_R] = r_lo ? gl_inv(r_lo) : 0;
    o[DVRM_COL_BETA_D] = d_lo != 0;
    o[DVRM_COL_INV_D] = d_lo ? gl_inv(d_lo) : 0;
    o[DVRM_COL_SIGNED] = s;
    o[DVRM_COL_DZ] = dz;
    o[DVRM_COL_OVF] = ovf;
    o[DVRM_COL_M_Q] = gl_canon(m_q);
    o[DVRM_COL_M_R] = gl_canon(m_r);
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `req`: len DvrmRequest; `trace`: rows x 34
// u64; `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void dvrm_fill(const DvrmRequest* req, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    dvrm_fill_row(row, req, len, rows, trace, counts, lanes);
}
#endif
