//! The record is complete: replaying it (registers, memory, pc flow) from the initial state
//! reproduces every operand, every loaded value, the final registers and the final pages.

mod common;
use common::*;
use std::collections::HashMap;
use zkrv_executor::asm::*;
use zkrv_executor::{execute, ExecOptions, Execution, Program, Record, PAGE_SIZE};

fn rd(w: u32) -> usize {
    ((w >> 7) & 31) as usize
}
fn rs1(w: u32) -> usize {
    ((w >> 15) & 31) as usize
}
fn rs2(w: u32) -> usize {
    ((w >> 20) & 31) as usize
}

/// Checks the record against an independent replay; returns the number of memory accesses.
fn replay(rec: &Record, public_output: &[u8]) -> usize {
    let mut regs = rec.init_regs;
    let ps = PAGE_SIZE as usize;
    let mut mem: HashMap<u64, u8> = HashMap::new();
    for (k, &p) in rec.pages.iter().enumerate() {
        for (i, &b) in rec.init_pages[k * ps..(k + 1) * ps].iter().enumerate() {
            mem.insert(p as u64 + i as u64, b);
        }
    }
    let page_of = |a: u64| {
        rec.pages
            .binary_search(&((a / PAGE_SIZE * PAGE_SIZE) as u32))
            .is_ok()
    };
    let (mut n_mem, mut n_sys, mut output) = (0, 0, Vec::new());
    for (i, ev) in rec.cycles.iter().enumerate() {
        let w = ev.word;
        let op = w & 0x7f;
        let (has_rs1, has_rs2, writes_rd) = match op {
            0x37 | 0x17 | 0x6f => (false, false, true),
            0x67 | 0x03 | 0x13 | 0x1b => (true, false, true),
            0x63 | 0x23 => (true, true, false),
            0x33 | 0x3b => (true, true, true),
            0x0f => (false, false, false),
            0x73 => (false, false, false),
            _ => panic!("cycle {i}: unexpected opcode in {w:#010x}"),
        };
        if op == 0x73 {
            // ECALL: rs1_val = a7, rs2_val = a0 before, rd_val = a0 after
            assert_eq!(
                (ev.rs1_val, ev.rs2_val),
                (regs[17], regs[10]),
                "cycle {i}: ecall operands"
            );
            let sc = rec.syscalls[n_sys];
            assert_eq!(sc.cycle, i as u64);
            assert_eq!(sc.args, [regs[10], regs[11], regs[12]]);
            let data = &rec.syscall_data[sc.data_offset as usize..];
            let n = sc.data_len as usize;
            for j in 0..n {
                let a = sc.args[1] + j as u64;
                assert!(page_of(a), "syscall buffer page {a:#x} not in pages");
                match sc.num {
                    63 => {
                        assert_eq!(mem[&a], data[n + j], "read: old byte at {a:#x}");
                        mem.insert(a, data[j]);
                    }
                    64 => assert_eq!(mem[&a], data[j], "write: byte at {a:#x}"),
                    _ => {}
                }
            }
            if sc.num == 64 && sc.args[0] == 1 {
                output.extend_from_slice(&data[..n]);
            }
            regs[10] = ev.rd_val;
            n_sys += 1;
        } else {
            assert_eq!(
                ev.rs1_val,
                if has_rs1 { regs[rs1(w)] } else { 0 },
                "cycle {i}: rs1 of {w:#010x}"
            );
            assert_eq!(
                ev.rs2_val,
                if has_rs2 { regs[rs2(w)] } else { 0 },
                "cycle {i}: rs2 of {w:#010x}"
            );
        }
        if let Some(a) = ev.mem_addr() {
            n_mem += 1;
            let width = ev.mem_width();
            assert!(
                page_of(a) && page_of(a + width - 1),
                "cycle {i}: page of {a:#x} not listed"
            );
            let mut v = 0u64;
            for j in 0..width {
                v |= (mem[&(a + j)] as u64) << (8 * j);
            }
            if ev.is_store() {
                assert_eq!(ev.rd_val, v, "cycle {i}: store old value at {a:#x}");
                for j in 0..width {
                    mem.insert(a + j, (ev.rs2_val >> (8 * j)) as u8);
                }
            } else {
                let f3 = (w >> 12) & 7;
                let bits = 8 * width as u32;
                let ext = if f3 < 4 && bits < 64 {
                    (((v << (64 - bits)) as i64) >> (64 - bits)) as u64
                } else {
                    v
                };
                assert_eq!(ev.rd_val, ext, "cycle {i}: loaded value at {a:#x}");
            }
        }
        if writes_rd && rd(w) != 0 {
            regs[rd(w)] = ev.rd_val;
        }
        // pc flow
        if let Some(next) = rec.cycles.get(i + 1) {
            let pc = ev.pc as u64;
            let taken = match (op, (w >> 12) & 7) {
                (0x63, 0) => ev.rs1_val == ev.rs2_val,
                (0x63, 1) => ev.rs1_val != ev.rs2_val,
                (0x63, 4) => (ev.rs1_val as i64) < (ev.rs2_val as i64),
                (0x63, 5) => (ev.rs1_val as i64) >= (ev.rs2_val as i64),
                (0x63, 6) => ev.rs1_val < ev.rs2_val,
                (0x63, 7) => ev.rs1_val >= ev.rs2_val,
                _ => false,
            };
            let expect = match op {
                0x6f | 0x67 => None, // checked through the link value below
                0x63 if taken => {
                    let imm = ((w as i32) >> 31 << 12)
                        | (((w >> 7) & 1) << 11) as i32
                        | (((w >> 25) & 0x3f) << 5) as i32
                        | (((w >> 8) & 0xf) << 1) as i32;
                    Some(pc.wrapping_add(imm as i64 as u64))
                }
                _ => Some(pc + 4),
            };
            if let Some(e) = expect {
                assert_eq!(next.pc as u64, e, "cycle {i}: next pc after {w:#010x}");
            } else {
                assert_eq!(ev.rd_val, pc + 4, "cycle {i}: link value");
            }
        }
    }
    assert_eq!(n_sys, rec.syscalls.len());
    assert_eq!(regs, rec.final_regs, "final registers");
    assert_eq!(output, public_output, "public output");
    for (k, &p) in rec.pages.iter().enumerate() {
        for (i, &b) in rec.final_pages[k * ps..(k + 1) * ps].iter().enumerate() {
            assert_eq!(
                mem[&(p as u64 + i as u64)],
                b,
                "final byte at {:#x}",
                p as u64 + i as u64
            );
        }
    }
    n_mem
}

