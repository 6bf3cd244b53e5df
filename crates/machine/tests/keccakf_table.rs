//! KECCAKF table (docs/tables.md §6.19.1): the fill against `tiny_keccak::keccakf`, the honest witness
//! accepted, and one negative test per constraint group (a round cell, a theta / chi bit, the round
//! constant, the round flags, the group constants and the cut last group, the ECALL tuple, the memory
//! tokens and their timestamps), each rejected by the checker with the constraint or bus it targets.

mod precompile_common;

use precompile_common::*;
use zkrv_machine::bus;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::keccakf::*;
use zkrv_stark::air::CompiledAir;
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};

const W: usize = NUM_KECCAKF_COLS;

fn col() -> KeccakfCols<usize> {
    KeccakfCols::<usize>::indices()
}

fn random_calls(rng: &mut Rng, n: usize) -> Vec<KeccakfCall> {
    (0..n)
        .map(|i| {
            let ts = 4 * (1000 + 37 * i as u64) + 1;
            KeccakfCall {
                ts,
                ptr: 0x2000 + 0x100 * i as u64,
                input: std::array::from_fn(|_| rng.next()),
                old_ts: std::array::from_fn(|l| match l {
                    0 => ts - 1,
                    1 => 0,
                    _ => rng.below(ts),
                }),
            }
        })
        .collect()
}

fn output(call: &KeccakfCall) -> [u64; 25] {
    let mut s = call.input;
    tiny_keccak::keccakf(&mut s);
    s
}

fn env_of(calls: &[KeccakfCall]) -> Env {
    let mut env = Env::default();
    for call in calls {
        env.ecall(call.ts, KECCAK_F_ECALL, call.ptr);
        let out = output(call);
        for (l, (&old_ts, (&input, &out))) in call
            .old_ts
            .iter()
            .zip(call.input.iter().zip(&out))
            .enumerate()
        {
            env.cell(call.ptr / 8 + l as u64, old_ts, input, call.ts, out);
        }
    }
    env
}

fn harness(calls: &[KeccakfCall], min_height: usize) -> Harness {
    let mut lookups = Lookups::new();
    let trace = keccakf_trace(calls, min_height, &mut lookups);
    Harness::new(&KeccakfAir, trace, &lookups, env_of(calls))
}

fn word(h: &Harness, row: usize, cols: [usize; 2]) -> u64 {
    h.get(row, cols[0]).as_canonical_u64() | h.get(row, cols[1]).as_canonical_u64() << 32
}

/// Rewrites rows `from..` of the group at `g` as the honest rounds from `state` (the input of round
/// `from`), so that a change made before `from` is carried through consistently.
fn refill_from(h: &mut Harness, g: usize, from: usize, state: [u64; 25]) {
    let mut a = state;
    for r in from..NUM_ROUNDS {
        let row = g * NUM_ROUNDS + r;
        let chunk = &mut h.traces[0].values[row * W..(row + 1) * W];
        let cols = KeccakfCols::from_row_mut(chunk);
        let v = keccak_round(&a, r);
        let bits = |x: u64| std::array::from_fn(|z| F::from_u64((x >> z) & 1));
        let words = |x: u64| [F::from_u64(x & 0xffff_ffff), F::from_u64(x >> 32)];
        cols.a = a.map(words);
        cols.c = v.c.map(bits);
        cols.c_prime = v.c_prime.map(bits);
        cols.a_prime = v.a_prime.map(bits);
        cols.out = v.out.map(words);
        cols.iota_bits = IOTA_BITS.map(|z| F::from_u64((v.chi[0] >> z) & 1));
        a = v.out;
    }
}

#[test]
fn reference_permutation_matches_tiny_keccak() {
    let mut rng = Rng(seed("reference_permutation_matches_tiny_keccak"));
    for _ in 0..20 {
        let input: [u64; 25] = std::array::from_fn(|_| rng.next());
        let (mut a, mut b) = (input, input);
        keccak_f(&mut a);
        tiny_keccak::keccakf(&mut b);
        assert_eq!(a, b);
    }
    let mask = IOTA_BITS.iter().fold(0u64, |m, &z| m | 1 << z);
    for rc in RC {
        assert_eq!(
            rc & !mask,
            0,
            "round constant {rc:#x} outside the iota bits"
        );
    }
}

