//! Proving with GPU trace generation (docs/gpu.md, "Trace generation"):
//!
//! 1. execute the program with recording (`zkrv_machine::run_for_proof`);
//! 2. the host walk (`zkrv_machine::split_traces`): the inherently sequential parts (memory walk, DECODE
//!    multiplicities; the register walk and the request lists between tables unless done on the device) and the
//!    host fills of every table without a device fill; the device-filled tables come back empty with their
//!    compact inputs (`FillInputs`);
//! 3. the device register walk and request lists (`DeviceFill::reg_walk`, `DeviceFill::requests`) from the
//!    record's cycles, uploaded during the host walk; then the device fills, one per selected table
//!    ([`DEVICE_FILLS`], run by their `DeviceTableFill` of [`tables::device_fills`] in [`fill_plan`] order):
//!    each uploads its compact inputs once and writes
//!    its main trace into a fresh device buffer, counting its BITWISE lookups into one device histogram;
//!    (and, for DECODE and POW2 built resident, their multiplicities into device counters);
//! 4. DECODE, POW2 and BITWISE are filled from those counters on the device, BITWISE last (plus the host
//!    fills' lookups, if any); with BITWISE on the host the histogram is merged into the host's lookups
//!    instead ([`DeviceLookups::merge_into`]);
//! 5. prove (`zkrv_machine::prove_inputs_with`): resident traces enter the commitment as
//!    `TraceInput::Device` (no main-trace upload; the LDE consumes and drops them), the others are uploaded.
//!
//! No silent fallback: a fill that cannot run (launch bounds, out of memory, launch failure) fails the proof
//! with that error. `ZKRV_CPU_TRACE=1` ([`TraceGenOptions::from_env`]) makes every trace on the host.

use std::fmt;
use std::time::Instant;

use thiserror::Error;
use zkrv_executor::Program;
use zkrv_machine::registry::{PerTable, Table};
use zkrv_machine::segment::{SegmentRun, SegmentWitness};
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::shift::pow2_height;
use zkrv_machine::trace::{generate_split_at, DeviceFill, TraceStart};
use zkrv_machine::{prove_inputs_with, run_for_proof, MachineError, Proof, Statement, TABLE_NAMES};
use zkrv_stark::backend::TraceInput;
use zkrv_stark::StarkConfig;

use crate::tables::requests::device_requests;
use crate::tables::{self, DeviceCalls, DeviceCycles, DeviceLookups, DeviceTableFill};
use zkrv_cuda::stats::{TraceOrigin, TransferStats};
use zkrv_cuda::CudaError;
use zkrv_cuda::{CudaBackend, DeviceTrace};

/// Environment variable forcing host trace generation when set to anything but `0` or empty.
pub const CPU_TRACE_ENV: &str = "ZKRV_CPU_TRACE";

/// The default selection of device fills: every table and the three device walks (a table without a device
/// fill in [`tables::device_fills`] is left to the host, and must then have no rows:
/// [`TraceGenError::NoDeviceFill`]). DECODE's and POW2's multiplicities are counted by the CPU and SHIFT fills,
/// BITWISE's by every fill. A new fill: its `DeviceTableFill` impl in `tables/<table>.rs` and its arm in
/// [`tables::device_fills`].
pub const DEVICE_FILLS: DeviceFill = DeviceFill::ALL;

/// Why proving with GPU trace generation failed.
#[derive(Debug, Error)]
pub enum TraceGenError {
    /// Execution, the host walk or the prover.
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// A device fill could not run.
    #[error("device fill of {table}: {source}")]
    Fill {
        table: &'static str,
        source: CudaError,
    },
    /// A table with rows in this run has no device fill (`tables::device_fills`): the GPU path does not fill
    /// it on the host behind the caller's back. Prove with host traces (`ZKRV_CPU_TRACE=1`,
    /// [`TraceGenOptions::host_traces`]) or on the CPU backend.
    #[error(
        "table {table} has rows in this run but no device fill: prove with host traces (ZKRV_CPU_TRACE=1) or on the CPU backend"
    )]
    NoDeviceFill { table: &'static str },
    /// Another device failure (histogram, synchronization).
    #[error("device: {0}")]
    Device(#[from] CudaError),
}

/// Where the traces are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceGenOptions {
    /// Generate every trace on the host (all uploaded at commit).
    pub host_traces: bool,
    /// The tables filled on the device when `host_traces` is false.
    pub device: DeviceFill,
    /// Smallest table height (a power of two): `zkrv_machine::MIN_HEIGHT`, or `zkrv_machine::min_height(config)`
    /// in zk mode.
    pub min_height: usize,
    /// Upload the record's cycles once (during the host walk) and fill CPU, LOAD, STORE and MEMW_A from
    /// them (LOAD/STORE/MEMW_A then upload only what the record does not hold); else each fill uploads its
    /// own inputs. Default true. (With the device memory walk, `DeviceFill::mem_walk`, the memory tables read
    /// the walk's resident lists either way.)
    pub record_path: bool,
}

