//! LogUp buses (Haböck, "Multivariate lookups based on logarithmic derivatives", ePrint 2022/1530).
//!
//! With challenges `z, a` in `Ext3` (sampled after the main commitment), the fingerprint of a tuple
//! `(v_1, ..., v_k)` on bus `b` is
//! ```text
//! fp = z - (b + a v_1 + a^2 v_2 + ... + a^k v_k)
//! ```
//! and an interaction with multiplicity m contributes `+m / fp` (send) or `-m / fp` (receive) per row.
//! A bus is balanced when all contributions of all tables, plus the public ones supplied by the caller,
//! add to zero.
//!
//! **Aux trace** of a table with interactions (`n x 3 (G + 1)` base columns, row-major, natural order; each
//! extension column is 3 adjacent base columns c0, c1, c2):
//! * term columns `t_0 .. t_{G-1}`: interactions are batched greedily in declaration order into groups; for
//!   a group `S`, `t = sum_{k in S} m_k / fp_k`, enforced by
//!   `t * prod_{k in S} fp_k - sum_{k in S} m_k prod_{j in S, j != k} fp_j = 0` (its degree is
//!   [`group_degree`]; a group grows while the degree stays within the cap, e.g. two interactions with linear
//!   fingerprints per column give degree 3);
//! * running sum `s`: `s_0 = sum_c t_c(0)`, `s_{i+1} = s_i + sum_c t_c(i+1)`; constraints
//!   `L_0 (s - sum t) = 0`, `(x - ω^{n-1}) (s' - s - sum t') = 0`, `L_{n-1} (s - S) = 0`, where `S` is the
//!   table's bus sum sent in the proof.
//!
//! **No wrap-around.** LogUp is sound only if no net multiplicity reaches p. Every table has height at most
//! `2^MAX_LOG_HEIGHT` and every multiplicity is an integer in `[0, 2^log_max_multiplicity)` (checked by the
//! prover on every row; constraining it is the AIR's job); the verifier checks that
//! `sum_tables height * n_interactions * 2^log_max_multiplicity + sum_public m < p` (see [`multiplicity_budget_ok`]).

use rayon::prelude::*;
use thiserror::Error;

use crate::air::{CompiledAir, CompiledInteraction, Direction, TraceRow};
use crate::field::{Algebra, Ext3, PrimeCharacteristicRing, PrimeField64, F, P};
use crate::matrix::RowMajorMatrix;
use crate::poly::domain_generator;

/// Largest allowed table height, `2^MAX_LOG_HEIGHT` rows (also the largest two-adic LDE domain is
/// `2^(MAX_LOG_HEIGHT + log_blowup)` <= 2^32).
pub const MAX_LOG_HEIGHT: usize = 26;

/// Smallest allowed table height, `2^MIN_LOG_HEIGHT = 2` rows. (On a 1-row table `is_transition = x - 1`
/// has degree 1 > n - 1, which breaks the quotient degree bound `(d - 1) n` for products of selectors.)
pub const MIN_LOG_HEIGHT: usize = 1;

/// Most interactions batched into one term column.
pub const MAX_GROUP: usize = 8;

/// Values that can be combined with extension elements: `F` (LDE rows) and `Ext3` (out-of-domain point).
pub trait ExtMul: Algebra<F> + Copy + Send + Sync {
    fn to_ext(self) -> Ext3;
    fn mul_ext(self, e: Ext3) -> Ext3;
    fn add_to_ext(self, e: Ext3) -> Ext3;
}

impl ExtMul for F {
    #[inline]
    fn to_ext(self) -> Ext3 {
        Ext3::from_base(self)
    }
    #[inline]
    fn mul_ext(self, e: Ext3) -> Ext3 {
        e * self
    }
    #[inline]
    fn add_to_ext(self, e: Ext3) -> Ext3 {
        e + self
    }
}

impl ExtMul for Ext3 {
    #[inline]
    fn to_ext(self) -> Ext3 {
        self
    }
    #[inline]
    fn mul_ext(self, e: Ext3) -> Ext3 {
        e * self
    }
    #[inline]
    fn add_to_ext(self, e: Ext3) -> Ext3 {
        e + self
    }
}

/// The LogUp challenges `z` (shift) and `alpha` (tuple combination).
#[derive(Clone, Debug)]
pub struct LogupChallenges {
    pub z: Ext3,
    pub alpha: Ext3,
    /// `alpha^1, alpha^2, ...` (enough for the longest tuple).
    pub alpha_powers: Vec<Ext3>,
}

