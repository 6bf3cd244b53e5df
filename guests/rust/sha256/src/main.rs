//! sha256: hashes the whole private input with SHA-256 (`sha2` crate) and writes the 32-byte digest to the
//! public output. The input is read in 16 KiB chunks, so large inputs (1 MiB for the executor benchmark)
//! need no heap.
#![no_std]
#![no_main]

use sha2::{Digest, Sha256};

zkrv_guest::entry!(main);

fn main() {
    let mut hasher = Sha256::new();
    let mut chunk = [0u8; 16384];
    loop {
        let n = zkrv_guest::read_input(&mut chunk);
        hasher.update(&chunk[..n]);
        if n < chunk.len() {
            break;
        }
    }
    zkrv_guest::write_output(&hasher.finalize());
}
