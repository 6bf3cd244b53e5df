//! The device memory walk (`kernels/tables/memwalk.cu` with `kernels/sort.cu`, `tables::memwalk::mem_walk`)
//! against the host walk (`zkrv_machine::trace::generate_split`): the LOAD and STORE cycle lists, the MEMW_A,
//! MEMW, PAGE and SYSIO inputs (previous bytes and timestamps of every access, final cells) must equal what the
//! host walk hands the same fills, on random RV64IM programs run through the executor (misaligned and
//! cell-crossing loads/stores, `read`/`write` syscalls; seeded, `ZKRV_SEED` to replay), programs with
//! page-straddling accesses, edge cases (no access, one access, many accesses to one cell) and every guest
//! (`precompiles.elf` with its keccak_f, sha256_compress and poseidon2 calls: their cells' previous timestamps
//! must equal the host walk's), each with several chunk sizes (1, a random one, `MEM_WALK_CHUNK`). And the
//! walk's checks: a record whose page list misses a touched page, whose final memory disagrees, whose
//! precompile event disagrees with memory or is missing for its ECALL, is an error naming the cycle / cell. The host
//! emulation always runs; the GPU part prints `SKIPPED gpu_mem_walk_matches_host_walk (GPU part): <reason>`
//! without a device, else also fills LOAD, STORE, MEMW_A, MEMW, PAGE and SYSIO from the walk and compares them
//! with the host fills.
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rv_programs.rs"]
mod rv_programs;
#[path = "common/simt_emu.rs"]
mod simt_emu;

use rand::rngs::StdRng;
use rand::Rng;
use zkrv_cuda::TransferStats;
use zkrv_executor::asm::*;
use zkrv_executor::{Program, Record};
use zkrv_machine::tables::cpu::CpuDecode;
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::sysio::SysioEventRow;
use zkrv_machine::trace::{generate_split, DeviceFill, FillInputs};
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::memw::pack_memw;
use zkrv_machine_cuda::tables::memw_a::pack_accesses_rec;
use zkrv_machine_cuda::tables::memwalk::{
    check_errors, mem_walk, CALL_CELLS, ERRS, MEM_WALK_CHUNK,
};
use zkrv_machine_cuda::tables::page::pack_page;
use zkrv_machine_cuda::tables::sysio::{pack_sysio, SysioIn};
use zkrv_machine_cuda::tables::{DeviceCalls, DeviceCycles, DeviceLookups};

/// The tables the memory walk feeds, on the device.
const MEM: DeviceFill = DeviceFill {
    tables: DeviceFill::walk_readers()[1].1,
    ..DeviceFill::NONE
};
/// With the walk on the device, the precompile tables go there too (their fills read the walk).
const MEM_DEV: DeviceFill = DeviceFill {
    mem_walk: true,
    ..MEM
}
.with(Table::Keccakf)
.with(Table::Sha256)
.with(Table::Poseidon2);

struct Case {
    name: String,
    record: Record,
    decode: CpuDecode,
    /// The host walk's inputs of the memory tables.
    want: FillInputs,
    /// The SYSIO rows as the host makes them with the device walk on.
    sysio: Vec<SysioEventRow>,
    chunks: Vec<usize>,
    /// The expected error flag (slot, value) for the negative cases.
    err: Option<(usize, u32)>,
}

fn case(name: String, program: &Program, input: &[u8], record: Record, chunks: Vec<usize>) -> Case {
    let dt = DecodeTable::new(program).unwrap();
    let (_, want) = generate_split(&dt, &record, input, MIN_HEIGHT, MEM).unwrap();
    let (_, dev) = generate_split(&dt, &record, input, MIN_HEIGHT, MEM_DEV).unwrap();
    assert!(
        dev.loads.is_empty() && dev.stores.is_empty() && dev.accesses.is_empty(),
        "{name}: with the walk on the device the host leaves the memory lists out"
    );
    assert!(dev.general.is_empty() && dev.page.is_empty());
    assert!(dev.keccakf.is_empty() && dev.sha256.is_empty() && dev.poseidon2.is_empty());
    assert_eq!(dev.sysio.len(), want.sysio.len());
    Case {
        name,
        record,
        decode: CpuDecode::new(&dt).unwrap(),
        want,
        sysio: dev.sysio,
        chunks,
        err: None,
    }
}

/// A program of `body` then exit, run on `input`.
fn program_case(r: &mut StdRng, name: &str, body: &[u32], input: &[u8]) -> Case {
    let p = rv_programs::assemble(body, 0);
    let rec = rv_programs::run(&p, input);
    let chunks = vec![1, r.gen_range(2..50), MEM_WALK_CHUNK];
    case(name.into(), &p, input, rec, chunks)
}

