//! SHA256 fill parity (`kernels/tables/sha256.cu` vs `zkrv_machine::tables::sha256::sha256_trace`): every cell
//! (padding groups included, the last one cut at the table's end; the relations across rows, the first row's
//! with the table's last) and the BITWISE lookup histogram, on seeded random calls (`ZKRV_SEED` to replay;
//! random and edge states and blocks, old timestamps from 0 to ts - 1) at edge call counts and heights, and on
//! the calls of `guests/bin/precompiles.elf` (with the host walks' old timestamps). The host emulation of the kernel always runs (no GPU needed); the GPU part prints
//! `SKIPPED gpu_sha256_fill_matches_cpu (GPU part): <reason>` without a device, else runs with poisoned
//! allocations and also fills the guest from the device memory walk's timestamps.
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rv_programs.rs"]
mod rv_programs;

use rand::rngs::StdRng;
use rand::{Rng, RngCore};
use zkrv_cuda::TransferStats;
use zkrv_executor::{Record, Sha256Event};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::sha256::{
    constants_u64, sha256_compress, sha256_height, sha256_trace, Sha256Call, NUM_SHA256_COLS,
};
use zkrv_machine::trace::{generate_split, DeviceFill, FillInputs};
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::sha256::fill_sha256_resident;
use zkrv_machine_cuda::tables::{DeviceCalls, DeviceLookups};
use zkrv_stark::matrix::RowMajorMatrix;

const TEST: &str = "gpu_sha256_fill_matches_cpu";

struct Case {
    name: String,
    calls: Vec<Sha256Call>,
    min_height: usize,
}

/// `n` random calls at increasing cycles.
fn random_calls(r: &mut StdRng, n: usize) -> Vec<Sha256Call> {
    let mut cycle = r.gen_range(0..100u64);
    let ts_of = |r: &mut StdRng, ts: u64| match r.gen_range(0..3) {
        0 => 0,
        1 => ts - 1,
        _ => r.gen_range(0..ts),
    };
    (0..n)
        .map(|_| {
            cycle += r.gen_range(1..1000);
            let ts = 4 * cycle + 1;
            let mut block = [0u8; 64];
            r.fill_bytes(&mut block);
            if r.gen_range(0..4) == 0 {
                block = [0xff; 64];
            }
            Sha256Call {
                ts,
                state_ptr: 8 * r.gen_range(0..1u64 << 28),
                block_ptr: 8 * r.gen_range(0..1u64 << 28),
                state: std::array::from_fn(|_| match r.gen_range(0..4) {
                    0 => 0,
                    1 => u32::MAX,
                    _ => r.next_u32(),
                }),
                block,
                state_old_ts: std::array::from_fn(|_| ts_of(r, ts)),
                block_old_ts: std::array::from_fn(|_| ts_of(r, ts)),
                a1_old_ts: ts_of(r, ts),
            }
        })
        .collect()
}

/// The record's event of `c` (its output computed as the executor does).
fn event(c: &Sha256Call) -> Sha256Event {
    Sha256Event {
        cycle: (c.ts - 1) / 4,
        state_ptr: c.state_ptr,
        block_ptr: c.block_ptr,
        state_in: c.state,
        block: c.block,
        state_out: sha256_compress(&c.state, &c.block),
    }
}

/// The precompiles guest run on mask 7 (every precompile) and a random message of several blocks.
struct GuestRun {
    decode: DecodeTable,
    input: Vec<u8>,
    rec: Record,
    inputs: FillInputs,
    /// The host's SHA256 trace.
    host: RowMajorMatrix,
}

fn guest_run(r: &mut StdRng) -> GuestRun {
    let (p, _) = rv_programs::guest("precompiles");
    let input: Vec<u8> = [7u8].into_iter().chain((0..300).map(|_| r.gen())).collect();
    let rec = rv_programs::run(&p, &input);
    let decode = DecodeTable::new(&p).unwrap();
    let (traces, inputs) =
        generate_split(&decode, &rec, &input, MIN_HEIGHT, DeviceFill::NONE).unwrap();
    let host = traces.tables[Table::Sha256].clone();
    GuestRun {
        decode,
        input,
        rec,
        inputs,
        host,
    }
}

