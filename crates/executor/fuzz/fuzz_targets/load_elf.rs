//! Fuzz the ELF loader (and a short execution of whatever loads): no input may panic.
//! Run: `cd crates/executor/fuzz && cargo +nightly fuzz run load_elf`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zkrv_executor::{execute, ExecOptions, Program};

fuzz_target!(|data: &[u8]| {
    if let Ok(program) = Program::from_elf(data) {
        let _ = execute(&program, b"fuzz", &ExecOptions { max_cycles: 10_000, record: true });
    }
});