impl LogupChallenges {
    pub fn new(z: Ext3, alpha: Ext3, max_tuple_len: usize) -> Self {
        let alpha_powers = (1..=max_tuple_len as u64).map(|k| alpha.pow(k)).collect();
        Self {
            z,
            alpha,
            alpha_powers,
        }
    }

    /// Placeholder for tables/protocols without interactions (never used to fingerprint).
    pub fn dummy() -> Self {
        Self::new(Ext3::ZERO, Ext3::ZERO, 0)
    }

    /// `z - (bus + sum_j alpha^(j+1) v_j)`.
    #[inline]
    pub fn fingerprint<T: ExtMul>(&self, bus: u32, values: impl Iterator<Item = T>) -> Ext3 {
        let mut acc = self.z - F::from_u32(bus);
        for (v, a) in values.zip(&self.alpha_powers) {
            acc -= v.mul_ext(*a);
        }
        acc
    }
}

/// A bus interaction supplied by the caller as plain values (e.g. public output bytes, the program).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicInteraction {
    pub bus: u32,
    pub values: Vec<F>,
    pub multiplicity: F,
    pub direction: Direction,
}

/// A borrowed public interaction (what a [`PublicSource`] yields).
#[derive(Clone, Copy, Debug)]
pub struct PublicRef<'a> {
    pub bus: u32,
    pub values: &'a [F],
    pub multiplicity: F,
    pub direction: Direction,
}

