//! The STARK verifier as a recursion [`Program`] (docs/recursion.md §4): for an inner proof's shape (the
//! configuration, the tables, which are present and their heights) [`build_verifier`] writes the program
//! that replays the Poseidon2 transcript, checks every table's constraints and LogUp at the out-of-domain
//! point (the fold of [`CompiledAir::fold_with`] over the program's cells: one definition of the
//! constraints), the bus balance, the grinding nonce, samples the query indices (bit decompositions),
//! checks every query's Merkle path in every round tree and FRI layer tree, the DEEP reduced openings,
//! every FRI fold and the final polynomial; and the witness (the proof's values as hints). The program
//! depends on the shape only (same shape, same program).
//!
//! Mirrors [`crate::verify`] and [`crate::pcs::verify`] step by step; what differs:
//! * the batched openings ([`crate::merkle::TreeOpenings`], each node sent once) become one full path per
//!   query in the witness (a circuit cannot branch on which nodes two queries share);
//! * the program's **public inputs** ([`public_inputs`], [`crate::recursion::Program::public_inputs`]) are
//!   the statement bytes and the public interactions' multiplicities and values: the transcript start
//!   ([`crate::statement::observe_start`], the one definition the native transcript runs) absorbs them
//!   from those cells and the rest (protocol label, configuration, tables, heights, AIR digest) as
//!   constants of the shape, and the bus balance reads the same cells; a verifier of the execution
//!   compares the cells with the statement it is given ([`crate::recursion::Execution::public_inputs`]);
//! * the preprocessed columns' values at zeta are still **unchecked hints** (the native verifier evaluates
//!   them from the trusted traces, a sum over every row; the recursion is to commit the preprocessed traces
//!   once, as a verifying key, and open them like the main trace): until then the program is not a sound
//!   recursion for tables with preprocessed columns;
//! * the zk preset (salted trees, random codeword) and Keccak-hashed proofs are refused
//!   ([`RecursionError::Unsupported`]).

use std::collections::BTreeMap;

use super::{compress, hash_elems, Builder, CircuitDuplex, DigestVars, ExtVar, Program, Var};
use crate::air::Direction;
use crate::air::{compile_for, Air, CompiledAir};
use crate::config::StarkConfig;
use crate::field::{Ext3, Field, PrimeCharacteristicRing, PrimeField64, F};
use crate::logup::{
    max_tuple_len, multiplicity_budget_ok, FoldAlgebra, PublicSource, MAX_LOG_HEIGHT,
    MIN_LOG_HEIGHT,
};
use crate::merkle::{distinct_rows, Digest, MatrixDims, MerkleHash, TreeOpenings};
use crate::pcs::{fri_layers, inv_two};
use crate::poly::{coset_shift, domain_generator, reverse_bits};
use crate::poseidon2::{self as p2, DIGEST_ELEMS};
use crate::preprocessed::{evaluate_at_ood, PreprocessedData};
use crate::proof::Proof;
use crate::statement::{observe_start, PublicPiece, StartSink, PROTOCOL_LABEL};
use crate::symbolic::Node;
use crate::transcript::{Transcript, P2_BYTES_PER_ELEMENT};
use crate::verifier::{check_round_shape, VerifyError};

