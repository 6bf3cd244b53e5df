// The request lists of the deduplicated tables on the device (mirrors the ALU routing of
// crates/machine/src/trace.rs `generate_split_at` and its `fill_chain`): from the record's cycles resident on the
// device, every ALU request a cycle makes of EQ, LT, BYTEWISE, SHIFT, MUL, DVRM and the CPU32 W-op list (cycle
// order), then the request chain (DVRM rows -> MUL/LT checks, SHIFT rows -> MUL checks), each table's requests
// deduplicated into its rows in key order with their multiplicities, exactly the host's BTreeMaps. See
// common.cuh for the conventions; the launcher is crates/machine-cuda/src/tables/requests.rs.
//
// Request lists (struct of arrays, `cap` entries): five u32 key words k[0..5] (k[0] most significant; the sort
// orders by them lexicographically, which is the host BTreeMap's key order) and one u32 value v = weight << 1 |
// kind (kind: which counter the request adds to, MUL's m_hi / DVRM's m_r; weight: how many requests, 1 except
// SHIFT's padding check). Key words per table (`REQ_*`):
//   EQ    (a, b)            -> a_hi, a_lo, b_hi, b_lo            (4 words)
//   LT    (a, b, signed)    -> a_hi, a_lo, b_hi, b_lo, signed
//   BW    (op, a, b)        -> op, a_hi, a_lo, b_hi, b_lo
//   SHIFT (op, a, b)        -> op, a_hi, a_lo, b_hi, b_lo        (op the ALU code: ShiftOp's order)
//   MUL   (a, b, sa, sb)    -> a_hi, a_lo, b_hi, b_lo, 2 sa + sb  (kind 1: a high-word op)
//   DVRM  (n, d, signed)    -> n_hi, n_lo, d_hi, d_lo, signed     (kind 1: a remainder)
// `lists` holds the device pointers of every list: lists[t * 6 + j] is k[j] (j < 5) or v (j = 5) of table t.
//
// Steps (the launcher runs them in this order):
// 1. `req_emit_count`, one thread per chunk of cycles: per chunk, how many requests of each table (REQ_TAGS
//    counters, REQ_BAD counts ALU ops without a table: an error). A W op counts one CPU32 row and, unless ADDW /
//    SUBW, one request of its inner table (the inner request goes straight into SHIFT / MUL / DVRM: a table's
//    rows do not depend on the order its requests come in).
// 2. the launcher scans the counters over the chunks (exact integer sums through the Ext3 scan of logup.cu) and
//    reads the totals back;
// 3. `req_emit_write`, one thread per chunk: writes each request at its table's offset (chunk order, so the CPU32
//    list is in cycle order);
// 4. per table, the launcher sorts the list (`crate::sort::stable_sort_perm`), `req_rle_mark` marks run heads
//    and splits the values into the two counters, the launcher scans (head, c0, c1) and reads the unique count,
//    `req_rle_start` records each run's start and `req_rle_write` writes the table's upload struct per run;
// 5. DVRM first (`req_dvrm_flag` + scan + `req_dvrm_facts` append MUL and LT checks of the rows with chk = 1), then
//    SHIFT (`req_shift_checks` appends one MUL check per row and the padding rows' MUL(0, 1) x pad), then MUL and
//    LT; EQ and BYTEWISE any time after step 3.
#include "table_common.cuh"

// CycleEvent, EqRequest, LtRequest, BytewiseRequest, ShiftRequest, MulRequest, DvrmRequest, Cpu32In,
// DECODE_PREP_*, ALU_*: layout.cuh (generated).

// Tables (list index).
#define REQ_EQ 0
#define REQ_LT 1
#define REQ_BW 2
#define REQ_SHIFT 3
#define REQ_MUL 4
#define REQ_DVRM 5
// Counters of step 1 besides the tables: CPU32 rows, ALU ops without a table.
#define REQ_W 6
#define REQ_BAD 7
// Counters per chunk (a multiple of 3: three Ext3 scans).
#define REQ_TAGS 9
#define REQ_NONE 0xffffffffu
// u32 arrays per list: 5 key words and the value.
#define REQ_ARRAYS 6
#define REQ_WORDS 5

