//! The AIR API: a table declares its shape and writes its constraints and bus interactions once, against an
//! [`AirBuilder`] of symbolic [`Expr`]essions. [`CompiledAir`] turns that into the flattened [`Circuit`]
//! every consumer evaluates (prover on the LDE, verifier at the out-of-domain point, debug checker on the
//! trace rows, later a GPU code generator), with degrees inferred and checked against the blowup.
//!
//! Trace shape: a table of height n (a power of two) is an `n x width` row-major matrix, rows in natural
//! order (row i is the evaluation at ω_n^i); its preprocessed trace, if any, is `n x preprocessed_width`.

use thiserror::Error;

use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::logup::{self, LogupChallenges, LogupLayout};
use crate::symbolic::{Circuit, Expr, LeafValues, Node};

/// Direction of a bus interaction. A `Send` of tuple v with multiplicity m adds `m / fp(v)` to the bus sum,
/// a `Receive` subtracts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Send,
    Receive,
}

impl Direction {
    pub fn to_u8(self) -> u8 {
        match self {
            Direction::Send => 0,
            Direction::Receive => 1,
        }
    }
}

/// One bus interaction of a table: on every row, the tuple `values` is sent to / received from bus `bus`
/// `multiplicity` times. Multiplicities must evaluate to integers in `[0, 2^log_max_multiplicity)` on every
/// row (see [`crate::config::StarkConfig`]); *constraining* them (boolean flags, counters) is the AIR's job,
/// the prover refuses traces that break the bound.
#[derive(Clone, Debug)]
pub struct Interaction {
    pub bus: u32,
    pub values: Vec<Expr>,
    pub multiplicity: Expr,
    pub direction: Direction,
}

/// A named constraint `expr = 0` on every row.
#[derive(Clone, Debug)]
pub struct Constraint {
    pub name: String,
    pub expr: Expr,
}

/// One table of the machine.
pub trait Air: Sync {
    /// Table name, used in errors and in the transcript.
    fn name(&self) -> &str;
    /// Number of main (witness) columns, >= 1.
    fn width(&self) -> usize;
    /// Number of preprocessed columns (committed in their own round from data the verifier trusts).
    fn preprocessed_width(&self) -> usize {
        0
    }
    /// Emit the constraints and interactions. Called once per [`CompiledAir::new`].
    fn eval(&self, builder: &mut AirBuilder);
    /// The AIR's public values: instance constants that its constraints read as [`AirBuilder::public`]`(i)`
    /// (leaf [`Expr::Public`]`(i)`), e.g. a segment's start pc. Kept beside the circuit
    /// ([`CompiledAir::public_values`]) rather than folded into it, so that instances that differ only in
    /// these values share one circuit (and one generated GPU program). Bound into the statement digest and
    /// the AIR digest ([`crate::statement`]): a proof made with other values does not verify. Default: none.
    fn public_values(&self) -> Vec<F> {
        Vec::new()
    }
    /// Names of the main columns, `width()` of them, for messages that point at a cell (the machine's
    /// tables give their column structs' field paths, e.g. `r1.old_ts`, `abs_r[0]`). Default: `main[i]`.
    fn column_names(&self) -> Vec<String> {
        (0..self.width()).map(|c| format!("main[{c}]")).collect()
    }
    /// Whether a proof may leave this table out: height 0, *absent* (docs/stark.md §10): nothing committed,
    /// opened or evaluated for it, bus sum 0. Default `false`: the verifier refuses a proof without the
    /// table ([`crate::VerifyError::RequiredTableAbsent`]).
    ///
    /// Sound only for a table whose padding-only trace (every interaction's multiplicity 0 on every row)
    /// satisfies its constraints: an absent table then proves exactly what such a trace proves (no
    /// interaction at all), so a prover gains nothing by dropping it; a caller that needed its bus sends
    /// fails the bus balance. A precompile table qualifies; a table with a constraint no padding trace
    /// meets (e.g. a CPU whose first row must be a real instruction) or with preprocessed columns (fixed
    /// height, [`AirError::AbsentWithPreprocessed`]) must not.
    fn may_be_absent(&self) -> bool {
        false
    }
}

