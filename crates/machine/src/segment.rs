//! One segment of a run (continuations; design, soundness argument and costs: docs/continuations.md).
//!
//! A segment is a multi-table proof of its cycles whose statement fixes the machine state at its start and
//! at its end ([`Boundary`]: pc, registers, input and output cursors, whether the input has ended) and the
//! memory it touches. Timestamps are local to the segment (its first cycle is cycle 0), so the memory and
//! register arguments of docs/tables.md §3 hold inside it unchanged; only their two ends move:
//! * start: the register init tokens carry the start boundary's values, the memory init tokens the values
//!   of the segment's pages at its start (the verifier derives them: the ELF image, overwritten by the
//!   earlier segments' published writes), the CPU's first pc is the start pc, INPUT starts at the input
//!   cursor, OUTPUT at the output cursor;
//! * end, a segment that pauses ([`SegmentEnd::Pause`]): REGFILE and PAGE also send every final value on
//!   `REG_FINAL` / `MEM_FINAL`, which the verifier receives from the end boundary and from the start values
//!   with the segment's published writes ([`SegmentProof::writes`]) applied; the CPU's last real row goes on
//!   at the end pc and no row may halt (no public HALT receive);
//! * end, the last segment ([`SegmentEnd::Exit`]): as a whole run, a halt with the public exit code.

use zkrv_executor::{execute_segment, Checkpoint, Program};
use zkrv_stark::air::Direction;
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::logup::PublicInteraction;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::{preprocess, StarkConfig};

use crate::bus;
use crate::tables::decode::{words, DecodeTable};
use crate::tables::input::EofRule;
use crate::tables::page::CELLS_PER_PAGE;
use crate::trace::{self, TraceStart};
use crate::{
    check_page_list, check_provable_at, check_syscall_args, first_bad_syscall, min_height,
    program_commitment, AirParams, Machine, MachineError, VerifyError,
};

/// Domain separator of a segment's statement bytes.
const SEGMENT_DOMAIN: &[u8] = b"zkrv-segment-v1";

/// The public machine state at a segment boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boundary {
    /// pc of the next instruction.
    pub pc: u32,
    /// x0..x31 (x0 = 0).
    pub regs: [u64; 32],
    /// Input bytes consumed (register 32).
    pub input_cursor: u64,
    /// Output bytes written (register 33).
    pub output_cursor: u64,
    /// Whether a `read` came back short before this point (the guest has seen the end of the input).
    pub input_ended: bool,
}

impl Boundary {
    /// Serialized size: pc u32, 32 registers u64, the two cursors u64, input_ended u8 (277 bytes).
    pub const BYTES: usize = 4 + 32 * 8 + 8 + 8 + 1;

    /// The state of `program` before its first instruction (docs/abi.md "Initial state").
    pub fn initial(program: &Program) -> Result<Boundary, String> {
        let mut regs = [0u64; 32];
        regs[2] = zkrv_executor::STACK_TOP;
        Ok(Boundary {
            pc: AirParams::run(program)?.entry,
            regs,
            input_cursor: 0,
            output_cursor: 0,
            input_ended: false,
        })
    }

    /// The 34 register cells of docs/tables.md §3.3 (x0..x31, input cursor, output cursor).
    pub fn reg_cells(&self) -> [u64; bus::NUM_REG_CELLS] {
        let mut v = [0u64; bus::NUM_REG_CELLS];
        v[..32].copy_from_slice(&self.regs);
        v[bus::REG_INPUT_CURSOR as usize] = self.input_cursor;
        v[bus::REG_OUTPUT_CURSOR as usize] = self.output_cursor;
        v
    }

    /// Appends the [`Self::BYTES`] bytes (little-endian).
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.pc.to_le_bytes());
        for r in &self.regs {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&self.input_cursor.to_le_bytes());
        out.extend_from_slice(&self.output_cursor.to_le_bytes());
        out.push(self.input_ended as u8);
    }

    /// Parses [`Self::write`] from the front of `r`; never panics.
    pub fn read(r: &mut Reader<'_>) -> Result<Boundary, String> {
        let pc = r.u32("boundary pc")?;
        let mut regs = [0u64; 32];
        for (i, x) in regs.iter_mut().enumerate() {
            *x = r.u64(&format!("boundary register x{i}"))?;
        }
        let input_cursor = r.u64("boundary input cursor")?;
        let output_cursor = r.u64("boundary output cursor")?;
        let input_ended = match r.u8("boundary end-of-input flag")? {
            0 => false,
            1 => true,
            b => return Err(format!("boundary end-of-input flag is {b}, not 0 or 1")),
        };
        Ok(Boundary {
            pc,
            regs,
            input_cursor,
            output_cursor,
            input_ended,
        })
    }
}

/// How a segment ends.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // one per segment; boxing buys nothing
pub enum SegmentEnd {
    /// The run goes on in the next segment from this state.
    Pause(Boundary),
    /// The run exits with this code (the last segment).
    Exit(u32),
}

/// What one segment's proof is about, besides its memory (public; bound by its statement bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentHeader {
    /// Position in the run (0 = first).
    pub index: u32,
    /// Segments in the run.
    pub count: u32,
    /// The run's identifier (`run_id` of the prover's plan): equal in every segment of one run.
    pub run_id: [u8; 32],
    /// Cycles before the segment.
    pub cycle_base: u64,
    /// Cycles of the segment: proven, not claimed. The CPU table's real rows are exactly rows
    /// `0..cycles` (its first row is real, the row that pauses or halts has `clk = cycles - 1`: the
    /// `AirParams::cycles` constraints), so `1 <= cycles < ` the CPU table height.
    pub cycles: u64,
    /// State at the start.
    pub start: Boundary,
    /// State at the end, or the exit code.
    pub end: SegmentEnd,
}

impl SegmentHeader {
    /// `index u32 || count u32 || run_id 32 || cycle_base u64 || cycles u64 || start || end tag u8 ||
    /// (end boundary | exit code u32)`.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.index.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.run_id);
        out.extend_from_slice(&self.cycle_base.to_le_bytes());
        out.extend_from_slice(&self.cycles.to_le_bytes());
        self.start.write(out);
        match &self.end {
            SegmentEnd::Pause(b) => {
                out.push(0);
                b.write(out);
            }
            SegmentEnd::Exit(code) => {
                out.push(1);
                out.extend_from_slice(&code.to_le_bytes());
            }
        }
    }

    /// Parses [`Self::write`]; never panics.
    pub fn read(r: &mut Reader<'_>) -> Result<SegmentHeader, String> {
        let index = r.u32("segment index")?;
        let count = r.u32("segment count")?;
        let run_id = r.bytes("run id", 32)?.try_into().map_err(|_| "run id")?;
        let cycle_base = r.u64("cycle base")?;
        let cycles = r.u64("segment cycles")?;
        let start = Boundary::read(r)?;
        let end = match r.u8("segment end tag")? {
            0 => SegmentEnd::Pause(Boundary::read(r)?),
            1 => SegmentEnd::Exit(r.u32("exit code")?),
            t => return Err(format!("segment end tag is {t}, not 0 (pause) or 1 (exit)")),
        };
        Ok(SegmentHeader {
            index,
            count,
            run_id,
            cycle_base,
            cycles,
            start,
            end,
        })
    }

    /// The instance constants of this segment's AIRs.
    pub fn air_params(&self) -> AirParams {
        let (end_pc, eof) = match &self.end {
            SegmentEnd::Exit(_) => (None, EofRule::Any),
            SegmentEnd::Pause(b) if b.input_ended => (Some(b.pc), EofRule::At(b.input_cursor)),
            SegmentEnd::Pause(b) => (Some(b.pc), EofRule::None),
        };
        AirParams {
            entry: self.start.pc,
            end_pc,
            input_first: self.start.input_cursor,
            eof,
            cycles: Some(self.cycles),
        }
    }

    /// The bytes the STARK statement binds: a domain tag, the program commitment, the header.
    pub fn statement_bytes(&self, program: &[u8; 32]) -> Vec<u8> {
        let mut v = SEGMENT_DOMAIN.to_vec();
        v.extend_from_slice(program);
        self.write(&mut v);
        v
    }

    /// The output bytes the segment writes, `output[start.output_cursor..end.output_cursor]` (the last
    /// segment: to the end), or an error naming the bounds.
    pub fn output_chunk<'a>(&self, output: &'a [u8]) -> Result<&'a [u8], String> {
        let from = self.start.output_cursor;
        let to = match &self.end {
            SegmentEnd::Pause(b) => b.output_cursor,
            SegmentEnd::Exit(_) => output.len() as u64,
        };
        if from > to || to > output.len() as u64 {
            return Err(format!(
                "it writes output bytes [{from}, {to}), but the public output has {} bytes",
                output.len()
            ));
        }
        Ok(&output[from as usize..to as usize])
    }

    /// Checks what the header alone must satisfy: x0 = 0 at both ends, cursors that do not go back, an
    /// input that does not reopen, pcs below 2^31. The reason does not repeat the segment's index: the
    /// callers name it (`segment 3: x0 is 0x1 at its end`, `bad segment: ...`).
    pub fn check(&self) -> Result<(), String> {
        let i = self.index;
        let check_b = |b: &Boundary, which: &str| {
            if b.regs[0] != 0 {
                return Err(format!("x0 is {:#x} at its {which}", b.regs[0]));
            }
            if b.pc as u64 >= zkrv_executor::GUEST_MEM_END || !b.pc.is_multiple_of(4) {
                return Err(format!("bad pc {:#x} at its {which}", b.pc));
            }
            Ok(())
        };
        check_b(&self.start, "start")?;
        if let SegmentEnd::Pause(e) = &self.end {
            check_b(e, "end")?;
            if e.input_cursor < self.start.input_cursor
                || e.output_cursor < self.start.output_cursor
            {
                return Err("an I/O cursor goes back".into());
            }
            if self.start.input_ended && !e.input_ended {
                return Err("the input ended before it, not after".into());
            }
        }
        if self.index >= self.count {
            return Err(format!(
                "its index {i} is not below the run's {} segments",
                self.count
            ));
        }
        Ok(())
    }
}

