// Fill kernel of the KECCAKF table (mirrors crates/machine/src/tables/keccakf.rs `keccakf_trace` and
// `keccak_round`): see common.cuh for the conventions.
//
// Input: the record's keccak_f events (`KeccakEvent`, in call order = group order), the memory walk's previous
// timestamps of their cells (25 u32 per call, memwalk.cu `memwalk_calls`), and the permutation's constants
// (`zkrv_machine::tables::keccakf::constants_u64`: RC[24], R[x][y] at 24 + 5x + y, the 7 iota bit positions).
// Output: `rows x 2402` row-major (KeccakfCols order), one thread per row. Row `row` is round r = row % 24 of
// group g = row / 24: call g (is_real = 1) when g < n_calls, else a padding group permuting the zero state
// (is_real, ts, cell, old_ts, d0 zero; the last group may be cut at the table's end). The thread computes the
// state entering round r (rounds 0..r-1 from the group's input), then the round's C, C', A' bits, chi's iota
// bits and the output words. Lookups (real rows only): LT32 of old_ts[r] < ts on every row and of
// old_ts[24] < ts on row 0 (two RANGE16 each).
#include "table_common.cuh"

// KeccakfCols offsets (KECCAKF_COL_*) and KeccakEvent: layout.cuh (generated).

#define KF_ROUNDS 24
#define KF_LANES 25
// Offsets in the constants.
#define KF_R 24
#define KF_IOTA (KF_R + KF_LANES)

ZKRV_HD u64 kf_rotl(u64 x, u32 n) { return n ? (x << n) | (x >> (64 - n)) : x; }

// One round on `a` (lane x + 5y): writes C, C' (= C xor D), A', chi (before iota) and the output into the given
// arrays (any may alias nothing; `out` may be `a`).
ZKRV_HD void kf_round(const u64* a, u32 r, const u64* consts, u64* c, u64* cp, u64* ap, u64* chi0, u64* out) {
    u64 d[5], b[KF_LANES];
    for (int x = 0; x < 5; x++) c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
    for (int x = 0; x < 5; x++) d[x] = c[(x + 4) % 5] ^ kf_rotl(c[(x + 1) % 5], 1);
    for (int x = 0; x < 5; x++) cp[x] = c[x] ^ d[x];
    for (int i = 0; i < KF_LANES; i++) ap[i] = a[i] ^ d[i % 5];
    for (int i = 0; i < KF_LANES; i++) {
        const int x = i % 5, y = i / 5, sx = (x + 3 * y) % 5, sy = x;
        b[i] = kf_rotl(ap[sx + 5 * sy], (u32)consts[KF_R + 5 * sx + sy]);
    }
    for (int i = 0; i < KF_LANES; i++) {
        const int x = i % 5, y = i / 5;
        out[i] = b[i] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
    }
    *chi0 = out[0];
    out[0] ^= consts[r];
}

ZKRV_HD u64 kf_lt32(u32* counts, u64 old_ts, u64 ts) {
    const u64 d = ts - old_ts - 1;
    lookup_add(counts, LK_U16, d & 0xffff);
    lookup_add(counts, LK_U16, d >> 16);
    return d & 0xffff;
}

// Writes row `row` (< rows) of the KECCAKF trace.
ZKRV_HD void keccakf_fill_row(u64 row, const KeccakEvent* calls, u64 n_calls, const u32* old_ts, const u64* consts,
                              u64 rows, u64* trace, u32* counts) {
    (void)rows;
    u64* o = trace + row * KECCAKF_WIDTH;
    const u64 g = row / KF_ROUNDS;
    const u32 r = (u32)(row % KF_ROUNDS);
    const bool real = g < n_calls;
    u64 a[KF_LANES], c[5], cp[5], ap[KF_LANES], out[KF_LANES], chi0;
    for (int i = 0; i < KF_LANES; i++) a[i] = real ? calls[g].input[i] : 0;
    for (u32 q = 0; q < r; q++) {
        kf_round(a, q, consts, c, cp, ap, &chi0, out);
        for (int i = 0; i < KF_LANES; i++) a[i] = out[i];
    }
    kf_round(a, r, consts, c, cp, ap, &chi0, out);
    const u64 ts = real ? 4 * calls[g].cycle + 1 : 0;
    for (u32 q = 0; q < KF_ROUNDS; q++) o[KECCAKF_COL_ROUND + q] = q == r;
    o[KECCAKF_COL_IS_REAL] = real;
    o[KECCAKF_COL_TS] = ts;
    o[KECCAKF_COL_CELL] = real ? calls[g].state_ptr / 8 : 0;
    for (int l = 0; l < KF_LANES; l++) o[KECCAKF_COL_OLD_TS + l] = real ? old_ts[g * KF_LANES + l] : 0;
    const u64 lane_ts = real ? old_ts[g * KF_LANES + r] : 0;
    o[KECCAKF_COL_LANE_OLD_TS] = lane_ts;
    o[KECCAKF_COL_D0] = real ? kf_lt32(counts, lane_ts, ts) : 0;
    o[KECCAKF_COL_D0_24] = real && r == 0 ? kf_lt32(counts, old_ts[g * KF_LANES + KF_LANES - 1], ts) : 0;
    for (int l = 0; l < KF_LANES; l++) {
        o[KECCAKF_COL_A + 2 * l] = a[l] & 0xffffffffull;
        o[KECCAKF_COL_A + 2 * l + 1] = a[l] >> 32;
        o[KECCAKF_COL_OUT + 2 * l] = out[l] & 0xffffffffull;
        o[KECCAKF_COL_OUT + 2 * l + 1] = out[l] >> 32;
        for (int z = 0; z < 64; z++) o[KECCAKF_COL_A_PRIME + 64 * l + z] = (ap[l] >> z) & 1;
    }
    for (int x = 0; x < 5; x++)
        for (int z = 0; z < 64; z++) {
            o[KECCAKF_COL_C + 64 * x + z] = (c[x] >> z) & 1;
            o[KECCAKF_COL_C_PRIME + 64 * x + z] = (cp[x] >> z) & 1;
        }
    for (int j = 0; j < 7; j++) o[KECCAKF_COL_IOTA_BITS + j] = (chi0 >> consts[KF_IOTA + j]) & 1;
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `calls`: n_calls events; `old_ts`:
// n_calls x 25 u32; `consts`: the permutation's constants; `trace`: rows x 2402 u64; `counts`: the lookup
// histogram.
extern "C" __global__ void keccakf_fill(const KeccakEvent* calls, u64 n_calls, const u32* old_ts, const u64* consts,
                                        u64 rows, u64* trace, u32* counts) {
    const u64 row = global_row();
    if (row >= rows) return;
    keccakf_fill_row(row, calls, n_calls, old_ts, consts, rows, trace, counts);
}
#endif