fn cases(r: &mut StdRng) -> Vec<Case> {
    let mut v = Vec::new();
    // 1 call: 32 rows (a padding boundary row, 17 real, a cut padding group); 7 calls: 128 rows; 8 and 15
    // calls: 256 rows, whose last row is a boundary row (15 calls: a real call's); min_height 4096 below: the
    // last row is a row 15 (its range checks read row 0).
    for n in [1usize, 2, 3, 7, 8, 14, 15] {
        v.push(Case {
            name: format!("{n} random calls"),
            calls: random_calls(r, n),
            min_height: MIN_HEIGHT,
        });
    }
    v.push(Case {
        name: "2 random calls, min_height 256".into(),
        calls: random_calls(r, 2),
        min_height: 256,
    });
    v.push(Case {
        name: "1 random call, min_height 4096".into(),
        calls: random_calls(r, 1),
        min_height: 4096,
    });
    let g = guest_run(r);
    assert!(
        !g.inputs.sha256.is_empty(),
        "the guest calls sha256_compress"
    );
    let mut lk = Lookups::new();
    assert_eq!(
        sha256_trace(&g.inputs.sha256, MIN_HEIGHT, &mut lk),
        g.host,
        "the guest's host split"
    );
    v.push(Case {
        name: "guest precompiles".into(),
        calls: g.inputs.sha256,
        min_height: MIN_HEIGHT,
    });
    v
}

/// The walk's order: the 4 state cells, then the 8 block cells.
fn old_ts_u32(calls: &[Sha256Call]) -> Vec<u32> {
    calls
        .iter()
        .flat_map(|c| c.state_old_ts.into_iter().chain(c.block_old_ts))
        .map(|t| t as u32)
        .collect()
}

fn a1_of(calls: &[Sha256Call]) -> Vec<u64> {
    calls.iter().map(|c| c.a1_old_ts).collect()
}

const DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    std::vector<u64> consts(SH_K + 64);
    rd(consts.data(), consts.size() * 8);
    u64 hdr[2];
    while (fread(hdr, 8, 2, stdin) == 2) {
        const u64 n = hdr[0], rows = hdr[1];
        std::vector<Sha256Event> ev(n + 1);
        rd(ev.data(), n * sizeof(Sha256Event));
        std::vector<u32> ots(n * 12 + 1), a1(n + 1);
        rd(ots.data(), n * 12 * 4);
        rd(a1.data(), n * 4);
        std::vector<u64> trace(rows * SHA256_WIDTH, ~0ull);
        std::vector<u32> counts(LK_COUNT * LK_ROWS, 0);
        for (u64 r = 0; r < rows; r++)
            sha256_fill_row(r, ev.data(), n, ots.data(), a1.data(), consts.data(), rows, trace.data(),
                            counts.data());
        fwrite(trace.data(), 8, trace.size(), stdout);
        fwrite(counts.data(), 4, counts.size(), stdout);
    }
    return 0;
}
"#;

fn host(c: &Case) -> (RowMajorMatrix, Lookups) {
    let mut lk = Lookups::new();
    (sha256_trace(&c.calls, c.min_height, &mut lk), lk)
}

