//! LT fill parity (`kernels/tables/lt.cu` vs `zkrv_machine::tables::lt::lt_trace`): every cell (padding rows
//! included) and the BITWISE lookup histogram, on random requests (seeded, `ZKRV_SEED` to replay) at edge sizes
//! (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 requests, a min_height above the request count), on every pair of edge
//! operands, and on the real guests' requests. The host emulation of the kernel always runs (no GPU needed);
//! the GPU part prints `SKIPPED gpu_lt_fill_matches_cpu (GPU part): <reason>` without a device, else runs with
//! poisoned allocations (`dev.set_debug(true)`).
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use zkrv_cuda::tables::lt::{fill_lt, lt_requests, LtRequest};
use zkrv_cuda::tables::DeviceLookups;
use zkrv_cuda::{Device, TransferStats};
use zkrv_executor::{execute, ExecOptions, Program};
use zkrv_machine::tables::bitwise::{LookupKind, Lookups};
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::lt::{lt_trace, NUM_LT_COLS};
use zkrv_machine::trace::{generate_split, DeviceFill};
use zkrv_machine::MIN_HEIGHT;
use zkrv_stark::field::PrimeField64;

type LtReqs = BTreeMap<(u64, u64, bool), u64>;

const KINDS: [LookupKind; 7] = [
    LookupKind::U16,
    LookupKind::Msb16,
    LookupKind::Pair,
    LookupKind::And,
    LookupKind::Or,
    LookupKind::Xor,
    LookupKind::Msb8,
];

const EDGES: [u64; 12] = [
    0,
    1,
    2,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    0x8000_0000_0000_0001,
    u64::MAX,
    u64::MAX - 1,
    0xffff_ffff,
    1 << 32,
    0x0000_8000_0000_0000,
    0xffff_0000_0000_0000,
];

struct Case {
    name: String,
    req: LtReqs,
    min_height: usize,
}

fn rng() -> (u64, StdRng) {
    let seed = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("gpu_lt_fill_matches_cpu: seed {seed} (ZKRV_SEED={seed} to replay)");
    (seed, StdRng::seed_from_u64(seed))
}

fn operand(r: &mut StdRng) -> u64 {
    match r.gen_range(0..8) {
        0 | 1 => EDGES[r.gen_range(0..EDGES.len())],
        2 => r.gen_range(0..16),
        3 => r.next_u64() | (1 << 63),
        4 => r.next_u64() & 0xffff_ffff,
        _ => r.next_u64(),
    }
}

/// `n` distinct random requests (equal operands, both signednesses, counts up to 2^40).
fn random_requests(r: &mut StdRng, n: usize) -> LtReqs {
    let mut req = LtReqs::new();
    while req.len() < n {
        let a = operand(r);
        let b = if r.gen_range(0..6) == 0 {
            a
        } else {
            operand(r)
        };
        let m = if r.gen_range(0..16) == 0 {
            r.gen_range(1..1u64 << 40)
        } else {
            r.gen_range(1..5)
        };
        req.insert((a, b, r.gen()), m);
    }
    req
}

fn guest_requests() -> Vec<(String, LtReqs)> {
    let root = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for name in [
        "exitcode",
        "fibonacci",
        "keccak",
        "matmul",
        "modexp",
        "rustalloc",
        "rv64im",
        "sha256",
        "sort",
    ] {
        let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
        let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap();
        let program = Program::from_elf(&elf).unwrap();
        let run = execute(
            &program,
            &input,
            &ExecOptions {
                record: true,
                ..ExecOptions::default()
            },
        )
        .unwrap();
        let rec = run.record.unwrap();
        let decode = DecodeTable::new(&program).unwrap();
        let fill = DeviceFill {
            lt: true,
            shift: true,
            ..DeviceFill::NONE
        };
        let (_, inputs) = generate_split(&decode, &rec, &input, MIN_HEIGHT, fill).unwrap();
        assert_eq!(inputs.min_height, MIN_HEIGHT);
        out.push((format!("guest {name}"), inputs.lt));
    }
    out
}

