//! Robustness of the `.zkrv` decoder (`proof_file::decode_any`, `Receipt::from_bytes`) for both format
//! versions, 3 (one proof) and 4 (segments): a seeded mutation fuzz (bit flips, truncations, inserted and
//! deleted bytes, length and count fields overwritten with edge values) must never panic, and a mutant that
//! still decodes must not verify unless it re-encodes to the original file. Set `ZKRV_FUZZ_ITERS` /
//! `ZKRV_FUZZ_SEED` for longer runs or to replay (the seed is printed).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use zkrv_sdk::{prove, Program, ProveOptions, Receipt, ReceiptProof};

fn bundled(name: &str) -> Program {
    Program::load(format!(
        "{}/../../guests/bin/{name}.elf",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("bundled guest loads")
}

/// Offsets of the u64 length / count fields of a file (where a wrong value must be a clean error).
fn length_fields(bytes: &[u8]) -> Vec<usize> {
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    let mut out = vec![20]; // statement length
    let after_statement = 28 + u64_at(20);
    out.push(after_statement); // v3: proof length; v4: segment rows
    if version == 4 {
        out.push(after_statement + 8); // segment count
        let mut o = after_statement + 16;
        while o + 8 <= bytes.len() {
            out.push(o); // a segment's length
            o += 8 + u64_at(o);
        }
    }
    out
}

fn mutate(rng: &mut StdRng, bytes: &[u8], fields: &[usize]) -> (String, Vec<u8>) {
    let mut m = bytes.to_vec();
    let n = m.len();
    let what = match rng.gen_range(0..6) {
        0 => {
            let i = rng.gen_range(0..n);
            let bit = rng.gen_range(0..8);
            m[i] ^= 1 << bit;
            format!("flip bit {bit} of byte {i}")
        }
        1 => {
            let k = rng.gen_range(0..n);
            m.truncate(k);
            format!("truncate to {k} bytes")
        }
        2 => {
            let i = rng.gen_range(0..=n);
            let k = rng.gen_range(1..16);
            for _ in 0..k {
                m.insert(i, rng.gen());
            }
            format!("insert {k} bytes at {i}")
        }
        3 => {
            let i = rng.gen_range(0..n);
            let k = rng.gen_range(1..16).min(n - i);
            m.drain(i..i + k);
            format!("delete {k} bytes at {i}")
        }
        4 => {
            let o = fields[rng.gen_range(0..fields.len())];
            let old = u64::from_le_bytes(m[o..o + 8].try_into().unwrap());
            let v = match rng.gen_range(0..6) {
                0 => 0,
                1 => u64::MAX,
                2 => old.wrapping_add(1),
                3 => old.wrapping_sub(1),
                4 => 1 << rng.gen_range(0..64),
                _ => rng.gen(),
            };
            m[o..o + 8].copy_from_slice(&v.to_le_bytes());
            format!("length field at {o}: {old} -> {v}")
        }
        _ => {
            // Several flips in one header-sized window (segment headers, boundaries, page lists).
            let i = rng.gen_range(0..n);
            for _ in 0..4 {
                let j = (i + rng.gen_range(0..700)).min(n - 1);
                m[j] = rng.gen();
            }
            format!("4 random bytes from {i}")
        }
    };
    (what, m)
}

fn fuzz(name: &str, program: &Program, bytes: &[u8], iters: usize, seed: u64) {
    let fields = length_fields(bytes);
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut decoded, mut verified) = (0usize, 0usize);
    let t0 = std::time::Instant::now();
    for i in 0..iters {
        let (what, m) = mutate(&mut rng, bytes, &fields);
        if m == bytes {
            continue;
        }
        let r = catch_unwind(AssertUnwindSafe(|| Receipt::from_bytes(&m))).unwrap_or_else(|_| {
            panic!("{name} seed {seed} iteration {i}: decoder panicked: {what}")
        });
        let Ok(r) = r else { continue };
        decoded += 1;
        // Verification is the costly part: the first decoded mutants only (40, or iters / 40).
        if verified >= (iters / 40).max(40) {
            continue;
        }
        verified += 1;
        let v =
            catch_unwind(AssertUnwindSafe(|| r.verify_any_exit(program))).unwrap_or_else(|_| {
                panic!("{name} seed {seed} iteration {i}: verify panicked: {what}")
            });
        if v.is_ok() {
            let again = r.to_bytes().unwrap();
            assert!(
                again == bytes,
                "{name} seed {seed} iteration {i}: a changed file verified: {what}"
            );
        }
    }
    println!(
        "{name}: {iters} mutants in {:?}: {decoded} decoded, {verified} of them verified and rejected",
        t0.elapsed()
    );
}

#[test]
fn mutated_proof_files_never_panic_nor_verify() {
    let iters: usize = std::env::var("ZKRV_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500);
    let seed: u64 = std::env::var("ZKRV_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    println!("proof-file fuzz: seed {seed} (ZKRV_FUZZ_SEED={seed} to replay), {iters} iterations per version");
    let program = bundled("exitcode");
    for (name, _, bytes) in receipts() {
        fuzz(name, &program, bytes, iters, seed);
    }
}

/// The files both tests mutate, proven once: version 3 (one proof) and version 4 (3 segments of 64 rows);
/// no zk (small tables, quick to verify). Each verifies unchanged.
fn receipts() -> &'static [(&'static str, Receipt, Vec<u8>)] {
    static FILES: std::sync::OnceLock<Vec<(&'static str, Receipt, Vec<u8>)>> =
        std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let program = bundled("exitcode");
        [("v3", None), ("v4", Some(64))]
            .into_iter()
            .map(|(name, segment_cycles)| {
                let opts = ProveOptions {
                    zk: false,
                    segment_cycles,
                    ..ProveOptions::default()
                };
                let r = prove(&program, b"", &opts).unwrap().receipt;
                match (&r.proof, segment_cycles) {
                    (ReceiptProof::Single(_), None) => {}
                    (ReceiptProof::Segmented { segments, .. }, Some(_)) => {
                        assert_eq!(segments.len(), 3)
                    }
                    _ => panic!("{name}: unexpected receipt form"),
                }
                let bytes = r.to_bytes().unwrap();
                Receipt::from_bytes(&bytes)
                    .unwrap()
                    .verify_any_exit(&program)
                    .unwrap();
                (name, r, bytes)
            })
            .collect()
    })
}

