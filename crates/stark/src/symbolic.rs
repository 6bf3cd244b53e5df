//! Symbolic constraint expressions: the one form every consumer of an AIR reads.
//!
//! An AIR writes its constraints once, as [`Expr`] trees built with `+`, `-`, `*` from leaves (constants,
//! main and preprocessed columns at row offset 0 or 1, the three row selectors, and the AIR's public values). The tree is then
//! flattened into a [`Circuit`]: a topologically ordered, hash-consed DAG of [`Node`]s (each node appears
//! once, operands always precede their users). The prover evaluates the circuit on every LDE row, the
//! verifier at the out-of-domain point, the debug checker on every trace row, and a GPU code generator can
//! emit one statement per node.
//!
//! **Public values** ([`Expr::Public`]): instance constants of the AIR (a segment's start pc, its cycle
//! count, ...), given by [`crate::air::Air::public_values`] and kept beside the circuit in
//! [`crate::air::CompiledAir::public_values`]. A public value is a leaf of degree 0 that is never folded
//! into a constant: the circuit (and the GPU code generated from it) depends on the AIR's shape only, the
//! values are supplied at evaluation time (`public` of [`Circuit::eval`] and [`Circuit::eval_block`]).
//!
//! **Degree** is inferred structurally ([`Expr::degree`], [`Circuit::degrees`]): constants and public values
//! 0; columns and selectors 1; `a + b`, `a - b` the max; `a * b` the sum. Counting a selector (a polynomial of degree up to
//! n - 1) as degree 1 is what the quotient needs: a constraint of symbolic degree `d` has a quotient
//! `C(X) / Z_H(X)` of degree `< (d - 1) * n`.
//!
//! **Selectors** on a trace of height n with generator ω (row i is the evaluation at ω^i):
//! * `IsFirstRow` = L_0(x) = (x^n - 1) / (n (x - 1)), 1 on row 0, 0 elsewhere on H;
//! * `IsLastRow` = L_{n-1}(x) = ω^{n-1} (x^n - 1) / (n (x - ω^{n-1})), 1 on row n-1, 0 elsewhere on H;
//! * `IsTransition` = x - ω^{n-1}: zero on row n-1, nonzero elsewhere (so it is *not* 1 on other rows;
//!   it only gates).
//!
//! Row offset 1 ("next") wraps cyclically: on row n-1 it reads row 0.

use std::collections::HashMap;
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};
use std::sync::Arc;

use crate::field::{Algebra, PrimeCharacteristicRing, PrimeField64, F};

/// A symbolic expression over the trace of one table. Cheap to clone (children are shared).
#[derive(Clone)]
pub enum Expr {
    /// A base-field constant.
    Const(F),
    /// Public value `i` of the AIR ([`crate::air::Air::public_values`]`[i]`): a base-field value fixed per
    /// instance, degree 0, supplied at evaluation time.
    Public(usize),
    /// Main trace column `col`, at the current row (`next = false`) or the next row (`next = true`).
    Main {
        col: usize,
        next: bool,
    },
    /// Preprocessed column `col`, current or next row.
    Preprocessed {
        col: usize,
        next: bool,
    },
    /// L_0: 1 on the first row, 0 on the others.
    IsFirstRow,
    /// L_{n-1}: 1 on the last row, 0 on the others.
    IsLastRow,
    /// x - ω^{n-1}: 0 on the last row only.
    IsTransition,
    Add(Arc<Expr>, Arc<Expr>),
    Sub(Arc<Expr>, Arc<Expr>),
    Mul(Arc<Expr>, Arc<Expr>),
    Neg(Arc<Expr>),
}

impl Expr {
    /// The constant `v` (reduced mod p).
    pub fn constant(v: u64) -> Self {
        Expr::Const(F::from_u64(v))
    }

    pub fn zero() -> Self {
        Expr::Const(F::ZERO)
    }

    pub fn one() -> Self {
        Expr::Const(F::ONE)
    }

