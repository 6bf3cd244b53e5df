//! dropin_api: the private input (any bytes, m of them) through the drop-in `sha2` and `tiny-keccak` APIs,
//! each absorbing it in two updates split after byte min(3, m) (an unaligned rest). Output, concatenated:
//! SHA-256 by `chain_update`, by `finalize_reset`, then of "abc" after the reset (3 x 32); `compress256`
//! of IV with the input's whole 64-byte blocks (8 u32 LE); Keccak-224/256/384/512, SHA3-224/256/384/512
//! (28, 32, 48, 64 bytes each); SHAKE128 squeezed 200 then 300 bytes; SHAKE256 finalized to 64 bytes;
//! `keccakf` of lanes 0..25 (25 u64 LE).
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use sha2::digest::generic_array::GenericArray;
use sha2::{Digest, Sha256};
use tiny_keccak::{Hasher, Keccak, Sha3, Shake, Xof};

zkrv_guest::entry!(main);

fn absorb<H: Hasher>(mut h: H, a: &[u8], b: &[u8], len: usize) -> Vec<u8> {
    h.update(a);
    h.update(b);
    let mut out = alloc::vec![0u8; len];
    h.finalize(&mut out);
    out
}

fn main() {
    let data = zkrv_guest::read_input_to_end();
    let (a, b) = data.split_at(data.len().min(3));
    let mut out = Vec::new();
    out.extend_from_slice(&Sha256::new().chain_update(a).chain_update(b).finalize());
    let mut h = Sha256::new();
    h.update(a);
    h.update(b);
    out.extend_from_slice(&h.finalize_reset());
    h.update(b"abc");
    out.extend_from_slice(&h.finalize());
    let mut state = [
        0x6a09e667u32,
        0xbb67ae85,
        0x3c6ef372,
        0xa54ff53a,
        0x510e527f,
        0x9b05688c,
        0x1f83d9ab,
        0x5be0cd19,
    ];
    let blocks: Vec<_> = data
        .chunks_exact(64)
        .map(|c| *GenericArray::from_slice(c))
        .collect();
    sha2::compress256(&mut state, &blocks);
    out.extend(state.iter().flat_map(|w| w.to_le_bytes()));
    for (bits, len) in [(224, 28), (256, 32), (384, 48), (512, 64)] {
        let k = match bits {
            224 => Keccak::v224(),
            256 => Keccak::v256(),
            384 => Keccak::v384(),
            _ => Keccak::v512(),
        };
        out.extend(absorb(k, a, b, len));
    }
    for (bits, len) in [(224, 28), (256, 32), (384, 48), (512, 64)] {
        let k = match bits {
            224 => Sha3::v224(),
            256 => Sha3::v256(),
            384 => Sha3::v384(),
            _ => Sha3::v512(),
        };
        out.extend(absorb(k, a, b, len));
    }
    let mut s = Shake::v128();
    s.update(a);
    s.update(b);
    let mut x = [0u8; 500];
    s.squeeze(&mut x[..200]);
    s.squeeze(&mut x[200..]);
    out.extend_from_slice(&x);
    out.extend(absorb(Shake::v256(), a, b, 64));
    let mut lanes: [u64; 25] = core::array::from_fn(|i| i as u64);
    tiny_keccak::keccakf(&mut lanes);
    out.extend(lanes.iter().flat_map(|l| l.to_le_bytes()));
    zkrv_guest::write_output(&out);
}
