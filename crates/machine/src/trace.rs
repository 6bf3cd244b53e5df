//! Trace generation on the CPU: from the execution record to the main traces (docs/tables.md, "Fill"
//! paragraphs). One sequential pass over the cycles does the register walk (old timestamps and values).

use std::collections::{BTreeMap, HashMap};

use zkrv_executor::precompile::{KECCAK_F, POSEIDON2, SHA256_COMPRESS};
use zkrv_executor::{decode, Op, Record};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::matrix::RowMajorMatrix;

use crate::bus::{alu, NUM_REG_CELLS};
use crate::bus::{REG_INPUT_CURSOR, REG_OUTPUT_CURSOR};
use crate::registry::{PerTable, Table, TableSet};
use crate::tables::bitwise::Lookups;
use crate::tables::bytewise::bytewise_trace;
use crate::tables::cpu::{cpu_height, cpu_result, cpu_trace, CpuCols, CpuDecode, RegWalk};
use crate::tables::cpu32::{cpu32_requests, cpu32_trace};
use crate::tables::decode::{DecodeTable, NUM_DECODE_COLS};
use crate::tables::dvrm::{add_dvrm_request, dvrm_requests, dvrm_trace, DvrmRequests};
use crate::tables::eq::eq_trace;
use crate::tables::input::input_trace_at;
use crate::tables::keccakf::{keccakf_trace, KeccakfCall, NUM_LANES};
use crate::tables::load::{load_trace, LoadEvent};
use crate::tables::lt::lt_trace;
use crate::tables::memw::{memw_trace, MemwEvent};
use crate::tables::memw_a::{memw_a_trace, MemwAEvent};
use crate::tables::mul::{mul_trace, MulRequests};
use crate::tables::page::{page_trace, CELLS_PER_PAGE, NUM_PAGE_COLS};
use crate::tables::poseidon2::{poseidon2_trace, Poseidon2Row, WIDTH as P2_WIDTH};
use crate::tables::regfile::regfile_trace;
use crate::tables::sha256::{sha256_trace, Sha256Call};
use crate::tables::shift::{shift_side_requests, shift_trace, ShiftOp, ShiftRequests, ShiftTraces};
use crate::tables::store::{store_trace, StoreEvent};
use crate::tables::sysio::{
    syscall_trace, sysio_trace, SyscallEventRow, SysioEventRow, SYS_READ, SYS_WRITE,
};
use crate::MachineError;

/// The ECALL instruction word.
const ECALL_WORD: u32 = 0x0000_0073;

/// Main traces of the slice's tables, natural row order, one per table of the registry (the rows each
/// table's fill paragraph in docs/tables.md describes; a table left to the device is `0 x width`), plus the
/// touched pages and the BITWISE lookups the host fills made.
pub struct Traces {
    /// Every table's main trace (`rows x width`, natural order); BITWISE is built from [`Self::lookups`] by
    /// [`Self::into_table_order`] and is `0 x 7` here.
    pub tables: PerTable<RowMajorMatrix>,
    /// The number of real (non-padding) rows of each table the host filled one row per event, request or
    /// cell (`Some(0)`: only padding rows); `None` for the tables left to the device and the fixed-height ones
    /// (DECODE, BITWISE, POW2, REGFILE). A GPU prover uses it to refuse a run that gives rows to a table it
    /// cannot fill on the device.
    pub events: PerTable<Option<usize>>,
    /// The touched 4 KiB pages (sorted base addresses), as in the record.
    pub pages: Vec<u32>,
    /// What the tables looked up in BITWISE (fill BITWISE last, with [`Lookups::trace`]).
    pub lookups: Lookups,
    /// BITWISE is built on the device ([`DeviceFill`] selects it): [`Self::into_table_order`] leaves it empty.
    pub bitwise_on_device: bool,
}

/// Tables whose rows the caller fills itself (on a GPU, crate `zkrv-machine-cuda`) instead of the host, and the
/// three sequential walks it does on the device. For a skipped table [`generate_split`] returns an empty
/// `0 x width` matrix in [`Traces`] and adds none of that table's own BITWISE lookups to [`Traces::lookups`]
/// (the device fill counts them); every request the table makes of other tables (e.g. SHIFT's MUL checks and
/// POW2 counters) is still made on the host unless [`DeviceFill::requests`]. What a selected table or walk
/// needs of the others is [`DeviceFill::needs`] / [`DeviceFill::walk_readers`], checked by
/// [`DeviceFill::check`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceFill {
    /// The tables filled on the device. DECODE: its multiplicities are counted by the CPU fill (the host's stay
    /// in [`FillInputs::decode`] as a reference); POW2: counted by the SHIFT fill ([`FillInputs::pow2`]);
    /// BITWISE: from the device lookup histogram plus the host fills' lookups ([`Traces::into_table_order`] then
    /// leaves it `0 x 7`).
    pub tables: TableSet,
    /// The register walk on the device (needs CPU and REGFILE on the device): the device computes every
    /// register access's previous timestamp and value and the final register cells from the record, so
    /// [`CpuFillInputs::walk`] and [`FillInputs::regs`] are left empty (the host still walks the registers for
    /// the syscall rows and its checks).
    pub reg_walk: bool,
    /// The memory walk on the device (needs LOAD, STORE, MEMW_A, MEMW, PAGE and SYSIO on the device): the
    /// host skips it, so [`FillInputs::loads`], `stores`, `accesses`, `general` and `page` are left empty and
    /// the [`SysioEventRow`]s in [`FillInputs::sysio`] carry only the transferred bytes (`new` holds them at
    /// their offsets, every other byte, `old` and `old_ts` are 0): the device walk computes the rest and
    /// checks what the host walk checks (cells inside the record's pages, the final memory, written bytes).
    pub mem_walk: bool,
    /// The ALU request lists on the device (needs EQ, LT, BYTEWISE, SHIFT, MUL, CPU32, DVRM and POW2 on the
    /// device): the device builds every request the CPU rows make, the request chain (CPU32 -> SHIFT/MUL/DVRM,
    /// DVRM -> MUL/LT, SHIFT -> MUL) and the deduplicated lists from the record, so the host skips the ALU
    /// routing of its walk and the chain, and leaves [`FillInputs::eq`], `lt`, `bytewise`, `shift`, `mul`,
    /// `cpu32`, `dvrm` and `pow2` empty.
    pub requests: bool,
}

impl DeviceFill {
    /// Every table on the host.
    pub const NONE: DeviceFill = DeviceFill {
        tables: TableSet::EMPTY,
        reg_walk: false,
        mem_walk: false,
        requests: false,
    };