/// Where the first STARK proof of a file starts (the one proof of a v3 file, segment 0's of a v4 file).
fn first_stark_offset(r: &Receipt, bytes: &[u8]) -> usize {
    match &r.proof {
        ReceiptProof::Single(p) => bytes.len() - p.stark.to_bytes().len(),
        ReceiptProof::Segmented { segments, .. } => {
            // magic, version, parameters, statement section, segment rows, count, segment 0's length.
            let seg0 = 20 + 8 + r.statement.to_bytes().len() + 8 + 8 + 8;
            seg0 + segments[0].to_bytes().len() - segments[0].stark.to_bytes().len()
        }
    }
}

/// Every way a tampered header is rejected names its cause: each byte of the file header, the statement,
/// the length/count fields, the page list or segment header (v4: its boundaries sampled) and the first
/// STARK proof's header (through its table heights and main root) flipped three ways, and the file cut at
/// each of those offsets, for a v3 and a v4 file. No message is an "internal error": decoding, the
/// security estimate (which reads the table heights before verification) and, for the table-height bytes,
/// verification all name the field. The version field set to the other version, or to an unknown one, is
/// named as such.
#[test]
fn tampered_headers_name_the_cause() {
    let program = bundled("exitcode");
    for (name, r, bytes) in receipts() {
        let (name, bytes) = (*name, bytes.clone());
        let stark = first_stark_offset(r, &bytes);
        // STARK header: magic 4, version 2, zk 1, statement digest 32, table count 4, heights, main root 32.
        let heights = stark + 43;
        let n_tables = bytes[stark + 39] as usize;
        let end = heights + n_tables + 32;
        let t0 = std::time::Instant::now();
        let (mut rejected, mut verified) = (0, 0);
        let mut check = |what: String, m: &[u8], verify: bool| {
            let msg = match Receipt::from_bytes(m) {
                Err(e) => e.to_string(),
                Ok(d) => match d.security_report(&program) {
                    Err(e) => e.to_string(),
                    Ok(_) if verify => {
                        verified += 1;
                        match d.check_with(&program, 0) {
                            Err(e) => e.to_string(),
                            Ok(_) => panic!("{name} {what}: a changed header verified"),
                        }
                    }
                    Ok(_) => return,
                },
            };
            rejected += 1;
            assert!(
                !msg.contains("internal") && !msg.is_empty(),
                "{name} {what}: {msg}"
            );
        };
        // v4: segment 0's boundaries (registers, cursors), page list and writes are sampled (every 16th
        // byte): they decode, and the security estimate of each mutant compiles every segment's AIRs.
        let dense = match &r.proof {
            ReceiptProof::Single(_) => stark,
            ReceiptProof::Segmented { .. } => 20 + 8 + r.statement.to_bytes().len() + 24 + 56,
        };
        let offsets: Vec<usize> = (0..end)
            .filter(|&i| i < dense || i >= stark || i % 16 == 0)
            .collect();
        for &i in &offsets {
            for x in [0x01u8, 0x80, 0xff] {
                let mut m = bytes.clone();
                m[i] ^= x;
                check(
                    format!("byte {i} ^ {x:#x}"),
                    &m,
                    (heights..heights + n_tables).contains(&i),
                );
            }
            check(format!("cut at {i}"), &bytes[..i], false);
        }
        println!(
            "{name}: {} of {end} header bytes, {rejected} rejections ({verified} verified) in {:?}",
            offsets.len(),
            t0.elapsed()
        );
        // A table height above 2^26 is named with its table (the security estimate reads it first).
        let mut m = bytes.clone();
        m[heights] = 200;
        let e = Receipt::from_bytes(&m)
            .unwrap()
            .security_report(&program)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "malformed proof: table `CPU` has a height of 2^200 rows, more than the 2^26"
            ),
            "{name}: {e}"
        );
        // The version field: the other version is named as a corrupt field (either way round), an unknown
        // one with the versions this build reads.
        let (found, layout) = match r.proof {
            ReceiptProof::Segmented { .. } => (3, 4),
            ReceiptProof::Single(_) => (4, 3),
        };
        let mut m = bytes.clone();
        m[8..12].copy_from_slice(&(found as u32).to_le_bytes());
        let e = Receipt::from_bytes(&m).unwrap_err().to_string();
        assert!(
            e.contains(&format!("the version field says {found}"))
                && e.contains(&format!("laid out as version {layout}")),
            "{name}: {e}"
        );
        m[8..12].copy_from_slice(&7u32.to_le_bytes());
        let e = Receipt::from_bytes(&m).unwrap_err().to_string();
        assert!(
            e.contains("version 7, but this zkrv reads versions 3 (one proof) and 4 (segments)"),
            "{name}: {e}"
        );
        // A statement length beyond the file names the field.
        let mut m = bytes.clone();
        m[20..28].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = Receipt::from_bytes(&m).unwrap_err().to_string();
        assert!(
            e.contains("statement length field says 18446744073709551615 bytes"),
            "{name}: {e}"
        );
    }
}

