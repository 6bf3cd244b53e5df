//! DVRM and CPU32 inside the whole machine: a program runs DIV/DIVU/REM/REMU and every W instruction
//! (register and immediate forms) on edge operands (0, ±1, ±7, i64::MIN/MAX, i32 boundaries, 2^32 + 3,
//! division by zero, both overflows), folds every result into a checksum that it exits with, and the run
//! proves and verifies through `zkrv_machine::prove`; the exit code is compared with the same checksum
//! computed from Rust's arithmetic. A tampered DVRM row in the full witness is rejected.

use zkrv_executor::asm::*;
use zkrv_executor::Program;
use zkrv_machine::tables::dvrm::{DvrmCols, NUM_DVRM_COLS};
use zkrv_machine::{prove, prove_witness, recount_lookups, verify, witness, MachineError};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::{ProveError, StarkConfig};

const BASE: u64 = 0x1000;
const K: u64 = 0x0000_0100_0000_01b3; // FNV-64 prime

const VALUES: [u64; 9] = [
    0,
    1,
    u64::MAX, // -1
    7,
    -7i64 as u64,
    1 << 63,               // i64::MIN
    (1 << 63) - 1,         // i64::MAX
    0xffff_ffff_8000_0000, // i32::MIN sign-extended
    0x1_0000_0003,         // 2^32 + 3 (low word 3)
];

/// R-type ops: (funct7, funct3, is_op32, Rust reference).
type Ref = fn(u64, u64) -> u64;
fn w(x: i32) -> u64 {
    x as i64 as u64
}
const R_OPS: [(u32, u32, bool, Ref); 14] = [
    (1, 4, false, |a, b| {
        (a as i64)
            .checked_div(b as i64)
            .unwrap_or(if b == 0 { -1 } else { i64::MIN }) as u64
    }),
    (1, 5, false, |a, b| a.checked_div(b).unwrap_or(u64::MAX)),
    (1, 6, false, |a, b| {
        (a as i64)
            .checked_rem(b as i64)
            .unwrap_or(if b == 0 { a as i64 } else { 0 }) as u64
    }),
    (1, 7, false, |a, b| a.checked_rem(b).unwrap_or(a)),
    (0, 0, true, |a, b| w((a as i32).wrapping_add(b as i32))),
    (0x20, 0, true, |a, b| w((a as i32).wrapping_sub(b as i32))),
    (0, 1, true, |a, b| w(((a as u32) << (b & 31)) as i32)),
    (0, 5, true, |a, b| w(((a as u32) >> (b & 31)) as i32)),
    (0x20, 5, true, |a, b| w((a as i32) >> (b & 31))),
    (1, 0, true, |a, b| w((a as i32).wrapping_mul(b as i32))),
    (1, 4, true, |a, b| {
        w((a as i32)
            .checked_div(b as i32)
            .unwrap_or(if b as i32 == 0 { -1 } else { i32::MIN }))
    }),
    (1, 5, true, |a, b| {
        w((a as u32).checked_div(b as u32).unwrap_or(u32::MAX) as i32)
    }),
    (1, 6, true, |a, b| {
        w((a as i32)
            .checked_rem(b as i32)
            .unwrap_or(if b as i32 == 0 { a as i32 } else { 0 }))
    }),
    (1, 7, true, |a, b| {
        w((a as u32).checked_rem(b as u32).unwrap_or(a as u32) as i32)
    }),
];

/// The program and the checksum it must exit with (low 32 bits).
fn program() -> (Program, u32) {
    // x5 = a, x6 = b, x7 = result, x28 = checksum, x29 = K.
    let mut words = li(29, K as i64);
    words.push(addi(28, 0, 0));
    let mut acc = 0u64;
    let mut fold = |words: &mut Vec<u32>, r: u64| {
        words.push(add(28, 28, 7));
        words.push(mul(28, 28, 29));
        acc = acc.wrapping_add(r).wrapping_mul(K);
    };
    for &a in &VALUES {
        words.extend(li(5, a as i64));
        for &b in &VALUES {
            words.extend(li(6, b as i64));
            for (f7, f3, is32, rf) in R_OPS {
                words.push(if is32 {
                    op32(f7, f3, 7, 5, 6)
                } else {
                    op(f7, f3, 7, 5, 6)
                });
                fold(&mut words, rf(a, b));
            }
        }
        // Immediate W forms.
        for imm in [0, 1, -1, 2047, -2048] {
            words.push(addiw(7, 5, imm));
            fold(&mut words, w((a as i32).wrapping_add(imm)));
        }
        for sh in [0, 1, 31] {
            words.push(slliw(7, 5, sh));
            fold(&mut words, w(((a as u32) << sh) as i32));
            words.push(srliw(7, 5, sh));
            fold(&mut words, w(((a as u32) >> sh) as i32));
            words.push(sraiw(7, 5, sh));
            fold(&mut words, w((a as i32) >> sh));
        }
    }
    words.extend([addi(10, 28, 0), addi(17, 0, 93), ECALL]);
    (Program::from_words(BASE, &words).unwrap(), acc as u32)
}

#[test]
fn div_and_w_program_proves_and_verifies() {
    let (p, expected) = program();
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    let t0 = std::time::Instant::now();
    let (st, proof) = prove(&p, b"", &config).unwrap();
    let prove_time = t0.elapsed();
    assert_eq!(st.exit_code, expected);
    let t0 = std::time::Instant::now();
    verify(&p, &st, &proof, &StarkConfig::dev(), 0).unwrap();
    println!(
        "{} instruction words: prove (with checker) {prove_time:?}, verify {:?}",
        p.segments[0].data.len() / 4,
        t0.elapsed()
    );
}

#[test]
fn tampered_dvrm_row_in_the_machine_is_rejected() {
    let (p, _) = program();
    let mut wit = witness(&p, b"").unwrap();
    // The DVRM row of 7 / 0 (signed): claim q = 0 instead of all ones.
    let is_target = |r: &DvrmCols<F>| {
        r.n == [F::from_u64(7), F::ZERO] && r.d == [F::ZERO; 2] && r.signed == F::ONE
    };
    let (t, row) = (0..wit.traces.len())
        .filter(|&t| wit.traces[t].width == NUM_DVRM_COLS)
        .find_map(|t| {
            let tr = &wit.traces[t];
            (0..tr.height())
                .find(|&i| is_target(DvrmCols::from_row(tr.row(i))))
                .map(|i| (t, i))
        })
        .expect("DVRM row 7 / 0");
    let dvrm = &mut wit.traces[t];
    DvrmCols::from_row_mut(dvrm.row_mut(row)).q = [F::ZERO; 2];
    recount_lookups(&p, &mut wit).unwrap();
    let config = StarkConfig::dev();
    let checked = prove_witness(
        &p,
        wit.clone(),
        &StarkConfig {
            debug_check: true,
            ..config.clone()
        },
    );
    assert!(
        matches!(checked, Err(MachineError::Prove(ProveError::Check(_)))),
        "checker accepted: {checked:?}"
    );
    if let Ok((st, proof)) = prove_witness(&p, wit, &config) {
        assert!(
            verify(&p, &st, &proof, &config, 0).is_err(),
            "verifier accepted"
        );
    }
}
