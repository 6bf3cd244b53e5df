//! CPU (docs/tables.md §6.1): one row per executed instruction, then padding rows (pc = 0) up to a power of
//! two (at least one). Holds the decoded instruction (checked against DECODE on every row), the operands,
//! the result, the next pc, and the register accesses inline (the MEMW_R column group, §6.4).

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;
use zkrv_executor::CycleEvent;
use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{Field, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::bitwise::{LookupKind, Lookups};
use crate::tables::decode::{
    words, DecodePrepCols, DecodeTable, DecodedCols, NUM_DECODE_PREP_COLS,
};
use crate::MachineError;

/// A register read (MEMW_R group, read form): the consumed token's timestamp and the ordering witness.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegReadCols<T> {
    /// Timestamp of the consumed token (the previous access of the register).
    pub old_ts: T,
    /// Low 16 bits of `ts - old_ts - 1` (LT32 witness).
    pub d0: T,
}

/// A register write (MEMW_R group, write form).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegWriteCols<T> {
    pub old_ts: T,
    pub d0: T,
    /// Value of the consumed token (the overwritten register value), two words.
    pub old: [T; 2],
}

/// CPU row (44 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuCols<T> {
    /// Address of the instruction (0 on padding rows).
    pub pc: T,
    /// Cycle index = row index; timestamps are `4 clk + slot`.
    pub clk: T,
    /// pc of the next instruction (the next row's pc on real rows).
    pub next_pc: T,
    /// Branch taken / JAL (boolean).
    pub taken: T,
    /// JALR: bit 0 of `rs1 + imm`, cleared from the target.
    pub jalr_bit0: T,
    /// The halting ECALL (exit / exit_group): the last real row.
    pub is_halt: T,
    /// Decoded instruction (DECODE lookup).
    pub dec: DecodedCols<T>,
    /// Value of rs1 (two words; 0 when `rr1 = 0`).
    pub rv1: [T; 2],
    /// Value of rs2 (two words; 0 when `rr2 = 0`).
    pub rv2: [T; 2],
    /// Result (rd value; store value; branch condition; syscall return), four 16-bit halves.
    pub res: [T; 4],
    /// Read of rs1 at `4 clk + 1`.
    pub r1: RegReadCols<T>,
    /// Read of rs2 at `4 clk + 2`.
    pub r2: RegReadCols<T>,
    /// Write of rd at `4 clk + 3`.
    pub w: RegWriteCols<T>,
}
columns!(CpuCols, NUM_CPU_COLS);

/// 2^-k in F.
pub(crate) fn inv_pow2(k: u32) -> F {
    F::from_u64(1u64 << k).inverse()
}

pub(crate) fn c(v: u64) -> Expr {
    Expr::constant(v)
}

/// `LT32(old_ts, ts; d0)` with multiplicity `mult`: proves `old_ts < ts` for timestamps < 2^28 through
/// `U16(d0)` and `U16((ts - old_ts - 1 - d0) 2^-16)` (docs/tables.md §1.3).
pub(crate) fn lt32(b: &mut AirBuilder, old_ts: &Expr, ts: &Expr, d0: &Expr, mult: &Expr) {
    b.send(bus::RANGE16, vec![d0.clone()], mult.clone());
    let hi = (ts.clone() - old_ts.clone() - Expr::one() - d0.clone()) * inv_pow2(16);
    b.send(bus::RANGE16, vec![hi], mult.clone());
}

/// One register access (MEMW_R group): consume `(reg, old_ts, old)`, emit `(reg, ts, new)`, prove
/// `old_ts < ts`; all with multiplicity `mult`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reg_access(
    b: &mut AirBuilder,
    reg: &Expr,
    ts: &Expr,
    old_ts: &Expr,
    d0: &Expr,
    old: [&Expr; 2],
    new: [&Expr; 2],
    mult: &Expr,
) {
    b.receive(
        bus::REG_TOKEN,
        vec![reg.clone(), old_ts.clone(), old[0].clone(), old[1].clone()],
        mult.clone(),
    );
    b.send(
        bus::REG_TOKEN,
        vec![reg.clone(), ts.clone(), new[0].clone(), new[1].clone()],
        mult.clone(),
    );
    lt32(b, old_ts, ts, d0, mult);
}