#[test]
fn width_and_committed_cells_per_call() {
    let air = CompiledAir::new(&KeccakfAir, 3).unwrap();
    assert_eq!(NUM_KECCAKF_COLS, 2402);
    assert_eq!(air.degree, 3);
    let aux = 3 * air.logup.num_ext_columns();
    assert_eq!(aux, 87);
    let per_row = NUM_KECCAKF_COLS + aux;
    let per_call = per_row * NUM_ROUNDS;
    println!(
        "KECCAKF: {} main + {aux} aux = {per_row} cells per row, {per_call} per call, {:.1} per hashed byte \
         (rate 136 B); Plonky3 keccak-air: 2532 x 24 = {} main cells, {:.1} per byte",
        NUM_KECCAKF_COLS,
        per_call as f64 / 136.0,
        2532 * 24,
        2532.0 * 24.0 / 136.0
    );
    assert!(per_row < 2532);
}

#[test]
fn honest_calls_are_accepted_and_the_output_is_keccak_f() {
    let mut rng = Rng(seed("honest_calls_are_accepted_and_the_output_is_keccak_f"));
    for (calls, min_height) in [(0, 8), (1, 8), (3, 8), (5, 256)] {
        let calls = random_calls(&mut rng, calls);
        let h = harness(&calls, min_height);
        assert_eq!(
            h.traces[0].height(),
            keccakf_height(calls.len(), min_height)
        );
        let v = h.violations();
        assert!(v.is_empty(), "{} calls: {v:#?}", calls.len());
        let c = col();
        for (g, call) in calls.iter().enumerate() {
            let last = g * NUM_ROUNDS + NUM_ROUNDS - 1;
            let out: Vec<u64> = (0..NUM_LANES).map(|l| word(&h, last, c.out[l])).collect();
            assert_eq!(out, output(call));
        }
    }
}

#[test]
fn tampered_round_cells_are_rejected() {
    let mut rng = Rng(seed("tampered_round_cells_are_rejected"));
    let calls = random_calls(&mut rng, 2);
    let c = col();
    let base = harness(&calls, 8);

    // A state word of round 5.
    let mut h = harness(&calls, 8);
    let x = h.get(5, c.a[7][1]);
    h.set(5, c.a[7][1], x + F::ONE);
    let v = h.violations();
    assert_constraint(&v, "a is a_prime xor d");
    assert_constraint(&v, "next round input");

    // A bit of C (theta).
    let mut h = harness(&calls, 8);
    let x = h.get(3, c.c[2][10]);
    h.set(3, c.c[2][10], F::ONE - x);
    assert_constraint(&h.violations(), "c_prime");

    // A bit of C' (theta): the parity check and the word relation see it.
    let mut h = harness(&calls, 8);
    let x = h.get(4, c.c_prime[1][33]);
    h.set(4, c.c_prime[1][33], F::ONE - x);
    let v = h.violations();
    assert_constraint(&v, "c_prime");
    assert_constraint(&v, "c_prime is the parity of a_prime");

    // A bit of A' (theta; rho/pi/chi read it).
    let mut h = harness(&calls, 8);
    let x = h.get(24 + 9, c.a_prime[13][40]);
    h.set(24 + 9, c.a_prime[13][40], F::ONE - x);
    let v = h.violations();
    assert_constraint(&v, "c_prime is the parity of a_prime");
    assert_constraint(&v, "a is a_prime xor d");
    assert_constraint(&v, "out is chi (iota on lane 0)");

    // A non-boolean A' bit.
    let mut h = harness(&calls, 8);
    h.set(2, c.a_prime[0][0], F::from_u64(2));
    assert_constraint(&h.violations(), "bit");

    // A chi output word.
    let mut h = harness(&calls, 8);
    let x = h.get(11, c.out[18][0]);
    h.set(11, c.out[18][0], x + F::ONE);
    let v = h.violations();
    assert_constraint(&v, "out is chi (iota on lane 0)");
    assert_constraint(&v, "next round input");

    // An iota bit.
    let mut h = harness(&calls, 8);
    let x = h.get(7, c.iota_bits[3]);
    h.set(7, c.iota_bits[3], F::ONE - x);
    assert_constraint(&h.violations(), "iota bit");

    assert!(base.violations().is_empty());
}