/// The public interactions of a statement, in order, read in passes (the transcript, the multiplicity
/// budget, the public LogUp sum), so that a long run of them need not be one heap value each.
pub trait PublicSource: Sync {
    /// Number of interactions.
    fn count(&self) -> usize;
    /// Calls `f` on each interaction, in order.
    fn for_each(&self, f: &mut dyn FnMut(PublicRef<'_>));
    /// The expanded list (one heap [`PublicInteraction`] each), e.g. for the prover and the debug checker.
    fn expand(&self) -> Vec<PublicInteraction> {
        let mut v = Vec::with_capacity(self.count());
        self.for_each(&mut |p| {
            v.push(PublicInteraction {
                bus: p.bus,
                values: p.values.to_vec(),
                multiplicity: p.multiplicity,
                direction: p.direction,
            })
        });
        v
    }
}

/// `a`'s interactions, then `b`'s.
impl<A: PublicSource, B: PublicSource> PublicSource for (A, B) {
    fn count(&self) -> usize {
        self.0.count() + self.1.count()
    }
    fn for_each(&self, f: &mut dyn FnMut(PublicRef<'_>)) {
        self.0.for_each(f);
        self.1.for_each(f);
    }
}

impl PublicSource for [PublicInteraction] {
    fn count(&self) -> usize {
        self.len()
    }
    fn for_each(&self, f: &mut dyn FnMut(PublicRef<'_>)) {
        for p in self {
            f(PublicRef {
                bus: p.bus,
                values: &p.values,
                multiplicity: p.multiplicity,
                direction: p.direction,
            });
        }
    }
}

impl<const N: usize> PublicSource for [PublicInteraction; N] {
    fn count(&self) -> usize {
        N
    }
    fn for_each(&self, f: &mut dyn FnMut(PublicRef<'_>)) {
        self.as_slice().for_each(f)
    }
}

impl PublicSource for Vec<PublicInteraction> {
    fn count(&self) -> usize {
        self.len()
    }
    fn for_each(&self, f: &mut dyn FnMut(PublicRef<'_>)) {
        self.as_slice().for_each(f)
    }
}

/// Public interactions with a run of byte tuples in the middle, in this order: `head`, then for each
/// `i < bytes.len()` the interaction `(bytes_bus, [start + i, bytes[i]], multiplicity 1, direction)`, then
/// `tail`. The same interactions as the expanded list (same transcript, same sums) in memory linear in
/// `bytes.len()` with a constant of one byte (e.g. a statement's public output).
pub struct PublicWithBytes<'a> {
    pub head: Vec<PublicInteraction>,
    pub bytes_bus: u32,
    pub start: u64,
    pub bytes: &'a [u8],
    pub direction: Direction,
    pub tail: Vec<PublicInteraction>,
}

impl PublicWithBytes<'_> {
    /// The expanded list (one [`PublicInteraction`] per byte), e.g. for the prover and the debug checker.
    pub fn to_vec(&self) -> Vec<PublicInteraction> {
        self.expand()
    }
}

impl PublicSource for PublicWithBytes<'_> {
    fn count(&self) -> usize {
        self.head.len() + self.bytes.len() + self.tail.len()
    }
    fn for_each(&self, f: &mut dyn FnMut(PublicRef<'_>)) {
        self.head.for_each(f);
        for (i, &b) in self.bytes.iter().enumerate() {
            f(PublicRef {
                bus: self.bytes_bus,
                values: &[F::from_u64(self.start + i as u64), F::from_u64(b as u64)],
                multiplicity: F::ONE,
                direction: self.direction,
            });
        }
        self.tail.for_each(f);
    }
}

/// How a table's interactions are batched into term columns.
#[derive(Clone, Debug, Default)]
pub struct LogupLayout {
    /// Interaction indices of each term column.
    pub groups: Vec<Vec<usize>>,
    /// Degree of each term-column constraint.
    pub group_degrees: Vec<usize>,
    /// Max degree of all LogUp constraints (2 for the running sum; 0 without interactions).
    pub degree: usize,
}

/// Degree of the term-column constraint of a group:
/// `max(1 + sum_k deg fp_k, max_k (deg m_k + sum_{j != k} deg fp_j))`.
pub fn group_degree(group: &[&CompiledInteraction]) -> usize {
    let fp_sum: usize = group.iter().map(|i| i.fingerprint_degree).sum();
    let lhs = 1 + fp_sum;
    let rhs = group
        .iter()
        .map(|i| i.multiplicity_degree + fp_sum - i.fingerprint_degree)
        .max()
        .unwrap_or(0);
    lhs.max(rhs)
}

impl LogupLayout {
    /// Greedy batching in declaration order: an interaction joins the current group while the group's
    /// constraint degree stays `<= cap` and the group has at most [`MAX_GROUP`] interactions.
    pub fn new(interactions: &[CompiledInteraction], cap: usize) -> Self {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut cur: Vec<usize> = Vec::new();
        for k in 0..interactions.len() {
            cur.push(k);
            let refs: Vec<&CompiledInteraction> = cur.iter().map(|&i| &interactions[i]).collect();
            if cur.len() > 1 && (cur.len() > MAX_GROUP || group_degree(&refs) > cap) {
                cur.pop();
                groups.push(std::mem::take(&mut cur));
                cur.push(k);
            }
        }
        if !cur.is_empty() {
            groups.push(cur);
        }
        let group_degrees: Vec<usize> = groups
            .iter()
            .map(|g| group_degree(&g.iter().map(|&i| &interactions[i]).collect::<Vec<_>>()))
            .collect();
        let degree = if groups.is_empty() {
            0
        } else {
            group_degrees.iter().copied().max().unwrap_or(0).max(2)
        };
        Self {
            groups,
            group_degrees,
            degree,
        }
    }

    /// Number of extension columns (term columns + running sum), 0 without interactions.
    pub fn num_ext_columns(&self) -> usize {
        if self.groups.is_empty() {
            0
        } else {
            self.groups.len() + 1
        }
    }

    /// Number of aux base columns.
    pub fn aux_width(&self) -> usize {
        3 * self.num_ext_columns()
    }

    /// Number of LogUp constraints: one per group plus first-row, transition and last-row.
    pub fn num_constraints(&self) -> usize {
        if self.groups.is_empty() {
            0
        } else {
            self.groups.len() + 3
        }
    }
}

#[inline]
fn signed<T: ExtMul>(m: T, d: Direction) -> Ext3 {
    match d {
        Direction::Send => m.to_ext(),
        Direction::Receive => -m.to_ext(),
    }
}

/// The operations the constraint fold is written in ([`CompiledAir::fold_with`], [`fold_constraints_with`]):
/// the one definition of the fold plan, run over field values by the host quotient and the verifier
/// ([`HostFold`]) and over symbolic values by a code generator (the CUDA quotient kernel generator emits
/// one statement per operation). `Base` is a base-side value at the point (a circuit node or a selector: `F`
/// on LDE rows, `Ext3` at the out-of-domain point), `Ext` an extension value.
pub trait FoldAlgebra {
    type Base: Copy;
    type Ext: Copy;
    /// Circuit node `k` at the point.
    fn node(&mut self, k: u32) -> Self::Base;
    /// Selector `s` of `[L_0, L_{n-1}, x - ω^{n-1}]` at the point.
    fn selector(&mut self, s: usize) -> Self::Base;
    /// Aux extension column `c` at the point (`next`: at `ω x`).
    fn aux(&mut self, c: usize, next: bool) -> Self::Ext;
    /// The LogUp shift `z`.
    fn logup_z(&mut self) -> Self::Ext;
    /// `alpha^(l+1)` of the LogUp tuple combination, `None` past the challenges' powers (the entry is
    /// dropped, as [`LogupChallenges::fingerprint`]'s `zip` drops it).
    fn tuple_alpha(&mut self, l: usize) -> Option<Self::Ext>;
    /// The folding challenge `alpha`.
    fn fold_alpha(&mut self) -> Self::Ext;
    /// [`crate::air::FoldChallenge::powers`]`[i]`: `alpha^(N-1-i)` of own constraint `i`.
    fn power(&mut self, i: usize) -> Self::Ext;
    /// The table's claimed bus sum.
    fn bus_sum(&mut self) -> Self::Ext;
    fn zero(&mut self) -> Self::Ext;
    fn add(&mut self, a: Self::Ext, b: Self::Ext) -> Self::Ext;
    fn sub(&mut self, a: Self::Ext, b: Self::Ext) -> Self::Ext;
    fn mul(&mut self, a: Self::Ext, b: Self::Ext) -> Self::Ext;
    /// `a · b`.
    fn mul_base(&mut self, a: Self::Ext, b: Self::Base) -> Self::Ext;
    /// `b` as an extension value.
    fn base(&mut self, b: Self::Base) -> Self::Ext;
    fn neg(&mut self, a: Self::Ext) -> Self::Ext;
    /// `a - bus`.
    fn sub_bus(&mut self, a: Self::Ext, bus: u32) -> Self::Ext;
}

/// [`FoldAlgebra`] over field values: node values from `node`, leaves of type `T` (`F` on LDE rows, `Ext3`
/// at the out-of-domain point), `Ext3` everywhere else.
pub struct HostFold<'a, T, N> {
    pub node: N,
    /// `[L_0, L_{n-1}, x - ω^{n-1}]`.
    pub sel: [T; 3],
    /// One value per aux extension column, at `x` and at `ω x`.
    pub aux_local: &'a [Ext3],
    pub aux_next: &'a [Ext3],
    pub challenges: &'a LogupChallenges,
    pub bus_sum: Ext3,
    pub alpha: Ext3,
    /// `alpha^(N-1-i)` per own constraint (may be empty for a LogUp-only fold).
    pub powers: &'a [Ext3],
}

impl<T: ExtMul, N: Fn(u32) -> T> FoldAlgebra for HostFold<'_, T, N> {
    type Base = T;
    type Ext = Ext3;
    #[inline]
    fn node(&mut self, k: u32) -> T {
        (self.node)(k)
    }
    #[inline]
    fn selector(&mut self, s: usize) -> T {
        self.sel[s]
    }
    #[inline]
    fn aux(&mut self, c: usize, next: bool) -> Ext3 {
        if next {
            self.aux_next[c]
        } else {
            self.aux_local[c]
        }
    }
    #[inline]
    fn logup_z(&mut self) -> Ext3 {
        self.challenges.z
    }
    #[inline]
    fn tuple_alpha(&mut self, l: usize) -> Option<Ext3> {
        self.challenges.alpha_powers.get(l).copied()
    }
    #[inline]
    fn fold_alpha(&mut self) -> Ext3 {
        self.alpha
    }
    #[inline]
    fn power(&mut self, i: usize) -> Ext3 {
        self.powers[i]
    }
    #[inline]
    fn bus_sum(&mut self) -> Ext3 {
        self.bus_sum
    }
    #[inline]
    fn zero(&mut self) -> Ext3 {
        Ext3::ZERO
    }
    #[inline]
    fn add(&mut self, a: Ext3, b: Ext3) -> Ext3 {
        a + b
    }
    #[inline]
    fn sub(&mut self, a: Ext3, b: Ext3) -> Ext3 {
        a - b
    }
    #[inline]
    fn mul(&mut self, a: Ext3, b: Ext3) -> Ext3 {
        a * b
    }
    #[inline]
    fn mul_base(&mut self, a: Ext3, b: T) -> Ext3 {
        b.mul_ext(a)
    }
    #[inline]
    fn base(&mut self, b: T) -> Ext3 {
        b.to_ext()
    }
    #[inline]
    fn neg(&mut self, a: Ext3) -> Ext3 {
        -a
    }
    #[inline]
    fn sub_bus(&mut self, a: Ext3, bus: u32) -> Ext3 {
        a - F::from_u32(bus)
    }
}

/// Fold the LogUp constraints into `acc` (Horner with `alpha`), in the order: group constraints, first row,
/// transition, last row. `node(i)` is the value of circuit node `i` at the point, `sel` = `[L_0, L_{n-1},
/// x - ω^{n-1}]` there, `aux_local`/`aux_next` the extension aux values at x and ω x. The plan itself is
/// [`fold_constraints_with`].
#[allow(clippy::too_many_arguments)]
pub fn fold_constraints<T: ExtMul>(
    layout: &LogupLayout,
    interactions: &[CompiledInteraction],
    node: impl Fn(u32) -> T,
    sel: [T; 3],
    aux_local: &[Ext3],
    aux_next: &[Ext3],
    ch: &LogupChallenges,
    bus_sum: Ext3,
    alpha: Ext3,
    acc: &mut Ext3,
) {
    let mut a = HostFold {
        node,
        sel,
        aux_local,
        aux_next,
        challenges: ch,
        bus_sum,
        alpha,
        powers: &[],
    };
    *acc = fold_constraints_with(layout, interactions, &mut a, *acc);
}

/// The LogUp part of the fold plan over any [`FoldAlgebra`]: starting from `acc`, per term column `c`
/// (group `S`) `acc = acc·alpha + (t_c · prod_{k in S} fp_k - sum_{k in S} ±m_k prod_{j in S, j != k} fp_j)`
/// with `fp_k = z - (bus_k + sum_l alpha^(l+1) v_{k,l})`, then the running sum's
/// `acc = acc·alpha + L_0 (s - sum_c t_c)`, `acc·alpha + (x - ω^{n-1}) (s' - s - sum_c t'_c)`,
/// `acc·alpha + L_{n-1} (s - S)`. Returns the new `acc`.
pub fn fold_constraints_with<A: FoldAlgebra>(
    layout: &LogupLayout,
    interactions: &[CompiledInteraction],
    a: &mut A,
    mut acc: A::Ext,
) -> A::Ext {
    let alpha = a.fold_alpha();
    let g = layout.groups.len();
    let zero = a.zero();
    let mut fps = [zero; MAX_GROUP];
    for (c, group) in layout.groups.iter().enumerate() {
        let fps = &mut fps[..group.len()];
        for (fp, &k) in fps.iter_mut().zip(group) {
            let it = &interactions[k];
            let z = a.logup_z();
            let mut f = a.sub_bus(z, it.bus);
            for (l, &v) in it.values.iter().enumerate() {
                let Some(al) = a.tuple_alpha(l) else { break };
                let nv = a.node(v);
                let t = a.mul_base(al, nv);
                f = a.sub(f, t);
            }
            *fp = f;
        }
        let mut prod = fps[0];
        for &fp in &fps[1..] {
            prod = a.mul(prod, fp);
        }
        let mut rhs = None;
        for (j, &k) in group.iter().enumerate() {
            let it = &interactions[k];
            let m = a.node(it.multiplicity);
            let mut term = a.base(m);
            if it.direction == Direction::Receive {
                term = a.neg(term);
            }
            for (l, &fp) in fps.iter().enumerate() {
                if l != j {
                    term = a.mul(term, fp);
                }
            }
            rhs = Some(match rhs {
                None => term,
                Some(r) => a.add(r, term),
            });
        }
        let t = a.aux(c, false);
        let lhs = a.mul(t, prod);
        let d = match rhs {
            Some(r) => a.sub(lhs, r),
            None => lhs,
        };
        acc = a.mul(acc, alpha);
        acc = a.add(acc, d);
    }
    let s = a.aux(g, false);
    let s_next = a.aux(g, true);
    let (mut t_sum, mut t_next_sum) = (zero, zero);
    for c in 0..g {
        let (t, t_next) = (a.aux(c, false), a.aux(c, true));
        t_sum = if c == 0 { t } else { a.add(t_sum, t) };
        t_next_sum = if c == 0 {
            t_next
        } else {
            a.add(t_next_sum, t_next)
        };
    }
    let [first, last, transition] = [0, 1, 2].map(|k| a.selector(k));
    let d = a.sub(s, t_sum);
    let d = a.mul_base(d, first);
    acc = a.mul(acc, alpha);
    acc = a.add(acc, d);
    let d = a.sub(s_next, s);
    let d = a.sub(d, t_next_sum);
    let d = a.mul_base(d, transition);
    acc = a.mul(acc, alpha);
    acc = a.add(acc, d);
    let sum = a.bus_sum();
    let d = a.sub(s, sum);
    let d = a.mul_base(d, last);
    acc = a.mul(acc, alpha);
    acc = a.add(acc, d);
    acc
}

/// Errors while building the aux trace.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LogupError {
    #[error("table `{table}` row {row} interaction {interaction} (bus {bus}): multiplicity {value} >= 2^{bits}")]
    MultiplicityTooLarge {
        table: String,
        row: usize,
        interaction: usize,
        bus: u32,
        value: u64,
        bits: u32,
    },
    #[error("table `{table}` row {row} interaction {interaction}: fingerprint is zero (resample)")]
    ZeroFingerprint {
        table: String,
        row: usize,
        interaction: usize,
    },
    #[error("public interaction {index}: fingerprint is zero")]
    ZeroPublicFingerprint { index: usize },
}

/// Montgomery batch inversion in place; returns the index of a zero element if there is one.
pub fn batch_inverse(v: &mut [Ext3]) -> Result<(), usize> {
    if let Some(i) = v.iter().position(|x| x.is_zero()) {
        return Err(i);
    }
    const CHUNK: usize = 1 << 12;
    v.par_chunks_mut(CHUNK).for_each(|chunk| {
        let mut prefix = Vec::with_capacity(chunk.len());
        let mut acc = Ext3::ONE;
        for x in chunk.iter() {
            prefix.push(acc);
            acc *= *x;
        }
        // Nonzero elements: the product is nonzero.
        let mut inv = acc.try_inverse().unwrap_or(Ext3::ZERO);
        for i in (0..chunk.len()).rev() {
            let x = chunk[i];
            chunk[i] = inv * prefix[i];
            inv *= x;
        }
    });
    Ok(())
}

/// The leaves of row `i` of a natural-order trace (`main`: `n x width`; `prep`: `n x preprocessed_width`
/// or `None`), selectors included, as [`with_trace_rows`] gives them: for evaluating a circuit on a few
/// rows (e.g. the rows a test changed) without walking the whole trace.
///
/// # Panics
/// If `i >= n` or `n` is not a power of two (caller bugs).
pub fn trace_row_at<'a>(
    main: &'a RowMajorMatrix,
    prep: Option<&'a RowMajorMatrix>,
    i: usize,
) -> TraceRow<'a> {
    let n = main.height();
    assert!(
        i < n && n.is_power_of_two(),
        "row {i} of a trace of height {n}"
    );
    let omega = domain_generator(n.trailing_zeros() as usize);
    trace_row(
        main,
        prep,
        i,
        omega.exp_u64(i as u64),
        omega.exp_u64(n as u64 - 1),
    )
}

