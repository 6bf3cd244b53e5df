//! ELF loading: a 64-bit little-endian RISC-V `ET_EXEC` file becomes a [`Program`].
//!
//! Only `PT_LOAD` program headers matter; sections are ignored. Every check that can fail on
//! untrusted bytes returns an [`ElfError`] naming the cause; nothing here allocates more than
//! the file's size plus the pre-decoded executable span (at most [`MAX_EXEC_SPAN`] bytes of
//! code, 3 bytes of decoded [`Inst`] and raw word per code byte: at most 48 MiB).

use crate::decode::{decode_or_illegal, Inst};
use crate::{GUEST_MEM_END, PROGRAM_END, PROGRAM_START};
use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use object::LittleEndian as LE;

/// Largest span (bytes, from the lowest to the highest executable address) the loader accepts:
/// 16 MiB of code, i.e. 4 Mi instructions, pre-decoded into 48 MiB (8-byte `Inst` + raw word).
pub const MAX_EXEC_SPAN: u64 = 16 << 20;

/// Largest ELF file accepted (256 MiB); a caller reading a file should read at most this + 1 bytes.
pub const MAX_ELF_BYTES: u64 = 256 << 20;

/// Largest number of `PT_LOAD` segments accepted.
pub const MAX_SEGMENTS: usize = 256;

/// Why an ELF file was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    /// The file is shorter than the 64-byte ELF header.
    #[error("file truncated: {len} bytes is shorter than the 64-byte ELF64 header")]
    TruncatedHeader {
        /// File length in bytes.
        len: usize,
    },
    /// The first 4 bytes are not `\x7fELF`.
    #[error("not an ELF file (bad magic)")]
    BadMagic,
    /// `EI_CLASS` is not `ELFCLASS64`.
    #[error("wrong ELF class {0} (expected 2 = ELFCLASS64)")]
    WrongClass(u8),
    /// `EI_DATA` is not `ELFDATA2LSB`.
    #[error("wrong endianness {0} (expected 1 = little-endian)")]
    WrongEndianness(u8),
    /// `e_machine` is not `EM_RISCV`.
    #[error("wrong machine {0} (expected 243 = EM_RISCV)")]
    WrongMachine(u16),
    /// `e_type` is not `ET_EXEC`.
    #[error("wrong ELF type {0} (expected 2 = ET_EXEC; PIE/shared objects are not supported)")]
    WrongType(u16),
    /// The program header table is malformed or lies outside the file.
    #[error("bad program header table: {0}")]
    BadProgramHeaders(String),
    /// The program header table (`e_phoff`, `e_phnum` x `e_phentsize`) extends past the end of the file.
    #[error("program header table truncated: {count} entries of {entsize} bytes at offset {offset:#x} extend past the end of the {file_len}-byte file")]
    TruncatedProgramHeaders {
        /// `e_phoff`.
        offset: u64,
        /// `e_phnum`.
        count: u16,
        /// `e_phentsize`.
        entsize: u16,
        /// File length.
        file_len: usize,
    },
    /// No `PT_LOAD` segment with a nonzero size.
    #[error("no loadable segments (no PT_LOAD program header with p_memsz > 0)")]
    NoLoadableSegments,
    /// The file is larger than [`MAX_ELF_BYTES`].
    #[error("ELF file too large: more than {MAX_ELF_BYTES} bytes")]
    TooLarge,
    /// More `PT_LOAD` segments than [`MAX_SEGMENTS`].
    #[error("too many loadable segments ({0}, at most {MAX_SEGMENTS})")]
    TooManySegments(usize),
    /// A segment's file bytes lie (partly) outside the file.
    #[error("segment {index}: file bytes [{offset:#x}, +{filesz:#x}) lie outside the {file_len}-byte file")]
    SegmentTruncated {
        /// Program header index.
        index: usize,
        /// `p_offset`.
        offset: u64,
        /// `p_filesz`.
        filesz: u64,
        /// File length.
        file_len: usize,
    },
    /// `p_filesz > p_memsz`.
    #[error("segment {index}: p_filesz {filesz:#x} exceeds p_memsz {memsz:#x}")]
    FileszExceedsMemsz {
        /// Program header index.
        index: usize,
        /// `p_filesz`.
        filesz: u64,
        /// `p_memsz`.
        memsz: u64,
    },
    /// A segment lies (partly) outside the program region `[0x1000, 0x7F00_0000)`.
    #[error("segment {index}: [{vaddr:#x}, +{memsz:#x}) lies outside the program region [{PROGRAM_START:#x}, {PROGRAM_END:#x})")]
    SegmentOutOfRange {
        /// Program header index.
        index: usize,
        /// `p_vaddr`.
        vaddr: u64,
        /// `p_memsz`.
        memsz: u64,
    },
    /// Two segments share addresses.
    #[error("segments overlap: [{a_start:#x}, {a_end:#x}) and [{b_start:#x}, {b_end:#x})")]
    OverlappingSegments {
        /// First segment start.
        a_start: u64,
        /// First segment end (exclusive).
        a_end: u64,
        /// Second segment start.
        b_start: u64,
        /// Second segment end (exclusive).
        b_end: u64,
    },
    /// The entry point is not 4-byte aligned or not inside an executable segment.
    #[error("entry point {0:#x} is not a 4-byte aligned address inside an executable segment")]
    BadEntry(u64),
    /// The segments' file bytes add up to more than twice the file: their file ranges alias,
    /// and copying them would make a small file cost a lot of memory.
    #[error("segments' file bytes total {total:#x}, more than twice the {file_len}-byte file")]
    AliasedSegmentData {
        /// Sum of `p_filesz`.
        total: u64,
        /// File length.
        file_len: usize,
    },
    /// The executable segments span more than [`MAX_EXEC_SPAN`] bytes.
    #[error("executable segments span {0:#x} bytes (at most {MAX_EXEC_SPAN:#x})")]
    ExecSpanTooLarge(u64),
}

