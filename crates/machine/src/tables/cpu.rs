//! CPU (docs/tables.md §6.1): one row per executed instruction, then padding rows (pc = 0) up to a power of
//! two (at least one). Holds the decoded instruction (checked against DECODE on every row), the operands,
//! the result, the next pc, and the register accesses inline (the MEMW_R column group, §6.4).

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{Field, PrimeCharacteristicRing, F};
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::decode::DecodedCols;

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

/// The CPU AIR of one program (the entry pc is a constant of the instance).
pub struct CpuAir {
    /// ELF entry point: the first row's pc.
    pub entry: u32,
}

impl Air for CpuAir {
    fn name(&self) -> &str {
        "CPU"
    }
    fn width(&self) -> usize {
        NUM_CPU_COLS
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
        b.assert_zero(
            "real rows continue",
            tr.clone() * running * &n.dec.flags.is_pad,
        );
        b.assert_zero(
            "halt and padding are followed by padding",
            tr * (f.is_pad.clone() + &l.is_halt) * (one() - &n.dec.flags.is_pad),
        );
        let first = b.is_first_row();
        b.assert_zero("first clk", first.clone() * &l.clk);
        b.assert_zero("entry pc", first * (l.pc.clone() - c(self.entry as u64)));
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
