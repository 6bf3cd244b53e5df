//! KECCAKF (docs/tables.md §6.19.1): the `keccak_f` precompile (docs/abi.md, a7 = `0x0100_0001`), one
//! Keccak-f[1600] permutation (FIPS 202 §3.3, 24 rounds) per call, one row per round: a group of 24 rows.
//!
//! Method (the layout of Plonky3's `keccak-air`, with 32-bit words instead of 16-bit limbs and iota on
//! 7 bits): row r of a group holds the round's input state `a` as 32-bit words, the bits of `C`, `C'` and
//! `A'` (theta), and the round's output `out` as words; rho and pi are relabelings of `A'`'s bits, chi is a
//! degree-3 expression of them, iota flips the 7 bits of lane (0, 0) where round constants can be non-zero
//! (bits 0, 1, 3, 7, 15, 31, 63). Transitions copy `out` of round r into `a` of round r + 1.
//!
//! Round constants come from the one-hot round flags `round[24]` (main columns: the first row is round 0,
//! every transition rotates them), so that `RC[r]` bit z is the linear form `Σ_r round_r RC[r]_z`: no
//! preprocessed column (a preprocessed trace of a table whose height depends on the run would be committed
//! by the verifier on every proof) and no periodic column (the stark crate has none).
//!
//! Bus: the first row of a real group receives `ECALL[ts, 0x0100_0001, 0, 8 cell, 0, 0, 0]` and consumes
//! the 25 cells' tokens `MEM_TOKEN[cell + l, old_ts[l], a[l]]`; the last row emits `MEM_TOKEN[cell + l, ts,
//! out[l]]`; lane l's `LT32(old_ts[l], ts)` is checked on row l (lane 24 on row 0 too), all with
//! multiplicity `is_real` (constant within a group). Padding groups (`is_real = 0`) permute the zero state;
//! the table's last group may be cut short (24 does not divide a power of two): it must be padding.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::bitwise::Lookups;
use crate::tables::cpu::{c, lt32};

/// The `keccak_f` ecall number (a7), docs/abi.md.
pub const KECCAK_F_ECALL: u64 = zkrv_executor::precompile::KECCAK_F;
/// Rounds of Keccak-f[1600].
pub const NUM_ROUNDS: usize = 24;
/// Lanes of the state (lane (x, y) at index x + 5y).
pub const NUM_LANES: usize = 25;
/// The bit positions where a round constant can be non-zero (2^j - 1, FIPS 202 Algorithm 6).
pub const IOTA_BITS: [usize; 7] = [0, 1, 3, 7, 15, 31, 63];

/// Round constants RC[r] (FIPS 202 §3.2.5).
pub const RC: [u64; NUM_ROUNDS] = [
    0x0000_0000_0000_0001,
    0x0000_0000_0000_8082,
    0x8000_0000_0000_808a,
    0x8000_0000_8000_8000,
    0x0000_0000_0000_808b,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8009,
    0x0000_0000_0000_008a,
    0x0000_0000_0000_0088,
    0x0000_0000_8000_8009,
    0x0000_0000_8000_000a,
    0x0000_0000_8000_808b,
    0x8000_0000_0000_008b,
    0x8000_0000_0000_8089,
    0x8000_0000_0000_8003,
    0x8000_0000_0000_8002,
    0x8000_0000_0000_0080,
    0x0000_0000_0000_800a,
    0x8000_0000_8000_000a,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8080,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8008,
];

/// Rotation offsets `R[x][y]` of rho (FIPS 202 §3.2.2, Table 2).
pub const R: [[u32; 5]; 5] = [
    [0, 36, 3, 41, 18],
    [1, 44, 10, 45, 2],
    [62, 6, 43, 15, 61],
    [28, 55, 25, 21, 56],
    [27, 20, 39, 8, 14],
];

