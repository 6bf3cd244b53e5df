// LogUp aux trace: the running-sum column (mirrors the sequential prefix at the end of
// crates/stark/src/logup.rs `build_aux_trace`). The per-row terms come from the generated per-AIR kernels
// (crates/cuda/src/logup.rs); this program holds the AIR-independent part, an inclusive prefix sum in Ext3 over
// a strided column:
//   element i (i < n) is the Ext3 at data[i * stride .. i * stride + 3] (u64 offsets).
// Block scan + carry propagation: `logup_scan_block_kernel` scans each block of SCAN_ITEMS * blockDim.x
// consecutive elements in place and writes the block's total to sums[3 b ..]; the launcher scans `sums`
// recursively and `logup_scan_add_kernel` adds the inclusive total of blocks 0..b-1 to every element of block b.
// Field addition is exact, so the result equals the host's sequential sum bit for bit.
#include "logup.cuh"

#define SCAN_ITEMS 4
#define SCAN_THREADS 256
#define SCAN_BLOCK (SCAN_ITEMS * SCAN_THREADS)

// Launch: blockDim.x = SCAN_THREADS, gridDim.x = ceil(n / SCAN_BLOCK). sums: 3 * gridDim.x u64.
extern "C" __global__ void logup_scan_block_kernel(u64* data, u64 stride, u64 n, u64* sums) {
    __shared__ ext3 part[2][SCAN_THREADS];
    u32 t = threadIdx.x;
    u64 base = (u64)blockIdx.x * SCAN_BLOCK + (u64)t * SCAN_ITEMS;
    ext3 v[SCAN_ITEMS];
    ext3 acc = ext3{0, 0, 0};
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++) {
        u64 i = base + j;
        ext3 x = ext3{0, 0, 0};
        if (i < n) {
            const u64* p = data + i * stride;
            x = ext3{gl_canon(p[0]), gl_canon(p[1]), gl_canon(p[2])};
        }
        acc = ext3_add(acc, x);
        v[j] = acc;
    }
    // Inclusive scan of the thread totals (Hillis-Steele, double-buffered).
    int cur = 0;
    part[cur][t] = acc;
    __syncthreads();
    for (u32 off = 1; off < SCAN_THREADS; off <<= 1) {
        ext3 x = part[cur][t];
        if (t >= off) x = ext3_add(x, part[cur][t - off]);
        part[cur ^ 1][t] = x;
        cur ^= 1;
        __syncthreads();
    }
    ext3 before = t == 0 ? ext3{0, 0, 0} : part[cur][t - 1];
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++) {
        u64 i = base + j;
        if (i < n) logup_store_ext3(data + i * stride, ext3_add(before, v[j]));
    }
    if (t == SCAN_THREADS - 1) logup_store_ext3(sums + 3 * (u64)blockIdx.x, part[cur][t]);
}

// Launch: one thread per element, any block size. carries: the inclusive prefix of the block totals (3 u64
// each); element i of scan block b >= 1 gets carries[b - 1] added.
extern "C" __global__ void logup_scan_add_kernel(u64* data, u64 stride, u64 n, const u64* carries) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u64 b = i / SCAN_BLOCK;
    if (b == 0) return;
    u64* p = data + i * stride;
    logup_store_ext3(p, ext3_add(logup_load_ext3(p), logup_load_ext3(carries + 3 * (b - 1))));
}
