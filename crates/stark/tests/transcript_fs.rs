//! Keccak transcript: byte-exact spec, determinism, grinding.

use tiny_keccak::{Hasher, Keccak};
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F, P};
use zkrv_stark::transcript::*;

fn keccak(parts: &[&[u8]]) -> [u8; 32] {
    let mut k = Keccak::v256();
    for p in parts {
        k.update(p);
    }
    let mut o = [0u8; 32];
    k.finalize(&mut o);
    o
}

#[test]
fn transcript_matches_spec_bytes() {
    let label = b"test";
    let mut t = Transcript::new(label);
    t.observe_u64(42);
    t.observe_field(&[F::new(P + 3)]); // non-canonical input, hashed canonically as 3
    t.observe_digest(&[9u8; 32]);
    let a = t.sample_field();
    let b = t.sample_bits(10);

    let s0 = keccak(&[b"zkrv-transcript-v1", &4u64.to_le_bytes(), label]);
    let mut pending = 42u64.to_le_bytes().to_vec();
    pending.extend(3u64.to_le_bytes());
    pending.extend([9u8; 32]);
    let s1 = keccak(&[&[1], &s0, &pending]);
    let b0 = keccak(&[&[2], &s1, &0u64.to_le_bytes()]);
    let v = u128::from_le_bytes(b0[..16].try_into().unwrap()) % P as u128;
    assert_eq!(a.as_canonical_u64(), v as u64);
    let b1 = keccak(&[&[2], &s1, &1u64.to_le_bytes()]);
    assert_eq!(
        b as u64,
        u64::from_le_bytes(b1[..8].try_into().unwrap()) & 1023
    );
    assert_eq!(t.flush(), s1);
}

#[test]
fn transcript_deterministic_and_sensitive() {
    let run = |x: u64| {
        let mut t = Transcript::new(b"zkrv");
        t.observe_ext(&[Ext3::from_u64s([1, 2, 3])]);
        t.observe_u64(x);
        (t.sample_ext(), t.sample_field(), t.sample_bits(20))
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1).0, run(2).0);
    let mut t1 = Transcript::new(b"a");
    let mut t2 = Transcript::new(b"b");
    assert_ne!(t1.sample_field(), t2.sample_field());
    // Successive samples differ; an empty observation changes nothing.
    let mut t = Transcript::new(b"a");
    let mut u = t.clone();
    let x = t.sample_field();
    assert_ne!(x, t.sample_field());
    u.observe_bytes(&[]);
    assert_eq!(u.sample_field(), x);
    assert_ne!(x, F::ZERO);
}

#[test]
fn transcript_grinding_smallest_nonce() {
    let mut t = Transcript::new(b"grind");
    t.observe_u64(7);
    let mut v = t.clone();
    let mut w = t.clone();
    let bits = 10;
    let nonce = t.grind(bits);
    let state = w.flush();
    // Smallest: no smaller nonce passes.
    for n in 0..nonce {
        assert!(!grind_ok(&state, bits, n));
    }
    assert!(grind_ok(&state, bits, nonce));
    let h = grind_hash(&state, nonce);
    assert_eq!(h[0], 0);
    assert_eq!(h[1] >> 6, 0);
    assert!(v.check_grind(bits, nonce));
    assert_eq!(t.sample_field(), v.sample_field());
    let mut x = w.clone();
    assert!(!x.check_grind(bits, nonce + 1) || grind_ok(&state, bits, nonce + 1));
    assert_eq!(Transcript::new(b"z").grind(0), 0);
    assert!(!Transcript::new(b"z").check_grind(65, 0));
}
