//! End-to-end: the two-table machine (different heights, a preprocessed column, a bus and a public
//! interaction) proves and verifies, also through the byte format.

mod proto_common;

use proto_common::*;
use zkrv_stark::air::{compile_for, Air, AirBuilder};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::security::ProofShape;
use zkrv_stark::{preprocess, prove, verify, verify_bytes, Proof, StarkConfig};

#[test]
fn fib_and_bytes_prove_and_verify() {
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    for log_n in [1usize, 2, 3, 6, 9] {
        let fx = fixture(log_n);
        let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
        let t0 = std::time::Instant::now();
        let proof = prove(
            &config,
            &airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            b"stmt",
        )
        .unwrap();
        let prove_time = t0.elapsed();
        let bytes = proof.to_bytes();
        let t0 = std::time::Instant::now();
        verify(&config, 0, &airs(), &pre, &fx.public, b"stmt", &proof).unwrap();
        println!(
            "log_n {log_n}: prove {prove_time:?}, verify {:?}, proof {} bytes",
            t0.elapsed(),
            bytes.len()
        );
        assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);
        verify_bytes(&config, 0, &airs(), &pre, &fx.public, b"stmt", &bytes).unwrap();
    }
}

#[test]
fn proofs_are_deterministic() {
    let config = StarkConfig::dev();
    let fx = fixture(5);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let p1 = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, b"s").unwrap();
    let p2 = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, b"s").unwrap();
    assert_eq!(p1.to_bytes(), p2.to_bytes());
}

/// A table without interactions or preprocessed columns, alone (no aux round, no preprocessed round).
struct Square;
impl Air for Square {
    fn name(&self) -> &str {
        "square"
    }
    fn width(&self) -> usize {
        2
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, y) = (b.main(0), b.main(1));
        b.assert_zero("y=x^2", y - x.clone() * x);
    }
}

#[test]
fn single_table_without_buses() {
    let config = StarkConfig::dev();
    let airs: Vec<&dyn Air> = vec![&Square];
    let n = 16u64;
    let trace = RowMajorMatrix::new(
        (0..n)
            .flat_map(|i| [i, i * i])
            .map(zkrv_stark::field::F::new)
            .collect(),
        2,
    );
    let pre = preprocess(&airs, vec![None]).unwrap();
    let proof = prove(&config, &airs, &pre, vec![trace], &[], b"").unwrap();
    assert!(proof.aux_root.is_none());
    verify(&config, 0, &airs, &pre, &[], b"", &proof).unwrap();
}

#[test]
fn default_config_security() {
    // The fib table at every height up to the maximum: the default preset stays >= 100 bits provable,
    // the dev preset (today's fast parameters) below.
    let dev = StarkConfig::dev();
    assert_eq!(dev.max_constraint_degree(), 5);
    for log_h in [4usize, 20, 22, zkrv_stark::logup::MAX_LOG_HEIGHT] {
        for zk in [false, true] {
            let c = StarkConfig {
                zk,
                ..StarkConfig::default()
            };
            let airs = compile_for(&[&FibAir as &dyn Air], &c).unwrap();
            let shape = ProofShape::for_config(&airs, &[log_h], &c);
            let r = c.security(&shape);
            println!("2^{log_h} zk {zk}: {}", r.summary());
            assert!(r.provable_bits() >= 100, "{r}");
            let d = StarkConfig { zk, ..dev.clone() };
            assert!(d.security(&shape).provable_bits() < 100);
        }
    }
}

/// Degree 5 = blowup + 1 (4 quotient chunks, the maximum), with a transition constraint.
struct Pow5;
impl Air for Pow5 {
    fn name(&self) -> &str {
        "pow5"
    }
    fn width(&self) -> usize {
        2
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, y) = (b.main(0), b.main(1));
        let x5: zkrv_stark::symbolic::Expr = (0..5).map(|_| x.clone()).product();
        b.assert_zero("y=x^5", y - x5);
        b.assert_zero(
            "x'=x+1",
            b.is_transition() * (b.main_next(0) - x.clone() - 1u64),
        );
    }
}

