/* zkrv guest: calls each precompile (docs/abi.md "Precompiles") and checks it against a software version.
 *
 * Input: one mask byte (bit 0 keccak_f, bit 1 sha256_compress, bit 2 poseidon2; 0 means all), then any bytes
 * (the message). Output, for each selected precompile in that order: keccak: Keccak-256 of the message
 * (zkrv_keccak256) then the lanes of Keccak-f applied to a pseudo-random state (200 bytes); sha256: SHA-256
 * of the message (zkrv_sha256) then one compression of the IV with the message's first block (32 bytes);
 * poseidon2: the state after the permutation of (0, 1, ..., 7), then after 3 more (64 bytes each).
 * Exit code 0 if every precompile result equals the software one; else 10 + the first that differed
 * (1 keccak_f, 2 keccak256, 3 sha256_compress, 4 sha256, 5 poseidon2 known answer).
 * Not for qemu: the precompile ecalls are zkrv's own. */
#include "zkrv.h"

#include <string.h>

static uint8_t msg[1 << 16];

static uint64_t rotl(uint64_t x, int s) { return s ? (x << s) | (x >> (64 - s)) : x; }

/* Keccak-f[1600], FIPS 202 3.3 (the Keccak team's reference in compact form). */
static void sw_keccak_f(uint64_t a[25])
{
    static const uint64_t rc[24] = {
        0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
        0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
        0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
        0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
        0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
        0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};
    static const int rho[25] = {0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14};
    for (int r = 0; r < 24; r++) {
        uint64_t c[5], d[5], b[25];
        for (int x = 0; x < 5; x++)
            c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        for (int x = 0; x < 5; x++)
            d[x] = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1);
        for (int i = 0; i < 25; i++)
            a[i] ^= d[i % 5];
        for (int x = 0; x < 5; x++)
            for (int y = 0; y < 5; y++)
                b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[x + 5 * y], rho[x + 5 * y]);
        for (int x = 0; x < 5; x++)
            for (int y = 0; y < 5; y++)
                a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
        a[0] ^= rc[r];
    }
}

static void sw_keccak256(const uint8_t *p, size_t n, uint8_t out[32])
{
    uint64_t st[25] = {0};
    uint8_t block[136];
    for (;;) {
        size_t take = n < 136 ? n : 136;
        memset(block, 0, sizeof block);
        memcpy(block, p, take);
        if (take < 136) {
            block[take] ^= 0x01;
            block[135] ^= 0x80;
        }
        for (int i = 0; i < 17; i++) {
            uint64_t lane;
            memcpy(&lane, block + 8 * i, 8);
            st[i] ^= lane;
        }
        sw_keccak_f(st);
        if (take < 136)
            break;
        p += 136;
        n -= 136;
    }
    memcpy(out, st, 32);
}

static uint32_t rotr(uint32_t x, int s) { return (x >> s) | (x << (32 - s)); }

/* SHA-256 compression, FIPS 180-4 6.2.2. */
static void sw_sha256_compress(uint32_t h[8], const uint8_t blk[64])
{
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64], v[8];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)blk[4 * t] << 24 | (uint32_t)blk[4 * t + 1] << 16 | (uint32_t)blk[4 * t + 2] << 8 | blk[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = v[7] + (rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[t] + w[t];
        uint32_t t2 = (rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

static void sw_sha256(const uint8_t *p, size_t len, uint8_t out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint8_t block[64];
    size_t n = len;
    for (; n >= 64; n -= 64, p += 64)
        sw_sha256_compress(h, p);
    memset(block, 0, 64);
    memcpy(block, p, n);
    block[n] = 0x80;
    if (n >= 56) {
        sw_sha256_compress(h, block);
        memset(block, 0, 64);
    }
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        block[63 - i] = (uint8_t)(bits >> (8 * i));
    sw_sha256_compress(h, block);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

int main(void)
{
    uint8_t mask = 0;
    if (zkrv_read_input(&mask, 1) != 1 || mask == 0)
        mask = 7;
    size_t n = zkrv_read_input(msg, sizeof msg);
    int bad = 0;
    uint8_t d0[32], d1[32];
    if (mask & 1) {
        uint64_t a[25], b[25];
        uint64_t x = 0x9e3779b97f4a7c15ULL ^ n;
        for (int i = 0; i < 25; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[i] = b[i] = x;
        }
        zkrv_keccak_f(a);
        sw_keccak_f(b);
        if (memcmp(a, b, sizeof a) && !bad)
            bad = 1;
        zkrv_keccak256(msg, n, d0);
        sw_keccak256(msg, n, d1);
        if (memcmp(d0, d1, 32) && !bad)
            bad = 2;
        zkrv_write_output(d0, 32);
        zkrv_write_output(a, sizeof a);
    }
    if (mask & 2) {
        uint32_t h[8] __attribute__((aligned(8))) = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
        uint32_t g[8];
        uint8_t block[64] __attribute__((aligned(8)));
        memset(block, 0, 64);
        memcpy(block, msg, n < 64 ? n : 64);
        memcpy(g, h, sizeof g);
        zkrv_sha256_compress(h, block);
        sw_sha256_compress(g, block);
        if (memcmp(h, g, sizeof h) && !bad)
            bad = 3;
        zkrv_sha256(msg, n, d0);
        sw_sha256(msg, n, d1);
        if (memcmp(d0, d1, 32) && !bad)
            bad = 4;
        zkrv_write_output(d0, 32);
        zkrv_write_output(h, sizeof h);
    }
    if (mask & 4) {
        /* Plonky3's width-8 Goldilocks test vector: the permutation of (0, ..., 7). */
        static const uint64_t kat[8] = {0x020cf04a1b214d14ULL, 0x84e14aaaeacaed25ULL, 0x1ae0f640e81c7457ULL,
                                        0xa4d204cbaeb0d8a5ULL, 0x0cf637b627b3a7ffULL, 0x788d304d948b486bULL,
                                        0x7327133ea1949af4ULL, 0xf415abb924da395bULL};
        uint64_t s[8];
        for (int i = 0; i < 8; i++)
            s[i] = (uint64_t)i;
        zkrv_poseidon2(s);
        if (memcmp(s, kat, sizeof s) && !bad)
            bad = 5;
        zkrv_write_output(s, sizeof s);
        for (int i = 0; i < 3; i++)
            zkrv_poseidon2(s);
        zkrv_write_output(s, sizeof s);
    }
    return bad ? 10 + bad : 0;
}
