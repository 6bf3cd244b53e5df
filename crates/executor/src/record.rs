//! The execution record: what trace generation needs, as plain-old-data `#[repr(C)]` structs
//! that can be copied to a GPU as they are. Layout and sizes: docs/record.md.

use crate::elf::Program;
use crate::mem::FlatMem;
use crate::{GUEST_MEM_END, PAGE_SIZE};
use bytemuck::{Pod, Zeroable};

/// One executed instruction (one cycle): 32 bytes, 8-byte aligned, no padding.
///
/// The timestamp of the event is its index in [`Record::cycles`] (cycle 0 is the first
/// instruction). Register *indices*, the immediate and the operation come from `word`
/// (rd = bits 11:7, rs1 = 19:15, rs2 = 24:20); for formats without a field the value slot is 0
/// (U/J: no rs1/rs2; I: no rs2). Derived quantities (memory address, width, next pc, syscall
/// index) are recomputed with the helper methods, not stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct CycleEvent {
    /// Address of the instruction (< 2^31).
    pub pc: u32,
    /// Raw 32-bit instruction word.
    pub word: u32,
    /// Value of register rs1 before the instruction (0 if the format has no rs1).
    /// ECALL: the call number (a7).
    pub rs1_val: u64,
    /// Value of register rs2 before the instruction (0 if the format has no rs2).
    /// ECALL: a0 before the call.
    pub rs2_val: u64,
    /// The value the instruction produced for rd, *even when rd = x0* (the register file
    /// discards it then): ALU result, loaded value after sign/zero extension, link address
    /// pc + 4 for JAL/JALR. Stores: the **previous** memory contents of the `width` bytes
    /// written (little-endian, zero-extended). Branches and FENCE: 0. ECALL: a0 after the call
    /// (exit: a0 unchanged).
    pub rd_val: u64,
}

impl CycleEvent {
    /// Major opcode (bits 6:0).
    pub fn opcode(&self) -> u32 {
        self.word & 0x7f
    }

    /// Whether this is a load (opcode 0x03).
    pub fn is_load(&self) -> bool {
        self.opcode() == 0x03
    }

    /// Whether this is a store (opcode 0x23).
    pub fn is_store(&self) -> bool {
        self.opcode() == 0x23
    }

    /// Loads and stores: the effective address `rs1 + imm` (inside the guest address space,
    /// since the access succeeded). Other instructions: `None`.
    pub fn mem_addr(&self) -> Option<u64> {
        let imm = if self.is_load() {
            (self.word as i32) >> 20
        } else if self.is_store() {
            ((self.word as i32) >> 25 << 5) | ((self.word >> 7) & 31) as i32
        } else {
            return None;
        };
        Some(self.rs1_val.wrapping_add(imm as i64 as u64))
    }

    /// Width in bytes (1, 2, 4, 8) of the memory access of a load/store.
    pub fn mem_width(&self) -> u64 {
        1 << ((self.word >> 12) & 3)
    }
}

/// One system call (ECALL): 64 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct SyscallEvent {
    /// Cycle index of the ECALL in [`Record::cycles`] (the k-th ECALL event is `syscalls[k]`).
    pub cycle: u64,
    /// Call number (a7): 93/94 exit, 64 write, 63 read.
    pub num: u64,
    /// a0, a1, a2 before the call.
    pub args: [u64; 3],
    /// a0 after the call (exit: unchanged a0).
    pub ret: u64,
    /// Offset of this call's bytes in [`Record::syscall_data`].
    pub data_offset: u64,
    /// Number of bytes transferred between memory at `args[1]` and the host: write: bytes read
    /// from guest memory; read: bytes written into guest memory. For read, `syscall_data`
    /// holds the `data_len` new bytes followed by the `data_len` bytes they overwrote.
    pub data_len: u64,
}

/// One `keccak_f` call (a7 = [`crate::precompile::KECCAK_F`]): 416 bytes, align 8, no padding. The call reads
/// and writes the 25 cells `state_ptr / 8 + i` (lane i = x + 5y, u64 little-endian) at `ts = 4 cycle + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct KeccakEvent {
    /// Cycle index of the ECALL in [`Record::cycles`] (same numbering as [`SyscallEvent::cycle`]).
    pub cycle: u64,
    /// a0: address of the state (8-aligned, `[state_ptr, state_ptr + 200)` inside guest memory).
    pub state_ptr: u64,
    /// Lanes before the call (= the cells' old values).
    pub input: [u64; 25],
    /// Lanes after Keccak-f\[1600\] (= the cells' new values).
    pub output: [u64; 25],
}

