//! GPU vs CPU parity, byte for byte. Each test opens the GPU; on a machine without one (no libcuda, no NVRTC or
//! no device) it prints "SKIPPED <test>: <reason>" and passes. Large sizes (up to 2^24 rows) run only with
//! `ZKRV_CUDA_BIG=1` (the device runs). Random inputs are seeded; the seed is printed (`ZKRV_SEED` to replay).
#![cfg(feature = "cuda")]

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use zkrv_cuda::commit::{commit_lde, TraceInput};
use zkrv_cuda::merkle::{build_tree, keccak256_many, MatrixRef};
use zkrv_cuda::{poly, Device, TraceOrigin};
use zkrv_stark::field::{Ext3, Field, PrimeField64, F, P};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{keccak256, verify_batch, MerkleTree};
use zkrv_stark::poly as cpu;

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

fn rng(test: &str) -> StdRng {
    let seed = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("{test}: seed {seed}");
    StdRng::seed_from_u64(seed)
}

fn big() -> bool {
    std::env::var_os("ZKRV_CUDA_BIG").is_some()
}

/// Random u64, sometimes non-canonical (>= p) and sometimes an edge value.
fn rand_u64(r: &mut StdRng) -> u64 {
    match r.gen_range(0..16) {
        0 => [0, 1, P - 1, P, P + 1, u64::MAX, 1 << 32, (1 << 32) - 1][r.gen_range(0..8)],
        _ => r.next_u64(),
    }
}

fn rand_matrix(r: &mut StdRng, height: usize, width: usize) -> RowMajorMatrix {
    RowMajorMatrix::new(
        (0..height * width).map(|_| F::new(rand_u64(r))).collect(),
        width,
    )
}

fn canon(m: &RowMajorMatrix) -> Vec<u64> {
    m.values.iter().map(|x| x.as_canonical_u64()).collect()
}

fn upload(dev: &Device, m: &RowMajorMatrix) -> zkrv_cuda::DeviceBuffer<u64> {
    let raw: Vec<u64> = m.values.iter().map(|x| x.as_canonical_u64()).collect();
    dev.upload(&raw).unwrap()
}

#[test]
fn device_new_reports_instead_of_panicking() {
    match Device::new() {
        Ok(d) => eprintln!("device: {} {}", d.name(), d.arch()),
        Err(e) => eprintln!("no device (expected on CI): {e}"),
    }
}

#[test]
fn fresh_buffers_are_poisoned_in_debug_mode() {
    let Some(dev) = device("fresh_buffers_are_poisoned_in_debug_mode") else {
        return;
    };
    let b = dev.alloc::<u64>(1000).unwrap();
    assert!(dev.download(&b).unwrap().iter().all(|&x| x == u64::MAX));
}

#[test]
fn field_ops_match_cpu() {
    let Some(dev) = device("field_ops_match_cpu") else {
        return;
    };
    let mut r = rng("field_ops_match_cpu");
    let n = 1 << 16;
    let a: Vec<u64> = (0..n).map(|_| rand_u64(&mut r)).collect();
    let b: Vec<u64> = (0..n).map(|_| rand_u64(&mut r)).collect();
    let out = zkrv_cuda::field::base_ops(&dev, &a, &b).unwrap();
    for i in 0..n {
        let (x, y) = (F::new(a[i]), F::new(b[i]));
        let inv = x.try_inverse().unwrap_or(F::new(0));
        let want = [x + y, x - y, x * y, inv].map(|v| v.as_canonical_u64());
        assert_eq!(&out[4 * i..4 * i + 4], &want, "i={i} a={} b={}", a[i], b[i]);
    }
    let ea: Vec<[u64; 3]> = (0..n)
        .map(|_| [rand_u64(&mut r), rand_u64(&mut r), rand_u64(&mut r)])
        .collect();
    let eb: Vec<[u64; 3]> = (0..n)
        .map(|_| [rand_u64(&mut r), rand_u64(&mut r), rand_u64(&mut r)])
        .collect();
    let out = zkrv_cuda::field::ext3_ops(&dev, &ea, &eb).unwrap();
    for i in 0..n {
        let (x, y) = (Ext3::from_u64s(ea[i]), Ext3::from_u64s(eb[i]));
        let inv = x.try_inverse().unwrap_or(Ext3::ZERO);
        let want: Vec<u64> = [x + y, x - y, x * y, inv]
            .iter()
            .flat_map(|v| v.to_canonical_u64s())
            .collect();
        assert_eq!(&out[12 * i..12 * i + 12], &want[..], "ext i={i}");
    }
}