    /// Symbolic degree (constants 0, leaves 1, `+`/`-` max, `*` sum).
    pub fn degree(&self) -> usize {
        match self {
            Expr::Const(_) | Expr::Public(_) => 0,
            Expr::Main { .. }
            | Expr::Preprocessed { .. }
            | Expr::IsFirstRow
            | Expr::IsLastRow
            | Expr::IsTransition => 1,
            Expr::Add(a, b) | Expr::Sub(a, b) => a.degree().max(b.degree()),
            Expr::Mul(a, b) => a.degree() + b.degree(),
            Expr::Neg(a) => a.degree(),
        }
    }

    /// Evaluate directly (tree walk), with `leaf` giving the value of every non-constant leaf (public values
    /// included).
    /// Used for one-off evaluations; bulk evaluation goes through [`Circuit::eval`].
    pub fn eval<T: Algebra<F> + Copy>(&self, leaf: &impl Fn(&Expr) -> T) -> T {
        match self {
            Expr::Const(c) => T::from(*c),
            Expr::Add(a, b) => a.eval(leaf) + b.eval(leaf),
            Expr::Sub(a, b) => a.eval(leaf) - b.eval(leaf),
            Expr::Mul(a, b) => a.eval(leaf) * b.eval(leaf),
            Expr::Neg(a) => -a.eval(leaf),
            _ => leaf(self),
        }
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const(c) => write!(f, "{}", c.as_canonical_u64()),
            Expr::Public(i) => write!(f, "public[{i}]"),
            Expr::Main { col, next: false } => write!(f, "main[{col}]"),
            Expr::Main { col, next: true } => write!(f, "main'[{col}]"),
            Expr::Preprocessed { col, next: false } => write!(f, "pre[{col}]"),
            Expr::Preprocessed { col, next: true } => write!(f, "pre'[{col}]"),
            Expr::IsFirstRow => write!(f, "is_first"),
            Expr::IsLastRow => write!(f, "is_last"),
            Expr::IsTransition => write!(f, "is_transition"),
            Expr::Add(a, b) => write!(f, "({a:?} + {b:?})"),
            Expr::Sub(a, b) => write!(f, "({a:?} - {b:?})"),
            Expr::Mul(a, b) => write!(f, "{a:?} * {b:?}"),
            Expr::Neg(a) => write!(f, "-{a:?}"),
        }
    }
}

impl From<F> for Expr {
    fn from(c: F) -> Self {
        Expr::Const(c)
    }
}

impl From<u64> for Expr {
    fn from(c: u64) -> Self {
        Expr::constant(c)
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Self {
        e.clone()
    }
}

macro_rules! bin_op {
    ($tr:ident, $m:ident, $var:ident) => {
        impl<R: Into<Expr>> $tr<R> for Expr {
            type Output = Expr;
            fn $m(self, rhs: R) -> Expr {
                Expr::$var(Arc::new(self), Arc::new(rhs.into()))
            }
        }
        impl<R: Into<Expr>> $tr<R> for &Expr {
            type Output = Expr;
            fn $m(self, rhs: R) -> Expr {
                Expr::$var(Arc::new(self.clone()), Arc::new(rhs.into()))
            }
        }
    };
}
bin_op!(Add, add, Add);
bin_op!(Sub, sub, Sub);
bin_op!(Mul, mul, Mul);

impl Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Neg(Arc::new(self))
    }
}

impl Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Neg(Arc::new(self.clone()))
    }
}

impl std::iter::Sum for Expr {
    fn sum<I: Iterator<Item = Expr>>(iter: I) -> Expr {
        iter.reduce(|a, b| a + b).unwrap_or_else(Expr::zero)
    }
}

impl std::iter::Product for Expr {
    fn product<I: Iterator<Item = Expr>>(iter: I) -> Expr {
        iter.reduce(|a, b| a * b).unwrap_or_else(Expr::one)
    }
}

/// One node of a flattened [`Circuit`]; operands are indices of earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// Constant, canonical value.
    Const(u64),
    /// Public value `i` of the AIR ([`Expr::Public`]).
    Public(usize),
    Main {
        col: usize,
        next: bool,
    },
    Preprocessed {
        col: usize,
        next: bool,
    },
    IsFirstRow,
    IsLastRow,
    IsTransition,
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    Neg(u32),
}

