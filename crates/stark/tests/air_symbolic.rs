//! Symbolic degree inference, AIR compilation and the debug checker's messages.

mod proto_common;

use proto_common::*;
use zkrv_stark::air::{Air, AirBuilder, AirError, CompiledAir};
use zkrv_stark::check::{check_traces, CheckError, Source};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::symbolic::{Expr, Node};

#[test]
fn degrees_are_inferred() {
    let a = Expr::Main {
        col: 0,
        next: false,
    };
    let b = Expr::Main { col: 1, next: true };
    assert_eq!(Expr::constant(5).degree(), 0);
    assert_eq!((a.clone() + 3u64).degree(), 1);
    assert_eq!((a.clone() * b.clone()).degree(), 2);
    assert_eq!(
        (Expr::IsTransition * (a.clone() * b.clone() - a.clone())).degree(),
        3
    );
    assert_eq!((-(a.clone() * a.clone() * a.clone()) + b).degree(), 3);
}

#[test]
fn compiled_fib_has_expected_degrees_and_layout() {
    let fib = CompiledAir::new(&FibAir, 5).unwrap();
    let degs: Vec<(String, usize)> = fib
        .constraints
        .iter()
        .map(|c| (c.name.clone(), c.degree))
        .collect();
    assert_eq!(
        degs,
        vec![
            ("first_a".to_string(), 2),
            ("first_b".to_string(), 2),
            ("next_a".to_string(), 2),
            ("next_b".to_string(), 2),
            ("carry_bool".to_string(), 2),
            ("carry_cube".to_string(), 3),
        ]
    );
    // Two linear-fingerprint sends (degree 3 together); the third (multiplicity is_last_row, degree 1)
    // would make degree 4 > cap 3, so it gets its own column.
    assert_eq!(fib.logup.groups, vec![vec![0, 1], vec![2]]);
    assert_eq!(fib.aux_width(), 3 * 3);
    assert_eq!(fib.degree, 3);
    assert_eq!(fib.num_quotient_chunks, 2);
    let bytes = CompiledAir::new(&BytesAir, 5).unwrap();
    assert_eq!(bytes.logup.groups, vec![vec![0]]);
    assert_eq!(bytes.degree, 2);
}

#[test]
fn shared_subexpressions_are_deduplicated() {
    struct Dup;
    impl Air for Dup {
        fn name(&self) -> &str {
            "dup"
        }
        fn width(&self) -> usize {
            2
        }
        fn eval(&self, b: &mut AirBuilder) {
            let s = b.main(0) + b.main(1);
            b.assert_zero("c0", s.clone() * s.clone());
            b.assert_zero("c1", b.main(0) + b.main(1) - 7u64);
        }
    }
    let c = CompiledAir::new(&Dup, 3).unwrap();
    let adds = c
        .circuit
        .nodes
        .iter()
        .filter(|n| matches!(n, Node::Add(..)))
        .count();
    assert_eq!(
        adds, 1,
        "main[0] + main[1] appears once: {:?}",
        c.circuit.nodes
    );
}

#[test]
fn degree_above_blowup_plus_one_is_rejected() {
    struct High;
    impl Air for High {
        fn name(&self) -> &str {
            "high"
        }
        fn width(&self) -> usize {
            1
        }
        fn eval(&self, b: &mut AirBuilder) {
            let x = b.main(0);
            b.assert_zero("ok", x.clone() * x.clone());
            b.assert_zero("x^4", x.clone() * x.clone() * x.clone() * x);
        }
    }
    assert_eq!(
        CompiledAir::new(&High, 3).unwrap_err(),
        AirError::DegreeTooHigh {
            table: "high".into(),
            constraint: "x^4".into(),
            degree: 4,
            max: 3
        }
    );
    assert!(CompiledAir::new(&High, 5).is_ok());
}

fn compiled() -> Vec<CompiledAir> {
    airs()
        .into_iter()
        .map(|a| CompiledAir::new(a, 5).unwrap())
        .collect()
}

#[test]
fn checker_accepts_honest_traces() {
    let fx = fixture(6);
    check_traces(&compiled(), &fx.traces, &fx.preprocessed, &fx.public, 32).unwrap();
}

