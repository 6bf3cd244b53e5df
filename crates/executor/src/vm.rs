//! A steppable machine for debugging and differential testing. It runs the same interpreter
//! loop as [`crate::execute`] (one instruction per [`Vm::step`]).

use crate::decode::decode_or_illegal;
use crate::elf::Program;
use crate::exec::{self, Machine};
use crate::mem::FlatMem;
use crate::{ExecError, STACK_TOP};

/// Machine state (registers, pc, memory) plus its own copy of the program.
pub struct Vm<'a> {
    program: Program,
    m: Machine<'a>,
    exit_code: Option<u32>,
}

impl<'a> Vm<'a> {
    /// Initial state of `program` (docs/abi.md: pc = entry, sp = 0x8000_0000, segments loaded).
    pub fn new(program: &Program, input: &'a [u8]) -> Result<Vm<'a>, ExecError> {
        Ok(Vm {
            program: program.clone(),
            m: Machine::new(program, input)?,
            exit_code: None,
        })
    }

    /// Executes one instruction. `Ok(Some(code))` once the guest has exited.
    pub fn step(&mut self) -> Result<Option<u32>, ExecError> {
        if self.exit_code.is_none() {
            let limit = self.m.cycles + 1;
            match exec::run::<false, false>(&self.program, &mut self.m, limit, None) {
                Ok(code) => self.exit_code = Some(code),
                Err(ExecError::CycleLimit { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(self.exit_code)
    }

    /// Registers x0..x31.
    pub fn regs(&self) -> &[u64; 32] {
        &self.m.regs
    }
    /// Sets register `i` (writes to x0 are ignored).
    pub fn set_reg(&mut self, i: usize, v: u64) {
        if (1..32).contains(&i) {
            self.m.regs[i] = v;
        }
    }
    /// Current pc.
    pub fn pc(&self) -> u64 {
        self.m.pc
    }
    /// Sets the pc (must stay a multiple of 4).
    pub fn set_pc(&mut self, pc: u64) {
        self.m.pc = pc & !3;
    }
    /// Instructions executed so far.
    pub fn cycles(&self) -> u64 {
        self.m.cycles
    }
    /// Reads guest memory; `None` if out of bounds.
    pub fn read_mem(&self, addr: u64, len: u64) -> Option<&[u8]> {
        self.m.mem.slice(addr, len)
    }
    /// Writes guest memory; `false` if out of bounds.
    pub fn write_mem(&mut self, addr: u64, bytes: &[u8]) -> bool {
        match self.m.mem.slice_mut(addr, bytes.len() as u64) {
            Some(d) => {
                d.copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }
    /// Replaces the instruction at `pc` (inside the executable span) in the decoded program and
    /// in memory; `false` if `pc` is not an aligned code address.
    pub fn set_code(&mut self, pc: u64, word: u32) -> bool {
        let Some(off) = pc.checked_sub(self.program.code_base) else {
            return false;
        };
        let idx = (off / 4) as usize;
        if off % 4 != 0 || idx >= self.program.code.len() {
            return false;
        }
        self.program.code[idx] = decode_or_illegal(word);
        self.program.words[idx] = word;
        self.write_mem(pc, &word.to_le_bytes())
    }
    /// Public output so far.
    pub fn public_output(&self) -> &[u8] {
        &self.m.public_output
    }
}

impl<'a> Machine<'a> {
    /// Loads `program` into fresh memory.
    pub(crate) fn new(program: &Program, input: &'a [u8]) -> Result<Machine<'a>, ExecError> {
        let mut mem = FlatMem::new().ok_or(ExecError::HostOutOfMemory)?;
        for s in &program.segments {
            // Segments were checked to lie inside the program region.
            if let Some(dst) = mem.slice_mut(s.vaddr, s.data.len() as u64) {
                dst.copy_from_slice(&s.data);
            }
        }
        let mut regs = [0u64; 32];
        regs[2] = STACK_TOP;
        Ok(Machine {
            regs,
            pc: program.entry,
            cycles: 0,
            mem,
            input,
            input_pos: 0,
            input_ended: false,
            public_output: Vec::new(),
            debug_output: Vec::new(),
        })
    }
}
