//! keccak: hashes the whole private input with Keccak-256 (original Keccak padding, `tiny_keccak::Keccak::v256`,
//! as Ethereum) and writes the 32-byte digest to the public output. The input is read in 16 KiB chunks.
#![no_std]
#![no_main]

use tiny_keccak::{Hasher, Keccak};

zkrv_guest::entry!(main);

fn main() {
    let mut hasher = Keccak::v256();
    let mut chunk = [0u8; 16384];
    loop {
        let n = zkrv_guest::read_input(&mut chunk);
        hasher.update(&chunk[..n]);
        if n < chunk.len() {
            break;
        }
    }
    let mut out = [0u8; 32];
    hasher.finalize(&mut out);
    zkrv_guest::write_output(&out);
}
