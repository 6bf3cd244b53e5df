// Fill kernel of the PAGE table (mirrors crates/machine/src/tables/page.rs `page_trace`): see common.cuh for the
// conventions.
//
// Input: every cell of every touched page in page order (= row order), one `PageIn` each
// (`zkrv_machine_cuda::tables::page::PageIn`, 16 bytes: final value, cell, last-access timestamp). Output: `rows x 5`
// row-major (PageCols order): row i < len is cell i (is_real = 1), rows len..rows are zero. PAGE makes no BITWISE
// lookups.
#include "table_common.cuh"

// PageCols offsets (PAGE_COL_*) and PageIn: layout.cuh (generated).

// Writes row `row` (< rows) of the PAGE trace. `len <= rows`.
ZKRV_HD void page_fill_row(u64 row, const PageIn* cells, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes) {
    (void)rows;
    (void)counts;
    (void)lanes;
    u64* o = trace + row * PAGE_WIDTH;
    PageIn c = {0, 0, 0};
    const bool real = row < len;
    if (real) c = cells[row];
    o[PAGE_COL_CELL] = c.cell;
    o[PAGE_COL_FIN] = c.v & 0xffffffffull;
    o[PAGE_COL_FIN + 1] = c.v >> 32;
    o[PAGE_COL_FIN_TS] = c.ts;
    o[PAGE_COL_IS_REAL] = real;
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `cells`: len PageIn; `trace`: rows x 5 u64;
// `counts`: the lookup histogram (unused: PAGE makes no lookups; the launch shape of every request fill).
extern "C" __global__ void page_fill(const PageIn* cells, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    if (row >= rows) return;
    page_fill_row(row, cells, len, rows, trace, counts, 0u);
}
#endif
