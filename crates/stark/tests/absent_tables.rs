//! Absent tables (height 0, docs/stark.md §10).

mod proto_common;

use proto_common::*;
use zkrv_stark::merkle::keccak256;
use zkrv_stark::{preprocess, prove, StarkConfig};

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
        let p = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, b"stmt").unwrap();
        let bytes = p.to_bytes();
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