#[test]
fn dft_and_idft_match_cpu() {
    let Some(dev) = device("dft_and_idft_match_cpu") else {
        return;
    };
    let mut r = rng("dft_and_idft_match_cpu");
    let max_log = if big() { 24 } else { 18 };
    for log_n in 1..=max_log {
        for width in [1usize, 3, 7, 64] {
            if (width << log_n) > (1 << 26) {
                continue;
            }
            let m = rand_matrix(&mut r, 1 << log_n, width);
            let d = upload(&dev, &m);
            let got = dev
                .download(&poly::dft_batch(&dev, &d, log_n, width).unwrap())
                .unwrap();
            assert_eq!(
                got,
                canon(&cpu::dft_batch(m.clone())),
                "dft log_n={log_n} width={width}"
            );
            let got = dev
                .download(&poly::idft_batch(&dev, &d, log_n, width).unwrap())
                .unwrap();
            assert_eq!(
                got,
                canon(&cpu::idft_batch(m)),
                "idft log_n={log_n} width={width}"
            );
        }
        eprintln!("dft/idft 2^{log_n}: ok");
    }
}

#[test]
fn lde_matches_cpu() {
    let Some(dev) = device("lde_matches_cpu") else {
        return;
    };
    let mut r = rng("lde_matches_cpu");
    let max_log = if big() { 22 } else { 16 };
    for log_n in 0..=max_log {
        for (width, log_blowup) in [(1usize, 1u32), (5, 2), (33, 3), (64, 2)] {
            if (width << (log_n + log_blowup)) > (1 << 27) {
                continue;
            }
            let m = rand_matrix(&mut r, 1 << log_n, width);
            let d = upload(&dev, &m);
            let lde = poly::coset_lde_batch(&dev, &d, log_n, width, log_blowup).unwrap();
            let got = dev.download(&lde).unwrap();
            let want = canon(&cpu::lde_batch(&m, log_blowup as usize));
            assert_eq!(got.len(), want.len());
            if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                panic!("lde log_n={log_n} width={width} blowup=2^{log_blowup}: first diff at row {} col {}", i / width, i % width);
            }
        }
        eprintln!("lde 2^{log_n}: ok");
    }
}

#[test]
fn keccak256_matches_cpu() {
    let Some(dev) = device("keccak256_matches_cpu") else {
        return;
    };
    let mut r = rng("keccak256_matches_cpu");
    let msgs: Vec<Vec<u8>> = (0..600)
        .map(|len| (0..len).map(|_| r.gen()).collect())
        .collect();
    let refs: Vec<&[u8]> = msgs.iter().map(|m| m.as_slice()).collect();
    let got = keccak256_many(&dev, &refs).unwrap();
    for (m, g) in msgs.iter().zip(&got) {
        assert_eq!(g, &keccak256(m), "message of {} bytes", m.len());
    }
}