    /// Every table of the registry and the three walks on the device (a GPU prover then leaves the tables it
    /// has no device fill for to the host: `zkrv_machine_cuda::trace_gen::without_missing_fills`).
    pub const ALL: DeviceFill = DeviceFill {
        tables: TableSet::ALL,
        reg_walk: true,
        mem_walk: true,
        requests: true,
    };

    /// The tables of `tables` on the device, the walks on the host.
    pub const fn of(tables: &[Table]) -> DeviceFill {
        DeviceFill {
            tables: TableSet::of(tables),
            ..DeviceFill::NONE
        }
    }

    /// Whether `table` is selected.
    pub const fn has(self, table: Table) -> bool {
        self.tables.contains(table)
    }

    /// The selection with `table` on the device too.
    pub const fn with(self, table: Table) -> DeviceFill {
        DeviceFill {
            tables: self.tables.with(table),
            ..self
        }
    }

    /// The selection with `table` left on the host (for a table that has no device fill).
    pub const fn without(self, table: Table) -> DeviceFill {
        DeviceFill {
            tables: self.tables.without(table),
            ..self
        }
    }

    /// What each table filled on the device needs on the device too: DECODE's multiplicities are counted by
    /// the CPU fill and POW2's by the SHIFT fill. Every other table needs nothing (a new table gets
    /// [`TableSet::EMPTY`] without an edit).
    pub fn needs() -> PerTable<TableSet> {
        PerTable::from_fn(|t| match t {
            Table::Decode => TableSet::of(&[Table::Cpu]),
            Table::Pow2 => TableSet::of(&[Table::Shift]),
            _ => TableSet::EMPTY,
        })
    }

