//! Poseidon2 over Goldilocks, width 8, and the hashes built on it for the Poseidon2 preset
//! ([`crate::merkle::MerkleHash::Poseidon2`], docs/stark.md §11).
//!
//! The permutation is Plonky3's `p3_goldilocks::default_goldilocks_poseidon2_8` (the POSEIDON2 precompile
//! table's, docs/tables.md §6.19; Grassi, Khovratovich, Schofnegger, "Poseidon2", ePrint 2023/323, §3):
//! the external layer `M_E`, 4 full rounds, 22 partial rounds, 4 full rounds, S-box `x^7`, with that
//! crate's round constants and internal diagonal. Written out here so that the CUDA kernel
//! (`crates/cuda/kernels/poseidon2.cuh`) follows the same steps; the known-answer tests compare it with
//! the executor's reference (`zkrv_executor::precompile::poseidon2`, Plonky3's own code).
//!
//! Built on it (state `s[0..8]`, rate `s[0..4]`, capacity `s[4..8]`; a digest is 4 elements):
//! * [`hash_elems`], the leaf hash of `n >= 1` base elements: `s = [0, 0, 0, 0, n, 0, 0, 0]` (the input
//!   length in the capacity), then for each chunk of 4 elements (the last one zero-padded to 4)
//!   `s[0..4] = chunk` (overwrite) and `s = P(s)`; the digest is `s[0..4]`.
//! * [`compress`], the node hash: `P(l || r)[0..4] + l` (element-wise; truncation with the left input fed
//!   forward).
//! * [`Duplex`], the transcript sponge (see its docs).

use crate::air::AirBuilder;
use crate::field::{PrimeCharacteristicRing, PrimeField64, F};
use crate::symbolic::Expr;
use p3_goldilocks::{
    GOLDILOCKS_POSEIDON2_RC_8_EXTERNAL_FINAL, GOLDILOCKS_POSEIDON2_RC_8_EXTERNAL_INITIAL,
    GOLDILOCKS_POSEIDON2_RC_8_INTERNAL, MATRIX_DIAG_8_GOLDILOCKS,
};

/// State width (elements).
pub const WIDTH: usize = 8;
/// Sponge rate (elements absorbed or squeezed per permutation); the capacity is `WIDTH - RATE`.
pub const RATE: usize = 4;
/// Elements of a digest.
pub const DIGEST_ELEMS: usize = 4;
/// Full rounds (4 before and 4 after the partial rounds).
pub const FULL_ROUNDS: usize = 8;
/// Partial rounds.
pub const PARTIAL_ROUNDS: usize = 22;

/// Plonky3's `MDSMat4` (`apply_mat4`): [[2 3 1 1] [1 2 3 1] [1 1 2 3] [3 1 1 2]], on `x[0..4]`.
fn mat4<T: Clone + std::ops::Add<T, Output = T>>(x: &mut [T]) {
    let dbl = |v: &T| v.clone() + v.clone();
    let t01 = x[0].clone() + x[1].clone();
    let t23 = x[2].clone() + x[3].clone();
    let t0123 = t01.clone() + t23.clone();
    let t01123 = t0123.clone() + x[1].clone();
    let t01233 = t0123 + x[3].clone();
    let x3 = t01233.clone() + dbl(&x[0]);
    let x1 = t01123.clone() + dbl(&x[2]);
    let x0 = t01123 + t01;
    let x2 = t01233 + t23;
    x[0] = x0;
    x[1] = x1;
    x[2] = x2;
    x[3] = x3;
}

/// The external linear layer `M_E` (Plonky3's `mds_light_permutation` for width 8): `M4` on each half,
/// then each element plus the sum of the elements of its residue class mod 4. Generic so that the
/// POSEIDON2 table's constraints use the same definition over symbolic expressions.
pub fn external_linear<T: Clone + std::ops::Add<T, Output = T>>(s: &mut [T; WIDTH]) {
    mat4(&mut s[..4]);
    mat4(&mut s[4..]);
    let sums: [T; 4] = std::array::from_fn(|k| s[k].clone() + s[k + 4].clone());
    for (i, x) in s.iter_mut().enumerate() {
        *x = x.clone() + sums[i % 4].clone();
    }
}

/// The internal linear layer `M_I = 1 + diag(d)` (Plonky3's `matmul_internal` with
/// `MATRIX_DIAG_8_GOLDILOCKS`): `s_i = d_i s_i + sum(s)`.
pub fn internal_linear<T>(s: &mut [T; WIDTH])
where
    T: Clone + std::ops::Add<T, Output = T> + std::ops::Mul<F, Output = T>,
{
    let mut sum = s[0].clone();
    for x in &s[1..] {
        sum = sum + x.clone();
    }
    for (x, d) in s.iter_mut().zip(MATRIX_DIAG_8_GOLDILOCKS) {
        *x = x.clone() * d + sum.clone();
    }
}