fn run(program: &Program, input: &[u8]) -> Execution {
    execute(
        program,
        input,
        &ExecOptions {
            record: true,
            ..Default::default()
        },
    )
    .expect("runs")
}

#[test]
fn synthetic_program_record_replays() {
    // a loop mixing misaligned, page-crossing stores/loads, W forms, M ops and syscalls
    let mut w = li(5, 0x40ffd); // 3 bytes below a page boundary
    w.extend(li(6, 50));
    w.extend(li(7, -0x1234_5678_9abc));
    w.extend([
        sd(7, 5, 0),
        ld(8, 5, 0),
        op32(1, 4, 9, 8, 6), // divw
        mul(7, 7, 8),
        sw(9, 5, 5),
        load(1, 10, 5, 1),
        sb(10, 5, 2),
        addi(6, 6, -1),
        bne(6, 0, -32),
        // read 4 bytes of input to 0x40ffe, write them to fd 1
        addi(17, 0, 63),
        addi(10, 0, 0),
        addi(11, 5, 1),
        addi(12, 0, 4),
        ECALL,
        addi(17, 0, 64),
        addi(10, 0, 1),
        ECALL,
    ]);
    let prog = Program::from_words(BASE, &with_exit(&w)).unwrap();
    let e = run(&prog, b"wxyz!");
    assert_eq!(e.public_output, b"wxyz");
    let rec = e.record.unwrap();
    assert_eq!(rec.pages, vec![0x40000, 0x41000]);
    assert_eq!(replay(&rec, &e.public_output), 50 * 5);
}

#[test]
fn guest_program_records_replay() {
    // the prebuilt guests (guests/bin), if present
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
    for (name, input) in [
        ("sort", vec![]),
        ("sha256", b"abc".repeat(1000)),
        ("rv64im", vec![]),
    ] {
        let Ok(elf) = std::fs::read(format!("{dir}/bin/{name}.elf")) else {
            eprintln!("skipping {name}: ELF not built");
            continue;
        };
        let prog = Program::from_elf(&elf).unwrap();
        let e = run(&prog, &input);
        let rec = e.record.as_ref().unwrap();
        assert_eq!(rec.cycles.len() as u64, e.cycles);
        let n = replay(rec, &e.public_output);
        println!(
            "{name}: {} cycles, {n} memory accesses, {} pages replayed",
            e.cycles,
            rec.pages.len()
        );
    }
}