/// Mixed heights and widths (including multiples of the 17-lane rate and zero padding lanes).
fn merkle_case(dev: &Device, r: &mut StdRng, shapes: &[(u32, usize)]) {
    let mats: Vec<RowMajorMatrix> = shapes
        .iter()
        .map(|&(lh, w)| rand_matrix(r, 1 << lh, w))
        .collect();
    let d_mats: Vec<_> = mats.iter().map(|m| upload(dev, m)).collect();
    let refs: Vec<MatrixRef<'_>> = shapes
        .iter()
        .zip(&d_mats)
        .map(|(&(lh, w), d)| MatrixRef {
            data: d,
            width: w,
            log_height: lh,
        })
        .collect();
    let tree = build_tree(dev, zkrv_cuda::merkle::MerkleHash::Keccak256, &refs).unwrap();
    let cpu_tree = MerkleTree::new(mats);
    assert_eq!(
        tree.root(dev).unwrap(),
        cpu_tree.root(),
        "root, shapes {shapes:?}"
    );
    let big_l = cpu_tree.log_max_height();
    let leaves = tree.level(dev, big_l as u32).unwrap();
    assert_eq!(leaves.len(), 1 << big_l);
    for q in [0usize, 1, (1 << big_l) - 1, r.gen_range(0..1 << big_l)] {
        if q >> big_l != 0 {
            continue;
        }
        let (rows, proof) = cpu_tree.open(q);
        assert_eq!(
            tree.open(dev, q).unwrap(),
            proof.siblings,
            "path of {q}, shapes {shapes:?}"
        );
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &cpu_tree.root(),
            &cpu_tree.dims(),
            q,
            &rows,
            &proof,
            0,
        )
        .unwrap();
    }
}

#[test]
fn merkle_mixed_heights_match_cpu() {
    let Some(dev) = device("merkle_mixed_heights_match_cpu") else {
        return;
    };
    let mut r = rng("merkle_mixed_heights_match_cpu");
    merkle_case(&dev, &mut r, &[(0, 1)]);
    merkle_case(&dev, &mut r, &[(0, 3), (0, 17)]);
    merkle_case(&dev, &mut r, &[(1, 16)]);
    merkle_case(&dev, &mut r, &[(5, 17), (5, 34), (3, 1), (0, 2)]);
    merkle_case(
        &dev,
        &mut r,
        &[(10, 7), (8, 16), (10, 18), (2, 33), (9, 51)],
    );
    merkle_case(&dev, &mut r, &[(14, 64), (12, 3), (13, 5), (12, 1)]);
    if big() {
        merkle_case(&dev, &mut r, &[(20, 64), (18, 9), (20, 5), (16, 17)]);
    }
}

#[test]
fn commit_lde_matches_cpu_and_counts_transfers() {
    let Some(dev) = device("commit_lde_matches_cpu_and_counts_transfers") else {
        return;
    };
    let mut r = rng("commit_lde_matches_cpu_and_counts_transfers");
    let log_blowup = 2;
    let shapes = [(10usize, 13usize), (8, 64), (10, 1), (6, 20)];
    let traces: Vec<RowMajorMatrix> = shapes
        .iter()
        .map(|&(lh, w)| rand_matrix(&mut r, 1 << lh, w))
        .collect();
    // Tables 0 and 2 from the host, 1 and 3 resident.
    let inputs: Vec<TraceInput<'_>> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let name = format!("t{i}");
            if i % 2 == 0 {
                TraceInput::Host { name, trace: t }
            } else {
                TraceInput::Device {
                    name,
                    data: upload(&dev, t),
                    width: t.width,
                    log_height: shapes[i].0 as u32,
                }
            }
        })
        .collect();
    let mut c = commit_lde(&dev, inputs, log_blowup).unwrap();
    let ldes: Vec<RowMajorMatrix> = traces
        .iter()
        .map(|t| cpu::lde_batch(t, log_blowup as usize))
        .collect();
    let cpu_tree = MerkleTree::new(ldes.clone());
    assert_eq!(c.root, cpu_tree.root());
    for q in [0usize, 5, 4095] {
        let (rows, proof) = c.open(&dev, q).unwrap();
        let (cpu_rows, cpu_proof) = cpu_tree.open(q);
        assert_eq!(proof, cpu_proof);
        assert_eq!(rows, cpu_rows);
    }
    assert_eq!(c.download_lde(&dev, 1).unwrap(), ldes[1]);
    let s = &c.stats;
    eprintln!("{s}");
    assert_eq!(s.origin["t0"], TraceOrigin::Uploaded);
    assert_eq!(s.origin["t1"], TraceOrigin::Resident);
    assert_eq!(s.table("t0").h2d, (13 << 10) * 8);
    assert_eq!(s.table("t1").h2d, 0);
    assert_eq!(s.table("t3").h2d, 0);
    assert_eq!(s.total_h2d(), ((13 << 10) + (1 << 10)) * 8);
    assert_eq!(s.table("t1").d2h, (64 << 10) * 8 + 64 * 8 * 3);
}