/// KECCAKF row (2402 columns): one round of one call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeccakfCols<T> {
    /// One-hot round index: `round[r] = 1` on the group's row r.
    pub round: [T; NUM_ROUNDS],
    /// 1 on the rows of a call, 0 on padding; constant within a group.
    pub is_real: T,
    /// The call's memory timestamp `4 clk + 1`; constant within a group.
    pub ts: T,
    /// The state's first cell (`a0 / 8`); constant within a group.
    pub cell: T,
    /// Timestamps of the lanes' tokens before the call; constant within a group.
    pub old_ts: [T; NUM_LANES],
    /// `old_ts[r]` on row r (`Σ_r round_r old_ts[r]`), the lane whose LT32 this row checks.
    pub lane_old_ts: T,
    /// LT32 witness of `lane_old_ts < ts`.
    pub d0: T,
    /// LT32 witness of `old_ts[24] < ts` (checked on the first row).
    pub d0_24: T,
    /// The round's input state, lane x + 5y as words (lo, hi).
    pub a: [[T; 2]; NUM_LANES],
    /// Bits of `C[x] = xor_y A[x, y]`.
    pub c: [[T; 64]; 5],
    /// Bits of `C'[x] = C[x] xor C[x - 1] xor ROT(C[x + 1], 1)` (= `xor_y A'[x, y]`).
    pub c_prime: [[T; 64]; 5],
    /// Bits of `A'[x, y] = A[x, y] xor C[x - 1] xor ROT(C[x + 1], 1)` (theta), lane x + 5y.
    pub a_prime: [[T; 64]; NUM_LANES],
    /// The round's output state (after chi and iota), lane x + 5y as words.
    pub out: [[T; 2]; NUM_LANES],
    /// Bits [`IOTA_BITS`] of lane (0, 0) after chi, before iota.
    pub iota_bits: [T; 7],
}
columns!(KeccakfCols, NUM_KECCAKF_COLS);

/// `a xor b xor c` of three bits (degree 3).
fn xor3(a: &Expr, b: &Expr, c: &Expr) -> Expr {
    let two = Expr::constant(2);
    let four = Expr::constant(4);
    a.clone() + b + c - (a.clone() * b + a.clone() * c + b.clone() * c) * two
        + a.clone() * b * c * four
}

/// Index of the bit of `A'` that is bit z of `B[x, y]` (rho and pi: `B[y, 2x + 3y] = ROT(A'[x, y],
/// R[x][y])`, so `B[x, y]` bit z is `A'[x + 3y, x]` bit `z - R`): (lane, bit).
pub fn b_source(x: usize, y: usize, z: usize) -> (usize, usize) {
    let (sx, sy) = ((x + 3 * y) % 5, x);
    let rot = R[sx][sy] as usize;
    (sx + 5 * sy, (z + 64 - rot) % 64)
}

/// The KECCAKF AIR.
pub struct KeccakfAir;

impl Air for KeccakfAir {
    fn name(&self) -> &str {
        "KECCAKF"
    }
    /// A run without calls has no rows here: the table is absent (height 0, docs/stark.md §10). Its padding
    /// groups satisfy every constraint with every multiplicity 0, so absence proves what padding would.
    fn may_be_absent(&self) -> bool {
        true
    }
    fn width(&self) -> usize {
        NUM_KECCAKF_COLS
    }
    fn column_names(&self) -> Vec<String> {
        KeccakfCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_KECCAKF_COLS).map(|i| b.main(i)).collect();
        let n: Vec<Expr> = (0..NUM_KECCAKF_COLS).map(|i| b.main_next(i)).collect();
        let (l, n) = (KeccakfCols::from_row(&m), KeccakfCols::from_row(&n));
        let one = Expr::one;
        let first = b.is_first_row();
        let tr = b.is_transition();
        let last_round = l.round[NUM_ROUNDS - 1].clone();

        // 1. Round flags: [1, 0, ..] on the first row, rotated by every transition (so one-hot everywhere).
        b.assert_zero(
            "first row is round 0",
            first.clone() * (l.round[0].clone() - one()),
        );
        for r in 1..NUM_ROUNDS {
            b.assert_zero("first row is round 0", first.clone() * &l.round[r]);
        }
        for r in 0..NUM_ROUNDS {
            b.assert_zero(
                "round flags rotate",
                tr.clone() * (n.round[(r + 1) % NUM_ROUNDS].clone() - &l.round[r]),
            );
        }

