//! DVRM fill parity (`kernels/tables/dvrm.cu` vs `zkrv_machine::tables::dvrm::dvrm_trace`): every cell (padding
//! rows included) and the BITWISE lookup histogram, on random requests (seeded, `ZKRV_SEED` to replay; signed and
//! unsigned, division by zero, the signed overflow, negative remainders) at edge sizes (0, 1, 2, 2^k - 1, 2^k,
//! 2^k + 1 requests, a min_height above the request count), on every pair of edge operands, and on the real
//! guests' requests (whose split is checked against `generate`, see `request_fill::guest_inputs`). The host
//! emulation of the kernel always runs (no GPU needed); the GPU part prints `SKIPPED gpu_dvrm_fill_matches_cpu
//! (GPU part): <reason>` without a device, else runs with poisoned allocations (`dev.set_debug(true)`).
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
use zkrv_machine::tables::dvrm::{dvrm_requests, dvrm_trace, DvrmRequests, NUM_DVRM_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::dvrm::{dvrm_upload, fill_dvrm_resident};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

struct Dvrm;

impl RequestFill for Dvrm {
    const TEST: &'static str = "gpu_dvrm_fill_matches_cpu";
    const TABLE: &'static str = "DVRM";
    const WIDTH: usize = NUM_DVRM_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::DVRM_CU.src;
    const ROW_FN: &'static str = "dvrm_fill_row";
    const REQUEST: &'static str = "DvrmRequest";
    const WORDS: usize = 5;
    type Requests = DvrmRequests;

    fn len(req: &DvrmRequests) -> usize {
        req.len()
    }
    fn host(req: &DvrmRequests, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        let (t, facts) = dvrm_trace(req, min_height, lookups);
        // The host split asks MUL and LT for exactly what the full fill does.
        assert_eq!(facts, dvrm_requests(req), "dvrm_requests");
        t
    }
    fn words(req: &DvrmRequests) -> Vec<u64> {
        dvrm_upload(req)
            .iter()
            .flat_map(|q| [q.n, q.d, q.signed, q.m_q, q.m_r])
            .collect()
    }
    fn gpu(
        dev: &Device,
        req: &DvrmRequests,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "DVRM", &dvrm_upload(req), stats)?;
        fill_dvrm_resident(dev, &d, min_height, lookups)
    }
}

/// `n` distinct random requests (both signednesses; d = 0, d = ±1 and d = n now and then).
fn random_requests(r: &mut StdRng, n: usize) -> DvrmRequests {
    let mut req = DvrmRequests::new();
    while req.len() < n {
        let a = operand(r);
        let d = match r.gen_range(0..10) {
            0 => 0,
            1 => u64::MAX,
            2 => 1,
            3 => a,
            _ => operand(r),
        };
        let m = match r.gen_range(0..3) {
            0 => (count(r), 0),
            1 => (0, count(r)),
            _ => (count(r), count(r)),
        };
        req.insert((a, d, r.gen()), m);
    }
    req
}

fn cases(r: &mut StdRng) -> Vec<Case<DvrmRequests>> {
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
    let mut edges = DvrmRequests::new();
    for &a in &EDGES {
        for &b in &EDGES {
            for s in [false, true] {
                edges.insert((a, b, s), (1 + (a ^ b) % 7, (a ^ b) % 3));
            }
        }
    }
    v.push(Case {
        name: "every pair of edge operands, both signednesses".into(),
        req: edges,
        min_height: MIN_HEIGHT,
    });
    let fill = DeviceFill::of(&[Table::Dvrm]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        let (t, _) = dvrm_trace(&inputs.dvrm, inputs.min_height, lk);
        vec![(Table::Dvrm, t)]
    }) {
        v.push(Case {
            name,
            req: inputs.dvrm,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_dvrm_fill_matches_cpu() {
    let mut r = fill_util::rng(Dvrm::TEST);
    request_fill::check::<Dvrm>(&cases(&mut r));
}