/// One `sha256_compress` call (a7 = [`crate::precompile::SHA256_COMPRESS`]): 152 bytes, align 8, no padding.
/// The call reads and writes the 4 state cells `state_ptr / 8 + i` (cell i holds `H_{2i}` in its low word and
/// `H_{2i+1}` in its high word, u32 little-endian) and reads (writes back unchanged) the 8 block cells
/// `block_ptr / 8 + j`, all at `ts = 4 cycle + 1`; a1 is read as a register at ts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Sha256Event {
    /// Cycle index of the ECALL in [`Record::cycles`].
    pub cycle: u64,
    /// a0: address of the state (8-aligned, 32 bytes).
    pub state_ptr: u64,
    /// a1: address of the block (8-aligned, 64 bytes, disjoint from the state).
    pub block_ptr: u64,
    /// H0..H7 before the call (`state_in[k]` = u32 LE at `state_ptr + 4k`).
    pub state_in: [u32; 8],
    /// The 64 block bytes as in memory (message order; the compression reads big-endian words
    /// `M_t = u32::from_be_bytes(block[4t..4t + 4])`; cell j's token value is `block[8j..8j + 8]` LE).
    pub block: [u8; 64],
    /// H0..H7 after the compression.
    pub state_out: [u32; 8],
}

/// One `poseidon2` call (a7 = [`crate::precompile::POSEIDON2`]): 144 bytes, align 8, no padding. The call
/// reads and writes the 8 cells `state_ptr / 8 + i` (element i, u64 LE, canonical: < p) at `ts = 4 cycle + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Poseidon2Event {
    /// Cycle index of the ECALL in [`Record::cycles`].
    pub cycle: u64,
    /// a0: address of the state (8-aligned, 64 bytes).
    pub state_ptr: u64,
    /// The state before the call (canonical Goldilocks elements).
    pub input: [u64; 8],
    /// The state after the permutation (canonical).
    pub output: [u64; 8],
}

const _: () = assert!(size_of::<KeccakEvent>() == 416);
const _: () = assert!(size_of::<Sha256Event>() == 152);
const _: () = assert!(size_of::<Poseidon2Event>() == 144);

/// Everything trace generation needs about one execution.
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// One event per executed instruction, in execution order (index = timestamp).
    pub cycles: Vec<CycleEvent>,
    /// One event per ECALL, in execution order.
    pub syscalls: Vec<SyscallEvent>,
    /// Bytes moved by syscalls (see [`SyscallEvent::data_len`]).
    pub syscall_data: Vec<u8>,
    /// One event per precompile call of each kind, in execution order (each call also has its
    /// [`SyscallEvent`] in `syscalls`, with `num` = a7, `args` = a0..a2, `ret` = 0, no data).
    pub keccak: Vec<KeccakEvent>,
    pub sha256: Vec<Sha256Event>,
    pub poseidon2: Vec<Poseidon2Event>,
    /// Registers before cycle 0 (x2 = sp = 0x8000_0000, others 0).
    pub init_regs: [u64; 32],
    /// Registers after the last cycle.
    pub final_regs: [u64; 32],
    /// Sorted base addresses of the 4 KiB data pages touched by loads, stores and syscall
    /// buffers (instruction fetches come from the program image and are not included).
    pub pages: Vec<u32>,
    /// Initial contents of `pages`: `pages.len() x 4096` bytes, page-major, same order.
    pub init_pages: Vec<u8>,
    /// Final contents of `pages`, same layout as `init_pages`.
    pub final_pages: Vec<u8>,
}

/// One bit per 4 KiB page of the guest address space: pages touched by loads, stores and
/// syscall buffers. With `snapshot` set (segmented runs), the contents of each page at its first
/// touch are saved: a page's first touch comes before any write to it, so these are the contents
/// at the start of the run (or segment).
#[derive(Default)]
pub(crate) struct PageBitmap {
    pub bits: Vec<u64>,
    /// `(page base, 4096 bytes)` in first-touch order, if snapshots are taken.
    pub snapshot: Option<Vec<(u32, Box<[u8]>)>>,
}

impl PageBitmap {
    pub(crate) fn new() -> PageBitmap {
        PageBitmap {
            bits: vec![0u64; (GUEST_MEM_END / PAGE_SIZE).div_ceil(64) as usize],
            snapshot: None,
        }
    }

