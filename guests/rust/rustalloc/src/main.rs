//! rustalloc: exercises the runtime's bump allocator and panic handler.
//!
//! Input: n (u64 LE, default 1000) and seed (u64 LE, default 1). Pushes n xorshift64 values (the generator of
//! guests/c/programs/xorshift.h) one by one into a `Vec`, counts them by value mod 97 in a `BTreeMap`, and
//! outputs, as u64 LE: the checksum of the values, the number of distinct residues, the checksum of the
//! (residue, count) pairs in ascending order; then the text `n=<n> seed=<seed>`.
//! n > 1,000,000 panics ("n = ... is too large"); n > 65,536 outgrows the 1 MiB heap (the Vec's capacity
//! doubles to 2^17 words = 1 MiB) and panics with "memory allocation of ... bytes failed". Both exit 101 with
//! the message on fd 2.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::vec::Vec;

zkrv_guest::entry!(main);

fn checksum(words: impl Iterator<Item = u64>) -> u64 {
    words.fold(0xCBF2_9CE4_8422_2325, |h, v| (h ^ v).wrapping_mul(0x0000_0100_0000_01B3))
}

fn main() {
    let n = zkrv_guest::read_u64(1000);
    let seed = zkrv_guest::read_u64(1);
    if n > 1_000_000 {
        panic!("n = {n} is too large");
    }
    let mut x = if seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { seed };
    let mut values = Vec::new();
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        values.push(x);
    }
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for v in &values {
        *counts.entry(v % 97).or_insert(0) += 1;
    }
    let mut out = Vec::new();
    out.extend_from_slice(&checksum(values.iter().copied()).to_le_bytes());
    out.extend_from_slice(&(counts.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(counts.iter().flat_map(|(&k, &c)| [k, c])).to_le_bytes());
    out.extend_from_slice(format!("n={n} seed={seed}").as_bytes());
    zkrv_guest::write_output(&out);
}
