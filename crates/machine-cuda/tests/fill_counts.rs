//! Parity of the resident multiplicity columns with the host's: DECODE (`kernels/tables/decode.cu`, counted per
//! CPU row by the CPU fill, vs the host walk's DECODE counts), POW2 (`pow2_count`/`pow2_fill` of
//! `kernels/tables/shift.cu`, counted per SHIFT row, vs `shift_side_requests`) and BITWISE
//! (`kernels/tables/bitwise.cu`, device histogram + host histogram, vs `Lookups::trace`).
//!
//! * DECODE: the real guests at the default and a larger min height (padding counted at row 0), checked
//!   against the split's reference counts (`FillInputs::decode`, themselves checked against `generate` by
//!   `request_fill::guest_inputs`).
//! * POW2: random SHIFT requests (seeded, `ZKRV_SEED` to replay) at edge sizes, every op and amount edge.
//! * BITWISE: random sparse histograms (hot counters up to 2^31 - 1 on both sides), with and without a host
//!   histogram.
//!
//! The host emulation always runs (no GPU needed); the GPU part prints `SKIPPED <test> (GPU part): <reason>`
//! without a device, else runs the real fills (poisoned allocations) and checks that nothing is uploaded but
//! the fills' own inputs.
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/request_fill.rs"]
mod request_fill;

use rand::rngs::StdRng;
use rand::{Rng, RngCore};
use request_fill::operand;
use zkrv_cuda::TransferStats;
use zkrv_executor::CycleEvent;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::cpu::cpu_height;
use zkrv_machine::tables::mul::MulRequests;
use zkrv_machine::tables::shift::{
    pow2_height, shift_height, shift_side_requests, ShiftOp, ShiftRequests,
};
use zkrv_machine::trace::{generate_split, DeviceFill};
use zkrv_machine::Table;
use zkrv_machine::MIN_HEIGHT;
use zkrv_machine_cuda::tables::bitwise::fill_bitwise;
use zkrv_machine_cuda::tables::cpu::fill_cpu;
use zkrv_machine_cuda::tables::decode::fill_decode;
use zkrv_machine_cuda::tables::shift::{fill_pow2, fill_shift_resident, shift_requests};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::field::PrimeField64;

fn rd_helpers() -> &'static str {
    r#"
static u64 rd() {
    u64 x;
    if (fread(&x, 8, 1, stdin) != 1) exit(2);
    return x;
}
"#
}

/// One DECODE case: the record's cycles, the CPU fill's decode data and the host's counts.
struct DecodeCase {
    name: String,
    cycles: Vec<CycleEvent>,
    cpu: zkrv_machine::trace::CpuFillInputs,
    min_height: usize,
    want: Vec<u64>,
}

fn decode_cases() -> Vec<DecodeCase> {
    let fill = DeviceFill::of(&[Table::Cpu, Table::Decode]);
    let mut v = Vec::new();
    for g in fill_util::guest_runs() {
        for min_height in [MIN_HEIGHT, 1 << 12] {
            let (t, inputs) =
                generate_split(&g.decode, &g.record, &g.input, min_height, fill).unwrap();
            assert_eq!(
                t.tables[Table::Decode].height(),
                0,
                "{}: DECODE left to the device",
                g.name
            );
            assert_eq!(inputs.decode.len(), g.decode.height(min_height));
            let full =
                zkrv_machine::trace::generate(&g.decode, &g.record, &g.input, min_height).unwrap();
            let host: Vec<u64> = full.tables[Table::Decode]
                .values
                .iter()
                .map(|x| x.as_canonical_u64())
                .collect();
            assert_eq!(inputs.decode, host, "{}: reference DECODE counts", g.name);
            v.push(DecodeCase {
                name: format!("guest {} (min height {min_height})", g.name),
                cycles: g.record.cycles.clone(),
                cpu: inputs.cpu.unwrap(),
                min_height,
                want: inputs.decode,
            });
        }
    }
    v
}

