//! The zkrv precompiles (docs/abi.md "Precompiles"): one `ecall` each, proven by a dedicated table instead of
//! RV64IM instructions. zkrv only: a guest that calls them does not run under qemu-riscv64.
//!
//! Every state type here is `#[repr(C, align(8))]`, so the 8-byte alignment the ABI requires holds by
//! construction; each call updates the state in place.

use core::arch::asm;

const KECCAK_F: usize = 0x0100_0001;
const SHA256_COMPRESS: usize = 0x0100_0002;
const POSEIDON2: usize = 0x0100_0003;

/// `ecall` with a7 = `n`, a0 = `a0`, a1 = `a1`; a0 comes back 0 (clobbered).
///
/// # Safety
/// `a0` (and `a1` for sha256_compress) must point to live, 8-aligned memory of the call's size; the call
/// writes the state in place.
#[inline(always)]
unsafe fn precompile(n: usize, a0: usize, a1: usize) {
    asm!("ecall", inlateout("a0") a0 => _, in("a1") a1, in("a7") n, options(nostack));
}

/// Keccak-f\[1600\] and Keccak-256 on the `keccak_f` precompile (a7 = `0x0100_0001`).
pub mod keccak {
    /// 25 lanes, lane (x, y) at index x + 5y (FIPS 202; tiny-keccak's `keccakf` order), 8-aligned.
    #[repr(C, align(8))]
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct State(pub [u64; 25]);

    /// Keccak-f\[1600\] (24 rounds) in place.
    pub fn keccak_f(state: &mut State) {
        // SAFETY: `State` is 200 bytes, 8-aligned, borrowed mutably for the call.
        unsafe { super::precompile(super::KECCAK_F, state.0.as_mut_ptr() as usize, 0) }
    }

    /// Keccak-256 (original Keccak padding 0x01, as Ethereum and tiny-keccak's `Keccak::v256`) of `data`.
    pub fn keccak256(data: &[u8]) -> [u8; 32] {
        const RATE: usize = 136;
        let mut st = State::default();
        let mut chunks = data.chunks_exact(RATE);
        let absorb = |st: &mut State, block: &[u8]| {
            for (lane, b) in st.0.iter_mut().zip(block.chunks_exact(8)) {
                *lane ^= u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            }
            keccak_f(st);
        };
        for block in &mut chunks {
            absorb(&mut st, block);
        }
        let tail = chunks.remainder();
        let mut last = [0u8; RATE];
        last[..tail.len()].copy_from_slice(tail);
        last[tail.len()] ^= 0x01;
        last[RATE - 1] ^= 0x80;
        absorb(&mut st, &last);
        let mut out = [0u8; 32];
        for (o, lane) in out.chunks_exact_mut(8).zip(st.0) {
            o.copy_from_slice(&lane.to_le_bytes());
        }
        out
    }
}

/// The SHA-256 compression and SHA-256 on the `sha256_compress` precompile (a7 = `0x0100_0002`).
pub mod sha256 {
    /// H0..H7 (u32, native = little-endian in memory), 8-aligned.
    #[repr(C, align(8))]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct State(pub [u32; 8]);

    /// One 64-byte message block in message order, 8-aligned.
    #[repr(C, align(8))]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Block(pub [u8; 64]);

    /// The initial hash value H(0) (FIPS 180-4 §5.3.3).
    pub const IV: State = State([
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]);

    /// One compression (FIPS 180-4 §6.2.2 steps 1-4) of `block` into `state`. Two distinct borrows, so the
    /// state and the block never overlap (the ABI refuses overlap).
    pub fn compress(state: &mut State, block: &Block) {
        // SAFETY: `State` is 32 bytes and `Block` 64, both 8-aligned; `state` is borrowed mutably, `block`
        // shared (the call only reads it).
        unsafe {
            super::precompile(
                super::SHA256_COMPRESS,
                state.0.as_mut_ptr() as usize,
                block.0.as_ptr() as usize,
            )
        }
    }

    /// SHA-256 of `data` (FIPS 180-4 padding).
    pub fn sha256(data: &[u8]) -> [u8; 32] {
        let mut h = IV;
        let mut block = Block([0; 64]);
        let mut chunks = data.chunks_exact(64);
        for c in &mut chunks {
            block.0.copy_from_slice(c);
            compress(&mut h, &block);
        }
        let tail = chunks.remainder();
        block.0 = [0; 64];
        block.0[..tail.len()].copy_from_slice(tail);
        block.0[tail.len()] = 0x80;
        if tail.len() >= 56 {
            compress(&mut h, &block);
            block.0 = [0; 64];
        }
        block.0[56..].copy_from_slice(&((data.len() as u64) * 8).to_be_bytes());
        compress(&mut h, &block);
        let mut out = [0u8; 32];
        for (o, w) in out.chunks_exact_mut(4).zip(h.0) {
            o.copy_from_slice(&w.to_be_bytes());
        }
        out
    }
}

/// The width-8 Poseidon2 permutation over Goldilocks (Plonky3's parameters) on the `poseidon2` precompile
/// (a7 = `0x0100_0003`).
pub mod poseidon2 {
    /// The Goldilocks modulus p = 2^64 - 2^32 + 1.
    pub const P: u64 = 0xffff_ffff_0000_0001;

    /// 8 Goldilocks elements, each canonical (< [`P`]), 8-aligned.
    #[repr(C, align(8))]
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct State(pub [u64; 8]);

    /// The permutation in place.
    ///
    /// # Panics
    /// If an element is not canonical (>= [`P`]): the executor would refuse the call (docs/abi.md).
    pub fn permute(state: &mut State) {
        if let Some(x) = state.0.iter().find(|&&x| x >= P) {
            panic!("poseidon2: state element {x:#x} is not a canonical Goldilocks element");
        }
        // SAFETY: `State` is 64 bytes, 8-aligned, borrowed mutably for the call.
        unsafe { super::precompile(super::POSEIDON2, state.0.as_mut_ptr() as usize, 0) }
    }

    /// The 2-to-1 compression of two 4-element digests (Plonky3's `TruncatedPermutation<_, 2, 4, 8>`): the
    /// first 4 elements of the permutation of `left || right`.
    pub fn compress(left: [u64; 4], right: [u64; 4]) -> [u64; 4] {
        let mut s = State([left[0], left[1], left[2], left[3], right[0], right[1], right[2], right[3]]);
        permute(&mut s);
        [s.0[0], s.0[1], s.0[2], s.0[3]]
    }
}
