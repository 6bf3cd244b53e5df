// Stable LSD radix sort returning a permutation (driver: crates/cuda/src/sort.rs `stable_sort_perm`).
//
// Keys: `n_words` u32 arrays of n entries (the most significant word first); the sort orders the indices
// 0..n by the key tuples, ties in increasing index. Method: passes of 8-bit digits, from the least
// significant byte of the least significant word up; a pass whose digit is the same for every key is skipped
// (the driver knows from `sort_count_bytes`, one launch per word: the global byte histograms do not depend on
// the order). Each pass, over the current permutation `perm_in` (null: the identity) in tiles of SORT_TILE
// consecutive positions (one block each):
// 1. `sort_block_hist`: per tile the count of every digit -> `counts[digit * n_tiles + tile]` (digit-major);
// 2. `sort_scan`: one block, exclusive prefix sum over those 256 x n_tiles counts: each becomes the position
//    of the tile's first element of that digit in the output;
// 3. `sort_scatter`: per tile, in SORT_ROUNDS rounds of SORT_BLOCK consecutive elements (one per thread), each
//    element's rank among the equal digits before it in the tile (stable: in the warp by `__match_any_sync`,
//    across the block's warps by a per-digit exclusive scan over per-warp counts), and `perm_out[position] =
//    perm_in[i]`.
// Host emulation (-DZKRV_HOST_EMU, crates/cuda/tests/sort.rs): the three steps as loops over tiles, warps and
// lanes computing the same counts and ranks (`sort_emu_perm` runs the whole sort).
#include "field.cuh"

#define SORT_BLOCK 256u
#define SORT_WARPS (SORT_BLOCK / 32u)
#define SORT_ROUNDS 16u
#define SORT_TILE (SORT_BLOCK * SORT_ROUNDS)
#define SORT_RADIX 256u
// Threads of the `sort_scan` block.
#define SORT_SCAN_BLOCK 1024u

// The digit of element `i` of the current order: byte `shift / 8` of key[perm_in[i]] (perm_in null:
// key[i]); `*src` receives the element's original index.
__device__ __forceinline__ u32 sort_digit(const u32* key, const u32* perm_in, u64 i, u32 shift, u32* src) {
    const u32 v = perm_in ? perm_in[i] : (u32)i;
    *src = v;
    return (key[v] >> shift) & 0xffu;
}

#ifdef ZKRV_HOST_EMU
#include <vector>

// Step 1 for tile `b` of `n_tiles`.
static void sort_block_hist_emu(u64 b, u64 n_tiles, const u32* key, const u32* perm_in, u64 n, u32 shift,
                                u32* counts) {
    u32 c[SORT_RADIX] = {0};
    for (u64 i = b * SORT_TILE; i < n && i < (b + 1) * SORT_TILE; i++) {
        u32 src;
        c[sort_digit(key, perm_in, i, shift, &src)]++;
    }
    for (u32 d = 0; d < SORT_RADIX; d++) counts[(u64)d * n_tiles + b] = c[d];
}

// Step 2.
static void sort_scan_emu(u32* a, u64 len) {
    u32 s = 0;
    for (u64 i = 0; i < len; i++) {
        const u32 v = a[i];
        a[i] = s;
        s += v;
    }
}

// Step 3 for tile `b`, warp by warp and lane by lane as the device computes it.
static void sort_scatter_emu(u64 b, u64 n_tiles, const u32* key, const u32* perm_in, u64 n, u32 shift,
                             const u32* offsets, u32* perm_out) {
    u32 base[SORT_RADIX];
    for (u32 d = 0; d < SORT_RADIX; d++) base[d] = offsets[(u64)d * n_tiles + b];
    for (u32 r = 0; r < SORT_ROUNDS; r++) {
        u32 wcnt[SORT_WARPS][SORT_RADIX] = {{0}};
        u32 dig[SORT_BLOCK], src[SORT_BLOCK], rank[SORT_BLOCK];
        bool valid[SORT_BLOCK];
        for (u32 t = 0; t < SORT_BLOCK; t++) {
            const u64 i = b * SORT_TILE + (u64)r * SORT_BLOCK + t;
            valid[t] = i < n;
            dig[t] = valid[t] ? sort_digit(key, perm_in, i, shift, &src[t]) : SORT_RADIX;
        }
        // In the warp: rank = equal digits in lower lanes (popc(peers & lanemask_lt)); the leader stores popc.
        for (u32 t = 0; t < SORT_BLOCK; t++) {
            const u32 w = t / 32, l0 = w * 32;
            rank[t] = 0;
            u32 peers = 0;
            for (u32 u = l0; u < l0 + 32; u++) {
                if (dig[u] == dig[t]) {
                    peers++;
                    if (u < t) rank[t]++;
                }
            }
            if (valid[t] && rank[t] == 0) wcnt[w][dig[t]] = peers;
        }
        // Across warps: per digit, exclusive scan from the running base.
        for (u32 d = 0; d < SORT_RADIX; d++) {
            u32 run = base[d];
            for (u32 w = 0; w < SORT_WARPS; w++) {
                const u32 c = wcnt[w][d];
                wcnt[w][d] = run;
                run += c;
            }
            base[d] = run;
        }
        for (u32 t = 0; t < SORT_BLOCK; t++)
            if (valid[t]) perm_out[wcnt[t / 32][dig[t]] + rank[t]] = src[t];
    }
}

