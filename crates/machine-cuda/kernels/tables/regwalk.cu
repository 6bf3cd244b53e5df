// The register walk on the device (mirrors the register walk of crates/machine/src/trace.rs `generate_split_at`):
// from the record's cycles, every CPU register access's previous timestamp (and, for a write, the overwritten
// value): `RegWalk` per cycle, the CPU fill's input; and every register cell's final value and timestamp
// (`RegfileIn` x REG_CELLS, the REGFILE fill's input). See common.cuh for the conventions.
//
// Accesses (docs/tables.md §6.4): at cycle i (ts = 4 i) a non-exit ECALL (`is_ecall`, a7 = rs1_val not 93/94)
// first reads a1, a2 at ts + 1 and writes its cursor cell (32 input / 33 output; none for fd 2) at ts + 3, adding
// the bytes transferred (`WalkSyscall`, from the record's syscall events); a precompile ECALL (a7 = ECALL_*, no
// `WalkSyscall`) reads a1 at ts + 1 for sha256_compress and no extra register for keccak_f and poseidon2; then
// the row's rs1 read (ts + 1), rs2 read (ts + 2) and rd write (ts + 3) as the DECODE flags say, rd taking the CPU
// result (cpu.cu's `res`).
//
// Method: a per-register scan over chunks of `chunk` cycles, three launches.
// 1. `regwalk_summarize`, one thread per chunk: walks its chunk from an empty state; per register the last
//    access timestamp (0: none), and the last written value (`wrote` = 1) or, for the cursor cells, the sum of
//    the counts added (a delta, `wrote` = 0).
// 2. `regwalk_scan`, one thread per register: sequentially over the chunks, replaces each summary by the state
//    at the chunk's start (exclusive scan; state' = ts ? ts : state.ts, wrote ? val : state.val + val), and writes
//    the final state (RegfileIn per register).
// 3. `regwalk_replay`, one thread per chunk: walks its chunk again from its start state, writing RegWalk per cycle.
// The result is exactly the sequential walk's, for any chunk size.
#include "table_common.cuh"

// CycleEvent, RegWalk, RegfileIn, WalkSyscall, DECODE_PREP_COL_*, REG_CELLS, REG_INPUT_CURSOR, REG_OUTPUT_CURSOR,
// WALK_NO_CURSOR, ECALL_*: layout.cuh (generated).

// The register state a walk thread carries: timestamp, value and `wrote` flag of every register cell.
struct WalkState {
    u32 ts[REG_CELLS];
    u32 wrote[REG_CELLS];
    u64 val[REG_CELLS];
};

