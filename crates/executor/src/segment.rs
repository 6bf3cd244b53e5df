//! Segmented execution (continuations, docs/continuations.md): a run cut into segments of at most
//! `segment_cycles` cycles, each with a [`Checkpoint`] from which [`execute_segment`] re-executes it alone.
//!
//! The first pass ([`execute_segmented`]) runs the whole program once, segment after segment, in
//! recording mode with page snapshots: for every segment it keeps the machine state at the segment's start
//! (pc, registers, input cursor, output length, cycle base) and the contents, at that start, of the 4 KiB
//! pages the segment touches (a page is saved at its first touch in the segment, before any write). The
//! cycle events are dropped after each segment, so the first pass holds one segment's record at a time.
//! A segment's re-execution loads only its pages into fresh memory: a deterministic replay touches exactly
//! those pages, and its record (local cycle indices from 0) is what the machine proves.

use crate::exec::{self, Machine, Recorder};
use crate::mem::FlatMem;
use crate::record::{PageBitmap, Record};
use crate::{ExecError, Execution, Failure, Program, PAGE_SIZE};

/// The machine state at the start of one segment and the memory the segment touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Position of the segment in the run (0 = the first).
    pub index: usize,
    /// Cycles executed before the segment (the run's cycle index of the segment's first instruction).
    pub cycle_base: u64,
    /// Instructions the segment executes (the exiting ECALL included), `1..=segment_cycles`.
    pub cycles: u64,
    /// pc of the segment's first instruction.
    pub pc: u64,
    /// x0..x31 at the segment's start (x0 = 0).
    pub regs: [u64; 32],
    /// Bytes of the private input consumed before the segment (the input cursor).
    pub input_pos: u64,
    /// Whether a `read` came back short before the segment (the guest has seen the end of the input).
    pub input_ended: bool,
    /// Bytes of public output written before the segment (the output cursor).
    pub output_len: u64,
    /// Sorted base addresses of the 4 KiB pages the segment touches (loads, stores, syscall buffers).
    pub pages: Vec<u32>,
    /// Their contents at the segment's start: `pages.len() x 4096` bytes, page-major, same order.
    pub page_data: Vec<u8>,
}

/// A whole run cut into segments ([`execute_segmented`]).
#[derive(Clone, Debug)]
pub struct SegmentedExecution {
    /// The run as [`crate::execute`] reports it (no record).
    pub execution: Execution,
    /// One checkpoint per segment, in order; the last segment ends with the exit.
    pub checkpoints: Vec<Checkpoint>,
}

/// One re-executed segment ([`execute_segment`]).
#[derive(Clone, Debug)]
pub struct SegmentRun {
    /// The segment's record: cycle events indexed from 0, `init_regs` the checkpoint's registers,
    /// `pages` the checkpoint's pages with `init_pages` their checkpoint contents.
    pub record: Record,
    /// `Some(code)` if the segment ends with the exit (the last segment), else `None`.
    pub exit_code: Option<u32>,
    /// pc after the segment (the next segment's first pc; for the last segment the exiting ECALL's).
    pub end_pc: u64,
    /// Input cursor after the segment.
    pub end_input_pos: u64,
    /// Whether a `read` came back short by the segment's end.
    pub end_input_ended: bool,
    /// Bytes the segment wrote to fd 1.
    pub output: Vec<u8>,
}