/// Index of the CPU table's public value [`CpuAir::entry`] ([`CpuAir::public_values`]).
pub const CPU_PUBLIC_ENTRY: usize = 0;
/// Index of the CPU table's public value [`CpuAir::end_pc`] (0 when `None`, where no constraint reads it).
pub const CPU_PUBLIC_END_PC: usize = 1;
/// Index of the CPU table's public value [`CpuAir::cycles`] (0 when `None`, where no constraint reads it).
pub const CPU_PUBLIC_CYCLES: usize = 2;

/// The CPU AIR of one program. Its instance constants (`entry`, `end_pc`, `cycles`) are public values of
/// the AIR ([`Air::public_values`], indices `CPU_PUBLIC_*`), not constants of its circuit: the circuit
/// depends only on whether `end_pc` and `cycles` are set (at most four shapes; every middle segment of a run
/// has the same one), so the segments of a run share one compiled circuit and its GPU programs.
pub struct CpuAir {
    /// ELF entry point: the first row's pc (a segment's start pc, docs/continuations.md).
    pub entry: u32,
    /// `None`: the run ends with a halt (a whole run, or the last segment). `Some(pc)`: a segment that
    /// pauses instead (docs/continuations.md): its last real row goes on at `pc`, the next segment's
    /// first pc, and no row halts (the segment has no public HALT receive).
    pub end_pc: Option<u32>,
    /// `Some(n)`: the table has exactly `n` real rows, rows `0..n` (a segment, whose statement states its
    /// cycles): the row that pauses (`end_pc` set) or halts has `clk = n - 1`. `None`: unconstrained (a
    /// whole run).
    pub cycles: Option<u64>,
}

