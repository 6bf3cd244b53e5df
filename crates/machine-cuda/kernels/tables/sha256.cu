// Fill kernel of the SHA256 table (mirrors crates/machine/src/tables/sha256.rs `sha256_trace` and `group_words`):
// see common.cuh for the conventions.
//
// Input: the record's sha256_compress events (`Sha256Event`, in call order = group order), the memory walk's
// previous timestamps of their cells (12 u32 per call: the 4 state cells, then the 8 block cells, memwalk.cu
// `memwalk_calls`), every call's a1 read's previous timestamp (u32 per call, from the host's register walk),
// and the constants (`zkrv_machine::tables::sha256::constants_u64`: ROW_CODE[17][5], K[64]). Output:
// `rows x 441` row-major (Sha256Cols order), one thread per row. Row r is row i = r % 17 of group g = r / 17:
// rows 1..16 are call g's rounds, row 0 is the boundary row of call g - 1 (its digest, and the init of call
// g; the table's row 0 is a padding boundary row); a group past the calls is padding (the zero state and
// block; the last one may be cut at the table's end). A row's relations read the four rows before it and
// row 15 the row after it, cyclically (row 0's previous row is row rows - 1); a boundary row's new words come
// from the row before it (row 16 of its call; for row 0, the table's last row). The thread recomputes the
// words of the groups those rows lie in (`sha_group`: the 64 rounds of FIPS 180-4 §6.2.2; at most 4 groups,
// cached). Lookups (real rows only): LT32 of the memory slots (rows 1..4, 16, 0), of the a1 read (row 5) and
// row 15's range checks of H0, H1; PAIR of the round carries (rows 1..16) and of the schedule carries (rows
// 5..16).
#include "table_common.cuh"

// Sha256Cols offsets (SHA256_COL_*) and Sha256Event: layout.cuh (generated).

#define SH_ROWS 17u
#define SH_K 85  // offset of K in the constants
#define SH_CACHE 4
// 2^-32 in Goldilocks.
#define SH_INV_2_32 0xfffffffe00000002ull

ZKRV_HD u32 sh_rotr(u32 x, u32 n) { return (x >> n) | (x << (32 - n)); }
ZKRV_HD u32 sh_ssig(u32 x, u32 r1, u32 r2, u32 s) { return sh_rotr(x, r1) ^ sh_rotr(x, r2) ^ (x >> s); }
ZKRV_HD u32 sh_bsig(u32 x, u32 r1, u32 r2, u32 r3) { return sh_rotr(x, r1) ^ sh_rotr(x, r2) ^ sh_rotr(x, r3); }

// One group's slot words row by row (sha256.rs `GroupWords`: row 0 the input state in slots 1..3), its
// input state (0 for padding) and its new state.
struct ShaGroup {
    u32 a[SH_ROWS][4], e[SH_ROWS][4], w[SH_ROWS][4];
    u32 h[8], out[8];
};

// The words of group `gi`: call gi's state and block, or the zero state and block for a padding group.
ZKRV_HD void sha_group(const Sha256Event* calls, u64 n_calls, u64 gi, const u64* consts, ShaGroup* g) {
    u32 w[64];
    const bool real = gi < n_calls;
    for (int k = 0; k < 8; k++) g->h[k] = real ? calls[gi].state_in[k] : 0;
    for (int t = 0; t < 16; t++) {
        u32 x = 0;
        if (real)
            for (int b = 0; b < 4; b++) x = (x << 8) | calls[gi].block[4 * t + b];
        w[t] = x;
    }
    for (int t = 16; t < 64; t++)
        w[t] = sh_ssig(w[t - 2], 17, 19, 10) + w[t - 7] + sh_ssig(w[t - 15], 7, 18, 3) + w[t - 16];
    u32 av[68], ev[68];
    for (int m = 0; m < 4; m++) {
        av[3 - m] = g->h[m];
        ev[3 - m] = g->h[4 + m];
    }
    for (int t = 0; t < 64; t++) {
        const u32 a = av[t + 3], bb = av[t + 2], cc = av[t + 1], d = av[t];
        const u32 e = ev[t + 3], f = ev[t + 2], gg = ev[t + 1], hh = ev[t];
        const u32 t1 = hh + sh_bsig(e, 6, 11, 25) + ((e & f) ^ (~e & gg)) + (u32)consts[SH_K + t] + w[t];
        const u32 t2 = sh_bsig(a, 2, 13, 22) + ((a & bb) ^ (a & cc) ^ (bb & cc));
        ev[t + 4] = d + t1;
        av[t + 4] = t1 + t2;
    }
    for (u32 i = 0; i < SH_ROWS; i++)
        for (int j = 0; j < 4; j++) {
            g->a[i][j] = av[4 * i + j];
            g->e[i][j] = ev[4 * i + j];
            g->w[i][j] = i >= 1 ? w[4 * (i - 1) + j] : 0;
        }
    for (int j = 0; j < 4; j++) {
        g->out[3 - j] = g->h[3 - j] + av[64 + j];
        g->out[7 - j] = g->h[7 - j] + ev[64 + j];
    }
}