#[test]
fn wrong_round_constant_is_rejected() {
    // Round 5 of call 0 xors a wrong constant into lane (0, 0) (bit 1 flipped as well) and the later
    // rounds are the honest rounds of that state: only the iota relation of round 5 and the output
    // tokens can tell.
    let mut rng = Rng(seed("wrong_round_constant_is_rejected"));
    let calls = random_calls(&mut rng, 1);
    let c = col();
    let mut h = harness(&calls, 8);
    let mut state: [u64; 25] = std::array::from_fn(|l| word(&h, 5, c.out[l]));
    state[0] ^= 2;
    let lo = h.get(5, c.out[0][0]).as_canonical_u64() ^ 2;
    h.set(5, c.out[0][0], F::from_u64(lo));
    refill_from(&mut h, 0, 6, state);
    let v = h.violations();
    assert_eq!(
        failed_constraints(&v),
        ["out is chi (iota on lane 0)"],
        "{v:#?}"
    );
    assert_bus(&v, bus::MEM_TOKEN);

    // Flags of another round on row 5 (round 6's constant): the rotation breaks.
    let mut h = harness(&calls, 8);
    h.set(5, c.round[5], F::ZERO);
    h.set(5, c.round[6], F::ONE);
    assert_constraint(&h.violations(), "round flags rotate");

    // The first row must be round 0.
    let mut h = harness(&calls, 8);
    for r in 0..NUM_ROUNDS {
        h.set(0, c.round[r], F::from_bool(r == 1));
    }
    assert_constraint(&h.violations(), "first row is round 0");
}

#[test]
fn group_transitions_are_enforced() {
    let mut rng = Rng(seed("group_transitions_are_enforced"));
    let calls = random_calls(&mut rng, 3);
    let c = col();

    // is_real switched off in the middle of a call.
    let mut h = harness(&calls, 8);
    for r in 10..NUM_ROUNDS {
        h.set(24 + r, c.is_real, F::ZERO);
    }
    assert_constraint(&h.violations(), "group constant is_real");

    // ts and cell changed on the second half of a call (the output tokens would go elsewhere).
    for (field, name) in [(c.ts, "group constant ts"), (c.cell, "group constant cell")] {
        let mut h = harness(&calls, 8);
        for r in 12..NUM_ROUNDS {
            let x = h.get(r, field);
            h.set(r, field, x + F::ONE);
        }
        assert_constraint(&h.violations(), name);
    }

    // An old timestamp changed after the first row (its LT32 is checked on row l).
    let mut h = harness(&calls, 8);
    for r in 1..NUM_ROUNDS {
        h.set(48 + r, c.old_ts[9], F::from_u64(5));
    }
    assert_constraint(&h.violations(), "group constant old_ts");

    // The rows after a call's last round start a new group: a state that does not continue the previous
    // call is fine there (honest traces do it), but a padding group marked real is a call nobody made.
    let h = harness(&calls, 8);
    assert!(h.violations().is_empty());
    let mut h = harness(&calls, 8);
    for r in 0..NUM_ROUNDS {
        h.set(3 * 24 + r, c.is_real, F::ONE);
    }
    let v = h.violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert_bus(&v, bus::MEM_TOKEN);

    // The cut group at the end of the table (3 calls: 128 rows = 5 groups + 8 rows) cannot be real.
    let mut h = harness(&calls, 8);
    assert_eq!(h.traces[0].height(), 128);
    for row in 5 * 24..128 {
        h.set(row, c.is_real, F::ONE);
    }
    assert_constraint(&h.violations(), "a cut group is padding");
}

