// Shared helpers of the table fill kernels (kernels/tables/*.cu, mirroring crates/machine/src/tables/*.rs).
//
// Every fill kernel is written as a per-row function `ZKRV_HD void <table>_fill_row(u64 row, ...)` plus a thin
// `extern "C" __global__` wrapper (one thread per row). The same file also compiles as plain C++ with
// `-DZKRV_HOST_EMU` (crates/cuda/tests/common/host_emu.rs): the host parity harness then calls the row function
// in a loop, so the kernel's logic is checked against the Rust fill on machines without a GPU (CI).
//
// Trace layout written by the fills: `rows x width` row-major u64, natural row order, every cell a canonical
// Goldilocks value (< p), i.e. what `RowMajorMatrix::values[i].as_canonical_u64()` holds on the host.
//
// BITWISE lookups: each fill adds its lookups to a device histogram `u32 counts[7 * 65536]`, kind-major in
// `zkrv_machine::tables::bitwise::LookupKind` order (counts[kind * 65536 + x]).
#pragma once

#include "field.cuh"

#define ZKRV_HD __device__ __forceinline__

// Column offsets (`<T>_COL_<FIELD>`, `<T>_WIDTH`), lookup kinds (LK_*), ALU codes (ALU_*) and the upload
// structs, generated from the Rust definitions (crates/machine-cuda/src/layout.rs): kernels address columns by name only.
#include "layout.cuh"

// Count one BITWISE lookup of `kind` at row `x` (< 2^16).
ZKRV_HD void lookup_add(u32* counts, u32 kind, u64 x) {
#ifdef ZKRV_HOST_EMU
    counts[kind * LK_ROWS + (u32)x] += 1;
#else
    atomicAdd(&counts[kind * LK_ROWS + (u32)x], 1u);
#endif
}

// `lookup_add`, aggregated over the warp: the lanes in `lanes` that hit the same counter add their count with
// one atomic (fills whose rows mostly hit a few hot counters, e.g. RANGE16[0], would otherwise serialise on
// them). Every lane in `lanes` must make this same call (same order of calls, same `lanes`); 1-D blocks of a
// multiple of 32 threads (`launch_1d`). Host emulation: plain `lookup_add`.
ZKRV_HD void lookup_add_warp(u32* counts, u32 kind, u64 x, u32 lanes) {
#ifdef ZKRV_HOST_EMU
    (void)lanes;
    lookup_add(counts, kind, x);
#else
    const u32 key = kind * LK_ROWS + (u32)x;
    const u32 peers = __match_any_sync(lanes, key);
    if ((threadIdx.x & 31u) == (u32)(__ffs(peers) - 1)) atomicAdd(&counts[key], (u32)__popc(peers));
#endif
}

// Adds `n` lookups of `kind` at row `x` (one atomic: e.g. the padding rows' lookups of a request table, counted
// by one thread).
ZKRV_HD void lookup_add_n(u32* counts, u32 kind, u64 x, u32 n) {
#ifdef ZKRV_HOST_EMU
    counts[kind * LK_ROWS + (u32)x] += n;
#else
    if (n) atomicAdd(&counts[kind * LK_ROWS + (u32)x], n);
#endif
}

// No lookup: a row's slot in the warp-wide `lookup_key_warp` calls when the row makes none (a padding row).
#define LOOKUP_NONE 0xffffffffu

// Counts one lookup at histogram index `key` (kind * LK_ROWS + x), or none for LOOKUP_NONE, aggregated over the
// warp as `lookup_add_warp` (every lane in `lanes` makes the same sequence of calls; lanes with equal keys add
// their count with one atomic). Host emulation: a plain addition.
ZKRV_HD void lookup_key_warp(u32* counts, u32 key, u32 lanes) {
#ifdef ZKRV_HOST_EMU
    (void)lanes;
    if (key != LOOKUP_NONE) counts[key] += 1;
#else
    const u32 peers = __match_any_sync(lanes, key);
    if (key != LOOKUP_NONE && (u32)(__ffs(peers) - 1) == (threadIdx.x & 31u))
        atomicAdd(&counts[key], (u32)__popc(peers));
#endif
}

// A one-column trace of counters (DECODE and POW2 multiplicities): row `row` is `counts[row]`.
ZKRV_HD void counts_column_row(u64 row, const u32* counts, u64* trace) { trace[row] = counts[row]; }

// The histogram index of a lookup of `kind` at row `x` (< 2^16).
ZKRV_HD u32 lookup_key(u32 kind, u64 x) { return kind * LK_ROWS + (u32)x; }

// RISC-V division (`zkrv_machine::tables::dvrm::divrem`, used by CPU32 and DVRM): by zero q = 2^64 - 1, r = n;
// signed overflow (-2^63 / -1) q = -2^63, r = 0; else truncating division.
ZKRV_HD void rv_divrem(u64 n, u64 d, bool is_signed, u64* q, u64* r) {
    if (d == 0) {
        *q = ~0ull;
        *r = n;
    } else if (is_signed) {
        if (n == 0x8000000000000000ull && d == ~0ull) {
            *q = n;
            *r = 0;
        } else {
            const long long a = (long long)n, b = (long long)d;
            *q = (u64)(a / b);
            *r = (u64)(a % b);
        }
    } else {
        *q = n / d;
        *r = n % d;
    }
}

// Global thread index of a 1-D launch (the row of a fill kernel).
#ifndef ZKRV_HOST_EMU
__device__ __forceinline__ u64 global_row() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
#endif
