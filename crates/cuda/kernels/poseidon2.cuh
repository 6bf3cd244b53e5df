// Poseidon2 over Goldilocks, width 8, mirroring crates/stark/src/poseidon2.rs (docs/stark.md §11): the permutation
// of Plonky3's default_goldilocks_poseidon2_8 (external layer M_E, 4 full rounds, 22 partial rounds, 4 full rounds,
// S-box x^7) and the Merkle leaf sponge and node compression built on it.
//
// The round constants are not written here: the launcher uploads them from zkrv_stark::poseidon2 (one definition)
// as P2_CONSTS u64, laid out as
//   [0, 64)   external round constants, full round r (0..8) element i at 8 r + i
//   [64, 86)  internal round constants, partial round r at 64 + r
//   [86, 94)  the internal diagonal d_i of M_I = 1 + diag(d)
// and each block copies them to shared memory first (p2_load_consts).
#pragma once
#include "field.cuh"

#define P2_WIDTH 8
#define P2_RATE 4
#define P2_CONSTS 94

// Plonky3's MDSMat4 on x[0..4]: [[2 3 1 1] [1 2 3 1] [1 1 2 3] [3 1 1 2]].
__device__ __forceinline__ void p2_mat4(u64* x) {
    u64 t01 = gl_add(x[0], x[1]);
    u64 t23 = gl_add(x[2], x[3]);
    u64 t0123 = gl_add(t01, t23);
    u64 t01123 = gl_add(t0123, x[1]);
    u64 t01233 = gl_add(t0123, x[3]);
    u64 y3 = gl_add(t01233, gl_add(x[0], x[0]));
    u64 y1 = gl_add(t01123, gl_add(x[2], x[2]));
    u64 y0 = gl_add(t01123, t01);
    u64 y2 = gl_add(t01233, t23);
    x[0] = y0;
    x[1] = y1;
    x[2] = y2;
    x[3] = y3;
}

// M_E: M4 on each half, then each element plus the sum of its residue class mod 4.
__device__ __forceinline__ void p2_external(u64 s[P2_WIDTH]) {
    p2_mat4(s);
    p2_mat4(s + 4);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        u64 sum = gl_add(s[k], s[k + 4]);
        s[k] = gl_add(s[k], sum);
        s[k + 4] = gl_add(s[k + 4], sum);
    }
}

// M_I: s_i = d_i s_i + sum(s).
__device__ __forceinline__ void p2_internal(u64 s[P2_WIDTH], const u64* c) {
    u64 sum = s[0];
#pragma unroll
    for (int i = 1; i < P2_WIDTH; i++) sum = gl_add(sum, s[i]);
#pragma unroll
    for (int i = 0; i < P2_WIDTH; i++) s[i] = gl_add(gl_mul(s[i], c[86 + i]), sum);
}

__device__ __forceinline__ u64 p2_sbox(u64 x) {
    u64 x2 = gl_mul(x, x);
    u64 x3 = gl_mul(x2, x);
    return gl_mul(x3, gl_mul(x2, x2));
}

__device__ __forceinline__ void p2_full_round(u64 s[P2_WIDTH], const u64* c, int r) {
#pragma unroll
    for (int i = 0; i < P2_WIDTH; i++) s[i] = p2_sbox(gl_add(s[i], c[8 * r + i]));
    p2_external(s);
}

// The permutation in place (canonical in, canonical out); `c` the P2_CONSTS constants.
__device__ __forceinline__ void p2_permute(u64 s[P2_WIDTH], const u64* c) {
    p2_external(s);
    for (int r = 0; r < 4; r++) p2_full_round(s, c, r);
    for (int r = 0; r < 22; r++) {
        s[0] = p2_sbox(gl_add(s[0], c[64 + r]));
        p2_internal(s, c);
    }
    for (int r = 4; r < 8; r++) p2_full_round(s, c, r);
}

// Node hash: out = P(l || r)[0..4] + l (digests of 4 canonical u64).
__device__ __forceinline__ void p2_compress(const u64* l, const u64* r, const u64* c, u64* out) {
    u64 s[P2_WIDTH];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        s[i] = l[i];
        s[4 + i] = r[i];
    }
    p2_permute(s, c);
#pragma unroll
    for (int i = 0; i < 4; i++) out[i] = gl_add(s[i], l[i]);
}

#ifndef ZKRV_HOST_EMU
// Copies the constants to `sh` (shared memory), all threads of the block taking part.
__device__ __forceinline__ void p2_load_consts(u64* sh, const u64* consts) {
    for (int i = threadIdx.x; i < P2_CONSTS; i += blockDim.x) sh[i] = consts[i];
    __syncthreads();
}
#endif