/// Loads and stores of every width at misaligned offsets around the page boundary at sp - 4096 (x5 = sp -
/// 4096), with writes and reads on both sides.
fn straddle_body(r: &mut StdRng) -> Vec<u32> {
    let mut w = vec![addi(5, 2, -2048), addi(5, 5, -2048), addi(6, 0, 0x5a5)];
    for _ in 0..200 {
        let imm = r.gen_range(-12..6);
        if r.gen() {
            w.push(store(r.gen_range(0..4), r.gen_range(1..32), 5, imm));
        } else {
            let d = loop {
                let d = r.gen_range(1..32);
                if d != 2 && d != 5 {
                    break d;
                }
            };
            w.push(load(r.gen_range(0..7), d, 5, imm));
        }
    }
    w
}

fn cases(test: &str) -> Vec<Case> {
    let mut r = fill_util::rng(test);
    let mut out = Vec::new();
    let mut sizes = vec![5usize, 9, 255, 256, 257, 1023, 4097];
    for _ in 0..3 {
        sizes.push(r.gen_range(10..3000));
    }
    for n in sizes {
        let (p, input, rec) = rv_programs::with_cycles(&mut r, n);
        let chunks = vec![1, r.gen_range(2..700), MEM_WALK_CHUNK];
        out.push(case(format!("random {n} cycles"), &p, &input, rec, chunks));
    }
    for k in 0..3 {
        let body = straddle_body(&mut r);
        out.push(program_case(
            &mut r,
            &format!("page-straddling {k}"),
            &body,
            &[],
        ));
    }
    out.push(program_case(&mut r, "no access", &[], &[]));
    out.push(program_case(
        &mut r,
        "one access",
        &[store(3, 0, 2, -8)],
        &[],
    ));
    let one_cell: Vec<u32> = (0..300)
        .map(|k| {
            if k % 3 == 0 {
                store(k % 4, (k % 31) + 1, 2, -16 + (k % 2) as i32 * 4)
            } else {
                load(k % 7, 7, 2, -16)
            }
        })
        .collect();
    out.push(program_case(
        &mut r,
        "many accesses to one cell",
        &one_cell,
        &[],
    ));
    // Every guest in guests/bin (typedio too: it reads typed input through several `read`s).
    for g in rv_programs::GUESTS
        .iter()
        .copied()
        .chain(["typedio", "precompiles"])
    {
        let (p, mut input) = rv_programs::guest(g);
        if g == "precompiles" {
            // Mask 7 (every precompile) and a message of several keccak/SHA-256 blocks.
            input = [7u8].into_iter().chain((0..300).map(|_| r.gen())).collect();
        }
        let rec = rv_programs::run(&p, &input);
        let chunks = vec![r.gen_range(1..100), MEM_WALK_CHUNK];
        out.push(case(format!("guest {g}"), &p, &input, rec, chunks));
    }
    let calls = |c: &Case| c.want.keccakf.len() * c.want.sha256.len() * c.want.poseidon2.len();
    assert!(
        out.iter().any(|c| calls(c) > 0),
        "the cases exercise every precompile"
    );
    let sysio: usize = out.iter().map(|c| c.want.sysio.len()).sum();
    let cross: usize = out.iter().map(|c| c.want.general.len()).sum();
    assert!(
        sysio > out.len() && cross > out.len(),
        "the cases exercise syscalls and cell-crossing accesses"
    );
    // Negative cases: a touched page missing from the record's page list; a final page image that disagrees.
    let base = out
        .iter()
        .position(|c| c.name == "page-straddling 0")
        .unwrap();
    let mut c = clone_case(&out[base], "missing page");
    // The first access (in cycle order) is the first touching its page: the error names its cycle.
    let first = c
        .want
        .loads
        .iter()
        .map(|e| (e.ts, e.base.wrapping_add(e.imm)))
        .chain(
            c.want
                .stores
                .iter()
                .map(|e| (e.ts, e.base.wrapping_add(e.imm))),
        )
        .min()
        .unwrap();
    let page = (first.1 & !4095) as u32;
    let k = c.record.pages.iter().position(|&p| p == page).unwrap();
    c.record.pages.remove(k);
    c.record.init_pages.drain(k * 4096..(k + 1) * 4096);
    c.record.final_pages.drain(k * 4096..(k + 1) * 4096);
    c.err = Some((0, ((first.0 - 1) / 4) as u32));
    out.push(c);
    let mut c = clone_case(&out[base], "final memory disagrees");
    let last = c.record.final_pages.len() - 8;
    c.record.final_pages[last] ^= 1;
    c.err = Some((3, (c.record.pages.len() * 512 - 1) as u32));
    out.push(c);
    // Negative precompile cases: an event whose input is not what memory holds; an ECALL without its event.
    let pre = out
        .iter()
        .position(|c| c.name == "guest precompiles")
        .unwrap();
    let mut c = clone_case(&out[pre], "keccak_f event disagrees with memory");
    let k = r.gen_range(0..c.record.keccak.len());
    c.record.keccak[k].input[r.gen_range(0..25)] ^= 1 << r.gen_range(0..64);
    c.err = Some((6, c.record.keccak[k].cycle as u32));
    out.push(c);
    let mut c = clone_case(&out[pre], "sha256_compress block disagrees with memory");
    let k = r.gen_range(0..c.record.sha256.len());
    c.record.sha256[k].block[r.gen_range(0..64)] ^= 1;
    c.err = Some((6, c.record.sha256[k].cycle as u32));
    out.push(c);
    let mut c = clone_case(&out[pre], "poseidon2 event missing");
    let k = r.gen_range(0..c.record.poseidon2.len());
    let e = c.record.poseidon2.remove(k);
    c.err = Some((5, e.cycle as u32));
    out.push(c);
    out
}

