//! The request lists on the device (`kernels/tables/requests.cu`, `tables::requests::device_requests`) against the
//! host's (`zkrv_machine::trace::generate_split` with EQ, LT, BYTEWISE, SHIFT, MUL, CPU32 and DVRM left to the
//! device: its `FillInputs` lists, after the request chain): every table's deduplicated rows in key order with
//! their multiplicities and the CPU32 W-op list in cycle order, equal entry for entry, on random RV64IM programs
//! (every ALU/M/W op; seeded, `ZKRV_SEED` to replay) at edge cycle counts, on every guest, and on edge lists:
//! no request at all, one request of each kind, all-equal keys, all-distinct keys, the DVRM cases without
//! checks (division by zero, signed overflow), with two smallest heights (SHIFT's padding checks). An ALU op
//! no table answers is refused. The host emulation always runs, with a host stable sort standing in for the
//! device sort; the GPU part prints `SKIPPED gpu_requests_match_host (GPU part): <reason>` without a device, else
//! also fills the seven tables from the resident lists and compares every cell, the lookup histogram and the POW2
//! counters with the host fills, and the H2D bytes (the decode data and the pointer table only).
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rv_programs.rs"]
mod rv_programs;

use rand::Rng;
use zkrv_cuda::TransferStats;
use zkrv_executor::asm::*;
use zkrv_executor::{Program, Record};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::bytewise::bytewise_trace;
use zkrv_machine::tables::cpu::CpuDecode;
use zkrv_machine::tables::cpu32::cpu32_trace;
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::dvrm::dvrm_trace;
use zkrv_machine::tables::eq::eq_trace;
use zkrv_machine::tables::lt::lt_trace;
use zkrv_machine::tables::mul::mul_trace;
use zkrv_machine::tables::shift::{pow2_height, shift_fill};
use zkrv_machine::trace::{generate_split, DeviceFill, FillInputs};
use zkrv_machine::MIN_HEIGHT;
use zkrv_machine_cuda::tables::bytewise::{
    bytewise_requests, fill_bytewise_resident, BytewiseRequest,
};
use zkrv_machine_cuda::tables::cpu32::{cpu32_inputs, fill_cpu32_resident, Cpu32In};
use zkrv_machine_cuda::tables::dvrm::{dvrm_upload, fill_dvrm_resident, DvrmRequest};
use zkrv_machine_cuda::tables::eq::{eq_requests, fill_eq_resident, EqRequest};
use zkrv_machine_cuda::tables::lt::{fill_lt_resident, lt_requests, LtRequest};
use zkrv_machine_cuda::tables::mul::{fill_mul_resident, mul_requests, MulRequest};
use zkrv_machine_cuda::tables::requests::{device_requests, REQ_CHUNK};
use zkrv_machine_cuda::tables::shift::{fill_shift_resident, shift_requests, ShiftRequest};
use zkrv_machine_cuda::tables::{DeviceCycles, DeviceLookups};

/// The tables whose request lists the device builds.
const REQ_TABLES: DeviceFill = DeviceFill {
    tables: DeviceFill::walk_readers()[2].1,
    ..DeviceFill::NONE
};

/// The lists in their upload forms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Lists {
    eq: Vec<EqRequest>,
    lt: Vec<LtRequest>,
    bytewise: Vec<BytewiseRequest>,
    shift: Vec<ShiftRequest>,
    mul: Vec<MulRequest>,
    dvrm: Vec<DvrmRequest>,
    cpu32: Vec<Cpu32In>,
}

impl Lists {
    fn sizes(&self) -> [usize; 7] {
        [
            self.eq.len(),
            self.lt.len(),
            self.bytewise.len(),
            self.shift.len(),
            self.mul.len(),
            self.dvrm.len(),
            self.cpu32.len(),
        ]
    }
}

struct Case {
    name: String,
    record: Record,
    decode: CpuDecode,
    min_height: usize,
    /// The host's lists; `None`: the device must refuse the record.
    want: Option<Lists>,
    /// The host's fill inputs (the reference fills of the GPU part).
    inputs: Option<FillInputs>,
}

fn host_lists(i: &FillInputs) -> Lists {
    Lists {
        eq: eq_requests(&i.eq),
        lt: lt_requests(&i.lt),
        bytewise: bytewise_requests(&i.bytewise),
        shift: shift_requests(&i.shift),
        mul: mul_requests(&i.mul),
        dvrm: dvrm_upload(&i.dvrm),
        cpu32: cpu32_inputs(&i.cpu32).unwrap(),
    }
}