// The groups a thread reads, computed on first use.
struct ShaCache {
    ShaGroup g[SH_CACHE];
    u64 idx[SH_CACHE];
    u32 n;
    const Sha256Event* calls;
    u64 n_calls;
    const u64* consts;
};

ZKRV_HD const ShaGroup* sh_get(ShaCache& c, u64 gi) {
    for (u32 k = 0; k < c.n; k++)
        if (c.idx[k] == gi) return &c.g[k];
    // At most 4 distinct groups per thread (see the header); reuse the last slot past that.
    const u32 k = c.n < SH_CACHE ? c.n++ : SH_CACHE - 1;
    c.idx[k] = gi;
    sha_group(c.calls, c.n_calls, gi, c.consts, &c.g[k]);
    return &c.g[k];
}

// One row's slot words and `h` (sha256.rs `aw`, `ew`, `ww`, `hw`).
struct ShaRow {
    u32 a[4], e[4], w[4], h[8];
};

// The new word m (H0..H7 order) from a row 16's `h` and slots (sha256.rs `new_word`).
ZKRV_HD u32 sh_new_word(const ShaRow& r, int m) { return r.h[m] + (m < 4 ? r.a[3 - m] : r.e[7 - m]); }

// Row x > 0 (a boundary row's new words from its call's group).
ZKRV_HD void sh_row_pos(ShaCache& c, u64 x, ShaRow* r) {
    const u64 g = x / SH_ROWS;
    const u32 i = (u32)(x % SH_ROWS);
    const ShaGroup* G = sh_get(c, g);
    for (int j = 0; j < 4; j++) {
        r->a[j] = G->a[i][j];
        r->e[j] = G->e[i][j];
        r->w[j] = G->w[i][j];
    }
    if (i >= 1) {
        for (int k = 0; k < 8; k++) r->h[k] = G->h[k];
    } else {
        const ShaGroup* P = sh_get(c, g - 1);
        for (int k = 0; k < 8; k++) r->h[k] = P->h[k];
        r->a[0] = P->out[2];
        r->e[0] = P->out[3];
        for (int k = 0; k < 4; k++) r->w[k] = P->out[4 + k];
    }
}

// Any row: row 0 (the table's padding boundary row) takes its new words from the table's last row.
ZKRV_HD void sh_row(ShaCache& c, u64 x, u64 rows, ShaRow* r) {
    if (x > 0) {
        sh_row_pos(c, x, r);
        return;
    }
    ShaRow last;
    sh_row_pos(c, rows - 1, &last);
    const ShaGroup* G = sh_get(c, 0);
    for (int j = 0; j < 4; j++) {
        r->a[j] = G->a[0][j];
        r->e[j] = G->e[0][j];
    }
    for (int k = 0; k < 8; k++) r->h[k] = 0;
    r->a[0] = sh_new_word(last, 2);
    r->e[0] = sh_new_word(last, 3);
    for (int k = 0; k < 4; k++) r->w[k] = sh_new_word(last, 4 + k);
}

ZKRV_HD u64 sh_lt32(u32* counts, u64 old_ts, u64 ts) {
    const u64 d = ts - old_ts - 1;
    lookup_add(counts, LK_U16, d & 0xffff);
    lookup_add(counts, LK_U16, d >> 16);
    return d & 0xffff;
}