/// Runs `program` on `input` to its exit (at most `max_cycles` instructions, else
/// [`ExecError::CycleLimit`] with that limit) and cuts the run into segments of `segment_cycles`
/// instructions (the last one shorter). `segment_cycles` must be at least 1 (0 is treated as 1).
/// Memory: the checkpoints hold the touched pages of every segment (4 KiB per page and segment); one
/// segment's syscall and precompile events live at a time (no per-cycle events: [`execute_segment`] records
/// those when a segment is replayed).
pub fn execute_segmented(
    program: &Program,
    input: &[u8],
    segment_cycles: u64,
    max_cycles: u64,
) -> Result<SegmentedExecution, Failure> {
    match execute_segmented_checked(program, input, segment_cycles, max_cycles, &mut |_, _| {
        Ok::<(), std::convert::Infallible>(())
    }) {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// [`execute_segmented`], calling `check(checkpoint, record)` after each segment with the segment's
/// record without its cycle events (`record.cycles` is empty: the pass runs at close to the plain
/// interpreter's speed): its syscall and precompile events, whose `cycle` counts from the start of the
/// run, and its touched pages; the first error `check` returns stops the run and is the outer `Err`. A
/// prover uses it to refuse a run it cannot prove before proving any segment (replaying a segment with
/// [`execute_segment`] where it needs the instructions).
pub fn execute_segmented_checked<E>(
    program: &Program,
    input: &[u8],
    segment_cycles: u64,
    max_cycles: u64,
    check: &mut dyn FnMut(&Checkpoint, &Record) -> Result<(), E>,
) -> Result<Result<SegmentedExecution, Failure>, E> {
    let seg = segment_cycles.max(1);
    let mut m = match Machine::new(program, input) {
        Ok(m) => m,
        Err(error) => {
            return Ok(Err(Failure {
                error,
                public_output: Vec::new(),
                debug_output: Vec::new(),
                cycles: 0,
            }))
        }
    };
    let mut checkpoints = Vec::new();
    loop {
        let (pc, regs, input_pos, input_ended, output_len, cycle_base) = (
            m.pc,
            m.regs,
            m.input_pos as u64,
            m.input_ended,
            m.public_output.len() as u64,
            m.cycles,
        );
        let mut r = recorder(regs);
        let limit = cycle_base.saturating_add(seg).min(max_cycles);
        let res = exec::run::<true, false>(program, &mut m, limit, Some(&mut r));
        let exit = match res {
            Ok(code) => Some(code),
            Err(ExecError::CycleLimit { .. }) if limit < max_cycles => None,
            Err(error) => {
                return Ok(Err(Failure {
                    error,
                    public_output: std::mem::take(&mut m.public_output),
                    debug_output: std::mem::take(&mut m.debug_output),
                    cycles: m.cycles,
                }))
            }
        };
        let mut rec = Record::default();
        rec.collect_pages(&r.touched, program, &m.mem);
        checkpoints.push(Checkpoint {
            index: checkpoints.len(),
            cycle_base,
            cycles: m.cycles - cycle_base,
            pc,
            regs,
            input_pos,
            input_ended,
            output_len,
            pages: rec.pages,
            page_data: rec.init_pages,
        });
        if let Some(cp) = checkpoints.last() {
            check(cp, &r.record)?;
        }
        if let Some(exit_code) = exit {
            return Ok(Ok(SegmentedExecution {
                execution: Execution {
                    public_output: m.public_output,
                    exit_code,
                    cycles: m.cycles,
                    debug_output: m.debug_output,
                    record: None,
                },
                checkpoints,
            }));
        }
    }
}

fn recorder(regs: [u64; 32]) -> Recorder {
    let mut touched = PageBitmap::new();
    touched.snapshot = Some(Vec::new());
    Recorder {
        record: Record {
            init_regs: regs,
            ..Record::default()
        },
        touched,
        soft_cap: 0,
    }
}

/// Re-executes one segment of a run of `program` on `input` from its checkpoint `cp` (from
/// [`execute_segmented`] on the same program and input): fresh memory holding only the checkpoint's
/// pages, `cp.cycles` instructions. Errors: the execution error if the checkpoint does not belong to this
/// program and input, [`ExecError::CheckpointMismatch`] if the replay leaves the checkpoint's pages or ends
/// elsewhere than the checkpoint says.
pub fn execute_segment(
    program: &Program,
    input: &[u8],
    cp: &Checkpoint,
) -> Result<SegmentRun, ExecError> {
    let mismatch = |reason: String| ExecError::CheckpointMismatch { reason };
    let ps = PAGE_SIZE as usize;
    if cp.page_data.len() != cp.pages.len() * ps {
        return Err(mismatch(format!(
            "{} pages but {} bytes of page data",
            cp.pages.len(),
            cp.page_data.len()
        )));
    }
    let input_pos = usize::try_from(cp.input_pos)
        .ok()
        .filter(|&p| p <= input.len())
        .ok_or_else(|| mismatch(format!("input cursor {} past the input", cp.input_pos)))?;
    let mut mem = FlatMem::new().ok_or(ExecError::HostOutOfMemory)?;
    for (k, &p) in cp.pages.iter().enumerate() {
        let dst = mem
            .slice_mut(p as u64, PAGE_SIZE)
            .ok_or_else(|| mismatch(format!("page {p:#x} outside guest memory")))?;
        dst.copy_from_slice(&cp.page_data[k * ps..(k + 1) * ps]);
    }
    let mut m = Machine {
        regs: cp.regs,
        pc: cp.pc,
        cycles: 0,
        mem,
        input,
        input_pos,
        input_ended: cp.input_ended,
        public_output: Vec::new(),
        debug_output: Vec::new(),
    };
    m.regs[0] = 0;
    let mut r = recorder(cp.regs);
    r.touched.snapshot = None;
    let exit_code = match exec::run::<true, true>(program, &mut m, cp.cycles, Some(&mut r)) {
        Ok(code) => Some(code),
        Err(ExecError::CycleLimit { limit, .. }) if limit == cp.cycles => None,
        Err(e) => return Err(e),
    };
    if m.cycles != cp.cycles {
        return Err(mismatch(format!(
            "the segment exits after {} of its {} cycles",
            m.cycles, cp.cycles
        )));
    }
    let mut rec = r.record;
    rec.final_regs = m.regs;
    // Initial contents: the checkpoint's pages as loaded (the program image is not used).
    let mut snap = PageBitmap::new();
    snap.bits = r.touched.bits;
    snap.snapshot = Some(
        cp.pages
            .iter()
            .enumerate()
            .map(|(k, &p)| (p, cp.page_data[k * ps..(k + 1) * ps].into()))
            .collect(),
    );
    rec.collect_pages(&snap, program, &m.mem);
    if rec.pages != cp.pages {
        return Err(mismatch(format!(
            "the replay touches {} pages, the checkpoint holds {}",
            rec.pages.len(),
            cp.pages.len()
        )));
    }
    Ok(SegmentRun {
        record: rec,
        exit_code,
        end_pc: m.pc,
        end_input_pos: m.input_pos as u64,
        end_input_ended: m.input_ended,
        output: m.public_output,
    })
}
