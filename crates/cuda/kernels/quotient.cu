// Quotient chunks and their zk masks on the GPU, mirroring crates/stark/src/backend/quotient.rs
// (`quotient_chunks`) and crates/stark/src/zk.rs (`randomize_quotient`). The per-AIR row kernel that computes
// q = C / Z_H on the quotient domain is generated (crates/cuda/src/quotient.rs, helpers in quotient.cuh); these
// are the fixed steps around the NTTs of poly.cu. All matrices are row-major u64, canonical values.
#include "field.cuh"

// Coset IDFT tail + chunk split. `coeffs`: M x 3 (M = 2^log_m), the inverse DIF NTT of q in natural order, i.e.
// the unscaled coefficients in bit-reversed order (row bitrev_M(k) holds M c_k'). Writes `out`: n x 3 chunks
// (n = 2^log_n), out[r][3j + e] = coefficient k = j n + r of q(g X) scaled to q's own coefficient:
// coeffs[bitrev_M(k)][e] * m_inv * g_inv^k. One thread per (r, j), j < chunks.
extern "C" __global__ void quotient_split_kernel(const u64* __restrict__ coeffs, u64* __restrict__ out, u32 log_m,
                                                 u32 log_n, u32 chunks, u64 g_inv, u64 m_inv) {
    const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    const u64 n = 1ull << log_n;
    if (t >= n * chunks) return;
    const u64 r = t / chunks, j = t % chunks;
    const u64 k = j * n + r;
    u64* dst = out + r * 3 * chunks + 3 * j;
    if (k >> log_m) {  // past the M coefficients (chunks * n > M): zero, as the host's `get(..).unwrap_or(0)`
        for (int e = 0; e < 3; e++) dst[e] = 0;
        return;
    }
    const u64 f = gl_mul(m_inv, gl_pow(g_inv, k));
    const u64* src = coeffs + 3 * (u64)bit_reverse((u32)k, log_m);
    for (int e = 0; e < 3; e++) dst[e] = gl_mul(gl_canon(src[e]), f);
}

// zk: the masked chunk coefficients of randomize_quotient before their DFT. `coeffs`: n x 3c, the coefficients of
// the c chunks (natural order; coefficient G = j n + k of q is coeffs[k][3j + e]). `masks`: h x 3 (count - 1),
// row k = stream (DOMAIN_QUOTIENT, ROUND_QUOTIENT, table, k) (unused when count == 1). Writes `out`: 2n x 3 count,
// chunk i row p: coefficient i m + p of q (p < m, below c n; else 0), + masks[p - m][i] for p >= m (i < count - 1),
// - masks[p][i - 1] for p < h (i >= 1); h = 2n - m. One thread per (row, chunk).
extern "C" __global__ void quotient_zk_scatter_kernel(const u64* __restrict__ coeffs, const u64* __restrict__ masks,
                                                      u64* __restrict__ out, u32 log_n, u32 c, u32 count, u64 m) {
    const u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    const u64 n = 1ull << log_n;
    if (t >= 2 * n * count) return;
    const u64 p = t / count, i = t % count;
    const u64 h = 2 * n - m;
    const u64 mw = 3 * (u64)(count - 1);
    u64 v[3] = {0, 0, 0};
    const u64 g = i * m + p;
    if (p < m && g < (u64)c * n) {
        const u64* src = coeffs + (g % n) * 3 * c + 3 * (g / n);
        for (int e = 0; e < 3; e++) v[e] = gl_canon(src[e]);
    }
    if (p >= m && i + 1 < count) {
        const u64* r = masks + (p - m) * mw + 3 * i;
        for (int e = 0; e < 3; e++) v[e] = gl_add(v[e], gl_canon(r[e]));
    }
    if (p < h && i >= 1) {
        const u64* r = masks + p * mw + 3 * (i - 1);
        for (int e = 0; e < 3; e++) v[e] = gl_sub(v[e], gl_canon(r[e]));
    }
    u64* dst = out + p * 3 * count + 3 * i;
    for (int e = 0; e < 3; e++) dst[e] = v[e];
}
