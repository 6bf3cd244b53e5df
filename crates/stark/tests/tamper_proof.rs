//! Every kind of tampering is rejected with a specific error.

mod proto_common;

use proto_common::hooked::Hooked;
use proto_common::*;
use zkrv_stark::backend::{LdeMode, TraceInput};
use zkrv_stark::check::CheckError;
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, F};
use zkrv_stark::pcs::PcsError;
use zkrv_stark::{
    preprocess, prove, prove_with, verify, PreprocessedData, Proof, ProveError, StarkConfig,
    VerifyError,
};

const STMT: &[u8] = b"program=fib;exit=0";

struct Setup {
    config: StarkConfig,
    fx: Fixture,
    pre: PreprocessedData,
}

fn setup() -> Setup {
    let config = StarkConfig::dev();
    let fx = fixture(5);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    Setup { config, fx, pre }
}

fn honest(s: &Setup) -> Proof {
    prove(
        &s.config,
        &airs(),
        &s.pre,
        s.fx.traces.clone(),
        &s.fx.public,
        STMT,
    )
    .unwrap()
}

fn check(s: &Setup, p: &Proof) -> Result<(), VerifyError> {
    verify(&s.config, 0, &airs(), &s.pre, &s.fx.public, STMT, p)
}

const ONE: Ext3 = Ext3::ONE;

#[test]
fn honest_proof_verifies() {
    let s = setup();
    check(&s, &honest(&s)).unwrap();
}

#[test]
fn trace_cell_is_named_by_checker_and_rejected_by_verifier() {
    let mut s = setup();
    let v = s.fx.traces[0].row(7)[0];
    s.fx.traces[0].row_mut(7)[0] = v + F::ONE; // a on row 7: breaks next_a on row 6
    s.config.debug_check = true;
    let err = prove(
        &s.config,
        &airs(),
        &s.pre,
        s.fx.traces.clone(),
        &s.fx.public,
        STMT,
    )
    .unwrap_err();
    match err {
        ProveError::Check(CheckError::Constraint {
            table,
            row,
            constraint,
            ..
        }) => assert_eq!(
            (table.as_str(), row, constraint.as_str()),
            ("fib", 6, "next_a")
        ),
        e => panic!("unexpected {e}"),
    }
    s.config.debug_check = false;
    let p = prove(
        &s.config,
        &airs(),
        &s.pre,
        s.fx.traces.clone(),
        &s.fx.public,
        STMT,
    )
    .unwrap();
    assert_eq!(
        check(&s, &p),
        Err(VerifyError::OodMismatch {
            table: "fib".into()
        })
    );
}

#[test]
fn multiplicity_is_rejected_as_bus_imbalance() {
    let mut s = setup();
    let m = s.fx.traces[1].row(5)[0];
    s.fx.traces[1].row_mut(5)[0] = m + F::ONE;
    let p = prove(
        &s.config,
        &airs(),
        &s.pre,
        s.fx.traces.clone(),
        &s.fx.public,
        STMT,
    )
    .unwrap();
    assert_eq!(check(&s, &p), Err(VerifyError::BusImbalance));
}

#[test]
fn aux_cell_is_rejected() {
    let s = setup();
    let traces = s.fx.traces.iter().cloned().map(TraceInput::Host).collect();
    let p = prove_with(
        // A backend that corrupts one aux cell (table `bytes`, row 3, the running sum's c1) after building it.
        &Hooked::new(
            |_| LdeMode::Store,
            |air, aux| {
                if air.name == "bytes" {
                    let w = aux.width;
                    aux.row_mut(3)[w - 2] += F::ONE;
                }
            },
        ),
        &s.config,
        &airs(),
        &s.pre,
        traces,
        &s.fx.public,
        STMT,
    )
    .unwrap();
    assert_eq!(
        check(&s, &p),
        Err(VerifyError::OodMismatch {
            table: "bytes".into()
        })
    );
}

