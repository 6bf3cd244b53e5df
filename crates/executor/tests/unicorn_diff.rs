//! Differential test against unicorn (QEMU's RISC-V TCG): random RV64IM instructions, one step
//! at a time, every register and the written memory compared after each step.
//!
//! `ZKRV_SEED=<n>` replays a run; `ZKRV_DIFF_STEPS=<n>` changes the number of steps.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use unicorn_engine::unicorn_const::{uc_error, Arch, Mode, Prot};
use unicorn_engine::Unicorn;
use zkrv_executor::asm;
use zkrv_executor::{decode, Op, Program, Vm};

const CODE: u64 = 0x40_0000;
/// unicorn fetches the next instruction after a jump: map all JAL targets (+-1 MiB).
const CODE_MAP: (u64, u64) = (CODE - (1 << 20), (2 << 20) + 0x1000);
const DATA: u64 = 0x100000;
const DATA_LEN: u64 = 0x10000;
/// unicorn register ids: X0..X31 = 1..32, PC = 190 (unicorn 2.1 riscv.h).
const UC_X0: i32 = 1;
const UC_PC: i32 = 190;

const EDGES: [u64; 16] = [
    0,
    1,
    u64::MAX,
    i64::MIN as u64,
    i64::MAX as u64,
    1 << 31,
    (1 << 31) - 1,
    (-(1i64 << 31)) as u64,
    1 << 32,
    (1 << 32) - 1,
    (1 << 32) + 1,
    0xffff_ffff_8000_0000,
    0x7fff_ffff_ffff_fffe,
    2,
    (-2i64) as u64,
    0x8000_0001,
];

fn value(rng: &mut StdRng) -> u64 {
    match rng.gen_range(0..6) {
        0..=2 => EDGES[rng.gen_range(0..EDGES.len())]
            .wrapping_add([0, 0, 0, 1, u64::MAX][rng.gen_range(0..5)]),
        3 => rng.gen::<i32>() as i64 as u64,
        4 => rng.gen_range(0..64),
        _ => rng.gen(),
    }
}

fn imm12(rng: &mut StdRng) -> i32 {
    match rng.gen_range(0..4) {
        0 => [0, 1, -1, 2047, -2048, 31, 32, 63][rng.gen_range(0..8)],
        _ => rng.gen_range(-2048..2048),
    }
}

fn reg(rng: &mut StdRng) -> u32 {
    rng.gen_range(0..32)
}

/// What the step needs besides the word: a base register to point at DATA, or a JALR target.
enum Fixup {
    None,
    /// Set `rs1` so that `rs1 + imm` lands in DATA (access of `width` bytes).
    Mem {
        rs1: u32,
        imm: i32,
        width: u64,
    },
    /// Set `rs1` so that `(rs1 + imm) & !1` is 4-aligned.
    Jalr {
        rs1: u32,
        imm: i32,
    },
}

