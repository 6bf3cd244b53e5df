//! DECODE (docs/tables.md §6.3): the program ROM, pc -> decoded instruction. Preprocessed from the ELF
//! (the verifier rebuilds it), one row per supported instruction word of the executable segments plus the
//! padding entry at pc = 0; main column: the execution count of each row.

use std::collections::HashMap;

use zkrv_executor::{decode, Inst, Op, Program};
use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F, P};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu, memop};
use crate::cols::columns;
use crate::MachineError;

/// Decoded-instruction flags (all boolean, trusted: the verifier computes them).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlagCols<T> {
    /// The padding entry (pc = 0): CPU padding rows.
    pub is_pad: T,
    /// Reads rs1 and rs1 ≠ x0.
    pub rr1: T,
    /// Reads rs2 and rs2 ≠ x0.
    pub rr2: T,
    /// Writes rd and rd ≠ x0.
    pub wr: T,
    /// ADD, ADDI: rd = rs1 + b (inline in the CPU).
    pub is_add: T,
    /// SUB: rd = rs1 - b (inline).
    pub is_sub: T,
    /// LUI, AUIPC: rd = imm (DECODE precomputes AUIPC's pc + imm).
    pub is_const: T,
    /// JAL: rd = pc + 4, next pc = target.
    pub is_jal: T,
    /// JALR: rd = pc + 4, next pc = (rs1 + imm) & !1.
    pub is_jalr: T,
    /// Conditional branch: next pc = target if taken.
    pub is_branch: T,
    /// Branch taken when the comparison result is 0 (BNE, BGE, BGEU).
    pub neg: T,
    /// The result (or branch condition) comes from another table over the ALU bus.
    pub is_alu: T,
    /// Load (MEMOP to LOAD).
    pub is_load: T,
    /// Store (MEMOP to STORE).
    pub is_store: T,
    /// ECALL (rs1 = a7, rs2 = a0, rd = a0).
    pub is_ecall: T,
}

/// The decoded fields of one instruction, in DECODE tuple order (after the pc).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodedCols<T> {
    /// ALU op code (ALU ops and branches) or MEMOP code (loads/stores), else 0 (docs/tables.md §1.5).
    pub op: T,
    pub rs1: T,
    pub rs2: T,
    pub rd: T,
    /// 64-bit operand constant as two 32-bit words: sign-extended immediate (I/S-type, LUI, JALR),
    /// pc + imm (AUIPC), 0 otherwise (R-type, branches, JAL).
    pub imm: [T; 2],
    /// Branch/JAL target pc + offset as a field element (computed in integers), 0 otherwise.
    pub target: T,
    pub flags: FlagCols<T>,
}

/// DECODE preprocessed row (23 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodePrepCols<T> {
    pub pc: T,
    pub dec: DecodedCols<T>,
}
columns!(DecodePrepCols, NUM_DECODE_PREP_COLS);

/// DECODE main row: the number of CPU rows that looked this entry up.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeCols<T> {
    pub m: T,
}
columns!(DecodeCols, NUM_DECODE_COLS);

impl<T: Clone> DecodedCols<T> {
    /// The DECODE tuple after the pc: `[op, rs1, rs2, rd, imm_lo, imm_hi, target, flags...]`.
    pub fn tuple(&self) -> Vec<T> {
        let f = &self.flags;
        vec![
            self.op.clone(),
            self.rs1.clone(),
            self.rs2.clone(),
            self.rd.clone(),
            self.imm[0].clone(),
            self.imm[1].clone(),
            self.target.clone(),
            f.is_pad.clone(),
            f.rr1.clone(),
            f.rr2.clone(),
            f.wr.clone(),
            f.is_add.clone(),
            f.is_sub.clone(),
            f.is_const.clone(),
            f.is_jal.clone(),
            f.is_jalr.clone(),
            f.is_branch.clone(),
            f.neg.clone(),
            f.is_alu.clone(),
            f.is_load.clone(),
            f.is_store.clone(),
            f.is_ecall.clone(),
        ]
    }
}

/// A 64-bit value as two 32-bit words.
pub fn words(x: u64) -> [u64; 2] {
    [x & 0xffff_ffff, x >> 32]
}

/// A signed integer as a field element (canonical u64).
fn field_of_i64(x: i64) -> u64 {
    if x >= 0 {
        x as u64 % P
    } else {
        P - (x.unsigned_abs() % P)
    }
}