/// The precompile calls' cells' previous timestamps as the walk lists them (u32 LE): keccak_f calls, then
/// sha256_compress (state cells, block cells), then poseidon2.
fn call_old_ts(w: &FillInputs) -> Vec<u8> {
    let k = w.keccakf.iter().flat_map(|c| c.old_ts);
    let s = w
        .sha256
        .iter()
        .flat_map(|c| c.state_old_ts.into_iter().chain(c.block_old_ts));
    let p = w.poseidon2.iter().flat_map(|c| c.old_ts);
    k.chain(s)
        .chain(p)
        .flat_map(|t| (t as u32).to_le_bytes())
        .collect()
}

fn clone_case(c: &Case, what: &str) -> Case {
    Case {
        name: format!("{} ({what})", c.name),
        record: c.record.clone(),
        decode: c.decode.clone(),
        want: c.want.clone(),
        sysio: c.sysio.clone(),
        chunks: vec![MEM_WALK_CHUNK],
        err: None,
    }
}

const DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    u64 ncases;
    rd(&ncases, 8);
    for (u64 cs = 0; cs < ncases; cs++) {
        u64 hdr[10];
        rd(hdr, sizeof hdr);
        const u64 n = hdr[0], chunk = hdr[1], ndec = hdr[4], nsys = hdr[5], npages = hdr[6];
        const u64 nkec = hdr[7], nsha = hdr[8], np2 = hdr[9];
        const u32 base = (u32)hdr[2], slots = (u32)hdr[3];
        std::vector<CycleEvent> cyc(n + 1);
        rd(cyc.data(), n * sizeof(CycleEvent));
        std::vector<u32> rop(slots + 1);
        rd(rop.data(), slots * 4ull);
        std::vector<u64> dec(ndec + 1);
        rd(dec.data(), ndec * 8ull);
        std::vector<SysioIn> sys(nsys + 1);
        rd(sys.data(), nsys * sizeof(SysioIn));
        std::vector<u32> pages(npages + 1);
        rd(pages.data(), npages * 4);
        const u64 ncells = npages * MW_CELLS_PER_PAGE;
        std::vector<u64> init(ncells + 1), fin(ncells + 1);
        rd(init.data(), ncells * 8);
        rd(fin.data(), ncells * 8);
        std::vector<KeccakEvent> kec(nkec + 1);
        rd(kec.data(), nkec * sizeof(KeccakEvent));
        std::vector<Sha256Event> sha(nsha + 1);
        rd(sha.data(), nsha * sizeof(Sha256Event));
        std::vector<Poseidon2Event> p2(np2 + 1);
        rd(p2.data(), np2 * sizeof(Poseidon2Event));
        const MwCalls calls = {kec.data(), nkec, sha.data(), nsha, p2.data(), np2};
        const u64 ncalls = nkec + nsha + np2;
        const u64 ncallcells = nkec * MW_KEC_CELLS + nsha * MW_SHA_CELLS + np2 * MW_P2_CELLS;
        std::vector<u32> call_item(ncalls + 1), call_ts(ncallcells + 1);
        u64 nchunks = (n + chunk - 1) / chunk;
        if (nchunks == 0) nchunks = 1;
        // 1.
        const u64 stride = nchunks + 1;
        std::vector<u32> counts(MW_CATS * stride, 0);
        for (u64 c = 0; c < nchunks; c++)
            memwalk_count_chunk(c, chunk, nchunks, cyc.data(), n, rop.data(), base, slots, dec.data(), sys.data(),
                                nsys, calls, counts.data());
        for (u32 k = 0; k < MW_CATS; k++) sort_scan_emu(counts.data() + k * stride, stride);
        u64 tot[MW_CATS];
        for (u32 k = 0; k < MW_CATS; k++) tot[k] = counts[k * stride + nchunks];
        // 2.
        const u64 ni = tot[MW_ITEMS];
        std::vector<u32> key(ni + 1), ts(ni + 1), mask(ni + 1), load_clk(tot[1] + 1), load_item(tot[1] + 1),
            store_clk(tot[2] + 1), a_clk(tot[3] + 1), a_item(tot[3] + 1), g_clk(tot[4] + 1), g_item(tot[4] + 1),
            sys_item(nsys + 1);
        std::vector<u64> data(ni + 1);
        u32 err[MW_ERRS];
        for (u32 k = 0; k < MW_ERRS; k++) err[k] = MW_NO_ERR;
        const MwLists out = {key.data(), ts.data(), mask.data(), data.data(), load_clk.data(), load_item.data(),
                             store_clk.data(), a_clk.data(), a_item.data(), g_clk.data(), g_item.data(),
                             sys_item.data(), call_item.data()};
        for (u64 c = 0; c < nchunks; c++)
            memwalk_emit_chunk(c, chunk, nchunks, cyc.data(), n, rop.data(), base, slots, dec.data(), sys.data(),
                               nsys, calls, pages.data(), (u32)npages, counts.data(), &out, err);
        // 3.
        std::vector<u32> perm(ni + 1);
        const u32* kp = key.data();
        sort_emu_perm(&kp, 1, ni, perm.data());
        // 4.
        std::vector<PageIn> page(ncells + 1);
        for (u64 dc = 0; dc < ncells; dc++) memwalk_page_init_row(dc, pages.data(), init.data(), page.data());
        const u64 nseg = (ni + MW_SEG - 1) / MW_SEG;
        std::vector<u32> shm(nseg + 1);
        std::vector<u64> sd(nseg + 1), res_old(ni + 1);
        std::vector<u32> res_ts(ni + 1);
        for (u64 c = 0; c < nseg; c++)
            memwalk_seg_summarize_chunk(c, ni, perm.data(), key.data(), mask.data(), data.data(), shm.data(), sd.data());
        MwSum run = {0, 0};
        for (u64 c = 0; c < nseg; c++) {
            const MwSum v = {shm[c], sd[c]};
            shm[c] = run.hm;
            sd[c] = run.d;
            run = mw_combine(run, v);
        }
        for (u64 c = 0; c < nseg; c++)
            memwalk_seg_replay_chunk(c, ni, perm.data(), key.data(), ts.data(), mask.data(), data.data(), shm.data(),
                                     sd.data(), init.data(), ncells, res_old.data(), res_ts.data(), page.data());
        // 5.
        for (u64 dc = 0; dc < ncells; dc++) memwalk_page_check_row(dc, page.data(), fin.data(), err);
        std::vector<MemwARecIn> ma(tot[3] + 1);
        for (u64 k = 0; k < tot[3]; k++)
            memwalk_memw_a_row(k, a_clk.data(), a_item.data(), res_old.data(), res_ts.data(), ma.data());
        std::vector<MemwIn> mw(tot[4] + 1);
        for (u64 k = 0; k < tot[4]; k++)
            memwalk_memw_row(k, cyc.data(), rop.data(), base, slots, dec.data(), g_clk.data(), g_item.data(),
                             res_old.data(), res_ts.data(), mw.data());
        for (u64 k = 0; k < tot[1]; k++)
            memwalk_load_row(k, cyc.data(), rop.data(), base, slots, dec.data(), load_clk.data(), load_item.data(),
                             res_old.data(), err);
        for (u64 k = 0; k < nsys; k++)
            memwalk_sysio_row(k, sys_item.data(), res_old.data(), res_ts.data(), sys.data(), err);
        if (tot[MW_CALLS] == ncalls)
            for (u64 k = 0; k < ncalls; k++)
                memwalk_call_row(k, calls, call_item.data(), res_old.data(), res_ts.data(), call_ts.data(), err);
        fwrite(tot, 8, MW_CATS, stdout);
        fwrite(err, 4, MW_ERRS, stdout);
        fwrite(load_clk.data(), 4, tot[1], stdout);
        fwrite(store_clk.data(), 4, tot[2], stdout);
        fwrite(ma.data(), sizeof(MemwARecIn), tot[3], stdout);
        fwrite(mw.data(), sizeof(MemwIn), tot[4], stdout);
        fwrite(page.data(), sizeof(PageIn), ncells, stdout);
        fwrite(sys.data(), sizeof(SysioIn), nsys, stdout);
        fwrite(call_ts.data(), 4, ncallcells, stdout);
    }
    return 0;
}
"#;