/// Why no verifier program was built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecursionError {
    /// The proof's shape is not one the tables allow (as [`crate::verify`] would refuse it).
    #[error("inner proof: {0}")]
    Shape(#[from] VerifyError),
    /// What the program does not verify yet.
    #[error("not supported by the recursion verifier yet: {0}")]
    Unsupported(&'static str),
}

/// The verifier program of one inner proof's shape and that proof's witness.
#[derive(Clone, Debug)]
pub struct VerifierProgram {
    pub program: Program,
    pub witness: Vec<F>,
}

fn shape(what: String) -> RecursionError {
    RecursionError::Shape(VerifyError::ShapeMismatch(what))
}

fn digest_hints(b: &mut Builder, d: &Digest) -> DigestVars {
    p2::digest_from_bytes_reduced(d).map(|x| b.hint(x))
}

/// One query's opening of one tree: the row of every matrix (commit order) and the `L` siblings, leaf
/// level first.
struct QueryPath {
    rows: Vec<Vec<F>>,
    siblings: Vec<[F; DIGEST_ELEMS]>,
}

/// The full path of every query (`indices[k]`, leaves of the largest height `2^L`) from the batched
/// openings `o` of an unsalted Poseidon2 tree: the known nodes are recomputed level by level as
/// [`crate::merkle::verify_tree_openings`] does, the others taken from `o.siblings` in its order. A
/// witness for any proof: where `o` does not cover the indices (openings made for other challenges, a
/// row of the wrong width) the rows and siblings are zeros, which the program then rejects at the root.
fn expand_paths(dims: &[MatrixDims], indices: &[usize], o: &TreeOpenings) -> Vec<QueryPath> {
    let hash = MerkleHash::Poseidon2;
    let log_max = dims.iter().map(|d| d.log_height).max().unwrap_or(0);
    let rows_of: Vec<Vec<usize>> = dims
        .iter()
        .map(|d| distinct_rows(indices, log_max - d.log_height))
        .collect();
    let row = |m: usize, r: usize| -> Vec<F> {
        rows_of[m]
            .binary_search(&r)
            .ok()
            .and_then(|k| o.rows.get(m)?.get(k))
            .filter(|row| row.len() == dims[m].width)
            .cloned()
            .unwrap_or_else(|| vec![F::ZERO; dims[m].width])
    };
    let level_hash = |lh: usize, node: usize| -> Option<Digest> {
        let mats: Vec<Vec<F>> = (0..dims.len())
            .filter(|&m| dims[m].log_height == lh)
            .map(|m| row(m, node))
            .collect();
        (!mats.is_empty()).then(|| hash.hash_rows(mats.iter().map(Vec::as_slice)))
    };
    // digests[k]: node -> digest at level `log_max - k` (known and sibling nodes).
    let mut digests: Vec<BTreeMap<usize, Digest>> = vec![BTreeMap::new(); log_max + 1];
    let mut known = distinct_rows(indices, 0);
    for &n in &known {
        digests[0].insert(n, level_hash(log_max, n).unwrap_or_default());
    }
    let mut sib = o.siblings.iter();
    for k in 0..log_max {
        let mut parents = Vec::new();
        for &n in &known {
            digests[k]
                .entry(n ^ 1)
                .or_insert_with(|| sib.next().copied().unwrap_or_default());
            if parents.last() != Some(&(n >> 1)) {
                parents.push(n >> 1);
            }
        }
        for &p in &parents {
            let mut d = hash.compress(&digests[k][&(2 * p)], &digests[k][&(2 * p + 1)]);
            if let Some(h) = level_hash(log_max - k - 1, p) {
                d = hash.compress(&d, &h);
            }
            digests[k + 1].insert(p, d);
        }
        known = parents;
    }
    indices
        .iter()
        .map(|&q| QueryPath {
            rows: dims
                .iter()
                .enumerate()
                .map(|(m, d)| row(m, q >> (log_max - d.log_height)))
                .collect(),
            siblings: (0..log_max)
                .map(|k| p2::digest_from_bytes_reduced(&digests[k][&((q >> k) ^ 1)]))
                .collect(),
        })
        .collect()
}

/// Checks one query's path in the program: hints its rows and siblings, hashes the leaf and each level
/// (rows of the matrices of that height injected as [`crate::merkle`] does), and asserts the root.
/// `bits` are the leaf index's `L` bits, least significant first. Returns the hinted rows.
fn check_path(
    b: &mut Builder,
    dims: &[MatrixDims],
    path: &QueryPath,
    bits: &[Var],
    root: &DigestVars,
) -> Vec<Vec<Var>> {
    let log_max = dims.iter().map(|d| d.log_height).max().unwrap_or(0);
    let rows: Vec<Vec<Var>> = path
        .rows
        .iter()
        .map(|r| r.iter().map(|&x| b.hint(x)).collect())
        .collect();
    let level = |b: &mut Builder, lh: usize| -> Option<DigestVars> {
        let elems: Vec<Var> = (0..dims.len())
            .filter(|&m| dims[m].log_height == lh)
            .flat_map(|m| rows[m].iter().copied())
            .collect();
        let any = dims.iter().any(|d| d.log_height == lh);
        any.then(|| hash_elems(b, &elems))
    };
    let mut cur = level(b, log_max).unwrap_or([b.zero(); DIGEST_ELEMS]);
    for (k, s) in path.siblings.iter().enumerate() {
        let sib = s.map(|x| b.hint(x));
        let bit = bits[k];
        let l: DigestVars = std::array::from_fn(|i| b.select(bit, sib[i], cur[i]));
        let r: DigestVars = std::array::from_fn(|i| b.select(bit, cur[i], sib[i]));
        cur = compress(b, &l, &r);
        if let Some(h) = level(b, log_max - k - 1) {
            cur = compress(b, &cur, &h);
        }
    }
    for i in 0..DIGEST_ELEMS {
        b.assert_eq(cur[i], root[i]);
    }
    rows
}

/// `sum_c a[c] · v[c]` (`a` non-empty, as long as `v`).
fn dot_ext(b: &mut Builder, a: &[ExtVar], v: &[ExtVar]) -> ExtVar {
    let mut acc = b.ext_mul(a[0], v[0]);
    for (&x, &y) in a.iter().zip(v).skip(1) {
        let t = b.ext_mul(x, y);
        acc = b.ext_add(acc, t);
    }
    acc
}

/// `sum_c a[c] · v[c]`, `v` in the base field.
fn dot_base(b: &mut Builder, a: &[ExtVar], v: &[Var]) -> ExtVar {
    let mut acc = b.ext_mul_base(a[0], v[0]);
    for (&x, &y) in a.iter().zip(v).skip(1) {
        let t = b.ext_mul_base(x, y);
        acc = b.ext_add(acc, t);
    }
    acc
}

/// Entry `bits` (little-endian index) of `v` (`2^bits.len()` values), by a tree of selects.
fn mux(b: &mut Builder, v: &[ExtVar], bits: &[Var]) -> ExtVar {
    let mut cur = v.to_vec();
    for &bit in bits {
        cur = cur
            .chunks(2)
            .map(|p| b.ext_select(bit, p[1], p[0]))
            .collect();
    }
    cur[0]
}

/// `g^(bitrev_n(i))` for the `n` bits of `i` (least significant first): `prod_j (bit_j ? g^(2^(n-1-j)) : 1)`.
fn pow_bitrev(b: &mut Builder, g: F, bits: &[Var]) -> Var {
    let n = bits.len();
    let c: Vec<F> = (0..n).map(|j| g.exp_power_of_2(n - 1 - j)).collect();
    b.select_product(bits, &c)
}

/// What the out-of-domain check reads (cells of the program and the shape).
struct OodInputs<'a> {
    compiled: &'a [&'a CompiledAir],
    log_heights: &'a [usize],
    /// Per present table, its preprocessed trace (trusted data of the shape).
    preprocessed: &'a [Option<&'a crate::matrix::RowMajorMatrix>],
    bus_tables: &'a [usize],
    opened: &'a [Vec<Vec<Vec<ExtVar>>>],
    bus_sums: &'a [ExtVar],
    zeta: ExtVar,
    logup_z: ExtVar,
    logup_a: ExtVar,
    fold_alpha: ExtVar,
}

/// `x^0 .. x^(n-1)`.
fn ext_powers(b: &mut Builder, x: ExtVar, n: usize) -> Vec<ExtVar> {
    let mut v = vec![b.ext_constant(Ext3::ONE)];
    while v.len() < n {
        let next = b.ext_mul(v[v.len() - 1], x);
        v.push(next);
    }
    v.truncate(n);
    v
}

/// `sum_k X^k v[3c + k]`: extension column `c` from its 3 opened base-column values.
fn ext_column(b: &mut Builder, v: &[ExtVar], c: usize) -> ExtVar {
    let x = b.ext_constant(Ext3([F::ZERO, F::ONE, F::ZERO]));
    let x2 = b.ext_constant(Ext3([F::ZERO, F::ZERO, F::ONE]));
    let t1 = b.ext_mul(x, v[3 * c + 1]);
    let t2 = b.ext_mul(x2, v[3 * c + 2]);
    let s = b.ext_add(v[3 * c], t1);
    b.ext_add(s, t2)
}

