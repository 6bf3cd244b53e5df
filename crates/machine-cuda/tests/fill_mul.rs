//! MUL fill parity (`kernels/tables/mul.cu` vs `zkrv_machine::tables::mul::mul_trace`): every cell (padding rows
//! included) and the BITWISE lookup histogram, on random requests (seeded, `ZKRV_SEED` to replay; every sign
//! mode) at edge sizes (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 requests, a min_height above the request count), on every
//! pair of edge operands in every sign mode, and on the real guests' requests (whose split is checked against
//! `generate`, see `request_fill::guest_inputs`). The host emulation of the kernel always runs (no GPU needed);
//! the GPU part prints `SKIPPED gpu_mul_fill_matches_cpu (GPU part): <reason>` without a device, else runs with
//! poisoned allocations (`dev.set_debug(true)`).
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/request_fill.rs"]
mod request_fill;

use rand::rngs::StdRng;
use rand::Rng;
use request_fill::{count, operand, Case, RequestFill, EDGES};
use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::mul::{mul_trace, MulOp, MulRequests, NUM_MUL_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::mul::{fill_mul_resident, mul_requests};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

struct Mul;

impl RequestFill for Mul {
    const TEST: &'static str = "gpu_mul_fill_matches_cpu";
    const TABLE: &'static str = "MUL";
    const WIDTH: usize = NUM_MUL_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::MUL_CU.src;
    const ROW_FN: &'static str = "mul_fill_row";
    const REQUEST: &'static str = "MulRequest";
    const WORDS: usize = 5;
    type Requests = MulRequests;

    fn len(req: &MulRequests) -> usize {
        req.len()
    }
    fn host(req: &MulRequests, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        mul_trace(req, min_height, lookups)
    }
    fn words(req: &MulRequests) -> Vec<u64> {
        mul_requests(req)
            .iter()
            .flat_map(|q| [q.a, q.b, q.signs, q.m_lo, q.m_hi])
            .collect()
    }
    fn gpu(
        dev: &Device,
        req: &MulRequests,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "MUL", &mul_requests(req), stats)?;
        fill_mul_resident(dev, &d, min_height, lookups)
    }
}

const OPS: [MulOp; 4] = [MulOp::Mul, MulOp::Mulh, MulOp::Mulhsu, MulOp::Mulhu];

/// `n` distinct random rows (every op, so every sign mode; both counters, counts up to 2^40).
fn random_requests(r: &mut StdRng, n: usize) -> MulRequests {
    let mut req = MulRequests::new();
    while req.len() < n {
        let (a, b) = (operand(r), operand(r));
        let op = OPS[r.gen_range(0..OPS.len())];
        req.add_n(op, a, b, count(r));
        if r.gen_range(0..3) == 0 {
            req.add_n(MulOp::Mul, a, b, count(r));
        }
    }
    req
}

fn cases(r: &mut StdRng) -> Vec<Case<MulRequests>> {
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
    let mut edges = MulRequests::new();
    for &a in &EDGES {
        for &b in &EDGES {
            for op in OPS {
                edges.add_n(op, a, b, 1 + (a ^ b) % 7);
            }
        }
    }
    v.push(Case {
        name: "every pair of edge operands, every op".into(),
        req: edges,
        min_height: MIN_HEIGHT,
    });
    let fill = DeviceFill::of(&[Table::Mul]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        vec![(Table::Mul, mul_trace(&inputs.mul, inputs.min_height, lk))]
    }) {
        v.push(Case {
            name,
            req: inputs.mul,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_mul_fill_matches_cpu() {
    let mut r = fill_util::rng(Mul::TEST);
    request_fill::check::<Mul>(&cases(&mut r));
}
