// Fill kernel of the POSEIDON2 table (mirrors crates/machine/src/tables/poseidon2.rs `poseidon2_trace` and
// `fill_row`): see common.cuh for the conventions.
//
// Input: the record's poseidon2 events (`Poseidon2Event`, in call order = row order), the memory walk's previous
// timestamps of their cells (8 u32 per call, memwalk.cu `memwalk_calls`), and the permutation's constants
// (`zkrv_machine::tables::poseidon2::constants_u64`: 8 x 8 external round constants, 22 internal, M_I's diagonal).
// Output: `rows x 247` row-major (Poseidon2Cols order). Row k < n_calls is call k (mu = 1): the width-8
// Poseidon2 permutation of its input (M_E, 4 full rounds, 22 partial rounds, 4 full rounds; S-box x^7 with x^3
// committed), ts = 4 cycle + 1, cell = state_ptr / 8, the cells' old timestamps and their LT32 witnesses, the
// output as 16-bit halves and the canonicity witnesses. Rows n_calls..rows permute the zero state with mu = 0,
// ts, cell, old_ts and d0 zero. Lookups (real rows only): LT32 of every cell (two RANGE16 each) and RANGE16 of
// every output half. Errors: err[0] = smallest row whose event's output is not the permutation of its input
// or whose state pointer is not 8-aligned (the host fill's check), else untouched.
#include "table_common.cuh"

// Poseidon2Cols offsets (POSEIDON2_COL_*) and Poseidon2Event: layout.cuh (generated).

#define P2_W 8
#define P2_FULL 8
#define P2_PARTIAL 22
// Offsets in the constants.
#define P2_RC_INT (P2_FULL * P2_W)
#define P2_DIAG (P2_RC_INT + P2_PARTIAL)

ZKRV_HD void p2_mat4(u64* x) {
    const u64 t01 = gl_add(x[0], x[1]), t23 = gl_add(x[2], x[3]), t0123 = gl_add(t01, t23);
    const u64 t01123 = gl_add(t0123, x[1]), t01233 = gl_add(t0123, x[3]);
    const u64 y3 = gl_add(t01233, gl_add(x[0], x[0])), y1 = gl_add(t01123, gl_add(x[2], x[2]));
    const u64 y0 = gl_add(t01123, t01), y2 = gl_add(t01233, t23);
    x[0] = y0;
    x[1] = y1;
    x[2] = y2;
    x[3] = y3;
}

// M_E (poseidon2.rs `external_linear`).
ZKRV_HD void p2_external(u64* s) {
    p2_mat4(s);
    p2_mat4(s + 4);
    u64 sums[4];
    for (int k = 0; k < 4; k++) sums[k] = gl_add(s[k], s[k + 4]);
    for (int i = 0; i < P2_W; i++) s[i] = gl_add(s[i], sums[i % 4]);
}

// M_I = 1 + diag(d) (poseidon2.rs `internal_linear`).
ZKRV_HD void p2_internal(u64* s, const u64* diag) {
    u64 sum = s[0];
    for (int i = 1; i < P2_W; i++) sum = gl_add(sum, s[i]);
    for (int i = 0; i < P2_W; i++) s[i] = gl_add(gl_mul(s[i], diag[i]), sum);
}

// (hi - (2^32 - 1))^-1, or 0 when hi = 2^32 - 1 (poseidon2.rs `canon_inv`).
ZKRV_HD u64 p2_canon_inv(u64 v) {
    const u64 e = gl_sub(v >> 32, 0xffffffffull);
    return e ? gl_inv(e) : 0;
}

