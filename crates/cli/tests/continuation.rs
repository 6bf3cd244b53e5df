//! `zkrv prove --segment-cycles` and `zkrv verify` of a multi-segment proof file (docs/continuations.md):
//! the whole statement, per-segment progress, `--profile`/`--profile-json`/`--stats` (sums over the
//! segments, per segment times) are printed, a file with two segments swapped or one dropped is rejected naming it,
//! a segment size below the table minimum is refused before anything runs, and a zero-knowledge run that
//! needs segments only with `--public-segment-boundaries`. (A run that fits in one
//! segment gives the one-segment file: tests/new_user.rs `segment_jobs_is_checked_noted_and_capped`.)

use zkrv_sdk::proof_file::{decode_any, encode_segmented, Decoded};

const GUESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");

mod common;
use common::*;

#[test]
fn segmented_prove_verify_and_rejections() {
    let dir = std::env::temp_dir().join(format!("zkrv-cont-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let elf = format!("{GUESTS}/bin/sha256.elf");
    let input = format!("{GUESTS}/inputs/sha256.bin");
    let p = dir.join("p.zkrv");
    let ps = p.to_str().unwrap();
    let pj = dir.join("p.json");
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
        "--segment-jobs",
        "5",
        "--profile",
        "--stats",
        "--profile-json",
        pj.to_str().unwrap(),
    ]);
    let so = text(&out.stdout);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(so.contains("segments            3 of 4096 rows"), "{so}");
    // --segment-jobs above the segment count is capped to it.
    assert!(se.contains("cpu, 3 at a time"), "{se}");
    // Progress: one line per segment, done / total, and the time left until the last.
    for k in 1..=3 {
        let line = if k < 3 {
            format!("[{k}/3 done, about ")
        } else {
            "[3/3 done]".to_string()
        };
        assert!(se.contains(&line), "{se}");
    }
    // --stats, --profile, --profile-json of a segmented run: sums over the segments and per segment.
    assert!(so.contains("--stats: CPU backend"), "{so}");
    assert!(so.contains("trace generation    host"), "{so}");
    assert!(
        so.contains("  witness (sum)") && so.contains("  prove (sum)"),
        "{so}"
    );
    assert!(so.contains("segment   worker"), "{so}");
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&pj).unwrap()).unwrap();
    assert_eq!(
        (j["segment_count"].as_u64(), j["segment_rows"].as_u64()),
        (Some(3), Some(4096))
    );
    let per: Vec<u64> = j["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    assert_eq!(per, [0, 1, 2]);
    let stage = |name: &str| {
        j["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .and_then(|s| s["secs"].as_f64())
    };
    let sum: f64 = j["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["prove_secs"].as_f64().unwrap())
        .sum();
    let total = stage("segments/prove (sum)").expect("summed prove stage");
    assert!(so.contains("security            59 bits provable"), "{so}");
    assert!((total - sum).abs() < 1e-6, "{total} vs {sum}");
    let commits = j["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "segments/prove (sum)/main commit")
        .expect("the prover's stages summed over the segments");
    assert_eq!(commits["calls"].as_u64(), Some(3));
    let out = zkrv(&["verify", ps, &elf, "--min-security", "50"]);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        so.contains("proof OK") && so.contains("segments            3"),
        "{so}"
    );
    assert!(so.contains("cycles              10972 (proven)"), "{so}");
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
    // The version field set to 3 (one proof) on this version-4 file: named as a corrupt version field,
    // not as a bad magic or a malformed proof.
    let q = dir.join("v3.zkrv");
    let mut v = bytes.clone();
    v[8..12].copy_from_slice(&3u32.to_le_bytes());
    std::fs::write(&q, &v).unwrap();
    let out = zkrv(&["verify", q.to_str().unwrap(), &elf]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "the version field says 3 (one proof), but the file is laid out as version 4 (segments)"
        ),
        "{err}"
    );
    assert!(!err.contains("magic"), "{err}");
    // A truncated file.
    let q = dir.join("t.zkrv");
    std::fs::write(&q, &bytes[..bytes.len() - 100]).unwrap();
    let out = zkrv(&["verify", q.to_str().unwrap(), &elf]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    // --segment-jobs takes a count of at least 1; a run proven as one proof says it ignores it.
    let out = zkrv(&["prove", &elf, "-o", ps, "--segment-jobs", "0"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("0 segments at a time: give at least 1"),
        "{err}"
    );
    let one = dir.join("one.zkrv");
    let out = zkrv(&[
        "prove",
        &format!("{GUESTS}/bin/exitcode.elf"),
        "-o",
        one.to_str().unwrap(),
        "--no-zk",
        "--security",
        "dev",
        "--backend",
        "cpu",
        "--segment-jobs",
        "2",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("--segment-jobs 2 has no effect: the run (")
            && err.contains("proven as one proof"),
        "{err}"
    );
    // --gpus takes a count of at least 1 or `all`.
    let out = zkrv(&["prove", &elf, "-o", ps, "--gpus", "0"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a number of GPUs"), "{err}");
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

/// Privacy (issue 24): a zero-knowledge run that needs segments publishes every boundary (registers and
/// the memory written before it), so `prove` refuses it without `--public-segment-boundaries`, after the
/// execution pass and before any segment is proven, naming the flag and the alternatives, and writes
/// nothing; with the flag it proves (zk segments, boundaries public); `--no-zk` needs no flag; a zk run
/// that fits in one segment needs none either.
#[test]
fn zk_segments_need_public_segment_boundaries() {
    let dir = tempdir("pubbound");
    let elf = format!("{GUESTS}/bin/exitcode.elf");
    let p = dir.join("p.zkrv");
    let prove = |extra: &[&str]| {
        let mut args = vec![
            "prove",
            elf.as_str(),
            "-o",
            s(&p),
            "--security",
            "dev",
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(extra);
        zkrv(&args)
    };
    let out = prove(&["--segment-cycles", "128"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for want in [
        "exitcode.elf needs 2 segments of 128 rows (138 cycles)",
        "every memory cell written before it, which may hold the private input",
        "Pass --public-segment-boundaries to accept that",
        "or prove with --no-zk",
        "or prove it as one zero-knowledge proof",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    assert!(!err.contains("segment    0"), "a segment was proven: {err}");
    assert!(!p.exists(), "nothing is written");
    // With the flag: proven, and verify says the boundaries are public.
    let out = prove(&["--segment-cycles", "128", "--public-segment-boundaries"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(text(&out.stdout).contains("segments            2 of 128 rows"));
    let out = zkrv(&[
        "verify",
        s(&p),
        &elf,
        "--json",
        "--any-exit-code",
        "--min-security",
        "50",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["boundaries_public"], true, "{j}");
    assert_eq!(j["segments_zero_knowledge"], true, "{j}");
    assert_eq!(j["zero_knowledge"], false, "{j}");
    // --no-zk: no flag needed.
    let out = prove(&["--segment-cycles", "128", "--no-zk"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(text(&out.stdout).contains("segments            2 of 128 rows"));
    // One zk segment: no flag needed (the one-segment proof).
    let out = prove(&["--segment-cycles", "256"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(&std::fs::read(&p).unwrap()[8..12], &3u32.to_le_bytes());
    let _ = std::fs::remove_dir_all(&dir);
}