impl Default for TraceGenOptions {
    fn default() -> Self {
        TraceGenOptions {
            host_traces: false,
            device: DEVICE_FILLS,
            min_height: zkrv_machine::MIN_HEIGHT,
            record_path: true,
        }
    }
}

impl TraceGenOptions {
    /// The default, with `host_traces` set when `ZKRV_CPU_TRACE` is set to anything but `0` or empty.
    pub fn from_env() -> Self {
        let host = std::env::var(CPU_TRACE_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
        TraceGenOptions {
            host_traces: host,
            ..Self::default()
        }
    }

    /// The tables actually filled on the device.
    pub fn device_tables(&self) -> DeviceFill {
        if self.host_traces {
            DeviceFill::NONE
        } else {
            self.device
        }
    }
}

/// One table of a proof: how its main trace was made.
#[derive(Clone, Debug, PartialEq)]
pub struct TableGen {
    /// Table name (`zkrv_machine::TABLE_NAMES`).
    pub name: &'static str,
    /// `Resident`: filled on the device; `Uploaded`: generated on the host and uploaded at commit.
    pub origin: TraceOrigin,
    /// Rows x columns of the main trace.
    pub rows: usize,
    pub width: usize,
    /// Device fill time in seconds, input uploads included (synchronized before and after); `None` for
    /// host-generated tables (their time is in [`TraceGenReport::host_trace_s`]).
    pub fill_s: Option<f64>,
}

/// Timings (wall seconds) and per-table origins of one proof.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceGenReport {
    /// Execution with recording.
    pub execute_s: f64,
    /// The host walk and the host fills of the tables not filled on the device.
    pub host_trace_s: f64,
    /// Upload of the record's cycles for the CPU fill, overlapped with the host walk (not in the total).
    pub record_upload_s: f64,
    /// All device fills (sum of [`TableGen::fill_s`]) and the device register walk.
    pub device_fill_s: f64,
    /// The device register walk (`tables::regwalk::reg_walk`), included in `device_fill_s`.
    pub walk_s: f64,
    /// The device memory walk (`tables::memwalk::mem_walk`, uploads of the page images included), included in
    /// `device_fill_s`.
    pub mem_walk_s: f64,
    /// The request lists on the device (`tables::requests::device_requests`), included in `device_fill_s`.
    pub requests_s: f64,
    /// Merging the device lookup histogram and building BITWISE.
    pub lookups_s: f64,
    /// Proving (commitments onwards).
    pub prove_s: f64,
    /// Every table, in proof order.
    pub tables: Vec<TableGen>,
}

impl TraceGenReport {
    /// Trace generation end to end: host walk + device fills + lookups.
    pub fn trace_gen_s(&self) -> f64 {
        self.host_trace_s + self.device_fill_s + self.lookups_s
    }
}

impl fmt::Display for TraceGenReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "execute {:.3} s, trace gen {:.3} s (host walk/fills {:.3} s, record upload {:.3} s overlapped, device fills {:.3} s incl. register walk {:.3} s, requests {:.3} s and memory walk {:.3} s, lookups {:.3} s), prove {:.3} s",
            self.execute_s,
            self.trace_gen_s(),
            self.host_trace_s,
            self.record_upload_s,
            self.device_fill_s,
            self.walk_s,
            self.requests_s,
            self.mem_walk_s,
            self.lookups_s,
            self.prove_s
        )?;
        for t in &self.tables {
            let how = match (t.origin, t.fill_s) {
                (TraceOrigin::Resident, Some(s)) => format!(
                    "resident, device fill {:.3} ms, {:.1} Mrows/s",
                    s * 1e3,
                    t.rows as f64 / s.max(1e-12) / 1e6
                ),
                (TraceOrigin::Resident, None) => "resident".to_string(),
                (TraceOrigin::Uploaded, _) => "uploaded".to_string(),
            };
            writeln!(f, "  {:<9} {:>10} x {:<3} {how}", t.name, t.rows, t.width)?;
        }
        Ok(())
    }
}