/// The buses that are lookups into a fixed table: those on which some table has a fixed entry
/// ([`CompiledAir::is_fixed_entry`]: tuple values from preprocessed columns only, the multiplicity a main
/// column). Every other interaction on such a bus is a lookup: a tuple it sends must be one of the fixed
/// table's rows, nothing more.
pub fn fixed_lookup_buses(airs: &[CompiledAir]) -> std::collections::BTreeSet<u32> {
    airs.iter()
        .flat_map(|a| {
            (0..a.interactions.len())
                .filter(|&i| a.is_fixed_entry(i))
                .map(|i| a.interactions[i].bus)
        })
        .collect()
}

/// Rows per parallel work item when walking a trace.
const ROW_CHUNK: usize = 1 << 10;

/// The leaves of row `i` of a natural-order trace of height `n`; `x = ω^i`.
#[inline]
fn trace_row<'a>(
    main: &'a RowMajorMatrix,
    prep: Option<&'a RowMajorMatrix>,
    i: usize,
    x: F,
    omega_last: F,
) -> TraceRow<'a> {
    let n = main.height();
    let nxt = (i + 1) % n;
    TraceRow {
        main: main.row(i),
        main_next: main.row(nxt),
        prep: prep.map_or(&[][..], |p| p.row(i)),
        prep_next: prep.map_or(&[][..], |p| p.row(nxt)),
        first: if i == 0 { F::ONE } else { F::ZERO },
        last: if i == n - 1 { F::ONE } else { F::ZERO },
        transition: x - omega_last,
    }
}