// One request: table, key operands and value.
struct ReqItem {
    u32 table;
    u32 pre;  // op (BW, SHIFT)
    u64 a, b;
    u32 suf;  // signed (LT, DVRM), 2 sa + sb (MUL)
    u32 v;    // weight << 1 | kind
};

ZKRV_HD u64 req_sext32(u64 x) { return (u64)(long long)(int)(unsigned)x; }

// The MUL request of ALU code `op` (MUL, MULH, MULHSU, MULHU) on (a, b) with `weight` (`MulRequests::add_n`).
ZKRV_HD ReqItem req_mul(u64 op, u64 a, u64 b, u32 weight) {
    ReqItem r;
    r.table = REQ_MUL;
    r.pre = 0;
    r.a = a;
    r.b = b;
    // signs (sa, sb): MUL and MULHU (0, 0), MULHSU (1, 0), MULH (1, 1); the key word is 2 sa + sb.
    r.suf = op == ALU_MULH ? 3u : op == ALU_MULHSU ? 2u : 0u;
    r.v = weight << 1 | (op != ALU_MUL ? 1u : 0u);
    return r;
}

// The DVRM request of ALU code `op` (DIV, DIVU, REM, REMU) on (n, d) (`add_dvrm_request`).
ZKRV_HD ReqItem req_dvrm(u64 op, u64 n, u64 d) {
    ReqItem r;
    r.table = REQ_DVRM;
    r.pre = 0;
    r.a = n;
    r.b = d;
    r.suf = (op == ALU_DIV || op == ALU_REM) ? 1u : 0u;
    r.v = 2u | ((op == ALU_REM || op == ALU_REMU) ? 1u : 0u);
    return r;
}

ZKRV_HD ReqItem req_plain(u32 table, u32 pre, u64 a, u64 b, u32 suf) {
    ReqItem r;
    r.table = table;
    r.pre = pre;
    r.a = a;
    r.b = b;
    r.suf = suf;
    r.v = 2u;
    return r;
}