/// [`FoldAlgebra`] over program cells at the out-of-domain point: the constraint fold of
/// [`CompiledAir::fold_with`] (the one definition the host and the GPU generator run) emitted as
/// instructions.
struct CircuitFold<'a> {
    b: &'a mut Builder,
    nodes: &'a [ExtVar],
    sel: [ExtVar; 3],
    aux_local: &'a [ExtVar],
    aux_next: &'a [ExtVar],
    z: ExtVar,
    /// `a^1, a^2, ..` of the LogUp tuple combination.
    tuple: &'a [ExtVar],
    alpha: ExtVar,
    /// `alpha^(N-1-i)` per own constraint.
    powers: &'a [ExtVar],
    bus_sum: ExtVar,
}

impl FoldAlgebra for CircuitFold<'_> {
    type Base = ExtVar;
    type Ext = ExtVar;
    fn node(&mut self, k: u32) -> ExtVar {
        self.nodes[k as usize]
    }
    fn selector(&mut self, s: usize) -> ExtVar {
        self.sel[s]
    }
    fn aux(&mut self, c: usize, next: bool) -> ExtVar {
        if next {
            self.aux_next[c]
        } else {
            self.aux_local[c]
        }
    }
    fn logup_z(&mut self) -> ExtVar {
        self.z
    }
    fn tuple_alpha(&mut self, l: usize) -> Option<ExtVar> {
        self.tuple.get(l).copied()
    }
    fn fold_alpha(&mut self) -> ExtVar {
        self.alpha
    }
    fn power(&mut self, i: usize) -> ExtVar {
        self.powers[i]
    }
    fn bus_sum(&mut self) -> ExtVar {
        self.bus_sum
    }
    fn zero(&mut self) -> ExtVar {
        self.b.ext_constant(Ext3::ZERO)
    }
    fn add(&mut self, a: ExtVar, c: ExtVar) -> ExtVar {
        self.b.ext_add(a, c)
    }
    fn sub(&mut self, a: ExtVar, c: ExtVar) -> ExtVar {
        self.b.ext_sub(a, c)
    }
    fn mul(&mut self, a: ExtVar, c: ExtVar) -> ExtVar {
        self.b.ext_mul(a, c)
    }
    fn mul_base(&mut self, a: ExtVar, c: ExtVar) -> ExtVar {
        self.b.ext_mul(a, c)
    }
    fn base(&mut self, c: ExtVar) -> ExtVar {
        c
    }
    fn neg(&mut self, a: ExtVar) -> ExtVar {
        let z = self.b.ext_constant(Ext3::ZERO);
        self.b.ext_sub(z, a)
    }
    fn sub_bus(&mut self, a: ExtVar, bus: u32) -> ExtVar {
        self.b.ext_add_const(a, -Ext3::from(F::from_u32(bus)))
    }
}

/// The out-of-domain check of every present table ([`crate::verify`]): the circuit's nodes at zeta from
/// the opened main values (and the preprocessed values, unchecked hints: module doc), the selectors
/// ([`crate::statement::selectors_at`]), the fold, and `folded = Z_H(zeta) · sum_j zeta^(j n) q_j(zeta)`.
fn check_ood(b: &mut Builder, o: &OodInputs<'_>, max_tuple: usize) {
    b.label("OOD: challenges");
    let tuple = {
        let mut v = ext_powers(b, o.logup_a, max_tuple + 1);
        v.remove(0);
        v
    };
    let n_max = o
        .compiled
        .iter()
        .map(|a| a.num_folded_constraints())
        .max()
        .unwrap_or(0);
    let fold_pows = ext_powers(b, o.fold_alpha, n_max);
    let zeta_value = b.ext_value(o.zeta);
    let n_rounds = o.opened.len();
    for (t, air) in o.compiled.iter().enumerate() {
        b.label(format!("OOD: table `{}`", air.name));
        let lh = o.log_heights[t];
        let mut zn = o.zeta;
        for _ in 0..lh {
            zn = b.ext_mul(zn, zn);
        }
        let zh = b.ext_add_const(zn, -Ext3::ONE);
        let n_inv = F::from_u64(1 << lh).inverse();
        let omega_last = domain_generator(lh).exp_u64((1u64 << lh) - 1);
        let zm1 = b.ext_add_const(o.zeta, -Ext3::ONE);
        let inv_first = b.ext_inv(zm1);
        let t1 = b.ext_mul_const(zh, n_inv);
        let first = b.ext_mul(t1, inv_first);
        let transition = b.ext_add_const(o.zeta, -Ext3::from(omega_last));
        let inv_last = b.ext_inv(transition);
        let t2 = b.ext_mul_const(zh, omega_last * n_inv);
        let last = b.ext_mul(t2, inv_last);
        let sel = [first, last, transition];
        let prep: [Vec<ExtVar>; 2] = match o.preprocessed[t] {
            Some(m) => {
                let v = evaluate_at_ood(m, zeta_value)
                    .unwrap_or_else(|| [vec![Ext3::ZERO; m.width], vec![Ext3::ZERO; m.width]]);
                v.map(|row| row.iter().map(|&x| b.hint_ext(x)).collect())
            }
            None => [Vec::new(), Vec::new()],
        };
        let main = &o.opened[0][t];
        let mut nodes: Vec<ExtVar> = Vec::with_capacity(air.circuit.nodes.len());
        for node in &air.circuit.nodes {
            let v = match *node {
                Node::Const(c) => b.ext_constant(Ext3::from(F::new(c))),
                // The inner AIR's public values are fixed when the program is built: constants of it.
                Node::Public(i) => b.ext_constant(Ext3::from(air.public_values[i])),
                Node::Main { col, next } => main[next as usize][col],
                Node::Preprocessed { col, next } => prep[next as usize][col],
                Node::IsFirstRow => sel[0],
                Node::IsLastRow => sel[1],
                Node::IsTransition => sel[2],
                Node::Add(x, y) => b.ext_add(nodes[x as usize], nodes[y as usize]),
                Node::Sub(x, y) => b.ext_sub(nodes[x as usize], nodes[y as usize]),
                Node::Mul(x, y) => b.ext_mul(nodes[x as usize], nodes[y as usize]),
                Node::Neg(x) => {
                    let z = b.ext_constant(Ext3::ZERO);
                    b.ext_sub(z, nodes[x as usize])
                }
            };
            nodes.push(v);
        }
        let zero = b.ext_constant(Ext3::ZERO);
        let (aux_local, aux_next, bus_sum) = match o.bus_tables.iter().position(|&x| x == t) {
            Some(i) => {
                let a = &o.opened[1][i];
                let k = air.logup.num_ext_columns();
                let local: Vec<ExtVar> = (0..k).map(|c| ext_column(b, &a[0], c)).collect();
                let next: Vec<ExtVar> = (0..k).map(|c| ext_column(b, &a[1], c)).collect();
                (local, next, o.bus_sums[i])
            }
            None => (Vec::new(), Vec::new(), zero),
        };
        // Own constraint i gets alpha^(N-1-i) (CompiledAir::fold_challenge).
        let n = air.num_folded_constraints();
        let powers: Vec<ExtVar> = (0..air.constraints.len())
            .map(|i| fold_pows[n - 1 - i])
            .collect();
        let mut alg = CircuitFold {
            b: &mut *b,
            nodes: &nodes,
            sel,
            aux_local: &aux_local,
            aux_next: &aux_next,
            z: o.logup_z,
            tuple: &tuple,
            alpha: o.fold_alpha,
            powers: &powers,
            bus_sum,
        };
        let folded = air.fold_with(&mut alg);
        // Non-zk: chunks of n coefficients, q = sum_j zeta^(j n) q_j(zeta) by Horner.
        let q_open = &o.opened[n_rounds - 1][t][0];
        let mut q = zero;
        for j in (0..air.num_quotient_chunks).rev() {
            let t = b.ext_mul(q, zn);
            let c = ext_column(b, q_open, j);
            q = b.ext_add(t, c);
        }
        let rhs = b.ext_mul(zh, q);
        b.ext_assert_eq(folded, rhs);
    }
}