fn sysio_bytes(v: &[SysioIn]) -> Vec<u8> {
    v.iter()
        .flat_map(|s| {
            [s.ts, s.cell, s.pos, s.rem, s.old_ts, s.old, s.new, s.meta]
                .into_iter()
                .flat_map(|x| x.to_le_bytes())
        })
        .collect()
}

/// What the walk must produce for `c`, as bytes per list: LOAD cycles, STORE cycles, MEMW_A, MEMW, PAGE,
/// SYSIO, the precompile calls' previous timestamps.
fn expected(c: &Case) -> [Vec<u8>; 7] {
    let n = c.record.cycles.len();
    let clks = |ts: &mut dyn Iterator<Item = u64>| -> Vec<u8> {
        ts.flat_map(|t| (((t - 1) / 4) as u32).to_le_bytes())
            .collect()
    };
    [
        clks(&mut c.want.loads.iter().map(|e| e.ts)),
        clks(&mut c.want.stores.iter().map(|e| e.ts)),
        pack_accesses_rec(&c.want.accesses, n)
            .unwrap()
            .iter()
            .flat_map(|e| e.to_le_bytes())
            .collect(),
        pack_memw(&c.want.general)
            .unwrap()
            .iter()
            .flat_map(|e| e.words().into_iter().flat_map(|w| w.to_le_bytes()))
            .collect(),
        pack_page(&c.want.page)
            .unwrap()
            .iter()
            .flat_map(|p| {
                let mut b = p.v.to_le_bytes().to_vec();
                b.extend(p.cell.to_le_bytes());
                b.extend(p.ts.to_le_bytes());
                b
            })
            .collect(),
        sysio_bytes(&pack_sysio(&c.want.sysio).unwrap()),
        call_old_ts(&c.want),
    ]
}