fn case(name: String, p: &Program, input: &[u8], rec: Record, min_height: usize) -> Case {
    let dt = DecodeTable::new(p).unwrap();
    let (_, inputs) = generate_split(&dt, &rec, input, min_height, REQ_TABLES).unwrap();
    Case {
        name,
        record: rec,
        decode: CpuDecode::new(&dt).unwrap(),
        min_height,
        want: Some(host_lists(&inputs)),
        inputs: Some(inputs),
    }
}

/// `x8 = op(x6, x7)` for one op of every table (and every W kind), in that order.
fn one_of_each() -> Vec<u32> {
    vec![
        beq(6, 7, 4),
        op(0, 2, 8, 6, 7),    // SLT
        op(0, 3, 8, 6, 7),    // SLTU
        op(0, 4, 8, 6, 7),    // XOR
        op(0, 6, 8, 6, 7),    // OR
        op(0, 7, 8, 6, 7),    // AND
        op(0, 1, 8, 6, 7),    // SLL
        op(0, 5, 8, 6, 7),    // SRL
        op(0x20, 5, 8, 6, 7), // SRA
        op(1, 0, 8, 6, 7),    // MUL
        op(1, 1, 8, 6, 7),    // MULH
        op(1, 2, 8, 6, 7),    // MULHSU
        op(1, 3, 8, 6, 7),    // MULHU
        op(1, 4, 8, 6, 7),    // DIV
        op(1, 5, 8, 6, 7),    // DIVU
        op(1, 6, 8, 6, 7),    // REM
        op(1, 7, 8, 6, 7),    // REMU
        op32(0, 0, 8, 6, 7),  // ADDW
        op32(0x20, 0, 8, 6, 7),
        op32(0, 1, 8, 6, 7), // SLLW
        op32(0, 5, 8, 6, 7),
        op32(0x20, 5, 8, 6, 7),
        op32(1, 0, 8, 6, 7), // MULW
        op32(1, 4, 8, 6, 7),
        op32(1, 5, 8, 6, 7),
        op32(1, 6, 8, 6, 7),
        op32(1, 7, 8, 6, 7),
    ]
}

/// `x6 = a`, `x7 = b` (small immediates, or an all-ones / top-bit value).
fn set(a: i32, b: i32) -> Vec<u32> {
    vec![addi(6, 0, a), addi(7, 0, b)]
}

fn program_case(name: &str, body: Vec<u32>, min_height: usize) -> Case {
    let p = rv_programs::assemble(&body, 0);
    let rec = rv_programs::run(&p, &[]);
    case(name.into(), &p, &[], rec, min_height)
}

