//! GPU trace generation: fill kernels for the machine tables (docs/gpu.md, "Trace generation").
//!
//! One module per table, mirroring `zkrv_machine::tables::<table>` and `kernels/tables/<table>.cu` file for file.
//! Each fill takes the table's compact inputs (the execution record, or the list the host fill takes, see
//! `zkrv_machine::trace::FillInputs`), uploads them once and writes the table's main trace (`n x width`
//! row-major u64, natural order, canonical field elements, padding rows included) into a fresh device buffer,
//! producing exactly the host fill's rows. The BITWISE lookups the rows make are added to a [`DeviceLookups`]
//! histogram on the device, merged into the host's `Lookups` once at the end.
//!
//! Launch guards ([`launch_1d`]) refuse shapes the kernels cannot address instead of launching a truncated grid.

pub mod bitwise;
pub mod bytewise;
pub mod cpu;
pub mod cpu32;
pub mod decode;
pub mod dvrm;
pub mod eq;
pub mod input;
pub mod keccakf;
pub mod load;
pub mod lt;
pub mod memw;
pub mod memw_a;
pub mod memwalk;
pub mod mul;
pub mod page;
pub mod poseidon2;
pub mod regfile;
pub mod regwalk;
pub mod requests;
pub mod sha256;
pub mod shift;
pub mod store;
pub mod sysio;

use cudarc::driver::LaunchConfig;
use zkrv_executor::CycleEvent;
use zkrv_machine::tables::bitwise::{Lookups, BITWISE_LOG_HEIGHT, NUM_BITWISE_COLS};

use zkrv_cuda::device::{Device, DeviceBuffer, MAX_GRID_X};
use zkrv_cuda::stats::TransferStats;
use zkrv_cuda::CudaError;
use zkrv_cuda::{DeviceTrace, KernelSource};
use zkrv_machine::registry::{PerTable, Table};

/// Declares a unit struct `$name` and its [`DeviceTableFill`] impl for `Table::$table`, launching programs of
/// `crate::kernels::$program`, whose `fill(cx, stats)` is `$body`: the one place the impl's shape is written.
macro_rules! device_fill {
    ($(#[$doc:meta])* $name:ident: $table:ident, $program:ident, |$cx:ident, $stats:ident| $body:block) => {
        $(#[$doc])*
        pub struct $name;

        impl $crate::tables::DeviceTableFill for $name {
            fn table(&self) -> zkrv_machine::registry::Table {
                zkrv_machine::registry::Table::$table
            }
            fn program(&self) -> &'static zkrv_cuda::KernelSource {
                &$crate::kernels::$program
            }
            fn fill(
                &self,
                $cx: &$crate::tables::FillCtx,
                $stats: &mut zkrv_cuda::stats::TransferStats,
            ) -> Result<zkrv_cuda::DeviceTrace, zkrv_cuda::CudaError> {
                $body
            }
        }
    };
}
pub(crate) use device_fill;

/// Everything a device fill may read: the host split (its compact inputs, the record, the host fills'
/// lookups), and what the earlier device steps left resident: the record's cycles, the register walk, the
/// request lists, the memory walk, and the lookup counters every fill adds to.
pub struct FillCtx<'a> {
    pub dev: &'a Device,
    /// The host walk's compact inputs of the device-filled tables (`zkrv_machine::trace::generate_split_at`).
    pub inputs: &'a zkrv_machine::trace::FillInputs,
    /// The execution record (of a whole run or of a segment).
    pub record: &'a zkrv_executor::Record,
    /// The BITWISE lookups the host fills made (`Traces::lookups`; BITWISE on the device adds them).
    pub host_lookups: &'a zkrv_machine::tables::bitwise::Lookups,
    /// The record's cycles on the device (CPU reads them; LOAD, STORE, MEMW_A on the record path).
    pub cycles: Option<&'a DeviceCycles>,
    /// The device register walk (`zkrv_machine::trace::DeviceFill::reg_walk`): CPU and REGFILE read it.
    pub walk: Option<&'a regwalk::DeviceRegWalk>,
    /// The device request lists (`DeviceFill::requests`): EQ, LT, BYTEWISE, SHIFT, MUL, CPU32, DVRM read them.
    pub requests: Option<&'a requests::DeviceRequests>,
    /// The device memory walk (`DeviceFill::mem_walk`): LOAD, STORE, MEMW_A, MEMW, PAGE, SYSIO read it.
    pub mem: Option<&'a memwalk::DeviceMemWalk>,
    /// The record's precompile calls on the device (the memory walk and the KECCAKF, SHA256, POSEIDON2 fills
    /// read them).
    pub calls: Option<&'a DeviceCalls>,
    pub lookups: &'a DeviceLookups,
}

