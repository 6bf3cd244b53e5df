//! The parity harness of the request-table fills (LT, SHIFT, MUL, BYTEWISE, CPU32, ...: one row per request,
//! in row order, then padding rows): a table describes itself once ([`RequestFill`]) and [`check`] runs every case through
//! the host reference, the C++ host emulation of its kernel (always; a skip or, with `ZKRV_REQUIRE_CXX`, a
//! failure without a compiler) and, with a device, the GPU fill (poisoned allocations), comparing every cell
//! and the lookup histogram; on the GPU also the H2D bytes (the requests only), the 2^27-row launch guard and
//! the histogram merge. Used by tests/fill_<table>.rs (with `fill_util.rs` and `host_emu.rs`).

#![allow(dead_code)]

use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::{LookupKind, Lookups};
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

use crate::{fill_util, host_emu};

/// One request table's fill, host and device.
pub trait RequestFill {
    /// The test's name (skip lines, seeds).
    const TEST: &'static str;
    /// The table's name (the transfer-stats key).
    const TABLE: &'static str;
    /// The table's width (`NUM_<T>_COLS`).
    const WIDTH: usize;
    /// The kernel source (`zkrv_machine_cuda::kernels::<T>_CU.src`) and its row function
    /// `fn(row, requests, len, rows, trace, counts, lanes)`.
    const KERNEL: &'static str;
    const ROW_FN: &'static str;
    /// The upload struct's C name (layout.cuh); it is `WORDS x u64`.
    const REQUEST: &'static str;
    const WORDS: usize;
    /// The deduplicated requests.
    type Requests;

