//! Random RV64IM programs for the trace-generation parity tests: straight-line code with forward branches and
//! jumps (so every program halts), every ALU/M/W op with random registers (x0 writes included), loads and
//! stores (misaligned, cell-crossing) on a stack buffer, `write` (fd 1 and 2) and `read` (fd 0) syscalls,
//! FENCE, then `exit`. [`with_cycles`] pads a program with NOPs to an exact cycle count.

#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::Rng;
use zkrv_executor::asm::*;
use zkrv_executor::{execute, ExecOptions, Program, Record};

/// Load address of the generated programs.
pub const BASE: u64 = 0x1000;

/// A random register other than x2 (sp, the memory base), x0 with probability 1/8.
fn rd(r: &mut StdRng) -> u32 {
    if r.gen_range(0..8) == 0 {
        return 0;
    }
    loop {
        let x = r.gen_range(1..32);
        if x != 2 {
            return x;
        }
    }
}

fn rs(r: &mut StdRng) -> u32 {
    r.gen_range(0..32)
}

/// Appends one random single-instruction group (never a branch or jump) to `w`.
fn push_single(r: &mut StdRng, w: &mut Vec<u32>) {
    loop {
        let k = r.gen_range(0..20);
        if !(14..=18).contains(&k) {
            return push_kind(r, w, k);
        }
    }
}

/// Appends one random instruction group (1 to 5 instructions) to `w`. A branch or jump skips only whole
/// single-instruction groups that follow it (so a syscall's argument setup is never skipped).
fn push_random(r: &mut StdRng, w: &mut Vec<u32>) {
    let k = r.gen_range(0..20);
    push_kind(r, w, k)
}

fn push_kind(r: &mut StdRng, w: &mut Vec<u32>, kind: u32) {
    match kind {
        0..=3 => {
            // OP: base (f7 = 0 / 0x20) and M (f7 = 1).
            let (f7, f3) = match r.gen_range(0..3) {
                0 => (0, r.gen_range(0..8)),
                1 => (0x20, [0, 5][r.gen_range(0..2)]),
                _ => (1, r.gen_range(0..8)),
            };
            w.push(op(f7, f3, rd(r), rs(r), rs(r)));
        }
        4..=5 => {
            let (f7, f3) = match r.gen_range(0..3) {
                0 => (0, [0, 1, 5][r.gen_range(0..3)]),
                1 => (0x20, [0, 5][r.gen_range(0..2)]),
                _ => (1, [0, 4, 5, 6, 7][r.gen_range(0..5)]),
            };
            w.push(op32(f7, f3, rd(r), rs(r), rs(r)));
        }
        6..=8 => {
            let imm = r.gen_range(-2048..2048);
            let sh = r.gen_range(0..64);
            let sh32 = r.gen_range(0..32);
            let (d, s) = (rd(r), rs(r));
            w.push(match r.gen_range(0..13) {
                0 => addi(d, s, imm),
                1 => slti(d, s, imm),
                2 => sltiu(d, s, imm),
                3 => xori(d, s, imm),
                4 => ori(d, s, imm),
                5 => andi(d, s, imm),
                6 => slli(d, s, sh),
                7 => srli(d, s, sh),
                8 => srai(d, s, sh),
                9 => addiw(d, s, imm),
                10 => slliw(d, s, sh32),
                11 => srliw(d, s, sh32),
                _ => sraiw(d, s, sh32),
            });
        }
        9 => {
            let imm20 = r.gen_range(0..1 << 20);
            w.push(if r.gen() {
                lui(rd(r), imm20)
            } else {
                auipc(rd(r), imm20)
            });
        }
        10 | 11 => w.push(load(
            [0, 1, 2, 3, 4, 5, 6][r.gen_range(0..7)],
            rd(r),
            2,
            r.gen_range(-256..-8),
        )),
        12 | 13 => w.push(store(r.gen_range(0..4), rs(r), 2, r.gen_range(-256..-8))),
        14 => {
            // Forward branch over the next one or two (single-instruction) groups.
            let off = [8, 12][r.gen_range(0..2)];
            let (a, b) = (rs(r), rs(r));
            w.push(match r.gen_range(0..6) {
                0 => beq(a, b, off),
                1 => bne(a, b, off),
                2 => blt(a, b, off),
                3 => bge(a, b, off),
                4 => bltu(a, b, off),
                _ => bgeu(a, b, off),
            });
            for _ in 0..off / 4 - 1 {
                push_single(r, w);
            }
        }
        15 => {
            w.push(jal(rd(r), 8));
            push_single(r, w);
        }
        16 => {
            // auipc t, 0; jalr rd, t, 13 -> (t + 13) & !1 = t + 12: skips one instruction, jalr_bit0 = 1.
            let t = loop {
                let t = rd(r);
                if t != 0 {
                    break t;
                }
            };
            w.extend([auipc(t, 0), jalr(rd(r), t, [12, 13][r.gen_range(0..2)])]);
            push_single(r, w);
        }
        17 => {
            // write(fd 1 or 2, sp - 256 + k, len)
            let fd = [1, 2][r.gen_range(0..2)];
            w.extend([
                addi(10, 0, fd),
                addi(11, 2, -256 + r.gen_range(0..64)),
                addi(12, 0, r.gen_range(0..20)),
                addi(17, 0, 64),
                ECALL,
            ]);
        }
        18 => {
            // read(0, sp - 128 + k, len)
            w.extend([
                addi(10, 0, 0),
                addi(11, 2, -128 + r.gen_range(0..64)),
                addi(12, 0, r.gen_range(0..20)),
                addi(17, 0, 63),
                ECALL,
            ]);
        }
        _ => w.push(FENCE),
    }
}

