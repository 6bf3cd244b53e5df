//! The precompile guests `sha256_accel` and `keccak_accel` (guests/rust/accel: the `sha256` and `keccak`
//! guests' sources with `sha2` / `tiny-keccak` patched to zkrv's drop-ins) under zkrv's executor: on inputs
//! around the block sizes (SHA-256: 55/56/64 bytes, Keccak-256: 135/136/137), the read chunk (16 KiB), 64 KiB
//! and seeded random ones, each gives its software twin's output and the host crate's digest (`sha2`,
//! `tiny-keccak`), in far fewer cycles; `dropin_api` (the drop-ins' wider API) gives the crates.io crates'
//! bytes. Proving them: crates/machine/tests/precompile_guest.rs.

mod common;

use common::{expected, load, run, XorShift, ACCEL_GUESTS};

/// The inputs: fixed lengths, then `random` lengths (< 20,000) of seeded random bytes.
fn inputs(seed: u64, random: usize) -> Vec<Vec<u8>> {
    let mut rng = XorShift::new(seed);
    let mut v: Vec<Vec<u8>> = [
        0usize, 1, 55, 56, 63, 64, 65, 119, 120, 128, 135, 136, 137, 272, 16_383, 16_384, 16_385,
        65_536,
    ]
    .iter()
    .map(|&len| rng.bytes(len))
    .collect();
    v.push(b"abc".to_vec());
    for _ in 0..random {
        let len = (rng.next() % 20_000) as usize;
        v.push(rng.bytes(len));
    }
    v
}

fn seed() -> u64 {
    let seed = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("accel guests: seed = {seed} (replay: ZKRV_SEED={seed})");
    seed
}

#[test]
fn accel_guests_match_their_software_twins_and_the_host() {
    let seed = seed();
    for (accel, soft) in ACCEL_GUESTS {
        let (pa, ps) = (load(accel), load(soft));
        for input in inputs(seed, 6) {
            let what = format!("{accel} on a {}-byte input (seed {seed})", input.len());
            let a = run(accel, &pa, &input);
            let s = run(soft, &ps, &input);
            let (want_code, want_out) = expected(soft, &input);
            assert_eq!(a.exit_code, want_code, "{what}: exit code");
            assert_eq!(
                a.public_output, want_out,
                "{what}: output vs the host crate"
            );
            assert_eq!(a.public_output, s.public_output, "{what}: output vs {soft}");
            assert_eq!(a.public_output.len(), 32, "{what}");
            assert!(a.debug_output.is_empty(), "{what}: debug output");
            println!(
                "{accel}: {} bytes: {} cycles ({soft}: {})",
                input.len(),
                a.cycles,
                s.cycles
            );
        }
    }
}

/// The bars on 64 KiB: keccak >= 20x fewer cycles than its software twin, sha256 >= 8x.
#[test]
fn accel_guests_take_far_fewer_cycles() {
    let input = XorShift::new(0xACCE1).bytes(65_536);
    for ((accel, soft), bar) in ACCEL_GUESTS.into_iter().zip([8.0, 20.0]) {
        let a = run(accel, &load(accel), &input);
        let s = run(soft, &load(soft), &input);
        let ratio = s.cycles as f64 / a.cycles as f64;
        println!(
            "64 KiB: {soft} {} cycles, {accel} {} cycles: {ratio:.1}x",
            s.cycles, a.cycles
        );
        assert!(
            ratio >= bar,
            "{accel}: {ratio:.1}x fewer cycles than {soft}, want >= {bar}x"
        );
    }
}

/// The committed example inputs guests/inputs/<accel>.bin give the host's digest.
#[test]
fn accel_example_inputs_match_host() {
    for (accel, soft) in ACCEL_GUESTS {
        let path = common::guests_dir().join(format!("inputs/{accel}.bin"));
        let input = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let a = run(accel, &load(accel), &input);
        assert_eq!(
            (a.exit_code, a.public_output),
            expected(soft, &input),
            "{}",
            path.display()
        );
    }
}

/// `len` bytes of `h`'s digest of `data` (tiny-keccak).
fn digest<H: tiny_keccak::Hasher>(mut h: H, data: &[u8], len: usize) -> Vec<u8> {
    h.update(data);
    let mut out = vec![0u8; len];
    h.finalize(&mut out);
    out
}

/// What guests/rust/accel/dropin_api outputs for `data` (its source names the layout), from the crates.io
/// `sha2` and `tiny-keccak`.
fn dropin_api_expected(data: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    use tiny_keccak::{Hasher, Keccak, Sha3, Shake, Xof};
    let mut out = Vec::new();
    let d = Sha256::digest(data);
    out.extend_from_slice(&d);
    out.extend_from_slice(&d);
    out.extend_from_slice(&Sha256::digest(b"abc"));
    let mut state = [
        0x6a09e667u32,
        0xbb67ae85,
        0x3c6ef372,
        0xa54ff53a,
        0x510e527f,
        0x9b05688c,
        0x1f83d9ab,
        0x5be0cd19,
    ];
    let blocks: Vec<_> = data
        .chunks_exact(64)
        .map(|c| *sha2::digest::generic_array::GenericArray::from_slice(c))
        .collect();
    sha2::compress256(&mut state, &blocks);
    out.extend(state.iter().flat_map(|w| w.to_le_bytes()));
    for (k, len) in [
        (Keccak::v224(), 28),
        (Keccak::v256(), 32),
        (Keccak::v384(), 48),
        (Keccak::v512(), 64),
    ] {
        out.extend(digest(k, data, len));
    }
    for (k, len) in [
        (Sha3::v224(), 28),
        (Sha3::v256(), 32),
        (Sha3::v384(), 48),
        (Sha3::v512(), 64),
    ] {
        out.extend(digest(k, data, len));
    }
    let mut s = Shake::v128();
    s.update(data);
    let mut x = [0u8; 500];
    s.squeeze(&mut x);
    out.extend_from_slice(&x);
    let mut s = Shake::v256();
    s.update(data);
    let mut y = [0u8; 64];
    s.finalize(&mut y);
    out.extend_from_slice(&y);
    let mut lanes: [u64; 25] = std::array::from_fn(|i| i as u64);
    tiny_keccak::keccakf(&mut lanes);
    out.extend(lanes.iter().flat_map(|l| l.to_le_bytes()));
    out
}

/// The drop-ins' wider API (Digest's chain_update / finalize_reset, compress256, every Keccak, SHA-3 and
/// SHAKE variant, repeated squeezes, keccakf) gives the crates.io crates' bytes, on the same inputs.
#[test]
fn dropin_api_matches_the_crates() {
    let seed = seed();
    let program = load("dropin_api");
    for input in inputs(seed, 4) {
        let exec = run("dropin_api", &program, &input);
        assert_eq!(
            exec.exit_code,
            0,
            "dropin_api on {} bytes (seed {seed})",
            input.len()
        );
        assert_eq!(
            exec.public_output,
            dropin_api_expected(&input),
            "dropin_api on {} bytes (seed {seed})",
            input.len()
        );
    }
}
