//! ELF loader tests: valid files, every rejection cause, and seeded mutation (no panic ever).

mod common;
use common::*;
use rand::{Rng, SeedableRng};
use zkrv_executor::asm::*;
use zkrv_executor::{execute, ElfError, ExecOptions, Program};

const RX: u32 = 5; // PF_R | PF_X
const RW: u32 = 6; // PF_R | PF_W

fn code() -> Vec<u8> {
    // x5 = *(u64*)0x20000 (BSS, reads 0) + 42; write nothing; exit(x5)
    let mut w = li(6, 0x20000);
    w.extend([ld(5, 6, 0), addi(10, 5, 42), addi(17, 0, 93), ECALL]);
    words_to_bytes(&w)
}

fn good_elf() -> Vec<u8> {
    build_elf(
        0x10000,
        &[
            Seg {
                vaddr: 0x10000,
                data: code(),
                memsz: 0x100,
                flags: RX,
            },
            Seg {
                vaddr: 0x20000,
                data: vec![],
                memsz: 0x2000,
                flags: RW,
            },
        ],
    )
}

#[test]
fn loads_and_runs_a_valid_elf() {
    let p = Program::from_elf(&good_elf()).unwrap();
    assert_eq!(p.entry, 0x10000);
    assert_eq!(p.segments.len(), 2);
    let e = execute(&p, &[], &ExecOptions::default()).unwrap();
    assert_eq!(e.exit_code, 42);
}

#[test]
fn bss_is_zero_filled_after_file_bytes() {
    // data segment: 3 file bytes then BSS; the program loads 8 bytes across the boundary
    let mut w = li(6, 0x20000);
    w.extend([ld(10, 6, 0), addi(17, 0, 93), ECALL]);
    let elf = build_elf(
        0x10000,
        &[
            Seg {
                vaddr: 0x10000,
                data: words_to_bytes(&w),
                memsz: 0x100,
                flags: RX,
            },
            Seg {
                vaddr: 0x20000,
                data: vec![1, 2, 3],
                memsz: 0x1000,
                flags: RW,
            },
        ],
    );
    let e = execute(
        &Program::from_elf(&elf).unwrap(),
        &[],
        &ExecOptions::default(),
    )
    .unwrap();
    assert_eq!(e.exit_code, 0x030201);
}

fn set(elf: &mut [u8], off: usize, bytes: &[u8]) {
    elf[off..off + bytes.len()].copy_from_slice(bytes);
}

#[test]
fn rejects_with_named_causes() {
    let good = good_elf();
    let err = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut e = good.clone();
        f(&mut e);
        Program::from_elf(&e).unwrap_err()
    };
    assert_eq!(
        err(&|e| e.truncate(10)),
        ElfError::TruncatedHeader { len: 10 }
    );
    assert_eq!(err(&|e| e[0] = 0), ElfError::BadMagic);
    assert_eq!(err(&|e| e[4] = 1), ElfError::WrongClass(1));
    assert_eq!(err(&|e| e[5] = 2), ElfError::WrongEndianness(2));
    assert_eq!(
        err(&|e| set(e, 18, &62u16.to_le_bytes())),
        ElfError::WrongMachine(62)
    );
    assert_eq!(
        err(&|e| set(e, 16, &3u16.to_le_bytes())),
        ElfError::WrongType(3)
    );
    // program headers beyond the end of the file
    assert!(matches!(
        err(&|e| set(e, 32, &0xffff_0000u64.to_le_bytes())),
        ElfError::TruncatedProgramHeaders { .. }
    ));
    // phentsize wrong
    assert!(matches!(
        err(&|e| set(e, 54, &40u16.to_le_bytes())),
        ElfError::BadProgramHeaders(_)
    ));
    // truncated segment data
    let n = good.len();
    assert!(matches!(
        err(&|e| e.truncate(n - 4)),
        ElfError::SegmentTruncated { index: 0, .. }
    ));
    // filesz > memsz (segment 0: phdr at 64, filesz at +32, memsz at +40)
    assert!(matches!(
        err(&|e| set(e, 64 + 40, &4u64.to_le_bytes())),
        ElfError::FileszExceedsMemsz { index: 0, .. }
    ));
    // segment outside the program region: vaddr in the stack, in the guard page, huge memsz
    let ph1 = 64 + 56;
    assert!(matches!(
        err(&|e| set(e, ph1 + 16, &0x7f00_0000u64.to_le_bytes())),
        ElfError::SegmentOutOfRange { index: 1, .. }
    ));
    assert!(matches!(
        err(&|e| set(e, ph1 + 16, &0x800u64.to_le_bytes())),
        ElfError::SegmentOutOfRange { index: 1, .. }
    ));
    assert!(matches!(
        err(&|e| set(e, ph1 + 40, &u64::MAX.to_le_bytes())),
        ElfError::SegmentOutOfRange { index: 1, .. }
    ));
    // overlap
    assert!(matches!(
        err(&|e| set(e, ph1 + 16, &0x10080u64.to_le_bytes())),
        ElfError::OverlappingSegments { .. }
    ));
    // entry: misaligned, in the data segment, outside everything
    for entry in [0x10002u64, 0x20000, 0x5000, u64::MAX - 1] {
        assert_eq!(
            err(&|e| set(e, 24, &entry.to_le_bytes())),
            ElfError::BadEntry(entry)
        );
    }
    // absurd executable span: make the data segment executable at the top of the region
    let mut e = good.clone();
    set(&mut e, ph1 + 4, &RX.to_le_bytes());
    set(&mut e, ph1 + 16, &0x7000_0000u64.to_le_bytes());
    assert!(matches!(
        Program::from_elf(&e).unwrap_err(),
        ElfError::ExecSpanTooLarge(_)
    ));
    // three segments aliasing the same file bytes (more than twice the file) are rejected
    let big = vec![0x13u8; 0x3000];
    let segs: Vec<Seg> = (0..3u64)
        .map(|k| Seg {
            vaddr: 0x100000 * (k + 1),
            data: big.clone(),
            memsz: 0x3000,
            flags: RX,
        })
        .collect();
    let mut e = build_elf(0x100000, &segs);
    let first_off = u64::from_le_bytes(e[64 + 8..64 + 16].try_into().unwrap());
    e.truncate(first_off as usize + big.len());
    for k in 1..3 {
        set(&mut e, 64 + 56 * k + 8, &first_off.to_le_bytes());
    }
    assert!(matches!(
        Program::from_elf(&e).unwrap_err(),
        ElfError::AliasedSegmentData { .. }
    ));
    // the messages name the cause
    assert!(err(&|e| e[4] = 1).to_string().contains("class"));
    assert!(err(&|e| set(e, 24, &0x20000u64.to_le_bytes()))
        .to_string()
        .contains("0x20000"));
}

