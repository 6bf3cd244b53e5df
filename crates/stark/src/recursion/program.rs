//! The recursion program: a straight-line instruction set over Goldilocks with a write-once memory of
//! field cells, and its interpreter (docs/recursion.md §4).
//!
//! A [`Program`] is a list of [`Instr`]; every instruction reads cells already written and writes cells
//! not yet written (each cell is written exactly once, by one instruction). Values the program cannot
//! compute (the inner proof's roots, opened values, Merkle siblings, a nonce) enter by [`Instr::Hint`],
//! which takes the next element of the witness stream. Extension elements (`Ext3 = F[X]/(X^3 - 7)`,
//! [`crate::field::Ext3`]) are three cells `[c0, c1, c2]` ([`ExtAddr`]). Checks ([`Instr::AssertEq`], the
//! boolean of [`Instr::Select`], the range of [`Instr::Bits`], the non-zero of [`Instr::ExtInv`]) fail the
//! execution with an [`ExecError`] naming the instruction (its index and the label the builder gave it).
//!
//! [`execute`] runs a program over a witness and returns the [`Execution`]: the memory and the rows each
//! table of the recursion AIR set holds (one row per instruction of the table's kinds, [`Table`]),
//! the operands' values in each row.

use crate::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F};
use crate::poseidon2;

/// A memory cell's index.
pub type Addr = u32;
/// An extension element's three cells `[c0, c1, c2]`.
pub type ExtAddr = [Addr; 3];

/// One instruction. `dst` cells are written, the others read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// `dst = value`.
    Const { dst: Addr, value: F },
    /// `dst =` the next witness element.
    Hint { dst: Addr },
    /// `dst = a + b` (base field).
    Add { dst: Addr, a: Addr, b: Addr },
    /// `dst = a - b`.
    Sub { dst: Addr, a: Addr, b: Addr },
    /// `dst = a · b`.
    Mul { dst: Addr, a: Addr, b: Addr },
    /// `dst = a + b` (extension).
    ExtAdd {
        dst: ExtAddr,
        a: ExtAddr,
        b: ExtAddr,
    },
    /// `dst = a - b`.
    ExtSub {
        dst: ExtAddr,
        a: ExtAddr,
        b: ExtAddr,
    },
    /// `dst = a · b`.
    ExtMul {
        dst: ExtAddr,
        a: ExtAddr,
        b: ExtAddr,
    },
    /// `dst = a · b`, `b` a base cell.
    ExtMulBase { dst: ExtAddr, a: ExtAddr, b: Addr },
    /// `dst = a^-1`; the AIR checks `a · dst = 1` (the inverse is a hint of the prover); fails if `a = 0`.
    ExtInv { dst: ExtAddr, a: ExtAddr },
    /// `dst = b + bit · (a - b)` (`a` where `bit = 1`, `b` where `bit = 0`); fails unless `bit` is 0 or 1.
    Select {
        dst: Addr,
        bit: Addr,
        a: Addr,
        b: Addr,
    },
    /// Fails unless `a = b`.
    AssertEq { a: Addr, b: Addr },
    /// `dst = P(src)`, the Poseidon2 width-8 permutation ([`crate::poseidon2::permute`]).
    Poseidon2 { dst: [Addr; 8], src: [Addr; 8] },
    /// `dst..dst+n` = the `n` low bits of `src`'s canonical value, least significant first (hints the
    /// AIR checks boolean and recombining to `src`); fails if `src >= 2^n`. `n <= 64`; with `n = 64` the
    /// decomposition is the canonical one (the AIR also checks `< p`: high 32 bits all one implies low 32
    /// bits zero).
    Bits { dst: Addr, src: Addr, n: u8 },
}