    /// Sets the bit of page number `p`; on its first touch, saves the page if snapshots are on.
    #[inline(always)]
    fn set(&mut self, p: u64, mem: &FlatMem) {
        if let Some(w) = self.bits.get_mut((p / 64) as usize) {
            let bit = 1 << (p % 64);
            if *w & bit == 0 {
                *w |= bit;
                if self.snapshot.is_some() {
                    self.save(p, mem);
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn save(&mut self, p: u64, mem: &FlatMem) {
        if let (Some(s), Some(bytes)) = (&mut self.snapshot, mem.slice(p * PAGE_SIZE, PAGE_SIZE)) {
            s.push(((p * PAGE_SIZE) as u32, bytes.into()));
        }
    }

    /// Marks the pages of `[addr, addr + len)` (which lies inside the guest address space), before
    /// any of their bytes is modified.
    #[inline(always)]
    pub(crate) fn mark(&mut self, addr: u64, len: u64, mem: &FlatMem) {
        if len == 0 {
            return;
        }
        let (first, last) = (addr / PAGE_SIZE, (addr + len - 1) / PAGE_SIZE);
        for p in first..=last {
            self.set(p, mem);
        }
    }

    /// Marks the page of `addr` and of `addr + n - 1` (an in-bounds access of n <= 4096 bytes),
    /// before a store modifies them.
    #[inline(always)]
    pub(crate) fn mark_access<const N: u64>(&mut self, addr: u64, mem: &FlatMem) {
        for a in [addr, addr + N - 1] {
            self.set(a / PAGE_SIZE, mem);
        }
    }
}

/// Events are pre-faulted in chunks of this many (64 MiB).
const POPULATE_CHUNK: usize = 2 << 20;

/// Called when `v.len()` reaches `*soft_cap`: grows `v` (doubling) if it is full, then moves
/// `*soft_cap` one chunk further and, on Linux, pre-faults that chunk with
/// `MADV_POPULATE_WRITE`. Recording writes 32 bytes per cycle into fresh memory, and taking
/// one page fault per 4 KiB costs several times the interpreter's own work.
#[cold]
#[inline(never)]
pub(crate) fn grow_events(v: &mut Vec<CycleEvent>, soft_cap: &mut usize) {
    // Pre-fault ahead as much as has been used so far (at least 64 Ki events, at most a chunk),
    // so that short runs stay small.
    let ahead = v.len().clamp(1 << 16, POPULATE_CHUNK);
    if v.len() + ahead > v.capacity() {
        let want = (2 * v.capacity()).max(v.len() + ahead);
        v.reserve_exact(want - v.len());
    }
    *soft_cap = v.len() + ahead;
    let size = size_of::<CycleEvent>();
    let base = v.as_mut_ptr() as usize;
    populate(base + v.len() * size, base + *soft_cap * size);
}

#[cfg(target_os = "linux")]
fn populate(start: usize, end: usize) {
    const PAGE: usize = 4096;
    let (start, end) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
    if end > start {
        // SAFETY: [start, end) lies inside a live allocation (the caller's Vec buffer).
        // MADV_POPULATE_WRITE only pre-faults pages and never changes their contents; if the
        // kernel lacks it (before 5.14) the call fails harmlessly and pages fault on demand.
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                23, /* MADV_POPULATE_WRITE */
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn populate(_start: usize, _end: usize) {}

impl Record {
    /// Average record size in bytes per cycle (cycle events, syscall events and data, pages).
    pub fn bytes_per_cycle(&self) -> f64 {
        let bytes = self.cycles.len() * size_of::<CycleEvent>()
            + self.syscalls.len() * size_of::<SyscallEvent>()
            + self.syscall_data.len()
            + self.keccak.len() * size_of::<KeccakEvent>()
            + self.sha256.len() * size_of::<Sha256Event>()
            + self.poseidon2.len() * size_of::<Poseidon2Event>()
            + self.pages.len() * (4 + 2 * PAGE_SIZE as usize);
        bytes as f64 / self.cycles.len().max(1) as f64
    }

    /// Fills `pages`, `init_pages`, `final_pages` from the touched-page bitmap (initial contents: its
    /// snapshots if it took them, else the program image).
    pub(crate) fn collect_pages(&mut self, touched: &PageBitmap, program: &Program, mem: &FlatMem) {
        let bits = &touched.bits;
        self.pages.clear();
        for (i, &w) in bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let b = w.trailing_zeros() as u64;
                self.pages.push(((i as u64 * 64 + b) * PAGE_SIZE) as u32);
                w &= w - 1;
            }
        }
        let ps = PAGE_SIZE as usize;
        self.init_pages = vec![0u8; self.pages.len() * ps];
        self.final_pages = vec![0u8; self.pages.len() * ps];
        let snaps: std::collections::HashMap<u32, &[u8]> = touched
            .snapshot
            .iter()
            .flatten()
            .map(|(p, b)| (*p, &b[..]))
            .collect();
        for (k, &p) in self.pages.iter().enumerate() {
            let dst = &mut self.init_pages[k * ps..(k + 1) * ps];
            // With snapshots (a segment): the contents at the segment's start; else the ELF image.
            match snaps.get(&p) {
                Some(b) if touched.snapshot.is_some() => dst.copy_from_slice(b),
                _ => program.initial_bytes(p as u64, dst),
            }
            if let Some(src) = mem.slice(p as u64, PAGE_SIZE) {
                self.final_pages[k * ps..(k + 1) * ps].copy_from_slice(src);
            }
        }
    }
}
