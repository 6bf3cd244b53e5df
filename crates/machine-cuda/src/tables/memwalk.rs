//! The memory walk on the device (kernels `kernels/tables/memwalk.cu`, method there; reference: the memory
//! walk of `zkrv_machine::trace::generate_split_at`): from the record's cycles resident on the device, every
//! load/store/syscall-I/O/precompile cell access's previous bytes and timestamp, by emitting one item per touched cell,
//! a stable sort of the items by cell ([`crate::sort`]) and a segmented scan of byte-masked writes; from them
//! the inputs of the LOAD, STORE, MEMW_A, MEMW, PAGE and SYSIO fills and the precompile calls' previous cell
//! timestamps (KECCAKF, SHA256, POSEIDON2), left on the device ([`DeviceMemWalk`]). Uploads only what the
//! record's cycles and precompile events ([`DeviceCalls`], resident) do not hold: the initial and final images
//! of the touched pages (the final image to check the walk against, as the host walk does), the page list, the
//! program's decode data and the SYSIO rows without their memory fields (64 B per transferred cell).

use crate::kernels;
use zkrv_machine::tables::cpu::CpuDecode;
use zkrv_machine::tables::decode::NUM_DECODE_PREP_COLS;
use zkrv_machine::tables::page::CELLS_PER_PAGE;
use zkrv_machine::tables::sysio::SysioEventRow;

use cudarc::driver::LaunchConfig;

use crate::tables::memw::MemwIn;
use crate::tables::memw_a::MemwARecIn;
use crate::tables::page::PageIn;
use crate::tables::sysio::{pack_sysio, SysioIn};
use crate::tables::{DeviceCalls, DeviceCycles, FILL_BLOCK};
use zkrv_cuda::device::MAX_GRID_X;
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;

/// Memory cells a call touches: keccak_f, sha256_compress (4 state + 8 block), poseidon2 (`MW_*_CELLS`).
pub const CALL_CELLS: [usize; 3] = [25, 12, 8];

/// Cycles per thread of the walk's first two steps on the device.
pub const MEM_WALK_CHUNK: usize = 64;
/// Categories counted per chunk (`MW_CATS`): items, loads, stores, in-cell accesses, crossing accesses,
/// precompile calls.
const CATS: usize = 6;
/// Sorted items per thread of the segmented scan (`MW_SEG`).
const SEG: usize = 32;
/// `MW_ERRS` and `MW_NO_ERR`.
pub const ERRS: usize = 7;
const NO_ERR: u32 = u32::MAX;

/// The walk's result on the device: every list in row order of its table.
pub struct DeviceMemWalk {
    /// LOAD: the cycle of every load (`fill_load_resident`).
    pub load_clks: DeviceBuffer<u32>,
    /// STORE: the cycle of every store (`fill_store_resident`).
    pub store_clks: DeviceBuffer<u32>,
    /// MEMW_A: every in-cell access (`fill_memw_a_resident`).
    pub memw_a: DeviceBuffer<MemwARecIn>,
    /// MEMW: every cell-crossing access (`fill_memw_resident`).
    pub memw: DeviceBuffer<MemwIn>,
    /// PAGE: every cell of every touched page, final value and last-access ts (`fill_page_resident`).
    pub page: DeviceBuffer<PageIn>,
    /// SYSIO: the rows with their memory fields (`fill_sysio_resident`).
    pub sysio: DeviceBuffer<SysioIn>,
    /// The precompile calls' cells' previous timestamps: [`CALL_CELLS`]`[0]` per keccak_f call (lane order),
    /// then `[1]` per sha256_compress call (4 state cells, 8 block cells), then `[2]` per poseidon2 call, in
    /// call order (the record's event lists); see [`Self::call_old_ts`].
    pub call_old_ts: DeviceBuffer<u32>,
    /// Calls per kind (keccak_f, sha256_compress, poseidon2).
    pub calls: [usize; 3],
}