/// Where a segment's boundary pc is not an instruction of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadPc {
    /// "start" or "end".
    pub which: &'static str,
    pub pc: u32,
}

impl SegmentHeader {
    /// Checks that the start pc and, if the segment pauses, the end pc are instructions of the program:
    /// each has a DECODE row (a supported RV64IM instruction, 4-aligned, in an executable segment). The
    /// circuit binds the start pc the same way (the CPU's first row is real, so its DECODE lookup hits a
    /// real entry at the start pc); the end pc is the next segment's start pc.
    pub fn check_pcs(&self, decode: &DecodeTable) -> Result<(), BadPc> {
        let ok = |which, pc: u32| match decode.row_of(pc) {
            Some(_) => Ok(()),
            None => Err(BadPc { which, pc }),
        };
        ok("start", self.start.pc)?;
        if let SegmentEnd::Pause(e) = &self.end {
            ok("end", e.pc)?;
        }
        Ok(())
    }
}

impl std::fmt::Display for BadPc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "its {} pc {:#x} is not an instruction of the program (no supported RV64IM instruction of \
             an executable segment there)",
            self.which, self.pc
        )
    }
}

/// One segment's proof: the header, the touched pages, the published writes and the STARK proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentProof {
    pub header: SegmentHeader,
    /// Sorted base addresses of the 4 KiB pages the segment touches.
    pub pages: Vec<u32>,
    /// The cells (`address / 8`) of `pages` whose value at the segment's end differs from the start, with
    /// the end value, strictly increasing cells. Empty for the last segment (its end memory is not needed).
    pub writes: Vec<(u32, u64)>,
    pub stark: zkrv_stark::Proof,
}

impl SegmentProof {
    /// `header || #pages u64 || pages u32 each || #writes u64 || (cell u32, value u64) each || STARK proof`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.header.write(&mut v);
        v.extend_from_slice(&(self.pages.len() as u64).to_le_bytes());
        for p in &self.pages {
            v.extend_from_slice(&p.to_le_bytes());
        }
        v.extend_from_slice(&(self.writes.len() as u64).to_le_bytes());
        for (c, x) in &self.writes {
            v.extend_from_slice(&c.to_le_bytes());
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(&self.stark.to_bytes());
        v
    }

    /// Parses [`Self::to_bytes`]; never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<SegmentProof, VerifyError> {
        let bad = VerifyError::Format;
        let mut r = Reader { bytes, pos: 0 };
        let header = SegmentHeader::read(&mut r).map_err(bad)?;
        let n = r.len("page count", 4).map_err(bad)?;
        let mut pages = Vec::with_capacity(n);
        for _ in 0..n {
            pages.push(r.u32("page").map_err(bad)?);
        }
        let n = r.len("write count", 12).map_err(bad)?;
        let mut writes = Vec::with_capacity(n);
        for _ in 0..n {
            let c = r.u32("write cell").map_err(bad)?;
            writes.push((c, r.u64("write value").map_err(bad)?));
        }
        let stark = zkrv_stark::Proof::from_bytes(&bytes[r.pos..])
            .map_err(|e| VerifyError::Format(format!("STARK proof: {e}")))?;
        Ok(SegmentProof {
            header,
            pages,
            writes,
            stark,
        })
    }
}

/// A little-endian cursor over bytes whose reads name the field that is cut short.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }
    /// Bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }
    pub fn bytes(&mut self, what: &str, n: usize) -> Result<&'a [u8], String> {
        let s = self
            .pos
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.pos..end))
            .ok_or_else(|| format!("truncated: {what} is cut short"))?;
        self.pos += n;
        Ok(s)
    }
    pub fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.bytes(what, 1)?[0])
    }
    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.bytes(what, 4)?.try_into().unwrap_or_default(),
        ))
    }
    pub fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.bytes(what, 8)?.try_into().unwrap_or_default(),
        ))
    }
    /// A u64 count of items of `item_bytes` each, refused if the rest cannot hold them.
    pub fn len(&mut self, what: &str, item_bytes: usize) -> Result<usize, String> {
        let n = self.u64(what)?;
        usize::try_from(n)
            .ok()
            .filter(|&n| {
                n.checked_mul(item_bytes)
                    .is_some_and(|b| b <= self.rest().len())
            })
            .ok_or_else(|| format!("{what} {n} is larger than the rest of the data"))
    }
}

fn token(bus: u32, values: Vec<u64>, direction: Direction) -> PublicInteraction {
    PublicInteraction {
        bus,
        values: values.into_iter().map(F::from_u64).collect(),
        multiplicity: F::ONE,
        direction,
    }
}

/// The public interactions of a segment (docs/continuations.md, in this order): register init tokens from
/// the start boundary, the output bytes `chunk` at the output cursor, the exit code (last segment), the
/// end-of-input row at the input cursor (if the input ended before), the memory init tokens of every cell
/// of `pages` with the values `init` (`pages.len() x 512` cell values at the start, u64 little-endian), and
/// for a segment that pauses the final registers and the final cells (`init` with `writes` applied).
/// Errors: a bad page list, `init` of the wrong length, writes not strictly increasing or outside `pages`.
pub fn segment_public(
    header: &SegmentHeader,
    chunk: &[u8],
    pages: &[u32],
    init: &[u64],
    writes: &[(u32, u64)],
) -> Result<Vec<PublicInteraction>, String> {
    Ok(segment_public_source(header, chunk, pages, init, writes)?.to_vec())
}

/// [`segment_public`] read in passes, without one heap value per interaction: the output bytes kept as
/// bytes and the memory tokens made on the fly from `init` and `writes` (the same interactions, transcript
/// and sum).
pub fn segment_public_source<'a>(
    header: &SegmentHeader,
    chunk: &'a [u8],
    pages: &'a [u32],
    init: &'a [u64],
    writes: &'a [(u32, u64)],
) -> Result<SegmentPublic<'a>, String> {
    if init.len() != pages.len().saturating_mul(CELLS_PER_PAGE) {
        check_page_list(pages)?;
        return Err(format!(
            "{} initial cell values for {} pages",
            init.len(),
            pages.len()
        ));
    }
    SegmentPublic::new(
        header,
        chunk,
        pages,
        writes,
        Cells::Expanded { init, writes },
    )
}

/// Where the cell values of a segment's memory tokens come from.
#[derive(Clone, Copy)]
enum Cells<'a> {
    /// `pages.len() x 512` start values and the segment's writes (the prover's, [`verify_segment`]'s).
    Expanded {
        init: &'a [u64],
        writes: &'a [(u32, u64)],
    },
    /// Segment `segment` of a run: the ELF image overwritten by the run's published writes
    /// ([`RunImage`]; the verifier's, [`verify_run`]'s).
    Image {
        program: &'a Program,
        image: &'a RunImage,
        segment: u32,
    },
}

impl Cells<'_> {
    /// Calls `f(cell, value)` for the 512 cells of every page of `pages` in order, with the values at the
    /// segment's start (`end`: false) or at its end (`end`: true, the start values with the writes applied).
    fn for_each(&self, pages: &[u32], end: bool, f: &mut dyn FnMut(u64, u64)) {
        match *self {
            Cells::Expanded { init, writes } => {
                let mut w = writes.iter().peekable();
                for (k, &p) in pages.iter().enumerate() {
                    let first = p as u64 / 8;
                    let values = &init[k * CELLS_PER_PAGE..(k + 1) * CELLS_PER_PAGE];
                    for (j, &x) in values.iter().enumerate() {
                        let cell = first + j as u64;
                        let mut x = x;
                        if end {
                            if let Some(&(_, v)) = w.next_if(|&&(c, _)| c as u64 == cell) {
                                x = v;
                            }
                        }
                        f(cell, x);
                    }
                }
            }
            Cells::Image {
                program,
                image,
                segment,
            } => {
                // The start values are what segments `< segment` wrote; the end values add its own writes.
                let before = if end { segment + 1 } else { segment };
                let mut page = [0u8; 4096];
                for &p in pages {
                    program.initial_bytes(p as u64, &mut page);
                    let first = p / 8;
                    let written = image.page(first);
                    let mut i = 0;
                    for (j, b) in page.chunks_exact(8).enumerate() {
                        let cell = first + j as u32;
                        let mut x = u64::from_le_bytes(b.try_into().unwrap_or_default());
                        if written.get(i).is_some_and(|e| e.cell == cell) {
                            // The writes of this cell, by segment index: the last one before `before`.
                            let n = written[i..].partition_point(|e| e.cell == cell);
                            let g = &written[i..i + n];
                            let k = g.partition_point(|e| e.segment < before);
                            if k > 0 {
                                x = g[k - 1].value;
                            }
                            i += n;
                        }
                        f(cell as u64, x);
                    }
                }
            }
        }
    }
}

/// The public interactions of one segment ([`segment_public`]'s, in its order) as a
/// [`zkrv_stark::logup::PublicSource`]: the registers, output bytes, exit and end-of-input tokens held,
/// the `2 x 512` memory tokens per page made on the fly, so that its memory does not grow with the pages
/// listed (the verifier's form; [`Self::to_vec`] expands it for the prover and the debug checker).
pub struct SegmentPublic<'a> {
    /// Register init tokens, output bytes, the exit code and the end-of-input row.
    head: zkrv_stark::logup::PublicWithBytes<'a>,
    pages: &'a [u32],
    cells: Cells<'a>,
    /// The final register tokens of a segment that pauses (`None`: the last segment, no final tokens).
    end_regs: Option<Vec<PublicInteraction>>,
}

