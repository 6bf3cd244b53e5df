//! LT fill parity (`kernels/tables/lt.cu` vs `zkrv_machine::tables::lt::lt_trace`): every cell (padding rows
//! included) and the BITWISE lookup histogram, on random requests (seeded, `ZKRV_SEED` to replay) at edge sizes
//! (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 requests, a min_height above the request count), on every pair of edge
//! operands, and on the real guests' requests. The host emulation of the kernel always runs (no GPU needed);
//! the GPU part prints `SKIPPED gpu_lt_fill_matches_cpu (GPU part): <reason>` without a device, else runs with
//! poisoned allocations (`dev.set_debug(true)`).
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/request_fill.rs"]
mod request_fill;

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, RngCore};
use request_fill::{Case, RequestFill};
use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::lt::{lt_trace, NUM_LT_COLS};
use zkrv_machine::trace::{generate_split, DeviceFill};
use zkrv_machine::Table;
use zkrv_machine::MIN_HEIGHT;
use zkrv_machine_cuda::tables::lt::{fill_lt_resident, lt_requests};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

type LtReqs = BTreeMap<(u64, u64, bool), u64>;

struct Lt;

impl RequestFill for Lt {
    const TEST: &'static str = "gpu_lt_fill_matches_cpu";
    const TABLE: &'static str = "LT";
    const WIDTH: usize = NUM_LT_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::LT_CU.src;
    const ROW_FN: &'static str = "lt_fill_row";
    const REQUEST: &'static str = "LtRequest";
    const WORDS: usize = 4;
    type Requests = LtReqs;

    fn len(req: &LtReqs) -> usize {
        req.len()
    }
    fn host(req: &LtReqs, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        lt_trace(req, min_height, lookups)
    }
    fn words(req: &LtReqs) -> Vec<u64> {
        lt_requests(req)
            .iter()
            .flat_map(|q| [q.a, q.b, q.signed, q.m])
            .collect()
    }
    fn gpu(
        dev: &Device,
        req: &LtReqs,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "LT", &lt_requests(req), stats)?;
        fill_lt_resident(dev, &d, min_height, lookups)
    }
}

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

/// The LT requests of every guest (`generate_split` with LT and SHIFT left to the device).
fn guest_requests() -> Vec<(String, LtReqs)> {
    let fill = DeviceFill::of(&[Table::Lt, Table::Shift]);
    fill_util::guest_runs()
        .into_iter()
        .map(|g| {
            let (_, inputs) =
                generate_split(&g.decode, &g.record, &g.input, MIN_HEIGHT, fill).unwrap();
            assert_eq!(inputs.min_height, MIN_HEIGHT);
            (format!("guest {}", g.name), inputs.lt)
        })
        .collect()
}

fn cases(r: &mut StdRng) -> Vec<Case<LtReqs>> {
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

#[test]
fn gpu_lt_fill_matches_cpu() {
    let mut r = fill_util::rng(Lt::TEST);
    request_fill::check::<Lt>(&cases(&mut r));
}