/// One loaded segment: `data` at `vaddr`, followed by zeros up to `vaddr + memsz`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Guest address of the first byte.
    pub vaddr: u64,
    /// Size in guest memory (bytes); `data.len() <= memsz`, the rest is zero (BSS).
    pub memsz: u64,
    /// Initial bytes (the ELF's file bytes).
    pub data: Vec<u8>,
    /// Whether the segment is executable (`PF_X`).
    pub executable: bool,
}

impl Segment {
    /// Exclusive end address.
    pub fn end(&self) -> u64 {
        self.vaddr + self.memsz
    }
}

/// A loaded program: entry point, segments, and the pre-decoded executable span.
#[derive(Clone, Debug)]
pub struct Program {
    /// Entry point (initial pc).
    pub entry: u64,
    /// Loaded segments, sorted by address, non-overlapping.
    pub segments: Vec<Segment>,
    /// Guest address of `code[0]` (lowest executable address, rounded down to 4).
    pub(crate) code_base: u64,
    /// Pre-decoded instructions: `code[i]` is the instruction at `code_base + 4 i`; slots outside
    /// executable segments hold [`crate::decode::Op::NoCode`].
    pub(crate) code: Vec<Inst>,
    /// Raw instruction words, parallel to `code`.
    pub(crate) words: Vec<u32>,
}