/// Decodes the instruction `inst` at `pc` into DECODE fields (canonical u64 values).
pub fn decode_fields(pc: u32, inst: &Inst) -> DecodedCols<u64> {
    use Op::*;
    let mut d = DecodedCols::<u64> {
        rs1: inst.rs1 as u64,
        rs2: inst.rs2 as u64,
        rd: inst.rd as u64,
        ..Default::default()
    };
    let imm = words(inst.imm as i64 as u64);
    let f = &mut d.flags;
    f.rr1 = (inst.rs1 != 0) as u64;
    f.rr2 = (inst.rs2 != 0) as u64;
    f.wr = (inst.rd != 0) as u64;
    let alu_op = |op: u64, d: &mut DecodedCols<u64>, with_imm: bool| {
        d.op = op;
        d.flags.is_alu = 1;
        if with_imm {
            d.imm = imm;
        }
    };
    match inst.op {
        Add => d.flags.is_add = 1,
        Addi => {
            d.flags.is_add = 1;
            d.imm = imm;
        }
        Sub => d.flags.is_sub = 1,
        Lui => {
            d.flags.is_const = 1;
            d.imm = imm;
        }
        Auipc => {
            d.flags.is_const = 1;
            d.imm = words((pc as u64).wrapping_add(inst.imm as i64 as u64));
        }
        Jal => {
            d.flags.is_jal = 1;
            d.target = field_of_i64(pc as i64 + inst.imm as i64);
        }
        Jalr => {
            d.flags.is_jalr = 1;
            d.imm = imm;
        }
        Beq | Bne | Blt | Bge | Bltu | Bgeu => {
            d.flags.is_branch = 1;
            d.flags.is_alu = 1;
            d.flags.wr = 0;
            d.target = field_of_i64(pc as i64 + inst.imm as i64);
            (d.op, d.flags.neg) = match inst.op {
                Beq => (alu::EQ, 0),
                Bne => (alu::EQ, 1),
                Blt => (alu::SLT, 0),
                Bge => (alu::SLT, 1),
                Bltu => (alu::SLTU, 0),
                _ => (alu::SLTU, 1),
            };
        }
        Lb | Lh | Lw | Ld | Lbu | Lhu | Lwu => {
            d.flags.is_load = 1;
            d.imm = imm;
            d.op = match inst.op {
                Lb => memop::LB,
                Lh => memop::LH,
                Lw => memop::LW,
                Ld => memop::LD,
                Lbu => memop::LBU,
                Lhu => memop::LHU,
                _ => memop::LWU,
            };
        }
        Sb | Sh | Sw | Sd => {
            d.flags.is_store = 1;
            d.flags.wr = 0;
            d.imm = imm;
            d.op = match inst.op {
                Sb => memop::SB,
                Sh => memop::SH,
                Sw => memop::SW,
                _ => memop::SD,
            };
        }
        Slti => alu_op(alu::SLT, &mut d, true),
        Sltiu => alu_op(alu::SLTU, &mut d, true),
        Xori => alu_op(alu::XOR, &mut d, true),
        Ori => alu_op(alu::OR, &mut d, true),
        Andi => alu_op(alu::AND, &mut d, true),
        Slli => alu_op(alu::SLL, &mut d, true),
        Srli => alu_op(alu::SRL, &mut d, true),
        Srai => alu_op(alu::SRA, &mut d, true),
        Addiw => alu_op(alu::ADDW, &mut d, true),
        Slliw => alu_op(alu::SLLW, &mut d, true),
        Srliw => alu_op(alu::SRLW, &mut d, true),
        Sraiw => alu_op(alu::SRAW, &mut d, true),
        Sll => alu_op(alu::SLL, &mut d, false),
        Slt => alu_op(alu::SLT, &mut d, false),
        Sltu => alu_op(alu::SLTU, &mut d, false),
        Xor => alu_op(alu::XOR, &mut d, false),
        Srl => alu_op(alu::SRL, &mut d, false),
        Sra => alu_op(alu::SRA, &mut d, false),
        Or => alu_op(alu::OR, &mut d, false),
        And => alu_op(alu::AND, &mut d, false),
        Addw => alu_op(alu::ADDW, &mut d, false),
        Subw => alu_op(alu::SUBW, &mut d, false),
        Sllw => alu_op(alu::SLLW, &mut d, false),
        Srlw => alu_op(alu::SRLW, &mut d, false),
        Sraw => alu_op(alu::SRAW, &mut d, false),
        Mul => alu_op(alu::MUL, &mut d, false),
        Mulh => alu_op(alu::MULH, &mut d, false),
        Mulhsu => alu_op(alu::MULHSU, &mut d, false),
        Mulhu => alu_op(alu::MULHU, &mut d, false),
        Div => alu_op(alu::DIV, &mut d, false),
        Divu => alu_op(alu::DIVU, &mut d, false),
        Rem => alu_op(alu::REM, &mut d, false),
        Remu => alu_op(alu::REMU, &mut d, false),
        Mulw => alu_op(alu::MULW, &mut d, false),
        Divw => alu_op(alu::DIVW, &mut d, false),
        Divuw => alu_op(alu::DIVUW, &mut d, false),
        Remw => alu_op(alu::REMW, &mut d, false),
        Remuw => alu_op(alu::REMUW, &mut d, false),
        Ecall => {
            d.rs1 = 17;
            d.rs2 = 10;
            d.rd = 10;
            d.flags.rr1 = 1;
            d.flags.rr2 = 1;
            d.flags.wr = 1;
            d.flags.is_ecall = 1;
        }
        Fence | Illegal | NoCode => {
            d.flags.rr1 = 0;
            d.flags.rr2 = 0;
            d.flags.wr = 0;
        }
    }
    d
}

