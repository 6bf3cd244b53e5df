//! POSEIDON2 (docs/tables.md §6.19): one row per `poseidon2` precompile call (a7 = `0x0100_0003`,
//! docs/abi.md): the width-8 Poseidon2 permutation over Goldilocks with Plonky3's parameters
//! (`p3_goldilocks::default_goldilocks_poseidon2_8`; Grassi, Khovratovich, Schofnegger, "Poseidon2", 2023,
//! §3: initial external layer M_E, 4 full rounds, 22 partial rounds, 4 full rounds; S-box x^7).
//!
//! Method: every S-box keeps degree <= 3 with one committed register `x3 = x^3` and its output
//! `x^7 = x3^2 x` either committed (partial rounds: `partial_post`) or folded into the committed state after
//! the round's linear layer (full rounds: `full_post = M_E (x3^2 x)`, degree 3). The linear layers are exact
//! linear expressions of committed cells, so the state between two committed points is never stored. The
//! 8 state cells are read from and written to memory at the call's slot `ts` (consume / emit `MEM_TOKEN`,
//! `LT32(old_ts, ts)`); inputs and outputs are proven canonical (< p), outputs are range-checked as two
//! words of two 16-bit halves each.

// Rounds and elements index several arrays (constants, columns, state) in step: index loops read best.
#![allow(clippy::needless_range_loop)]

use zkrv_stark::air::{assert_canonical, canonical_witness as canon_inv, Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::poseidon2::{eval_permutation, internal_diag, internal_rc, PermutationCols};
use zkrv_stark::symbolic::Expr;

use zkrv_executor::precompile::POSEIDON2;
use zkrv_executor::Poseidon2Event;

use crate::bus;
use crate::cols::columns;
use crate::tables::bitwise::Lookups;
use crate::tables::cpu::{c, lt32};

/// State width (elements), full rounds (4 before and 4 after the partial rounds) and partial rounds.
pub use zkrv_stark::poseidon2::{FULL_ROUNDS, PARTIAL_ROUNDS, WIDTH};

/// POSEIDON2 row (247 columns): one permutation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Poseidon2Cols<T> {
    /// `4 clk + 1` of the ECALL (the memory slot of the call).
    pub ts: T,
    /// `a0 / 8`: the first of the 8 state cells (element i in cell `cell + i`).
    pub cell: T,
    /// 1 on a call's row, 0 on padding (which holds the permutation of the zero state).
    pub mu: T,
    /// Element i before the call as its memory cell's two words `(lo, hi)`: x_i = lo + 2^32 hi.
    pub input: [[T; 2]; WIDTH],
    /// Canonicity witness of the input: `1 / (hi - (2^32 - 1))` when hi != 2^32 - 1 (docs/tables.md §6.19).
    pub in_inv: [T; WIDTH],
    /// Timestamp of each cell's consumed token and the LT32 witness of `old_ts < ts`.
    pub old_ts: [T; WIDTH],
    pub d0: [T; WIDTH],
    /// `x^3` of every S-box input `x = state + rc` of full round r (rounds 0..3, then 4..7).
    pub full_sbox: [[T; WIDTH]; FULL_ROUNDS],
    /// The state after full round r's linear layer, rounds 0..6 (round 7's is the output).
    pub full_post: [[T; WIDTH]; FULL_ROUNDS - 1],
    /// Partial round r: `x^3` and `x^7` of `x = state_0 + rc_r`.
    pub partial_sbox: [T; PARTIAL_ROUNDS],
    pub partial_post: [T; PARTIAL_ROUNDS],
    /// Element i after the permutation as four 16-bit halves (lo = h0 + 2^16 h1, hi = h2 + 2^16 h3).
    pub output: [[T; 4]; WIDTH],
    /// Canonicity witness of the output (as `in_inv`).
    pub out_inv: [T; WIDTH],
}
columns!(Poseidon2Cols, NUM_POSEIDON2_COLS);

/// Number of u64 in [`constants_u64`]: 8 external rounds x 8, 22 internal, 8 diagonal entries.
pub const NUM_CONSTANTS: usize = FULL_ROUNDS * WIDTH + PARTIAL_ROUNDS + WIDTH;

/// The permutation's constants as canonical u64, in the order a device fill reads them (one definition: the
/// ones [`Poseidon2Trace::new`] uses): the external round constants of rounds 0..8 (round-major, 8 each), the
/// 22 internal round constants, the 8 entries of M_I's diagonal `d` (`M_I = 1 + diag(d)`).
pub fn constants_u64() -> Vec<u64> {
    let mut v: Vec<u64> = (0..FULL_ROUNDS)
        .flat_map(|r| external_rc(r).map(|x| x.as_canonical_u64()))
        .collect();
    v.extend((0..PARTIAL_ROUNDS).map(|r| internal_rc(r).as_canonical_u64()));
    v.extend(internal_diag().map(|x| x.as_canonical_u64()));
    debug_assert_eq!(v.len(), NUM_CONSTANTS);
    v
}