/// Collects a table's constraints and interactions.
///
/// Column accessors panic on an out-of-range column: that is a bug in the AIR definition (trusted code),
/// never reachable from proof bytes.
pub struct AirBuilder {
    width: usize,
    preprocessed_width: usize,
    num_public: usize,
    pub constraints: Vec<Constraint>,
    pub interactions: Vec<Interaction>,
}

impl AirBuilder {
    /// A builder for an AIR of `width` main and `preprocessed_width` preprocessed columns without public
    /// values ([`AirBuilder::for_air`] takes all three from an [`Air`]).
    pub fn new(width: usize, preprocessed_width: usize) -> Self {
        Self {
            width,
            preprocessed_width,
            num_public: 0,
            constraints: Vec::new(),
            interactions: Vec::new(),
        }
    }

    /// A builder for `air`: its widths and `air.public_values().len()` public values.
    pub fn for_air(air: &dyn Air) -> Self {
        Self {
            num_public: air.public_values().len(),
            ..Self::new(air.width(), air.preprocessed_width())
        }
    }

    /// Public value `i` ([`Air::public_values`]`[i]`): degree 0, its value supplied at evaluation time.
    pub fn public(&self, i: usize) -> Expr {
        assert!(
            i < self.num_public,
            "public value {i} >= {} public values",
            self.num_public
        );
        Expr::Public(i)
    }

    /// Main column `col` at the current row.
    pub fn main(&self, col: usize) -> Expr {
        assert!(
            col < self.width,
            "main column {col} >= width {}",
            self.width
        );
        Expr::Main { col, next: false }
    }

    /// Main column `col` at the next row (cyclic).
    pub fn main_next(&self, col: usize) -> Expr {
        assert!(
            col < self.width,
            "main column {col} >= width {}",
            self.width
        );
        Expr::Main { col, next: true }
    }

    /// Preprocessed column `col` at the current row.
    pub fn preprocessed(&self, col: usize) -> Expr {
        assert!(
            col < self.preprocessed_width,
            "preprocessed column {col} >= width {}",
            self.preprocessed_width
        );
        Expr::Preprocessed { col, next: false }
    }

    /// Preprocessed column `col` at the next row (cyclic).
    pub fn preprocessed_next(&self, col: usize) -> Expr {
        assert!(
            col < self.preprocessed_width,
            "preprocessed column {col} >= width {}",
            self.preprocessed_width
        );
        Expr::Preprocessed { col, next: true }
    }

    pub fn is_first_row(&self) -> Expr {
        Expr::IsFirstRow
    }

    pub fn is_last_row(&self) -> Expr {
        Expr::IsLastRow
    }

    pub fn is_transition(&self) -> Expr {
        Expr::IsTransition
    }

    /// `expr = 0` on every row.
    pub fn assert_zero(&mut self, name: impl Into<String>, expr: impl Into<Expr>) {
        self.constraints.push(Constraint {
            name: name.into(),
            expr: expr.into(),
        });
    }

    /// `a = b` on every row.
    pub fn assert_eq(&mut self, name: impl Into<String>, a: impl Into<Expr>, b: impl Into<Expr>) {
        self.assert_zero(name, a.into() - b.into());
    }

    /// `a * (a - 1) = 0` on every row.
    pub fn assert_bool(&mut self, name: impl Into<String>, a: impl Into<Expr>) {
        let a = a.into();
        self.assert_zero(name, a.clone() * (a - Expr::one()));
    }

    /// Send `values` on `bus` with `multiplicity`.
    pub fn send(&mut self, bus: u32, values: Vec<Expr>, multiplicity: impl Into<Expr>) {
        self.interactions.push(Interaction {
            bus,
            values,
            multiplicity: multiplicity.into(),
            direction: Direction::Send,
        });
    }

