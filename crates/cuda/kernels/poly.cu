// Batched NTT / inverse NTT and coset LDE over Goldilocks, mirroring crates/stark/src/poly.rs.
//
// Data layout everywhere: a row-major matrix of `n_rows x width` u64 (canonical field elements). An NTT of
// size n = 2^log_n acts on the rows of each contiguous block of n rows (so `n_rows / n` independent batches),
// every column independently.
//
// The transform is decimation in frequency (Gentleman-Sande): natural-order input, bit-reversed output.
// Stages are fused in groups of up to `k` stages per launch: a block loads 2^k rows spaced `s` apart (the
// stride of the group's last stage) times a tile of `tile` consecutive (row, column) cells, runs the k stages
// in shared memory and writes back to the same cells (so src == dst is allowed).
//
// Twiddles: table[h + i] = w_{2h}^i for h = 1, 2, 4, ..., N/2 and 0 <= i < h (table[0] unused), where w_m is
// the canonical primitive m-th root (Plonky3's two_adic_generator) for the forward table, or its inverse.
#include "field.cuh"

// table[h + i] = root_{2h}^i; roots[j] = primitive 2^j-th root (j = 0..log_max).
extern "C" __global__ void twiddles_kernel(u64* table, const u64* roots, u32 log_max) {
    u64 n = 1ULL << log_max;
    for (u64 idx = blockIdx.x * (u64)blockDim.x + threadIdx.x; idx < n; idx += (u64)gridDim.x * blockDim.x) {
        if (idx == 0) {
            table[0] = 0;
            continue;
        }
        u32 l = 63 - __clzll(idx);  // h = 2^l
        u64 i = idx - (1ULL << l);
        table[idx] = gl_pow(roots[l + 1], i);
    }
}

// One fused group of k DIF stages. Stage half-sizes (in rows): s * 2^(k-1), ..., s * 2, s (s = 2^log_s).
// Grid: one block per (segment of 2^k * s rows, tile of 2^log_tile cells of the s * width contiguous cells).
// blockDim.x must be a power of two >= 2^log_tile. Shared memory: 2^k * 2^log_tile u64, laid out [row][cell].
extern "C" __global__ void ntt_dif_group_kernel(const u64* __restrict__ src, u64* dst, const u64* __restrict__ twiddles,
                                                u32 width, u32 log_s, u32 k, u32 log_tile) {
    extern __shared__ u64 sm[];
    const u32 tile = 1u << log_tile;
    const u64 s = 1ULL << log_s;
    const u64 span = s * width;  // contiguous cells per row-group
    const u64 ntiles = (span + tile - 1) >> log_tile;
    const u64 seg = blockIdx.x / ntiles;
    const u64 t = blockIdx.x - seg * ntiles;
    const u32 rows = 1u << k;
    const u64 base = seg * (s << k) * width + (t << log_tile);  // first cell of this tile
    const u32 c = threadIdx.x & (tile - 1);                         // fixed cell of this thread
    const u32 r0 = threadIdx.x >> log_tile;                         // first row (or pair) of this thread
    const u32 rstep = blockDim.x >> log_tile;
    const bool live = (t << log_tile) + c < span;

    if (live) {
        const u64* p = src + base + c;
        for (u32 m = r0; m < rows; m += rstep) sm[(m << log_tile) + c] = gl_canon(p[m * span]);
    }
    __syncthreads();

    const u64 lo = ((t << log_tile) + c) / width;  // row offset inside the stride
    const u32 pairs = rows >> 1;
    for (u32 j = 0; j < k; j++) {
        const u32 log_hm = k - 1 - j;  // half-size 2^log_hm in units of s rows
        const u32 hm = 1u << log_hm;
        const u64* tw = twiddles + ((u64)hm << log_s) + lo;
        if (live) {
            for (u32 p = r0; p < pairs; p += rstep) {
                const u32 pm = p & (hm - 1);
                const u32 m1 = ((p - pm) << 1) + pm;
                const u32 a1 = (m1 << log_tile) + c, a2 = ((m1 + hm) << log_tile) + c;
                const u64 w = __ldg(tw + ((u64)pm << log_s));
                const u64 x = sm[a1], y = sm[a2];
                sm[a1] = gl_add(x, y);
                sm[a2] = gl_mul(gl_sub(x, y), w);
            }
        }
        __syncthreads();
    }

    if (live) {
        u64* q = dst + base + c;
        for (u32 m = r0; m < rows; m += rstep) q[m * span] = sm[(m << log_tile) + c];
    }
}

