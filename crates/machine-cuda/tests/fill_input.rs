//! INPUT fill parity (`kernels/tables/input.cu` vs `zkrv_machine::tables::input::input_trace`): every cell
//! (padding rows included) and the BITWISE lookup histogram, on random inputs and lookup counts (seeded,
//! `ZKRV_SEED` to replay) whose row count (bytes + the end row) is 1, 2, 2^k - 1, 2^k, 2^k + 1, with a min_height
//! above it, and on the real guests' inputs (whose split is checked against `generate`, see
//! `request_fill::guest_inputs`); the packer refuses counts it cannot hold. The host emulation of the kernel
//! always runs (no GPU needed); the GPU part prints `SKIPPED gpu_input_fill_matches_cpu (GPU part): <reason>`
//! without a device, else runs with poisoned allocations (`dev.set_debug(true)`).
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
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::input::{input_trace, NUM_INPUT_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::input::{fill_input, pack_input};
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

/// The consumed input and the per-index lookup counts.
type In = (Vec<u8>, Vec<u64>);

struct Input;

impl RequestFill for Input {
    const TEST: &'static str = "gpu_input_fill_matches_cpu";
    const TABLE: &'static str = "INPUT";
    const WIDTH: usize = NUM_INPUT_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::INPUT_CU.src;
    // A whole run's table: first index 0 (segments: tests/segment_fills.rs).
    const ROW_FN: &'static str =
        "[](u64 r, const InputIn* in, u64 len, u64 rows, u64* t, u32* c, u32 l) \
                                  { input_fill_row(r, in, len, rows, t, c, l, 0); }";
    const REQUEST: &'static str = "InputIn";
    const WORDS: usize = 1;
    type Requests = In;

    fn len(x: &In) -> usize {
        x.0.len() + 1
    }
    fn host(x: &In, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        input_trace(&x.0, &x.1, min_height, lookups)
    }
    fn words(x: &In) -> Vec<u64> {
        pack_input(&x.0, &x.1, true)
            .unwrap()
            .iter()
            .map(|q| q.byte as u64 | (q.m as u64) << 32)
            .collect()
    }
    fn gpu(
        dev: &Device,
        x: &In,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        fill_input(dev, &x.0, &x.1, 0, true, min_height, lookups, stats)
    }
}

/// `n` random bytes with random counts (0 now and then, up to 2^32 - 1), the end row's count included.
fn random_input(r: &mut StdRng, n: usize) -> In {
    let mut bytes = vec![0u8; n];
    r.fill_bytes(&mut bytes);
    let uses = (0..=n)
        .map(|_| match r.gen_range(0..6) {
            0 => 0,
            1 => u32::MAX as u64,
            _ => r.gen_range(1..4),
        })
        .collect();
    (bytes, uses)
}

fn cases(r: &mut StdRng) -> Vec<Case<In>> {
    let mut v = Vec::new();
    for n in [0usize, 1, 2, 6, 7, 8, 254, 255, 256, 4094, 4095, 4096] {
        v.push(Case {
            name: format!("{n} random bytes"),
            req: random_input(r, n),
            min_height: MIN_HEIGHT,
        });
    }
    v.push(Case {
        name: "5 random bytes, min_height 64".into(),
        req: random_input(r, 5),
        min_height: 64,
    });
    let fill = DeviceFill::of(&[Table::Input]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        let t = input_trace(&inputs.input, &inputs.input_uses, inputs.min_height, lk);
        vec![(Table::Input, t)]
    }) {
        v.push(Case {
            name,
            req: (inputs.input, inputs.input_uses),
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_input_fill_matches_cpu() {
    let mut r = fill_util::rng(Input::TEST);
    request_fill::check::<Input>(&cases(&mut r));
}

/// More counts than indices, or a count of 2^32, is refused.
#[test]
fn pack_input_refuses_what_it_cannot_hold() {
    assert_eq!(pack_input(&[7], &[1], true).unwrap().len(), 2);
    let e = pack_input(&[7], &[1, 2, 3], true).unwrap_err().to_string();
    assert!(e.contains("3 lookup counts for 2 indices"), "{e}");
    let e = pack_input(&[7, 8], &[1, 1 << 32], true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("INPUT index 1") && e.contains("32 bits"), "{e}");
}