    /// Receive `values` from `bus` with `multiplicity`.
    pub fn receive(&mut self, bus: u32, values: Vec<Expr>, multiplicity: impl Into<Expr>) {
        self.interactions.push(Interaction {
            bus,
            values,
            multiplicity: multiplicity.into(),
            direction: Direction::Receive,
        });
    }
}

/// Errors in an AIR definition (found when compiling it).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AirError {
    #[error(
        "table `{table}`: constraint `{constraint}` has degree {degree} > max {max} (= blowup + 1)"
    )]
    DegreeTooHigh {
        table: String,
        constraint: String,
        degree: usize,
        max: usize,
    },
    #[error("table `{table}`: interaction {index} (bus {bus}) needs degree {degree} > max {max}")]
    InteractionDegreeTooHigh {
        table: String,
        index: usize,
        bus: u32,
        degree: usize,
        max: usize,
    },
    #[error("table `{table}`: main width must be >= 1")]
    ZeroWidth { table: String },
    /// [`Air::may_be_absent`] on a table with preprocessed columns (whose height is fixed by its
    /// preprocessed trace).
    #[error(
        "table `{table}`: a table with preprocessed columns has a fixed height and cannot be absent \
         (`may_be_absent`)"
    )]
    AbsentWithPreprocessed { table: String },
    /// A constraint or interaction reads a public value the AIR does not declare
    /// ([`Air::public_values`]).
    #[error("table `{table}`: the circuit reads public value {index}, but the AIR has {count}")]
    PublicIndex {
        table: String,
        index: usize,
        count: usize,
    },
    #[error("table `{table}`: {names} column names for width {width}")]
    ColumnNames {
        table: String,
        names: usize,
        width: usize,
    },
}

/// A compiled interaction: node indices into [`CompiledAir::circuit`].
#[derive(Clone, Debug)]
pub struct CompiledInteraction {
    pub bus: u32,
    pub direction: Direction,
    pub values: Vec<u32>,
    pub multiplicity: u32,
    /// Degree of the fingerprint (max degree of the values).
    pub fingerprint_degree: usize,
    pub multiplicity_degree: usize,
}

/// Who reads one main column of a table ([`CompiledAir::column_readers`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnReaders {
    /// Indices into [`CompiledAir::constraints`] of the constraints whose expression reads the column.
    pub constraints: Vec<usize>,
    /// Indices into [`CompiledAir::interactions`] of the interactions whose tuple values or multiplicity
    /// read it (ascending, distinct).
    pub interactions: Vec<usize>,
    /// Whether some reader reads it at the next row, so that a change on row r is seen on row r - 1 too.
    pub next_row: bool,
}

/// A compiled constraint: a node of [`CompiledAir::circuit`] with its name and degree.
#[derive(Clone, Debug)]
pub struct CompiledConstraint {
    pub name: String,
    pub node: u32,
    pub degree: usize,
}

/// A table's constraints and interactions in evaluable form, with the LogUp layout and degree bookkeeping.
///
/// Folded constraint order (the order of the random linear combination with the quotient challenge):
/// the table's own constraints in `eval` order, then the LogUp constraints of [`LogupLayout`].
#[derive(Clone, Debug)]
pub struct CompiledAir {
    pub name: String,
    pub width: usize,
    pub preprocessed_width: usize,
    /// [`Air::column_names`]: `column_names[c]` names main column `c` (length `width`).
    pub column_names: Vec<String>,
    pub circuit: Circuit,
    /// [`Air::public_values`]: `public_values[i]` is the value of the circuit's [`Node::Public`]`(i)` leaves
    /// (every index the circuit reads is `< public_values.len()`).
    pub public_values: Vec<F>,
    pub constraints: Vec<CompiledConstraint>,
    pub interactions: Vec<CompiledInteraction>,
    pub logup: LogupLayout,
    /// Max symbolic degree over all constraints, LogUp ones included (>= 1).
    pub degree: usize,
    /// Number of degree-< n quotient chunks: `max(degree - 1, 1)`.
    pub num_quotient_chunks: usize,
    /// [`Air::may_be_absent`]: a proof may give this table height 0 (absent).
    pub may_be_absent: bool,
}

