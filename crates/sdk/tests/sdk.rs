//! The SDK end to end on the bundled `exitcode` guest (138 cycles, output "bye", fd-2 line, exit code 42):
//! proofs are zero-knowledge by default, the proof file round-trips, verification binds the program ID,
//! and each misuse is a typed error.

use zkrv_sdk::{
    prove, Backend, Engine, Error, Gpus, Program, ProgramId, ProveOptions, Receipt, ReceiptProof,
    SecurityPreset,
};

fn bundled(name: &str) -> Program {
    Program::load(format!(
        "{}/../../guests/bin/{name}.elf",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("bundled guest loads")
}

#[test]
fn default_proofs_are_zero_knowledge_and_round_trip() {
    assert!(ProveOptions::default().zk);
    let program = bundled("exitcode");
    let proved = prove(&program, b"", &ProveOptions::default()).expect("proves");
    let r = &proved.receipt;
    // zk in the configuration, in the STARK proof itself and in the file header.
    let ReceiptProof::Single(proof) = &r.proof else {
        panic!("a 138-cycle run is one proof")
    };
    assert!(r.is_zk() && r.config.zk && proof.stark.zk);
    // Fresh randomness per proof (not a fixed seed): a second proof of the same run commits to other
    // masked traces, and both verify.
    let again = prove(&program, b"", &ProveOptions::default()).expect("proves");
    let ReceiptProof::Single(proof2) = &again.receipt.proof else {
        panic!("one proof")
    };
    assert_ne!(proof.stark.main_root, proof2.stark.main_root);
    again.receipt.verify_any_exit(&program).expect("verifies");
    assert!(proved.segments.is_empty() && r.segments() == 1);
    let bytes = r.to_bytes().unwrap();
    assert_eq!(bytes[8 + 4 + 7], 1, "header zk flag");
    assert_eq!(proved.cycles, 138);
    assert!(String::from_utf8_lossy(&proved.debug_output).contains("exiting with 42"));
    assert_eq!(proved.engine, "cpu");

    let back = Receipt::from_bytes(&bytes).unwrap();
    // A valid proof of a failed run (exit code 42): `verify` refuses it, naming the code and the way to
    // accept it; `verify_any_exit` accepts it (as `zkrv verify` exits 3 unless `--any-exit-code`).
    match back.verify(&program) {
        Err(e @ Error::ExitCode { code: 42 }) => {
            let m = e.to_string();
            assert!(
                m.contains("exited with code 42") && m.contains("Receipt::verify_any_exit"),
                "{m}"
            );
        }
        e => panic!("expected ExitCode, got {e:?}"),
    }
    assert!(matches!(
        back.check(&program),
        Err(Error::ExitCode { code: 42 })
    ));
    back.verify_any_exit(&program).expect("verifies");
    assert_eq!(back.exit_code(), 42);
    assert_eq!(back.output(), b"bye");
    assert_eq!(back.program_id(), program.id());
    assert_eq!(
        program.id().0,
        zkrv_machine::program_commitment(program.inner())
    );
    let bits = back.security_bits(&program).expect("estimates");
    assert!(bits >= 100, "the default preset gives {bits} bits");

    // Save/load through a file; nothing else is left in the directory.
    let dir = std::env::temp_dir().join(format!("zkrv-sdk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.zkrv");
    r.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    Receipt::load(&path)
        .unwrap()
        .verify_any_exit(&program)
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    // Another program: the statement's program ID does not match.
    let other = bundled("fibonacci");
    match back.verify(&other) {
        Err(Error::WrongProgram { proof, program }) => {
            assert_eq!(proof, r.program_id());
            assert_eq!(program, other.id());
        }
        e => panic!("expected WrongProgram, got {e:?}"),
    }
    // A flipped byte in the public output: parsed, then rejected by the verifier.
    let mut t = bytes.clone();
    let at = t.windows(3).position(|w| w == b"bye").unwrap();
    t[at] ^= 1;
    match Receipt::from_bytes(&t).unwrap().verify(&program) {
        Err(Error::Invalid(_)) => {}
        e => panic!("expected Invalid, got {e:?}"),
    }
    // Truncated and foreign bytes are proof-file errors.
    assert!(matches!(
        Receipt::from_bytes(&bytes[..bytes.len() - 1]),
        Err(Error::ProofFile(_))
    ));
    assert!(matches!(
        Receipt::from_bytes(b"\x7fELF"),
        Err(Error::ProofFile(_))
    ));
}

#[test]
fn options_and_inputs_are_checked() {
    let program = bundled("exitcode");
    // More cycles than 2^32 - 1 segments hold: refused before running (the CPU backend's default 2^20-row
    // segments, the GPU's 2^22-row ones where a GPU is usable; 128-row ones).
    let too_many = ProveOptions {
        max_cycles: u64::MAX,
        ..ProveOptions::default()
    };
    match prove(&program, b"", &too_many) {
        Err(Error::CycleLimitTooLarge {
            segment_rows,
            limit,
            ..
        }) => assert_eq!(
            (segment_rows, limit),
            (1 << 20, u32::MAX as u64 * ((1 << 20) - 1))
        ),
        e => panic!("expected CycleLimitTooLarge, got {e:?}"),
    }
    let on_gpu = ProveOptions {
        backend: Backend::Gpu,
        ..too_many.clone()
    };
    match prove(&program, b"", &on_gpu) {
        Err(Error::CycleLimitTooLarge { segment_rows, .. }) => assert_eq!(segment_rows, 1 << 22),
        Err(Error::NoGpu(why)) => eprintln!("skipped the GPU default (no usable GPU: {why})"),
        e => panic!("expected CycleLimitTooLarge, got {e:?}"),
    }
    let small = ProveOptions {
        max_cycles: 1 << 40,
        segment_cycles: Some(128),
        ..ProveOptions::default()
    };
    match prove(&program, b"", &small) {
        Err(e @ Error::CycleLimitTooLarge { limit, .. }) => {
            assert_eq!(limit, u32::MAX as u64 * 127);
            assert!(
                e.to_string().contains("2^32 - 1 segments of 127 cycles"),
                "{e}"
            );
        }
        e => panic!("expected CycleLimitTooLarge, got {e:?}"),
    }
    // No segment at a time.
    let zero = ProveOptions {
        segment_jobs: Some(0),
        segment_cycles: Some(128),
        ..ProveOptions::default()
    };
    match prove(&program, b"", &zero) {
        Err(e @ Error::SegmentJobs) => assert!(e.to_string().contains("segment_jobs 0"), "{e}"),
        e => panic!("expected SegmentJobs, got {e:?}"),
    }
    // Above one proof's 2^26 - 1 cycles is allowed now (segments).
    assert!(ProveOptions::default().max_cycles > zkrv_sdk::MAX_PROVABLE_CYCLES);
    for rows in [100, 64] {
        let bad = ProveOptions {
            segment_cycles: Some(rows),
            ..ProveOptions::default()
        };
        match prove(&program, b"", &bad) {
            Err(Error::SegmentSize { rows: r, .. }) => assert_eq!(r, rows),
            e => panic!("segment_cycles {rows}: expected SegmentSize, got {e:?}"),
        }
    }
    // Engines for segments: the CPU is one engine whatever the GPU count; asking for GPUs gives one engine
    // per device or a clear error (never fewer engines than asked).
    let (cpu, _) = Engine::open_gpus(Backend::Cpu, None, Gpus::All).unwrap();
    assert!(cpu.len() == 1 && !cpu[0].is_gpu());
    match Engine::open_gpus(Backend::Gpu, None, Gpus::Count(2)) {
        Ok((e, _)) => assert!(e.len() == 2 && e.iter().all(Engine::is_gpu)),
        Err(Error::NoGpu(why)) => assert!(!why.is_empty()),
        Err(e) => panic!("unexpected {e}"),
    }
    assert_eq!("all".parse::<Gpus>(), Ok(Gpus::All));
    assert_eq!("3".parse::<Gpus>(), Ok(Gpus::Count(3)));
    assert!("0".parse::<Gpus>().is_err() && "x".parse::<Gpus>().is_err());
    let short = ProveOptions {
        max_cycles: 10,
        ..ProveOptions::default()
    };
    match prove(&program, b"", &short) {
        Err(e @ Error::Exec { .. }) => {
            let Error::Exec { cycles, error, .. } = &e else {
                unreachable!()
            };
            assert_eq!(*cycles, 10);
            assert!(error.to_string().contains("cycle limit of 10"));
            // The SDK names its own option, not the CLI's flag.
            let msg = e.to_string();
            assert!(
                msg.contains("raise it with `ProveOptions::max_cycles`"),
                "{msg}"
            );
            assert!(!msg.contains("--max-cycles"), "{msg}");
        }
        e => panic!("expected Exec, got {e:?}"),
    }
    // GPU: a usable one, or a clear error (never a silent CPU fallback).
    match Engine::open(Backend::Gpu) {
        Ok((e, fallback)) => {
            assert!(e.name().starts_with("gpu"));
            assert!(fallback.is_none());
        }
        Err(Error::NoGpu(why)) => assert!(!why.is_empty()),
        Err(e) => panic!("unexpected {e}"),
    }
    let (_, _) = Engine::open(Backend::Auto).expect("auto always opens");
    assert!(matches!(
        Program::from_elf(b"not an elf"),
        Err(Error::Elf(_))
    ));
    assert!(matches!(
        Program::load("/nonexistent/x.elf"),
        Err(Error::Io { .. })
    ));
    assert!(matches!(
        Program::load("/dev/zero"),
        Err(Error::TooLarge { .. })
    ));
    let id = program.id();
    assert_eq!(ProgramId::from_hex(&id.to_string()), Some(id));
    assert_eq!(ProgramId::from_hex(&id.to_string()[1..]), None);
    assert_eq!(ProgramId::from_hex(&"g".repeat(64)), None);
}

/// A segmented run through the SDK (docs/continuations.md): `exitcode` (138 cycles) in segments of 128
/// rows (127 cycles) is two segments, a version-4 file that round-trips, saves, loads and verifies; the
/// segments chain (one dropped is rejected); a segment size the run fits in gives the one-segment proof,
/// byte for byte the proof without `segment_cycles`.
#[test]
fn segmented_receipts_prove_save_load_and_verify() {
    let program = bundled("exitcode");
    let opts = ProveOptions {
        segment_cycles: Some(128),
        zk_test_seed: Some(7),
        public_segment_boundaries: true,
        ..ProveOptions::default()
    };
    let proved = prove(&program, b"", &opts).expect("proves in segments");
    let r = &proved.receipt;
    let ReceiptProof::Segmented {
        segment_rows,
        segments,
    } = &r.proof
    else {
        panic!("expected segments")
    };
    assert_eq!((*segment_rows, segments.len(), r.segments()), (128, 2, 2));
    assert_eq!(proved.cycles, 138);
    assert_eq!(
        proved.segments.iter().map(|d| d.index).collect::<Vec<_>>(),
        [0, 1]
    );
    assert!(String::from_utf8_lossy(&proved.debug_output).contains("exiting with 42"));
    let bytes = r.to_bytes().unwrap();
    assert_eq!(&bytes[8..12], &4u32.to_le_bytes(), "format version 4");
    let back = Receipt::from_bytes(&bytes).unwrap();
    let v = back
        .check_with(&program, zkrv_sdk::DEFAULT_MIN_SECURITY)
        .expect("verifies");
    assert_eq!(
        (v.segments, v.cycles, v.cycles_at_most),
        (2, Some(138), 254)
    );
    assert_eq!((back.exit_code(), back.output()), (42, &b"bye"[..]));
    assert!(back.security_bits(&program).unwrap() >= 100);
    let dir = std::env::temp_dir().join(format!("zkrv-sdk-seg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.zkrv");
    r.save(&path).unwrap();
    Receipt::load(&path)
        .unwrap()
        .verify_any_exit(&program)
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // The last segment dropped: the chain is incomplete.
    let mut t = back.clone();
    if let ReceiptProof::Segmented { segments, .. } = &mut t.proof {
        segments.pop();
    }
    match t.verify(&program) {
        Err(Error::Invalid(e)) => assert!(
            e.to_string().contains("segment 1 of the run is missing"),
            "{e}"
        ),
        e => panic!("expected Invalid, got {e:?}"),
    }
    // Segments of 256 rows hold the run: the one-segment proof, the same bytes as without the option
    // (and a zk proof of one segment needs no `public_segment_boundaries`).
    let one = |segment_cycles| {
        let o = ProveOptions {
            segment_cycles,
            zk_test_seed: Some(7),
            ..ProveOptions::default()
        };
        prove(&program, b"", &o)
            .unwrap()
            .receipt
            .to_bytes()
            .unwrap()
    };
    let a = one(Some(256));
    assert_eq!(&a[8..12], &3u32.to_le_bytes());
    assert!(
        a == one(None),
        "one segment differs from the unsegmented proof"
    );
}

/// Privacy (issue 24): a zero-knowledge run that needs segments publishes its boundaries, so it is refused
/// without `ProveOptions::public_segment_boundaries` (after the execution pass, before any segment is
/// proven: no proof time), the error naming the option and the alternatives; `zk: false` needs no option.
/// (Accepted with it: `segmented_receipts_prove_save_load_and_verify`; one segment needs none: ditto.)
#[test]
fn zk_segmented_runs_need_public_segment_boundaries() {
    let program = bundled("exitcode");
    let opts = ProveOptions {
        segment_cycles: Some(128),
        ..ProveOptions::default()
    };
    let t = std::time::Instant::now();
    match prove(&program, b"", &opts) {
        Err(
            e @ Error::PublicSegmentBoundaries {
                segments: 2,
                segment_rows: 128,
                ..
            },
        ) => {
            let m = e.to_string();
            for want in [
                "the run needs 2 segments of 128 rows",
                "every memory cell written before it, which may hold the private input",
                "set ProveOptions::public_segment_boundaries to accept that",
                "or prove with zk: false",
                "or in one segment",
            ] {
                assert!(m.contains(want), "{want:?} not in {m}");
            }
        }
        other => panic!("expected PublicSegmentBoundaries, got {other:?}"),
    }
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "refused before proving"
    );
    let no_zk = ProveOptions {
        zk: false,
        ..opts.clone()
    };
    let r = prove(&program, b"", &no_zk)
        .expect("--no-zk needs no option")
        .receipt;
    assert_eq!(r.segments(), 2);
    assert!(!r.is_zk());
    r.verify_any_exit(&program).unwrap();
}

/// A receipt whose parameters are below 100 bits provable (the `dev` preset) is refused by
/// `Receipt::verify` (the machine verifier's minimum, checked before the transcript), as `zkrv verify`
/// refuses it (a prover cannot pick weaker parameters); `check_with(.., 0)` skips the minimum and runs the
/// STARK check, which fails here because the proof was made with the default parameters.
#[test]
fn weak_parameters_are_refused_by_default() {
    let program = bundled("exitcode");
    let proved = prove(&program, b"", &ProveOptions::default()).expect("proves");
    let mut weak = proved.receipt.clone();
    weak.config.fri = zkrv_stark::SecurityPreset::Dev.fri();
    match weak.verify(&program) {
        Err(Error::TooWeak { bits, min }) => {
            assert!(bits < 100, "{bits}");
            assert_eq!(min, zkrv_sdk::DEFAULT_MIN_SECURITY);
        }
        e => panic!("expected TooWeak, got {e:?}"),
    }
    assert!(matches!(
        weak.check_with(&program, 0),
        Err(Error::Invalid(_))
    ));
    proved
        .receipt
        .check_with(&program, 100)
        .expect("the default preset meets 100 bits");
    // The remedy named is a preset that meets the minimum asked for, or none: one bit above the default
    // preset's level (102 with its margin) needs the 128-bit preset, 129 none.
    let e = weak.verify(&program).unwrap_err().to_string();
    assert!(
        e.contains("`SecurityPreset::Bits100`, built for 100 bits"),
        "{e}"
    );
    let bits = proved.receipt.security_bits(&program).unwrap();
    assert!((101..128).contains(&bits), "{bits}");
    match proved.receipt.check_with(&program, bits + 1) {
        Err(Error::TooWeak { bits: b, min }) if (b, min) == (bits, bits + 1) => {
            let e = Error::TooWeak { bits: b, min }.to_string();
            assert!(
                e.contains("`SecurityPreset::Bits128`, built for 128 bits"),
                "{e}"
            );
            assert!(!e.contains("--security"), "{e}");
        }
        e => panic!("expected TooWeak, got {e:?}"),
    }
    let e = proved
        .receipt
        .check_with(&program, 129)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no preset reaches 129 bits"), "{e}");
    // ... and `ProveOptions::security` proves with it.
    let strong = ProveOptions {
        security: SecurityPreset::Bits128,
        zk: false,
        ..ProveOptions::default()
    };
    let r = prove(&program, b"", &strong).expect("proves").receipt;
    assert_eq!(SecurityPreset::of(&r.config), Some(SecurityPreset::Bits128));
    let r = Receipt::from_bytes(&r.to_bytes().unwrap()).unwrap();
    r.check_with(&program, 128)
        .expect("the 128-bit preset meets 128 bits");
    // The fast 100-bit preset (blowup 4, 82 queries) proves, round-trips and meets 100 bits, not 101+.
    let fast = ProveOptions {
        security: SecurityPreset::Bits100Fast,
        zk: false,
        ..ProveOptions::default()
    };
    let r = prove(&program, b"", &fast).expect("proves").receipt;
    assert_eq!(
        SecurityPreset::of(&r.config),
        Some(SecurityPreset::Bits100Fast)
    );
    assert_eq!(r.config.fri.log_blowup, 2);
    let r = Receipt::from_bytes(&r.to_bytes().unwrap()).unwrap();
    r.check_with(&program, 100)
        .expect("the fast preset meets 100 bits");
    assert!(r.check_with(&program, 102).is_err());
}
