//! The recursion AIR set (docs/recursion.md §4.4): six tables, one per [`Table`] kind, whose rows are a
//! [`Program`]'s instructions, and [`prove_program`] / [`verify_program`] over [`crate::prove`] /
//! [`crate::verify`], so that a zkrv STARK proves "this program ran and accepted".
//!
//! # Method
//! * **The program is the verifying key.** Each table's **preprocessed columns** hold, per row, the
//!   instruction's opcode flags, its cells' addresses and the write multiplicities (below); the verifier
//!   rebuilds them from the program ([`preprocessed`]) and the transcript absorbs the program's digest
//!   ([`statement`]). The **main columns** are the operands' values only ([`main_traces`], from the rows
//!   of [`execute`]). Padding rows (up to a power of two) have every flag and multiplicity 0.
//! * **One memory bus** ([`MEMORY_BUS`], LogUp, [`crate::logup`]) links the tables: the instruction that
//!   writes a cell sends `(addr, value)` with multiplicity its number of reads ([`Instr::reads`] over the
//!   program, plus one per listing in [`Program::public_inputs`]; a preprocessed column), and every
//!   instruction receives `(addr, value)` once per cell it reads (multiplicity its row's flag). Write-once
//!   memory needs no timestamps: a cell has one writer ([`check_program`]), so the bus balances iff every
//!   read sees the written value.
//! * **Public inputs** are public interactions of the proof: the verifier receives
//!   `(addr, value)` once per listed cell with the values it is given ([`public_interactions`]), so the
//!   values are bound by the bus balance (and absorbed by the transcript with the statement).
//!
//! # Tables (`main` / `preprocessed` widths; every constraint has degree <= 3)
//! * `memory` (1 / 4): `Const` (value preprocessed: `is_const (value - const) = 0`) and `Hint` (the value
//!   free); one send.
//! * `base_alu` (3 / 8): `Add`, `Sub`, `Mul`, `AssertEq`; `flag · (relation) = 0` per opcode; 2 receives,
//!   1 send.
//! * `ext_alu` (9 / 17): `ExtAdd`, `ExtSub`, `ExtMul`, `ExtMulBase` (the base operand in `b[0]`),
//!   `ExtInv` checked as `a · dst = 1` (so `a != 0`), products in `F[X]/(X^3 - 7)` ([`ext_mul`]); up to 6
//!   receives, 3 sends.
//! * `select` (4 / 6): `bit` boolean, `dst = b + bit (a - b)`.
//! * `poseidon2` (180 / 25): the permutation's constraints of the POSEIDON2 precompile table
//!   ([`crate::poseidon2::eval_permutation`], the one definition both tables use; docs/tables.md §6.19)
//!   over native cells (no words: a cell is a field element), 8 receives and 8 sends.
//! * `bits` (66 / 131): 64 bit columns, boolean, zero past `n` (`(1 - mask_k) bit_k = 0`, the mask
//!   preprocessed), recombining to `src`, and canonical ([`crate::air::assert_canonical`]:
//!   `hi = 2^32 - 1 => lo = 0`), so the bits are the canonical value's.
//!
//! Sources: the layout follows the "preprocessed program, memory by LogUp multiplicities" design of
//! SP1's recursion v2 and Plonky3-style AIRs; written here for zkrv's AIR API.

use thiserror::Error;

use super::program::{execute, Addr, ExecError, Execution, Instr, Program, Table};
use crate::air::{assert_canonical, canonical_witness, Air, AirBuilder, Direction};
use crate::config::StarkConfig;
use crate::field::{PrimeCharacteristicRing, PrimeField64, EXT_W, F};
use crate::logup::{PublicInteraction, MAX_LOG_HEIGHT};
use crate::matrix::RowMajorMatrix;
use crate::poseidon2::{
    eval_permutation, PermutationCols, Poseidon2Trace, FULL_ROUNDS, PARTIAL_ROUNDS, WIDTH,
};
use crate::preprocessed::{preprocess, PreprocessedData};
use crate::proof::Proof;
use crate::prover::{prove, ProveError};
use crate::symbolic::Expr;
use crate::verifier::{verify, VerifyError};

/// The memory bus: `[addr, value]`, one tuple per cell (the recursion AIR set's only bus).
pub const MEMORY_BUS: u32 = 1;

/// The domain-separation prefix of [`statement`].
pub const STATEMENT_PREFIX: &[u8] = b"zkrv-recursion-program-v1";

/// Why a program cannot be proven or verified as it is (found from the program alone).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ProgramError {
    #[error("instruction {instr} ({kind}): cell {addr} outside the program's {num_cells} cells")]
    OutOfMemory {
        instr: usize,
        kind: &'static str,
        addr: u64,
        num_cells: u32,
    },
    #[error("instruction {instr} ({kind}): cell {addr} is written a second time")]
    WrittenTwice {
        instr: usize,
        kind: &'static str,
        addr: Addr,
    },
    #[error("instruction {instr} ({kind}): cell {addr} is read before any instruction writes it")]
    ReadBeforeWrite {
        instr: usize,
        kind: &'static str,
        addr: Addr,
    },
    #[error("instruction {instr} (bits): n = {n} > 64")]
    TooManyBits { instr: usize, n: u8 },
    #[error("public input {index}: cell {addr} is not written by a hint")]
    PublicNotHint { index: usize, addr: Addr },
    #[error("table `{table}`: {rows} rows, more than 2^{MAX_LOG_HEIGHT}")]
    TooManyRows { table: &'static str, rows: usize },
    #[error("preprocessed traces: {0}")]
    Preprocessed(String),
}