#[test]
fn device_is_usable_from_other_threads() {
    let Some(dev) = device("device_is_usable_from_other_threads") else {
        return;
    };
    let mut r = rng("device_is_usable_from_other_threads");
    let m = rand_matrix(&mut r, 1 << 10, 3);
    let want = canon(&cpu::lde_batch(&m, 1));
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let d = upload(&dev, &m);
                let lde = poly::coset_lde_batch(&dev, &d, 10, 3, 1).unwrap();
                assert_eq!(dev.download(&lde).unwrap(), want);
            });
        }
    });
}

/// zk mode (`kernels/zk.cu` vs `zkrv_stark::zk`): salt matrices and randomized traces, bit for bit, at edge
/// sizes; a salted commitment equals `MerkleTree::new_salted` (root, rows, salts and paths).
#[test]
fn zk_randomness_and_salted_commit_match_cpu() {
    use zkrv_stark::zk::{self as host_zk, ZkRng};
    let Some(dev) = device("zk_randomness_and_salted_commit_match_cpu") else {
        return;
    };
    let mut r = rng("zk_randomness_and_salted_commit_match_cpu");
    let zk_rng = ZkRng::from_test_seed(r.next_u64());
    for lh in [0u32, 1, 5, 10] {
        let d = zkrv_cuda::zk::salt_matrix(&dev, &zk_rng, 3, lh).unwrap();
        let cpu_salt = host_zk::salt_matrix(&zk_rng, 3, lh as usize);
        assert_eq!(dev.download(&d).unwrap(), canon(&cpu_salt), "salt 2^{lh}");
    }
    // Widths across the 8-element squeeze blocks (1, 8, 9, 17, 33), non-canonical inputs.
    for (log_n, width) in [(0u32, 1usize), (1, 8), (4, 9), (6, 17), (3, 33)] {
        let t = rand_matrix(&mut r, 1 << log_n, width);
        let d = upload(&dev, &t);
        let out = zkrv_cuda::zk::randomize_trace(&dev, &zk_rng, 1, 7, &d, width, log_n).unwrap();
        let cpu_t = host_zk::randomize_trace(&t, &zk_rng, 1, 7);
        assert_eq!(
            dev.download(&out).unwrap(),
            canon(&cpu_t),
            "randomized 2^{log_n} x {width}"
        );
    }
    let mats = [
        rand_matrix(&mut r, 16, 3),
        rand_matrix(&mut r, 4, 2),
        rand_matrix(&mut r, 16, 1),
    ];
    let traces: Vec<TraceInput<'_>> = mats
        .iter()
        .enumerate()
        .map(|(i, m)| TraceInput::Host {
            name: format!("t{i}"),
            trace: m,
        })
        .collect();
    let mut gpu =
        zkrv_cuda::commit::commit_lde_salted(&dev, traces, 2, Some((&zk_rng, 5))).unwrap();
    let ldes: Vec<RowMajorMatrix> = mats.iter().map(|m| cpu::lde_batch(m, 2)).collect();
    let cpu_tree = MerkleTree::new_salted(
        zkrv_stark::merkle::MerkleHash::Keccak256,
        ldes,
        Some((&zk_rng, 5)),
    );
    assert_eq!(gpu.root, cpu_tree.root());
    for q in [0usize, 5, 63] {
        let (rows, proof) = cpu_tree.open(q);
        let (g_rows, g_proof) = gpu.open(&dev, q).unwrap();
        assert_eq!(g_rows, rows);
        assert_eq!(g_proof, proof);
        verify_batch(
            zkrv_stark::merkle::MerkleHash::Keccak256,
            &cpu_tree.root(),
            &cpu_tree.dims(),
            q,
            &rows,
            &proof,
            host_zk::SALT_WIDTH,
        )
        .unwrap();
    }
}