// The requests of cycle i: the CPU's own ALU request (`*cpu`, table REQ_NONE if none; REQ_BAD for an ALU op
// without a table) and, for a W op, its CPU32 row `*w` (returns true) whose inner request is `*inner` (REQ_NONE
// for ADDW / SUBW). Mirrors the ALU routing of `generate_split_at` and `cpu32_requests` (`inner` in cpu32.rs).
ZKRV_HD bool req_cycle(u64 i, const CycleEvent* cycles, const u32* row_of_pc, u32 base_pc, u32 n_slots,
                       const u64* decode_rows, ReqItem* cpu, Cpu32In* w, ReqItem* inner) {
    const CycleEvent ev = cycles[i];
    const u32 slot = (ev.pc - base_pc) >> 2;
    u32 drow = (ev.pc >= base_pc && slot < n_slots) ? row_of_pc[slot] : NO_DECODE_ROW;
    if (drow == NO_DECODE_ROW) drow = 0;
    const u64* d = decode_rows + (u64)drow * DECODE_PREP_WIDTH;
    cpu->table = REQ_NONE;
    inner->table = REQ_NONE;
    if (d[DECODE_PREP_COL_DEC_FLAGS_IS_ALU] != 1) return false;
    const u64 rv1 = d[DECODE_PREP_COL_DEC_FLAGS_RR1] == 1 ? ev.rs1_val : 0;
    const u64 rv2 = d[DECODE_PREP_COL_DEC_FLAGS_RR2] == 1 ? ev.rs2_val : 0;
    const u64 imm = d[DECODE_PREP_COL_DEC_IMM] | (d[DECODE_PREP_COL_DEC_IMM + 1] << 32);
    const u64 a = rv1, b = rv2 + imm;
    const u64 op = d[DECODE_PREP_COL_DEC_OP];
    if (op == ALU_EQ) {
        *cpu = req_plain(REQ_EQ, 0, a, b, 0);
    } else if (op == ALU_SLT || op == ALU_SLTU) {
        *cpu = req_plain(REQ_LT, 0, a, b, op == ALU_SLT ? 1u : 0u);
    } else if (op == ALU_AND || op == ALU_OR || op == ALU_XOR) {
        *cpu = req_plain(REQ_BW, (u32)op, a, b, 0);
    } else if (op >= ALU_SLL && op <= ALU_SRA5) {
        *cpu = req_plain(REQ_SHIFT, (u32)op, a, b, 0);
    } else if (op >= ALU_MUL && op <= ALU_MULHU) {
        *cpu = req_mul(op, a, b, 1);
    } else if (op >= ALU_DIV && op <= ALU_REMU) {
        *cpu = req_dvrm(op, a, b);
    } else if (op >= ALU_ADDW && op <= ALU_REMUW) {
        w->a = a;
        w->b = b;
        w->op = op;
        // The inner request's extended operands (`EXT` in cpu32.rs).
        u64 a2 = a, b2 = b;
        if (op == ALU_SRLW || op == ALU_DIVUW || op == ALU_REMUW) a2 = a & 0xffffffffull;
        if (op == ALU_SRAW || op == ALU_DIVW || op == ALU_REMW) a2 = req_sext32(a);
        if (op == ALU_DIVUW || op == ALU_REMUW) b2 = b & 0xffffffffull;
        if (op == ALU_DIVW || op == ALU_REMW) b2 = req_sext32(b);
        if (op == ALU_SLLW) *inner = req_plain(REQ_SHIFT, (u32)ALU_SLL5, a2, b2, 0);
        else if (op == ALU_SRLW) *inner = req_plain(REQ_SHIFT, (u32)ALU_SRL5, a2, b2, 0);
        else if (op == ALU_SRAW) *inner = req_plain(REQ_SHIFT, (u32)ALU_SRA5, a2, b2, 0);
        else if (op == ALU_MULW) *inner = req_mul(ALU_MUL, a2, b2, 1);
        else if (op == ALU_DIVW) *inner = req_dvrm(ALU_DIV, a2, b2);
        else if (op == ALU_DIVUW) *inner = req_dvrm(ALU_DIVU, a2, b2);
        else if (op == ALU_REMW) *inner = req_dvrm(ALU_REM, a2, b2);
        else if (op == ALU_REMUW) *inner = req_dvrm(ALU_REMU, a2, b2);
        return true;
    } else {
        cpu->table = REQ_BAD;
    }
    return false;
}

// Writes `r` at position `pos` of its table's list.
ZKRV_HD void req_put(const u64* lists, u64 pos, ReqItem r) {
    u32* k[REQ_ARRAYS];
    for (int j = 0; j < REQ_ARRAYS; j++) k[j] = (u32*)lists[r.table * REQ_ARRAYS + j];
    const u32 ahi = (u32)(r.a >> 32), alo = (u32)r.a, bhi = (u32)(r.b >> 32), blo = (u32)r.b;
    if (r.table == REQ_BW || r.table == REQ_SHIFT) {
        k[0][pos] = r.pre;
        k[1][pos] = ahi;
        k[2][pos] = alo;
        k[3][pos] = bhi;
        k[4][pos] = blo;
    } else {
        k[0][pos] = ahi;
        k[1][pos] = alo;
        k[2][pos] = bhi;
        k[3][pos] = blo;
        if (r.table != REQ_EQ) k[4][pos] = r.suf;
    }
    k[5][pos] = r.v;
}

