//! The private input stays hidden (issue #4): an attack that any verifier can run on a non-zk proof recovers
//! the private input bytes from the opened INPUT rows; on a zk proof it recovers nothing.
//!
//! The attack: the INPUT table's `index` column is public knowledge (row i holds i), so its polynomial
//! `I(X)` on `H_n` is known. For each query, the opened INPUT row `[index, byte, is_eof, m]` sits at an
//! unknown LDE point `x`; the attacker finds `x` as the LDE point with `I(x) = index`, then interpolates the
//! `byte` column through the located points (degree `< n`) and evaluates it on `H_n`: the input. In zk mode
//! the committed `index` polynomial is randomized (degree `< 2n`, `f = I + Z_H r`), so no point matches,
//! and even located points would be too few for degree `2n`.

use zkrv_executor::asm::*;
use zkrv_executor::Program;
use zkrv_machine::{prove, verify};
use zkrv_stark::field::{Field, PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::poly::{coset_point, domain_generator};
use zkrv_stark::StarkConfig;

/// INPUT's position in the table order, and the main round's index in the opening proof (the first opened
/// round: preprocessed columns are evaluated by the verifier, not opened).
const INPUT_TABLE: usize = 13;
const MAIN_ROUND: usize = 0;

/// read(0, sp - 64, 16) then exit(0): reads the whole (short) private input, writes nothing.
fn reader() -> Program {
    let mut w = Vec::new();
    w.extend(li(10, 0));
    w.extend(li(11, 0x7fff_ffc0));
    w.extend(li(12, 16));
    w.extend(li(17, 63));
    w.push(ECALL);
    w.extend(li(10, 0));
    w.extend(li(17, 93));
    w.push(ECALL);
    Program::from_words(0x10000, &w).unwrap()
}

/// `sum_i i L_i(x)` on `H_n` (the public `index` column's polynomial) at `x` off `H_n`.
fn index_poly(log_n: usize, x: F) -> F {
    let n = 1usize << log_n;
    let omega = domain_generator(log_n);
    let zh = x.exp_u64(n as u64) - F::ONE;
    let n_inv = F::from_u64(n as u64).inverse();
    let mut w = F::ONE;
    let mut acc = F::ZERO;
    for i in 0..n {
        // L_i(x) = Z_H(x) ω^i / (n (x - ω^i))
        acc += F::from_u64(i as u64) * zh * w * n_inv * (x - w).inverse();
        w *= omega;
    }
    acc
}

/// Runs the attack; returns the recovered first `len` bytes (None where a byte is not recovered).
fn attack(
    proof: &zkrv_machine::Proof,
    config: &StarkConfig,
    len: usize,
) -> (usize, Vec<Option<u8>>) {
    let log_n = proof.stark.log_heights[INPUT_TABLE] as usize;
    let n = 1usize << log_n;
    // Candidate LDE domains: the verifier knows the mode; trying both sizes does not help a zk proof.
    let mut located: Vec<(F, F)> = Vec::new();
    for shift in [0usize, 1] {
        let lh = log_n + shift + config.fri.log_blowup;
        let table: Vec<(F, F)> = (0..1usize << lh)
            .map(|r| {
                let x = coset_point(lh, r);
                (x, index_poly(log_n, x))
            })
            .collect();
        for row in &proof.stark.pcs.round_openings[MAIN_ROUND].rows[INPUT_TABLE] {
            if let Some(&(x, _)) = table.iter().find(|(_, v)| *v == row[0]) {
                if !located.iter().any(|p| p.0 == x) {
                    located.push((x, row[1]));
                }
            }
        }
    }
    let omega = domain_generator(log_n);
    let bytes = (0..len)
        .map(|i| {
            if located.len() < n {
                return None;
            }
            let t = omega.exp_u64(i as u64);
            let pts = &located[..n];
            let mut v = F::ZERO;
            for (j, &(xj, yj)) in pts.iter().enumerate() {
                let mut l = F::ONE;
                for (m, &(xm, _)) in pts.iter().enumerate() {
                    if m != j {
                        l *= (t - xm) * (xj - xm).inverse();
                    }
                }
                v += yj * l;
            }
            u8::try_from(v.as_canonical_u64()).ok()
        })
        .collect();
    (located.len(), bytes)
}

#[test]
fn private_input_is_recovered_from_a_non_zk_proof_but_not_from_a_zk_proof() {
    let p = reader();
    let secret = b"s3cr3t";
    let run = |config: &StarkConfig| {
        let (st, proof) = prove(&p, secret, config).unwrap();
        verify(&p, &st, &proof, config, 0).unwrap();
        assert!(st.output.is_empty());
        let (n_located, bytes) = attack(&proof, config, secret.len());
        let in_bytes = proof.to_bytes().windows(secret.len()).any(|w| w == secret);
        (n_located, bytes, in_bytes)
    };
    let plain = StarkConfig::dev();
    let (loc_plain, rec_plain, _) = run(&plain);
    let zk = StarkConfig {
        zk_seed: Some(4),
        ..StarkConfig::dev_zk()
    };
    let (loc_zk, rec_zk, bytes_zk) = run(&zk);
    println!(
        "non-zk: {loc_plain} INPUT rows located, recovered {rec_plain:?}; zk: {loc_zk} located, recovered {rec_zk:?}"
    );
    let want: Vec<Option<u8>> = secret.iter().map(|&b| Some(b)).collect();
    assert_eq!(rec_plain, want, "the attack works on a non-zk proof");
    assert_eq!(
        loc_zk, 0,
        "no opened zk row matches the public index polynomial"
    );
    assert!(rec_zk.iter().all(|b| b.is_none()));
    assert!(!bytes_zk, "the input bytes do not appear in the zk proof");
}
