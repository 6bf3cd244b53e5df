//! The RV64IM interpreter loop (one copy per recording mode, chosen at compile time through `REC` and
//! `EVENTS`: plain, full record, or touched pages and syscalls without the per-cycle events).

use crate::decode::{decode, Op, X0_SINK};
use crate::elf::Program;
use crate::mem::FlatMem;
use crate::precompile;
use crate::record::{
    CycleEvent, KeccakEvent, PageBitmap, Poseidon2Event, Record, Sha256Event, SyscallEvent,
};
use crate::ExecError;

/// What a recording run accumulates: the record and the touched-page bitmap.
pub(crate) struct Recorder {
    pub record: Record,
    pub touched: PageBitmap,
    /// `record.cycles` is pre-faulted up to this length (see `record::grow_events`).
    pub soft_cap: usize,
}

/// Mutable machine state plus syscall I/O.
pub(crate) struct Machine<'a> {
    pub regs: [u64; 32],
    pub pc: u64,
    pub cycles: u64,
    pub mem: FlatMem,
    pub input: &'a [u8],
    pub input_pos: usize,
    /// Whether a `read` came back short (the guest has seen the end of the input).
    pub input_ended: bool,
    pub public_output: Vec<u8>,
    pub debug_output: Vec<u8>,
}

enum Sys {
    Continue,
    Exit(u32),
}

const SYS_READ: u64 = 63;
const SYS_WRITE: u64 = 64;
const SYS_EXIT: u64 = 93;
const SYS_EXIT_GROUP: u64 = 94;

impl Machine<'_> {
    /// Handles an ECALL at `pc`. In record mode, pushes a [`SyscallEvent`].
    #[cold]
    #[inline(never)]
    fn ecall(&mut self, pc: u64, mut rec: Option<&mut Recorder>) -> Result<Sys, ExecError> {
        let num = self.regs[17];
        let [a0, a1, a2] = [self.regs[10], self.regs[11], self.regs[12]];
        let mut ev = SyscallEvent {
            cycle: self.cycles,
            num,
            args: [a0, a1, a2],
            ret: a0,
            data_offset: 0,
            data_len: 0,
        };
        let mut data: &[u8] = &[];
        let mut old = Vec::new();
        let result = match num {
            SYS_EXIT | SYS_EXIT_GROUP => Sys::Exit(a0 as u32),
            SYS_WRITE => {
                if a0 != 1 && a0 != 2 {
                    return Err(ExecError::BadFd { pc, num, fd: a0 });
                }
                // A zero-length write touches no byte: no address check (as under Linux/qemu).
                let bytes = if a2 == 0 {
                    &[][..]
                } else {
                    self.mem.slice(a1, a2).ok_or(ExecError::BufferOutOfBounds {
                        pc,
                        addr: a1,
                        len: a2,
                    })?
                };
                let out = if a0 == 1 {
                    &mut self.public_output
                } else {
                    &mut self.debug_output
                };
                if out.len() as u64 + a2 > crate::MAX_OUTPUT {
                    return Err(ExecError::OutputLimit { pc, fd: a0 });
                }
                out.extend_from_slice(bytes);
                data = bytes;
                self.regs[10] = a2;
                Sys::Continue
            }
            SYS_READ => {
                if a0 != 0 {
                    return Err(ExecError::BadFd { pc, num, fd: a0 });
                }
                let rest = &self.input[self.input_pos..];
                let n = (a2.min(rest.len() as u64)) as usize;
                let src = &rest[..n];
                if let Some(r) = rec.as_deref_mut() {
                    if n > 0 && FlatMem::in_bounds(a1, n as u64) {
                        // Before the copy, so that a snapshot sees the old bytes.
                        r.touched.mark(a1, n as u64, &self.mem);
                    }
                }
                // A zero-length read (len 0 or input exhausted) touches no byte: no address check.
                let dst = if n == 0 {
                    &mut [][..]
                } else {
                    self.mem
                        .slice_mut(a1, n as u64)
                        .ok_or(ExecError::BufferOutOfBounds {
                            pc,
                            addr: a1,
                            len: n as u64,
                        })?
                };
                if rec.is_some() {
                    old = dst.to_vec();
                }
                dst.copy_from_slice(src);
                self.input_pos += n;
                self.input_ended |= (n as u64) < a2;
                data = src;
                self.regs[10] = n as u64;
                Sys::Continue
            }
            precompile::KECCAK_F | precompile::SHA256_COMPRESS | precompile::POSEIDON2 => {
                self.precompile(pc, num, a0, a1, rec.as_deref_mut())?;
                // Every precompile returns a0 = 0 (docs/abi.md).
                self.regs[10] = 0;
                Sys::Continue
            }
            _ => return Err(ExecError::UnknownEcall { pc, num }),
        };
        if let Some(Recorder {
            record: rec,
            touched,
            ..
        }) = rec
        {
            touched.mark(a1, data.len() as u64, &self.mem);
            ev.ret = self.regs[10];
            ev.data_offset = rec.syscall_data.len() as u64;
            ev.data_len = data.len() as u64;
            rec.syscall_data.extend_from_slice(data);
            rec.syscall_data.extend_from_slice(&old);
            rec.syscalls.push(ev);
        }
        Ok(result)
    }
}