// Step 1 for chunk c: counts[c * REQ_TAGS + t] = requests of table t (REQ_W: CPU32 rows, REQ_BAD: bad ops).
ZKRV_HD void req_emit_count_chunk(u64 c, u64 chunk, const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc,
                                  u32 base_pc, u32 n_slots, const u64* decode_rows, u64* counts) {
    u64 cnt[REQ_TAGS];
    for (int t = 0; t < REQ_TAGS; t++) cnt[t] = 0;
    const u64 begin = c * chunk, end = begin + chunk < n_cycles ? begin + chunk : n_cycles;
    for (u64 i = begin; i < end; i++) {
        ReqItem cpu, inner;
        Cpu32In w;
        if (req_cycle(i, cycles, row_of_pc, base_pc, n_slots, decode_rows, &cpu, &w, &inner)) cnt[REQ_W]++;
        if (cpu.table != REQ_NONE) cnt[cpu.table]++;
        if (inner.table != REQ_NONE) cnt[inner.table]++;
    }
    for (int t = 0; t < REQ_TAGS; t++) counts[c * REQ_TAGS + t] = cnt[t];
}

// Step 3 for chunk c: `scanned` holds the inclusive prefix of step 1's counters over the chunks; `base[t]` is
// where table t's cycle requests start in its list. Writes the requests and the CPU32 rows (`w_out`).
ZKRV_HD void req_emit_write_chunk(u64 c, u64 chunk, const CycleEvent* cycles, u64 n_cycles, const u32* row_of_pc,
                                  u32 base_pc, u32 n_slots, const u64* decode_rows, const u64* scanned,
                                  const u64* lists, Cpu32In* w_out) {
    u64 pos[REQ_TAGS];
    for (int t = 0; t < REQ_TAGS; t++) pos[t] = c == 0 ? 0 : scanned[(c - 1) * REQ_TAGS + t];
    const u64 begin = c * chunk, end = begin + chunk < n_cycles ? begin + chunk : n_cycles;
    for (u64 i = begin; i < end; i++) {
        ReqItem cpu, inner;
        Cpu32In w;
        if (req_cycle(i, cycles, row_of_pc, base_pc, n_slots, decode_rows, &cpu, &w, &inner)) w_out[pos[REQ_W]++] = w;
        if (cpu.table < REQ_W) req_put(lists, pos[cpu.table]++, cpu);
        if (inner.table < REQ_W) req_put(lists, pos[inner.table]++, inner);
    }
}

// Whether elements x and y of a list differ in their first `words` key words.
ZKRV_HD bool req_key_differs(const u64* lists, u32 table, u32 words, u32 x, u32 y) {
    for (u32 j = 0; j < words; j++) {
        const u32* k = (const u32*)lists[table * REQ_ARRAYS + j];
        if (k[x] != k[y]) return true;
    }
    return false;
}

// Step 4a, sorted position j < n (`perm`: list element at sorted position j): tri[3 j ..] = (run head?, weight of
// kind 0, weight of kind 1).
ZKRV_HD void req_rle_mark_row(u64 j, const u64* lists, u32 table, u32 words, const u32* perm, u64* tri) {
    const u32 e = perm[j];
    const u32 v = ((const u32*)lists[table * REQ_ARRAYS + 5])[e];
    const u64 w = v >> 1;
    tri[3 * j] = (j == 0 || req_key_differs(lists, table, words, e, perm[j - 1])) ? 1 : 0;
    tri[3 * j + 1] = (v & 1) ? 0 : w;
    tri[3 * j + 2] = (v & 1) ? w : 0;
}

// Step 4b, after the inclusive scan of `tri`: start[u] = the sorted position where run u starts.
ZKRV_HD void req_rle_start_row(u64 j, const u64* tri, u32* start) {
    const u64 h = tri[3 * j], before = j == 0 ? 0 : tri[3 * (j - 1)];
    if (h != before) start[h - 1] = (u32)j;
}