    /// The tables that read each walk's results, in the order `[reg_walk, mem_walk, requests]`, with the
    /// walk's name: a walk on the device needs all its readers there (the host no longer computes their inputs).
    pub const fn walk_readers() -> [(&'static str, TableSet); 3] {
        [
            (
                "the register walk",
                TableSet::of(&[Table::Cpu, Table::Regfile]),
            ),
            (
                "the memory walk",
                TableSet::of(&[
                    Table::Load,
                    Table::Store,
                    Table::MemwA,
                    Table::Memw,
                    Table::Page,
                    Table::Sysio,
                ]),
            ),
            (
                "the request lists",
                TableSet::of(&[
                    Table::Eq,
                    Table::Lt,
                    Table::Bytewise,
                    Table::Shift,
                    Table::Mul,
                    Table::Cpu32,
                    Table::Dvrm,
                    Table::Pow2,
                ]),
            ),
        ]
    }

    /// The walks selected, in [`Self::walk_readers`] order.
    pub const fn walks(self) -> [bool; 3] {
        [self.reg_walk, self.mem_walk, self.requests]
    }

    /// Checks that every selected table and walk can be filled from what the other selections provide
    /// ([`Self::needs`], [`Self::walk_readers`]; a precompile table, KECCAKF, SHA256 or POSEIDON2, needs the
    /// memory walk). Errors: [`MachineError::Internal`] naming the selected table
    /// or walk and the missing tables.
    pub fn check(self) -> Result<(), MachineError> {
        let needs = Self::needs();
        for t in self.tables.iter() {
            let missing = needs[t].minus(self.tables);
            if !missing.is_empty() {
                return Err(MachineError::Internal(format!(
                    "{t} on the device needs {missing} on the device too (their fills count its rows)"
                )));
            }
        }
        // A precompile fill on the device reads its calls' old timestamps from the device memory walk.
        for t in [Table::Keccakf, Table::Sha256, Table::Poseidon2] {
            if self.has(t) && !self.mem_walk {
                return Err(MachineError::Internal(format!(
                    "{t} on the device needs the memory walk on the device too (it reads the calls' old timestamps)"
                )));
            }
        }
        for ((walk, readers), on) in Self::walk_readers().into_iter().zip(self.walks()) {
            let missing = readers.minus(self.tables);
            if on && !missing.is_empty() {
                return Err(MachineError::Internal(format!(
                    "{walk} on the device needs {missing} on the device too (they read it)"
                )));
            }
        }
        Ok(())
    }
}

/// The CPU table's compact inputs besides the record's cycles (`Record::cycles`, uploaded as they are).
#[derive(Clone, Debug, Default)]
pub struct CpuFillInputs {
    /// One entry per cycle, in cycle order (= row order): `cycles x 20` bytes; empty with
    /// [`DeviceFill::reg_walk`] (the device walks the registers).
    pub walk: Vec<RegWalk>,
    /// The program's DECODE rows and dense pc -> row index.
    pub decode: CpuDecode,
    /// A paused segment's end pc, the `next_pc` of the last real row ([`TraceStart::end_pc`]; `None`: the
    /// last pc + 4).
    pub end_pc: Option<u32>,
}

/// What the host walk computed for the tables' fills besides the record: the compact inputs a device fill
/// reads, handed over whatever the selection (the host fills have used them by then). Each list is in row
/// order: the host fill `x_trace(&inputs.x, min_height, ..)` produces the same rows. What a device walk
/// replaces is left empty ([`DeviceFill::reg_walk`], [`DeviceFill::mem_walk`], [`DeviceFill::requests`]).
/// One field per kind of input, not per table: a table whose fill reads only the record needs none.
#[derive(Clone, Debug, Default)]
pub struct FillInputs {
    /// Smallest table height (a power of two).
    pub min_height: usize,
    /// CPU: the register walk and decode data (always `Some`); the host fill is
    /// `cpu_trace(&record.cycles, &cpu.walk, &cpu.decode, min_height, ..)`.
    pub cpu: Option<CpuFillInputs>,
    /// LT requests `(a, b, signed) -> multiplicity`, in key order (= row order).
    pub lt: BTreeMap<(u64, u64, bool), u64>,
    /// SHIFT requests, in key order (= row order).
    pub shift: ShiftRequests,
    /// MUL requests `(a, b, sa_en, sb_en) -> [m_lo, m_hi]`, in key order (= row order).
    pub mul: MulRequests,
    /// BYTEWISE requests `(alu op, a, b) -> count` (op AND, OR or XOR), in key order (= row order).
    pub bytewise: BTreeMap<(u64, u64, u64), u64>,
    /// CPU32: the W operations `(alu op, a, b)` (op ADDW..=REMUW), in execution order (= row order).
    pub cpu32: Vec<(u64, u64, u64)>,
    /// DVRM requests `(n, d, signed) -> (quotient, remainder requests)`, in key order (= row order).
    pub dvrm: DvrmRequests,
    /// EQ requests `(a, b) -> count`, in key order (= row order).
    pub eq: BTreeMap<(u64, u64), u64>,
    /// MEMW: one per cell-crossing access, in cycle order (= row order).
    pub general: Vec<MemwEvent>,
    /// PAGE: `(cell, final value, last-access timestamp)` of every cell of every touched page, in page order
    /// (= row order); gathered only when PAGE is on the device (and the memory walk on the host).
    pub page: Vec<(u64, u64, u64)>,
    /// INPUT: the consumed private input and how many times each index was looked up (index `input.len()` is
    /// the end-of-input row), the index of its first row ([`TraceStart::input_cursor`]) and whether the
    /// end-of-input row follows the bytes ([`TraceStart::eof_row`]; a padding row with byte 0 takes its place
    /// otherwise).
    pub input: Vec<u8>,
    pub input_uses: Vec<u64>,
    pub input_first: u64,
    pub input_eof_row: bool,
    /// One per load / store / in-cell (MEMW_A) access, in cycle order (= row order).
    pub loads: Vec<LoadEvent>,
    pub stores: Vec<StoreEvent>,
    pub accesses: Vec<MemwAEvent>,
    /// REGFILE: `(final value, last-access timestamp)` of every register cell (x0..x31, the input and output
    /// cursors), in register order (= row order).
    pub regs: Vec<(u64, u64)>,
    /// SYSCALL rows (one per `read`/`write` ECALL) and SYSIO rows (one per cell transferred), in execution
    /// order (= row order).
    pub syscall: Vec<SyscallEventRow>,
    pub sysio: Vec<SysioEventRow>,
    /// KECCAKF, SHA256, POSEIDON2: every precompile call with its cells' old timestamps from the host memory
    /// walk, in call order (= row group order); empty with [`DeviceFill::mem_walk`] (the device walk computes
    /// the timestamps from the record's events).
    pub keccakf: Vec<KeccakfCall>,
    pub sha256: Vec<Sha256Call>,
    pub poseidon2: Vec<Poseidon2Row>,
    /// With [`DeviceFill::mem_walk`]: the previous timestamp of every sha256_compress call's a1 read, in call
    /// order (from the host's register walk; what the device SHA256 fill uploads besides the record); empty
    /// otherwise (it is in [`Self::sha256`]).
    pub sha256_a1: Vec<u64>,
    /// The host's DECODE multiplicities (`decode.height(min_height)` counts, padding row 0 included) and POW2
    /// counters (`pow2_height(min_height)`; empty with [`DeviceFill::requests`]): what the device counts must
    /// equal (tests); the device fills do not read them.
    pub decode: Vec<u64>,
    pub pow2: Vec<u64>,
}

impl Traces {
    /// The main traces in table order (`zkrv_machine::TABLE_NAMES`), BITWISE built from [`Self::lookups`]
    /// (unless [`Self::bitwise_on_device`]), and the touched pages. Device-filled tables are still `0 x width`
    /// here.
    pub fn into_table_order(mut self) -> (Vec<RowMajorMatrix>, Vec<u32>) {
        if !self.bitwise_on_device {
            self.tables[Table::Bitwise] = self.lookups.trace();
        }
        (self.tables.into_vec(), self.pages)
    }
}

/// One independent host fill: counts its lookups into the given histogram.
type HostFill<'a> =
    Box<dyn FnOnce(&mut Lookups) -> Result<RowMajorMatrix, MachineError> + Send + 'a>;

/// CPU32 -> SHIFT/MUL/DVRM, DVRM -> MUL/LT, SHIFT -> MUL, then MUL and LT: in that order, so that every request
/// is counted before its answering table is built. Writes the host-filled ones of CPU32, DVRM, SHIFT, MUL and
/// LT into `out` and leaves the device-filled ones `None` (the requests CPU32, DVRM and SHIFT make are still
/// made). Returns SHIFT's POW2 counters (`pow2_height(min_height) x 1`), counted either way.
#[allow(clippy::too_many_arguments)]
fn fill_chain(
    w_ops: &[(u64, u64, u64)],
    shift_req: &mut ShiftRequests,
    dvrm_req: &mut DvrmRequests,
    mul_req: &mut MulRequests,
    lt_req: &mut BTreeMap<(u64, u64, bool), u64>,
    device: DeviceFill,
    min_height: usize,
    lookups: &mut Lookups,
    out: &mut PerTable<Option<RowMajorMatrix>>,
) -> Result<RowMajorMatrix, MachineError> {
    let facts = if device.has(Table::Cpu32) {
        cpu32_requests(w_ops)
    } else {
        cpu32_trace(w_ops, min_height, lookups).map(|(t, f)| {
            out[Table::Cpu32] = Some(t);
            f
        })
    };
    let facts = facts.ok_or_else(|| MachineError::Internal("bad W op".into()))?;
    for fa in facts {
        if let Some(sop) = ShiftOp::from_alu(fa.op) {
            *shift_req.entry((sop, fa.a, fa.b)).or_default() += 1;
        } else if matches!(fa.op, alu::DIV | alu::DIVU | alu::REM | alu::REMU) {
            add_dvrm_request(dvrm_req, fa.op, fa.a, fa.b);
        } else if !mul_req.add_alu(fa.op, fa.a, fa.b) {
            return Err(MachineError::Internal(format!("CPU32 request {fa:?}")));
        }
    }
    let facts = if device.has(Table::Dvrm) {
        dvrm_requests(dvrm_req)
    } else {
        let (t, facts) = dvrm_trace(dvrm_req, min_height, lookups);
        out[Table::Dvrm] = Some(t);
        facts
    };
    for fa in facts {
        if fa.op == alu::SLTU {
            *lt_req.entry((fa.a, fa.b, false)).or_default() += 1;
        } else if !mul_req.add_alu(fa.op, fa.a, fa.b) {
            return Err(MachineError::Internal(format!("DVRM request {fa:?}")));
        }
    }
    let pow2 = if device.has(Table::Shift) {
        // The requests SHIFT makes (MUL checks, POW2 counters) are still needed on the host; its own rows and
        // lookups come from the device.
        shift_side_requests(shift_req, min_height, mul_req)
    } else {
        let ShiftTraces { shift, pow2 } = shift_trace(shift_req, min_height, lookups, mul_req);
        out[Table::Shift] = Some(shift);
        pow2
    };
    if !device.has(Table::Mul) {
        out[Table::Mul] = Some(mul_trace(mul_req, min_height, lookups));
    }
    if !device.has(Table::Lt) {
        out[Table::Lt] = Some(lt_trace(lt_req, min_height, lookups));
    }
    Ok(pow2)
}

/// A boxed [`HostFill`].
fn host_fill<'a>(
    f: impl FnOnce(&mut Lookups) -> Result<RowMajorMatrix, MachineError> + Send + 'a,
) -> HostFill<'a> {
    Box::new(f)
}

