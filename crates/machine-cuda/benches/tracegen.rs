//! GPU trace generation figures (harness = false): per-table fill time GPU vs the host reference fill, rows/s,
//! the request lists on the device (`device_requests`) vs their share of the host walk, the device memory walk
//! (`tables::memwalk::mem_walk`) time and its uploads vs its share of the host walk, the whole trace
//! generation GPU pipeline vs host, and end-to-end prove time with and without GPU trace
//! generation (proof bytes compared).
//!
//! `cargo bench -p zkrv-machine-cuda --features cuda --bench tracegen -- [GUEST[:BYTES|=FILE] ...]`
//! GUEST is a guests/bin ELF name; `:BYTES` runs it on that many random input bytes (seed 1), `=FILE` on a
//! file, else on guests/inputs/GUEST.bin. Default: every guest, then `sha256:131072` (~8M cycles) and
//! `sha256:1048576` (~67M cycles, 2^26 CPU rows: the largest workload; fills only).
//! End-to-end proofs run for workloads of at most `ZKRV_BENCH_PROVE_MAX_CYCLES` cycles (default 2^23; 0 skips
//! them). Host times: wall clock, median of 3 (1 above 2^22 cycles); GPU fill times: wall clock between
//! synchronizations (input uploads included), median of 3 after a warm-up.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use zkrv_cuda::{CudaBackend, Device, TransferStats};
use zkrv_executor::Program;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::cpu::cpu_trace;
use zkrv_machine::tables::load::load_trace;
use zkrv_machine::tables::lt::lt_trace;
use zkrv_machine::tables::memw_a::memw_a_trace;
use zkrv_machine::tables::mul::MulRequests;
use zkrv_machine::tables::shift::shift_trace;
use zkrv_machine::tables::store::store_trace;
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{run_for_proof, split_traces, table_id, SplitWitness, TABLE_NAMES};
use zkrv_machine_cuda::prove_gpu_tracegen_with;
use zkrv_machine_cuda::tables::memwalk::{mem_walk, MEM_WALK_CHUNK};
use zkrv_machine_cuda::tables::requests::device_requests;
use zkrv_machine_cuda::tables::{DeviceCalls, DeviceCycles, DeviceLookups};
use zkrv_machine_cuda::trace_gen::{TraceGenOptions, DEVICE_FILLS};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::StarkConfig;