/// The external round constants of full round `r` of `0..8` (4 initial, 4 terminal).
pub fn external_rc(r: usize) -> [F; WIDTH] {
    if r < FULL_ROUNDS / 2 {
        GOLDILOCKS_POSEIDON2_RC_8_EXTERNAL_INITIAL[r]
    } else {
        GOLDILOCKS_POSEIDON2_RC_8_EXTERNAL_FINAL[r - FULL_ROUNDS / 2]
    }
}

/// The round constant of partial round `r` of `0..22`.
pub fn internal_rc(r: usize) -> F {
    GOLDILOCKS_POSEIDON2_RC_8_INTERNAL[r]
}

/// The internal diagonal `d` of `M_I`.
pub fn internal_diag() -> [F; WIDTH] {
    MATRIX_DIAG_8_GOLDILOCKS
}

#[inline]
fn sbox(x: F) -> F {
    let x2 = x * x;
    let x3 = x2 * x;
    x3 * x2 * x2
}

/// The permutation, in place.
pub fn permute(s: &mut [F; WIDTH]) {
    crate::opcount::bump(crate::opcount::Op::Poseidon2, 1);
    external_linear(s);
    let full = |s: &mut [F; WIDTH], r: usize| {
        for (x, c) in s.iter_mut().zip(external_rc(r)) {
            *x = sbox(*x + c);
        }
        external_linear(s);
    };
    for r in 0..FULL_ROUNDS / 2 {
        full(s, r);
    }
    for r in 0..PARTIAL_ROUNDS {
        s[0] = sbox(s[0] + internal_rc(r));
        internal_linear(s);
    }
    for r in FULL_ROUNDS / 2..FULL_ROUNDS {
        full(s, r);
    }
}

/// A digest as the 32 bytes the proof carries: `le8(canonical(d_i))` for `i = 0..4`.
pub fn digest_to_bytes(d: &[F; DIGEST_ELEMS]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, x) in out.chunks_exact_mut(8).zip(d) {
        o.copy_from_slice(&x.as_canonical_u64().to_le_bytes());
    }
    out
}

/// The 4 elements of a digest's bytes ([`digest_to_bytes`]); `None` if a limb is not canonical (`>= p`).
pub fn digest_from_bytes(b: &[u8; 32]) -> Option<[F; DIGEST_ELEMS]> {
    let mut out = [F::ZERO; DIGEST_ELEMS];
    for (o, c) in out.iter_mut().zip(b.chunks_exact(8)) {
        let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        if v >= crate::field::P {
            return None;
        }
        *o = F::new(v);
    }
    Some(out)
}

/// [`digest_from_bytes`], non-canonical limbs reduced mod p (for digests already known canonical: the
/// prover's, or a proof's after [`crate::proof::Proof::from_bytes`] checked them).
pub fn digest_from_bytes_reduced(b: &[u8; 32]) -> [F; DIGEST_ELEMS] {
    std::array::from_fn(|i| {
        F::from_u64(u64::from_le_bytes(
            b[8 * i..8 * i + 8].try_into().expect("8 bytes"),
        ))
    })
}

/// The leaf hash of the elements of `rows`, concatenated (module doc; `n` their total count).
pub fn hash_elems<'a>(rows: impl IntoIterator<Item = &'a [F]> + Clone) -> [F; DIGEST_ELEMS] {
    let n: usize = rows.clone().into_iter().map(<[F]>::len).sum();
    let mut s = [F::ZERO; WIDTH];
    s[RATE] = F::from_u64(n as u64);
    let mut k = 0;
    for row in rows {
        for &x in row {
            s[k] = x;
            k += 1;
            if k == RATE {
                permute(&mut s);
                k = 0;
            }
        }
    }
    if k > 0 || n == 0 {
        s[k..RATE].fill(F::ZERO);
        permute(&mut s);
    }
    [s[0], s[1], s[2], s[3]]
}

/// The node hash `P(l || r)[0..4] + l`.
pub fn compress(l: &[F; DIGEST_ELEMS], r: &[F; DIGEST_ELEMS]) -> [F; DIGEST_ELEMS] {
    let mut s = [l[0], l[1], l[2], l[3], r[0], r[1], r[2], r[3]];
    permute(&mut s);
    std::array::from_fn(|i| s[i] + l[i])
}