const LISTS: [&str; 7] = [
    "LOAD cycles",
    "STORE cycles",
    "MEMW_A",
    "MEMW",
    "PAGE",
    "SYSIO",
    "call old_ts",
];

#[test]
fn gpu_mem_walk_matches_host_walk() {
    let cases = cases("gpu_mem_walk_matches_host_walk");
    let mut input = Vec::new();
    let mut runs = 0u64;
    for c in &cases {
        for &chunk in &c.chunks {
            runs += 1;
            input.extend(case_input(c, chunk));
        }
    }
    let mut all = runs.to_le_bytes().to_vec();
    all.extend(input);
    let src = format!(
        "{}\n{}",
        zkrv_cuda::nvrtc::SORT_CU.src,
        zkrv_machine_cuda::kernels::MEMWALK_CU.src
    );
    match host_emu::run("memwalk", &src, DRIVER, &all) {
        None => {
            eprintln!("SKIPPED gpu_mem_walk_matches_host_walk (host emulation): no C++ compiler")
        }
        Some(out) => {
            let mut at = 0;
            for c in &cases {
                let want = expected(c);
                for &chunk in &c.chunks {
                    let what = format!("host emulation, {} (chunk {chunk})", c.name);
                    at = check_output(&what, c, &out, at, &want);
                }
            }
            assert_eq!(at, out.len());
            eprintln!("gpu_mem_walk_matches_host_walk: host emulation matches on {runs} walks");
        }
    }
    let Some(dev) = fill_util::device("gpu_mem_walk_matches_host_walk") else {
        return;
    };
    for c in &cases {
        let mut stats = TransferStats::default();
        let cycles = DeviceCycles::upload(&dev, &c.record.cycles, &mut stats).unwrap();
        let calls = DeviceCalls::upload(&dev, &c.record, &mut stats).unwrap();
        for &chunk in &c.chunks {
            let what = format!("GPU, {} (chunk {chunk})", c.name);
            let w = mem_walk(
                &dev,
                &cycles,
                &c.decode,
                &c.record.pages,
                &c.record.init_pages,
                &c.record.final_pages,
                &c.sysio,
                &calls,
                chunk,
                &mut stats,
            );
            if let Some((slot, _)) = c.err {
                let e = w.err().expect("the walk must fail").to_string();
                let key = [
                    "outside the record's pages",
                    "",
                    "",
                    "final memory",
                    "",
                    "without its event",
                    "disagrees with memory",
                ][slot];
                assert!(e.contains(key), "{what}: {e}");
                continue;
            }
            let w = w.unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = [
                bytemuck::cast_slice(&dev.download(&w.load_clks).unwrap()).to_vec(),
                bytemuck::cast_slice(&dev.download(&w.store_clks).unwrap()).to_vec(),
                dev.download(&w.memw_a)
                    .unwrap()
                    .iter()
                    .flat_map(|e| e.to_le_bytes())
                    .collect(),
                dev.download(&w.memw)
                    .unwrap()
                    .iter()
                    .flat_map(|e| e.words().into_iter().flat_map(|x| x.to_le_bytes()))
                    .collect(),
                dev.download(&w.page)
                    .unwrap()
                    .iter()
                    .flat_map(|p| {
                        let mut b = p.v.to_le_bytes().to_vec();
                        b.extend(p.cell.to_le_bytes());
                        b.extend(p.ts.to_le_bytes());
                        b
                    })
                    .collect(),
                sysio_bytes(&dev.download(&w.sysio).unwrap()),
                bytemuck::cast_slice(&dev.download(&w.call_old_ts).unwrap()).to_vec(),
            ];
            check(&what, c, &[u32::MAX; ERRS], &got, &expected(c));
            fills_match(&dev, &what, c, &cycles, &w);
        }
    }
    eprintln!("gpu_mem_walk_matches_host_walk: GPU matches on {runs} walks");
}

/// The driver's input for one walk of `c` in chunks of `chunk` cycles.
fn case_input(c: &Case, chunk: usize) -> Vec<u8> {
    let sys = pack_sysio(&c.sysio).unwrap();
    let mut input = Vec::new();
    for v in [
        c.record.cycles.len() as u64,
        chunk as u64,
        c.decode.base_pc as u64,
        c.decode.row_of_pc.len() as u64,
        c.decode.rows.len() as u64,
        sys.len() as u64,
        c.record.pages.len() as u64,
        c.record.keccak.len() as u64,
        c.record.sha256.len() as u64,
        c.record.poseidon2.len() as u64,
    ] {
        input.extend_from_slice(&v.to_le_bytes());
    }
    input.extend_from_slice(bytemuck::cast_slice(&c.record.cycles));
    input.extend_from_slice(bytemuck::cast_slice(&c.decode.row_of_pc));
    input.extend_from_slice(bytemuck::cast_slice(&c.decode.rows));
    input.extend(sysio_bytes(&sys));
    input.extend_from_slice(bytemuck::cast_slice(&c.record.pages));
    input.extend_from_slice(&c.record.init_pages);
    input.extend_from_slice(&c.record.final_pages);
    input.extend_from_slice(bytemuck::cast_slice(&c.record.keccak));
    input.extend_from_slice(bytemuck::cast_slice(&c.record.sha256));
    input.extend_from_slice(bytemuck::cast_slice(&c.record.poseidon2));
    input
}