// Global byte histograms of one key word: counts[byte * 256 + digit].
static void sort_count_bytes_emu(const u32* key, u64 n, u32* counts) {
    for (u64 i = 0; i < n; i++)
        for (u32 k = 0; k < 4; k++) counts[k * SORT_RADIX + ((key[i] >> (8 * k)) & 0xffu)]++;
}

// The whole sort, as `stable_sort_perm` drives the kernels: `keys[0]` most significant; writes perm[0..n).
static void sort_emu_perm(const u32* const* keys, u32 n_words, u64 n, u32* perm) {
    const u64 n_tiles = n ? (n + SORT_TILE - 1) / SORT_TILE : 1;
    std::vector<u32> a(n + 1), bb(n + 1), counts(SORT_RADIX * n_tiles), bytes(4 * SORT_RADIX);
    const u32* in = nullptr;
    u32* out = a.data();
    for (u32 w = n_words; w-- > 0;) {
        for (auto& c : bytes) c = 0;
        sort_count_bytes_emu(keys[w], n, bytes.data());
        for (u32 k = 0; k < 4; k++) {
            bool constant = false;
            for (u32 d = 0; d < SORT_RADIX; d++) constant |= bytes[k * SORT_RADIX + d] == n;
            if (constant) continue;
            for (u64 t = 0; t < n_tiles; t++) sort_block_hist_emu(t, n_tiles, keys[w], in, n, 8 * k, counts.data());
            sort_scan_emu(counts.data(), counts.size());
            for (u64 t = 0; t < n_tiles; t++)
                sort_scatter_emu(t, n_tiles, keys[w], in, n, 8 * k, counts.data(), out);
            in = out;
            out = out == a.data() ? bb.data() : a.data();
        }
    }
    for (u64 i = 0; i < n; i++) perm[i] = in ? in[i] : (u32)i;
}

#else

// Adds 1 to h[d] for every lane with `valid`, one shared atomic per distinct digit of the warp (keys cluster:
// e.g. the high bytes of dense cell indices are the same for most keys). Every lane of the warp calls it.
__device__ __forceinline__ void sort_hist_add(u32* h, u32 d, bool valid) {
    const u32 peers = __match_any_sync(0xffffffffu, valid ? d : 0xffffffffu);
    if (valid && (threadIdx.x & 31u) == (u32)(__ffs(peers) - 1)) atomicAdd(&h[d], (u32)__popc(peers));
}

// Global byte histograms of one key word (order-independent): counts[byte * 256 + digit] (4 x 256 u32,
// zeroed by the caller); any grid of SORT_BLOCK-thread blocks (grid-stride, warp-uniform loop).
extern "C" __global__ void sort_count_bytes(const u32* key, u64 n, u32* counts) {
    __shared__ u32 h[4 * SORT_RADIX];
    for (u32 j = threadIdx.x; j < 4 * SORT_RADIX; j += blockDim.x) h[j] = 0;
    __syncthreads();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 warp_first = ((u64)blockIdx.x * blockDim.x + threadIdx.x) & ~31ull;
    for (u64 i0 = warp_first; i0 < n; i0 += stride) {
        const u64 i = i0 + (threadIdx.x & 31u);
        const bool valid = i < n;
        const u32 k = valid ? key[i] : 0u;
#pragma unroll
        for (u32 b = 0; b < 4; b++) sort_hist_add(h + b * SORT_RADIX, (k >> (8 * b)) & 0xffu, valid);
    }
    __syncthreads();
    for (u32 j = threadIdx.x; j < 4 * SORT_RADIX; j += blockDim.x)
        if (h[j]) atomicAdd(&counts[j], h[j]);
}