impl Machine<'_> {
    /// Runs precompile `num` (docs/abi.md, "Precompiles") with state pointer `a0` (and block pointer `a1`
    /// for sha256_compress) in place; checks every argument before touching memory. In record mode, marks
    /// the touched pages (before the writes, so a segment's snapshot sees the old bytes) and pushes the
    /// call's event.
    fn precompile(
        &mut self,
        pc: u64,
        num: u64,
        a0: u64,
        a1: u64,
        mut rec: Option<&mut Recorder>,
    ) -> Result<(), ExecError> {
        use precompile::*;
        let cycle = self.cycles;
        let call = precompile_name(num).unwrap_or("precompile");
        let err = |fault| ExecError::Precompile {
            pc,
            cycle,
            num,
            call,
            fault: Box::new(fault),
        };
        const STATE: &str = "a0 (state)";
        let len = match num {
            KECCAK_F => 8 * KECCAK_LANES as u64,
            SHA256_COMPRESS => 4 * SHA256_STATE_WORDS as u64,
            _ => 8 * POSEIDON2_WIDTH as u64,
        };
        check_range(STATE, a0, len).map_err(err)?;
        if num == SHA256_COMPRESS {
            let blen = SHA256_BLOCK_BYTES as u64;
            check_range("a1 (block)", a1, blen).map_err(err)?;
            if a0 < a1 + blen && a1 < a0 + len {
                return Err(err(PrecompileFault::Overlap {
                    state: a0,
                    block: a1,
                }));
            }
        }
        let out_of_bounds = || {
            err(PrecompileFault::OutOfBounds {
                reg: STATE,
                addr: a0,
                len,
            })
        };
        let bytes = self.mem.slice(a0, len).ok_or_else(out_of_bounds)?;
        let words = |b: &[u8]| -> Vec<u64> {
            b.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect()
        };
        let mut new = vec![0u8; len as usize];
        match num {
            KECCAK_F => {
                let mut st = [0u64; KECCAK_LANES];
                st.copy_from_slice(&words(bytes));
                let input = st;
                keccak_f(&mut st);
                for (d, w) in new.chunks_exact_mut(8).zip(st) {
                    d.copy_from_slice(&w.to_le_bytes());
                }
                if let Some(r) = rec.as_deref_mut() {
                    r.record.keccak.push(KeccakEvent {
                        cycle,
                        state_ptr: a0,
                        input,
                        output: st,
                    });
                }
            }
            SHA256_COMPRESS => {
                let mut h = [0u32; SHA256_STATE_WORDS];
                for (d, c) in h.iter_mut().zip(bytes.chunks_exact(4)) {
                    *d = u32::from_le_bytes(c.try_into().unwrap_or_default());
                }
                let mut block = [0u8; SHA256_BLOCK_BYTES];
                block.copy_from_slice(
                    self.mem
                        .slice(a1, SHA256_BLOCK_BYTES as u64)
                        .ok_or_else(out_of_bounds)?,
                );
                let state_in = h;
                sha256_compress(&mut h, &block);
                for (d, w) in new.chunks_exact_mut(4).zip(h) {
                    d.copy_from_slice(&w.to_le_bytes());
                }
                if let Some(r) = rec.as_deref_mut() {
                    r.record.sha256.push(Sha256Event {
                        cycle,
                        state_ptr: a0,
                        block_ptr: a1,
                        state_in,
                        block,
                        state_out: h,
                    });
                }
            }
            _ => {
                let mut st = [0u64; POSEIDON2_WIDTH];
                st.copy_from_slice(&words(bytes));
                if let Some(index) = st.iter().position(|&x| x >= GOLDILOCKS_P) {
                    return Err(err(PrecompileFault::NonCanonical {
                        index,
                        value: st[index],
                    }));
                }
                let input = st;
                poseidon2(&mut st);
                for (d, w) in new.chunks_exact_mut(8).zip(st) {
                    d.copy_from_slice(&w.to_le_bytes());
                }
                if let Some(r) = rec.as_deref_mut() {
                    r.record.poseidon2.push(Poseidon2Event {
                        cycle,
                        state_ptr: a0,
                        input,
                        output: st,
                    });
                }
            }
        }
        if let Some(r) = rec {
            // Before the write, so that a snapshot sees the old bytes.
            r.touched.mark(a0, len, &self.mem);
            if num == SHA256_COMPRESS {
                r.touched.mark(a1, SHA256_BLOCK_BYTES as u64, &self.mem);
            }
        }
        self.mem
            .slice_mut(a0, len)
            .ok_or_else(out_of_bounds)?
            .copy_from_slice(&new);
        Ok(())
    }
}

