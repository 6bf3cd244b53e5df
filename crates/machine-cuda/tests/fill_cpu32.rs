//! CPU32 fill parity (`kernels/tables/cpu32.cu` vs `zkrv_machine::tables::cpu32::cpu32_trace`): every cell
//! (padding rows included) and the BITWISE lookup histogram, on random W operations (seeded, `ZKRV_SEED` to
//! replay; every op, 32-bit edge operands: division by zero, DIVW overflow, shift amounts with high bits) at edge
//! sizes (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 operations, a min_height above the count), on every op x pair of edge
//! operands, and on the real guests' operations (whose split is checked against `generate`, see
//! `request_fill::guest_inputs`). The host emulation of the kernel always runs (no GPU needed); the GPU part
//! prints `SKIPPED gpu_cpu32_fill_matches_cpu (GPU part): <reason>` without a device, else runs with poisoned
//! allocations (`dev.set_debug(true)`).
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/request_fill.rs"]
mod request_fill;

use rand::rngs::StdRng;
use rand::Rng;
use request_fill::{operand, Case, RequestFill, EDGES};
use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::bus::alu;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::cpu32::{cpu32_trace, NUM_CPU32_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::cpu32::{cpu32_inputs, fill_cpu32_resident};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

type WOps = Vec<(u64, u64, u64)>;

struct Cpu32;

impl RequestFill for Cpu32 {
    const TEST: &'static str = "gpu_cpu32_fill_matches_cpu";
    const TABLE: &'static str = "CPU32";
    const WIDTH: usize = NUM_CPU32_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::CPU32_CU.src;
    const ROW_FN: &'static str = "cpu32_fill_row";
    const REQUEST: &'static str = "Cpu32In";
    const WORDS: usize = 3;
    type Requests = WOps;

    fn len(ops: &WOps) -> usize {
        ops.len()
    }
    fn host(ops: &WOps, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        cpu32_trace(ops, min_height, lookups).unwrap().0
    }
    fn words(ops: &WOps) -> Vec<u64> {
        cpu32_inputs(ops)
            .unwrap()
            .iter()
            .flat_map(|q| [q.a, q.b, q.op])
            .collect()
    }
    fn gpu(
        dev: &Device,
        ops: &WOps,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "CPU32", &cpu32_inputs(ops)?, stats)?;
        fill_cpu32_resident(dev, &d, min_height, lookups)
    }
}

/// 32-bit edges (sign bit, DIVW's overflow operands, sign-extended words) besides the 64-bit ones.
const EDGES32: [u64; 6] = [
    0x8000_0000,
    0x7fff_ffff,
    0xffff_ffff_8000_0000,
    0x1_8000_0000,
    0xffff_ffff_ffff_ffe1,
    0x1_0000_001f,
];

fn w_operand(r: &mut StdRng) -> u64 {
    match r.gen_range(0..4) {
        0 => EDGES32[r.gen_range(0..EDGES32.len())],
        _ => operand(r),
    }
}

/// `n` random W operations (every op; b = 0 and equal operands now and then).
fn random_ops(r: &mut StdRng, n: usize) -> WOps {
    (0..n)
        .map(|_| {
            let op = r.gen_range(alu::ADDW..=alu::REMUW);
            let a = w_operand(r);
            let b = match r.gen_range(0..8) {
                0 => 0,
                1 => a,
                _ => w_operand(r),
            };
            (op, a, b)
        })
        .collect()
}

fn cases(r: &mut StdRng) -> Vec<Case<WOps>> {
    let mut v = Vec::new();
    for n in [0usize, 1, 2, 7, 8, 9, 255, 256, 257, 4095, 4096, 4097] {
        v.push(Case {
            name: format!("{n} random W operations"),
            req: random_ops(r, n),
            min_height: MIN_HEIGHT,
        });
    }
    v.push(Case {
        name: "5 random W operations, min_height 64".into(),
        req: random_ops(r, 5),
        min_height: 64,
    });
    let edges: Vec<u64> = EDGES.iter().chain(&EDGES32).copied().collect();
    let mut all = WOps::new();
    for op in alu::ADDW..=alu::REMUW {
        for &a in &edges {
            for &b in &edges {
                all.push((op, a, b));
            }
        }
    }
    v.push(Case {
        name: "every op x pair of edge operands".into(),
        req: all,
        min_height: MIN_HEIGHT,
    });
    let fill = DeviceFill::of(&[Table::Cpu32]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        let (t, _) = cpu32_trace(&inputs.cpu32, inputs.min_height, lk).unwrap();
        vec![(Table::Cpu32, t)]
    }) {
        v.push(Case {
            name,
            req: inputs.cpu32,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_cpu32_fill_matches_cpu() {
    let mut r = fill_util::rng(Cpu32::TEST);
    request_fill::check::<Cpu32>(&cases(&mut r));
}

/// An op that is not a W code is refused before anything is uploaded (as `cpu32_trace` refuses it).
#[test]
fn cpu32_inputs_refuse_non_w_ops() {
    assert!(cpu32_inputs(&[(alu::ADDW, 1, 2), (alu::REMUW, 3, 0)]).is_ok());
    for op in [alu::ADDW - 1, alu::REMUW + 1, alu::MUL] {
        let e = cpu32_inputs(&[(alu::ADDW, 1, 2), (op, 1, 2)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("operation 1") && e.contains("not a W op"), "{e}");
        assert!(cpu32_trace(&[(op, 1, 2)], MIN_HEIGHT, &mut Lookups::new()).is_none());
    }
}
