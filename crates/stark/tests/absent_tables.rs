//! Absent tables (height 0, docs/stark.md §10): a unit machine `[fib, bytes, square, caller]` whose
//! `square` table may be absent proves and verifies without it (zk and not), and a malicious prover that
//! drops a required table, drops `square` while `caller` needs its sends, or edits the height bytes or
//! truncates the proof gets a specific error, never a panic.

mod proto_common;

use proto_common::*;
use zkrv_stark::air::{compile_for, Air, AirBuilder, AirError};
use zkrv_stark::check::CheckError;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::keccak256;
use zkrv_stark::proof::{ProofFormatError, ABSENT_LOG_HEIGHT};
use zkrv_stark::{
    preprocess, prove, verify, verify_bytes, PreprocessedData, Proof, ProveError, StarkConfig,
    VerifyError,
};

const STMT: &[u8] = b"stmt";
/// Offset of table 0's height byte: magic 4, version 2, zk 1, statement digest 32, count 4.
const HEIGHTS_AT: usize = 43;

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Proofs in which every table is present are byte-identical to the proofs of zkrv before absent tables
/// existed: Keccak-256 of the fixture's proof bytes, non-zk and zk (fixed seed), pinned at commit fdca785.
#[test]
fn proofs_without_absent_tables_are_unchanged() {
    let fx = fixture(5);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let zk = StarkConfig {
        zk_seed: Some(20261130),
        ..StarkConfig::dev_zk()
    };
    let fx7 = fixture(7);
    let mut got = Vec::new();
    for (config, fx) in [(StarkConfig::dev(), &fx), (zk, &fx7)] {
        let p = prove(
            &config,
            &airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            b"stmt",
        )
        .unwrap();
        // The version field (offset 4) went from 5 to 6 with the precompile AIRs (docs/stark.md §7): the
        // pin is of the version-5 bytes, so everything else must be unchanged.
        let mut bytes = p.to_bytes();
        assert_eq!(bytes[4..6], zkrv_stark::proof::VERSION.to_le_bytes());
        bytes[4..6].copy_from_slice(&5u16.to_le_bytes());
        got.push((bytes.len(), hex(&keccak256(&bytes))));
    }
    println!("{got:?}");
    let want: Vec<(usize, String)> = GOLDEN.iter().map(|&(n, h)| (n, h.to_string())).collect();
    assert_eq!(got, want);
}

const GOLDEN: [(usize, &str); 2] = [
    (
        41322,
        "b59576904088f16c23e3287231b106a1de76b4d23aaf8d571fd9a82e372f5e8b",
    ),
    (
        77966,
        "d343ef149eda08fef63f3171c1867de07b4b6852fb539d03791475b900390c40",
    ),
];

fn zk_config() -> StarkConfig {
    StarkConfig {
        zk_seed: Some(20261130),
        ..StarkConfig::dev_zk()
    }
}

fn pre_absent(fx: &Fixture) -> PreprocessedData {
    preprocess(&airs_absent(), fx.preprocessed.clone()).unwrap()
}

fn prove_absent(config: &StarkConfig, fx: &Fixture) -> Result<Proof, ProveError> {
    prove(
        config,
        &airs_absent(),
        &pre_absent(fx),
        fx.traces.clone(),
        &fx.public,
        STMT,
    )
}

fn verify_absent(config: &StarkConfig, fx: &Fixture, bytes: &[u8]) -> Result<(), VerifyError> {
    verify_bytes(
        config,
        0,
        &airs_absent(),
        &pre_absent(fx),
        &fx.public,
        STMT,
        bytes,
    )
}

/// `square` absent (no calls): the proof verifies, marks it with the absent byte, opens 3 main matrices
/// (not 4) and is smaller than the proof with a present, all-padding `square`; with calls and `square`
/// present it verifies too. Non-zk at 2^5 and zk (fixed seed) at 2^7 rows.
#[test]
fn absent_table_proves_and_verifies() {
    for (config, log_n) in [(StarkConfig::dev(), 5), (zk_config(), 7)] {
        let config = StarkConfig {
            debug_check: true,
            ..config
        };
        let fx = fixture_absent(log_n, 0, false);
        let proof = prove_absent(&config, &fx).unwrap();
        assert_eq!(proof.log_heights[SQUARE], ABSENT_LOG_HEIGHT);
        assert_eq!(proof.table_log_heights()[SQUARE], None);
        assert_eq!(proof.opened[0].len(), 3, "main round: fib, bytes, caller");
        assert_eq!(proof.bus_sums.len(), 3, "bus sums: fib, bytes, caller");
        let bytes = proof.to_bytes();
        assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);
        verify_absent(&config, &fx, &bytes).unwrap();

        let padded = prove_absent(&config, &fixture_absent(log_n, 0, true)).unwrap();
        verify_absent(&config, &fx, &padded.to_bytes()).unwrap();
        assert_eq!(padded.opened[0].len(), 4);
        println!(
            "zk {}: square absent {} bytes, present (padding) {} bytes",
            config.zk,
            bytes.len(),
            padded.to_bytes().len()
        );
        assert!(bytes.len() < padded.to_bytes().len());

        let called = fixture_absent(log_n, 5, true);
        let proof = prove_absent(&config, &called).unwrap();
        verify_absent(&config, &called, &proof.to_bytes()).unwrap();
    }
}