/// One public interaction in the program: its bus and direction (the shape's) and its multiplicity and
/// values (public-input cells).
struct PublicCells {
    bus: u32,
    direction: Direction,
    multiplicity: Var,
    values: Vec<Var>,
}

/// The bus balance: the tables' bus sums plus the public interactions' contribution
/// ([`crate::logup::public_sum`]: `sum ± m / (z - (bus + sum_j a^(j+1) v_j))`, `+` for a send) is zero,
/// the multiplicities and values the public-input cells the transcript start absorbed.
fn check_bus_balance(b: &mut Builder, o: &OodInputs<'_>, public: &[PublicCells], max_tuple: usize) {
    b.label("bus balance");
    let tuple = {
        let mut v = ext_powers(b, o.logup_a, max_tuple + 1);
        v.remove(0);
        v
    };
    let mut total = b.ext_constant(Ext3::ZERO);
    for &s in o.bus_sums {
        total = b.ext_add(total, s);
    }
    for p in public {
        let mut fp = b.ext_add_const(o.logup_z, -Ext3::from(F::from_u32(p.bus)));
        for (&v, &a) in p.values.iter().zip(&tuple) {
            let t = b.ext_mul_base(a, v);
            fp = b.ext_sub(fp, t);
        }
        let inv = b.ext_inv(fp);
        let term = b.ext_mul_base(inv, p.multiplicity);
        total = match p.direction {
            Direction::Send => b.ext_add(total, term),
            Direction::Receive => b.ext_sub(total, term),
        };
    }
    let zero = b.ext_constant(Ext3::ZERO);
    b.ext_assert_eq(total, zero);
}

/// The verifier program's **public inputs** ([`crate::recursion::Program::public_inputs`], in this
/// order): the statement bytes packed as the Poseidon2 transcript absorbs them (7 LE bytes per element,
/// [`P2_BYTES_PER_ELEMENT`], the last element the remaining bytes), then per public interaction (the
/// [`PublicSource`]'s order) its multiplicity and its values. What the verifier of the recursion proof
/// computes from the statement it is given and compares with the execution's
/// ([`crate::recursion::Execution::public_inputs`]). The statement's length, the number of public
/// interactions and each one's bus, direction and number of values are the shape's (constants of the
/// program).
pub fn public_inputs<P: PublicSource + ?Sized>(statement: &[u8], public: &P) -> Vec<F> {
    let mut v: Vec<F> = statement
        .chunks(P2_BYTES_PER_ELEMENT)
        .map(pack_le)
        .collect();
    public.for_each(&mut |p| {
        v.push(p.multiplicity);
        v.extend(p.values.iter().copied());
    });
    v
}

/// The element of up to 7 LE bytes ([`crate::transcript::Transcript::observe_bytes`]'s packing).
fn pack_le(c: &[u8]) -> F {
    let mut w = [0u8; 8];
    w[..c.len()].copy_from_slice(c);
    F::new(u64::from_le_bytes(w))
}

/// The transcript start ([`observe_start`]) in the program: the constant bytes (configuration, tables,
/// heights, AIR digest) absorbed as constants, the statement and the public interactions from the
/// public-input cells ([`public_inputs`], taken in order from `inputs`); a public interaction's pieces
/// packed into transcript elements from the canonical bytes of its multiplicity and values (in parts cut
/// at the elements' boundaries, [`CircuitStart::observe_public`]), as [`StartSink::observe_public`] packs
/// them.
struct CircuitStart<'a> {
    b: &'a mut Builder,
    tr: &'a mut CircuitDuplex,
    inputs: std::slice::Iter<'a, Var>,
    /// The public interactions' cells, for the bus balance.
    public: Vec<PublicCells>,
    /// The public interactions' bus and direction ([`PublicSource`] order).
    shape: std::slice::Iter<'a, (u32, Direction)>,
}

impl CircuitStart<'_> {
    fn next_input(&mut self) -> Var {
        *self
            .inputs
            .next()
            .expect("one public-input cell per element")
    }
}

