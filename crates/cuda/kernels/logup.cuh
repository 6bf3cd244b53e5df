// LogUp aux trace on the GPU: shared helpers of the generated per-AIR row kernels (crates/cuda/src/logup.rs,
// `aux_kernel_source`) and of the running-sum scan (kernels/logup.cu). Mirrors crates/stark/src/logup.rs,
// `build_aux_trace`.
//
// Aux trace (`n x AW` u64, row-major, natural order, AW = 3 (G + 1)): extension column c (base columns 3c..3c+3,
// coefficients c0, c1, c2) holds the term t_c = sum_{k in group c} m_k / fp_k for c < G, column G the running sum.
// The generated row function writes the terms and, in column G, the row's own sum sum_c t_c; the scan kernels
// of logup.cu then turn column G into its inclusive prefix sum over rows.
//
// Parameters (`const u64* params`, uploaded per build):
//   params[0..3)        z                          (Ext3)
//   params[3]           omega = ω_n                (the trace domain generator)
//   params[4]           omega_last = ω_n^(n-1)
//   params[5]           bound = 2^log_max_multiplicity (a multiplicity m is valid iff m < bound)
//   params[6 + 3 l ..]  alpha^(l+1), l = 0 .. L - 1 (Ext3 each; L = max(the AIR's longest tuple, 1))
//   params[6 + 3 L + i] the AIR's public value i (CompiledAir::public_values, canonical), i < its count
// The offsets past params[6] depend on the AIR's shape only (not on its public values) and are constants of its
// generated source (crates/cuda/src/logup.rs, `aux_param_public`).
// Errors (`u64* err`, 2 entries initialised to ~0): err[0] = min(row * K + k) over multiplicities out of range,
// err[1] = min(row * K + k) over zero fingerprints (the host reports the first in row-major order as well).
//
// The file also compiles as plain C++ with -DZKRV_HOST_EMU (crates/machine-cuda/tests/logup_parity.rs drives the
// generated row function on the host).
#pragma once

#include "field.cuh"

#define LOGUP_HD __device__ __forceinline__

#define LOGUP_P_Z 0
#define LOGUP_P_OMEGA 3
#define LOGUP_P_OMEGA_LAST 4
#define LOGUP_P_BOUND 5
#define LOGUP_P_ALPHA 6

LOGUP_HD ext3 logup_load_ext3(const u64* p) { return ext3{p[0], p[1], p[2]}; }

LOGUP_HD void logup_store_ext3(u64* p, ext3 v) {
    p[0] = v.c0;
    p[1] = v.c1;
    p[2] = v.c2;
}

// err[slot] = min(err[slot], pos).
LOGUP_HD void logup_flag(u64* err, u64 pos) {
#ifdef ZKRV_HOST_EMU
    if (pos < *err) *err = pos;
#else
    atomicMin(err, pos);
#endif
}

// Extension products, the inverse and the fingerprint steps are real calls, and the batch inversion loops are
// not unrolled: inlining all of it into the generated straight-line row functions made ptxas take minutes on
// the largest tables (SYSIO, 26 interactions: 77 s and 800 KB of CUBIN; now about 1 s and 100 KB).
__device__ __noinline__ ext3 logup_ext3_mul(ext3 a, ext3 b) { return ext3_mul(a, b); }
__device__ __noinline__ ext3 logup_ext3_mul_base(ext3 a, u64 b) { return ext3_mul_base(a, b); }
__device__ __noinline__ ext3 logup_ext3_inv(ext3 a) { return ext3_inv(a); }

// fp = z - bus: the start of a fingerprint z - (bus + sum_l alpha^(l+1) v_l).
__device__ __noinline__ ext3 logup_fp_start(const u64* params, u64 bus) {
    ext3 z = logup_load_ext3(params + LOGUP_P_Z);
    z.c0 = gl_sub(z.c0, bus);
    return z;
}

// fp -= alpha^(l+1) * v.
__device__ __noinline__ ext3 logup_fp_absorb(const u64* params, ext3 fp, u32 l, u64 v) {
    return ext3_sub(fp, logup_ext3_mul_base(logup_load_ext3(params + LOGUP_P_ALPHA + 3 * l), v));
}

// In place fp[k] <- fp[k]^-1 for k < K (Montgomery: one extension inverse per row). If some fp[k] is zero,
// flags the first one (err[1] = row * K + k) and returns false (fp is then unspecified).
template <int K>
LOGUP_HD bool logup_batch_inverse(ext3* fp, u64 row, u64* err) {
    ext3 prefix[K];
    ext3 acc = ext3{1, 0, 0};
#pragma unroll 1
    for (int k = 0; k < K; k++) {
        prefix[k] = acc;
        acc = logup_ext3_mul(acc, fp[k]);
    }
    if (acc.c0 == 0 && acc.c1 == 0 && acc.c2 == 0) {
        for (int k = 0; k < K; k++) {
            if (fp[k].c0 == 0 && fp[k].c1 == 0 && fp[k].c2 == 0) {
                logup_flag(err + 1, row * (u64)K + (u64)k);
                break;
            }
        }
        return false;
    }
    ext3 inv = logup_ext3_inv(acc);
#pragma unroll 1
    for (int k = K - 1; k >= 0; k--) {
        ext3 x = fp[k];
        fp[k] = logup_ext3_mul(inv, prefix[k]);
        inv = logup_ext3_mul(inv, x);
    }
    return true;
}