#[test]
fn merkle_path_is_rejected() {
    let s = setup();
    let mut p = honest(&s);
    // Round 0 is the main round, 1 the aux round (preprocessed columns are not committed).
    p.pcs.round_openings[1].siblings[2][0] ^= 1;
    assert!(
        matches!(
            check(&s, &p),
            Err(VerifyError::Pcs(PcsError::Merkle { round: 1, .. }))
        ),
        "{:?}",
        check(&s, &p)
    );
    let mut p = honest(&s);
    p.pcs.round_openings[2].rows[0][0][1] += F::ONE;
    assert!(matches!(
        check(&s, &p),
        Err(VerifyError::Pcs(PcsError::Merkle { round: 2, .. }))
    ));
}

#[test]
fn ood_value_is_rejected() {
    let s = setup();
    for (round, mat, point, col, table) in [
        (0, 0, 0, 1, "fib"),
        (0, 1, 0, 0, "bytes"),
        (1, 0, 1, 4, "fib"),
        (2, 1, 0, 2, "bytes"),
    ] {
        let mut p = honest(&s);
        p.opened[round][mat][point][col] += ONE;
        assert_eq!(
            check(&s, &p),
            Err(VerifyError::OodMismatch {
                table: table.into()
            }),
            "opened[{round}][{mat}][{point}][{col}]"
        );
    }
    // A value no constraint reads (bytes' main column at zeta * omega) is still bound by the opening proof:
    // the opened values are absorbed before grinding.
    let mut p = honest(&s);
    p.opened[0][1][1][0] += ONE;
    assert_eq!(check(&s, &p), Err(VerifyError::Grinding));
}

#[test]
fn bus_sum_is_rejected() {
    let s = setup();
    let mut p = honest(&s);
    // Shift value between the two tables' sums: balance holds, the last-row constraints do not.
    p.bus_sums[0] += ONE;
    p.bus_sums[1] -= ONE;
    assert_eq!(
        check(&s, &p),
        Err(VerifyError::OodMismatch {
            table: "fib".into()
        })
    );
}

#[test]
fn fri_layer_value_is_rejected() {
    let s = setup();
    let mut p = honest(&s);
    p.pcs.fri_openings[1].rows[0][2][0] += F::ONE;
    let r = check(&s, &p);
    assert!(
        matches!(
            r,
            Err(VerifyError::Pcs(PcsError::FriMerkle { layer: 1, .. }))
        ),
        "{r:?}"
    );
}

/// The fixture's FRI at arity 2, 4 and 8 (dev preset, blowup 4: LDE heights 2^10 and 2^7, `Lf = 4`): layers
/// (size, arity) `(10,2)..(5,2)`, `(10,4) (8,2) (7,4) (5,2)` and `(10,8) (7,8)`.
fn setup_arity(log_arity: usize) -> Setup {
    let mut s = setup();
    s.config.fri.log_folding_arity = log_arity;
    s
}

#[test]
fn fri_layer_row_is_rejected_at_every_arity() {
    for (a, layers) in [(1, 6), (2, 4), (3, 2)] {
        let s = setup_arity(a);
        let p = honest(&s);
        check(&s, &p).unwrap();
        assert_eq!(p.pcs.fri_roots.len(), layers, "arity 2^{a}");
        for layer in [0, layers - 1] {
            let o = &p.pcs.fri_openings[layer];
            // Every opened row holds 2^a Ext3 values (the layer's width is 3·2^a, or 6 where it folds by 2).
            assert!(o.rows[0]
                .iter()
                .all(|r| r.len() % 6 == 0 && r.len() <= 3 << a));
            let mut bad = p.clone();
            let row = &mut bad.pcs.fri_openings[layer].rows[0][1];
            let last = row.len() - 1;
            row[last] += F::ONE;
            assert!(
                matches!(
                    check(&s, &bad),
                    Err(VerifyError::Pcs(PcsError::FriMerkle { layer: l, .. })) if l == layer
                ),
                "arity 2^{a}, layer {layer}: {:?}",
                check(&s, &bad)
            );
        }
    }
}