impl<'a> SegmentPublic<'a> {
    /// Checks the page list and the writes (strictly increasing cells of `pages`; none in the last
    /// segment) and builds the head.
    fn new(
        header: &SegmentHeader,
        chunk: &'a [u8],
        pages: &'a [u32],
        writes: &[(u32, u64)],
        cells: Cells<'a>,
    ) -> Result<Self, String> {
        check_page_list(pages)?;
        check_writes(pages, writes)?;
        let mut head = Vec::with_capacity(bus::NUM_REG_CELLS);
        for (r, x) in header.start.reg_cells().iter().enumerate() {
            let [lo, hi] = words(*x);
            head.push(token(
                bus::REG_TOKEN,
                vec![r as u64, 0, lo, hi],
                Direction::Send,
            ));
        }
        let mut tail = Vec::with_capacity(2);
        if let SegmentEnd::Exit(code) = header.end {
            tail.push(token(bus::HALT, vec![code as u64], Direction::Receive));
        }
        if header.start.input_ended {
            tail.push(token(
                bus::INPUT,
                vec![header.start.input_cursor, tables_input_eof()],
                Direction::Send,
            ));
        }
        let end_regs = match &header.end {
            SegmentEnd::Pause(end) => Some(
                end.reg_cells()
                    .iter()
                    .enumerate()
                    .map(|(r, x)| {
                        let [lo, hi] = words(*x);
                        token(bus::REG_FINAL, vec![r as u64, lo, hi], Direction::Receive)
                    })
                    .collect(),
            ),
            SegmentEnd::Exit(_) if !writes.is_empty() => {
                return Err("the last segment publishes no writes".into())
            }
            SegmentEnd::Exit(_) => None,
        };
        Ok(SegmentPublic {
            head: zkrv_stark::logup::PublicWithBytes {
                head,
                bytes_bus: bus::OUTPUT,
                start: header.start.output_cursor,
                bytes: chunk,
                direction: Direction::Receive,
                tail,
            },
            pages,
            cells,
            end_regs,
        })
    }

    /// The expanded list (one [`PublicInteraction`] each), e.g. for the prover and the debug checker.
    pub fn to_vec(&self) -> Vec<PublicInteraction> {
        zkrv_stark::logup::PublicSource::expand(self)
    }
}

impl zkrv_stark::logup::PublicSource for SegmentPublic<'_> {
    fn count(&self) -> usize {
        let cells = self.pages.len() * CELLS_PER_PAGE;
        self.head.count() + cells + self.end_regs.as_ref().map_or(0, |regs| regs.len() + cells)
    }
    fn for_each(&self, f: &mut dyn FnMut(zkrv_stark::logup::PublicRef<'_>)) {
        use zkrv_stark::logup::PublicRef;
        self.head.for_each(f);
        self.cells.for_each(self.pages, false, &mut |cell, x| {
            let [lo, hi] = words(x);
            f(PublicRef {
                bus: bus::MEM_TOKEN,
                values: &[F::from_u64(cell), F::ZERO, F::from_u64(lo), F::from_u64(hi)],
                multiplicity: F::ONE,
                direction: Direction::Send,
            })
        });
        if let Some(regs) = &self.end_regs {
            regs.for_each(f);
            self.cells.for_each(self.pages, true, &mut |cell, x| {
                let [lo, hi] = words(x);
                f(PublicRef {
                    bus: bus::MEM_FINAL,
                    values: &[F::from_u64(cell), F::from_u64(lo), F::from_u64(hi)],
                    multiplicity: F::ONE,
                    direction: Direction::Receive,
                })
            });
        }
    }
}

fn tables_input_eof() -> u64 {
    crate::tables::sysio::INPUT_EOF
}

/// Checks that `writes` are strictly increasing cells of `pages` (a sorted page list).
pub fn check_writes(pages: &[u32], writes: &[(u32, u64)]) -> Result<(), String> {
    let mut prev: Option<u32> = None;
    for &(cell, _) in writes {
        if prev.is_some_and(|p| p >= cell) {
            return Err(format!(
                "writes are not strictly increasing at cell {cell:#x}"
            ));
        }
        prev = Some(cell);
        let page = (cell as u64 * 8 / 4096 * 4096) as u32;
        pages
            .binary_search(&page)
            .map_err(|_| format!("write to cell {cell:#x} outside the segment's pages"))?;
    }
    Ok(())
}

/// `init` (the cells of `pages`) with `writes` applied; errors if the writes are not strictly increasing
/// cells of `pages` ([`check_writes`]).
pub fn apply_writes(
    pages: &[u32],
    init: &[u64],
    writes: &[(u32, u64)],
) -> Result<Vec<u64>, String> {
    check_writes(pages, writes)?;
    if init.len() != pages.len().saturating_mul(CELLS_PER_PAGE) {
        return Err(format!(
            "{} initial cell values for {} pages",
            init.len(),
            pages.len()
        ));
    }
    let mut fin = init.to_vec();
    for &(cell, x) in writes {
        let page = (cell as u64 * 8 / 4096 * 4096) as u32;
        if let Ok(k) = pages.binary_search(&page) {
            fin[k * CELLS_PER_PAGE + (cell as usize % CELLS_PER_PAGE)] = x;
        }
    }
    Ok(fin)
}

/// One published write of a run, as [`RunImage`] keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Written {
    cell: u32,
    /// The index of the segment whose end value it is.
    segment: u32,
    value: u64,
}

/// The memory a run's segments start from, as the verifier derives it (docs/continuations.md §4, 2): the
/// ELF image overwritten by the published writes of the segments before. Only the written cells are held
/// (16 bytes each, sorted by cell then segment: 12 bytes each in the file); every other cell is read from
/// the ELF when its token is made. Shared by the segments verified in parallel: no per-segment copy.
pub struct RunImage {
    written: Vec<Written>,
}

impl RunImage {
    /// Every segment's writes (each list strictly increasing: [`check_writes`]), in segment order.
    fn new<'w>(writes: impl Iterator<Item = &'w [(u32, u64)]> + Clone) -> RunImage {
        let mut written = Vec::with_capacity(writes.clone().map(<[_]>::len).sum());
        for (i, list) in writes.enumerate() {
            written.extend(list.iter().map(|&(cell, value)| Written {
                cell,
                segment: i as u32,
                value,
            }));
        }
        written.sort_unstable_by_key(|w| (w.cell, w.segment));
        RunImage { written }
    }

    /// The writes to the 512 cells from `first`, in order.
    fn page(&self, first: u32) -> &[Written] {
        let a = self.written.partition_point(|w| w.cell < first);
        let b = self
            .written
            .partition_point(|w| (w.cell as u64) < first as u64 + 512);
        &self.written[a..b.max(a)]
    }
}

/// Everything the prover commits to for one segment. Exposed so that tests can tamper with it. `T`: a main
/// trace (host matrices, or a backend's `TraceInput` for traces built on a device).
#[derive(Clone, Debug)]
pub struct SegmentWitness<T = RowMajorMatrix> {
    pub header: SegmentHeader,
    pub pages: Vec<u32>,
    /// Cell values of `pages` at the start (`pages.len() x 512`).
    pub init: Vec<u64>,
    pub writes: Vec<(u32, u64)>,
    /// The output bytes the segment writes.
    pub output: Vec<u8>,
    /// Main traces in table order.
    pub traces: Vec<T>,
}

impl SegmentWitness {
    /// The witness with its host traces as a backend's trace inputs.
    fn into_inputs<D>(self) -> SegmentWitness<zkrv_stark::backend::TraceInput<D>> {
        let SegmentWitness {
            header,
            pages,
            init,
            writes,
            output,
            traces,
        } = self;
        SegmentWitness {
            header,
            pages,
            init,
            writes,
            output,
            traces: traces
                .into_iter()
                .map(zkrv_stark::backend::TraceInput::Host)
                .collect(),
        }
    }
}

fn cells(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect()
}

/// One segment re-executed from its checkpoint, before trace generation: its public parts (those of
/// [`SegmentWitness`]) and what its main traces are built from (the record, the input bytes it reads and
/// where its streams and its CPU table start and end), on the host ([`Self::host_traces`]) or on a device
/// (`zkrv_machine_cuda::trace_gen::generate_segment_traces`).
pub struct SegmentRun {
    pub header: SegmentHeader,
    pub pages: Vec<u32>,
    /// Cell values of `pages` at the start (`pages.len() x 512`).
    pub init: Vec<u64>,
    pub writes: Vec<(u32, u64)>,
    /// The output bytes the segment writes.
    pub output: Vec<u8>,
    /// The execution record (timestamps local to the segment; `init_regs` and `init_pages` are the start
    /// state).
    pub record: zkrv_executor::Record,
    /// The input bytes the segment reads (indices `start.input_cursor..`).
    pub input: Vec<u8>,
    /// The trace boundary: input cursor, output cursor, end-of-input row, paused end pc.
    pub start: TraceStart,
}

impl SegmentRun {
    /// The witness of this segment with `traces` as its main traces (table order).
    pub fn with_traces<T>(self, traces: Vec<T>) -> SegmentWitness<T> {
        SegmentWitness {
            header: self.header,
            pages: self.pages,
            init: self.init,
            writes: self.writes,
            output: self.output,
            traces,
        }
    }

    /// Builds the main traces on the host (`trace::generate_split_at`, every table) at `config`'s heights.
    pub fn host_traces(
        self,
        program: &Program,
        config: &StarkConfig,
    ) -> Result<SegmentWitness, MachineError> {
        let decode_table = DecodeTable::new(program)?;
        let (traces, _) = trace::generate_split_at(
            &decode_table,
            &self.record,
            &self.input,
            &self.start,
            min_height(config),
            trace::DeviceFill::NONE,
        )?;
        let (traces, _) = traces.into_table_order();
        Ok(self.with_traces(traces))
    }
}