impl FillCtx<'_> {
    /// The smallest table height of the run.
    pub fn min_height(&self) -> usize {
        self.inputs.min_height
    }

    /// The record's cycles on the device, or [`CudaError::InvalidArgument`] naming `what` needs them.
    pub fn need_cycles(&self, what: &str) -> Result<&DeviceCycles, CudaError> {
        self.cycles.ok_or_else(|| {
            CudaError::InvalidArgument(format!("{what} needs the record's cycles on the device"))
        })
    }

    /// The device request lists, or [`CudaError::InvalidArgument`] naming `table`, whose fill reads them
    /// (`DeviceFill::requests` off: the device fills read no host request lists).
    pub fn need_requests(&self, table: &str) -> Result<&requests::DeviceRequests, CudaError> {
        self.requests
            .ok_or_else(|| missing(table, "the device request lists (DeviceFill::requests)"))
    }

    /// The device memory walk, or [`CudaError::InvalidArgument`] naming `table`, whose fill reads it.
    pub fn need_mem(&self, table: &str) -> Result<&memwalk::DeviceMemWalk, CudaError> {
        self.mem
            .ok_or_else(|| missing(table, "the device memory walk (DeviceFill::mem_walk)"))
    }

    /// The record's precompile calls on the device, or [`CudaError::InvalidArgument`] naming `table`.
    pub fn need_calls(&self, table: &str) -> Result<&DeviceCalls, CudaError> {
        self.calls
            .ok_or_else(|| missing(table, "the record's precompile calls on the device"))
    }

    /// The device register walk, or [`CudaError::InvalidArgument`] naming `table`, whose fill reads it.
    pub fn need_walk(&self, table: &str) -> Result<&regwalk::DeviceRegWalk, CudaError> {
        self.walk
            .ok_or_else(|| missing(table, "the device register walk (DeviceFill::reg_walk)"))
    }
}

fn missing(table: &str, what: &str) -> CudaError {
    CudaError::InvalidArgument(format!(
        "the {table} device fill reads {what}, which did not run"
    ))
}

/// The device fill of one table: one impl per table, in the table's file (`tables/<table>.rs`), listed once
/// in [`device_fills`]. `fill` writes the table's whole main trace (padding rows included) into a fresh
/// device buffer from `cx`, counting its BITWISE lookups (and DECODE / POW2 multiplicities) into
/// `cx.lookups`, and records its input uploads in `stats`; the trace equals the host fill's cell for cell.
/// (Methods, not associated constants, so that the fills can sit in one table of `&dyn DeviceTableFill`.)
pub trait DeviceTableFill: Sync {
    /// The table this fills.
    fn table(&self) -> Table;
    /// The kernel program its launches use.
    fn program(&self) -> &'static KernelSource;
    /// Fills the table. Errors: the inputs it needs are missing from `cx`, launch bounds, allocation, launch.
    fn fill(&self, cx: &FillCtx, stats: &mut TransferStats) -> Result<DeviceTrace, CudaError>;
}

/// The device fill of every table that has one, `None` for the rest: the one list of device fills. A table
/// added to the registry without a device fill gets `None` here without an edit; the GPU path then fills it
/// on the host when it has no rows and fails with a named error when it has some
/// (`trace_gen::TraceGenError::NoDeviceFill`).
pub fn device_fills() -> PerTable<Option<&'static dyn DeviceTableFill>> {
    PerTable::from_fn(|t| -> Option<&'static dyn DeviceTableFill> {
        Some(match t {
            Table::Cpu => &cpu::CpuFill,
            Table::Decode => &decode::DecodeFill,
            Table::Bitwise => &bitwise::BitwiseFill,
            Table::Regfile => &regfile::RegfileFill,
            Table::Eq => &eq::EqFill,
            Table::Lt => &lt::LtFill,
            Table::Load => &load::LoadFill,
            Table::Store => &store::StoreFill,
            Table::MemwA => &memw_a::MemwAFill,
            Table::Page => &page::PageFill,
            Table::Bytewise => &bytewise::BytewiseFill,
            Table::Syscall => &sysio::SyscallFill,
            Table::Sysio => &sysio::SysioFill,
            Table::Input => &input::InputFill,
            Table::Cpu32 => &cpu32::Cpu32Fill,
            Table::Dvrm => &dvrm::DvrmFill,
            Table::Shift => &shift::ShiftFill,
            Table::Pow2 => &shift::Pow2Fill,
            Table::Mul => &mul::MulFill,
            Table::Memw => &memw::MemwFill,
            Table::Keccakf => &keccakf::KeccakfFill,
            Table::Sha256 => &sha256::Sha256Fill,
            Table::Poseidon2 => &poseidon2::Poseidon2Fill,
            #[allow(unreachable_patterns)]
            _ => return None,
        })
    })
}