// Writes row `row` (< rows) of the POSEIDON2 trace. `n_calls <= rows`.
ZKRV_HD void poseidon2_fill_row(u64 row, const Poseidon2Event* calls, u64 n_calls, const u32* old_ts, const u64* consts,
                                u64 rows, u64* trace, u32* counts, u32* err) {
    (void)rows;
    u64* o = trace + row * POSEIDON2_WIDTH;
    const bool real = row < n_calls;
    u64 in[P2_W], ots[P2_W], ts = 0, cell = 0;
    for (int i = 0; i < P2_W; i++) {
        in[i] = real ? calls[row].input[i] : 0;
        ots[i] = real ? old_ts[row * P2_W + i] : 0;
    }
    if (real) {
        ts = 4 * calls[row].cycle + 1;
        cell = calls[row].state_ptr / 8;
    }
    o[POSEIDON2_COL_TS] = ts;
    o[POSEIDON2_COL_CELL] = cell;
    o[POSEIDON2_COL_MU] = real;
    u64 s[P2_W];
    for (int i = 0; i < P2_W; i++) {
        o[POSEIDON2_COL_INPUT + 2 * i] = in[i] & 0xffffffffull;
        o[POSEIDON2_COL_INPUT + 2 * i + 1] = in[i] >> 32;
        o[POSEIDON2_COL_IN_INV + i] = p2_canon_inv(in[i]);
        o[POSEIDON2_COL_OLD_TS + i] = ots[i];
        u64 d0 = 0;
        if (real) {
            const u64 d = ts - ots[i] - 1;
            lookup_add(counts, LK_U16, d & 0xffff);
            lookup_add(counts, LK_U16, d >> 16);
            d0 = d & 0xffff;
        }
        o[POSEIDON2_COL_D0 + i] = d0;
        s[i] = gl_canon(in[i]);
    }
    p2_external(s);
    for (int r = 0; r < P2_FULL + 1; r++) {
        // Full rounds 0..3, then (r == 4) the partial rounds, then full rounds 4..7 (r = 5..8).
        if (r == 4) {
            for (int q = 0; q < P2_PARTIAL; q++) {
                const u64 x = gl_add(s[0], consts[P2_RC_INT + q]);
                const u64 x3 = gl_mul(gl_sqr(x), x);
                o[POSEIDON2_COL_PARTIAL_SBOX + q] = x3;
                s[0] = gl_mul(gl_sqr(x3), x);
                o[POSEIDON2_COL_PARTIAL_POST + q] = s[0];
                p2_internal(s, consts + P2_DIAG);
            }
            continue;
        }
        const int f = r < 4 ? r : r - 1;
        for (int i = 0; i < P2_W; i++) {
            const u64 x = gl_add(s[i], consts[f * P2_W + i]);
            const u64 x3 = gl_mul(gl_sqr(x), x);
            o[POSEIDON2_COL_FULL_SBOX + f * P2_W + i] = x3;
            s[i] = gl_mul(gl_sqr(x3), x);
        }
        p2_external(s);
        if (f + 1 < P2_FULL)
            for (int i = 0; i < P2_W; i++) o[POSEIDON2_COL_FULL_POST + f * P2_W + i] = s[i];
    }
    bool bad = real && calls[row].state_ptr % 8 != 0;
    for (int i = 0; i < P2_W; i++) {
        for (int k = 0; k < 4; k++) {
            const u64 h = (s[i] >> (16 * k)) & 0xffff;
            o[POSEIDON2_COL_OUTPUT + 4 * i + k] = h;
            if (real) lookup_add(counts, LK_U16, h);
        }
        o[POSEIDON2_COL_OUT_INV + i] = p2_canon_inv(s[i]);
        if (real && s[i] != calls[row].output[i]) bad = true;
    }
    if (bad) {
#ifdef ZKRV_HOST_EMU
        if ((u32)row < err[0]) err[0] = (u32)row;
#else
        atomicMin(&err[0], (u32)row);
#endif
    }
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `calls`: n_calls events; `old_ts`:
// n_calls x 8 u32; `consts`: the permutation's constants; `trace`: rows x 247 u64; `counts`: the lookup
// histogram; `err`: one u32 (smallest bad row, initially 0xffffffff).
extern "C" __global__ void poseidon2_fill(const Poseidon2Event* calls, u64 n_calls, const u32* old_ts,
                                          const u64* consts, u64 rows, u64* trace, u32* counts, u32* err) {
    const u64 row = global_row();
    if (row >= rows) return;
    poseidon2_fill_row(row, calls, n_calls, old_ts, consts, rows, trace, counts, err);
}
#endif