/// A statement claiming a public output longer than any provable run writes (`MAX_PUBLIC_OUTPUT`, the
/// ABI's `MAX_OUTPUT`) is refused before any work proportional to it: in a file (v3 and v4, the length
/// field alone set, no bytes behind it) at parse time, and in memory (a lazily zeroed buffer, never
/// touched) by the verifier, each naming the bound.
#[test]
fn output_longer_than_provable_is_refused_up_front() {
    let program = bundled("exitcode");
    let over = zkrv_machine::MAX_PUBLIC_OUTPUT + 1;
    for (name, r, bytes) in receipts() {
        // magic + version + parameters (20), statement length (8), program (32), exit code (4).
        let field = 20 + 8 + 36;
        assert_eq!(
            bytes[field..field + 8],
            (r.statement.output.len() as u64).to_le_bytes(),
            "{name}: the output length field is where this test expects it"
        );
        let mut m = bytes.clone();
        m[field..field + 8].copy_from_slice(&over.to_le_bytes());
        let e = Receipt::from_bytes(&m).err().map(|e| e.to_string());
        let e = e.unwrap_or_default();
        assert!(
            e.contains(&over.to_string()) && e.contains("MAX_OUTPUT"),
            "{name}: {e}"
        );
        let mut big = r.clone();
        big.statement.output = vec![0u8; over as usize];
        let e = big.verify_any_exit(&program).err().map(|e| e.to_string());
        let e = e.unwrap_or_default();
        assert!(
            e.contains(&over.to_string()) && e.contains("MAX_OUTPUT"),
            "{name}: {e}"
        );
    }
}