impl DeviceMemWalk {
    /// The device address of the first previous timestamp of kind `kind`'s calls (0 keccak_f, 1
    /// sha256_compress, 2 poseidon2) in [`Self::call_old_ts`] (`calls[kind] x CALL_CELLS[kind]` u32).
    pub fn call_old_ts(&self, kind: usize) -> u64 {
        let before: usize = (0..kind).map(|k| self.calls[k] * CALL_CELLS[k]).sum();
        self.call_old_ts.ptr() + 4 * before as u64
    }
}

fn grid(threads: usize, block: u32) -> Result<LaunchConfig, CudaError> {
    let blocks = (threads as u64).div_ceil(block as u64).max(1);
    if blocks > MAX_GRID_X {
        return Err(CudaError::InvalidArgument(format!(
            "memory walk: grid of {blocks} blocks"
        )));
    }
    Ok(LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

fn upload_or_empty<T: cudarc::driver::DeviceRepr + Copy>(
    dev: &Device,
    v: &[T],
) -> Result<DeviceBuffer<T>, CudaError> {
    if v.is_empty() {
        dev.alloc::<T>(0)
    } else {
        dev.upload(v)
    }
}

/// Runs the memory walk of the record's `cycles` (resident) on the device, in chunks of `chunk` cycles
/// ([`MEM_WALK_CHUNK`] in production; any size >= 1 gives the same result). `decode`: the program's `CpuDecode`;
/// `pages`, `init_pages`, `final_pages`: the record's touched pages (sorted base addresses) and their images
/// (4096 bytes per page, page order); `sysio`: the SYSIO rows as `generate_split` makes them with
/// `DeviceFill::mem_walk` (memory fields to be filled in); `calls`: the record's precompile events (resident).
/// Uploads the rest (H2D stage "trace-gen", table "MEMWALK") and synchronizes three times (list sizes, the
/// sort's digit histograms, the error flags).
/// Errors: what the host walk reports (a cell outside the record's pages, naming the cycle; a load, a `write`
/// or a precompile event that disagrees with memory; a precompile ECALL without its event or an event at no
/// such ECALL; a final cell that disagrees with the executor's final memory), inputs out of
/// shape (unsorted pages, images of the wrong size, more than 2^30 - 1 cycles, SYSIO rows out of order or not
/// at a cycle of the record), `chunk` 0, allocation, launch.
#[allow(clippy::too_many_arguments)]
pub fn mem_walk(
    dev: &Device,
    cycles: &DeviceCycles,
    decode: &CpuDecode,
    pages: &[u32],
    init_pages: &[u8],
    final_pages: &[u8],
    sysio: &[SysioEventRow],
    calls: &DeviceCalls,
    chunk: usize,
    stats: &mut TransferStats,
) -> Result<DeviceMemWalk, CudaError> {
    let n = cycles.len;
    let bad = |what: String| Err(CudaError::InvalidArgument(format!("memory walk: {what}")));
    if 4 * n as u64 + 4 > u32::MAX as u64 || chunk == 0 {
        return bad(format!(
            "{n} cycles (timestamps must fit 32 bits), chunk {chunk}"
        ));
    }
    if decode.is_empty() || !decode.rows.len().is_multiple_of(NUM_DECODE_PREP_COLS) {
        return bad("DECODE rows missing or not rows of 23".into());
    }
    if pages.windows(2).any(|w| w[0] >= w[1]) || pages.iter().any(|p| p % 4096 != 0) {
        return bad("the pages are not sorted distinct 4 KiB-aligned addresses".into());
    }
    if init_pages.len() != pages.len() * 4096 || final_pages.len() != init_pages.len() {
        return bad(format!(
            "{} pages but images of {} and {} bytes",
            pages.len(),
            init_pages.len(),
            final_pages.len()
        ));
    }
    let sys = pack_sysio(sysio)?;
    if let Some(k) = (0..sys.len()).find(|&k| {
        let ts = sys[k].ts;
        ts % 4 != 1 || ts / 4 >= n as u64 || (k > 0 && sys[k - 1].ts > ts)
    }) {
        return bad(format!(
            "SYSIO row {k} (ts {}) is out of order or not at a cycle of the record",
            sys[k].ts
        ));
    }
    let n_slots = u32::try_from(decode.row_of_pc.len())
        .map_err(|_| CudaError::InvalidArgument("memory walk: too many pc slots".into()))?;
    let n_cells = pages.len() * CELLS_PER_PAGE;
    let n_chunks = n.div_ceil(chunk).max(1);
    let chunk_cfg = grid(n_chunks, FILL_BLOCK)?;

    let d_slots = dev.upload::<u32>(&decode.row_of_pc)?;
    let d_decode = dev.upload::<u64>(&decode.rows)?;
    let d_pages = upload_or_empty(dev, pages)?;
    let d_init = upload_or_empty(dev, &words(init_pages))?;
    let d_fin = upload_or_empty(dev, &words(final_pages))?;
    let d_sys = upload_or_empty(dev, &sys)?;
    stats.add_h2d(
        "trace-gen",
        "MEMWALK",
        (d_slots.num_bytes()
            + d_decode.num_bytes()
            + 4 * pages.len()
            + 2 * init_pages.len()
            + std::mem::size_of_val(sys.as_slice())) as u64,
    );
    let dec = [
        KArg::U64(d_slots.ptr()),
        KArg::U32(decode.base_pc),
        KArg::U32(n_slots),
        KArg::U64(d_decode.ptr()),
    ];
    let call_args = [
        KArg::U64(calls.keccak.ptr()),
        KArg::U64(calls.n_keccak as u64),
        KArg::U64(calls.sha256.ptr()),
        KArg::U64(calls.n_sha256 as u64),
        KArg::U64(calls.poseidon2.ptr()),
        KArg::U64(calls.n_poseidon2 as u64),
    ];

    // 1. Counts per chunk and category, scanned per category into first indices (the total last).
    let stride = n_chunks + 1;
    let counts = dev.alloc_zeros::<u32>(CATS * stride)?;
    // SAFETY: `cycles.data` holds n CycleEvents, `d_slots` n_slots u32 (DECODE rows of `d_decode` or
    // NO_DECODE_ROW, read as row 0), `d_decode` whole rows of 23 u64 with row 0, `d_sys` sys.len() rows in ts
    // order; `counts` CATS x (n_chunks + 1) u32; the grid covers n_chunks threads and the kernel skips the rest.
    unsafe {
        let mut args = vec![
            KArg::U64(chunk as u64),
            KArg::U64(n_chunks as u64),
            KArg::U64(cycles.data.ptr()),
            KArg::U64(n as u64),
        ];
        args.extend(dec);
        args.extend([KArg::U64(d_sys.ptr()), KArg::U64(sys.len() as u64)]);
        args.extend(call_args);
        args.push(KArg::U64(counts.ptr()));
        dev.launch(&kernels::MEMWALK_CU, "memwalk_count", chunk_cfg, &args)?;
        for k in 0..CATS {
            // SAFETY: category k's stride u32 of `counts`; one block (sort.cu `sort_scan`).
            dev.launch(
                &zkrv_cuda::nvrtc::SORT_CU,
                "sort_scan",
                grid(1, 1024)?,
                &[
                    KArg::U64(counts.ptr() + (4 * k * stride) as u64),
                    KArg::U64(stride as u64),
                ],
            )?;
        }
    }
    // Only the totals come back (CATS u32, one synchronization).
    let totals = dev.alloc::<u32>(CATS)?;
    for k in 0..CATS {
        dev.copy_dtod(&counts, k * stride + n_chunks, &totals, k, 1)?;
    }
    let t = dev.download(&totals)?;
    let (n_items, n_loads, n_stores, n_in, n_cross) = (
        t[0] as usize,
        t[1] as usize,
        t[2] as usize,
        t[3] as usize,
        t[4] as usize,
    );
    let n_calls = calls.len();

    // 2. The items and the per-table lists.
    let key = dev.alloc::<u32>(n_items)?;
    let ts = dev.alloc::<u32>(n_items)?;
    let mask = dev.alloc::<u32>(n_items)?;
    let data = dev.alloc::<u64>(n_items)?;
    let load_clks = dev.alloc::<u32>(n_loads)?;
    let load_item = dev.alloc::<u32>(n_loads)?;
    let store_clks = dev.alloc::<u32>(n_stores)?;
    let a_clk = dev.alloc::<u32>(n_in)?;
    let a_item = dev.alloc::<u32>(n_in)?;
    let g_clk = dev.alloc::<u32>(n_cross)?;
    let g_item = dev.alloc::<u32>(n_cross)?;
    let sys_item = dev.alloc::<u32>(sys.len())?;
    let call_item = dev.alloc::<u32>(n_calls)?;
    let err = dev.upload(&[NO_ERR; ERRS])?;
    // SAFETY: as step 1, plus `d_pages` pages.len() sorted u32; the first indices in `counts` and the list sizes
    // come from the same chunk walk, so every write is inside its list.
    unsafe {
        let mut args = vec![
            KArg::U64(chunk as u64),
            KArg::U64(n_chunks as u64),
            KArg::U64(cycles.data.ptr()),
            KArg::U64(n as u64),
        ];
        args.extend(dec);
        args.extend([KArg::U64(d_sys.ptr()), KArg::U64(sys.len() as u64)]);
        args.extend(call_args);
        args.extend([
            KArg::U64(d_pages.ptr()),
            KArg::U32(pages.len() as u32),
            KArg::U64(counts.ptr()),
        ]);
        args.extend([
            KArg::U64(key.ptr()),
            KArg::U64(ts.ptr()),
            KArg::U64(mask.ptr()),
            KArg::U64(data.ptr()),
            KArg::U64(load_clks.ptr()),
            KArg::U64(load_item.ptr()),
            KArg::U64(store_clks.ptr()),
            KArg::U64(a_clk.ptr()),
            KArg::U64(a_item.ptr()),
            KArg::U64(g_clk.ptr()),
            KArg::U64(g_item.ptr()),
            KArg::U64(sys_item.ptr()),
            KArg::U64(call_item.ptr()),
            KArg::U64(err.ptr()),
        ]);
        dev.launch(&kernels::MEMWALK_CU, "memwalk_emit", chunk_cfg, &args)?;
    }

    // 3. Items by cell, each cell's accesses in ts order.
    let perm = zkrv_cuda::sort::stable_sort_perm(dev, &[&key], n_items)?;

    // 4. Segmented scan: previous bytes and ts of every item, final bytes and ts of every touched cell.
    let page = dev.alloc::<PageIn>(n_cells)?;
    let res_old = dev.alloc::<u64>(n_items)?;
    let res_ts = dev.alloc::<u32>(n_items)?;
    let n_seg = n_items.div_ceil(SEG);
    let sum_hm = dev.alloc::<u32>(n_seg)?;
    let sum_d = dev.alloc::<u64>(n_seg)?;
    // SAFETY: `page` and `d_init` hold n_cells entries, `d_pages` pages.len(); the items' buffers n_items entries
    // and `perm` a permutation of 0..n_items; the summaries n_seg; every key is a dense cell < n_cells or
    // MW_NO_CELL (not dereferenced); grids cover their threads and the kernels skip the rest.
    unsafe {
        if n_cells > 0 {
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_page_init",
                grid(n_cells, FILL_BLOCK)?,
                &[
                    KArg::U64(n_cells as u64),
                    KArg::U64(d_pages.ptr()),
                    KArg::U64(d_init.ptr()),
                    KArg::U64(page.ptr()),
                ],
            )?;
        }
        if n_items > 0 {
            let items = [KArg::U64(perm.ptr()), KArg::U64(key.ptr())];
            let mut args = vec![KArg::U64(n_seg as u64), KArg::U64(n_items as u64)];
            args.extend(items);
            args.extend([
                KArg::U64(mask.ptr()),
                KArg::U64(data.ptr()),
                KArg::U64(sum_hm.ptr()),
                KArg::U64(sum_d.ptr()),
            ]);
            let seg_cfg = grid(n_seg, FILL_BLOCK)?;
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_seg_summarize",
                seg_cfg,
                &args,
            )?;
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_seg_scan",
                grid(1, 1024)?,
                &[
                    KArg::U64(n_seg as u64),
                    KArg::U64(sum_hm.ptr()),
                    KArg::U64(sum_d.ptr()),
                ],
            )?;
            let mut args = vec![KArg::U64(n_seg as u64), KArg::U64(n_items as u64)];
            args.extend(items);
            args.extend([
                KArg::U64(ts.ptr()),
                KArg::U64(mask.ptr()),
                KArg::U64(data.ptr()),
                KArg::U64(sum_hm.ptr()),
                KArg::U64(sum_d.ptr()),
                KArg::U64(d_init.ptr()),
                KArg::U64(n_cells as u64),
                KArg::U64(res_old.ptr()),
                KArg::U64(res_ts.ptr()),
                KArg::U64(page.ptr()),
            ]);
            dev.launch(&kernels::MEMWALK_CU, "memwalk_seg_replay", seg_cfg, &args)?;
        }
    }

    // 5. The fills' inputs and the checks.
    let memw_a = dev.alloc::<MemwARecIn>(n_in)?;
    let memw = dev.alloc::<MemwIn>(n_cross)?;
    let n_call_cells = calls.n_keccak * CALL_CELLS[0]
        + calls.n_sha256 * CALL_CELLS[1]
        + calls.n_poseidon2 * CALL_CELLS[2];
    let call_old_ts = dev.alloc::<u32>(n_call_cells)?;
    // SAFETY: every list holds the entries its count says, each naming items (< n_items, a crossing access's
    // second item being the next) whose results step 4 wrote; `d_sys` sys.len() rows, `d_fin` n_cells u64.
    unsafe {
        if n_cells > 0 {
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_page_check",
                grid(n_cells, FILL_BLOCK)?,
                &[
                    KArg::U64(n_cells as u64),
                    KArg::U64(page.ptr()),
                    KArg::U64(d_fin.ptr()),
                    KArg::U64(err.ptr()),
                ],
            )?;
        }
        if n_in > 0 {
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_memw_a",
                grid(n_in, FILL_BLOCK)?,
                &[
                    KArg::U64(n_in as u64),
                    KArg::U64(a_clk.ptr()),
                    KArg::U64(a_item.ptr()),
                    KArg::U64(res_old.ptr()),
                    KArg::U64(res_ts.ptr()),
                    KArg::U64(memw_a.ptr()),
                ],
            )?;
        }
        if n_cross > 0 {
            let mut args = vec![KArg::U64(n_cross as u64), KArg::U64(cycles.data.ptr())];
            args.extend(dec);
            args.extend([
                KArg::U64(g_clk.ptr()),
                KArg::U64(g_item.ptr()),
                KArg::U64(res_old.ptr()),
                KArg::U64(res_ts.ptr()),
                KArg::U64(memw.ptr()),
            ]);
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_memw",
                grid(n_cross, FILL_BLOCK)?,
                &args,
            )?;
        }
        if n_loads > 0 {
            let mut args = vec![KArg::U64(n_loads as u64), KArg::U64(cycles.data.ptr())];
            args.extend(dec);
            args.extend([
                KArg::U64(load_clks.ptr()),
                KArg::U64(load_item.ptr()),
                KArg::U64(res_old.ptr()),
                KArg::U64(err.ptr()),
            ]);
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_loads",
                grid(n_loads, FILL_BLOCK)?,
                &args,
            )?;
        }
        if !sys.is_empty() {
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_sysio",
                grid(sys.len(), FILL_BLOCK)?,
                &[
                    KArg::U64(sys.len() as u64),
                    KArg::U64(sys_item.ptr()),
                    KArg::U64(res_old.ptr()),
                    KArg::U64(res_ts.ptr()),
                    KArg::U64(d_sys.ptr()),
                    KArg::U64(err.ptr()),
                ],
            )?;
        }
    }
    // Every event must have met its ECALL (events out of order or past the record are not matched).
    let matched = t[5] as usize == n_calls;
    if n_calls > 0 && matched {
        let mut args = call_args.to_vec();
        args.extend([
            KArg::U64(call_item.ptr()),
            KArg::U64(res_old.ptr()),
            KArg::U64(res_ts.ptr()),
            KArg::U64(call_old_ts.ptr()),
            KArg::U64(err.ptr()),
        ]);
        // SAFETY: the event lists hold the counts passed; `call_item` n_calls first items (step 2 wrote every
        // one: the matched count is n_calls), each followed by its call's cells' items; `call_old_ts`
        // n_call_cells u32 in the kernel's order; the grid covers n_calls threads and the kernel skips the rest.
        unsafe {
            dev.launch(
                &kernels::MEMWALK_CU,
                "memwalk_calls",
                grid(n_calls, FILL_BLOCK)?,
                &args,
            )?;
        }
    }
    check_errors(&dev.download(&err)?, pages)?;
    if !matched {
        return bad(format!(
            "{} of the record's {n_calls} precompile events are at a precompile ECALL of their kind \
             (events out of cycle order or past the record)",
            t[5]
        ));
    }
    Ok(DeviceMemWalk {
        load_clks,
        store_clks,
        memw_a,
        memw,
        page,
        sysio: d_sys,
        call_old_ts,
        calls: [calls.n_keccak, calls.n_sha256, calls.n_poseidon2],
    })
}