/// Values of the leaves of a circuit at one point (a trace row, an LDE row or the out-of-domain point).
pub trait LeafValues<T> {
    fn main(&self, col: usize, next: bool) -> T;
    fn preprocessed(&self, col: usize, next: bool) -> T;
    fn is_first_row(&self) -> T;
    fn is_last_row(&self) -> T;
    fn is_transition(&self) -> T;
}

/// Leaf values of a block of rows (base field), for [`Circuit::eval_block`]: the prover's LDE path.
pub trait BlockLeaves {
    /// Number of rows in the block.
    fn rows(&self) -> usize;
    /// Write the values of leaf `node` (a column or a selector: never an operation, a constant or a public
    /// value, which [`Circuit::eval_block`] fills itself) on the block's rows.
    fn fill(&self, node: Node, out: &mut [F]);
}

/// A hash-consed expression DAG in topological order (operands before users).
#[derive(Clone, Debug, Default)]
pub struct Circuit {
    pub nodes: Vec<Node>,
    /// `degrees[i]` is the symbolic degree of node `i`.
    pub degrees: Vec<usize>,
    dedup: HashMap<Node, u32>,
    by_ptr: HashMap<usize, u32>,
}

impl Circuit {
    pub fn new() -> Self {
        Self::default()
    }

    fn intern(&mut self, node: Node) -> u32 {
        if let Some(&id) = self.dedup.get(&node) {
            return id;
        }
        let deg = match node {
            Node::Const(_) | Node::Public(_) => 0,
            Node::Main { .. }
            | Node::Preprocessed { .. }
            | Node::IsFirstRow
            | Node::IsLastRow
            | Node::IsTransition => 1,
            Node::Add(a, b) | Node::Sub(a, b) => {
                self.degrees[a as usize].max(self.degrees[b as usize])
            }
            Node::Mul(a, b) => self.degrees[a as usize] + self.degrees[b as usize],
            Node::Neg(a) => self.degrees[a as usize],
        };
        let id = self.nodes.len() as u32;
        self.nodes.push(node);
        self.degrees.push(deg);
        self.dedup.insert(node, id);
        id
    }

    fn add_arc(&mut self, e: &Arc<Expr>) -> u32 {
        let key = Arc::as_ptr(e) as usize;
        if let Some(&id) = self.by_ptr.get(&key) {
            return id;
        }
        let id = self.add_expr(e);
        self.by_ptr.insert(key, id);
        id
    }

    fn add_expr(&mut self, e: &Expr) -> u32 {
        let node = match e {
            Expr::Const(c) => Node::Const(c.as_canonical_u64()),
            Expr::Public(i) => Node::Public(*i),
            Expr::Main { col, next } => Node::Main {
                col: *col,
                next: *next,
            },
            Expr::Preprocessed { col, next } => Node::Preprocessed {
                col: *col,
                next: *next,
            },
            Expr::IsFirstRow => Node::IsFirstRow,
            Expr::IsLastRow => Node::IsLastRow,
            Expr::IsTransition => Node::IsTransition,
            Expr::Add(a, b) => {
                let (a, b) = (self.add_arc(a), self.add_arc(b));
                Node::Add(a, b)
            }
            Expr::Sub(a, b) => {
                let (a, b) = (self.add_arc(a), self.add_arc(b));
                Node::Sub(a, b)
            }
            Expr::Mul(a, b) => {
                let (a, b) = (self.add_arc(a), self.add_arc(b));
                Node::Mul(a, b)
            }
            Expr::Neg(a) => Node::Neg(self.add_arc(a)),
        };
        self.intern(node)
    }

    /// Add an expression (and its sub-expressions) to the circuit; returns its node index. The pointer memo
    /// (which keeps shared sub-trees from being walked twice) is only valid while the tree is borrowed, so
    /// it is cleared afterwards.
    pub fn add(&mut self, e: &Expr) -> u32 {
        let id = self.add_expr(e);
        self.by_ptr.clear();
        id
    }