#[test]
fn checker_names_table_row_and_constraint() {
    let mut fx = fixture(6);
    // Row 10, column b: breaks next_b on row 9 (the first row whose constraint sees it).
    let v = fx.traces[0].row(10)[1];
    fx.traces[0].row_mut(10)[1] = v + F::ONE;
    let err = check_traces(&compiled(), &fx.traces, &fx.preprocessed, &fx.public, 32).unwrap_err();
    match &err {
        CheckError::Constraint {
            table,
            row,
            constraint,
            ..
        } => {
            assert_eq!(
                (table.as_str(), *row, constraint.as_str()),
                ("fib", 9, "next_b")
            );
        }
        e => panic!("unexpected {e}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("`fib` row 9") && msg.contains("`next_b`"),
        "{msg}"
    );
}

#[test]
fn checker_names_unbalanced_bus_and_tuples() {
    let mut fx = fixture(6);
    // One fewer receive of byte 0 in the bytes table.
    let m = fx.traces[1].row(0)[0];
    fx.traces[1].row_mut(0)[0] = m - F::ONE;
    let err = check_traces(&compiled(), &fx.traces, &fx.preprocessed, &fx.public, 32).unwrap_err();
    match &err {
        CheckError::BusImbalance {
            bus,
            tuple,
            net,
            contributions,
            unbalanced,
            ..
        } => {
            assert_eq!(
                (*bus, tuple.as_slice(), *net, *unbalanced),
                (BYTE_BUS, &[0u64][..], 1, 1)
            );
            assert!(!contributions.is_empty());
            assert!(contributions.iter().all(|c| matches!(&c.source,
                Source::Row { table, .. } if table == "fib" || table == "bytes")));
        }
        e => panic!("unexpected {e}"),
    }
    println!("{err}");

    // Wrong public output: the output bus is unbalanced on both tuples.
    let mut fx = fixture(6);
    fx.public[0].values[0] += F::ONE;
    let err = check_traces(&compiled(), &fx.traces, &fx.preprocessed, &fx.public, 32).unwrap_err();
    match &err {
        CheckError::BusImbalance {
            bus: OUT_BUS,
            unbalanced: 2,
            more,
            ..
        } => assert_eq!(more.len(), 1, "{err}"),
        e => panic!("unexpected {e}"),
    }
    println!("{err}");
}

#[test]
fn checker_enforces_multiplicity_bound() {
    let mut fx = fixture(6);
    fx.traces[1].row_mut(3)[0] = F::from_u64(1 << 20);
    let err = check_traces(&compiled(), &fx.traces, &fx.preprocessed, &fx.public, 16).unwrap_err();
    assert!(
        matches!(err, CheckError::Multiplicity { ref table, row: 3, .. } if table == "bytes"),
        "{err}"
    );
}

/// `eval_folded` (precomputed powers + Horner for LogUp) equals Horner over all folded constraints.
#[test]
fn folding_matches_horner() {
    use zkrv_stark::field::Ext3;
    use zkrv_stark::logup::{fold_constraints, LogupChallenges};
    use zkrv_stark::symbolic::LeafValues;

    struct Leaves(Vec<Ext3>);
    impl LeafValues<Ext3> for Leaves {
        fn main(&self, col: usize, next: bool) -> Ext3 {
            self.0[col + 3 * next as usize]
        }
        fn preprocessed(&self, _: usize, _: bool) -> Ext3 {
            unreachable!()
        }
        fn is_first_row(&self) -> Ext3 {
            self.0[6]
        }
        fn is_last_row(&self) -> Ext3 {
            self.0[7]
        }
        fn is_transition(&self) -> Ext3 {
            self.0[8]
        }
    }
    let e = |k: u64| Ext3::from_u64s([k * 7 + 1, k * k + 3, k + 11]);
    let leaves = Leaves((0..9).map(e).collect());
    let air = CompiledAir::new(&FibAir, 5).unwrap();
    let k = air.logup.num_ext_columns();
    let aux_local: Vec<Ext3> = (20..20 + k as u64).map(e).collect();
    let aux_next: Vec<Ext3> = (40..40 + k as u64).map(e).collect();
    let ch = LogupChallenges::new(e(100), e(101), 2);
    let (alpha, bus_sum) = (e(102), e(103));
    let folded = air.eval_folded(
        &leaves,
        &aux_local,
        &aux_next,
        &ch,
        bus_sum,
        &air.fold_challenge(alpha),
        &mut Vec::new(),
    );
    let mut nodes = Vec::new();
    air.circuit.eval(&leaves, &air.public_values, &mut nodes);
    let mut acc = Ext3::ZERO;
    for c in &air.constraints {
        acc = acc * alpha + nodes[c.node as usize];
    }
    let sel = [leaves.0[6], leaves.0[7], leaves.0[8]];
    fold_constraints(
        &air.logup,
        &air.interactions,
        |i| nodes[i as usize],
        sel,
        &aux_local,
        &aux_next,
        &ch,
        bus_sum,
        alpha,
        &mut acc,
    );
    assert_eq!(folded, acc);
    assert!(!folded.is_zero());
}

/// Block evaluation (prover LDE path) gives the same node values as row-by-row evaluation.
#[test]
fn block_evaluation_matches_rows() {
    use zkrv_stark::symbolic::{BlockLeaves, LeafValues};
    const R: usize = 5;
    struct Row(usize);
    impl LeafValues<F> for Row {
        fn main(&self, col: usize, next: bool) -> F {
            F::from_u64((self.0 as u64 + 3) * 1_000_003 + (col as u64 + 10 * next as u64) * 7919)
        }
        fn preprocessed(&self, _: usize, _: bool) -> F {
            F::ZERO
        }
        fn is_first_row(&self) -> F {
            F::from_u64(self.0 as u64 + 100)
        }
        fn is_last_row(&self) -> F {
            F::from_u64(self.0 as u64 + 200)
        }
        fn is_transition(&self) -> F {
            F::from_u64(self.0 as u64 + 300)
        }
    }
    struct Block;
    impl BlockLeaves for Block {
        fn rows(&self) -> usize {
            R
        }
        fn fill(&self, node: Node, out: &mut [F]) {
            for (r, o) in out.iter_mut().enumerate() {
                let row = Row(r);
                *o = match node {
                    Node::Main { col, next } => row.main(col, next),
                    Node::IsFirstRow => row.is_first_row(),
                    Node::IsLastRow => row.is_last_row(),
                    Node::IsTransition => row.is_transition(),
                    _ => F::ZERO,
                };
            }
        }
    }
    let air = CompiledAir::new(&FibAir, 5).unwrap();
    let mut block = Vec::new();
    air.circuit
        .eval_block(&Block, &air.public_values, &mut block);
    let k = air.circuit.nodes.len();
    for r in 0..R {
        let mut row = Vec::new();
        air.circuit.eval(&Row(r), &air.public_values, &mut row);
        for node in 0..k {
            assert_eq!(block[node * R + r], row[node], "row {r} node {node}");
        }
    }
}

/// Which constraints and interactions read each main column, from the symbolic circuit: fib columns
/// `[a, b, carry]`, constraints first_a(0) first_b(1) next_a(2) next_b(3) carry_bool(4) carry_cube(5),
/// interactions BYTE a (0), BYTE b (1), OUT a (2); bytes receives the preprocessed value (a fixed entry).
#[test]
fn column_readers_follow_the_circuit() {
    use zkrv_stark::air::ColumnReaders;
    use zkrv_stark::logup::fixed_lookup_buses;
    let airs = compiled();
    let fib = &airs[0];
    let r = |constraints: &[usize], interactions: &[usize], next_row| ColumnReaders {
        constraints: constraints.to_vec(),
        interactions: interactions.to_vec(),
        next_row,
    };
    assert_eq!(
        fib.column_readers(),
        vec![
            r(&[0, 2, 3], &[0, 2], true),
            r(&[1, 2, 3], &[1], true),
            r(&[3, 4, 5], &[], false),
        ]
    );
    assert_eq!(
        fib.interaction_main_columns(),
        vec![vec![0], vec![1], vec![0]]
    );
    let next_b = fib.constraints[3].node;
    assert_eq!(
        fib.main_leaves(next_b),
        vec![(0, false), (1, false), (1, true), (2, false)]
    );
    assert_eq!(
        fib.circuit.leaves(next_b).len(),
        5,
        "is_transition and the four columns"
    );
    assert!((0..3).all(|i| !fib.is_fixed_entry(i)));
    let bytes = &airs[1];
    assert_eq!(bytes.column_readers(), vec![r(&[], &[0], false)]);
    assert!(bytes.is_fixed_entry(0));
    assert_eq!(fixed_lookup_buses(&airs), [BYTE_BUS].into());
    assert_eq!(fib.column_names, ["main[0]", "main[1]", "main[2]"]);
}

#[test]
fn column_names_must_match_the_width() {
    struct Named;
    impl Air for Named {
        fn name(&self) -> &str {
            "named"
        }
        fn width(&self) -> usize {
            2
        }
        fn column_names(&self) -> Vec<String> {
            vec!["x".into()]
        }
        fn eval(&self, b: &mut AirBuilder) {
            b.assert_zero("x", b.main(0) - b.main(1));
        }
    }
    assert_eq!(
        CompiledAir::new(&Named, 3).unwrap_err(),
        AirError::ColumnNames {
            table: "named".into(),
            names: 1,
            width: 2
        }
    );
}

/// `trace_row_at` gives the same leaves as the whole-trace walk.
#[test]
fn trace_row_at_matches_the_walk() {
    use zkrv_stark::logup::{trace_row_at, with_trace_rows};
    use zkrv_stark::symbolic::LeafValues;
    let fx = fixture(4);
    let walk = with_trace_rows(
        &fx.traces[0],
        None,
        || (),
        |_, _, row| {
            (
                row.main.to_vec(),
                row.main_next.to_vec(),
                row.is_first_row(),
                row.is_last_row(),
                row.is_transition(),
            )
        },
    );
    for (i, w) in walk.iter().enumerate() {
        let row = trace_row_at(&fx.traces[0], None, i);
        let one = (
            row.main.to_vec(),
            row.main_next.to_vec(),
            row.is_first_row(),
            row.is_last_row(),
            row.is_transition(),
        );
        assert_eq!(&one, w, "row {i}");
    }
}
