//! SHA256 table (docs/tables.md §6.19.2): the fill against the executor's `sha256_compress` (and FIPS 180-4's
//! "abc" vector), the honest witness accepted, and one negative test per constraint group (a round bit and
//! carry, the schedule and its helpers, the round constant / row encoder and flags, the digest, the group constants and
//! the cut last group, the ECALL tuple, the a1 read, the memory slots, tokens and timestamps).

mod precompile_common;

use precompile_common::*;
use zkrv_executor::precompile;
use zkrv_machine::bus;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::sha256::*;
use zkrv_stark::air::CompiledAir;
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};

fn col() -> Sha256Cols<usize> {
    Sha256Cols::<usize>::indices()
}

fn random_calls(rng: &mut Rng, n: usize) -> Vec<Sha256Call> {
    (0..n)
        .map(|i| {
            let ts = 4 * (500 + 41 * i as u64) + 1;
            let mut block = [0u8; 64];
            for x in block.iter_mut() {
                *x = rng.next() as u8;
            }
            Sha256Call {
                ts,
                state_ptr: 0x3000 + 0x100 * i as u64,
                block_ptr: 0x8000 + 0x40 * i as u64,
                state: std::array::from_fn(|_| rng.next() as u32),
                block,
                state_old_ts: std::array::from_fn(|k| if k == 0 { ts - 1 } else { rng.below(ts) }),
                block_old_ts: std::array::from_fn(|k| if k == 7 { 0 } else { rng.below(ts) }),
                a1_old_ts: ts - 2,
            }
        })
        .collect()
}

fn output(call: &Sha256Call) -> [u32; 8] {
    let mut h = call.state;
    precompile::sha256_compress(&mut h, &call.block);
    h
}

fn env_of(calls: &[Sha256Call]) -> Env {
    let mut env = Env::default();
    for call in calls {
        env.ecall(call.ts, SHA256_ECALL, call.state_ptr);
        env.reg_read(11, call.a1_old_ts, call.ts, call.block_ptr);
        let out = output(call);
        let pair = |h: &[u32; 8], k: usize| h[2 * k] as u64 | (h[2 * k + 1] as u64) << 32;
        for k in 0..4 {
            env.cell(
                call.state_ptr / 8 + k as u64,
                call.state_old_ts[k],
                pair(&call.state, k),
                call.ts,
                pair(&out, k),
            );
        }
        for j in 0..8 {
            let v = u64::from_le_bytes(call.block[8 * j..8 * j + 8].try_into().unwrap());
            env.cell(
                call.block_ptr / 8 + j as u64,
                call.block_old_ts[j],
                v,
                call.ts,
                v,
            );
        }
    }
    env
}

/// The trace of `trace_calls` against the memory and CPU of `env_calls`.
fn harness2(trace_calls: &[Sha256Call], env_calls: &[Sha256Call], min_height: usize) -> Harness {
    let mut lookups = Lookups::new();
    let trace = sha256_trace(trace_calls, min_height, &mut lookups);
    Harness::new(&Sha256Air, trace, &lookups, env_of(env_calls))
}

fn harness(calls: &[Sha256Call], min_height: usize) -> Harness {
    harness2(calls, calls, min_height)
}

fn word(h: &Harness, row: usize, bits: &[usize; 32]) -> u32 {
    (0..32).fold(0, |acc, k| {
        acc | ((h.get(row, bits[k]).as_canonical_u64() as u32) << k)
    })
}

fn flip(h: &mut Harness, row: usize, col: usize) {
    let x = h.get(row, col);
    h.set(row, col, F::ONE - x);
}

