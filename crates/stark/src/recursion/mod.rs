//! Recursion (docs/recursion.md, route (b)): the STARK verifier written as a [`Program`] of a small
//! straight-line instruction set over Goldilocks ([`program`]), and the recursion AIR set that proves a
//! program's execution ([`air`]).
//!
//! * [`program`]: the instructions, the write-once memory, the interpreter [`execute`] and the rows each
//!   table of the recursion AIR set holds ([`air::main_traces`]);
//! * [`Builder`]: the program writer;
//! * [`hash`](self#hashing-inside-a-program): the Poseidon2 leaf hash, node hash and duplex transcript
//!   of docs/stark.md §11 over builder cells ([`hash_elems`], [`compress`], [`CircuitDuplex`]), the same
//!   steps as [`crate::poseidon2`];
//! * [`air`]: one AIR per [`Table`], the program as preprocessed columns, a LogUp memory bus;
//!   [`prove_program`] / [`verify_program`];
//! * [`verifier`]: the program that verifies a Poseidon2-hashed inner proof of a given shape, and its
//!   witness ([`build_verifier`]).

pub mod air;
pub mod builder;
pub mod program;
pub mod verifier;

pub use air::{prove_program, verify_program, ProgramError, ProveProgramError, VerifyProgramError};
pub use builder::{Builder, ExtVar, Var};
pub use program::{
    execute, Addr, ExecError, ExecFailure, Execution, ExtAddr, Instr, Program, Table,
};
pub use verifier::{build_verifier, public_inputs, RecursionError, VerifierProgram};

use crate::field::F;
use crate::poseidon2::{DIGEST_ELEMS, RATE, WIDTH};

/// A digest in cells (4 elements, docs/stark.md §11.1).
pub type DigestVars = [Var; DIGEST_ELEMS];

/// The leaf hash of `elems` ([`crate::poseidon2::hash_elems`]): `s = [0, 0, 0, 0, n, 0, 0, 0]`, then per
/// chunk of 4 (the last one zero-padded) `s[0..4] = chunk`, `s = P(s)`.
pub fn hash_elems(b: &mut Builder, elems: &[Var]) -> DigestVars {
    let zero = b.zero();
    let mut s = [zero; WIDTH];
    s[RATE] = b.constant(F::new(elems.len() as u64));
    if elems.is_empty() {
        s = b.poseidon2(s);
    }
    for chunk in elems.chunks(RATE) {
        for (k, x) in s[..RATE].iter_mut().enumerate() {
            *x = chunk.get(k).copied().unwrap_or(zero);
        }
        s = b.poseidon2(s);
    }
    [s[0], s[1], s[2], s[3]]
}

/// The node hash `P(l || r)[0..4] + l` ([`crate::poseidon2::compress`]).
pub fn compress(b: &mut Builder, l: &DigestVars, r: &DigestVars) -> DigestVars {
    let s = b.poseidon2([l[0], l[1], l[2], l[3], r[0], r[1], r[2], r[3]]);
    std::array::from_fn(|i| b.add(s[i], l[i]))
}

/// The duplex sponge of the Poseidon2 transcript ([`crate::poseidon2::Duplex`], docs/stark.md §11.3) over
/// builder cells: the same `absorb`, `squeeze`, `flush`, one [`Instr::Poseidon2`] per duplex.
#[derive(Clone, Debug)]
pub struct CircuitDuplex {
    pub s: [Var; WIDTH],
    pub pending: Vec<Var>,
    pub out: Vec<Var>,
}

impl CircuitDuplex {
    /// Absorb one element.
    pub fn absorb(&mut self, b: &mut Builder, x: Var) {
        self.out.clear();
        self.pending.push(x);
        if self.pending.len() == RATE {
            self.duplex(b);
        }
    }

    fn duplex(&mut self, b: &mut Builder) {
        let k = self.pending.len();
        let zero = b.zero();
        for (i, x) in self.s[..RATE].iter_mut().enumerate() {
            *x = self.pending.get(i).copied().unwrap_or(zero);
        }
        let kk = b.constant(F::new(k as u64));
        self.s[WIDTH - 1] = b.add(self.s[WIDTH - 1], kk);
        self.s = b.poseidon2(self.s);
        self.pending.clear();
        self.out = self.s[..RATE].to_vec();
    }

    /// Duplex if anything is pending; the state.
    pub fn flush(&mut self, b: &mut Builder) -> [Var; WIDTH] {
        if !self.pending.is_empty() {
            self.duplex(b);
        }
        self.s
    }

    /// One squeezed element.
    pub fn squeeze(&mut self, b: &mut Builder) -> Var {
        if !self.pending.is_empty() || self.out.is_empty() {
            self.duplex(b);
        }
        self.out.remove(0)
    }

    /// An extension element: three squeezes, `c0, c1, c2`.
    pub fn squeeze_ext(&mut self, b: &mut Builder) -> ExtVar {
        let c0 = self.squeeze(b);
        let c1 = self.squeeze(b);
        let c2 = self.squeeze(b);
        ExtVar([c0, c1, c2])
    }

    /// Absorb `c0, c1, c2`.
    pub fn absorb_ext(&mut self, b: &mut Builder, x: ExtVar) {
        x.0.iter().for_each(|&c| self.absorb(b, c));
    }
}
