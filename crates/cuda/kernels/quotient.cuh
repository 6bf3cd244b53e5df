// Quotient on the GPU: shared helpers of the generated per-AIR quotient row kernels (crates/cuda/src/quotient.rs,
// `quotient_kernel_sources`: one program per AIR, or per part of a large AIR's fold). Mirrors
// crates/stark/src/backend/quotient.rs, `quotient_values`.
//
// Quotient domain g·H_M, M = n · 2^log_q. Thread s (a storage row, s < M) reads LDE storage row s (natural point
// i = bitrev_M(s), x = g ω_M^i) and its next row (natural point i + M/n, storage row `quot_next_row`), evaluates
// the table's circuit and fold there, and writes q(x) = C(x) / Z_H(x) as 3 u64 at q + 3 s (storage order). A split
// AIR's parts run in order: the first writes its partial sum of C(x) there, the later ones add theirs, the last
// multiplies by 1 / Z_H(x).
//
// Parameters (`const u64* params`, uploaded per table and proof):
//   params[0..3)     z            LogUp shift (Ext3)
//   params[3..6)     alpha        the constraint-folding challenge (Ext3)
//   params[6..9)     bus_sum      the table's claimed LogUp sum (Ext3)
//   params[9]        g            coset shift
//   params[10]       omega_m      ω_M
//   params[11]       omega_last   ω_n^(n-1)
//   params[12]       n_inv        1/n
//   params[13 ..]    alpha_l^(l+1), l < L (LogUp tuple powers, Ext3 each; L = the AIR's longest tuple, >= 1)
//   then             alpha^(N-1-i) per own constraint i (Ext3 each)
//   then             the AIR's public values (CompiledAir::public_values, canonical u64 each)
//   then             Z_H(x_i) for i < M/n (Z_H has period M/n on g·H_M), then their inverses
// The offsets past params[13] depend on the AIR's shape only (not on its public values, nor on M/n) and are
// constants of its generated source (crates/cuda/src/quotient.rs, `param_offsets`).
//
// Also compiles as plain C++ with -DZKRV_HOST_EMU (crates/machine-cuda/tests/quotient_parity.rs).
#pragma once

#include "logup.cuh"

#define QUOT_HD __device__ __forceinline__

#define QUOT_P_Z 0
#define QUOT_P_ALPHA 3
#define QUOT_P_BUS_SUM 6
#define QUOT_P_SHIFT 9
#define QUOT_P_OMEGA_M 10
#define QUOT_P_OMEGA_LAST 11
#define QUOT_P_N_INV 12
#define QUOT_P_TUPLE 13

// Products of circuit nodes and the extension sums of the fold are real calls, like the extension products and
// the inverse of logup.cuh: fully inlined straight-line code made ptxas take 6.5-15 s on the largest machine
// table (MEMW: 649 nodes, 51 constraints, 17 interactions) against about 2 s as calls.
__device__ __noinline__ u64 quot_mul(u64 a, u64 b) { return gl_mul(a, b); }
__device__ __noinline__ ext3 quot_add(ext3 a, ext3 b) { return ext3_add(a, b); }
__device__ __noinline__ ext3 quot_sub(ext3 a, ext3 b) { return ext3_sub(a, b); }

// An extension value read from memory (possibly non-canonical u64).
QUOT_HD ext3 quot_ld(const u64* p) { return ext3{gl_canon(p[0]), gl_canon(p[1]), gl_canon(p[2])}; }

// The loads of a split quotient's parts (crates/cuda/src/quotient.rs, QUOTIENT_PART_STATEMENTS): a cell of an LDE
// or the parameter block, which no kernel of the quotient writes, read through the read-only data cache
// (ld.global.nc). NVVM then need not order these loads against the part's calls: with plain loads its time on one
// part grew about quadratically with the part's length (KECCAKF, 2.5k statements: 7.5 s to PTX, 2.3 s with these).
#ifdef ZKRV_HOST_EMU
QUOT_HD u64 quot_cell(const u64* p) { return gl_canon(*p); }
#else
QUOT_HD u64 quot_cell(const u64* p) { return gl_canon(__ldg(p)); }
#endif
QUOT_HD ext3 quot_ld_nc(const u64* p) { return ext3{quot_cell(p), quot_cell(p + 1), quot_cell(p + 2)}; }

QUOT_HD ext3 quot_zero() { return ext3{0, 0, 0}; }

QUOT_HD ext3 quot_base(u64 b) { return ext3{b, 0, 0}; }

QUOT_HD ext3 quot_neg(ext3 a) { return ext3{gl_neg(a.c0), gl_neg(a.c1), gl_neg(a.c2)}; }

QUOT_HD ext3 quot_sub_bus(ext3 a, u64 bus) { return ext3{gl_sub(a.c0, bus), a.c1, a.c2}; }

// The selectors and 1/Z_H at natural point i of g·H_M: L_0 = Z_H n_inv / (x - 1),
// L_{n-1} = ω_last Z_H n_inv / (x - ω_last), transition = x - ω_last (one base-field inverse for both
// denominators). `zh` points at the Z_H table (2^log_q values, then their inverses).
struct quot_point {
    u64 first, last, transition, zh_inv;
};

__device__ __noinline__ quot_point quot_point_at(const u64* params, const u64* zh, u64 i, u32 log_q) {
    const u64 bq = 1ull << log_q;
    const u64 x = gl_mul(params[QUOT_P_SHIFT], gl_pow(params[QUOT_P_OMEGA_M], i));
    const u64 omega_last = params[QUOT_P_OMEGA_LAST];
    const u64 z = zh[i & (bq - 1)];
    const u64 d_first = gl_sub(x, 1);
    const u64 d_last = gl_sub(x, omega_last);
    const u64 inv = gl_inv(gl_mul(d_first, d_last));
    const u64 zn = gl_mul(z, params[QUOT_P_N_INV]);
    quot_point p;
    p.first = gl_mul(zn, gl_mul(inv, d_last));
    p.last = gl_mul(gl_mul(omega_last, zn), gl_mul(inv, d_first));
    p.transition = d_last;
    p.zh_inv = zh[bq + (i & (bq - 1))];
    return p;
}

// Storage row of the next point: storage row s = bitrev_q(lo) n + bitrev_n(hi) holds natural point
// i = hi 2^log_q + lo; its next point i + 2^log_q (mod M) is hi + 1 (mod n) in the same coset of H_n.
QUOT_HD u64 quot_next_row(u64 s, u32 log_n) {
    const u64 mask = (1ull << log_n) - 1;
    const u32 hi = bit_reverse((u32)(s & mask), log_n);
    return (s & ~mask) | (u64)bit_reverse((u32)((hi + 1) & mask), log_n);
}

QUOT_HD void quot_store(u64* p, ext3 v) {
    p[0] = v.c0;
    p[1] = v.c1;
    p[2] = v.c2;
}