impl CompiledAir {
    /// Compile `air`, allowing constraints of degree at most `max_degree` (= blowup + 1).
    pub fn new(air: &dyn Air, max_degree: usize) -> Result<Self, AirError> {
        let name = air.name().to_string();
        if air.width() == 0 {
            return Err(AirError::ZeroWidth { table: name });
        }
        if air.may_be_absent() && air.preprocessed_width() > 0 {
            return Err(AirError::AbsentWithPreprocessed { table: name });
        }
        let column_names = air.column_names();
        if column_names.len() != air.width() {
            return Err(AirError::ColumnNames {
                table: name,
                names: column_names.len(),
                width: air.width(),
            });
        }
        let public_values = air.public_values();
        let mut b = AirBuilder::for_air(air);
        air.eval(&mut b);
        let mut circuit = Circuit::new();
        let mut constraints = Vec::with_capacity(b.constraints.len());
        let mut degree = 1;
        for c in &b.constraints {
            let node = circuit.add(&c.expr);
            let d = circuit.degrees[node as usize];
            if d > max_degree {
                return Err(AirError::DegreeTooHigh {
                    table: name,
                    constraint: c.name.clone(),
                    degree: d,
                    max: max_degree,
                });
            }
            degree = degree.max(d);
            constraints.push(CompiledConstraint {
                name: c.name.clone(),
                node,
                degree: d,
            });
        }
        let mut interactions = Vec::with_capacity(b.interactions.len());
        for (index, it) in b.interactions.iter().enumerate() {
            let values: Vec<u32> = it.values.iter().map(|v| circuit.add(v)).collect();
            let multiplicity = circuit.add(&it.multiplicity);
            let fingerprint_degree = values
                .iter()
                .map(|&v| circuit.degrees[v as usize])
                .max()
                .unwrap_or(0);
            let multiplicity_degree = circuit.degrees[multiplicity as usize];
            let ci = CompiledInteraction {
                bus: it.bus,
                direction: it.direction,
                values,
                multiplicity,
                fingerprint_degree,
                multiplicity_degree,
            };
            let d = logup::group_degree(&[&ci]);
            if d > max_degree {
                return Err(AirError::InteractionDegreeTooHigh {
                    table: name,
                    index,
                    bus: it.bus,
                    degree: d,
                    max: max_degree,
                });
            }
            interactions.push(ci);
        }
        if let Some(index) = circuit.nodes.iter().find_map(|n| match *n {
            Node::Public(i) if i >= public_values.len() => Some(i),
            _ => None,
        }) {
            return Err(AirError::PublicIndex {
                table: name,
                index,
                count: public_values.len(),
            });
        }
        let cap = degree.max(3).min(max_degree);
        let logup = LogupLayout::new(&interactions, cap);
        degree = degree.max(logup.degree);
        Ok(Self {
            name,
            width: air.width(),
            preprocessed_width: air.preprocessed_width(),
            column_names,
            circuit,
            public_values,
            constraints,
            interactions,
            logup,
            degree,
            num_quotient_chunks: degree.saturating_sub(1).max(1),
            may_be_absent: air.may_be_absent(),
        })
    }

    /// The main columns `(col, next)` that circuit node `node` reads (`next`: at the next row), in node
    /// order; e.g. `node` = [`CompiledConstraint::node`] or an interaction's value or multiplicity.
    pub fn main_leaves(&self, node: u32) -> Vec<(usize, bool)> {
        self.circuit
            .leaves(node)
            .into_iter()
            .filter_map(|l| match l {
                Node::Main { col, next } => Some((col, next)),
                _ => None,
            })
            .collect()
    }

