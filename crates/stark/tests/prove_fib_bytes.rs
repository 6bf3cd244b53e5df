//! End-to-end: the two-table machine (different heights, a preprocessed column, a bus and a public
//! interaction) proves and verifies, also through the byte format.

mod proto_common;

use proto_common::*;
use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::{preprocess, prove, verify, verify_bytes, Proof, StarkConfig};

#[test]
fn fib_and_bytes_prove_and_verify() {
    let config = StarkConfig {
        debug_check: true,
        ..StarkConfig::default()
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
        verify(&config, &airs(), &pre, &fx.public, b"stmt", &proof).unwrap();
        println!(
            "log_n {log_n}: prove {prove_time:?}, verify {:?}, proof {} bytes",
            t0.elapsed(),
            bytes.len()
        );
        assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);
        verify_bytes(&config, &airs(), &pre, &fx.public, b"stmt", &bytes).unwrap();
    }
}

#[test]
fn proofs_are_deterministic() {
    let config = StarkConfig::default();
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
    let config = StarkConfig::default();
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
    verify(&config, &airs, &pre, &[], b"", &proof).unwrap();
}

#[test]
fn default_config_security() {
    let config = StarkConfig::default();
    assert_eq!(config.max_constraint_degree(), 5);
    for (log_h, cols) in [(20usize, 200usize), (22, 1000), (26, 4000)] {
        let r = config.security_report(log_h, cols);
        println!("{r}");
        assert!(r.conjectured_bits >= 100.0, "{r}");
        assert!(
            r.provable_bits > 0.0 && r.provable_bits <= r.conjectured_bits + 1e-9,
            "{r}"
        );
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
    let config = StarkConfig::default();
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
    verify(&config, &airs, &pre, &[], b"", &proof).unwrap();
    // With blowup 2 the max degree is 3: the AIR is refused.
    let mut small = StarkConfig::default();
    small.fri.log_blowup = 1;
    let err = prove(&small, &airs, &pre, vec![trace], &[], b"").unwrap_err();
    assert!(matches!(err, zkrv_stark::ProveError::Air(_)), "{err}");
}