    /// The distinct leaves (main and preprocessed columns at their row offsets, selectors and public values;
    /// never constants) that node `node` depends on, in node order. One backward sweep over the nodes `<= node`
    /// (operands precede their users). Used to ask which columns a constraint or an interaction reads.
    ///
    /// # Panics
    /// If `node` is not a node of this circuit (a caller bug: node indices come from [`Circuit::add`]).
    pub fn leaves(&self, node: u32) -> Vec<Node> {
        let top = node as usize;
        assert!(top < self.nodes.len(), "node {top} >= {}", self.nodes.len());
        let mut needed = vec![false; top + 1];
        needed[top] = true;
        let mut out = Vec::new();
        for k in (0..=top).rev() {
            if !needed[k] {
                continue;
            }
            match self.nodes[k] {
                Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) => {
                    needed[a as usize] = true;
                    needed[b as usize] = true;
                }
                Node::Neg(a) => needed[a as usize] = true,
                Node::Const(_) => {}
                leaf => out.push(leaf),
            }
        }
        out.reverse();
        out
    }

    /// Evaluate every node on a block of `R = leaves.rows()` rows at once (node-major: `out[k * R + r]` is
    /// node `k` on row `r`), which amortizes the per-node dispatch of [`Circuit::eval`]. Same values;
    /// `public` as there.
    ///
    /// # Panics
    /// If a [`Node::Public`] index is `>= public.len()` (a caller bug: [`crate::air::CompiledAir::new`]
    /// checks its circuit against its public values).
    pub fn eval_block<L: BlockLeaves>(&self, leaves: &L, public: &[F], out: &mut Vec<F>) {
        let r = leaves.rows();
        out.clear();
        out.resize(self.nodes.len() * r, F::ZERO);
        for (k, node) in self.nodes.iter().enumerate() {
            let (before, rest) = out.split_at_mut(k * r);
            let cur = &mut rest[..r];
            let arg = |a: u32| &before[a as usize * r..(a as usize + 1) * r];
            match *node {
                Node::Const(c) => cur.fill(F::new(c)),
                Node::Public(i) => cur.fill(public[i]),
                Node::Add(a, b) => {
                    for ((o, x), y) in cur.iter_mut().zip(arg(a)).zip(arg(b)) {
                        *o = *x + *y;
                    }
                }
                Node::Sub(a, b) => {
                    for ((o, x), y) in cur.iter_mut().zip(arg(a)).zip(arg(b)) {
                        *o = *x - *y;
                    }
                }
                Node::Mul(a, b) => {
                    for ((o, x), y) in cur.iter_mut().zip(arg(a)).zip(arg(b)) {
                        *o = *x * *y;
                    }
                }
                Node::Neg(a) => {
                    for (o, x) in cur.iter_mut().zip(arg(a)) {
                        *o = -*x;
                    }
                }
                leaf => leaves.fill(leaf, cur),
            }
        }
    }

    /// Evaluate every node; `out` is resized to `nodes.len()` and holds node values afterwards. `public` are
    /// the AIR's public values ([`crate::air::CompiledAir::public_values`]): node [`Node::Public`]`(i)` is
    /// `public[i]`.
    ///
    /// # Panics
    /// If a [`Node::Public`] index is `>= public.len()` (a caller bug, as for [`Circuit::eval_block`]).
    #[inline]
    pub fn eval<T: Algebra<F> + Copy, L: LeafValues<T>>(
        &self,
        leaves: &L,
        public: &[F],
        out: &mut Vec<T>,
    ) {
        out.clear();
        out.reserve(self.nodes.len());
        for node in &self.nodes {
            let v = match *node {
                Node::Const(c) => T::from(F::new(c)),
                Node::Public(i) => T::from(public[i]),
                Node::Main { col, next } => leaves.main(col, next),
                Node::Preprocessed { col, next } => leaves.preprocessed(col, next),
                Node::IsFirstRow => leaves.is_first_row(),
                Node::IsLastRow => leaves.is_last_row(),
                Node::IsTransition => leaves.is_transition(),
                Node::Add(a, b) => out[a as usize] + out[b as usize],
                Node::Sub(a, b) => out[a as usize] - out[b as usize],
                Node::Mul(a, b) => out[a as usize] * out[b as usize],
                Node::Neg(a) => -out[a as usize],
            };
            out.push(v);
        }
    }
}