/// Largest trace height a fill kernel accepts: 2^26 rows (`zkrv_stark::logup::MAX_LOG_HEIGHT`).
pub const MAX_FILL_LOG_ROWS: u32 = 26;
/// Threads per block of the fill kernels.
pub const FILL_BLOCK: u32 = 256;

/// The launch shape of a one-thread-per-row fill over `rows` rows of `width` columns, checked:
/// `1 <= rows <= 2^26`, `block` a multiple of 32 in `[32, 1024]`, the grid `ceil(rows / block)` at most
/// `zkrv_cuda::device::MAX_GRID_X`, and `rows * width <= u32::MAX` (kernels may address a cell with a 32-bit offset).
/// Errors: [`CudaError::InvalidArgument`] naming the violated bound.
pub fn launch_1d(rows: u64, width: u64, block: u32) -> Result<LaunchConfig, CudaError> {
    if rows == 0 || rows > 1 << MAX_FILL_LOG_ROWS {
        return Err(CudaError::InvalidArgument(format!(
            "fill of {rows} rows: must be 1..=2^{MAX_FILL_LOG_ROWS}"
        )));
    }
    if block == 0 || block > 1024 || !block.is_multiple_of(32) {
        return Err(CudaError::InvalidArgument(format!(
            "fill block of {block} threads: must be a multiple of 32 in [32, 1024]"
        )));
    }
    let cells = rows.saturating_mul(width);
    if cells > u32::MAX as u64 {
        return Err(CudaError::InvalidArgument(format!(
            "fill of {rows} x {width} = {cells} cells exceeds the 32-bit cell index bound {}",
            u32::MAX
        )));
    }
    let grid = rows.div_ceil(block as u64);
    if grid > MAX_GRID_X {
        return Err(CudaError::InvalidArgument(format!(
            "fill grid of {grid} blocks exceeds the grid limit {MAX_GRID_X}"
        )));
    }
    Ok(LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// A fresh trace buffer of `rows x width` u64 (poisoned with 0xff bytes when the device is in debug mode, so
/// that a cell no kernel wrote reads as `u64::MAX`, which is not a canonical field element).
pub fn alloc_trace(dev: &Device, rows: usize, width: usize) -> Result<DeviceTrace, CudaError> {
    if !rows.is_power_of_two() {
        return Err(CudaError::InvalidArgument(format!(
            "trace height {rows} is not a power of two"
        )));
    }
    Ok(DeviceTrace {
        data: dev.alloc::<u64>(rows * width)?,
        width,
        log_height: rows.trailing_zeros(),
    })
}

/// The lookup counters the device fills add to: the BITWISE histogram `u32 counts[7 x 2^16]`, kind-major
/// (`LookupKind` order), and the multiplicities of the other preprocessed tables when they are built resident:
/// DECODE (`u32` per DECODE row, counted by the CPU fill) and POW2 (`u32` per POW2 row, counted by the SHIFT
/// fill).
pub struct DeviceLookups {
    pub counts: DeviceBuffer<u32>,
    /// DECODE multiplicities (`decode_rows` u32, natural order); empty unless [`Self::with_counters`].
    pub decode: DeviceBuffer<u32>,
    /// POW2 counters (`pow2_rows` u32, natural order); empty unless [`Self::with_counters`].
    pub pow2: DeviceBuffer<u32>,
}

impl DeviceLookups {
    /// Number of counters: 7 kinds x 2^16 rows.
    pub const LEN: usize = NUM_BITWISE_COLS << BITWISE_LOG_HEIGHT;

    /// A zeroed histogram, no DECODE or POW2 counters (the CPU and SHIFT fills then count none).
    pub fn new(dev: &Device) -> Result<Self, CudaError> {
        Self::with_counters(dev, 0, 0)
    }

    /// A zeroed histogram and zeroed DECODE / POW2 counters of `decode_rows` / `pow2_rows` entries (0: none;
    /// else the table's height, `DecodeTable::height(min_height)` / `pow2_height(min_height)`).
    pub fn with_counters(
        dev: &Device,
        decode_rows: usize,
        pow2_rows: usize,
    ) -> Result<Self, CudaError> {
        Ok(DeviceLookups {
            counts: dev.alloc_zeros::<u32>(Self::LEN)?,
            decode: dev.alloc_zeros::<u32>(decode_rows)?,
            pow2: dev.alloc_zeros::<u32>(pow2_rows)?,
        })
    }

    /// Downloads the histogram (`7 x 2^16` u32, 1.75 MiB) and adds it to `host`.
    pub fn merge_into(&self, dev: &Device, host: &mut Lookups) -> Result<(), CudaError> {
        let v = dev.download(&self.counts)?;
        host.add_histogram(&v)
            .map_err(|e| CudaError::InvalidArgument(format!("lookup histogram: {e}")))
    }
}

/// Height of a table filled from `n_events` events, one row per event: the next power of two `>=
/// max(n_events, min_height)` (what `load_trace`, `store_trace` and `memw_a_trace` use). Errors if
/// The fill of a table whose rows are its host inputs in row order (INPUT, SYSCALL): uploads `requests` (recorded as H2D
/// stage "trace-gen", table `table`), allocates the `rows x cols` trace and launches `kernel` of `program` with
/// `(requests, len, rows, trace, lookup counts)`, one thread per row. Errors: launch shape out of bounds
/// ([`launch_1d`]), allocation, launch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill_from_requests<R: cudarc::driver::DeviceRepr + Copy>(
    dev: &Device,
    program: &'static zkrv_cuda::KernelSource,
    kernel: &str,
    table: &str,
    requests: &[R],
    rows: usize,
    cols: usize,
    lookups: &DeviceLookups,
    stats: &mut TransferStats,
) -> Result<DeviceTrace, CudaError> {
    // Shape errors before anything is uploaded.
    crate::layout::check_width(table, cols)?;
    launch_1d(rows as u64, cols as u64, FILL_BLOCK)?;
    let req = upload_requests(dev, table, requests, stats)?;
    // `req` is freed stream-ordered after the kernel.
    fill_from_uploaded(dev, program, kernel, table, &req, rows, cols, lookups)
}

/// Uploads `requests` (an empty list as an empty buffer), recorded as H2D stage "trace-gen", table `table`.
pub fn upload_requests<R: cudarc::driver::DeviceRepr + Copy>(
    dev: &Device,
    table: &str,
    requests: &[R],
    stats: &mut TransferStats,
) -> Result<DeviceBuffer<R>, CudaError> {
    let req = if requests.is_empty() {
        dev.alloc::<R>(0)?
    } else {
        dev.upload(requests)?
    };
    stats.add_h2d("trace-gen", table, std::mem::size_of_val(requests) as u64);
    Ok(req)
}

/// [`fill_from_requests`] from the inputs already on the device (LT, SHIFT, MEMW, PAGE, ...: the device walks'
/// lists) (`req`: every request, in row order): allocates the `rows x cols` trace and
/// launches `kernel` of `program` with `(requests, len, rows, trace, lookup counts)`, one thread per row.
/// Errors: `table` not `cols` wide in layout.cuh, launch shape out of bounds ([`launch_1d`]), more requests
/// than rows, allocation, launch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill_from_uploaded<R: cudarc::driver::DeviceRepr + Copy>(
    dev: &Device,
    program: &'static zkrv_cuda::KernelSource,
    kernel: &str,
    table: &str,
    req: &DeviceBuffer<R>,
    rows: usize,
    cols: usize,
    lookups: &DeviceLookups,
) -> Result<DeviceTrace, CudaError> {
    fill_from_uploaded_with(dev, program, kernel, table, req, rows, cols, lookups, &[])
}

