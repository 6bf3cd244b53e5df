//! AIR public values (`Expr::Public`, `Air::public_values`): instance constants that stay out of the circuit.
//!
//! The `ramp` table: columns `[x]`, public values `[start, step]`; `x_0 = start`, `x_{i+1} = x_i + step`,
//! and the last row sends `x - start` on a bus, which the statement's public interaction receives as
//! `(n - 1) step` (so a public value is read by a constraint and by an interaction).
//!
//! Checked: instances that differ in their values share one circuit; every evaluator reads the values
//! (prover, verifier, checker); the AIR digest gives a public value its own tag and binds the values; a
//! verifier with other values rejects the proof with `VerifyError::Statement`, and a prover that relabels
//! its proof for the verifier's values (or proves the verifier's values on another trace) is rejected too.

use zkrv_stark::air::{
    compile_all, compile_for, Air, AirBuilder, AirError, CompiledAir, Direction,
};
use zkrv_stark::check::{violations, CheckError};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::logup::PublicInteraction;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::statement::{air_digest, statement_digest};
use zkrv_stark::symbolic::{Expr, Node};
use zkrv_stark::{preprocess, prove, verify, StarkConfig, VerifyError};

const BUS: u32 = 7;
const STMT: &[u8] = b"ramp";

struct Ramp {
    start: u64,
    step: u64,
}

impl Air for Ramp {
    fn name(&self) -> &str {
        "ramp"
    }
    fn width(&self) -> usize {
        1
    }
    fn public_values(&self) -> Vec<F> {
        vec![F::from_u64(self.start), F::from_u64(self.step)]
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, x_next) = (b.main(0), b.main_next(0));
        let (start, step) = (b.public(0), b.public(1));
        b.assert_zero("start", b.is_first_row() * (x.clone() - &start));
        b.assert_zero("step", b.is_transition() * (x_next - &x - step));
        b.send(BUS, vec![x - start], b.is_last_row());
    }
}

/// The same table with its values as constants (what the machine's AIRs did before public values).
struct RampConst(u64, u64);

impl Air for RampConst {
    fn name(&self) -> &str {
        "ramp"
    }
    fn width(&self) -> usize {
        1
    }
    fn eval(&self, b: &mut AirBuilder) {
        let (x, x_next) = (b.main(0), b.main_next(0));
        b.assert_zero("start", b.is_first_row() * (x.clone() - self.0));
        b.assert_zero("step", b.is_transition() * (x_next - &x - self.1));
        b.send(BUS, vec![x - self.0], b.is_last_row());
    }
}

fn trace(log_n: usize, start: u64, step: u64) -> RowMajorMatrix {
    let v = (0..1u64 << log_n)
        .map(|i| F::from_u64(start) + F::from_u64(i) * F::from_u64(step))
        .collect();
    RowMajorMatrix::new(v, 1)
}

fn public(log_n: usize, step: u64) -> Vec<PublicInteraction> {
    vec![PublicInteraction {
        bus: BUS,
        values: vec![F::from_u64(((1u64 << log_n) - 1) * step)],
        multiplicity: F::ONE,
        direction: Direction::Receive,
    }]
}

fn compiled(air: &Ramp) -> CompiledAir {
    CompiledAir::new(air, 3).unwrap()
}

#[test]
fn instances_share_one_circuit() {
    let (a, b) = (
        compiled(&Ramp { start: 5, step: 3 }),
        compiled(&Ramp {
            start: 1 << 40,
            step: 9,
        }),
    );
    assert_eq!(a.circuit.nodes, b.circuit.nodes);
    assert_eq!(a.circuit.degrees, b.circuit.degrees);
    assert_eq!(a.public_values, vec![F::from_u64(5), F::from_u64(3)]);
    assert_ne!(a.public_values, b.public_values);
    assert!(a.circuit.nodes.contains(&Node::Public(0)));
    assert!(a.circuit.nodes.contains(&Node::Public(1)));
    // Constants in place of the values: circuits that differ per instance.
    let (c, d) = (
        CompiledAir::new(&RampConst(5, 3), 3).unwrap(),
        CompiledAir::new(&RampConst(6, 3), 3).unwrap(),
    );
    assert_ne!(c.circuit.nodes, d.circuit.nodes);
    // A public value has degree 0 (as a constant): `first * (x - start)` is degree 2.
    assert_eq!(Expr::Public(0).degree(), 0);
    assert_eq!(a.constraints[0].degree, 2);
    assert_eq!(a.constraints[0].degree, c.constraints[0].degree);
}

#[test]
fn air_digest_binds_public_values_and_tags_them() {
    let d = |start, step| air_digest(&[compiled(&Ramp { start, step })]);
    assert_eq!(d(5, 3), d(5, 3));
    assert_ne!(d(5, 3), d(6, 3));
    assert_ne!(d(5, 3), d(5, 4));
    // A public value is not the constant of the same value.
    let c = air_digest(&[CompiledAir::new(&RampConst(5, 3), 3).unwrap()]);
    assert_ne!(d(5, 3), c);
    // The statement digest binds them too (in table order).
    let p = public(3, 3);
    let sd = |start| statement_digest(STMT, &p, &[compiled(&Ramp { start, step: 3 })]);
    assert_eq!(sd(5), sd(5));
    assert_ne!(sd(5), sd(6));
}

