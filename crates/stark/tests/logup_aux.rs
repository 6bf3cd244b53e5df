//! LogUp aux trace: term columns, running sum, bus sums, bounds.

mod proto_common;

use proto_common::*;
use zkrv_stark::air::{CompiledAir, Direction};
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, F};
use zkrv_stark::logup::{
    build_aux_trace, multiplicity_budget_ok, public_sum, LogupChallenges, LogupError,
    PublicInteraction, MAX_LOG_HEIGHT,
};

fn challenges() -> LogupChallenges {
    LogupChallenges::new(
        Ext3::from_u64s([12345, 678, 9]),
        Ext3::from_u64s([31, 41, 59]),
        4,
    )
}

#[test]
fn bus_sums_balance_and_running_sum_is_prefix_sum() {
    let fx = fixture(5);
    let ch = challenges();
    let fib = CompiledAir::new(&FibAir, 5).unwrap();
    let bytes = CompiledAir::new(&BytesAir, 5).unwrap();
    let (aux_f, sum_f) = build_aux_trace(&fib, &fx.traces[0], None, &ch, 32).unwrap();
    let (aux_b, sum_b) =
        build_aux_trace(&bytes, &fx.traces[1], fx.preprocessed[1].as_ref(), &ch, 32).unwrap();
    assert_eq!((aux_f.width, aux_b.width), (9, 6));
    let total = sum_f + sum_b + public_sum(&fx.public, &ch).unwrap();
    assert!(total.is_zero(), "buses must balance");

    // Direct computation of fib's sum: sum over rows of 1/fp(a) + 1/fp(b) (+ 1/fp_out(a) on the last row).
    let fp = |bus: u32, v: F| ch.z - F::from_u32(bus) - ch.alpha * v;
    let mut direct = Ext3::ZERO;
    let n = fx.traces[0].height();
    for i in 0..n {
        let r = fx.traces[0].row(i);
        direct += fp(BYTE_BUS, r[0]).inverse() + fp(BYTE_BUS, r[1]).inverse();
        if i == n - 1 {
            direct += fp(OUT_BUS, r[0]).inverse();
        }
        // Running sum column (ext column 2 = base columns 6..9) is the prefix sum of the term columns.
        let row = aux_f.row(i);
        let s = Ext3([row[6], row[7], row[8]]);
        let t0 = Ext3([row[0], row[1], row[2]]);
        let prev = if i == 0 {
            Ext3::ZERO
        } else {
            let p = aux_f.row(i - 1);
            Ext3([p[6], p[7], p[8]])
        };
        let t1 = Ext3([row[3], row[4], row[5]]);
        assert_eq!(s, prev + t0 + t1, "row {i}");
    }
    assert_eq!(direct, sum_f);
}

#[test]
fn multiplicity_bound_is_enforced_by_the_aux_builder() {
    let mut fx = fixture(4);
    fx.traces[1].row_mut(2)[0] = F::from_u64(1 << 40);
    let bytes = CompiledAir::new(&BytesAir, 5).unwrap();
    let err = build_aux_trace(
        &bytes,
        &fx.traces[1],
        fx.preprocessed[1].as_ref(),
        &challenges(),
        32,
    )
    .unwrap_err();
    assert!(
        matches!(err, LogupError::MultiplicityTooLarge { row: 2, .. }),
        "{err}"
    );
    // A "negative" multiplicity (p - 1) is out of range too.
    fx.traces[1].row_mut(2)[0] = -F::ONE;
    assert!(build_aux_trace(
        &bytes,
        &fx.traces[1],
        fx.preprocessed[1].as_ref(),
        &challenges(),
        32
    )
    .is_err());
}