#[test]
fn ecall_tuple_is_bound() {
    let mut rng = Rng(seed("ecall_tuple_is_bound"));
    let calls = random_calls(&mut rng, 2);
    // The CPU asked for another precompile number, another state pointer, another cycle.
    for (a7, ptr, ts) in [
        (KECCAK_F_ECALL + 1, calls[1].ptr, calls[1].ts),
        (KECCAK_F_ECALL, calls[1].ptr + 8, calls[1].ts),
        (KECCAK_F_ECALL, calls[1].ptr, calls[1].ts + 4),
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
        let v = h.violations();
        assert_eq!(unbalanced_buses(&v), [bus::ECALL], "{v:#?}");
    }
    // A call whose ECALL row is missing (is_real on, no CPU send).
    let mut h = harness(&calls, 8);
    h.env.public.retain(|p| p.bus != bus::ECALL);
    assert_eq!(unbalanced_buses(&h.violations()), [bus::ECALL]);
}

#[test]
fn memory_tokens_are_bound() {
    let mut rng = Rng(seed("memory_tokens_are_bound"));
    let calls = random_calls(&mut rng, 2);
    let c = col();

    // Another input state (a valid permutation of it): the old tokens and the new ones disagree.
    let mut h = harness(&calls, 8);
    let mut state = calls[1].input;
    state[11] ^= 1 << 40;
    refill_from(&mut h, 1, 0, state);
    let v = h.violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert_eq!(unbalanced_buses(&v), [bus::MEM_TOKEN]);

    // An output word changed on the last round together with the memory's view of it: chi rejects.
    let mut h = harness(&calls, 8);
    let x = h.get(23, c.out[4][1]);
    h.set(23, c.out[4][1], x + F::ONE);
    assert_constraint(&h.violations(), "out is chi (iota on lane 0)");

    // Another old timestamp in every row of the group: the consumed token is not the memory's.
    let mut h = harness(&calls, 8);
    for r in 0..NUM_ROUNDS {
        h.set(r, c.old_ts[6], F::from_u64(calls[0].old_ts[6] ^ 1));
        if r == 6 {
            h.set(r, c.lane_old_ts, F::from_u64(calls[0].old_ts[6] ^ 1));
        }
    }
    let v = h.violations();
    assert!(failed_constraints(&v).is_empty(), "{v:#?}");
    assert!(unbalanced_buses(&v).contains(&bus::MEM_TOKEN), "{v:#?}");

    // A token from the future (old_ts >= ts), memory agreeing: LT32's range check fails.
    for lane in [3, NUM_LANES - 1] {
        let mut h = harness(&calls, 8);
        let bad = calls[0].ts + 1;
        for r in 0..NUM_ROUNDS {
            h.set(r, c.old_ts[lane], F::from_u64(bad));
            if r == lane {
                h.set(r, c.lane_old_ts, F::from_u64(bad));
            }
        }
        let i = h
            .env
            .public
            .iter()
            .position(|p| {
                p.bus == bus::MEM_TOKEN
                    && p.values[0] == F::from_u64(calls[0].ptr / 8 + lane as u64)
                    && p.values[1] == F::from_u64(calls[0].old_ts[lane])
            })
            .unwrap();
        h.env.public[i].values[1] = F::from_u64(bad);
        let v = h.violations();
        assert!(failed_constraints(&v).is_empty(), "{v:#?}");
        assert_eq!(unbalanced_buses(&v), [bus::RANGE16], "lane {lane}: {v:#?}");
    }

    // lane_old_ts must be the row's lane.
    let mut h = harness(&calls, 8);
    h.set(4, c.lane_old_ts, F::from_u64(calls[0].old_ts[5]));
    assert_constraint(&h.violations(), "lane_old_ts");
}
