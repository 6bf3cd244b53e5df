// The memory walk on the device (mirrors the memory walk of crates/machine/src/trace.rs `generate_split_at`):
// from the record's cycles, every load/store/syscall-I/O cell access's previous bytes and timestamp, and from
// them what the LOAD, STORE, MEMW_A, MEMW, PAGE and SYSIO fills read. See common.cuh for the conventions.
//
// Accesses (docs/tables.md): a load/store at cycle i (ts = 4 i + 1, the DECODE flags say which) of `width`
// bytes at addr = rs1_val + imm touches cell addr >> 3, and also the next cell when it crosses a cell boundary
// (offset + width > 8); a store writes its bytes. A `read`/`write` ECALL at cycle i touches, at ts 4 i + 1, the
// cells of its SYSIO rows (host-made `SysioIn`, in cycle order), a read writing the transferred bytes. A
// precompile ECALL at cycle i (docs/tables.md §6.19: word 0x73, a7 = ECALL_*) touches, at ts 4 i + 1, the cells of
// its event in the record (`KeccakEvent`, `Sha256Event`, `Poseidon2Event`, each list in cycle order): keccak_f the
// 25 state cells and poseidon2 the 8 (each read as the event's input and written with its output),
// sha256_compress the 4 state cells (read and written) then the 8 block cells (read, written back unchanged). A cell's
// first access reads the record's initial page image and timestamp 0. Cells are numbered densely: the k-th
// touched page (sorted page list) holds cells 512 k .. 512 k + 511.
//
// Method:
// 1. `memwalk_count`, one thread per chunk of `chunk` cycles: counts the chunk's items (touched cells), loads,
//    stores, in-cell (MEMW_A) and cell-crossing (MEMW) accesses -> counts[cat * (n_chunks + 1) + chunk]; the
//    driver scans each category (sort.cu `sort_scan`) into the chunk's first output index, the totals last.
// 2. `memwalk_emit`, one thread per chunk again: writes every item (dense cell = the sort key, ts, written-byte
//    mask and bytes) in cycle order, and the per-table lists (cycle + first item index of every load, store,
//    in-cell and crossing access; every SYSIO row's item index; every precompile call's first item index, the
//    calls numbered keccak_f, then sha256_compress, then poseidon2). A cell outside the touched pages is an error,
//    and so is a precompile ECALL without its event or an event at a cycle that is no such ECALL.
// 3. the items are sorted stably by dense cell (sort.cu), so each cell's accesses are consecutive in ts order.
// 4. a segmented scan over the sorted items whose operator composes byte-masked writes (later writer's bytes
//    win where its mask is set; associative): `memwalk_seg_summarize` (one thread per chunk of MW_SEG items: the
//    writes since the chunk's last cell start), `memwalk_seg_scan` (one block: exclusive scan of the summaries)
//    and `memwalk_seg_replay` (each item's previous bytes = the initial cell overlaid with the writes before it,
//    previous ts = the previous item's if the same cell, else 0; each cell's final bytes and ts into PageIn).
// 5. `memwalk_memw_a`, `memwalk_memw`, `memwalk_loads`, `memwalk_sysio`, `memwalk_calls`, `memwalk_page_check`:
//    the fills' inputs (MemwARecIn, MemwIn, SysioIn patched in place, every precompile call's cells' previous
//    timestamps) and the host walk's checks (a load's value equals the executor's, a `write` reads the bytes
//    memory holds, a precompile call's event reads the bytes memory holds, the final cells equal the executor's
//    final pages).
// Errors: err[MW_ERR_*] holds the smallest offending cycle / row / dense cell (MW_NO_ERR: none), read back
// by the driver, which fails the walk naming it.
#include "table_common.cuh"

// CycleEvent, MemwARecIn, MemwIn, PageIn, SysioIn, DECODE_PREP_*: layout.cuh (generated).

// Categories of step 1.
#define MW_ITEMS 0
#define MW_LOADS 1
#define MW_STORES 2
#define MW_IN_CELL 3
#define MW_CROSS 4
#define MW_CALLS 5  // precompile calls matched with their events
#define MW_CATS 6
// err[] slots.
#define MW_ERR_PAGE 0    // cycle of an access to a cell outside the record's pages
#define MW_ERR_LOAD 1    // cycle of a load whose value is not the executor's
#define MW_ERR_SYSIO 2   // SYSIO row of a `write` whose bytes memory does not hold
#define MW_ERR_FINAL 3   // dense cell whose final bytes are not the executor's final memory
#define MW_ERR_ADDR 4    // cycle of a load/store (DECODE flags) whose word has no load/store opcode
#define MW_ERR_CALL 5    // cycle of a precompile ECALL without its event, or of an event at no such ECALL
#define MW_ERR_CALL_MEM 6  // cycle of a precompile call whose event's input is not what memory holds
#define MW_ERRS 7
#define MW_NO_ERR 0xffffffffu
// Dense cell of an access outside the pages (sorts last).
#define MW_NO_CELL 0xffffffffu
#define MW_CELLS_PER_PAGE 512u
// Sorted items per thread of the segmented scan.
#define MW_SEG 32u
// Threads of `memwalk_seg_scan`.
#define MW_SCAN_BLOCK 1024u