impl Air for CpuAir {
    fn name(&self) -> &str {
        "CPU"
    }
    fn width(&self) -> usize {
        NUM_CPU_COLS
    }
    fn column_names(&self) -> Vec<String> {
        CpuCols::<usize>::column_names()
    }
    /// `[entry, end_pc or 0, cycles or 0]` (indices `CPU_PUBLIC_*`).
    fn public_values(&self) -> Vec<F> {
        let mut v = vec![F::ZERO; 3];
        v[CPU_PUBLIC_ENTRY] = F::from_u32(self.entry);
        v[CPU_PUBLIC_END_PC] = F::from_u32(self.end_pc.unwrap_or(0));
        v[CPU_PUBLIC_CYCLES] = F::from_u64(self.cycles.unwrap_or(0));
        v
    }
    fn eval(&self, b: &mut AirBuilder) {
        let local: Vec<Expr> = (0..NUM_CPU_COLS).map(|i| b.main(i)).collect();
        let next: Vec<Expr> = (0..NUM_CPU_COLS).map(|i| b.main_next(i)).collect();
        let l = CpuCols::from_row(&local);
        let n = CpuCols::from_row(&next);
        let f = &l.dec.flags;
        let one = Expr::one;
        let two32 = c(1 << 32);
        let inv32 = inv_pow2(32);

        // 1. DECODE lookup on every row.
        let mut tuple = vec![l.pc.clone()];
        tuple.extend(l.dec.tuple());
        b.send(bus::DECODE, tuple, one());

        // 2. x0 and unread registers read 0.
        for k in 0..2 {
            b.assert_zero("unread rs1 is 0", (one() - &f.rr1) * &l.rv1[k]);
            b.assert_zero("unread rs2 is 0", (one() - &f.rr2) * &l.rv2[k]);
        }

        // 3. Result halves are 16-bit.
        for h in &l.res {
            b.send(bus::RANGE16, vec![h.clone()], one());
        }
        let res_lo = l.res[0].clone() + l.res[1].clone() * c(1 << 16);
        let res_hi = l.res[2].clone() + l.res[3].clone() * c(1 << 16);
        let b_lo = l.rv2[0].clone() + &l.dec.imm[0];
        let b_hi = l.rv2[1].clone() + &l.dec.imm[1];

        // 4. Inline ADD / SUB: carries are expressions, proven boolean.
        let c0 = (l.rv1[0].clone() + &b_lo - &res_lo) * inv32;
        let c1 = (l.rv1[1].clone() + &b_hi + &c0 - &res_hi) * inv32;
        b.assert_zero("add carry 0", f.is_add.clone() * &c0 * (c0.clone() - one()));
        b.assert_zero("add carry 1", f.is_add.clone() * &c1 * (c1.clone() - one()));
        let s0 = (res_lo.clone() + &b_lo - &l.rv1[0]) * inv32;
        let s1 = (res_hi.clone() + &b_hi + &s0 - &l.rv1[1]) * inv32;
        b.assert_zero(
            "sub borrow 0",
            f.is_sub.clone() * &s0 * (s0.clone() - one()),
        );
        b.assert_zero(
            "sub borrow 1",
            f.is_sub.clone() * &s1 * (s1.clone() - one()),
        );

        // 5. Constants (LUI, AUIPC).
        b.assert_zero(
            "const lo",
            f.is_const.clone() * (res_lo.clone() - &l.dec.imm[0]),
        );
        b.assert_zero(
            "const hi",
            f.is_const.clone() * (res_hi.clone() - &l.dec.imm[1]),
        );

        // 6. Link (JAL, JALR): rd = pc + 4.
        let link = f.is_jal.clone() + &f.is_jalr;
        b.assert_zero("link lo", link.clone() * (res_lo.clone() - &l.pc - c(4)));
        b.assert_zero("link hi", link * &res_hi);

        // 7. ALU dispatch.
        b.send(
            bus::ALU,
            vec![
                l.dec.op.clone(),
                l.rv1[0].clone(),
                l.rv1[1].clone(),
                b_lo.clone(),
                b_hi.clone(),
                res_lo.clone(),
                res_hi.clone(),
            ],
            f.is_alu.clone(),
        );

        // 8. Branch condition.
        b.assert_zero(
            "branch taken",
            f.is_branch.clone()
                * (l.taken.clone() - &res_lo - &f.neg + f.neg.clone() * &res_lo * c(2)),
        );
        b.assert_zero("jal taken", f.is_jal.clone() * (l.taken.clone() - one()));
        b.assert_zero(
            "taken only for branch/jal",
            (one() - &f.is_branch - &f.is_jal) * &l.taken,
        );

        // 9. Next pc (everything but JALR).
        let pc4 = l.pc.clone() + c(4);
        b.assert_zero(
            "next pc",
            (one() - &f.is_jalr)
                * (l.next_pc.clone() - &pc4 - l.taken.clone() * (l.dec.target.clone() - &pc4)),
        );

        // 10. JALR: next_pc + bit0 = (rv1 + imm) mod 2^64, high word 0.
        let x = l.next_pc.clone() + &l.jalr_bit0;
        let j0 = (l.rv1[0].clone() + &l.dec.imm[0] - &x) * inv32;
        let jh = l.rv1[1].clone() + &l.dec.imm[1] + &j0;
        b.assert_zero("jalr carry", f.is_jalr.clone() * &j0 * (j0.clone() - one()));
        b.assert_zero(
            "jalr high word",
            f.is_jalr.clone() * &jh * (jh.clone() - two32.clone()),
        );
        b.assert_bool("jalr bit0", l.jalr_bit0.clone());

        // 11. Loads and stores.
        b.assert_zero(
            "store value lo",
            f.is_store.clone() * (res_lo.clone() - &l.rv2[0]),
        );
        b.assert_zero(
            "store value hi",
            f.is_store.clone() * (res_hi.clone() - &l.rv2[1]),
        );
        let ts = l.clk.clone() * c(4);
        let ts1 = ts.clone() + c(1);
        let ts2 = ts.clone() + c(2);
        let ts3 = ts + c(3);
        b.send(
            bus::MEMOP,
            vec![
                ts1.clone(),
                l.rv1[0].clone(),
                l.rv1[1].clone(),
                l.dec.imm[0].clone(),
                l.dec.imm[1].clone(),
                res_lo.clone(),
                res_hi.clone(),
                l.dec.op.clone(),
            ],
            f.is_load.clone() + &f.is_store,
        );

        // 12. Sequencing.
        let tr = b.is_transition();
        b.assert_zero(
            "clk increments",
            tr.clone() * (n.clk.clone() - &l.clk - one()),
        );
        b.assert_zero(
            "pc follows next_pc",
            tr.clone() * (one() - &n.dec.flags.is_pad) * (n.pc.clone() - &l.next_pc),
        );
        let running = one() - &f.is_pad - &l.is_halt;
        match self.end_pc {
            None => b.assert_zero(
                "real rows continue",
                tr.clone() * running * &n.dec.flags.is_pad,
            ),
            // A paused segment: the real row before the padding continues at the public end pc. No
            // transition selector is needed (degree 3): on the last row `is_pad = 1` and `is_halt = 0`
            // (a halt needs an ECALL), so `running = 0` there.
            Some(_) => b.assert_zero(
                "real rows continue or pause at the end pc",
                running * &n.dec.flags.is_pad * (l.next_pc.clone() - b.public(CPU_PUBLIC_END_PC)),
            ),
        }
        b.assert_zero(
            "halt and padding are followed by padding",
            tr * (f.is_pad.clone() + &l.is_halt) * (one() - &n.dec.flags.is_pad),
        );
        // The last real row is row `cycles - 1` (`clk` = row index): the row that pauses (real, followed by
        // padding) or halts. There is exactly one such row: the first row is real, real rows are followed by
        // real rows until the pause or the halt, and padding by padding.
        if self.cycles.is_some() {
            let last_clk = b.public(CPU_PUBLIC_CYCLES) - one();
            match self.end_pc {
                None => b.assert_zero(
                    "the halt is the segment's last cycle",
                    l.is_halt.clone() * (l.clk.clone() - &last_clk),
                ),
                Some(_) => b.assert_zero(
                    "the pause is the segment's last cycle",
                    (one() - &f.is_pad - &l.is_halt)
                        * &n.dec.flags.is_pad
                        * (l.clk.clone() - &last_clk),
                ),
            }
        }
        let first = b.is_first_row();
        b.assert_zero("first clk", first.clone() * &l.clk);
        // A real first row: its DECODE lookup hits an instruction of the program (the padding entry is the
        // only one with `is_pad = 1`), so the start pc is one, and a segment cannot be all padding (whose
        // pause constraint would be vacuous: docs/continuations.md §4).
        b.assert_zero("first row is real", first.clone() * &f.is_pad);
        b.assert_zero(
            "entry pc",
            first * (l.pc.clone() - b.public(CPU_PUBLIC_ENTRY)),
        );
        let last = b.is_last_row();
        b.assert_zero("last row is padding", last * (one() - &f.is_pad));

        // 13. ECALL: halt or a syscall.
        b.assert_bool("halt bool", l.is_halt.clone());
        b.assert_zero(
            "halt is an ecall",
            l.is_halt.clone() * (one() - &f.is_ecall),
        );
        b.assert_zero(
            "halt number",
            l.is_halt.clone() * (l.rv1[0].clone() - c(93)) * (l.rv1[0].clone() - c(94)),
        );
        b.assert_zero("halt number hi", l.is_halt.clone() * &l.rv1[1]);
        b.send(bus::HALT, vec![l.rv2[0].clone()], l.is_halt.clone());
        b.send(
            bus::ECALL,
            vec![
                ts1.clone(),
                l.rv1[0].clone(),
                l.rv1[1].clone(),
                l.rv2[0].clone(),
                l.rv2[1].clone(),
                res_lo.clone(),
                res_hi.clone(),
            ],
            f.is_ecall.clone() - &l.is_halt,
        );

        // 14. Registers.
        reg_access(
            b,
            &l.dec.rs1,
            &ts1,
            &l.r1.old_ts,
            &l.r1.d0,
            [&l.rv1[0], &l.rv1[1]],
            [&l.rv1[0], &l.rv1[1]],
            &f.rr1,
        );
        reg_access(
            b,
            &l.dec.rs2,
            &ts2,
            &l.r2.old_ts,
            &l.r2.d0,
            [&l.rv2[0], &l.rv2[1]],
            [&l.rv2[0], &l.rv2[1]],
            &f.rr2,
        );
        reg_access(
            b,
            &l.dec.rd,
            &ts3,
            &l.w.old_ts,
            &l.w.d0,
            [&l.w.old[0], &l.w.old[1]],
            [&res_lo, &res_hi],
            &f.wr,
        );
    }
}

