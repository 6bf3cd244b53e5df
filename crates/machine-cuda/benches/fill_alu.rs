//! LT and SHIFT trace-generation figures (harness = false): GPU fill (`fill_lt_resident`, `fill_shift_resident`, requests uploaded once) vs the host fill
//! (`lt_trace`, `shift_fill`) on random deduplicated requests. Run with
//! `cargo bench -p zkrv-machine-cuda --features cuda --bench fill_alu`.
//!
//! Sizes: 2^k requests for k in 12..=`ZKRV_BENCH_FILL_LOG_N` (default 20), step 4. CPU: wall clock, median of 3.
//! GPU: wall clock of the whole fill call (request conversion, upload, trace allocation, kernel, synchronize),
//! median of `ZKRV_BENCH_REPS` (default 10) after a warm-up. Rows/s counts the trace rows.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::lt::lt_trace;
use zkrv_machine::tables::shift::{shift_fill, ShiftOp, ShiftRequests};
use zkrv_machine::MIN_HEIGHT;
use zkrv_machine_cuda::tables::lt::{fill_lt_resident, lt_requests};
use zkrv_machine_cuda::tables::shift::{fill_shift_resident, shift_requests};
use zkrv_machine_cuda::tables::{upload_requests, DeviceLookups};

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

fn wall<R>(mut f: impl FnMut() -> R) -> f64 {
    let t = Instant::now();
    let _ = f();
    t.elapsed().as_secs_f64() * 1e3
}

fn gpu_ms(
    dev: &Device,
    reps: u32,
    mut f: impl FnMut() -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    f()?; // warm-up: module load, pool growth
    dev.synchronize()?;
    let mut t = Vec::new();
    for _ in 0..reps {
        let s = Instant::now();
        f()?;
        dev.synchronize()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(t))
}

fn report(table: &str, n: usize, rows: usize, cpu: f64, gpu: f64) {
    let mrows = |ms: f64| rows as f64 / ms / 1e3;
    println!(
        "{table:5} {n:>8} requests, {rows:>8} rows: CPU {cpu:9.3} ms ({:8.1} Mrows/s), GPU {gpu:8.3} ms ({:8.1} Mrows/s), {:6.1}x",
        mrows(cpu),
        mrows(gpu),
        cpu / gpu
    );
}

fn run() -> Result<(), CudaError> {
    let dev = Device::new()?;
    let reps = env("ZKRV_BENCH_REPS", 10);
    let max_log = env("ZKRV_BENCH_FILL_LOG_N", 20);
    println!("fill_alu on {} ({}), {reps} reps", dev.name(), dev.arch());
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let ops = [
        ShiftOp::Sll,
        ShiftOp::Srl,
        ShiftOp::Sra,
        ShiftOp::Sll5,
        ShiftOp::Srl5,
        ShiftOp::Sra5,
    ];
    for log_n in (12..=max_log).step_by(4) {
        let n = 1usize << log_n;
        let mut lt = std::collections::BTreeMap::new();
        while lt.len() < n {
            lt.insert(
                (rng.next_u64(), rng.next_u64(), rng.gen()),
                rng.gen_range(1..4),
            );
        }
        let mut shift = ShiftRequests::new();
        while shift.len() < n {
            let op = ops[rng.gen_range(0..6)];
            shift.insert((op, rng.next_u64(), rng.next_u64()), rng.gen_range(1..4));
        }
        let cpu_lt = median(
            (0..3)
                .map(|_| wall(|| lt_trace(&lt, MIN_HEIGHT, &mut Lookups::new())))
                .collect(),
        );
        let cpu_shift = median(
            (0..3)
                .map(|_| wall(|| shift_fill(&shift, MIN_HEIGHT, &mut Lookups::new())))
                .collect(),
        );
        let lookups = DeviceLookups::new(&dev)?;
        let mut stats = TransferStats::default();
        // The requests are uploaded once (in production the device request lists build them there).
        let d_lt = upload_requests(&dev, "LT", &lt_requests(&lt), &mut stats)?;
        let d_shift = upload_requests(&dev, "SHIFT", &shift_requests(&shift), &mut stats)?;
        let gpu_lt = gpu_ms(&dev, reps, || {
            fill_lt_resident(&dev, &d_lt, MIN_HEIGHT, &lookups).map(drop)
        })?;
        let gpu_shift = gpu_ms(&dev, reps, || {
            fill_shift_resident(&dev, &d_shift, MIN_HEIGHT, &lookups).map(drop)
        })?;
        report("LT", n, n.max(MIN_HEIGHT), cpu_lt, gpu_lt);
        report("SHIFT", n, n.max(MIN_HEIGHT), cpu_shift, gpu_shift);
    }
    Ok(())
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