/// Checks one walk's output of a driver (list sizes, error flags, the lists) at `at`; returns the end.
fn check_output(what: &str, c: &Case, out: &[u8], mut at: usize, want: &[Vec<u8>; 7]) -> usize {
    let tot = host_emu::u64s(&out[at..at + 48]);
    at += 48;
    let err = host_emu::u32s(&out[at..at + 4 * ERRS]);
    at += 4 * ERRS;
    let r = &c.record;
    let call_cells = [r.keccak.len(), r.sha256.len(), r.poseidon2.len()]
        .iter()
        .zip(CALL_CELLS)
        .map(|(n, k)| n * k)
        .sum::<usize>();
    let sizes = [
        4 * tot[1] as usize,
        4 * tot[2] as usize,
        16 * tot[3] as usize,
        56 * tot[4] as usize,
        16 * c.record.pages.len() * 512,
        64 * c.sysio.len(),
        4 * call_cells,
    ];
    let mut got = Vec::new();
    for s in sizes {
        got.push(out[at..at + s].to_vec());
        at += s;
    }
    check(what, c, &err, &got, want);
    at
}

fn check(what: &str, c: &Case, err: &[u32], got: &[Vec<u8>], want: &[Vec<u8>; 7]) {
    if let Some((slot, v)) = c.err {
        assert_eq!(err[slot], v, "{what}: error flag {slot}");
        assert!(check_errors(err, &c.record.pages).is_err(), "{what}");
        return;
    }
    assert!(
        err.iter().all(|&e| e == u32::MAX),
        "{what}: error flags {err:?}"
    );
    check_errors(err, &c.record.pages).unwrap();
    for ((name, g), w) in LISTS.iter().zip(got).zip(want) {
        assert_eq!(g.len(), w.len(), "{what}: {name} length");
        if g != w {
            let unit = match *name {
                "MEMW_A" | "PAGE" => 16,
                "MEMW" => 56,
                "SYSIO" => 64,
                _ => 4,
            };
            let k = g
                .chunks(unit)
                .zip(w.chunks(unit))
                .position(|(a, b)| a != b)
                .unwrap();
            panic!(
                "{what}: {name} entry {k}: got {:?}, want {:?}",
                &g[k * unit..(k + 1) * unit],
                &w[k * unit..(k + 1) * unit]
            );
        }
    }
}

/// The fills from the device walk equal the host fills of the host walk's inputs.
fn fills_match(
    dev: &zkrv_cuda::Device,
    what: &str,
    c: &Case,
    cycles: &DeviceCycles,
    w: &zkrv_machine_cuda::tables::memwalk::DeviceMemWalk,
) {
    use zkrv_machine::tables::bitwise::Lookups;
    use zkrv_machine_cuda::tables::{load, memw, memw_a, page, store, sysio};
    let mh = MIN_HEIGHT;
    let lookups = DeviceLookups::new(dev).unwrap();
    let mut lk = Lookups::new();
    let pairs = [
        (
            "LOAD",
            load::fill_load_resident(dev, cycles, &w.load_clks, mh, &lookups).unwrap(),
            zkrv_machine::tables::load::load_trace(&c.want.loads, mh, &mut lk),
        ),
        (
            "STORE",
            store::fill_store_resident(dev, cycles, &w.store_clks, mh, &lookups).unwrap(),
            zkrv_machine::tables::store::store_trace(&c.want.stores, mh, &mut lk),
        ),
        (
            "MEMW_A",
            memw_a::fill_memw_a_resident(dev, cycles, &w.memw_a, mh, &lookups).unwrap(),
            zkrv_machine::tables::memw_a::memw_a_trace(&c.want.accesses, mh, &mut lk),
        ),
        (
            "MEMW",
            memw::fill_memw_resident(dev, &w.memw, mh, &lookups).unwrap(),
            zkrv_machine::tables::memw::memw_trace(&c.want.general, mh, &mut lk),
        ),
        (
            "PAGE",
            page::fill_page_resident(dev, &w.page, mh, &lookups).unwrap(),
            zkrv_machine::tables::page::page_trace(&c.want.page, mh),
        ),
        (
            "SYSIO",
            sysio::fill_sysio_resident(dev, &w.sysio, mh, &lookups).unwrap(),
            zkrv_machine::tables::sysio::sysio_trace(&c.want.sysio, mh, &mut lk),
        ),
    ];
    for (name, d, h) in pairs {
        fill_util::assert_trace_eq(
            &format!("{what}: {name}"),
            &h,
            &dev.download(&d.data).unwrap(),
        );
    }
    fill_util::assert_lookups_eq(what, &lk, &dev.download(&lookups.counts).unwrap());
}