/// Re-executes the segment of checkpoint `cp` (of a run of `program` on `input`, which has `count`
/// segments and the identifier `run_id`): header, memory, record, trace boundary, no traces yet.
/// Errors: the execution error, a run that is not provable (pages, instructions).
pub fn segment_run(
    program: &Program,
    input: &[u8],
    cp: &Checkpoint,
    count: u32,
    run_id: [u8; 32],
) -> Result<SegmentRun, MachineError> {
    let run = execute_segment(program, input, cp)?;
    check_provable_at(&run.record, cp.cycle_base)?;
    let pc32 = |pc: u64| {
        u32::try_from(pc).map_err(|_| MachineError::Internal(format!("pc {pc:#x} >= 2^32")))
    };
    let start = Boundary {
        pc: pc32(cp.pc)?,
        regs: cp.regs,
        input_cursor: cp.input_pos,
        output_cursor: cp.output_len,
        input_ended: cp.input_ended,
    };
    let end = match run.exit_code {
        Some(code) => SegmentEnd::Exit(code),
        None => SegmentEnd::Pause(Boundary {
            pc: pc32(run.end_pc)?,
            regs: run.record.final_regs,
            input_cursor: run.end_input_pos,
            output_cursor: cp.output_len + run.output.len() as u64,
            input_ended: run.end_input_ended,
        }),
    };
    let (eof_row, end_pc) = match &end {
        SegmentEnd::Exit(_) => (true, None),
        SegmentEnd::Pause(b) => (b.input_ended, Some(b.pc)),
    };
    let index = u32::try_from(cp.index).map_err(|_| MachineError::Internal("index".into()))?;
    let header = SegmentHeader {
        index,
        count,
        run_id,
        cycle_base: cp.cycle_base,
        cycles: cp.cycles,
        start,
        end,
    };
    let init = cells(&run.record.init_pages);
    let fin = cells(&run.record.final_pages);
    let writes = match header.end {
        SegmentEnd::Exit(_) => Vec::new(),
        SegmentEnd::Pause(_) => init
            .iter()
            .zip(&fin)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (_, &b))| {
                let cell = run.record.pages[i / CELLS_PER_PAGE] / 8 + (i % CELLS_PER_PAGE) as u32;
                (cell, b)
            })
            .collect(),
    };
    let (from, to) = (cp.input_pos as usize, run.end_input_pos as usize);
    let slice = input
        .get(from..to)
        .ok_or_else(|| MachineError::Internal("segment input range".into()))?;
    // A paused segment's CPU table goes on at its end pc (a whole run ends with the halting ECALL at
    // pc + 4); a checkpoint of 0 cycles (only a crafted one) has no real row to end.
    let start = TraceStart {
        input_cursor: cp.input_pos,
        output_cursor: cp.output_len,
        eof_row,
        input_ended: cp.input_ended,
        end_pc,
    };
    Ok(SegmentRun {
        header,
        pages: run.record.pages.clone(),
        init,
        writes,
        output: run.output,
        record: run.record,
        input: slice.to_vec(),
        start,
    })
}

/// Re-executes the segment of checkpoint `cp` (of a run of `program` on `input`, which has `count`
/// segments and the identifier `run_id`) and builds its witness: header, memory, traces at `config`'s
/// heights, on the host ([`segment_run`], then [`SegmentRun::host_traces`]). Errors: the execution error, a
/// run that is not provable (pages, instructions), a trace error.
pub fn segment_witness(
    program: &Program,
    input: &[u8],
    cp: &Checkpoint,
    count: u32,
    run_id: [u8; 32],
    config: &StarkConfig,
) -> Result<SegmentWitness, MachineError> {
    segment_run(program, input, cp, count, run_id)?.host_traces(program, config)
}

/// The AIRs, preprocessed data and public interactions of a segment, as both sides build them.
struct SegmentSetup<'a> {
    machine: Machine,
    pre: zkrv_stark::PreprocessedData,
    public: SegmentPublic<'a>,
    statement: Vec<u8>,
}

fn setup<'a>(
    program: &Program,
    header: &SegmentHeader,
    params: &AirParams,
    public: impl FnOnce() -> Result<SegmentPublic<'a>, String>,
    config: &StarkConfig,
) -> Result<SegmentSetup<'a>, VerifyError> {
    header.check().map_err(VerifyError::BadSegment)?;
    let decode_table =
        DecodeTable::new(program).map_err(|e| VerifyError::BadProgram(e.to_string()))?;
    header
        .check_pcs(&decode_table)
        .map_err(|e| VerifyError::BadSegment(e.to_string()))?;
    setup_circuit(program, &decode_table, header, params, public, config)
}

/// [`setup`] without the header checks: the circuit alone, its AIRs' instance constants `params` (the
/// header's [`SegmentHeader::air_params`], but for [`verify_segment_as`]).
fn setup_circuit<'a>(
    program: &Program,
    decode_table: &DecodeTable,
    header: &SegmentHeader,
    params: &AirParams,
    public: impl FnOnce() -> Result<SegmentPublic<'a>, String>,
    config: &StarkConfig,
) -> Result<SegmentSetup<'a>, VerifyError> {
    let public = public().map_err(VerifyError::BadSegment)?;
    let machine = Machine::with(params);
    let pre = preprocess(
        &machine.airs(),
        machine.preprocessed(decode_table, min_height(config)),
    )
    .map_err(|e| VerifyError::Preprocess(e.to_string()))?;
    Ok(SegmentSetup {
        machine,
        pre,
        public,
        statement: header.statement_bytes(&program_commitment(program)),
    })
}

/// The debug checker over a segment witness: every constraint, every bus balanced with the segment's
/// public interactions. The error names the table, row and constraint, or the unbalanced bus tuple.
pub fn check_segment(
    program: &Program,
    w: &SegmentWitness,
    config: &StarkConfig,
) -> Result<(), zkrv_stark::check::CheckError> {
    let shape = |reason: String| zkrv_stark::check::CheckError::Shape {
        table: "segment".into(),
        reason,
    };
    let s = setup(
        program,
        &w.header,
        &w.header.air_params(),
        || segment_public_source(&w.header, &w.output, &w.pages, &w.init, &w.writes),
        config,
    )
    .map_err(|e| shape(e.to_string()))?;
    let compiled = zkrv_stark::air::compile_for(&s.machine.airs(), config)
        .map_err(|e| shape(e.to_string()))?;
    zkrv_stark::check::check_traces(
        &compiled,
        &w.traces,
        &s.pre.traces,
        &s.public.to_vec(),
        config.log_max_multiplicity,
    )
}

/// Every violation of a segment witness's circuit ([`zkrv_stark::check::violations`]: each failing
/// constraint once, each out-of-range multiplicity once, then the unbalanced buses), without the verifier's
/// header checks ([`SegmentHeader::check`], [`SegmentHeader::check_pcs`]). Empty iff the witness satisfies
/// the segment's AIRs and balances with its public interactions. For tests that show a crafted witness
/// breaks exactly the constraints they target (crates/machine/tests/forged_segments.rs).
pub fn segment_violations(
    program: &Program,
    w: &SegmentWitness,
    config: &StarkConfig,
) -> Result<Vec<zkrv_stark::check::CheckError>, zkrv_stark::check::CheckError> {
    let shape = |reason: String| zkrv_stark::check::CheckError::Shape {
        table: "segment".into(),
        reason,
    };
    let decode_table = DecodeTable::new(program).map_err(|e| shape(e.to_string()))?;
    let s = setup_circuit(
        program,
        &decode_table,
        &w.header,
        &w.header.air_params(),
        || segment_public_source(&w.header, &w.output, &w.pages, &w.init, &w.writes),
        config,
    )
    .map_err(|e| shape(e.to_string()))?;
    let compiled = zkrv_stark::air::compile_for(&s.machine.airs(), config)
        .map_err(|e| shape(e.to_string()))?;
    zkrv_stark::check::violations(
        &compiled,
        &w.traces,
        &s.pre.traces,
        &s.public.to_vec(),
        config.log_max_multiplicity,
    )
}

/// Proves a segment witness on `backend`. Refuses a header that fails the verifier's own checks
/// ([`SegmentHeader::check`], [`SegmentHeader::check_pcs`]) before proving.
pub fn prove_segment_with<B: zkrv_stark::backend::ProverBackend>(
    backend: &B,
    program: &Program,
    w: SegmentWitness,
    config: &StarkConfig,
) -> Result<SegmentProof, MachineError> {
    prove_segment_inputs_with(backend, program, w.into_inputs(), config)
}

/// [`prove_segment_with`] of a witness whose main traces are `backend`'s trace inputs (device-resident
/// traces enter the main commitment without an upload: `zkrv_machine_cuda::trace_gen`).
pub fn prove_segment_inputs_with<B: zkrv_stark::backend::ProverBackend>(
    backend: &B,
    program: &Program,
    w: SegmentWitness<zkrv_stark::backend::TraceInput<B::DeviceTrace>>,
    config: &StarkConfig,
) -> Result<SegmentProof, MachineError> {
    let bad = |e: String| MachineError::Internal(format!("bad segment: {e}"));
    w.header.check().map_err(bad)?;
    let decode_table = DecodeTable::new(program)?;
    w.header
        .check_pcs(&decode_table)
        .map_err(|e| bad(e.to_string()))?;
    prove_circuit(backend, program, &decode_table, w, config)
}