#[test]
fn reference_compression_matches_the_executor_and_fips() {
    let mut block = [0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 24;
    assert_eq!(
        sha256_compress(&precompile::SHA256_IV, &block),
        [
            0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223, 0xb00361a3, 0x96177a9c, 0xb410ff61,
            0xf20015ad
        ]
    );
    let mut rng = Rng(seed("reference_compression_matches_the_executor_and_fips"));
    for call in random_calls(&mut rng, 20) {
        assert_eq!(sha256_compress(&call.state, &call.block), output(&call));
    }
}

#[test]
fn width_and_committed_cells_per_call() {
    let air = CompiledAir::new(&Sha256Air, 3).unwrap();
    assert_eq!(NUM_SHA256_COLS, 441);
    assert_eq!(air.degree, 3);
    let aux = 3 * air.logup.num_ext_columns();
    let per_row = NUM_SHA256_COLS + aux;
    let per_call = per_row * SHA256_ROWS;
    // The best published table, recounted like for like in docs/tables.md §6.19.2: OpenVM 2's SHA256_UPDATE,
    // a block hasher of 456 columns x 17 rows and a main chip of 284 columns x 1 row per call (its GKR LogUp
    // commits no aux column).
    let openvm = 456 * 17 + 284;
    println!(
        "SHA256: {NUM_SHA256_COLS} main + {aux} aux = {per_row} cells per row, {per_call} per call, {:.1} \
         per hashed byte (64 B); OpenVM 2 SHA256_UPDATE: {openvm} committed cells per call, {:.1} per byte",
        per_call as f64 / 64.0,
        openvm as f64 / 64.0
    );
    // 17 interactions: 6 BYTE pairs, 2 memory slots x (consume, emit, 2 RANGE16), ECALL, 2 REG_TOKEN; two
    // per term column, and the running sum.
    assert_eq!(air.interactions.len(), 17);
    assert_eq!(aux, 3 * (9 + 1));
    assert_eq!(per_call, 8007);
    // The bar (docs/tables.md §6.19.2): no more committed cells per hashed byte than OpenVM's.
    assert!(per_call <= openvm, "{per_call} > {openvm}");
}

#[test]
fn honest_calls_are_accepted_and_the_output_is_the_compression() {
    let mut rng = Rng(seed(
        "honest_calls_are_accepted_and_the_output_is_the_compression",
    ));
    let c = col();
    // Heights whose last row is a row 14, 12, 0 (a boundary row), 8 and 15 (2^k - 1 mod 17).
    for (calls, min_height) in [(0, 8), (1, 8), (3, 8), (4, 256), (5, 8), (1, 4096)] {
        let calls = random_calls(&mut rng, calls);
        let h = harness(&calls, min_height);
        assert_eq!(h.traces[0].height(), sha256_height(calls.len(), min_height));
        assert_eq!(
            h.traces[0].height() == 0,
            calls.is_empty(),
            "absent without calls"
        );
        let v = h.violations();
        assert!(v.is_empty(), "{} calls: {v:#?}", calls.len());
        // The new state: H0, H1 in row 16's memory slot 0, H2..H7 bits of the boundary row.
        for (g, call) in calls.iter().enumerate() {
            let d = (g + 1) * SHA256_ROWS;
            let out: [u32; 8] = std::array::from_fn(|k| match k {
                0 | 1 => h.get(d - 1, c.new[0][k]).as_canonical_u64() as u32,
                2 => word(&h, d, &c.a[0]),
                3 => word(&h, d, &c.e[0]),
                _ => word(&h, d, &c.w[k - 4]),
            });
            assert_eq!(out, output(call));
        }
    }
}

#[test]
fn tampered_round_and_schedule_cells_are_rejected() {
    let mut rng = Rng(seed("tampered_round_and_schedule_cells_are_rejected"));
    let calls = random_calls(&mut rng, 2);
    let c = col();

    // A bit of a new `a` (round 4(5-1)+2 = 18) and of a new `e`.
    for (bits, name) in [(c.a[2], "round a"), (c.e[1], "round e")] {
        let mut h = harness(&calls, 8);
        flip(&mut h, 5, bits[9]);
        assert_constraint(&h.violations(), name);
    }
    // A round carry off by one (the sum then misses by 2^32).
    let mut h = harness(&calls, 8);
    let x = h.get(7, c.ca[3]);
    h.set(7, c.ca[3], x + F::ONE);
    assert_constraint(&h.violations(), "round a");
    // A non-boolean bit.
    let mut h = harness(&calls, 8);
    h.set(9, c.w[0][0], F::from_u64(2));
    assert_constraint(&h.violations(), "bit");
    // A schedule bit of a late round (W_{4*(10-1)+1} = W_37), its carry, the helpers.
    let mut h = harness(&calls, 8);
    flip(&mut h, 10, c.w[1][20]);
    assert_constraint(&h.violations(), "schedule");
    for (field, name) in [(c.s4[2], "s4"), (c.s8[0], "s8"), (c.s12[3], "s12")] {
        let mut h = harness(&calls, 8);
        let x = h.get(12, field);
        h.set(12, field, x + F::ONE);
        assert_constraint(&h.violations(), name);
    }
    // A digest bit of the boundary row (H6, H2; low and top bit: the carry of the sum is then not 0 or 1).
    for (field, bit) in [(c.w[2], 0), (c.w[2], 31), (c.a[0], 7)] {
        let mut h = harness(&calls, 8);
        flip(&mut h, 17, field[bit]);
        assert_constraint(&h.violations(), "digest");
    }
    // H0 as row 15's `ts - ots - 1`, and row 16's memory word bound to it.
    let mut h = harness(&calls, 8);
    let x = h.get(15, c.ots[0]);
    h.set(15, c.ots[0], x + F::ONE);
    assert_constraint(&h.violations(), "digest");
    let mut h = harness(&calls, 8);
    let x = h.get(16, c.new[0][1]);
    h.set(16, c.new[0][1], x + F::ONE);
    assert_constraint(&h.violations(), "digest word of row 16");
    // The boundary row's slots 1..3 must hold the next call's h.
    for (field, name) in [(c.a[1], "init a"), (c.e[3], "init e")] {
        let mut h = harness(&calls, 8);
        flip(&mut h, 17, field[4]);
        assert_constraint(&h.violations(), name);
    }
    // Round 0 reads H3 from the next call's `h` (rows 18..=34 of call 1, consistently changed).
    let mut h = harness(&calls, 8);
    for r in SHA256_ROWS + 1..=2 * SHA256_ROWS {
        let x = h.get(r, c.h[3]);
        h.set(r, c.h[3], x + F::ONE);
    }
    assert_constraint(&h.violations(), "round e");
}

#[test]
fn a_new_word_over_32_bits_is_caught_by_the_range_check() {
    // H0 = h0 + v0 - 2^32 (carry 1: h0 = 2^32 - 1) claimed as h0 + v0 on row 15 and row 16: the digest carry is
    // then 0 (boolean) and the memory word agrees, but row 15's LT32 (RANGE16 of its high half) objects.
    let mut rng = Rng(seed("a_new_word_over_32_bits_is_caught_by_the_range_check"));
    let mut calls = random_calls(&mut rng, 1);
    calls[0].state[0] = u32::MAX;
    let c = col();
    let mut h = harness(&calls, 8);
    let big = F::from_u64(1 << 32);
    let x = h.get(15, c.ots[0]);
    h.set(15, c.ots[0], x - big);
    let y = h.get(16, c.new[0][0]);
    h.set(16, c.new[0][0], y + big);
    let i = h
        .env
        .public
        .iter()
        .position(|p| {
            p.bus == bus::MEM_TOKEN
                && p.values[0] == F::from_u64(calls[0].state_ptr / 8)
                && p.values[1] == F::from_u64(calls[0].ts)
        })
        .unwrap();
    h.env.public[i].values[2] += big;
    let v = h.violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert_eq!(unbalanced_buses(&v), [bus::RANGE16]);
}

#[test]
fn out_of_range_carries_are_caught_by_the_byte_lookup() {
    // A carry outside a byte on a round row: the BYTE lookup (and the relation) object.
    let mut rng = Rng(seed("out_of_range_carries_are_caught_by_the_byte_lookup"));
    let calls = random_calls(&mut rng, 1);
    let c = col();
    let mut h = harness(&calls, 8);
    let x = h.get(3, c.ce[0]);
    h.set(3, c.ce[0], x + F::from_u64(300));
    let v = h.violations();
    assert_constraint(&v, "round e");
    assert_bus(&v, bus::BYTE);
}

fn set_code(h: &mut Harness, row: usize, code: &[u8; CODE_VARS]) {
    let c = col();
    for (v, &x) in code.iter().enumerate() {
        h.set(row, c.code[v], F::from_u64(x as u64));
    }
}

#[test]
fn wrong_round_constant_and_flags_are_rejected() {
    let mut rng = Rng(seed("wrong_round_constant_and_flags_are_rejected"));
    let calls = random_calls(&mut rng, 1);
    let c = col();
    // Row 6 claims to be row 7 (round constants of rounds 24..27): the code does not advance.
    let mut h = harness(&calls, 8);
    set_code(&mut h, 6, &ROW_CODE[7]);
    assert_constraint(&h.violations(), "row code advances");
    // A group that starts at another row.
    let mut h = harness(&calls, 8);
    set_code(&mut h, 0, &ROW_CODE[1]);
    assert_constraint(&h.violations(), "first row is row 0");
    // Each degree-1 flag is its rows' selector sum.
    for (row, field, name) in [
        (0, c.f_bound, "row flag f_bound"),
        (17, c.f_bound, "row flag f_bound"),
        (3, c.f_block, "row flag f_block"),
        (16, c.f_mem, "row flag f_mem"),
        (9, c.f_mem, "row flag f_mem"),
        (5, c.f_a1, "row flag f_a1"),
        (15, c.f_r15, "row flag f_r15"),
    ] {
        let mut h = harness(&calls, 8);
        flip(&mut h, row, field);
        assert_constraint(&h.violations(), name);
    }
}

#[test]
fn row_selectors_are_one_hot_on_the_codes() {
    use zkrv_stark::symbolic::Expr;
    // The selectors evaluated at every row's code: the identity matrix (the encoder is what K_t, the
    // memory rows and the digest read).
    let x: [Expr; CODE_VARS] = std::array::from_fn(|col| Expr::Main { col, next: false });
    let sel = row_selectors(&x);
    assert!(sel.iter().all(|s| s.degree() == 2));
    for (i, code) in ROW_CODE.iter().enumerate() {
        let at = |e: &Expr| match e {
            Expr::Main { col, .. } => F::from_u64(code[*col] as u64),
            _ => unreachable!("selectors read the code only"),
        };
        for (r, s) in sel.iter().enumerate() {
            assert_eq!(s.eval(&at), F::from_bool(r == i), "row {i}, selector {r}");
        }
    }
    // The gates of row 16 read the next row without `is_transition`: no table height ends on a row 16.
    for log_n in 1..=26 {
        assert_ne!(((1usize << log_n) - 1) % SHA256_ROWS, 16, "2^{log_n} rows");
    }
    for (i, p) in ROW_CODE.iter().enumerate() {
        assert!(p.iter().map(|&x| x as u32).sum::<u32>() <= 2, "row {i}");
        assert!(!ROW_CODE[..i].contains(p), "row {i} repeats a code");
    }
}

#[test]
fn group_transitions_are_enforced() {
    let mut rng = Rng(seed("group_transitions_are_enforced"));
    let calls = random_calls(&mut rng, 5);
    let c = col();
    let mut h = harness(&calls, 8);
    for r in 10..SHA256_ROWS {
        h.set(SHA256_ROWS + r, c.is_real, F::ZERO);
    }
    assert_constraint(&h.violations(), "group constant is_real");
    for (field, name) in [(c.ts, "group constant ts"), (c.h[6], "group constant h")] {
        let mut h = harness(&calls, 8);
        for r in 9..SHA256_ROWS {
            let x = h.get(r, field);
            h.set(r, field, x + F::ONE);
        }
        assert_constraint(&h.violations(), name);
    }
    // A padding group (rows 1..16 and its boundary row) marked real: a call nobody made.
    let mut h = harness(&calls, 8);
    for r in 1..=SHA256_ROWS {
        h.set(5 * SHA256_ROWS + r, c.is_real, F::ONE);
    }
    let v = h.violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert!(!unbalanced_buses(&v).is_empty());
    // The cut group at the end (5 calls: 128 rows = 7 groups + 9 rows: rows 1..8 of an eighth) cannot be
    // real.
    let mut h = harness(&calls, 8);
    assert_eq!(h.traces[0].height(), 128);
    for row in 7 * SHA256_ROWS + 1..128 {
        h.set(row, c.is_real, F::ONE);
    }
    assert_constraint(&h.violations(), "a cut group is padding");
    // The table's first row (a boundary row with no call before it) cannot be real.
    let mut h = harness(&calls, 8);
    h.set(0, c.is_real, F::ONE);
    assert_constraint(&h.violations(), "the first row is padding");
}

#[test]
fn ecall_and_a1_are_bound() {
    let mut rng = Rng(seed("ecall_and_a1_are_bound"));
    let calls = random_calls(&mut rng, 2);
    for (a7, ptr, ts) in [
        (SHA256_ECALL + 1, calls[1].state_ptr, calls[1].ts),
        (SHA256_ECALL, calls[1].state_ptr + 8, calls[1].ts),
        (SHA256_ECALL, calls[1].state_ptr, calls[1].ts + 4),
    ] {
        let mut h = harness(&calls, 8);
        let mut env = Env::default();
        env.ecall(ts, a7, ptr);
        let i = h
            .env
            .public
            .iter()
            .rposition(|p| p.bus == bus::ECALL)
            .unwrap();
        h.env.public[i] = env.public.remove(0);
        assert_eq!(unbalanced_buses(&h.violations()), [bus::ECALL]);
    }
    // a1 holds another block address than the one the table read.
    let mut other = calls.clone();
    other[0].block_ptr += 64;
    let mut h = harness2(&calls, &calls, 8);
    let mut env = Env::default();
    env.reg_read(11, calls[0].a1_old_ts, calls[0].ts, other[0].block_ptr);
    let i = h
        .env
        .public
        .iter()
        .position(|p| p.bus == bus::REG_TOKEN)
        .unwrap();
    h.env.public[i] = env.public[0].clone();
    h.env.public[i + 1] = env.public[1].clone();
    assert_eq!(unbalanced_buses(&h.violations()), [bus::REG_TOKEN]);
}

#[test]
fn memory_tokens_are_bound() {
    let mut rng = Rng(seed("memory_tokens_are_bound"));
    let calls = random_calls(&mut rng, 2);
    let c = col();
    // Another block (a valid compression of it) or another input state: the tokens disagree.
    let mut other = calls.clone();
    other[1].block[13] ^= 4;
    let v = harness2(&other, &calls, 8).violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert_eq!(unbalanced_buses(&v), [bus::MEM_TOKEN]);
    let mut other = calls.clone();
    other[0].state[3] ^= 1 << 30;
    let v = harness2(&other, &calls, 8).violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert_eq!(unbalanced_buses(&v), [bus::MEM_TOKEN]);
    // Another old timestamp (a block cell on row 2, a state cell on the boundary row).
    for (row, slot) in [(2, 1), (17, 1)] {
        let mut h = harness(&calls, 8);
        let x = h.get(row, c.ots[slot]);
        h.set(row, c.ots[slot], x + F::ONE);
        assert!(unbalanced_buses(&h.violations()).contains(&bus::MEM_TOKEN));
    }
    // The row's words bound to its slots, and the slots' cells.
    for (row, field, name) in [
        (2, c.old[1][0], "memory block word"),
        (4, c.new[0][1], "memory block word"),
        (16, c.old[0][1], "memory state old"),
        (17, c.old[1][0], "memory state old"),
        (16, c.new[1][0], "memory state new"),
        (17, c.new[0][1], "memory state new"),
        (3, c.cell, "cell of the block rows"),
        (5, c.cell, "cell of the a1 read"),
        (17, c.cell, "cell of state cells 2, 3"),
    ] {
        let mut h = harness(&calls, 8);
        let x = h.get(row, field);
        h.set(row, field, x + F::ONE);
        assert_constraint(&h.violations(), name);
    }
    // The state's cells moved together (row 16 and the boundary row 17): no constraint objects, the tokens
    // disagree (the ECALL's a0 follows row 17's cell: `ecall_and_a1_are_bound`).
    let mut h = harness(&calls, 8);
    for row in [16, 17] {
        let x = h.get(row, c.cell);
        h.set(row, c.cell, x + F::ONE);
    }
    let v = h.violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert!(unbalanced_buses(&v).contains(&bus::MEM_TOKEN), "{v:#?}");
    // A token from the future, the memory agreeing: the LT32 range check fails.
    let mut h = harness(&calls, 8);
    let bad = calls[0].ts + 1;
    h.set(17, c.ots[0], F::from_u64(bad));
    let i = h
        .env
        .public
        .iter()
        .position(|p| {
            p.bus == bus::MEM_TOKEN
                && p.values[0] == F::from_u64(calls[0].state_ptr / 8 + 2)
                && p.values[1] == F::from_u64(calls[0].state_old_ts[2])
        })
        .unwrap();
    h.env.public[i].values[1] = F::from_u64(bad);
    let v = h.violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert_eq!(unbalanced_buses(&v), [bus::RANGE16]);
}