    /// Main columns read by each interaction: `[i]` lists, sorted and distinct, the columns that the tuple
    /// values or the multiplicity of [`CompiledAir::interactions`]`[i]` read (at either row offset).
    pub fn interaction_main_columns(&self) -> Vec<Vec<usize>> {
        self.interactions
            .iter()
            .map(|it| {
                let mut cols: Vec<usize> = it
                    .values
                    .iter()
                    .chain([&it.multiplicity])
                    .flat_map(|&v| self.main_leaves(v))
                    .map(|(c, _)| c)
                    .collect();
                cols.sort_unstable();
                cols.dedup();
                cols
            })
            .collect()
    }

    /// Whether interaction `i` is an entry of a fixed table: its tuple values read no main column and at
    /// least one preprocessed column (data the verifier trusts), so only its multiplicity is the prover's.
    /// A bus with such an entry is a lookup into a fixed table (see [`crate::logup::fixed_lookup_buses`]).
    pub fn is_fixed_entry(&self, i: usize) -> bool {
        let mut prep = false;
        for &v in &self.interactions[i].values {
            for l in self.circuit.leaves(v) {
                match l {
                    Node::Main { .. } => return false,
                    Node::Preprocessed { .. } => prep = true,
                    _ => {}
                }
            }
        }
        prep
    }

    /// Who reads each main column: `[c]` for column `c` (length `width`), from the symbolic circuit.
    pub fn column_readers(&self) -> Vec<ColumnReaders> {
        let mut readers = vec![ColumnReaders::default(); self.width];
        for (i, c) in self.constraints.iter().enumerate() {
            for (col, next) in self.main_leaves(c.node) {
                let r = &mut readers[col];
                if r.constraints.last() != Some(&i) {
                    r.constraints.push(i);
                }
                r.next_row |= next;
            }
        }
        for (i, it) in self.interactions.iter().enumerate() {
            let nodes = it.values.iter().chain([&it.multiplicity]);
            for (col, next) in nodes.flat_map(|&v| self.main_leaves(v)) {
                let r = &mut readers[col];
                if r.interactions.last() != Some(&i) {
                    r.interactions.push(i);
                }
                r.next_row |= next;
            }
        }
        readers
    }

    /// Number of aux base columns (3 per extension column; 0 without interactions).
    pub fn aux_width(&self) -> usize {
        self.logup.aux_width()
    }

    /// Total number of folded constraints (own + LogUp).
    pub fn num_folded_constraints(&self) -> usize {
        self.constraints.len() + self.logup.num_constraints()
    }

    /// The folding challenge with the powers of `alpha` this table needs (computed once per proof).
    pub fn fold_challenge(&self, alpha: Ext3) -> FoldChallenge {
        let n = self.constraints.len();
        let l = self.logup.num_constraints();
        // Constraint i gets alpha^(N - 1 - i), N = n + l (the LogUp constraints come last).
        let powers = (0..n).map(|i| alpha.pow((l + n - 1 - i) as u64)).collect();
        FoldChallenge { alpha, powers }
    }

    /// Fold all constraints at one point: `sum_i alpha^(N-1-i) C_i` over the `N` folded constraints (the
    /// table's own, then the LogUp ones), where the main/preprocessed leaves have type `T` (`F` on LDE rows,
    /// `Ext3` at the out-of-domain point), the aux values are extension elements (`aux_local`/`aux_next`,
    /// one per extension column) and `bus_sum` is the table's claimed LogUp sum. The table's own constraints
    /// are combined with precomputed powers (an `Ext3 x F` product each on LDE rows), the LogUp ones by
    /// Horner; the value is the same as Horner over all `N`. `scratch` receives the circuit node values.
    #[allow(clippy::too_many_arguments)]
    pub fn eval_folded<T, L>(
        &self,
        leaves: &L,
        aux_local: &[Ext3],
        aux_next: &[Ext3],
        challenges: &LogupChallenges,
        bus_sum: Ext3,
        fold: &FoldChallenge,
        scratch: &mut Vec<T>,
    ) -> Ext3
    where
        T: logup::ExtMul,
        L: LeafValues<T>,
    {
        self.circuit.eval(leaves, &self.public_values, scratch);
        let sel = [
            leaves.is_first_row(),
            leaves.is_last_row(),
            leaves.is_transition(),
        ];
        self.fold_row(
            |i| scratch[i as usize],
            sel,
            aux_local,
            aux_next,
            challenges,
            bus_sum,
            fold,
        )
    }