// ---------------------------------------------------------------------------------------------------------
// Fill. The CPU rows are a pure function of (the record's cycles, the register walk's [`RegWalk`] per cycle,
// the program's [`CpuDecode`]); `trace::generate_split` does the sequential walk and either calls
// [`cpu_trace`] (host) or leaves the rows to the GPU (`zkrv_machine_cuda::tables::cpu::fill_cpu`, kernel
// `kernels/tables/cpu.cu`, which mirrors [`cpu_row`] line for line).

/// What the register walk knows about one cycle that the cycle's own event does not (20 bytes, `#[repr(C)]`,
/// uploaded to the GPU as it is): the previous-access timestamps of the three register accesses (MEMW_R
/// group) and the value the rd write overwrites. Fields of an access the instruction does not make
/// (`rr1`/`rr2`/`wr` = 0) are 0. Timestamps are `4 clk + slot` < 2^28.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct RegWalk {
    /// Timestamp of the previous access of rs1 (0: the initial token).
    pub r1_old_ts: u32,
    /// Timestamp of the previous access of rs2.
    pub r2_old_ts: u32,
    /// Timestamp of the previous access of rd.
    pub w_old_ts: u32,
    /// Value of rd before the write, two 32-bit words (lo, hi).
    pub w_old: [u32; 2],
}