/// A malicious prover assembles a segmented run from segment proofs of different presets: each segment
/// proof is valid on its own, but one was hashed with Poseidon2 (or proven without zk) while the file's
/// header and the others say Keccak-256 (zk). The file reader refuses it naming the field
/// (`FileError::HashFlag` / `ZkFlag`), and a receipt assembled in memory (no file) is refused by the
/// verifier (`VerifyError::HashMismatch` / `VerifyError::ZkMode`), never accepted.
#[test]
fn segments_of_mixed_hash_or_zk_mode_are_refused() {
    use zkrv_sdk::proof_file::{decode_any, encode_segmented, FileError};
    use zkrv_sdk::MerkleHash;
    let program = bundled("exitcode");
    let seg_receipt = |hash: MerkleHash, zk: bool| {
        let opts = ProveOptions {
            zk,
            hash,
            segment_cycles: Some(128),
            public_segment_boundaries: true,
            zk_test_seed: zk.then_some(11),
            ..ProveOptions::default()
        };
        prove(&program, b"", &opts).unwrap().receipt
    };
    let segments = |r: &Receipt| match &r.proof {
        ReceiptProof::Segmented {
            segment_rows,
            segments,
        } => (*segment_rows, segments.clone()),
        ReceiptProof::Single(_) => panic!("expected segments"),
    };
    let keccak = seg_receipt(MerkleHash::Keccak256, false);
    let poseidon = seg_receipt(MerkleHash::Poseidon2, false);
    let keccak_zk = seg_receipt(MerkleHash::Keccak256, true);
    let (rows, k) = segments(&keccak);
    let (_, p) = segments(&poseidon);
    let (rows_zk, kz) = segments(&keccak_zk);
    assert!(k.len() >= 2 && k.len() == p.len() && k.len() == kz.len());
    // Each honest receipt verifies.
    for r in [&keccak, &poseidon, &keccak_zk] {
        r.verify_any_exit(&program).unwrap();
    }
    for i in 0..k.len() {
        // Segment i hashed with Poseidon2 in a Keccak file, and the other way round.
        for (header, base, odd, want) in [
            (&keccak, &k, &p, MerkleHash::Poseidon2),
            (&poseidon, &p, &k, MerkleHash::Keccak256),
        ] {
            let mut mixed = base.clone();
            mixed[i] = odd[i].clone();
            let bytes = encode_segmented(&header.config, &header.statement, rows, &mixed).unwrap();
            match decode_any(&bytes) {
                Err(FileError::HashFlag { header: h, proof }) => {
                    assert_eq!((h, proof), (header.config.hash, want), "segment {i}")
                }
                other => panic!("segment {i}: expected HashFlag, got {:?}", other.err()),
            }
            let forged = Receipt {
                statement: header.statement.clone(),
                proof: ReceiptProof::Segmented {
                    segment_rows: rows,
                    segments: mixed,
                },
                config: header.config.clone(),
            };
            let e = forged.verify_any_exit(&program).unwrap_err().to_string();
            assert!(e.contains("hashed with"), "segment {i}: {e}");
        }
        // Segment i proven without zk in a zk file.
        let mut mixed = kz.clone();
        mixed[i] = k[i].clone();
        let bytes =
            encode_segmented(&keccak_zk.config, &keccak_zk.statement, rows_zk, &mixed).unwrap();
        match decode_any(&bytes) {
            Err(FileError::ZkFlag { header, proof }) => {
                assert_eq!((header, proof), (true, false), "segment {i}")
            }
            other => panic!("segment {i}: expected ZkFlag, got {:?}", other.err()),
        }
        let forged = Receipt {
            statement: keccak_zk.statement.clone(),
            proof: ReceiptProof::Segmented {
                segment_rows: rows_zk,
                segments: mixed,
            },
            config: keccak_zk.config.clone(),
        };
        let e = forged.verify_any_exit(&program).unwrap_err().to_string();
        assert!(
            e.contains("non-zk, but the verifier was configured for zero-knowledge"),
            "segment {i}: {e}"
        );
    }
}