/// A random body of about `groups` instruction groups (not yet terminated).
pub fn random_body(r: &mut StdRng, groups: usize) -> Vec<u32> {
    let mut w = Vec::new();
    for _ in 0..groups {
        push_random(r, &mut w);
    }
    w
}

/// `body`, three NOP landing slots (a trailing branch/jump lands there), `fill` NOPs, `exit(a0)`.
pub fn assemble(body: &[u32], fill: usize) -> Program {
    let mut w = body.to_vec();
    w.extend(std::iter::repeat_n(addi(0, 0, 0), 3 + fill));
    w.extend([addi(17, 0, 93), ECALL]);
    Program::from_words(BASE, &w).expect("assemble")
}

/// Runs `program` on `input` with recording.
pub fn run(program: &Program, input: &[u8]) -> Record {
    execute(
        program,
        input,
        &ExecOptions {
            max_cycles: 1 << 24,
            record: true,
        },
    )
    .expect("execute")
    .record
    .expect("record")
}

/// A random program that executes exactly `cycles` instructions (>= 5) on the returned input, and its record.
pub fn with_cycles(r: &mut StdRng, cycles: usize) -> (Program, Vec<u8>, Record) {
    assert!(cycles >= 5, "the shortest program runs 5 cycles");
    let input: Vec<u8> = (0..r.gen_range(0..96)).map(|_| r.gen()).collect();
    let mut groups = (cycles.saturating_sub(5) / 2).max(1);
    loop {
        let body = random_body(r, groups);
        let base = run(&assemble(&body, 0), &input).cycles.len();
        if base <= cycles {
            let p = assemble(&body, cycles - base);
            let rec = run(&p, &input);
            assert_eq!(rec.cycles.len(), cycles, "padding to {cycles} cycles");
            return (p, input, rec);
        }
        if groups == 1 {
            let p = assemble(&[], cycles - 5);
            let rec = run(&p, &input);
            return (p, input, rec);
        }
        groups /= 2;
    }
}

/// A real guest (guests/bin/<name>.elf) and its input (guests/inputs/<name>.bin).
pub fn guest(name: &str) -> (Program, Vec<u8>) {
    let dir = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let elf = std::fs::read(format!("{dir}/bin/{name}.elf")).expect("guest ELF");
    let input = std::fs::read(format!("{dir}/inputs/{name}.bin")).unwrap_or_default();
    (Program::from_elf(&elf).expect("guest ELF"), input)
}

/// The guests shipped in guests/bin.
pub const GUESTS: [&str; 9] = [
    "exitcode",
    "fibonacci",
    "keccak",
    "matmul",
    "modexp",
    "rustalloc",
    "rv64im",
    "sha256",
    "sort",
];
