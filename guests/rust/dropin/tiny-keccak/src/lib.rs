//! Keccak, SHA-3 and SHAKE with the `tiny-keccak` 2.0 crate's API, on zkrv's `keccak_f` precompile
//! (docs/abi.md "Precompiles"): each Keccak-f\[1600\] permutation is one ecall, proven by the KECCAKF
//! table, instead of a few thousand RV64IM instructions.
//!
//! Provided, with tiny-keccak's names, signatures and features: [`Hasher`] (`update`, `finalize`), [`Xof`]
//! (`squeeze`), [`IntoXof`], [`keccakf`] (always), `Keccak::{v224, v256, v384, v512}` (feature `keccak`;
//! original Keccak padding 0x01, as Ethereum), `Sha3::{v224, v256, v384, v512}` (feature `sha3`; FIPS 202
//! padding 0x06), `Shake::{v128, v256}` (feature `shake`; padding 0x1F, any output length). Not provided:
//! cSHAKE, KMAC, TupleHash, ParallelHash, KangarooTwelve.
//!
//! The sponge (FIPS 202 §4) absorbs whole 8-byte lanes with one aligned load each when the input is
//! 8-aligned, so a hashed byte costs under one instruction besides the precompile.
#![no_std]

use zkrv_guest::keccak::{keccak_f, State};

/// A hash function: absorb with `update`, then write the digest with `finalize` (tiny-keccak's trait).
pub trait Hasher {
    /// Absorbs `input`.
    fn update(&mut self, input: &[u8]);
    /// Pads and writes `output.len()` bytes of the digest (the function's size for a fixed-output hash;
    /// any length for SHAKE).
    fn finalize(self, output: &mut [u8]);
}

/// An extendable-output function: `squeeze` may be called repeatedly, each continuing the output.
pub trait Xof {
    /// Writes the next `output.len()` bytes of the output (pads on the first call).
    fn squeeze(&mut self, output: &mut [u8]);
}

/// A hash that can continue as an extendable-output function.
pub trait IntoXof {
    /// The XOF it becomes.
    type Xof: Xof;
    /// The XOF over what was absorbed so far (padding happens on its first squeeze).
    fn into_xof(self) -> Self::Xof;
}

/// Keccak-f\[1600\] (24 rounds) in place on 25 lanes, lane (x, y) at index x + 5y (tiny-keccak's `keccakf`).
pub fn keccakf(a: &mut [u64; 25]) {
    let mut st = State(*a);
    keccak_f(&mut st);
    *a = st.0;
}

/// The Keccak sponge over the precompile: `rate` bytes per block (a multiple of 8), domain byte `delim`.
#[derive(Clone)]
struct Sponge {
    state: State,
    /// Bytes of the current block absorbed (absorbing) or read (squeezing), < rate.
    pos: usize,
    rate: usize,
    delim: u8,
    squeezing: bool,
}

impl Sponge {
    /// A sponge of capacity `2 * bits` (rate 200 - bits / 4 bytes) and domain byte `delim`.
    fn new(bits: usize, delim: u8) -> Self {
        Self {
            state: State::default(),
            pos: 0,
            rate: 200 - bits / 4,
            delim,
            squeezing: false,
        }
    }

    fn xor_byte(&mut self, i: usize, b: u8) {
        self.state.0[i / 8] ^= u64::from(b) << (8 * (i % 8));
    }

    fn absorb(&mut self, mut data: &[u8]) {
        assert!(!self.squeezing, "tiny-keccak (zkrv): update after squeeze");
        while !data.is_empty() {
            if self.pos % 8 == 0 && data.len() >= 8 {
                // Whole lanes, up to the end of the block.
                let lane = self.pos / 8;
                let n = ((self.rate - self.pos) / 8).min(data.len() / 8);
                let (head, rest) = data.split_at(8 * n);
                let lanes = &mut self.state.0[lane..lane + n];
                // SAFETY: every bit pattern is a valid u64; align_to only reinterprets aligned bytes.
                let (pre, words, _) = unsafe { head.align_to::<u64>() };
                if pre.is_empty() {
                    for (l, w) in lanes.iter_mut().zip(words) {
                        *l ^= u64::from_le(*w);
                    }
                } else {
                    for (l, c) in lanes.iter_mut().zip(head.chunks_exact(8)) {
                        *l ^= u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                    }
                }
                self.pos += 8 * n;
                data = rest;
            } else {
                self.xor_byte(self.pos, data[0]);
                self.pos += 1;
                data = &data[1..];
            }
            if self.pos == self.rate {
                keccak_f(&mut self.state);
                self.pos = 0;
            }
        }
    }

    fn squeeze(&mut self, output: &mut [u8]) {
        if !self.squeezing {
            // FIPS 202 §5.1 pad10*1 after the domain bits.
            self.xor_byte(self.pos, self.delim);
            self.xor_byte(self.rate - 1, 0x80);
            keccak_f(&mut self.state);
            self.pos = 0;
            self.squeezing = true;
        }
        for o in output {
            if self.pos == self.rate {
                keccak_f(&mut self.state);
                self.pos = 0;
            }
            *o = (self.state.0[self.pos / 8] >> (8 * (self.pos % 8))) as u8;
            self.pos += 1;
        }
    }
}

/// Defines a fixed-output sponge hash type with tiny-keccak's constructors.
macro_rules! fixed_hash {
    ($feature:literal, $name:ident, $delim:expr, $doc:literal, $($v:ident = $bits:expr),+) => {
        #[doc = $doc]
        #[cfg(feature = $feature)]
        #[derive(Clone)]
        pub struct $name(Sponge);

        #[cfg(feature = $feature)]
        impl $name {
            $(
                #[doc = concat!("The ", stringify!($bits), "-bit variant: capacity 2 x ",
                    stringify!($bits), " bits, rate 200 - ", stringify!($bits), " / 4 bytes.")]
                pub fn $v() -> Self {
                    Self(Sponge::new($bits, $delim))
                }
            )+
        }

        #[cfg(feature = $feature)]
        impl Hasher for $name {
            fn update(&mut self, input: &[u8]) {
                self.0.absorb(input);
            }
            fn finalize(mut self, output: &mut [u8]) {
                self.0.squeeze(output);
            }
        }
    };
}

fixed_hash!(
    "keccak",
    Keccak,
    0x01,
    "Keccak with the original padding (domain byte 0x01): Keccak-256 is \
    Ethereum's hash.",
    v224 = 224,
    v256 = 256,
    v384 = 384,
    v512 = 512
);
fixed_hash!(
    "sha3",
    Sha3,
    0x06,
    "SHA-3 (FIPS 202 §6.1, domain byte 0x06).",
    v224 = 224,
    v256 = 256,
    v384 = 384,
    v512 = 512
);
fixed_hash!(
    "shake",
    Shake,
    0x1f,
    "SHAKE (FIPS 202 §6.2, domain byte 0x1F): any output length.",
    v128 = 128,
    v256 = 256
);

#[cfg(feature = "shake")]
impl Xof for Shake {
    fn squeeze(&mut self, output: &mut [u8]) {
        self.0.squeeze(output);
    }
}

#[cfg(feature = "shake")]
impl IntoXof for Shake {
    type Xof = Shake;
    fn into_xof(self) -> Shake {
        self
    }
}
