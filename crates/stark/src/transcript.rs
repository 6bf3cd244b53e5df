//! Keccak-256 Fiat-Shamir transcript (duplex-style, byte exact; the CUDA grinding kernel reproduces it).
//!
//! State: a 32-byte `state` and a byte buffer `pending`. `H` is Keccak-256 (`tiny_keccak::Keccak::v256`,
//! original padding); `||` is concatenation; `le8(x)` is the 8-byte little-endian encoding of a `u64`.
//!
//! * `new(label)`: `state = H("zkrv-transcript-v1" || le8(label.len()) || label)`, `pending = []`,
//!   `counter = 0`.
//! * `observe_*` appends bytes to `pending` (nothing is hashed yet):
//!   `observe_bytes(b)` appends `b` as is; `observe_u64(x)` appends `le8(x)`; `observe_field(xs)` appends
//!   `le8(canonical(x))` for each `x`; `observe_ext(es)` appends `c0, c1, c2` of each element as field elements;
//!   `observe_digest(d)` appends the 32 bytes.
//! * **flush** (done before every sample and before grinding): if `pending` is non-empty,
//!   `state = H(0x01 || state || pending)`, `pending = []`, `counter = 0`. (If empty, nothing changes.)
//! * **block**: after a flush, `block = H(0x02 || state || le8(counter))`, then `counter += 1`. Each sample
//!   below draws one fresh block (the unused bytes are discarded).
//! * `sample_field`: `v = u128::from_le_bytes(block[0..16]) mod p` (statistical distance from uniform
//!   `< p / 2^128 < 2^-64`).
//! * `sample_ext`: `[sample_field, sample_field, sample_field]` (three blocks, in order c0, c1, c2).
//! * `sample_bits(bits)` (`bits <= 63`): `u64::from_le_bytes(block[0..8]) & (2^bits - 1)`.
//! * **grinding** (`grind(bits)`, `check_grind(bits, nonce)`, `bits <= 64`): after a flush, nonce `n` is valid
//!   when `u64::from_be_bytes(H(0x03 || state || le8(n))[0..8]).leading_zeros() >= bits`, i.e. the digest
//!   starts with `bits` zero bits (most significant bit of byte 0 first). `grind` returns the smallest valid
//!   nonce counting from 0. Both then `observe_u64(nonce)` (whether or not the check passed).

use rayon::prelude::*;
use tiny_keccak::{Hasher, Keccak};

use crate::field::{Ext3, PrimeField64, F, P};
use crate::merkle::Digest;

const TAG_ABSORB: u8 = 0x01;
const TAG_SQUEEZE: u8 = 0x02;
const TAG_GRIND: u8 = 0x03;

/// A Fiat-Shamir transcript. Cloning forks it. `pending` is kept as a running hash already fed
/// `0x01 || state` (the same digest as hashing the bytes at the flush, in memory independent of their
/// number); `None` while nothing is pending.
#[derive(Clone)]
pub struct Transcript {
    state: Digest,
    pending: Option<Keccak>,
    counter: u64,
}

impl std::fmt::Debug for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcript")
            .field("state", &self.state)
            .field("pending", &self.pending.is_some())
            .field("counter", &self.counter)
            .finish()
    }
}

fn keccak_parts(parts: &[&[u8]]) -> Digest {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    crate::opcount::bump(crate::opcount::Op::KeccakF, n as u64 / 136 + 1);
    let mut h = Keccak::v256();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; 32];
    h.finalize(&mut out);
    out
}

/// The grinding hash `H(0x03 || state || le8(nonce))` (the value the GPU kernel computes).
pub fn grind_hash(state: &Digest, nonce: u64) -> Digest {
    keccak_parts(&[&[TAG_GRIND], state, &nonce.to_le_bytes()])
}

/// Whether `nonce` satisfies a `bits`-bit proof of work for the flushed `state` (`bits > 64` never does).
pub fn grind_ok(state: &Digest, bits: u32, nonce: u64) -> bool {
    if bits > 64 {
        return false;
    }
    let d = grind_hash(state, nonce);
    let mut head = [0u8; 8];
    head.copy_from_slice(&d[..8]);
    u64::from_be_bytes(head).leading_zeros() >= bits
}

impl Transcript {
    /// Start a transcript bound to `protocol_label`.
    pub fn new(protocol_label: &[u8]) -> Self {
        let len = (protocol_label.len() as u64).to_le_bytes();
        Self {
            state: keccak_parts(&[b"zkrv-transcript-v1", &len, protocol_label]),
            pending: None,
            counter: 0,
        }
    }