// Same contract as ntt_dif_group_kernel, but two stages at a time in registers (radix-4): each thread loads 4
// cells of one column (rows m, m + hm/2, m + hm, m + 3hm/2), runs both stages, stores them back; a final odd
// stage is radix-2. Half the shared-memory traffic, index arithmetic and barriers of the radix-2 kernel; the
// same multiplications, so the same canonical results.
extern "C" __global__ void ntt_dif_group_r4_kernel(const u64* __restrict__ src, u64* dst,
                                                   const u64* __restrict__ twiddles, u32 width, u32 log_s, u32 k,
                                                   u32 log_tile) {
    extern __shared__ u64 sm[];
    const u32 tile = 1u << log_tile;
    const u64 s = 1ULL << log_s;
    const u64 span = s * width;
    const u64 ntiles = (span + tile - 1) >> log_tile;
    const u64 seg = blockIdx.x / ntiles;
    const u64 t = blockIdx.x - seg * ntiles;
    const u32 rows = 1u << k;
    const u64 base = seg * (s << k) * width + (t << log_tile);
    const u32 c = threadIdx.x & (tile - 1);
    const u32 r0 = threadIdx.x >> log_tile;
    const u32 rstep = blockDim.x >> log_tile;
    const bool live = (t << log_tile) + c < span;

    if (live) {
        const u64* p = src + base + c;
        for (u32 m = r0; m < rows; m += rstep) sm[(m << log_tile) + c] = gl_canon(p[m * span]);
    }
    __syncthreads();

    const u64 lo = ((t << log_tile) + c) / width;
    u32 j = 0;
    for (; j + 1 < k; j += 2) {
        const u32 log_hm = k - 1 - j;  // stage j half-size 2^log_hm (units of s rows); stage j+1: 2^(log_hm-1)
        const u32 hm = 1u << log_hm, hq = hm >> 1;
        const u64* tw_a = twiddles + ((u64)hm << log_s) + lo;
        const u64* tw_b = twiddles + ((u64)hq << log_s) + lo;
        if (live) {
            for (u32 qd = r0; qd < (rows >> 2); qd += rstep) {
                const u32 pm = qd & (hq - 1);
                const u32 m0 = ((qd - pm) << 2) + pm;  // block of 2hm rows: (qd / hq) * 2hm
                const u32 i0 = (m0 << log_tile) + c, i1 = ((m0 + hq) << log_tile) + c;
                const u32 i2 = ((m0 + hm) << log_tile) + c, i3 = ((m0 + hm + hq) << log_tile) + c;
                const u64 w1 = __ldg(tw_a + ((u64)pm << log_s));
                const u64 w2 = __ldg(tw_a + ((u64)(pm + hq) << log_s));
                const u64 w3 = __ldg(tw_b + ((u64)pm << log_s));
                const u64 x0 = sm[i0], x1 = sm[i1], x2 = sm[i2], x3 = sm[i3];
                const u64 a0 = gl_add(x0, x2), a2 = gl_mul(gl_sub(x0, x2), w1);
                const u64 a1 = gl_add(x1, x3), a3 = gl_mul(gl_sub(x1, x3), w2);
                sm[i0] = gl_add(a0, a1);
                sm[i1] = gl_mul(gl_sub(a0, a1), w3);
                sm[i2] = gl_add(a2, a3);
                sm[i3] = gl_mul(gl_sub(a2, a3), w3);
            }
        }
        __syncthreads();
    }
    if (j < k) {  // last stage, half-size 1 (unit s)
        const u64* tw = twiddles + (1ULL << log_s) + lo;
        if (live) {
            const u64 w = __ldg(tw);
            for (u32 p = r0; p < (rows >> 1); p += rstep) {
                const u32 a1 = ((p << 1) << log_tile) + c, a2 = (((p << 1) + 1) << log_tile) + c;
                const u64 x = sm[a1], y = sm[a2];
                sm[a1] = gl_add(x, y);
                sm[a2] = gl_mul(gl_sub(x, y), w);
            }
        }
        __syncthreads();
    }

    if (live) {
        u64* q = dst + base + c;
        for (u32 m = r0; m < rows; m += rstep) q[m * span] = sm[(m << log_tile) + c];
    }
}

// dst[batch * n + bitrev(i)] = src[batch * n + i] * scale, per row (n = 2^log_n). src != dst.
extern "C" __global__ void bitrev_rows_scale_kernel(const u64* __restrict__ src, u64* __restrict__ dst, u32 log_n,
                                                    u32 width, u64 n_cells, u64 scale) {
    const u64 n_mask = (1ULL << log_n) - 1;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < n_cells; e += (u64)gridDim.x * blockDim.x) {
        u64 row = e / width, col = e % width;
        u64 r = (row & ~n_mask) | bit_reverse((u32)(row & n_mask), log_n);
        dst[r * width + col] = gl_mul(gl_canon(src[e]), scale);
    }
}