/// A circuit leaf naming a public value the AIR does not declare is an AIR error, not a panic later.
#[test]
fn undeclared_public_value_is_an_air_error() {
    struct Bad;
    impl Air for Bad {
        fn name(&self) -> &str {
            "bad"
        }
        fn width(&self) -> usize {
            1
        }
        fn public_values(&self) -> Vec<F> {
            vec![F::ONE]
        }
        fn eval(&self, b: &mut AirBuilder) {
            b.assert_zero("reads public 1", b.main(0) - Expr::Public(1));
        }
    }
    assert_eq!(
        CompiledAir::new(&Bad, 3).unwrap_err(),
        AirError::PublicIndex {
            table: "bad".into(),
            index: 1,
            count: 1
        }
    );
}

/// The debug checker evaluates with the AIR's values: the right trace passes, another start fails the
/// `start` constraint by exactly the difference.
#[test]
fn checker_reads_public_values() {
    let air = compiled(&Ramp { start: 5, step: 3 });
    let p = public(3, 3);
    let ok = violations(
        std::slice::from_ref(&air),
        &[trace(3, 5, 3)],
        &[None],
        &p,
        20,
    )
    .unwrap();
    assert!(ok.is_empty(), "{ok:?}");
    let bad = violations(
        std::slice::from_ref(&air),
        &[trace(3, 7, 3)],
        &[None],
        &p,
        20,
    )
    .unwrap();
    assert!(
        bad.iter().any(|e| matches!(
            e,
            CheckError::Constraint { constraint, row: 0, value: 2, .. } if constraint == "start"
        )),
        "{bad:?}"
    );
}

#[test]
fn proofs_bind_public_values() {
    for zk in [false, true] {
        let config = StarkConfig {
            zk,
            debug_check: false,
            ..StarkConfig::dev()
        };
        let log_n = 7;
        let honest = Ramp { start: 5, step: 3 };
        let other_start = Ramp { start: 6, step: 3 };
        let other_step = Ramp { start: 5, step: 4 };
        let airs = |a: &'static Ramp| -> Vec<&'static dyn Air> { vec![a] };
        let leak = |r: Ramp| -> &'static Ramp { Box::leak(Box::new(r)) };
        let (honest, other_start, other_step) = (leak(honest), leak(other_start), leak(other_step));
        let pre = preprocess(&airs(honest), vec![None]).unwrap();
        let p = public(log_n, 3);
        let proof = prove(
            &config,
            &airs(honest),
            &pre,
            vec![trace(log_n, 5, 3)],
            &p,
            STMT,
        )
        .unwrap();
        verify(&config, 0, &airs(honest), &pre, &p, STMT, &proof).unwrap();
        // A verifier with another start or step: the statement digest differs.
        for other in [other_start, other_step] {
            assert_eq!(
                verify(&config, 0, &airs(other), &pre, &p, STMT, &proof),
                Err(VerifyError::Statement),
                "zk {zk}"
            );
        }
        // A malicious prover relabels its (valid, start 5) proof for the verifier's start 6: the transcript
        // absorbs the values (AIR digest), so the challenges differ and the OOD identity fails.
        let mut relabelled = proof.clone();
        relabelled.statement_digest =
            statement_digest(STMT, &p, &compile_for(&airs(other_start), &config).unwrap());
        assert_eq!(
            verify(&config, 0, &airs(other_start), &pre, &p, STMT, &relabelled),
            Err(VerifyError::OodMismatch {
                table: "ramp".into()
            }),
            "zk {zk}"
        );
        // A malicious prover proves the verifier's start 6 on its start-5 trace (the constraint `start`
        // fails on row 0): not a low-degree quotient.
        let forged = prove(
            &config,
            &airs(other_start),
            &pre,
            vec![trace(log_n, 5, 3)],
            &p,
            STMT,
        )
        .unwrap();
        let err = verify(&config, 0, &airs(other_start), &pre, &p, STMT, &forged).unwrap_err();
        assert!(
            matches!(err, VerifyError::Pcs(_) | VerifyError::OodMismatch { .. }),
            "zk {zk}: {err}"
        );
    }
}

/// Compiling several instances: the circuits are equal node for node, the public values differ, and the
/// instances' proofs are each verified only by their own values.
#[test]
fn compile_all_keeps_values_per_table() {
    let a = Ramp { start: 1, step: 2 };
    let b = Ramp { start: 3, step: 4 };
    let v = compile_all(&[&a, &b], 3).unwrap();
    assert_eq!(v[0].circuit.nodes, v[1].circuit.nodes);
    assert_eq!(v[0].public_values, vec![F::ONE, F::from_u64(2)]);
    assert_eq!(v[1].public_values, vec![F::from_u64(3), F::from_u64(4)]);
}