fn empty(width: usize) -> RowMajorMatrix {
    RowMajorMatrix::new(Vec::new(), width)
}

fn f(v: u64) -> F {
    F::from_u64(v)
}

/// Builds the main traces of `rec` (a run on the private `input`) and the BITWISE lookups.
/// `min_height` is the smallest table height (a power of two).
pub fn generate(
    decode_table: &DecodeTable,
    rec: &Record,
    input: &[u8],
    min_height: usize,
) -> Result<Traces, MachineError> {
    generate_split(decode_table, rec, input, min_height, DeviceFill::NONE).map(|(t, _)| t)
}

/// [`generate`], leaving the tables selected in `device` to the caller: returns the traces (skipped ones
/// `0 x width`) and the compact inputs of the skipped tables.
pub fn generate_split(
    decode_table: &DecodeTable,
    rec: &Record,
    input: &[u8],
    min_height: usize,
    device: DeviceFill,
) -> Result<(Traces, FillInputs), MachineError> {
    generate_split_at(
        decode_table,
        rec,
        input,
        &TraceStart::RUN,
        min_height,
        device,
    )
}

/// Where the I/O streams stand when a record starts: a whole run (everything at 0), or a segment
/// (docs/continuations.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceStart {
    /// Input cursor (register 32) before the first cycle: the index of the first INPUT row.
    pub input_cursor: u64,
    /// Output cursor (register 33) before the first cycle.
    pub output_cursor: u64,
    /// Whether the INPUT table gets the end-of-input row after the bytes.
    pub eof_row: bool,
    /// Whether the input ended before the record (a segment after a short read): the verifier's public
    /// end-of-input lookup at the cursor is counted on the first INPUT row.
    pub input_ended: bool,
    /// A paused segment's end pc: the CPU table's last real row goes on there (`next_pc`). `None` for a
    /// whole run and a run's last segment, whose last row (the halting ECALL) has `next_pc = pc + 4`.
    pub end_pc: Option<u32>,
}

impl TraceStart {
    /// A whole run.
    pub const RUN: TraceStart = TraceStart {
        input_cursor: 0,
        output_cursor: 0,
        eof_row: true,
        input_ended: false,
        end_pc: None,
    };
}

/// One 8-byte cell of a precompile call in the host memory walk (docs/tables.md §6.19): checks the shadow
/// memory's value (the initial image if the cell was never touched) against the event's `old` word, stores
/// `new` at timestamp `ts` and returns the cell's previous timestamp (0 for the initial token). Errors (a
/// record that disagrees with its own memory, or a cell outside the record's pages) as text for the caller.
fn precompile_cell(
    mem: &mut HashMap<u64, ([u8; 8], u64)>,
    init_cell: &impl Fn(u64) -> Option<[u8; 8]>,
    cell: u64,
    old: u64,
    new: u64,
    ts: u64,
) -> Result<u64, String> {
    let (bytes, last) = match mem.get(&cell) {
        Some(&x) => x,
        None => (
            init_cell(cell).ok_or_else(|| format!("cell {cell:#x} outside the record's pages"))?,
            0,
        ),
    };
    if u64::from_le_bytes(bytes) != old {
        return Err(format!(
            "the memory walk disagrees with the event at cell {cell:#x}"
        ));
    }
    mem.insert(cell, (new.to_le_bytes(), ts));
    Ok(last)
}

