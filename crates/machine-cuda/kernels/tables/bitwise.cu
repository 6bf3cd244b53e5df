// BITWISE multiplicities on the device (mirrors crates/machine/src/tables/bitwise.rs `Lookups::trace`): see
// common.cuh for the conventions.
//
// Input: the device lookup histogram `counts[kind * LK_ROWS + x]` (every device fill's lookups) and, if not null,
// the host fills' histogram in the same layout. Output: `LK_ROWS x 7` row-major (BitwiseCols order): row x holds
// every kind's count at x, the sum of both histograms (in u64: no u32 wrap-around in the sum).
#include "table_common.cuh"

// BitwiseCols offsets (BITWISE_COL_*), LK_*: layout.cuh (generated).
static_assert(BITWISE_WIDTH == LK_COUNT, "one BITWISE multiplicity column per lookup kind");

// Writes row `x` (< LK_ROWS) of the BITWISE trace.
ZKRV_HD void bitwise_fill_row(u64 x, const u32* counts, const u32* host, u64* trace) {
    u64* o = trace + x * BITWISE_WIDTH;
    const u32 kinds[LK_COUNT] = {LK_U16, LK_MSB16, LK_PAIR, LK_AND, LK_OR, LK_XOR, LK_MSB8};
    const int cols[LK_COUNT] = {BITWISE_COL_M_U16, BITWISE_COL_M_MSB16, BITWISE_COL_M_PAIR, BITWISE_COL_M_AND,
                                BITWISE_COL_M_OR,  BITWISE_COL_M_XOR,   BITWISE_COL_M_MSB8};
    for (u32 k = 0; k < LK_COUNT; k++) {
        const u64 i = (u64)kinds[k] * LK_ROWS + x;
        o[cols[k]] = (u64)counts[i] + (host ? (u64)host[i] : 0ull);
    }
}

#ifndef ZKRV_HOST_EMU
// One thread per row: LK_ROWS threads or more. `counts`, `host` (or null): 7 x 2^16 u32; `trace`: 2^16 x 7 u64.
extern "C" __global__ void bitwise_fill(const u32* counts, const u32* host, u64* trace) {
    u64 x = global_row();
    if (x >= LK_ROWS) return;
    bitwise_fill_row(x, counts, host, trace);
}
#endif
