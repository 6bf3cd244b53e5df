//! POSEIDON2 fill parity (`kernels/tables/poseidon2.cu` vs `zkrv_machine::tables::poseidon2::poseidon2_trace`):
//! every cell (padding rows included), the BITWISE lookup histogram and the error flag, on seeded random calls
//! (`ZKRV_SEED` to replay; canonical inputs incl. 0 and p - 1, old timestamps from 0 to ts - 1) at edge call
//! counts and heights, on the calls of `guests/bin/precompiles.elf` (with the host memory walk's old
//! timestamps), and on a call whose output is not the permutation of its input (refused, naming the call).
//! The host emulation of the kernel always runs (no GPU needed); the GPU part prints
//! `SKIPPED gpu_poseidon2_fill_matches_cpu (GPU part): <reason>` without a device, else runs with poisoned
//! allocations and also fills from the device memory walk's timestamps (`Poseidon2Fill` via `mem_walk`).
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rv_programs.rs"]
mod rv_programs;

use rand::rngs::StdRng;
use rand::Rng;
use zkrv_cuda::TransferStats;
use zkrv_executor::{Poseidon2Event, Record};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::poseidon2::{
    constants_u64, poseidon2_trace, Poseidon2Row, NUM_POSEIDON2_COLS, WIDTH,
};
use zkrv_machine::trace::{generate_split, DeviceFill};
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::poseidon2::fill_poseidon2_resident;
use zkrv_machine_cuda::tables::{DeviceCalls, DeviceLookups};
use zkrv_stark::matrix::RowMajorMatrix;

const TEST: &str = "gpu_poseidon2_fill_matches_cpu";
const P: u64 = 0xffff_ffff_0000_0001;

struct Case {
    name: String,
    rows: Vec<Poseidon2Row>,
    min_height: usize,
    /// The row the kernel must flag (a bad call), if any.
    bad: Option<u32>,
}

/// `n` random calls: increasing cycles, canonical inputs (with edge values), the record's outputs.
fn random_rows(r: &mut StdRng, n: usize) -> Vec<Poseidon2Row> {
    let mut cycle = r.gen_range(0..100u64);
    (0..n)
        .map(|_| {
            cycle += r.gen_range(1..1000);
            let mut input = [0u64; WIDTH];
            for x in input.iter_mut() {
                *x = match r.gen_range(0..6) {
                    0 => 0,
                    1 => P - 1,
                    2 => 0xffff_fffe_ffff_ffff,
                    _ => r.gen_range(0..P),
                };
            }
            let mut output = input;
            zkrv_executor::precompile::poseidon2(&mut output);
            let ts = 4 * cycle + 1;
            Poseidon2Row {
                event: Poseidon2Event {
                    cycle,
                    state_ptr: 8 * r.gen_range(0..1u64 << 28),
                    input,
                    output,
                },
                ts,
                old_ts: std::array::from_fn(|_| match r.gen_range(0..3) {
                    0 => 0,
                    1 => ts - 1,
                    _ => r.gen_range(0..ts),
                }),
            }
        })
        .collect()
}

/// The precompiles guest run on mask 7 (every precompile) and a random message.
struct GuestRun {
    decode: DecodeTable,
    input: Vec<u8>,
    rec: Record,
    /// Its fill inputs as the host walk hands them over.
    inputs: zkrv_machine::trace::FillInputs,
    /// The host's POSEIDON2 trace.
    host: RowMajorMatrix,
}

fn guest_run(r: &mut StdRng) -> GuestRun {
    let (p, _) = rv_programs::guest("precompiles");
    let input: Vec<u8> = [7u8].into_iter().chain((0..100).map(|_| r.gen())).collect();
    let rec = rv_programs::run(&p, &input);
    let decode = DecodeTable::new(&p).unwrap();
    let (traces, inputs) =
        generate_split(&decode, &rec, &input, MIN_HEIGHT, DeviceFill::NONE).unwrap();
    let host = traces.tables[Table::Poseidon2].clone();
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
    for n in [1usize, 2, 3, 7, 8, 9, 31, 32, 33, 100] {
        v.push(Case {
            name: format!("{n} random calls"),
            rows: random_rows(r, n),
            min_height: MIN_HEIGHT,
            bad: None,
        });
    }
    v.push(Case {
        name: "5 random calls, min_height 64".into(),
        rows: random_rows(r, 5),
        min_height: 64,
        bad: None,
    });
    let GuestRun { inputs, host, .. } = guest_run(r);
    assert!(!inputs.poseidon2.is_empty(), "the guest calls poseidon2");
    let mut lk = Lookups::new();
    assert_eq!(
        poseidon2_trace(&inputs.poseidon2, MIN_HEIGHT, &mut lk).unwrap(),
        host,
        "the guest's host split"
    );
    v.push(Case {
        name: "guest precompiles".into(),
        rows: inputs.poseidon2,
        min_height: MIN_HEIGHT,
        bad: None,
    });
    let mut rows = random_rows(r, 9);
    let k = r.gen_range(0..9);
    rows[k].event.output[r.gen_range(0..WIDTH)] ^= 1;
    v.push(Case {
        name: format!("call {k} of 9 with a wrong output"),
        rows,
        min_height: MIN_HEIGHT,
        bad: Some(k as u32),
    });
    v
}

fn height(c: &Case) -> usize {
    c.rows.len().next_power_of_two().max(c.min_height)
}

