//! The request lists of the deduplicated tables on the device (kernels `kernels/tables/requests.cu`; reference:
//! the ALU routing of `zkrv_machine::trace::generate_split_at` and its request chain `fill_chain`): from the
//! record's cycles resident on the device, every request the CPU rows make of EQ, LT, BYTEWISE, SHIFT, MUL and
//! DVRM and the CPU32 W-op list (cycle order), then the chain (CPU32 rows -> SHIFT / MUL / DVRM, DVRM rows ->
//! MUL / LT, SHIFT rows -> MUL), each table deduplicated into its rows in the host's key order with the host's
//! multiplicities: the fills' inputs, resident ([`DeviceRequests`]), byte for byte the upload forms of the host's
//! `FillInputs` lists (`eq_requests(&inputs.eq)`, ...).
//!
//! Method (kernel file): per-chunk request counts, an exact scan of them (the Ext3 scan of `kernels/logup.cu`:
//! counts stay far below the field prime), one small read of the totals, the requests written at their offsets;
//! per table a stable sort by its key words (`zkrv_cuda::sort::stable_sort_perm`), run heads marked, one
//! scan of (head, counter 0, counter 1), one small read of the row count, one upload struct per run. Uploads
//! only the program's decode data and the list pointer table (H2D stage "trace-gen", table "REQUESTS"); reads
//! back 8 counters and one u64 per deduplicated table (D2H, same key).

use crate::kernels;
use zkrv_machine::tables::cpu::CpuDecode;
use zkrv_machine::tables::decode::NUM_DECODE_PREP_COLS;
use zkrv_machine::tables::shift::shift_height;

use crate::tables::bytewise::BytewiseRequest;
use crate::tables::cpu32::Cpu32In;
use crate::tables::dvrm::DvrmRequest;
use crate::tables::eq::EqRequest;
use crate::tables::lt::LtRequest;
use crate::tables::mul::MulRequest;
use crate::tables::shift::ShiftRequest;
use crate::tables::{launch_1d, DeviceCycles, FILL_BLOCK};
use zkrv_cuda::device::{Device, DeviceBuffer, KArg};
use zkrv_cuda::logup::scan_ext3;
use zkrv_cuda::sort::stable_sort_perm;
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;

/// Cycles per emission chunk (one thread each).
pub const REQ_CHUNK: usize = 64;

/// List indices (`REQ_*` in the kernel file).
const EQ: usize = 0;
const LT: usize = 1;
const BW: usize = 2;
const SHIFT: usize = 3;
const MUL: usize = 4;
const DVRM: usize = 5;
/// Counters besides the lists: CPU32 rows, ALU ops without a table; per chunk.
const W: usize = 6;
const BAD: usize = 7;
const TAGS: usize = 9;
/// u32 arrays per list (5 key words, the value).
const ARRAYS: usize = 6;
/// Key words per list.
const WORDS: [usize; 6] = [4, 5, 5, 5, 5, 5];
const NAMES: [&str; 6] = ["EQ", "LT", "BYTEWISE", "SHIFT", "MUL", "DVRM"];

/// The deduplicated tables' rows and the CPU32 list, resident: each in its fill's upload form and row order
/// (the host's key order; CPU32 in cycle order), exactly as many entries as rows before padding.
pub struct DeviceRequests {
    pub eq: DeviceBuffer<EqRequest>,
    pub lt: DeviceBuffer<LtRequest>,
    pub bytewise: DeviceBuffer<BytewiseRequest>,
    pub shift: DeviceBuffer<ShiftRequest>,
    pub mul: DeviceBuffer<MulRequest>,
    pub dvrm: DeviceBuffer<DvrmRequest>,
    pub cpu32: DeviceBuffer<Cpu32In>,
}

/// One request list on the device (struct of arrays, `cap` entries).
struct List {
    arrays: Vec<DeviceBuffer<u32>>,
}

