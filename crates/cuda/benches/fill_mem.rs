//! LOAD / STORE / MEMW_A trace generation, GPU vs host (harness = false):
//! `cargo bench -p zkrv-cuda --features cuda --bench fill_mem`.
//!
//! Per table, `2^ZKRV_BENCH_FILL_LOG_N` (default 22) synthetic events that are valid fill inputs (the walk's
//! invariants; about half the values zero or small, so the BITWISE counters have hot rows as in real runs):
//! - host: the reference fill (`load_trace`, ...), single thread, wall clock, median of 3;
//! - pack: `pack_*` on the host (the conversion `fill_*` starts with), median of 3;
//! - upload: `dev.upload` of the packed events, CUDA events, median of `ZKRV_BENCH_REPS` (default 5);
//! - gpu: the whole `fill_*` (pack + upload + allocation + kernel), wall clock after a synchronize, median;
//!   the kernel share is estimated as gpu - pack - upload.
//!
//! Prints rows/s and the bytes uploaded per event vs the trace bytes per row.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use zkrv_cuda::tables::load::{fill_load, pack_loads};
use zkrv_cuda::tables::memw_a::{fill_memw_a, pack_accesses};
use zkrv_cuda::tables::store::{fill_store, pack_stores};
use zkrv_cuda::tables::DeviceLookups;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::load::{load_trace, LoadEvent, NUM_LOAD_COLS};
use zkrv_machine::tables::memw_a::{memw_a_trace, MemwAEvent, NUM_MEMW_A_COLS};
use zkrv_machine::tables::store::{store_trace, StoreEvent, NUM_STORE_COLS};

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

