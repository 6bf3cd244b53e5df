//! The INPUT table holds only the consumed prefix of the private input (docs/tables.md §6.18).

use zkrv_executor::asm::*;
use zkrv_executor::Program;
use zkrv_machine::tables::input::NUM_INPUT_COLS;

/// INPUT's position in `Witness::traces` (table order, see `Witness`).
const INPUT_TABLE: usize = 13;

fn program(read_len: i64) -> Program {
    let mut w = Vec::new();
    // read(0, sp - 64, read_len) twice, then exit(0)
    for _ in 0..2 {
        w.extend(li(10, 0));
        w.extend(li(11, 0x7fff_ffc0));
        w.extend(li(12, read_len));
        w.extend(li(17, 63));
        w.push(ECALL);
    }
    w.extend(li(10, 0));
    w.extend(li(17, 93));
    w.push(ECALL);
    Program::from_words(0x10000, &w).unwrap()
}

fn input_height(p: &Program, input: &[u8]) -> usize {
    let w = zkrv_machine::witness(p, input).unwrap();
    let t = &w.traces[INPUT_TABLE];
    assert_eq!(t.width, NUM_INPUT_COLS);
    t.values.len() / t.width
}

#[test]
fn input_table_holds_only_the_consumed_prefix() {
    let input: Vec<u8> = (0..1u32 << 16).map(|i| i as u8).collect();
    // 2 x 32 bytes read of 64 KiB: 64 rows + end row -> at most 128 rows (or the minimum height).
    assert!(input_height(&program(32), &input) <= 128);
    // A short read consumes everything: the whole input (plus the end row) is in the table.
    let small = &input[..100];
    assert!(input_height(&program(64), small) >= 101);
    assert_eq!(
        input_height(&program(64), small),
        input_height(&program(64), &input[..100])
    );
}

#[test]
fn truncated_input_proof_verifies() {
    let input: Vec<u8> = (0..1u32 << 16).map(|i| (i * 13) as u8).collect();
    let p = program(16);
    let config = zkrv_stark::StarkConfig::dev();
    let (statement, proof) = zkrv_machine::prove(&p, &input, &config).unwrap();
    zkrv_machine::verify(&p, &statement, &proof, &config, 0).unwrap();
}