#[test]
fn gpu_decode_counts_match_cpu() {
    let cases = decode_cases();
    let driver = format!(
        "{}{}",
        rd_helpers(),
        r#"
int main() {
    u64 ncases = rd();
    for (u64 c = 0; c < ncases; c++) {
        u64 n_cycles = rd(), height = rd(), base_pc = rd(), n_slots = rd(), n_dec = rd();
        std::vector<CycleEvent> cycles(n_cycles + 1);
        if (n_cycles && fread(cycles.data(), sizeof(CycleEvent), n_cycles, stdin) != n_cycles) exit(3);
        std::vector<u32> slots(n_slots + 1);
        if (n_slots && fread(slots.data(), 4, n_slots, stdin) != n_slots) exit(4);
        std::vector<u32> dcounts(n_dec, 0u);
        for (u64 r = 0; r < height; r++)
            decode_count_row(r, cycles.data(), n_cycles, slots.data(), (u32)base_pc, (u32)n_slots, dcounts.data(),
                             height, ~0u);
        std::vector<u64> trace(n_dec, ~0ull);
        for (u64 r = 0; r < n_dec; r++) counts_column_row(r, dcounts.data(), trace.data());
        fwrite(trace.data(), 8, trace.size(), stdout);
    }
    return 0;
}
"#
    );
    let mut input = (cases.len() as u64).to_le_bytes().to_vec();
    for c in &cases {
        let height = cpu_height(c.cycles.len(), c.min_height);
        for v in [
            c.cycles.len() as u64,
            height as u64,
            c.cpu.decode.base_pc as u64,
            c.cpu.decode.row_of_pc.len() as u64,
            c.want.len() as u64,
        ] {
            input.extend_from_slice(&v.to_le_bytes());
        }
        input.extend_from_slice(bytemuck::cast_slice(&c.cycles));
        input.extend_from_slice(bytemuck::cast_slice(&c.cpu.decode.row_of_pc));
    }
    match host_emu::run(
        "decode",
        zkrv_machine_cuda::kernels::DECODE_CU.src,
        &driver,
        &input,
    ) {
        None => eprintln!("SKIPPED gpu_decode_counts_match_cpu (host emulation): no C++ compiler"),
        Some(out) => {
            let got = host_emu::u64s(&out);
            let mut at = 0;
            for c in &cases {
                assert_eq!(
                    got[at..at + c.want.len()],
                    c.want[..],
                    "host emulation, {}",
                    c.name
                );
                at += c.want.len();
            }
            assert_eq!(at, got.len());
            eprintln!(
                "gpu_decode_counts_match_cpu: host emulation matches on {} cases",
                cases.len()
            );
        }
    }
    let Some(dev) = fill_util::device("gpu_decode_counts_match_cpu") else {
        return;
    };
    for c in &cases {
        let lookups = DeviceLookups::with_counters(&dev, c.want.len(), 0).unwrap();
        let mut stats = TransferStats::default();
        fill_cpu(
            &dev,
            &c.cycles,
            &c.cpu.walk,
            &c.cpu.decode,
            c.min_height,
            c.cpu.end_pc,
            &lookups,
            &mut stats,
        )
        .unwrap();
        let before = stats.total_h2d();
        let t = fill_decode(&dev, &lookups).unwrap();
        assert_eq!(
            (t.width, 1usize << t.log_height),
            (1, c.want.len()),
            "{}",
            c.name
        );
        assert_eq!(dev.download(&t.data).unwrap(), c.want, "GPU, {}", c.name);
        assert_eq!(
            stats.total_h2d(),
            before,
            "{}: DECODE uploads nothing",
            c.name
        );
    }
    // Without counters the DECODE fill is refused, not filled with zeros.
    let lookups = DeviceLookups::new(&dev).unwrap();
    let e = fill_decode(&dev, &lookups)
        .err()
        .expect("no counters")
        .to_string();
    assert!(e.contains("counters"), "{e}");
    eprintln!(
        "gpu_decode_counts_match_cpu: GPU matches on {} cases",
        cases.len()
    );
}

/// SHIFT requests as tests/fill_shift.rs draws them.
const OPS: [ShiftOp; 6] = [
    ShiftOp::Sll,
    ShiftOp::Srl,
    ShiftOp::Sra,
    ShiftOp::Sll5,
    ShiftOp::Srl5,
    ShiftOp::Sra5,
];

/// Shift amounts: small ones, masked ones (bits above 5/6 set, b_hi set), edges.
const AMOUNTS: [u64; 16] = [
    0,
    1,
    31,
    32,
    33,
    63,
    64,
    65,
    95,
    127,
    1 << 31,
    (1 << 32) - 1,
    (1 << 32) + 5,
    0xffff_ffff_ffff_ffc1,
    u64::MAX,
    u64::MAX - 31,
];

fn amount(r: &mut StdRng) -> u64 {
    match r.gen_range(0..4) {
        0 => AMOUNTS[r.gen_range(0..AMOUNTS.len())],
        1 => r.gen_range(0..64),
        2 => r.next_u64() & 0xffff_ffff,
        _ => r.next_u64(),
    }
}

/// `n` distinct random requests (every op, counts up to 2^40).
fn random_requests(r: &mut StdRng, n: usize) -> ShiftRequests {
    let mut req = ShiftRequests::new();
    while req.len() < n {
        let op = OPS[r.gen_range(0..OPS.len())];
        let a = operand(r);
        let b = if r.gen_range(0..8) == 0 { a } else { amount(r) };
        let m = if r.gen_range(0..16) == 0 {
            r.gen_range(1..1u64 << 40)
        } else {
            r.gen_range(1..5)
        };
        req.insert((op, a, b), m);
    }
    req
}