impl Program {
    /// Parses and validates an ELF file (see the crate docs and docs/abi.md for the rules).
    pub fn from_elf(bytes: &[u8]) -> Result<Program, ElfError> {
        if bytes.len() as u64 > MAX_ELF_BYTES {
            return Err(ElfError::TooLarge);
        }
        if bytes.len() < 64 {
            return Err(ElfError::TruncatedHeader { len: bytes.len() });
        }
        if bytes[0..4] != elf::ELFMAG {
            return Err(ElfError::BadMagic);
        }
        if bytes[4] != elf::ELFCLASS64 {
            return Err(ElfError::WrongClass(bytes[4]));
        }
        if bytes[5] != elf::ELFDATA2LSB {
            return Err(ElfError::WrongEndianness(bytes[5]));
        }
        let hdr = elf::FileHeader64::<LE>::parse(bytes)
            .map_err(|_| ElfError::TruncatedHeader { len: bytes.len() })?;
        let e = LE;
        if hdr.e_machine(e) != elf::EM_RISCV {
            return Err(ElfError::WrongMachine(hdr.e_machine(e)));
        }
        if hdr.e_type(e) != elf::ET_EXEC {
            return Err(ElfError::WrongType(hdr.e_type(e)));
        }
        let (phoff, phnum, phentsize) = (hdr.e_phoff(e), hdr.e_phnum(e), hdr.e_phentsize(e));
        if phnum > 0
            && phoff
                .checked_add(u64::from(phnum) * u64::from(phentsize))
                .is_none_or(|end| end > bytes.len() as u64)
        {
            return Err(ElfError::TruncatedProgramHeaders {
                offset: phoff,
                count: phnum,
                entsize: phentsize,
                file_len: bytes.len(),
            });
        }
        let phdrs = hdr
            .program_headers(e, bytes)
            .map_err(|err| ElfError::BadProgramHeaders(err.to_string()))?;
        let mut segments = Vec::new();
        let mut total_filesz = 0u64;
        for (index, ph) in phdrs.iter().enumerate() {
            if ph.p_type(e) != elf::PT_LOAD {
                continue;
            }
            let (offset, filesz, memsz, vaddr) =
                (ph.p_offset(e), ph.p_filesz(e), ph.p_memsz(e), ph.p_vaddr(e));
            if filesz > memsz {
                return Err(ElfError::FileszExceedsMemsz {
                    index,
                    filesz,
                    memsz,
                });
            }
            let data = offset
                .checked_add(filesz)
                .filter(|&end| end <= bytes.len() as u64)
                .map(|end| &bytes[offset as usize..end as usize])
                .ok_or(ElfError::SegmentTruncated {
                    index,
                    offset,
                    filesz,
                    file_len: bytes.len(),
                })?;
            if memsz == 0 {
                continue;
            }
            if !(PROGRAM_START..=PROGRAM_END).contains(&vaddr) || memsz > PROGRAM_END - vaddr {
                return Err(ElfError::SegmentOutOfRange {
                    index,
                    vaddr,
                    memsz,
                });
            }
            if segments.len() == MAX_SEGMENTS {
                return Err(ElfError::TooManySegments(phdrs.len()));
            }
            total_filesz += filesz;
            if total_filesz > 2 * bytes.len() as u64 {
                return Err(ElfError::AliasedSegmentData {
                    total: total_filesz,
                    file_len: bytes.len(),
                });
            }
            segments.push(Segment {
                vaddr,
                memsz,
                data: data.to_vec(),
                executable: ph.p_flags(e) & elf::PF_X != 0,
            });
        }
        Program::new(hdr.e_entry(e), segments)
    }

