//! typedio: typed input and output (`zkrv_guest::read` / `commit`, docs/abi.md "Typed I/O").
//!
//! Input: one typed [`Request`], then a fixed-width `u64` LE `salt` (default 0). Output: one typed
//! [`Summary`] of the request, then `salt` as a fixed-width `u64` LE. A malformed request exits 103 with the
//! reason on fd 2 (the runtime's `READ_ERROR_EXIT_CODE`). The host side is crates/sdk/tests/typed_io.rs,
//! which declares the same types.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

zkrv_guest::entry!(main);

#[derive(Deserialize)]
struct Request {
    name: String,
    values: Vec<i64>,
    scale: i32,
    tag: Option<[u8; 4]>,
}

#[derive(Serialize)]
struct Summary {
    /// `hello, <name>`.
    greeting: String,
    count: u32,
    /// Sum of `value * scale`, wrapping.
    scaled_sum: i64,
    min: Option<i64>,
    max: Option<i64>,
    tag: Option<[u8; 4]>,
}

fn main() {
    let req: Request = zkrv_guest::read();
    let salt = zkrv_guest::read_u64(0);
    let summary = Summary {
        greeting: format!("hello, {}", req.name),
        count: req.values.len() as u32,
        scaled_sum: req.values.iter().fold(0i64, |s, v| s.wrapping_add(v.wrapping_mul(req.scale as i64))),
        min: req.values.iter().copied().min(),
        max: req.values.iter().copied().max(),
        tag: req.tag,
    };
    zkrv_guest::commit(&summary);
    zkrv_guest::write_u64(salt);
}
