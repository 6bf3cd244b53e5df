//! Shared test helpers: a minimal ELF64 writer and program runners.
#![allow(dead_code)]

use zkrv_executor::asm::*;
use zkrv_executor::{execute, ExecError, ExecOptions, Execution, Program};

/// Code base used by the helpers.
pub const BASE: u64 = 0x10000;

/// One PT_LOAD segment for [`build_elf`]: (vaddr, file bytes, memsz, flags).
pub struct Seg {
    pub vaddr: u64,
    pub data: Vec<u8>,
    pub memsz: u64,
    pub flags: u32,
}

/// Writes a minimal ELF64 LE RISC-V ET_EXEC file with the given PT_LOAD segments.
pub fn build_elf(entry: u64, segs: &[Seg]) -> Vec<u8> {
    let phoff = 64u64;
    let mut data_off = phoff + 56 * segs.len() as u64;
    let mut out = Vec::new();
    out.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    out.extend_from_slice(&243u16.to_le_bytes()); // EM_RISCV
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&entry.to_le_bytes());
    out.extend_from_slice(&phoff.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes()); // shoff
    out.extend_from_slice(&0u32.to_le_bytes()); // flags
    out.extend_from_slice(&64u16.to_le_bytes()); // ehsize
    out.extend_from_slice(&56u16.to_le_bytes()); // phentsize
    out.extend_from_slice(&(segs.len() as u16).to_le_bytes());
    out.extend_from_slice(&64u16.to_le_bytes()); // shentsize
    out.extend_from_slice(&0u16.to_le_bytes()); // shnum
    out.extend_from_slice(&0u16.to_le_bytes()); // shstrndx
    assert_eq!(out.len(), 64);
    for s in segs {
        out.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        out.extend_from_slice(&s.flags.to_le_bytes());
        out.extend_from_slice(&data_off.to_le_bytes());
        out.extend_from_slice(&s.vaddr.to_le_bytes());
        out.extend_from_slice(&s.vaddr.to_le_bytes());
        out.extend_from_slice(&(s.data.len() as u64).to_le_bytes());
        out.extend_from_slice(&s.memsz.to_le_bytes());
        out.extend_from_slice(&0x1000u64.to_le_bytes());
        data_off += s.data.len() as u64;
    }
    for s in segs {
        out.extend_from_slice(&s.data);
    }
    out
}

pub fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// `words` followed by `exit(0)`.
pub fn with_exit(words: &[u32]) -> Vec<u32> {
    let mut v = words.to_vec();
    v.extend(li(17, 93));
    v.push(addi(10, 0, 0));
    v.push(ECALL);
    v
}

/// Runs `words` (then exit(0)) at [`BASE`] with the record on.
pub fn run_rec(words: &[u32], input: &[u8]) -> Result<Execution, ExecError> {
    let prog = Program::from_words(BASE, &with_exit(words)).expect("valid program");
    execute(
        &prog,
        input,
        &ExecOptions {
            record: true,
            ..Default::default()
        },
    )
}

/// Runs `words` (then exit(0)) and returns the final registers.
pub fn regs_after(words: &[u32]) -> [u64; 32] {
    let e = run_rec(words, &[]).unwrap_or_else(|e| panic!("execution failed: {e}"));
    e.record.unwrap().final_regs
}