/// Marks a pc with no DECODE row in [`CpuDecode::row_of_pc`].
pub const NO_DECODE_ROW: u32 = u32::MAX;

/// Largest executable span [`CpuDecode`] indexes densely: 2^26 instruction slots (256 MiB of text).
pub const MAX_DECODE_SLOTS: usize = 1 << 26;

/// The per-program decode data of the CPU fill: the DECODE rows and a dense pc -> row index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuDecode {
    /// pc of slot 0 of [`Self::row_of_pc`] (the lowest pc with a row; 0 if there is none).
    pub base_pc: u32,
    /// `row_of_pc[(pc - base_pc) / 4]`: DECODE row of `pc`, or [`NO_DECODE_ROW`]. Covers the pcs from the
    /// lowest to the highest one with a row.
    pub row_of_pc: Vec<u32>,
    /// The DECODE preprocessed rows, `rows x 23` row-major u64 ([`DecodePrepCols`] layout: pc, then the 22
    /// [`DecodedCols`] fields), row 0 = the padding entry; not padded to a power of two.
    pub rows: Vec<u64>,
}

impl CpuDecode {
    /// The decode data of `table`. Errors if the executable span exceeds [`MAX_DECODE_SLOTS`].
    pub fn new(table: &DecodeTable) -> Result<Self, MachineError> {
        let mut rows = Vec::with_capacity(table.rows.len() * NUM_DECODE_PREP_COLS);
        for r in &table.rows {
            let mut flat = [0u64; NUM_DECODE_PREP_COLS];
            *DecodePrepCols::from_row_mut(&mut flat) = *r;
            rows.extend_from_slice(&flat);
        }
        let pcs = || table.rows.iter().skip(1).map(|r| r.pc);
        let (Some(lo), Some(hi)) = (pcs().min(), pcs().max()) else {
            return Ok(CpuDecode {
                base_pc: 0,
                row_of_pc: Vec::new(),
                rows,
            });
        };
        let slots = ((hi - lo) / 4 + 1) as usize;
        if slots > MAX_DECODE_SLOTS {
            return Err(MachineError::BadProgram(format!(
                "executable span {lo:#x}..={hi:#x} has more than {MAX_DECODE_SLOTS} instruction slots"
            )));
        }
        let mut row_of_pc = vec![NO_DECODE_ROW; slots];
        for (k, r) in table.rows.iter().enumerate().skip(1) {
            row_of_pc[((r.pc - lo) / 4) as usize] = k as u32;
        }
        Ok(CpuDecode {
            base_pc: lo as u32,
            row_of_pc,
            rows,
        })
    }