impl List {
    fn new(dev: &Device, cap: usize) -> Result<Self, CudaError> {
        Ok(List {
            arrays: (0..ARRAYS)
                .map(|_| dev.alloc::<u32>(cap))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// Builds every request list of the record's `cycles` (resident) on the device and deduplicates them (see the
/// module docs). `decode` is the program's `CpuDecode` (a pc without a row reads as DECODE row 0, like the
/// register walk: the host walk refuses such a record), `min_height` the smallest table height (SHIFT's padding
/// rows make MUL checks). Errors: an ALU op the tables cannot answer (the host's "ALU op .. has no table"),
/// a launch shape out of bounds, allocation, launch, the sort.
/// Synchronizes (small reads) once for the totals and once per deduplicated table.
pub fn device_requests(
    dev: &Device,
    cycles: &DeviceCycles,
    decode: &CpuDecode,
    min_height: usize,
    stats: &mut TransferStats,
) -> Result<DeviceRequests, CudaError> {
    let n = cycles.len;
    if decode.is_empty() || !decode.rows.len().is_multiple_of(NUM_DECODE_PREP_COLS) {
        return Err(CudaError::InvalidArgument(
            "requests: DECODE rows missing or not rows of 23".into(),
        ));
    }
    if !min_height.is_power_of_two() {
        return Err(CudaError::InvalidArgument(format!(
            "requests: min_height {min_height} is not a power of two"
        )));
    }
    let n_slots = u32::try_from(decode.row_of_pc.len())
        .map_err(|_| CudaError::InvalidArgument("requests: too many pc slots".into()))?;
    let n_chunks = n.div_ceil(REQ_CHUNK).max(1);
    let chunk_cfg = launch_1d(n_chunks as u64, 1, FILL_BLOCK)?;
    let d_slots = dev.upload::<u32>(&decode.row_of_pc)?;
    let d_decode = dev.upload::<u64>(&decode.rows)?;
    let mut h2d = (d_slots.num_bytes() + d_decode.num_bytes()) as u64;
    let decode_args = [
        KArg::U64(cycles.data.ptr()),
        KArg::U64(n as u64),
        KArg::U64(d_slots.ptr()),
        KArg::U32(decode.base_pc),
        KArg::U32(n_slots),
        KArg::U64(d_decode.ptr()),
    ];
    // 1-2. Counts per chunk, scanned; the totals.
    let counts = dev.alloc::<u64>(n_chunks * TAGS)?;
    let mut args = vec![KArg::U64(REQ_CHUNK as u64), KArg::U64(n_chunks as u64)];
    args.extend(decode_args.iter().cloned());
    args.push(KArg::U64(counts.ptr()));
    // SAFETY: `cycles.data` holds n CycleEvents, `d_slots` n_slots u32, `d_decode` whole rows of 23 u64 with
    // row 0, `counts` n_chunks x 9 u64; the grid covers n_chunks threads and the kernel skips the rest.
    unsafe { dev.launch(&kernels::REQUESTS_CU, "req_emit_count", chunk_cfg, &args)? };
    for k in 0..TAGS / 3 {
        scan_ext3(
            dev,
            counts.ptr() + 8 * 3 * k as u64,
            TAGS as u64,
            n_chunks as u64,
        )?;
    }
    let mut tot = [0u64; TAGS];
    dev.copy_dtoh(&counts, (n_chunks - 1) * TAGS, &mut tot)?;
    let mut d2h = 8 * TAGS as u64;
    if tot[BAD] != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "requests: {} ALU operations of a code no table answers",
            tot[BAD]
        )));
    }
    let t = |k: usize| tot[k] as usize;
    // Capacities: the cycles' requests, then the chain's (DVRM rows <= DVRM requests, SHIFT rows <= SHIFT
    // requests, plus SHIFT's padding check).
    let caps = [
        t(EQ),
        t(LT) + t(DVRM),
        t(BW),
        t(SHIFT),
        t(MUL) + 2 * t(DVRM) + t(SHIFT) + 1,
        t(DVRM),
    ];
    if caps.iter().any(|&c| c > u32::MAX as usize) {
        return Err(CudaError::InvalidArgument(format!(
            "requests: lists of {caps:?} entries exceed the 32-bit index bound"
        )));
    }
    let lists: Vec<List> = caps
        .iter()
        .map(|&c| List::new(dev, c))
        .collect::<Result<_, _>>()?;
    let ptrs: Vec<u64> = lists
        .iter()
        .flat_map(|l| l.arrays.iter().map(|a| a.ptr()))
        .collect();
    let d_ptrs = dev.upload(&ptrs)?;
    h2d += d_ptrs.num_bytes() as u64;
    let cpu32 = dev.alloc::<Cpu32In>(t(W))?;
    // 3. The requests at their offsets.
    let mut args = vec![KArg::U64(REQ_CHUNK as u64), KArg::U64(n_chunks as u64)];
    args.extend(decode_args.iter().cloned());
    args.extend([
        KArg::U64(counts.ptr()),
        KArg::U64(d_ptrs.ptr()),
        KArg::U64(cpu32.ptr()),
    ]);
    // SAFETY: as step 1; `counts` holds the inclusive prefix of the counts, so every chunk writes inside its
    // tables' first `tot` entries (<= cap) and the CPU32 list's `tot[W]`; `d_ptrs` the 6 x 6 list arrays.
    unsafe { dev.launch(&kernels::REQUESTS_CU, "req_emit_write", chunk_cfg, &args)? };
    drop(counts);