fn cases() -> Vec<Case> {
    let mut r = fill_util::rng("gpu_requests_match_host");
    let mut out = Vec::new();
    // Edge lists.
    out.push(program_case("no request", vec![], MIN_HEIGHT));
    let mut body = set(-7, 3);
    body.extend(one_of_each());
    out.push(program_case("one of each", body, MIN_HEIGHT));
    let mut body = set(-5, 9);
    for _ in 0..300 {
        body.extend(one_of_each());
    }
    out.push(program_case("all-equal keys", body, 1 << 10));
    let mut body = set(11, -3);
    for k in 0..200 {
        body.push(addi(6, 6, 1 + (k % 3)));
        body.push(addi(7, 7, -1));
        body.extend(one_of_each());
    }
    out.push(program_case("all-distinct keys", body, MIN_HEIGHT));
    // DVRM without checks: d = 0, and i64::MIN / -1 (x6 = 1 << 63 by SLLI).
    let mut body = set(5, 0);
    body.extend(one_of_each());
    body.extend([addi(6, 0, 1), slli(6, 6, 63), addi(7, 0, -1)]);
    body.extend(one_of_each());
    out.push(program_case("dz and ovf", body, MIN_HEIGHT));
    // Random programs at edge cycle counts.
    let mut sizes = vec![5usize, 6, 63, 64, 65, 127, 128, 129, 1000, 4097];
    for _ in 0..3 {
        sizes.push(r.gen_range(10..5000));
    }
    for (k, n) in sizes.into_iter().enumerate() {
        let (p, input, rec) = rv_programs::with_cycles(&mut r, n);
        let mh = if k % 2 == 0 { MIN_HEIGHT } else { 1 << 12 };
        out.push(case(format!("random {n} cycles"), &p, &input, rec, mh));
    }
    for g in rv_programs::GUESTS {
        let (p, input) = rv_programs::guest(g);
        let rec = rv_programs::run(&p, &input);
        out.push(case(format!("guest {g}"), &p, &input, rec, MIN_HEIGHT));
    }
    // An ALU op no table answers (a corrupted DECODE row) is refused.
    let mut bad = program_case("bad ALU op", one_of_each(), MIN_HEIGHT);
    let w = zkrv_machine::tables::decode::NUM_DECODE_PREP_COLS;
    let dt_rows = bad.decode.rows.len() / w;
    let (op_col, alu_col) = (1, 19);
    for row in 1..dt_rows {
        if bad.decode.rows[row * w + alu_col] == 1 {
            bad.decode.rows[row * w + op_col] = 31;
        }
    }
    bad.want = None;
    bad.inputs = None;
    out.push(bad);
    let covered: [usize; 7] =
        out.iter()
            .filter_map(|c| c.want.as_ref())
            .fold([0; 7], |mut acc, l| {
                for (a, s) in acc.iter_mut().zip(l.sizes()) {
                    *a += s;
                }
                acc
            });
    assert!(
        covered.iter().all(|&s| s > 0),
        "every list is exercised: {covered:?}"
    );
    out
}