/// A random RV64IM instruction (every opcode of the ISA except ECALL) and its fixup.
fn gen_inst(rng: &mut StdRng) -> (u32, Fixup) {
    let (rd, rs1, rs2) = (reg(rng), reg(rng), reg(rng));
    let k = rng.gen_range(0..20);
    match k {
        0 => (asm::lui(rd, rng.gen()), Fixup::None),
        1 => (asm::auipc(rd, rng.gen()), Fixup::None),
        2 => {
            let off = rng.gen_range(-(1 << 18)..(1 << 18)) * 4;
            (asm::jal(rd, off), Fixup::None)
        }
        3 => {
            let rs1 = rng.gen_range(1..32);
            let imm = imm12(rng);
            (asm::jalr(rd, rs1, imm), Fixup::Jalr { rs1, imm })
        }
        4 => {
            let f3 = [0, 1, 4, 5, 6, 7][rng.gen_range(0..6)];
            let off = rng.gen_range(-1024..1024) * 4;
            (asm::b(off, rs2, rs1, f3), Fixup::None)
        }
        5 => {
            let f3 = rng.gen_range(0..7);
            let rs1 = rng.gen_range(1..32);
            let imm = imm12(rng);
            (
                asm::load(f3, rd, rs1, imm),
                Fixup::Mem {
                    rs1,
                    imm,
                    width: 1 << (f3 & 3),
                },
            )
        }
        6 => {
            let f3 = rng.gen_range(0..4);
            let rs1 = rng.gen_range(1..32);
            let imm = imm12(rng);
            (
                asm::store(f3, rs2, rs1, imm),
                Fixup::Mem {
                    rs1,
                    imm,
                    width: 1 << f3,
                },
            )
        }
        7 => {
            let f3 = [0, 2, 3, 4, 6, 7][rng.gen_range(0..6)];
            (asm::i(imm12(rng), rs1, f3, rd, 0x13), Fixup::None)
        }
        8 => {
            let sh = rng.gen_range(0..64);
            let w = match rng.gen_range(0..3) {
                0 => asm::slli(rd, rs1, sh),
                1 => asm::srli(rd, rs1, sh),
                _ => asm::srai(rd, rs1, sh),
            };
            (w, Fixup::None)
        }
        9 | 10 => {
            let (f7, f3) = [
                (0, 0),
                (0x20, 0),
                (0, 1),
                (0, 2),
                (0, 3),
                (0, 4),
                (0, 5),
                (0x20, 5),
                (0, 6),
                (0, 7),
            ][rng.gen_range(0..10)];
            (asm::op(f7, f3, rd, rs1, rs2), Fixup::None)
        }
        11 => (asm::addiw(rd, rs1, imm12(rng)), Fixup::None),
        12 => {
            let sh = rng.gen_range(0..32);
            let w = match rng.gen_range(0..3) {
                0 => asm::slliw(rd, rs1, sh),
                1 => asm::srliw(rd, rs1, sh),
                _ => asm::sraiw(rd, rs1, sh),
            };
            (w, Fixup::None)
        }
        13 => {
            let (f7, f3) = [(0, 0), (0x20, 0), (0, 1), (0, 5), (0x20, 5)][rng.gen_range(0..5)];
            (asm::op32(f7, f3, rd, rs1, rs2), Fixup::None)
        }
        14..=16 => (asm::op(1, rng.gen_range(0..8), rd, rs1, rs2), Fixup::None),
        17 | 18 => (
            asm::op32(1, [0, 4, 5, 6, 7][rng.gen_range(0..5)], rd, rs1, rs2),
            Fixup::None,
        ),
        _ => ([asm::FENCE, 0x0000_100f][rng.gen_range(0..2)], Fixup::None),
    }
}

fn uc_regs(uc: &Unicorn<()>) -> [u64; 32] {
    let mut r = [0u64; 32];
    for (i, v) in r.iter_mut().enumerate() {
        *v = uc.reg_read(UC_X0 + i as i32).expect("unicorn reg_read");
    }
    r
}