    /// The fold plan, the one definition of `C = sum_i alpha^(N-1-i) C_i` that the host quotient
    /// ([`crate::backend::quotient_host`]), the verifier ([`CompiledAir::eval_folded`]) and the GPU code
    /// generators read: given the circuit's node values at one point (`node(k)`, `k` a node index), the
    /// selectors `[L_0, L_{n-1}, x - ω^{n-1}]` and the aux values there, the table's own constraints
    /// ([`CompiledAir::constraints`], in order) are combined with the precomputed powers
    /// [`FoldChallenge::powers`] (`alpha^(N-1-i)`), then the LogUp constraints of [`LogupLayout`] are folded in
    /// by Horner ([`logup::fold_constraints`]: one per term column, then the running sum's first-row,
    /// transition and last-row constraints).
    #[allow(clippy::too_many_arguments)]
    pub fn fold_row<T: logup::ExtMul>(
        &self,
        node: impl Fn(u32) -> T,
        sel: [T; 3],
        aux_local: &[Ext3],
        aux_next: &[Ext3],
        challenges: &LogupChallenges,
        bus_sum: Ext3,
        fold: &FoldChallenge,
    ) -> Ext3 {
        let mut a = logup::HostFold {
            node,
            sel,
            aux_local,
            aux_next,
            challenges,
            bus_sum,
            alpha: fold.alpha,
            powers: &fold.powers,
        };
        self.fold_with(&mut a)
    }

    /// The fold plan over any [`logup::FoldAlgebra`] (what [`CompiledAir::fold_row`] runs over field values,
    /// and the CUDA quotient generator over symbolic ones): `acc = sum_i node(C_i) · power(i)` over the own
    /// constraints in order, plus, with interactions, the LogUp fold [`logup::fold_constraints_with`]
    /// started from zero.
    pub fn fold_with<A: logup::FoldAlgebra>(&self, a: &mut A) -> A::Ext {
        self.fold_part_with(a, 0..self.constraints.len(), true)
    }

    /// One part of [`CompiledAir::fold_with`]: the terms of the own constraints `constraints` (in order)
    /// and, if `logup` and the table has interactions, the LogUp fold. The parts of a partition of
    /// `0..constraints.len()` (with `logup` in one of them) sum to `fold_with`'s value (the CUDA quotient
    /// generator splits a large table's fold into such parts, one program each). Panics if `constraints`
    /// is out of range (a caller's bug, not input).
    pub fn fold_part_with<A: logup::FoldAlgebra>(
        &self,
        a: &mut A,
        constraints: std::ops::Range<usize>,
        logup: bool,
    ) -> A::Ext {
        let mut acc = a.zero();
        for i in constraints {
            let p = a.power(i);
            let v = a.node(self.constraints[i].node);
            let t = a.mul_base(p, v);
            acc = a.add(acc, t);
        }
        if logup && !self.interactions.is_empty() {
            let zero = a.zero();
            let l = logup::fold_constraints_with(&self.logup, &self.interactions, a, zero);
            acc = a.add(acc, l);
        }
        acc
    }
}

/// The constraint-folding challenge `alpha` and, per own constraint `i` of a table,
/// `alpha^(N - 1 - i)` (see [`CompiledAir::fold_challenge`]).
#[derive(Clone, Debug)]
pub struct FoldChallenge {
    pub alpha: Ext3,
    pub powers: Vec<Ext3>,
}