fn pow2_cases(r: &mut StdRng) -> Vec<(String, ShiftRequests, usize)> {
    let mut v = Vec::new();
    for n in [0usize, 1, 2, 31, 32, 33, 255, 256, 257, 4097] {
        v.push((
            format!("{n} random requests"),
            random_requests(r, n),
            MIN_HEIGHT,
        ));
    }
    v.push((
        "5 random requests, min height 256".into(),
        random_requests(r, 5),
        256,
    ));
    v
}

fn pow2_want(req: &ShiftRequests, min_height: usize) -> Vec<u64> {
    let m = shift_side_requests(req, min_height, &mut MulRequests::new());
    m.values.iter().map(|x| x.as_canonical_u64()).collect()
}

#[test]
fn gpu_pow2_counts_match_cpu() {
    let mut r = fill_util::rng("gpu_pow2_counts_match_cpu");
    let cases = pow2_cases(&mut r);
    let driver = format!(
        "{}{}",
        rd_helpers(),
        r#"
int main() {
    u64 ncases = rd();
    for (u64 c = 0; c < ncases; c++) {
        u64 len = rd(), rows = rd(), n_pow2 = rd();
        std::vector<ShiftRequest> req(len + 1);
        if (len && fread(req.data(), sizeof(ShiftRequest), len, stdin) != len) exit(3);
        std::vector<u32> pow2(n_pow2, 0u);
        for (u64 r = 0; r < rows; r++) pow2_count_row(r, req.data(), len, rows, pow2.data(), ~0u);
        std::vector<u64> trace(n_pow2, ~0ull);
        for (u64 r = 0; r < n_pow2; r++) counts_column_row(r, pow2.data(), trace.data());
        fwrite(trace.data(), 8, trace.size(), stdout);
    }
    return 0;
}
"#
    );
    let mut input = (cases.len() as u64).to_le_bytes().to_vec();
    let mut wants = Vec::new();
    for (_, req, mh) in &cases {
        let want = pow2_want(req, *mh);
        assert_eq!(want.len(), pow2_height(*mh));
        for v in [req.len(), shift_height(req.len(), *mh), want.len()] {
            input.extend_from_slice(&(v as u64).to_le_bytes());
        }
        for q in shift_requests(req) {
            for w in [q.a, q.b, q.op, q.m] {
                input.extend_from_slice(&w.to_le_bytes());
            }
        }
        wants.push(want);
    }
    match host_emu::run(
        "pow2",
        zkrv_machine_cuda::kernels::SHIFT_CU.src,
        &driver,
        &input,
    ) {
        None => eprintln!("SKIPPED gpu_pow2_counts_match_cpu (host emulation): no C++ compiler"),
        Some(out) => {
            let got = host_emu::u64s(&out);
            let mut at = 0;
            for ((name, _, _), want) in cases.iter().zip(&wants) {
                assert_eq!(got[at..at + want.len()], want[..], "host emulation, {name}");
                at += want.len();
            }
            assert_eq!(at, got.len());
            eprintln!(
                "gpu_pow2_counts_match_cpu: host emulation matches on {} cases",
                cases.len()
            );
        }
    }
    let Some(dev) = fill_util::device("gpu_pow2_counts_match_cpu") else {
        return;
    };
    for ((name, req, mh), want) in cases.iter().zip(&wants) {
        let lookups = DeviceLookups::with_counters(&dev, 0, want.len()).unwrap();
        let mut stats = TransferStats::default();
        (|| {
            let d = upload_requests(&dev, "SHIFT", &shift_requests(req), &mut stats)?;
            fill_shift_resident(&dev, &d, *mh, &lookups)
        })()
        .unwrap();
        let before = stats.total_h2d();
        let t = fill_pow2(&dev, &lookups).unwrap();
        assert_eq!(dev.download(&t.data).unwrap(), *want, "GPU, {name}");
        assert_eq!(stats.total_h2d(), before, "{name}: POW2 uploads nothing");
    }
    // Counters too short for the POW2 rows SHIFT names are refused.
    let lookups = DeviceLookups::with_counters(&dev, 0, 64).unwrap();
    let req = upload_requests(
        &dev,
        "SHIFT",
        &shift_requests(&cases[1].1),
        &mut TransferStats::default(),
    )
    .unwrap();
    let e = fill_shift_resident(&dev, &req, MIN_HEIGHT, &lookups)
        .err()
        .expect("64 POW2 counters refused")
        .to_string();
    assert!(e.contains("POW2 counters"), "{e}");
    eprintln!(
        "gpu_pow2_counts_match_cpu: GPU matches on {} cases",
        cases.len()
    );
}

