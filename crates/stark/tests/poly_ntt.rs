//! NTT / LDE against naive O(n^2) evaluation.

use rand::{rngs::StdRng, Rng, SeedableRng};
use zkrv_stark::field::{Ext3, Field, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::poly::*;

fn seed() -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0017);
    println!("seed = {s}");
    s
}

fn rand_matrix(rng: &mut StdRng, h: usize, w: usize) -> RowMajorMatrix {
    RowMajorMatrix::from_fn(h, w, |_, _| F::new(rng.gen()))
}

fn naive_eval(coeffs: &[F], x: F) -> F {
    coeffs.iter().rev().fold(F::ZERO, |acc, &c| acc * x + c)
}

/// Naive interpolation-free check: evaluate coefficient columns at shift*w^i.
fn naive_coset_dft(coeffs: &RowMajorMatrix, shift: F) -> RowMajorMatrix {
    let h = coeffs.height();
    let log_h = h.trailing_zeros() as usize;
    let w = domain_generator(log_h);
    let cols: Vec<Vec<F>> = (0..coeffs.width).map(|c| coeffs.column(c)).collect();
    RowMajorMatrix::from_fn(h, coeffs.width, |r, c| {
        naive_eval(&cols[c], shift * w.exp_u64(r as u64))
    })
}

#[test]
fn poly_dft_matches_naive() {
    let mut rng = StdRng::seed_from_u64(seed());
    for log_n in 0..=12 {
        let widths: &[usize] = if log_n <= 9 { &[1, 3, 5] } else { &[1] };
        for &width in widths {
            let n = 1 << log_n;
            let coeffs = rand_matrix(&mut rng, n, width);
            let evals = dft_batch(coeffs.clone());
            assert_eq!(
                evals,
                naive_coset_dft(&coeffs, F::ONE),
                "log_n={log_n} w={width}"
            );
            assert_eq!(idft_batch(evals), coeffs);
            let shift = F::new(7);
            let cevals = coset_dft_batch(coeffs.clone(), shift);
            assert_eq!(cevals, naive_coset_dft(&coeffs, shift));
            assert_eq!(coset_idft_batch(cevals, shift), coeffs);
        }
    }
}

#[test]
fn poly_lde_matches_naive() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 1);
    for log_n in 0..=12usize {
        let width = if log_n <= 8 { 3 } else { 1 };
        let log_blowup = [1usize, 2, 3][log_n % 3];
        let n = 1 << log_n;
        let trace = rand_matrix(&mut rng, n, width);
        let lde = lde_batch(&trace, log_blowup);
        let log_big = log_n + log_blowup;
        assert_eq!(lde.height(), 1 << log_big);
        assert_eq!(lde.width, width);
        let coeffs = idft_batch(trace.clone());
        // Check a sample of rows (all rows for small sizes).
        let rows: Vec<usize> = if log_big <= 9 {
            (0..1 << log_big).collect()
        } else {
            (0..64).map(|_| rng.gen_range(0..1 << log_big)).collect()
        };
        for &i in &rows {
            let x = coset_point(log_big, i);
            assert_eq!(
                x,
                F::new(7) * domain_generator(log_big).exp_u64(reverse_bits(i, log_big) as u64)
            );
            for c in 0..width {
                assert_eq!(
                    lde.row(i)[c],
                    naive_eval(&coeffs.column(c), x),
                    "log_n={log_n} row={i} col={c}"
                );
            }
        }
        // lde_from_coeffs agrees.
        assert_eq!(lde_from_coeffs(&coeffs, log_blowup), lde);
    }
}

#[test]
fn poly_bit_reverse_and_ext_helpers() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 2);
    let mut m = rand_matrix(&mut rng, 16, 3);
    let orig = m.clone();
    bit_reverse_rows(&mut m);
    for i in 0..16 {
        assert_eq!(m.row(reverse_bits(i, 4)), orig.row(i));
    }
    bit_reverse_rows(&mut m);
    assert_eq!(m, orig);
    assert_eq!(reverse_bits(1, 4), 8);
    assert_eq!(reverse_bits(5, 0), 0);

    let coeffs: Vec<Ext3> = (0..8)
        .map(|_| Ext3::from_u64s([rng.gen(), rng.gen(), rng.gen()]))
        .collect();
    let shift = F::new(7);
    let evals = coset_dft_ext(&coeffs, shift);
    let w = domain_generator(3);
    for (i, e) in evals.iter().enumerate() {
        assert_eq!(
            *e,
            eval_ext_poly(&coeffs, Ext3::from_base(shift * w.exp_u64(i as u64)))
        );
    }
    assert_eq!(coset_idft_ext(&evals, shift), coeffs);
    assert_eq!(shift * shift.inverse(), F::ONE);
}

