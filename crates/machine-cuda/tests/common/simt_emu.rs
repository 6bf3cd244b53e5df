//! A SIMT host emulation of CUDA kernels for the parity tests of kernels whose threads cooperate (shared
//! memory, `__syncthreads`, warp shuffles and `__match_any_sync`): unlike `host_emu`'s per-row functions, the
//! device code itself (the `extern "C" __global__` kernels, `ZKRV_HOST_EMU` undefined) runs on the host, one
//! `std::thread` per CUDA thread of a block, the blocks of a launch one after the other (so `__shared__`
//! variables become function statics), `__syncthreads` a block barrier, the warp intrinsics warp barriers over
//! a per-warp exchange array, atomics `__atomic` builtins. [`SHIM`] goes before the kernel sources in
//! `host_emu::run`; the driver launches with `simt_launch(grid, block, [&] { kernel(args...); })`. Slow (a
//! thread per CUDA thread): keep the sizes small. Covers what sort.cu and memwalk.cu use, every lane of a warp
//! active at each warp intrinsic (their full-mask calls).

#![allow(dead_code)]

/// The C++ shim (defines the CUDA qualifiers, built-in variables and intrinsics).
pub const SHIM: &str = r#"
#undef ZKRV_HOST_EMU
#include <thread>
#include <mutex>
#include <condition_variable>
#include <functional>
#include <vector>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __global__
#define __noinline__ __attribute__((noinline))
#define __shared__ static
struct SimtDim { unsigned x, y, z; };
static thread_local SimtDim threadIdx, blockIdx;
static SimtDim blockDim, gridDim;
// A reusable barrier of `n` threads.
struct SimtBarrier {
    std::mutex m;
    std::condition_variable cv;
    unsigned n = 0, waiting = 0, phase = 0;
    void wait() {
        std::unique_lock<std::mutex> l(m);
        const unsigned ph = phase;
        if (++waiting == n) {
            waiting = 0;
            phase++;
            cv.notify_all();
        } else {
            cv.wait(l, [&] { return phase != ph; });
        }
    }
};
static SimtBarrier simt_block_bar;
static SimtBarrier simt_warp_bar[32];
static unsigned long long simt_warp_val[32][32];
static inline void __syncthreads() { simt_block_bar.wait(); }
static inline unsigned simt_lane() { return threadIdx.x & 31u; }
static inline unsigned simt_warp() { return threadIdx.x >> 5; }
// Every lane publishes `v`, then reads what lane `src(l)` published.
static inline unsigned long long simt_exchange(unsigned long long v, unsigned src) {
    const unsigned w = simt_warp();
    simt_warp_val[w][simt_lane()] = v;
    simt_warp_bar[w].wait();
    const unsigned long long r = simt_warp_val[w][src];
    simt_warp_bar[w].wait();
    return r;
}
static inline unsigned __match_any_sync(unsigned, unsigned v) {
    const unsigned w = simt_warp();
    simt_warp_val[w][simt_lane()] = v;
    simt_warp_bar[w].wait();
    unsigned peers = 0;
    for (unsigned l = 0; l < 32; l++)
        if (simt_warp_val[w][l] == v) peers |= 1u << l;
    simt_warp_bar[w].wait();
    return peers;
}
static inline unsigned __ballot_sync(unsigned, int p) {
    const unsigned w = simt_warp();
    simt_warp_val[w][simt_lane()] = p != 0;
    simt_warp_bar[w].wait();
    unsigned b = 0;
    for (unsigned l = 0; l < 32; l++)
        if (simt_warp_val[w][l]) b |= 1u << l;
    simt_warp_bar[w].wait();
    return b;
}
template <class T> static inline T __shfl_up_sync(unsigned, T v, unsigned o) {
    const unsigned l = simt_lane();
    return (T)simt_exchange((unsigned long long)v, l >= o ? l - o : l);
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned atomicMin(unsigned* p, unsigned v) {
    unsigned cur = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return cur;
}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned int __brev(unsigned int x) {
    unsigned int r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
// Runs `body` (a kernel call) on a grid of `grid` blocks of `block` threads (a multiple of 32).
static void simt_launch(unsigned grid, unsigned block, const std::function<void()>& body) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    simt_block_bar.n = block;
    for (unsigned w = 0; w < block / 32; w++) simt_warp_bar[w].n = 32;
    for (unsigned b = 0; b < grid; b++) {
        std::vector<std::thread> ts;
        ts.reserve(block);
        for (unsigned t = 0; t < block; t++)
            ts.emplace_back([&, b, t] {
                blockIdx = {b, 0, 0};
                threadIdx = {t, 0, 0};
                body();
            });
        for (auto& th : ts) th.join();
    }
}
"#;

/// `simt_sort(keys, n, perm)`: `zkrv_cuda::sort::stable_sort_perm`, launch for launch, on the SIMT emulation
/// (goes after [`SHIM`] and sort.cu).
pub const SIMT_SORT: &str = r#"
static unsigned blocks(u64 n, unsigned b) { return (unsigned)((n + b - 1) / b); }
// stable_sort_perm (crates/cuda/src/sort.rs), launch for launch.
static void simt_sort(std::vector<std::vector<u32>>& keys, u64 n, u32* out) {
    const u32 words = (u32)keys.size();
    std::vector<std::pair<u32, u32>> passes;
    if (n >= 2 && words) {
        std::vector<u32> bytes(words * 4 * SORT_RADIX, 0);
        for (u32 w = 0; w < words; w++) {
            u32* k = keys[w].data();
            u32* c = bytes.data() + w * 4 * SORT_RADIX;
            unsigned g = blocks(n, SORT_BLOCK);
            if (g > 1024) g = 1024;
            simt_launch(g, SORT_BLOCK, [&] { sort_count_bytes(k, n, c); });
        }
        for (u32 w = words; w-- > 0;)
            for (u32 b = 0; b < 4; b++) {
                bool constant = false;
                for (u32 d = 0; d < SORT_RADIX; d++) constant |= bytes[(w * 4 + b) * SORT_RADIX + d] == n;
                if (!constant) passes.push_back({w, 8 * b});
            }
    }
    if (passes.empty()) {
        std::vector<u32> p(n + 1);
        if (n) simt_launch(blocks(n, SORT_BLOCK), SORT_BLOCK, [&] { sort_iota(p.data(), n); });
        memcpy(out, p.data(), 4 * n);
        return;
    }
    const u64 tiles = (n + SORT_TILE - 1) / SORT_TILE;
    std::vector<u32> counts(SORT_RADIX * tiles), a(n), b(n);
    u32* bufs[2] = {a.data(), b.data()};
    int cur = -1;
    for (auto [w, shift] : passes) {
        const u32* key = keys[w].data();
        const u32* in = cur < 0 ? nullptr : bufs[cur];
        u32* o = bufs[cur < 0 ? 0 : 1 - cur];
        u32* c = counts.data();
        const u64 len = counts.size();
        simt_launch((unsigned)tiles, SORT_BLOCK, [&] { sort_block_hist(key, in, n, shift, tiles, c); });
        simt_launch(1, SORT_SCAN_BLOCK, [&] { sort_scan(c, len); });
        simt_launch((unsigned)tiles, SORT_BLOCK, [&] { sort_scatter(key, in, n, shift, tiles, c, o); });
        cur = cur < 0 ? 0 : 1 - cur;
    }
    memcpy(out, bufs[cur], 4 * n);
}
"#;