    let mut cx = Dedup {
        dev,
        lists: &lists,
        ptrs: &d_ptrs,
        d2h: 0,
    };
    // 5. DVRM first: its rows' checks go to MUL and LT.
    let dvrm: DeviceBuffer<DvrmRequest> = cx.run(DVRM, t(DVRM))?;
    let n_dvrm = dvrm.len();
    let mut n_chk = 0usize;
    if n_dvrm > 0 {
        let flag = dev.alloc::<u64>(3 * n_dvrm)?;
        let cfg = launch_1d(n_dvrm as u64, 1, FILL_BLOCK)?;
        // SAFETY: `dvrm` holds n_dvrm rows, `flag` 3 n_dvrm u64; the grid covers n_dvrm threads.
        unsafe {
            dev.launch(
                &kernels::REQUESTS_CU,
                "req_dvrm_flag",
                cfg,
                &[
                    KArg::U64(n_dvrm as u64),
                    KArg::U64(dvrm.ptr()),
                    KArg::U64(flag.ptr()),
                ],
            )?
        };
        scan_ext3(dev, flag.ptr(), 3, n_dvrm as u64)?;
        let mut last = [0u64; 1];
        dev.copy_dtoh(&flag, 3 * (n_dvrm - 1), &mut last)?;
        d2h += 8;
        n_chk = last[0] as usize;
        // SAFETY: row k of the n_chk rows with chk writes MUL entries t(MUL) + 2k, +1 (< cap) and LT entry
        // t(LT) + k (< cap); the grid covers n_dvrm threads.
        unsafe {
            dev.launch(
                &kernels::REQUESTS_CU,
                "req_dvrm_facts",
                cfg,
                &[
                    KArg::U64(n_dvrm as u64),
                    KArg::U64(dvrm.ptr()),
                    KArg::U64(flag.ptr()),
                    KArg::U64(d_ptrs.ptr()),
                    KArg::U64(tot[MUL]),
                    KArg::U64(tot[LT]),
                ],
            )?
        };
    }
    // SHIFT: one MUL check per row and the padding rows' MUL(0, 1) x pad.
    let shift: DeviceBuffer<ShiftRequest> = cx.run(SHIFT, t(SHIFT))?;
    let n_shift = shift.len();
    let pad = shift_height(n_shift, min_height) - n_shift;
    if pad >= 1 << 31 {
        return Err(CudaError::InvalidArgument(format!(
            "requests: {pad} SHIFT padding rows"
        )));
    }
    let mul_base = t(MUL) + 2 * n_chk;
    let cfg = launch_1d(n_shift as u64 + 1, 1, FILL_BLOCK)?;
    // SAFETY: thread u <= n_shift writes MUL entry mul_base + u (< cap = t(MUL) + 2 t(DVRM) + t(SHIFT) + 1);
    // `shift` holds n_shift rows.
    unsafe {
        dev.launch(
            &kernels::REQUESTS_CU,
            "req_shift_checks",
            cfg,
            &[
                KArg::U64(n_shift as u64),
                KArg::U64(shift.ptr()),
                KArg::U64(pad as u64),
                KArg::U64(d_ptrs.ptr()),
                KArg::U64(mul_base as u64),
            ],
        )?
    };
    let n_mul = mul_base + n_shift + (pad > 0) as usize;
    let out = DeviceRequests {
        mul: cx.run(MUL, n_mul)?,
        lt: cx.run(LT, t(LT) + n_chk)?,
        eq: cx.run(EQ, t(EQ))?,
        bytewise: cx.run(BW, t(BW))?,
        shift,
        dvrm,
        cpu32,
    };
    stats.add_h2d("trace-gen", "REQUESTS", h2d);
    stats.add_d2h("trace-gen", "REQUESTS", d2h + cx.d2h);
    Ok(out)
}

