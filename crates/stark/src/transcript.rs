//! The Fiat-Shamir transcript: Keccak-256 (the default, below) or, for the Poseidon2 preset
//! ([`crate::merkle::MerkleHash::Poseidon2`]), a duplex sponge over the Poseidon2 permutation
//! ([`crate::poseidon2::Duplex`]; its encoding of the observations in docs/stark.md §11.3 and at
//! [`Transcript::with_hash`]).
//!
//! **Keccak-256** (byte exact):
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
use crate::merkle::{Digest, MerkleHash};
use crate::poseidon2::{self as p2, Duplex};

const TAG_ABSORB: u8 = 0x01;
const TAG_SQUEEZE: u8 = 0x02;
const TAG_GRIND: u8 = 0x03;

/// A Fiat-Shamir transcript. Cloning forks it.
#[derive(Clone, Debug)]
pub struct Transcript(Inner);

#[derive(Clone, Debug)]
enum Inner {
    Keccak(KeccakTranscript),
    Poseidon2(Duplex),
}

/// The Keccak transcript. `pending` is kept as a running hash already fed `0x01 || state` (the same digest
/// as hashing the bytes at the flush, in memory independent of their number); `None` while nothing is
/// pending.
#[derive(Clone)]
struct KeccakTranscript {
    state: Digest,
    pending: Option<Keccak>,
    counter: u64,
}

impl std::fmt::Debug for KeccakTranscript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeccakTranscript")
            .field("state", &self.state)
            .field("pending", &self.pending.is_some())
            .field("counter", &self.counter)
            .finish()
    }
}

/// Bytes per element when the Poseidon2 transcript absorbs bytes (7: every chunk is below p).
pub const P2_BYTES_PER_ELEMENT: usize = 7;