/// [`prove_segment_with`] without the header checks: proves whatever witness and header it is given (a
/// STARK proof of a witness that breaks a constraint does not verify). The malicious prover of
/// crates/machine/tests/forged_segments.rs: soundness rests on the verifier alone.
pub fn prove_segment_unchecked<B: zkrv_stark::backend::ProverBackend>(
    backend: &B,
    program: &Program,
    w: SegmentWitness,
    config: &StarkConfig,
) -> Result<SegmentProof, MachineError> {
    let decode_table = DecodeTable::new(program)?;
    prove_circuit(backend, program, &decode_table, w.into_inputs(), config)
}

fn prove_circuit<B: zkrv_stark::backend::ProverBackend>(
    backend: &B,
    program: &Program,
    decode_table: &DecodeTable,
    w: SegmentWitness<zkrv_stark::backend::TraceInput<B::DeviceTrace>>,
    config: &StarkConfig,
) -> Result<SegmentProof, MachineError> {
    let s = setup_circuit(
        program,
        decode_table,
        &w.header,
        &w.header.air_params(),
        || segment_public_source(&w.header, &w.output, &w.pages, &w.init, &w.writes),
        config,
    )
    .map_err(|e| MachineError::Internal(e.to_string()))?;
    let stark = zkrv_stark::prove_with(
        backend,
        config,
        &s.machine.airs(),
        &s.pre,
        w.traces,
        &s.public.to_vec(),
        &s.statement,
    )?;
    Ok(SegmentProof {
        header: w.header,
        pages: w.pages,
        writes: w.writes,
        stark,
    })
}

/// Verifies one segment's proof given what the verifier derives itself: `init`, the values of the cells of
/// `proof.pages` at the segment's start (`pages.len() x 512`), and `chunk`, the public output bytes it
/// writes ([`SegmentHeader::output_chunk`]). The chaining between segments is the caller's
/// (`zkrv_machine::continuation`). `min_bits`: the least provable security accepted, in bits (Johnson
/// regime, BCHKS25, for this segment's heights and batch: [`segment_security`]); below it
/// `VerifyError::Stark(zkrv_stark::VerifyError::WeakParameters { .. })`; 0 accepts any parameters the
/// PCS runs with.
pub fn verify_segment(
    program: &Program,
    proof: &SegmentProof,
    init: &[u64],
    chunk: &[u8],
    config: &StarkConfig,
    min_bits: u32,
) -> Result<(), VerifyError> {
    verify_segment_as(
        program,
        proof,
        init,
        chunk,
        config,
        min_bits,
        &proof.header.air_params(),
    )
}

/// [`verify_segment`] with the AIRs' instance constants `params` in place of the header's own
/// ([`SegmentHeader::air_params`]; the header still gives the statement and the public interactions): what
/// a verifier that derived another start pc, end pc, cycle count or input cursor would check. The proof
/// verifies only for the header's own constants; for others (same AIR shapes) the error is
/// `VerifyError::Stark(zkrv_stark::VerifyError::Statement)`: the AIRs' public values are bound into the
/// statement digest (and the transcript).
pub fn verify_segment_as(
    program: &Program,
    proof: &SegmentProof,
    init: &[u64],
    chunk: &[u8],
    config: &StarkConfig,
    min_bits: u32,
    params: &AirParams,
) -> Result<(), VerifyError> {
    verify_segment_from(
        program,
        proof,
        params,
        || segment_public_source(&proof.header, chunk, &proof.pages, init, &proof.writes),
        chunk,
        config,
        min_bits,
    )
}

/// [`verify_segment`] of segment `proof.header.index` of a run, its memory read from `image` (the run's
/// published writes) and the ELF on the fly.
fn verify_run_segment(
    program: &Program,
    proof: &SegmentProof,
    image: &RunImage,
    chunk: &[u8],
    config: &StarkConfig,
    min_bits: u32,
) -> Result<(), VerifyError> {
    let cells = Cells::Image {
        program,
        image,
        segment: proof.header.index,
    };
    verify_segment_from(
        program,
        proof,
        &proof.header.air_params(),
        || SegmentPublic::new(&proof.header, chunk, &proof.pages, &proof.writes, cells),
        chunk,
        config,
        min_bits,
    )
}

fn verify_segment_from<'a>(
    program: &Program,
    proof: &SegmentProof,
    params: &AirParams,
    public: impl FnOnce() -> Result<SegmentPublic<'a>, String>,
    chunk: &[u8],
    config: &StarkConfig,
    min_bits: u32,
) -> Result<(), VerifyError> {
    crate::check_output_len(chunk.len() as u64)?;
    let s = setup(program, &proof.header, params, public, config)?;
    zkrv_stark::verify(
        config,
        min_bits,
        &s.machine.airs(),
        &s.pre,
        &s.public,
        &s.statement,
        &proof.stark,
    )?;
    Ok(())
}

/// Why a multi-segment proof is rejected before or around its segments' STARK proofs (each check names
/// what it found; docs/continuations.md "Verifier").
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error("the proof holds no segment")]
    Empty,
    #[error("segment {index} appears twice (positions {first} and {second})")]
    Duplicate {
        index: u32,
        first: usize,
        second: usize,
    },
    #[error("the segment at position {position} says the run has {says} segments, the proof holds {holds}")]
    Count {
        position: usize,
        says: u32,
        holds: usize,
    },
    #[error("segment {index} of the run is missing")]
    Missing { index: u32 },
    #[error("segments out of order: position {position} holds segment {index}")]
    OutOfOrder { position: usize, index: u32 },
    /// A segment whose run id is not [`run_id`] of this statement, segment size and count.
    #[error("segment {index} belongs to another run: its run id is not this run's (the statement's program, exit code and output, the segment size and the segment count)")]
    RunId { index: u32 },
    #[error("segment 0 does not start from the program's initial state: {field} is {found}, expected {expected}")]
    NotInitial {
        field: String,
        found: String,
        expected: String,
    },
    #[error("boundary between segments {prev} and {next}: {field} is {end} at the end of {prev} but {start} at the start of {next}")]
    Boundary {
        prev: u32,
        next: u32,
        field: String,
        end: String,
        start: String,
    },
    #[error("segment {index} starts at cycle {found}, expected {expected} (the cycles of the segments before it)")]
    CycleBase {
        index: u32,
        found: u64,
        expected: u64,
    },
    /// A segment runs at least one cycle.
    #[error("segment {index} claims 0 cycles; a segment runs at least 1")]
    NoCycles { index: u32 },
    /// A boundary pc that is no instruction of the program ([`SegmentHeader::check_pcs`]).
    #[error("segment {index}: {pc}")]
    Pc { index: u32, pc: BadPc },
    #[error("segment {index} claims {cycles} cycles, more than its CPU table of 2^{log_height} rows holds ({} at most: one padding row)", (1u64 << (*log_height).min(63)) - 1)]
    Cycles {
        index: u32,
        cycles: u64,
        log_height: usize,
    },
    #[error("the last segment ({index}) does not end in exit: the run is incomplete")]
    NoExit { index: u32 },
    #[error("segment {index} exits, but it is not the last segment")]
    EarlyExit { index: u32 },
    #[error("the statement's exit code is {statement}, the last segment's is {segment}")]
    ExitCode { statement: u32, segment: u32 },
    #[error("the run's segment size {rows} is not a power of two in 2..=2^26")]
    SegmentSize { rows: u64 },
    #[error("segment {index} has {cycles} cycles, but the run is cut into segments of {rows} rows ({} cycles each, the last at most that)", rows.saturating_sub(1))]
    SegmentRows { index: u32, cycles: u64, rows: u64 },
    #[error("segment {index}: {reason}")]
    Bad { index: u32, reason: String },
    #[error("segment {index}: invalid proof: {source}")]
    Segment {
        index: u32,
        #[source]
        source: Box<VerifyError>,
    },
}

/// A run planned for proving in segments ([`plan_run`]).
pub struct RunPlan {
    /// The whole run's statement (program, exit code, public output).
    pub statement: crate::Statement,
    /// One checkpoint per segment.
    pub checkpoints: Vec<Checkpoint>,
    /// Keccak-256 of the run's boundaries ([`run_id`]).
    pub run_id: [u8; 32],
    /// Cycles of the whole run.
    pub cycles: u64,
    /// What the guest wrote to fd 2 (not proven).
    pub debug_output: Vec<u8>,
    /// CPU rows per segment (a power of two); a segment runs at most `segment_rows - 1` cycles.
    pub segment_rows: u64,
}

/// The segment size (CPU rows) on the GPU backend of a run too long for one proof when none is given
/// (`zkrv prove` without `--segment-cycles`, `zkrv_sdk::ProveOptions::segment_cycles` `None`): 2^22 rows,
/// whose zk proof fits a 24 GB GPU's budget with LDEs recomputed per coset block (21.1 GiB live, docs/gpu.md).
pub const DEFAULT_SEGMENT_ROWS: u64 = 1 << 22;

/// The default segment size on the CPU backend ([`DEFAULT_SEGMENT_ROWS`] is the GPU's): 2^20 rows, the
/// largest height whose zk proof fits in 16 GiB of host memory (a sha256 segment of 2^20 rows peaks at
/// 10.7 GiB with `ZKRV_LDE=auto`; 2^21 rows need about 21 GiB and 2^22 about 41 GiB by
/// `ProofFootprint`'s model: docs/PERF.md "Continuations on the CPU: zk").
pub const DEFAULT_CPU_SEGMENT_ROWS: u64 = 1 << 20;

/// The default segment size of a backend: [`DEFAULT_SEGMENT_ROWS`] on a GPU, [`DEFAULT_CPU_SEGMENT_ROWS`]
/// on the CPU.
pub fn default_segment_rows(gpu: bool) -> u64 {
    if gpu {
        DEFAULT_SEGMENT_ROWS
    } else {
        DEFAULT_CPU_SEGMENT_ROWS
    }
}

