// Goldilocks field and its cubic extension, mirroring crates/stark/src/field.rs.
//
// * Base field F: p = 2^64 - 2^32 + 1. Every function here takes canonical inputs (< p) and returns the
//   canonical result (< p), so the bytes written match `as_canonical_u64()` on the CPU. `gl_canon` reduces a
//   possibly non-canonical u64 (Plonky3 keeps values lazily reduced in memory) and is applied on every load
//   of data that came from the host.
// * Extension Ext3 = F[X] / (X^3 - W), W = 7; `ext3 {c0, c1, c2}` is c0 + c1 X + c2 X^2. Multiplication is the
//   formula of field.rs:
//     c0 = a0 b0 + W (a1 b2 + a2 b1),  c1 = a0 b1 + a1 b0 + W a2 b2,  c2 = a0 b2 + a1 b1 + a2 b0.
#pragma once

// Host emulation (-DZKRV_HOST_EMU: every kernel file also compiles as plain C++ for the CI parity tests, see
// crates/cuda/tests/common/host_emu.rs): the CUDA qualifiers and the two intrinsics used here, defined once.
#ifdef ZKRV_HOST_EMU
#define __device__
#define __forceinline__ inline
#define __global__
#define __noinline__ __attribute__((noinline))
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned int __brev(unsigned int x) {
    unsigned int r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
#endif

typedef unsigned long long u64;
typedef unsigned int u32;

#define GL_P 0xFFFFFFFF00000001ULL
// 2^64 - p = 2^32 - 1
#define GL_EPS 0xFFFFFFFFULL
#define GL_EXT_W 7ULL

__device__ __forceinline__ u64 gl_canon(u64 a) { return a >= GL_P ? a - GL_P : a; }

__device__ __forceinline__ u64 gl_add(u64 a, u64 b) {
    u64 s = a + b;
    // On carry the true sum is s + 2^64 and s + 2^64 - p = s - p (mod 2^64) is < p.
    if (s < a || s >= GL_P) s -= GL_P;
    return s;
}

__device__ __forceinline__ u64 gl_sub(u64 a, u64 b) {
    u64 d = a - b;
    if (a < b) d += GL_P;  // a - b + 2^64 + p = a - b + p (mod 2^64), in [1, p)
    return d;
}

__device__ __forceinline__ u64 gl_neg(u64 a) { return a == 0 ? 0 : GL_P - a; }

// Reduce hi * 2^64 + lo modulo p (Plonky3's reduce128, then canonicalised).
// 2^64 = 2^32 - 1 (mod p) and 2^96 = -1 (mod p).
__device__ __forceinline__ u64 gl_reduce128(u64 lo, u64 hi) {
    u64 hi_hi = hi >> 32;
    u64 hi_lo = hi & GL_EPS;
    u64 t0 = lo - hi_hi;
    if (lo < hi_hi) t0 -= GL_EPS;  // borrow: add p = 2^64 - EPS
    u64 t1 = hi_lo * GL_EPS;       // < 2^64
    u64 t2 = t0 + t1;
    if (t2 < t0) t2 += GL_EPS;     // carry: 2^64 = EPS (mod p); cannot carry again
    return gl_canon(t2);
}

__device__ __forceinline__ u64 gl_mul(u64 a, u64 b) { return gl_reduce128(a * b, __umul64hi(a, b)); }

__device__ __forceinline__ u64 gl_sqr(u64 a) { return gl_mul(a, a); }

__device__ __forceinline__ u64 gl_pow(u64 a, u64 e) {
    u64 acc = 1;
    while (e) {
        if (e & 1) acc = gl_mul(acc, a);
        a = gl_sqr(a);
        e >>= 1;
    }
    return acc;
}

// a^(p-2); 0 maps to 0.
__device__ __forceinline__ u64 gl_inv(u64 a) { return gl_pow(a, GL_P - 2); }

struct ext3 {
    u64 c0, c1, c2;
};

__device__ __forceinline__ ext3 ext3_add(ext3 a, ext3 b) {
    return ext3{gl_add(a.c0, b.c0), gl_add(a.c1, b.c1), gl_add(a.c2, b.c2)};
}

__device__ __forceinline__ ext3 ext3_sub(ext3 a, ext3 b) {
    return ext3{gl_sub(a.c0, b.c0), gl_sub(a.c1, b.c1), gl_sub(a.c2, b.c2)};
}

__device__ __forceinline__ ext3 ext3_mul_base(ext3 a, u64 b) {
    return ext3{gl_mul(a.c0, b), gl_mul(a.c1, b), gl_mul(a.c2, b)};
}

__device__ __forceinline__ ext3 ext3_mul(ext3 a, ext3 b) {
    u64 c0 = gl_add(gl_mul(a.c0, b.c0), gl_mul(GL_EXT_W, gl_add(gl_mul(a.c1, b.c2), gl_mul(a.c2, b.c1))));
    u64 c1 = gl_add(gl_add(gl_mul(a.c0, b.c1), gl_mul(a.c1, b.c0)), gl_mul(GL_EXT_W, gl_mul(a.c2, b.c2)));
    u64 c2 = gl_add(gl_add(gl_mul(a.c0, b.c2), gl_mul(a.c1, b.c1)), gl_mul(a.c2, b.c0));
    return ext3{c0, c1, c2};
}

// Inverse as in field.rs: t0 = a0^2 - W a1 a2, t1 = W a2^2 - a0 a1, t2 = a1^2 - a0 a2,
// N = a0 t0 + W (a2 t1 + a1 t2), inverse = (t0, t1, t2) / N. Zero maps to zero.
__device__ __forceinline__ ext3 ext3_inv(ext3 a) {
    u64 t0 = gl_sub(gl_sqr(a.c0), gl_mul(GL_EXT_W, gl_mul(a.c1, a.c2)));
    u64 t1 = gl_sub(gl_mul(GL_EXT_W, gl_sqr(a.c2)), gl_mul(a.c0, a.c1));
    u64 t2 = gl_sub(gl_sqr(a.c1), gl_mul(a.c0, a.c2));
    u64 norm = gl_add(gl_mul(a.c0, t0), gl_mul(GL_EXT_W, gl_add(gl_mul(a.c2, t1), gl_mul(a.c1, t2))));
    u64 inv = gl_inv(norm);
    return ext3{gl_mul(t0, inv), gl_mul(t1, inv), gl_mul(t2, inv)};
}

__device__ __forceinline__ u32 bit_reverse(u32 x, u32 log_n) { return log_n == 0 ? 0 : __brev(x) >> (32 - log_n); }

#ifdef ZKRV_FIELD_TEST_KERNELS
// Parity kernels for crates/cuda/src/field.rs. a, b: n elements (any u64, reduced on load).
// out: n x 4 row-major: [a + b, a - b, a * b, a^-1].
extern "C" __global__ void field_ops_kernel(const u64* a, const u64* b, u64* out, u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u64 x = gl_canon(a[i]), y = gl_canon(b[i]);
    out[4 * i + 0] = gl_add(x, y);
    out[4 * i + 1] = gl_sub(x, y);
    out[4 * i + 2] = gl_mul(x, y);
    out[4 * i + 3] = gl_inv(x);
}

// a, b: n x 3 (c0, c1, c2). out: n x 12 row-major: [a + b, a - b, a * b, a^-1], 3 coefficients each.
extern "C" __global__ void ext3_ops_kernel(const u64* a, const u64* b, u64* out, u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    ext3 x{gl_canon(a[3 * i]), gl_canon(a[3 * i + 1]), gl_canon(a[3 * i + 2])};
    ext3 y{gl_canon(b[3 * i]), gl_canon(b[3 * i + 1]), gl_canon(b[3 * i + 2])};
    ext3 r[4] = {ext3_add(x, y), ext3_sub(x, y), ext3_mul(x, y), ext3_inv(x)};
    for (int k = 0; k < 4; k++) {
        out[12 * i + 3 * k + 0] = r[k].c0;
        out[12 * i + 3 * k + 1] = r[k].c1;
        out[12 * i + 3 * k + 2] = r[k].c2;
    }
}
#endif