    /// Builds a program from segments (checked as for an ELF: inside the program region,
    /// non-overlapping, `data.len() <= memsz`, entry aligned in an executable segment).
    pub fn new(entry: u64, mut segments: Vec<Segment>) -> Result<Program, ElfError> {
        segments.retain(|s| s.memsz > 0);
        if segments.is_empty() {
            return Err(ElfError::NoLoadableSegments);
        }
        if segments.len() > MAX_SEGMENTS {
            return Err(ElfError::TooManySegments(segments.len()));
        }
        for (index, s) in segments.iter().enumerate() {
            if s.data.len() as u64 > s.memsz {
                return Err(ElfError::FileszExceedsMemsz {
                    index,
                    filesz: s.data.len() as u64,
                    memsz: s.memsz,
                });
            }
            if !(PROGRAM_START..=PROGRAM_END).contains(&s.vaddr) || s.memsz > PROGRAM_END - s.vaddr
            {
                return Err(ElfError::SegmentOutOfRange {
                    index,
                    vaddr: s.vaddr,
                    memsz: s.memsz,
                });
            }
        }
        segments.sort_by_key(|s| s.vaddr);
        for w in segments.windows(2) {
            if w[0].end() > w[1].vaddr {
                return Err(ElfError::OverlappingSegments {
                    a_start: w[0].vaddr,
                    a_end: w[0].end(),
                    b_start: w[1].vaddr,
                    b_end: w[1].end(),
                });
            }
        }
        const { assert!(PROGRAM_END <= GUEST_MEM_END) };
        let entry_ok = entry.is_multiple_of(4)
            && segments.iter().any(|s| {
                s.executable && entry >= s.vaddr && entry < s.end() && s.end() - entry >= 4
            });
        if !entry_ok {
            return Err(ElfError::BadEntry(entry));
        }
        let exec = || segments.iter().filter(|s| s.executable);
        let lo = exec().map(|s| s.vaddr).min().unwrap_or(entry) & !3;
        let hi = exec().map(|s| s.end()).max().unwrap_or(entry);
        let span = hi - lo;
        if span > MAX_EXEC_SPAN {
            return Err(ElfError::ExecSpanTooLarge(span));
        }
        let n = span.div_ceil(4) as usize;
        let mut code = vec![Inst::NO_CODE; n];
        let mut words = vec![0u32; n];
        for s in exec() {
            // Whole 4-byte words inside the segment; bytes past `data` are zero (BSS).
            let first = (s.vaddr.div_ceil(4) * 4 - lo) / 4;
            let last = (s.end() / 4 * 4 - lo) / 4; // exclusive
            for idx in first..last {
                let addr = lo + 4 * idx;
                let off = (addr - s.vaddr) as usize;
                let mut b = [0u8; 4];
                for (k, byte) in b.iter_mut().enumerate() {
                    *byte = s.data.get(off + k).copied().unwrap_or(0);
                }
                let w = u32::from_le_bytes(b);
                words[idx as usize] = w;
                code[idx as usize] = decode_or_illegal(w);
            }
        }
        Ok(Program {
            entry,
            segments,
            code_base: lo,
            code,
            words,
        })
    }

    /// Builds a program from raw instruction words placed at `base` (one executable segment),
    /// entry at `base`. Convenient for tests and benchmarks.
    pub fn from_words(base: u64, words: &[u32]) -> Result<Program, ElfError> {
        let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let seg = Segment {
            vaddr: base,
            memsz: data.len() as u64,
            data,
            executable: true,
        };
        Program::new(base, vec![seg])
    }

    /// Fills `dst` with the initial guest memory at `[addr, addr + dst.len())` (segment bytes,
    /// zeros elsewhere).
    pub fn initial_bytes(&self, addr: u64, dst: &mut [u8]) {
        dst.fill(0);
        let end = addr.saturating_add(dst.len() as u64);
        for s in &self.segments {
            let lo = s.vaddr.max(addr);
            let hi = (s.vaddr + s.data.len() as u64).min(end);
            if lo < hi {
                let src = &s.data[(lo - s.vaddr) as usize..(hi - s.vaddr) as usize];
                dst[(lo - addr) as usize..(hi - addr) as usize].copy_from_slice(src);
            }
        }
    }

    /// Number of instruction slots in the pre-decoded executable span.
    pub fn code_len(&self) -> usize {
        self.code.len()
    }

    /// The raw instruction word at `pc`, if `pc` is an aligned address of the executable span.
    pub fn word_at(&self, pc: u64) -> Option<u32> {
        let off = pc.checked_sub(self.code_base)?;
        if off % 4 != 0 {
            return None;
        }
        self.words.get((off / 4) as usize).copied()
    }
}