ZKRV_HD void mw_error(u32* err, u32 slot, u32 v) {
#ifdef ZKRV_HOST_EMU
    if (v < err[slot]) err[slot] = v;
#else
    atomicMin(&err[slot], v);
#endif
}

// 0xff in every byte whose bit is set in `mask` (8 bits).
ZKRV_HD u64 mw_expand(u32 mask) {
    u64 e = 0;
#pragma unroll
    for (u32 k = 0; k < 8; k++)
        if ((mask >> k) & 1u) e |= 0xffull << (8 * k);
    return e;
}

// A load/store as the walk sees it.
struct MwAccess {
    u32 mem;    // a load or a store (DECODE flags)
    u32 store;  // a store
    u32 bad;    // mem, but the word has no load/store opcode (the host walk's "no address")
    u64 addr;
    u32 widx, offset, cross;
};

ZKRV_HD MwAccess mw_access(const CycleEvent& ev, const u32* row_of_pc, u32 base_pc, u32 n_slots,
                           const u64* decode_rows) {
    const u32 slot = (ev.pc - base_pc) >> 2;
    u32 drow = (ev.pc >= base_pc && slot < n_slots) ? row_of_pc[slot] : NO_DECODE_ROW;
    if (drow == NO_DECODE_ROW) drow = 0;
    const u64* d = decode_rows + (u64)drow * DECODE_PREP_WIDTH;
    MwAccess a = {0, 0, 0, 0, 0, 0, 0};
    const u32 is_load = d[DECODE_PREP_COL_DEC_FLAGS_IS_LOAD] == 1, is_store = d[DECODE_PREP_COL_DEC_FLAGS_IS_STORE] == 1;
    a.mem = is_load | is_store;
    if (!a.mem) return a;
    a.store = is_store;
    const u32 w = ev.word, opcode = w & 0x7fu;
    int imm;
    if (opcode == 0x03u) imm = (int)w >> 20;
    else if (opcode == 0x23u) imm = (((int)w >> 25) << 5) | (int)((w >> 7) & 31u);
    else {
        a.bad = 1;
        imm = 0;
    }
    a.addr = ev.rs1_val + (u64)(long long)imm;
    a.widx = (w >> 12) & 3u;
    a.offset = (u32)a.addr & 7u;
    a.cross = a.offset + (1u << a.widx) > 8;
    return a;
}

// The written-byte mask (8 bits) and bytes of half `h` (cell addr >> 3 plus h) of a store.
ZKRV_HD void mw_store_half(const MwAccess& a, u64 val, u32 h, u32* mask, u64* data) {
    u32 m = 0;
    u64 dd = 0;
    const u32 width = 1u << a.widx;
#pragma unroll
    for (u32 k = 0; k < 8; k++) {
        const u32 j = 8 * h + k - a.offset;  // wraps when below the offset
        if (j < width) {
            m |= 1u << k;
            dd |= ((val >> (8 * j)) & 0xffull) << (8 * k);
        }
    }
    *mask = m;
    *data = dd;
}

// Dense index of `cell` among the cells of the sorted pages, or MW_NO_CELL.
ZKRV_HD u32 mw_dense(u64 cell, const u32* pages, u32 n_pages) {
    const u64 page = (cell << 3) & ~4095ull;
    u32 lo = 0, hi = n_pages;
    while (lo < hi) {
        const u32 mid = (lo + hi) / 2;
        if ((u64)pages[mid] < page) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n_pages || (u64)pages[lo] != page || (cell >> 61) != 0) return MW_NO_CELL;
    return lo * MW_CELLS_PER_PAGE + (u32)(cell & (MW_CELLS_PER_PAGE - 1));
}