/// The deduplication of one list (step 4 of the kernel file).
struct Dedup<'a> {
    dev: &'a Device,
    lists: &'a [List],
    ptrs: &'a DeviceBuffer<u64>,
    /// Bytes read back so far.
    d2h: u64,
}

impl Dedup<'_> {
    /// The rows of list `table`'s first `len` requests, in key order, as the table's upload struct `R`.
    fn run<R: cudarc::driver::DeviceRepr>(
        &mut self,
        table: usize,
        len: usize,
    ) -> Result<DeviceBuffer<R>, CudaError> {
        let dev = self.dev;
        if len == 0 {
            return dev.alloc::<R>(0);
        }
        let words = WORDS[table];
        let keys: Vec<&DeviceBuffer<u32>> = self.lists[table].arrays[..words].iter().collect();
        let perm = stable_sort_perm(dev, &keys, len)?;
        if perm.len() != len {
            return Err(CudaError::InvalidArgument(format!(
                "requests: the sort of {} returned {} indices for {len} keys",
                NAMES[table],
                perm.len()
            )));
        }
        let cfg = launch_1d(len as u64, 1, FILL_BLOCK)?;
        let tri = dev.alloc::<u64>(3 * len)?;
        // SAFETY: `perm` holds len indices < len (the sort's contract), the list arrays >= len entries,
        // `tri` 3 len u64; the grid covers len threads.
        unsafe {
            dev.launch(
                &kernels::REQUESTS_CU,
                "req_rle_mark",
                cfg,
                &[
                    KArg::U64(len as u64),
                    KArg::U64(self.ptrs.ptr()),
                    KArg::U32(table as u32),
                    KArg::U32(words as u32),
                    KArg::U64(perm.ptr()),
                    KArg::U64(tri.ptr()),
                ],
            )?
        };
        scan_ext3(dev, tri.ptr(), 3, len as u64)?;
        let mut last = [0u64; 1];
        dev.copy_dtoh(&tri, 3 * (len - 1), &mut last)?;
        self.d2h += 8;
        let runs = last[0] as usize;
        let start = dev.alloc::<u32>(runs)?;
        let rows = dev.alloc::<R>(runs)?;
        // SAFETY: heads are numbered 1..=runs by the scan, so start[h - 1] is in bounds; the grid covers len
        // threads.
        unsafe {
            dev.launch(
                &kernels::REQUESTS_CU,
                "req_rle_start",
                cfg,
                &[
                    KArg::U64(len as u64),
                    KArg::U64(tri.ptr()),
                    KArg::U64(start.ptr()),
                ],
            )?
        };
        let cfg = launch_1d(runs as u64, 1, FILL_BLOCK)?;
        // SAFETY: `rows` holds `runs` upload structs of list `table`'s kind (R, checked by the caller's type),
        // `start` runs positions < len; the grid covers `runs` threads.
        unsafe {
            dev.launch(
                &kernels::REQUESTS_CU,
                "req_rle_write",
                cfg,
                &[
                    KArg::U64(runs as u64),
                    KArg::U64(len as u64),
                    KArg::U64(self.ptrs.ptr()),
                    KArg::U32(table as u32),
                    KArg::U64(perm.ptr()),
                    KArg::U64(tri.ptr()),
                    KArg::U64(start.ptr()),
                    KArg::U64(rows.ptr()),
                ],
            )?
        };
        Ok(rows)
    }
}