#[test]
fn unicorn_differential() {
    let seed: u64 = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    let steps: u64 = std::env::var("ZKRV_DIFF_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    println!("unicorn_differential seed = {seed}, steps = {steps} (replay: ZKRV_SEED={seed})");
    let mut rng = StdRng::seed_from_u64(seed);

    let mut uc = Unicorn::new(Arch::RISCV, Mode::RISCV64).expect("unicorn init");
    uc.mem_map(CODE_MAP.0, CODE_MAP.1, Prot::ALL)
        .expect("map code");
    uc.mem_map(DATA, DATA_LEN, Prot::ALL).expect("map data");
    // our side: one executable code page; DATA is plain (zeroed) guest memory
    let prog = Program::from_words(CODE, &[asm::FENCE; 1024]).expect("program");
    let mut vm = Vm::new(&prog, &[]).expect("vm");

    let init: Vec<u8> = (0..DATA_LEN).map(|_| rng.gen()).collect();
    uc.mem_write(DATA, &init).expect("uc write");
    assert!(vm.write_mem(DATA, &init));
    uc.mem_write(CODE, &[0x0f, 0, 0xf0, 0x0f].repeat(1024))
        .expect("uc write");
    for i in 1..32 {
        let v = value(&mut rng);
        vm.set_reg(i, v);
        uc.reg_write(UC_X0 + i as i32, v).expect("uc reg");
    }

    let mut counts = [0u64; 64];
    for step in 0..steps {
        // a random instruction at a random slot of the code page
        let pc = CODE + 4 * rng.gen_range(0..1024u64);
        let (word, fix) = gen_inst(&mut rng);
        counts[decode(word).map(|d| d.op as usize).unwrap_or(63) & 63] += 1;
        // bias operands: re-randomize a few registers to edge values
        for _ in 0..rng.gen_range(0..3) {
            let (i, v) = (rng.gen_range(1..32), value(&mut rng));
            vm.set_reg(i, v);
            uc.reg_write(UC_X0 + i as i32, v).expect("uc reg");
        }
        let set = |vm: &mut Vm, uc: &mut Unicorn<()>, r: u32, v: u64| {
            vm.set_reg(r as usize, v);
            uc.reg_write(UC_X0 + r as i32, v).expect("uc reg");
        };
        match fix {
            Fixup::None => {}
            Fixup::Mem { rs1, imm, width } => {
                let addr = DATA + rng.gen_range(0..=DATA_LEN - width);
                set(&mut vm, &mut uc, rs1, addr.wrapping_sub(imm as i64 as u64));
            }
            Fixup::Jalr { rs1, imm } => {
                let target = CODE + 4 * rng.gen_range(0..1024u64) + rng.gen_range(0..2);
                set(
                    &mut vm,
                    &mut uc,
                    rs1,
                    target.wrapping_sub(imm as i64 as u64),
                );
            }
        }
        uc.mem_write(pc, &word.to_le_bytes())
            .expect("uc code write");
        uc.ctl_remove_cache(pc, pc + 4).expect("uc flush");
        assert!(vm.set_code(pc, word));
        vm.set_pc(pc);
        uc.reg_write(UC_PC, pc).expect("uc pc");

        let before = *vm.regs();
        let ours = vm.step();
        let theirs = uc.emu_start(pc, u64::MAX, 0, 1);
        let ctx = || {
            format!(
                "seed {seed} step {step}: word {word:#010x} ({:?}) at pc {pc:#x}\nregs before: {before:x?}",
                decode(word)
            )
        };
        if let Err(e) = ours {
            panic!("{}\nour executor failed: {e} (unicorn: {theirs:?})", ctx());
        }
        theirs.unwrap_or_else(|e| panic!("{}\nunicorn failed: {e:?}", ctx()));
        let ur = uc_regs(&uc);
        let upc = uc.reg_read(UC_PC).expect("uc pc");
        if ur != *vm.regs() || upc != vm.pc() {
            for (i, (u, o)) in ur.iter().zip(vm.regs()).enumerate() {
                if u != o {
                    eprintln!("x{i}: ours {o:#x} unicorn {u:#x}");
                }
            }
            panic!("{}\npc ours {:#x} unicorn {upc:#x}", ctx(), vm.pc());
        }
        // written memory: the stored bytes (plus a margin), and the whole region now and then
        if word & 0x7f == 0x23 {
            let addr = before[((word >> 15) & 31) as usize]
                .wrapping_add(((word as i32) >> 25 << 5 | ((word >> 7) & 31) as i32) as i64 as u64);
            let lo = addr.saturating_sub(8).max(DATA);
            let hi = (addr + 16).min(DATA + DATA_LEN);
            let theirs = uc.mem_read_as_vec(lo, (hi - lo) as usize).expect("uc read");
            assert_eq!(
                vm.read_mem(lo, hi - lo).expect("our read"),
                &theirs[..],
                "{}\nmemory around {addr:#x}",
                ctx()
            );
        }
        if step % 100_000 == 0 || step + 1 == steps {
            let theirs = uc
                .mem_read_as_vec(DATA, DATA_LEN as usize)
                .expect("uc read");
            assert!(
                vm.read_mem(DATA, DATA_LEN).expect("our read") == &theirs[..],
                "{}\ndata region differs",
                ctx()
            );
        }
    }
    println!("op histogram (by Op index): {counts:?}");
    // every RV64IM operation (Op::Lui ..= Op::Fence) was exercised
    if steps >= 100_000 {
        let n_ops = Op::Fence as usize + 1;
        assert!(
            counts[..n_ops].iter().all(|&c| c > 0),
            "seed {seed}: some operation never generated: {counts:?}"
        );
    }
}

/// Random 32-bit words with the major opcodes of RV64IM: whatever our decoder rejects, unicorn
/// must reject too (no valid RV64IM encoding is missed); whatever it accepts among the
/// non-memory, non-control opcodes must give the same registers (odd field values, e.g.
/// FENCE with arbitrary fm/pred/succ/rs1/rd, or ADDI x0 hints).
#[test]
fn unicorn_agrees_on_random_words() {
    let seed: u64 = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("unicorn_agrees_on_random_words seed = {seed} (replay: ZKRV_SEED={seed})");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut uc = Unicorn::new(Arch::RISCV, Mode::RISCV64).expect("unicorn init");
    uc.mem_map(CODE_MAP.0, CODE_MAP.1, Prot::ALL)
        .expect("map code");
    uc.mem_map(DATA, DATA_LEN, Prot::ALL).expect("map data");
    let prog = Program::from_words(CODE, &[asm::FENCE; 1024]).expect("program");
    let mut vm = Vm::new(&prog, &[]).expect("vm");
    const OPCODES: [u32; 12] = [
        0x37, 0x17, 0x6f, 0x67, 0x63, 0x03, 0x23, 0x13, 0x1b, 0x33, 0x3b, 0x0f,
    ];
    let (mut rejected, mut compared) = (0u64, 0u64);
    for step in 0..100_000u64 {
        let pc = CODE + 4 * rng.gen_range(0..1024u64);
        let opcode = OPCODES[rng.gen_range(0..OPCODES.len())];
        // random fields; bias funct7 towards the values that matter
        let mut word = (rng.gen::<u32>() & !0x7f) | opcode;
        if rng.gen_bool(0.5) {
            word = (word & 0x01ff_ffff)
                | ([0u32, 1, 0x20, 0x21, 0x40, 0x10][rng.gen_range(0..6)] << 25);
        }
        // all registers point into the middle of DATA, so any load/store hits mapped memory
        for i in 1..32 {
            let v = value(&mut rng);
            let v = if matches!(opcode, 0x03 | 0x23) {
                DATA + DATA_LEN / 2
            } else {
                v
            };
            vm.set_reg(i, v);
            uc.reg_write(UC_X0 + i as i32, v).expect("uc reg");
        }
        uc.mem_write(pc, &word.to_le_bytes())
            .expect("uc code write");
        uc.ctl_remove_cache(pc, pc + 4).expect("uc flush");
        assert!(vm.set_code(pc, word));
        vm.set_pc(pc);
        uc.reg_write(UC_PC, pc).expect("uc pc");
        let theirs = uc.emu_start(pc, u64::MAX, 0, 1);
        match decode(word) {
            Err(reason) => {
                rejected += 1;
                assert!(
                    matches!(theirs, Err(uc_error::INSN_INVALID) | Err(uc_error::EXCEPTION)),
                    "seed {seed} step {step}: we reject {word:#010x} ({reason}), unicorn: {theirs:?}"
                );
                assert!(
                    vm.step().is_err(),
                    "seed {seed}: executed rejected {word:#010x}"
                );
            }
            Ok(inst) => {
                if !matches!(opcode, 0x13 | 0x1b | 0x33 | 0x3b | 0x0f) {
                    continue;
                }
                compared += 1;
                theirs.unwrap_or_else(|e| {
                    panic!(
                        "seed {seed} step {step}: {inst:?} ({word:#010x}) fails in unicorn: {e:?}"
                    )
                });
                vm.step()
                    .unwrap_or_else(|e| panic!("seed {seed} step {step}: {word:#010x}: {e}"));
                assert_eq!(
                    uc_regs(&uc),
                    *vm.regs(),
                    "seed {seed} step {step}: {inst:?} ({word:#010x})"
                );
            }
        }
    }
    println!("{rejected} rejected words agreed, {compared} accepted words compared");
    assert!(rejected > 10_000 && compared > 10_000);
}
