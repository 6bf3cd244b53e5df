//! Precompile calls proven end to end on the CPU backend: a guest reads a state, calls the precompile twice
//! in place, writes the state out; the proof verifies with the precompile's output as the public output,
//! the whole witness passes the checker, and a tampered precompile cell of the machine witness is rejected.

use zkrv_executor::asm::*;
use zkrv_executor::precompile::{self, KECCAK_F, SHA256_COMPRESS};
use zkrv_executor::Program;
use zkrv_machine::tables::keccakf::{KeccakfCols, NUM_KECCAKF_COLS};
use zkrv_machine::tables::sha256::{Sha256Cols, NUM_SHA256_COLS, SHA256_ROWS};
use zkrv_machine::{prove, verify, witness_for, Table, WitnessChecker};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::StarkConfig;

const BASE: u64 = 0x10000;
/// The state buffer (stack region).
const BUF: i64 = 0x7ff0_0000;

fn ecall(w: &mut Vec<u32>, num: i64, a0: i64, a1: i64, a2: i64) {
    w.extend(li(10, a0));
    w.extend(li(11, a1));
    w.extend(li(12, a2));
    w.extend(li(17, num));
    w.push(ECALL);
}

/// read(0, BUF, read_len); `calls` x precompile `num`(BUF, a1); write(1, BUF, out_len); exit(0).
fn program(num: u64, read_len: i64, a1: i64, out_len: i64, calls: usize) -> Program {
    let mut w = Vec::new();
    ecall(&mut w, 63, 0, BUF, read_len);
    for _ in 0..calls {
        ecall(&mut w, num as i64, BUF, a1, 0);
    }
    ecall(&mut w, 64, 1, BUF, out_len);
    ecall(&mut w, 93, 0, 0, 0);
    Program::from_words(BASE, &w).expect("valid program")
}

fn pseudo_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn keccak_twice(input: &[u8]) -> Vec<u8> {
    let mut s: [u64; 25] =
        std::array::from_fn(|l| u64::from_le_bytes(input[8 * l..8 * l + 8].try_into().unwrap()));
    precompile::keccak_f(&mut s);
    precompile::keccak_f(&mut s);
    s.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn keccak_f_calls_prove_and_verify() {
    let prog = program(KECCAK_F, 200, 0, 200, 2);
    let input = pseudo_bytes(7, 200);
    for config in [StarkConfig::default(), StarkConfig::default_zk()] {
        let (statement, proof) = prove(&prog, &input, &config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(statement.output, keccak_twice(&input));
        verify(&prog, &statement, &proof, &config, 0).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn keccak_f_witness_passes_the_checker_and_a_tampered_cell_is_caught() {
    let prog = program(KECCAK_F, 200, 0, 200, 2);
    let input = pseudo_bytes(9, 200);
    let config = StarkConfig::default();
    let mut w = witness_for(&prog, &input, &config).unwrap();
    let checker = WitnessChecker::new(&prog, &config).unwrap();
    checker
        .check(&w)
        .unwrap_or_else(|e| panic!("honest witness: {e}"));
    let t = Table::Keccakf.index();
    assert_eq!(w.traces[t].width, NUM_KECCAKF_COLS);
    assert_eq!(
        zkrv_machine::precompile_calls(&w.traces),
        [(Table::Keccakf, 2), (Table::Sha256, 0)]
    );
    assert_eq!(w.traces[t].values.len() / NUM_KECCAKF_COLS, 64);
    // The second call's output lane 3 (its last round row): the chi relation breaks.
    let col = KeccakfCols::<usize>::indices().out[3][0];
    let cell = &mut w.traces[t].values[47 * NUM_KECCAKF_COLS + col];
    *cell += F::ONE;
    let e = checker.check(&w).unwrap_err().to_string();
    assert!(e.contains("KECCAKF") && e.contains("out is chi"), "{e}");
}

/// The state (32 bytes) then the block (64 bytes) from the input; two compressions by the same block.
fn sha_twice(input: &[u8]) -> Vec<u8> {
    let mut h: [u32; 8] =
        std::array::from_fn(|k| u32::from_le_bytes(input[4 * k..4 * k + 4].try_into().unwrap()));
    let block: [u8; 64] = input[32..96].try_into().unwrap();
    precompile::sha256_compress(&mut h, &block);
    precompile::sha256_compress(&mut h, &block);
    h.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn sha256_compress_calls_prove_and_verify() {
    let prog = program(SHA256_COMPRESS, 96, BUF + 32, 32, 2);
    let input = pseudo_bytes(11, 96);
    for config in [StarkConfig::default(), StarkConfig::default_zk()] {
        let (statement, proof) = prove(&prog, &input, &config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(statement.output, sha_twice(&input));
        verify(&prog, &statement, &proof, &config, 0).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn sha256_witness_passes_the_checker_and_a_tampered_cell_is_caught() {
    let prog = program(SHA256_COMPRESS, 96, BUF + 32, 32, 2);
    let input = pseudo_bytes(13, 96);
    let config = StarkConfig::default();
    let mut w = witness_for(&prog, &input, &config).unwrap();
    let checker = WitnessChecker::new(&prog, &config).unwrap();
    checker
        .check(&w)
        .unwrap_or_else(|e| panic!("honest witness: {e}"));
    let t = Table::Sha256.index();
    assert_eq!(w.traces[t].width, NUM_SHA256_COLS);
    assert_eq!(
        zkrv_machine::precompile_calls(&w.traces),
        [(Table::Keccakf, 0), (Table::Sha256, 2)]
    );
    // A bit of the second call's new `e` in round row 9.
    let col = Sha256Cols::<usize>::indices().e[2][17];
    let cell = &mut w.traces[t].values[(SHA256_ROWS + 9) * NUM_SHA256_COLS + col];
    *cell = F::ONE - *cell;
    let e = checker.check(&w).unwrap_err().to_string();
    assert!(e.contains("SHA256") && e.contains("round"), "{e}");
}