#[test]
fn gpu_sha256_fill_matches_cpu() {
    let mut r = fill_util::rng(TEST);
    let cases = cases(&mut r);
    let mut input: Vec<u8> = bytemuck::cast_slice(&constants_u64()).to_vec();
    for c in &cases {
        input.extend((c.calls.len() as u64).to_le_bytes());
        input.extend((sha256_height(c.calls.len(), c.min_height) as u64).to_le_bytes());
        let ev: Vec<Sha256Event> = c.calls.iter().map(event).collect();
        input.extend_from_slice(bytemuck::cast_slice(&ev));
        input.extend_from_slice(bytemuck::cast_slice(&old_ts_u32(&c.calls)));
        let a1: Vec<u32> = a1_of(&c.calls).iter().map(|&t| t as u32).collect();
        input.extend_from_slice(bytemuck::cast_slice(&a1));
    }
    match host_emu::run(
        "sha256",
        zkrv_machine_cuda::kernels::SHA256_CU.src,
        DRIVER,
        &input,
    ) {
        None => eprintln!("SKIPPED {TEST} (host emulation): no C++ compiler"),
        Some(out) => {
            let mut at = 0;
            for c in &cases {
                let n = sha256_height(c.calls.len(), c.min_height) * NUM_SHA256_COLS;
                let trace = host_emu::u64s(&out[at..at + 8 * n]);
                at += 8 * n;
                let counts = host_emu::u32s(&out[at..at + 4 * (7 << 16)]);
                at += 4 * (7 << 16);
                let what = format!("host emulation, {}", c.name);
                let (t, lk) = host(c);
                fill_util::assert_trace_eq(&what, &t, &trace);
                fill_util::assert_lookups_eq(&what, &lk, &counts);
            }
            assert_eq!(at, out.len());
            eprintln!("{TEST}: host emulation matches on {} cases", cases.len());
        }
    }
    let Some(dev) = fill_util::device(TEST) else {
        return;
    };
    for c in &cases {
        let what = format!("GPU, {}", c.name);
        let mut stats = TransferStats::default();
        let rec = Record {
            sha256: c.calls.iter().map(event).collect(),
            ..Record::default()
        };
        let calls = DeviceCalls::upload(&dev, &rec, &mut stats).unwrap();
        let old_ts = dev.upload(&old_ts_u32(&c.calls)).unwrap();
        let lookups = DeviceLookups::new(&dev).unwrap();
        let d = fill_sha256_resident(
            &dev,
            &calls,
            old_ts.ptr(),
            &a1_of(&c.calls),
            c.min_height,
            &lookups,
            &mut stats,
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (t, lk) = host(c);
        fill_util::assert_trace_eq(&what, &t, &dev.download(&d.data).unwrap());
        fill_util::assert_lookups_eq(&what, &lk, &dev.download(&lookups.counts).unwrap());
    }
    // The guest through the device memory walk (the production path): the same trace.
    let g = guest_run(&mut r);
    let rec = &g.rec;
    let decode = zkrv_machine::tables::cpu::CpuDecode::new(&g.decode).unwrap();
    let mut stats = TransferStats::default();
    let cycles =
        zkrv_machine_cuda::tables::DeviceCycles::upload(&dev, &rec.cycles, &mut stats).unwrap();
    let calls = DeviceCalls::upload(&dev, rec, &mut stats).unwrap();
    let dev_split = DeviceFill {
        tables: DeviceFill::walk_readers()[1].1,
        mem_walk: true,
        ..DeviceFill::NONE
    }
    .with(Table::Keccakf)
    .with(Table::Sha256)
    .with(Table::Poseidon2);
    let (_, inputs) = generate_split(&g.decode, rec, &g.input, MIN_HEIGHT, dev_split).unwrap();
    let w = zkrv_machine_cuda::tables::memwalk::mem_walk(
        &dev,
        &cycles,
        &decode,
        &rec.pages,
        &rec.init_pages,
        &rec.final_pages,
        &inputs.sysio,
        &calls,
        zkrv_machine_cuda::tables::memwalk::MEM_WALK_CHUNK,
        &mut stats,
    )
    .unwrap();
    let lookups = DeviceLookups::new(&dev).unwrap();
    let d = fill_sha256_resident(
        &dev,
        &calls,
        w.call_old_ts(1),
        &inputs.sha256_a1,
        MIN_HEIGHT,
        &lookups,
        &mut stats,
    )
    .unwrap();
    fill_util::assert_trace_eq(
        "GPU, guest through the device walk",
        &g.host,
        &dev.download(&d.data).unwrap(),
    );
    eprintln!(
        "{TEST}: GPU matches on {} cases and the device-walk path",
        cases.len()
    );
}