#[test]
fn fri_fold_value_is_rejected_at_every_arity() {
    for (a, layers) in [(1, 6), (2, 4), (3, 2)] {
        let s = setup_arity(a);
        let cheat = |target: usize| {
            // A prover whose fold `target` is off by one everywhere: the next layer (or the final
            // polynomial) is committed consistently, but does not match the fold of the layer above.
            let traces = s.fx.traces.iter().cloned().map(TraceInput::Host).collect();
            let b = Hooked::new(|_| LdeMode::Store, |_, _| {}).with_fold(move |l, cw| {
                if l == target {
                    cw.iter_mut().for_each(|v| *v += ONE);
                }
            });
            let p = prove_with(&b, &s.config, &airs(), &s.pre, traces, &s.fx.public, STMT);
            check(&s, &p.unwrap())
        };
        assert_eq!(cheat(usize::MAX), Ok(()), "arity 2^{a}: the hook alone");
        assert_eq!(
            cheat(0),
            Err(VerifyError::Pcs(PcsError::FriFold { layer: 1, query: 0 })),
            "arity 2^{a}"
        );
        assert_eq!(
            cheat(layers - 1),
            Err(VerifyError::Pcs(PcsError::FinalPoly { query: 0 })),
            "arity 2^{a}"
        );
    }
}

#[test]
fn final_polynomial_is_rejected() {
    let s = setup();
    let mut p = honest(&s);
    p.pcs.final_poly[0] += ONE;
    // The final polynomial is absorbed before grinding, so the (deterministic) nonce no longer works.
    assert_eq!(check(&s, &p), Err(VerifyError::Grinding));

    // Without grinding, the query phase catches it: the query indices change, so Merkle openings fail
    // (or, if they happened to match, the final-polynomial check).
    let mut s = setup();
    s.config.fri.query_grinding_bits = 0;
    let mut p = honest(&s);
    p.pcs.final_poly[0] += ONE;
    let r = check(&s, &p);
    assert!(
        matches!(
            r,
            Err(VerifyError::Pcs(
                PcsError::Merkle { .. } | PcsError::FinalPoly { .. }
            ))
        ),
        "{r:?}"
    );
}

#[test]
fn grinding_nonce_is_rejected() {
    let s = setup();
    let mut p = honest(&s);
    p.pcs.pow_nonce = p.pcs.pow_nonce.wrapping_add(1);
    assert_eq!(check(&s, &p), Err(VerifyError::Grinding));
}

#[test]
fn statement_is_rejected() {
    let s = setup();
    let p = honest(&s);
    assert_eq!(
        verify(
            &s.config,
            0,
            &airs(),
            &s.pre,
            &s.fx.public,
            b"program=fib;exit=1",
            &p
        ),
        Err(VerifyError::Statement)
    );
    let mut public = s.fx.public.clone();
    public[0].values[0] += F::ONE;
    assert_eq!(
        verify(&s.config, 0, &airs(), &s.pre, &public, STMT, &p),
        Err(VerifyError::Statement)
    );
    // A proof re-labelled for the other statement still fails (the transcript differs).
    let mut p2 = p.clone();
    let compiled = zkrv_stark::air::compile_for(&airs(), &s.config).unwrap();
    p2.statement_digest =
        zkrv_stark::statement::statement_digest(b"program=fib;exit=1", &s.fx.public, &compiled);
    assert!(verify(
        &s.config,
        0,
        &airs(),
        &s.pre,
        &s.fx.public,
        b"program=fib;exit=1",
        &p2
    )
    .is_err());
}

#[test]
fn shapes_and_heights_are_rejected() {
    let s = setup();
    let mut p = honest(&s);
    p.log_heights[0] += 1;
    assert!(matches!(
        check(&s, &p),
        Err(VerifyError::OodMismatch { .. }) | Err(VerifyError::Pcs(_))
    ));
    let mut p = honest(&s);
    p.log_heights[1] += 1; // bytes has a preprocessed column of fixed height
    assert!(matches!(check(&s, &p), Err(VerifyError::ShapeMismatch(_))));
    let mut p = honest(&s);
    p.log_heights[0] = 0;
    assert!(matches!(
        check(&s, &p),
        Err(VerifyError::HeightOutOfRange { .. })
    ));
    let mut p = honest(&s);
    p.log_heights[0] = 200;
    assert!(matches!(
        check(&s, &p),
        Err(VerifyError::HeightOutOfRange { .. })
    ));
    let mut p = honest(&s);
    p.opened[0][0][0].pop();
    assert!(matches!(check(&s, &p), Err(VerifyError::ShapeMismatch(_))));
    let mut p = honest(&s);
    p.aux_root = None;
    assert!(matches!(check(&s, &p), Err(VerifyError::ShapeMismatch(_))));
    // Preprocessed traces of the wrong height for the proof.
    let mut short = s.fx.preprocessed.clone();
    let m = short[1].as_mut().unwrap();
    m.values.truncate(m.values.len() / 2);
    let pre2 = preprocess(&airs(), short).unwrap();
    assert!(matches!(
        verify(
            &s.config,
            0,
            &airs(),
            &pre2,
            &s.fx.public,
            STMT,
            &honest(&s)
        ),
        Err(VerifyError::ShapeMismatch(_))
    ));
}

