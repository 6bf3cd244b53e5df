//! Randomized witness-cell mutation of the whole RV64IM machine (issue 4 item 5): witnesses of small real
//! guests (guests/bin), one cell of one real row of one table replaced by a different value, optionally the
//! BITWISE counts recomputed as a cheating prover would ([`recount_lookups`]), then the debug checker over
//! all 20 tables must reject. A few mutated witnesses also go through the prover (checker off) and the
//! verifier must reject.
//!
//! Seed: `ZKRV_SEED` (else the time), printed as `fuzz_witness seed = ...`. Iterations: `ZKRV_FUZZ_ITERS`
//! (default 200, spread over the guests). Rerun a failure with the printed seed.

use std::collections::BTreeMap;

use zkrv_executor::Program;
use zkrv_machine::tables::cpu::CpuCols;
use zkrv_machine::tables::eq::EqCols;
use zkrv_machine::tables::input::InputCols;
use zkrv_machine::tables::sysio::SyscallCols;
use zkrv_machine::{prove_witness, recount_lookups, verify, witness, Witness, WitnessChecker};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::StarkConfig;

/// Table names in the witness's table order (lib.rs `Witness`).
const TABLES: [&str; 20] = [
    "CPU", "DECODE", "BITWISE", "REGFILE", "EQ", "LT", "LOAD", "STORE", "MEMW_A", "PAGE",
    "BYTEWISE", "SYSCALL", "SYSIO", "INPUT", "CPU32", "DVRM", "SHIFT", "POW2", "MUL", "MEMW",
];
const CPU: usize = 0;
const BITWISE: usize = 2;
/// Tables whose main trace is only the multiplicity column of a preprocessed table: every row is real.
const PREPROCESSED: [usize; 3] = [1, 2, 17];

/// Goldilocks modulus.
const P: u64 = 0xffff_ffff_0000_0001;

/// Cells that no constraint or bus reads in the given row (so any value, or any byte, is accepted), with
/// the reason; `row` is the mutated row, `new` the new value, `recount` whether BITWISE was recomputed.
/// Found empirically and checked against the table's code (crates/machine/src/tables) and docs/tables.md.
fn genuinely_free(
    t: usize,
    col: usize,
    row: &[F],
    new: u64,
    recount: bool,
) -> Option<&'static str> {
    let is = |x: F| x == F::ONE;
    match TABLES[t] {
        "CPU" => {
            let i = CpuCols::<usize>::indices();
            let r = CpuCols::from_row(row);
            let fl = &r.dec.flags;
            if col == i.jalr_bit0 && fl.is_jalr == F::ZERO && new <= 1 {
                return Some("CPU jalr_bit0 when is_jalr = 0: only `jalr bit0` (boolean) reads it; the JALR target uses it under is_jalr");
            }
            if [i.r1.old_ts, i.r1.d0].contains(&col) && !is(fl.rr1) {
                return Some("CPU r1.old_ts/r1.d0 when rr1 = 0: only the rs1 register access reads them, with multiplicity rr1");
            }
            if [i.r2.old_ts, i.r2.d0].contains(&col) && !is(fl.rr2) {
                return Some("CPU r2.old_ts/r2.d0 when rr2 = 0: only the rs2 register access reads them, with multiplicity rr2");
            }
            if [i.w.old_ts, i.w.d0, i.w.old[0], i.w.old[1]].contains(&col) && !is(fl.wr) {
                return Some("CPU w.old_ts/w.d0/w.old when wr = 0: only the rd register access reads them, with multiplicity wr");
            }
            None
        }
        "EQ" => {
            let i = EqCols::<usize>::indices();
            let r = EqCols::from_row(row);
            if col == i.inv[0] && r.a[0] == r.b[0] {
                return Some("EQ inv_lo when a_lo = b_lo: `1 - r - dl inv_lo - dh inv_hi` multiplies it by dl = 0");
            }
            if col == i.inv[1] && r.a[1] == r.b[1] {
                return Some("EQ inv_hi when a_hi = b_hi: `1 - r - dl inv_lo - dh inv_hi` multiplies it by dh = 0");
            }
            None
        }
        "SYSCALL" => {
            let i = SyscallCols::<usize>::indices();
            let r = SyscallCols::from_row(row);
            if col == i.short_d0 && r.short == F::ZERO {
                return Some(
                    "SYSCALL short_d0 when short = 0: LT32(count, len) witness, multiplicity short",
                );
            }
            if [i.cursor, i.cursor_old_ts, i.cursor_d0].contains(&col)
                && r.is_out == F::ZERO
                && r.is_in == F::ZERO
            {
                return Some("SYSCALL cursor/cursor_old_ts/cursor_d0 on a debug write (fd 2, not proven): the cursor access and IO_CHAIN have multiplicity is_out + is_in = 0, the INPUT end lookup multiplicity short = 0");
            }
            None
        }
        "INPUT" => {
            let i = InputCols::<usize>::indices();
            let r = InputCols::from_row(row);
            if col == i.byte && r.m == F::ZERO && r.is_eof == F::ZERO && new < 256 && recount {
                return Some("INPUT byte of a row never looked up (m = 0, not the end row): the private input beyond what the guest read is the prover's choice; only its byte range check (BITWISE, recounted) reads it");
            }
            None
        }
        _ => None,
    }
}