        // 2. Group constants: equal on the rows of a group (transitions that are not round 23).
        b.assert_bool("is_real bool", l.is_real.clone());
        let in_group = tr * (one() - &last_round);
        let mut same = vec![
            ("is_real", &l.is_real, &n.is_real),
            ("ts", &l.ts, &n.ts),
            ("cell", &l.cell, &n.cell),
        ];
        for k in 0..NUM_LANES {
            same.push(("old_ts", &l.old_ts[k], &n.old_ts[k]));
        }
        for (name, x, y) in same {
            b.assert_zero(
                format!("group constant {name}"),
                in_group.clone() * (y.clone() - x),
            );
        }
        b.assert_zero(
            "a cut group is padding",
            b.is_last_row() * &l.is_real * (one() - &last_round),
        );
        b.assert_zero(
            "lane_old_ts",
            l.lane_old_ts.clone()
                - (0..NUM_ROUNDS).fold(Expr::zero(), |acc, r| {
                    acc + l.round[r].clone() * &l.old_ts[r]
                }),
        );

        // 3. Theta.
        for bits in l.c.iter().chain(&l.a_prime) {
            for x in bits {
                b.assert_bool("bit", x.clone());
            }
        }
        for x in 0..5 {
            for z in 0..64 {
                b.assert_eq(
                    "c_prime",
                    l.c_prime[x][z].clone(),
                    xor3(
                        &l.c[x][z],
                        &l.c[(x + 4) % 5][z],
                        &l.c[(x + 1) % 5][(z + 63) % 64],
                    ),
                );
                // xor_y A'[x, y] = C'[x]: the sum differs from C' by 0, 2 or 4.
                let d = (0..5).fold(Expr::zero(), |acc, y| acc + &l.a_prime[x + 5 * y][z])
                    - &l.c_prime[x][z];
                b.assert_zero(
                    "c_prime is the parity of a_prime",
                    d.clone() * (d.clone() - c(2)) * (d - c(4)),
                );
            }
        }
        for y in 0..5 {
            for x in 0..5 {
                let lane = x + 5 * y;
                for h in 0..2 {
                    let word = (0..32).fold(Expr::zero(), |acc, k| {
                        let z = 32 * h + k;
                        acc + xor3(&l.a_prime[lane][z], &l.c[x][z], &l.c_prime[x][z]) * c(1 << k)
                    });
                    b.assert_eq("a is a_prime xor d", l.a[lane][h].clone(), word);
                }
            }
        }

        // 4. Rho, pi, chi, iota.
        let bit_b = |x: usize, y: usize, z: usize| {
            let (lane, bit) = b_source(x, y, z);
            l.a_prime[lane][bit].clone()
        };
        let chi = |x: usize, y: usize, z: usize| {
            let b0 = bit_b(x, y, z);
            let t = bit_b((x + 2) % 5, y, z) * (one() - bit_b((x + 1) % 5, y, z));
            b0.clone() + &t - b0 * t * c(2)
        };
        // RC[r] bit z on this row (linear in the flags).
        let rc = |z: usize| {
            (0..NUM_ROUNDS).fold(Expr::zero(), |acc, r| {
                if (RC[r] >> z) & 1 == 1 {
                    acc + &l.round[r]
                } else {
                    acc
                }
            })
        };
        for (j, &z) in IOTA_BITS.iter().enumerate() {
            b.assert_eq("iota bit", l.iota_bits[j].clone(), chi(0, 0, z));
        }
        for y in 0..5 {
            for x in 0..5 {
                let lane = x + 5 * y;
                for h in 0..2 {
                    let mut word = (0..32).fold(Expr::zero(), |acc, k| {
                        acc + chi(x, y, 32 * h + k) * c(1 << k)
                    });
                    if lane == 0 {
                        // out = chi xor RC: + 2^z (rc - 2 bit rc) at each iota bit.
                        for (j, &z) in IOTA_BITS.iter().enumerate() {
                            if z / 32 == h {
                                let rc = rc(z);
                                word = word
                                    + (rc.clone() - l.iota_bits[j].clone() * rc * c(2))
                                        * c(1 << (z % 32));
                            }
                        }
                    }
                    b.assert_eq("out is chi (iota on lane 0)", l.out[lane][h].clone(), word);
                }
            }
        }

