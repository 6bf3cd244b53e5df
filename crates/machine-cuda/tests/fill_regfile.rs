//! REGFILE fill parity (`kernels/tables/regfile.cu` vs `zkrv_machine::tables::regfile::regfile_trace`): every
//! cell (padding rows included) and the (untouched) BITWISE histogram, on random final register states (seeded,
//! `ZKRV_SEED` to replay; 0..=34 registers, any value, timestamps 0, 2^32 - 1 or random, min heights 64 and
//! above) and on the real guests' final registers (whose split is checked against `generate`, see
//! `request_fill::guest_inputs`); more than 34 registers are refused. The host emulation always runs; the GPU part
//! prints `SKIPPED gpu_regfile_fill_matches_cpu (GPU part): <reason>` without a device.
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
use zkrv_machine::tables::regfile::{regfile_trace, NUM_REGFILE_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::regfile::{fill_regfile_resident, RegfileIn};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

type Regs = Vec<(u64, u64)>;

struct Regfile;

impl RequestFill for Regfile {
    const TEST: &'static str = "gpu_regfile_fill_matches_cpu";
    const TABLE: &'static str = "REGFILE";
    const WIDTH: usize = NUM_REGFILE_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::REGFILE_CU.src;
    const ROW_FN: &'static str = "regfile_fill_row";
    const REQUEST: &'static str = "RegfileIn";
    const WORDS: usize = 2;
    type Requests = Regs;

    fn len(r: &Regs) -> usize {
        r.len()
    }
    fn host(r: &Regs, min_height: usize, _lookups: &mut Lookups) -> RowMajorMatrix {
        regfile_trace(r, min_height)
    }
    fn words(r: &Regs) -> Vec<u64> {
        r.iter().flat_map(|&(v, ts)| [v, ts]).collect()
    }
    fn gpu(
        dev: &Device,
        r: &Regs,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(
            dev,
            "REGFILE",
            &r.iter()
                .map(|&(v, ts)| RegfileIn { v, ts })
                .collect::<Vec<_>>(),
            stats,
        )?;
        fill_regfile_resident(dev, &d, min_height, lookups)
    }
}

fn random_regs(r: &mut StdRng, n: usize) -> Regs {
    (0..n)
        .map(|_| {
            let ts = match r.gen_range(0..3) {
                0 => 0,
                1 => u32::MAX as u64,
                _ => r.next_u32() as u64,
            };
            (request_fill::operand(r), ts)
        })
        .collect()
}

#[test]
fn gpu_regfile_fill_matches_cpu() {
    let mut r = fill_util::rng(Regfile::TEST);
    let mut cases = Vec::new();
    for n in [0usize, 1, 2, 33, 34] {
        cases.push(Case {
            name: format!("{n} random registers"),
            req: random_regs(&mut r, n),
            min_height: MIN_HEIGHT,
        });
    }
    cases.push(Case {
        name: "34 random registers, min_height 256".into(),
        req: random_regs(&mut r, 34),
        min_height: 256,
    });
    let fill = DeviceFill::of(&[Table::Regfile]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, _| {
        vec![(
            Table::Regfile,
            regfile_trace(&inputs.regs, inputs.min_height),
        )]
    }) {
        assert_eq!(inputs.regs.len(), 34, "{name}: every register cell");
        cases.push(Case {
            name,
            req: inputs.regs,
            min_height: MIN_HEIGHT,
        });
    }
    request_fill::check::<Regfile>(&cases);
}

/// More register cells than the machine has are refused before anything is launched.
#[test]
fn fill_regfile_refuses_35_registers() {
    let Some(dev) = fill_util::device("fill_regfile_refuses_35_registers") else {
        return;
    };
    let lookups = DeviceLookups::new(&dev).unwrap();
    let fin = dev.upload(&[RegfileIn { v: 0, ts: 0 }; 35]).unwrap();
    let e = fill_regfile_resident(&dev, &fin, MIN_HEIGHT, &lookups)
        .err()
        .expect("35 registers refused")
        .to_string();
    assert!(e.contains("35 registers"), "{e}");
    assert!(
        dev.download(&lookups.counts)
            .unwrap()
            .iter()
            .all(|&x| x == 0),
        "refused fill counted lookups"
    );
}
