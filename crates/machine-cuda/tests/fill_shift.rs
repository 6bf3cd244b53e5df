//! SHIFT fill parity (`kernels/tables/shift.cu` vs `zkrv_machine::tables::shift::shift_fill`): every cell
//! (padding rows included) and the BITWISE lookup histogram, on random requests (seeded, `ZKRV_SEED` to replay;
//! every op including the 5-bit forms, amounts with high bits set) at edge sizes (0, 1, 2, 2^k - 1, 2^k,
//! 2^k + 1 requests, a min_height above the request count), on every op x edge operand x edge amount, and on the
//! real guests' requests. On the guests it also checks the host split: `generate_split` with LT and SHIFT left
//! to the device makes the same MUL/POW2 tables as `generate`, and its lookups plus those of the LT and SHIFT
//! fills are `generate`'s. The host emulation of the kernel always runs (no GPU needed); the GPU part prints
//! `SKIPPED gpu_shift_fill_matches_cpu (GPU part): <reason>` without a device, else runs with poisoned
//! allocations (`dev.set_debug(true)`).
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/request_fill.rs"]
mod request_fill;

use rand::rngs::StdRng;
use rand::{Rng, RngCore};
use request_fill::{Case, RequestFill};
use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::{LookupKind, Lookups};
use zkrv_machine::tables::lt::lt_trace;
use zkrv_machine::tables::shift::{shift_fill, ShiftOp, ShiftRequests, NUM_SHIFT_COLS};
use zkrv_machine::trace::{generate, generate_split, DeviceFill};
use zkrv_machine::Table;
use zkrv_machine::MIN_HEIGHT;
use zkrv_machine_cuda::tables::shift::{fill_shift_resident, shift_requests};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

struct Shift;

impl RequestFill for Shift {
    const TEST: &'static str = "gpu_shift_fill_matches_cpu";
    const TABLE: &'static str = "SHIFT";
    const WIDTH: usize = NUM_SHIFT_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::SHIFT_CU.src;
    const ROW_FN: &'static str = "shift_fill_row";
    const REQUEST: &'static str = "ShiftRequest";
    const WORDS: usize = 4;
    type Requests = ShiftRequests;

    fn len(req: &ShiftRequests) -> usize {
        req.len()
    }
    fn host(req: &ShiftRequests, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        shift_fill(req, min_height, lookups)
    }
    fn words(req: &ShiftRequests) -> Vec<u64> {
        shift_requests(req)
            .iter()
            .flat_map(|q| [q.a, q.b, q.op, q.m])
            .collect()
    }
    fn gpu(
        dev: &Device,
        req: &ShiftRequests,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "SHIFT", &shift_requests(req), stats)?;
        fill_shift_resident(dev, &d, min_height, lookups)
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

fn guest_requests() -> Vec<(String, ShiftRequests)> {
    let mut out = Vec::new();
    for g in fill_util::guest_runs() {
        let (name, decode, rec, input) = (g.name, &g.decode, &g.record, &g.input);
        let fill = DeviceFill::of(&[Table::Lt, Table::Shift]);
        let (split, inputs) = generate_split(decode, rec, input, MIN_HEIGHT, fill).unwrap();
        assert_eq!(inputs.min_height, MIN_HEIGHT);
        // The host split: the tables SHIFT asks (MUL, POW2) are unchanged, and the device-filled tables'
        // lookups complete the host's.
        let full = generate(decode, rec, input, MIN_HEIGHT).unwrap();
        assert_eq!(
            split.tables[zkrv_machine::Table::Shift].values.len(),
            0,
            "{name}: SHIFT left to the device"
        );
        assert!(
            split.tables[zkrv_machine::Table::Mul].values
                == full.tables[zkrv_machine::Table::Mul].values,
            "{name}: MUL"
        );
        assert!(
            split.tables[zkrv_machine::Table::Pow2].values
                == full.tables[zkrv_machine::Table::Pow2].values,
            "{name}: POW2"
        );
        let mut lookups = split.lookups.clone();
        lt_trace(&inputs.lt, MIN_HEIGHT, &mut lookups);
        let shift = shift_fill(&inputs.shift, MIN_HEIGHT, &mut lookups);
        assert!(
            shift.values == full.tables[zkrv_machine::Table::Shift].values,
            "{name}: SHIFT rows"
        );
        for k in LookupKind::ALL {
            assert!(
                lookups.counts(k) == full.lookups.counts(k),
                "{name}: {k:?} lookups"
            );
        }
        out.push((format!("guest {name}"), inputs.shift));
    }
    out
}

fn cases(r: &mut StdRng) -> Vec<Case<ShiftRequests>> {
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
    let mut edges = ShiftRequests::new();
    for op in OPS {
        for &a in &EDGES {
            for &b in &AMOUNTS {
                edges.insert((op, a, b), 1 + (a ^ b) % 7);
            }
        }
    }
    v.push(Case {
        name: "every op x edge operand x edge amount".into(),
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
fn gpu_shift_fill_matches_cpu() {
    let mut r = fill_util::rng(Shift::TEST);
    request_fill::check::<Shift>(&cases(&mut r));
}