const DRIVER: &str = r#"
#include <algorithm>
#include <numeric>
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
template <class T> static void put(const T* p, u64 n) {
    fwrite(&n, 8, 1, stdout);
    if (n) fwrite(p, sizeof(T), n, stdout);
}
// Inclusive prefix of the `n` elements of 3 u64 at d + stride * i (what the device's Ext3 scan computes).
static void scan3(u64* d, u64 stride, u64 n) {
    for (u64 i = 1; i < n; i++)
        for (int k = 0; k < 3; k++) d[i * stride + k] += d[(i - 1) * stride + k];
}
// The launcher's per-table deduplication with a host stable sort in place of the device sort.
template <class R> static std::vector<R> dedup(const u64* ptrs, u32 table, u32 words, u64 len) {
    std::vector<R> rows;
    if (!len) return rows;
    std::vector<u32> perm(len);
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(), [&](u32 x, u32 y) {
        for (u32 j = 0; j < words; j++) {
            const u32* k = (const u32*)ptrs[table * REQ_ARRAYS + j];
            if (k[x] != k[y]) return k[x] < k[y];
        }
        return false;
    });
    std::vector<u64> tri(3 * len);
    for (u64 j = 0; j < len; j++) req_rle_mark_row(j, ptrs, table, words, perm.data(), tri.data());
    scan3(tri.data(), 3, len);
    const u64 runs = tri[3 * (len - 1)];
    std::vector<u32> start(runs);
    for (u64 j = 0; j < len; j++) req_rle_start_row(j, tri.data(), start.data());
    rows.resize(runs);
    for (u64 u = 0; u < runs; u++)
        req_rle_write_row(u, runs, len, ptrs, table, perm.data(), tri.data(), start.data(), rows.data());
    return rows;
}
static u64 height(u64 len, u64 min_height) {
    u64 h = 1;
    while (h < len) h <<= 1;
    return h < min_height ? min_height : h;
}
int main() {
    u64 ncases;
    rd(&ncases, 8);
    for (u64 c = 0; c < ncases; c++) {
        u64 hdr[6];
        rd(hdr, sizeof hdr);
        const u64 n = hdr[0], chunk = hdr[1], ndec = hdr[4], min_height = hdr[5];
        const u32 base = (u32)hdr[2], slots = (u32)hdr[3];
        std::vector<CycleEvent> cyc(n + 1);
        rd(cyc.data(), n * sizeof(CycleEvent));
        std::vector<u32> rop(slots + 1);
        rd(rop.data(), slots * 4ull);
        std::vector<u64> dec(ndec + 1);
        rd(dec.data(), ndec * 8ull);
        u64 nchunks = (n + chunk - 1) / chunk;
        if (nchunks == 0) nchunks = 1;
        std::vector<u64> counts(nchunks * REQ_TAGS);
        for (u64 k = 0; k < nchunks; k++)
            req_emit_count_chunk(k, chunk, cyc.data(), n, rop.data(), base, slots, dec.data(), counts.data());
        for (int k = 0; k < REQ_TAGS; k += 3) scan3(counts.data() + k, REQ_TAGS, nchunks);
        const u64* tot = &counts[(nchunks - 1) * REQ_TAGS];
        if (tot[REQ_BAD]) {
            const u64 refused = ~0ull;
            fwrite(&refused, 8, 1, stdout);
            continue;
        }
        const u64 caps[6] = {tot[REQ_EQ], tot[REQ_LT] + tot[REQ_DVRM], tot[REQ_BW], tot[REQ_SHIFT],
                             tot[REQ_MUL] + 2 * tot[REQ_DVRM] + tot[REQ_SHIFT] + 1, tot[REQ_DVRM]};
        std::vector<std::vector<u32>> arrays(6 * REQ_ARRAYS);
        u64 ptrs[6 * REQ_ARRAYS];
        for (int t = 0; t < 6; t++)
            for (int j = 0; j < REQ_ARRAYS; j++) {
                arrays[t * REQ_ARRAYS + j].assign(caps[t] + 1, 0xdeadbeefu);
                ptrs[t * REQ_ARRAYS + j] = (u64)arrays[t * REQ_ARRAYS + j].data();
            }
        std::vector<Cpu32In> w(tot[REQ_W] + 1);
        for (u64 k = 0; k < nchunks; k++)
            req_emit_write_chunk(k, chunk, cyc.data(), n, rop.data(), base, slots, dec.data(), counts.data(), ptrs,
                                 w.data());
        std::vector<DvrmRequest> dvrm = dedup<DvrmRequest>(ptrs, REQ_DVRM, 5, tot[REQ_DVRM]);
        const u64 nd = dvrm.size();
        std::vector<u64> flag(3 * nd + 3);
        for (u64 u = 0; u < nd; u++) req_dvrm_flag_row(u, dvrm.data(), flag.data());
        scan3(flag.data(), 3, nd);
        const u64 nchk = nd ? flag[3 * (nd - 1)] : 0;
        for (u64 u = 0; u < nd; u++)
            req_dvrm_facts_row(u, dvrm.data(), flag.data(), ptrs, tot[REQ_MUL], tot[REQ_LT]);
        std::vector<ShiftRequest> shift = dedup<ShiftRequest>(ptrs, REQ_SHIFT, 5, tot[REQ_SHIFT]);
        const u64 ns = shift.size(), pad = height(ns, min_height) - ns, mul_base = tot[REQ_MUL] + 2 * nchk;
        for (u64 u = 0; u <= ns; u++) req_shift_check_row(u, shift.data(), ns, pad, ptrs, mul_base);
        std::vector<MulRequest> mul = dedup<MulRequest>(ptrs, REQ_MUL, 5, mul_base + ns + (pad ? 1 : 0));
        std::vector<LtRequest> lt = dedup<LtRequest>(ptrs, REQ_LT, 5, tot[REQ_LT] + nchk);
        std::vector<EqRequest> eq = dedup<EqRequest>(ptrs, REQ_EQ, 4, tot[REQ_EQ]);
        std::vector<BytewiseRequest> bw = dedup<BytewiseRequest>(ptrs, REQ_BW, 5, tot[REQ_BW]);
        const u64 ok = 0;
        fwrite(&ok, 8, 1, stdout);
        put(eq.data(), eq.size());
        put(lt.data(), lt.size());
        put(bw.data(), bw.size());
        put(shift.data(), shift.size());
        put(mul.data(), mul.size());
        put(dvrm.data(), dvrm.size());
        put(w.data(), tot[REQ_W]);
    }
    return 0;
}
"#;

/// Reads `n x WORDS` u64 after a count.
fn take(out: &[u64], at: &mut usize, words: usize) -> Vec<Vec<u64>> {
    let n = out[*at] as usize;
    *at += 1;
    let v = out[*at..*at + n * words]
        .chunks(words)
        .map(|c| c.to_vec())
        .collect();
    *at += n * words;
    v
}

