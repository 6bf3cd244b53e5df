//! Executor speed: plain execution and execution with the record, single-threaded, on the
//! SHA-256 guest (`guests/bin/sha256.elf`) over 1 MiB of input.
//!
//! `cargo bench -p zkrv-executor --bench exec` (env `ZKRV_BENCH_MIB` changes the input size,
//! `ZKRV_BENCH_REPS` the number of plain runs, `ZKRV_BENCH_ELF` the guest; the best run is
//! reported).

use std::time::Instant;
use zkrv_executor::asm::*;
use zkrv_executor::{execute, ExecOptions, Program};

fn input(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Fallback when the guest ELF is missing: a loop of ALU ops, loads and stores (100 M instrs).
fn tight_loop() -> Program {
    let mut w = li(5, 10_000_000);
    w.extend(li(6, 0x20000));
    w.extend([
        ld(7, 6, 0),
        add(7, 7, 5),
        xor(8, 7, 5),
        slli(9, 8, 3),
        sd(9, 6, 8),
        addi(5, 5, -1),
        mul(10, 9, 7),
        srli(10, 10, 7),
        sd(10, 6, 0),
        bne(5, 0, -36),
        addi(17, 0, 93),
        addi(10, 0, 0),
        ECALL,
    ]);
    Program::from_words(0x10000, &w).expect("valid loop program")
}

fn main() {
    let mib: usize = std::env::var("ZKRV_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let reps: usize = std::env::var("ZKRV_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let path = std::env::var("ZKRV_BENCH_ELF").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests/bin/sha256.elf").to_string()
    });
    let (name, program, input) = match std::fs::read(&path) {
        Ok(elf) => (
            format!("sha256.elf, {mib} MiB input"),
            Program::from_elf(&elf).expect("sha256.elf loads"),
            input(mib << 20),
        ),
        Err(_) => (
            "tight loop (sha256.elf missing)".to_string(),
            tight_loop(),
            Vec::new(),
        ),
    };
    let plain = ExecOptions {
        record: false,
        ..Default::default()
    };
    let mut best = f64::MAX;
    let mut cycles = 0;
    for _ in 0..reps {
        let t = Instant::now();
        let e = execute(&program, &input, &plain).expect("plain run");
        best = best.min(t.elapsed().as_secs_f64());
        cycles = e.cycles;
    }
    if reps > 0 {
        println!("{name}: {cycles} cycles");
        println!(
            "plain:  best of {reps}: {:.3} s, {:.1} M instructions/s",
            best,
            cycles as f64 / best / 1e6
        );
    }

    let t = Instant::now();
    let e = execute(
        &program,
        &input,
        &ExecOptions {
            record: true,
            ..Default::default()
        },
    )
    .expect("recorded run");
    let secs = t.elapsed().as_secs_f64();
    let rec = e.record.expect("record");
    let cycles = e.cycles;
    println!(
        "record: {:.3} s, {:.1} M instructions/s, {:.2} bytes/cycle ({} cycle events, {} syscalls, {} pages)",
        secs,
        cycles as f64 / secs / 1e6,
        rec.bytes_per_cycle(),
        rec.cycles.len(),
        rec.syscalls.len(),
        rec.pages.len()
    );
}