/// [`fill_from_uploaded`] with `extra` kernel arguments after the lookup counts (INPUT's first index).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill_from_uploaded_with<R: cudarc::driver::DeviceRepr + Copy>(
    dev: &Device,
    program: &'static zkrv_cuda::KernelSource,
    kernel: &str,
    table: &str,
    req: &DeviceBuffer<R>,
    rows: usize,
    cols: usize,
    lookups: &DeviceLookups,
    extra: &[zkrv_cuda::device::KArg],
) -> Result<DeviceTrace, CudaError> {
    use zkrv_cuda::device::KArg;
    // The kernel addresses the table's columns through layout.cuh: `table` must have `cols` columns there.
    crate::layout::check_width(table, cols)?;
    let cfg = launch_1d(rows as u64, cols as u64, FILL_BLOCK)?;
    if req.len() > rows {
        return Err(CudaError::InvalidArgument(format!(
            "{table} fill: {} requests for {rows} rows",
            req.len()
        )));
    }
    let trace = alloc_trace(dev, rows, cols)?;
    // SAFETY: `req` holds `req.len() <= rows` requests, `trace` rows x cols u64, `counts` the 7 x 2^16
    // histogram; the grid covers `rows` threads (launch_1d) and the kernel skips the rest; `extra` are
    // scalars the kernel takes after the counts (the caller's contract with its kernel).
    unsafe {
        let mut args = vec![
            KArg::U64(req.ptr()),
            KArg::U64(req.len() as u64),
            KArg::U64(rows as u64),
            KArg::U64(trace.data.ptr()),
            KArg::U64(lookups.counts.ptr()),
        ];
        args.extend_from_slice(extra);
        dev.launch(program, kernel, cfg, &args)?;
    }
    Ok(trace)
}