fn parse(out: &[u64], at: &mut usize) -> Option<Lists> {
    let status = out[*at];
    *at += 1;
    if status != 0 {
        return None;
    }
    Some(Lists {
        eq: take(out, at, 3)
            .into_iter()
            .map(|w| EqRequest {
                a: w[0],
                b: w[1],
                m: w[2],
            })
            .collect(),
        lt: take(out, at, 4)
            .into_iter()
            .map(|w| LtRequest {
                a: w[0],
                b: w[1],
                signed: w[2],
                m: w[3],
            })
            .collect(),
        bytewise: take(out, at, 4)
            .into_iter()
            .map(|w| BytewiseRequest {
                op: w[0],
                a: w[1],
                b: w[2],
                m: w[3],
            })
            .collect(),
        shift: take(out, at, 4)
            .into_iter()
            .map(|w| ShiftRequest {
                a: w[0],
                b: w[1],
                op: w[2],
                m: w[3],
            })
            .collect(),
        mul: take(out, at, 5)
            .into_iter()
            .map(|w| MulRequest {
                a: w[0],
                b: w[1],
                signs: w[2],
                m_lo: w[3],
                m_hi: w[4],
            })
            .collect(),
        dvrm: take(out, at, 5)
            .into_iter()
            .map(|w| DvrmRequest {
                n: w[0],
                d: w[1],
                signed: w[2],
                m_q: w[3],
                m_r: w[4],
            })
            .collect(),
        cpu32: take(out, at, 3)
            .into_iter()
            .map(|w| Cpu32In {
                a: w[0],
                b: w[1],
                op: w[2],
            })
            .collect(),
    })
}

/// Names the first differing entry of each list.
fn check(what: &str, want: &Lists, got: &Lists) {
    fn one<T: PartialEq + std::fmt::Debug>(what: &str, list: &str, want: &[T], got: &[T]) {
        if let Some(k) = (0..want.len().min(got.len())).find(|&k| want[k] != got[k]) {
            panic!(
                "{what}: {list} entry {k} is {:?}, want {:?}",
                got[k], want[k]
            );
        }
        assert_eq!(got.len(), want.len(), "{what}: {list} length");
    }
    one(what, "EQ", &want.eq, &got.eq);
    one(what, "LT", &want.lt, &got.lt);
    one(what, "BYTEWISE", &want.bytewise, &got.bytewise);
    one(what, "SHIFT", &want.shift, &got.shift);
    one(what, "MUL", &want.mul, &got.mul);
    one(what, "DVRM", &want.dvrm, &got.dvrm);
    one(what, "CPU32", &want.cpu32, &got.cpu32);
}

#[test]
fn gpu_requests_match_host() {
    let cases = cases();
    for c in &cases {
        eprintln!(
            "  case {}: {} cycles, lists {:?}",
            c.name,
            c.record.cycles.len(),
            c.want.as_ref().map(|l| l.sizes())
        );
    }
    // Host emulation: the production chunk, and 1 and a random one.
    let mut r = fill_util::rng("gpu_requests_match_host (chunks)");
    let chunks = [REQ_CHUNK, 1, r.gen_range(2..300)];
    let mut input = Vec::new();
    let mut runs = 0u64;
    for c in &cases {
        for &chunk in &chunks {
            runs += 1;
            for v in [
                c.record.cycles.len() as u64,
                chunk as u64,
                c.decode.base_pc as u64,
                c.decode.row_of_pc.len() as u64,
                c.decode.rows.len() as u64,
                c.min_height as u64,
            ] {
                input.extend_from_slice(&v.to_le_bytes());
            }
            input.extend_from_slice(bytemuck::cast_slice(&c.record.cycles));
            input.extend_from_slice(bytemuck::cast_slice(&c.decode.row_of_pc));
            input.extend_from_slice(bytemuck::cast_slice(&c.decode.rows));
        }
    }
    let mut all = runs.to_le_bytes().to_vec();
    all.extend(input);
    match host_emu::run(
        "requests",
        zkrv_machine_cuda::kernels::REQUESTS_CU.src,
        DRIVER,
        &all,
    ) {
        None => eprintln!("SKIPPED gpu_requests_match_host (host emulation): no C++ compiler"),
        Some(out) => {
            let out = host_emu::u64s(&out);
            let mut at = 0;
            for c in &cases {
                for &chunk in &chunks {
                    let what = format!("host emulation, {} (chunk {chunk})", c.name);
                    let got = parse(&out, &mut at);
                    match (&c.want, got) {
                        (Some(w), Some(g)) => check(&what, w, &g),
                        (None, None) => {}
                        (w, g) => panic!("{what}: want {w:?}, got {g:?}"),
                    }
                }
            }
            assert_eq!(at, out.len());
            eprintln!("gpu_requests_match_host: host emulation matches on {runs} runs");
        }
    }
    gpu_part(&cases);
}

