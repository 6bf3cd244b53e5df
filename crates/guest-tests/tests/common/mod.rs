//! Shared by `outputs.rs` and `qemu.rs`: loading and running the prebuilt guests, the test inputs, and the
//! host's own model of every guest (what it must output and its exit code for a given input).
#![allow(dead_code)]

use std::path::PathBuf;

use num_bigint::BigUint;
use sha2::{Digest, Sha256};
use tiny_keccak::{Hasher, Keccak};
use zkrv_executor::{execute, ExecOptions, Execution, Program};

/// Cycle limit for one guest run in the tests (the largest case, SHA-256 of 1 MiB, needs far less).
pub const MAX_CYCLES: u64 = 1 << 30;

/// Bytes of the `.heap` section reserved by guests/link.ld (`__heap_size`).
pub const GUEST_HEAP_BYTES: u64 = 1 << 20;

/// Every prebuilt guest in guests/bin.
pub const GUESTS: [&str; 10] = [
    "fibonacci",
    "exitcode",
    "sort",
    "matmul",
    "modexp",
    "rv64im",
    "sha256",
    "keccak",
    "rustalloc",
    "typedio",
];

/// The precompile guests (zkrv only, not under qemu) and their software twins: the twin's source built with
/// `sha2` / `tiny-keccak` patched to the drop-ins of guests/rust/dropin (guests/rust/accel), so the same
/// input gives the same output.
pub const ACCEL_GUESTS: [(&str, &str); 2] =
    [("sha256_accel", "sha256"), ("keccak_accel", "keccak")];

/// The `guests/` folder of this repository.
pub fn guests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../guests")
}

/// `guests/bin/<name>.elf` in this repository.
pub fn elf_path(name: &str) -> PathBuf {
    guests_dir().join("bin").join(format!("{name}.elf"))
}

