//! EQ fill parity (`kernels/tables/eq.cu` vs `zkrv_machine::tables::eq::eq_trace`): every cell (padding rows
//! included) and the (untouched) BITWISE lookup histogram, on random requests (seeded, `ZKRV_SEED` to replay;
//! equal operands, equal low words, equal high words) at edge sizes (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 requests, a
//! min_height above the request count), on every pair of edge operands, and on the real guests' requests (whose
//! split is checked against `generate`, see `request_fill::guest_inputs`). The host emulation of the kernel
//! always runs (no GPU needed); the GPU part prints `SKIPPED gpu_eq_fill_matches_cpu (GPU part): <reason>`
//! without a device, else runs with poisoned allocations (`dev.set_debug(true)`).
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
use request_fill::{count, operand, Case, RequestFill, EDGES};
use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::eq::{eq_trace, NUM_EQ_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::eq::{eq_requests, fill_eq_resident};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

type EqReqs = BTreeMap<(u64, u64), u64>;

struct Eq;

impl RequestFill for Eq {
    const TEST: &'static str = "gpu_eq_fill_matches_cpu";
    const TABLE: &'static str = "EQ";
    const WIDTH: usize = NUM_EQ_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::EQ_CU.src;
    const ROW_FN: &'static str = "eq_fill_row";
    const REQUEST: &'static str = "EqRequest";
    const WORDS: usize = 3;
    type Requests = EqReqs;

    fn len(req: &EqReqs) -> usize {
        req.len()
    }
    fn host(req: &EqReqs, min_height: usize, _lookups: &mut Lookups) -> RowMajorMatrix {
        eq_trace(req, min_height)
    }
    fn words(req: &EqReqs) -> Vec<u64> {
        eq_requests(req)
            .iter()
            .flat_map(|q| [q.a, q.b, q.m])
            .collect()
    }
    fn gpu(
        dev: &Device,
        req: &EqReqs,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "EQ", &eq_requests(req), stats)?;
        fill_eq_resident(dev, &d, min_height, lookups)
    }
}

/// `n` distinct random requests (equal operands, equal low or high words now and then).
fn random_requests(r: &mut StdRng, n: usize) -> EqReqs {
    let mut req = EqReqs::new();
    while req.len() < n {
        let a = operand(r);
        let b = match r.gen_range(0..6) {
            0 => a,
            1 => a ^ (r.next_u64() << 32),
            2 => a ^ (r.next_u64() >> 32),
            _ => operand(r),
        };
        req.insert((a, b), count(r));
    }
    req
}

fn cases(r: &mut StdRng) -> Vec<Case<EqReqs>> {
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
    let mut edges = EqReqs::new();
    for &a in &EDGES {
        for &b in &EDGES {
            edges.insert((a, b), 1 + (a ^ b) % 7);
        }
    }
    v.push(Case {
        name: "every pair of edge operands".into(),
        req: edges,
        min_height: MIN_HEIGHT,
    });
    let fill = DeviceFill::of(&[Table::Eq]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, _| {
        vec![(Table::Eq, eq_trace(&inputs.eq, inputs.min_height))]
    }) {
        v.push(Case {
            name,
            req: inputs.eq,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_eq_fill_matches_cpu() {
    let mut r = fill_util::rng(Eq::TEST);
    request_fill::check::<Eq>(&cases(&mut r));
}