    fn len(req: &Self::Requests) -> usize;
    /// The host fill (the reference).
    fn host(req: &Self::Requests, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix;
    /// The upload structs' words, in row order (`WORDS` per request).
    fn words(req: &Self::Requests) -> Vec<u64>;
    /// The device fill.
    fn gpu(
        dev: &Device,
        req: &Self::Requests,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError>;
}

/// One parity case.
pub struct Case<R> {
    pub name: String,
    pub req: R,
    pub min_height: usize,
}

/// The host emulation's driver: cases `[u64 len, u64 rows, len x request]` after a case count.
fn driver<F: RequestFill>() -> String {
    format!(
        r#"
static u64 rd() {{
    u64 x;
    if (fread(&x, 8, 1, stdin) != 1) exit(2);
    return x;
}}
int main() {{
    u64 ncases = rd();
    std::vector<u32> counts(LK_COUNT * LK_ROWS);
    for (u64 c = 0; c < ncases; c++) {{
        u64 len = rd(), rows = rd();
        std::vector<{req}> req(len + 1);
        if (len && fread(req.data(), sizeof({req}), len, stdin) != len) exit(3);
        std::vector<u64> trace(rows * {width}, ~0ull);
        std::fill(counts.begin(), counts.end(), 0u);
        for (u64 r = 0; r < rows; r++) {row_fn}(r, req.data(), len, rows, trace.data(), counts.data(), ~0u);
        fwrite(trace.data(), 8, trace.size(), stdout);
        fwrite(counts.data(), 4, counts.size(), stdout);
    }}
    return 0;
}}
"#,
        req = F::REQUEST,
        width = F::WIDTH,
        row_fn = F::ROW_FN,
    )
}

/// Every case through the host emulation of the kernel (one process), compared with the host fills.
fn host_emulation<F: RequestFill>(cases: &[Case<F::Requests>], want: &[(RowMajorMatrix, Lookups)]) {
    let mut input: Vec<u8> = (cases.len() as u64).to_le_bytes().to_vec();
    for (c, (t, _)) in cases.iter().zip(want) {
        let words = F::words(&c.req);
        assert_eq!(words.len(), F::WORDS * F::len(&c.req), "{}: words", c.name);
        for v in [F::len(&c.req) as u64, t.height() as u64] {
            input.extend_from_slice(&v.to_le_bytes());
        }
        for v in &words {
            input.extend_from_slice(&v.to_le_bytes());
        }
    }
    let name = F::TABLE.to_ascii_lowercase();
    let Some(out) = host_emu::run(&name, F::KERNEL, &driver::<F>(), &input) else {
        eprintln!("SKIPPED {} (host emulation): no C++ compiler", F::TEST);
        return;
    };
    let shapes: Vec<_> = want.iter().map(|(t, _)| (t.height(), F::WIDTH)).collect();
    for ((c, (t, l)), (cells, hist)) in cases
        .iter()
        .zip(want)
        .zip(fill_util::split_output(&out, &shapes))
    {
        let what = format!("host emulation, {}", c.name);
        fill_util::assert_trace_eq(&what, t, &cells);
        fill_util::assert_lookups_eq(&what, l, &hist);
    }
    eprintln!(
        "{}: host emulation matches on {} cases",
        F::TEST,
        cases.len()
    );
}

/// Every case on the device (if any), plus the launch guard and the histogram merge.
fn gpu<F: RequestFill>(cases: &[Case<F::Requests>], want: &[(RowMajorMatrix, Lookups)]) {
    let Some(dev) = fill_util::device(F::TEST) else {
        return;
    };
    for (c, (t_want, l_want)) in cases.iter().zip(want) {
        let lookups = DeviceLookups::new(&dev).unwrap();
        let mut stats = TransferStats::default();
        let t = F::gpu(&dev, &c.req, c.min_height, &lookups, &mut stats).unwrap();
        assert_eq!(t.width, F::WIDTH, "{}", c.name);
        let what = format!("GPU, {}", c.name);
        fill_util::assert_trace_eq(&what, t_want, &dev.download(&t.data).unwrap());
        fill_util::assert_lookups_eq(&what, l_want, &dev.download(&lookups.counts).unwrap());
        let h2d = stats.bytes[&("trace-gen".to_string(), F::TABLE.to_string())].h2d;
        assert_eq!(
            h2d,
            8 * (F::WORDS * F::len(&c.req)) as u64,
            "{}: H2D bytes",
            c.name
        );
        assert_eq!(
            stats.total_h2d(),
            h2d,
            "{}: only the requests go up",
            c.name
        );
    }
    // Launch guard: a height above 2^26 rows is refused with an error, nothing launched.
    let lookups = DeviceLookups::new(&dev).unwrap();
    let e = F::gpu(
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
    let (c, (_, l_want)) = (&cases[cases.len() - 1], &want[cases.len() - 1]);
    let lookups = DeviceLookups::new(&dev).unwrap();
    F::gpu(
        &dev,
        &c.req,
        c.min_height,
        &lookups,
        &mut TransferStats::default(),
    )
    .unwrap();
    let mut merged = Lookups::new();
    lookups.merge_into(&dev, &mut merged).unwrap();
    for k in LookupKind::ALL {
        assert!(merged.counts(k) == l_want.counts(k), "merged {k:?}");
    }
    eprintln!("{}: GPU matches on {} cases", F::TEST, cases.len());
}

/// The whole parity check of a request fill on `cases` (at least 2; the last one is also merged).
pub fn check<F: RequestFill>(cases: &[Case<F::Requests>]) {
    assert!(cases.len() >= 2);
    let want: Vec<_> = cases
        .iter()
        .map(|c| {
            let mut l = Lookups::new();
            let t = F::host(&c.req, c.min_height, &mut l);
            assert_eq!(t.width, F::WIDTH, "{}: host width", c.name);
            (t, l)
        })
        .collect();
    for c in cases {
        eprintln!("  case {}: {} requests", c.name, F::len(&c.req));
    }
    host_emulation::<F>(cases, &want);
    gpu::<F>(cases, &want);
}

/// Edge operands of the random request generators.
pub const EDGES: [u64; 12] = [
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

/// A random operand: an edge, a small value, a negative one, a 32-bit one or any.
pub fn operand(r: &mut rand::rngs::StdRng) -> u64 {
    use rand::{Rng, RngCore};
    match r.gen_range(0..8) {
        0 | 1 => EDGES[r.gen_range(0..EDGES.len())],
        2 => r.gen_range(0..16),
        3 => r.next_u64() | (1 << 63),
        4 => r.next_u64() & 0xffff_ffff,
        _ => r.next_u64(),
    }
}

/// A random request count: mostly small, sometimes up to 2^40.
pub fn count(r: &mut rand::rngs::StdRng) -> u64 {
    use rand::Rng;
    if r.gen_range(0..16) == 0 {
        r.gen_range(1..1u64 << 40)
    } else {
        r.gen_range(1..5)
    }
}

/// The split of every guest with the tables of `fill` left to the device, checked against `generate`: every
/// host table is unchanged, every device table is `0 x width`, and `complete` (the host reference fills of the
/// device tables from the split's inputs, adding their lookups) gives the device tables and the missing
/// lookups. Returns each guest's name and fill inputs.
pub fn guest_inputs(
    fill: zkrv_machine::trace::DeviceFill,
    complete: impl Fn(
        &zkrv_machine::trace::FillInputs,
        &mut Lookups,
    ) -> Vec<(zkrv_machine::Table, RowMajorMatrix)>,
) -> Vec<(String, zkrv_machine::trace::FillInputs)> {
    use zkrv_machine::trace::{generate, generate_split};
    use zkrv_machine::{Table, MIN_HEIGHT};
    let mut out = Vec::new();
    for g in fill_util::guest_runs() {
        let name = g.name;
        let (split, inputs) =
            generate_split(&g.decode, &g.record, &g.input, MIN_HEIGHT, fill).unwrap();
        assert_eq!(inputs.min_height, MIN_HEIGHT);
        let full = generate(&g.decode, &g.record, &g.input, MIN_HEIGHT).unwrap();
        let mut lookups = split.lookups.clone();
        let done = complete(&inputs, &mut lookups);
        for k in LookupKind::ALL {
            assert!(
                lookups.counts(k) == full.lookups.counts(k),
                "{name}: {k:?} lookups of the split + device tables"
            );
        }
        let (st, _) = split.into_table_order();
        let (ft, _) = full.into_table_order();
        for t in Table::ALL {
            if t == Table::Bitwise {
                continue;
            }
            let (s, f) = (&st[t as usize], &ft[t as usize]);
            if fill.has(t) {
                assert_eq!(s.height(), 0, "{name}: {} left to the device", t.name());
                let d = done
                    .iter()
                    .find(|(x, _)| *x == t)
                    .unwrap_or_else(|| panic!("{name}: no reference fill of {}", t.name()));
                assert!(d.1 == *f, "{name}: {} from the fill inputs", t.name());
            } else {
                assert!(s == f, "{name}: host table {}", t.name());
            }
        }
        out.push((format!("guest {name}"), inputs));
    }
    out
}