// Index of the first syscall at cycle >= `cycle` (the syscalls are in cycle order).
ZKRV_HD u64 regwalk_first_syscall(const WalkSyscall* sys, u64 n_sys, u64 cycle) {
    u64 lo = 0, hi = n_sys;
    while (lo < hi) {
        const u64 mid = (lo + hi) / 2;
        if (sys[mid].cycle < cycle) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Cycle i of the walk: updates `s` (and `*k`, the next syscall) and writes `*w` if not null.
ZKRV_HD void regwalk_cycle(u64 i, const CycleEvent* cycles, const u32* row_of_pc, u32 base_pc, u32 n_slots,
                           const u64* decode_rows, const WalkSyscall* sys, u64 n_sys, u64* k, WalkState* s,
                           RegWalk* w) {
    const CycleEvent ev = cycles[i];
    const u32 slot = (ev.pc - base_pc) >> 2;
    u32 drow = (ev.pc >= base_pc && slot < n_slots) ? row_of_pc[slot] : NO_DECODE_ROW;
    if (drow == NO_DECODE_ROW) drow = 0;
    const u64* d = decode_rows + (u64)drow * DECODE_PREP_WIDTH;
    const u32 ts = (u32)(4 * i);
    if (d[DECODE_PREP_COL_DEC_FLAGS_IS_ECALL] == 1 && ev.rs1_val == ECALL_SHA256_COMPRESS) {
        // sha256_compress reads a1 (the block pointer) at ts + 1 (docs/tables.md §6.19.2).
        s->ts[11] = ts + 1;
    } else if (d[DECODE_PREP_COL_DEC_FLAGS_IS_ECALL] == 1 && ev.rs1_val != 93 && ev.rs1_val != 94 &&
               ev.rs1_val != ECALL_KECCAK_F && ev.rs1_val != ECALL_POSEIDON2) {
        s->ts[11] = ts + 1;
        s->ts[12] = ts + 1;
        if (*k < n_sys && sys[*k].cycle == i) {
            const WalkSyscall c = sys[*k];
            if (c.cursor != WALK_NO_CURSOR) {
                s->val[c.cursor] += c.count;
                s->ts[c.cursor] = ts + 3;
            }
            *k += 1;
        }
    }
    RegWalk out = {0, 0, 0, {0, 0}};
    if (d[DECODE_PREP_COL_DEC_FLAGS_RR1] == 1) {
        const u32 r = (u32)d[DECODE_PREP_COL_DEC_RS1];
        out.r1_old_ts = s->ts[r];
        s->ts[r] = ts + 1;
    }
    if (d[DECODE_PREP_COL_DEC_FLAGS_RR2] == 1) {
        const u32 r = (u32)d[DECODE_PREP_COL_DEC_RS2];
        out.r2_old_ts = s->ts[r];
        s->ts[r] = ts + 2;
    }
    if (d[DECODE_PREP_COL_DEC_FLAGS_WR] == 1) {
        const u32 r = (u32)d[DECODE_PREP_COL_DEC_RD];
        // cpu_result (cpu.cu)
        u64 res;
        if (d[DECODE_PREP_COL_DEC_FLAGS_IS_STORE] == 1) {
            res = ev.rs2_val;
        } else if (d[DECODE_PREP_COL_DEC_FLAGS_IS_BRANCH] == 1) {
            const u64 op = d[DECODE_PREP_COL_DEC_OP];
            if (op == ALU_EQ) res = ev.rs1_val == ev.rs2_val;
            else if (op == ALU_SLT) res = (long long)ev.rs1_val < (long long)ev.rs2_val;
            else res = ev.rs1_val < ev.rs2_val;
        } else {
            res = ev.rd_val;
        }
        out.w_old_ts = s->ts[r];
        out.w_old[0] = (u32)s->val[r];
        out.w_old[1] = (u32)(s->val[r] >> 32);
        s->ts[r] = ts + 3;
        s->val[r] = res;
        s->wrote[r] = 1;
    }
    if (w) *w = out;
}

// The chunk `c` summary (step 1): writes sum_ts / sum_wrote / sum_val[c * REG_CELLS + r].
ZKRV_HD void regwalk_summarize_chunk(u64 c, u64 chunk, const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc,
                                     u32 base_pc, u32 n_slots, const u64* decode_rows, const WalkSyscall* sys,
                                     u64 n_sys, u32* sum_ts, u32* sum_wrote, u64* sum_val) {
    WalkState s;
    for (int r = 0; r < (int)REG_CELLS; r++) {
        s.ts[r] = 0;
        s.wrote[r] = 0;
        s.val[r] = 0;
    }
    const u64 begin = c * chunk, end = begin + chunk < n_cycles ? begin + chunk : n_cycles;
    u64 k = regwalk_first_syscall(sys, n_sys, begin);
    for (u64 i = begin; i < end; i++)
        regwalk_cycle(i, cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys, &k, &s, (RegWalk*)0);
    for (int r = 0; r < (int)REG_CELLS; r++) {
        sum_ts[c * REG_CELLS + r] = s.ts[r];
        sum_wrote[c * REG_CELLS + r] = s.wrote[r];
        sum_val[c * REG_CELLS + r] = s.val[r];
    }
}

// Register `r`'s scan over the `n_chunks` summaries (step 2): each becomes the state at its chunk's start
// (wrote = 0); `init` is the state before cycle 0 (value per register, timestamps 0); writes fin[r].
ZKRV_HD void regwalk_scan_reg(u32 r, u64 n_chunks, const u64* init, u32* sum_ts, u32* sum_wrote, u64* sum_val,
                              RegfileIn* fin) {
    u32 ts = 0;
    u64 val = init[r];
    for (u64 c = 0; c < n_chunks; c++) {
        const u64 j = c * REG_CELLS + r;
        const u32 cts = sum_ts[j], cw = sum_wrote[j];
        const u64 cv = sum_val[j];
        sum_ts[j] = ts;
        sum_wrote[j] = 0;
        sum_val[j] = val;
        if (cts) ts = cts;
        val = cw ? cv : val + cv;
    }
    fin[r].v = val;
    fin[r].ts = ts;
}

// Chunk `c` again from its start state (step 3): writes walk[i] for its cycles.
ZKRV_HD void regwalk_replay_chunk(u64 c, u64 chunk, const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc,
                                  u32 base_pc, u32 n_slots, const u64* decode_rows, const WalkSyscall* sys, u64 n_sys,
                                  const u32* start_ts, const u64* start_val, RegWalk* walk) {
    WalkState s;
    for (int r = 0; r < (int)REG_CELLS; r++) {
        s.ts[r] = start_ts[c * REG_CELLS + r];
        s.wrote[r] = 0;
        s.val[r] = start_val[c * REG_CELLS + r];
    }
    const u64 begin = c * chunk, end = begin + chunk < n_cycles ? begin + chunk : n_cycles;
    u64 k = regwalk_first_syscall(sys, n_sys, begin);
    for (u64 i = begin; i < end; i++)
        regwalk_cycle(i, cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys, &k, &s, &walk[i]);
}

#ifndef ZKRV_HOST_EMU
// Step 1: one thread per chunk (`n_chunks` threads or more).
extern "C" __global__ void regwalk_summarize(u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                             const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                             const WalkSyscall* sys, u64 n_sys, u32* sum_ts, u32* sum_wrote,
                                             u64* sum_val) {
    const u64 c = global_row();
    if (c >= n_chunks) return;
    regwalk_summarize_chunk(c, chunk, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys, sum_ts,
                            sum_wrote, sum_val);
}

// Step 2: one thread per register cell (REG_CELLS threads or more).
extern "C" __global__ void regwalk_scan(u64 n_chunks, const u64* init, u32* sum_ts, u32* sum_wrote, u64* sum_val,
                                        RegfileIn* fin) {
    const u64 r = global_row();
    if (r >= REG_CELLS) return;
    regwalk_scan_reg((u32)r, n_chunks, init, sum_ts, sum_wrote, sum_val, fin);
}

// Step 3: one thread per chunk (`n_chunks` threads or more).
extern "C" __global__ void regwalk_replay(u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                          const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                          const WalkSyscall* sys, u64 n_sys, const u32* start_ts,
                                          const u64* start_val, RegWalk* walk) {
    const u64 c = global_row();
    if (c >= n_chunks) return;
    regwalk_replay_chunk(c, chunk, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys, start_ts,
                         start_val, walk);
}
#endif
