//! The proof-of-work search on the device (`kernels/merkle.cu` "Proof of work", `zkrv_cuda::merkle::grind`)
//! against the host's (`zkrv_stark::transcript::GrindInput`), Keccak and Poseidon2 transcripts:
//! * `grind_values_host_emu_match_cpu` (no GPU; CI with `ZKRV_REQUIRE_CXX=1`): `grind_keccak_value` and
//!   `grind_p2_value` compiled as C++ over random flushed states and nonces (small, near 2^32, near 2^64),
//!   equal to `grind_hash`'s first 8 bytes (big-endian) and `poseidon2::grind_value`;
//! * `gpu_grind_finds_the_hosts_nonce` (prints `SKIPPED` without a device): `grind` on the GPU returns
//!   `GrindInput::search`'s nonce (the smallest valid one) for 0 to 20 bits, and rejects `bits > 64`.
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rng.rs"]
mod rng;

use rng::Rng;

use zkrv_cuda::merkle::{grind, grind_template, poseidon2_constants};
use zkrv_cuda::{nvrtc, Device};
use zkrv_stark::field::{F, P};
use zkrv_stark::poseidon2::{grind_value, WIDTH};
use zkrv_stark::transcript::{grind_hash, GrindInput};

const SEED: u64 = 0x5eed_0031;

/// Three random inputs of each hash.
fn inputs() -> Vec<GrindInput> {
    println!("seed = {SEED:#x}");
    let mut r = Rng(SEED);
    let mut v = Vec::new();
    for _ in 0..3 {
        let mut d = [0u8; 32];
        d.iter_mut().for_each(|b| *b = r.next() as u8);
        v.push(GrindInput::Keccak(d));
        let s: [F; WIDTH] = std::array::from_fn(|_| F::new(r.next() % P));
        v.push(GrindInput::Poseidon2(s));
    }
    v
}

/// The host's value of `nonce`, as the kernel computes it.
fn value(input: &GrindInput, nonce: u64) -> u64 {
    match input {
        GrindInput::Keccak(state) => {
            u64::from_be_bytes(grind_hash(state, nonce)[..8].try_into().unwrap())
        }
        GrindInput::Poseidon2(s) => grind_value(s, nonce),
    }
}

const DRIVER: &str = r#"
static std::vector<u64> rd(size_t n) {
    std::vector<u64> v(n);
    if (n && fread(v.data(), 8, n, stdin) != n) exit(2);
    return v;
}
int main() {
    std::vector<u64> c = rd(P2_CONSTS);
    u64 n_inputs = rd(1)[0];
    for (u64 i = 0; i < n_inputs; i++) {
        std::vector<u64> hdr = rd(2);  // poseidon2, template length
        std::vector<u64> tmpl = rd(hdr[1]);
        u64 n_nonces = rd(1)[0];
        std::vector<u64> nonces = rd(n_nonces);
        for (u64 n : nonces) {
            u64 v = hdr[0] ? grind_p2_value(tmpl.data(), n, c.data()) : grind_keccak_value(tmpl.data(), n);
            fwrite(&v, 8, 1, stdout);
        }
    }
    return 0;
}
"#;

const NONCES: [u64; 8] = [
    0,
    1,
    255,
    256,
    (1 << 32) - 1,
    1 << 32,
    u64::MAX - 1,
    0x0123_4567_89ab_cdef,
];

#[test]
fn grind_values_host_emu_match_cpu() {
    let inputs = inputs();
    let mut words: Vec<u64> = poseidon2_constants();
    words.push(inputs.len() as u64);
    for input in &inputs {
        let t = grind_template(input);
        words.extend([
            matches!(input, GrindInput::Poseidon2(_)) as u64,
            t.len() as u64,
        ]);
        words.extend(t);
        words.push(NONCES.len() as u64);
        words.extend(NONCES);
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(out) = host_emu::run("grind", nvrtc::MERKLE_CU.src, DRIVER, &bytes) else {
        eprintln!("SKIPPED grind_values_host_emu_match_cpu: no C++ compiler");
        return;
    };
    let got = host_emu::u64s(&out);
    assert_eq!(got.len(), inputs.len() * NONCES.len(), "output length");
    for (i, input) in inputs.iter().enumerate() {
        for (j, &n) in NONCES.iter().enumerate() {
            assert_eq!(
                got[i * NONCES.len() + j],
                value(input, n),
                "input {i} ({input:?}), nonce {n:#x}"
            );
        }
    }
    // The value's leading zeros are the host predicate's.
    for input in &inputs {
        for bits in [0, 1, 4, 8] {
            for &n in &NONCES {
                assert_eq!(input.ok(bits, n), value(input, n).leading_zeros() >= bits);
            }
        }
    }
}

#[test]
fn gpu_grind_finds_the_hosts_nonce() {
    let dev = match Device::new() {
        Ok(d) => {
            d.set_debug(true);
            eprintln!(
                "gpu_grind_finds_the_hosts_nonce: running on {} ({})",
                d.name(),
                d.arch()
            );
            d
        }
        Err(e) => {
            eprintln!("SKIPPED gpu_grind_finds_the_hosts_nonce: {e}");
            return;
        }
    };
    for input in inputs() {
        for bits in [0, 1, 5, 12, 16, 20] {
            let host = input.search(bits);
            let gpu = grind(&dev, &input, bits).unwrap();
            assert_eq!(gpu, host, "{input:?}, {bits} bits");
            assert!(input.ok(bits, gpu));
        }
    }
    let any = inputs()[0];
    assert!(grind(&dev, &any, 65).is_err(), "65 bits");
}
