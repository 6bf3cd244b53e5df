//! [`Builder`]: writes a [`Program`] and, as it emits, evaluates every instruction over the hints it is
//! given ([`step`], the interpreter's one definition of each instruction), so that a program writer can
//! read the values of what it built (e.g. the sampled query indices, to choose the Merkle siblings to
//! hint). The program never depends on those values: the same shape gives the same program, whatever the
//! hints (the tests build two and compare).

use std::collections::HashMap;

use super::program::{step, Addr, ExtAddr, Instr, Memory, Program};
use crate::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F};

/// A base-field cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Var(pub Addr);

/// An extension cell triple `[c0, c1, c2]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtVar(pub [Var; 3]);

impl ExtVar {
    fn addr(self) -> ExtAddr {
        self.0.map(|v| v.0)
    }
}

/// Program writer (module doc).
#[derive(Default)]
pub struct Builder {
    program: Program,
    label_ids: HashMap<String, u32>,
    cur_label: u32,
    mem: Memory,
    witness: Vec<F>,
    consts: HashMap<u64, Var>,
}

impl Default for Memory {
    fn default() -> Self {
        Memory::new(0)
    }
}

impl Builder {
    pub fn new() -> Self {
        let mut b = Self::default();
        b.label("start");
        b
    }

    /// Label the instructions emitted from now on (named by [`super::ExecError`]).
    pub fn label(&mut self, label: impl Into<String>) {
        let label = label.into();
        let next = self.program.labels.len() as u32;
        let id = *self.label_ids.entry(label.clone()).or_insert(next);
        if id == next {
            self.program.labels.push(label);
        }
        self.cur_label = id;
    }

    /// The program and the witness stream of the hints given.
    pub fn finish(self) -> (Program, Vec<F>) {
        (self.program, self.witness)
    }

    /// Instructions emitted so far.
    pub fn len(&self) -> usize {
        self.program.instrs.len()
    }

    /// Whether nothing was emitted.
    pub fn is_empty(&self) -> bool {
        self.program.instrs.is_empty()
    }

    fn alloc(&mut self) -> Var {
        let v = Var(self.program.num_cells);
        self.program.num_cells += 1;
        v
    }

    fn alloc_ext(&mut self) -> ExtVar {
        ExtVar([self.alloc(), self.alloc(), self.alloc()])
    }

    fn emit(&mut self, instr: Instr) {
        // Hints are emitted by `hint`; nothing else reads the witness. The builder evaluates leniently:
        // a failed check is the interpreter's to report.
        let _ = step(&instr, &mut self.mem, &mut std::iter::empty());
        self.program.instrs.push(instr);
        self.program.label_of.push(self.cur_label);
    }

    /// The value of `v` as evaluated over the hints given (zero if unwritten).
    pub fn value(&self, v: Var) -> F {
        self.mem
            .cells
            .get(v.0 as usize)
            .copied()
            .flatten()
            .unwrap_or(F::ZERO)
    }

    /// [`Builder::value`] of an extension cell.
    pub fn ext_value(&self, v: ExtVar) -> Ext3 {
        Ext3(v.0.map(|x| self.value(x)))
    }

    /// A constant cell (one per value: constants are shared).
    pub fn constant(&mut self, value: F) -> Var {
        let key = value.as_canonical_u64();
        if let Some(&v) = self.consts.get(&key) {
            return v;
        }
        let dst = self.alloc();
        self.emit(Instr::Const { dst: dst.0, value });
        self.consts.insert(key, dst);
        dst
    }

    pub fn zero(&mut self) -> Var {
        self.constant(F::ZERO)
    }

    pub fn one(&mut self) -> Var {
        self.constant(F::ONE)
    }

    /// A constant extension element.
    pub fn ext_constant(&mut self, value: Ext3) -> ExtVar {
        ExtVar(value.0.map(|c| self.constant(c)))
    }

    /// `b` as an extension element `[b, 0, 0]`.
    pub fn ext_from_base(&mut self, b: Var) -> ExtVar {
        let z = self.zero();
        ExtVar([b, z, z])
    }

    /// A hint cell holding `value` (appended to the witness stream).
    pub fn hint(&mut self, value: F) -> Var {
        let dst = self.alloc();
        self.witness.push(value);
        let _ = step(
            &Instr::Hint { dst: dst.0 },
            &mut self.mem,
            &mut std::iter::once(value),
        );
        self.program.instrs.push(Instr::Hint { dst: dst.0 });
        self.program.label_of.push(self.cur_label);
        dst
    }

    /// A public-input cell holding `value`: a hint recorded in [`Program::public_inputs`] (the value a
    /// verifier of the execution fixes).
    pub fn public_input(&mut self, value: F) -> Var {
        let v = self.hint(value);
        self.program.public_inputs.push(v.0);
        v
    }

    /// An extension hint.
    pub fn hint_ext(&mut self, value: Ext3) -> ExtVar {
        ExtVar(value.0.map(|c| self.hint(c)))
    }

    fn bin(&mut self, f: fn(Addr, Addr, Addr) -> Instr, a: Var, b: Var) -> Var {
        let dst = self.alloc();
        self.emit(f(dst.0, a.0, b.0));
        dst
    }

