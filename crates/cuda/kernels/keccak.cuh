// Keccak-f[1600] (shared by merkle.cu and zk.cu), mirroring crates/stark/src/keccak.rs.
#pragma once
#include "field.cuh"

__constant__ u64 KECCAK_RC[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

__device__ __forceinline__ u64 rotl64(u64 x, u32 r) { return (x << r) | (x >> (64 - r)); }

// Keccak-f[1600] on 25 lanes, st[x + 5 y].
__device__ __forceinline__ void keccak_f1600(u64 st[25]) {
#pragma unroll 1
    for (int round = 0; round < 24; round++) {
        u64 bc0 = st[0] ^ st[5] ^ st[10] ^ st[15] ^ st[20];
        u64 bc1 = st[1] ^ st[6] ^ st[11] ^ st[16] ^ st[21];
        u64 bc2 = st[2] ^ st[7] ^ st[12] ^ st[17] ^ st[22];
        u64 bc3 = st[3] ^ st[8] ^ st[13] ^ st[18] ^ st[23];
        u64 bc4 = st[4] ^ st[9] ^ st[14] ^ st[19] ^ st[24];
        u64 d0 = bc4 ^ rotl64(bc1, 1);
        u64 d1 = bc0 ^ rotl64(bc2, 1);
        u64 d2 = bc1 ^ rotl64(bc3, 1);
        u64 d3 = bc2 ^ rotl64(bc4, 1);
        u64 d4 = bc3 ^ rotl64(bc0, 1);
        // theta + rho + pi: b[y, 2x + 3y] = rot(a[x, y] ^ d[x], r[x, y])
        u64 b0 = st[0] ^ d0;
        u64 b10 = rotl64(st[1] ^ d1, 1);
        u64 b20 = rotl64(st[2] ^ d2, 62);
        u64 b5 = rotl64(st[3] ^ d3, 28);
        u64 b15 = rotl64(st[4] ^ d4, 27);
        u64 b16 = rotl64(st[5] ^ d0, 36);
        u64 b1 = rotl64(st[6] ^ d1, 44);
        u64 b11 = rotl64(st[7] ^ d2, 6);
        u64 b21 = rotl64(st[8] ^ d3, 55);
        u64 b6 = rotl64(st[9] ^ d4, 20);
        u64 b7 = rotl64(st[10] ^ d0, 3);
        u64 b17 = rotl64(st[11] ^ d1, 10);
        u64 b2 = rotl64(st[12] ^ d2, 43);
        u64 b12 = rotl64(st[13] ^ d3, 25);
        u64 b22 = rotl64(st[14] ^ d4, 39);
        u64 b23 = rotl64(st[15] ^ d0, 41);
        u64 b8 = rotl64(st[16] ^ d1, 45);
        u64 b18 = rotl64(st[17] ^ d2, 15);
        u64 b3 = rotl64(st[18] ^ d3, 21);
        u64 b13 = rotl64(st[19] ^ d4, 8);
        u64 b14 = rotl64(st[20] ^ d0, 18);
        u64 b24 = rotl64(st[21] ^ d1, 2);
        u64 b9 = rotl64(st[22] ^ d2, 61);
        u64 b19 = rotl64(st[23] ^ d3, 56);
        u64 b4 = rotl64(st[24] ^ d4, 14);
        // chi + iota
        st[0] = b0 ^ (~b1 & b2) ^ KECCAK_RC[round];
        st[1] = b1 ^ (~b2 & b3);
        st[2] = b2 ^ (~b3 & b4);
        st[3] = b3 ^ (~b4 & b0);
        st[4] = b4 ^ (~b0 & b1);
        st[5] = b5 ^ (~b6 & b7);
        st[6] = b6 ^ (~b7 & b8);
        st[7] = b7 ^ (~b8 & b9);
        st[8] = b8 ^ (~b9 & b5);
        st[9] = b9 ^ (~b5 & b6);
        st[10] = b10 ^ (~b11 & b12);
        st[11] = b11 ^ (~b12 & b13);
        st[12] = b12 ^ (~b13 & b14);
        st[13] = b13 ^ (~b14 & b10);
        st[14] = b14 ^ (~b10 & b11);
        st[15] = b15 ^ (~b16 & b17);
        st[16] = b16 ^ (~b17 & b18);
        st[17] = b17 ^ (~b18 & b19);
        st[18] = b18 ^ (~b19 & b15);
        st[19] = b19 ^ (~b15 & b16);
        st[20] = b20 ^ (~b21 & b22);
        st[21] = b21 ^ (~b22 & b23);
        st[22] = b22 ^ (~b23 & b24);
        st[23] = b23 ^ (~b24 & b20);
        st[24] = b24 ^ (~b20 & b21);
    }
}

#define KECCAK_RATE_LANES 17