/// `mem_walk` (crates/machine-cuda/src/tables/memwalk.rs), launch for launch, on the SIMT emulation; input and output as
/// [`DRIVER`].
const SIMT_DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    u64 ncases;
    rd(&ncases, 8);
    for (u64 cs = 0; cs < ncases; cs++) {
        u64 hdr[10];
        rd(hdr, sizeof hdr);
        const u64 n = hdr[0], chunk = hdr[1], ndec = hdr[4], nsys = hdr[5], npages = hdr[6];
        const u64 nkec = hdr[7], nsha = hdr[8], np2 = hdr[9];
        const u32 base = (u32)hdr[2], slots = (u32)hdr[3];
        std::vector<CycleEvent> cyc(n + 1);
        rd(cyc.data(), n * sizeof(CycleEvent));
        std::vector<u32> rop(slots + 1);
        rd(rop.data(), slots * 4ull);
        std::vector<u64> dec(ndec + 1);
        rd(dec.data(), ndec * 8ull);
        std::vector<SysioIn> sys(nsys + 1);
        rd(sys.data(), nsys * sizeof(SysioIn));
        std::vector<u32> pages(npages + 1);
        rd(pages.data(), npages * 4);
        const u64 ncells = npages * MW_CELLS_PER_PAGE;
        std::vector<u64> init(ncells + 1), fin(ncells + 1);
        rd(init.data(), ncells * 8);
        rd(fin.data(), ncells * 8);
        std::vector<KeccakEvent> kec(nkec + 1);
        rd(kec.data(), nkec * sizeof(KeccakEvent));
        std::vector<Sha256Event> sha(nsha + 1);
        rd(sha.data(), nsha * sizeof(Sha256Event));
        std::vector<Poseidon2Event> p2(np2 + 1);
        rd(p2.data(), np2 * sizeof(Poseidon2Event));
        const MwCalls calls = {kec.data(), nkec, sha.data(), nsha, p2.data(), np2};
        (void)calls;
        const u64 ncalls = nkec + nsha + np2;
        const u64 ncallcells = nkec * MW_KEC_CELLS + nsha * MW_SHA_CELLS + np2 * MW_P2_CELLS;
        std::vector<u32> call_item(ncalls + 1), call_ts(ncallcells + 1);
        const CycleEvent* C = cyc.data();
        const u32* R = rop.data();
        const u64* D = dec.data();
        SysioIn* S = sys.data();
        const u32* P = pages.data();
        const u64 nchunks = n ? (n + chunk - 1) / chunk : 1, stride = nchunks + 1;
        std::vector<u32> counts(MW_CATS * stride, 0);
        u32* K = counts.data();
        simt_launch(blocks(nchunks, 256), 256,
                    [&] { memwalk_count(chunk, nchunks, C, n, R, base, slots, D, S, nsys, kec.data(), nkec, sha.data(),
                                        nsha, p2.data(), np2, K); });
        for (u32 k = 0; k < MW_CATS; k++) {
            u32* a = K + k * stride;
            simt_launch(1, 1024, [&] { sort_scan(a, stride); });
        }
        u64 tot[MW_CATS];
        for (u32 k = 0; k < MW_CATS; k++) tot[k] = counts[k * stride + nchunks];
        const u64 ni = tot[MW_ITEMS];
        std::vector<std::vector<u32>> keyv(1, std::vector<u32>(ni + 1));
        std::vector<u32> ts(ni + 1), mask(ni + 1), load_clk(tot[1] + 1), load_item(tot[1] + 1),
            store_clk(tot[2] + 1), a_clk(tot[3] + 1), a_item(tot[3] + 1), g_clk(tot[4] + 1), g_item(tot[4] + 1),
            sys_item(nsys + 1);
        std::vector<u64> data(ni + 1);
        u32 err[MW_ERRS];
        for (u32 k = 0; k < MW_ERRS; k++) err[k] = MW_NO_ERR;
        simt_launch(blocks(nchunks, 256), 256, [&] {
            memwalk_emit(chunk, nchunks, C, n, R, base, slots, D, S, nsys, kec.data(), nkec, sha.data(), nsha,
                         p2.data(), np2, P, (u32)npages, K, keyv[0].data(), ts.data(), mask.data(), data.data(),
                         load_clk.data(), load_item.data(), store_clk.data(), a_clk.data(), a_item.data(),
                         g_clk.data(), g_item.data(), sys_item.data(), call_item.data(), err);
        });
        std::vector<u32> perm(ni + 1);
        simt_sort(keyv, ni, perm.data());
        const u32* key = keyv[0].data();
        std::vector<PageIn> page(ncells + 1);
        std::vector<u64> res_old(ni + 1);
        std::vector<u32> res_ts(ni + 1);
        if (ncells)
            simt_launch(blocks(ncells, 256), 256, [&] { memwalk_page_init(ncells, P, init.data(), page.data()); });
        if (ni) {
            const u64 nseg = (ni + MW_SEG - 1) / MW_SEG;
            std::vector<u32> shm(nseg);
            std::vector<u64> sd(nseg);
            simt_launch(blocks(nseg, 256), 256, [&] {
                memwalk_seg_summarize(nseg, ni, perm.data(), key, mask.data(), data.data(), shm.data(), sd.data());
            });
            simt_launch(1, 1024, [&] { memwalk_seg_scan(nseg, shm.data(), sd.data()); });
            simt_launch(blocks(nseg, 256), 256, [&] {
                memwalk_seg_replay(nseg, ni, perm.data(), key, ts.data(), mask.data(), data.data(), shm.data(),
                                   sd.data(), init.data(), ncells, res_old.data(), res_ts.data(), page.data());
            });
        }
        std::vector<MemwARecIn> ma(tot[3] + 1);
        std::vector<MemwIn> mw(tot[4] + 1);
        if (ncells)
            simt_launch(blocks(ncells, 256), 256, [&] { memwalk_page_check(ncells, page.data(), fin.data(), err); });
        if (tot[3])
            simt_launch(blocks(tot[3], 256), 256, [&] {
                memwalk_memw_a(tot[3], a_clk.data(), a_item.data(), res_old.data(), res_ts.data(), ma.data());
            });
        if (tot[4])
            simt_launch(blocks(tot[4], 256), 256, [&] {
                memwalk_memw(tot[4], C, R, base, slots, D, g_clk.data(), g_item.data(), res_old.data(),
                             res_ts.data(), mw.data());
            });
        if (tot[1])
            simt_launch(blocks(tot[1], 256), 256, [&] {
                memwalk_loads(tot[1], C, R, base, slots, D, load_clk.data(), load_item.data(), res_old.data(), err);
            });
        if (nsys)
            simt_launch(blocks(nsys, 256), 256,
                        [&] { memwalk_sysio(nsys, sys_item.data(), res_old.data(), res_ts.data(), S, err); });
        if (ncalls && tot[MW_CALLS] == ncalls)
            simt_launch(blocks(ncalls, 256), 256, [&] {
                memwalk_calls(kec.data(), nkec, sha.data(), nsha, p2.data(), np2, call_item.data(), res_old.data(),
                              res_ts.data(), call_ts.data(), err);
            });
        fwrite(tot, 8, MW_CATS, stdout);
        fwrite(err, 4, MW_ERRS, stdout);
        fwrite(load_clk.data(), 4, tot[1], stdout);
        fwrite(store_clk.data(), 4, tot[2], stdout);
        fwrite(ma.data(), sizeof(MemwARecIn), tot[3], stdout);
        fwrite(mw.data(), sizeof(MemwIn), tot[4], stdout);
        fwrite(page.data(), sizeof(PageIn), ncells, stdout);
        fwrite(sys.data(), sizeof(SysioIn), nsys, stdout);
        fwrite(call_ts.data(), 4, ncallcells, stdout);
    }
    return 0;
}
"#;

