//! guests/bin/precompiles.elf (guests/c/programs/precompiles.c): the guest checks every precompile against
//! its own software version and exits 0; its output equals the host's references; its poseidon2 part, and all
//! three precompiles together (KECCAKF, SHA256, POSEIDON2), prove and verify on the CPU. The accelerated
//! hash guests (guests/bin/sha256_accel.elf, keccak_accel.elf: the sha256 and keccak guests on the
//! drop-in sha2 / tiny-keccak crates) prove and verify too, with the host's digest as output.

use tiny_keccak::{Hasher, Keccak};
use zkrv_executor::precompile::{self, SHA256_IV};
use zkrv_executor::{execute, ExecOptions, Program};
use zkrv_machine::{prove, verify};
use zkrv_stark::StarkConfig;

fn guest() -> Program {
    load("precompiles")
}

/// guests/bin/<name>.elf.
fn load(name: &str) -> Program {
    let path = format!("{}/../../guests/bin/{name}.elf", env!("CARGO_MANIFEST_DIR"));
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

fn sha256(msg: &[u8]) -> [u8; 32] {
    let mut padded = msg.to_vec();
    padded.push(0x80);
    while padded.len() % 64 != 56 {
        padded.push(0);
    }
    padded.extend_from_slice(&(msg.len() as u64 * 8).to_be_bytes());
    let mut h = SHA256_IV;
    for b in padded.chunks_exact(64) {
        precompile::sha256_compress(&mut h, b.try_into().unwrap());
    }
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(h) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// The guest's output for mask 7 and `msg` (see precompiles.c).
fn expected(msg: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut k = Keccak::v256();
    k.update(msg);
    let mut d = [0u8; 32];
    k.finalize(&mut d);
    out.extend_from_slice(&d);
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ msg.len() as u64;
    let mut a = [0u64; 25];
    for l in a.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *l = x;
    }
    precompile::keccak_f(&mut a);
    out.extend(a.iter().flat_map(|l| l.to_le_bytes()));
    out.extend_from_slice(&sha256(msg));
    let mut block = [0u8; 64];
    let n = msg.len().min(64);
    block[..n].copy_from_slice(&msg[..n]);
    let mut h = SHA256_IV;
    precompile::sha256_compress(&mut h, &block);
    out.extend(h.iter().flat_map(|w| w.to_le_bytes()));
    let mut s: [u64; 8] = std::array::from_fn(|i| i as u64);
    precompile::poseidon2(&mut s);
    out.extend(s.iter().flat_map(|v| v.to_le_bytes()));
    for _ in 0..3 {
        precompile::poseidon2(&mut s);
    }
    out.extend(s.iter().flat_map(|v| v.to_le_bytes()));
    out
}

#[test]
fn the_guest_agrees_with_its_software_versions_and_the_host() {
    let p = guest();
    // Message lengths around the block sizes (SHA-256: 55/56/64, Keccak-256: 135/136/137).
    for len in [0usize, 3, 55, 56, 63, 64, 119, 135, 136, 137, 1000] {
        let msg: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
        let mut input = vec![7u8];
        input.extend_from_slice(&msg);
        let run = execute(&p, &input, &ExecOptions::default()).unwrap();
        assert_eq!(run.exit_code, 0, "len {len}: the guest saw a mismatch");
        assert_eq!(run.public_output, expected(&msg), "len {len}");
    }
}

#[test]
fn the_poseidon2_part_proves_and_verifies() {
    let p = guest();
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    let (st, proof) = prove(&p, b"\x04abc", &config).unwrap();
    assert_eq!(st.exit_code, 0);
    assert_eq!(st.output.len(), 128);
    verify(&p, &st, &proof, &config, 0).unwrap();
}

#[test]
fn all_three_precompiles_prove_and_verify() {
    // Mask 7: keccak_f (Keccak-256 of "abc" and one permutation), sha256_compress (SHA-256 of "abc" and one
    // compression), poseidon2; the guest checks each against its software version (exit 0).
    let p = guest();
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    let (st, proof) = prove(&p, b"\x07abc", &config).unwrap();
    assert_eq!(st.exit_code, 0);
    assert_eq!(st.output, expected(b"abc"));
    verify(&p, &st, &proof, &config, 0).unwrap();
}

#[test]
fn accel_hash_guests_prove_and_verify() {
    // 137 bytes: three SHA-256 compressions (two blocks and the padding block), two Keccak-f permutations
    // (one full 136-byte block, then the padded one).
    let msg: Vec<u8> = (0..137u32).map(|i| (i * 73 + 11) as u8).collect();
    let mut k = Keccak::v256();
    k.update(&msg);
    let mut keccak = [0u8; 32];
    k.finalize(&mut keccak);
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    for (name, want) in [("sha256_accel", sha256(&msg)), ("keccak_accel", keccak)] {
        let p = load(name);
        let (st, proof) = prove(&p, &msg, &config).unwrap();
        assert_eq!(st.exit_code, 0, "{name}");
        assert_eq!(st.output, want, "{name}: the host's digest");
        verify(&p, &st, &proof, &config, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