fn wall_ms(reps: u32, mut f: impl FnMut()) -> f64 {
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

/// Zero (1/4), a byte (1/4) or a uniform u64.
fn value(r: &mut StdRng) -> u64 {
    match r.gen_range(0..4) {
        0 => 0,
        1 => r.gen_range(0..256),
        _ => r.next_u64(),
    }
}

fn imm_addr(r: &mut StdRng) -> (u64, u64) {
    let imm = r.gen_range(-2048i64..2048) as u64;
    let addr = r.gen_range(0x1000u64..1 << 31);
    (imm, addr.wrapping_sub(imm))
}

fn loads(r: &mut StdRng, n: usize) -> Vec<LoadEvent> {
    (0..n)
        .map(|k| {
            let width_idx = r.gen_range(0..4);
            let width = 1usize << width_idx;
            let unsigned = width < 8 && r.gen_bool(0.5);
            let mut v = value(r);
            if width < 8 {
                v &= (1 << (8 * width)) - 1;
            }
            let (imm, base) = imm_addr(r);
            LoadEvent {
                ts: 4 * k as u64 + 1,
                base,
                imm,
                width_idx,
                unsigned,
                v,
                r: zkrv_cuda::tables::load::extend_load(v, width, unsigned),
            }
        })
        .collect()
}

fn stores(r: &mut StdRng, n: usize) -> Vec<StoreEvent> {
    (0..n)
        .map(|k| {
            let width_idx = r.gen_range(0..4);
            let width = 1usize << width_idx;
            let val = value(r);
            let (imm, base) = imm_addr(r);
            StoreEvent {
                ts: 4 * k as u64 + 1,
                base,
                imm,
                width_idx,
                val,
                top: (val >> (8 * (width - 1))) & 0xff,
            }
        })
        .collect()
}

fn accesses(r: &mut StdRng, n: usize) -> Vec<MemwAEvent> {
    (0..n)
        .map(|k| {
            let width_idx = r.gen_range(0..4);
            let width = 1usize << width_idx;
            let offset = r.gen_range(0..=8 - width);
            let old = value(r).to_le_bytes();
            let is_write = r.gen_bool(0.4);
            let mut new = old;
            if is_write {
                new[offset..offset + width].copy_from_slice(&value(r).to_le_bytes()[..width]);
            }
            let ts = 4 * k as u64 + 1;
            MemwAEvent {
                cell: r.gen_range(0x200..1 << 28),
                ts,
                offset,
                width_idx,
                is_write,
                old,
                new,
                old_ts: ts.saturating_sub(1 + r.gen_range(0..4096)),
            }
        })
        .collect()
}

struct Row {
    table: &'static str,
    n: usize,
    width: usize,
    in_bytes: usize,
    host: f64,
    pack: f64,
    upload: f64,
    gpu: f64,
}

fn print(row: &Row) {
    let rate = |ms: f64| row.n as f64 / ms / 1e3;
    println!(
        "{:<7} {:>9} events | host {:>8.2} ms ({:>6.1} M rows/s) | gpu {:>7.2} ms ({:>7.1} M rows/s; pack {:.2}, upload {:.2}, kernel ~{:.2}) | {:.1}x | upload {} B/event vs trace {} B/row ({:.1}%)",
        row.table,
        row.n,
        row.host,
        rate(row.host),
        row.gpu,
        rate(row.gpu),
        row.pack,
        row.upload,
        (row.gpu - row.pack - row.upload).max(0.0),
        row.host / row.gpu,
        row.in_bytes,
        row.width * 8,
        100.0 * row.in_bytes as f64 / (row.width * 8) as f64,
    );
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), CudaError> {
    let reps = env("ZKRV_BENCH_REPS", 5);
    let n = 1usize << env("ZKRV_BENCH_FILL_LOG_N", 22);
    let min_height = zkrv_machine::MIN_HEIGHT;
    let mut r = StdRng::seed_from_u64(1);
    // Without a GPU only the host columns are measured (the GPU ones print as NaN).
    let gpu_dev = match Device::new() {
        Ok(d) => {
            d.set_debug(false);
            println!("device: {} ({}); {n} events per table", d.name(), d.arch());
            Some((DeviceLookups::new(&d)?, d))
        }
        Err(e) => {
            println!("no GPU ({e}): host figures only; {n} events per table");
            None
        }
    };

    macro_rules! bench {
        ($table:literal, $events:expr, $host:ident, $pack:ident, $fill:ident, $width:expr, $in_bytes:expr) => {{
            let events = $events;
            let host = wall_ms(3, || {
                let mut l = Lookups::new();
                std::hint::black_box($host(&events, min_height, &mut l));
            });
            let pack = wall_ms(3, || {
                std::hint::black_box($pack(&events).unwrap());
            });
            let (mut upload, mut gpu) = (f64::NAN, f64::NAN);
            if let Some((lookups, dev)) = &gpu_dev {
                let packed = $pack(&events)?;
                let _ = dev.upload(&packed)?; // warm-up (pinned staging)
                let mut up = Vec::new();
                for _ in 0..reps {
                    up.push(dev.time_ms(|| dev.upload(&packed).map(drop))? as f64);
                }
                upload = median(up);
                let mut stats = TransferStats::default();
                drop($fill(dev, &events, min_height, lookups, &mut stats)?); // warm-up (module load)
                dev.synchronize()?;
                let mut g = Vec::new();
                for _ in 0..reps {
                    let t = Instant::now();
                    let trace = $fill(dev, &events, min_height, lookups, &mut stats)?;
                    dev.synchronize()?;
                    g.push(t.elapsed().as_secs_f64() * 1e3);
                    drop(trace);
                }
                gpu = median(g);
            }
            print(&Row {
                table: $table,
                n: events.len(),
                width: $width,
                in_bytes: $in_bytes,
                host,
                pack,
                upload,
                gpu,
            });
        }};
    }
    bench!(
        "LOAD",
        loads(&mut r, n),
        load_trace,
        pack_loads,
        fill_load,
        NUM_LOAD_COLS,
        20
    );
    bench!(
        "STORE",
        stores(&mut r, n),
        store_trace,
        pack_stores,
        fill_store,
        NUM_STORE_COLS,
        20
    );
    bench!(
        "MEMW_A",
        accesses(&mut r, n),
        memw_a_trace,
        pack_accesses,
        fill_memw_a,
        NUM_MEMW_A_COLS,
        28
    );
    Ok(())
}