struct Rng(u64);

impl Rng {
    /// splitmix64.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    eprintln!("fuzz_witness seed = {s}");
    s
}

fn iters() -> usize {
    std::env::var("ZKRV_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

fn guest(name: &str) -> (Program, Vec<u8>) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
    let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
    let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap_or_default();
    (Program::from_elf(&elf).unwrap(), input)
}

/// A short program for the tables the C guests above barely use: DIV/REMU/MULH/DIVW (DVRM, MUL, CPU32, LT)
/// and a doubleword store/load crossing a cell (MEMW), SRAI (SHIFT), XOR (BYTEWISE); exits with the sum.
fn alu_program() -> Program {
    use zkrv_executor::asm::*;
    let words = vec![
        addi(5, 0, -100),     // t0 = -100
        addi(6, 0, 7),        // t1 = 7
        op(1, 4, 7, 5, 6),    // t2 = div t0, t1 = -14
        op(1, 7, 28, 5, 6),   // t3 = remu t0, t1
        op(1, 1, 29, 5, 6),   // t4 = mulh t0, t1 = -1
        op32(1, 4, 30, 5, 6), // t5 = divw t0, t1 = -14
        srai(31, 5, 3),       // t6 = -100 >> 3
        xor(8, 5, 6),         // s0 = t0 ^ t1
        addi(2, 2, -64),      // sp -= 64
        sd(5, 2, 4),          // [sp+4..12] = t0 (crosses a cell)
        ld(9, 2, 4),          // s1 = [sp+4..12]
        add(10, 7, 28),
        add(10, 10, 29),
        add(10, 10, 30),
        add(10, 10, 31),
        add(10, 10, 8),
        add(10, 10, 9),
        addi(17, 0, 93),
        ECALL,
    ];
    Program::from_words(0x1000, &words).unwrap()
}

fn config(debug_check: bool) -> StarkConfig {
    StarkConfig {
        debug_check,
        ..StarkConfig::dev()
    }
}

/// Real rows of table `t`: CPU rows with `is_pad = 0`; every row of a preprocessed table's multiplicity
/// column; otherwise the rows before the trailing run of rows equal to the last row (the padding: the
/// last row is skipped even when the table is exactly full).
fn real_rows(w: &Witness, t: usize) -> usize {
    let m = &w.traces[t];
    let n = m.height();
    if PREPROCESSED.contains(&t) {
        return n;
    }
    if t == CPU {
        return (0..n)
            .take_while(|&r| CpuCols::from_row(m.row(r)).dec.flags.is_pad == F::ZERO)
            .count();
    }
    let last = m.row(n - 1);
    let mut k = n - 1;
    while k > 0 && m.row(k - 1) == last {
        k -= 1;
    }
    k
}

/// A different value for a cell holding `old`.
fn new_value(rng: &mut Rng, old: u64) -> u64 {
    loop {
        let v = match rng.below(7) {
            0 => (old + 1) % P,
            1 => (old + P - 1) % P,
            2 => rng.next() % P,
            3 => 1 << 32,
            4 => P - 1,
            5 => rng.below(256),
            _ => old ^ (1 << rng.below(16)),
        };
        if v != old && v < P {
            return v;
        }
    }
}

#[derive(Default)]
struct Tally {
    mutations: usize,
    accepted_free: usize,
}

struct Accepted {
    guest: &'static str,
    table: usize,
    row: usize,
    col: usize,
    old: u64,
    new: u64,
    recount: bool,
}

#[test]
fn mutated_witness_cells_are_rejected() {
    let seed = seed();
    let mut rng = Rng(seed);
    let total = iters();
    let guests: Vec<(&'static str, Program, Vec<u8>)> = vec![
        ("exitcode", guest("exitcode").0, vec![]),
        ("fibonacci", guest("fibonacci").0, guest("fibonacci").1),
        ("alu", alu_program(), vec![]),
    ];
    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut bugs: Vec<Accepted> = Vec::new();
    let mut proofs = 0;
    let mut free: BTreeMap<&'static str, usize> = BTreeMap::new();
    let t0 = std::time::Instant::now();
    for (gi, (name, program, input)) in guests.iter().enumerate() {
        let (name, program) = (*name, program);
        let checker = WitnessChecker::new(program, &config(true)).unwrap();
        let mut w = witness(program, input).unwrap();
        checker
            .check(&w)
            .unwrap_or_else(|e| panic!("{name}: honest witness rejected: {e}"));
        let reals: Vec<(usize, usize)> = (0..TABLES.len())
            .map(|t| (t, real_rows(&w, t)))
            .filter(|&(_, n)| n > 0)
            .collect();
        eprintln!(
            "{name}: real rows {:?}",
            reals
                .iter()
                .map(|&(t, n)| format!("{}={n}/{}", TABLES[t], w.traces[t].height()))
                .collect::<Vec<_>>()
        );
        let bitwise = w.traces[BITWISE].clone();
        let n_iter = total / guests.len() + usize::from(gi < total % guests.len());
        for i in 0..n_iter {
            let (t, n) = reals[rng.below(reals.len() as u64) as usize];
            let width = w.traces[t].width;
            let row = rng.below(n as u64) as usize;
            let col = rng.below(width as u64) as usize;
            let old = w.traces[t].row(row)[col].as_canonical_u64();
            let new = new_value(&mut rng, old);
            let recount = t != BITWISE && rng.below(2) == 0;
            w.traces[t].row_mut(row)[col] = F::from_u64(new);
            if recount {
                recount_lookups(program, &mut w).unwrap();
            }
            let e = tally.entry(TABLES[t]).or_default();
            e.mutations += 1;
            if checker.check(&w).is_ok() {
                if let Some(why) = genuinely_free(t, col, w.traces[t].row(row), new, recount) {
                    e.accepted_free += 1;
                    *free.entry(why).or_default() += 1;
                } else {
                    eprintln!(
                        "ACCEPTED: {name} {}[{row}] col {col}: {old} -> {new} (recount {recount}, seed {seed})",
                        TABLES[t]
                    );
                    bugs.push(Accepted {
                        guest: name,
                        table: t,
                        row,
                        col,
                        old,
                        new,
                        recount,
                    });
                }
            } else if name != "fibonacci" && i % 50 == 49 && proofs < 2 {
                // The full path: prover with the checker off, then the verifier must reject.
                proofs += 1;
                if let Ok((st, proof)) = prove_witness(program, w.clone(), &config(false)) {
                    assert!(
                        verify(program, &st, &proof, &config(false)).is_err(),
                        "verifier accepted {}[{row}] col {col}: {old} -> {new} (seed {seed})",
                        TABLES[t]
                    );
                }
            }
            w.traces[t].row_mut(row)[col] = F::from_u64(old);
            if recount {
                w.traces[BITWISE] = bitwise.clone();
            }
        }
        checker.check(&w).unwrap();
    }
    eprintln!(
        "fuzz_witness: {} mutations, {proofs} full proofs, {:?}",
        total,
        t0.elapsed()
    );
    for (t, e) in &tally {
        eprintln!(
            "  {t}: {} mutations, {} accepted (free cells)",
            e.mutations, e.accepted_free
        );
    }
    for (why, k) in &free {
        eprintln!("  free x{k}: {why}");
    }
    assert!(
        bugs.is_empty(),
        "{} accepted mutations of non-free cells (seed {seed}): {}",
        bugs.len(),
        bugs.iter()
            .map(|b| format!(
                "{} {}[{}] col {}: {} -> {} (recount {})",
                b.guest, TABLES[b.table], b.row, b.col, b.old, b.new, b.recount
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
}