/// Proves `program` on `input` with GPU trace generation as [`TraceGenOptions::from_env`] says.
pub fn prove_gpu_tracegen(
    backend: &CudaBackend,
    program: &Program,
    input: &[u8],
    config: &StarkConfig,
) -> Result<(Statement, Proof, TraceGenReport), TraceGenError> {
    prove_gpu_tracegen_with(backend, program, input, config, TraceGenOptions::from_env())
}

/// Proves `program` on `input` on `backend`, filling the tables of `opts` on the device (see the module
/// docs): [`generate_traces`] then `zkrv_machine::prove_inputs_with`. The proof is byte-identical to the CPU
/// backend's.
pub fn prove_gpu_tracegen_with(
    backend: &CudaBackend,
    program: &Program,
    input: &[u8],
    config: &StarkConfig,
    opts: TraceGenOptions,
) -> Result<(Statement, Proof, TraceGenReport), TraceGenError> {
    let opts = TraceGenOptions {
        min_height: opts.min_height.max(zkrv_machine::min_height(config)),
        ..opts
    };
    let g = generate_traces(backend, program, input, opts)?;
    let mut report = g.report;
    let t = Instant::now();
    let (statement, proof) =
        prove_inputs_with(backend, program, g.statement, g.pages, g.traces, config)?;
    report.prove_s = t.elapsed().as_secs_f64();
    Ok((statement, proof, report))
}

/// The prepared inputs of a proof ([`generate_traces`]).
pub struct GpuTraces {
    pub statement: Statement,
    /// Touched pages (public).
    pub pages: Vec<u32>,
    /// Main traces in table order: `TraceInput::Device` for the device-filled tables, host matrices else.
    pub traces: Vec<TraceInput<DeviceTrace>>,
    /// Timings so far (`prove_s` = 0) and every table's origin.
    pub report: TraceGenReport,
}

/// Executes `program` on `input` and generates its main traces, the tables of `opts` on `backend`'s device
/// (resident), the rest on the host. Names the next commit round's tables with the machine's table names in
/// the backend's transfer statistics (so the main commitment shows CPU, LT, ... as resident / uploaded) and
/// counts the fills' input uploads there under stage "trace-gen". Prove with
/// `zkrv_machine::prove_inputs_with(backend, ..)` before committing anything else on `backend`.
pub fn generate_traces(
    backend: &CudaBackend,
    program: &Program,
    input: &[u8],
    opts: TraceGenOptions,
) -> Result<GpuTraces, TraceGenError> {
    let t = Instant::now();
    let run = run_for_proof(program, input)?;
    let execute_s = t.elapsed().as_secs_f64();
    let decode_table = DecodeTable::new(program)?;
    let (pages, traces, mut report) = record_traces(
        backend,
        &decode_table,
        run.record,
        &run.input,
        &TraceStart::RUN,
        opts,
    )?;
    report.execute_s = execute_s;
    Ok(GpuTraces {
        statement: run.statement,
        pages,
        traces,
        report,
    })
}

/// The main traces of one segment ([`zkrv_machine::segment::segment_run`]: its re-execution from the
/// checkpoint) built as [`generate_traces`] builds a whole run's, from the segment's record and trace
/// boundary (`SegmentRun::start`: the start registers and input/output cursors, the start pages' contents
/// at timestamp 0, the INPUT table's first index and end row, the paused end pc of the CPU table's last
/// row): cell for cell the traces of `SegmentRun::host_traces` (docs/continuations.md §5a). With
/// `opts.host_traces` every table is built on the host and uploaded at the main commitment. Prove with
/// `zkrv_machine::segment::prove_segment_inputs_with(backend, ..)` before committing anything else on
/// `backend`. `report.execute_s` is 0 (the re-execution is the caller's).
pub fn generate_segment_traces(
    backend: &CudaBackend,
    program: &Program,
    mut run: SegmentRun,
    opts: TraceGenOptions,
) -> Result<(SegmentWitness<TraceInput<DeviceTrace>>, TraceGenReport), TraceGenError> {
    let decode_table = DecodeTable::new(program)?;
    let record = std::mem::take(&mut run.record);
    let (_, traces, report) =
        record_traces(backend, &decode_table, record, &run.input, &run.start, opts)?;
    Ok((run.with_traces(traces), report))
}

