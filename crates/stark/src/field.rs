//! The base field `F` (Goldilocks, p = 2^64 - 2^32 + 1) and its cubic extension [`Ext3`].
//!
//! * `F` is Plonky3's `p3_goldilocks::Goldilocks` (crate version pinned to `=0.9.0-rc.2` in `Cargo.toml`).
//!   Its in-memory `u64` may be non-canonical (any value < 2^64); always use
//!   [`PrimeField64::as_canonical_u64`] (value in `[0, p)`) when hashing or serializing. Construct with
//!   `F::new(u64)` (reduced lazily) or `F::from_u64`.
//! * `Ext3 = F[X] / (X^3 - 7)`. An element `Ext3([c0, c1, c2])` is `c0 + c1 X + c2 X^2`. The polynomial
//!   `X^3 - W` with `W = 7` is irreducible because `7` is a generator of `F^*` (hence not a cube, since
//!   `3 | p - 1`); `tests/field_ext.rs` checks `7^((p-1)/3) != 1`.
//!
//! Multiplication (the formula the CUDA backend reproduces; the result is a field element, so any
//! evaluation order gives the same canonical value):
//! ```text
//! c0 = a0 b0 + W (a1 b2 + a2 b1)
//! c1 = a0 b1 + a1 b0 + W a2 b2
//! c2 = a0 b2 + a1 b1 + a2 b0
//! ```
//!
//! Why not Plonky3's own cubic extension: `p3-field 0.9.0-rc.2` has `CubicTrinomialExtensionField<Goldilocks>`
//! (modulus `X^3 - X - 1`). We keep our own binomial `X^3 - 7` type because the protocol code and the CUDA
//! kernels (`crates/cuda/kernels/field.cuh`) are written against it; switching means changing
//! `Mul`/`try_inverse` here, the kernels, and the golden values in `tests/transcript_golden.rs`.
//!
//! `Ext3` implements Plonky3's [`PrimeCharacteristicRing`] and [`Algebra<F>`], so generic code written against
//! `T: Algebra<F>` (e.g. constraint evaluation) runs over both `F` and `Ext3`.

use core::fmt;
use core::iter::{Product, Sum};
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

pub use p3_field::{
    Algebra, BasedVectorSpace, Field, PrimeCharacteristicRing, PrimeField64, TwoAdicField,
};

/// The Goldilocks prime field, p = 2^64 - 2^32 + 1.
pub type F = p3_goldilocks::Goldilocks;

/// The field modulus p = 2^64 - 2^32 + 1.
pub const P: u64 = 0xffff_ffff_0000_0001;

/// The shift of every LDE coset, `g = 7` (a generator of `F^*`, `F::GENERATOR`).
pub const COSET_SHIFT: u64 = 7;

/// `W` in the extension modulus `X^3 - W`.
pub const EXT_W: u64 = 7;

const W: F = F::new(EXT_W);

/// Element of the cubic extension `F[X]/(X^3 - 7)`: `Ext3([c0, c1, c2]) = c0 + c1 X + c2 X^2`.
///
/// Equality and hashing use canonical values (as `F` does).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Ext3(pub [F; 3]);

impl Ext3 {
    pub const ZERO: Self = Ext3([F::ZERO, F::ZERO, F::ZERO]);
    pub const ONE: Self = Ext3([F::ONE, F::ZERO, F::ZERO]);

    /// Embed a base-field element: `a -> [a, 0, 0]`.
    #[inline]
    pub const fn from_base(a: F) -> Self {
        Ext3([a, F::ZERO, F::ZERO])
    }

    /// Build from three `u64` coefficients (reduced mod p).
    #[inline]
    pub const fn from_u64s(c: [u64; 3]) -> Self {
        Ext3([F::new(c[0]), F::new(c[1]), F::new(c[2])])
    }

    /// Canonical coefficients `[c0, c1, c2]`, each in `[0, p)`.
    #[inline]
    pub fn to_canonical_u64s(&self) -> [u64; 3] {
        [
            self.0[0].as_canonical_u64(),
            self.0[1].as_canonical_u64(),
            self.0[2].as_canonical_u64(),
        ]
    }

    /// Coefficients as base-field elements.
    #[inline]
    pub fn coeffs(&self) -> [F; 3] {
        self.0
    }

    /// `Some(c0)` when `c1 = c2 = 0`.
    pub fn as_base(&self) -> Option<F> {
        (self.0[1] == F::ZERO && self.0[2] == F::ZERO).then_some(self.0[0])
    }

    pub fn is_zero(&self) -> bool {
        *self == Self::ZERO
    }

    #[inline]
    pub fn square(&self) -> Self {
        *self * *self
    }

    /// `self^e` by square-and-multiply.
    pub fn pow(&self, mut e: u64) -> Self {
        let mut base = *self;
        let mut acc = Self::ONE;
        while e > 0 {
            if e & 1 == 1 {
                acc *= base;
            }
            base = base.square();
            e >>= 1;
        }
        acc
    }

    /// Multiplicative inverse, `None` for zero.
    ///
    /// With `t0 = a0^2 - W a1 a2`, `t1 = W a2^2 - a0 a1`, `t2 = a1^2 - a0 a2` and the norm
    /// `N = a0 t0 + W (a2 t1 + a1 t2)` (in `F`), the inverse is `(t0, t1, t2) / N`.
    pub fn try_inverse(&self) -> Option<Self> {
        crate::opcount::bump(crate::opcount::Op::ExtInv, 1);
        let [a0, a1, a2] = self.0;
        let t0 = a0 * a0 - W * a1 * a2;
        let t1 = W * a2 * a2 - a0 * a1;
        let t2 = a1 * a1 - a0 * a2;
        let norm = a0 * t0 + W * (a2 * t1 + a1 * t2);
        let inv = norm.try_inverse()?;
        Some(Ext3([t0 * inv, t1 * inv, t2 * inv]))
    }

