//! BYTEWISE fill parity (`kernels/tables/bytewise.cu` vs `zkrv_machine::tables::bytewise::bytewise_trace`):
//! every cell (padding rows included) and the BITWISE lookup histogram, on random requests (seeded, `ZKRV_SEED`
//! to replay; AND, OR, XOR) at edge sizes (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 requests, a min_height above the
//! request count), on every op x pair of edge operands, and on the real guests' requests (whose split is checked
//! against `generate`, see `request_fill::guest_inputs`). The host emulation of the kernel always runs (no GPU
//! needed); the GPU part prints `SKIPPED gpu_bytewise_fill_matches_cpu (GPU part): <reason>` without a device,
//! else runs with poisoned allocations (`dev.set_debug(true)`).
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/request_fill.rs"]
mod request_fill;

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::Rng;
use request_fill::{count, operand, Case, RequestFill, EDGES};
use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::bus::alu;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::bytewise::{bytewise_trace, NUM_BYTEWISE_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::bytewise::{bytewise_requests, fill_bytewise_resident};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

type BwReqs = BTreeMap<(u64, u64, u64), u64>;

struct Bytewise;

impl RequestFill for Bytewise {
    const TEST: &'static str = "gpu_bytewise_fill_matches_cpu";
    const TABLE: &'static str = "BYTEWISE";
    const WIDTH: usize = NUM_BYTEWISE_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::BYTEWISE_CU.src;
    const ROW_FN: &'static str = "bytewise_fill_row";
    const REQUEST: &'static str = "BytewiseRequest";
    const WORDS: usize = 4;
    type Requests = BwReqs;

    fn len(req: &BwReqs) -> usize {
        req.len()
    }
    fn host(req: &BwReqs, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        bytewise_trace(req, min_height, lookups)
    }
    fn words(req: &BwReqs) -> Vec<u64> {
        bytewise_requests(req)
            .iter()
            .flat_map(|q| [q.op, q.a, q.b, q.m])
            .collect()
    }
    fn gpu(
        dev: &Device,
        req: &BwReqs,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "BYTEWISE", &bytewise_requests(req), stats)?;
        fill_bytewise_resident(dev, &d, min_height, lookups)
    }
}

const OPS: [u64; 3] = [alu::AND, alu::OR, alu::XOR];

/// `n` distinct random requests (every op, equal operands, counts up to 2^40).
fn random_requests(r: &mut StdRng, n: usize) -> BwReqs {
    let mut req = BwReqs::new();
    while req.len() < n {
        let a = operand(r);
        let b = if r.gen_range(0..6) == 0 {
            a
        } else {
            operand(r)
        };
        req.insert((OPS[r.gen_range(0..3)], a, b), count(r));
    }
    req
}

fn cases(r: &mut StdRng) -> Vec<Case<BwReqs>> {
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
    let mut edges = BwReqs::new();
    for op in OPS {
        for &a in &EDGES {
            for &b in &EDGES {
                edges.insert((op, a, b), 1 + (a ^ b) % 7);
            }
        }
    }
    v.push(Case {
        name: "every op x pair of edge operands".into(),
        req: edges,
        min_height: MIN_HEIGHT,
    });
    let fill = DeviceFill::of(&[Table::Bytewise]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        let t = bytewise_trace(&inputs.bytewise, inputs.min_height, lk);
        vec![(Table::Bytewise, t)]
    }) {
        v.push(Case {
            name,
            req: inputs.bytewise,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_bytewise_fill_matches_cpu() {
    let mut r = fill_util::rng(Bytewise::TEST);
    request_fill::check::<Bytewise>(&cases(&mut r));
}
