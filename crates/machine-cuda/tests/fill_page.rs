//! PAGE fill parity (`kernels/tables/page.cu` vs `zkrv_machine::tables::page::page_trace`): every cell (padding
//! rows included) and the (untouched) BITWISE lookup histogram, on random final cells (seeded, `ZKRV_SEED` to
//! replay; whole pages, any value, timestamps up to 2^32 - 1) at edge sizes (0, 1, 2, 2^k - 1, 2^k, 2^k + 1 cells,
//! a min_height above the count), and on the real guests' cells (whose split is checked against `generate`, see
//! `request_fill::guest_inputs`); the packer refuses what 32 bits cannot hold. The host emulation of the kernel
//! always runs (no GPU needed); the GPU part prints `SKIPPED gpu_page_fill_matches_cpu (GPU part): <reason>`
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
use zkrv_machine::tables::page::{page_trace, CELLS_PER_PAGE, NUM_PAGE_COLS};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::page::{fill_page_resident, pack_page};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

type Cells = Vec<(u64, u64, u64)>;

struct Page;

impl RequestFill for Page {
    const TEST: &'static str = "gpu_page_fill_matches_cpu";
    const TABLE: &'static str = "PAGE";
    const WIDTH: usize = NUM_PAGE_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::PAGE_CU.src;
    const ROW_FN: &'static str = "page_fill_row";
    const REQUEST: &'static str = "PageIn";
    const WORDS: usize = 2;
    type Requests = Cells;

    fn len(c: &Cells) -> usize {
        c.len()
    }
    fn host(c: &Cells, min_height: usize, _lookups: &mut Lookups) -> RowMajorMatrix {
        page_trace(c, min_height)
    }
    fn words(c: &Cells) -> Vec<u64> {
        pack_page(c)
            .unwrap()
            .iter()
            .flat_map(|p| [p.v, p.cell as u64 | (p.ts as u64) << 32])
            .collect()
    }
    fn gpu(
        dev: &Device,
        c: &Cells,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "PAGE", &pack_page(c)?, stats)?;
        fill_page_resident(dev, &d, min_height, lookups)
    }
}

/// `n` random cells: consecutive cells of random pages, random values, timestamps 0 (untouched) or any u32.
fn random_cells(r: &mut StdRng, n: usize) -> Cells {
    let mut base = 0u64;
    (0..n)
        .map(|k| {
            if k % CELLS_PER_PAGE == 0 {
                base = (r.next_u64() % (1 << 20)) * CELLS_PER_PAGE as u64;
            }
            let ts = match r.gen_range(0..3) {
                0 => 0,
                1 => u32::MAX as u64,
                _ => r.next_u32() as u64,
            };
            (base + (k % CELLS_PER_PAGE) as u64, r.next_u64(), ts)
        })
        .collect()
}

fn cases(r: &mut StdRng) -> Vec<Case<Cells>> {
    let mut v = Vec::new();
    for n in [0usize, 1, 2, 7, 8, 9, 511, 512, 513, 4095, 4096, 4097] {
        v.push(Case {
            name: format!("{n} random cells"),
            req: random_cells(r, n),
            min_height: MIN_HEIGHT,
        });
    }
    v.push(Case {
        name: "5 random cells, min_height 64".into(),
        req: random_cells(r, 5),
        min_height: 64,
    });
    let fill = DeviceFill::of(&[Table::Page]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, _| {
        vec![(Table::Page, page_trace(&inputs.page, inputs.min_height))]
    }) {
        v.push(Case {
            name,
            req: inputs.page,
            min_height: MIN_HEIGHT,
        });
    }
    v
}

#[test]
fn gpu_page_fill_matches_cpu() {
    let mut r = fill_util::rng(Page::TEST);
    request_fill::check::<Page>(&cases(&mut r));
}

/// A cell index or timestamp of 2^32 or more is refused, naming the cell.
#[test]
fn pack_page_refuses_wide_cells() {
    let ok = (7, 9, 11);
    assert!(pack_page(&[ok, (u32::MAX as u64, 0, u32::MAX as u64)]).is_ok());
    for bad in [(1 << 32, 0, 0), (0, 0, 1 << 32)] {
        let e = pack_page(&[ok, bad]).unwrap_err().to_string();
        assert!(e.contains("PAGE cell 1") && e.contains("32 bits"), "{e}");
    }
}