/// A one-column trace of `counters.len()` rows (a power of two) from u32 counters on the device (DECODE, POW2
/// multiplicities): launches `kernel(counters, rows, trace)` of `program`. Errors: an empty or non-power-of-two
/// counter buffer, launch shape, allocation, launch.
pub(crate) fn fill_counts_column(
    dev: &Device,
    program: &'static zkrv_cuda::KernelSource,
    kernel: &str,
    table: &str,
    counters: &DeviceBuffer<u32>,
) -> Result<DeviceTrace, CudaError> {
    use zkrv_cuda::device::KArg;
    let rows = counters.len();
    if !rows.is_power_of_two() {
        return Err(CudaError::InvalidArgument(format!(
            "{table} fill: {rows} counters on the device (not a table height; were they allocated with \
             DeviceLookups::with_counters?)"
        )));
    }
    let cfg = launch_1d(rows as u64, 1, FILL_BLOCK)?;
    let trace = alloc_trace(dev, rows, 1)?;
    // SAFETY: `counters` holds `rows` u32 and `trace` rows u64; the grid covers `rows` threads and the kernel
    // skips the rest.
    unsafe {
        dev.launch(
            program,
            kernel,
            cfg,
            &[
                KArg::U64(counters.ptr()),
                KArg::U64(rows as u64),
                KArg::U64(trace.data.ptr()),
            ],
        )?;
    }
    Ok(trace)
}

/// `min_height` is not a power of two or the height exceeds `2^MAX_FILL_LOG_ROWS`.
pub fn event_table_height(n_events: usize, min_height: usize) -> Result<usize, CudaError> {
    if !min_height.is_power_of_two() {
        return Err(CudaError::InvalidArgument(format!(
            "min_height {min_height} is not a power of two"
        )));
    }
    let n = n_events.next_power_of_two().max(min_height);
    if n > 1 << MAX_FILL_LOG_ROWS {
        return Err(CudaError::InvalidArgument(format!(
            "table of {n_events} events: height {n} exceeds 2^{MAX_FILL_LOG_ROWS} rows"
        )));
    }
    Ok(n)
}

/// Events per thread below which [`par_pack`] stays on the calling thread.
pub const PACK_CHUNK: usize = 1 << 16;

/// `events.iter().enumerate().map(f).collect()`, on up to 16 threads for large inputs (chunks of at least
/// [`PACK_CHUNK`] events): the host-side conversion of a fill's events into their upload form. On failure
/// returns the error of the first failing event (lowest index), as the sequential loop would.
pub fn par_pack<E: Sync, P: Copy + Default + Send>(
    events: &[E],
    f: impl Fn(usize, &E) -> Result<P, CudaError> + Sync,
) -> Result<Vec<P>, CudaError> {
    let chunks = events.len().div_ceil(PACK_CHUNK);
    let threads = if chunks <= 1 {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(16)
            .min(chunks)
    };
    let mut out = vec![P::default(); events.len()];
    let part = events.len().div_ceil(threads).max(1);
    let run = |base: usize, src: &[E], dst: &mut [P]| -> Result<(), CudaError> {
        for (k, (e, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
            *d = f(base + k, e)?;
        }
        Ok(())
    };
    if threads == 1 {
        run(0, events, &mut out)?;
        return Ok(out);
    }
    let results: Vec<Result<(), CudaError>> = std::thread::scope(|s| {
        let handles: Vec<_> = events
            .chunks(part)
            .zip(out.chunks_mut(part))
            .enumerate()
            .map(|(c, (src, dst))| {
                let run = &run;
                s.spawn(move || run(c * part, src, dst))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(CudaError::InvalidArgument(
                        "event packing thread panicked".into(),
                    ))
                })
            })
            .collect()
    });
    // Chunks are in event order, so the first error is the lowest failing index.
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    Ok(out)
}