/// The fields of the padding entry (pc = 0).
pub fn padding_fields() -> DecodedCols<u64> {
    let mut d = DecodedCols::<u64>::default();
    d.flags.is_pad = 1;
    d
}

/// The DECODE table of one program: rows in address order after the padding entry (row 0).
#[derive(Clone, Debug)]
pub struct DecodeTable {
    /// Row `r`: (pc, decoded fields); row 0 is the padding entry. Not padded to a power of two.
    pub rows: Vec<DecodePrepCols<u64>>,
    /// pc -> row.
    index: HashMap<u32, usize>,
}

impl DecodeTable {
    /// Builds the table from the executable segments of `program`. Words that are not supported RV64IM
    /// instructions get no row (executing them is unprovable).
    pub fn new(program: &Program) -> Result<Self, MachineError> {
        let mut rows = vec![DecodePrepCols {
            pc: 0,
            dec: padding_fields(),
        }];
        let mut index = HashMap::new();
        for seg in program.segments.iter().filter(|s| s.executable) {
            let start = seg.vaddr.next_multiple_of(4);
            let end = seg.vaddr + seg.data.len() as u64;
            let mut pc = start;
            while pc + 4 <= end {
                let pc32 = u32::try_from(pc)
                    .map_err(|_| MachineError::BadProgram(format!("pc {pc:#x} >= 2^32")))?;
                if let Some(word) = program.word_at(pc) {
                    if let Ok(inst) = decode(word) {
                        if !matches!(inst.op, Op::Illegal | Op::NoCode)
                            && !index.contains_key(&pc32)
                        {
                            index.insert(pc32, rows.len());
                            rows.push(DecodePrepCols {
                                pc,
                                dec: decode_fields(pc32, &inst),
                            });
                        }
                    }
                }
                pc += 4;
            }
        }
        Ok(DecodeTable { rows, index })
    }

    /// Row of the instruction at `pc`, if it has one.
    pub fn row_of(&self, pc: u32) -> Option<usize> {
        self.index.get(&pc).copied()
    }

    /// Height of the committed table: the next power of two >= rows, at least `min_height`.
    pub fn height(&self, min_height: usize) -> usize {
        self.rows.len().next_power_of_two().max(min_height)
    }

    /// Preprocessed trace: `height x 23`, natural order; rows past the end repeat the padding entry.
    pub fn preprocessed_trace(&self, min_height: usize) -> RowMajorMatrix {
        let h = self.height(min_height);
        let mut values = Vec::with_capacity(h * NUM_DECODE_PREP_COLS);
        let pad = self.rows[0];
        for r in 0..h {
            let row = self.rows.get(r).unwrap_or(&pad);
            let mut flat = [0u64; NUM_DECODE_PREP_COLS];
            *DecodePrepCols::from_row_mut(&mut flat) = *row;
            values.extend(flat.iter().map(|&v| F::from_u64(v)));
        }
        RowMajorMatrix::new(values, NUM_DECODE_PREP_COLS)
    }
}

/// The DECODE AIR: `Receive DECODE[pc, fields...]` with multiplicity `m`.
pub struct DecodeAir;

impl Air for DecodeAir {
    fn name(&self) -> &str {
        "DECODE"
    }
    fn width(&self) -> usize {
        NUM_DECODE_COLS
    }
    fn column_names(&self) -> Vec<String> {
        DecodeCols::<usize>::column_names()
    }
    fn preprocessed_width(&self) -> usize {
        NUM_DECODE_PREP_COLS
    }
    fn eval(&self, b: &mut AirBuilder) {
        let prep: Vec<Expr> = (0..NUM_DECODE_PREP_COLS)
            .map(|i| b.preprocessed(i))
            .collect();
        let prep = DecodePrepCols::from_row(&prep);
        let mut tuple = vec![prep.pc.clone()];
        tuple.extend(prep.dec.tuple());
        let m = b.main(DecodeCols::<usize>::indices().m);
        b.receive(bus::DECODE, tuple, m);
    }
}