const GUESTS: [&str; 9] = [
    "exitcode",
    "fibonacci",
    "keccak",
    "matmul",
    "modexp",
    "rustalloc",
    "rv64im",
    "sha256",
    "sort",
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn load(spec: &str) -> (String, Program, Vec<u8>) {
    let dir = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let (name, input) = if let Some((n, bytes)) = spec.split_once(':') {
        let len: usize = bytes.parse().expect("BYTES");
        let mut v = vec![0u8; len];
        StdRng::seed_from_u64(1).fill_bytes(&mut v);
        (n, v)
    } else if let Some((n, file)) = spec.split_once('=') {
        (n, std::fs::read(file).expect("input file"))
    } else {
        (
            spec,
            std::fs::read(format!("{dir}/inputs/{spec}.bin")).unwrap_or_default(),
        )
    };
    let elf = std::fs::read(format!("{dir}/bin/{name}.elf")).expect("guest ELF");
    (
        spec.to_string(),
        Program::from_elf(&elf).expect("ELF"),
        input,
    )
}

/// The host reference fill of device-fillable table `t` from the split's inputs.
fn host_fill(t: usize, s: &SplitWitness, lk: &mut Lookups) -> RowMajorMatrix {
    let i = &s.inputs;
    let mh = i.min_height;
    match t {
        table_id::CPU => {
            let c = i.cpu.as_ref().expect("CPU inputs");
            cpu_trace(&s.record.cycles, &c.walk, &c.decode, mh, lk).expect("cpu_trace")
        }
        table_id::LT => lt_trace(&i.lt, mh, lk),
        table_id::LOAD => load_trace(&i.loads, mh, lk),
        table_id::STORE => store_trace(&i.stores, mh, lk),
        table_id::MEMW_A => memw_a_trace(&i.accesses, mh, lk),
        table_id::SHIFT => shift_trace(&i.shift, mh, lk, &mut MulRequests::new()).shift,
        _ => unreachable!("table {t} has no device fill"),
    }
}

fn secs<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

fn bench_one(backend: Option<&CudaBackend>, spec: &str) {
    let dev = backend.map(|b| b.device());
    let (name, program, input) = load(spec);
    println!("\n== {name} ({} input bytes)", input.len());
    let (run, exec_s) = secs(|| run_for_proof(&program, &input).expect("run"));
    let cycles = run.record.cycles.len();
    println!("execute            {exec_s:>9.3} s   {cycles} cycles");
    let reps = if cycles > 1 << 22 { 1 } else { 3 };
    // Host trace generation, everything on the host (the CPU path).
    let mut main_bytes = vec![0u64; TABLE_NAMES.len()];
    let host_all = median(
        (0..reps)
            .map(|_| {
                let r = zkrv_machine::ProofRun {
                    statement: run.statement.clone(),
                    record: run.record.clone(),
                    input: run.input.clone(),
                };
                let (w, s) = secs(|| split_traces(&program, r, DeviceFill::NONE).expect("split"));
                let (traces, _) = w.traces.into_table_order();
                for (b, m) in main_bytes.iter_mut().zip(&traces) {
                    *b = (m.values.len() * 8) as u64;
                }
                s
            })
            .collect(),
    );
    // The split the GPU pipeline does (host walk + host fills of the tables without a device fill), and the one
    // with every fillable table left out (its inputs feed the per-table figures); one pass when they agree.
    // (The per-table figures need the host register and memory walks' results and the host's request lists in
    // the inputs: `reg_walk`, `mem_walk` and `requests` off there.) Also the host walk with the request lists,
    // and with the memory walk, on the host (their shares).
    let all = DeviceFill {
        reg_walk: false,
        mem_walk: false,
        requests: false,
        ..DeviceFill::ALL
    };
    let clone = |run: &zkrv_machine::ProofRun| zkrv_machine::ProofRun {
        statement: run.statement.clone(),
        record: run.record.clone(),
        input: run.input.clone(),
    };
    let host_requests = DeviceFill {
        requests: false,
        ..DEVICE_FILLS
    };
    let (_, walk_s) = secs(|| split_traces(&program, clone(&run), DEVICE_FILLS).expect("split"));
    let (_, req_walk_s) =
        secs(|| split_traces(&program, clone(&run), host_requests).expect("split"));
    let host_mem = DeviceFill {
        mem_walk: false,
        ..DEVICE_FILLS
    };
    let (_, mem_walk_s) = secs(|| split_traces(&program, clone(&run), host_mem).expect("split"));
    let split = split_traces(&program, run, all).expect("split");
    println!("host trace gen     {host_all:>9.3} s   (all tables on the host)");
    println!("host walk (GPU path) {walk_s:>7.3} s   (walk + host fills of tables without a device fill)");
    println!(
        "host walk, request lists on the host {req_walk_s:>7.3} s   (their share: {:.3} s)",
        req_walk_s - walk_s
    );
    println!(
        "host walk, memory walk on the host {mem_walk_s:>7.3} s   (its share: {:.3} s)",
        mem_walk_s - walk_s
    );
    if let Some(dev) = dev {
        // The request lists on the device (`tables::requests::device_requests`) from the resident record.
        let decode = &split.inputs.cpu.as_ref().expect("CPU inputs").decode;
        let mut st = TransferStats::default();
        let cyc = DeviceCycles::upload(dev, &split.record.cycles, &mut st).expect("record upload");
        let mut last = TransferStats::default();
        let mut run = || -> f64 {
            dev.synchronize().expect("sync");
            let t0 = Instant::now();
            let mut st = TransferStats::default();
            let r = device_requests(dev, &cyc, decode, split.inputs.min_height, &mut st)
                .expect("device request lists");
            dev.synchronize().expect("sync");
            let s = t0.elapsed().as_secs_f64();
            drop(r);
            last = st;
            s
        };
        run();
        let g = median((0..3).map(|_| run()).collect());
        println!(
            "device request lists {:>9.3} ms   ({cycles} cycles, {:.1} Mcycles/s; H2D {} bytes, D2H {} bytes; host \
             share above)",
            g * 1e3,
            cycles as f64 / g.max(1e-12) / 1e6,
            last.total_h2d(),
            last.total_d2h()
        );
    }
    println!(
        "{:<9} {:>10} {:>12} {:>12} {:>12} {:>12} {:>8}",
        "table", "rows", "host ms", "host Mrow/s", "GPU ms", "GPU Mrow/s", "speedup"
    );
    let mut gpu_total = 0.0;
    for t in [
        table_id::CPU,
        table_id::LT,
        table_id::LOAD,
        table_id::STORE,
        table_id::MEMW_A,
        table_id::SHIFT,
    ] {
        let mut rows = 0;
        let host = median(
            (0..reps)
                .map(|_| {
                    let mut lk = Lookups::new();
                    let (m, s) = secs(|| host_fill(t, &split, &mut lk));
                    rows = m.height();
                    s
                })
                .collect(),
        );
        let gpu = dev.and_then(|dev| {
            let lookups = DeviceLookups::new(dev).expect("histogram");
            let mut stats = TransferStats::default();
            let mut run = || -> Result<f64, zkrv_cuda::CudaError> {
                dev.synchronize()?;
                let t0 = Instant::now();
                let fill = zkrv_machine_cuda::tables::device_fills().0[t].ok_or_else(|| {
                    zkrv_cuda::CudaError::InvalidArgument(format!(
                        "{} has no device fill",
                        TABLE_NAMES[t]
                    ))
                })?;
                let cx = zkrv_machine_cuda::tables::FillCtx {
                    dev,
                    inputs: &split.inputs,
                    record: &split.record,
                    host_lookups: &split.traces.lookups,
                    cycles: None,
                    walk: None,
                    requests: None,
                    mem: None,
                    calls: None,
                    lookups: &lookups,
                };
                let d = fill.fill(&cx, &mut stats)?;
                dev.synchronize()?;
                let s = t0.elapsed().as_secs_f64();
                drop(d);
                Ok(s)
            };
            match run() {
                Ok(_) => Some(median((0..reps).map(|_| run().expect("fill")).collect())),
                Err(e) => {
                    if has_device_fill(t) {
                        panic!("{}: device fill failed: {e}", TABLE_NAMES[t]);
                    }
                    None
                }
            }
        });
        let mrows = |s: f64| rows as f64 / s.max(1e-12) / 1e6;
        match gpu {
            Some(g) => {
                gpu_total += g;
                println!(
                    "{:<9} {rows:>10} {:>12.3} {:>12.1} {:>12.3} {:>12.1} {:>7.1}x",
                    TABLE_NAMES[t],
                    host * 1e3,
                    mrows(host),
                    g * 1e3,
                    mrows(g),
                    host / g.max(1e-12)
                )
            }
            None => println!(
                "{:<9} {rows:>10} {:>12.3} {:>12.1} {:>12} {:>12} {:>8}",
                TABLE_NAMES[t],
                host * 1e3,
                mrows(host),
                if dev.is_some() { "no fill" } else { "no GPU" },
                "-",
                "-"
            ),
        }
    }
    println!("device fills total {:>9.3} ms", gpu_total * 1e3);
    if let Some(dev) = dev {
        bench_mem_walk(dev, &split);
    }
    println!(
        "(GPU ms: input uploads included; CPU includes the record's cycles, which the pipeline uploads during the \
         host walk; LOAD/STORE/MEMW_A upload packed events here, the pipeline's record path uploads less)"
    );
    let all: u64 = main_bytes.iter().sum();
    let resident: u64 = device_tables().into_iter().map(|t| main_bytes[t]).sum();
    println!(
        "main-trace host->device: {all} bytes with host traces, {} with GPU trace generation ({:+.1}%)",
        all - resident,
        -100.0 * resident as f64 / all.max(1) as f64
    );
    let dev_tables = device_tables();
    let mut up: Vec<(u64, &str)> = (0..TABLE_NAMES.len())
        .filter(|t| !dev_tables.contains(t))
        .map(|t| (main_bytes[t], TABLE_NAMES[t]))
        .collect();
    up.sort_by(|a, b| b.cmp(a));
    let top: Vec<String> = up.iter().take(5).map(|(b, n)| format!("{n} {b}")).collect();
    println!("largest uploaded main traces (bytes): {}", top.join(", "));
    drop(split);
    let prove_max: usize = std::env::var("ZKRV_BENCH_PROVE_MAX_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 23);
    let Some(backend) = backend else { return };
    if cycles > prove_max {
        println!("end-to-end proofs skipped: {cycles} cycles > ZKRV_BENCH_PROVE_MAX_CYCLES = {prove_max}");
        return;
    }
    let config = StarkConfig::default();
    let mut proofs = Vec::new();
    for host_traces in [false, true] {
        backend.reset_stats();
        let opts = TraceGenOptions {
            host_traces,
            ..TraceGenOptions::default()
        };
        let ((st, proof, report), s) = secs(|| {
            prove_gpu_tracegen_with(backend, &program, &input, &config, opts).expect("prove")
        });
        let stats = backend.stats();
        let main_h2d: u64 = TABLE_NAMES
            .iter()
            .filter_map(|n| stats.bytes.get(&("commit".to_string(), n.to_string())))
            .map(|b| b.h2d)
            .sum();
        println!(
            "prove, {} traces: {s:.3} s end to end (trace gen {:.3} s, prove {:.3} s); main-trace H2D {main_h2d} bytes, trace-gen inputs H2D {} bytes",
            if host_traces { "host" } else { "GPU" },
            report.trace_gen_s(),
            report.prove_s,
            stats.stage("trace-gen").h2d
        );
        if !host_traces {
            print!("{report}");
        }
        proofs.push((st, proof.to_bytes()));
    }
    assert!(
        proofs[0] == proofs[1],
        "{name}: GPU and host trace generation give different proofs"
    );
    println!("proofs identical ({} bytes)", proofs[0].1.len());
}

/// The device memory walk (`tables::memwalk::mem_walk`) on the split's record: wall time between
/// synchronizations (uploads of the page images and SYSIO rows included, the record's cycles already resident),
/// median of 3 after a warm-up, and its host->device bytes.
fn bench_mem_walk(dev: &Device, split: &SplitWitness) {
    let rec = &split.record;
    let mut stats = TransferStats::default();
    let cycles = DeviceCycles::upload(dev, &rec.cycles, &mut stats).expect("record upload");
    let calls = DeviceCalls::upload(dev, rec, &mut stats).expect("precompile events upload");
    let decode = &split.inputs.cpu.as_ref().expect("CPU inputs").decode;
    let mut h2d = 0;
    let mut walk = || -> f64 {
        let mut st = TransferStats::default();
        dev.synchronize().expect("synchronize");
        let t0 = Instant::now();
        let w = mem_walk(
            dev,
            &cycles,
            decode,
            &rec.pages,
            &rec.init_pages,
            &rec.final_pages,
            &split.inputs.sysio,
            &calls,
            MEM_WALK_CHUNK,
            &mut st,
        )
        .expect("device memory walk");
        dev.synchronize().expect("synchronize");
        let s = t0.elapsed().as_secs_f64();
        drop(w);
        h2d = st.stage("trace-gen").h2d;
        s
    };
    walk();
    let s = median((0..3).map(|_| walk()).collect());
    let mem = rec
        .cycles
        .iter()
        .filter(|c| c.is_load() || c.is_store())
        .count();
    println!(
        "device memory walk {:>9.3} ms   ({mem} loads/stores, {} SYSIO rows, {} pages; H2D {h2d} bytes = {:.3} B/cycle)",
        s * 1e3,
        split.inputs.sysio.len(),
        rec.pages.len(),
        h2d as f64 / rec.cycles.len().max(1) as f64
    );
}

/// The indices of the tables [`DEVICE_FILLS`] fills on the device, in proof order.
fn device_tables() -> Vec<usize> {
    let (device, _) = zkrv_machine_cuda::trace_gen::without_missing_fills(
        &zkrv_machine_cuda::tables::device_fills(),
        DEVICE_FILLS,
    );
    zkrv_machine::Table::ALL
        .into_iter()
        .filter(|&t| device.has(t))
        .map(|t| t.index())
        .collect()
}

fn has_device_fill(t: usize) -> bool {
    device_tables().contains(&t)
}

fn main() {
    let specs: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let specs = if specs.is_empty() {
        let mut v: Vec<String> = GUESTS.iter().map(|s| s.to_string()).collect();
        v.push("sha256:131072".into());
        v.push("sha256:1048576".into());
        v
    } else {
        specs
    };
    let fills: Vec<&str> = device_tables()
        .into_iter()
        .map(|t| TABLE_NAMES[t])
        .collect();
    let backend = match Device::new() {
        Ok(dev) => {
            println!(
                "GPU trace generation: {} ({}); device fills: {fills:?}",
                dev.name(),
                dev.arch()
            );
            Some(CudaBackend::new(dev))
        }
        Err(e) => {
            println!("no GPU ({e}): host figures only");
            None
        }
    };
    for s in &specs {
        bench_one(backend.as_ref(), s);
    }
}
