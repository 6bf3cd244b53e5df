/* Deterministic inputs for the sort and matmul guests (documented in guests/README.md).
 *
 * Generator: Marsaglia xorshift64 (13, 7, 17). The state starts at the seed (0x9E3779B97F4A7C15 if the seed
 * is 0); each call updates x ^= x << 13; x ^= x >> 7; x ^= x << 17 and returns the new state.
 * Checksum: FNV-1a over u64 words: h = 0xCBF29CE484222325; for each word v: h = (h ^ v) * 0x100000001B3 mod 2^64.
 */
#ifndef ZKRV_XORSHIFT_H
#define ZKRV_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift_init(uint64_t seed)
{
    return seed ? seed : 0x9E3779B97F4A7C15ull;
}

static inline uint64_t xorshift_next(uint64_t *x)
{
    uint64_t v = *x;
    v ^= v << 13;
    v ^= v >> 7;
    v ^= v << 17;
    *x = v;
    return v;
}

#define CHECKSUM_INIT 0xCBF29CE484222325ull

static inline uint64_t checksum_step(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001B3ull;
}

#endif