/// Why [`prove_program`] failed.
#[derive(Debug, Error)]
pub enum ProveProgramError {
    #[error(transparent)]
    Program(#[from] ProgramError),
    /// The program rejects the witness (nothing to prove).
    #[error("the program rejects the witness: {0}")]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Prove(#[from] ProveError),
}

/// Why [`verify_program`] rejected.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VerifyProgramError {
    #[error(transparent)]
    Program(#[from] ProgramError),
    #[error("{got} public inputs given, the program has {expected}")]
    PublicInputCount { expected: usize, got: usize },
    #[error(transparent)]
    Verify(#[from] VerifyError),
}

/// Checks that `program` is well formed as a verifying key: every cell it names is below
/// [`Program::num_cells`], written by exactly one instruction, and read only after the instruction that
/// writes it; `Bits` has `n <= 64`; every public input is a `Hint` cell; no table exceeds
/// `2^MAX_LOG_HEIGHT` rows. Returns the write multiplicity of every cell (`[addr]`): its reads
/// ([`Instr::reads`], a cell read twice by one instruction counted twice) plus its listings in
/// [`Program::public_inputs`]. (A straight-line program so checked has one assignment per witness, the
/// interpreter's: the AIR set's relations are then exactly [`execute`]'s checks.)
pub fn check_program(program: &Program) -> Result<Vec<u32>, ProgramError> {
    let n = program.num_cells;
    let mut written = vec![false; n as usize];
    let mut hint = vec![false; n as usize];
    let mut mult = vec![0u32; n as usize];
    for (i, instr) in program.instrs.iter().enumerate() {
        let kind = instr.kind();
        if let Instr::Bits { n, .. } = *instr {
            if n > 64 {
                return Err(ProgramError::TooManyBits { instr: i, n });
            }
        }
        for a in instr.reads() {
            if a >= n {
                return Err(ProgramError::OutOfMemory {
                    instr: i,
                    kind,
                    addr: a as u64,
                    num_cells: n,
                });
            }
            if !written[a as usize] {
                return Err(ProgramError::ReadBeforeWrite {
                    instr: i,
                    kind,
                    addr: a,
                });
            }
            mult[a as usize] = mult[a as usize].saturating_add(1);
        }
        if let Instr::Bits { dst, n: bits, .. } = *instr {
            // `writes` wraps; the last bit's address must not.
            if dst as u64 + bits as u64 > n as u64 {
                return Err(ProgramError::OutOfMemory {
                    instr: i,
                    kind,
                    addr: dst as u64 + bits as u64 - 1,
                    num_cells: n,
                });
            }
        }
        for a in instr.writes() {
            if a >= n {
                return Err(ProgramError::OutOfMemory {
                    instr: i,
                    kind,
                    addr: a as u64,
                    num_cells: n,
                });
            }
            if written[a as usize] {
                return Err(ProgramError::WrittenTwice {
                    instr: i,
                    kind,
                    addr: a,
                });
            }
            written[a as usize] = true;
            hint[a as usize] = matches!(instr, Instr::Hint { .. });
        }
    }
    for (index, &a) in program.public_inputs.iter().enumerate() {
        if a >= n || !hint[a as usize] {
            return Err(ProgramError::PublicNotHint { index, addr: a });
        }
        mult[a as usize] = mult[a as usize].saturating_add(1);
    }
    for (t, rows) in program.table_rows() {
        if rows > 1 << MAX_LOG_HEIGHT {
            return Err(ProgramError::TooManyRows {
                table: t.name(),
                rows,
            });
        }
    }
    Ok(mult)
}

/// The words [`statement`] hashes for one instruction: its kind's index in [`Instr::KINDS`], then every
/// field in declaration order (a constant as its canonical value, an address as itself).
fn instr_words(instr: &Instr) -> Vec<u64> {
    let kind = Instr::KINDS
        .iter()
        .position(|&k| k == instr.kind())
        .unwrap_or(usize::MAX) as u64;
    let w = |v: &[Addr]| v.iter().map(|&a| a as u64).collect::<Vec<_>>();
    let mut out = vec![kind];
    out.extend(match *instr {
        Instr::Const { dst, value } => vec![dst as u64, value.as_canonical_u64()],
        Instr::Hint { dst } => vec![dst as u64],
        Instr::Add { dst, a, b } | Instr::Sub { dst, a, b } | Instr::Mul { dst, a, b } => {
            w(&[dst, a, b])
        }
        Instr::ExtAdd { dst, a, b } | Instr::ExtSub { dst, a, b } | Instr::ExtMul { dst, a, b } => {
            w(&[dst, a, b].concat())
        }
        Instr::ExtMulBase { dst, a, b } => w(&[&dst[..], &a[..], &[b]].concat()),
        Instr::ExtInv { dst, a } => w(&[dst, a].concat()),
        Instr::Select { dst, bit, a, b } => w(&[dst, bit, a, b]),
        Instr::AssertEq { a, b } => w(&[a, b]),
        Instr::Poseidon2 { dst, src } => w(&[dst, src].concat()),
        Instr::Bits { dst, src, n } => vec![dst as u64, src as u64, n as u64],
    });
    out
}

/// The statement bytes of a program's proof: [`STATEMENT_PREFIX`] then the Keccak-256 digest
/// ([`crate::keccak::keccak256_words`]) of `num_cells`, the instruction count, every instruction's
/// words (its kind's index in [`Instr::KINDS`], then every field in declaration order, a constant as its
/// canonical value), the public-input count and cells. The transcript absorbs it first
/// ([`crate::statement::start_transcript`]), so the proof is bound to the program whose preprocessed
/// traces the verifier rebuilds (the preprocessed values themselves are not in the transcript,
/// [`crate::preprocessed`]). Labels are not part of it.
pub fn statement(program: &Program) -> Vec<u8> {
    let mut words = vec![program.num_cells as u64, program.instrs.len() as u64];
    for instr in &program.instrs {
        words.extend(instr_words(instr));
    }
    words.push(program.public_inputs.len() as u64);
    words.extend(program.public_inputs.iter().map(|&a| a as u64));
    let mut s = STATEMENT_PREFIX.to_vec();
    s.extend_from_slice(&crate::keccak::keccak256_words(&words));
    s
}

/// The public interactions binding the public inputs: for each listed cell `a` with value `v`
/// (`values[i]` for `program.public_inputs[i]`), a receive of `[a, v]` on [`MEMORY_BUS`], multiplicity 1.
/// `values.len()` must be `program.public_inputs.len()` ([`verify_program`] checks it).
pub fn public_interactions(program: &Program, values: &[F]) -> Vec<PublicInteraction> {
    program
        .public_inputs
        .iter()
        .zip(values)
        .map(|(&a, &v)| PublicInteraction {
            bus: MEMORY_BUS,
            values: vec![F::from_u32(a), v],
            multiplicity: F::ONE,
            direction: Direction::Receive,
        })
        .collect()
}

/// `a · b` in `Ext3 = F[X]/(X^3 - W)` ([`crate::field::Ext3`]'s product, [`EXT_W`] = 7) over any ring of
/// expressions or values: `c0 = a0 b0 + W (a1 b2 + a2 b1)`, `c1 = a0 b1 + a1 b0 + W a2 b2`,
/// `c2 = a0 b2 + a1 b1 + a2 b0`.
pub fn ext_mul<T>(a: &[T; 3], b: &[T; 3]) -> [T; 3]
where
    T: Clone + std::ops::Add<Output = T> + std::ops::Mul<Output = T> + std::ops::Mul<F, Output = T>,
{
    let m = |i: usize, j: usize| a[i].clone() * b[j].clone();
    let w = F::new(EXT_W);
    [
        m(0, 0) + (m(1, 2) + m(2, 1)) * w,
        m(0, 1) + m(1, 0) + m(2, 2) * w,
        m(0, 2) + m(1, 1) + m(2, 0),
    ]
}

// ---------------------------------------------------------------------------------------------------
// Column layouts: one module per table, `main` then `prep` column indices; the fills below and the
// AIRs read only these names.

/// `memory` columns.
pub mod memory_cols {
    /// main: the cell's value.
    pub const VALUE: usize = 0;
    pub const MAIN_WIDTH: usize = 1;
    /// prep: the cell, its write multiplicity, 1 on a `Const`, the constant.
    pub const ADDR: usize = 0;
    pub const MULT: usize = 1;
    pub const IS_CONST: usize = 2;
    pub const CONST: usize = 3;
    pub const PREP_WIDTH: usize = 4;
}

/// `base_alu` columns.
pub mod base_cols {
    /// main: `dst, a, b` (`AssertEq`: `dst` 0).
    pub const DST: usize = 0;
    pub const A: usize = 1;
    pub const B: usize = 2;
    pub const MAIN_WIDTH: usize = 3;
    /// prep: opcode flags `add, sub, mul, assert_eq`, the three cells, `dst`'s write multiplicity.
    pub const IS_ADD: usize = 0;
    pub const IS_SUB: usize = 1;
    pub const IS_MUL: usize = 2;
    pub const IS_ASSERT: usize = 3;
    pub const DST_ADDR: usize = 4;
    pub const A_ADDR: usize = 5;
    pub const B_ADDR: usize = 6;
    pub const DST_MULT: usize = 7;
    pub const PREP_WIDTH: usize = 8;
}

/// `ext_alu` columns.
pub mod ext_cols {
    /// main: `dst[3], a[3], b[3]` (`ExtMulBase`: the base operand in `b[0]`; unused cells 0).
    pub const DST: usize = 0;
    pub const A: usize = 3;
    pub const B: usize = 6;
    pub const MAIN_WIDTH: usize = 9;
    /// prep: opcode flags `ext_add, ext_sub, ext_mul, ext_mul_base, ext_inv`, the cells of `dst`, `a`,
    /// `b` (3 each), `dst`'s write multiplicities (3).
    pub const IS_ADD: usize = 0;
    pub const IS_SUB: usize = 1;
    pub const IS_MUL: usize = 2;
    pub const IS_MUL_BASE: usize = 3;
    pub const IS_INV: usize = 4;
    pub const DST_ADDR: usize = 5;
    pub const A_ADDR: usize = 8;
    pub const B_ADDR: usize = 11;
    pub const DST_MULT: usize = 14;
    pub const PREP_WIDTH: usize = 17;
}

/// `select` columns.
pub mod select_cols {
    /// main: `dst, bit, a, b`.
    pub const DST: usize = 0;
    pub const BIT: usize = 1;
    pub const A: usize = 2;
    pub const B: usize = 3;
    pub const MAIN_WIDTH: usize = 4;
    /// prep: the four cells, `dst`'s write multiplicity, 1 on a real row.
    pub const DST_ADDR: usize = 0;
    pub const BIT_ADDR: usize = 1;
    pub const A_ADDR: usize = 2;
    pub const B_ADDR: usize = 3;
    pub const DST_MULT: usize = 4;
    pub const IS_REAL: usize = 5;
    pub const PREP_WIDTH: usize = 6;
}

/// `poseidon2` columns.
pub mod p2_cols {
    use crate::poseidon2::{FULL_ROUNDS, PARTIAL_ROUNDS, WIDTH};
    /// main: the input state, the intermediates of [`crate::poseidon2::Poseidon2Trace`] (`full_sbox`
    /// round-major, `full_post` rounds 0..6, `partial_sbox`, `partial_post`), the output state.
    pub const INPUT: usize = 0;
    pub const FULL_SBOX: usize = INPUT + WIDTH;
    pub const FULL_POST: usize = FULL_SBOX + FULL_ROUNDS * WIDTH;
    pub const PARTIAL_SBOX: usize = FULL_POST + (FULL_ROUNDS - 1) * WIDTH;
    pub const PARTIAL_POST: usize = PARTIAL_SBOX + PARTIAL_ROUNDS;
    pub const OUTPUT: usize = PARTIAL_POST + PARTIAL_ROUNDS;
    pub const MAIN_WIDTH: usize = OUTPUT + WIDTH;
    /// prep: the 8 source cells, the 8 destination cells, their write multiplicities, 1 on a real row.
    pub const SRC_ADDR: usize = 0;
    pub const DST_ADDR: usize = SRC_ADDR + WIDTH;
    pub const DST_MULT: usize = DST_ADDR + WIDTH;
    pub const IS_REAL: usize = DST_MULT + WIDTH;
    pub const PREP_WIDTH: usize = IS_REAL + 1;
}

/// `bits` columns.
pub mod bits_cols {
    /// main: `src`'s value, its 64 bits (least significant first, 0 past `n`), the canonicity witness.
    pub const SRC: usize = 0;
    pub const BITS: usize = 1;
    pub const INV: usize = BITS + 64;
    pub const MAIN_WIDTH: usize = INV + 1;
    /// prep: `src`'s cell, the first bit's cell (`dst`; bit k is cell `dst + k`), 1 on a real row, the
    /// mask `[k < n]` (64), the bits' write multiplicities (64).
    pub const SRC_ADDR: usize = 0;
    pub const DST_ADDR: usize = 1;
    pub const IS_REAL: usize = 2;
    pub const MASK: usize = 3;
    pub const MULT: usize = MASK + 64;
    pub const PREP_WIDTH: usize = MULT + 64;
}

// ---------------------------------------------------------------------------------------------------
// The AIRs.

fn mains(b: &AirBuilder, n: usize) -> Vec<Expr> {
    (0..n).map(|c| b.main(c)).collect()
}

fn preps(b: &AirBuilder, n: usize) -> Vec<Expr> {
    (0..n).map(|c| b.preprocessed(c)).collect()
}

/// One memory-bus interaction `[addr, value]`.
fn cell(addr: &Expr, value: &Expr) -> Vec<Expr> {
    vec![addr.clone(), value.clone()]
}

/// The `memory` table ([`Table::Memory`]): `Const` and `Hint`.
pub struct MemoryAir;

impl Air for MemoryAir {
    fn name(&self) -> &str {
        Table::Memory.name()
    }
    fn width(&self) -> usize {
        memory_cols::MAIN_WIDTH
    }
    fn preprocessed_width(&self) -> usize {
        memory_cols::PREP_WIDTH
    }
    fn column_names(&self) -> Vec<String> {
        vec!["value".into()]
    }
    fn eval(&self, b: &mut AirBuilder) {
        use memory_cols::*;
        let (m, p) = (mains(b, MAIN_WIDTH), preps(b, PREP_WIDTH));
        b.assert_zero(
            "const value",
            p[IS_CONST].clone() * (m[VALUE].clone() - p[CONST].clone()),
        );
        b.send(MEMORY_BUS, cell(&p[ADDR], &m[VALUE]), p[MULT].clone());
    }
}

/// The `base_alu` table ([`Table::BaseAlu`]).
pub struct BaseAluAir;

impl Air for BaseAluAir {
    fn name(&self) -> &str {
        Table::BaseAlu.name()
    }
    fn width(&self) -> usize {
        base_cols::MAIN_WIDTH
    }
    fn preprocessed_width(&self) -> usize {
        base_cols::PREP_WIDTH
    }
    fn column_names(&self) -> Vec<String> {
        ["dst", "a", "b"].map(String::from).to_vec()
    }
    fn eval(&self, b: &mut AirBuilder) {
        use base_cols::*;
        let (m, p) = (mains(b, MAIN_WIDTH), preps(b, PREP_WIDTH));
        let (dst, x, y) = (&m[DST], &m[A], &m[B]);
        b.assert_zero(
            "add",
            p[IS_ADD].clone() * (dst.clone() - x.clone() - y.clone()),
        );
        b.assert_zero(
            "sub",
            p[IS_SUB].clone() * (dst.clone() - x.clone() + y.clone()),
        );
        b.assert_zero(
            "mul",
            p[IS_MUL].clone() * (dst.clone() - x.clone() * y.clone()),
        );
        b.assert_zero("assert_eq", p[IS_ASSERT].clone() * (x.clone() - y.clone()));
        let real = p[IS_ADD].clone() + p[IS_SUB].clone() + p[IS_MUL].clone() + p[IS_ASSERT].clone();
        b.receive(MEMORY_BUS, cell(&p[A_ADDR], x), real.clone());
        b.receive(MEMORY_BUS, cell(&p[B_ADDR], y), real);
        b.send(MEMORY_BUS, cell(&p[DST_ADDR], dst), p[DST_MULT].clone());
    }
}

/// The `ext_alu` table ([`Table::ExtAlu`]).
pub struct ExtAluAir;

impl Air for ExtAluAir {
    fn name(&self) -> &str {
        Table::ExtAlu.name()
    }
    fn width(&self) -> usize {
        ext_cols::MAIN_WIDTH
    }
    fn preprocessed_width(&self) -> usize {
        ext_cols::PREP_WIDTH
    }
    fn column_names(&self) -> Vec<String> {
        ["dst", "a", "b"]
            .iter()
            .flat_map(|n| (0..3).map(move |k| format!("{n}[{k}]")))
            .collect()
    }
    fn eval(&self, b: &mut AirBuilder) {
        use ext_cols::*;
        let (m, p) = (mains(b, MAIN_WIDTH), preps(b, PREP_WIDTH));
        let e = |base: usize| -> [Expr; 3] { std::array::from_fn(|k| m[base + k].clone()) };
        let (dst, x, y) = (e(DST), e(A), e(B));
        let prod = ext_mul(&x, &y);
        let inv_check = ext_mul(&x, &dst);
        for k in 0..3 {
            let d = dst[k].clone();
            b.assert_zero(
                format!("ext_add [{k}]"),
                p[IS_ADD].clone() * (d.clone() - x[k].clone() - y[k].clone()),
            );
            b.assert_zero(
                format!("ext_sub [{k}]"),
                p[IS_SUB].clone() * (d.clone() - x[k].clone() + y[k].clone()),
            );
            b.assert_zero(
                format!("ext_mul [{k}]"),
                p[IS_MUL].clone() * (d.clone() - prod[k].clone()),
            );
            b.assert_zero(
                format!("ext_mul_base [{k}]"),
                p[IS_MUL_BASE].clone() * (d - x[k].clone() * y[0].clone()),
            );
            let one = if k == 0 { Expr::one() } else { Expr::zero() };
            b.assert_zero(
                format!("ext_inv: a * dst = 1 [{k}]"),
                p[IS_INV].clone() * (inv_check[k].clone() - one),
            );
        }
        let ext_b = p[IS_ADD].clone() + p[IS_SUB].clone() + p[IS_MUL].clone();
        let base_b = ext_b.clone() + p[IS_MUL_BASE].clone();
        let real = base_b.clone() + p[IS_INV].clone();
        for k in 0..3 {
            b.receive(MEMORY_BUS, cell(&p[A_ADDR + k], &x[k]), real.clone());
        }
        b.receive(MEMORY_BUS, cell(&p[B_ADDR], &y[0]), base_b);
        for k in 1..3 {
            b.receive(MEMORY_BUS, cell(&p[B_ADDR + k], &y[k]), ext_b.clone());
        }
        for k in 0..3 {
            b.send(
                MEMORY_BUS,
                cell(&p[DST_ADDR + k], &dst[k]),
                p[DST_MULT + k].clone(),
            );
        }
    }
}

/// The `select` table ([`Table::Select`]).
pub struct SelectAir;

impl Air for SelectAir {
    fn name(&self) -> &str {
        Table::Select.name()
    }
    fn width(&self) -> usize {
        select_cols::MAIN_WIDTH
    }
    fn preprocessed_width(&self) -> usize {
        select_cols::PREP_WIDTH
    }
    fn column_names(&self) -> Vec<String> {
        ["dst", "bit", "a", "b"].map(String::from).to_vec()
    }
    fn eval(&self, b: &mut AirBuilder) {
        use select_cols::*;
        let (m, p) = (mains(b, MAIN_WIDTH), preps(b, PREP_WIDTH));
        b.assert_bool("bit boolean", m[BIT].clone());
        b.assert_eq(
            "select",
            m[DST].clone(),
            m[B].clone() + m[BIT].clone() * (m[A].clone() - m[B].clone()),
        );
        for (addr, v) in [(BIT_ADDR, BIT), (A_ADDR, A), (B_ADDR, B)] {
            b.receive(MEMORY_BUS, cell(&p[addr], &m[v]), p[IS_REAL].clone());
        }
        b.send(MEMORY_BUS, cell(&p[DST_ADDR], &m[DST]), p[DST_MULT].clone());
    }
}

/// The `poseidon2` table ([`Table::Poseidon2`]).
pub struct Poseidon2RecAir;

impl Air for Poseidon2RecAir {
    fn name(&self) -> &str {
        Table::Poseidon2.name()
    }
    fn width(&self) -> usize {
        p2_cols::MAIN_WIDTH
    }
    fn preprocessed_width(&self) -> usize {
        p2_cols::PREP_WIDTH
    }
    fn column_names(&self) -> Vec<String> {
        use p2_cols::*;
        (0..MAIN_WIDTH)
            .map(|c| match c {
                c if c < FULL_SBOX => format!("input[{c}]"),
                c if c < FULL_POST => format!(
                    "full_sbox[{}][{}]",
                    (c - FULL_SBOX) / WIDTH,
                    (c - FULL_SBOX) % WIDTH
                ),
                c if c < PARTIAL_SBOX => format!(
                    "full_post[{}][{}]",
                    (c - FULL_POST) / WIDTH,
                    (c - FULL_POST) % WIDTH
                ),
                c if c < PARTIAL_POST => format!("partial_sbox[{}]", c - PARTIAL_SBOX),
                c if c < OUTPUT => format!("partial_post[{}]", c - PARTIAL_POST),
                c => format!("output[{}]", c - OUTPUT),
            })
            .collect()
    }
    fn eval(&self, b: &mut AirBuilder) {
        use p2_cols::*;
        let (m, p) = (mains(b, MAIN_WIDTH), preps(b, PREP_WIDTH));
        let state = |base: usize| -> [Expr; WIDTH] { std::array::from_fn(|i| m[base + i].clone()) };
        let full_sbox: [[Expr; WIDTH]; FULL_ROUNDS] =
            std::array::from_fn(|r| state(FULL_SBOX + r * WIDTH));
        let full_post: [[Expr; WIDTH]; FULL_ROUNDS - 1] =
            std::array::from_fn(|r| state(FULL_POST + r * WIDTH));
        let partial_sbox: [Expr; PARTIAL_ROUNDS] =
            std::array::from_fn(|r| m[PARTIAL_SBOX + r].clone());
        let partial_post: [Expr; PARTIAL_ROUNDS] =
            std::array::from_fn(|r| m[PARTIAL_POST + r].clone());
        let (input, out) = (state(INPUT), state(OUTPUT));
        eval_permutation(
            b,
            input.clone(),
            &PermutationCols {
                full_sbox: &full_sbox,
                full_post: &full_post,
                partial_sbox: &partial_sbox,
                partial_post: &partial_post,
            },
            &out,
        );
        for i in 0..WIDTH {
            b.receive(
                MEMORY_BUS,
                cell(&p[SRC_ADDR + i], &input[i]),
                p[IS_REAL].clone(),
            );
        }
        for i in 0..WIDTH {
            b.send(
                MEMORY_BUS,
                cell(&p[DST_ADDR + i], &out[i]),
                p[DST_MULT + i].clone(),
            );
        }
    }
}

/// The `bits` table ([`Table::Bits`]).
pub struct BitsAir;

impl Air for BitsAir {
    fn name(&self) -> &str {
        Table::Bits.name()
    }
    fn width(&self) -> usize {
        bits_cols::MAIN_WIDTH
    }
    fn preprocessed_width(&self) -> usize {
        bits_cols::PREP_WIDTH
    }
    fn column_names(&self) -> Vec<String> {
        let mut v = vec!["src".to_string()];
        v.extend((0..64).map(|k| format!("bits[{k}]")));
        v.push("inv".into());
        v
    }
    fn eval(&self, b: &mut AirBuilder) {
        use bits_cols::*;
        let (m, p) = (mains(b, MAIN_WIDTH), preps(b, PREP_WIDTH));
        let bit = |k: usize| m[BITS + k].clone();
        let word = |lo: usize| -> Expr {
            (0..32)
                .map(|k| bit(lo + k) * F::from_u64(1 << k))
                .sum::<Expr>()
        };
        for k in 0..64 {
            b.assert_bool(format!("bit {k} boolean"), bit(k));
            b.assert_zero(
                format!("bit {k} zero past n"),
                (Expr::one() - p[MASK + k].clone()) * bit(k),
            );
        }
        let (lo, hi) = (word(0), word(32));
        b.assert_eq(
            "recombination",
            m[SRC].clone(),
            lo.clone() + hi.clone() * F::from_u64(1 << 32),
        );
        assert_canonical(b, "bits", &lo, &hi, &m[INV]);
        b.receive(MEMORY_BUS, cell(&p[SRC_ADDR], &m[SRC]), p[IS_REAL].clone());
        for k in 0..64 {
            b.send(
                MEMORY_BUS,
                cell(&(p[DST_ADDR].clone() + F::from_u64(k as u64)), &bit(k)),
                p[MULT + k].clone(),
            );
        }
    }
}

/// The recursion AIR set, in [`Table::ALL`] order (the proof's table order).
pub fn airs() -> [&'static dyn Air; 6] {
    Table::ALL.map(air_of)
}

fn air_of(t: Table) -> &'static dyn Air {
    match t {
        Table::Memory => &MemoryAir,
        Table::BaseAlu => &BaseAluAir,
        Table::ExtAlu => &ExtAluAir,
        Table::Select => &SelectAir,
        Table::Poseidon2 => &Poseidon2RecAir,
        Table::Bits => &BitsAir,
    }
}

// ---------------------------------------------------------------------------------------------------
// Traces.

/// `log2` of table heights for `rows` rows: the smallest power of two `>= rows` and
/// `>= 2^config.min_log_height()` (a table with no instruction is all padding).
pub fn log_height(rows: usize, config: &StarkConfig) -> usize {
    (rows.max(1).next_power_of_two().trailing_zeros() as usize).max(config.min_log_height())
}

/// One preprocessed row of `instr` (width of its table), `mult[a]` the write multiplicity of cell `a`
/// ([`check_program`]).
fn prep_row(instr: &Instr, mult: &[u32], row: &mut [F]) {
    let a = |x: Addr| F::from_u32(x);
    let m = |x: Addr| F::from_u32(mult[x as usize]);
    match *instr {
        Instr::Const { dst, value } => {
            use memory_cols::*;
            row[ADDR] = a(dst);
            row[MULT] = m(dst);
            row[IS_CONST] = F::ONE;
            row[CONST] = value;
        }
        Instr::Hint { dst } => {
            use memory_cols::*;
            row[ADDR] = a(dst);
            row[MULT] = m(dst);
        }
        Instr::Add { dst, a: x, b: y }
        | Instr::Sub { dst, a: x, b: y }
        | Instr::Mul { dst, a: x, b: y } => {
            use base_cols::*;
            let flag = match instr {
                Instr::Add { .. } => IS_ADD,
                Instr::Sub { .. } => IS_SUB,
                _ => IS_MUL,
            };
            row[flag] = F::ONE;
            row[DST_ADDR] = a(dst);
            row[A_ADDR] = a(x);
            row[B_ADDR] = a(y);
            row[DST_MULT] = m(dst);
        }
        Instr::AssertEq { a: x, b: y } => {
            use base_cols::*;
            row[IS_ASSERT] = F::ONE;
            row[A_ADDR] = a(x);
            row[B_ADDR] = a(y);
        }
        Instr::ExtAdd { dst, a: x, b: y }
        | Instr::ExtSub { dst, a: x, b: y }
        | Instr::ExtMul { dst, a: x, b: y } => {
            use ext_cols::*;
            let flag = match instr {
                Instr::ExtAdd { .. } => IS_ADD,
                Instr::ExtSub { .. } => IS_SUB,
                _ => IS_MUL,
            };
            row[flag] = F::ONE;
            for k in 0..3 {
                row[DST_ADDR + k] = a(dst[k]);
                row[A_ADDR + k] = a(x[k]);
                row[B_ADDR + k] = a(y[k]);
                row[DST_MULT + k] = m(dst[k]);
            }
        }
        Instr::ExtMulBase { dst, a: x, b: y } => {
            use ext_cols::*;
            row[IS_MUL_BASE] = F::ONE;
            for k in 0..3 {
                row[DST_ADDR + k] = a(dst[k]);
                row[A_ADDR + k] = a(x[k]);
                row[DST_MULT + k] = m(dst[k]);
            }
            row[B_ADDR] = a(y);
        }
        Instr::ExtInv { dst, a: x } => {
            use ext_cols::*;
            row[IS_INV] = F::ONE;
            for k in 0..3 {
                row[DST_ADDR + k] = a(dst[k]);
                row[A_ADDR + k] = a(x[k]);
                row[DST_MULT + k] = m(dst[k]);
            }
        }
        Instr::Select {
            dst,
            bit,
            a: x,
            b: y,
        } => {
            use select_cols::*;
            row[DST_ADDR] = a(dst);
            row[BIT_ADDR] = a(bit);
            row[A_ADDR] = a(x);
            row[B_ADDR] = a(y);
            row[DST_MULT] = m(dst);
            row[IS_REAL] = F::ONE;
        }
        Instr::Poseidon2 { dst, src } => {
            use p2_cols::*;
            for i in 0..WIDTH {
                row[SRC_ADDR + i] = a(src[i]);
                row[DST_ADDR + i] = a(dst[i]);
                row[DST_MULT + i] = m(dst[i]);
            }
            row[IS_REAL] = F::ONE;
        }
        Instr::Bits { dst, src, n } => {
            use bits_cols::*;
            row[SRC_ADDR] = a(src);
            row[DST_ADDR] = a(dst);
            row[IS_REAL] = F::ONE;
            for k in 0..n as usize {
                row[MASK + k] = F::ONE;
                row[MULT + k] = m(dst + k as u32);
            }
        }
    }
}

/// One main row of `instr` from its execution row `vals` ([`Execution::rows`]: `dst` first, then the
/// inputs).
fn main_row(instr: &Instr, vals: &[F], row: &mut [F]) {
    match instr {
        Instr::Const { .. } | Instr::Hint { .. } => row[memory_cols::VALUE] = vals[0],
        Instr::Add { .. } | Instr::Sub { .. } | Instr::Mul { .. } => {
            row.copy_from_slice(&vals[..3])
        }
        Instr::AssertEq { .. } => row[base_cols::A..].copy_from_slice(&vals[..2]),
        // dst, a, then b (3 cells, 1 for `ExtMulBase`, none for `ExtInv`).
        Instr::ExtAdd { .. }
        | Instr::ExtSub { .. }
        | Instr::ExtMul { .. }
        | Instr::ExtMulBase { .. }
        | Instr::ExtInv { .. } => row[..vals.len()].copy_from_slice(vals),
        Instr::Select { .. } => row.copy_from_slice(&vals[..4]),
        Instr::Poseidon2 { .. } => {
            let input: [F; WIDTH] = std::array::from_fn(|i| vals[WIDTH + i]);
            fill_permutation(&input, row);
        }
        Instr::Bits { .. } => {
            use bits_cols::*;
            row[SRC..INV].copy_from_slice(&vals[..65]);
            row[INV] = canonical_witness(vals[0].as_canonical_u64());
        }
    }
}

/// A `poseidon2` main row of the permutation of `input`.
fn fill_permutation(input: &[F; WIDTH], row: &mut [F]) {
    use p2_cols::*;
    let t = Poseidon2Trace::new(*input);
    row[INPUT..FULL_SBOX].copy_from_slice(input);
    for r in 0..FULL_ROUNDS {
        row[FULL_SBOX + r * WIDTH..][..WIDTH].copy_from_slice(&t.full_sbox[r]);
    }
    for r in 0..FULL_ROUNDS - 1 {
        row[FULL_POST + r * WIDTH..][..WIDTH].copy_from_slice(&t.full_post[r]);
    }
    row[PARTIAL_SBOX..PARTIAL_POST].copy_from_slice(&t.partial_sbox);
    row[PARTIAL_POST..OUTPUT].copy_from_slice(&t.partial_post);
    row[OUTPUT..].copy_from_slice(&t.output());
}

/// A padding main row of table `t` (every flag and multiplicity 0 on it): zeros, except `bits`'
/// canonicity witness of 0 and `poseidon2`'s permutation of the zero state.
fn padding_row(t: Table, row: &mut [F]) {
    match t {
        Table::Bits => row[bits_cols::INV] = canonical_witness(0),
        Table::Poseidon2 => fill_permutation(&[F::ZERO; WIDTH], row),
        _ => {}
    }
}

/// The instructions of each table ([`Table::ALL`] order), in program order.
fn instrs_by_table(program: &Program) -> Vec<Vec<&Instr>> {
    Table::ALL
        .iter()
        .map(|&t| program.instrs.iter().filter(|i| i.table() == t).collect())
        .collect()
}

/// The preprocessed traces of `program` ([`Table::ALL`] order; heights [`log_height`] of each table's
/// instruction count), from the program alone: what prover and verifier both build. Errors: the program
/// is not well formed ([`check_program`]).
pub fn preprocessed(
    program: &Program,
    config: &StarkConfig,
) -> Result<PreprocessedData, ProgramError> {
    let mult = check_program(program)?;
    let traces = Table::ALL
        .iter()
        .zip(instrs_by_table(program))
        .map(|(&t, instrs)| {
            let w = air_of(t).preprocessed_width();
            let h = 1usize << log_height(instrs.len(), config);
            let mut m = RowMajorMatrix::new(vec![F::ZERO; h * w], w);
            for (r, instr) in instrs.iter().enumerate() {
                prep_row(instr, &mult, m.row_mut(r));
            }
            Some(m)
        })
        .collect();
    preprocess(&airs(), traces).map_err(|e| ProgramError::Preprocessed(e.to_string()))
}

/// The main traces ([`Table::ALL`] order) of an accepted execution of `program` (`exec` from
/// [`execute`] on this program): per table, one row per instruction with its operands' values, then
/// padding rows, at the heights of [`preprocessed`].
pub fn main_traces(
    program: &Program,
    exec: &Execution,
    config: &StarkConfig,
) -> Vec<RowMajorMatrix> {
    Table::ALL
        .iter()
        .zip(instrs_by_table(program))
        .map(|(&t, instrs)| {
            let w = air_of(t).width();
            let h = 1usize << log_height(instrs.len(), config);
            let mut m = RowMajorMatrix::new(vec![F::ZERO; h * w], w);
            let rows = exec
                .rows
                .iter()
                .find(|(tt, _)| *tt == t)
                .map_or(&[][..], |(_, r)| r.as_slice());
            for r in 0..h {
                match (instrs.get(r), rows.get(r)) {
                    (Some(instr), Some(vals)) => main_row(instr, vals, m.row_mut(r)),
                    _ => padding_row(t, m.row_mut(r)),
                }
            }
            m
        })
        .collect()
}

/// Proves that `program` accepts `witness`: checks the program ([`check_program`]), runs it
/// ([`execute`]; a rejected witness is [`ProveProgramError::Exec`], nothing is proven), builds the
/// traces and proves them with [`crate::prove`] (CPU backend) under `config`, with the program's public
/// inputs as public interactions ([`public_interactions`]) and [`statement`] as the statement.
pub fn prove_program(
    program: &Program,
    witness: &[F],
    config: &StarkConfig,
) -> Result<Proof, ProveProgramError> {
    let pre = preprocessed(program, config)?;
    let exec = execute(program, witness)?;
    let traces = main_traces(program, &exec, config);
    let public = public_interactions(program, &exec.public_inputs(program));
    Ok(prove(
        config,
        &airs(),
        &pre,
        traces,
        &public,
        &statement(program),
    )?)
}

/// Verifies a [`prove_program`] proof that `program` accepted a witness whose public inputs
/// ([`Program::public_inputs`], in order) are `public_inputs`: rebuilds the preprocessed traces and the
/// statement from the program and runs [`crate::verify`] (`config` and `min_bits` as there). Errors: an
/// ill-formed program, a wrong number of public inputs, or the verifier's [`VerifyError`] (a changed
/// public input: [`VerifyError::BusImbalance`]; a witness the program rejects: a table's
/// [`VerifyError::OodMismatch`] or the bus balance).
pub fn verify_program(
    program: &Program,
    public_inputs: &[F],
    proof: &Proof,
    config: &StarkConfig,
    min_bits: u32,
) -> Result<(), VerifyProgramError> {
    if public_inputs.len() != program.public_inputs.len() {
        return Err(VerifyProgramError::PublicInputCount {
            expected: program.public_inputs.len(),
            got: public_inputs.len(),
        });
    }
    let pre = preprocessed(program, config)?;
    let public = public_interactions(program, public_inputs);
    verify(
        config,
        min_bits,
        &airs(),
        &pre,
        &public,
        &statement(program),
        proof,
    )?;
    Ok(())
}