    pub fn add(&mut self, a: Var, b: Var) -> Var {
        self.bin(|dst, a, b| Instr::Add { dst, a, b }, a, b)
    }

    pub fn sub(&mut self, a: Var, b: Var) -> Var {
        self.bin(|dst, a, b| Instr::Sub { dst, a, b }, a, b)
    }

    pub fn mul(&mut self, a: Var, b: Var) -> Var {
        self.bin(|dst, a, b| Instr::Mul { dst, a, b }, a, b)
    }

    fn ext_bin(
        &mut self,
        f: fn(ExtAddr, ExtAddr, ExtAddr) -> Instr,
        a: ExtVar,
        b: ExtVar,
    ) -> ExtVar {
        let dst = self.alloc_ext();
        self.emit(f(dst.addr(), a.addr(), b.addr()));
        dst
    }

    pub fn ext_add(&mut self, a: ExtVar, b: ExtVar) -> ExtVar {
        self.ext_bin(|dst, a, b| Instr::ExtAdd { dst, a, b }, a, b)
    }

    pub fn ext_sub(&mut self, a: ExtVar, b: ExtVar) -> ExtVar {
        self.ext_bin(|dst, a, b| Instr::ExtSub { dst, a, b }, a, b)
    }

    pub fn ext_mul(&mut self, a: ExtVar, b: ExtVar) -> ExtVar {
        self.ext_bin(|dst, a, b| Instr::ExtMul { dst, a, b }, a, b)
    }

    /// `a · b`, `b` in the base field.
    pub fn ext_mul_base(&mut self, a: ExtVar, b: Var) -> ExtVar {
        let dst = self.alloc_ext();
        self.emit(Instr::ExtMulBase {
            dst: dst.addr(),
            a: a.addr(),
            b: b.0,
        });
        dst
    }

    /// `a^-1` (the execution fails if `a = 0`).
    pub fn ext_inv(&mut self, a: ExtVar) -> ExtVar {
        let dst = self.alloc_ext();
        self.emit(Instr::ExtInv {
            dst: dst.addr(),
            a: a.addr(),
        });
        dst
    }

    /// `a + c`, `c` a constant extension element (no instruction when `c = 0`).
    pub fn ext_add_const(&mut self, a: ExtVar, c: Ext3) -> ExtVar {
        if c.is_zero() {
            return a;
        }
        let c = self.ext_constant(c);
        self.ext_add(a, c)
    }

    /// `a · c`, `c` a constant base element.
    pub fn ext_mul_const(&mut self, a: ExtVar, c: F) -> ExtVar {
        let c = self.constant(c);
        self.ext_mul_base(a, c)
    }

    /// `bit ? a : b` (the execution fails unless `bit` is 0 or 1).
    pub fn select(&mut self, bit: Var, a: Var, b: Var) -> Var {
        let dst = self.alloc();
        self.emit(Instr::Select {
            dst: dst.0,
            bit: bit.0,
            a: a.0,
            b: b.0,
        });
        dst
    }

    /// [`Builder::select`] of extension elements (three selects).
    pub fn ext_select(&mut self, bit: Var, a: ExtVar, b: ExtVar) -> ExtVar {
        ExtVar(std::array::from_fn(|k| self.select(bit, a.0[k], b.0[k])))
    }

    pub fn assert_eq(&mut self, a: Var, b: Var) {
        self.emit(Instr::AssertEq { a: a.0, b: b.0 });
    }

    pub fn ext_assert_eq(&mut self, a: ExtVar, b: ExtVar) {
        for k in 0..3 {
            self.assert_eq(a.0[k], b.0[k]);
        }
    }

    /// The Poseidon2 permutation of `s`.
    pub fn poseidon2(&mut self, s: [Var; 8]) -> [Var; 8] {
        let dst: [Var; 8] = std::array::from_fn(|_| self.alloc());
        self.emit(Instr::Poseidon2 {
            dst: dst.map(|v| v.0),
            src: s.map(|v| v.0),
        });
        dst
    }

    /// The `n` low bits of `x`, least significant first (the execution fails if `x >= 2^n`; `n = 64`:
    /// the canonical decomposition).
    pub fn bits(&mut self, x: Var, n: u8) -> Vec<Var> {
        let first = self.program.num_cells;
        let bits: Vec<Var> = (0..n).map(|_| self.alloc()).collect();
        self.emit(Instr::Bits {
            dst: first,
            src: x.0,
            n,
        });
        bits
    }

    /// `prod_k (bits[k] ? c[k] : 1)`: the constant powers `c[k] = g^(e_k)` selected by the bits of an
    /// exponent (e.g. `g^(bitrev(i))` from the bits of `i`). `None` bits count as 0.
    pub fn select_product(&mut self, bits: &[Var], c: &[F]) -> Var {
        let one = self.one();
        let mut acc = one;
        for (&b, &ck) in bits.iter().zip(c) {
            let ck = self.constant(ck);
            let f = self.select(b, ck, one);
            acc = if acc == one { f } else { self.mul(acc, f) };
        }
        acc
    }
}