    /// Append raw bytes (no length prefix; callers observe fixed-shape data or a length first).
    pub fn observe_bytes(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        crate::opcount::bump(crate::opcount::Op::TranscriptBytes, bytes.len() as u64);
        let state = self.state;
        self.pending
            .get_or_insert_with(|| {
                let mut h = Keccak::v256();
                h.update(&[TAG_ABSORB]);
                h.update(&state);
                h
            })
            .update(bytes);
    }

    /// Append `le8(x)`.
    pub fn observe_u64(&mut self, x: u64) {
        self.observe_bytes(&x.to_le_bytes());
    }

    /// Append each element's canonical value as 8 LE bytes.
    pub fn observe_field(&mut self, xs: &[F]) {
        for x in xs {
            self.observe_u64(x.as_canonical_u64());
        }
    }

    /// Append each element as its three coordinates c0, c1, c2 (canonical, 8 LE bytes each).
    pub fn observe_ext(&mut self, xs: &[Ext3]) {
        for x in xs {
            self.observe_field(&x.0);
        }
    }

    /// Append a 32-byte digest.
    pub fn observe_digest(&mut self, d: &Digest) {
        self.observe_bytes(d);
    }

    /// Absorb pending bytes into the state (see module doc) and return the state.
    pub fn flush(&mut self) -> Digest {
        if let Some(h) = self.pending.take() {
            // The tag and the state, 33 bytes, open every absorb; the padding is the `+ 1`.
            crate::opcount::bump(crate::opcount::Op::TranscriptBytes, 33);
            crate::opcount::bump(crate::opcount::Op::KeccakF, 1);
            h.finalize(&mut self.state);
            self.counter = 0;
        }
        self.state
    }

    fn block(&mut self) -> Digest {
        self.flush();
        let out = keccak_parts(&[&[TAG_SQUEEZE], &self.state, &self.counter.to_le_bytes()]);
        self.counter += 1;
        out
    }

    /// A uniform-ish base-field element (128-bit reduction, bias < 2^-64).
    pub fn sample_field(&mut self) -> F {
        let b = self.block();
        let mut lo = [0u8; 16];
        lo.copy_from_slice(&b[..16]);
        let v = u128::from_le_bytes(lo) % (P as u128);
        F::new(v as u64)
    }

    /// An extension element: three base-field samples c0, c1, c2.
    pub fn sample_ext(&mut self) -> Ext3 {
        let c0 = self.sample_field();
        let c1 = self.sample_field();
        let c2 = self.sample_field();
        Ext3([c0, c1, c2])
    }

    /// A uniform integer in `[0, 2^bits)`.
    ///
    /// # Panics
    /// If `bits > 63` (a configuration error).
    pub fn sample_bits(&mut self, bits: usize) -> usize {
        assert!(
            bits <= 63 && bits < usize::BITS as usize,
            "sample_bits: too many bits"
        );
        let b = self.block();
        let mut lo = [0u8; 8];
        lo.copy_from_slice(&b[..8]);
        (u64::from_le_bytes(lo) & ((1u64 << bits) - 1)) as usize
    }

    /// Proof of work: the smallest nonce (from 0) with `bits` leading zero bits, searched in parallel chunks;
    /// then observes it.
    ///
    /// # Panics
    /// If `bits > 64` (a configuration error; such a nonce cannot exist).
    pub fn grind(&mut self, bits: u32) -> u64 {
        assert!(bits <= 64, "grind: bits must be <= 64");
        let state = self.flush();
        const CHUNK: u64 = 1 << 14;
        let mut start = 0u64;
        let nonce = loop {
            let found = (start..start.saturating_add(CHUNK))
                .into_par_iter()
                .find_first(|&n| grind_ok(&state, bits, n));
            if let Some(n) = found {
                break n;
            }
            start = start.checked_add(CHUNK).expect("grinding exhausted u64");
        };
        self.observe_u64(nonce);
        nonce
    }

    /// Verifier side of [`Transcript::grind`]: checks `nonce` and observes it (always).
    pub fn check_grind(&mut self, bits: u32, nonce: u64) -> bool {
        let state = self.flush();
        let ok = grind_ok(&state, bits, nonce);
        self.observe_u64(nonce);
        ok
    }
}
