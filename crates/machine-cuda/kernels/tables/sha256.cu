// Fill kernel of the SHA256 table (mirrors crates/machine/src/tables/sha256.rs `sha256_trace` and `group_words`):
// see common.cuh for the conventions.
//
// Input: the record's sha256_compress events (`Sha256Event`, in call order = group order), the memory walk's
// previous timestamps of their cells (12 u32 per call: the 4 state cells, then the 8 block cells, memwalk.cu
// `memwalk_calls`), every call's a1 read's previous timestamp (u32 per call, from the host's register walk),
// and the constants (`zkrv_machine::tables::sha256::constants_u64`: ROW_CODE[18][5], K[64]). Output:
// `rows x 440` row-major (Sha256Cols order), one thread per row. Row r is row i = r % 18 of group r / 18: call
// g (is_real = 1) when g < n_calls, else a padding group compressing the zero state with the zero block (the
// last group may be cut at the table's end). A row's relations read the four rows before it, cyclically (row
// 0's previous row is row rows - 1): the thread recomputes the words of its own group and of the groups those
// rows lie in (at most two more: the table's cut last group may be shorter than 4 rows), `sha_group`: the 64
// rounds of FIPS 180-4 §6.2.2. Lookups (real rows only): LT32 of
// the memory slots (rows 1..4, 16, 17) and of the a1 read (row 0), PAIR of the round carries (rows 1..16) and of
// the schedule carries (rows 5..16).
#include "table_common.cuh"

// Sha256Cols offsets (SHA256_COL_*) and Sha256Event: layout.cuh (generated).

#define SH_ROWS 18u
#define SH_K 90  // offset of K in the constants
// 2^-32 in Goldilocks.
#define SH_INV_2_32 0xfffffffe00000002ull

ZKRV_HD u32 sh_rotr(u32 x, u32 n) { return (x >> n) | (x << (32 - n)); }
ZKRV_HD u32 sh_ssig(u32 x, u32 r1, u32 r2, u32 s) { return sh_rotr(x, r1) ^ sh_rotr(x, r2) ^ (x >> s); }
ZKRV_HD u32 sh_bsig(u32 x, u32 r1, u32 r2, u32 r3) { return sh_rotr(x, r1) ^ sh_rotr(x, r2) ^ sh_rotr(x, r3); }

// One group's slot words row by row (sha256.rs `GroupWords`) and its output state.
struct ShaGroup {
    u32 a[SH_ROWS][4], e[SH_ROWS][4], w[SH_ROWS][4];
    u32 out[8];
};

// The words of group `gi`: call gi's state and block, or the zero state and block for a padding group.
ZKRV_HD void sha_group(const Sha256Event* calls, u64 n_calls, u64 gi, const u64* consts, ShaGroup* g) {
    u32 h[8], w[64];
    const bool real = gi < n_calls;
    for (int k = 0; k < 8; k++) h[k] = real ? calls[gi].state_in[k] : 0;
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
        av[3 - m] = h[m];
        ev[3 - m] = h[4 + m];
    }
    for (int t = 0; t < 64; t++) {
        const u32 a = av[t + 3], bb = av[t + 2], cc = av[t + 1], d = av[t];
        const u32 e = ev[t + 3], f = ev[t + 2], gg = ev[t + 1], hh = ev[t];
        const u32 t1 = hh + sh_bsig(e, 6, 11, 25) + ((e & f) ^ (~e & gg)) + (u32)consts[SH_K + t] + w[t];
        const u32 t2 = sh_bsig(a, 2, 13, 22) + ((a & bb) ^ (a & cc) ^ (bb & cc));
        ev[t + 4] = d + t1;
        av[t + 4] = t1 + t2;
    }
    for (int i = 0; i < 17; i++)
        for (int j = 0; j < 4; j++) {
            g->a[i][j] = av[4 * i + j];
            g->e[i][j] = ev[4 * i + j];
            g->w[i][j] = i >= 1 ? w[4 * (i - 1) + j] : 0;
        }
    for (int j = 0; j < 4; j++) {
        g->out[3 - j] = h[3 - j] + av[64 + j];
        g->out[7 - j] = h[7 - j] + ev[64 + j];
    }
    for (int j = 0; j < 4; j++) {
        g->a[17][j] = g->out[3 - j];
        g->e[17][j] = g->out[7 - j];
        g->w[17][j] = 0;
    }
}