impl StartSink for CircuitStart<'_> {
    fn observe_bytes(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(P2_BYTES_PER_ELEMENT) {
            let x = self.b.constant(pack_le(c));
            self.tr.absorb(self.b, x);
        }
    }
    fn observe_u64(&mut self, x: u64) {
        for h in [x & 0xffff_ffff, x >> 32] {
            let v = self.b.constant(F::new(h));
            self.tr.absorb(self.b, v);
        }
    }
    fn observe_statement(&mut self, statement: &[u8]) {
        for _ in statement.chunks(P2_BYTES_PER_ELEMENT) {
            let x = self.next_input();
            self.tr.absorb(self.b, x);
        }
    }
    fn observe_public(&mut self, pieces: &[PublicPiece]) {
        // The interaction's bytes as constants and parts of cells: a cell is split at the transcript's
        // element boundaries (every 7 bytes of the interaction) and at byte 4 into parts `[a, b)` of its
        // canonical 8 LE bytes, each a hint range-checked to `8 (b - a)` bits; the parts recombine to
        // the cell, and the canonical check (high 32 bits all one implies low 32 bits zero: `lo · (1 -
        // (hi - (2^32 - 1)) · w) = 0`, `w` a hint) makes them its canonical bytes.
        let mut konst: Vec<u8> = Vec::new();
        // (part, first byte in the interaction's bytes, number of bytes)
        let mut parts: Vec<(Var, usize, usize)> = Vec::new();
        let mut cells: Vec<Var> = Vec::new();
        for piece in pieces {
            let off = konst.len();
            match *piece {
                PublicPiece::Bytes(bytes, n) => konst.extend(&bytes[..n]),
                PublicPiece::Field(_) => {
                    let v = self.next_input();
                    cells.push(v);
                    konst.extend([0u8; 8]);
                    let x = self.b.value(v).as_canonical_u64();
                    let mut cuts: Vec<usize> = (1..8)
                        .filter(|&k| k == 4 || (off + k).is_multiple_of(P2_BYTES_PER_ELEMENT))
                        .collect();
                    cuts.insert(0, 0);
                    cuts.push(8);
                    let (mut sum, mut lo, mut hi) = (None, None, None);
                    for w in cuts.windows(2) {
                        let (a, n) = (w[0], w[1] - w[0]);
                        let part_value = (x >> (8 * a)) & (u64::MAX >> (64 - 8 * n));
                        let part = self.b.hint(F::new(part_value));
                        self.b.bits(part, 8 * n as u8);
                        parts.push((part, off + a, n));
                        let mut shifted = |acc: Option<Var>, shift: usize| {
                            let t = match shift {
                                0 => part,
                                _ => {
                                    let c = self.b.constant(F::new(1 << (8 * shift)));
                                    self.b.mul(part, c)
                                }
                            };
                            Some(match acc {
                                None => t,
                                Some(acc) => self.b.add(acc, t),
                            })
                        };
                        sum = shifted(sum, a);
                        if a < 4 {
                            lo = shifted(lo, a);
                        } else {
                            hi = shifted(hi, a - 4);
                        }
                    }
                    let (sum, lo, hi) = (sum.unwrap(), lo.unwrap(), hi.unwrap());
                    self.b.assert_eq(sum, v);
                    let m = self.b.constant(F::new(0xffff_ffff));
                    let d = self.b.sub(hi, m);
                    let w = self.b.value(d).try_inverse().unwrap_or(F::ZERO);
                    let w = self.b.hint(w);
                    let t = self.b.mul(d, w);
                    let one = self.b.one();
                    let u = self.b.sub(one, t);
                    let z = self.b.mul(lo, u);
                    let zero = self.b.zero();
                    self.b.assert_eq(z, zero);
                }
            }
        }
        let mut parts = parts.into_iter().peekable();
        for (c, chunk) in konst.chunks(P2_BYTES_PER_ELEMENT).enumerate() {
            let base = c * P2_BYTES_PER_ELEMENT;
            let k = chunk
                .iter()
                .enumerate()
                .fold(0u64, |acc, (i, &x)| acc | ((x as u64) << (8 * i)));
            let mut acc = (k != 0).then(|| self.b.constant(F::new(k)));
            while let Some(&(part, start, _)) = parts.peek() {
                if start >= base + chunk.len() {
                    break;
                }
                parts.next();
                let t = match start - base {
                    0 => part,
                    sh => {
                        let c = self.b.constant(F::new(1 << (8 * sh)));
                        self.b.mul(part, c)
                    }
                };
                acc = Some(match acc {
                    None => t,
                    Some(acc) => self.b.add(acc, t),
                });
            }
            let acc = acc.unwrap_or_else(|| self.b.zero());
            self.tr.absorb(self.b, acc);
        }
        let (bus, direction) = *self.shape.next().expect("one shape per public interaction");
        self.public.push(PublicCells {
            bus,
            direction,
            multiplicity: cells[0],
            values: cells[1..].to_vec(),
        });
    }
}