/// Evaluate `f(scratch, row_index, &TraceRow)` on every row of a trace (in parallel chunks of rows, one
/// `init()` scratch per chunk) and collect the results in row order; shared by the aux builder and the
/// debug checker. `prep` is an `n x preprocessed_width` matrix or `None` when the width is 0.
pub fn with_trace_rows<S, R: Send>(
    main: &RowMajorMatrix,
    prep: Option<&RowMajorMatrix>,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize, &TraceRow) -> R + Sync,
) -> Vec<R> {
    let n = main.height();
    let omega = domain_generator(n.trailing_zeros() as usize);
    let omega_last = omega.exp_u64(n as u64 - 1);
    (0..n.div_ceil(ROW_CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let start = c * ROW_CHUNK;
            let end = (start + ROW_CHUNK).min(n);
            let mut x = omega.exp_u64(start as u64);
            let mut scratch = init();
            let f = &f;
            (start..end).map(move |i| {
                let row = trace_row(main, prep, i, x, omega_last);
                x *= omega;
                f(&mut scratch, i, &row)
            })
        })
        .collect()
}

/// Build a table's aux trace: `n x aux_width` base columns (natural order), and its bus sum (the last
/// running-sum value). `main` is the `n x width` trace, `prep` the preprocessed trace if any.
pub fn build_aux_trace(
    air: &CompiledAir,
    main: &RowMajorMatrix,
    prep: Option<&RowMajorMatrix>,
    ch: &LogupChallenges,
    log_max_multiplicity: u32,
) -> Result<(RowMajorMatrix, Ext3), LogupError> {
    let n = main.height();
    let k = air.interactions.len();
    let g = air.logup.groups.len();
    let w = air.aux_width();
    if k == 0 {
        return Ok((RowMajorMatrix::zeros(n, 1), Ext3::ZERO));
    }
    // Fingerprints and signed multiplicities, `n x k` each (row-major), and the first out-of-range
    // multiplicity `(row, interaction, value)` if any.
    let bound = 1u64 << log_max_multiplicity;
    let omega = domain_generator(n.trailing_zeros() as usize);
    let omega_last = omega.exp_u64(n as u64 - 1);
    let mut fps = vec![Ext3::ZERO; n * k];
    let mut ms = vec![F::ZERO; n * k];
    let bad: Option<(usize, usize, u64)> = fps
        .par_chunks_mut(ROW_CHUNK * k)
        .zip(ms.par_chunks_mut(ROW_CHUNK * k))
        .enumerate()
        .map(|(c, (fc, mc))| {
            let start = c * ROW_CHUNK;
            let mut x = omega.exp_u64(start as u64);
            let mut nodes: Vec<F> = Vec::new();
            for r in 0..fc.len() / k {
                let i = start + r;
                air.circuit.eval(
                    &trace_row(main, prep, i, x, omega_last),
                    &air.public_values,
                    &mut nodes,
                );
                x *= omega;
                for (idx, it) in air.interactions.iter().enumerate() {
                    let m = nodes[it.multiplicity as usize];
                    let mv = m.as_canonical_u64();
                    if mv >= bound {
                        return Some((i, idx, mv));
                    }
                    fc[r * k + idx] =
                        ch.fingerprint(it.bus, it.values.iter().map(|&v| nodes[v as usize]));
                    mc[r * k + idx] = match it.direction {
                        Direction::Send => m,
                        Direction::Receive => -m,
                    };
                }
            }
            None
        })
        .find_first(|r| r.is_some())
        .flatten();
    if let Some((row, interaction, value)) = bad {
        return Err(LogupError::MultiplicityTooLarge {
            table: air.name.clone(),
            row,
            interaction,
            bus: air.interactions[interaction].bus,
            value,
            bits: log_max_multiplicity,
        });
    }
    if let Err(pos) = batch_inverse(&mut fps) {
        return Err(LogupError::ZeroFingerprint {
            table: air.name.clone(),
            row: pos / k,
            interaction: pos % k,
        });
    }
    let mut values = vec![F::ZERO; n * w];
    values.par_chunks_mut(w).enumerate().for_each(|(i, out)| {
        for (c, group) in air.logup.groups.iter().enumerate() {
            let t: Ext3 = group.iter().map(|&j| fps[i * k + j] * ms[i * k + j]).sum();
            out[3 * c..3 * c + 3].copy_from_slice(&t.0);
        }
    });
    // Running sum (sequential prefix over rows).
    let mut s = Ext3::ZERO;
    for i in 0..n {
        let row = &mut values[i * w..(i + 1) * w];
        for c in 0..g {
            s += Ext3([row[3 * c], row[3 * c + 1], row[3 * c + 2]]);
        }
        row[3 * g..3 * g + 3].copy_from_slice(&s.0);
    }
    Ok((RowMajorMatrix::new(values, w), s))
}