/// [`generate_split`] of a record that starts at `start`: `input` holds the input bytes from index
/// `start.input_cursor` on (those the record reads: the INPUT table holds exactly them, then the end row
/// if `start.eof_row`).
pub fn generate_split_at(
    decode_table: &DecodeTable,
    rec: &Record,
    input: &[u8],
    start: &TraceStart,
    min_height: usize,
    device: DeviceFill,
) -> Result<(Traces, FillInputs), MachineError> {
    let base = start.input_cursor;
    device.check()?;
    // With the memory walk on the device, the precompile calls' cells are the device's: a precompile table
    // filled on the host would lack its old timestamps (refused, named, rather than filled wrong).
    for (t, calls) in [
        (Table::Keccakf, rec.keccak.len()),
        (Table::Sha256, rec.sha256.len()),
        (Table::Poseidon2, rec.poseidon2.len()),
    ] {
        if device.mem_walk && !device.has(t) && calls > 0 {
            return Err(MachineError::NoDeviceFill {
                table: t.name(),
                rows: calls,
            });
        }
    }
    let cycles = rec.cycles.len();
    let height = cpu_height(cycles, min_height);
    let mut lookups = Lookups::new();
    let mut decode_counts = vec![0u64; decode_table.height(min_height)];
    let cpu_decode = CpuDecode::new(decode_table)?;
    let mut walk: Vec<RegWalk> = Vec::with_capacity(if device.reg_walk { 0 } else { cycles });

    // Register walk: current value and last-access timestamp of every register cell.
    let mut reg_val = [0u64; NUM_REG_CELLS];
    reg_val[..32].copy_from_slice(&rec.init_regs);
    reg_val[REG_INPUT_CURSOR as usize] = start.input_cursor;
    reg_val[REG_OUTPUT_CURSOR as usize] = start.output_cursor;
    let mut reg_ts = [0u64; NUM_REG_CELLS];
    // ALU requests answered by the deduplicated tables.
    let mut eq_req: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut lt_req: BTreeMap<(u64, u64, bool), u64> = BTreeMap::new();
    let mut bw_req: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
    let mut shift_req = ShiftRequests::new();
    let mut mul_req = MulRequests::new();
    let mut dvrm_req = DvrmRequests::new();
    let mut w_ops: Vec<(u64, u64, u64)> = Vec::new();
    // Memory walk: cell -> (bytes, last access ts), lazily seeded from the record's initial pages.
    let page_index: HashMap<u64, usize> = rec
        .pages
        .iter()
        .enumerate()
        .map(|(k, &p)| (p as u64, k))
        .collect();
    let init_cell = |cell: u64| -> Option<[u8; 8]> {
        let addr = cell * 8;
        let k = *page_index.get(&(addr & !4095))?;
        let off = k * 4096 + (addr & 4095) as usize;
        rec.init_pages.get(off..off + 8)?.try_into().ok()
    };
    let mut mem: HashMap<u64, ([u8; 8], u64)> = HashMap::new();
    let (mut loads, mut stores, mut accesses) = (Vec::new(), Vec::new(), Vec::new());
    let mut general: Vec<MemwEvent> = Vec::new();
    let (mut syscall_rows, mut sysio_rows) = (Vec::new(), Vec::new());
    let mut keccak_calls: Vec<KeccakfCall> = Vec::with_capacity(rec.keccak.len());
    let mut sha_calls: Vec<Sha256Call> = Vec::with_capacity(rec.sha256.len());
    let mut sha_a1: Vec<u64> = Vec::new();
    let mut p2_rows: Vec<Poseidon2Row> = Vec::with_capacity(rec.poseidon2.len());
    // INPUT lookups per index (the end-of-input row is index `input.len()`).
    let mut input_uses = vec![0u64; input.len() + 1];
    input_uses[0] += start.input_ended as u64;
    let mut ecalls = 0usize;
    // The precompile events met so far (keccak_f, sha256_compress, poseidon2).
    let mut seen = [0usize; 3];

    for (i, ev) in rec.cycles.iter().enumerate() {
        let row_idx = cpu_decode
            .row_of(ev.pc)
            .ok_or(MachineError::NotInDecode { pc: ev.pc })?;
        decode_counts[row_idx] += 1;
        let d = *cpu_decode.fields(row_idx);
        let fl = d.flags;
        // ECALL is exactly this word (RISC-V unprivileged ISA, "Environment Call"); the full decode is only
        // needed for the host memory walk's load kind.
        let is_ecall = ev.word == ECALL_WORD;
        let ts = 4 * i as u64;

        let rv1 = if fl.rr1 == 1 { ev.rs1_val } else { 0 };
        let rv2 = if fl.rr2 == 1 { ev.rs2_val } else { 0 };
        let res = cpu_result(ev, &d);
        if fl.is_alu == 1 && !device.requests {
            let b = rv2.wrapping_add(d.imm[0] | (d.imm[1] << 32));
            match d.op {
                alu::EQ => *eq_req.entry((rv1, b)).or_default() += 1,
                alu::SLT | alu::SLTU => *lt_req.entry((rv1, b, d.op == alu::SLT)).or_default() += 1,
                alu::AND | alu::OR | alu::XOR => *bw_req.entry((d.op, rv1, b)).or_default() += 1,
                alu::DIV | alu::DIVU | alu::REM | alu::REMU => {
                    add_dvrm_request(&mut dvrm_req, d.op, rv1, b)
                }
                alu::ADDW..=alu::REMUW => w_ops.push((d.op, rv1, b)),
                op => {
                    if let Some(sop) = ShiftOp::from_alu(op) {
                        *shift_req.entry((sop, rv1, b)).or_default() += 1;
                    } else if !mul_req.add_alu(op, rv1, b) {
                        return Err(MachineError::Internal(format!("ALU op {op} has no table")));
                    }
                }
            }
        }
        if (fl.is_load == 1 || fl.is_store == 1) && !device.mem_walk {
            let addr = ev
                .mem_addr()
                .ok_or_else(|| MachineError::Internal(format!("no address at cycle {i}")))?;
            let width = ev.mem_width() as usize;
            let offset = (addr & 7) as usize;
            // One cell (MEMW_A) or, for an access crossing a cell boundary, a window of two (MEMW).
            let cross = offset + width > 8;
            let cell = addr >> 3;
            let width_idx = width.trailing_zeros() as usize;
            let (mut old, mut old_ts) = ([0u8; 16], [0u64; 2]);
            for h in 0..1 + cross as usize {
                let c = cell + h as u64;
                let (bytes, t) = match mem.get(&c) {
                    Some(&x) => x,
                    None => (
                        init_cell(c).ok_or_else(|| {
                            MachineError::Internal(format!(
                                "cell {c:#x} outside the record's pages"
                            ))
                        })?,
                        0,
                    ),
                };
                old[8 * h..8 * h + 8].copy_from_slice(&bytes);
                old_ts[h] = t;
            }
            let mut new = old;
            let imm = d.imm[0] | (d.imm[1] << 32);
            let mts = ts + 1;
            if fl.is_store == 1 {
                new[offset..offset + width].copy_from_slice(&ev.rs2_val.to_le_bytes()[..width]);
                stores.push(StoreEvent {
                    ts: mts,
                    base: rv1,
                    imm,
                    width_idx,
                    val: ev.rs2_val,
                    top: new[offset + width - 1] as u64,
                });
            } else {
                let mut v = [0u8; 8];
                v[..width].copy_from_slice(&old[offset..offset + width]);
                loads.push(LoadEvent {
                    ts: mts,
                    base: rv1,
                    imm,
                    width_idx,
                    unsigned: matches!(
                        decode(ev.word).map(|x| x.op),
                        Ok(Op::Lbu | Op::Lhu | Op::Lwu)
                    ),
                    v: u64::from_le_bytes(v),
                    r: ev.rd_val,
                });
            }
            let is_write = fl.is_store == 1;
            if cross {
                general.push(MemwEvent {
                    cell,
                    ts: mts,
                    offset,
                    width_idx,
                    is_write,
                    old,
                    new,
                    old_ts,
                });
            } else {
                let (mut o, mut n) = ([0u8; 8], [0u8; 8]);
                o.copy_from_slice(&old[..8]);
                n.copy_from_slice(&new[..8]);
                accesses.push(MemwAEvent {
                    cell,
                    ts: mts,
                    offset,
                    width_idx,
                    is_write,
                    old: o,
                    new: n,
                    old_ts: old_ts[0],
                });
            }
            for h in 0..1 + cross as usize {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(&new[8 * h..8 * h + 8]);
                mem.insert(cell + h as u64, (bytes, mts));
            }
        }
        if is_ecall && ev.rs1_val == KECCAK_F {
            // keccak_f: the 25 cells at a0, read and written at ts + 1 (docs/tables.md §6.19.1).
            let e = rec
                .keccak
                .get(seen[0])
                .ok_or_else(|| MachineError::Internal(format!("no keccak_f event at cycle {i}")))?;
            seen[0] += 1;
            let ts1 = ts + 1;
            // With the memory walk on the device its walk reads the cells and the device fill makes the rows
            // (checked above).
            if !device.mem_walk {
                let mut old_ts = [0u64; NUM_LANES];
                for (l, t) in old_ts.iter_mut().enumerate() {
                    let cell = e.state_ptr / 8 + l as u64;
                    *t = precompile_cell(&mut mem, &init_cell, cell, e.input[l], e.output[l], ts1)
                        .map_err(|m| {
                            MachineError::Internal(format!("keccak_f at cycle {i}: {m}"))
                        })?;
                }
                keccak_calls.push(KeccakfCall {
                    ts: ts1,
                    ptr: e.state_ptr,
                    input: e.input,
                    old_ts,
                });
            }
        } else if is_ecall && ev.rs1_val == SHA256_COMPRESS {
            // sha256_compress: a1 read, the 4 state cells read and written, the 8 block cells read, all at
            // ts + 1 (docs/tables.md §6.19.2).
            let e = rec.sha256.get(seen[1]).ok_or_else(|| {
                MachineError::Internal(format!("no sha256_compress event at cycle {i}"))
            })?;
            seen[1] += 1;
            let ts1 = ts + 1;
            debug_assert_eq!(reg_val[11], e.block_ptr, "a1 at cycle {i}");
            let a1_old_ts = reg_ts[11];
            reg_ts[11] = ts1;
            if device.mem_walk {
                sha_a1.push(a1_old_ts);
            }
            // With the memory walk on the device its walk reads the cells and the device fill makes the rows
            // (checked above).
            if !device.mem_walk {
                let pair = |h: &[u32; 8], k: usize| h[2 * k] as u64 | (h[2 * k + 1] as u64) << 32;
                let mut cells: Vec<(u64, u64, u64)> = (0..4)
                    .map(|k| {
                        (
                            e.state_ptr / 8 + k,
                            pair(&e.state_in, k as usize),
                            pair(&e.state_out, k as usize),
                        )
                    })
                    .collect();
                for j in 0..8 {
                    let v =
                        u64::from_le_bytes(e.block[8 * j..8 * j + 8].try_into().expect("8 bytes"));
                    cells.push((e.block_ptr / 8 + j as u64, v, v));
                }
                let mut old_ts = [0u64; 12];
                for (t, &(cell, old, new)) in old_ts.iter_mut().zip(&cells) {
                    *t = precompile_cell(&mut mem, &init_cell, cell, old, new, ts1).map_err(
                        |m| MachineError::Internal(format!("sha256_compress at cycle {i}: {m}")),
                    )?;
                }
                sha_calls.push(Sha256Call {
                    ts: ts1,
                    state_ptr: e.state_ptr,
                    block_ptr: e.block_ptr,
                    state: e.state_in,
                    block: e.block,
                    state_old_ts: old_ts[..4].try_into().expect("4"),
                    block_old_ts: old_ts[4..].try_into().expect("8"),
                    a1_old_ts,
                });
            }
        } else if is_ecall && ev.rs1_val == POSEIDON2 {
            let k = seen[2];
            let event = *rec.poseidon2.get(k).ok_or_else(|| {
                MachineError::Internal(format!("no poseidon2 event for the ECALL at cycle {i}"))
            })?;
            seen[2] += 1;
            let sc = rec.syscalls.get(ecalls);
            if sc.map(|s| (s.num, s.args[0], s.cycle))
                != Some((POSEIDON2, event.state_ptr, event.cycle))
            {
                return Err(MachineError::Internal(format!(
                    "poseidon2 call {k} (cycle {i}): its event and syscall event disagree"
                )));
            }
            let ts1 = ts + 1;
            // With the memory walk on the device its walk reads the cells and the device fill makes the rows
            // (checked above).
            if !device.mem_walk {
                let mut old_ts = [0u64; P2_WIDTH];
                for (j, slot) in old_ts.iter_mut().enumerate() {
                    let cell = event.state_ptr / 8 + j as u64;
                    let (old, new) = (event.input[j], event.output[j]);
                    *slot = precompile_cell(&mut mem, &init_cell, cell, old, new, ts1).map_err(
                        |m| MachineError::Internal(format!("poseidon2 call {k} (cycle {i}): {m}")),
                    )?;
                }
                p2_rows.push(Poseidon2Row {
                    event,
                    ts: ts1,
                    old_ts,
                });
            }
        } else if is_ecall && !(ev.rs1_val == 93 || ev.rs1_val == 94) {
            let sc = rec
                .syscalls
                .get(ecalls)
                .ok_or_else(|| MachineError::Internal(format!("no syscall event at cycle {i}")))?;
            let fd = sc.args[0];
            let ok =
                (sc.num == SYS_WRITE && (fd == 1 || fd == 2)) || (sc.num == SYS_READ && fd == 0);
            if !ok {
                return Err(MachineError::Unsupported {
                    pc: ev.pc,
                    op: Op::Ecall,
                });
            }
            let ts1 = ts + 1;
            let (buf, len) = (sc.args[1], sc.args[2]);
            let count = if fd == 0 { sc.ret } else { len };
            let mut row = SyscallEventRow {
                ts: ts1,
                fd,
                count,
                buf,
                len,
                a1_old_ts: reg_ts[11],
                a2_old_ts: reg_ts[12],
                ..Default::default()
            };
            reg_ts[11] = ts1;
            reg_ts[12] = ts1;
            if fd != 2 {
                let is_read = fd == 0;
                let cur = if is_read {
                    REG_INPUT_CURSOR
                } else {
                    REG_OUTPUT_CURSOR
                } as usize;
                row.cursor = reg_val[cur];
                row.cursor_old_ts = reg_ts[cur];
                let (mut addr, mut pos, mut rem) = (buf, reg_val[cur], count);
                reg_val[cur] += count;
                reg_ts[cur] = ts1 + 2;
                let data = rec
                    .syscall_data
                    .get(sc.data_offset as usize..(sc.data_offset + sc.data_len) as usize)
                    .filter(|d| d.len() as u64 == count)
                    .ok_or_else(|| MachineError::Internal("syscall data out of range".into()))?;
                if is_read && count < len {
                    let eof = (row.cursor + count - base) as usize;
                    if eof != input.len() {
                        return Err(MachineError::Internal(format!(
                            "short read at cycle {i} before the end"
                        )));
                    }
                    *input_uses
                        .get_mut(eof)
                        .ok_or_else(|| MachineError::Internal("eof index".into()))? += 1;
                }
                while rem > 0 {
                    let (cell, offset) = (addr >> 3, (addr & 7) as usize);
                    let n = (rem as usize).min(8 - offset);
                    let (old, old_ts) = match mem.get(&cell) {
                        Some(&x) => x,
                        // The device walk fills in the cell's bytes and timestamp.
                        None if device.mem_walk => ([0u8; 8], 0),
                        None => (
                            init_cell(cell).ok_or_else(|| {
                                MachineError::Internal(format!(
                                    "cell {cell:#x} outside the record's pages"
                                ))
                            })?,
                            0,
                        ),
                    };
                    let k = (pos - row.cursor) as usize;
                    let chunk = &data[k..k + n];
                    let mut new = old;
                    if device.mem_walk {
                        // Only the transferred bytes (checked against the input for a read).
                        new[offset..offset + n].copy_from_slice(chunk);
                    }
                    if is_read {
                        new[offset..offset + n].copy_from_slice(chunk);
                        for (q, &byte) in chunk.iter().enumerate() {
                            let idx = (pos - base) as usize + q;
                            if input.get(idx) != Some(&byte) {
                                return Err(MachineError::Internal(format!(
                                    "read at cycle {i}: input disagrees"
                                )));
                            }
                            input_uses[idx] += 1;
                        }
                    } else if !device.mem_walk && chunk != &old[offset..offset + n] {
                        return Err(MachineError::Internal(format!(
                            "write at cycle {i}: memory walk disagrees"
                        )));
                    }
                    sysio_rows.push(SysioEventRow {
                        ts: ts1,
                        cell,
                        offset,
                        n,
                        old,
                        new,
                        is_read,
                        pos,
                        rem,
                        old_ts,
                    });
                    if !device.mem_walk {
                        mem.insert(cell, (new, ts1));
                    }
                    addr += n as u64;
                    pos += n as u64;
                    rem -= n as u64;
                }
            }
            syscall_rows.push(row);
        }
        if is_ecall {
            ecalls += 1;
        }

        // Register accesses (MEMW_R group): the walk records what the CPU row needs ([`RegWalk`]).
        // Timestamps are < 4 * 2^26 (the CPU height bound), so they fit u32; checked once below.
        let mut wk = RegWalk::default();
        if fl.rr1 == 1 {
            let reg = d.rs1 as usize;
            debug_assert_eq!(reg_val[reg], rv1, "rs1 value at cycle {i}");
            wk.r1_old_ts = reg_ts[reg] as u32;
            reg_ts[reg] = ts + 1;
        }
        if fl.rr2 == 1 {
            let reg = d.rs2 as usize;
            debug_assert_eq!(reg_val[reg], rv2, "rs2 value at cycle {i}");
            wk.r2_old_ts = reg_ts[reg] as u32;
            reg_ts[reg] = ts + 2;
        }
        if fl.wr == 1 {
            let reg = d.rd as usize;
            wk.w_old_ts = reg_ts[reg] as u32;
            wk.w_old = [reg_val[reg] as u32, (reg_val[reg] >> 32) as u32];
            reg_ts[reg] = ts + 3;
            reg_val[reg] = res;
        }
        if !device.reg_walk {
            walk.push(wk);
        }
    }
    if 4 * cycles as u64 + 4 > u32::MAX as u64 {
        return Err(MachineError::TooManyCycles {
            cycles,
            max_log: 30,
        });
    }
    // Padding rows look up DECODE's padding entry (row 0).
    decode_counts[0] += (height - cycles) as u64;

    for (reg, (&v, &want)) in reg_val.iter().zip(rec.final_regs.iter()).enumerate() {
        if v != want {
            return Err(MachineError::Internal(format!(
                "register walk: x{reg} ends at {v:#x}, the executor says {want:#x}"
            )));
        }
    }
    // With the register walk on the device, the device computes the final cells (left empty here).
    let regs: Vec<(u64, u64)> = if device.reg_walk {
        Vec::new()
    } else {
        reg_val
            .iter()
            .copied()
            .zip(reg_ts.iter().copied())
            .collect()
    };

    // The host fills. The tables that ask other tables (CPU32 -> SHIFT/MUL/DVRM, DVRM -> MUL/LT,
    // SHIFT -> MUL) are filled in that order on this thread ("the chain"), so that every request is counted
    // before its answering table is built; every other table is independent and filled in parallel
    // meanwhile. Each fill counts its BITWISE lookups into its own histogram, merged at the end (a histogram
    // is order-independent: the result does not depend on the schedule).
    // PAGE's cells, gathered (and checked) by the PAGE task when PAGE is device-filled.
    let page_cells = std::sync::Mutex::new(Vec::new());
    let cpu_inputs = (&walk, &cpu_decode);
    // Each task: its table, the number of real rows it fills (events, requests, cells) and the fill.
    let mut tasks: Vec<(Table, usize, HostFill<'_>)> = vec![
        (
            Table::Cpu,
            cycles,
            host_fill(move |lk| {
                let mut t = cpu_trace(&rec.cycles, cpu_inputs.0, cpu_inputs.1, min_height, lk)?;
                // A paused segment goes on at its end pc (`cpu_trace` ends the last real row at pc + 4).
                if let (Some(pc), Some(row)) = (start.end_pc, cycles.checked_sub(1)) {
                    let w = t.width;
                    CpuCols::from_row_mut(&mut t.values[row * w..(row + 1) * w]).next_pc =
                        f(pc as u64);
                }
                Ok(t)
            }),
        ),
        (
            Table::Eq,
            eq_req.len(),
            host_fill(|_| Ok(eq_trace(&eq_req, min_height))),
        ),
        (
            Table::Bytewise,
            bw_req.len(),
            host_fill(|lk| Ok(bytewise_trace(&bw_req, min_height, lk))),
        ),
        (
            Table::Load,
            loads.len(),
            host_fill(|lk| Ok(load_trace(&loads, min_height, lk))),
        ),
        (
            Table::Store,
            stores.len(),
            host_fill(|lk| Ok(store_trace(&stores, min_height, lk))),
        ),
        (
            Table::MemwA,
            accesses.len(),
            host_fill(|lk| Ok(memw_a_trace(&accesses, min_height, lk))),
        ),
        (
            Table::Memw,
            general.len(),
            host_fill(|lk| Ok(memw_trace(&general, min_height, lk))),
        ),
        (
            Table::Syscall,
            syscall_rows.len(),
            host_fill(|lk| Ok(syscall_trace(&syscall_rows, min_height, lk))),
        ),
        (
            Table::Sysio,
            sysio_rows.len(),
            host_fill(|lk| Ok(sysio_trace(&sysio_rows, min_height, lk))),
        ),
        (
            Table::Input,
            input.len() + start.eof_row as usize,
            host_fill(|lk| {
                Ok(input_trace_at(
                    input,
                    base,
                    start.eof_row,
                    &input_uses,
                    min_height,
                    lk,
                ))
            }),
        ),
        (
            Table::Keccakf,
            keccak_calls.len(),
            host_fill(|lk| Ok(keccakf_trace(&keccak_calls, min_height, lk))),
        ),
        (
            Table::Sha256,
            sha_calls.len(),
            host_fill(|lk| Ok(sha256_trace(&sha_calls, min_height, lk))),
        ),
        (
            Table::Poseidon2,
            p2_rows.len(),
            host_fill(|lk| {
                poseidon2_trace(&p2_rows, min_height, lk).map_err(MachineError::Internal)
            }),
        ),
    ];
    tasks.retain(|(t, _, _)| !device.has(*t));
    if !device.mem_walk {
        // PAGE: every cell of every touched page, with its final value and last-access timestamp, gathered and
        // checked against the final memory here even when the device fills PAGE (the device walk does both
        // with `mem_walk`).
        tasks.push((
            Table::Page,
            rec.pages.len() * CELLS_PER_PAGE,
            host_fill(|_| {
                let mut cells = Vec::with_capacity(rec.pages.len() * CELLS_PER_PAGE);
                for (k, &p) in rec.pages.iter().enumerate() {
                    for j in 0..CELLS_PER_PAGE {
                        let cell = p as u64 / 8 + j as u64;
                        let (bytes, ts) = match mem.get(&cell) {
                            Some(&x) => x,
                            None => (init_cell(cell).unwrap_or_default(), 0),
                        };
                        let off = k * 4096 + j * 8;
                        if rec.final_pages.get(off..off + 8) != Some(&bytes[..]) {
                            return Err(MachineError::Internal(format!(
                                "memory walk: cell {cell:#x} disagrees with the executor's final memory"
                            )));
                        }
                        cells.push((cell, u64::from_le_bytes(bytes), ts));
                    }
                }
                if device.has(Table::Page) {
                    *page_cells
                        .lock()
                        .map_err(|_| MachineError::Internal("PAGE cells lock".into()))? = cells;
                    Ok(empty(NUM_PAGE_COLS))
                } else {
                    Ok(page_trace(&cells, min_height))
                }
            }),
        ));
    }
    // Each table's host trace; `None` for the tables left to the device.
    let mut out: PerTable<Option<RowMajorMatrix>> = PerTable::default();
    let mut slots: Vec<Option<Result<(RowMajorMatrix, Lookups), MachineError>>> =
        tasks.iter().map(|_| None).collect();
    let mut events: PerTable<Option<usize>> = PerTable::default();
    let names: Vec<Table> = tasks
        .iter()
        .map(|&(t, n, _)| {
            events[t] = Some(n).filter(|_| !device.has(t));
            t
        })
        .collect();
    let mut chain = None;
    rayon::scope(|scope| {
        for ((_, _, task), slot) in tasks.into_iter().zip(slots.iter_mut()) {
            scope.spawn(move |_| {
                let mut lk = Lookups::new();
                *slot = Some(task(&mut lk).map(|m| (m, lk)));
            });
        }
        chain = Some(if device.requests {
            // Every table of the chain left to the device, with its requests.
            Ok(None)
        } else {
            fill_chain(
                &w_ops,
                &mut shift_req,
                &mut dvrm_req,
                &mut mul_req,
                &mut lt_req,
                device,
                min_height,
                &mut lookups,
                &mut out,
            )
            .map(Some)
        });
    });
    let pow2 = chain.ok_or_else(|| MachineError::Internal("host fills did not run".into()))??;
    if pow2.is_some() {
        for (t, n) in [
            (Table::Cpu32, w_ops.len()),
            (Table::Dvrm, dvrm_req.len()),
            (Table::Shift, shift_req.len()),
            (Table::Mul, mul_req.len()),
            (Table::Lt, lt_req.len()),
        ] {
            events[t] = Some(n).filter(|_| !device.has(t));
        }
    }
    for (t, slot) in names.into_iter().zip(slots) {
        let (m, lk) =
            slot.ok_or_else(|| MachineError::Internal(format!("{t} fill did not run")))??;
        lookups.merge(&lk);
        if !device.has(t) {
            out[t] = Some(m);
        }
    }
    let page = page_cells
        .into_inner()
        .map_err(|_| MachineError::Internal("PAGE cells lock".into()))?;
    let pow2 = pow2.map_or_else(Vec::new, |m| {
        let counts = m.values.iter().map(|x| x.as_canonical_u64()).collect();
        if !device.has(Table::Pow2) {
            out[Table::Pow2] = Some(m);
        }
        counts
    });
    if !device.has(Table::Decode) {
        let m = decode_counts.iter().map(|&x| f(x)).collect();
        out[Table::Decode] = Some(RowMajorMatrix::new(m, NUM_DECODE_COLS));
    }
    if !device.has(Table::Regfile) {
        out[Table::Regfile] = Some(regfile_trace(&regs, min_height));
    }
    // Tables left to the device (and BITWISE, built from the lookups at the end) are `0 x width`; every other
    // one was filled above.
    let mut unfilled = None;
    let tables = out.map(|t, m| {
        m.unwrap_or_else(|| {
            if !device.has(t) && t != Table::Bitwise {
                unfilled.get_or_insert(t);
            }
            empty(crate::main_width(t))
        })
    });
    if let Some(t) = unfilled {
        return Err(MachineError::Internal(format!("no {t} trace")));
    }
    // Everything the host walk computed, for the device fills (what a device walk replaces is empty).
    let inputs = FillInputs {
        min_height,
        cpu: Some(CpuFillInputs {
            walk,
            decode: cpu_decode,
            end_pc: start.end_pc,
        }),
        lt: lt_req,
        shift: shift_req,
        mul: mul_req,
        bytewise: bw_req,
        cpu32: w_ops,
        eq: eq_req,
        general,
        page,
        input: input.to_vec(),
        input_uses,
        input_first: base,
        input_eof_row: start.eof_row,
        dvrm: dvrm_req,
        loads,
        stores,
        accesses,
        regs,
        syscall: syscall_rows,
        sysio: sysio_rows,
        keccakf: keccak_calls,
        sha256: sha_calls,
        sha256_a1: sha_a1,
        poseidon2: p2_rows,
        decode: decode_counts,
        pow2,
    };
    let traces = Traces {
        tables,
        events,
        pages: rec.pages.clone(),
        lookups,
        bitwise_on_device: device.has(Table::Bitwise),
    };
    Ok((traces, inputs))
}
