//! RV64IM instruction decoding into a compact pre-decoded form.
//!
//! Every 32-bit word of the executable segments is decoded once, when the [`crate::Program`] is
//! built, into an 8-byte [`Inst`]. Register fields that an instruction format does not have are
//! set to 0 (`x0`), so the interpreter can read `regs[rs1]`, `regs[rs2]` and write `regs[rd]`
//! unconditionally (U/J types have `rs1 = rs2 = 0`, I types `rs2 = 0`, S/B types `rd = 0`).
//! Source: The RISC-V Instruction Set Manual, Volume I (unprivileged), chapters 2 (RV32I),
//! 4 (RV64I) and 13 (M).

/// Operation of a decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Op {
    Lui,
    Auipc,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Ld,
    Lbu,
    Lhu,
    Lwu,
    Sb,
    Sh,
    Sw,
    Sd,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Addiw,
    Slliw,
    Srliw,
    Sraiw,
    Addw,
    Subw,
    Sllw,
    Srlw,
    Sraw,
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    Div,
    Divu,
    Rem,
    Remu,
    Mulw,
    Divw,
    Divuw,
    Remw,
    Remuw,
    /// FENCE and FENCE.I: no-ops (single hart, no caches to synchronise).
    Fence,
    Ecall,
    /// Not a valid RV64IM instruction; executing it is an error (the reason comes from
    /// re-decoding the raw word with [`decode`]).
    Illegal,
    /// A slot of the decoded array that lies outside every executable segment.
    NoCode,
}

/// A pre-decoded instruction: 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// Destination register index (0 when the format has none).
    pub rd: u8,
    /// First source register index (0 when the format has none).
    pub rs1: u8,
    /// Second source register index (0 when the format has none).
    pub rs2: u8,
    /// Sign-extended immediate (for shifts by immediate: the shift amount; for LUI/AUIPC: the
    /// already shifted `imm << 12`).
    pub imm: i32,
}

impl Inst {
    pub(crate) const ILLEGAL: Inst = Inst {
        op: Op::Illegal,
        rd: 0,
        rs1: 0,
        rs2: 0,
        imm: 0,
    };
    pub(crate) const NO_CODE: Inst = Inst {
        op: Op::NoCode,
        rd: 0,
        rs1: 0,
        rs2: 0,
        imm: 0,
    };
}

#[inline]
fn rd(w: u32) -> u8 {
    ((w >> 7) & 31) as u8
}
#[inline]
fn rs1(w: u32) -> u8 {
    ((w >> 15) & 31) as u8
}
#[inline]
fn rs2(w: u32) -> u8 {
    ((w >> 20) & 31) as u8
}
#[inline]
fn funct3(w: u32) -> u32 {
    (w >> 12) & 7
}
#[inline]
fn funct7(w: u32) -> u32 {
    w >> 25
}
#[inline]
fn imm_i(w: u32) -> i32 {
    (w as i32) >> 20
}
#[inline]
fn imm_s(w: u32) -> i32 {
    ((w as i32) >> 25 << 5) | ((w >> 7) & 31) as i32
}
#[inline]
fn imm_b(w: u32) -> i32 {
    ((w as i32) >> 31 << 12)
        | (((w >> 7) & 1) << 11) as i32
        | (((w >> 25) & 0x3f) << 5) as i32
        | (((w >> 8) & 0xf) << 1) as i32
}
#[inline]
fn imm_u(w: u32) -> i32 {
    (w & 0xffff_f000) as i32
}
#[inline]
fn imm_j(w: u32) -> i32 {
    ((w as i32) >> 31 << 20)
        | (w & 0x000f_f000) as i32
        | (((w >> 20) & 1) << 11) as i32
        | (((w >> 21) & 0x3ff) << 1) as i32
}

fn r(op: Op, w: u32) -> Inst {
    Inst {
        op,
        rd: rd(w),
        rs1: rs1(w),
        rs2: rs2(w),
        imm: 0,
    }
}
fn i(op: Op, w: u32) -> Inst {
    Inst {
        op,
        rd: rd(w),
        rs1: rs1(w),
        rs2: 0,
        imm: imm_i(w),
    }
}
fn sh(op: Op, w: u32, shamt: u32) -> Inst {
    Inst {
        op,
        rd: rd(w),
        rs1: rs1(w),
        rs2: 0,
        imm: shamt as i32,
    }
}

