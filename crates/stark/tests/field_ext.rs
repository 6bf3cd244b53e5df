//! Ext3 against a big-integer reference implementation of F_p[X]/(X^3 - 7).

use num_bigint::BigUint;
use rand::{rngs::StdRng, Rng, SeedableRng};
use zkrv_stark::field::{Ext3, Field, PrimeCharacteristicRing, PrimeField64, EXT_W, F, P};

fn seed() -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_f1e1d);
    println!("seed = {s}");
    s
}

fn big(x: u64) -> BigUint {
    BigUint::from(x)
}

/// Reference product: schoolbook product of degree-2 polynomials, then X^3 = 7, X^4 = 7X, all mod p.
fn ref_mul(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    let p = big(P);
    let mut prod = vec![BigUint::from(0u32); 5];
    for i in 0..3 {
        for j in 0..3 {
            prod[i + j] += big(a[i]) * big(b[j]);
        }
    }
    let w = big(EXT_W);
    let c0 = (&prod[0] + &w * &prod[3]) % &p;
    let c1 = (&prod[1] + &w * &prod[4]) % &p;
    let c2 = &prod[2] % &p;
    [c0, c1, c2].map(|c| c.to_u64_digits().first().copied().unwrap_or(0))
}

/// Random element, sometimes with non-canonical representatives (u64 >= p) to exercise canonicalisation.
fn rand_ext(rng: &mut StdRng) -> ([u64; 3], Ext3) {
    let raw: [u64; 3] = [rng.gen(), rng.gen(), rng.gen()];
    let canon = raw.map(|x| x % P);
    (canon, Ext3::from_u64s(raw))
}

#[test]
fn field_ext_irreducible_modulus() {
    // X^3 - 7 is irreducible over F_p iff 7 is not a cube, i.e. 7^((p-1)/3) != 1 (3 divides p - 1).
    assert_eq!((P - 1) % 3, 0);
    let e = F::new(EXT_W).exp_u64((P - 1) / 3);
    assert_ne!(e, F::ONE);
    // Cross-check with big integers.
    assert_ne!(big(EXT_W).modpow(&big((P - 1) / 3), &big(P)), big(1));
}

#[test]
fn field_ext_mul_matches_bigint() {
    let mut rng = StdRng::seed_from_u64(seed());
    for _ in 0..2000 {
        let (ca, a) = rand_ext(&mut rng);
        let (cb, b) = rand_ext(&mut rng);
        assert_eq!(
            (a * b).to_canonical_u64s(),
            ref_mul(ca, cb),
            "a={a:?} b={b:?}"
        );
    }
    // Edge values.
    let edges = [0, 1, P - 1, P - 2, 1 << 32, (1 << 32) - 1];
    for &x in &edges {
        for &y in &edges {
            let a = [x, y, x];
            let b = [y, x, y];
            assert_eq!(
                (Ext3::from_u64s(a) * Ext3::from_u64s(b)).to_canonical_u64s(),
                ref_mul(a, b)
            );
        }
    }
}

#[test]
fn field_ext_inverse_and_pow() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 1);
    for _ in 0..500 {
        let (_, a) = rand_ext(&mut rng);
        if a.is_zero() {
            continue;
        }
        let inv = a.inverse();
        assert_eq!(a * inv, Ext3::ONE);
        assert_eq!(inv.to_canonical_u64s(), (a * inv * inv).to_canonical_u64s());
        // a^(p^3 - 1) = 1: check via a^(p^3-1) = (a^(p-1))^(p^2+p+1) using u64 pows in steps.
        let x = a.pow(P - 1);
        let y = x.pow(P).pow(P) * x.pow(P) * x;
        assert_eq!(y, Ext3::ONE);
    }
    assert!(Ext3::ZERO.try_inverse().is_none());
    // Base-field inverse agrees with embedding.
    let f = F::new(12345);
    assert_eq!(Ext3::from_base(f).inverse(), Ext3::from_base(f.inverse()));
}

#[test]
fn field_ext_canonical_form_and_ops() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 2);
    for _ in 0..500 {
        let (ca, a) = rand_ext(&mut rng);
        let (cb, b) = rand_ext(&mut rng);
        let s = a + b;
        let d = a - b;
        for i in 0..3 {
            assert_eq!(
                s.to_canonical_u64s()[i] as u128,
                (ca[i] as u128 + cb[i] as u128) % P as u128
            );
            assert_eq!(
                d.to_canonical_u64s()[i] as u128,
                (ca[i] as u128 + P as u128 - cb[i] as u128) % P as u128
            );
            assert!(s.to_canonical_u64s()[i] < P);
        }
        assert_eq!(a + (-a), Ext3::ZERO);
        let f = F::new(rng.gen());
        assert_eq!(a * f, a * Ext3::from_base(f));
        assert_eq!(f * a, a * f);
        let mut m = a;
        m *= b;
        m += a;
        m -= b;
        assert_eq!(m, a * b + a - b);
        // Non-canonical representatives compare equal to canonical ones.
        assert_eq!(Ext3::from_u64s(ca), a);
        assert_eq!(F::new(ca[0]).as_canonical_u64(), ca[0]);
    }
}