/// `lde_coset_block` blocks `c = 0..2^log_blowup`, concatenated, are the whole bit-reversed LDE (as
/// `lde_from_coeffs` and `lde_batch` compute it); block `c` is the coset `g·ω_N^{bitrev(c)}·H_n` in
/// bit-reversed order.
#[test]
fn lde_coset_blocks_concatenate_to_the_lde() {
    let seed = seed() ^ 3;
    let mut rng = StdRng::seed_from_u64(seed);
    for log_blowup in 1..=3usize {
        for log_n in [0usize, 1, 2, 3, 5, 8] {
            for width in [1usize, 4] {
                let n = 1 << log_n;
                let trace = rand_matrix(&mut rng, n, width);
                let coeffs = idft_batch(trace.clone());
                let lde = lde_from_coeffs(&coeffs, log_blowup);
                assert_eq!(lde, lde_batch(&trace, log_blowup), "seed {seed}");
                let mut values = Vec::with_capacity(lde.values.len());
                for c in 0..1usize << log_blowup {
                    let block = lde_coset_block(&coeffs, log_blowup, c);
                    assert_eq!(block.width, width);
                    assert_eq!(block.height(), n, "seed {seed} log_n {log_n} c {c}");
                    // Its rows are storage rows c·n.. of the LDE: points coset_point(log_N, c·n + j).
                    let log_big = log_n + log_blowup;
                    for j in [0, n / 2, n - 1] {
                        let x = coset_point(log_big, c * n + j);
                        for col in 0..width {
                            assert_eq!(
                                block.row(j)[col],
                                naive_eval(&coeffs.column(col), x),
                                "seed {seed} lb {log_blowup} log_n {log_n} c {c} row {j}"
                            );
                        }
                    }
                    values.extend_from_slice(&block.values);
                }
                assert_eq!(
                    RowMajorMatrix::new(values, width),
                    lde,
                    "seed {seed} lb {log_blowup} log_n {log_n} w {width}"
                );
            }
        }
    }
}

/// `lde_rows(coeffs, lb, start, rows)` is storage rows `[start, start + rows)` of the LDE, for `rows` a
/// multiple of `n`, not a multiple, `0`, `1` and the whole height, from `start = 0` and from other starts.
#[test]
fn lde_rows_are_the_lde_rows() {
    let seed = seed() ^ 4;
    let mut rng = StdRng::seed_from_u64(seed);
    for log_blowup in 1..=3usize {
        for log_n in [0usize, 1, 2, 4, 6] {
            let n = 1usize << log_n;
            let big = n << log_blowup;
            let width = 3;
            let trace = rand_matrix(&mut rng, n, width);
            let coeffs = idft_batch(trace.clone());
            let lde = lde_batch(&trace, log_blowup);
            let mut rows_list = vec![0, 1, n, 2 * n, big, big - 1, n + 1, (3 * n / 2).max(1)];
            rows_list.extend((0..4).map(|_| rng.gen_range(0..=big)));
            for rows in rows_list {
                if rows > big {
                    continue;
                }
                let p = lde_rows(&coeffs, log_blowup, 0, rows);
                assert_eq!(p.width, width);
                assert_eq!(
                    p.values,
                    lde.values[..rows * width],
                    "seed {seed} lb {log_blowup} n {n} rows {rows}"
                );
                for start in [n, rng.gen_range(0..=big - rows), big - rows] {
                    if start + rows > big {
                        continue;
                    }
                    let p = lde_rows(&coeffs, log_blowup, start, rows);
                    assert_eq!(
                        p.values,
                        lde.values[start * width..(start + rows) * width],
                        "seed {seed} lb {log_blowup} n {n} start {start} rows {rows}"
                    );
                }
            }
        }
    }
}