/// A random sparse histogram (kind-major, 7 x 2^16): a few hot counters (up to 2^31 - 1), many small ones.
fn random_histogram(r: &mut StdRng) -> Vec<u32> {
    let mut h = vec![0u32; 7 << 16];
    for _ in 0..r.gen_range(0..5000) {
        let i = r.gen_range(0..h.len());
        h[i] = if r.gen_range(0..50) == 0 {
            r.gen_range(0..1u32 << 31)
        } else {
            r.gen_range(0..100)
        };
    }
    for k in 0..7 {
        if r.gen_bool(0.5) {
            h[k << 16] = r.next_u32() >> 1;
        }
    }
    h
}

#[test]
fn gpu_bitwise_fill_matches_cpu() {
    let mut r = fill_util::rng("gpu_bitwise_fill_matches_cpu");
    // (device histogram, host histogram or none)
    let cases: Vec<(Vec<u32>, Option<Vec<u32>>)> = vec![
        (vec![0; 7 << 16], None),
        (random_histogram(&mut r), None),
        (random_histogram(&mut r), Some(random_histogram(&mut r))),
        (vec![0; 7 << 16], Some(random_histogram(&mut r))),
    ];
    let want: Vec<_> = cases
        .iter()
        .map(|(d, h)| {
            let mut l = Lookups::new();
            l.add_histogram(d).unwrap();
            if let Some(h) = h {
                l.add_histogram(h).unwrap();
            }
            (l.trace(), l)
        })
        .collect();
    let driver = format!(
        "{}{}",
        rd_helpers(),
        r#"
int main() {
    u64 ncases = rd();
    std::vector<u32> dev(LK_COUNT * LK_ROWS), host(LK_COUNT * LK_ROWS);
    for (u64 c = 0; c < ncases; c++) {
        u64 has_host = rd();
        if (fread(dev.data(), 4, dev.size(), stdin) != dev.size()) exit(3);
        if (has_host && fread(host.data(), 4, host.size(), stdin) != host.size()) exit(4);
        std::vector<u64> trace(LK_ROWS * BITWISE_WIDTH, ~0ull);
        for (u64 x = 0; x < LK_ROWS; x++) bitwise_fill_row(x, dev.data(), has_host ? host.data() : nullptr, trace.data());
        fwrite(trace.data(), 8, trace.size(), stdout);
    }
    return 0;
}
"#
    );
    let mut input = (cases.len() as u64).to_le_bytes().to_vec();
    for (d, h) in &cases {
        input.extend_from_slice(&(h.is_some() as u64).to_le_bytes());
        input.extend_from_slice(bytemuck::cast_slice(d));
        if let Some(h) = h {
            input.extend_from_slice(bytemuck::cast_slice(h));
        }
    }
    match host_emu::run(
        "bitwise",
        zkrv_machine_cuda::kernels::BITWISE_CU.src,
        &driver,
        &input,
    ) {
        None => eprintln!("SKIPPED gpu_bitwise_fill_matches_cpu (host emulation): no C++ compiler"),
        Some(out) => {
            let got = host_emu::u64s(&out);
            let n = (1 << 16) * 7;
            assert_eq!(got.len(), n * cases.len());
            for (k, (t, _)) in want.iter().enumerate() {
                fill_util::assert_trace_eq(
                    &format!("host emulation, case {k}"),
                    t,
                    &got[k * n..(k + 1) * n],
                );
            }
            eprintln!(
                "gpu_bitwise_fill_matches_cpu: host emulation matches on {} cases",
                cases.len()
            );
        }
    }
    let Some(dev) = fill_util::device("gpu_bitwise_fill_matches_cpu") else {
        return;
    };
    for (k, ((d, h), (t_want, _))) in cases.iter().zip(&want).enumerate() {
        let mut lookups = DeviceLookups::new(&dev).unwrap();
        lookups.counts = dev.upload(d).unwrap();
        let mut host = Lookups::new();
        if let Some(h) = h {
            host.add_histogram(h).unwrap();
        }
        let mut stats = TransferStats::default();
        let t = fill_bitwise(&dev, &lookups, &host, &mut stats).unwrap();
        fill_util::assert_trace_eq(
            &format!("GPU, case {k}"),
            t_want,
            &dev.download(&t.data).unwrap(),
        );
        // The host histogram goes up only when it has a count.
        let want_h2d = if h.as_ref().is_some_and(|h| h.iter().any(|&x| x != 0)) {
            (4 * 7) << 16
        } else {
            0
        };
        assert_eq!(stats.total_h2d(), want_h2d, "case {k}: H2D bytes");
    }
    eprintln!(
        "gpu_bitwise_fill_matches_cpu: GPU matches on {} cases",
        cases.len()
    );
}