#[test]
fn max_degree_table_proves() {
    use zkrv_stark::air::CompiledAir;
    use zkrv_stark::field::{PrimeCharacteristicRing, F};
    let config = StarkConfig::dev();
    assert_eq!(CompiledAir::new(&Pow5, 5).unwrap().num_quotient_chunks, 4);
    let airs: Vec<&dyn Air> = vec![&Pow5];
    let trace = RowMajorMatrix::new(
        (0..64u64)
            .flat_map(|i| [F::from_u64(i), F::from_u64(i).exp_u64(5)])
            .collect(),
        2,
    );
    let pre = preprocess(&airs, vec![None]).unwrap();
    let proof = prove(&config, &airs, &pre, vec![trace.clone()], &[], b"").unwrap();
    verify(&config, 0, &airs, &pre, &[], b"", &proof).unwrap();
    // With blowup 2 the max degree is 3: the AIR is refused.
    let mut small = StarkConfig::dev();
    small.fri.log_blowup = 1;
    let err = prove(&small, &airs, &pre, vec![trace], &[], b"").unwrap_err();
    assert!(matches!(err, zkrv_stark::ProveError::Air(_)), "{err}");
}

fn prove_mode(
    mode: zkrv_stark::backend::LdeMode,
    config: &StarkConfig,
    fx: &Fixture,
    pre: &zkrv_stark::PreprocessedData,
) -> Proof {
    use zkrv_stark::backend::{CpuBackend, TraceInput};
    let traces = fx.traces.iter().cloned().map(TraceInput::Host).collect();
    zkrv_stark::prove_with(
        &CpuBackend::new(mode),
        config,
        &airs(),
        pre,
        traces,
        &fx.public,
        b"lde",
    )
    .unwrap()
}

/// `LdeMode::Recompute` (coefficients + digest-only trees, LDE prefixes for the quotient, DEEP in
/// coefficient form, opened rows evaluated at the query points) gives the same proof bytes as
/// `LdeMode::Store` and `LdeMode::Auto`, in plain and zk mode (fixed test seed), and the proof verifies.
#[test]
fn lde_modes_give_identical_proofs() {
    use zkrv_stark::backend::LdeMode;
    let plain = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    let zk_seed = 20261130;
    println!("zk seed = {zk_seed}");
    let zk = StarkConfig {
        zk_seed: Some(zk_seed),
        debug_check: true,
        ..StarkConfig::dev_zk()
    };
    for (config, log_ns) in [(&plain, &[1usize, 4, 8][..]), (&zk, &[7usize][..])] {
        for &log_n in log_ns {
            let fx = fixture(log_n);
            let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
            let t0 = std::time::Instant::now();
            let store = prove_mode(LdeMode::Store, config, &fx, &pre);
            let t_store = t0.elapsed();
            let t0 = std::time::Instant::now();
            let recompute = prove_mode(LdeMode::Recompute, config, &fx, &pre);
            let t_recompute = t0.elapsed();
            let auto = prove_mode(LdeMode::Auto, config, &fx, &pre);
            println!(
                "zk {} log_n {log_n}: store {t_store:?}, recompute {t_recompute:?}",
                config.zk
            );
            let bytes = store.to_bytes();
            assert_eq!(
                recompute.to_bytes(),
                bytes,
                "zk {} log_n {log_n}",
                config.zk
            );
            assert_eq!(auto.to_bytes(), bytes, "zk {} log_n {log_n}", config.zk);
            verify_bytes(config, 0, &airs(), &pre, &fx.public, b"lde", &bytes).unwrap();
        }
    }
}