    /// DECODE row of `pc`, if it has one.
    pub fn row_of(&self, pc: u32) -> Option<usize> {
        let off = pc.checked_sub(self.base_pc)?;
        if off % 4 != 0 {
            return None;
        }
        match *self.row_of_pc.get((off / 4) as usize)? {
            NO_DECODE_ROW => None,
            r => Some(r as usize),
        }
    }

    /// Number of DECODE rows.
    pub fn len(&self) -> usize {
        self.rows.len() / NUM_DECODE_PREP_COLS
    }

    /// Whether there are no rows (never for a table from [`DecodeTable::new`]).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The decoded fields of DECODE row `row` (< [`Self::len`]).
    pub fn fields(&self, row: usize) -> &DecodedCols<u64> {
        let k = row * NUM_DECODE_PREP_COLS;
        &DecodePrepCols::from_row(&self.rows[k..k + NUM_DECODE_PREP_COLS]).dec
    }
}

/// Height of the CPU table for `cycles` executed instructions: the next power of two > cycles (at least one
/// padding row, whose pc = 0 ends the run), at least `min_height`.
pub fn cpu_height(cycles: usize, min_height: usize) -> usize {
    (cycles + 1).next_power_of_two().max(min_height)
}

/// The `res` value of a cycle (before the split into halves): the store value, the branch condition, else
/// the value the instruction produced (`rd_val`; ECALL: a0 after the call).
pub fn cpu_result(ev: &CycleEvent, d: &DecodedCols<u64>) -> u64 {
    if d.flags.is_store == 1 {
        ev.rs2_val
    } else if d.flags.is_branch == 1 {
        (match d.op {
            bus::alu::EQ => ev.rs1_val == ev.rs2_val,
            bus::alu::SLT => (ev.rs1_val as i64) < (ev.rs2_val as i64),
            _ => ev.rs1_val < ev.rs2_val,
        }) as u64
    } else {
        ev.rd_val
    }
}

fn halves(x: u64) -> [u64; 4] {
    [x & 0xffff, (x >> 16) & 0xffff, (x >> 32) & 0xffff, x >> 48]
}

/// Row `i` of the CPU table (a real row: `i < cycles.len()`): the event, its walk entry and its decoded
/// instruction `d` (the DECODE row of the event's pc). Adds the row's BITWISE lookups (4 `RANGE16` of the
/// result halves, 2 per register access) to `lookups`.
pub fn cpu_row(
    i: usize,
    cycles: &[CycleEvent],
    w: &RegWalk,
    d: &DecodedCols<u64>,
    lookups: &mut Lookups,
) -> CpuCols<u64> {
    let ev = &cycles[i];
    let fl = &d.flags;
    let mut r = CpuCols::<u64> {
        pc: ev.pc as u64,
        clk: i as u64,
        dec: *d,
        ..Default::default()
    };
    let ts = 4 * i as u64;
    let rv1 = if fl.rr1 == 1 { ev.rs1_val } else { 0 };
    let rv2 = if fl.rr2 == 1 { ev.rs2_val } else { 0 };
    r.rv1 = words(rv1);
    r.rv2 = words(rv2);
    let res = cpu_result(ev, d);
    r.res = halves(res);
    for h in r.res {
        lookups.u16(h);
    }
    r.next_pc = cycles
        .get(i + 1)
        .map(|e| e.pc as u64)
        .unwrap_or(ev.pc as u64 + 4);
    r.taken = ((fl.is_branch == 1 && res == 1 - fl.neg) || fl.is_jal == 1) as u64;
    if fl.is_jalr == 1 {
        r.jalr_bit0 = rv1.wrapping_add(d.imm[0] | (d.imm[1] << 32)) & 1;
    }
    // ECALL reads a7 as rs1 (rr1 = 1): 93/94 is the halting exit.
    r.is_halt = (fl.is_ecall == 1 && (ev.rs1_val == 93 || ev.rs1_val == 94)) as u64;
    if fl.rr1 == 1 {
        r.r1.old_ts = w.r1_old_ts as u64;
        r.r1.d0 = lookups.lt32(r.r1.old_ts, ts + 1);
    }
    if fl.rr2 == 1 {
        r.r2.old_ts = w.r2_old_ts as u64;
        r.r2.d0 = lookups.lt32(r.r2.old_ts, ts + 2);
    }
    if fl.wr == 1 {
        r.w.old_ts = w.w_old_ts as u64;
        r.w.old = [w.w_old[0] as u64, w.w_old[1] as u64];
        r.w.d0 = lookups.lt32(r.w.old_ts, ts + 3);
    }
    r
}

