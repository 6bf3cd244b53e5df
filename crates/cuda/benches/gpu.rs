//! GPU figures for docs/PERF.md (harness = false): run with `cargo bench -p zkrv-cuda --features cuda --bench gpu`.
//!
//! Device timings use CUDA events after a warm-up (median of `ZKRV_BENCH_REPS`, default 10); CPU timings use
//! the wall clock (median of 3). Inputs are random (never zeros). Sizes: `ZKRV_BENCH_LOG_N` (default 22) rows
//! x 64 columns for LDE and hashing (Keccak-256 and Poseidon2 leaves, trees, and the commit of a 2^22 x 64
//! trace at blowup 8 with either hash), `ZKRV_BENCH_COMMIT_LOG_N` (default 21) for the CPU-vs-GPU commit.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use zkrv_cuda::commit::{commit_lde, commit_lde_keep_salted, TraceInput};
use zkrv_cuda::merkle::{
    build_tree, hash_rows, keccak_permute_bench, poseidon2_permute_bench, MatrixRef, MerkleHash,
};
use zkrv_cuda::{poly, CudaError, Device, DeviceBuffer};
use zkrv_stark::field::F;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::MerkleTree;

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time_dev(
    dev: &Device,
    reps: u32,
    mut f: impl FnMut() -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    f()?; // warm-up (module load, twiddles, pool growth)
    dev.synchronize()?;
    let mut t = Vec::new();
    for _ in 0..reps {
        t.push(dev.time_ms(&mut f)? as f64);
    }
    Ok(median(t))
}

fn random_buffer(
    dev: &Device,
    rng: &mut StdRng,
    len: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let h: Vec<u64> = (0..len)
        .map(|_| rng.next_u64() % zkrv_stark::field::P)
        .collect();
    dev.upload(&h)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench: {e}");
        std::process::exit(
            if matches!(
                e,
                CudaError::NoLibCuda | CudaError::NoGpu(_) | CudaError::NoNvrtc
            ) {
                0
            } else {
                1
            },
        );
    }
}