/// The tables of the recursion AIR set an instruction is a row of (docs/recursion.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// Memory initialisation: [`Instr::Const`] and [`Instr::Hint`].
    Memory,
    /// Base-field ALU: [`Instr::Add`], [`Instr::Sub`], [`Instr::Mul`], [`Instr::AssertEq`].
    BaseAlu,
    /// Extension ALU: [`Instr::ExtAdd`], [`Instr::ExtSub`], [`Instr::ExtMul`], [`Instr::ExtMulBase`],
    /// [`Instr::ExtInv`].
    ExtAlu,
    /// [`Instr::Select`].
    Select,
    /// [`Instr::Poseidon2`] (the POSEIDON2 table's permutation, docs/tables.md §6.19).
    Poseidon2,
    /// [`Instr::Bits`] (one row per decomposition, 64 bit columns).
    Bits,
}

impl Table {
    /// Every table, in row-count order of [`Execution::rows`].
    pub const ALL: [Table; 6] = [
        Table::Memory,
        Table::BaseAlu,
        Table::ExtAlu,
        Table::Select,
        Table::Poseidon2,
        Table::Bits,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Table::Memory => "memory",
            Table::BaseAlu => "base_alu",
            Table::ExtAlu => "ext_alu",
            Table::Select => "select",
            Table::Poseidon2 => "poseidon2",
            Table::Bits => "bits",
        }
    }
}

impl Instr {
    /// The table this instruction is a row of.
    pub fn table(&self) -> Table {
        match self {
            Instr::Const { .. } | Instr::Hint { .. } => Table::Memory,
            Instr::Add { .. } | Instr::Sub { .. } | Instr::Mul { .. } | Instr::AssertEq { .. } => {
                Table::BaseAlu
            }
            Instr::ExtAdd { .. }
            | Instr::ExtSub { .. }
            | Instr::ExtMul { .. }
            | Instr::ExtMulBase { .. }
            | Instr::ExtInv { .. } => Table::ExtAlu,
            Instr::Select { .. } => Table::Select,
            Instr::Poseidon2 { .. } => Table::Poseidon2,
            Instr::Bits { .. } => Table::Bits,
        }
    }

    /// A short name of the kind (`"ext_mul"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Instr::Const { .. } => "const",
            Instr::Hint { .. } => "hint",
            Instr::Add { .. } => "add",
            Instr::Sub { .. } => "sub",
            Instr::Mul { .. } => "mul",
            Instr::ExtAdd { .. } => "ext_add",
            Instr::ExtSub { .. } => "ext_sub",
            Instr::ExtMul { .. } => "ext_mul",
            Instr::ExtMulBase { .. } => "ext_mul_base",
            Instr::ExtInv { .. } => "ext_inv",
            Instr::Select { .. } => "select",
            Instr::AssertEq { .. } => "assert_eq",
            Instr::Poseidon2 { .. } => "poseidon2",
            Instr::Bits { .. } => "bits",
        }
    }

    /// The cells this instruction reads, in the order its table's row receives them from the memory bus
    /// (docs/recursion.md §4.4; a cell read twice is listed twice): the one list of operands that the
    /// recursion AIR set's read counts and program check use ([`crate::recursion::air`]).
    pub fn reads(&self) -> Vec<Addr> {
        match *self {
            Instr::Const { .. } | Instr::Hint { .. } => vec![],
            Instr::Add { a, b, .. }
            | Instr::Sub { a, b, .. }
            | Instr::Mul { a, b, .. }
            | Instr::AssertEq { a, b } => vec![a, b],
            Instr::ExtAdd { a, b, .. }
            | Instr::ExtSub { a, b, .. }
            | Instr::ExtMul { a, b, .. } => a.iter().chain(&b).copied().collect(),
            Instr::ExtMulBase { a, b, .. } => vec![a[0], a[1], a[2], b],
            Instr::ExtInv { a, .. } => a.to_vec(),
            Instr::Select { bit, a, b, .. } => vec![bit, a, b],
            Instr::Poseidon2 { src, .. } => src.to_vec(),
            Instr::Bits { src, .. } => vec![src],
        }
    }

    /// The cells this instruction writes, in order (`Bits`: `dst .. dst + n`; empty if `n > 64`, which
    /// the interpreter and the program check refuse).
    pub fn writes(&self) -> Vec<Addr> {
        match *self {
            Instr::Const { dst, .. }
            | Instr::Hint { dst }
            | Instr::Add { dst, .. }
            | Instr::Sub { dst, .. }
            | Instr::Mul { dst, .. }
            | Instr::Select { dst, .. } => vec![dst],
            Instr::ExtAdd { dst, .. }
            | Instr::ExtSub { dst, .. }
            | Instr::ExtMul { dst, .. }
            | Instr::ExtMulBase { dst, .. }
            | Instr::ExtInv { dst, .. } => dst.to_vec(),
            Instr::AssertEq { .. } => vec![],
            Instr::Poseidon2 { dst, .. } => dst.to_vec(),
            Instr::Bits { dst, n, .. } if n <= 64 => {
                (0..n as u32).map(|k| dst.wrapping_add(k)).collect()
            }
            Instr::Bits { .. } => vec![],
        }
    }

    /// Every kind name, in [`Instr::kind`]'s order.
    pub const KINDS: [&'static str; 14] = [
        "const",
        "hint",
        "add",
        "sub",
        "mul",
        "ext_add",
        "ext_sub",
        "ext_mul",
        "ext_mul_base",
        "ext_inv",
        "select",
        "assert_eq",
        "poseidon2",
        "bits",
    ];
}

