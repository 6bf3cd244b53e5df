//! `zkrv prove --segment-cycles` and `zkrv verify` of a multi-segment proof file (docs/continuations.md):
//! the whole statement is printed, a file with two segments swapped or one dropped is rejected naming it,
//! a segment size below the table minimum is refused before anything runs, and a run that fits in one
//! segment gives the one-segment file.

use std::process::Command;
use zkrv_sdk::proof_file::{decode_any, encode_segmented, Decoded};

const GUESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");

fn zkrv(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zkrv"))
        .args(args)
        .output()
        .expect("zkrv runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn segmented_prove_verify_and_rejections() {
    let dir = std::env::temp_dir().join(format!("zkrv-cont-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let elf = format!("{GUESTS}/bin/sha256.elf");
    let input = format!("{GUESTS}/inputs/sha256.bin");
    let p = dir.join("p.zkrv");
    let ps = p.to_str().unwrap();
    let out = zkrv(&[
        "prove",
        &elf,
        "--input",
        &input,
        "-o",
        ps,
        "--segment-cycles",
        "4096",
        "--no-zk",
        "--security",
        "dev",
        "--backend",
        "cpu",
    ]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(so.contains("segments            3 of 4096 rows"), "{so}");
    let out = zkrv(&["verify", ps, &elf, "--min-security", "50"]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        so.contains("proof OK") && so.contains("segments            3"),
        "{so}"
    );
    assert!(
        so.contains("cycles              10972 (at most 12285)"),
        "{so}"
    );
    let out = zkrv(&["verify", ps, &elf, "--min-security", "50", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (j["segments"].as_u64(), j["cycles"].as_u64()),
        (Some(3), Some(10972))
    );

    // Two segments swapped, one dropped: rewritten files, rejected with the reason.
    let bytes = std::fs::read(&p).unwrap();
    let Ok(Decoded::Segmented {
        statement,
        segment_rows,
        segments,
        config,
    }) = decode_any(&bytes)
    else {
        panic!("not a segmented file")
    };
    for (segs, want) in [
        (
            vec![
                segments[1].clone(),
                segments[0].clone(),
                segments[2].clone(),
            ],
            "out of order",
        ),
        (
            vec![segments[0].clone(), segments[2].clone()],
            "segment 1 of the run is missing",
        ),
    ] {
        let q = dir.join("q.zkrv");
        std::fs::write(
            &q,
            encode_segmented(&config, &statement, segment_rows, &segs).unwrap(),
        )
        .unwrap();
        let out = zkrv(&["verify", q.to_str().unwrap(), &elf, "--min-security", "50"]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(want), "{err}");
    }
    // A truncated file.
    let q = dir.join("t.zkrv");
    std::fs::write(&q, &bytes[..bytes.len() - 100]).unwrap();
    let out = zkrv(&["verify", q.to_str().unwrap(), &elf]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    // Below the table minimum (zk: 128 rows), refused before running.
    let out = zkrv(&["prove", &elf, "-o", ps, "--segment-cycles", "64"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("smaller than the smallest table (128 rows"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
