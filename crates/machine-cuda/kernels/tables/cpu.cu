// Fill kernel of the CPU table with its MEMW_R register-access group (mirrors crates/machine/src/tables/cpu.rs:
// `cpu_row`, `cpu_padding_row`, `cpu_trace`); see common.cuh for the conventions.
//
// Inputs (all device buffers, uploaded once):
// * `cycles`: the record's `CycleEvent`s as they are (32 B each, docs/record.md), `n_cycles` of them;
// * `walk`: the host register walk's `RegWalk` per cycle (20 B each): old timestamps of the rs1/rs2/rd
//   accesses and the overwritten rd value;
// * `row_of_pc[(pc - base_pc) / 4]`: DECODE row of pc (`n_slots` u32, 0xffffffff = none), and `decode_rows`:
//   the DECODE preprocessed rows, `rows x 23` u64 (pc, then the 22 decoded fields).
// Output: `height x 44` row-major u64 (natural order, canonical field elements), padding rows included.
// Lookups: 4 RANGE16 of the result halves per real row and 2 per register access (LT32), plus 4 RANGE16[0]
// per padding row. RANGE16[0] is by far the hottest counter (high halves of small values, the high half of
// nearly every LT32 gap, all padding rows), so those are summed per warp and added with one atomic.
#include "table_common.cuh"

// CpuCols / DecodePrepCols offsets, CycleEvent, RegWalk, ALU codes: layout.cuh (generated).
static_assert(CPU_COL_DEC_LEN == DECODE_PREP_COL_DEC_LEN, "CpuCols.dec and DecodePrepCols.dec differ");

// RANGE16[x]: counted unless x = 0, which the caller sums (returns 1 then).
ZKRV_HD u32 cpu_u16(u32* counts, u64 x) {
    if (x == 0) return 1;
    lookup_add(counts, LK_U16, x);
    return 0;
}

// LT32(old_ts, ts; d0): writes d0, counts both halves of ts - old_ts - 1; returns the number of zero halves.
ZKRV_HD u32 cpu_lt32(u32* counts, u64 old_ts, u64 ts, u64* d0) {
    u64 d = ts - old_ts - 1;
    *d0 = d & 0xffff;
    return cpu_u16(counts, d & 0xffff) + cpu_u16(counts, d >> 16);
}

// Row `row` (< height) of the CPU table. Returns how many RANGE16[0] lookups the row makes (not yet counted);
// the first padding row returns those of all padding rows, 4 (height - n_cycles). `end_pc`: a paused segment's
// end pc, the next pc of the last real row (row n_cycles - 1); CPU_NO_END_PC for a whole run or a last segment,
// whose last row (the halting ECALL) goes on at pc + 4 (zkrv_machine::trace::TraceStart::end_pc).
// Every pc of `cycles` has a DECODE row (the host walk checked it); a pc without one would read DECODE row 0.
// `end_pc` of a record that does not pause (zkrv_machine_cuda::tables::cpu::NO_END_PC).
#define CPU_NO_END_PC (~0ull)