/// Reads and loads `guests/bin/<name>.elf`.
pub fn load(name: &str) -> Program {
    let path = elf_path(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Program::from_elf(&bytes).unwrap_or_else(|e| panic!("load {}: {e}", path.display()))
}

/// Runs a guest on `input` with zkrv's executor (no record); panics naming the guest on an execution error.
pub fn run(name: &str, program: &Program, input: &[u8]) -> Execution {
    let opts = ExecOptions {
        max_cycles: MAX_CYCLES,
        record: false,
    };
    execute(program, input, &opts)
        .unwrap_or_else(|e| panic!("{name} on a {}-byte input: {e}", input.len()))
}

/// xorshift64 (13, 7, 17) as in guests/c/programs/xorshift.h: the state starts at the seed
/// (0x9E3779B97F4A7C15 if the seed is 0), each call returns the updated state.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        let mut v = self.0;
        v ^= v << 13;
        v ^= v >> 7;
        v ^= v << 17;
        self.0 = v;
        v
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// FNV-1a over u64 words, as the sort and matmul guests compute it.
pub fn checksum(words: &[u64]) -> u64 {
    words.iter().fold(0xCBF2_9CE4_8422_2325, |h, &v| {
        (h ^ v).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Concatenates u64 words as little-endian bytes.
pub fn le_words(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The i-th little-endian u64 of `input` (bytes [8i, 8i+8)), or `default` if the input is shorter.
fn input_u64(input: &[u8], i: usize, default: u64) -> u64 {
    match input.get(8 * i..8 * i + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")),
        None => default,
    }
}

/// The input of the modexp guest: three u32 LE lengths, then base, exponent and modulus big-endian.
pub fn modexp_input(base: &[u8], exp: &[u8], modulus: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for part in [base, exp, modulus] {
        v.extend_from_slice(&(part.len() as u32).to_le_bytes());
    }
    for part in [base, exp, modulus] {
        v.extend_from_slice(part);
    }
    v
}

/// What a guest must produce on `input`: (exit code, public output, debug output if it is fixed).
/// `rv64im` is not modelled here (see [`rv64im_expected`]).
pub fn expected(name: &str, input: &[u8]) -> (u32, Vec<u8>) {
    match name {
        "fibonacci" => {
            let n = input_u64(input, 0, 10);
            let (mut a, mut b) = (0u64, 1u64);
            for _ in 0..n {
                (a, b) = (b, a.wrapping_add(b));
            }
            (0, le_words(&[a]))
        }
        "exitcode" => (42, b"bye".to_vec()),
        "sort" => {
            let n = input_u64(input, 0, 1000);
            let seed = input_u64(input, 1, 1);
            if n > 1 << 24 || n * 8 >= GUEST_HEAP_BYTES {
                return (1, Vec::new());
            }
            let mut rng = XorShift::new(seed);
            let mut a: Vec<u64> = (0..n).map(|_| rng.next()).collect();
            a.sort_unstable();
            let first = a.first().copied().unwrap_or(0);
            let last = a.last().copied().unwrap_or(0);
            (0, le_words(&[n, checksum(&a), first, last]))
        }
        "matmul" => {
            let n = input_u64(input, 0, 16);
            let seed = input_u64(input, 1, 1);
            if n > 4096 || 3 * n * n * 8 + 8 >= GUEST_HEAP_BYTES {
                return (1, Vec::new());
            }
            let n = n as usize;
            let mut rng = XorShift::new(seed);
            let a: Vec<u64> = (0..n * n).map(|_| rng.next()).collect();
            let b: Vec<u64> = (0..n * n).map(|_| rng.next()).collect();
            let mut c = vec![0u64; n * n];
            for i in 0..n {
                for k in 0..n {
                    for j in 0..n {
                        c[i * n + j] =
                            c[i * n + j].wrapping_add(a[i * n + k].wrapping_mul(b[k * n + j]));
                    }
                }
            }
            let first = c.first().copied().unwrap_or(0);
            let last = c.last().copied().unwrap_or(0);
            (0, le_words(&[checksum(&c), first, last]))
        }
        "modexp" => expected_modexp(input),
        "typedio" => expected_typedio(input),
        "rustalloc" => {
            let n = input_u64(input, 0, 1000);
            let seed = input_u64(input, 1, 1);
            if n > 65_536 {
                return (101, Vec::new()); // panics: too large, or out of heap
            }
            let mut rng = XorShift::new(seed);
            let values: Vec<u64> = (0..n).map(|_| rng.next()).collect();
            let mut counts = std::collections::BTreeMap::<u64, u64>::new();
            for v in &values {
                *counts.entry(v % 97).or_insert(0) += 1;
            }
            let pairs: Vec<u64> = counts.iter().flat_map(|(&k, &c)| [k, c]).collect();
            let mut out = le_words(&[checksum(&values), counts.len() as u64, checksum(&pairs)]);
            out.extend_from_slice(format!("n={n} seed={seed}").as_bytes());
            (0, out)
        }
        "sha256" | "sha256_accel" => (0, Sha256::digest(input).to_vec()),
        "keccak" | "keccak_accel" => {
            let mut k = Keccak::v256();
            k.update(input);
            let mut out = [0u8; 32];
            k.finalize(&mut out);
            (0, out.to_vec())
        }
        _ => panic!("no host model for guest {name}"),
    }
}

fn expected_modexp(input: &[u8]) -> (u32, Vec<u8>) {
    let len = |i: usize| {
        input
            .get(4 * i..4 * i + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4")) as usize)
    };
    let (Some(bl), Some(el), Some(ml)) = (len(0), len(1), len(2)) else {
        return (1, Vec::new());
    };
    if bl > 512 || el > 512 || ml > 512 {
        return (2, Vec::new());
    }
    let body = &input[12..];
    if body.len() < bl + el + ml {
        return (1, Vec::new());
    }
    let base = BigUint::from_bytes_be(&body[..bl]);
    let exp = BigUint::from_bytes_be(&body[bl..bl + el]);
    let m = BigUint::from_bytes_be(&body[bl + el..bl + el + ml]);
    let mut out = vec![0u8; ml];
    if m != BigUint::from(0u32) {
        let r = base.modpow(&exp, &m).to_bytes_be();
        if r != [0] {
            out[ml - r.len()..].copy_from_slice(&r);
        }
    }
    (0, out)
}

/// The typed values of the typedio guest (guests/rust/typedio/src/main.rs; docs/abi.md "Typed I/O").
#[derive(serde::Serialize, serde::Deserialize)]
pub struct TypedRequest {
    pub name: String,
    pub values: Vec<i64>,
    pub scale: i32,
    pub tag: Option<[u8; 4]>,
}

#[derive(serde::Serialize)]
struct TypedSummary {
    greeting: String,
    count: u32,
    scaled_sum: i64,
    min: Option<i64>,
    max: Option<i64>,
    tag: Option<[u8; 4]>,
}

/// One typed frame: `u32` LE length, then the postcard bytes.
pub fn typed_frame<T: serde::Serialize>(v: &T) -> Vec<u8> {
    let body = postcard::to_allocvec(v).expect("encodes");
    let mut out = (body.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// typedio: a typed request, then a u64 salt (default 0); a malformed request exits 103 with no output.
fn expected_typedio(input: &[u8]) -> (u32, Vec<u8>) {
    let frame = input.get(..4).and_then(|h| {
        let len = u32::from_le_bytes(h.try_into().expect("4")) as usize;
        input.get(4..4 + len)
    });
    let Some(body) = frame else {
        return (103, Vec::new());
    };
    let req: TypedRequest = match postcard::take_from_bytes(body) {
        Ok((r, [])) => r,
        _ => return (103, Vec::new()),
    };
    let rest = &input[4 + body.len()..];
    let salt = input_u64(rest, 0, 0);
    let summary = TypedSummary {
        greeting: format!("hello, {}", req.name),
        count: req.values.len() as u32,
        scaled_sum: req.values.iter().fold(0i64, |s, v| {
            s.wrapping_add(v.wrapping_mul(req.scale as i64))
        }),
        min: req.values.iter().copied().min(),
        max: req.values.iter().copied().max(),
        tag: req.tag,
    };
    let mut out = typed_frame(&summary);
    out.extend_from_slice(&salt.to_le_bytes());
    (0, out)
}

/// The inputs every guest is run on (by both test files). Kept small: the whole suite runs in seconds.
pub fn cases(name: &str) -> Vec<Vec<u8>> {
    let mut rng = XorShift::new(0x5EED_0001);
    let pair = |a: u64, b: u64| le_words(&[a, b]);
    match name {
        "fibonacci" => {
            let mut v: Vec<Vec<u8>> = [0u64, 1, 2, 10, 50, 93, 94, 1000, 100_000]
                .iter()
                .map(|&n| le_words(&[n]))
                .collect();
            v.push(Vec::new()); // default n = 10
            v.push(vec![5, 0, 0]); // short input: default n
            v
        }
        "exitcode" => vec![Vec::new(), b"ignored".to_vec()],
        "sort" => vec![
            pair(0, 1),
            pair(1, 0),
            pair(2, 5),
            pair(7, 3),
            pair(1000, 1),
            pair(5000, 0xDEAD_BEEF),
            Vec::new(),
            le_words(&[3]),
            pair(1 << 20, 1), // 8 MiB of values: more than the guest heap, exit 1
            pair(1 << 40, 1), // rejected before allocating, exit 1
        ],
        "matmul" => vec![
            pair(0, 1),
            pair(1, 7),
            pair(3, 2),
            pair(16, 1),
            pair(33, 99),
            Vec::new(),
            pair(300, 1), // 2 MiB of matrices: more than the guest heap, exit 1
        ],
        "modexp" => {
            let mut v = vec![
                modexp_input(&[3], &[5], &[7]),
                modexp_input(&[], &[], &[7]),      // 0^0 mod 7 = 1
                modexp_input(&[5], &[0], &[1]),    // mod 1 = 0
                modexp_input(&[2], &[9], &[0, 0]), // m = 0: zeros
                modexp_input(&[], &[], &[]),
                modexp_input(&[0xFF; 40], &[0xFF; 8], &[0xFF; 16]),
                modexp_input(&[1; 513], &[1], &[1]), // length over 512: exit 2
                vec![1, 0, 0, 0, 1, 0],              // truncated: exit 1
            ];
            for bytes in [4usize, 9, 17, 32, 128] {
                let m = rng.bytes(bytes);
                let base = rng.bytes(bytes + 3);
                let exp = rng.bytes(bytes.min(32));
                v.push(modexp_input(&base, &exp, &m));
            }
            // Moduli whose top limbs force the quotient-digit corrections of Knuth's algorithm D.
            let mut m = vec![0xFFu8; 24];
            m[8..16].fill(0);
            v.push(modexp_input(&[0xFF; 47], &[0xFF; 8], &m));
            let mut m = vec![0x80u8; 1];
            m.extend_from_slice(&[0; 31]);
            m[31] = 1;
            v.push(modexp_input(&[0xFF; 64], &[0xFF; 8], &m));
            v
        }
        "rv64im" => vec![Vec::new()],
        "typedio" => {
            let req = |name: &str, values: Vec<i64>, scale: i32, tag: Option<[u8; 4]>| {
                typed_frame(&TypedRequest {
                    name: name.into(),
                    values,
                    scale,
                    tag,
                })
            };
            let mut long = req("", (0..3000).map(|i| i * 1_000_003 - 77).collect(), 9, None);
            long.extend_from_slice(&u64::MAX.to_le_bytes());
            let mut bad_utf8 = req("é", vec![1], 1, None);
            bad_utf8[6] = 0x28; // the second byte of "é"
            let mut salted = req("salted", vec![i64::MIN, i64::MAX, -1], -7, Some(*b"tag!"));
            salted.extend_from_slice(&0x0123_4567_89ab_cdefu64.to_le_bytes());
            vec![
                req("zkrv", vec![3, -5, 8], 10, Some(*b"demo")), // no salt: 0
                salted,
                long, // a 4 KiB+ frame
                req("x", Vec::new(), 0, None),
                Vec::new(),            // no frame: exit 103
                vec![200, 0, 0, 0, 1], // truncated frame: exit 103
                bad_utf8,              // exit 103
            ]
        }
        "rustalloc" => vec![
            Vec::new(),
            pair(0, 0),
            pair(1, 7),
            pair(50_000, 3),
            pair(65_536, 7),
            pair(65_537, 7),    // Vec capacity 2^17 words: out of heap, panic
            pair(2_000_000, 1), // explicit panic
        ],
        "sha256" | "keccak" => {
            let mut v: Vec<Vec<u8>> = [0usize, 55, 56, 64, 136, 137, 16385, 100_000]
                .iter()
                .map(|&len| rng.bytes(len))
                .collect();
            v.push(b"abc".to_vec());
            v
        }
        _ => panic!("no cases for guest {name}"),
    }
}

/// The operand values of the rv64im guest (VALUES in guests/c/programs/rv64im.c).
pub const RV_VALUES: [u64; 16] = [
    0,
    1,
    2,
    u64::MAX,
    u64::MAX - 1,
    31,
    32,
    63,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFF,
    0xFFFF_FFFF_8000_0000,
    0x7FFF_FFFF_FFFF_FFFF,
    0x8000_0000_0000_0000,
    0x0123_4567_89AB_CDEF,
    0xFEDC_BA98_7654_3211,
];

fn sext32(x: u32) -> u64 {
    x as i32 as i64 as u64
}

/// RV64IM semantics of the rv64im guest's register-register ops, in its `rr_ops` order.
fn rr(op: usize, a: u64, b: u64) -> u64 {
    let (sa, sb) = (a as i64, b as i64);
    let (a32, b32) = (a as u32, b as u32);
    match op {
        0 => a.wrapping_add(b),
        1 => a.wrapping_sub(b),
        2 => a << (b & 63),
        3 => (sa < sb) as u64,
        4 => (a < b) as u64,
        5 => a ^ b,
        6 => a >> (b & 63),
        7 => (sa >> (b & 63)) as u64,
        8 => a | b,
        9 => a & b,
        10 => sext32(a32.wrapping_add(b32)),
        11 => sext32(a32.wrapping_sub(b32)),
        12 => sext32(a32 << (b & 31)),
        13 => sext32(a32 >> (b & 31)),
        14 => ((a32 as i32) >> (b & 31)) as i64 as u64,
        15 => a.wrapping_mul(b),
        16 => ((sa as i128 * sb as i128) >> 64) as u64,
        17 => ((sa as i128 * b as i128) >> 64) as u64,
        18 => ((a as u128 * b as u128) >> 64) as u64,
        19 => {
            if b == 0 {
                u64::MAX
            } else {
                sa.wrapping_div(sb) as u64
            }
        }
        20 => a.checked_div(b).unwrap_or(u64::MAX),
        21 => {
            if b == 0 {
                a
            } else {
                sa.wrapping_rem(sb) as u64
            }
        }
        22 => {
            if b == 0 {
                a
            } else {
                a % b
            }
        }
        23 => sext32(a32.wrapping_mul(b32)),
        24 => {
            if b32 == 0 {
                u64::MAX
            } else {
                sext32((a32 as i32).wrapping_div(b32 as i32) as u32)
            }
        }
        25 => a32.checked_div(b32).map_or(u64::MAX, sext32),
        26 => {
            if b32 == 0 {
                sext32(a32)
            } else {
                sext32((a32 as i32).wrapping_rem(b32 as i32) as u32)
            }
        }
        27 => {
            if b32 == 0 {
                sext32(a32)
            } else {
                sext32(a32 % b32)
            }
        }
        _ => unreachable!("28 ops"),
    }
}

/// Byte i of the rv64im guest's fill_pattern(p, n, k).
fn pattern(i: usize, k: u8) -> u8 {
    (0x81usize + 0x3B * i + k as usize) as u8
}

/// lb lbu lh lhu lw lwu ld of the little-endian bytes at `mem[p..]`.
fn loads(mem: &[u8], p: usize) -> [u64; 7] {
    let le = |n: usize| {
        mem[p..p + n]
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | b as u64)
    };
    [
        mem[p] as i8 as i64 as u64,
        mem[p] as u64,
        le(2) as u16 as i16 as i64 as u64,
        le(2),
        le(4) as u32 as i32 as i64 as u64,
        le(4),
        le(8),
    ]
}

/// The rv64im guest's public output as the ISA defines it, with `known[i] == false` for the bytes that
/// depend on code addresses (the four raw AUIPC results), which only a comparison with qemu can check.
pub fn rv64im_expected() -> (Vec<u8>, Vec<bool>) {
    let mut out: Vec<u8> = Vec::new();
    let mut unknown = Vec::new(); // byte ranges
    let words = |out: &mut Vec<u8>, w: &[u64]| out.extend(le_words(w));
    // 1. register-register
    for op in 0..28 {
        for &a in &RV_VALUES {
            for &b in &RV_VALUES {
                words(&mut out, &[rr(op, a, b)]);
            }
        }
    }
    // 2. branches
    for op in 0..6 {
        for &a in &RV_VALUES {
            for &b in &RV_VALUES {
                let (sa, sb) = (a as i64, b as i64);
                let taken = [a == b, a != b, sa < sb, sa >= sb, a < b, a >= b][op];
                out.push(taken as u8);
            }
        }
    }
    // 3. register-immediate
    let imms: [i64; 8] = [0, 1, -1, 2047, -2048, 0x555, -0x556, 0x80];
    for op in 0..7 {
        for &a in &RV_VALUES {
            for &imm in &imms {
                let i = imm as u64;
                let r = match op {
                    0 => a.wrapping_add(i),
                    1 => ((a as i64) < imm) as u64,
                    2 => (a < i) as u64,
                    3 => a ^ i,
                    4 => a | i,
                    5 => a & i,
                    _ => sext32(a.wrapping_add(i) as u32),
                };
                words(&mut out, &[r]);
            }
        }
    }
    // 4. immediate shifts
    for op in 0..3 {
        for &a in &RV_VALUES {
            for s in [0u32, 1, 31, 32, 63] {
                let r = [a << s, a >> s, ((a as i64) >> s) as u64][op];
                words(&mut out, &[r]);
            }
        }
    }
    for op in 0..3 {
        for &a in &RV_VALUES {
            for s in [0u32, 1, 15, 31] {
                let a32 = a as u32;
                let r = [
                    sext32(a32 << s),
                    sext32(a32 >> s),
                    ((a32 as i32) >> s) as i64 as u64,
                ][op];
                words(&mut out, &[r]);
            }
        }
    }
    // 5. loads at every misalignment: ld_all does its 7 loads 5 times at the same address
    let mut pages: Vec<u8> = (0..8192).map(|i| pattern(i, 0)).collect();
    for off in 0..16 {
        for _ in 0..5 {
            words(&mut out, &loads(&pages, 2048 + off));
        }
    }
    // 6. stores at every misalignment
    let v: u64 = 0xF1E2_D3C4_B5A6_9788;
    for width in [1usize, 2, 4, 8] {
        for off in 0..16 {
            let mut buf: Vec<u8> = (0..32).map(|i| pattern(i, 7)).collect();
            buf[off..off + width].copy_from_slice(&v.to_le_bytes()[..width]);
            out.extend_from_slice(&buf);
        }
    }
    // 7. across a page boundary
    for (i, b) in pages.iter_mut().enumerate() {
        *b = pattern(i, 3);
    }
    for back in 1..=7 {
        for _ in 0..5 {
            words(&mut out, &loads(&pages, 4096 - back));
        }
    }
    pages[4093..4101].copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
    out.extend_from_slice(&pages[4088..4104]);
    // 8. lui (6), auipc (4, raw: addresses), auipc minus its own address; jumps; x0 and fence
    let lui = |imm: u32| sext32(imm << 12);
    words(
        &mut out,
        &[
            lui(0),
            lui(1),
            lui(0x7FFFF),
            lui(0x80000),
            lui(0xFFFFF),
            lui(0x12345),
        ],
    );
    unknown.push(out.len()..out.len() + 32);
    words(&mut out, &[0; 4]);
    words(&mut out, &[0x1234_5000]);
    words(&mut out, &[4, 4, 4, 4, 55, 6, 6, 0]);
    words(&mut out, &[0, 0, 0, 0, 0, 77]);
    let mut known = vec![true; out.len()];
    for r in unknown {
        known[r].fill(false);
    }
    (out, known)
}

/// Panics with the first differing byte (and its 8-byte word) if `actual` differs from `expected` on a
/// known byte.
pub fn assert_masked_eq(what: &str, actual: &[u8], expected: &[u8], known: &[bool]) {
    assert_eq!(actual.len(), expected.len(), "{what}: output length");
    if let Some(i) = (0..expected.len()).find(|&i| known[i] && actual[i] != expected[i]) {
        let w = i / 8 * 8;
        panic!(
            "{what}: byte {i} differs (word at {w}: got {:02x?}, want {:02x?})",
            &actual[w..(w + 8).min(actual.len())],
            &expected[w..(w + 8).min(expected.len())]
        );
    }
}