/// The honest prover refuses a height-0 trace for a required table, naming it.
#[test]
fn prover_refuses_a_required_table_absent() {
    for t in [0usize, 3] {
        let mut fx = fixture_absent(5, 0, true);
        fx.traces[t] = RowMajorMatrix::new(Vec::new(), fx.traces[t].width);
        let err = prove_absent(&StarkConfig::dev(), &fx).unwrap_err();
        let name = ["fib", "bytes", "square", "caller"][t];
        assert!(
            matches!(&err, ProveError::RequiredTableAbsent { table } if table == name),
            "{err}"
        );
    }
}

/// `a`, but declaring itself `may_be_absent`: a malicious prover's view of a required table.
struct Optional(&'static dyn Air);

impl Air for Optional {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn width(&self) -> usize {
        self.0.width()
    }
    fn preprocessed_width(&self) -> usize {
        self.0.preprocessed_width()
    }
    fn eval(&self, b: &mut AirBuilder) {
        self.0.eval(b)
    }
    fn may_be_absent(&self) -> bool {
        true
    }
}

/// A malicious prover whose AIRs let `caller` be absent (same constraints, so the same transcript) makes a
/// proof without it; the verifier of the real machine rejects it with `RequiredTableAbsent`, and only that
/// check does: the prover's own AIR list accepts the proof.
#[test]
fn proof_marking_a_required_table_absent_is_rejected() {
    let config = StarkConfig::dev();
    let mut fx = fixture_absent(5, 0, true);
    fx.traces[3] = RowMajorMatrix::new(Vec::new(), 3);
    let caller = Optional(&CallerAir);
    let evil: Vec<&dyn Air> = vec![&FibAir, &BytesAir, &SquareAir, &caller];
    let pre = preprocess(&evil, fx.preprocessed.clone()).unwrap();
    let proof = prove(&config, &evil, &pre, fx.traces.clone(), &fx.public, STMT).unwrap();
    assert_eq!(proof.log_heights[3], ABSENT_LOG_HEIGHT);
    verify(&config, 0, &evil, &pre, &fx.public, STMT, &proof).unwrap();
    let err = verify_absent(&config, &fx, &proof.to_bytes()).unwrap_err();
    assert_eq!(
        err,
        VerifyError::RequiredTableAbsent {
            table: "caller".into()
        }
    );
    assert!(err.to_string().contains("`caller` is absent"), "{err}");
}

/// `caller` calls `square` but the prover leaves `square` out: the debug checker names the unbalanced
/// bus, and without it the verifier rejects the proof with `BusImbalance` (zk and not).
#[test]
fn absent_table_whose_sends_are_needed_fails_the_bus_balance() {
    for (config, log_n) in [(StarkConfig::dev(), 5), (zk_config(), 7)] {
        let fx = fixture_absent(log_n, 3, false);
        let checked = StarkConfig {
            debug_check: true,
            ..config.clone()
        };
        let err = prove_absent(&checked, &fx).unwrap_err();
        assert!(
            matches!(&err, ProveError::Check(CheckError::BusImbalance { bus, .. }) if *bus == SQUARE_BUS),
            "{err}"
        );
        let proof = prove_absent(&config, &fx).unwrap();
        assert_eq!(
            verify_absent(&config, &fx, &proof.to_bytes()),
            Err(VerifyError::BusImbalance)
        );
    }
}

/// Every edit of a height byte is rejected, never a panic; the deterministic cases with their specific
/// error: a required table marked absent (`RequiredTableAbsent`), the absent `square` given a height or the
/// present one marked absent (`ShapeMismatch`: the opened matrices do not match), heights out of range
/// (`HeightOutOfRange`), `bytes` off its preprocessed height (`ShapeMismatch`).
#[test]
fn flipped_height_bytes_are_rejected() {
    let config = StarkConfig::dev();
    let fx = fixture_absent(5, 0, false);
    let absent = prove_absent(&config, &fx).unwrap().to_bytes();
    let present = prove_absent(&config, &fixture_absent(5, 0, true))
        .unwrap()
        .to_bytes();
    let names = ["fib", "bytes", "square", "caller"];
    for (bytes, label) in [(&absent, "square absent"), (&present, "square present")] {
        for (t, name) in names.iter().enumerate() {
            let at = HEIGHTS_AT + t;
            let orig = bytes[at];
            for v in [0u8, 1, 4, 5, 6, 8, 9, 26, 27, 0x7F, 0xFE, 0xFF] {
                if v == orig {
                    continue;
                }
                let mut b = bytes.clone();
                b[at] = v;
                let err = verify_absent(&config, &fx, &b)
                    .expect_err(&format!("{label}: table {t} height {orig} -> {v} verified"));
                let shape = matches!(err, VerifyError::ShapeMismatch(_));
                let range = matches!(err, VerifyError::HeightOutOfRange { .. });
                let ok = match (t, v) {
                    (0 | 1 | 3, 0xFF) => {
                        err == VerifyError::RequiredTableAbsent {
                            table: name.to_string(),
                        }
                    }
                    (_, 0 | 27 | 0x7F | 0xFE) => range,
                    (1, _) => shape,
                    (SQUARE, _) if orig == ABSENT_LOG_HEIGHT || v == ABSENT_LOG_HEIGHT => shape,
                    // fib, caller or a present square at another valid height: another transcript, the
                    // same shapes (`OodMismatch` or an opening error).
                    _ => true,
                };
                println!("{label}: table {t} height {orig} -> {v}: {err}");
                assert!(ok, "{label}: table {t} height {orig} -> {v}: {err:?}");
            }
        }
    }
}

/// Every truncation of a proof with an absent table, and a height list cut short or grown, is a format
/// error, never a panic.
#[test]
fn truncated_proofs_are_rejected() {
    let config = StarkConfig::dev();
    let fx = fixture_absent(5, 0, false);
    let bytes = prove_absent(&config, &fx).unwrap().to_bytes();
    let lens = (0..256).chain((256..bytes.len()).step_by(61));
    for len in lens {
        let err = verify_absent(&config, &fx, &bytes[..len]).unwrap_err();
        assert!(
            matches!(
                err,
                VerifyError::Format(
                    ProofFormatError::Truncated { .. } | ProofFormatError::Length { .. }
                )
            ),
            "prefix of {len} bytes: {err:?}"
        );
    }
    // The height count one less / one more: the heights no longer line up with the rest of the bytes.
    for count in [3u32, 5] {
        let mut b = bytes.clone();
        b[HEIGHTS_AT - 4..HEIGHTS_AT].copy_from_slice(&count.to_le_bytes());
        assert!(verify_absent(&config, &fx, &b).is_err(), "count {count}");
    }
}

/// A table with preprocessed columns has a fixed height: declaring it `may_be_absent` is an AIR error.
#[test]
fn preprocessed_table_cannot_be_absent() {
    let bytes = Optional(&BytesAir);
    let airs: Vec<&dyn Air> = vec![&FibAir, &bytes];
    let err = compile_for(&airs, &StarkConfig::dev()).unwrap_err();
    assert_eq!(
        err,
        AirError::AbsentWithPreprocessed {
            table: "bytes".into()
        }
    );
}

/// Every table absent: refused by the prover, and by the verifier on a proof edited to say so.
#[test]
fn all_tables_absent_is_refused() {
    let config = StarkConfig::dev();
    let airs: Vec<&dyn Air> = vec![&SquareAir];
    let pre = preprocess(&airs, vec![None]).unwrap();
    let err = prove(
        &config,
        &airs,
        &pre,
        vec![RowMajorMatrix::new(Vec::new(), 3)],
        &[],
        STMT,
    )
    .unwrap_err();
    assert!(
        matches!(err, ProveError::Shape(ref m) if m.contains("every table")),
        "{err}"
    );
    let trace = RowMajorMatrix::new(vec![zkrv_stark::field::F::new(0); 3 * 8], 3);
    let mut bytes = prove(&config, &airs, &pre, vec![trace], &[], STMT)
        .unwrap()
        .to_bytes();
    verify_bytes(&config, 0, &airs, &pre, &[], STMT, &bytes).unwrap();
    bytes[HEIGHTS_AT] = ABSENT_LOG_HEIGHT;
    let err = verify_bytes(&config, 0, &airs, &pre, &[], STMT, &bytes).unwrap_err();
    assert!(
        matches!(err, VerifyError::ShapeMismatch(ref m) if m.contains("every table")),
        "{err:?}"
    );
}