        // 5. Rounds chain inside a group.
        for lane in 0..NUM_LANES {
            for h in 0..2 {
                b.assert_zero(
                    "next round input",
                    in_group.clone() * (n.a[lane][h].clone() - &l.out[lane][h]),
                );
            }
        }

        // 6. Bus: LT32 of lane r on row r and of lane 24 on row 0; the ECALL and the tokens.
        let at_first = l.is_real.clone() * &l.round[0];
        let at_last = l.is_real.clone() * &last_round;
        lt32(b, &l.lane_old_ts, &l.ts, &l.d0, &l.is_real);
        lt32(b, &l.old_ts[NUM_LANES - 1], &l.ts, &l.d0_24, &at_first);
        b.receive(
            bus::ECALL,
            vec![
                l.ts.clone(),
                c(KECCAK_F_ECALL & 0xffff_ffff),
                c(KECCAK_F_ECALL >> 32),
                l.cell.clone() * c(8),
                Expr::zero(),
                Expr::zero(),
                Expr::zero(),
            ],
            at_first.clone(),
        );
        for lane in 0..NUM_LANES {
            b.receive(
                bus::MEM_TOKEN,
                vec![
                    l.cell.clone() + c(lane as u64),
                    l.old_ts[lane].clone(),
                    l.a[lane][0].clone(),
                    l.a[lane][1].clone(),
                ],
                at_first.clone(),
            );
        }
        for lane in 0..NUM_LANES {
            b.send(
                bus::MEM_TOKEN,
                vec![
                    l.cell.clone() + c(lane as u64),
                    l.ts.clone(),
                    l.out[lane][0].clone(),
                    l.out[lane][1].clone(),
                ],
                at_last.clone(),
            );
        }
    }
}

/// One `keccak_f` call as the fill needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeccakfCall {
    /// The call's memory timestamp `4 clk + 1`.
    pub ts: u64,
    /// The state's byte address (a0; 8-aligned, the 200 bytes inside the guest space).
    pub ptr: u64,
    /// The state before the call, lane x + 5y (memory order).
    pub input: [u64; NUM_LANES],
    /// The timestamps of the 25 cells' tokens before the call (each < `ts`), from the memory walk.
    pub old_ts: [u64; NUM_LANES],
}

/// The values of one round, as the trace holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundValues {
    pub c: [u64; 5],
    pub c_prime: [u64; 5],
    pub a_prime: [u64; NUM_LANES],
    /// After chi, before iota.
    pub chi: [u64; NUM_LANES],
    /// After iota: the next round's input.
    pub out: [u64; NUM_LANES],
}

/// One Keccak-f round (FIPS 202 §3.3, `Rnd(A, r)`) on `a` (lane x + 5y), with its intermediate values.
pub fn keccak_round(a: &[u64; NUM_LANES], r: usize) -> RoundValues {
    let mut c = [0u64; 5];
    for (x, cx) in c.iter_mut().enumerate() {
        *cx = (0..5).fold(0, |acc, y| acc ^ a[x + 5 * y]);
    }
    let d: [u64; 5] = std::array::from_fn(|x| c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1));
    let c_prime: [u64; 5] = std::array::from_fn(|x| c[x] ^ d[x]);
    let a_prime: [u64; NUM_LANES] = std::array::from_fn(|i| a[i] ^ d[i % 5]);
    let bb: [u64; NUM_LANES] = std::array::from_fn(|i| {
        let (x, y) = (i % 5, i / 5);
        let (sx, sy) = ((x + 3 * y) % 5, x);
        a_prime[sx + 5 * sy].rotate_left(R[sx][sy])
    });
    let chi: [u64; NUM_LANES] = std::array::from_fn(|i| {
        let (x, y) = (i % 5, i / 5);
        bb[i] ^ (!bb[(x + 1) % 5 + 5 * y] & bb[(x + 2) % 5 + 5 * y])
    });
    let mut out = chi;
    out[0] ^= RC[r];
    RoundValues {
        c,
        c_prime,
        a_prime,
        chi,
        out,
    }
}