/// A `Recompute` round serves the same views as a `Store` round: dims, natural traces, whole LDEs and LDE
/// prefixes (which may be longer than asked, never different).
#[test]
fn recompute_round_serves_the_stored_views() {
    use zkrv_stark::backend::{CommitOps, CpuBackend, HostCopy, LdeMode, TraceInput};
    use zkrv_stark::field::F;
    use zkrv_stark::poly::lde_batch;
    let traces: Vec<RowMajorMatrix> = [(5usize, 3usize), (0, 2), (3, 1), (5, 4)]
        .iter()
        .enumerate()
        .map(|(k, &(lh, w))| {
            RowMajorMatrix::from_fn(1 << lh, w, |r, c| {
                F::new((k * 1000 + r * 10 + c) as u64 * 7919)
            })
        })
        .collect();
    let inputs = || traces.iter().cloned().map(TraceInput::Host).collect();
    for lb in [1usize, 2, 3] {
        for salt in [None, Some(7u64)] {
            let salt = || salt.map(|s| (zkrv_stark::zk::ZkRng::from_test_seed(s), 5u32));
            let store = CpuBackend::new(LdeMode::Store);
            let rec = CpuBackend::new(LdeMode::Recompute);
            let (root_s, cs) = store
                .commit(
                    inputs(),
                    lb,
                    salt(),
                    zkrv_stark::merkle::MerkleHash::Keccak256,
                )
                .unwrap();
            let (root_r, cr) = rec
                .commit(
                    inputs(),
                    lb,
                    salt(),
                    zkrv_stark::merkle::MerkleHash::Keccak256,
                )
                .unwrap();
            assert!(!cs.recomputes_lde());
            assert!(cr.recomputes_lde());
            assert_eq!(root_r, root_s, "lb {lb}");
            assert_eq!(rec.trace_dims(&cr), store.trace_dims(&cs), "lb {lb}");
            for (i, t) in traces.iter().enumerate() {
                assert_eq!(rec.download_trace(&cr, i).unwrap(), *t, "lb {lb} trace {i}");
                let lde = lde_batch(t, lb);
                assert_eq!(rec.download_lde(&cr, i).unwrap(), lde, "lb {lb} trace {i}");
                assert_eq!(
                    store.download_lde(&cs, i).unwrap(),
                    lde,
                    "lb {lb} trace {i}"
                );
                let n = t.height();
                for (start, rows) in [
                    (0, n),
                    (n, n),
                    (0, 2 * n),
                    (0, n << lb),
                    (0, 1),
                    ((n << lb) - n, n),
                ] {
                    for (c, name) in [(&cr, "recompute"), (&cs, "store")] {
                        let (p, off) = c.lde_rows(i, start, rows).unwrap();
                        assert!(p.height() >= off + rows);
                        assert_eq!(
                            p.values[off * t.width..(off + rows) * t.width],
                            lde.values[start * t.width..(start + rows) * t.width],
                            "{name} lb {lb} trace {i} start {start} rows {rows}"
                        );
                    }
                }
            }
        }
    }
}

/// The verifier's minimum security: a proof made with weak parameters (the dev preset, or one query) is
/// refused with `WeakParameters` naming its level when the minimum is above it, and accepted with a
/// minimum of 0 or of its own level; the 100-bit preset passes 100. No query at all is refused by the PCS
/// check first, whatever the minimum (a prover chooses the parameters: such a proof opens nothing).
#[test]
fn weak_parameters_and_no_queries_are_refused() {
    use zkrv_stark::pcs::PcsError;
    use zkrv_stark::VerifyError;
    let fx = fixture(7);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let run = |config: &StarkConfig| {
        let proof = prove(config, &airs(), &pre, fx.traces.clone(), &fx.public, b"s").unwrap();
        let compiled = compile_for(&airs(), config).unwrap();
        let bits = config
            .security(&ProofShape::of_proof(&compiled, &proof))
            .provable_bits();
        (proof, bits)
    };
    let one_query = {
        let mut c = StarkConfig::dev();
        c.fri.num_queries = 1;
        c
    };
    for config in [StarkConfig::dev(), StarkConfig::dev_zk(), one_query] {
        let (proof, bits) = run(&config);
        assert!(bits < 100, "{bits}");
        let v = |min| verify(&config, min, &airs(), &pre, &fx.public, b"s", &proof);
        assert_eq!(v(100), Err(VerifyError::WeakParameters { bits, min: 100 }));
        assert_eq!(
            v(bits + 1),
            Err(VerifyError::WeakParameters {
                bits,
                min: bits + 1
            })
        );
        v(0).unwrap();
        v(bits).unwrap();
        let e = verify_bytes(
            &config,
            100,
            &airs(),
            &pre,
            &fx.public,
            b"s",
            &proof.to_bytes(),
        );
        assert_eq!(e, Err(VerifyError::WeakParameters { bits, min: 100 }));
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("below the verifier's minimum of 100"));
    }
    let config = StarkConfig::default();
    let (proof, bits) = run(&config);
    assert!(bits >= 100, "{bits}");
    verify(&config, 100, &airs(), &pre, &fx.public, b"s", &proof).unwrap();
    // No query: the malicious prover's proof verifies nothing, and is refused by its own error.
    for zk in [false, true] {
        let mut config = StarkConfig {
            zk,
            zk_seed: Some(1),
            ..StarkConfig::dev()
        };
        config.fri.num_queries = 0;
        let (proof, _) = run(&config);
        for min in [0, 100] {
            assert_eq!(
                verify(&config, min, &airs(), &pre, &fx.public, b"s", &proof),
                Err(VerifyError::Pcs(PcsError::NoQueries)),
                "zk {zk} min {min}"
            );
        }
    }
}