/// Padding row `i` (`i >= cycles`): pc = 0 (DECODE's padding entry), next_pc = 4 (the "next pc" constraint
/// holds on every row), clk continuing, res = 0 (its four `RANGE16[0]` lookups are counted by the caller).
pub fn cpu_padding_row(i: usize) -> CpuCols<u64> {
    let mut r = CpuCols::<u64> {
        clk: i as u64,
        next_pc: 4,
        ..Default::default()
    };
    r.dec.flags.is_pad = 1;
    r
}

/// The CPU main trace: `cpu_height(cycles, min_height) x 44`, natural row order, from the record's cycles,
/// the register walk (`walk[i]` for cycle i) and the program's decode data; adds the rows' BITWISE lookups
/// (padding rows included: 4 `RANGE16[0]` each) to `lookups`. The DECODE multiplicities are the caller's.
pub fn cpu_trace(
    cycles: &[CycleEvent],
    walk: &[RegWalk],
    decode: &CpuDecode,
    min_height: usize,
    lookups: &mut Lookups,
) -> Result<RowMajorMatrix, MachineError> {
    if walk.len() != cycles.len() {
        return Err(MachineError::Internal(format!(
            "register walk of {} entries for {} cycles",
            walk.len(),
            cycles.len()
        )));
    }
    let height = cpu_height(cycles.len(), min_height);
    let mut values = vec![F::ZERO; height * NUM_CPU_COLS];
    // Rows are independent given the walk: fill chunks in parallel, each worker counting its lookups into its
    // own histogram (merged at the end; a histogram is order-independent, so the result is deterministic).
    const CHUNK_ROWS: usize = 1 << 13;
    let part = values
        .par_chunks_mut(CHUNK_ROWS * NUM_CPU_COLS)
        .enumerate()
        .try_fold(Lookups::new, |mut lk, (k, chunk)| {
            for (j, out) in chunk.chunks_exact_mut(NUM_CPU_COLS).enumerate() {
                let i = k * CHUNK_ROWS + j;
                let r = if i < cycles.len() {
                    let pc = cycles[i].pc;
                    let row = decode.row_of(pc).ok_or(MachineError::NotInDecode { pc })?;
                    cpu_row(i, cycles, &walk[i], decode.fields(row), &mut lk)
                } else {
                    cpu_padding_row(i)
                };
                let mut flat = [0u64; NUM_CPU_COLS];
                *CpuCols::from_row_mut(&mut flat) = r;
                for (o, v) in out.iter_mut().zip(flat) {
                    *o = F::from_u64(v);
                }
            }
            Ok::<_, MachineError>(lk)
        })
        .try_reduce(Lookups::new, |mut a, b| {
            a.merge(&b);
            Ok(a)
        })?;
    lookups.merge(&part);
    lookups.add_n(LookupKind::U16, 0, 4 * (height - cycles.len()) as u32);
    Ok(RowMajorMatrix::new(values, NUM_CPU_COLS))
}