// Index of the first SYSIO row at ts >= `ts` (rows in ts order).
ZKRV_HD u64 mw_first_sysio(const SysioIn* sys, u64 n_sys, u64 ts) {
    u64 lo = 0, hi = n_sys;
    while (lo < hi) {
        const u64 mid = (lo + hi) / 2;
        if (sys[mid].ts < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// SYSIO row meta: the transferred bytes' mask.
ZKRV_HD u32 mw_sysio_mask(u64 meta) {
    const u32 offset = (u32)(meta & 0xff), n = (u32)((meta >> 8) & 0xff);
    return (((1u << n) - 1u) << offset) & 0xffu;
}

// The record's precompile calls (each list in cycle order).
struct MwCalls {
    const KeccakEvent* kec;
    u64 n_kec;
    const Sha256Event* sha;
    u64 n_sha;
    const Poseidon2Event* p2;
    u64 n_p2;
};

// Cells touched per call of each kind (keccak_f, sha256_compress, poseidon2).
#define MW_KEC_CELLS 25u
#define MW_SHA_CELLS 12u
#define MW_P2_CELLS 8u

// Number of calls of kind `kind` and the cycle of call k of it.
ZKRV_HD u64 mw_calls_len(const MwCalls& c, u32 kind) { return kind == 0 ? c.n_kec : kind == 1 ? c.n_sha : c.n_p2; }
ZKRV_HD u64 mw_call_cycle(const MwCalls& c, u32 kind, u64 k) {
    return kind == 0 ? c.kec[k].cycle : kind == 1 ? c.sha[k].cycle : c.p2[k].cycle;
}
ZKRV_HD u32 mw_call_cells(u32 kind) { return kind == 0 ? MW_KEC_CELLS : kind == 1 ? MW_SHA_CELLS : MW_P2_CELLS; }
ZKRV_HD u64 mw_call_num(u32 kind) {
    return kind == 0 ? ECALL_KECCAK_F : kind == 1 ? ECALL_SHA256_COMPRESS : ECALL_POSEIDON2;
}

// Cell j of call k of kind `kind` (trace.rs's host walk order): its index, the value the call reads (the
// event's input) and writes, and the written-byte mask (0: read only).
ZKRV_HD void mw_call_cell(const MwCalls& c, u32 kind, u64 k, u32 j, u64* cell, u64* old, u64* nw, u32* mask) {
    if (kind == 0) {
        const KeccakEvent& e = c.kec[k];
        *cell = e.state_ptr / 8 + j;
        *old = e.input[j];
        *nw = e.output[j];
        *mask = 0xffu;
    } else if (kind == 1) {
        const Sha256Event& e = c.sha[k];
        if (j < 4) {
            *cell = e.state_ptr / 8 + j;
            *old = (u64)e.state_in[2 * j] | (u64)e.state_in[2 * j + 1] << 32;
            *nw = (u64)e.state_out[2 * j] | (u64)e.state_out[2 * j + 1] << 32;
            *mask = 0xffu;
        } else {
            u64 v = 0;
            for (u32 b = 0; b < 8; b++) v |= (u64)e.block[8 * (j - 4) + b] << (8 * b);
            *cell = e.block_ptr / 8 + (j - 4);
            *old = v;
            *nw = v;
            *mask = 0;
        }
    } else {
        const Poseidon2Event& e = c.p2[k];
        *cell = e.state_ptr / 8 + j;
        *old = e.input[j];
        *nw = e.output[j];
        *mask = 0xffu;
    }
}

// Index of the first call of kind `kind` at cycle >= `cycle`.
ZKRV_HD u64 mw_first_call(const MwCalls& c, u32 kind, u64 cycle) {
    u64 lo = 0, hi = mw_calls_len(c, kind);
    while (lo < hi) {
        const u64 mid = (lo + hi) / 2;
        if (mw_call_cycle(c, kind, mid) < cycle) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The walk's outputs of step 2 (null in step 1).
struct MwLists {
    u32* key;       // items: dense cell (sort key)
    u32* ts;        // items: timestamp
    u32* mask;      // items: written-byte mask
    u64* data;      // items: written bytes (at their positions in the cell)
    u32* load_clk;  // loads: cycle, first item
    u32* load_item;
    u32* store_clk;  // stores: cycle
    u32* a_clk;      // in-cell accesses: cycle, item
    u32* a_item;
    u32* g_clk;  // crossing accesses: cycle, first item (the second is the next)
    u32* g_item;
    u32* sys_item;  // SYSIO rows: item
    u32* call_item;  // precompile calls (keccak_f, then sha256_compress, then poseidon2): first item
};

// Steps 1 and 2 for chunk `c`: counts the chunk's entries per category into cnt[] (step 1, `out` null), or
// writes them from the chunk's first indices in cnt[] (step 2). `err`: see MW_ERR_*.
ZKRV_HD void memwalk_chunk(u64 c, u64 chunk, const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc,
                           u32 base_pc, u32 n_slots, const u64* decode_rows, const SysioIn* sys, u64 n_sys,
                           const MwCalls& calls, const u32* pages, u32 n_pages, u32* cnt, const MwLists* out,
                           u32* err) {
    const u64 begin = c * chunk, end = begin + chunk < n_cycles ? begin + chunk : n_cycles;
    u64 k = mw_first_sysio(sys, n_sys, 4 * begin + 1);
    u64 kc[3];
    for (u32 kind = 0; kind < 3; kind++) kc[kind] = mw_first_call(calls, kind, begin);
    for (u64 i = begin; i < end; i++) {
        const CycleEvent ev = cycles[i];
        const u32 ts = (u32)(4 * i + 1);
        const MwAccess a = mw_access(ev, row_of_pc, base_pc, n_slots, decode_rows);
        if (a.mem) {
            if (a.bad && out) mw_error(err, MW_ERR_ADDR, (u32)i);
            const u32 item = cnt[MW_ITEMS];
            if (out) {
                for (u32 h = 0; h <= a.cross; h++) {
                    const u32 dc = mw_dense((a.addr >> 3) + h, pages, n_pages);
                    if (dc == MW_NO_CELL) mw_error(err, MW_ERR_PAGE, (u32)i);
                    u32 m = 0;
                    u64 dd = 0;
                    if (a.store) mw_store_half(a, ev.rs2_val, h, &m, &dd);
                    out->key[item + h] = dc;
                    out->ts[item + h] = ts;
                    out->mask[item + h] = m;
                    out->data[item + h] = dd;
                }
                if (a.store) {
                    out->store_clk[cnt[MW_STORES]] = (u32)i;
                } else {
                    out->load_clk[cnt[MW_LOADS]] = (u32)i;
                    out->load_item[cnt[MW_LOADS]] = item;
                }
                if (a.cross) {
                    out->g_clk[cnt[MW_CROSS]] = (u32)i;
                    out->g_item[cnt[MW_CROSS]] = item;
                } else {
                    out->a_clk[cnt[MW_IN_CELL]] = (u32)i;
                    out->a_item[cnt[MW_IN_CELL]] = item;
                }
            }
            cnt[MW_ITEMS] += 1 + a.cross;
            cnt[a.store ? MW_STORES : MW_LOADS] += 1;
            cnt[a.cross ? MW_CROSS : MW_IN_CELL] += 1;
        }
        // The SYSIO rows of this cycle (an ECALL: never a load/store).
        for (; k < n_sys && sys[k].ts == ts; k++) {
            if (out) {
                const SysioIn s = sys[k];
                const u32 item = cnt[MW_ITEMS];
                const u32 dc = mw_dense(s.cell, pages, n_pages);
                if (dc == MW_NO_CELL) mw_error(err, MW_ERR_PAGE, (u32)i);
                const u32 is_read = (u32)((s.meta >> 16) & 1);
                const u32 m = is_read ? mw_sysio_mask(s.meta) : 0u;
                out->key[item] = dc;
                out->ts[item] = ts;
                out->mask[item] = m;
                out->data[item] = s.new_bytes & mw_expand(m);
                out->sys_item[k] = item;
            }
            cnt[MW_ITEMS] += 1;
        }
        // A precompile call: the cells of its event (an ECALL: never a load/store, no SYSIO rows).
        u64 first = 0;
        for (u32 kind = 0; kind < 3; kind++) {
            const bool has = kc[kind] < mw_calls_len(calls, kind) && mw_call_cycle(calls, kind, kc[kind]) == i;
            const bool called = ev.word == 0x73u && ev.rs1_val == mw_call_num(kind);
            if (has != called) {
                if (out) mw_error(err, MW_ERR_CALL, (u32)i);
            } else if (has) {
                const u32 n = mw_call_cells(kind);
                if (out) {
                    const u32 item = cnt[MW_ITEMS];
                    for (u32 j = 0; j < n; j++) {
                        u64 cell, old, nw;
                        u32 m;
                        mw_call_cell(calls, kind, kc[kind], j, &cell, &old, &nw, &m);
                        const u32 dc = mw_dense(cell, pages, n_pages);
                        if (dc == MW_NO_CELL) mw_error(err, MW_ERR_PAGE, (u32)i);
                        out->key[item + j] = dc;
                        out->ts[item + j] = ts;
                        out->mask[item + j] = m;
                        out->data[item + j] = nw & mw_expand(m);
                    }
                    out->call_item[first + kc[kind]] = item;
                }
                cnt[MW_ITEMS] += n;
                cnt[MW_CALLS] += 1;
            }
            if (has) kc[kind] += 1;
            first += mw_calls_len(calls, kind);
        }
    }
}

// Step 1 for chunk `c`: counts[cat * (n_chunks + 1) + c].
ZKRV_HD void memwalk_count_chunk(u64 c, u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                 const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                 const SysioIn* sys, u64 n_sys, const MwCalls& calls, u32* counts) {
    u32 cnt[MW_CATS];
    for (u32 k = 0; k < MW_CATS; k++) cnt[k] = 0;
    memwalk_chunk(c, chunk, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys, calls,
                  (const u32*)0, 0, cnt, (const MwLists*)0, (u32*)0);
    for (u32 k = 0; k < MW_CATS; k++) counts[k * (n_chunks + 1) + c] = cnt[k];
}

// Step 2 for chunk `c` from the scanned counts.
ZKRV_HD void memwalk_emit_chunk(u64 c, u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                const SysioIn* sys, u64 n_sys, const MwCalls& calls, const u32* pages, u32 n_pages,
                                const u32* offsets, const MwLists* out, u32* err) {
    u32 cnt[MW_CATS];
    for (u32 k = 0; k < MW_CATS; k++) cnt[k] = offsets[k * (n_chunks + 1) + c];
    memwalk_chunk(c, chunk, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys, calls, pages,
                  n_pages, cnt, out, err);
}

// Whether sorted position p starts a cell's run.
ZKRV_HD bool mw_head(u64 p, const u32* perm, const u32* key) { return p == 0 || key[perm[p]] != key[perm[p - 1]]; }

// A segmented-scan element: hm = bit 8: the run contains a cell start, bits 0-7: the bytes written since
// (the last start); d: those bytes.
struct MwSum {
    u32 hm;
    u64 d;
};

// `a` then `b`.
ZKRV_HD MwSum mw_combine(MwSum a, MwSum b) {
    if (b.hm & 0x100u) return b;
    MwSum r;
    r.hm = a.hm | b.hm;
    r.d = (a.d & ~mw_expand(b.hm & 0xffu)) | b.d;
    return r;
}

// Applies item j's write to `s`.
ZKRV_HD void mw_apply(MwSum* s, u32 mask, u64 data) {
    const u64 e = mw_expand(mask);
    s->d = (s->d & ~e) | (data & e);
    s->hm |= mask;
}

// Step 4a for chunk `c` of MW_SEG sorted positions: its summary.
ZKRV_HD void memwalk_seg_summarize_chunk(u64 c, u64 n_items, const u32* perm, const u32* key, const u32* mask,
                                         const u64* data, u32* sum_hm, u64* sum_d) {
    MwSum s = {0, 0};
    const u64 begin = c * MW_SEG, end = begin + MW_SEG < n_items ? begin + MW_SEG : n_items;
    for (u64 p = begin; p < end; p++) {
        if (mw_head(p, perm, key)) {
            s.hm = 0x100u;
            s.d = 0;
        }
        const u32 j = perm[p];
        mw_apply(&s, mask[j], data[j]);
    }
    sum_hm[c] = s.hm;
    sum_d[c] = s.d;
}

// Step 4c for chunk `c`, from its carry (the exclusive scan of the summaries): writes every item's previous
// bytes and timestamp (res_old / res_ts, by item index) and, at the end of each cell's run, the cell's final
// bytes and timestamp into page[dense cell].
ZKRV_HD void memwalk_seg_replay_chunk(u64 c, u64 n_items, const u32* perm, const u32* key, const u32* ts,
                                      const u32* mask, const u64* data, const u32* sum_hm, const u64* sum_d,
                                      const u64* init, u64 n_cells, u64* res_old, u32* res_ts, PageIn* page) {
    MwSum s = {sum_hm[c], sum_d[c]};
    const u64 begin = c * MW_SEG, end = begin + MW_SEG < n_items ? begin + MW_SEG : n_items;
    for (u64 p = begin; p < end; p++) {
        const bool head = mw_head(p, perm, key);
        if (head) {
            s.hm = 0x100u;
            s.d = 0;
        }
        const u32 j = perm[p], dc = key[j];
        const u64 cell0 = dc < n_cells ? init[dc] : 0;
        res_old[j] = (cell0 & ~mw_expand(s.hm & 0xffu)) | s.d;
        res_ts[j] = head ? 0u : ts[perm[p - 1]];
        mw_apply(&s, mask[j], data[j]);
        const bool last = p + 1 == n_items || key[perm[p + 1]] != dc;
        if (last && dc < n_cells) {
            page[dc].v = (cell0 & ~mw_expand(s.hm & 0xffu)) | s.d;
            page[dc].ts = ts[j];
        }
    }
}

// PageIn of dense cell dc before the walk: the initial bytes, the cell index, ts 0.
ZKRV_HD void memwalk_page_init_row(u64 dc, const u32* pages, const u64* init, PageIn* page) {
    PageIn p;
    p.v = init[dc];
    p.cell = (pages[dc / MW_CELLS_PER_PAGE] >> 3) + (u32)(dc % MW_CELLS_PER_PAGE);
    p.ts = 0;
    page[dc] = p;
}

// The final cell dc against the executor's final memory.
ZKRV_HD void memwalk_page_check_row(u64 dc, const PageIn* page, const u64* fin, u32* err) {
    if (page[dc].v != fin[dc]) mw_error(err, MW_ERR_FINAL, (u32)dc);
}

ZKRV_HD void mw_bytes(u64 v, unsigned char* b) {
    for (u32 k = 0; k < 8; k++) b[k] = (unsigned char)(v >> (8 * k));
}

// MEMW_A's input of in-cell access r.
ZKRV_HD void memwalk_memw_a_row(u64 r, const u32* a_clk, const u32* a_item, const u64* res_old, const u32* res_ts,
                                MemwARecIn* out) {
    const u32 j = a_item[r];
    MemwARecIn e;
    e.clk = a_clk[r];
    e.old_ts = res_ts[j];
    mw_bytes(res_old[j], e.old_bytes);
    out[r] = e;
}

// MEMW's input of crossing access r (memw.cu's MemwIn: the 16-byte window's bytes before and after).
ZKRV_HD void memwalk_memw_row(u64 r, const CycleEvent* cycles, const u32* row_of_pc, u32 base_pc, u32 n_slots,
                              const u64* decode_rows, const u32* g_clk, const u32* g_item, const u64* res_old,
                              const u32* res_ts, MemwIn* out) {
    const u32 clk = g_clk[r], j = g_item[r];
    const CycleEvent ev = cycles[clk];
    const MwAccess a = mw_access(ev, row_of_pc, base_pc, n_slots, decode_rows);
    MemwIn e;
    e.cell = a.addr >> 3;
    e.ts = 4 * clk + 1;
    e.meta = a.offset | a.widx << 3 | a.store << 5;
    for (u32 h = 0; h < 2; h++) {
        const u64 old = res_old[j + h];
        u64 nw = old;
        if (a.store) {
            u32 m;
            u64 dd;
            mw_store_half(a, ev.rs2_val, h, &m, &dd);
            nw = (old & ~mw_expand(m)) | dd;
        }
        e.old_ts[h] = res_ts[j + h];
        mw_bytes(old, e.old_bytes + 8 * h);
        mw_bytes(nw, e.new_bytes + 8 * h);
    }
    out[r] = e;
}

// Load r's value from the walk against the executor's (rd_val truncated to the width).
ZKRV_HD void memwalk_load_row(u64 r, const CycleEvent* cycles, const u32* row_of_pc, u32 base_pc, u32 n_slots,
                              const u64* decode_rows, const u32* load_clk, const u32* load_item, const u64* res_old,
                              u32* err) {
    const u32 clk = load_clk[r], j = load_item[r];
    const CycleEvent ev = cycles[clk];
    const MwAccess a = mw_access(ev, row_of_pc, base_pc, n_slots, decode_rows);
    const u32 width = 1u << a.widx;
    u64 v = 0;
    for (u32 k = 0; k < width; k++) {
        const u32 q = a.offset + k;
        const u64 cellv = res_old[j + (q >> 3)];
        v |= ((cellv >> (8 * (q & 7))) & 0xff) << (8 * k);
    }
    const u64 want = width == 8 ? ev.rd_val : ev.rd_val & ((1ull << (8 * width)) - 1);
    if (v != want) mw_error(err, MW_ERR_LOAD, clk);
}

// SYSIO row r: old bytes, ts and new bytes from the walk (in place); a `write`'s bytes must be memory's.
ZKRV_HD void memwalk_sysio_row(u64 r, const u32* sys_item, const u64* res_old, const u32* res_ts, SysioIn* sys,
                               u32* err) {
    const u32 j = sys_item[r];
    SysioIn s = sys[r];
    const u64 old = res_old[j], e = mw_expand(mw_sysio_mask(s.meta));
    const bool is_read = (s.meta >> 16) & 1;
    if (!is_read && ((s.new_bytes ^ old) & e)) mw_error(err, MW_ERR_SYSIO, (u32)r);
    s.new_bytes = is_read ? (old & ~e) | (s.new_bytes & e) : old;
    s.old_bytes = old;
    s.old_ts = res_ts[j];
    sys[r] = s;
}

// Precompile call r (keccak_f calls first, then sha256_compress, then poseidon2): its cells' previous timestamps
// into old_ts (MW_KEC_CELLS per keccak_f call, then MW_SHA_CELLS per sha256_compress call, then MW_P2_CELLS per
// poseidon2 call, in call order), and the event's input against the bytes memory held.
ZKRV_HD void memwalk_call_row(u64 r, const MwCalls& calls, const u32* call_item, const u64* res_old,
                              const u32* res_ts, u32* old_ts, u32* err) {
    u32 kind = 0;
    u64 k = r, base = 0;
    while (kind < 2 && k >= mw_calls_len(calls, kind)) {
        k -= mw_calls_len(calls, kind);
        base += mw_calls_len(calls, kind) * mw_call_cells(kind);
        kind++;
    }
    const u32 n = mw_call_cells(kind), item = call_item[r];
    base += k * n;
    bool bad = false;
    for (u32 j = 0; j < n; j++) {
        u64 cell, old, nw;
        u32 m;
        mw_call_cell(calls, kind, k, j, &cell, &old, &nw, &m);
        bad |= res_old[item + j] != old;
        old_ts[base + j] = res_ts[item + j];
    }
    if (bad) mw_error(err, MW_ERR_CALL_MEM, (u32)mw_call_cycle(calls, kind, k));
}

#ifndef ZKRV_HOST_EMU
// Steps 1 and 2: one thread per chunk (`n_chunks` threads or more).
extern "C" __global__ void memwalk_count(u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                         const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                         const SysioIn* sys, u64 n_sys, const KeccakEvent* kec, u64 n_kec,
                                         const Sha256Event* sha, u64 n_sha, const Poseidon2Event* p2, u64 n_p2,
                                         u32* counts) {
    const u64 c = global_row();
    if (c >= n_chunks) return;
    const MwCalls calls = {kec, n_kec, sha, n_sha, p2, n_p2};
    memwalk_count_chunk(c, chunk, n_chunks, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys,
                        calls, counts);
}

extern "C" __global__ void memwalk_emit(u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                        const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                        const SysioIn* sys, u64 n_sys, const KeccakEvent* kec, u64 n_kec,
                                        const Sha256Event* sha, u64 n_sha, const Poseidon2Event* p2, u64 n_p2,
                                        const u32* pages, u32 n_pages, const u32* offsets, u32* key, u32* ts,
                                        u32* mask, u64* data, u32* load_clk, u32* load_item, u32* store_clk,
                                        u32* a_clk, u32* a_item, u32* g_clk, u32* g_item, u32* sys_item,
                                        u32* call_item, u32* err) {
    const u64 c = global_row();
    if (c >= n_chunks) return;
    const MwCalls calls = {kec, n_kec, sha, n_sha, p2, n_p2};
    const MwLists out = {key,   ts,    mask,  data,   load_clk, load_item, store_clk,
                         a_clk, a_item, g_clk, g_item, sys_item, call_item};
    memwalk_emit_chunk(c, chunk, n_chunks, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, sys, n_sys,
                       calls, pages, n_pages, offsets, &out, err);
}

// Step 4a: one thread per chunk of MW_SEG sorted items.
extern "C" __global__ void memwalk_seg_summarize(u64 n_seg, u64 n_items, const u32* perm, const u32* key,
                                                 const u32* mask, const u64* data, u32* sum_hm, u64* sum_d) {
    const u64 c = global_row();
    if (c >= n_seg) return;
    memwalk_seg_summarize_chunk(c, n_items, perm, key, mask, data, sum_hm, sum_d);
}

// Step 4b: one block of MW_SCAN_BLOCK threads; the exclusive scan of the n summaries under mw_combine, in
// place. Thread t folds its contiguous segment, the block scans the folds, each thread replays its segment.
extern "C" __global__ void memwalk_seg_scan(u64 n, u32* sum_hm, u64* sum_d) {
    __shared__ u32 w_hm[MW_SCAN_BLOCK / 32];
    __shared__ u64 w_d[MW_SCAN_BLOCK / 32];
    const u32 t = threadIdx.x, lane = t & 31u, warp = t >> 5;
    const u64 per = (n + MW_SCAN_BLOCK - 1) / MW_SCAN_BLOCK;
    const u64 lo = (u64)t * per < n ? (u64)t * per : n;
    const u64 hi = lo + per < n ? lo + per : n;
    MwSum s = {0, 0};
    for (u64 i = lo; i < hi; i++) s = mw_combine(s, MwSum{sum_hm[i], sum_d[i]});
    // Inclusive scan of the folds in the warp (lower lanes first), then over the warps.
    MwSum x = s;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        MwSum y;
        y.hm = __shfl_up_sync(0xffffffffu, x.hm, o);
        y.d = __shfl_up_sync(0xffffffffu, x.d, o);
        if (lane >= o) x = mw_combine(y, x);
    }
    if (lane == 31) {
        w_hm[warp] = x.hm;
        w_d[warp] = x.d;
    }
    __syncthreads();
    if (t == 0) {
        MwSum acc = {0, 0};
        for (u32 w = 0; w < MW_SCAN_BLOCK / 32; w++) {
            acc = mw_combine(acc, MwSum{w_hm[w], w_d[w]});
            w_hm[w] = acc.hm;
            w_d[w] = acc.d;
        }
    }
    __syncthreads();
    // Exclusive prefix of this thread: the warps before, then the lanes before.
    MwSum prev;
    prev.hm = __shfl_up_sync(0xffffffffu, x.hm, 1);
    prev.d = __shfl_up_sync(0xffffffffu, x.d, 1);
    MwSum run = warp ? MwSum{w_hm[warp - 1], w_d[warp - 1]} : MwSum{0, 0};
    if (lane) run = mw_combine(run, prev);
    for (u64 i = lo; i < hi; i++) {
        const MwSum v = {sum_hm[i], sum_d[i]};
        sum_hm[i] = run.hm;
        sum_d[i] = run.d;
        run = mw_combine(run, v);
    }
}

// Step 4c: one thread per chunk of MW_SEG sorted items.
extern "C" __global__ void memwalk_seg_replay(u64 n_seg, u64 n_items, const u32* perm, const u32* key, const u32* ts,
                                              const u32* mask, const u64* data, const u32* sum_hm, const u64* sum_d,
                                              const u64* init, u64 n_cells, u64* res_old, u32* res_ts, PageIn* page) {
    const u64 c = global_row();
    if (c >= n_seg) return;
    memwalk_seg_replay_chunk(c, n_items, perm, key, ts, mask, data, sum_hm, sum_d, init, n_cells, res_old, res_ts,
                             page);
}

// One thread per dense cell.
extern "C" __global__ void memwalk_page_init(u64 n_cells, const u32* pages, const u64* init, PageIn* page) {
    const u64 dc = global_row();
    if (dc < n_cells) memwalk_page_init_row(dc, pages, init, page);
}

extern "C" __global__ void memwalk_page_check(u64 n_cells, const PageIn* page, const u64* fin, u32* err) {
    const u64 dc = global_row();
    if (dc < n_cells) memwalk_page_check_row(dc, page, fin, err);
}

// Step 5: one thread per entry of each list.
extern "C" __global__ void memwalk_memw_a(u64 n, const u32* a_clk, const u32* a_item, const u64* res_old,
                                          const u32* res_ts, MemwARecIn* out) {
    const u64 r = global_row();
    if (r < n) memwalk_memw_a_row(r, a_clk, a_item, res_old, res_ts, out);
}

extern "C" __global__ void memwalk_memw(u64 n, const CycleEvent* cycles, const u32* row_of_pc, u32 base_pc,
                                        u32 n_slots, const u64* decode_rows, const u32* g_clk, const u32* g_item,
                                        const u64* res_old, const u32* res_ts, MemwIn* out) {
    const u64 r = global_row();
    if (r < n) memwalk_memw_row(r, cycles, row_of_pc, base_pc, n_slots, decode_rows, g_clk, g_item, res_old, res_ts, out);
}

extern "C" __global__ void memwalk_loads(u64 n, const CycleEvent* cycles, const u32* row_of_pc, u32 base_pc,
                                         u32 n_slots, const u64* decode_rows, const u32* load_clk,
                                         const u32* load_item, const u64* res_old, u32* err) {
    const u64 r = global_row();
    if (r < n)
        memwalk_load_row(r, cycles, row_of_pc, base_pc, n_slots, decode_rows, load_clk, load_item, res_old, err);
}

extern "C" __global__ void memwalk_sysio(u64 n, const u32* sys_item, const u64* res_old, const u32* res_ts,
                                         SysioIn* sys, u32* err) {
    const u64 r = global_row();
    if (r < n) memwalk_sysio_row(r, sys_item, res_old, res_ts, sys, err);
}
// One thread per precompile call (n_kec + n_sha + n_p2).
extern "C" __global__ void memwalk_calls(const KeccakEvent* kec, u64 n_kec, const Sha256Event* sha, u64 n_sha,
                                         const Poseidon2Event* p2, u64 n_p2, const u32* call_item, const u64* res_old,
                                         const u32* res_ts, u32* old_ts, u32* err) {
    const u64 r = global_row();
    const MwCalls calls = {kec, n_kec, sha, n_sha, p2, n_p2};
    if (r < n_kec + n_sha + n_p2) memwalk_call_row(r, calls, call_item, res_old, res_ts, old_ts, err);
}
#endif
