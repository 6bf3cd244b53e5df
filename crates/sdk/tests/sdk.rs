//! The SDK end to end on the bundled `exitcode` guest (138 cycles, output "bye", fd-2 line, exit code 42):
//! proofs are zero-knowledge by default, the proof file round-trips, verification binds the program ID,
//! and each misuse is a typed error.

use zkrv_sdk::{prove, Backend, Engine, Error, Program, ProgramId, ProveOptions, Receipt};

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
    assert!(r.is_zk() && r.config.zk && r.proof.stark.zk);
    let bytes = r.to_bytes().unwrap();
    assert_eq!(bytes[8 + 4 + 7], 1, "header zk flag");
    assert_eq!(proved.cycles, 138);
    assert!(String::from_utf8_lossy(&proved.debug_output).contains("exiting with 42"));
    assert_eq!(proved.engine, "cpu");

    let back = Receipt::from_bytes(&bytes).unwrap();
    back.verify(&program).expect("verifies");
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
    Receipt::load(&path).unwrap().verify(&program).unwrap();
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
    let too_many = ProveOptions {
        max_cycles: zkrv_sdk::MAX_PROVABLE_CYCLES + 1,
        ..ProveOptions::default()
    };
    assert!(matches!(
        prove(&program, b"", &too_many),
        Err(Error::CycleLimitTooLarge(_))
    ));
    let short = ProveOptions {
        max_cycles: 10,
        ..ProveOptions::default()
    };
    match prove(&program, b"", &short) {
        Err(Error::Exec { cycles, error, .. }) => {
            assert_eq!(cycles, 10);
            assert!(error.to_string().contains("cycle limit of 10"));
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