// Step 4c, run u < runs: writes the table's upload struct (`out`, `runs` entries) for run u: the key of its
// elements and the two counters (the single-counter tables add both).
ZKRV_HD void req_rle_write_row(u64 u, u64 runs, u64 n, const u64* lists, u32 table, const u32* perm, const u64* tri,
                               const u32* start, void* out) {
    const u64 s = start[u], e = (u + 1 < runs ? start[u + 1] : n) - 1;
    const u64 c0 = tri[3 * e + 1] - (s ? tri[3 * (s - 1) + 1] : 0);
    const u64 c1 = tri[3 * e + 2] - (s ? tri[3 * (s - 1) + 2] : 0);
    const u32 x = perm[s];
    u32 k[REQ_WORDS];
    for (int j = 0; j < REQ_WORDS; j++) k[j] = (table == REQ_EQ && j == 4) ? 0 : ((const u32*)lists[table * REQ_ARRAYS + j])[x];
    const u64 a_mid = (u64)k[0] << 32 | k[1], b_mid = (u64)k[2] << 32 | k[3];
    const u64 a_pre = (u64)k[1] << 32 | k[2], b_pre = (u64)k[3] << 32 | k[4];
    switch (table) {
        case REQ_EQ: ((EqRequest*)out)[u] = EqRequest{a_mid, b_mid, c0 + c1}; break;
        case REQ_LT: ((LtRequest*)out)[u] = LtRequest{a_mid, b_mid, k[4], c0 + c1}; break;
        case REQ_BW: ((BytewiseRequest*)out)[u] = BytewiseRequest{k[0], a_pre, b_pre, c0 + c1}; break;
        case REQ_SHIFT: ((ShiftRequest*)out)[u] = ShiftRequest{a_pre, b_pre, k[0], c0 + c1}; break;
        case REQ_MUL: {
            // key word 2 sa + sb; MulRequest::signs = sa | sb << 1.
            const u64 signs = (k[4] >> 1) | (k[4] & 1) << 1;
            ((MulRequest*)out)[u] = MulRequest{a_mid, b_mid, signs, c0, c1};
            break;
        }
        default: ((DvrmRequest*)out)[u] = DvrmRequest{a_mid, b_mid, k[4], c0, c1}; break;
    }
}

// Whether DVRM row (n, d, signed) makes its checks (`chk = 1 - dz - ovf`, `dvrm_facts`).
ZKRV_HD bool req_dvrm_chk(const DvrmRequest r) {
    return r.d != 0 && !(r.is_signed && r.n == 1ull << 63 && r.d == ~0ull);
}

// Step 5a, DVRM row u: flag[3 u ..] = (chk, 0, 0) (scanned for the checks' positions).
ZKRV_HD void req_dvrm_flag_row(u64 u, const DvrmRequest* rows, u64* flag) {
    flag[3 * u] = req_dvrm_chk(rows[u]) ? 1 : 0;
    flag[3 * u + 1] = 0;
    flag[3 * u + 2] = 0;
}

// Step 5b, DVRM row u with chk = 1 (`dvrm_facts`): MUL(q, d), MULH / MULHU(q, d) at mul_base + 2 k and
// SLTU(|r|, |d|) at lt_base + k, k = the row's index among the rows with chk (`flag` scanned inclusively).
ZKRV_HD void req_dvrm_facts_row(u64 u, const DvrmRequest* rows, const u64* flag, const u64* lists, u64 mul_base,
                                u64 lt_base) {
    const DvrmRequest x = rows[u];
    if (!req_dvrm_chk(x)) return;
    const u64 k = flag[3 * u] - 1;
    u64 q, r;
    rv_divrem(x.n, x.d, x.is_signed != 0, &q, &r);
    const u64 s = x.is_signed ? 1 : 0;
    const u64 sr = s & (r >> 63), sd = s & (x.d >> 63);
    const u64 abs_r = sr ? (0 - r) : r, abs_d = sd ? (0 - x.d) : x.d;
    req_put(lists, mul_base + 2 * k, req_mul(ALU_MUL, q, x.d, 1));
    req_put(lists, mul_base + 2 * k + 1, req_mul(x.is_signed ? ALU_MULH : ALU_MULHU, q, x.d, 1));
    req_put(lists, lt_base + k, req_plain(REQ_LT, 0, abs_r, abs_d, 0));
}