    /// Multiplicative inverse.
    ///
    /// # Panics
    /// On zero; use [`Ext3::try_inverse`] when the input may be zero.
    pub fn inverse(&self) -> Self {
        self.try_inverse().expect("inverse of zero in Ext3")
    }

    /// Powers `1, self, self^2, ...` (`n` of them).
    pub fn powers_n(&self, n: usize) -> Vec<Self> {
        let mut out = Vec::with_capacity(n);
        let mut cur = Self::ONE;
        for _ in 0..n {
            out.push(cur);
            cur *= *self;
        }
        out
    }
}

impl fmt::Debug for Ext3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.to_canonical_u64s();
        write!(f, "Ext3[{}, {}, {}]", c[0], c[1], c[2])
    }
}

impl fmt::Display for Ext3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl From<F> for Ext3 {
    #[inline]
    fn from(a: F) -> Self {
        Self::from_base(a)
    }
}

impl Add for Ext3 {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Ext3([self.0[0] + o.0[0], self.0[1] + o.0[1], self.0[2] + o.0[2]])
    }
}

impl Sub for Ext3 {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Ext3([self.0[0] - o.0[0], self.0[1] - o.0[1], self.0[2] - o.0[2]])
    }
}

impl Neg for Ext3 {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Ext3([-self.0[0], -self.0[1], -self.0[2]])
    }
}

impl Mul for Ext3 {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        crate::opcount::bump(crate::opcount::Op::ExtMul, 1);
        let [a0, a1, a2] = self.0;
        let [b0, b1, b2] = o.0;
        Ext3([
            a0 * b0 + W * (a1 * b2 + a2 * b1),
            a0 * b1 + a1 * b0 + W * (a2 * b2),
            a0 * b2 + a1 * b1 + a2 * b0,
        ])
    }
}

impl Add<F> for Ext3 {
    type Output = Self;
    #[inline]
    fn add(self, o: F) -> Self {
        Ext3([self.0[0] + o, self.0[1], self.0[2]])
    }
}

impl Sub<F> for Ext3 {
    type Output = Self;
    #[inline]
    fn sub(self, o: F) -> Self {
        Ext3([self.0[0] - o, self.0[1], self.0[2]])
    }
}

impl Mul<F> for Ext3 {
    type Output = Self;
    #[inline]
    fn mul(self, o: F) -> Self {
        crate::opcount::bump(crate::opcount::Op::ExtBaseMul, 1);
        Ext3([self.0[0] * o, self.0[1] * o, self.0[2] * o])
    }
}

impl Add<Ext3> for F {
    type Output = Ext3;
    #[inline]
    fn add(self, o: Ext3) -> Ext3 {
        o + self
    }
}

impl Sub<Ext3> for F {
    type Output = Ext3;
    #[inline]
    fn sub(self, o: Ext3) -> Ext3 {
        -o + self
    }
}

impl Mul<Ext3> for F {
    type Output = Ext3;
    #[inline]
    fn mul(self, o: Ext3) -> Ext3 {
        o * self
    }
}

macro_rules! assign_ops {
    ($rhs:ty) => {
        impl AddAssign<$rhs> for Ext3 {
            #[inline]
            fn add_assign(&mut self, o: $rhs) {
                *self = *self + o;
            }
        }
        impl SubAssign<$rhs> for Ext3 {
            #[inline]
            fn sub_assign(&mut self, o: $rhs) {
                *self = *self - o;
            }
        }
        impl MulAssign<$rhs> for Ext3 {
            #[inline]
            fn mul_assign(&mut self, o: $rhs) {
                *self = *self * o;
            }
        }
    };
}
assign_ops!(Ext3);
assign_ops!(F);

impl Sum for Ext3 {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, |a, b| a + b)
    }
}

impl Product for Ext3 {
    fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ONE, |a, b| a * b)
    }
}

impl PrimeCharacteristicRing for Ext3 {
    type PrimeSubfield = F;
    const ZERO: Self = Ext3::ZERO;
    const ONE: Self = Ext3::ONE;
    const TWO: Self = Ext3([F::TWO, F::ZERO, F::ZERO]);
    const NEG_ONE: Self = Ext3([F::NEG_ONE, F::ZERO, F::ZERO]);

    #[inline]
    fn from_prime_subfield(f: F) -> Self {
        Self::from_base(f)
    }
}

impl Algebra<F> for Ext3 {}

impl BasedVectorSpace<F> for Ext3 {
    const DIMENSION: usize = 3;

    fn as_basis_coefficients_slice(&self) -> &[F] {
        &self.0
    }

    fn from_basis_coefficients_fn<Fn: FnMut(usize) -> F>(mut f: Fn) -> Self {
        Ext3([f(0), f(1), f(2)])
    }

    fn from_basis_coefficients_iter<I: ExactSizeIterator<Item = F>>(mut iter: I) -> Option<Self> {
        if iter.len() != 3 {
            return None;
        }
        Some(Ext3([iter.next()?, iter.next()?, iter.next()?]))
    }
}

/// Canonical little-endian bytes of a base-field element (8 bytes), the form hashed and serialized.
#[inline]
pub fn f_to_le_bytes(a: F) -> [u8; 8] {
    a.as_canonical_u64().to_le_bytes()
}

/// Parse 8 little-endian bytes as a canonical field element; `None` if the value is `>= p`.
#[inline]
pub fn f_from_canonical_le_bytes(b: [u8; 8]) -> Option<F> {
    let v = u64::from_le_bytes(b);
    (v < P).then(|| F::new(v))
}