ZKRV_HD u32 cpu_fill_row(u64 row, u64* out, const CycleEvent* cycles, const RegWalk* walk, u64 n_cycles,
                         const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows, u32* counts,
                         u64 height, u64 end_pc) {
    u64* o = out + row * CPU_WIDTH;
    if (row >= n_cycles) {
        for (int c = 0; c < CPU_WIDTH; c++) o[c] = 0;
        o[CPU_COL_CLK] = row;
        o[CPU_COL_NEXT_PC] = 4;
        o[CPU_COL_DEC_FLAGS_IS_PAD] = 1;
        return row == n_cycles ? (u32)(4 * (height - n_cycles)) : 0;
    }
    CycleEvent ev = cycles[row];
    RegWalk w = walk[row];
    u32 slot = (ev.pc - base_pc) >> 2;
    u32 drow = (ev.pc >= base_pc && slot < n_slots) ? row_of_pc[slot] : NO_DECODE_ROW;
    if (drow == NO_DECODE_ROW) drow = 0;
    const u64* d = decode_rows + (u64)drow * DECODE_PREP_WIDTH;  // a DecodePrepCols row
    for (int c = 0; c < CPU_COL_DEC_LEN; c++) o[CPU_COL_DEC + c] = d[DECODE_PREP_COL_DEC + c];
    u32 zeros = 0;
    u64 ts = 4 * row;

    o[CPU_COL_PC] = ev.pc;
    o[CPU_COL_CLK] = row;
    u64 rv1 = d[DECODE_PREP_COL_DEC_FLAGS_RR1] == 1 ? ev.rs1_val : 0;
    u64 rv2 = d[DECODE_PREP_COL_DEC_FLAGS_RR2] == 1 ? ev.rs2_val : 0;
    o[CPU_COL_RV1] = rv1 & 0xffffffffull;
    o[CPU_COL_RV1 + 1] = rv1 >> 32;
    o[CPU_COL_RV2] = rv2 & 0xffffffffull;
    o[CPU_COL_RV2 + 1] = rv2 >> 32;

    // cpu_result
    u64 res;
    if (d[DECODE_PREP_COL_DEC_FLAGS_IS_STORE] == 1) {
        res = ev.rs2_val;
    } else if (d[DECODE_PREP_COL_DEC_FLAGS_IS_BRANCH] == 1) {
        u64 op = d[DECODE_PREP_COL_DEC_OP];
        if (op == ALU_EQ) res = ev.rs1_val == ev.rs2_val;
        else if (op == ALU_SLT) res = (long long)ev.rs1_val < (long long)ev.rs2_val;
        else res = ev.rs1_val < ev.rs2_val;
    } else {
        res = ev.rd_val;
    }
    for (int h = 0; h < 4; h++) {
        u64 half = (res >> (16 * h)) & 0xffff;
        o[CPU_COL_RES + h] = half;
        zeros += cpu_u16(counts, half);
    }

    o[CPU_COL_NEXT_PC] = row + 1 < n_cycles ? (u64)cycles[row + 1].pc : end_pc != CPU_NO_END_PC ? end_pc : (u64)ev.pc + 4;
    o[CPU_COL_TAKEN] = ((d[DECODE_PREP_COL_DEC_FLAGS_IS_BRANCH] == 1 && res == 1 - d[DECODE_PREP_COL_DEC_FLAGS_NEG]) || d[DECODE_PREP_COL_DEC_FLAGS_IS_JAL] == 1) ? 1 : 0;
    u64 imm = d[DECODE_PREP_COL_DEC_IMM] | (d[DECODE_PREP_COL_DEC_IMM + 1] << 32);
    o[CPU_COL_JALR_BIT0] = d[DECODE_PREP_COL_DEC_FLAGS_IS_JALR] == 1 ? ((rv1 + imm) & 1) : 0;
    o[CPU_COL_IS_HALT] = (d[DECODE_PREP_COL_DEC_FLAGS_IS_ECALL] == 1 && (ev.rs1_val == 93 || ev.rs1_val == 94)) ? 1 : 0;

    // MEMW_R group: register accesses at 4 clk + 1, + 2, + 3.
    u64 d0 = 0;
    if (d[DECODE_PREP_COL_DEC_FLAGS_RR1] == 1) {
        zeros += cpu_lt32(counts, w.r1_old_ts, ts + 1, &d0);
        o[CPU_COL_R1_OLD_TS] = w.r1_old_ts;
        o[CPU_COL_R1_D0] = d0;
    } else {
        o[CPU_COL_R1_OLD_TS] = 0;
        o[CPU_COL_R1_D0] = 0;
    }
    if (d[DECODE_PREP_COL_DEC_FLAGS_RR2] == 1) {
        zeros += cpu_lt32(counts, w.r2_old_ts, ts + 2, &d0);
        o[CPU_COL_R2_OLD_TS] = w.r2_old_ts;
        o[CPU_COL_R2_D0] = d0;
    } else {
        o[CPU_COL_R2_OLD_TS] = 0;
        o[CPU_COL_R2_D0] = 0;
    }
    if (d[DECODE_PREP_COL_DEC_FLAGS_WR] == 1) {
        zeros += cpu_lt32(counts, w.w_old_ts, ts + 3, &d0);
        o[CPU_COL_W_OLD_TS] = w.w_old_ts;
        o[CPU_COL_W_D0] = d0;
        o[CPU_COL_W_OLD] = w.w_old[0];
        o[CPU_COL_W_OLD + 1] = w.w_old[1];
    } else {
        o[CPU_COL_W_OLD_TS] = 0;
        o[CPU_COL_W_D0] = 0;
        o[CPU_COL_W_OLD] = 0;
        o[CPU_COL_W_OLD + 1] = 0;
    }
    return zeros;
}

#ifndef ZKRV_HOST_EMU
// One thread per row; grid from `launch_1d(height, 44, ..)` (block a multiple of 32: every warp is full, so
// the warp sum below is well defined; threads past `height` contribute 0).
extern "C" __global__ void cpu_fill(u64* out, const CycleEvent* cycles, const RegWalk* walk, u64 n_cycles,
                                    const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                    u32* counts, u64 height, u64 end_pc) {
    u64 row = global_row();
    u32 zeros = 0;
    if (row < height) {
        zeros = cpu_fill_row(row, out, cycles, walk, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, counts,
                             height, end_pc);
    }
    zeros = __reduce_add_sync(0xffffffffu, zeros);
    if ((threadIdx.x & 31) == 0 && zeros != 0) atomicAdd(&counts[LK_U16 * LK_ROWS], zeros);
}
#endif