/// The linear layers `M_E` and `M_I`, the round constants and the permutation's committed intermediates
/// ([`Poseidon2Trace`]) and constraints: one definition, shared with the Merkle and transcript hash and
/// the recursion POSEIDON2 table ([`zkrv_stark::poseidon2`]).
pub use zkrv_stark::poseidon2::{external_linear, external_rc, internal_linear, Poseidon2Trace};

/// The POSEIDON2 AIR.
pub struct Poseidon2Air;

impl Air for Poseidon2Air {
    fn name(&self) -> &str {
        "POSEIDON2"
    }
    /// A run without calls has no rows here: the table is absent (height 0, docs/stark.md §10). Its padding
    /// groups satisfy every constraint with every multiplicity 0, so absence proves what padding would.
    fn may_be_absent(&self) -> bool {
        true
    }
    fn width(&self) -> usize {
        NUM_POSEIDON2_COLS
    }
    fn column_names(&self) -> Vec<String> {
        Poseidon2Cols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_POSEIDON2_COLS).map(|i| b.main(i)).collect();
        let l = Poseidon2Cols::from_row(&m);
        let two32 = F::from_u64(1 << 32);
        let two16 = F::from_u64(1 << 16);
        b.assert_bool("mu bool", l.mu.clone());
        // Input: canonical elements from the cells' words.
        let s: [Expr; WIDTH] = std::array::from_fn(|i| {
            let [lo, hi] = &l.input[i];
            assert_canonical(b, "input", lo, hi, &l.in_inv[i]);
            lo.clone() + hi.clone() * two32
        });
        // Output words from their halves, canonical.
        let out_words: [[Expr; 2]; WIDTH] = std::array::from_fn(|i| {
            let h = &l.output[i];
            let lo = h[0].clone() + h[1].clone() * two16;
            let hi = h[2].clone() + h[3].clone() * two16;
            assert_canonical(b, "output", &lo, &hi, &l.out_inv[i]);
            [lo, hi]
        });
        let out: [Expr; WIDTH] =
            std::array::from_fn(|i| out_words[i][0].clone() + out_words[i][1].clone() * two32);

        eval_permutation(
            b,
            s,
            &PermutationCols {
                full_sbox: &l.full_sbox,
                full_post: &l.full_post,
                partial_sbox: &l.partial_sbox,
                partial_post: &l.partial_post,
            },
            &out,
        );

        // The call: ECALL[ts, a7, a0 = 8 cell, ret = 0].
        b.receive(
            bus::ECALL,
            vec![
                l.ts.clone(),
                c(POSEIDON2),
                Expr::zero(),
                l.cell.clone() * c(8),
                Expr::zero(),
                Expr::zero(),
                Expr::zero(),
            ],
            l.mu.clone(),
        );
        // Memory: each state cell read and written once at ts.
        for i in 0..WIDTH {
            let cell = l.cell.clone() + c(i as u64);
            b.receive(
                bus::MEM_TOKEN,
                vec![
                    cell.clone(),
                    l.old_ts[i].clone(),
                    l.input[i][0].clone(),
                    l.input[i][1].clone(),
                ],
                l.mu.clone(),
            );
            b.send(
                bus::MEM_TOKEN,
                vec![
                    cell,
                    l.ts.clone(),
                    out_words[i][0].clone(),
                    out_words[i][1].clone(),
                ],
                l.mu.clone(),
            );
            lt32(b, &l.old_ts[i], &l.ts, &l.d0[i], &l.mu);
            for h in &l.output[i] {
                b.send(bus::RANGE16, vec![h.clone()], l.mu.clone());
            }
        }
    }
}

/// One POSEIDON2 row as the fill needs it: the record's event, its timestamp and the cells' old timestamps
/// (from the memory walk).
#[derive(Clone, Copy, Debug)]
pub struct Poseidon2Row {
    pub event: Poseidon2Event,
    /// `4 cycle + 1` (the cycle counted from the start of the traced record).
    pub ts: u64,
    pub old_ts: [u64; WIDTH],
}

/// Writes one row: the permutation of `input` (u64s, taken mod p) with its memory columns (`ts`, `cell`, the
/// cells' `old_ts`); with `real` (a call's row: `mu = 1`) computes the LT32 witnesses and counts the row's
/// lookups there.
pub fn fill_row(
    row: &mut Poseidon2Cols<F>,
    input: &[u64; WIDTH],
    ts: u64,
    cell: u64,
    old_ts: &[u64; WIDTH],
    real: Option<&mut Lookups>,
) {
    let f = F::from_u64;
    let t = Poseidon2Trace::new(input.map(f));
    row.ts = f(ts);
    row.cell = f(cell);
    row.mu = F::from_bool(real.is_some());
    for i in 0..WIDTH {
        row.input[i] = [f(input[i] & 0xffff_ffff), f(input[i] >> 32)];
        row.in_inv[i] = canon_inv(input[i]);
        row.old_ts[i] = f(old_ts[i]);
    }
    row.full_sbox = t.full_sbox;
    row.full_post
        .copy_from_slice(&t.full_post[..FULL_ROUNDS - 1]);
    row.partial_sbox = t.partial_sbox;
    row.partial_post = t.partial_post;
    let out = t.output().map(|x| x.as_canonical_u64());
    for i in 0..WIDTH {
        row.output[i] = std::array::from_fn(|k| f((out[i] >> (16 * k)) & 0xffff));
        row.out_inv[i] = canon_inv(out[i]);
    }
    if let Some(lk) = real {
        for i in 0..WIDTH {
            row.d0[i] = f(lk.lt32(old_ts[i], ts));
            for k in 0..4 {
                lk.u16((out[i] >> (16 * k)) & 0xffff);
            }
        }
    }
}