/// A straight-line program: `instrs[i]` carries label `labels[label_of[i]]` (what the builder was
/// emitting: "FRI layer 2, query 17"), named by [`ExecError`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub instrs: Vec<Instr>,
    pub label_of: Vec<u32>,
    pub labels: Vec<String>,
    /// Cells `0..num_cells` are used.
    pub num_cells: u32,
    /// The **public inputs**: [`Instr::Hint`] cells whose values the verifier of an execution fixes (the
    /// statement the program is run for), in order; [`Execution::public_inputs`] reads them back.
    pub public_inputs: Vec<Addr>,
}

impl Program {
    /// The label of instruction `i` (`""` if out of range).
    pub fn label(&self, i: usize) -> &str {
        self.label_of
            .get(i)
            .and_then(|&l| self.labels.get(l as usize))
            .map_or("", String::as_str)
    }

    /// Instructions per kind ([`Instr::KINDS`] order).
    pub fn kind_counts(&self) -> Vec<(&'static str, usize)> {
        Instr::KINDS
            .iter()
            .map(|&k| (k, self.instrs.iter().filter(|i| i.kind() == k).count()))
            .collect()
    }

    /// Rows per table ([`Table::ALL`] order): the instructions of the table's kinds.
    pub fn table_rows(&self) -> Vec<(Table, usize)> {
        Table::ALL
            .iter()
            .map(|&t| (t, self.instrs.iter().filter(|i| i.table() == t).count()))
            .collect()
    }
}

/// What failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecFailure {
    #[error("assert_eq: {a} != {b}")]
    NotEqual { a: u64, b: u64 },
    #[error("select: the bit is {0}, not 0 or 1")]
    NotBoolean(u64),
    #[error("bits: {value} does not fit in {n} bits")]
    Range { value: u64, n: u8 },
    #[error("ext_inv: zero has no inverse")]
    Zero,
    #[error("cell {0} read before it is written")]
    Unwritten(Addr),
    #[error("cell {0} written twice")]
    WrittenTwice(Addr),
    #[error("cell {0} out of the program's memory")]
    OutOfMemory(Addr),
    #[error("the witness has no more elements")]
    WitnessExhausted,
    #[error("the witness has {0} elements left over")]
    WitnessLeftOver(usize),
    #[error("bits: n = {0} > 64")]
    TooManyBits(u8),
}

/// An execution that failed at instruction `instr` (`usize::MAX`: after the last one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("instruction {instr} ({kind}, `{label}`): {failure}")]
pub struct ExecError {
    pub instr: usize,
    pub kind: &'static str,
    pub label: String,
    pub failure: ExecFailure,
}

