// Fill kernel of the CPU32 table (mirrors crates/machine/src/tables/cpu32.rs `cpu32_trace`): see common.cuh for
// the conventions.
//
// Input: the W operations `(op, a, b)` in execution order (= row order), one `Cpu32In` each
// (`zkrv_machine_cuda::tables::cpu32::Cpu32In`, 24 bytes; `op` the ALU code ADDW..REMUW, checked by the launcher). Output:
// `rows x 25` row-major (Cpu32Cols order): row i < len is operation i (mu = 1), rows len..rows are padding
// (ADDW 0 + 0 = 0, mu = 0). Lookups per row: RANGE16 of the low halves and MSB16 of the high halves of a_lo,
// b_lo and t_lo, aggregated per warp. The padding rows' lookups (all at 0) are counted in one addition per kind
// by the thread of row `len`. The inner requests (SHIFT, MUL, DVRM) are made by the host (`cpu32_requests`) or
// by requests.cu.
#include "table_common.cuh"

// Cpu32Cols offsets (CPU32_COL_*), Cpu32In and the ALU codes: layout.cuh (generated).

#define CPU32_W 0xffffffffull

// Flag indices of Cpu32Cols::f: op = ALU_ADDW + index.
#define CPU32_ADDW 0
#define CPU32_SUBW 1
#define CPU32_SLLW 2
#define CPU32_SRLW 3
#define CPU32_SRAW 4
#define CPU32_MULW 5
#define CPU32_DIVW 6
#define CPU32_DIVUW 7
#define CPU32_REMW 8
#define CPU32_REMUW 9

ZKRV_HD u64 cpu32_sext(u64 x) { return (u64)(long long)(int)(unsigned)x; }

// Writes row `row` (< rows) of the CPU32 trace and counts its lookups. `len <= rows`. `lanes`: on the device, the
// mask of the warp's lanes calling this function (all of them call it once), unused in host emulation.
ZKRV_HD void cpu32_fill_row(u64 row, const Cpu32In* ops, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes) {
    u64 op = ALU_ADDW, a = 0, b = 0;
    const bool real = row < len;
    if (real) {
        const Cpu32In q = ops[row];
        op = q.op;
        a = q.a;
        b = q.b;
    }
    const int i = (int)(op - ALU_ADDW);
    // The inner request's operands (`EXT` in cpu32.rs): SRLW zero-extends a; SRAW sign-extends a; DIVW/REMW
    // sign-extend both, DIVUW/REMUW zero-extend both; the others keep them.
    u64 a2 = a, b2 = b;
    if (i == CPU32_SRLW || i == CPU32_DIVUW || i == CPU32_REMUW) a2 = a & CPU32_W;
    if (i == CPU32_SRAW || i == CPU32_DIVW || i == CPU32_REMW) a2 = cpu32_sext(a);
    if (i == CPU32_DIVUW || i == CPU32_REMUW) b2 = b & CPU32_W;
    if (i == CPU32_DIVW || i == CPU32_REMW) b2 = cpu32_sext(b);
    const u64 s = b & 31;
    u64 t = 0, q = 0, r = 0;
    switch (i) {
        case CPU32_ADDW: t = (a + b) & CPU32_W; break;
        case CPU32_SUBW: t = (a - b) & CPU32_W; break;
        case CPU32_SLLW: t = a2 << s; break;
        case CPU32_SRLW: t = a2 >> s; break;
        case CPU32_SRAW: t = (u64)((long long)a2 >> s); break;
        case CPU32_MULW: t = a2 * b2; break;
        case CPU32_DIVW:
        case CPU32_REMW:
            rv_divrem(a2, b2, true, &q, &r);
            t = i == CPU32_DIVW ? q : r;
            break;
        default:
            rv_divrem(a2, b2, false, &q, &r);
            t = i == CPU32_DIVUW ? q : r;
            break;
    }
    const u64 x[3] = {a & CPU32_W, b & CPU32_W, t & CPU32_W};
    for (int k = 0; k < 3; k++) {
        lookup_key_warp(counts, real ? lookup_key(LK_U16, x[k] & 0xffff) : LOOKUP_NONE, lanes);
        lookup_key_warp(counts, real ? lookup_key(LK_MSB16, x[k] >> 16) : LOOKUP_NONE, lanes);
    }
    if (row == len) {
        const u32 pad = (u32)(rows - len);
        lookup_add_n(counts, LK_U16, 0, 3u * pad);
        lookup_add_n(counts, LK_MSB16, 0, 3u * pad);
    }
    u64* o = trace + row * CPU32_WIDTH;
    o[CPU32_COL_A] = a & CPU32_W;
    o[CPU32_COL_A + 1] = a >> 32;
    o[CPU32_COL_B] = b & CPU32_W;
    o[CPU32_COL_B + 1] = b >> 32;
    o[CPU32_COL_A_TOP] = (a >> 16) & 0xffff;
    o[CPU32_COL_SA] = (a >> 31) & 1;
    o[CPU32_COL_B_TOP] = (b >> 16) & 0xffff;
    o[CPU32_COL_SB] = (b >> 31) & 1;
    o[CPU32_COL_T] = t & CPU32_W;
    o[CPU32_COL_T + 1] = t >> 32;
    o[CPU32_COL_T_TOP] = (t >> 16) & 0xffff;
    o[CPU32_COL_ST] = (t >> 31) & 1;
    for (int k = 0; k < CPU32_COL_F_LEN; k++) o[CPU32_COL_F + k] = k == i;
    o[CPU32_COL_A2_HI] = a2 >> 32;
    o[CPU32_COL_B2_HI] = b2 >> 32;
    o[CPU32_COL_MU] = real;
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `ops`: len Cpu32In; `trace`: rows x 25 u64;
// `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void cpu32_fill(const Cpu32In* ops, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < rows);
    if (row >= rows) return;
    cpu32_fill_row(row, ops, len, rows, trace, counts, lanes);
}
#endif