// Writes row `row` (< rows) of the SHA256 trace.
ZKRV_HD void sha256_fill_row(u64 row, const Sha256Event* calls, u64 n_calls, const u32* old_ts, const u32* a1_old_ts,
                             const u64* consts, u64 rows, u64* trace, u32* counts) {
    u64* o = trace + row * SHA256_WIDTH;
    const u32 i = (u32)(row % SH_ROWS);
    // The call of this row: call g on rows 1..16 of group g, call g - 1 on its row 0.
    const u64 g = row / SH_ROWS;
    const bool has_owner = i >= 1 || g >= 1;
    const u64 gc = i >= 1 ? g : g - 1;
    const bool real = has_owner && gc < n_calls;
    ShaCache cache;
    cache.n = 0;
    cache.calls = calls;
    cache.n_calls = n_calls;
    cache.consts = consts;
    // Rows row - 4 .. row (R[4] is this row), cyclically.
    ShaRow R[5];
    for (int k = 0; k < 5; k++) sh_row(cache, (row + rows - (u64)(4 - k)) % rows, rows, &R[k]);
    const ShaRow& cur = R[4];
    const Sha256Event* ev = real ? &calls[gc] : (const Sha256Event*)0;
    const u64 ts = real ? 4 * ev->cycle + 1 : 0;
    for (int v = 0; v < 5; v++) o[SHA256_COL_CODE + v] = consts[5 * i + v];
    o[SHA256_COL_F_BOUND] = i == 0;
    o[SHA256_COL_F_BLOCK] = i >= 1 && i <= 4;
    o[SHA256_COL_F_MEM] = i <= 4 || i == 16;
    o[SHA256_COL_F_A1] = i == 5;
    o[SHA256_COL_F_R15] = i == 15;
    o[SHA256_COL_IS_REAL] = real;
    o[SHA256_COL_TS] = ts;
    for (int k = 0; k < 8; k++) o[SHA256_COL_H + k] = cur.h[k];
    for (int j = 0; j < 4; j++)
        for (int b = 0; b < 32; b++) {
            o[SHA256_COL_A + 32 * j + b] = (cur.a[j] >> b) & 1;
            o[SHA256_COL_E + 32 * j + b] = (cur.e[j] >> b) & 1;
            o[SHA256_COL_W + 32 * j + b] = (cur.w[j] >> b) & 1;
        }
    // The memory slots (rows 1..4: block cells; 16: state cells 0, 1; 0: state cells 2, 3), the a1 read (row
    // 5) and the range checks of H0, H1 (row 15).
    const u64 block_cell = real ? ev->block_ptr / 8 : 0, state_cell = real ? ev->state_ptr / 8 : 0;
    u64 cell = 0, old[2][2] = {{0, 0}, {0, 0}}, nw[2][2] = {{0, 0}, {0, 0}}, ots[2] = {0, 0}, d0[2] = {0, 0};
    if (i <= 4 || i == 16) {
        const bool blk = i >= 1 && i <= 4;
        const u32 c0 = blk ? 2 * (i - 1) : (i == 16 ? 0 : 2);
        cell = (blk ? block_cell : state_cell) + c0;
        for (u32 sl = 0; sl < 2; sl++) {
            for (u32 h = 0; h < 2; h++) {
                if (blk) {
                    u32 x = 0;
                    if (real)
                        for (int b = 3; b >= 0; b--) x = (x << 8) | ev->block[8 * (c0 + sl) + 4 * h + b];
                    old[sl][h] = x;
                    nw[sl][h] = x;
                } else if (i == 16) {
                    old[sl][h] = cur.h[2 * sl + h];
                    nw[sl][h] = sh_new_word(cur, (int)(2 * sl + h));
                } else {
                    old[sl][h] = cur.h[4 + 2 * sl + h];
                    nw[sl][h] = cur.w[2 * sl + h];
                }
            }
            if (real) {
                ots[sl] = old_ts[gc * 12 + (blk ? 4 + c0 + sl : c0 + sl)];
                d0[sl] = sh_lt32(counts, ots[sl], ts);
            }
        }
    } else if (i == 5) {
        cell = block_cell;
        if (real) {
            ots[0] = a1_old_ts[gc];
            d0[0] = sh_lt32(counts, ots[0], ts);
        }
    } else if (i == 15) {
        // H0, H1 of the next row (row 16; at the table's end, row 0) as `ts - ots[k] - 1`.
        ShaRow nx;
        sh_row(cache, (row + 1) % rows, rows, &nx);
        for (int k = 0; k < 2; k++) {
            const u64 u = sh_new_word(nx, k);
            ots[k] = gl_sub(gl_sub(ts, 1), u);
            d0[k] = u & 0xffff;
            if (real) {
                lookup_add(counts, LK_U16, u & 0xffff);
                lookup_add(counts, LK_U16, u >> 16);
            }
        }
    }
    o[SHA256_COL_CELL] = cell;
    for (int sl = 0; sl < 2; sl++) {
        o[SHA256_COL_OTS + sl] = ots[sl];
        o[SHA256_COL_D0 + sl] = d0[sl];
        for (int h = 0; h < 2; h++) {
            o[SHA256_COL_OLD + 2 * sl + h] = old[sl][h];
            o[SHA256_COL_NEW + 2 * sl + h] = nw[sl][h];
        }
    }
    // The relations with the previous rows (R[3] = p, R[2] = pp, ...): helpers, then the carries.
    // s4 of R[k] (k >= 1) reads R[k - 1] and R[k]; s8 of R[k] (k >= 2) is s4 of R[k - 1] plus slot j + 1.
    u64 s4[5][4], s8[5][4];
    for (int k = 1; k < 5; k++)
        for (int j = 0; j < 4; j++) {
            const u32 w1 = j < 3 ? R[k - 1].w[j + 1] : R[k].w[0];
            s4[k][j] = (u64)R[k - 1].w[j] + sh_ssig(w1, 7, 18, 3);
        }
    for (int k = 2; k < 5; k++)
        for (int j = 0; j < 4; j++) s8[k][j] = s4[k - 1][j] + (j < 3 ? (u64)R[k].w[j + 1] : 0);
    for (int j = 0; j < 4; j++) {
        o[SHA256_COL_S4 + j] = s4[4][j];
        o[SHA256_COL_S8 + j] = s8[4][j];
        o[SHA256_COL_S12 + j] = s8[3][j];
    }
    const ShaRow& pr = R[3];
    const u32 ip = (u32)(((row + rows - 1) % rows) % SH_ROWS);
    const bool round_row = i >= 1;
    u64 sum_ca[4], sum_ce[4], sum_w[4];
    for (int j = 0; j < 4; j++) {
        u32 av[4], evv[4];
        for (int m = 0; m < 4; m++) {
            av[m] = j > m ? cur.a[j - 1 - m] : pr.a[j + 3 - m];
            evv[m] = j > m ? cur.e[j - 1 - m] : pr.e[j + 3 - m];
        }
        const u32 a = av[0], bb = av[1], cc = av[2];
        const u32 e = evv[0], ff = evv[1], g2 = evv[2];
        // After a boundary row, round 0's d and h are this row's H3 and H7.
        const bool after_bound = ip == 0 && j == 0;
        const u32 d = after_bound ? cur.h[3] : av[3];
        const u32 hh = after_bound ? cur.h[7] : evv[3];
        const u64 kt = round_row ? consts[SH_K + 4 * (i - 1) + j] : 0;
        const u64 t1 = (u64)hh + sh_bsig(e, 6, 11, 25) + ((e & ff) ^ (~e & g2)) + kt + cur.w[j];
        const u64 t2 = (u64)sh_bsig(a, 2, 13, 22) + ((a & bb) ^ (a & cc) ^ (bb & cc));
        sum_ce[j] = d + t1;
        sum_ca[j] = t1 + t2;
        o[SHA256_COL_CE + j] = gl_mul(gl_sub(sum_ce[j], cur.e[j]), SH_INV_2_32);
        o[SHA256_COL_CA + j] = gl_mul(gl_sub(sum_ca[j], cur.a[j]), SH_INV_2_32);
        const u32 wt2 = j >= 2 ? cur.w[j - 2] : pr.w[j + 2];
        const u64 wt7 = j == 3 ? pr.w[0] : 0;
        sum_w[j] = (u64)sh_ssig(wt2, 17, 19, 10) + wt7 + s8[2][j];
        o[SHA256_COL_CW + j] = gl_mul(gl_sub(sum_w[j], cur.w[j]), SH_INV_2_32);
    }
    if (real && round_row)
        for (int j = 0; j < 4; j++) lookup_add(counts, LK_PAIR, ((sum_ca[j] >> 32) << 8) | (sum_ce[j] >> 32));
    if (real && i >= 5)
        for (int j = 0; j < 4; j += 2) lookup_add(counts, LK_PAIR, ((sum_w[j] >> 32) << 8) | (sum_w[j + 1] >> 32));
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `calls`: n_calls events; `old_ts`:
// n_calls x 12 u32; `a1_old_ts`: n_calls u32; `consts`: the constants; `trace`: rows x 441 u64; `counts`: the
// lookup histogram.
extern "C" __global__ void sha256_fill(const Sha256Event* calls, u64 n_calls, const u32* old_ts, const u32* a1_old_ts,
                                       const u64* consts, u64 rows, u64* trace, u32* counts) {
    const u64 row = global_row();
    if (row >= rows) return;
    sha256_fill_row(row, calls, n_calls, old_ts, a1_old_ts, consts, rows, trace, counts);
}
#endif