fn old_ts_u32(rows: &[Poseidon2Row]) -> Vec<u32> {
    rows.iter()
        .flat_map(|r| r.old_ts.map(|t| t as u32))
        .collect()
}

const DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    std::vector<u64> consts(P2_DIAG + P2_W);
    rd(consts.data(), consts.size() * 8);
    u64 hdr[2];
    while (fread(hdr, 8, 2, stdin) == 2) {
        const u64 n = hdr[0], rows = hdr[1];
        std::vector<Poseidon2Event> ev(n + 1);
        rd(ev.data(), n * sizeof(Poseidon2Event));
        std::vector<u32> ots(n * P2_W + 1);
        rd(ots.data(), n * P2_W * 4);
        std::vector<u64> trace(rows * POSEIDON2_WIDTH, ~0ull);
        std::vector<u32> counts(LK_COUNT * LK_ROWS, 0);
        u32 err = 0xffffffffu;
        for (u64 r = 0; r < rows; r++)
            poseidon2_fill_row(r, ev.data(), n, ots.data(), consts.data(), rows, trace.data(), counts.data(), &err);
        fwrite(trace.data(), 8, trace.size(), stdout);
        fwrite(counts.data(), 4, counts.size(), stdout);
        fwrite(&err, 4, 1, stdout);
    }
    return 0;
}
"#;

/// The host fill's trace and lookups, or `None` for a bad call (the host refuses it too).
fn host(c: &Case) -> Option<(RowMajorMatrix, Lookups)> {
    let mut lk = Lookups::new();
    match poseidon2_trace(&c.rows, c.min_height, &mut lk) {
        Ok(t) => Some((t, lk)),
        Err(e) => {
            assert!(c.bad.is_some(), "{}: host fill failed: {e}", c.name);
            assert!(e.contains("not the permutation"), "{e}");
            None
        }
    }
}

#[test]
fn gpu_poseidon2_fill_matches_cpu() {
    let mut r = fill_util::rng(TEST);
    let cases = cases(&mut r);
    let mut input: Vec<u8> = bytemuck::cast_slice(&constants_u64()).to_vec();
    for c in &cases {
        input.extend((c.rows.len() as u64).to_le_bytes());
        input.extend((height(c) as u64).to_le_bytes());
        let ev: Vec<Poseidon2Event> = c.rows.iter().map(|r| r.event).collect();
        input.extend_from_slice(bytemuck::cast_slice(&ev));
        input.extend_from_slice(bytemuck::cast_slice(&old_ts_u32(&c.rows)));
    }
    match host_emu::run(
        "poseidon2",
        zkrv_machine_cuda::kernels::POSEIDON2_CU.src,
        DRIVER,
        &input,
    ) {
        None => eprintln!("SKIPPED {TEST} (host emulation): no C++ compiler"),
        Some(out) => {
            let mut at = 0;
            for c in &cases {
                let n = height(c) * NUM_POSEIDON2_COLS;
                let trace = host_emu::u64s(&out[at..at + 8 * n]);
                at += 8 * n;
                let counts = host_emu::u32s(&out[at..at + 4 * (7 << 16)]);
                at += 4 * (7 << 16);
                let err = host_emu::u32s(&out[at..at + 4])[0];
                at += 4;
                let what = format!("host emulation, {}", c.name);
                assert_eq!(err, c.bad.unwrap_or(u32::MAX), "{what}: error flag");
                if let Some((t, lk)) = host(c) {
                    fill_util::assert_trace_eq(&what, &t, &trace);
                    fill_util::assert_lookups_eq(&what, &lk, &counts);
                }
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
            poseidon2: c.rows.iter().map(|r| r.event).collect(),
            ..Record::default()
        };
        let calls = DeviceCalls::upload(&dev, &rec, &mut stats).unwrap();
        let old_ts = dev.upload(&old_ts_u32(&c.rows)).unwrap();
        let lookups = DeviceLookups::new(&dev).unwrap();
        let got = fill_poseidon2_resident(
            &dev,
            &calls,
            old_ts.ptr(),
            c.min_height,
            &lookups,
            &mut stats,
        );
        match host(c) {
            None => {
                let e = got.err().expect("a bad call must fail").to_string();
                let k = c.bad.unwrap();
                assert!(
                    e.contains(&format!(
                        "poseidon2 call {k} (cycle {})",
                        c.rows[k as usize].event.cycle
                    )),
                    "{what}: {e}"
                );
            }
            Some((t, lk)) => {
                let d = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                fill_util::assert_trace_eq(&what, &t, &dev.download(&d.data).unwrap());
                fill_util::assert_lookups_eq(&what, &lk, &dev.download(&lookups.counts).unwrap());
            }
        }
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
    // precompiles.elf reads its input through `read`: the SYSIO rows as the host makes them for the walk.
    let (_, inputs) = generate_split(&g.decode, rec, &g.input, MIN_HEIGHT, dev_split).unwrap();
    let sysio = inputs.sysio;
    let w = zkrv_machine_cuda::tables::memwalk::mem_walk(
        &dev,
        &cycles,
        &decode,
        &rec.pages,
        &rec.init_pages,
        &rec.final_pages,
        &sysio,
        &calls,
        zkrv_machine_cuda::tables::memwalk::MEM_WALK_CHUNK,
        &mut stats,
    )
    .unwrap();
    let lookups = DeviceLookups::new(&dev).unwrap();
    let d = fill_poseidon2_resident(
        &dev,
        &calls,
        w.call_old_ts(2),
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
