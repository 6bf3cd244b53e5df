//! The precompile ecalls (docs/abi.md, "Precompiles"): results against the reference functions, one record
//! event per call, and every bad argument refused with an error naming the call, pc and value.

use zkrv_executor::asm::*;
use zkrv_executor::precompile::{self, KECCAK_F, POSEIDON2, SHA256_COMPRESS};
use zkrv_executor::{execute, ExecOptions, Execution, Program};
use zkrv_executor::{ExecError, PrecompileFault};

const BASE: u64 = 0x10000;

/// Runs `words`, then exit(0), at [`BASE`] with the record on.
fn run_rec(words: &[u32], input: &[u8]) -> Result<Execution, ExecError> {
    let mut v = words.to_vec();
    v.extend(li(17, 93));
    v.push(addi(10, 0, 0));
    v.push(ECALL);
    let prog = Program::from_words(BASE, &v).expect("valid program");
    execute(
        &prog,
        input,
        &ExecOptions {
            record: true,
            ..Default::default()
        },
    )
}

/// Data buffer (stack region: memory there reads as zero).
const BUF: i64 = 0x7ff0_0000;
/// sha256's block buffer.
const BLOCK: i64 = 0x7ff0_1000;

/// `read(0, buf, len)`.
fn read(buf: i64, len: i64) -> Vec<u32> {
    let mut w = li(10, 0);
    w.extend(li(11, buf));
    w.extend(li(12, len));
    w.extend(li(17, 63));
    w.push(ECALL);
    w
}

/// `write(1, buf, len)`.
fn write(buf: i64, len: i64) -> Vec<u32> {
    let mut w = li(10, 1);
    w.extend(li(11, buf));
    w.extend(li(12, len));
    w.extend(li(17, 64));
    w.push(ECALL);
    w
}

/// The precompile `num` with a0 = `a0`, a1 = `a1`; then x5 = a0 (the result).
fn call(num: u64, a0: i64, a1: i64) -> Vec<u32> {
    let mut w = li(10, a0);
    w.extend(li(11, a1));
    w.extend(li(17, num as i64));
    w.push(ECALL);
    w.push(addi(5, 10, 0));
    w
}

/// Fills `[BUF, BUF + n)` (and the sha256 block) from the input, calls `num`, writes the state back out.
fn run(num: u64, state_len: i64, input: &[u8]) -> (Vec<u8>, zkrv_executor::Record) {
    let mut w = read(BUF, state_len);
    if num == SHA256_COMPRESS {
        w.extend(read(BLOCK, 64));
    }
    w.extend(call(num, BUF, BLOCK));
    w.extend(write(BUF, state_len));
    let e = run_rec(&w, input).unwrap_or_else(|e| panic!("{e}"));
    let rec = e.record.unwrap();
    assert_eq!(rec.final_regs[5], 0, "a precompile returns a0 = 0");
    (e.public_output, rec)
}