#[test]
fn huge_bss_does_not_allocate_at_load() {
    // a 2 GiB-ish BSS is accepted only inside the region; loading must not allocate it
    let elf = build_elf(
        0x10000,
        &[
            Seg {
                vaddr: 0x10000,
                data: code(),
                memsz: 0x100,
                flags: RX,
            },
            Seg {
                vaddr: 0x20000,
                data: vec![],
                memsz: 0x7F00_0000 - 0x20000,
                flags: RW,
            },
        ],
    );
    let p = Program::from_elf(&elf).unwrap();
    assert!(p.segments.iter().map(|s| s.data.len()).sum::<usize>() < 4096);
}

/// Seeded mutation: a few thousand corrupted ELFs, none may panic. Set ZKRV_SEED to replay.
#[test]
fn mutated_elfs_never_panic() {
    let seed: u64 = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("mutated_elfs_never_panic seed = {seed} (rerun with ZKRV_SEED={seed})");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let base = good_elf();
    let interesting: [u64; 10] = [
        0,
        1,
        0x1000,
        0x10000,
        0x7F00_0000,
        0x8000_0000,
        u32::MAX as u64,
        u64::MAX,
        1 << 63,
        0xffff,
    ];
    let (mut ok, mut ran) = (0, 0);
    for iter in 0..4000 {
        let mut e = base.clone();
        for _ in 0..rng.gen_range(1..6) {
            match rng.gen_range(0..6) {
                0 => {
                    let i = rng.gen_range(0..e.len());
                    e[i] = rng.gen();
                }
                1 => {
                    // header/phdr fields: write an interesting 2/4/8-byte value at a random offset
                    let i = rng.gen_range(0..(64 + 2 * 56));
                    let v = interesting[rng.gen_range(0..interesting.len())]
                        .wrapping_add(rng.gen_range(0..3));
                    let w = [2, 4, 8][rng.gen_range(0..3)];
                    for k in 0..w {
                        if i + k < e.len() {
                            e[i + k] = (v >> (8 * k)) as u8;
                        }
                    }
                }
                2 => {
                    let n = rng.gen_range(0..=e.len());
                    e.truncate(n);
                }
                3 => e.extend((0..rng.gen_range(0..64)).map(|_| rng.gen::<u8>())),
                4 => {
                    // flip a bit in the code
                    let i = rng.gen_range(64 + 2 * 56..base.len());
                    if i < e.len() {
                        e[i] ^= 1 << rng.gen_range(0..8);
                    }
                }
                _ => {
                    let i = rng.gen_range(0..e.len().max(1));
                    if i < e.len() {
                        e[i] = 0xff;
                    }
                }
            }
            if e.is_empty() {
                break;
            }
        }
        let res = std::panic::catch_unwind(|| {
            if let Ok(p) = Program::from_elf(&e) {
                let _ = execute(
                    &p,
                    b"in",
                    &ExecOptions {
                        max_cycles: 1000,
                        record: iter % 2 == 0,
                    },
                );
                true
            } else {
                false
            }
        });
        match res {
            Ok(true) => {
                ok += 1;
                ran += 1
            }
            Ok(false) => {}
            Err(_) => panic!("panic on mutated ELF, seed {seed}, iteration {iter}"),
        }
    }
    println!("{ok} of 4000 mutated ELFs loaded ({ran} executed)");
    assert!(
        ok > 0,
        "seed {seed}: no mutant loaded; the mutator is too aggressive"
    );
}

/// An ELF at any address parses (e.g. `include_bytes!`, which is only 1-aligned): the header types are
/// read unaligned (`object`'s `unaligned` feature), not refused as a "truncated header".
#[test]
fn misaligned_elf_bytes_load() {
    let elf = good_elf();
    let want = Program::from_elf(&elf).unwrap();
    for shift in 1..8 {
        let mut buf = vec![0u8; elf.len() + shift];
        buf[shift..].copy_from_slice(&elf);
        let p = Program::from_elf(&buf[shift..]).unwrap_or_else(|e| panic!("shift {shift}: {e}"));
        assert_eq!(p.entry, want.entry);
        assert_eq!(p.segments.len(), want.segments.len());
    }
}