/// Decodes one 32-bit instruction word. The error is a human-readable reason.
pub fn decode(w: u32) -> Result<Inst, &'static str> {
    use Op::*;
    if w == 0 {
        return Err("illegal instruction (all-zero word)");
    }
    if w & 3 != 3 {
        return Err("compressed instruction (C extension is not supported)");
    }
    let f3 = funct3(w);
    let f7 = funct7(w);
    let inst = match w & 0x7f {
        0x37 => Inst {
            op: Lui,
            rd: rd(w),
            rs1: 0,
            rs2: 0,
            imm: imm_u(w),
        },
        0x17 => Inst {
            op: Auipc,
            rd: rd(w),
            rs1: 0,
            rs2: 0,
            imm: imm_u(w),
        },
        0x6f => Inst {
            op: Jal,
            rd: rd(w),
            rs1: 0,
            rs2: 0,
            imm: imm_j(w),
        },
        0x67 => {
            if f3 != 0 {
                return Err("JALR with funct3 != 0");
            }
            i(Jalr, w)
        }
        0x63 => {
            let op = match f3 {
                0 => Beq,
                1 => Bne,
                4 => Blt,
                5 => Bge,
                6 => Bltu,
                7 => Bgeu,
                _ => return Err("branch with reserved funct3"),
            };
            Inst {
                op,
                rd: 0,
                rs1: rs1(w),
                rs2: rs2(w),
                imm: imm_b(w),
            }
        }
        0x03 => {
            let op = match f3 {
                0 => Lb,
                1 => Lh,
                2 => Lw,
                3 => Ld,
                4 => Lbu,
                5 => Lhu,
                6 => Lwu,
                _ => return Err("load with reserved funct3"),
            };
            i(op, w)
        }
        0x23 => {
            let op = match f3 {
                0 => Sb,
                1 => Sh,
                2 => Sw,
                3 => Sd,
                _ => return Err("store with reserved funct3"),
            };
            Inst {
                op,
                rd: 0,
                rs1: rs1(w),
                rs2: rs2(w),
                imm: imm_s(w),
            }
        }
        0x13 => match f3 {
            0 => i(Addi, w),
            2 => i(Slti, w),
            3 => i(Sltiu, w),
            4 => i(Xori, w),
            6 => i(Ori, w),
            7 => i(Andi, w),
            1 | 5 => {
                let shamt = (w >> 20) & 0x3f;
                match (f3, w >> 26) {
                    (1, 0) => sh(Slli, w, shamt),
                    (5, 0) => sh(Srli, w, shamt),
                    (5, 0x10) => sh(Srai, w, shamt),
                    _ => return Err("shift-immediate with reserved funct6"),
                }
            }
            _ => unreachable!("funct3 is 3 bits"),
        },
        0x1b => match f3 {
            0 => i(Addiw, w),
            1 | 5 => {
                let shamt = (w >> 20) & 0x1f;
                match (f3, f7) {
                    (1, 0) => sh(Slliw, w, shamt),
                    (5, 0) => sh(Srliw, w, shamt),
                    (5, 0x20) => sh(Sraiw, w, shamt),
                    _ => return Err("32-bit shift-immediate with reserved funct7 or shamt[5] set"),
                }
            }
            _ => return Err("OP-IMM-32 with reserved funct3"),
        },
        0x33 => {
            let op = match (f7, f3) {
                (0, 0) => Add,
                (0x20, 0) => Sub,
                (0, 1) => Sll,
                (0, 2) => Slt,
                (0, 3) => Sltu,
                (0, 4) => Xor,
                (0, 5) => Srl,
                (0x20, 5) => Sra,
                (0, 6) => Or,
                (0, 7) => And,
                (1, 0) => Mul,
                (1, 1) => Mulh,
                (1, 2) => Mulhsu,
                (1, 3) => Mulhu,
                (1, 4) => Div,
                (1, 5) => Divu,
                (1, 6) => Rem,
                (1, 7) => Remu,
                _ => return Err("OP with reserved funct7/funct3"),
            };
            r(op, w)
        }
        0x3b => {
            let op = match (f7, f3) {
                (0, 0) => Addw,
                (0x20, 0) => Subw,
                (0, 1) => Sllw,
                (0, 5) => Srlw,
                (0x20, 5) => Sraw,
                (1, 0) => Mulw,
                (1, 4) => Divw,
                (1, 5) => Divuw,
                (1, 6) => Remw,
                (1, 7) => Remuw,
                _ => return Err("OP-32 with reserved funct7/funct3"),
            };
            r(op, w)
        }
        0x0f => match f3 {
            0 | 1 => Inst {
                op: Fence,
                rd: 0,
                rs1: 0,
                rs2: 0,
                imm: 0,
            },
            _ => return Err("MISC-MEM with reserved funct3"),
        },
        0x73 => match w {
            0x0000_0073 => Inst {
                op: Ecall,
                rd: 0,
                rs1: 0,
                rs2: 0,
                imm: 0,
            },
            0x0010_0073 => return Err("EBREAK is not supported"),
            _ => return Err("SYSTEM/CSR instruction (Zicsr is not supported)"),
        },
        0x2f => return Err("atomic instruction (A extension is not supported)"),
        0x07 | 0x27 | 0x43 | 0x47 | 0x4b | 0x4f | 0x53 => {
            return Err("floating-point instruction (F/D extensions are not supported)")
        }
        _ => return Err("unknown opcode"),
    };
    Ok(inst)
}