fn gpu_part(cases: &[Case]) {
    let Some(dev) = fill_util::device("gpu_requests_match_host") else {
        return;
    };
    for c in cases {
        let what = format!("GPU, {}", c.name);
        let mut stats = TransferStats::default();
        let cycles = DeviceCycles::upload(&dev, &c.record.cycles, &mut stats).unwrap();
        let mut stats = TransferStats::default();
        let r = device_requests(&dev, &cycles, &c.decode, c.min_height, &mut stats);
        let Some(want) = &c.want else {
            let e = r.err().expect("a bad ALU op is refused").to_string();
            assert!(e.contains("no table answers"), "{what}: {e}");
            continue;
        };
        let r = r.unwrap_or_else(|e| panic!("{what}: {e}"));
        let got = Lists {
            eq: dev.download(&r.eq).unwrap(),
            lt: dev.download(&r.lt).unwrap(),
            bytewise: dev.download(&r.bytewise).unwrap(),
            shift: dev.download(&r.shift).unwrap(),
            mul: dev.download(&r.mul).unwrap(),
            dvrm: dev.download(&r.dvrm).unwrap(),
            cpu32: dev.download(&r.cpu32).unwrap(),
        };
        check(&what, want, &got);
        // The fills from the resident lists equal the host fills (every cell, the lookup histogram, the POW2
        // counters SHIFT counts).
        let i = c.inputs.as_ref().unwrap();
        let mh = c.min_height;
        let lookups = DeviceLookups::with_counters(&dev, 0, pow2_height(mh)).unwrap();
        let mut lk = Lookups::new();
        let fills = [
            (
                "EQ",
                eq_trace(&i.eq, mh),
                fill_eq_resident(&dev, &r.eq, mh, &lookups),
            ),
            (
                "LT",
                lt_trace(&i.lt, mh, &mut lk),
                fill_lt_resident(&dev, &r.lt, mh, &lookups),
            ),
            (
                "BYTEWISE",
                bytewise_trace(&i.bytewise, mh, &mut lk),
                fill_bytewise_resident(&dev, &r.bytewise, mh, &lookups),
            ),
            (
                "SHIFT",
                shift_fill(&i.shift, mh, &mut lk),
                fill_shift_resident(&dev, &r.shift, mh, &lookups),
            ),
            (
                "MUL",
                mul_trace(&i.mul, mh, &mut lk),
                fill_mul_resident(&dev, &r.mul, mh, &lookups),
            ),
            (
                "DVRM",
                dvrm_trace(&i.dvrm, mh, &mut lk).0,
                fill_dvrm_resident(&dev, &r.dvrm, mh, &lookups),
            ),
            (
                "CPU32",
                cpu32_trace(&i.cpu32, mh, &mut lk).unwrap().0,
                fill_cpu32_resident(&dev, &r.cpu32, mh, &lookups),
            ),
        ];
        for (t, want, got) in fills {
            let got = got.unwrap_or_else(|e| panic!("{what}: {t} fill: {e}"));
            fill_util::assert_trace_eq(
                &format!("{what}: {t} fill"),
                &want,
                &dev.download(&got.data).unwrap(),
            );
        }
        fill_util::assert_lookups_eq(&what, &lk, &dev.download(&lookups.counts).unwrap());
        let pow2: Vec<u64> = dev
            .download(&lookups.pow2)
            .unwrap()
            .iter()
            .map(|&x| x as u64)
            .collect();
        assert_eq!(pow2, i.pow2, "{what}: POW2 counters");
        // Only the program's decode data and the list pointer table go up.
        let decode_bytes = 4 * c.decode.row_of_pc.len() + 8 * c.decode.rows.len();
        assert_eq!(
            stats.total_h2d(),
            (decode_bytes + 8 * 36) as u64,
            "{what}: H2D bytes"
        );
    }
    eprintln!(
        "gpu_requests_match_host: GPU matches on {} cases",
        cases.len()
    );
}
