// Fill kernel of the REGFILE table (mirrors crates/machine/src/tables/regfile.rs `regfile_trace`): see common.cuh
// for the conventions.
//
// Input: the final state of every register cell (x0..x31, the input and output cursors) in register order
// (= row order), one `RegfileIn` each (`zkrv_machine_cuda::tables::regfile::RegfileIn`, 16 bytes: final value,
// last-access timestamp). Output: `rows x 5` row-major (RegfileCols order): row r < len is register r
// (is_real = 1), rows len..rows are zero. REGFILE makes no BITWISE lookups.
#include "table_common.cuh"

// RegfileCols offsets (REGFILE_COL_*) and RegfileIn: layout.cuh (generated).

// Writes row `row` (< rows) of the REGFILE trace. `len <= rows`.
ZKRV_HD void regfile_fill_row(u64 row, const RegfileIn* regs, u64 len, u64 rows, u64* trace, u32* counts,
                              u32 lanes) {
    (void)rows;
    (void)counts;
    (void)lanes;
    u64* o = trace + row * REGFILE_WIDTH;
    RegfileIn r = {0, 0};
    const bool real = row < len;
    if (real) r = regs[row];
    o[REGFILE_COL_REG] = real ? row : 0;
    o[REGFILE_COL_FIN] = r.v & 0xffffffffull;
    o[REGFILE_COL_FIN + 1] = r.v >> 32;
    o[REGFILE_COL_FIN_TS] = gl_canon(r.ts);
    o[REGFILE_COL_IS_REAL] = real;
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `regs`: len RegfileIn; `trace`: rows x 5
// u64; `counts`: the lookup histogram (unused: REGFILE makes no lookups; the launch shape of every request fill).
extern "C" __global__ void regfile_fill(const RegfileIn* regs, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    if (row >= rows) return;
    regfile_fill_row(row, regs, len, rows, trace, counts, 0u);
}
#endif
