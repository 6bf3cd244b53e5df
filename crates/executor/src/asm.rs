//! A tiny RV64IM encoder for tests and benchmarks: each function returns one 32-bit word.
//! Register arguments are indices 0..32 (masked); immediates are truncated to their field.

#![allow(missing_docs)]

/// R-type.
pub const fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opcode: u32) -> u32 {
    (f7 << 25) | ((rs2 & 31) << 20) | ((rs1 & 31) << 15) | (f3 << 12) | ((rd & 31) << 7) | opcode
}
/// I-type (12-bit immediate).
pub const fn i(imm: i32, rs1: u32, f3: u32, rd: u32, opcode: u32) -> u32 {
    (((imm as u32) & 0xfff) << 20) | ((rs1 & 31) << 15) | (f3 << 12) | ((rd & 31) << 7) | opcode
}
/// S-type.
pub const fn s(imm: i32, rs2: u32, rs1: u32, f3: u32, opcode: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 5) & 0x7f) << 25)
        | ((rs2 & 31) << 20)
        | ((rs1 & 31) << 15)
        | (f3 << 12)
        | ((imm & 31) << 7)
        | opcode
}
/// B-type (byte offset, multiple of 2).
pub const fn b(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 12) & 1) << 31)
        | (((imm >> 5) & 0x3f) << 25)
        | ((rs2 & 31) << 20)
        | ((rs1 & 31) << 15)
        | (f3 << 12)
        | (((imm >> 1) & 0xf) << 8)
        | (((imm >> 11) & 1) << 7)
        | 0x63
}
/// U-type (`imm` is the 20-bit upper immediate, not shifted).
pub const fn u(imm20: u32, rd: u32, opcode: u32) -> u32 {
    ((imm20 & 0xfffff) << 12) | ((rd & 31) << 7) | opcode
}
/// J-type (byte offset, multiple of 2).
pub const fn j(imm: i32, rd: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 20) & 1) << 31)
        | (((imm >> 1) & 0x3ff) << 21)
        | (((imm >> 11) & 1) << 20)
        | (((imm >> 12) & 0xff) << 12)
        | ((rd & 31) << 7)
        | 0x6f
}

pub const fn lui(rd: u32, imm20: u32) -> u32 {
    u(imm20, rd, 0x37)
}
pub const fn auipc(rd: u32, imm20: u32) -> u32 {
    u(imm20, rd, 0x17)
}
pub const fn jal(rd: u32, off: i32) -> u32 {
    j(off, rd)
}
pub const fn jalr(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x67)
}
pub const fn beq(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 0)
}
pub const fn bne(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 1)
}
pub const fn blt(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 4)
}
pub const fn bge(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 5)
}
pub const fn bltu(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 6)
}
pub const fn bgeu(rs1: u32, rs2: u32, off: i32) -> u32 {
    b(off, rs2, rs1, 7)
}
/// Load with funct3 `f3` (0 LB, 1 LH, 2 LW, 3 LD, 4 LBU, 5 LHU, 6 LWU).
pub const fn load(f3: u32, rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, f3, rd, 0x03)
}
/// Store with funct3 `f3` (0 SB, 1 SH, 2 SW, 3 SD).
pub const fn store(f3: u32, rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, f3, 0x23)
}
pub const fn ld(rd: u32, rs1: u32, imm: i32) -> u32 {
    load(3, rd, rs1, imm)
}
pub const fn lw(rd: u32, rs1: u32, imm: i32) -> u32 {
    load(2, rd, rs1, imm)
}
pub const fn lbu(rd: u32, rs1: u32, imm: i32) -> u32 {
    load(4, rd, rs1, imm)
}
pub const fn sd(rs2: u32, rs1: u32, imm: i32) -> u32 {
    store(3, rs2, rs1, imm)
}
pub const fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    store(2, rs2, rs1, imm)
}
pub const fn sb(rs2: u32, rs1: u32, imm: i32) -> u32 {
    store(0, rs2, rs1, imm)
}
pub const fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x13)
}
pub const fn slti(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 2, rd, 0x13)
}
pub const fn sltiu(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 3, rd, 0x13)
}
pub const fn xori(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 4, rd, 0x13)
}
pub const fn ori(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 6, rd, 0x13)
}
pub const fn andi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 7, rd, 0x13)
}
pub const fn slli(rd: u32, rs1: u32, sh: u32) -> u32 {
    i((sh & 63) as i32, rs1, 1, rd, 0x13)
}
pub const fn srli(rd: u32, rs1: u32, sh: u32) -> u32 {
    i((sh & 63) as i32, rs1, 5, rd, 0x13)
}
pub const fn srai(rd: u32, rs1: u32, sh: u32) -> u32 {
    i((0x400 | (sh & 63)) as i32, rs1, 5, rd, 0x13)
}
pub const fn addiw(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x1b)
}
pub const fn slliw(rd: u32, rs1: u32, sh: u32) -> u32 {
    i((sh & 31) as i32, rs1, 1, rd, 0x1b)
}
pub const fn srliw(rd: u32, rs1: u32, sh: u32) -> u32 {
    i((sh & 31) as i32, rs1, 5, rd, 0x1b)
}
pub const fn sraiw(rd: u32, rs1: u32, sh: u32) -> u32 {
    i((0x400 | (sh & 31)) as i32, rs1, 5, rd, 0x1b)
}
/// OP (opcode 0x33) with funct7/funct3: e.g. `op(0, 0, ..)` ADD, `op(0x20, 0, ..)` SUB,
/// `op(1, 4, ..)` DIV.
pub const fn op(f7: u32, f3: u32, rd: u32, rs1: u32, rs2: u32) -> u32 {
    r(f7, rs2, rs1, f3, rd, 0x33)
}
/// OP-32 (opcode 0x3b) with funct7/funct3: e.g. `op32(0, 0, ..)` ADDW, `op32(1, 4, ..)` DIVW.
pub const fn op32(f7: u32, f3: u32, rd: u32, rs1: u32, rs2: u32) -> u32 {
    r(f7, rs2, rs1, f3, rd, 0x3b)
}
pub const fn add(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(0, 0, rd, rs1, rs2)
}
pub const fn sub(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(0x20, 0, rd, rs1, rs2)
}
pub const fn xor(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(0, 4, rd, rs1, rs2)
}
pub const fn or(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(0, 6, rd, rs1, rs2)
}
pub const fn and(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(0, 7, rd, rs1, rs2)
}
pub const fn mul(rd: u32, rs1: u32, rs2: u32) -> u32 {
    op(1, 0, rd, rs1, rs2)
}
pub const ECALL: u32 = 0x0000_0073;
pub const EBREAK: u32 = 0x0010_0073;
pub const FENCE: u32 = 0x0ff0_000f;

/// `li rd, v` for any 64-bit `v` (up to 8 words: LUI/ADDIW then shifts/ADDIs).
pub fn li(rd: u32, v: i64) -> Vec<u32> {
    if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        let lo = ((v << 52) >> 52) as i32;
        let hi = ((v as i32).wrapping_sub(lo) as u32) >> 12;
        if hi == 0 {
            return vec![addi(rd, 0, lo)];
        }
        return vec![lui(rd, hi), addiw(rd, rd, lo)];
    }
    // Recursive: v = (upper << shift) + lo12
    let lo = ((v << 52) >> 52) as i32;
    let rest = v.wrapping_sub(lo as i64) >> 12;
    let mut out = li(rd, rest);
    out.push(slli(rd, rd, 12));
    if lo != 0 {
        out.push(addi(rd, rd, lo));
    }
    out
}