// Step 1: one SORT_BLOCK-thread block per tile (grid = n_tiles).
extern "C" __global__ void sort_block_hist(const u32* key, const u32* perm_in, u64 n, u32 shift, u64 n_tiles,
                                           u32* counts) {
    __shared__ u32 h[SORT_RADIX];
    for (u32 j = threadIdx.x; j < SORT_RADIX; j += blockDim.x) h[j] = 0;
    __syncthreads();
    const u64 b = blockIdx.x;
    for (u32 r = 0; r < SORT_ROUNDS; r++) {
        const u64 i = b * SORT_TILE + (u64)r * SORT_BLOCK + threadIdx.x;
        const bool valid = i < n;
        u32 src;
        sort_hist_add(h, valid ? sort_digit(key, perm_in, i, shift, &src) : 0u, valid);
    }
    __syncthreads();
    for (u32 j = threadIdx.x; j < SORT_RADIX; j += blockDim.x) counts[(u64)j * n_tiles + b] = h[j];
}

// Step 2: one block of SORT_SCAN_BLOCK threads; in-place exclusive prefix sum of a[0..len) (the total fits
// u32). Thread t scans its contiguous segment of ceil(len / SORT_SCAN_BLOCK) entries.
extern "C" __global__ void sort_scan(u32* a, u64 len) {
    __shared__ u32 warp_sum[SORT_SCAN_BLOCK / 32];
    const u32 t = threadIdx.x, lane = t & 31u, warp = t >> 5;
    const u64 per = (len + SORT_SCAN_BLOCK - 1) / SORT_SCAN_BLOCK;
    const u64 lo = (u64)t * per < len ? (u64)t * per : len;
    const u64 hi = lo + per < len ? lo + per : len;
    u32 s = 0;
    for (u64 i = lo; i < hi; i++) s += a[i];
    // Exclusive scan of the thread sums: in the warp, then over the warps.
    u32 x = s;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        const u32 y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sum[warp] = x;
    __syncthreads();
    if (warp == 0) {
        u32 w = lane < SORT_SCAN_BLOCK / 32 ? warp_sum[lane] : 0;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const u32 y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += y;
        }
        if (lane < SORT_SCAN_BLOCK / 32) warp_sum[lane] = w;
    }
    __syncthreads();
    u32 run = x - s + (warp ? warp_sum[warp - 1] : 0);
    for (u64 i = lo; i < hi; i++) {
        const u32 v = a[i];
        a[i] = run;
        run += v;
    }
}

// Step 3: one SORT_BLOCK-thread block per tile (grid = n_tiles); `offsets` from step 2.
extern "C" __global__ void sort_scatter(const u32* key, const u32* perm_in, u64 n, u32 shift, u64 n_tiles,
                                        const u32* offsets, u32* perm_out) {
    __shared__ u32 base[SORT_RADIX];
    __shared__ u32 wcnt[SORT_WARPS][SORT_RADIX];
    const u32 t = threadIdx.x, lane = t & 31u, warp = t >> 5;
    const u64 b = blockIdx.x;
    for (u32 d = t; d < SORT_RADIX; d += SORT_BLOCK) base[d] = offsets[(u64)d * n_tiles + b];
    for (u32 r = 0; r < SORT_ROUNDS; r++) {
        const u64 first = b * SORT_TILE + (u64)r * SORT_BLOCK;
        if (first >= n) break;  // uniform over the block
        for (u32 j = t; j < SORT_WARPS * SORT_RADIX; j += SORT_BLOCK) (&wcnt[0][0])[j] = 0;
        __syncthreads();
        const u64 i = first + t;
        const bool valid = i < n;
        u32 src = 0;
        const u32 d = valid ? sort_digit(key, perm_in, i, shift, &src) : SORT_RADIX;
        const u32 peers = __match_any_sync(0xffffffffu, d);
        const u32 rank = __popc(peers & ((1u << lane) - 1u));
        if (valid && rank == 0) wcnt[warp][d] = __popc(peers);
        __syncthreads();
        for (u32 dd = t; dd < SORT_RADIX; dd += SORT_BLOCK) {
            u32 run = base[dd];
#pragma unroll
            for (u32 w = 0; w < SORT_WARPS; w++) {
                const u32 c = wcnt[w][dd];
                wcnt[w][dd] = run;
                run += c;
            }
            base[dd] = run;
        }
        __syncthreads();
        if (valid) perm_out[wcnt[warp][d] + rank] = src;
        __syncthreads();
    }
}

// perm[i] = i for i < n (a sort without passes).
extern "C" __global__ void sort_iota(u32* perm, u64 n) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) perm[i] = (u32)i;
}
#endif
