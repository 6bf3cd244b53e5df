//! Poseidon2 Merkle trees (docs/stark.md §11.1) on the device, byte for byte against the CPU tree
//! (`zkrv_stark::merkle::MerkleTree` with `MerkleHash::Poseidon2`):
//! * `poseidon2_merkle_host_emu_matches_cpu` (no GPU; CI with `ZKRV_REQUIRE_CXX=1`): `kernels/merkle.cu`'s
//!   `p2_leaf_at` and `p2_level_at` compiled as C++ and run over every leaf and node of a mixed-height tree
//!   (widths that fill 4-element chunks exactly and with padding, an injected level);
//! * `gpu_poseidon2_tree_matches_cpu` (prints `SKIPPED` without a device): `build_tree` on the GPU, every layer;
//! * `gpu_poseidon2_proof_is_byte_identical_to_cpu` (prints `SKIPPED` without a device): a proof of the
//!   unit machine with the Poseidon2 preset, zk and not, stored and recomputed LDEs, equal to the CPU's.
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rng.rs"]
mod rng;

use rng::Rng;

use zkrv_cuda::merkle::{build_tree, poseidon2_constants, MatrixRef};
use zkrv_cuda::{nvrtc, Device};
use zkrv_stark::field::{PrimeField64, F, P};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{MerkleHash, MerkleTree};

const SEED: u64 = 0x5eed_0029;

/// Group A: height 2^5, widths 3 + 6 (9 elements: two chunks and a padded one); group B: height 2^3, width 4
/// (one exact chunk), injected at level 3.
const A_LOG: u32 = 5;
const A_WIDTHS: [usize; 2] = [3, 6];
const B_LOG: u32 = 3;
const B_WIDTH: usize = 4;

fn matrices() -> Vec<RowMajorMatrix> {
    println!("seed = {SEED:#x}");
    let mut r = Rng(SEED);
    let mut m = |lh: u32, w: usize| {
        RowMajorMatrix::new((0..(w << lh)).map(|_| F::new(r.next() % P)).collect(), w)
    };
    vec![
        m(A_LOG, A_WIDTHS[0]),
        m(B_LOG, B_WIDTH),
        m(A_LOG, A_WIDTHS[1]),
    ]
}

fn words(d: &[[u8; 32]]) -> Vec<u64> {
    d.iter()
        .flat_map(|x| {
            x.chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        })
        .collect()
}

const DRIVER: &str = r#"
static std::vector<u64> rd(size_t n) {
    std::vector<u64> v(n);
    if (n && fread(v.data(), 8, n, stdin) != n) exit(2);
    return v;
}
struct Group {
    std::vector<std::vector<u64>> mats;
    std::vector<u32> widths;
    std::vector<const u64*> ptrs;
    u64 total = 0;
    u32 lh = 0;
};
static Group rd_group() {
    Group g;
    std::vector<u64> hdr = rd(2);
    g.lh = (u32)hdr[1];
    for (u64 i = 0; i < hdr[0]; i++) {
        u64 w = rd(1)[0];
        g.widths.push_back((u32)w);
        g.total += w;
    }
    for (u64 i = 0; i < hdr[0]; i++) g.mats.push_back(rd((size_t)g.widths[i] << g.lh));
    for (auto& m : g.mats) g.ptrs.push_back(m.data());
    return g;
}
static std::vector<u64> leaves(Group& g, const u64* c) {
    size_t h = (size_t)1 << g.lh;
    std::vector<u64> out(4 * h);
    for (size_t i = 0; i < h; i++)
        p2_leaf_at(g.ptrs.data(), g.widths.data(), (u32)g.ptrs.size(), g.total, i, c, &out[4 * i]);
    return out;
}
int main() {
    Group a = rd_group(), b = rd_group();
    std::vector<u64> c = rd(P2_CONSTS);
    std::vector<u64> cur = leaves(a, c.data());
    fwrite(cur.data(), 8, cur.size(), stdout);
    for (int l = (int)a.lh - 1; l >= 0; l--) {
        size_t n = (size_t)1 << l;
        std::vector<u64> rh;
        const u64* rhp = nullptr;
        if ((u32)l == b.lh) {
            rh = leaves(b, c.data());
            rhp = rh.data();
        }
        std::vector<u64> next(4 * n);
        for (size_t j = 0; j < n; j++) p2_level_at(cur.data(), rhp, next.data(), j, c.data());
        fwrite(next.data(), 8, next.size(), stdout);
        cur = next;
    }
    return 0;
}
"#;