/// The most segments a run may have: the header's index and count are `u32`.
pub const MAX_SEGMENTS: u64 = u32::MAX as u64;

/// The most cycles a run in segments of `segment_rows` CPU rows can hold: [`MAX_SEGMENTS`] segments of
/// `segment_rows - 1` cycles (0 for fewer than 2 rows).
pub fn max_run_cycles(segment_rows: u64) -> u64 {
    MAX_SEGMENTS.saturating_mul(segment_rows.saturating_sub(1))
}

/// Why a segmented run cannot be planned: the executor's error (with what it ran), or a bad segment size.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("--segment-cycles {rows}: {reason}")]
    SegmentSize { rows: u64, reason: String },
    /// The cycle limit allows more segments than a proof holds ([`max_run_cycles`]).
    #[error("--max-cycles {max_cycles}: a run in segments of {rows} rows holds at most 2^32 - 1 segments of {} cycles = {limit} cycles", rows.saturating_sub(1))]
    RunTooLong {
        max_cycles: u64,
        rows: u64,
        limit: u64,
    },
    #[error("{}", .0.error)]
    Exec(zkrv_executor::Failure),
    /// The run executes but cannot be proven (found in the first pass, before any segment is proven):
    /// a `read`/`write` argument of 2^32 or more ([`MachineError::SyscallArgument`]).
    #[error(transparent)]
    Unprovable(MachineError),
}

/// The identifier of a run: Keccak-256 of `"zkrv-run-v2" || statement bytes || segment_rows (u64 LE) ||
/// count (u64 LE)`, all of which the verifier knows: [`verify_run`] recomputes it and refuses a segment
/// that carries another ([`ChainError::RunId`]). Every segment's statement binds it, so a segment proven
/// for another statement (program, exit code, output), segment size or segment count is named as such;
/// soundness does not rest on it (docs/continuations.md §4: the boundaries and memory do).
pub fn run_id(statement: &crate::Statement, segment_rows: u64, count: u64) -> [u8; 32] {
    use tiny_keccak::{Hasher, Keccak};
    let mut h = Keccak::v256();
    h.update(b"zkrv-run-v2");
    h.update(&statement.to_bytes());
    h.update(&segment_rows.to_le_bytes());
    h.update(&count.to_le_bytes());
    let mut out = [0u8; 32];
    h.finalize(&mut out);
    out
}

/// Checks a segment size of `segment_rows` CPU rows under `config`: a power of two, at least
/// `min_height(config)` (the smallest table: 128 rows in zk mode) and at most 2^26 (the tallest table).
/// The error is the reason (e.g. "must be a power of two"), for the caller to prefix with the size; check
/// it before anything that divides by or subtracts from the size (`segment_rows - 1` cycles per segment).
pub fn check_segment_rows(segment_rows: u64, config: &StarkConfig) -> Result<(), String> {
    let min = min_height(config) as u64;
    if !segment_rows.is_power_of_two() {
        return Err("must be a power of two".into());
    }
    if segment_rows < min {
        return Err(format!(
            "smaller than the smallest table ({min} rows under these parameters: a segment's CPU \
             table cannot be shorter)"
        ));
    }
    if segment_rows > 1 << zkrv_stark::logup::MAX_LOG_HEIGHT {
        return Err("larger than 2^26, the tallest table".into());
    }
    Ok(())
}

/// Runs `program` on `input` (at most `max_cycles` cycles) and cuts it into segments of `segment_rows`
/// CPU rows, that is at most `segment_rows - 1` cycles each (one padding row). `segment_rows` must be a
/// power of two, at least `min_height(config)` (the smallest table, 128 rows in zk mode) and at most
/// 2^26 ([`PlanError::SegmentSize`] otherwise, before anything runs); `max_cycles` at most
/// [`max_run_cycles`] ([`PlanError::RunTooLong`]). The run is executed plainly first: a run that fails
/// (e.g. does not exit within `max_cycles`: `ExecError::CycleLimit`) is [`PlanError::Exec`] after that
/// pass alone, in the executor's time and the guest's memory, before any checkpoint is kept.
pub fn plan_run(
    program: &Program,
    input: &[u8],
    segment_rows: u64,
    max_cycles: u64,
    config: &StarkConfig,
) -> Result<RunPlan, PlanError> {
    check_segment_rows(segment_rows, config).map_err(|reason| PlanError::SegmentSize {
        rows: segment_rows,
        reason,
    })?;
    if max_cycles > max_run_cycles(segment_rows) {
        return Err(PlanError::RunTooLong {
            max_cycles,
            rows: segment_rows,
            limit: max_run_cycles(segment_rows),
        });
    }
    // A plain run first (no record, no checkpoints: the executor's speed and the guest's memory only), so
    // that a run that fails, above all one that never exits, fails in bounded time and memory instead of
    // after one checkpoint per segment up to `max_cycles` (2^32 cycles in segments of 128 rows would be 2^25
    // checkpoints). A run that exits costs one more fast execution (about 0.3 s per 10^8 cycles).
    zkrv_executor::execute_keep_output(
        program,
        input,
        &zkrv_executor::ExecOptions {
            max_cycles,
            record: false,
        },
    )
    .map_err(PlanError::Exec)?;
    // The first pass checks each segment's syscall arguments as it goes (the rest of `check_provable`
    // runs per segment when its witness is built), so that an unprovable run is refused before any
    // segment is proven.
    // The pass records no cycle events: a segment with a bad call is replayed (`execute_segment`) for the
    // ECALL's pc in the error.
    let seg = zkrv_executor::execute_segmented_checked(
        program,
        input,
        segment_rows - 1,
        max_cycles,
        &mut |cp, rec| {
            if first_bad_syscall(&rec.syscalls).is_none() {
                return Ok(());
            }
            let run = zkrv_executor::execute_segment(program, input, cp).map_err(|e| {
                MachineError::Internal(format!("replaying segment {}: {e}", cp.index))
            })?;
            check_syscall_args(&run.record, cp.cycle_base)
        },
    )
    .map_err(PlanError::Unprovable)?
    .map_err(PlanError::Exec)?;
    let statement = crate::Statement {
        program: program_commitment(program),
        exit_code: seg.execution.exit_code,
        output: seg.execution.public_output,
    };
    Ok(RunPlan {
        run_id: run_id(&statement, segment_rows, seg.checkpoints.len() as u64),
        statement,
        checkpoints: seg.checkpoints,
        cycles: seg.execution.cycles,
        debug_output: seg.execution.debug_output,
        segment_rows,
    })
}

/// Proves segment `i` of `plan` on `backend`; an error names the segment.
pub fn prove_plan_segment<B: zkrv_stark::backend::ProverBackend>(
    backend: &B,
    program: &Program,
    input: &[u8],
    plan: &RunPlan,
    i: usize,
    config: &StarkConfig,
) -> Result<SegmentProof, MachineError> {
    let n = plan.checkpoints.len() as u32;
    let named = |e: MachineError| MachineError::Segment {
        index: i,
        count: n as usize,
        source: Box::new(e),
    };
    let cp = plan
        .checkpoints
        .get(i)
        .ok_or_else(|| MachineError::Internal(format!("no segment {i}")))?;
    let w = segment_witness(program, input, cp, n, plan.run_id, config).map_err(named)?;
    prove_segment_with(backend, program, w, config).map_err(named)
}

/// Proves every segment of `plan` on the CPU backend, `parallel` segments at a time (at least 1; each
/// proof keeps one segment's traces and commitments, so memory grows with `parallel`), each worker
/// building a segment's witness and then proving it (no overlap: [`prove_segments`] with
/// `pipelined: false`). Results are in segment order; the first error (by segment index) is returned,
/// naming its segment. `ZKRV_LDE` is not read here: the CPU backend's default LDE mode.
pub fn prove_plan(
    program: &Program,
    input: &[u8],
    plan: &RunPlan,
    config: &StarkConfig,
    parallel: usize,
) -> Result<Vec<SegmentProof>, MachineError> {
    let backend = zkrv_stark::backend::CpuBackend::default();
    let schedule = Schedule {
        workers: parallel,
        pipelined: false,
    };
    let prove =
        |_worker: usize, w: SegmentWitness| prove_segment_with(&backend, program, w, config);
    prove_segments(program, input, plan, config, schedule, &prove, &|_| {}).map(|(p, _)| p)
}

/// How [`prove_segments`] spreads the segments of a run over its workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Workers (at least 1; more than the segments are not started). A worker proves one segment at a
    /// time: one per GPU, or `--segment-jobs` CPU provers.
    pub workers: usize,
    /// Whether each worker overlaps the host stage of its next segment (re-execution from the checkpoint
    /// and host trace generation, [`segment_witness`]) with the proof of the current one: a producer
    /// thread per worker hands witnesses over a rendezvous channel, so at most one finished witness waits
    /// per worker (while the prover holds another). Without it, a worker builds and then proves each
    /// segment on one thread (the lowest memory: one witness per worker).
    pub pipelined: bool,
}

/// One segment proven by [`prove_segments`]: where, in what order, and how long.
#[derive(Clone, Debug)]
pub struct SegmentDone {
    /// The segment's index in the run.
    pub index: usize,
    /// Segments in the run.
    pub count: usize,
    /// The worker that proved it (`0..Schedule::workers`; with one worker per GPU, the device's place in
    /// the list of devices).
    pub worker: usize,
    /// Segments proven so far, this one included (completion order: segments finish out of order with
    /// several workers).
    pub done: usize,
    /// Seconds building the witness ([`segment_witness`]: re-execution and host trace generation; with
    /// [`prove_segments_built`], the given host stage, e.g. the re-execution only).
    pub witness_secs: f64,
    /// Seconds the worker's prover took.
    pub prove_secs: f64,
    /// Seconds the worker's prover waited for this witness after it was ready for one (a pipelined
    /// worker whose host stage is slower than its proofs waits; 0 for the first segment of a worker is not
    /// counted as waiting, it is the pipeline's fill).
    pub wait_secs: f64,
    /// The prover's stages ([`zkrv_stark::profile`], recorded on the worker's prover thread).
    pub profile: zkrv_stark::profile::Profile,
}