/// The walk's error flags (`err[MW_ERR_*]`, the smallest offending cycle / row / dense cell, `u32::MAX`:
/// none) as the host walk's errors. Errors: the first flag set, naming it.
pub fn check_errors(err: &[u32], pages: &[u32]) -> Result<(), CudaError> {
    let fail = |what: String| Err(CudaError::InvalidArgument(format!("memory walk: {what}")));
    let at = |k: usize| err.get(k).copied().filter(|&v| v != NO_ERR);
    if let Some(c) = at(4) {
        return fail(format!(
            "no address at cycle {c} (a load/store without a load/store opcode)"
        ));
    }
    if let Some(c) = at(5) {
        return fail(format!(
            "cycle {c}: a precompile ECALL without its event in the record, or an event at no such ECALL"
        ));
    }
    if let Some(c) = at(0) {
        return fail(format!(
            "cycle {c} accesses a cell outside the record's pages"
        ));
    }
    if let Some(c) = at(1) {
        return fail(format!(
            "the load at cycle {c} disagrees with the executor's value"
        ));
    }
    if let Some(c) = at(6) {
        return fail(format!(
            "the precompile call at cycle {c}: its event's input disagrees with memory"
        ));
    }
    if let Some(r) = at(2) {
        return fail(format!("SYSIO row {r}: write: memory walk disagrees"));
    }
    if let Some(dc) = at(3) {
        let cell = pages
            .get(dc as usize / CELLS_PER_PAGE)
            .map_or(0, |&p| p as u64 / 8 + (dc as usize % CELLS_PER_PAGE) as u64);
        return fail(format!(
            "cell {cell:#x} disagrees with the executor's final memory"
        ));
    }
    Ok(())
}