fn cases(r: &mut StdRng) -> Vec<Case> {
    let mut v = Vec::new();
    for n in [0usize, 1, 2, 7, 8, 9, 255, 256, 257, 4095, 4096, 4097] {
        v.push(Case {
            name: format!("{n} random requests"),
            req: random_requests(r, n),
            min_height: MIN_HEIGHT,
        });
    }
    v.push(Case {
        name: "5 random requests, min_height 64".into(),
        req: random_requests(r, 5),
        min_height: 64,
    });
    let mut edges = LtReqs::new();
    for &a in &EDGES {
        for &b in &EDGES {
            for s in [false, true] {
                edges.insert((a, b, s), 1 + (a ^ b) % 7);
            }
        }
    }
    v.push(Case {
        name: "every pair of edge operands".into(),
        req: edges,
        min_height: MIN_HEIGHT,
    });
    for (name, req) in guest_requests() {
        v.push(Case {
            name,
            req,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

/// The host fill: cells (canonical u64, row-major) and the histogram (`7 x 2^16`, kind-major).
fn host_fill(c: &Case) -> (Vec<u64>, Vec<u32>) {
    let mut l = Lookups::new();
    let t = lt_trace(&c.req, c.min_height, &mut l);
    assert_eq!(t.width, NUM_LT_COLS);
    let cells = t.values.iter().map(|x| x.as_canonical_u64()).collect();
    let hist = KINDS.iter().flat_map(|&k| l.counts(k).to_vec()).collect();
    (cells, hist)
}

fn compare(what: &str, c: &Case, got: &[u64], hist: &[u32], want: &(Vec<u64>, Vec<u32>)) {
    assert_eq!(
        got.len(),
        want.0.len(),
        "{what}, {}: trace size ({} rows expected)",
        c.name,
        want.0.len() / NUM_LT_COLS
    );
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want.0[i]) {
        panic!(
            "{what}, {}: cell (row {}, col {}) = {:#x}, host {:#x}",
            c.name,
            i / NUM_LT_COLS,
            i % NUM_LT_COLS,
            got[i],
            want.0[i]
        );
    }
    assert_eq!(
        hist.len(),
        want.1.len(),
        "{what}, {}: histogram size",
        c.name
    );
    if let Some(i) = (0..hist.len()).find(|&i| hist[i] != want.1[i]) {
        panic!(
            "{what}, {}: lookups of {:?} at {:#x}: {}, host {}",
            c.name,
            KINDS[i >> 16],
            i & 0xffff,
            hist[i],
            want.1[i]
        );
    }
}

const DRIVER: &str = r#"
static u64 rd() {
    u64 x;
    if (fread(&x, 8, 1, stdin) != 1) exit(2);
    return x;
}
int main() {
    u64 ncases = rd();
    std::vector<u32> counts(7 * LK_ROWS);
    for (u64 c = 0; c < ncases; c++) {
        u64 len = rd(), rows = rd();
        std::vector<LtRequest> req(len + 1);
        if (len && fread(req.data(), sizeof(LtRequest), len, stdin) != len) exit(3);
        std::vector<u64> trace(rows * LT_WIDTH, ~0ull);
        std::fill(counts.begin(), counts.end(), 0u);
        for (u64 r = 0; r < rows; r++) lt_fill_row(r, req.data(), len, rows, trace.data(), counts.data(), ~0u);
        fwrite(trace.data(), 8, trace.size(), stdout);
        fwrite(counts.data(), 4, counts.size(), stdout);
    }
    return 0;
}
"#;

/// Runs every case through the host emulation of `lt.cu` (one process) and compares.
fn host_emulation(cases: &[Case], want: &[(Vec<u64>, Vec<u32>)]) {
    let mut input: Vec<u8> = (cases.len() as u64).to_le_bytes().to_vec();
    for (c, w) in cases.iter().zip(want) {
        let req = lt_requests(&c.req);
        let rows = w.0.len() / NUM_LT_COLS;
        for v in [req.len() as u64, rows as u64] {
            input.extend_from_slice(&v.to_le_bytes());
        }
        for q in &req {
            for v in [q.a, q.b, q.signed, q.m] {
                input.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    assert_eq!(std::mem::size_of::<LtRequest>(), 32);
    let Some(out) = host_emu::run("lt", zkrv_cuda::nvrtc::TABLE_LT_CU, DRIVER, &input) else {
        eprintln!("SKIPPED gpu_lt_fill_matches_cpu (host emulation): no C++ compiler");
        return;
    };
    let mut at = 0;
    for (c, w) in cases.iter().zip(want) {
        let t = host_emu::u64s(&out[at..at + 8 * w.0.len()]);
        at += 8 * w.0.len();
        let h = host_emu::u32s(&out[at..at + 4 * w.1.len()]);
        at += 4 * w.1.len();
        compare("host emulation", c, &t, &h, w);
    }
    assert_eq!(at, out.len(), "host emulation output size");
    eprintln!(
        "gpu_lt_fill_matches_cpu: host emulation matches on {} cases",
        cases.len()
    );
}

fn gpu(cases: &[Case], want: &[(Vec<u64>, Vec<u32>)]) {
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED gpu_lt_fill_matches_cpu (GPU part): {e}");
            return;
        }
    };
    dev.set_debug(true);
    eprintln!(
        "gpu_lt_fill_matches_cpu: running on {} ({})",
        dev.name(),
        dev.arch()
    );
    for (c, w) in cases.iter().zip(want) {
        let lookups = DeviceLookups::new(&dev).unwrap();
        let mut stats = TransferStats::default();
        let t = fill_lt(&dev, &c.req, c.min_height, &lookups, &mut stats).unwrap();
        assert_eq!(t.width, NUM_LT_COLS, "{}", c.name);
        assert_eq!(
            (1usize << t.log_height) * NUM_LT_COLS,
            w.0.len(),
            "{}",
            c.name
        );
        let cells = dev.download(&t.data).unwrap();
        let hist = dev.download(&lookups.counts).unwrap();
        compare("GPU", c, &cells, &hist, w);
        let h2d = stats.bytes[&("trace-gen".to_string(), "LT".to_string())].h2d;
        assert_eq!(h2d, 32 * c.req.len() as u64, "{}: H2D bytes", c.name);
        assert_eq!(
            stats.total_h2d(),
            h2d,
            "{}: only the requests go up",
            c.name
        );
    }
    // Launch guard: a height above 2^26 rows is refused with an error, nothing launched.
    let lookups = DeviceLookups::new(&dev).unwrap();
    let e = fill_lt(
        &dev,
        &cases[1].req,
        1 << 27,
        &lookups,
        &mut TransferStats::default(),
    )
    .err()
    .expect("2^27 rows refused")
    .to_string();
    assert!(e.contains("rows"), "{e}");
    assert!(
        dev.download(&lookups.counts)
            .unwrap()
            .iter()
            .all(|&x| x == 0),
        "refused fill counted lookups"
    );
    // The histogram merges into the host's lookups.
    let c = &cases[cases.len() - 1];
    let lookups = DeviceLookups::new(&dev).unwrap();
    fill_lt(
        &dev,
        &c.req,
        c.min_height,
        &lookups,
        &mut TransferStats::default(),
    )
    .unwrap();
    let mut merged = Lookups::new();
    lookups.merge_into(&dev, &mut merged).unwrap();
    let mut host = Lookups::new();
    lt_trace(&c.req, c.min_height, &mut host);
    for k in KINDS {
        assert!(merged.counts(k) == host.counts(k), "merged {k:?}");
    }
    eprintln!(
        "gpu_lt_fill_matches_cpu: GPU matches on {} cases",
        cases.len()
    );
}

#[test]
fn gpu_lt_fill_matches_cpu() {
    let (_seed, mut r) = rng();
    let cases = cases(&mut r);
    let want: Vec<_> = cases.iter().map(host_fill).collect();
    for c in &cases {
        eprintln!("  case {}: {} requests", c.name, c.req.len());
    }
    host_emulation(&cases, &want);
    gpu(&cases, &want);
}
