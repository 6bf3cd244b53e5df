//! Real compiled guests (guests/bin, built from guests/c) that the current tables can prove.

use zkrv_executor::Program;
use zkrv_machine::{prove, verify, Statement};
use zkrv_stark::StarkConfig;

fn guest(name: &str) -> Program {
    let path = format!("{}/../../guests/bin/{name}.elf", env!("CARGO_MANIFEST_DIR"));
    Program::from_elf(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn exitcode_guest_proves_and_verifies() {
    for zk in [false, true] {
        exitcode_guest(zk);
    }
}

/// zk mode with a fixed test seed (deterministic; `zkrv prove` uses OS randomness).
fn zk_config() -> StarkConfig {
    StarkConfig {
        zk_seed: Some(20261130),
        ..StarkConfig::dev_zk()
    }
}

fn exitcode_guest(zk: bool) {
    // guests/c/programs/exitcode.c: writes "bye" to the public output, a debug line, exits with 42.
    let p = guest("exitcode");
    let config = StarkConfig {
        debug_check: true,
        zk,
        zk_seed: Some(1),
        ..StarkConfig::dev()
    };
    let t0 = std::time::Instant::now();
    let (st, proof) = prove(&p, b"", &config).unwrap();
    println!(
        "exitcode.elf (zk {zk}): prove {:?}, proof {} bytes",
        t0.elapsed(),
        proof.to_bytes().len()
    );
    assert_eq!(st.exit_code, 42);
    assert_eq!(st.output, b"bye");
    verify(&p, &st, &proof, &config, 0).unwrap();
    // Checked in the other mode: a specific error.
    let other = StarkConfig {
        zk: !zk,
        ..config.clone()
    };
    assert!(matches!(
        verify(&p, &st, &proof, &other, 0),
        Err(zkrv_machine::VerifyError::Stark(
            zkrv_stark::VerifyError::ZkMode { .. }
        ))
    ));
    // Another output, or the right bytes in another order, is rejected.
    for output in [b"bye!".to_vec(), b"eby".to_vec(), Vec::new()] {
        let lie = Statement {
            output,
            ..st.clone()
        };
        assert!(verify(&p, &lie, &proof, &config, 0).is_err());
    }
}

/// Reads the private input in three calls (5 bytes to an aligned buffer, then up to 10 bytes to a
/// misaligned one, which comes back short at the end of the input, then once more at the end), writes
/// the bytes back to the public output and exits with `count + buf[6]`.
fn echo_program() -> Program {
    use zkrv_executor::asm::*;
    let mut w = vec![addi(2, 2, -32), addi(8, 0, 0)];
    for (off, len) in [(0, 5), (5, 10), (16, 4)] {
        w.extend([
            addi(10, 0, 0),
            addi(11, 2, off),
            addi(12, 0, len),
            addi(17, 0, 63),
            ECALL,
            add(8, 8, 10),
        ]);
    }
    w.extend([
        addi(10, 0, 1),
        addi(11, 2, 0),
        addi(12, 8, 0),
        addi(17, 0, 64),
        ECALL,
    ]);
    w.extend([lbu(5, 2, 6), add(10, 8, 5), addi(17, 0, 93), ECALL]);
    Program::from_words(0x1000, &w).unwrap()
}

#[test]
fn private_input_read_proves_and_verifies() {
    let p = echo_program();
    let config = zk_config();
    for input in [&b"abcdefg"[..], b"", b"0123456789abcdefXYZ"] {
        let (st, proof) = prove(&p, input, &config).unwrap();
        // Model of the program: the three reads into a zeroed 32-byte buffer.
        let (mut buf, mut pos) = ([0u8; 32], 0usize);
        for (off, len) in [(0usize, 5usize), (5, 10), (16, 4)] {
            let n = len.min(input.len() - pos);
            buf[off..off + n].copy_from_slice(&input[pos..pos + n]);
            pos += n;
        }
        assert_eq!(st.output, &buf[..pos]);
        assert_eq!(st.exit_code as usize, pos + buf[6] as usize);
        verify(&p, &st, &proof, &config, 0).unwrap();
        // The statement does not contain the input; a wrong output claim fails.
        let lie = Statement {
            output: b"abcdefh".to_vec(),
            ..st.clone()
        };
        assert!(verify(&p, &lie, &proof, &config, 0).is_err());
    }
}

#[test]
fn fibonacci_guest_proves_and_verifies() {
    // guests/c/programs/fibonacci.c: input n (u64 LE), output fib(n) (u64 LE).
    let p = guest("fibonacci");
    let config = zk_config();
    let input = 30u64.to_le_bytes();
    let t0 = std::time::Instant::now();
    let (st, proof) = prove(&p, &input, &config).unwrap();
    println!(
        "fibonacci.elf (n = 30): prove {:?}, proof {} bytes",
        t0.elapsed(),
        proof.to_bytes().len()
    );
    assert_eq!(st.output, 832040u64.to_le_bytes());
    assert_eq!(st.exit_code, 0);
    verify(&p, &st, &proof, &config, 0).unwrap();
}

/// Every prebuilt guest with its example input (docs: guests/README). Slow on a 2-core CI box (about 1.5 M
/// cycles in all), so ignored by default: `cargo test -p zkrv-machine --release -- --ignored`.
#[test]
#[ignore]
fn all_guests_prove_and_verify() {
    let config = zk_config();
    for name in [
        "exitcode",
        "fibonacci",
        "sha256",
        "keccak",
        "matmul",
        "rv64im",
        "sort",
        "modexp",
    ] {
        let input_path = format!(
            "{}/../../guests/inputs/{name}.bin",
            env!("CARGO_MANIFEST_DIR")
        );
        let input = std::fs::read(&input_path).unwrap_or_default();
        let p = guest(name);
        let t0 = std::time::Instant::now();
        let (st, proof) = prove(&p, &input, &config).unwrap();
        println!(
            "{name}: prove {:?}, exit {}, output {} bytes",
            t0.elapsed(),
            st.exit_code,
            st.output.len()
        );
        verify(&p, &st, &proof, &config, 0).unwrap();
    }
}

/// Every prebuilt guest, zk mode with the 128-bit preset (78 queries: tables of at least 256 rows, POW2
/// included), on small inputs: proves, verifies, and the proof's own parameters give 128 bits provable.
#[test]
fn every_guest_proves_in_zk_with_the_128_bit_preset() {
    let config = StarkConfig {
        zk_seed: Some(20261201),
        ..zkrv_stark::SecurityPreset::Bits128.config(true)
    };
    assert!(zkrv_machine::min_height(&config) > 128, "POW2 must grow");
    let two = |a: u64, b: u64| [a.to_le_bytes(), b.to_le_bytes()].concat();
    let mut modexp = Vec::new();
    for len in [1u32, 1, 1] {
        modexp.extend(len.to_le_bytes());
    }
    modexp.extend([3u8, 5, 7]);
    // (guest, input, exit code, public output when checked)
    type Case<'a> = (&'a str, Vec<u8>, u32, Option<&'a [u8]>);
    let cases: [Case; 9] = [
        ("exitcode", vec![], 42, Some(b"bye")),
        (
            "fibonacci",
            90u64.to_le_bytes().to_vec(),
            0,
            Some(&2880067194370816120u64.to_le_bytes()),
        ),
        ("sha256", b"abc".to_vec(), 0, None),
        ("keccak", b"abc".to_vec(), 0, None),
        ("matmul", two(4, 1), 0, None),
        ("sort", two(64, 1), 0, None),
        ("modexp", modexp, 0, Some(&[5u8])), // 3^5 mod 7
        ("rv64im", vec![], 0, None),
        ("rustalloc", two(50, 1), 0, None),
    ];
    for (name, input, exit, output) in cases {
        let p = guest(name);
        let t0 = std::time::Instant::now();
        let (st, proof) = prove(&p, &input, &config).unwrap_or_else(|e| panic!("{name}: {e}"));
        let secs = t0.elapsed().as_secs_f64();
        verify(&p, &st, &proof, &config, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
        let sec = zkrv_machine::proof_security(&p, &proof, &config).unwrap();
        println!(
            "{name}: prove {secs:.1} s, heights {:?}, proof {} bytes, {}",
            proof.stark.log_heights,
            proof.to_bytes().len(),
            sec.summary()
        );
        assert_eq!(st.exit_code, exit, "{name}");
        if let Some(o) = output {
            assert_eq!(st.output, o, "{name}");
        }
        assert_eq!(sec.provable_bits(), 128, "{name}\n{sec}");
        assert!(proof.stark.log_heights.iter().all(|&h| h >= 8), "{name}");
    }
}

/// The verifier's compact memory init form ([`zkrv_machine::MemoryInit`], tokens made on the fly from the
/// page list and the ELF) is the expanded list: the same count, tokens (checked against tokens built here
/// cell by cell from the ELF's initial bytes), statement digest and public LogUp sum (checked against a
/// per-interaction inversion), over more interactions than one batch inversion chunk; a bad page list is
/// refused with the same error.
#[test]
fn memory_init_form_equals_the_expanded_list() {
    use zkrv_machine::{memory_init_interactions, public_interactions, public_source, MemoryInit};
    use zkrv_stark::air::Direction;
    use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, F};
    use zkrv_stark::logup::{
        public_sum, LogupChallenges, PublicInteraction, PublicSource, PUBLIC_SUM_CHUNK,
    };
    use zkrv_stark::statement::statement_digest;
    let program = guest("fibonacci");
    // Code/data pages of the ELF (0x10000..), then zero pages far above: more than one sum chunk.
    let mut pages: Vec<u32> = (0..12).map(|k| 0x10000 + k * 4096).collect();
    pages.extend((0..6).map(|k| 0x4000_0000 + k * 4096));
    assert!(pages.len() * 512 > 2 * PUBLIC_SUM_CHUNK);
    let mut expected = Vec::new();
    let mut nonzero = 0;
    let mut page = vec![0u8; 4096];
    for &p in &pages {
        program.initial_bytes(p as u64, &mut page);
        for j in 0..512 {
            let cell = u64::from_le_bytes(page[8 * j..8 * j + 8].try_into().unwrap());
            nonzero += (cell != 0) as usize;
            expected.push(PublicInteraction {
                bus: zkrv_machine::bus::MEM_TOKEN,
                values: vec![
                    F::from_u64(p as u64 / 8 + j as u64),
                    F::ZERO,
                    F::from_u64(cell & 0xffff_ffff),
                    F::from_u64(cell >> 32),
                ],
                multiplicity: F::ONE,
                direction: Direction::Send,
            });
        }
    }
    assert!(
        nonzero > 10,
        "the pages hold the ELF's bytes ({nonzero} nonzero cells)"
    );
    let compact = MemoryInit::new(&program, &pages).unwrap();
    assert_eq!(compact.count(), pages.len() * 512);
    assert_eq!(compact.expand(), expected);
    assert_eq!(
        memory_init_interactions(&program, &pages).unwrap(),
        expected
    );

    // The whole verifier source (statement part, then the pages) against the prover's list.
    let statement = Statement {
        program: zkrv_machine::program_commitment(&program),
        exit_code: 3,
        output: b"out".to_vec(),
    };
    let full = (public_source(&statement, Vec::new()), compact);
    let mut list = public_interactions(&statement);
    list.extend(expected);
    assert_eq!(full.count(), list.len());
    assert_eq!(full.expand(), list);
    assert_eq!(
        statement_digest(b"st", &full, &[]),
        statement_digest(b"st", &list, &[])
    );
    let ch = LogupChallenges::new(
        Ext3::from_u64s([12345, 678, 9]),
        Ext3::from_u64s([31, 41, 59]),
        4,
    );
    let naive = list.iter().fold(Ext3::ZERO, |acc, p| {
        let inv = ch
            .fingerprint(p.bus, p.values.iter().copied())
            .try_inverse()
            .unwrap();
        match p.direction {
            Direction::Send => acc + inv,
            Direction::Receive => acc - inv,
        }
    });
    assert_eq!(public_sum(&full, &ch).unwrap(), naive);

    for bad in [vec![0x10000, 0x10000], vec![0x10001], vec![0x8000_0000]] {
        let e = MemoryInit::new(&program, &bad).err().unwrap();
        assert_eq!(Err(e), memory_init_interactions(&program, &bad));
    }
}
