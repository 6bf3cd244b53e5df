// Zero-knowledge randomness on the device, mirroring crates/stark/src/zk.rs bit for bit.
//
// PRF stream (domain, round, index, row) of the 256-bit seed s0..s3: absorb the 7 words
// [s0, s1, s2, s3, domain | round << 32, index, row] into one Keccak block (pad 0x01 in word 7, 0x80 << 56 in
// word 16, original Keccak padding), permute; element k of the stream is read from the state after
// k / 8 + 1 permutations, words 2 (k % 8) (lo) and 2 (k % 8) + 1 (hi): (lo + hi 2^64) mod p = gl_reduce128.
#include "field.cuh"
#include "keccak.cuh"

#define ZK_DOMAIN_TRACE 1u
#define ZK_DOMAIN_SALT 2u
#define ZK_PER_BLOCK 8u

struct ZkSeed {
    u64 s0, s1, s2, s3;
};

__device__ __forceinline__ void zk_absorb(u64 st[25], ZkSeed s, u32 domain, u32 round, u64 index, u64 row) {
#pragma unroll
    for (int q = 0; q < 25; q++) st[q] = 0;
    st[0] = s.s0;
    st[1] = s.s1;
    st[2] = s.s2;
    st[3] = s.s3;
    st[4] = (u64)domain | ((u64)round << 32);
    st[5] = index;
    st[6] = row;
    st[7] ^= 0x01ULL;
    st[16] ^= 0x8000000000000000ULL;
}

// Writes the first `len` elements of the stream to out[0], out[stride], ... (canonical u64).
__device__ __forceinline__ void zk_fill(ZkSeed s, u32 domain, u32 round, u64 index, u64 row, u64* out, u32 len) {
    u64 st[25];
    zk_absorb(st, s, domain, round, index, row);
    for (u32 k0 = 0; k0 < len; k0 += ZK_PER_BLOCK) {
        keccak_f1600(st);
#pragma unroll
        for (u32 k = 0; k < ZK_PER_BLOCK; k++)
            if (k0 + k < len) out[k0 + k] = gl_reduce128(st[2 * k], st[2 * k + 1]);
    }
}

// Rows [row0, row0 + height) of the salt matrix of one Merkle level (zk::salt_matrix): out is height x
// salt_width, out row r = stream (DOMAIN_SALT, round, log_height, row0 + r).
extern "C" __global__ void zk_salt_kernel(u64 s0, u64 s1, u64 s2, u64 s3, u32 round, u32 log_height, u64 height,
                                          u32 salt_width, u64* out, u64 row0) {
    u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (r >= height) return;
    ZkSeed s{s0, s1, s2, s3};
    zk_fill(s, ZK_DOMAIN_SALT, round, (u64)log_height, row0 + r, out + r * salt_width, salt_width);
}

// Stream matrix (ZkRng::matrix): out is height x width, row r = stream (domain, round, index, r). The quotient
// masks (DOMAIN_QUOTIENT) and the random FRI codeword (DOMAIN_CODEWORD) of zk mode.
extern "C" __global__ void zk_matrix_kernel(u64 s0, u64 s1, u64 s2, u64 s3, u32 domain, u32 round, u64 index,
                                            u64 height, u32 width, u64* out) {
    u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (r >= height) return;
    ZkSeed s{s0, s1, s2, s3};
    zk_fill(s, domain, round, index, r, out + r * width, width);
}

// Randomized trace (zk::randomize_trace): in is n x width (natural order, possibly non-canonical u64), out is
// 2n x width: row 2i = row i of in (canonicalised), row 2i + 1 = stream (DOMAIN_TRACE, round, table, i).
extern "C" __global__ void zk_randomize_trace_kernel(u64 s0, u64 s1, u64 s2, u64 s3, u32 round, u64 table,
                                                     const u64* __restrict__ in, u64 width, u64 n,
                                                     u64* __restrict__ out) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u64* src = in + i * width;
    u64* even = out + 2 * i * width;
    for (u64 c = 0; c < width; c++) even[c] = gl_canon(src[c]);
    ZkSeed s{s0, s1, s2, s3};
    zk_fill(s, ZK_DOMAIN_TRACE, round, table, i, even + width, (u32)width);
}