/// Proves every segment of `plan` with `prove(worker, witness)`, on `schedule.workers` worker threads
/// that take segments from one queue in index order ([`Schedule`]); `on_done` is called on the worker's
/// thread after each segment (progress: [`SegmentDone::done`] of [`SegmentDone::count`]). Returns the
/// proofs in segment order and one [`SegmentDone`] per segment (in segment order). After a failure no
/// new segment is started, and the first error by segment index is returned, naming its segment
/// ([`MachineError::Segment`]).
///
/// `prove` is the backend: a GPU pipeline gives each worker its own device (`worker` indexes the list of
/// devices) and proves there one segment at a time.
pub fn prove_segments<P>(
    program: &Program,
    input: &[u8],
    plan: &RunPlan,
    config: &StarkConfig,
    schedule: Schedule,
    prove: &P,
    on_done: &(dyn Fn(&SegmentDone) + Sync),
) -> Result<(Vec<SegmentProof>, Vec<SegmentDone>), MachineError>
where
    P: Fn(usize, SegmentWitness) -> Result<SegmentProof, MachineError> + Sync,
{
    let build = |cp: &Checkpoint, count: u32, run_id: [u8; 32]| {
        segment_witness(program, input, cp, count, run_id, config)
    };
    prove_segments_built(plan, schedule, &build, prove, on_done)
}

/// [`prove_segments`] with the host stage given: `build(checkpoint, count, run_id)` makes what
/// `prove(worker, _)` proves (on a pipelined worker, on its producer thread: e.g. [`segment_run`], the
/// re-execution only, for a backend that builds the traces on its device). [`SegmentDone::witness_secs`]
/// times `build`.
pub fn prove_segments_built<W: Send, B, P>(
    plan: &RunPlan,
    schedule: Schedule,
    build: &B,
    prove: &P,
    on_done: &(dyn Fn(&SegmentDone) + Sync),
) -> Result<(Vec<SegmentProof>, Vec<SegmentDone>), MachineError>
where
    B: Fn(&Checkpoint, u32, [u8; 32]) -> Result<W, MachineError> + Sync,
    P: Fn(usize, W) -> Result<SegmentProof, MachineError> + Sync,
{
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::time::Instant;
    type Slot = Mutex<Option<Result<(SegmentProof, SegmentDone), MachineError>>>;
    let n = plan.checkpoints.len();
    let count = u32::try_from(n)
        .map_err(|_| MachineError::Internal(format!("{n} segments: more than 2^32 - 1")))?;
    let named = |i: usize, e: MachineError| match e {
        e @ MachineError::Segment { .. } => e,
        e => MachineError::Segment {
            index: i,
            count: n,
            source: Box::new(e),
        },
    };
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Vec<Slot> = (0..n).map(|_| Mutex::new(None)).collect();
    // Takes the next segment index, or None when all are handed out (or a failure stopped the run).
    let take = || {
        let i = next.fetch_add(1, Ordering::Relaxed);
        (i < n).then_some(i)
    };
    let witness = |i: usize| {
        let t = Instant::now();
        let w = build(&plan.checkpoints[i], count, plan.run_id);
        (i, w, t.elapsed().as_secs_f64())
    };
    // The prover's half of a worker: proves one built witness, stores the result; false after a failure.
    let finish = |worker: usize,
                  (i, w, witness_secs): (usize, Result<W, MachineError>, f64),
                  wait_secs: f64| {
        let t = Instant::now();
        let (r, profile) = zkrv_stark::profile::record(None, || w.and_then(|w| prove(worker, w)));
        let r = r.map_err(|e| named(i, e)).map(|p| {
            let d = SegmentDone {
                index: i,
                count: n,
                worker,
                done: done.fetch_add(1, Ordering::Relaxed) + 1,
                witness_secs,
                prove_secs: t.elapsed().as_secs_f64(),
                wait_secs,
                profile,
            };
            on_done(&d);
            (p, d)
        });
        let ok = r.is_ok();
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        if !ok {
            // Stop handing out segments after a failure.
            next.store(n, Ordering::Relaxed);
        }
        ok
    };
    std::thread::scope(|s| {
        for worker in 0..schedule.workers.clamp(1, n.max(1)) {
            let (take, witness, finish) = (&take, &witness, &finish);
            if !schedule.pipelined {
                s.spawn(move || {
                    while let Some(i) = take() {
                        if !finish(worker, witness(i), 0.0) {
                            break;
                        }
                    }
                });
                continue;
            }
            // Rendezvous: the producer builds witness i + 1 while the prover proves i, then waits until
            // the prover takes it.
            let (tx, rx) = std::sync::mpsc::sync_channel(0);
            s.spawn(move || {
                while let Some(i) = take() {
                    if tx.send(witness(i)).is_err() {
                        break; // the prover stopped (a failure)
                    }
                }
            });
            s.spawn(move || {
                let mut first = true;
                loop {
                    let t = Instant::now();
                    let Ok(job) = rx.recv() else { break };
                    let wait = if first {
                        0.0
                    } else {
                        t.elapsed().as_secs_f64()
                    };
                    first = false;
                    if !finish(worker, job, wait) {
                        break; // dropping `rx` stops this worker's producer
                    }
                }
            });
        }
    });
    let mut proofs = Vec::with_capacity(n);
    let mut dones = Vec::with_capacity(n);
    for (i, slot) in slots.into_iter().enumerate() {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(r) => {
                let (p, d) = r?;
                proofs.push(p);
                dones.push(d);
            }
            None => {
                return Err(MachineError::Internal(format!(
                    "segment {i} was not proven (an earlier failure stopped the run)"
                )))
            }
        }
    }
    Ok((proofs, dones))
}

/// What a verified multi-segment proof states.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub segments: usize,
    /// Cycles of the run: the sum of the segments' cycles, each proven by its CPU table (`AirParams::cycles`).
    pub cycles: u64,
    /// Sum over the segments of `2^h - 1`, `h` their CPU table's log height: what the proof bounds.
    pub cycles_at_most: u64,
}

fn hexs(x: u64) -> String {
    format!("{x:#x}")
}

fn compare_boundary(
    prev: u32,
    next: u32,
    end: &Boundary,
    start: &Boundary,
) -> Result<(), ChainError> {
    let diff = |field: String, e: String, s: String| ChainError::Boundary {
        prev,
        next,
        field,
        end: e,
        start: s,
    };
    if end.pc != start.pc {
        return Err(diff(
            "pc".into(),
            hexs(end.pc as u64),
            hexs(start.pc as u64),
        ));
    }
    for r in 0..32 {
        if end.regs[r] != start.regs[r] {
            return Err(diff(
                format!("register x{r}"),
                hexs(end.regs[r]),
                hexs(start.regs[r]),
            ));
        }
    }
    if end.input_cursor != start.input_cursor {
        return Err(diff(
            "the input cursor".into(),
            end.input_cursor.to_string(),
            start.input_cursor.to_string(),
        ));
    }
    if end.output_cursor != start.output_cursor {
        return Err(diff(
            "the output cursor".into(),
            end.output_cursor.to_string(),
            start.output_cursor.to_string(),
        ));
    }
    if end.input_ended != start.input_ended {
        return Err(diff(
            "the end-of-input flag".into(),
            end.input_ended.to_string(),
            start.input_ended.to_string(),
        ));
    }
    Ok(())
}