/// The bytes table's preprocessed trace with row 0 changed (another "program").
fn other_preprocessed(s: &Setup) -> zkrv_stark::PreprocessedData {
    let mut other = s.fx.preprocessed.clone();
    other[1].as_mut().unwrap().row_mut(0)[0] = F::from_u64(9);
    preprocess(&airs(), other).unwrap()
}

#[test]
fn proof_checked_against_other_preprocessed_values_is_rejected() {
    // An honest proof, checked against other preprocessed traces: the verifier's own values at zeta no
    // longer satisfy the table's constraints.
    let s = setup();
    let pre2 = other_preprocessed(&s);
    assert_eq!(
        verify(
            &s.config,
            0,
            &airs(),
            &pre2,
            &s.fx.public,
            STMT,
            &honest(&s)
        ),
        Err(VerifyError::OodMismatch {
            table: "bytes".into()
        })
    );
}

#[test]
fn prover_with_other_preprocessed_values_is_rejected() {
    // A prover that proves with its own (wrong) preprocessed table gets nothing into the proof that the
    // verifier uses in place of the trusted table.
    let s = setup();
    let pre2 = other_preprocessed(&s);
    let p = prove(
        &s.config,
        &airs(),
        &pre2,
        s.fx.traces.clone(),
        &s.fx.public,
        STMT,
    )
    .unwrap();
    assert_eq!(
        verify(&s.config, 0, &airs(), &pre2, &s.fx.public, STMT, &p),
        Err(VerifyError::BusImbalance),
        "consistent with its own table, the proof still fails the bus"
    );
    assert_eq!(
        check(&s, &p),
        Err(VerifyError::OodMismatch {
            table: "bytes".into()
        })
    );
}

#[test]
fn too_tall_tables_are_refused_by_the_prover() {
    let s = setup();
    let cfg = StarkConfig {
        log_max_multiplicity: 60,
        ..StarkConfig::dev()
    };
    let err = prove(
        &cfg,
        &airs(),
        &s.pre,
        s.fx.traces.clone(),
        &s.fx.public,
        STMT,
    )
    .unwrap_err();
    assert!(matches!(err, ProveError::MultiplicityBudget), "{err}");
}

/// A backend's grinding nonce is checked by the prover (one hash) before it is observed: a device that
/// returns a nonce without the proof of work fails the proof loudly. Any valid nonce verifies (the smallest
/// is the honest prover's convention, so that CPU and GPU proofs are byte-identical).
#[test]
fn backend_grinding_nonce_is_checked() {
    let s = setup();
    let bits = s.config.fri.query_grinding_bits;
    assert!(bits > 0, "the dev preset grinds");
    let run = |b: Hooked| {
        let traces = s.fx.traces.iter().cloned().map(TraceInput::Host).collect();
        prove_with(&b, &s.config, &airs(), &s.pre, traces, &s.fx.public, STMT)
    };
    let bad = Hooked::new(|_| LdeMode::Store, |_, _| {})
        .with_grind(|input, bits, n| (n + 1..).find(|&k| !input.ok(bits, k)).unwrap());
    match run(bad) {
        Err(ProveError::Backend(e)) => {
            assert!(e.to_string().contains("grinding nonce"), "{e}")
        }
        r => panic!("a failing nonce must fail the proof: {:?}", r.map(|_| ())),
    }
    // The second-smallest valid nonce: another proof, and it verifies.
    let other = Hooked::new(|_| LdeMode::Store, |_, _| {})
        .with_grind(|input, bits, n| (n + 1..).find(|&k| input.ok(bits, k)).unwrap());
    let p = run(other).unwrap();
    assert_ne!(p.pcs.pow_nonce, honest(&s).pcs.pow_nonce);
    assert_eq!(check(&s, &p), Ok(()));
}