/// A completed execution.
#[derive(Clone, Debug)]
pub struct Execution {
    /// The value of every cell.
    pub memory: Vec<F>,
    /// Per table ([`Table::ALL`] order), one row per instruction of the table: the values of its operands,
    /// `dst` first then the inputs in field order (`Poseidon2`: the 8 outputs then the 8 inputs; `Bits`:
    /// `src` then the 64 bit cells, zero past `n`).
    pub rows: Vec<(Table, Vec<Vec<F>>)>,
}

impl Execution {
    /// The values of `program`'s public-input cells ([`Program::public_inputs`]), in order: what a
    /// verifier of the execution compares with the statement's (for the verifier program,
    /// `crate::recursion::verifier::public_inputs`).
    pub fn public_inputs(&self, program: &Program) -> Vec<F> {
        program
            .public_inputs
            .iter()
            .map(|&a| self.memory[a as usize])
            .collect()
    }
}

/// The memory an instruction runs against: every cell written once.
pub(crate) struct Memory {
    pub(crate) cells: Vec<Option<F>>,
}

impl Memory {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            cells: vec![None; n],
        }
    }

    fn get(&self, a: Addr) -> Result<F, ExecFailure> {
        match self.cells.get(a as usize) {
            Some(Some(v)) => Ok(*v),
            Some(None) => Err(ExecFailure::Unwritten(a)),
            None => Err(ExecFailure::OutOfMemory(a)),
        }
    }

    fn set(&mut self, a: Addr, v: F) -> Result<(), ExecFailure> {
        if a as usize >= self.cells.len() {
            self.cells.resize(a as usize + 1, None);
        }
        let c = &mut self.cells[a as usize];
        if c.is_some() {
            return Err(ExecFailure::WrittenTwice(a));
        }
        *c = Some(v);
        Ok(())
    }

    fn ext(&self, a: ExtAddr) -> Result<Ext3, ExecFailure> {
        Ok(Ext3([self.get(a[0])?, self.get(a[1])?, self.get(a[2])?]))
    }

    fn set_ext(&mut self, a: ExtAddr, v: Ext3) -> Result<(), ExecFailure> {
        (0..3).try_for_each(|k| self.set(a[k], v.0[k]))
    }
}

