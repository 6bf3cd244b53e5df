//! Precompiles: hash permutations a guest calls with one `ecall` (docs/abi.md, "Precompiles"). Each call
//! reads and writes 8-byte aligned cells of guest memory in place; the prover checks every byte through the
//! memory argument at the call's memory slot `ts = 4 clk + 1` (docs/tables.md §3).
//!
//! | a7 | call | memory |
//! |---|---|---|
//! | [`KECCAK_F`] | Keccak-f\[1600\] (FIPS 202 §3.3, 24 rounds) | a0: 25 lanes u64 LE, lane (x, y) at x + 5y |
//! | [`SHA256_COMPRESS`] | one SHA-256 compression (FIPS 180-4 §6.2.2 steps 1-4) | a0: H0..H7 as u32 LE; a1: 64-byte block |
//! | [`POSEIDON2`] | Poseidon2 over Goldilocks, width [`POSEIDON2_WIDTH`] (Plonky3's parameters) | a0: 8 canonical elements, u64 LE |
//!
//! The reference functions here ([`keccak_f`], [`sha256_compress`], [`poseidon2`]) are what the executor
//! runs and what the tables' fills and tests compare against.

use p3_field::{PrimeCharacteristicRing, PrimeField64};
use p3_goldilocks::Goldilocks;
use p3_symmetric::Permutation;

/// `a7` of `keccak_f`.
pub const KECCAK_F: u64 = 0x0100_0001;
/// `a7` of `sha256_compress`.
pub const SHA256_COMPRESS: u64 = 0x0100_0002;
/// `a7` of `poseidon2`.
pub const POSEIDON2: u64 = 0x0100_0003;

/// Keccak-f state: 25 lanes = 200 bytes.
pub const KECCAK_LANES: usize = 25;
/// SHA-256 state words (H0..H7) = 32 bytes, and block bytes.
pub const SHA256_STATE_WORDS: usize = 8;
pub const SHA256_BLOCK_BYTES: usize = 64;
/// Poseidon2 state width in Goldilocks elements (8 x 8 bytes = 64 bytes): Plonky3's Goldilocks STARK width,
/// the 2-to-1 compression of two 4-element digests (docs/tables.md §6.19).
pub const POSEIDON2_WIDTH: usize = 8;
/// The Goldilocks modulus p = 2^64 - 2^32 + 1: a Poseidon2 state element must be below it.
pub const GOLDILOCKS_P: u64 = 0xffff_ffff_0000_0001;

/// The name of precompile `num` (`"keccak_f"`, `"sha256_compress"`, `"poseidon2"`), if it is one.
pub fn precompile_name(num: u64) -> Option<&'static str> {
    match num {
        KECCAK_F => Some("keccak_f"),
        SHA256_COMPRESS => Some("sha256_compress"),
        POSEIDON2 => Some("poseidon2"),
        _ => None,
    }
}

/// Keccak-f\[1600\] in place (tiny-keccak's `keccakf`, FIPS 202).
pub fn keccak_f(state: &mut [u64; KECCAK_LANES]) {
    tiny_keccak::keccakf(state);
}

/// SHA-256 round constants K_0..K_63 (FIPS 180-4 §4.2.2).
pub const SHA256_K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// SHA-256 initial hash value H(0) (FIPS 180-4 §5.3.3).
pub const SHA256_IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// One SHA-256 compression (FIPS 180-4 §6.2.2, steps 1-4): `state` = H0..H7, `block` = the 64 message bytes
/// (read as 16 big-endian words M_0..M_15).
pub fn sha256_compress(state: &mut [u32; SHA256_STATE_WORDS], block: &[u8; SHA256_BLOCK_BYTES]) {
    let mut w = [0u32; 64];
    for (t, c) in block.chunks_exact(4).enumerate() {
        w[t] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    for t in 16..64 {
        let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
        let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16]
            .wrapping_add(s0)
            .wrapping_add(w[t - 7])
            .wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for t in 0..64 {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(SHA256_K[t])
            .wrapping_add(w[t]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// The Poseidon2 permutation over Goldilocks, width 8, in place: Plonky3's
/// `p3_goldilocks::default_goldilocks_poseidon2_8()` (x^7 S-box, 4 + 4 full rounds, 22 partial rounds,
/// its round constants and diagonal). Every element must be canonical (< [`GOLDILOCKS_P`]); the results
/// are canonical.
///
/// # Panics
/// Never for canonical inputs; a non-canonical input is reduced (the executor refuses such calls first).
pub fn poseidon2(state: &mut [u64; POSEIDON2_WIDTH]) {
    thread_local! {
        static PERM: p3_goldilocks::Poseidon2Goldilocks<POSEIDON2_WIDTH> =
            p3_goldilocks::default_goldilocks_poseidon2_8();
    }
    let mut s: [Goldilocks; POSEIDON2_WIDTH] = state.map(Goldilocks::from_u64);
    PERM.with(|p| p.permute_mut(&mut s));
    for (d, x) in state.iter_mut().zip(s) {
        *d = x.as_canonical_u64();
    }
}

/// Why the executor refused a precompile call (part of [`crate::ExecError::Precompile`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrecompileFault {
    /// A pointer is not a multiple of 8 (every cell is an aligned doubleword).
    #[error("{reg} = {addr:#x} is not 8-byte aligned")]
    Misaligned {
        /// `"a0 (state)"` or `"a1 (block)"`.
        reg: &'static str,
        addr: u64,
    },
    /// `[addr, addr + len)` is not inside the guest address space `[0x1000, 0x8000_0000)` (this covers a
    /// pointer of 2^32 or more).
    #[error("{reg} = {addr:#x}: [{addr:#x}, {addr:#x} + {len}) reaches outside guest memory [0x1000, 0x80000000)")]
    OutOfBounds {
        reg: &'static str,
        addr: u64,
        /// Bytes the call reads and writes there.
        len: u64,
    },
    /// sha256_compress: the state `[a0, a0 + 32)` and the block `[a1, a1 + 64)` overlap.
    #[error("the state [{state:#x}, {state:#x} + 32) and the block [{block:#x}, {block:#x} + 64) overlap")]
    Overlap { state: u64, block: u64 },
    /// poseidon2: state element `index` is not a canonical Goldilocks element (>= p).
    #[error("state element {index} = {value:#018x} is not a canonical Goldilocks element (>= p = 0xffffffff00000001)")]
    NonCanonical { index: usize, value: u64 },
}

/// Checks that `[addr, addr + len)` is 8-aligned and inside the guest address space.
pub(crate) fn check_range(reg: &'static str, addr: u64, len: u64) -> Result<(), PrecompileFault> {
    if !addr.is_multiple_of(8) {
        return Err(PrecompileFault::Misaligned { reg, addr });
    }
    if !crate::mem::FlatMem::in_bounds(addr, len) {
        return Err(PrecompileFault::OutOfBounds { reg, addr, len });
    }
    Ok(())
}
