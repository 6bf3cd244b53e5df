//! Whole-program tests of the prebuilt guests in `guests/bin` (the crate has no library code):
//!
//! - `tests/outputs.rs`: every guest run by `zkrv_executor::execute` on a few inputs, its public output and
//!   exit code compared with the host's own computation (`sha2`, `tiny-keccak`, `num-bigint`, and Rust
//!   reimplementations of the sort/matmul generators and of the RV64IM instruction semantics).
//! - `tests/qemu.rs`: every guest under `qemu-riscv64 -cpu rv64,c=false,a=false,f=false,d=false` gives the same
//!   exit code, public output (stdout) and debug output (stderr) as zkrv's executor, for the same input on stdin.
//!   Skipped, with a message, when `qemu-riscv64` is not on the PATH.
//!
//! Run with `cargo test -p zkrv-guest-tests --release`.