/// Verifies a multi-segment proof of `statement` for `program`, cut into segments of `segment_rows` CPU
/// rows (docs/continuations.md "Verifier"): the segment list (no duplicate, none missing, in order, one
/// run), the chain (segment 0 starts from the program's initial state, each segment starts where the one
/// before ended, cycle bases add up, every segment but the last runs `segment_rows - 1` cycles and the last
/// at most that, only the last exits, with the statement's exit code, the output is the concatenation of
/// the segments'), then
/// every segment's STARK proof against the memory the verifier derives (the ELF image overwritten by the
/// earlier segments' published writes), in parallel. `min_bits` as in [`verify_segment`], for every
/// segment (a segment below it: `ChainError::Segment` with `WeakParameters`, see
/// [`VerifyError::weak_parameters`]).
pub fn verify_run(
    program: &Program,
    statement: &crate::Statement,
    segment_rows: u64,
    segments: &[SegmentProof],
    config: &StarkConfig,
    min_bits: u32,
) -> Result<RunSummary, VerifyError> {
    use std::collections::HashMap;
    let chain = |e: ChainError| VerifyError::Chain(Box::new(e));
    crate::check_output_len(statement.output.len() as u64)?;
    if statement.program != program_commitment(program) {
        return Err(VerifyError::WrongProgram);
    }
    if segments.is_empty() {
        return Err(chain(ChainError::Empty));
    }
    let n = segments.len();
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for (pos, s) in segments.iter().enumerate() {
        if let Some(&first) = seen.get(&s.header.index) {
            return Err(chain(ChainError::Duplicate {
                index: s.header.index,
                first,
                second: pos,
            }));
        }
        seen.insert(s.header.index, pos);
    }
    for (pos, s) in segments.iter().enumerate() {
        if s.header.count as usize != n {
            if (s.header.count as usize) > n {
                if let Some(index) = (0..s.header.count).find(|i| !seen.contains_key(i)) {
                    return Err(chain(ChainError::Missing { index }));
                }
            }
            return Err(chain(ChainError::Count {
                position: pos,
                says: s.header.count,
                holds: n,
            }));
        }
    }
    for (pos, s) in segments.iter().enumerate() {
        if s.header.index as usize != pos {
            return Err(chain(ChainError::OutOfOrder {
                position: pos,
                index: s.header.index,
            }));
        }
    }
    if !segment_rows.is_power_of_two()
        || !(2..=1 << zkrv_stark::logup::MAX_LOG_HEIGHT).contains(&segment_rows)
    {
        return Err(chain(ChainError::SegmentSize { rows: segment_rows }));
    }
    let decode = DecodeTable::new(program).map_err(|e| VerifyError::BadProgram(e.to_string()))?;
    let init = Boundary::initial(program).map_err(VerifyError::BadProgram)?;
    let first = &segments[0].header.start;
    if first != &init {
        let (field, found, expected) = if first.pc != init.pc {
            (
                "pc".to_string(),
                hexs(first.pc as u64),
                hexs(init.pc as u64),
            )
        } else if let Some(r) = (0..32).find(|&r| first.regs[r] != init.regs[r]) {
            (
                format!("register x{r}"),
                hexs(first.regs[r]),
                hexs(init.regs[r]),
            )
        } else {
            (
                "an I/O cursor".to_string(),
                format!("{}/{}", first.input_cursor, first.output_cursor),
                "0/0".to_string(),
            )
        };
        return Err(chain(ChainError::NotInitial {
            field,
            found,
            expected,
        }));
    }
    let mut cycles = 0u64;
    let mut at_most = 0u64;
    for (i, s) in segments.iter().enumerate() {
        let h = &s.header;
        h.check().map_err(|reason| {
            chain(ChainError::Bad {
                index: h.index,
                reason,
            })
        })?;
        h.check_pcs(&decode)
            .map_err(|pc| chain(ChainError::Pc { index: h.index, pc }))?;
        if h.cycle_base != cycles {
            return Err(chain(ChainError::CycleBase {
                index: h.index,
                found: h.cycle_base,
                expected: cycles,
            }));
        }
        let log_h = s
            .stark
            .log_heights
            .get(crate::Table::Cpu.index())
            .copied()
            .unwrap_or(0) as usize;
        let rows = 1u64.checked_shl(log_h as u32).unwrap_or(u64::MAX);
        if h.cycles == 0 {
            return Err(chain(ChainError::NoCycles { index: h.index }));
        }
        if h.cycles >= rows {
            return Err(chain(ChainError::Cycles {
                index: h.index,
                cycles: h.cycles,
                log_height: log_h,
            }));
        }
        let last = i + 1 == n;
        // The segment size the file states is the one the run was cut with (it is not in any segment's
        // statement: without this check it could be edited).
        let full = segment_rows - 1;
        if (last && h.cycles > full) || (!last && h.cycles != full) {
            return Err(chain(ChainError::SegmentRows {
                index: h.index,
                cycles: h.cycles,
                rows: segment_rows,
            }));
        }
        cycles = cycles.saturating_add(h.cycles);
        at_most = at_most.saturating_add(rows - 1);
        match (&h.end, last) {
            (SegmentEnd::Pause(_), false) => {}
            (SegmentEnd::Pause(_), true) => {
                return Err(chain(ChainError::NoExit { index: h.index }))
            }
            (SegmentEnd::Exit(_), false) => {
                return Err(chain(ChainError::EarlyExit { index: h.index }))
            }
            (SegmentEnd::Exit(code), true) if *code != statement.exit_code => {
                return Err(chain(ChainError::ExitCode {
                    statement: statement.exit_code,
                    segment: *code,
                }))
            }
            (SegmentEnd::Exit(_), true) => {}
        }
    }
    // The run id is recomputed, not trusted (after the per-segment checks, so that an edited segment size
    // is named as such: it is in the run id too).
    let run = run_id(statement, segment_rows, n as u64);
    if let Some(s) = segments.iter().find(|s| s.header.run_id != run) {
        return Err(chain(ChainError::RunId {
            index: s.header.index,
        }));
    }
    for w in segments.windows(2) {
        if let SegmentEnd::Pause(end) = &w[0].header.end {
            compare_boundary(
                w[0].header.index,
                w[1].header.index,
                end,
                &w[1].header.start,
            )
            .map_err(chain)?;
        }
    }
    // The memory each segment starts from: the ELF image, overwritten by the published writes so far
    // (only the written cells are held; the tokens are made on the fly while each segment is verified).
    for s in segments {
        let bad = |reason: String| {
            chain(ChainError::Bad {
                index: s.header.index,
                reason,
            })
        };
        check_page_list(&s.pages).map_err(bad)?;
        check_writes(&s.pages, &s.writes).map_err(bad)?;
    }
    let image = RunImage::new(segments.iter().map(|s| s.writes.as_slice()));
    let mut chunks = Vec::with_capacity(n);
    for s in segments {
        chunks.push(s.header.output_chunk(&statement.output).map_err(|reason| {
            chain(ChainError::Bad {
                index: s.header.index,
                reason,
            })
        })?);
    }
    use rayon::prelude::*;
    segments
        .par_iter()
        .zip(chunks.par_iter())
        .map(|(s, chunk)| {
            verify_run_segment(program, s, &image, chunk, config, min_bits).map_err(|e| {
                chain(ChainError::Segment {
                    index: s.header.index,
                    source: Box::new(e),
                })
            })
        })
        .collect::<Vec<Result<(), VerifyError>>>()
        .into_iter()
        .collect::<Result<Vec<()>, VerifyError>>()?; // the first failure in segment order
    Ok(RunSummary {
        segments: n,
        cycles,
        cycles_at_most: at_most,
    })
}

/// The security of one segment's proof under `config` (its own AIRs, heights and DEEP batch; docs/stark.md
/// "Security"). Errors, never panics, on a malformed proof shape.
pub fn segment_security(
    proof: &SegmentProof,
    config: &StarkConfig,
) -> Result<zkrv_stark::security::SecurityReport, MachineError> {
    let machine = Machine::with(&proof.header.air_params());
    let airs = zkrv_stark::air::compile_for(&machine.airs(), config)
        .map_err(|e| MachineError::Internal(e.to_string()))?;
    crate::check_heights(&airs, &proof.stark.log_heights)?;
    let shape = zkrv_stark::security::ProofShape::of_proof(&airs, &proof.stark);
    Ok(config.security(&shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verifier's on-the-fly memory tokens of each segment of a run ([`Cells::Image`] over one
    /// [`RunImage`]) are the expanded ones the verifier built before (a map of 4 KiB pages: the ELF image
    /// overwritten by the earlier segments' writes, `init` per segment, [`apply_writes`] for the final
    /// values), cell for cell, on ELF pages and zero pages, over segments that rewrite the same cells, list
    /// pages they do not write and skip pages others wrote.
    #[test]
    fn run_image_cells_equal_the_expanded_image() {
        let path = format!(
            "{}/../../guests/bin/fibonacci.elf",
            env!("CARGO_MANIFEST_DIR")
        );
        let program = Program::from_elf(&std::fs::read(path).unwrap()).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let pool: Vec<u32> = (0..6)
            .map(|k| 0x10000 + k * 4096)
            .chain((0..4).map(|k| 0x7fff_0000 + k * 4096))
            .collect();
        // (pages, writes) per segment.
        type Run = (Vec<u32>, Vec<(u32, u64)>);
        let mut runs: Vec<Run> = Vec::new();
        for _ in 0..7 {
            let pages: Vec<u32> = pool.iter().copied().filter(|_| next() % 3 != 0).collect();
            let mut writes: Vec<(u32, u64)> = Vec::new();
            for &p in &pages {
                for j in 0..512u32 {
                    // Dense at the page start (the same cells rewritten run after run), sparse after.
                    if (j < 16 && next() % 2 == 0) || next() % 40 == 0 {
                        writes.push((p / 8 + j, next() << 20 | next()));
                    }
                }
            }
            runs.push((pages, writes));
        }
        let image = RunImage::new(runs.iter().map(|(_, w)| w.as_slice()));
        let mut expanded: std::collections::HashMap<u32, Vec<u64>> = Default::default();
        let mut buf = vec![0u8; 4096];
        let mut nonzero = 0;
        for (i, (pages, writes)) in runs.iter().enumerate() {
            let mut init = Vec::new();
            for &p in pages {
                match expanded.get(&p) {
                    Some(c) => init.extend_from_slice(c),
                    None => {
                        program.initial_bytes(p as u64, &mut buf);
                        init.extend(cells(&buf));
                    }
                }
            }
            let fin = apply_writes(pages, &init, writes).unwrap();
            nonzero += init.iter().filter(|&&x| x != 0).count();
            let cells_of = |c: Cells<'_>, end: bool| {
                let mut v = Vec::new();
                c.for_each(pages, end, &mut |cell, x| v.push((cell, x)));
                v
            };
            let with_cells = |values: &[u64]| -> Vec<(u64, u64)> {
                values
                    .iter()
                    .enumerate()
                    .map(|(k, &x)| (pages[k / 512] as u64 / 8 + (k % 512) as u64, x))
                    .collect()
            };
            let run = Cells::Image {
                program: &program,
                image: &image,
                segment: i as u32,
            };
            assert_eq!(cells_of(run, false), with_cells(&init), "segment {i} init");
            assert_eq!(cells_of(run, true), with_cells(&fin), "segment {i} final");
            let flat = Cells::Expanded {
                init: &init,
                writes,
            };
            assert_eq!(cells_of(flat, false), with_cells(&init), "segment {i} init");
            assert_eq!(cells_of(flat, true), with_cells(&fin), "segment {i} final");
            for (k, &p) in pages.iter().enumerate() {
                expanded.insert(p, fin[k * 512..(k + 1) * 512].to_vec());
            }
        }
        assert!(nonzero > 1000, "ELF bytes and earlier writes: {nonzero}");
    }
}