// Step 5c, SHIFT row u < len (`shift_side_requests`): its MUL check at mul_base + u; row `len` (if pad > 0) the
// padding rows' check MUL(0, 1) x pad at mul_base + len.
ZKRV_HD void req_shift_check_row(u64 u, const ShiftRequest* rows, u64 len, u64 pad, const u64* lists,
                                 u64 mul_base) {
    if (u == len) {
        if (pad) req_put(lists, mul_base + len, req_mul(ALU_MUL, 0, 1, (u32)pad));
        return;
    }
    const ShiftRequest x = rows[u];
    const bool w5 = x.op >= ALU_SLL5;
    const u64 s = (x.b & 0xffffffffull) & (w5 ? 31 : 63);
    const u64 p = 1ull << s, q = s == 0 ? 1 : 1ull << (64 - s);
    const u64 kind = (x.op - ALU_SLL) % 3;  // 0 left, 1 logical right, 2 arithmetic right
    const u64 mult = kind == 0 ? p : q;
    const u64 mop = (kind == 0 || s == 0) ? ALU_MUL : kind == 1 ? ALU_MULHU : ALU_MULHSU;
    req_put(lists, mul_base + u, req_mul(mop, x.a, mult, 1));
}

#ifndef ZKRV_HOST_EMU
extern "C" __global__ void req_emit_count(u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                          const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                          u64* counts) {
    const u64 c = global_row();
    if (c >= n_chunks) return;
    req_emit_count_chunk(c, chunk, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, counts);
}

extern "C" __global__ void req_emit_write(u64 chunk, u64 n_chunks, const CycleEvent* cycles, u64 n_cycles,
                                          const u32* row_of_pc, u32 base_pc, u32 n_slots, const u64* decode_rows,
                                          const u64* scanned, const u64* lists, Cpu32In* w_out) {
    const u64 c = global_row();
    if (c >= n_chunks) return;
    req_emit_write_chunk(c, chunk, cycles, n_cycles, row_of_pc, base_pc, n_slots, decode_rows, scanned, lists, w_out);
}

extern "C" __global__ void req_rle_mark(u64 n, const u64* lists, u32 table, u32 words, const u32* perm, u64* tri) {
    const u64 j = global_row();
    if (j >= n) return;
    req_rle_mark_row(j, lists, table, words, perm, tri);
}

extern "C" __global__ void req_rle_start(u64 n, const u64* tri, u32* start) {
    const u64 j = global_row();
    if (j >= n) return;
    req_rle_start_row(j, tri, start);
}

extern "C" __global__ void req_rle_write(u64 runs, u64 n, const u64* lists, u32 table, const u32* perm,
                                         const u64* tri, const u32* start, void* out) {
    const u64 u = global_row();
    if (u >= runs) return;
    req_rle_write_row(u, runs, n, lists, table, perm, tri, start, out);
}

extern "C" __global__ void req_dvrm_flag(u64 len, const DvrmRequest* rows, u64* flag) {
    const u64 u = global_row();
    if (u >= len) return;
    req_dvrm_flag_row(u, rows, flag);
}

extern "C" __global__ void req_dvrm_facts(u64 len, const DvrmRequest* rows, const u64* flag, const u64* lists,
                                          u64 mul_base, u64 lt_base) {
    const u64 u = global_row();
    if (u >= len) return;
    req_dvrm_facts_row(u, rows, flag, lists, mul_base, lt_base);
}

extern "C" __global__ void req_shift_checks(u64 len, const ShiftRequest* rows, u64 pad, const u64* lists,
                                            u64 mul_base) {
    const u64 u = global_row();
    if (u > len) return;
    req_shift_check_row(u, rows, len, pad, lists, mul_base);
}
#endif