/// The duplex sponge of the Poseidon2 transcript (docs/stark.md §11.3), over [`permute`].
///
/// State `s` (8 elements, zero at the start), `pending` (inputs not yet absorbed, at most 3 between
/// calls), `out` (squeezed elements not yet handed out, taken from the front).
/// * `absorb(x)`: `out` is emptied; `x` joins `pending`; with 4 pending, **duplex**.
/// * **duplex** (of `k <= 4` pending inputs): `s[0..k] = pending`, `s[k..4] = 0`, `s[7] += k`,
///   `s = P(s)`; `pending` is emptied and `out = s[0..4]`. (The count in the capacity separates a padded
///   partial block from a full block ending in zeros.)
/// * `squeeze()`: if `pending` is non-empty or `out` is empty, duplex; then the front element of `out`.
/// * **flush**: duplex if `pending` is non-empty (then `out` is the fresh rate).
#[derive(Clone, Debug, Default)]
pub struct Duplex {
    s: [F; WIDTH],
    pending: Vec<F>,
    out: Vec<F>,
}

impl Duplex {
    /// Absorb one element.
    pub fn absorb(&mut self, x: F) {
        self.out.clear();
        self.pending.push(x);
        if self.pending.len() == RATE {
            self.duplex();
        }
    }

    fn duplex(&mut self) {
        let k = self.pending.len();
        debug_assert!(k <= RATE);
        self.s[..k].copy_from_slice(&self.pending);
        self.s[k..RATE].fill(F::ZERO);
        self.s[WIDTH - 1] += F::from_u64(k as u64);
        permute(&mut self.s);
        self.pending.clear();
        self.out = self.s[..RATE].to_vec();
    }

    /// The sponge's parts `(s, pending, out)` (struct doc), e.g. to continue it inside a recursion
    /// program ([`crate::recursion`]).
    pub fn parts(&self) -> ([F; WIDTH], &[F], &[F]) {
        (self.s, &self.pending, &self.out)
    }

    /// Absorb what is pending (module doc) and return the state.
    pub fn flush(&mut self) -> [F; WIDTH] {
        if !self.pending.is_empty() {
            self.duplex();
        }
        self.s
    }

    /// One squeezed element (uniform over `F` for an ideal permutation).
    pub fn squeeze(&mut self) -> F {
        if !self.pending.is_empty() || self.out.is_empty() {
            self.duplex();
        }
        self.out.remove(0)
    }
}

/// The capacity tag of the grinding permutation (distinct from the duplex counts `0..=4`).
pub const GRIND_TAG: u64 = 5;

/// The grinding value of `nonce` for a flushed state `s` (docs/stark.md §11.3):
/// `P(nonce_lo, nonce_hi, 0, 0, s[4], s[5], s[6], s[7] + 5)[0]`, as a canonical `u64`
/// (`nonce_lo`/`nonce_hi` the low and high 32 bits of `nonce`).
pub fn grind_value(s: &[F; WIDTH], nonce: u64) -> u64 {
    let mut t = [
        F::from_u64(nonce & 0xffff_ffff),
        F::from_u64(nonce >> 32),
        F::ZERO,
        F::ZERO,
        s[4],
        s[5],
        s[6],
        s[7] + F::from_u64(GRIND_TAG),
    ];
    permute(&mut t);
    t[0].as_canonical_u64()
}

/// Every intermediate value of one permutation, as an AIR row commits them (the one definition of the
/// permutation's committed intermediates, read by the POSEIDON2 precompile table, docs/tables.md §6.19,
/// and the recursion POSEIDON2 table, docs/recursion.md §4.4; constraints in [`eval_permutation`]).
#[derive(Clone, Debug)]
pub struct Poseidon2Trace {
    /// `x^3` of every S-box input `x = state + rc` of full round r (rounds 0..3, then 4..7).
    pub full_sbox: [[F; WIDTH]; FULL_ROUNDS],
    /// The state after full round r's linear layer (`full_post[7]` is the output).
    pub full_post: [[F; WIDTH]; FULL_ROUNDS],
    /// Partial round r: `x^3` and `x^7` of `x = state_0 + rc_r`.
    pub partial_sbox: [F; PARTIAL_ROUNDS],
    pub partial_post: [F; PARTIAL_ROUNDS],
}