/// Whether `nonce` satisfies a `bits`-bit proof of work for the flushed Poseidon2 state `s`:
/// [`p2::grind_value`] has `bits` leading zero bits (`bits > 64` never does).
pub fn p2_grind_ok(s: &[F; p2::WIDTH], bits: u32, nonce: u64) -> bool {
    bits <= 64 && p2::grind_value(s, nonce).leading_zeros() >= bits
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

impl KeccakTranscript {
    fn new(protocol_label: &[u8]) -> Self {
        let len = (protocol_label.len() as u64).to_le_bytes();
        Self {
            state: keccak_parts(&[b"zkrv-transcript-v1", &len, protocol_label]),
            pending: None,
            counter: 0,
        }
    }

    /// Append raw bytes (no length prefix; callers observe fixed-shape data or a length first).
    fn observe_bytes(&mut self, bytes: &[u8]) {
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

    fn flush(&mut self) -> Digest {
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

    fn sample_field(&mut self) -> F {
        let b = self.block();
        let mut lo = [0u8; 16];
        lo.copy_from_slice(&b[..16]);
        let v = u128::from_le_bytes(lo) % (P as u128);
        F::new(v as u64)
    }

    fn sample_bits(&mut self, bits: usize) -> usize {
        let b = self.block();
        let mut lo = [0u8; 8];
        lo.copy_from_slice(&b[..8]);
        (u64::from_le_bytes(lo) & ((1u64 << bits) - 1)) as usize
    }
}

impl Transcript {
    /// Start a Keccak-256 transcript bound to `protocol_label` ([`Transcript::with_hash`] for another).
    pub fn new(protocol_label: &[u8]) -> Self {
        Self(Inner::Keccak(KeccakTranscript::new(protocol_label)))
    }

    /// Start a transcript of `hash` bound to `protocol_label`. Keccak-256: [`Transcript::new`].
    /// Poseidon2 (docs/stark.md §11.3): the sponge starts at zero and absorbs
    /// `bytes("zkrv-transcript-v1")`, `u64(label.len())`, `bytes(label)`, where every observation is
    /// absorbed as field elements: `observe_bytes(b)` as `ceil(len / 7)` elements, chunk `k` the
    /// little-endian integer of bytes `7k..7k+7` (the last chunk zero-padded); `observe_u64(x)` as
    /// `x mod 2^32, x >> 32`; `observe_field` one element each; `observe_ext` c0, c1, c2;
    /// `observe_digest` its 4 elements ([`p2::digest_from_bytes_reduced`]). `flush` returns the
    /// capacity `s[4..8]` as a digest.
    pub fn with_hash(hash: MerkleHash, protocol_label: &[u8]) -> Self {
        match hash {
            MerkleHash::Keccak256 => Self::new(protocol_label),
            MerkleHash::Poseidon2 => {
                let mut t = Self(Inner::Poseidon2(Duplex::default()));
                t.observe_bytes(b"zkrv-transcript-v1");
                t.observe_u64(protocol_label.len() as u64);
                t.observe_bytes(protocol_label);
                t
            }
        }
    }

    /// The Poseidon2 transcript's sponge (`None` for Keccak).
    pub fn poseidon2_sponge(&self) -> Option<&Duplex> {
        match &self.0 {
            Inner::Keccak(_) => None,
            Inner::Poseidon2(d) => Some(d),
        }
    }

    /// The transcript's hash.
    pub fn hash(&self) -> MerkleHash {
        match self.0 {
            Inner::Keccak(_) => MerkleHash::Keccak256,
            Inner::Poseidon2(_) => MerkleHash::Poseidon2,
        }
    }

    /// Append raw bytes (no length prefix; callers observe fixed-shape data or a length first).
    pub fn observe_bytes(&mut self, bytes: &[u8]) {
        match &mut self.0 {
            Inner::Keccak(k) => k.observe_bytes(bytes),
            Inner::Poseidon2(d) => {
                for c in bytes.chunks(P2_BYTES_PER_ELEMENT) {
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    d.absorb(F::new(u64::from_le_bytes(w)));
                }
            }
        }
    }

    /// Append `le8(x)` (Poseidon2: the two 32-bit halves, low first).
    pub fn observe_u64(&mut self, x: u64) {
        match &mut self.0 {
            Inner::Keccak(k) => k.observe_bytes(&x.to_le_bytes()),
            Inner::Poseidon2(d) => {
                d.absorb(F::new(x & 0xffff_ffff));
                d.absorb(F::new(x >> 32));
            }
        }
    }

    /// Append each element's canonical value as 8 LE bytes (Poseidon2: the element).
    pub fn observe_field(&mut self, xs: &[F]) {
        match &mut self.0 {
            Inner::Keccak(k) => {
                for x in xs {
                    k.observe_bytes(&x.as_canonical_u64().to_le_bytes());
                }
            }
            Inner::Poseidon2(d) => xs.iter().for_each(|&x| d.absorb(x)),
        }
    }

    /// Append each element as its three coordinates c0, c1, c2 (canonical, 8 LE bytes each).
    pub fn observe_ext(&mut self, xs: &[Ext3]) {
        for x in xs {
            self.observe_field(&x.0);
        }
    }

    /// Append a 32-byte digest (Poseidon2: its 4 elements).
    pub fn observe_digest(&mut self, d: &Digest) {
        match &mut self.0 {
            Inner::Keccak(k) => k.observe_bytes(d),
            Inner::Poseidon2(s) => p2::digest_from_bytes_reduced(d)
                .into_iter()
                .for_each(|x| s.absorb(x)),
        }
    }

    /// Absorb what is pending into the state (see module doc) and return the state (Poseidon2: the
    /// capacity as a digest).
    pub fn flush(&mut self) -> Digest {
        match &mut self.0 {
            Inner::Keccak(k) => k.flush(),
            Inner::Poseidon2(d) => {
                let s = d.flush();
                p2::digest_to_bytes(&[s[4], s[5], s[6], s[7]])
            }
        }
    }

    /// A uniform-ish base-field element (Keccak: 128-bit reduction, bias < 2^-64; Poseidon2: one squeezed
    /// element).
    pub fn sample_field(&mut self) -> F {
        match &mut self.0 {
            Inner::Keccak(k) => k.sample_field(),
            Inner::Poseidon2(d) => d.squeeze(),
        }
    }

    /// An extension element: three base-field samples c0, c1, c2.
    pub fn sample_ext(&mut self) -> Ext3 {
        let c0 = self.sample_field();
        let c1 = self.sample_field();
        let c2 = self.sample_field();
        Ext3([c0, c1, c2])
    }

    /// A uniform integer in `[0, 2^bits)` (Poseidon2: the low `bits` bits of one squeezed element's
    /// canonical value; distance from uniform < 2^-63 for `bits <= 32`).
    ///
    /// # Panics
    /// If `bits > 63` (a configuration error).
    pub fn sample_bits(&mut self, bits: usize) -> usize {
        assert!(
            bits <= 63 && bits < usize::BITS as usize,
            "sample_bits: too many bits"
        );
        match &mut self.0 {
            Inner::Keccak(k) => k.sample_bits(bits),
            Inner::Poseidon2(d) => (d.squeeze().as_canonical_u64() & ((1u64 << bits) - 1)) as usize,
        }
    }

    /// Proof of work: the smallest nonce (from 0) with `bits` leading zero bits, searched on the host
    /// ([`GrindInput::search`]); then observes it.
    ///
    /// # Panics
    /// If `bits > 64` (a configuration error; such a nonce cannot exist).
    pub fn grind(&mut self, bits: u32) -> u64 {
        assert!(bits <= 64, "grind: bits must be <= 64");
        let nonce = self.grind_input().search(bits);
        self.observe_u64(nonce);
        nonce
    }

    /// Verifier side of [`Transcript::grind`]: checks `nonce` and observes it (always).
    pub fn check_grind(&mut self, bits: u32, nonce: u64) -> bool {
        let ok = self.grind_input().ok(bits, nonce);
        self.observe_u64(nonce);
        ok
    }

    /// Flush, then what the proof of work of the flushed state hashes: the prover searches a nonce for it
    /// (on the host, [`GrindInput::search`], or on a device), then calls [`Transcript::observe_u64`] with the
    /// nonce, as [`Transcript::grind`] does.
    pub fn grind_input(&mut self) -> GrindInput {
        let state = self.flush();
        match &mut self.0 {
            Inner::Keccak(_) => GrindInput::Keccak(state),
            Inner::Poseidon2(d) => GrindInput::Poseidon2(d.flush()),
        }
    }
}

/// The input of the proof of work after a flush (module doc, "grinding"; Poseidon2: docs/stark.md §11.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrindInput {
    /// The flushed Keccak state; a nonce's value is [`grind_hash`].
    Keccak(Digest),
    /// The flushed Poseidon2 duplex state; a nonce's value is [`p2::grind_value`].
    Poseidon2([F; p2::WIDTH]),
}

impl GrindInput {
    /// Whether `nonce` satisfies a `bits`-bit proof of work ([`grind_ok`], [`p2_grind_ok`]; `bits > 64`
    /// never does).
    pub fn ok(&self, bits: u32, nonce: u64) -> bool {
        match self {
            GrindInput::Keccak(state) => grind_ok(state, bits, nonce),
            GrindInput::Poseidon2(s) => p2_grind_ok(s, bits, nonce),
        }
    }

    /// The smallest valid nonce counting from 0, searched on the host cores in chunks of 2^14 nonces.
    ///
    /// # Panics
    /// If `bits > 64` (a configuration error; such a nonce cannot exist).
    pub fn search(&self, bits: u32) -> u64 {
        assert!(bits <= 64, "grind: bits must be <= 64");
        const CHUNK: u64 = 1 << 14;
        let mut start = 0u64;
        loop {
            let found = (start..start.saturating_add(CHUNK))
                .into_par_iter()
                .find_first(|&n| self.ok(bits, n));
            if let Some(n) = found {
                return n;
            }
            start = start.checked_add(CHUNK).expect("grinding exhausted u64");
        }
    }
}