/// Builds the verifier program of `proof`'s shape and its witness (module doc). The shape checks
/// [`crate::verify`] makes before its transcript are made here (an error names the mismatch); the
/// program then checks the rest when run ([`super::execute`]: `Ok` iff every check holds).
pub fn build_verifier<P: PublicSource + ?Sized>(
    config: &StarkConfig,
    airs: &[&dyn Air],
    preprocessed: &PreprocessedData,
    public: &P,
    statement: &[u8],
    proof: &Proof,
) -> Result<VerifierProgram, RecursionError> {
    if config.hash != MerkleHash::Poseidon2 || proof.hash != MerkleHash::Poseidon2 {
        return Err(RecursionError::Unsupported(
            "a Keccak-hashed inner proof (the program hashes with Poseidon2)",
        ));
    }
    if config.zk || proof.zk {
        return Err(RecursionError::Unsupported("a zk inner proof"));
    }
    config
        .fri
        .check()
        .map_err(|e| RecursionError::Shape(VerifyError::Pcs(e)))?;
    let fri = &config.fri;
    let lb = fri.log_blowup;
    let all_compiled: Vec<CompiledAir> = compile_for(airs, config).map_err(VerifyError::Air)?;
    let all_heights = proof.table_log_heights();
    if all_heights.len() != all_compiled.len() || preprocessed.traces.len() != all_compiled.len() {
        return Err(shape("one log height per table".into()));
    }
    let present: Vec<usize> = (0..all_compiled.len())
        .filter(|&t| all_heights[t].is_some())
        .collect();
    if let Some(t) = (0..all_compiled.len())
        .find(|&t| all_heights[t].is_none() && !all_compiled[t].may_be_absent)
    {
        return Err(RecursionError::Shape(VerifyError::RequiredTableAbsent {
            table: all_compiled[t].name.clone(),
        }));
    }
    let compiled: Vec<&CompiledAir> = present.iter().map(|&t| &all_compiled[t]).collect();
    let log_heights: Vec<usize> = all_heights.iter().flatten().copied().collect();
    let nt = compiled.len();
    // The checks `crate::verify` makes of the heights (before anything is derived from them).
    for (t, air) in compiled.iter().enumerate() {
        let lh = log_heights[t];
        if !(MIN_LOG_HEIGHT..=MAX_LOG_HEIGHT).contains(&lh) {
            return Err(RecursionError::Shape(VerifyError::HeightOutOfRange {
                table: air.name.clone(),
                log_height: lh,
                max: MAX_LOG_HEIGHT,
            }));
        }
        let prep = preprocessed.traces[present[t]].as_ref();
        let ok = match (
            air.preprocessed_width,
            preprocessed.log_heights.get(present[t]),
        ) {
            (0, Some(None)) => prep.is_none(),
            (w, Some(&Some(plh))) => {
                w > 0 && plh == lh && prep.is_some_and(|m| m.width == w && m.height() == 1 << lh)
            }
            _ => false,
        };
        if !ok {
            return Err(shape(format!(
                "table `{}`: height does not match the preprocessed trace",
                air.name
            )));
        }
    }
    let budget: Vec<(usize, usize)> = compiled
        .iter()
        .zip(&log_heights)
        .map(|(a, &lh)| (lh, a.interactions.len()))
        .collect();
    if !multiplicity_budget_ok(&budget, public, config.log_max_multiplicity) {
        return Err(RecursionError::Shape(VerifyError::MultiplicityBudget));
    }
    let bus_tables: Vec<usize> = (0..nt)
        .filter(|&t| !compiled[t].interactions.is_empty())
        .collect();
    let has_aux = !bus_tables.is_empty();
    if has_aux != proof.aux_root.is_some() || proof.bus_sums.len() != bus_tables.len() {
        return Err(shape("aux root or bus sums".into()));
    }
    let n_rounds = 2 + has_aux as usize;
    if proof.opened.len() != n_rounds {
        return Err(shape(format!("{} opened rounds", proof.opened.len())));
    }
    // Per round: (root, [(dims, point ids)]); point 0 is zeta, point 1 zeta · ω of the table's height.
    let widths: Vec<usize> = compiled.iter().map(|a| a.width).collect();
    check_round_shape(&proof.opened[0], &widths, 2, "main")?;
    let aux_widths: Vec<usize> = bus_tables
        .iter()
        .map(|&t| compiled[t].aux_width())
        .collect();
    if has_aux {
        check_round_shape(&proof.opened[1], &aux_widths, 2, "aux")?;
    }
    let q_widths: Vec<usize> = compiled.iter().map(|a| 3 * a.num_quotient_chunks).collect();
    check_round_shape(&proof.opened[n_rounds - 1], &q_widths, 1, "quotient")?;
    let mut round_tables: Vec<Vec<(usize, usize)>> =
        vec![(0..nt).map(|t| (t, widths[t])).collect()];
    if has_aux {
        round_tables.push(bus_tables.iter().copied().zip(aux_widths).collect());
    }
    round_tables.push((0..nt).map(|t| (t, q_widths[t])).collect());
    let round_dims: Vec<Vec<MatrixDims>> = round_tables
        .iter()
        .map(|mats| {
            mats.iter()
                .map(|&(t, width)| MatrixDims {
                    width,
                    log_height: log_heights[t] + lb,
                })
                .collect()
        })
        .collect();
    let (lmax, lf, layers) = fri_layers(fri, round_dims.iter().flatten().map(|d| d.log_height));
    let pcs = &proof.pcs;
    if pcs.fri_roots.len() != layers.len()
        || pcs.final_poly.len() != 1 << (lf - lb)
        || pcs.round_openings.len() != n_rounds
        || pcs.fri_openings.len() != layers.len()
    {
        return Err(shape("PCS proof lengths".into()));
    }

    let mut b = Builder::new();
    // The public inputs first (the witness's first elements), then the transcript start from them and the
    // shape's constants, as `zkrv_stark::verify` absorbs them.
    b.label("public inputs");
    let inputs: Vec<Var> = public_inputs(statement, public)
        .into_iter()
        .map(|x| b.public_input(x))
        .collect();
    b.label("transcript start");
    let label = Transcript::with_hash(MerkleHash::Poseidon2, PROTOCOL_LABEL);
    let (s, pending, out) = label
        .poseidon2_sponge()
        .expect("a Poseidon2 transcript")
        .parts();
    let mut tr = CircuitDuplex {
        s: s.map(|x| b.constant(x)),
        pending: pending.iter().map(|&x| b.constant(x)).collect(),
        out: out.iter().map(|&x| b.constant(x)).collect(),
    };
    let mut public_shape: Vec<(u32, Direction)> = Vec::new();
    public.for_each(&mut |p| public_shape.push((p.bus, p.direction)));
    let public_cells = {
        let mut sink = CircuitStart {
            b: &mut b,
            tr: &mut tr,
            inputs: inputs.iter(),
            public: Vec::new(),
            shape: public_shape.iter(),
        };
        observe_start(
            &mut sink,
            config,
            &all_compiled,
            &all_heights,
            public,
            statement,
        );
        sink.public
    };
    b.label("transcript: commitments and challenges");
    let observe_digest = |b: &mut Builder, tr: &mut CircuitDuplex, d: &Digest| {
        let v = digest_hints(b, d);
        v.iter().for_each(|&x| tr.absorb(b, x));
        v
    };
    let mut roots = vec![observe_digest(&mut b, &mut tr, &proof.main_root)];
    let logup_z = tr.squeeze_ext(&mut b);
    let logup_a = tr.squeeze_ext(&mut b);
    if let Some(r) = &proof.aux_root {
        roots.push(observe_digest(&mut b, &mut tr, r));
    }
    let bus_sums: Vec<ExtVar> = proof
        .bus_sums
        .iter()
        .map(|&s| {
            let v = b.hint_ext(s);
            tr.absorb_ext(&mut b, v);
            v
        })
        .collect();
    let fold_alpha = tr.squeeze_ext(&mut b);
    roots.push(observe_digest(&mut b, &mut tr, &proof.quotient_root));
    let zeta = tr.squeeze_ext(&mut b);
    // `sample_zeta` resamples a base-field zeta (probability 2^-128); the program asserts it is not one:
    // `(0, c1, c2)` is invertible.
    b.label("zeta is not in the base field");
    let zero = b.zero();
    b.ext_inv(ExtVar([zero, zeta.0[1], zeta.0[2]]));

    // PCS step 1: the opened values.
    b.label("PCS: opened values");
    let opened: Vec<Vec<Vec<Vec<ExtVar>>>> = proof
        .opened
        .iter()
        .map(|mats| {
            mats.iter()
                .map(|pts| {
                    pts.iter()
                        .map(|vals| {
                            vals.iter()
                                .map(|&v| {
                                    let x = b.hint_ext(v);
                                    tr.absorb_ext(&mut b, x);
                                    x
                                })
                                .collect()
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let ood = OodInputs {
        compiled: &compiled,
        log_heights: &log_heights,
        preprocessed: &present
            .iter()
            .map(|&t| preprocessed.traces[t].as_ref())
            .collect::<Vec<_>>(),
        bus_tables: &bus_tables,
        opened: &opened,
        bus_sums: &bus_sums,
        zeta,
        logup_z,
        logup_a,
        fold_alpha,
    };
    let present_airs: Vec<CompiledAir> = compiled.iter().map(|a| (*a).clone()).collect();
    let max_tuple = max_tuple_len(&present_airs, public);
    check_ood(&mut b, &ood, max_tuple);
    check_bus_balance(&mut b, &ood, &public_cells, max_tuple);

    let alpha = tr.squeeze_ext(&mut b);
    // Steps 3-5: betas, final polynomial, grinding.
    b.label("PCS: FRI commitments");
    let mut fri_roots = Vec::with_capacity(layers.len());
    let mut betas = Vec::with_capacity(layers.len());
    for r in &pcs.fri_roots {
        fri_roots.push(observe_digest(&mut b, &mut tr, r));
        betas.push(tr.squeeze_ext(&mut b));
    }
    let final_poly: Vec<ExtVar> = pcs
        .final_poly
        .iter()
        .map(|&c| {
            let v = b.hint_ext(c);
            tr.absorb_ext(&mut b, v);
            v
        })
        .collect();
    b.label("PCS: grinding");
    let s = tr.flush(&mut b);
    let lo = b.hint(F::new(pcs.pow_nonce & 0xffff_ffff));
    let hi = b.hint(F::new(pcs.pow_nonce >> 32));
    b.bits(lo, 32);
    b.bits(hi, 32);
    let tag = b.constant(F::new(p2::GRIND_TAG));
    let s7 = b.add(s[7], tag);
    let g = b.poseidon2([lo, hi, zero, zero, s[4], s[5], s[6], s7]);
    let gbits = b.bits(g[0], 64);
    for &bit in gbits.iter().rev().take(fri.query_grinding_bits as usize) {
        b.assert_eq(bit, zero);
    }
    tr.absorb(&mut b, lo);
    tr.absorb(&mut b, hi);

    // Step 6: query indices.
    b.label("PCS: query indices");
    let mut q_bits: Vec<Vec<Var>> = Vec::with_capacity(fri.num_queries);
    let mut qs: Vec<usize> = Vec::with_capacity(fri.num_queries);
    for _ in 0..fri.num_queries {
        let x = tr.squeeze(&mut b);
        let bits = b.bits(x, 64);
        let q = bits[..lmax]
            .iter()
            .enumerate()
            .map(|(k, &v)| (b.value(v) == F::ONE) as usize * (1 << k))
            .sum();
        qs.push(q);
        q_bits.push(bits[..lmax].to_vec());
    }

    // DEEP: per (round, matrix), alpha^k0 · alpha^c and, per point, sum_c alpha^(k0+c) f_c(z).
    b.label("PCS: DEEP claimed values");
    let max_w = round_dims
        .iter()
        .flatten()
        .map(|d| d.width)
        .max()
        .unwrap_or(1);
    let mut alpha_pows = vec![b.ext_constant(Ext3::ONE)];
    for i in 0..max_w {
        let next = b.ext_mul(alpha_pows[i], alpha);
        alpha_pows.push(next);
    }
    let zeta_next: Vec<ExtVar> = log_heights
        .iter()
        .map(|&lh| b.ext_mul_const(zeta, domain_generator(lh)))
        .collect();
    // Point keys: (LDE log height, None = zeta | Some(t) = zeta · ω of table t's height).
    type PointKey = (usize, Option<usize>);
    struct Mat {
        apow: Vec<ExtVar>,
        alpha_w: ExtVar,
        pts: Vec<(PointKey, ExtVar)>,
    }
    let mut base_pow = alpha_pows[0];
    let mut infos: Vec<Vec<Mat>> = Vec::new();
    let mut keys: Vec<PointKey> = Vec::new();
    for (r, mats) in round_tables.iter().enumerate() {
        let mut v = Vec::new();
        for (m, &(t, w)) in mats.iter().enumerate() {
            let lh = round_dims[r][m].log_height;
            let apow: Vec<ExtVar> = (0..w).map(|c| b.ext_mul(base_pow, alpha_pows[c])).collect();
            let pts = opened[r][m]
                .iter()
                .enumerate()
                .map(|(p, vals)| {
                    let key = (lh, (p == 1).then_some(t));
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                    let acc = dot_ext(&mut b, &apow, vals);
                    (key, acc)
                })
                .collect::<Vec<_>>();
            for _ in 0..pts.len() {
                base_pow = b.ext_mul(base_pow, alpha_pows[w]);
            }
            v.push(Mat {
                apow,
                alpha_w: alpha_pows[w],
                pts,
            });
        }
        infos.push(v);
    }
    let point = |key: PointKey| match key.1 {
        None => zeta,
        Some(t) => zeta_next[t],
    };
    let mut heights: Vec<usize> = round_dims.iter().flatten().map(|d| d.log_height).collect();
    heights.sort_unstable();
    heights.dedup();
    let round_lt: Vec<usize> = round_dims
        .iter()
        .map(|d| d.iter().map(|d| d.log_height).max().unwrap_or(0))
        .collect();

    // Full per-query paths (witness) of every tree.
    let round_paths: Vec<Vec<QueryPath>> = (0..n_rounds)
        .map(|r| {
            let idx: Vec<usize> = qs.iter().map(|&q| q >> (lmax - round_lt[r])).collect();
            expand_paths(&round_dims[r], &idx, &pcs.round_openings[r])
        })
        .collect();
    let fri_paths: Vec<Vec<QueryPath>> = layers
        .iter()
        .enumerate()
        .map(|(l, layer)| {
            let idx: Vec<usize> = qs
                .iter()
                .map(|&q| (q >> (lmax - layer.log_size)) >> layer.log_arity)
                .collect();
            expand_paths(&[layer.dims()], &idx, &pcs.fri_openings[l])
        })
        .collect();

    let g = coset_shift();
    let inv2 = inv_two();
    for (qi, bits) in q_bits.iter().enumerate() {
        // The index of a tree of largest height 2^L: the top L bits of q's Lmax bits.
        let top = |l: usize| &bits[lmax - l..];
        b.label(format!("query {qi}: domain points"));
        let mut invs: BTreeMap<PointKey, ExtVar> = BTreeMap::new();
        let mut xs: BTreeMap<usize, Var> = BTreeMap::new();
        for &lh in &heights {
            let w = pow_bitrev(&mut b, domain_generator(lh), top(lh));
            let gc = b.constant(g);
            xs.insert(lh, b.mul(w, gc));
        }
        for &key in &keys {
            let x = b.ext_from_base(xs[&key.0]);
            let d = b.ext_sub(x, point(key));
            invs.insert(key, b.ext_inv(d));
        }
        let mut ro: BTreeMap<usize, ExtVar> = BTreeMap::new();
        for r in 0..n_rounds {
            b.label(format!("query {qi}: round {r} Merkle path"));
            let rows = check_path(
                &mut b,
                &round_dims[r],
                &round_paths[r][qi],
                top(round_lt[r]),
                &roots[r],
            );
            b.label(format!("query {qi}: round {r} reduced opening"));
            for (m, (d, info)) in round_dims[r].iter().zip(&infos[r]).enumerate() {
                let mv = dot_base(&mut b, &info.apow[..d.width], &rows[m]);
                let mut scale: Option<ExtVar> = None;
                let mut sum: Option<ExtVar> = None;
                for &(key, mz) in &info.pts {
                    let diff = b.ext_sub(mv, mz);
                    let mut term = b.ext_mul(diff, invs[&key]);
                    if let Some(s) = scale {
                        term = b.ext_mul(term, s);
                        scale = Some(b.ext_mul(s, info.alpha_w));
                    } else {
                        scale = Some(info.alpha_w);
                    }
                    sum = Some(match sum {
                        None => term,
                        Some(acc) => b.ext_add(acc, term),
                    });
                }
                if let Some(sum) = sum {
                    let e = match ro.get(&d.log_height) {
                        None => sum,
                        Some(&acc) => b.ext_add(acc, sum),
                    };
                    ro.insert(d.log_height, e);
                }
            }
        }
        // FRI.
        let mut cur = match ro.remove(&lmax) {
            Some(v) => v,
            None => b.ext_constant(Ext3::ZERO),
        };
        for (l, (layer, &beta)) in layers.iter().zip(&betas).enumerate() {
            let a = layer.log_arity;
            let s = layer.log_size;
            b.label(format!("query {qi}: FRI layer {l} Merkle path"));
            let ib = top(s);
            let rows = check_path(
                &mut b,
                &[layer.dims()],
                &fri_paths[l][qi],
                &ib[a..],
                &fri_roots[l],
            );
            b.label(format!("query {qi}: FRI layer {l} fold"));
            let vals: Vec<ExtVar> = rows[0]
                .chunks_exact(3)
                .map(|c| ExtVar([c[0], c[1], c[2]]))
                .collect();
            let opened_here = mux(&mut b, &vals, &ib[..a]);
            b.ext_assert_eq(opened_here, cur);
            // fold_row: a binary folds with beta^(2^t), inv_x = layer_row_x(s, a, j)^-1.
            let mut inv_x = pow_bitrev(&mut b, domain_generator(s).inverse(), &ib[a..]);
            let mut beta_t = beta;
            let mut level = vals;
            for t in 0..a {
                let w_inv = domain_generator(a - t).inverse();
                let half = level.len() / 2;
                let mut next = Vec::with_capacity(half);
                for m in 0..half {
                    let c = w_inv.exp_u64(reverse_bits(m, a - 1 - t) as u64) * inv2;
                    let cc = b.constant(c);
                    let ih = b.mul(inv_x, cc);
                    let (e0, e1) = (level[2 * m], level[2 * m + 1]);
                    let sum = b.ext_add(e0, e1);
                    let half_sum = b.ext_mul_const(sum, inv2);
                    let diff = b.ext_sub(e0, e1);
                    let scaled = b.ext_mul_base(diff, ih);
                    let odd = b.ext_mul(beta_t, scaled);
                    next.push(b.ext_add(half_sum, odd));
                }
                level = next;
                inv_x = b.mul(inv_x, inv_x);
                beta_t = b.ext_mul(beta_t, beta_t);
            }
            cur = level[0];
            if let Some(v) = ro.remove(&(s - a)) {
                // beta_t is now beta^(2^a).
                let t = b.ext_mul(beta_t, v);
                cur = b.ext_add(cur, t);
            }
        }
        b.label(format!("query {qi}: final polynomial"));
        let x = pow_bitrev(&mut b, domain_generator(lf), top(lf));
        let mut acc = b.ext_constant(Ext3::ZERO);
        for &c in final_poly.iter().rev() {
            let t = b.ext_mul_base(acc, x);
            acc = b.ext_add(t, c);
        }
        b.ext_assert_eq(acc, cur);
    }
    let (program, witness) = b.finish();
    Ok(VerifierProgram { program, witness })
}
