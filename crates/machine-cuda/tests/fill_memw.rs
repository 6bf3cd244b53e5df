//! MEMW fill parity (`kernels/tables/memw.cu` vs `zkrv_machine::tables::memw::memw_trace`): every cell (padding
//! rows included) and the BITWISE lookup histogram, on random cell-crossing accesses (seeded, `ZKRV_SEED` to
//! replay; every offset and width that crosses, reads and writes, old timestamps from 0 to ts - 1) at edge sizes
//! (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 accesses, a min_height above the count), and on the real guests' accesses
//! (whose split is checked against `generate`, see `request_fill::guest_inputs`); the packer refuses what the
//! compact form cannot hold. The host emulation of the kernel always runs (no GPU needed); the GPU part prints
//! `SKIPPED gpu_memw_fill_matches_cpu (GPU part): <reason>` without a device, else runs with poisoned allocations
//! (`dev.set_debug(true)`).
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
use zkrv_machine::tables::memw::{memw_trace, MemwEvent, NUM_MEMW_COLS};
use zkrv_machine::tables::memw_a::WIDTHS;
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::memw::{fill_memw_resident, pack_memw};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

struct Memw;

impl RequestFill for Memw {
    const TEST: &'static str = "gpu_memw_fill_matches_cpu";
    const TABLE: &'static str = "MEMW";
    const WIDTH: usize = NUM_MEMW_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::MEMW_CU.src;
    const ROW_FN: &'static str = "memw_fill_row";
    const REQUEST: &'static str = "MemwIn";
    const WORDS: usize = 7;
    type Requests = Vec<MemwEvent>;

    fn len(ev: &Vec<MemwEvent>) -> usize {
        ev.len()
    }
    fn host(ev: &Vec<MemwEvent>, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        memw_trace(ev, min_height, lookups)
    }
    fn words(ev: &Vec<MemwEvent>) -> Vec<u64> {
        pack_memw(ev)
            .unwrap()
            .iter()
            .flat_map(|e| e.words())
            .collect()
    }
    fn gpu(
        dev: &Device,
        ev: &Vec<MemwEvent>,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "MEMW", &pack_memw(ev)?, stats)?;
        fill_memw_resident(dev, &d, min_height, lookups)
    }
}

/// A random cell-crossing access at timestamp `ts` (an offset and width with `offset + width > 8`).
fn random_access(r: &mut StdRng, ts: u64) -> MemwEvent {
    let width_idx = r.gen_range(1..4);
    let width = WIDTHS[width_idx];
    let offset = r.gen_range(9 - width..8);
    let mut old = [0u8; 16];
    r.fill_bytes(&mut old);
    let is_write = r.gen();
    let mut new = old;
    if is_write {
        r.fill_bytes(&mut new[offset..offset + width]);
    }
    let old_ts = [0, 1].map(|_| match r.gen_range(0..4) {
        0 => 0,
        1 => ts - 1,
        _ => r.gen_range(0..ts),
    });
    MemwEvent {
        cell: r.next_u64() >> r.gen_range(3..40),
        ts,
        offset,
        width_idx,
        is_write,
        old,
        new,
        old_ts,
    }
}

/// `n` random accesses at increasing timestamps `4 clk + 1` (some near 2^32).
fn random_accesses(r: &mut StdRng, n: usize) -> Vec<MemwEvent> {
    let mut clk: u64 = r.gen_range(0..4);
    (0..n)
        .map(|k| {
            clk += r.gen_range(1..1000);
            let ts = if k + 1 == n && n > 2 {
                u32::MAX as u64 - 2
            } else {
                4 * clk + 1
            };
            random_access(r, ts)
        })
        .collect()
}

fn cases(r: &mut StdRng) -> Vec<Case<Vec<MemwEvent>>> {
    let mut v = Vec::new();
    for n in [0usize, 1, 2, 7, 8, 9, 255, 256, 257, 4095, 4096, 4097] {
        v.push(Case {
            name: format!("{n} random accesses"),
            req: random_accesses(r, n),
            min_height: MIN_HEIGHT,
        });
    }
    v.push(Case {
        name: "5 random accesses, min_height 64".into(),
        req: random_accesses(r, 5),
        min_height: 64,
    });
    let fill = DeviceFill::of(&[Table::Memw]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        vec![(
            Table::Memw,
            memw_trace(&inputs.general, inputs.min_height, lk),
        )]
    }) {
        v.push(Case {
            name,
            req: inputs.general,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_memw_fill_matches_cpu() {
    let mut r = fill_util::rng(Memw::TEST);
    request_fill::check::<Memw>(&cases(&mut r));
}

/// The packer refuses accesses the 56-byte form cannot hold, naming the access.
#[test]
fn pack_memw_refuses_what_it_cannot_hold() {
    let mut r = fill_util::rng("pack_memw_refuses_what_it_cannot_hold");
    let ok = random_access(&mut r, 4 * 77 + 1);
    assert!(pack_memw(&[ok]).is_ok());
    let cases: [(&str, MemwEvent); 4] = [
        ("timestamp >= 2^32", MemwEvent { ts: 1 << 32, ..ok }),
        (
            "old timestamp",
            MemwEvent {
                old_ts: [0, ok.ts],
                ..ok
            },
        ),
        ("width index", MemwEvent { width_idx: 4, ..ok }),
        ("offset", MemwEvent { offset: 8, ..ok }),
    ];
    for (what, bad) in cases {
        let e = pack_memw(&[ok, bad]).unwrap_err().to_string();
        assert!(e.contains("access 1") && e.contains(what), "{what}: {e}");
    }
}