/// The walk's `__global__` kernels as written (with the sort's), on the host SIMT emulation, launch for launch
/// as `mem_walk` drives them, against the host walk: the small cases of [`cases`] (random programs of a few
/// hundred cycles, page-straddling accesses, the edge cases, the error cases), chunk `MEM_WALK_CHUNK`.
#[test]
fn simt_mem_walk_kernels_match_host_walk() {
    let cases: Vec<Case> = cases("simt_mem_walk_kernels_match_host_walk")
        .into_iter()
        .filter(|c| {
            let n = c.record.cycles.len();
            (c.name.starts_with("random") && (200..=600).contains(&n))
                || c.name.starts_with("page-straddling 0")
                || ["no access", "one access", "many accesses to one cell"]
                    .contains(&c.name.as_str())
        })
        .collect();
    assert!(cases.len() >= 6, "{} cases", cases.len());
    let mut input = (cases.len() as u64).to_le_bytes().to_vec();
    for c in &cases {
        input.extend(case_input(c, MEM_WALK_CHUNK));
    }
    let src = format!(
        "{}\n{}\n{}\n{}",
        simt_emu::SHIM,
        zkrv_cuda::nvrtc::SORT_CU.src,
        zkrv_machine_cuda::kernels::MEMWALK_CU.src,
        simt_emu::SIMT_SORT
    );
    let Some(out) = host_emu::run("memwalk_simt", &src, SIMT_DRIVER, &input) else {
        eprintln!("SKIPPED simt_mem_walk_kernels_match_host_walk: no C++ compiler");
        return;
    };
    let mut at = 0;
    for c in &cases {
        at = check_output(
            &format!("SIMT emulation, {}", c.name),
            c,
            &out,
            at,
            &expected(c),
        );
    }
    assert_eq!(at, out.len());
    eprintln!(
        "simt_mem_walk_kernels_match_host_walk: {} walks match",
        cases.len()
    );
}