// Coset scatter of the LDE. `coeffs`: n x width, the coefficients c_j of each column in bit-reversed order
// (row i holds c_{bitrev(i)}), not yet divided by n. Writes `dst`: (n * blowup) x width, chunk a (rows
// a*n .. a*n + n) holds c_j * shifts[a]^j * n_inv in natural order j, ready for a size-n forward DIF NTT.
// Grid: (ceil(n / 32), blowup); each block writes 32 consecutive rows of one chunk.
#define SCATTER_ROWS 32
extern "C" __global__ void lde_scatter_kernel(const u64* __restrict__ coeffs, u64* __restrict__ dst,
                                              const u64* __restrict__ shifts, u32 log_n, u32 width, u64 n_inv) {
    __shared__ u64 factor[SCATTER_ROWS];
    const u64 n = 1ULL << log_n;
    const u64 j0 = (u64)blockIdx.x * SCATTER_ROWS;
    const u32 a = blockIdx.y;
    if (threadIdx.x < SCATTER_ROWS && j0 + threadIdx.x < n) {
        factor[threadIdx.x] = gl_mul(gl_pow(shifts[a], j0 + threadIdx.x), n_inv);
    }
    __syncthreads();
    const u32 rows = (u32)min((u64)SCATTER_ROWS, n - j0);
    const u32 cells = rows * width;
    for (u32 e = threadIdx.x; e < cells; e += blockDim.x) {
        u32 r = e / width, col = e % width;
        u64 j = j0 + r;
        u64 v = gl_canon(coeffs[(u64)bit_reverse((u32)j, log_n) * width + col]);
        dst[((u64)a * n + j) * width + col] = gl_mul(v, factor[r]);
    }
}

// Folded coset evaluation, the first half of evaluating column polynomials on cosets x_g·H_K with K < n
// (crates/cuda/src/poly.rs, `coset_evals`). `coeffs`: n x width, the raw inverse-DIF output of a trace
// (row i holds n·c_{bitrev_n(i)}); `xs`: one base point x_g per group. Cell (g·K + m, col) of split s
// (blockIdx.z, of 2^log_split) is n_inv · Σ_t c_{m + tK} · x_g^{m + tK} over its share of t < n/K, written to
// `dst + s·groups·K·width`; the splits are summed by `fold_sum_kernel` (none when log_split = 0), so that a
// size-K forward DIF NTT of each group gives p(x_g · ω_K^{bitrev_k(j)}) in row g·K + j. Grid:
// (ceil(K·width / 256), groups, 2^log_split); one thread per cell and split.
extern "C" __global__ void coset_fold_kernel(const u64* __restrict__ coeffs, u64* __restrict__ dst,
                                             const u64* __restrict__ xs, u32 log_n, u32 log_k, u32 width,
                                             u64 n_inv, u32 log_split) {
    const u64 k_rows = 1ULL << log_k;
    const u64 cells = k_rows * width;
    const u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (e >= cells) return;
    const u64 g = blockIdx.y;
    const u64 m = e / width, col = e % width;
    const u64 x = xs[g];
    const u64 share = 1ULL << (log_n - log_k - log_split);
    const u64 t0 = (u64)blockIdx.z * share;
    u64 p = gl_mul(gl_pow(x, m + (t0 << log_k)), n_inv);
    const u64 xk = gl_pow(x, k_rows);
    u64 acc = 0;
    for (u64 t = t0; t < t0 + share; t++) {
        u64 i = m + (t << log_k);
        u64 c = gl_canon(__ldg(coeffs + (u64)bit_reverse((u32)i, log_n) * width + col));
        acc = gl_add(acc, gl_mul(c, p));
        p = gl_mul(p, xk);
    }
    dst[(u64)blockIdx.z * gridDim.y * cells + (g * k_rows + m) * width + col] = acc;
}

// out[e] = Σ_{s < splits} partial[s·cells + e] for e < cells (the splits of `coset_fold_kernel`).
extern "C" __global__ void fold_sum_kernel(const u64* __restrict__ partial, u64* __restrict__ out, u64 cells,
                                           u32 splits) {
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < cells; e += (u64)gridDim.x * blockDim.x) {
        u64 acc = 0;
        for (u32 s = 0; s < splits; s++) acc = gl_add(acc, partial[(u64)s * cells + e]);
        out[e] = acc;
    }
}