/// Compile for a configuration: max degree [`crate::StarkConfig::max_constraint_degree`]; in zk mode a
/// table of degree `d` has `2d - 1` quotient chunks of degree `< n` (its traces have degree `< 2n`, so
/// `deg C / Z_H < (2d - 1) n`).
pub fn compile_for(
    airs: &[&dyn Air],
    config: &crate::StarkConfig,
) -> Result<Vec<CompiledAir>, AirError> {
    let mut v = compile_all(airs, config.max_constraint_degree())?;
    if config.zk {
        for a in &mut v {
            a.num_quotient_chunks = 2 * a.degree - 1;
        }
    }
    Ok(v)
}

/// Compile several tables with the same degree bound, one table per host thread (rayon; the result in
/// `airs` order; on failure the error of one failing table).
pub fn compile_all(airs: &[&dyn Air], max_degree: usize) -> Result<Vec<CompiledAir>, AirError> {
    use rayon::prelude::*;
    airs.par_iter()
        .map(|a| CompiledAir::new(*a, max_degree))
        .collect()
}

/// Leaf values on row `row` of a natural-order trace of height n (used by the aux builder and the checker).
/// Selectors take their true polynomial values on ω^row: L_0, L_{n-1} are 0/1 and `is_transition` is
/// `ω^row - ω^{n-1}`.
pub struct TraceRow<'a> {
    pub main: &'a [F],
    pub main_next: &'a [F],
    pub prep: &'a [F],
    pub prep_next: &'a [F],
    pub first: F,
    pub last: F,
    pub transition: F,
}

impl LeafValues<F> for TraceRow<'_> {
    #[inline]
    fn main(&self, col: usize, next: bool) -> F {
        if next {
            self.main_next[col]
        } else {
            self.main[col]
        }
    }
    #[inline]
    fn preprocessed(&self, col: usize, next: bool) -> F {
        if next {
            self.prep_next[col]
        } else {
            self.prep[col]
        }
    }
    #[inline]
    fn is_first_row(&self) -> F {
        self.first
    }
    #[inline]
    fn is_last_row(&self) -> F {
        self.last
    }
    #[inline]
    fn is_transition(&self) -> F {
        self.transition
    }
}

/// The canonicity witness of a u64 `v` split as words `(lo, hi)` ([`assert_canonical`]):
/// `(hi - (2^32 - 1))^-1`, or 0 when `hi = 2^32 - 1`.
pub fn canonical_witness(v: u64) -> F {
    (F::from_u64(v >> 32) - F::from_u64(0xffff_ffff))
        .try_inverse()
        .unwrap_or(F::ZERO)
}

/// `x = lo + 2^32 hi < p` for words `lo, hi < 2^32` (their range is the caller's), with the witness `inv`
/// ([`canonical_witness`]; docs/tables.md §6.19): `e (1 - e inv) = 0` and `lo (1 - e inv) = 0` with
/// `e = hi - (2^32 - 1)`: `hi = 2^32 - 1` forces `lo = 0`, otherwise `inv = 1/e`. Two constraints of
/// degree 3 (for linear `lo`, `hi`, `inv`), named `{name} canonical: inverse` and
/// `{name} canonical: hi = 2^32 - 1 needs lo = 0`. The one definition the POSEIDON2 precompile's words
/// and the recursion `bits` table use.
pub fn assert_canonical(b: &mut AirBuilder, name: &str, lo: &Expr, hi: &Expr, inv: &Expr) {
    let e = hi.clone() - Expr::constant(0xffff_ffff);
    let z = Expr::one() - e.clone() * inv;
    b.assert_zero(format!("{name} canonical: inverse"), e * z.clone());
    b.assert_zero(
        format!("{name} canonical: hi = 2^32 - 1 needs lo = 0"),
        lo.clone() * z,
    );
}
