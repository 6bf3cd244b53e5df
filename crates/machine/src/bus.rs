//! Bus ids and operation codes (docs/tables.md §1.5 and §2). Changing a value changes the proof system:
//! keep this file and the design document in step.

/// `RANGE16[x]`: x ∈ [0, 2^16).
pub const RANGE16: u32 = 1;
/// `BYTE[op, a, b, c]`: byte operations and byte range checks (ops [`BYTE_AND`] .. [`BYTE_MSB`]).
pub const BYTE: u32 = 2;
/// `DECODE[pc, op, rs1, rs2, rd, imm_lo, imm_hi, target, 15 flags]`.
pub const DECODE: u32 = 3;
/// `REG_TOKEN[reg, ts, lo, hi]`: register memory tokens.
pub const REG_TOKEN: u32 = 4;
/// `MEM_TOKEN[cell, ts, lo, hi]`: memory (doubleword cell) tokens.
pub const MEM_TOKEN: u32 = 5;
/// `ALU[op, a_lo, a_hi, b_lo, b_hi, r_lo, r_hi]`.
pub const ALU: u32 = 6;
/// `MEMOP[ts, base_lo, base_hi, imm_lo, imm_hi, val_lo, val_hi, op]`: CPU -> LOAD/STORE.
pub const MEMOP: u32 = 7;
/// `MEMW[addr, ts, w, v_lo, v_hi, top, is_write]`: LOAD/STORE -> MEMW_A/MEMW.
pub const MEMW: u32 = 8;
/// `ECALL[ts, a7_lo, a7_hi, a0_lo, a0_hi, ret_lo, ret_hi]`: CPU -> SYSIO.
pub const ECALL: u32 = 9;
/// `HALT[exit_code]`: CPU -> public.
pub const HALT: u32 = 10;
/// `OUTPUT[index, byte]`: SYSIO -> public.
pub const OUTPUT: u32 = 11;
/// `INPUT[index, byte]`: INPUT -> SYSIO.
pub const INPUT: u32 = 12;
/// `POW2[k, p_lo, p_hi, q_lo, q_hi, z]`: SHIFT -> POW2.
pub const POW2: u32 = 13;
/// `MSB16[x, s]`: x ∈ [0, 2^16) and s = x >> 15.
pub const MSB16: u32 = 14;
/// `IO_CHAIN[ts, addr, pos, rem]`: SYSCALL -> SYSIO -> ... -> SYSCALL, the bytes of one read/write call.
pub const IO_CHAIN: u32 = 15;
/// `[reg, lo, hi]`: a paused segment's final register values (REGFILE sends, public receives;
/// docs/continuations.md).
pub const REG_FINAL: u32 = 16;
/// `[cell, lo, hi]`: a paused segment's final memory cells (PAGE sends, public receives).
pub const MEM_FINAL: u32 = 17;

/// BYTE op: `[0, a, b, a & b]`.
pub const BYTE_AND: u64 = 0;
/// BYTE op: `[1, a, b, a | b]`.
pub const BYTE_OR: u64 = 1;
/// BYTE op: `[2, a, b, a ^ b]`.
pub const BYTE_XOR: u64 = 2;
/// BYTE op: `[3, a, b, 0]` (range check of two bytes).
pub const BYTE_PAIR: u64 = 3;
/// BYTE op: `[4, a, b, a >> 7]`.
pub const BYTE_MSB: u64 = 4;

/// ALU op codes (tuple element 0 of [`ALU`]).
pub mod alu {
    /// Defines the codes and [`ALL`], the one list of them (names as written, for generated code such as the
    /// CUDA layout header `kernels/tables/layout.cuh`).
    macro_rules! codes {
        ($($name:ident = $v:expr),* $(,)?) => {
            $(pub const $name: u64 = $v;)*
            /// Every ALU op code with its name, in code order.
            pub const ALL: &[(&str, u64)] = &[$((stringify!($name), $name)),*];
        };
    }
    codes! {
        SLT = 1,
        SLTU = 2,
        EQ = 3,
        AND = 4,
        OR = 5,
        XOR = 6,
        SLL = 7,
        SRL = 8,
        SRA = 9,
        SLL5 = 10,
        SRL5 = 11,
        SRA5 = 12,
        MUL = 13,
        MULH = 14,
        MULHSU = 15,
        MULHU = 16,
        DIV = 17,
        DIVU = 18,
        REM = 19,
        REMU = 20,
        ADDW = 21,
        SUBW = 22,
        SLLW = 23,
        SRLW = 24,
        SRAW = 25,
        MULW = 26,
        DIVW = 27,
        DIVUW = 28,
        REMW = 29,
        REMUW = 30,
    }
}

/// MEMOP codes: `w2 + 2 w4 + 3 w8 + 4 unsigned + 8 store`.
pub mod memop {
    pub const LB: u64 = 0;
    pub const LH: u64 = 1;
    pub const LW: u64 = 2;
    pub const LD: u64 = 3;
    pub const LBU: u64 = 4;
    pub const LHU: u64 = 5;
    pub const LWU: u64 = 6;
    pub const SB: u64 = 8;
    pub const SH: u64 = 9;
    pub const SW: u64 = 10;
    pub const SD: u64 = 11;
}

/// Register cells on [`REG_TOKEN`]: x0..x31, then the two I/O cursors.
pub const NUM_REG_CELLS: usize = 34;
/// Cursor register: bytes of private input consumed so far.
pub const REG_INPUT_CURSOR: u64 = 32;
/// Cursor register: bytes of public output written so far.
pub const REG_OUTPUT_CURSOR: u64 = 33;