// The groups a row reads: its own and those of the four rows before it, cyclically (at most 3).
struct ShaRows {
    ShaGroup g[3];
    u64 idx[3];
    u32 n;
};

ZKRV_HD const ShaGroup* sh_of(const ShaRows& s, u64 x) {
    const u64 gi = x / SH_ROWS;
    for (u32 k = 1; k < s.n; k++)
        if (s.idx[k] == gi) return &s.g[k];
    return &s.g[0];
}
ZKRV_HD u32 sh_ww(const ShaRows& s, u64 x, int j) { return sh_of(s, x)->w[x % SH_ROWS][j]; }

// s4 of row x (sha256.rs `s4`): reads rows prev(x) and x.
ZKRV_HD u64 sh_s4(const ShaRows& s, u64 x, u64 rows, int j) {
    const u64 p = (x + rows - 1) % rows;
    const u32 w1 = j < 3 ? sh_ww(s, p, j + 1) : sh_ww(s, x, 0);
    return (u64)sh_ww(s, p, j) + sh_ssig(w1, 7, 18, 3);
}

// s8 of row x: s4 of the row before plus (j < 3) slot j + 1 of row x.
ZKRV_HD u64 sh_s8(const ShaRows& s, u64 x, u64 rows, int j) {
    const u64 p = (x + rows - 1) % rows;
    return sh_s4(s, p, rows, j) + (j < 3 ? (u64)sh_ww(s, x, j + 1) : 0);
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
    const u64 gc = row / SH_ROWS;
    const u32 i = (u32)(row % SH_ROWS);
    const bool real = gc < n_calls;
    // The groups of rows row - 4 .. row, cyclically: this one first.
    ShaRows sr;
    sr.idx[0] = gc;
    sr.n = 1;
    sha_group(calls, n_calls, gc, consts, &sr.g[0]);
    for (u64 k = 1; k <= 4; k++) {
        const u64 gi = ((row + rows - k) % rows) / SH_ROWS;
        bool seen = false;
        for (u32 q = 0; q < sr.n; q++) seen |= sr.idx[q] == gi;
        if (!seen && sr.n < 3) {
            sr.idx[sr.n] = gi;
            sha_group(calls, n_calls, gi, consts, &sr.g[sr.n]);
            sr.n++;
        }
    }
    const ShaGroup& cur = sr.g[0];
    const Sha256Event* ev = real ? &calls[gc] : (const Sha256Event*)0;
    const u64 ts = real ? 4 * ev->cycle + 1 : 0;
    for (int v = 0; v < 5; v++) o[SHA256_COL_CODE + v] = consts[5 * i + v];
    o[SHA256_COL_F_INIT] = i == 0;
    o[SHA256_COL_F_DIGEST] = i == 17;
    o[SHA256_COL_F_BLOCK] = i >= 1 && i <= 4;
    o[SHA256_COL_F_MEM] = (i >= 1 && i <= 4) || i == 16 || i == 17;
    o[SHA256_COL_IS_REAL] = real;
    o[SHA256_COL_TS] = ts;
    for (int k = 0; k < 8; k++) o[SHA256_COL_H + k] = real ? ev->state_in[k] : 0;
    for (int j = 0; j < 4; j++)
        for (int b = 0; b < 32; b++) {
            o[SHA256_COL_A + 32 * j + b] = (cur.a[i][j] >> b) & 1;
            o[SHA256_COL_E + 32 * j + b] = (cur.e[i][j] >> b) & 1;
            o[SHA256_COL_W + 32 * j + b] = (cur.w[i][j] >> b) & 1;
        }
    // The memory slots (rows 1..4: block cells; 16, 17: state cells; row 0: the block cell, no slot).
    const u64 block_cell = real ? ev->block_ptr / 8 : 0, state_cell = real ? ev->state_ptr / 8 : 0;
    u64 cell = 0, old[2][2] = {{0, 0}, {0, 0}}, nw[2][2] = {{0, 0}, {0, 0}}, ots[2] = {0, 0}, d0[2] = {0, 0};
    if (i == 0) {
        cell = block_cell;
        if (real) {
            ots[0] = a1_old_ts[gc];
            d0[0] = sh_lt32(counts, ots[0], ts);
        }
    } else if (i <= 4 || i >= 16) {
        const bool blk = i <= 4;
        const u32 c0 = blk ? 2 * (i - 1) : (i == 16 ? 0 : 2);
        cell = (blk ? block_cell : state_cell) + c0;
        for (u32 sl = 0; sl < 2; sl++) {
            for (u32 h = 0; h < 2; h++) {
                u32 x;
                if (blk) {
                    x = 0;
                    if (real)
                        for (int b = 3; b >= 0; b--) x = (x << 8) | ev->block[8 * (c0 + sl) + 4 * h + b];
                    nw[sl][h] = x;
                } else {
                    x = real ? ev->state_in[2 * (c0 + sl) + h] : 0;
                    nw[sl][h] = cur.out[2 * (c0 + sl) + h];
                }
                old[sl][h] = x;
            }
            if (real) {
                ots[sl] = old_ts[gc * 12 + (blk ? 4 + c0 + sl : c0 + sl)];
                d0[sl] = sh_lt32(counts, ots[sl], ts);
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
    // The relations with the previous rows: helpers, then the carries.
    const u64 p = (row + rows - 1) % rows, pp = (p + rows - 1) % rows;
    for (int j = 0; j < 4; j++) {
        o[SHA256_COL_S4 + j] = sh_s4(sr, row, rows, j);
        o[SHA256_COL_S8 + j] = sh_s8(sr, row, rows, j);
        o[SHA256_COL_S12 + j] = sh_s8(sr, p, rows, j);
    }
    const ShaGroup* gpp = sh_of(sr, p);
    const u32 ip = (u32)(p % SH_ROWS);
    const bool round_row = i >= 1 && i <= 16;
    u64 sum_ca[4], sum_ce[4], sum_w[4];
    for (int j = 0; j < 4; j++) {
        u32 av[4], evv[4];
        for (int m = 0; m < 4; m++) {
            av[m] = j > m ? cur.a[i][j - 1 - m] : gpp->a[ip][j + 3 - m];
            evv[m] = j > m ? cur.e[i][j - 1 - m] : gpp->e[ip][j + 3 - m];
        }
        const u32 a = av[0], bb = av[1], cc = av[2], d = av[3];
        const u32 e = evv[0], ff = evv[1], g = evv[2], hh = evv[3];
        const u64 kt = round_row ? consts[SH_K + 4 * (i - 1) + j] : 0;
        const u64 t1 = (u64)hh + sh_bsig(e, 6, 11, 25) + ((e & ff) ^ (~e & g)) + kt + cur.w[i][j];
        const u64 t2 = (u64)sh_bsig(a, 2, 13, 22) + ((a & bb) ^ (a & cc) ^ (bb & cc));
        sum_ce[j] = d + t1;
        sum_ca[j] = t1 + t2;
        o[SHA256_COL_CE + j] = gl_mul(gl_sub(sum_ce[j], cur.e[i][j]), SH_INV_2_32);
        o[SHA256_COL_CA + j] = gl_mul(gl_sub(sum_ca[j], cur.a[i][j]), SH_INV_2_32);
        const u32 wt2 = j >= 2 ? cur.w[i][j - 2] : gpp->w[ip][j + 2];
        const u64 wt7 = j == 3 ? gpp->w[ip][0] : 0;
        sum_w[j] = (u64)sh_ssig(wt2, 17, 19, 10) + wt7 + sh_s8(sr, pp, rows, j);
        o[SHA256_COL_CW + j] = gl_mul(gl_sub(sum_w[j], cur.w[i][j]), SH_INV_2_32);
    }
    if (real && round_row)
        for (int j = 0; j < 4; j++) lookup_add(counts, LK_PAIR, ((sum_ca[j] >> 32) << 8) | (sum_ce[j] >> 32));
    if (real && i >= 5 && i <= 16)
        for (int j = 0; j < 4; j += 2) lookup_add(counts, LK_PAIR, ((sum_w[j] >> 32) << 8) | (sum_w[j + 1] >> 32));
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `calls`: n_calls events; `old_ts`:
// n_calls x 12 u32; `a1_old_ts`: n_calls u32; `consts`: the constants; `trace`: rows x 440 u64; `counts`: the
// lookup histogram.
extern "C" __global__ void sha256_fill(const Sha256Event* calls, u64 n_calls, const u32* old_ts, const u32* a1_old_ts,
                                       const u64* consts, u64 rows, u64* trace, u32* counts) {
    const u64 row = global_row();
    if (row >= rows) return;
    sha256_fill_row(row, calls, n_calls, old_ts, a1_old_ts, consts, rows, trace, counts);
}
#endif