/// The POSEIDON2 trace (`n x 247`, n = the next power of two >= rows, at least `min_height`; `0 x 247`,
/// absent, when there is no call): one row per call; padding rows hold the permutation of the zero state with
/// `mu = 0` (every constraint holds, nothing is sent). Errors: a row whose event is not a permutation of
/// canonical elements (a bad record).
pub fn poseidon2_trace(
    rows: &[Poseidon2Row],
    min_height: usize,
    lookups: &mut Lookups,
) -> Result<RowMajorMatrix, String> {
    // No calls: absent (height 0).
    let n = if rows.is_empty() {
        0
    } else {
        rows.len().next_power_of_two().max(min_height)
    };
    let mut values = vec![F::ZERO; n * NUM_POSEIDON2_COLS];
    let mut chunks = values.chunks_mut(NUM_POSEIDON2_COLS);
    for (k, r) in rows.iter().enumerate() {
        let row = Poseidon2Cols::from_row_mut(chunks.next().ok_or("height")?);
        let ev = &r.event;
        let mut want = ev.input;
        zkrv_executor::precompile::poseidon2(&mut want);
        if want != ev.output || ev.state_ptr % 8 != 0 {
            return Err(format!(
                "poseidon2 call {k} (cycle {}): the record's output is not the permutation of its input",
                ev.cycle
            ));
        }
        fill_row(
            row,
            &ev.input,
            r.ts,
            ev.state_ptr / 8,
            &r.old_ts,
            Some(lookups),
        );
    }
    let mut pad = vec![F::ZERO; NUM_POSEIDON2_COLS];
    fill_row(
        Poseidon2Cols::from_row_mut(&mut pad),
        &[0; WIDTH],
        0,
        0,
        &[0; WIDTH],
        None,
    );
    for chunk in chunks {
        chunk.copy_from_slice(&pad);
    }
    Ok(RowMajorMatrix::new(values, NUM_POSEIDON2_COLS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use p3_symmetric::Permutation;

    #[test]
    fn round_by_round_matches_plonky3() {
        let perm = p3_goldilocks::default_goldilocks_poseidon2_8();
        for seed in 0..16u64 {
            let input: [F; WIDTH] = std::array::from_fn(|i| {
                F::from_u64(
                    seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                        .wrapping_add(i as u64 * 0x1234_5678_9abc),
                )
            });
            let mut want = input;
            perm.permute_mut(&mut want);
            assert_eq!(Poseidon2Trace::new(input).output(), want, "seed {seed}");
        }
    }

    /// The canonicity gadget alone (the same constraints guard the inputs and the outputs).
    #[test]
    fn canonicity_gadget_accepts_exactly_the_values_below_p() {
        struct Canon;
        impl Air for Canon {
            fn name(&self) -> &str {
                "CANON"
            }
            fn width(&self) -> usize {
                3
            }
            fn eval(&self, b: &mut AirBuilder) {
                let (lo, hi, inv) = (b.main(0), b.main(1), b.main(2));
                assert_canonical(b, "x", &lo, &hi, &inv);
            }
        }
        let air = zkrv_stark::air::CompiledAir::new(&Canon, 3).unwrap();
        let check = |v: u64, inv: F| {
            let row = [F::from_u64(v & 0xffff_ffff), F::from_u64(v >> 32), inv];
            let t = RowMajorMatrix::new(row.repeat(8), 3);
            zkrv_stark::check::check_traces(std::slice::from_ref(&air), &[t], &[None], &[], 32)
        };
        for v in [
            0,
            1,
            0xffff_fffe_ffff_ffff,
            0xffff_ffff_0000_0000,
            0x1234_5678_9abc_def0,
        ] {
            check(v, canon_inv(v)).unwrap_or_else(|e| panic!("{v:#x}: {e}"));
        }
        // p, p + 1, 2^64 - 1: hi = 2^32 - 1 with lo != 0, whatever the witness.
        for v in [0xffff_ffff_0000_0001u64, 0xffff_ffff_0000_0002, u64::MAX] {
            for inv in [F::ZERO, F::ONE, canon_inv(v)] {
                let e = check(v, inv).expect_err("non-canonical accepted");
                assert!(e.to_string().contains("canonical"), "{v:#x}: {e}");
            }
        }
        // A wrong witness for a canonical value is refused too (it must be the inverse).
        assert!(check(5, F::from_u64(3)).is_err());
    }

    #[test]
    fn width_is_247() {
        assert_eq!(NUM_POSEIDON2_COLS, 247);
    }
}