/// What [`record_traces`] builds: the touched pages, the main traces in table order, the report.
type RecordTraces = (Vec<u32>, Vec<TraceInput<DeviceTrace>>, TraceGenReport);

/// The main traces of `record` (a run, or a segment starting at `start`, on the input bytes `input` it
/// reads), the tables of `opts` on the device: the touched pages, the traces in table order and the report
/// (`execute_s` 0).
fn record_traces(
    backend: &CudaBackend,
    decode_table: &DecodeTable,
    record: zkrv_executor::Record,
    input: &[u8],
    at: &TraceStart,
    opts: TraceGenOptions,
) -> Result<RecordTraces, TraceGenError> {
    let mut report = TraceGenReport::default();
    let fills = tables::device_fills();
    let (device, no_fill) = without_missing_fills(&fills, opts.device_tables());
    let dev = backend.device();
    let mut stats = TransferStats::default();
    // The host walk, with the record's cycles uploaded for the CPU fill meanwhile (the walk does not touch
    // the device; the upload's staging copies run on their own thread).
    let (split, cycles_upload) = std::thread::scope(|scope| {
        let upload = needs_record(device, opts.record_path).then(|| {
            scope.spawn(|| {
                let t = Instant::now();
                let mut st = TransferStats::default();
                let r = DeviceCycles::upload(dev, &record.cycles, &mut st).and_then(|c| {
                    // The precompile events, the compact record of the memory walk's calls and their fills.
                    let calls = if device.mem_walk {
                        Some(DeviceCalls::upload(dev, &record, &mut st)?)
                    } else {
                        None
                    };
                    Ok((c, calls))
                });
                (r, st, t.elapsed().as_secs_f64())
            })
        });
        let t = Instant::now();
        let split = generate_split_at(decode_table, &record, input, at, opts.min_height, device);
        report.host_trace_s = t.elapsed().as_secs_f64();
        (split, upload.map(|h| h.join()))
    });
    let (mut traces, inputs) = split?;
    check_missing_fills(no_fill, |t| has_rows(&traces, t))?;
    let (cycles, calls) = match cycles_upload {
        None => (None, None),
        Some(Err(_)) => {
            return Err(TraceGenError::Fill {
                table: "record",
                source: CudaError::InvalidArgument("the record upload thread panicked".into()),
            })
        }
        Some(Ok((r, st, s))) => {
            stats.merge(&st);
            report.record_upload_s = s;
            let (c, calls) = r.map_err(|source| TraceGenError::Fill {
                table: "record",
                source,
            })?;
            (Some(c), calls)
        }
    };
    let mut resident: PerTable<Option<(DeviceTrace, f64)>> = PerTable::default();
    let selected = fill_plan(&fills, device)?;
    if !selected.is_empty() {
        let decode_rows = if device.has(Table::Decode) {
            decode_table.height(opts.min_height)
        } else {
            0
        };
        let pow2_rows = if device.has(Table::Pow2) {
            pow2_height(opts.min_height)
        } else {
            0
        };
        let lookups = DeviceLookups::with_counters(dev, decode_rows, pow2_rows)?;
        // The register walk on the device, before the CPU and REGFILE fills that read it.
        let walk = match (device.reg_walk, cycles.as_ref(), inputs.cpu.as_ref()) {
            (false, _, _) => None,
            (true, Some(c), Some(cpu)) => {
                dev.synchronize()?;
                let start = Instant::now();
                let init = tables::regwalk::initial_regs(
                    &record.init_regs,
                    at.input_cursor,
                    at.output_cursor,
                );
                let w = tables::regwalk::reg_walk(
                    dev,
                    c,
                    &cpu.decode,
                    &init,
                    &record.syscalls,
                    tables::regwalk::WALK_CHUNK,
                    &mut stats,
                )
                .and_then(|w| dev.synchronize().map(|_| w))
                .map_err(|source| TraceGenError::Fill {
                    table: "REGWALK",
                    source,
                })?;
                report.walk_s = start.elapsed().as_secs_f64();
                report.device_fill_s += report.walk_s;
                Some(w)
            }
            (true, _, _) => {
                return Err(TraceGenError::Fill {
                    table: "REGWALK",
                    source: CudaError::InvalidArgument(
                        "the device register walk needs the record's cycles and the CPU inputs"
                            .into(),
                    ),
                })
            }
        };
        // The program's decode data, read by the request lists and the memory walk: the CPU fill's when it has
        // one, else built once here.
        let cpu_decode;
        let decode = match inputs.cpu.as_ref() {
            Some(cpu) => &cpu.decode,
            None => {
                cpu_decode = if device.requests || device.mem_walk {
                    zkrv_machine::tables::cpu::CpuDecode::new(decode_table)?
                } else {
                    zkrv_machine::tables::cpu::CpuDecode::default()
                };
                &cpu_decode
            }
        };
        // The request lists on the device, before the fills of the tables that read them.
        let requests = match (device.requests, cycles.as_ref()) {
            (false, _) => None,
            (true, Some(c)) => {
                dev.synchronize()?;
                let start = Instant::now();
                let r = device_requests(dev, c, decode, opts.min_height, &mut stats)
                    .and_then(|r| dev.synchronize().map(|_| r))
                    .map_err(|source| TraceGenError::Fill {
                        table: "REQUESTS",
                        source,
                    })?;
                report.requests_s = start.elapsed().as_secs_f64();
                report.device_fill_s += report.requests_s;
                Some(r)
            }
            (true, None) => {
                return Err(TraceGenError::Fill {
                    table: "REQUESTS",
                    source: CudaError::InvalidArgument(
                        "the device request lists need the record's cycles on the device".into(),
                    ),
                })
            }
        };
        // The memory walk on the device, before the LOAD, STORE, MEMW_A, MEMW, PAGE and SYSIO fills that read it.
        let mem = match (device.mem_walk, cycles.as_ref(), calls.as_ref()) {
            (false, _, _) => None,
            (true, Some(c), Some(pc)) => {
                dev.synchronize()?;
                let start = Instant::now();
                let rec = &record;
                let w = tables::memwalk::mem_walk(
                    dev,
                    c,
                    decode,
                    &rec.pages,
                    &rec.init_pages,
                    &rec.final_pages,
                    &inputs.sysio,
                    pc,
                    tables::memwalk::MEM_WALK_CHUNK,
                    &mut stats,
                )
                .and_then(|w| dev.synchronize().map(|_| w))
                .map_err(|source| TraceGenError::Fill {
                    table: "MEMWALK",
                    source,
                })?;
                report.mem_walk_s = start.elapsed().as_secs_f64();
                report.device_fill_s += report.mem_walk_s;
                Some(w)
            }
            (true, _, _) => {
                return Err(TraceGenError::Fill {
                    table: "MEMWALK",
                    source: CudaError::InvalidArgument(
                        "the device memory walk needs the record's cycles on the device".into(),
                    ),
                })
            }
        };
        for fill in &selected {
            let t = fill.table();
            if absent(t, &record) {
                // No rows (docs/stark.md §10): the host's `0 x width` trace stands, nothing is filled.
                continue;
            }
            dev.synchronize()?;
            let start = Instant::now();
            // (The memory walk's lists index the record's cycles: with it, the memory tables read them too.)
            let cx = tables::FillCtx {
                dev,
                inputs: &inputs,
                record: &record,
                host_lookups: &traces.lookups,
                cycles: cycles
                    .as_ref()
                    .filter(|_| opts.record_path || t == Table::Cpu || mem.is_some()),
                walk: walk.as_ref(),
                requests: requests.as_ref(),
                mem: mem.as_ref(),
                calls: calls.as_ref(),
                lookups: &lookups,
            };
            let trace = fill
                .fill(&cx, &mut stats)
                .and_then(|d| dev.synchronize().map(|_| d))
                .map_err(|source| TraceGenError::Fill {
                    table: t.name(),
                    source,
                })?;
            let s = start.elapsed().as_secs_f64();
            report.device_fill_s += s;
            resident[t] = Some((trace, s));
        }
        if !device.has(Table::Bitwise) {
            let start = Instant::now();
            lookups.merge_into(dev, &mut traces.lookups)?;
            report.lookups_s = start.elapsed().as_secs_f64();
        }
    }
    let start = Instant::now();
    let (host, pages) = traces.into_table_order();
    report.lookups_s += start.elapsed().as_secs_f64();

    let mut inputs = Vec::with_capacity(host.len());
    for (m, (t, r)) in host.into_iter().zip(resident) {
        let name = t.name();
        match r {
            Some((d, s)) => {
                report.tables.push(TableGen {
                    name,
                    origin: TraceOrigin::Resident,
                    rows: 1 << d.log_height,
                    width: d.width,
                    fill_s: Some(s),
                });
                inputs.push(TraceInput::Device(d));
            }
            None => {
                report.tables.push(TableGen {
                    name,
                    origin: TraceOrigin::Uploaded,
                    rows: m.height(),
                    width: m.width,
                    fill_s: None,
                });
                inputs.push(TraceInput::Host(m));
            }
        }
    }
    backend.record_stats(&stats);
    backend.name_tables(
        backend.next_round(),
        TABLE_NAMES.iter().map(|s| s.to_string()).collect(),
    );
    Ok((pages, inputs, report))
}