fn lanes(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn pseudo_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn sha256_compress_matches_fips_abc() {
    // SHA-256("abc") = one block: "abc", 0x80, zeros, bit length 24 (FIPS 180-4 example B.1).
    let mut block = [0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 24;
    let mut h = precompile::SHA256_IV;
    precompile::sha256_compress(&mut h, &block);
    assert_eq!(
        h,
        [
            0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223, 0xb00361a3, 0x96177a9c, 0xb410ff61,
            0xf20015ad
        ]
    );
}

#[test]
fn keccak_f_of_zero_matches_the_keccak_team_vector() {
    // Keccak-f[1600] of the zero state (KeccakF-1600-IntermediateValues.txt).
    let mut s = [0u64; 25];
    precompile::keccak_f(&mut s);
    assert_eq!((s[0], s[1]), (0xf1258f7940e1dde7, 0x84d5ccf933c0478a));
}

#[test]
fn keccak_f_runs_in_place_and_is_recorded() {
    let input = pseudo_bytes(1, 200);
    let (out, rec) = run(KECCAK_F, 200, &input);
    let mut want: [u64; 25] = lanes(&input).try_into().unwrap();
    let before = want;
    precompile::keccak_f(&mut want);
    assert_eq!(lanes(&out), want);
    assert_eq!(rec.keccak.len(), 1);
    let ev = rec.keccak[0];
    assert_eq!(
        (ev.state_ptr, ev.input, ev.output),
        (BUF as u64, before, want)
    );
    // The k-th ECALL is syscalls[k]: read, the call, write (exit last).
    let sc = rec.syscalls[1];
    assert_eq!(
        (sc.num, sc.cycle, sc.ret, sc.data_len),
        (KECCAK_F, ev.cycle, 0, 0)
    );
    assert_eq!(rec.cycles[ev.cycle as usize].word, ECALL);
    assert!(rec.pages.contains(&(BUF as u32)));
    assert!(rec.sha256.is_empty() && rec.poseidon2.is_empty());
}

#[test]
fn sha256_compress_runs_in_place_and_is_recorded() {
    let input = pseudo_bytes(2, 96);
    let (out, rec) = run(SHA256_COMPRESS, 32, &input);
    let mut h = [0u32; 8];
    for (d, c) in h.iter_mut().zip(input[..32].chunks_exact(4)) {
        *d = u32::from_le_bytes(c.try_into().unwrap());
    }
    let state_in = h;
    let block: [u8; 64] = input[32..].try_into().unwrap();
    precompile::sha256_compress(&mut h, &block);
    let got: Vec<u32> = out
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, h);
    assert_eq!(rec.sha256.len(), 1);
    let ev = rec.sha256[0];
    assert_eq!(
        (
            ev.state_ptr,
            ev.block_ptr,
            ev.state_in,
            ev.block,
            ev.state_out
        ),
        (BUF as u64, BLOCK as u64, state_in, block, h)
    );
    assert_eq!(rec.syscalls[2].num, SHA256_COMPRESS);
    assert!(rec.pages.contains(&(BUF as u32)) && rec.pages.contains(&(BLOCK as u32)));
}

#[test]
fn poseidon2_runs_in_place_and_is_recorded() {
    let input: Vec<u8> = (0..8u64)
        .flat_map(|i| (i * 0x1234_5678_9abc + 7).to_le_bytes())
        .collect();
    let (out, rec) = run(POSEIDON2, 64, &input);
    let mut want: [u64; 8] = lanes(&input).try_into().unwrap();
    let before = want;
    precompile::poseidon2(&mut want);
    assert_eq!(lanes(&out), want);
    assert_eq!(rec.poseidon2.len(), 1);
    let ev = rec.poseidon2[0];
    assert_eq!(
        (ev.state_ptr, ev.input, ev.output),
        (BUF as u64, before, want)
    );
    // p - 1 is canonical.
    let top: Vec<u8> = (0..8)
        .flat_map(|_| (precompile::GOLDILOCKS_P - 1).to_le_bytes())
        .collect();
    let (out, _) = run(POSEIDON2, 64, &top);
    let mut want = [precompile::GOLDILOCKS_P - 1; 8];
    precompile::poseidon2(&mut want);
    assert_eq!(lanes(&out), want);
}

/// Runs one bad call and returns its fault, checking the error's call name, number and pc.
fn refused(num: u64, a0: i64, a1: i64, input: &[u8]) -> PrecompileFault {
    let mut w = read(BUF, input.len() as i64);
    let at = w.len() as u64
        + li(10, a0).len() as u64
        + li(11, a1).len() as u64
        + li(17, num as i64).len() as u64;
    w.extend(call(num, a0, a1));
    match run_rec(&w, input).unwrap_err() {
        ExecError::Precompile {
            pc,
            num: n,
            call,
            fault,
            ..
        } => {
            assert_eq!(n, num);
            assert_eq!(Some(call), precompile::precompile_name(num));
            assert_eq!(pc, BASE + 4 * at, "pc of the ECALL");
            let msg = ExecError::Precompile {
                pc,
                cycle: 0,
                num,
                call,
                fault: fault.clone(),
            }
            .to_string();
            let fault = *fault;
            assert!(
                msg.contains(call) && msg.contains(&format!("{pc:#x}")),
                "{msg}"
            );
            fault
        }
        e => panic!("expected a precompile error, got {e}"),
    }
}

#[test]
fn bad_pointers_are_refused() {
    for (num, len) in [(KECCAK_F, 200u64), (SHA256_COMPRESS, 32), (POSEIDON2, 64)] {
        assert_eq!(
            refused(num, BUF + 4, BLOCK, &[]),
            PrecompileFault::Misaligned {
                reg: "a0 (state)",
                addr: BUF as u64 + 4
            }
        );
        for addr in [0u64, 0x800, 0x8000_0000 - 8, 1 << 32, u64::MAX - 7] {
            let f = refused(num, addr as i64, BLOCK, &[]);
            assert_eq!(
                f,
                PrecompileFault::OutOfBounds {
                    reg: "a0 (state)",
                    addr,
                    len
                },
                "{num:#x} at {addr:#x}"
            );
            assert!(f.to_string().contains(&format!("{addr:#x}")));
        }
    }
    assert_eq!(
        refused(SHA256_COMPRESS, BUF, BLOCK + 1, &[]),
        PrecompileFault::Misaligned {
            reg: "a1 (block)",
            addr: BLOCK as u64 + 1
        }
    );
    assert_eq!(
        refused(SHA256_COMPRESS, BUF, 1 << 32, &[]),
        PrecompileFault::OutOfBounds {
            reg: "a1 (block)",
            addr: 1 << 32,
            len: 64
        }
    );
    // keccak_f and poseidon2 do not read a1.
    let mut w = call(POSEIDON2, BUF, 1);
    w.extend(call(KECCAK_F, BUF, -1));
    run_rec(&w, &[]).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn overlapping_sha256_state_and_block_are_refused() {
    for (state, block) in [(BUF, BUF), (BUF + 56, BUF), (BUF, BUF + 24), (BUF + 8, BUF)] {
        assert_eq!(
            refused(SHA256_COMPRESS, state, block, &[]),
            PrecompileFault::Overlap {
                state: state as u64,
                block: block as u64
            }
        );
    }
    // Adjacent is fine.
    let mut w = call(SHA256_COMPRESS, BUF + 64, BUF);
    w.extend(call(SHA256_COMPRESS, BUF, BUF + 32));
    run_rec(&w, &[]).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn non_canonical_poseidon2_elements_are_refused() {
    for (index, value) in [
        (0usize, precompile::GOLDILOCKS_P),
        (7, u64::MAX),
        (3, precompile::GOLDILOCKS_P + 5),
    ] {
        let mut input = vec![0u8; 64];
        input[8 * index..8 * index + 8].copy_from_slice(&value.to_le_bytes());
        let f = refused(POSEIDON2, BUF, 0, &input);
        assert_eq!(f, PrecompileFault::NonCanonical { index, value });
        assert!(f.to_string().contains(&format!("{value:#018x}")), "{f}");
    }
}