#[test]
fn zero_fingerprint_is_reported() {
    let fx = fixture(4);
    // z = bus + alpha * a for a = fib's a on row 0 (a = 0): z = 1.
    let ch = LogupChallenges::new(
        Ext3::from_u64s([BYTE_BUS as u64, 0, 0]),
        Ext3::from_u64s([3, 1, 0]),
        1,
    );
    let fib = CompiledAir::new(&FibAir, 5).unwrap();
    let err = build_aux_trace(&fib, &fx.traces[0], None, &ch, 32).unwrap_err();
    assert_eq!(
        err,
        LogupError::ZeroFingerprint {
            table: "fib".into(),
            row: 0,
            interaction: 0
        }
    );
}

#[test]
fn multiplicity_budget() {
    let pi = |m: u64| PublicInteraction {
        bus: 0,
        values: vec![],
        multiplicity: F::from_u64(m),
        direction: Direction::Send,
    };
    assert!(multiplicity_budget_ok(&[(20, 10), (16, 3)], &[pi(5)], 32));
    // 2^26 rows x 64 interactions x 2^32 = 2^64 > p.
    assert!(!multiplicity_budget_ok(&[(26, 64)], &[], 32));
    assert!(multiplicity_budget_ok(&[(26, 63)], &[], 32));
    assert!(!multiplicity_budget_ok(&[(MAX_LOG_HEIGHT + 1, 1)], &[], 0));
    // A public multiplicity of p - 1 ("-1") exceeds the budget.
    assert!(!multiplicity_budget_ok(
        &[],
        &[pi(0xffff_ffff_0000_0000)],
        32
    ));
}

/// The compact public form (`PublicWithBytes`: a run of byte tuples kept as bytes) is the expanded list:
/// same count, statement digest, transcript, budget and public LogUp sum, with more bytes than one batch
/// inversion chunk (the sum is chunked) and a sum checked against a per-interaction inversion.
#[test]
fn public_bytes_form_equals_the_expanded_list() {
    use zkrv_stark::logup::{PublicSource, PublicWithBytes, PUBLIC_SUM_CHUNK};
    use zkrv_stark::statement::statement_digest;
    let one = |bus: u32, values: &[u64], direction| PublicInteraction {
        bus,
        values: values.iter().map(|&v| F::from_u64(v)).collect(),
        multiplicity: F::ONE,
        direction,
    };
    let bytes: Vec<u8> = (0..PUBLIC_SUM_CHUNK * 2 + 77)
        .map(|i| (i * 37 % 251) as u8)
        .collect();
    let compact = PublicWithBytes {
        head: vec![one(1, &[1, 2, 3, 4], Direction::Send)],
        bytes_bus: 11,
        start: 5,
        bytes: &bytes,
        direction: Direction::Receive,
        tail: vec![
            one(9, &[7], Direction::Receive),
            one(3, &[8, 9], Direction::Send),
        ],
    };
    let list = compact.to_vec();
    assert_eq!(list.len(), bytes.len() + 3);
    assert_eq!(compact.count(), list.len());
    assert_eq!(list[1], one(11, &[5, bytes[0] as u64], Direction::Receive));
    assert_eq!(list[list.len() - 2], one(9, &[7], Direction::Receive));
    let ch = challenges();
    let naive = list.iter().fold(Ext3::ZERO, |acc, p| {
        let fp = ch.fingerprint(p.bus, p.values.iter().copied());
        let inv = fp.try_inverse().unwrap();
        match p.direction {
            Direction::Send => acc + inv,
            Direction::Receive => acc - inv,
        }
    });
    assert_eq!(public_sum(&compact, &ch).unwrap(), naive);
    assert_eq!(public_sum(&list, &ch).unwrap(), naive);
    assert_eq!(
        statement_digest(b"st", &compact, &[]),
        statement_digest(b"st", &list, &[])
    );
    assert!(multiplicity_budget_ok(&[(10, 3)], &compact, 20));
    assert_eq!(
        multiplicity_budget_ok(&[(MAX_LOG_HEIGHT, 1 << 10)], &compact, 28),
        multiplicity_budget_ok(&[(MAX_LOG_HEIGHT, 1 << 10)], &list, 28)
    );
}