/// Whether table `t` is absent from this run: a precompile table whose precompile `rec` never calls (its trace
/// is `0 x width`, docs/stark.md §10).
fn absent(t: Table, rec: &zkrv_executor::Record) -> bool {
    match t {
        Table::Keccakf => rec.keccak.is_empty(),
        Table::Sha256 => rec.sha256.is_empty(),
        Table::Poseidon2 => rec.poseidon2.is_empty(),
        _ => false,
    }
}

/// Whether the record's cycles are uploaded for the fills of `device` (CPU, the device request lists and the
/// memory walk always read them; LOAD, STORE and MEMW_A on the record path).
fn needs_record(device: DeviceFill, record_path: bool) -> bool {
    device.has(Table::Cpu)
        || device.requests
        || device.mem_walk
        || (record_path
            && (device.has(Table::Load) || device.has(Table::Store) || device.has(Table::MemwA)))
}

/// `device` with every table that has no device fill in `fills` left to the host, and those tables.
pub fn without_missing_fills(
    fills: &PerTable<Option<&'static dyn DeviceTableFill>>,
    device: DeviceFill,
) -> (DeviceFill, Vec<Table>) {
    let missing: Vec<Table> = Table::ALL
        .into_iter()
        .filter(|&t| device.has(t) && fills[t].is_none())
        .collect();
    let device = missing.iter().fold(device, |d, &t| d.without(t));
    (device, missing)
}

