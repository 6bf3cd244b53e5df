//! SHA-256 (FIPS 180-4) with the `sha2` 0.10 crate's API, on zkrv's `sha256_compress` precompile
//! (docs/abi.md "Precompiles"): each 64-byte block is one ecall, proven by the SHA256 table, instead of
//! about 4,000 RV64IM instructions.
//!
//! The API is the `digest` 0.10 traits, as `sha2` implements them: [`Sha256`] is a
//! [`digest::core_api::CoreWrapper`] over [`Sha256Core`], so [`Digest`] (`new`, `update`, `chain_update`,
//! `finalize`, `finalize_reset`, `reset`, `digest`, `output_size`), `Default`, `Clone`, `Debug`,
//! [`digest::Update`], [`digest::FixedOutput`] and [`digest::FixedOutputReset`] are those of the real crate,
//! and `finalize()` returns the same `GenericArray<u8, U32>` ([`digest::Output`]). [`compress256`] is sha2's
//! raw compression. Not provided: Sha224, Sha384, Sha512 and their truncations (no precompile; a guest that
//! names them fails to compile, naming the missing item).
#![no_std]

pub use digest::{self, Digest};

use core::fmt;
use digest::block_buffer::Eager;
use digest::core_api::{
    AlgorithmName, Block, BlockSizeUser, Buffer, BufferKindUser, CoreWrapper, FixedOutputCore,
    OutputSizeUser, UpdateCore,
};
use digest::typenum::{U32, U64};
use digest::{HashMarker, Output, Reset};
use zkrv_guest::sha256::{compress, State, IV};

/// SHA-256 with the `Digest` API (the type `sha2::Sha256` names).
pub type Sha256 = CoreWrapper<Sha256Core>;

/// The block-level SHA-256 state under [`Sha256`]: H0..H7 and the number of 64-byte blocks compressed.
/// The wrapper buffers the partial block.
#[derive(Clone)]
pub struct Sha256Core {
    state: State,
    blocks: u64,
}

impl Default for Sha256Core {
    fn default() -> Self {
        Self {
            state: IV,
            blocks: 0,
        }
    }
}

/// One compression of `block` (64 bytes in message order) into `state` on the precompile, which takes an
/// 8-aligned block: an aligned `block` is passed in place, another one copied first.
fn compress_block(state: &mut State, block: &[u8; 64]) {
    if block.as_ptr().align_offset(8) == 0 {
        // SAFETY: `Block` is `#[repr(C, align(8))]` around `[u8; 64]`: the same size and layout, and the
        // pointer is 8-aligned; the borrow is shared and lives as long as `block`.
        let b = unsafe { &*block.as_ptr().cast::<zkrv_guest::sha256::Block>() };
        compress(state, b);
    } else {
        compress(state, &zkrv_guest::sha256::Block(*block));
    }
}

impl HashMarker for Sha256Core {}

impl BlockSizeUser for Sha256Core {
    type BlockSize = U64;
}

impl BufferKindUser for Sha256Core {
    type BufferKind = Eager;
}

impl OutputSizeUser for Sha256Core {
    type OutputSize = U32;
}

impl UpdateCore for Sha256Core {
    fn update_blocks(&mut self, blocks: &[Block<Self>]) {
        for b in blocks {
            compress_block(&mut self.state, b.as_ref());
        }
        self.blocks += blocks.len() as u64;
    }
}

impl FixedOutputCore for Sha256Core {
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        // FIPS 180-4 §5.1.1: 0x80, zeros, the message length in bits as a u64 big-endian.
        let bits = (self.blocks * 64 + buffer.get_pos() as u64) * 8;
        let state = &mut self.state;
        buffer.len64_padding_be(bits, |b| compress_block(state, b.as_ref()));
        for (o, w) in out.chunks_exact_mut(4).zip(self.state.0) {
            o.copy_from_slice(&w.to_be_bytes());
        }
    }
}

impl Reset for Sha256Core {
    fn reset(&mut self) {
        *self = Self::default();
    }
}

impl AlgorithmName for Sha256Core {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sha256")
    }
}

impl fmt::Debug for Sha256Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sha256Core { .. }")
    }
}

/// sha2's raw SHA-256 compression: each 64-byte block of `blocks`, in order, into `state` (H0..H7), no
/// padding (FIPS 180-4 §6.2.2 steps 1-4).
pub fn compress256(state: &mut [u32; 8], blocks: &[digest::generic_array::GenericArray<u8, U64>]) {
    let mut s = State(*state);
    for b in blocks {
        compress_block(&mut s, b.as_ref());
    }
    *state = s.0;
}