#[cold]
#[inline(never)]
fn fetch_error(program: &Program, pc: u64) -> ExecError {
    match program.word_at(pc) {
        Some(word) if program.code[((pc - program.code_base) / 4) as usize].op == Op::Illegal => {
            let reason = decode(word).err().unwrap_or("illegal instruction");
            ExecError::IllegalInstruction { pc, word, reason }
        }
        _ => ExecError::FetchOutOfBounds { pc },
    }
}

/// Runs until exit, an error, or `max_cycles` instructions. Returns the exit code. `REC`: record into
/// `rec` (touched pages, syscall and precompile events); `EVENTS` (with `REC`): also one [`CycleEvent`] per
/// instruction (32 bytes per cycle: the bulk of a record's cost).
#[inline(never)]
pub(crate) fn run<const REC: bool, const EVENTS: bool>(
    program: &Program,
    m: &mut Machine,
    max_cycles: u64,
    mut rec: Option<&mut Recorder>,
) -> Result<u32, ExecError> {
    let code = &program.code[..];
    let words = &program.words[..];
    let base = program.code_base;
    // x0..x31, then X0_SINK (32) receiving writes to x0; 64 entries so `& 63` elides bounds checks.
    let mut regs = [0u64; 64];
    regs[..32].copy_from_slice(&m.regs);
    regs[0] = 0;
    let mut pc = m.pc;
    let mut cycles = m.cycles;
    // Recording state lives in locals (registers) during the loop and goes back into `rec`
    // at every exit from the loop and around ECALL.
    let mut events: Vec<CycleEvent> = Vec::new();
    let mut soft_cap = 0usize;
    let mut touched = PageBitmap::default();
    macro_rules! unstash {
        () => {
            if REC {
                if let Some(r) = rec.as_deref_mut() {
                    events = std::mem::take(&mut r.record.cycles);
                    touched = std::mem::take(&mut r.touched);
                    soft_cap = r.soft_cap;
                }
            }
        };
    }
    unstash!();
    // Writes the local state back into `m` and `rec` (on exit, on error, around ECALL).
    macro_rules! sync {
        () => {
            m.regs.copy_from_slice(&regs[..32]);
            m.pc = pc;
            m.cycles = cycles;
            if REC {
                if let Some(r) = rec.as_deref_mut() {
                    r.record.cycles = std::mem::take(&mut events);
                    r.touched = std::mem::take(&mut touched);
                    r.soft_cap = soft_cap;
                }
            }
        };
    }
    macro_rules! fail {
        ($e:expr) => {{
            sync!();
            return Err($e);
        }};
    }
    loop {
        if cycles >= max_cycles {
            fail!(ExecError::CycleLimit {
                limit: max_cycles,
                pc
            });
        }
        let idx = (pc.wrapping_sub(base) >> 2) as usize;
        let Some(&inst) = code.get(idx) else {
            fail!(fetch_error(program, pc))
        };
        let rd = (inst.rd & 63) as usize;
        let rs1v = regs[(inst.rs1 & 31) as usize];
        let rs2v = regs[(inst.rs2 & 31) as usize];
        let imm = inst.imm as i64 as u64;
        let mut next = pc.wrapping_add(4);
        // ECALL overrides of the event's fields.
        let mut ev_rs = (rs1v, rs2v);
        if REC {
            // formats without rd (branches, FENCE) record 0
            regs[X0_SINK as usize] = 0;
        }

        macro_rules! branch {
            ($cond:expr) => {
                if $cond {
                    let target = pc.wrapping_add(imm);
                    if target & 3 != 0 {
                        fail!(ExecError::MisalignedJump { pc, target });
                    }
                    next = target;
                }
            };
        }
        macro_rules! load {
            ($n:literal, $ext:expr) => {{
                let a = rs1v.wrapping_add(imm);
                match m.mem.read::<$n>(a) {
                    Some(v) => regs[rd] = $ext(v),
                    None => fail!(ExecError::MemoryOutOfBounds { pc, addr: a }),
                }
                if REC {
                    touched.mark_access::<$n>(a, &m.mem);
                }
            }};
        }
        macro_rules! store {
            ($n:literal) => {{
                let a = rs1v.wrapping_add(imm);
                if REC {
                    // rd of a store is the x0 sink: the event's rd_val takes the old contents.
                    regs[X0_SINK as usize] = m.mem.read::<$n>(a).unwrap_or(0);
                }
                if REC && FlatMem::in_bounds(a, $n) {
                    // Before the write, so that a snapshot sees the old bytes.
                    touched.mark_access::<$n>(a, &m.mem);
                }
                if !m.mem.write::<$n>(a, rs2v) {
                    fail!(ExecError::MemoryOutOfBounds { pc, addr: a });
                }
            }};
        }
        let sext32 = |v: u64| v as i32 as i64 as u64;

        match inst.op {
            Op::Lui => regs[rd] = imm,
            Op::Auipc => regs[rd] = pc.wrapping_add(imm),
            Op::Jal => {
                let target = pc.wrapping_add(imm);
                if target & 3 != 0 {
                    fail!(ExecError::MisalignedJump { pc, target });
                }
                regs[rd] = next;
                next = target;
            }
            Op::Jalr => {
                let target = rs1v.wrapping_add(imm) & !1;
                if target & 3 != 0 {
                    fail!(ExecError::MisalignedJump { pc, target });
                }
                regs[rd] = next;
                next = target;
            }
            Op::Beq => branch!(rs1v == rs2v),
            Op::Bne => branch!(rs1v != rs2v),
            Op::Blt => branch!((rs1v as i64) < (rs2v as i64)),
            Op::Bge => branch!((rs1v as i64) >= (rs2v as i64)),
            Op::Bltu => branch!(rs1v < rs2v),
            Op::Bgeu => branch!(rs1v >= rs2v),
            Op::Lb => load!(1, |v: u64| v as i8 as i64 as u64),
            Op::Lh => load!(2, |v: u64| v as i16 as i64 as u64),
            Op::Lw => load!(4, |v: u64| v as i32 as i64 as u64),
            Op::Ld => load!(8, |v: u64| v),
            Op::Lbu => load!(1, |v: u64| v),
            Op::Lhu => load!(2, |v: u64| v),
            Op::Lwu => load!(4, |v: u64| v),
            Op::Sb => store!(1),
            Op::Sh => store!(2),
            Op::Sw => store!(4),
            Op::Sd => store!(8),
            Op::Addi => regs[rd] = rs1v.wrapping_add(imm),
            Op::Slti => regs[rd] = ((rs1v as i64) < (imm as i64)) as u64,
            Op::Sltiu => regs[rd] = (rs1v < imm) as u64,
            Op::Xori => regs[rd] = rs1v ^ imm,
            Op::Ori => regs[rd] = rs1v | imm,
            Op::Andi => regs[rd] = rs1v & imm,
            Op::Slli => regs[rd] = rs1v << (imm & 63),
            Op::Srli => regs[rd] = rs1v >> (imm & 63),
            Op::Srai => regs[rd] = ((rs1v as i64) >> (imm & 63)) as u64,
            Op::Add => regs[rd] = rs1v.wrapping_add(rs2v),
            Op::Sub => regs[rd] = rs1v.wrapping_sub(rs2v),
            Op::Sll => regs[rd] = rs1v << (rs2v & 63),
            Op::Slt => regs[rd] = ((rs1v as i64) < (rs2v as i64)) as u64,
            Op::Sltu => regs[rd] = (rs1v < rs2v) as u64,
            Op::Xor => regs[rd] = rs1v ^ rs2v,
            Op::Srl => regs[rd] = rs1v >> (rs2v & 63),
            Op::Sra => regs[rd] = ((rs1v as i64) >> (rs2v & 63)) as u64,
            Op::Or => regs[rd] = rs1v | rs2v,
            Op::And => regs[rd] = rs1v & rs2v,
            Op::Addiw => regs[rd] = sext32(rs1v.wrapping_add(imm)),
            Op::Slliw => regs[rd] = sext32(((rs1v as u32) << (imm & 31)) as u64),
            Op::Srliw => regs[rd] = sext32(((rs1v as u32) >> (imm & 31)) as u64),
            Op::Sraiw => regs[rd] = ((rs1v as i32) >> (imm & 31)) as i64 as u64,
            Op::Addw => regs[rd] = sext32(rs1v.wrapping_add(rs2v)),
            Op::Subw => regs[rd] = sext32(rs1v.wrapping_sub(rs2v)),
            Op::Sllw => regs[rd] = sext32(((rs1v as u32) << (rs2v & 31)) as u64),
            Op::Srlw => regs[rd] = sext32(((rs1v as u32) >> (rs2v & 31)) as u64),
            Op::Sraw => regs[rd] = ((rs1v as i32) >> (rs2v & 31)) as i64 as u64,
            Op::Mul => regs[rd] = rs1v.wrapping_mul(rs2v),
            Op::Mulh => regs[rd] = mulh(rs1v, rs2v),
            Op::Mulhsu => regs[rd] = mulhsu(rs1v, rs2v),
            Op::Mulhu => regs[rd] = mulhu(rs1v, rs2v),
            Op::Div => regs[rd] = div(rs1v, rs2v),
            Op::Divu => regs[rd] = divu(rs1v, rs2v),
            Op::Rem => regs[rd] = rem(rs1v, rs2v),
            Op::Remu => regs[rd] = remu(rs1v, rs2v),
            Op::Mulw => regs[rd] = sext32(rs1v.wrapping_mul(rs2v)),
            Op::Divw => regs[rd] = divw(rs1v, rs2v),
            Op::Divuw => regs[rd] = divuw(rs1v, rs2v),
            Op::Remw => regs[rd] = remw(rs1v, rs2v),
            Op::Remuw => regs[rd] = remuw(rs1v, rs2v),
            Op::Fence => {}
            Op::Ecall => {
                sync!();
                if REC {
                    ev_rs = (regs[17], regs[10]);
                }
                let res = m.ecall(pc, rec.as_deref_mut())?;
                regs[..32].copy_from_slice(&m.regs);
                unstash!();
                if let Sys::Exit(code) = res {
                    if REC && EVENTS {
                        events.push(CycleEvent {
                            pc: pc as u32,
                            word: words[idx],
                            rs1_val: ev_rs.0,
                            rs2_val: ev_rs.1,
                            rd_val: regs[10],
                        });
                    }
                    cycles += 1;
                    sync!();
                    return Ok(code);
                }
                // the ECALL's "result" for the event is a0 after the call
                regs[X0_SINK as usize] = regs[10];
            }
            Op::Illegal | Op::NoCode => fail!(fetch_error(program, pc)),
        }
        if REC && EVENTS {
            if events.len() >= soft_cap {
                crate::record::grow_events(&mut events, &mut soft_cap);
            }
            events.push(CycleEvent {
                pc: pc as u32,
                word: words[idx],
                rs1_val: ev_rs.0,
                rs2_val: ev_rs.1,
                rd_val: regs[rd],
            });
        }
        pc = next;
        cycles += 1;
    }
}