/// Sum of the public contributions `±m / fp` (`Err` names a public interaction with a zero fingerprint).
/// Montgomery batch inversion in chunks of [`PUBLIC_SUM_CHUNK`] interactions (one Ext3 inversion each), so
/// the memory does not grow with the number of interactions; the sum is exact, whatever the chunking.
pub fn public_sum<P: PublicSource + ?Sized>(
    public: &P,
    ch: &LogupChallenges,
) -> Result<Ext3, LogupError> {
    let mut sum = Ext3::ZERO;
    let mut fps: Vec<Ext3> = Vec::with_capacity(PUBLIC_SUM_CHUNK);
    let mut signs: Vec<Ext3> = Vec::with_capacity(PUBLIC_SUM_CHUNK);
    let mut prefix: Vec<Ext3> = Vec::with_capacity(PUBLIC_SUM_CHUNK);
    let mut done = 0usize;
    let mut err = None;
    let mut flush =
        |fps: &mut Vec<Ext3>, signs: &mut Vec<Ext3>, done: &mut usize| -> Result<(), LogupError> {
            if let Some(i) = fps.iter().position(|f| f.is_zero()) {
                return Err(LogupError::ZeroPublicFingerprint { index: *done + i });
            }
            prefix.clear();
            let mut acc = Ext3::ONE;
            for &f in fps.iter() {
                prefix.push(acc);
                acc *= f;
            }
            let mut inv = acc
                .try_inverse()
                .ok_or(LogupError::ZeroPublicFingerprint { index: *done })?;
            for i in (0..fps.len()).rev() {
                sum += signs[i] * (prefix[i] * inv);
                inv *= fps[i];
            }
            *done += fps.len();
            fps.clear();
            signs.clear();
            Ok(())
        };
    public.for_each(&mut |p| {
        if err.is_some() {
            return;
        }
        fps.push(ch.fingerprint(p.bus, p.values.iter().copied()));
        signs.push(signed(p.multiplicity, p.direction));
        if fps.len() == PUBLIC_SUM_CHUNK {
            if let Err(e) = flush(&mut fps, &mut signs, &mut done) {
                err = Some(e);
            }
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    flush(&mut fps, &mut signs, &mut done)?;
    Ok(sum)
}

/// Interactions per batch inversion of [`public_sum`].
pub const PUBLIC_SUM_CHUNK: usize = 4096;

/// The no-wrap condition: every height is at most `2^MAX_LOG_HEIGHT`, every public multiplicity is below
/// `2^log_max_multiplicity`, and `sum_t 2^log_height_t * n_interactions_t * 2^log_max_multiplicity
/// + sum_public m < p` (computed without overflow). `tables` lists `(log_height, n_interactions)`.
pub fn multiplicity_budget_ok<P: PublicSource + ?Sized>(
    tables: &[(usize, usize)],
    public: &P,
    log_max_multiplicity: u32,
) -> bool {
    let mut total: u128 = 0;
    for &(log_h, k) in tables {
        if !(MIN_LOG_HEIGHT..=MAX_LOG_HEIGHT).contains(&log_h) {
            return false;
        }
        total += ((k as u128) << log_h) << log_max_multiplicity;
    }
    let mut ok = true;
    public.for_each(&mut |p| {
        let m = p.multiplicity.as_canonical_u64();
        if m >> log_max_multiplicity != 0 {
            ok = false;
        }
        total += m as u128;
    });
    ok && total < P as u128
}

/// Longest interaction tuple over all tables and public interactions.
pub fn max_tuple_len<P: PublicSource + ?Sized>(airs: &[CompiledAir], public: &P) -> usize {
    let mut m = airs
        .iter()
        .flat_map(|a| a.interactions.iter().map(|i| i.values.len()))
        .max()
        .unwrap_or(0);
    public.for_each(&mut |p| m = m.max(p.values.len()));
    m
}