/// Fails with [`TraceGenError::NoDeviceFill`] naming the first table of `missing` (tables without a device
/// fill, left to the host) that has rows in this run; an absent table needs no fill.
pub fn check_missing_fills(
    missing: Vec<Table>,
    has_rows: impl Fn(Table) -> bool,
) -> Result<(), TraceGenError> {
    match missing.into_iter().find(|&t| has_rows(t)) {
        Some(t) => Err(TraceGenError::NoDeviceFill { table: t.name() }),
        None => Ok(()),
    }
}

/// Whether the run gives table `t` rows: the host split's count of its real rows
/// ([`zkrv_machine::trace::Traces::events`]), or `true` when the split does not count them (a table left to the
/// device, or a fixed-height one), so that an unknown count fails loudly rather than passes.
fn has_rows(traces: &zkrv_machine::trace::Traces, t: Table) -> bool {
    traces.events[t] != Some(0)
}

/// The device fills of the tables selected in `device`, in the order they run: proof order with BITWISE
/// moved last (it reads the histogram every other fill counts into; DECODE follows CPU and POW2 follows
/// SHIFT in proof order already). Errors: [`TraceGenError::NoDeviceFill`] for a selected table without a
/// fill in `fills` (use [`without_missing_fills`] first), [`TraceGenError::Machine`] when the selection is
/// inconsistent (`DeviceFill::check`).
pub fn fill_plan(
    fills: &PerTable<Option<&'static dyn DeviceTableFill>>,
    device: DeviceFill,
) -> Result<Vec<&'static dyn DeviceTableFill>, TraceGenError> {
    device.check()?;
    let mut plan = Vec::new();
    let selected = Table::ALL.into_iter().filter(|&t| device.has(t));
    for t in selected
        .clone()
        .filter(|&t| t != Table::Bitwise)
        .chain(selected.filter(|&t| t == Table::Bitwise))
    {
        let f = fills[t].ok_or(TraceGenError::NoDeviceFill { table: t.name() })?;
        plan.push(f);
    }
    Ok(plan)
}