/// Runs one instruction: writes its `dst` cells, and returns its row (operand values, [`Execution::rows`])
/// and the check that failed if one did. A failed check still writes the instruction's algebraic result
/// (so that the builder, which evaluates as it emits, can go on: [`crate::recursion::Builder`]); a memory
/// or witness fault is an `Err`.
pub(crate) fn step(
    instr: &Instr,
    mem: &mut Memory,
    witness: &mut dyn Iterator<Item = F>,
) -> Result<(Vec<F>, Option<ExecFailure>), ExecFailure> {
    let ext_row = |d: Ext3, a: Ext3, b: &[F]| -> Vec<F> {
        d.0.iter().chain(&a.0).chain(b).copied().collect()
    };
    Ok(match *instr {
        Instr::Const { dst, value } => {
            mem.set(dst, value)?;
            (vec![value], None)
        }
        Instr::Hint { dst } => {
            let v = witness.next().ok_or(ExecFailure::WitnessExhausted)?;
            mem.set(dst, v)?;
            (vec![v], None)
        }
        Instr::Add { dst, a, b } | Instr::Sub { dst, a, b } | Instr::Mul { dst, a, b } => {
            let (x, y) = (mem.get(a)?, mem.get(b)?);
            let v = match instr {
                Instr::Add { .. } => x + y,
                Instr::Sub { .. } => x - y,
                _ => x * y,
            };
            mem.set(dst, v)?;
            (vec![v, x, y], None)
        }
        Instr::ExtAdd { dst, a, b } | Instr::ExtSub { dst, a, b } | Instr::ExtMul { dst, a, b } => {
            let (x, y) = (mem.ext(a)?, mem.ext(b)?);
            let v = match instr {
                Instr::ExtAdd { .. } => x + y,
                Instr::ExtSub { .. } => x - y,
                _ => x * y,
            };
            mem.set_ext(dst, v)?;
            (ext_row(v, x, &y.0), None)
        }
        Instr::ExtMulBase { dst, a, b } => {
            let (x, y) = (mem.ext(a)?, mem.get(b)?);
            let v = x * y;
            mem.set_ext(dst, v)?;
            (ext_row(v, x, &[y]), None)
        }
        Instr::ExtInv { dst, a } => {
            let x = mem.ext(a)?;
            let inv = x.try_inverse();
            let v = inv.unwrap_or(Ext3::ZERO);
            mem.set_ext(dst, v)?;
            (
                ext_row(v, x, &[]),
                inv.is_none().then_some(ExecFailure::Zero),
            )
        }
        Instr::Select { dst, bit, a, b } => {
            let (s, x, y) = (mem.get(bit)?, mem.get(a)?, mem.get(b)?);
            let v = y + s * (x - y);
            mem.set(dst, v)?;
            let bad = (s != F::ZERO && s != F::ONE)
                .then(|| ExecFailure::NotBoolean(s.as_canonical_u64()));
            (vec![v, s, x, y], bad)
        }
        Instr::AssertEq { a, b } => {
            let (x, y) = (mem.get(a)?, mem.get(b)?);
            let bad = (x != y).then(|| ExecFailure::NotEqual {
                a: x.as_canonical_u64(),
                b: y.as_canonical_u64(),
            });
            (vec![x, y], bad)
        }
        Instr::Poseidon2 { dst, src } => {
            let mut s = [F::ZERO; 8];
            for (x, &a) in s.iter_mut().zip(&src) {
                *x = mem.get(a)?;
            }
            let input = s;
            poseidon2::permute(&mut s);
            for (&a, &v) in dst.iter().zip(&s) {
                mem.set(a, v)?;
            }
            (s.iter().chain(&input).copied().collect(), None)
        }
        Instr::Bits { dst, src, n } => {
            if n > 64 {
                return Err(ExecFailure::TooManyBits(n));
            }
            let x = mem.get(src)?.as_canonical_u64();
            let mut row = vec![F::from_u64(x)];
            for k in 0..n as u32 {
                let b = F::from_u64((x >> k) & 1);
                mem.set(dst + k, b)?;
                row.push(b);
            }
            row.resize(65, F::ZERO);
            let bad = (n < 64 && x >> n != 0).then_some(ExecFailure::Range { value: x, n });
            (row, bad)
        }
    })
}

/// Execute `program` over `witness` (consumed in order by its [`Instr::Hint`]s, all of it). Stops at the
/// first failed check or memory fault ([`ExecError`]).
pub fn execute(program: &Program, witness: &[F]) -> Result<Execution, ExecError> {
    let mut mem = Memory::new(program.num_cells as usize);
    let mut wit = witness.iter().copied();
    let mut rows: Vec<(Table, Vec<Vec<F>>)> = Table::ALL.iter().map(|&t| (t, Vec::new())).collect();
    let fail = |i: usize, failure: ExecFailure| ExecError {
        instr: i,
        kind: program.instrs.get(i).map_or("end", Instr::kind),
        label: program.label(i).to_string(),
        failure,
    };
    for (i, instr) in program.instrs.iter().enumerate() {
        match step(instr, &mut mem, &mut wit) {
            Ok((row, None)) => {
                let t = Table::ALL
                    .iter()
                    .position(|&t| t == instr.table())
                    .unwrap_or(0);
                rows[t].1.push(row);
            }
            Ok((_, Some(f))) | Err(f) => return Err(fail(i, f)),
        }
    }
    let left = wit.count();
    if left > 0 {
        return Err(fail(usize::MAX, ExecFailure::WitnessLeftOver(left)));
    }
    let memory = mem.cells.iter().map(|c| c.unwrap_or(F::ZERO)).collect();
    Ok(Execution { memory, rows })
}