#[test]
fn poseidon2_merkle_host_emu_matches_cpu() {
    let mats = matrices();
    let cpu = MerkleTree::with_salts(MerkleHash::Poseidon2, mats.clone(), Vec::new());
    let mut input: Vec<u64> = Vec::new();
    let group = |input: &mut Vec<u64>, ms: &[&RowMajorMatrix], lh: u32| {
        input.extend([ms.len() as u64, lh as u64]);
        input.extend(ms.iter().map(|m| m.width as u64));
        for m in ms {
            input.extend(m.values.iter().map(|x| x.as_canonical_u64()));
        }
    };
    group(&mut input, &[&mats[0], &mats[2]], A_LOG);
    group(&mut input, &[&mats[1]], B_LOG);
    input.extend(poseidon2_constants());
    let bytes: Vec<u8> = input.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(out) = host_emu::run("poseidon2_merkle", nvrtc::MERKLE_CU.src, DRIVER, &bytes) else {
        eprintln!("SKIPPED poseidon2_merkle_host_emu_matches_cpu: no C++ compiler");
        return;
    };
    let got = host_emu::u64s(&out);
    let expect: Vec<u64> = cpu.layers().iter().flat_map(|l| words(l)).collect();
    assert_eq!(got.len(), expect.len(), "output length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expect[i]) {
        panic!("word {i}: {:#x}, expected {:#x}", got[i], expect[i]);
    }
    // Not the Keccak tree (the kernel did not fall back to it).
    assert_ne!(MerkleTree::new(mats).root(), cpu.root());
}

fn device(test: &str) -> Option<Device> {
    match Device::new() {
        Ok(d) => {
            d.set_debug(true);
            eprintln!("{test}: running on {} ({})", d.name(), d.arch());
            Some(d)
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

#[test]
fn gpu_poseidon2_tree_matches_cpu() {
    let Some(dev) = device("gpu_poseidon2_tree_matches_cpu") else {
        return;
    };
    let mats = matrices();
    let cpu = MerkleTree::with_salts(MerkleHash::Poseidon2, mats.clone(), Vec::new());
    let d: Vec<_> = mats
        .iter()
        .map(|m| {
            let raw: Vec<u64> = m.values.iter().map(|x| x.as_canonical_u64()).collect();
            dev.upload(&raw).unwrap()
        })
        .collect();
    let refs: Vec<MatrixRef<'_>> = mats
        .iter()
        .zip(&d)
        .map(|(m, d)| MatrixRef {
            data: d,
            width: m.width,
            log_height: m.log_height().unwrap() as u32,
        })
        .collect();
    let tree = build_tree(&dev, MerkleHash::Poseidon2, &refs).unwrap();
    assert_eq!(tree.root(&dev).unwrap(), cpu.root());
    for l in 0..=A_LOG {
        assert_eq!(
            tree.level(&dev, l).unwrap(),
            cpu.layers()[(A_LOG - l) as usize],
            "level {l}"
        );
    }
    for q in [0usize, 7, 31] {
        assert_eq!(
            tree.open(&dev, q).unwrap(),
            cpu.open(q).1.siblings,
            "leaf {q}"
        );
    }
}

#[path = "../../stark/tests/proto_common/mod.rs"]
mod proto_common;

#[test]
fn gpu_poseidon2_proof_is_byte_identical_to_cpu() {
    use proto_common::{airs, fixture};
    use zkrv_cuda::{CudaBackend, GpuLdeMode};
    use zkrv_stark::backend::TraceInput;
    use zkrv_stark::{preprocess, prove, prove_with, verify, StarkConfig};
    let Some(dev) = device("gpu_poseidon2_proof_is_byte_identical_to_cpu") else {
        return;
    };
    let backend = CudaBackend::new(dev);
    let seed = 20261203;
    println!("zk seed = {seed}");
    let configs = [
        StarkConfig::dev().with_hash(MerkleHash::Poseidon2),
        StarkConfig {
            zk_seed: Some(seed),
            ..StarkConfig::dev_zk().with_hash(MerkleHash::Poseidon2)
        },
    ];
    for config in &configs {
        for mode in [GpuLdeMode::Store, GpuLdeMode::Recompute] {
            backend.set_lde_mode(mode);
            let fx = fixture(9);
            let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
            let cpu = prove(
                config,
                &airs(),
                &pre,
                fx.traces.clone(),
                &fx.public,
                b"stmt",
            )
            .unwrap();
            let inputs = fx.traces.iter().cloned().map(TraceInput::Host).collect();
            let gpu =
                prove_with(&backend, config, &airs(), &pre, inputs, &fx.public, b"stmt").unwrap();
            assert_eq!(gpu.hash, MerkleHash::Poseidon2);
            assert_eq!(
                gpu.to_bytes(),
                cpu.to_bytes(),
                "zk {} mode {mode:?}",
                config.zk
            );
            verify(config, 0, &airs(), &pre, &fx.public, b"stmt", &gpu).unwrap();
        }
    }
}