impl Poseidon2Trace {
    #[allow(clippy::needless_range_loop)] // rounds and elements index constants, columns and state in step
    /// Runs the permutation on `input` ([`permute`]'s steps), keeping the intermediates.
    pub fn new(input: [F; WIDTH]) -> Self {
        let mut s = input;
        external_linear(&mut s);
        let mut t = Poseidon2Trace {
            full_sbox: [[F::ZERO; WIDTH]; FULL_ROUNDS],
            full_post: [[F::ZERO; WIDTH]; FULL_ROUNDS],
            partial_sbox: [F::ZERO; PARTIAL_ROUNDS],
            partial_post: [F::ZERO; PARTIAL_ROUNDS],
        };
        let full = |r: usize, s: &mut [F; WIDTH], t: &mut Poseidon2Trace| {
            let rc = external_rc(r);
            for i in 0..WIDTH {
                let x = s[i] + rc[i];
                let x3 = x * x * x;
                t.full_sbox[r][i] = x3;
                s[i] = x3 * x3 * x;
            }
            external_linear(s);
            t.full_post[r] = *s;
        };
        for r in 0..FULL_ROUNDS / 2 {
            full(r, &mut s, &mut t);
        }
        for r in 0..PARTIAL_ROUNDS {
            let x = s[0] + internal_rc(r);
            let x3 = x * x * x;
            t.partial_sbox[r] = x3;
            s[0] = x3 * x3 * x;
            t.partial_post[r] = s[0];
            internal_linear(&mut s);
        }
        for r in FULL_ROUNDS / 2..FULL_ROUNDS {
            full(r, &mut s, &mut t);
        }
        t
    }

    /// The permutation's output.
    pub fn output(&self) -> [F; WIDTH] {
        self.full_post[FULL_ROUNDS - 1]
    }
}

/// The committed cells of one permutation in an AIR row (expressions of its columns), as
/// [`Poseidon2Trace`] fills them: `full_post` has the 7 states after full rounds 0..6 (round 7's is the
/// row's output, passed to [`eval_permutation`] on its own).
pub struct PermutationCols<'a> {
    pub full_sbox: &'a [[Expr; WIDTH]; FULL_ROUNDS],
    pub full_post: &'a [[Expr; WIDTH]; FULL_ROUNDS - 1],
    pub partial_sbox: &'a [Expr; PARTIAL_ROUNDS],
    pub partial_post: &'a [Expr; PARTIAL_ROUNDS],
}

/// The constraints of `out = P(input)` (docs/tables.md §6.19; Grassi et al. §3): every S-box keeps degree
/// <= 3 with one committed register `x3 = x^3`; its output `x^7 = x3^2 x` is committed in partial rounds
/// (`partial_post`) and folded into the committed state after a full round's linear layer
/// (`full_post = M_E (x3^2 x)`, degree 3), so the linear layers are exact linear expressions of committed
/// cells. 8 x 8 + 8 x 8 + 22 x 2 = 172 constraints of degree 3, named `full round r: sbox x^3 [i]`,
/// `full round r: state [i]`, `partial round r: sbox x^3` and `partial round r: sbox x^7`. `input` and
/// `out` are expressions of the caller's (the precompile's words, the recursion table's cells).
#[allow(clippy::needless_range_loop)] // rounds and elements index constants, columns and state in step
pub fn eval_permutation(
    b: &mut AirBuilder,
    input: [Expr; WIDTH],
    cols: &PermutationCols<'_>,
    out: &[Expr; WIDTH],
) {
    let mut s = input;
    external_linear(&mut s);
    let full = |b: &mut AirBuilder, r: usize, s: &mut [Expr; WIDTH]| {
        let rc = external_rc(r);
        let mut y: [Expr; WIDTH] = std::array::from_fn(|_| Expr::zero());
        for i in 0..WIDTH {
            let x = s[i].clone() + rc[i];
            let x3 = cols.full_sbox[r][i].clone();
            b.assert_eq(
                format!("full round {r}: sbox x^3 [{i}]"),
                x3.clone(),
                x.clone() * x.clone() * x.clone(),
            );
            y[i] = x3.clone() * x3 * x;
        }
        external_linear(&mut y);
        let post: &[Expr; WIDTH] = if r + 1 < FULL_ROUNDS {
            &cols.full_post[r]
        } else {
            out
        };
        for i in 0..WIDTH {
            b.assert_eq(
                format!("full round {r}: state [{i}]"),
                post[i].clone(),
                y[i].clone(),
            );
        }
        *s = post.clone();
    };
    for r in 0..FULL_ROUNDS / 2 {
        full(b, r, &mut s);
    }
    for r in 0..PARTIAL_ROUNDS {
        let x = s[0].clone() + internal_rc(r);
        let x3 = cols.partial_sbox[r].clone();
        b.assert_eq(
            format!("partial round {r}: sbox x^3"),
            x3.clone(),
            x.clone() * x.clone() * x.clone(),
        );
        b.assert_eq(
            format!("partial round {r}: sbox x^7"),
            cols.partial_post[r].clone(),
            x3.clone() * x3 * x,
        );
        s[0] = cols.partial_post[r].clone();
        internal_linear(&mut s);
    }
    for r in FULL_ROUNDS / 2..FULL_ROUNDS {
        full(b, r, &mut s);
    }
}