fn run() -> Result<(), CudaError> {
    let dev = Device::new()?;
    dev.set_debug(false);
    let reps = env("ZKRV_BENCH_REPS", 10);
    let log_n = env("ZKRV_BENCH_LOG_N", 22);
    let width = 64usize;
    let mut rng = StdRng::seed_from_u64(1);
    let (free, total) = dev.mem_info()?;
    println!(
        "device: {} ({}), {:.1} GiB free of {:.1} GiB",
        dev.name(),
        dev.arch(),
        free as f64 / (1u64 << 30) as f64,
        total as f64 / (1u64 << 30) as f64
    );
    let mut table: Vec<(String, String)> = Vec::new();

    // 1. Device-to-device copy bandwidth (bytes read + written).
    let copy_len = 1usize << 28; // 2 GiB of u64
    let a = random_buffer(&dev, &mut rng, copy_len)?;
    let b = dev.alloc::<u64>(copy_len)?;
    let ms = time_dev(&dev, reps, || dev.copy_dtod(&a, 0, &b, 0, copy_len))?;
    let copy_bw = 2.0 * (copy_len * 8) as f64 / (ms * 1e-3) / 1e12;
    table.push((
        "D2D copy 2 GiB (read + write)".into(),
        format!("{ms:.3} ms, {copy_bw:.2} TB/s"),
    ));
    drop((a, b));

    // 2. NTT (fused DIF, bit-reversed out) 2^22 x 16, the GPU.md naive baseline shape.
    let n16 = random_buffer(&dev, &mut rng, (1usize << 22) * 16)?;
    let ms = time_dev(&dev, reps, || {
        poly::ntt_dif_in_place(&dev, &n16, 1 << 22, 16, 22, false)
    })?;
    let passes = 22u32.div_ceil(env("ZKRV_NTT_KMAX", 8));
    let bytes = 2.0 * (passes as f64) * ((1usize << 22) * 16 * 8) as f64;
    table.push((
        "NTT 2^22 x 16 (DIF, in place)".into(),
        format!(
            "{ms:.3} ms ({passes} passes, {:.2} TB/s effective; naive 22-launch baseline 6.48 ms)",
            bytes / (ms * 1e-3) / 1e12
        ),
    ));
    drop(n16);

    // 3. LDE 2^log_n x 64, blowup 4.
    let n = 1usize << log_n;
    let trace = random_buffer(&dev, &mut rng, n * width)?;
    let ms = time_dev(&dev, reps, || {
        poly::coset_lde_batch(&dev, &trace, log_n, width, 2).map(drop)
    })?;
    let io = ((n * width) + 4 * (n * width)) as f64 * 8.0;
    let floor_ms = io / (copy_bw * 1e12) * 1e3;
    table.push((
        format!("LDE 2^{log_n} x {width}, blowup 4 (in + out {:.1} GiB)", io / (1u64 << 30) as f64),
        format!("{ms:.3} ms = {:.1} G elem/s of output; copy-bandwidth floor for in+out {floor_ms:.2} ms ({:.1}x)", (4 * n * width) as f64 / (ms * 1e-3) / 1e9, ms / floor_ms),
    ));

    if std::env::var_os("ZKRV_BENCH_ONLY_NTT").is_some() {
        print_table(&table);
        return Ok(());
    }

    // 4. Keccak-f[1600] permutations/s, one thread per state.
    let states = 1usize << 24;
    let st = random_buffer(&dev, &mut rng, 25 * states)?;
    let iters = 8;
    let ms = time_dev(&dev, reps, || keccak_permute_bench(&dev, &st, iters))?;
    table.push((
        "Keccak-f[1600], 2^24 states x 8".into(),
        format!(
            "{ms:.3} ms = {:.2} G perm/s (GPU.md baseline 3.46)",
            (states as f64 * iters as f64) / (ms * 1e-3) / 1e9
        ),
    ));
    drop(st);

    // 5. Row hashing 2^(log_n+2) x 64 (the LDE's leaves) and the full tree.
    let lde = poly::coset_lde_batch(&dev, &trace, log_n, width, 2)?;
    drop(trace);
    let refs = [MatrixRef {
        data: &lde,
        width,
        log_height: log_n + 2,
    }];
    let ms = time_dev(&dev, reps, || {
        hash_rows(&dev, MerkleHash::Keccak256, &refs).map(drop)
    })?;
    let rows = (n * 4) as f64;
    table.push((
        format!("Keccak-256 rows 2^{} x 64", log_n + 2),
        format!(
            "{ms:.3} ms = {:.0} M rows/s = {:.0} GB/s of input (GPU.md baseline 875 M rows/s)",
            rows / (ms * 1e-3) / 1e6,
            rows * 512.0 / (ms * 1e-3) / 1e9
        ),
    ));
    let ms = time_dev(&dev, reps, || {
        build_tree(&dev, MerkleHash::Keccak256, &refs).map(drop)
    })?;
    table.push((
        format!("Merkle tree of 2^{} x 64", log_n + 2),
        format!("{ms:.3} ms"),
    ));
    // The same leaves and tree with the Poseidon2 hash (docs/stark.md §11), and its permutation rate.
    let ms = time_dev(&dev, reps, || {
        hash_rows(&dev, MerkleHash::Poseidon2, &refs).map(drop)
    })?;
    table.push((
        format!("Poseidon2 rows 2^{} x 64", log_n + 2),
        format!(
            "{ms:.3} ms = {:.0} M rows/s ({} permutations per row)",
            rows / (ms * 1e-3) / 1e6,
            width.div_ceil(4)
        ),
    ));
    let ms = time_dev(&dev, reps, || {
        build_tree(&dev, MerkleHash::Poseidon2, &refs).map(drop)
    })?;
    table.push((
        format!("Poseidon2 Merkle tree of 2^{} x 64", log_n + 2),
        format!("{ms:.3} ms"),
    ));
    drop(lde);
    let p2_states = 1usize << 24;
    let st = random_buffer(&dev, &mut rng, 8 * p2_states)?;
    let iters = 8u32;
    let ms = time_dev(&dev, reps, || poseidon2_permute_bench(&dev, &st, iters))?;
    table.push((
        "Poseidon2 width 8, 2^24 states x 8".into(),
        format!(
            "{ms:.3} ms = {:.2} G perm/s",
            (p2_states as f64 * iters as f64) / (ms * 1e-3) / 1e9
        ),
    ));
    drop(st);

    // 5b. Commit (LDE at blowup 8, the 100-bit preset's, + Merkle tree) of a resident 2^log_n x 64 trace,
    // Keccak-256 vs Poseidon2 (issue 26: the recursion-friendly hash's cost on the device).
    let trace2 = random_buffer(&dev, &mut rng, n * width)?;
    for hash in MerkleHash::ALL {
        let mut t = Vec::new();
        for _ in 0..reps.min(5) + 1 {
            let d = dev.alloc::<u64>(n * width)?;
            dev.copy_dtod(&trace2, 0, &d, 0, n * width)?;
            dev.synchronize()?;
            let t0 = Instant::now();
            let c = commit_lde_keep_salted(
                &dev,
                vec![TraceInput::Device {
                    name: "main".into(),
                    data: d,
                    width,
                    log_height: log_n,
                }],
                3,
                None,
                hash,
            )?;
            dev.synchronize()?;
            t.push(t0.elapsed().as_secs_f64() * 1e3);
            drop(c);
        }
        t.remove(0);
        table.push((
            format!("commit 2^{log_n} x 64, blowup 8, {}", hash.name()),
            format!("{:.1} ms (LDE + tree, resident trace)", median(t)),
        ));
    }
    drop(trace2);

    // 6. Commit stage (LDE + Merkle), CPU backend vs GPU, same trace.
    let c_log = env("ZKRV_BENCH_COMMIT_LOG_N", 21);
    let ch = 1usize << c_log;
    let host = RowMajorMatrix::new(
        (0..ch * width)
            .map(|_| F::new(rng.next_u64() % zkrv_stark::field::P))
            .collect(),
        width,
    );
    let d_trace = {
        let raw: Vec<u64> = host
            .values
            .iter()
            .map(zkrv_stark::field::PrimeField64::as_canonical_u64)
            .collect();
        dev.upload(&raw)?
    };
    // GPU, trace from the host (upload included), wall clock around the whole call (root on the host).
    let mut gpu_host = Vec::new();
    let mut root_gpu = [0u8; 32];
    for _ in 0..reps.min(5) + 1 {
        let t = Instant::now();
        let c = commit_lde(
            &dev,
            vec![TraceInput::Host {
                name: "main".into(),
                trace: &host,
            }],
            2,
        )?;
        gpu_host.push(t.elapsed().as_secs_f64() * 1e3);
        root_gpu = c.root;
    }
    gpu_host.remove(0);
    // GPU, trace resident (device copy made outside the timed region).
    let mut gpu_res = Vec::new();
    for _ in 0..reps.min(5) + 1 {
        let d = dev.alloc::<u64>(ch * width)?;
        dev.copy_dtod(&d_trace, 0, &d, 0, ch * width)?;
        dev.synchronize()?;
        let t = Instant::now();
        let c = commit_lde(
            &dev,
            vec![TraceInput::Device {
                name: "main".into(),
                data: d,
                width,
                log_height: c_log,
            }],
            2,
        )?;
        gpu_res.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(c.root, root_gpu);
    }
    gpu_res.remove(0);
    let mut cpu = Vec::new();
    let mut root_cpu = [0u8; 32];
    for _ in 0..env("ZKRV_BENCH_CPU_REPS", 3) {
        let t = Instant::now();
        let l = zkrv_stark::poly::lde_batch(&host, 2);
        let tree = MerkleTree::new(vec![l]);
        cpu.push(t.elapsed().as_secs_f64() * 1e3);
        root_cpu = tree.root();
    }
    assert_eq!(root_cpu, root_gpu, "GPU and CPU commit roots differ");
    let (cpu_ms, gh, gr) = (median(cpu), median(gpu_host), median(gpu_res));
    table.push((
        format!(
            "commit 2^{c_log} x 64, blowup 4: CPU ({} threads)",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        ),
        format!("{cpu_ms:.1} ms"),
    ));
    table.push((
        "  GPU, trace uploaded from host".into(),
        format!("{gh:.1} ms ({:.1}x CPU)", cpu_ms / gh),
    ));
    table.push((
        "  GPU, trace resident".into(),
        format!("{gr:.1} ms ({:.1}x CPU); roots equal", cpu_ms / gr),
    ));

    print_table(&table);
    Ok(())
}

fn print_table(table: &[(String, String)]) {
    let kmax = std::env::var("ZKRV_NTT_KMAX").unwrap_or_else(|_| "default".into());
    let tile = std::env::var("ZKRV_NTT_TILE").unwrap_or_else(|_| "default".into());
    println!("\n(NTT stages per pass: {kmax}, tile elements: {tile})\n| measurement | value |\n|---|---|");
    for (k, v) in table {
        println!("| {k} | {v} |");
    }
}