/// High 64 bits of signed x signed.
pub fn mulh(a: u64, b: u64) -> u64 {
    (((a as i64 as i128) * (b as i64 as i128)) >> 64) as u64
}
/// High 64 bits of signed x unsigned.
pub fn mulhsu(a: u64, b: u64) -> u64 {
    (((a as i64 as i128) * (b as i128)) >> 64) as u64
}
/// High 64 bits of unsigned x unsigned.
pub fn mulhu(a: u64, b: u64) -> u64 {
    (((a as u128) * (b as u128)) >> 64) as u64
}
/// DIV: x/0 = -1, MIN/-1 = MIN.
pub fn div(a: u64, b: u64) -> u64 {
    if b == 0 {
        u64::MAX
    } else {
        (a as i64).wrapping_div(b as i64) as u64
    }
}
/// DIVU: x/0 = 2^64-1.
pub fn divu(a: u64, b: u64) -> u64 {
    a.checked_div(b).unwrap_or(u64::MAX)
}
/// REM: x%0 = x, MIN%-1 = 0.
pub fn rem(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        (a as i64).wrapping_rem(b as i64) as u64
    }
}
/// REMU: x%0 = x.
pub fn remu(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        a % b
    }
}
/// DIVW (32-bit signed, result sign-extended): x/0 = -1, MIN32/-1 = MIN32.
pub fn divw(a: u64, b: u64) -> u64 {
    let (a, b) = (a as i32, b as i32);
    if b == 0 {
        u64::MAX
    } else {
        a.wrapping_div(b) as i64 as u64
    }
}
/// DIVUW (32-bit unsigned, result sign-extended): x/0 = -1.
pub fn divuw(a: u64, b: u64) -> u64 {
    let (a, b) = (a as u32, b as u32);
    a.checked_div(b)
        .map_or(u64::MAX, |q| q as i32 as i64 as u64)
}
/// REMW (32-bit signed, result sign-extended): x%0 = x, MIN32%-1 = 0.
pub fn remw(a: u64, b: u64) -> u64 {
    let (a, b) = (a as i32, b as i32);
    if b == 0 {
        a as i64 as u64
    } else {
        a.wrapping_rem(b) as i64 as u64
    }
}
/// REMUW (32-bit unsigned, result sign-extended): x%0 = x.
pub fn remuw(a: u64, b: u64) -> u64 {
    let (a, b) = (a as u32, b as u32);
    if b == 0 {
        a as i32 as i64 as u64
    } else {
        (a % b) as i32 as i64 as u64
    }
}