/// The execution record's cycles resident on the device, for the record-path fills (`fill_load_rec`,
/// `fill_store_rec`, `fill_memw_a_rec`), which read their rows from it and upload only what the record does
/// not hold. `len x 4` u64 in cycle order, each a `zkrv_executor::CycleEvent` (32 bytes): `pc | word << 32`,
/// `rs1_val`, `rs2_val`, `rd_val`.
pub struct DeviceCycles {
    pub data: DeviceBuffer<u64>,
    /// Number of cycles.
    pub len: usize,
}

impl DeviceCycles {
    /// Uploads `cycles` (32 bytes each), recorded as H2D ("trace-gen", "record").
    pub fn upload(
        dev: &Device,
        cycles: &[CycleEvent],
        stats: &mut TransferStats,
    ) -> Result<Self, CudaError> {
        const _: () = assert!(std::mem::size_of::<CycleEvent>() == 32);
        // CycleEvent is #[repr(C)] Pod { pc: u32, word: u32, rs1_val, rs2_val, rd_val: u64 }: on a little-endian
        // host its bytes are exactly the 4 u64 `pc | word << 32, rs1_val, rs2_val, rd_val`.
        let words: &[u64] = bytemuck::cast_slice(cycles);
        let data = if words.is_empty() {
            dev.alloc::<u64>(0)?
        } else {
            dev.upload(words)?
        };
        stats.add_h2d("trace-gen", "record", 8 * words.len() as u64);
        Ok(DeviceCycles {
            data,
            len: cycles.len(),
        })
    }
}

/// The record's precompile calls resident on the device (the compact record of the KECCAKF, SHA256 and
/// POSEIDON2 tables): every `zkrv_executor::KeccakEvent` (416 B), `Sha256Event` (152 B) and `Poseidon2Event`
/// (144 B) as it is in the record (`#[repr(C)]`, the kernels' structs of layout.cuh), each list in cycle order.
/// The memory walk reads their cells from them and the precompile fills their inputs; uploaded once.
pub struct DeviceCalls {
    /// The three lists as u64 words (52, 19 and 18 words per event).
    pub keccak: DeviceBuffer<u64>,
    pub sha256: DeviceBuffer<u64>,
    pub poseidon2: DeviceBuffer<u64>,
    /// Calls in each list.
    pub n_keccak: usize,
    pub n_sha256: usize,
    pub n_poseidon2: usize,
}

impl DeviceCalls {
    /// Uploads the record's three event lists, recorded as H2D ("trace-gen", "record"). Errors: allocation,
    /// copy.
    pub fn upload(
        dev: &Device,
        rec: &zkrv_executor::Record,
        stats: &mut TransferStats,
    ) -> Result<Self, CudaError> {
        fn up<E: bytemuck::Pod>(
            dev: &Device,
            events: &[E],
            stats: &mut TransferStats,
        ) -> Result<DeviceBuffer<u64>, CudaError> {
            // Every event is 8-aligned and a whole number of u64 (the record's size asserts).
            let words: &[u64] = bytemuck::cast_slice(events);
            stats.add_h2d("trace-gen", "record", 8 * words.len() as u64);
            if words.is_empty() {
                dev.alloc::<u64>(0)
            } else {
                dev.upload(words)
            }
        }
        Ok(DeviceCalls {
            keccak: up(dev, &rec.keccak, stats)?,
            sha256: up(dev, &rec.sha256, stats)?,
            poseidon2: up(dev, &rec.poseidon2, stats)?,
            n_keccak: rec.keccak.len(),
            n_sha256: rec.sha256.len(),
            n_poseidon2: rec.poseidon2.len(),
        })
    }

    /// Every call of the three lists.
    pub fn len(&self) -> usize {
        self.n_keccak + self.n_sha256 + self.n_poseidon2
    }

    /// Whether the record has no precompile call.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The cycle of a load/store from its timestamp `4 clk + 1`, checked against the record's length.
pub(crate) fn clk_of(ts: u64, cycles: usize) -> Option<u32> {
    let clk = ts.checked_sub(1)?;
    if clk % 4 != 0 || clk / 4 >= cycles as u64 {
        return None;
    }
    u32::try_from(clk / 4).ok()
}
