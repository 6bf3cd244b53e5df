// DECODE multiplicities on the device (mirrors the DECODE counts of crates/machine/src/trace.rs
// `generate_split_at`: one per cycle at its pc's DECODE row, plus one per CPU padding row at row 0): see
// common.cuh for the conventions.
//
// `decode_count`: one thread per CPU row (`height` rows, `n_cycles` real) adds its lookup of DECODE to
// `dcounts` (u32 per DECODE row), aggregated per warp; the thread of row `n_cycles` adds all the padding rows'.
// `row_of_pc` and `base_pc`/`n_slots` are the CPU fill's (`CpuDecode`); a pc without a DECODE row counts at row
// 0, as the CPU fill reads row 0 for it (the host walk refuses such a pc before any fill).
// `decode_fill`: the DECODE main trace (`rows x 1`, DecodeCols) from the counters.
#include "table_common.cuh"

// DecodeCols offsets (DECODE_COL_M), CycleEvent, NO_DECODE_ROW: layout.cuh (generated).
static_assert(DECODE_WIDTH == 1 && DECODE_COL_M == 0, "DECODE main is the one multiplicity column");

// The DECODE row CPU row `row` looks up (LOOKUP_NONE for the padding rows).
ZKRV_HD u32 decode_row_of(u64 row, const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc, u32 base_pc,
                          u32 n_slots) {
    if (row >= n_cycles) return LOOKUP_NONE;
    const u32 pc = cycles[row].pc;
    const u32 slot = (pc - base_pc) >> 2;
    u32 drow = (pc >= base_pc && slot < n_slots) ? row_of_pc[slot] : NO_DECODE_ROW;
    return drow == NO_DECODE_ROW ? 0u : drow;
}

// Counts CPU row `row`'s DECODE lookup into `dcounts` (the padding rows' at row `n_cycles`, all at once).
// `lanes`: on the device, the mask of the warp's lanes calling this (all call it once).
ZKRV_HD void decode_count_row(u64 row, const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc, u32 base_pc,
                              u32 n_slots, u32* dcounts, u64 height, u32 lanes) {
    lookup_key_warp(dcounts, decode_row_of(row, cycles, n_cycles, row_of_pc, base_pc, n_slots), lanes);
    if (row == n_cycles) lookup_add_n(dcounts, 0, 0, (u32)(height - n_cycles));
}

#ifndef ZKRV_HOST_EMU
// One thread per CPU row: `height` threads or more (extra threads return). `cycles`: n_cycles CycleEvent;
// `row_of_pc`: n_slots u32; `dcounts`: u32 per DECODE row (zeroed before the first count).
extern "C" __global__ void decode_count(const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc, u32 base_pc,
                                        u32 n_slots, u32* dcounts, u64 height) {
    u64 row = global_row();
    u32 lanes = __ballot_sync(0xffffffffu, row < height);
    if (row >= height) return;
    decode_count_row(row, cycles, n_cycles, row_of_pc, base_pc, n_slots, dcounts, height, lanes);
}

// One thread per DECODE row: `rows` threads or more. `dcounts`: rows u32; `trace`: rows x 1 u64.
extern "C" __global__ void decode_fill(const u32* dcounts, u64 rows, u64* trace) {
    u64 row = global_row();
    if (row >= rows) return;
    counts_column_row(row, dcounts, trace);
}
#endif
