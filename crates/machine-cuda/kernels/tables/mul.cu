// Fill kernel of the MUL table (mirrors crates/machine/src/tables/mul.rs `mul_trace`): see common.cuh for the
// conventions.
//
// Input: the deduplicated requests `(a, b, sa_en, sb_en) -> [m_lo, m_hi]` in key order (= row order), one
// `MulRequest` each (`zkrv_machine_cuda::tables::mul::MulRequest`, 40 bytes; `signs` = sa_en | sb_en << 1). Output:
// `rows x 32` row-major (MulCols order): row i < len is request i, rows len..rows are padding (0 x 0 = 0,
// unsigned, both counters 0). Lookups per row: RANGE16 of the three low limbs of a and b, of the eight product
// limbs and of the four low carry halves, MSB16 of the top limbs of a and b, PAIR of the carry high bytes
// (c_0, c_1) and (c_2, c_3), aggregated per warp. The padding rows' lookups (all at 0) are counted in one addition
// per kind by the thread of row `len`.
//
// Every convolution term fits u64: a column sum of at most 8 products of 16-bit limbs is < 2^35, so
// `conv(2k) + 2^16 conv(2k + 1) + carry < 2^52`.
#include "table_common.cuh"

// MulCols offsets (MUL_COL_*) and MulRequest: layout.cuh (generated).

// Limb i of the sign-extended operand (limbs i >= 4 are `s * 0xffff`).
ZKRV_HD u64 mul_ext(const u64* x, u64 s, int i) { return i < 4 ? x[i] : s * 0xffffull; }

// Column sum `sum_{i + j = s} A_i B_j` of the sign-extended limbs.
ZKRV_HD u64 mul_conv(const u64* a, u64 sa, const u64* b, u64 sb, int s) {
    u64 acc = 0;
    for (int i = 0; i <= s; i++) {
        if (i < 8 && s - i < 8) acc += mul_ext(a, sa, i) * mul_ext(b, sb, s - i);
    }
    return acc;
}

// Writes row `row` (< rows) of the MUL trace and counts its lookups. `len <= rows`. `lanes`: on the device, the
// mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void mul_fill_row(u64 row, const MulRequest* req, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes) {
    u64 a = 0, b = 0, sa_en = 0, sb_en = 0, m_lo = 0, m_hi = 0;
    const bool real = row < len;
    if (real) {
        const MulRequest q = req[row];
        a = q.a;
        b = q.b;
        sa_en = q.signs & 1;
        sb_en = (q.signs >> 1) & 1;
        m_lo = q.m_lo;
        m_hi = q.m_hi;
    }
    const u64 al[MUL_COL_A_LEN] = {a & 0xffff, (a >> 16) & 0xffff, (a >> 32) & 0xffff, a >> 48};
    const u64 bl[MUL_COL_B_LEN] = {b & 0xffff, (b >> 16) & 0xffff, (b >> 32) & 0xffff, b >> 48};
    const u64 sa_raw = a >> 63, sb_raw = b >> 63;
    const u64 sa = sa_en & sa_raw, sb = sb_en & sb_raw;
    u64 p[MUL_COL_P_LEN];
    u64 c0[4], c1[4];
    u64 carry = 0;
    for (int k = 0; k < 4; k++) {
        const u64 sum = mul_conv(al, sa, bl, sb, 2 * k) + (mul_conv(al, sa, bl, sb, 2 * k + 1) << 16) + carry;
        const u64 low = sum & 0xffffffffull;
        carry = sum >> 32;
        p[2 * k] = low & 0xffff;
        p[2 * k + 1] = low >> 16;
        c0[k] = carry & 0xffff;
        c1[k] = carry >> 16;
    }
    // Real rows' lookups, in the host fill's order; padding rows take part in the warp-wide calls with none.
    u32 keys[22];
    int n = 0;
    for (int i = 0; i < 3; i++) keys[n++] = lookup_key(LK_U16, al[i]);
    keys[n++] = lookup_key(LK_MSB16, al[3]);
    for (int i = 0; i < 3; i++) keys[n++] = lookup_key(LK_U16, bl[i]);
    keys[n++] = lookup_key(LK_MSB16, bl[3]);
    for (int i = 0; i < MUL_COL_P_LEN; i++) keys[n++] = lookup_key(LK_U16, p[i]);
    for (int k = 0; k < 4; k++) keys[n++] = lookup_key(LK_U16, c0[k]);
    keys[n++] = lookup_key(LK_PAIR, (c1[0] << 8) | c1[1]);
    keys[n++] = lookup_key(LK_PAIR, (c1[2] << 8) | c1[3]);
    for (int k = 0; k < 22; k++) lookup_key_warp(counts, real ? keys[k] : LOOKUP_NONE, lanes);
    if (row == len) {
        const u32 pad = (u32)(rows - len);
        lookup_add_n(counts, LK_U16, 0, 18u * pad);
        lookup_add_n(counts, LK_MSB16, 0, 2u * pad);
        lookup_add_n(counts, LK_PAIR, 0, 2u * pad);
    }
    u64* o = trace + row * MUL_WIDTH;
    for (int i = 0; i < MUL_COL_A_LEN; i++) o[MUL_COL_A + i] = al[i];
    for (int i = 0; i < MUL_COL_B_LEN; i++) o[MUL_COL_B + i] = bl[i];
    o[MUL_COL_SA_EN] = sa_en;
    o[MUL_COL_SB_EN] = sb_en;
    o[MUL_COL_SA_RAW] = sa_raw;
    o[MUL_COL_SB_RAW] = sb_raw;
    o[MUL_COL_SA] = sa;
    o[MUL_COL_SB] = sb;
    for (int i = 0; i < MUL_COL_P_LEN; i++) o[MUL_COL_P + i] = p[i];
    const int c_col[4] = {MUL_COL_C_0, MUL_COL_C_1, MUL_COL_C_2, MUL_COL_C_3};
    for (int k = 0; k < 4; k++) {
        o[c_col[k]] = c0[k];
        o[c_col[k] + 1] = c1[k];
    }
    o[MUL_COL_M_LO] = gl_canon(m_lo);
    o[MUL_COL_M_HI] = gl_canon(m_hi);
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `req`: len MulRequest; `trace`: rows x 32
// u64; `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void mul_fill(const MulRequest* req, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    mul_fill_row(row, req, len, rows, trace, counts, lanes);
}
#endif