/// Register slot that receives writes to x0 in the interpreter's 64-entry register array
/// (so x0 never needs resetting; the slot doubles as the record's "produced value").
pub(crate) const X0_SINK: u8 = 32;

/// Decodes `w` for the interpreter: an invalid word becomes [`Op::Illegal`], and `rd = x0`
/// (including formats without rd) becomes [`X0_SINK`].
pub(crate) fn decode_or_illegal(w: u32) -> Inst {
    let mut inst = decode(w).unwrap_or(Inst::ILLEGAL);
    if inst.rd == 0 {
        inst.rd = X0_SINK;
    }
    inst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates() {
        // addi x1, x2, -1
        let d = decode(0xfff1_0093).unwrap();
        assert_eq!((d.op, d.rd, d.rs1, d.rs2, d.imm), (Op::Addi, 1, 2, 0, -1));
        // sd x5, -8(x2): imm = -8
        let d = decode(0xfe51_3c23).unwrap();
        assert_eq!((d.op, d.rs1, d.rs2, d.imm), (Op::Sd, 2, 5, -8));
        // beq x0, x0, -4 = 0xfe000ee3
        let d = decode(0xfe00_0ee3).unwrap();
        assert_eq!((d.op, d.imm), (Op::Beq, -4));
        // jal x1, 2048 = imm[11] set: 0x001000ef | (0 << ...) -> encode 2048
        let d = decode(0x0010_00ef).unwrap();
        assert_eq!((d.op, d.rd, d.imm), (Op::Jal, 1, 2048));
        // jal x0, -2^20 (most negative)
        let d = decode(0x8000_006f).unwrap();
        assert_eq!(d.imm, -(1 << 20));
        // lui x3, 0xfffff
        let d = decode(0xffff_f1b7).unwrap();
        assert_eq!((d.op, d.rd, d.imm), (Op::Lui, 3, 0xffff_f000u32 as i32));
        // srai x1, x1, 63 = 0x43f0d093
        let d = decode(0x43f0_d093).unwrap();
        assert_eq!((d.op, d.imm), (Op::Srai, 63));
        // slliw with shamt[5] set is reserved
        assert!(decode(0x0200_909b).is_err());
    }

    #[test]
    fn rejects_non_rv64im() {
        assert!(decode(0x0000_4501).unwrap_err().contains("compressed"));
        assert!(decode(0x1005_202f).unwrap_err().contains("atomic")); // lr.w
        assert!(decode(0x0000_2007).unwrap_err().contains("floating")); // flw
        assert!(decode(0x0010_0073).unwrap_err().contains("EBREAK"));
        assert!(decode(0x3000_2073).unwrap_err().contains("CSR")); // csrr
        assert!(decode(0).unwrap_err().contains("all-zero word"));
        assert!(decode(u32::MAX).is_err());
    }
}