/// Keccak-f[1600] (24 rounds) on `a` in place, lane x + 5y (the order of `tiny_keccak::keccakf`).
pub fn keccak_f(a: &mut [u64; NUM_LANES]) {
    for r in 0..NUM_ROUNDS {
        *a = keccak_round(a, r).out;
    }
}

/// Number of u64 in [`constants_u64`]: 24 round constants, 25 rotation offsets, 7 iota bit positions.
pub const NUM_CONSTANTS: usize = NUM_ROUNDS + NUM_LANES + IOTA_BITS.len();

/// The permutation's constants in the order a device fill reads them (one definition: [`RC`], [`R`],
/// [`IOTA_BITS`]): `RC[0..24]`, then `R[x][y]` at `24 + 5 x + y`, then the 7 iota bit positions.
pub fn constants_u64() -> Vec<u64> {
    let mut v = RC.to_vec();
    v.extend(R.iter().flatten().map(|&r| r as u64));
    v.extend(IOTA_BITS.iter().map(|&z| z as u64));
    debug_assert_eq!(v.len(), NUM_CONSTANTS);
    v
}

/// Height of the KECCAKF trace for `calls` calls: 0 (absent) without calls, else the next power of two >=
/// max(24 calls, min_height).
pub fn keccakf_height(calls: usize, min_height: usize) -> usize {
    if calls == 0 {
        return 0;
    }
    (calls * NUM_ROUNDS).next_power_of_two().max(min_height)
}

fn bits(x: u64) -> [F; 64] {
    std::array::from_fn(|z| F::from_u64((x >> z) & 1))
}

fn words(x: u64) -> [F; 2] {
    [F::from_u64(x & 0xffff_ffff), F::from_u64(x >> 32)]
}

/// The KECCAKF trace (`n x 2402`, n = [`keccakf_height`]): 24 rows per call, then padding groups that
/// permute the zero state with `is_real = 0` (the last one cut at the table's end), adding the calls'
/// LT32 lookups.
///
/// # Panics
/// If a call's `old_ts[l] >= ts` (the memory walk guarantees `old_ts < ts`: a fill bug).
pub fn keccakf_trace(
    calls: &[KeccakfCall],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = keccakf_height(calls.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_KECCAKF_COLS];
    let padding = KeccakfCall {
        ts: 0,
        ptr: 0,
        input: [0; NUM_LANES],
        old_ts: [0; NUM_LANES],
    };
    for (g, group) in values.chunks_mut(NUM_ROUNDS * NUM_KECCAKF_COLS).enumerate() {
        let (call, real) = match calls.get(g) {
            Some(call) => (call, true),
            None => (&padding, false),
        };
        let mut a = call.input;
        for (r, chunk) in group.chunks_mut(NUM_KECCAKF_COLS).enumerate() {
            let v = keccak_round(&a, r);
            let row = KeccakfCols::from_row_mut(chunk);
            row.round[r] = F::ONE;
            row.is_real = F::from_bool(real);
            row.ts = F::from_u64(call.ts);
            row.cell = F::from_u64(call.ptr / 8);
            row.old_ts = call.old_ts.map(F::from_u64);
            row.lane_old_ts = F::from_u64(call.old_ts[r]);
            if real {
                row.d0 = F::from_u64(lookups.lt32(call.old_ts[r], call.ts));
                if r == 0 {
                    row.d0_24 = F::from_u64(lookups.lt32(call.old_ts[NUM_LANES - 1], call.ts));
                }
            }
            row.a = a.map(words);
            row.c = v.c.map(bits);
            row.c_prime = v.c_prime.map(bits);
            row.a_prime = v.a_prime.map(bits);
            row.out = v.out.map(words);
            row.iota_bits = IOTA_BITS.map(|z| F::from_u64((v.chi[0] >> z) & 1));
            a = v.out;
        }
    }
    RowMajorMatrix::new(values, NUM_KECCAKF_COLS)
}
