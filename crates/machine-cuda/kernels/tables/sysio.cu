// Fill kernels of the SYSCALL and SYSIO tables (mirror crates/machine/src/tables/sysio.rs `syscall_trace`,
// `sysio_trace`): see common.cuh for the conventions.
//
// SYSCALL input: one `SyscallIn` per `read`/`write` ECALL in execution order (= row order;
// `zkrv_machine_cuda::tables::sysio::SyscallIn`, 72 bytes). Output: `rows x 18` (SyscallCols order), rows len..rows zero.
// Lookups per real row: LT32 (two RANGE16) of the a1 and a2 reads, of the cursor (fd 0/1) and of `count < len`
// (a short read).
//
// SYSIO input: one `SysioIn` per cell transferred (= row order; `zkrv_machine_cuda::tables::sysio::SysioIn`, 64 bytes,
// bytes little-endian in u64, `meta = offset | n << 8 | is_read << 16`). Output: `rows x 40` (SysioCols order);
// padding rows are zero but for sel[0] = 1. Lookups per real row: LT32 of the cell access and PAIR of the four
// byte pairs of the new cell. Every gap `ts - old_ts - 1` is < 2^32 (checked by the packers).
#include "table_common.cuh"

// SyscallCols / SysioCols offsets, SyscallIn, SysioIn: layout.cuh (generated).

// LT32(old_ts, ts; d0): counts both halves of ts - old_ts - 1, returns d0.
ZKRV_HD u64 sysio_lt32(u32* counts, u64 old_ts, u64 ts) {
    const u64 d = ts - old_ts - 1;
    lookup_add(counts, LK_U16, d & 0xffff);
    lookup_add(counts, LK_U16, d >> 16);
    return d & 0xffff;
}

// Writes row `row` (< rows) of the SYSCALL trace and counts its lookups. `len <= rows`.
ZKRV_HD void syscall_fill_row(u64 row, const SyscallIn* in, u64 len, u64 rows, u64* trace, u32* counts,
                              u32 lanes) {
    (void)rows;
    (void)lanes;
    u64* o = trace + row * SYSCALL_WIDTH;
    for (int c = 0; c < SYSCALL_WIDTH; c++) o[c] = 0;
    if (row >= len) return;
    const SyscallIn e = in[row];
    const bool is_short = e.fd == 0 && e.count < e.len;
    o[SYSCALL_COL_TS] = gl_canon(e.ts);
    o[SYSCALL_COL_IS_OUT] = e.fd == 1;
    o[SYSCALL_COL_IS_DBG] = e.fd == 2;
    o[SYSCALL_COL_IS_IN] = e.fd == 0;
    o[SYSCALL_COL_COUNT] = gl_canon(e.count);
    o[SYSCALL_COL_SHORT] = is_short;
    o[SYSCALL_COL_BUF] = gl_canon(e.buf);
    o[SYSCALL_COL_LEN] = gl_canon(e.len);
    o[SYSCALL_COL_A1_OLD_TS] = gl_canon(e.a1_old_ts);
    o[SYSCALL_COL_A1_D0] = sysio_lt32(counts, e.a1_old_ts, e.ts);
    o[SYSCALL_COL_A2_OLD_TS] = gl_canon(e.a2_old_ts);
    o[SYSCALL_COL_A2_D0] = sysio_lt32(counts, e.a2_old_ts, e.ts);
    if (is_short) o[SYSCALL_COL_SHORT_D0] = sysio_lt32(counts, e.count, e.len);
    if (e.fd != 2) {
        o[SYSCALL_COL_CURSOR] = gl_canon(e.cursor);
        o[SYSCALL_COL_CURSOR_OLD_TS] = gl_canon(e.cursor_old_ts);
        o[SYSCALL_COL_CURSOR_D0] = sysio_lt32(counts, e.cursor_old_ts, e.ts + 2);
    }
}

// Writes row `row` (< rows) of the SYSIO trace and counts its lookups. `len <= rows`.
ZKRV_HD void sysio_fill_row(u64 row, const SysioIn* in, u64 len, u64 rows, u64* trace, u32* counts, u32 lanes) {
    (void)rows;
    (void)lanes;
    u64* o = trace + row * SYSIO_WIDTH;
    for (int c = 0; c < SYSIO_WIDTH; c++) o[c] = 0;
    if (row >= len) {
        o[SYSIO_COL_SEL] = 1;
        return;
    }
    const SysioIn e = in[row];
    const u32 offset = (u32)(e.meta & 0xff), n = (u32)((e.meta >> 8) & 0xff);
    o[SYSIO_COL_TS] = gl_canon(e.ts);
    o[SYSIO_COL_CELL] = gl_canon(e.cell);
    o[SYSIO_COL_SEL + offset] = 1;
    for (u32 j = offset; j < offset + n; j++) o[SYSIO_COL_MASK + j] = 1;
    for (int j = 0; j < 8; j++) {
        o[SYSIO_COL_OLD + j] = (e.old_bytes >> (8 * j)) & 0xff;
        o[SYSIO_COL_NEW + j] = (e.new_bytes >> (8 * j)) & 0xff;
    }
    o[SYSIO_COL_IS_READ] = (e.meta >> 16) & 1;
    o[SYSIO_COL_POS] = gl_canon(e.pos);
    o[SYSIO_COL_REM] = gl_canon(e.rem);
    o[SYSIO_COL_OLD_TS] = gl_canon(e.old_ts);
    o[SYSIO_COL_D0] = sysio_lt32(counts, e.old_ts, e.ts);
    o[SYSIO_COL_MU] = 1;
    for (int k = 0; k < 4; k++) {
        const u64 a = (e.new_bytes >> (16 * k)) & 0xff, b = (e.new_bytes >> (16 * k + 8)) & 0xff;
        lookup_add(counts, LK_PAIR, (a << 8) | b);
    }
}

#ifndef ZKRV_HOST_EMU
// One thread per row: `rows` threads or more (extra threads return). `in`: len SyscallIn; `trace`: rows x 18 u64;
// `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void syscall_fill(const SyscallIn* in, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    if (row >= rows) return;
    syscall_fill_row(row, in, len, rows, trace, counts, 0u);
}

// One thread per row: `rows` threads or more (extra threads return). `in`: len SysioIn; `trace`: rows x 40 u64;
// `counts`: the 7 x 2^16 u32 lookup histogram.
extern "C" __global__ void sysio_fill(const SysioIn* in, u64 len, u64 rows, u64* trace, u32* counts) {
    u64 row = global_row();
    if (row >= rows) return;
    sysio_fill_row(row, in, len, rows, trace, counts, 0u);
}
#endif
