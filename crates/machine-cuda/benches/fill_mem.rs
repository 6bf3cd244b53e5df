//! LOAD / STORE / MEMW_A trace generation, GPU vs host (harness = false):
//! `cargo bench -p zkrv-machine-cuda --features cuda --bench fill_mem`.
//!
//! Per table, `2^ZKRV_BENCH_FILL_LOG_N` (default 22) synthetic events that are valid fill inputs (the walk's
//! invariants; about half the values zero or small, so the BITWISE counters have hot rows as in real runs):
//! - host: the reference fill (`load_trace`, ...), single thread, wall clock, median of 3;
//! - pack: `pack_*` on the host (the conversion `fill_*` starts with), median of 3;
//! - upload: `dev.upload` of the packed events, CUDA events, median of `ZKRV_BENCH_REPS` (default 5);
//! - gpu: the whole `fill_*` (pack + upload + allocation + kernel), wall clock after a synchronize, median;
//!   the kernel share is estimated as gpu - pack - upload;
//! - record path: the whole `fill_*_rec` with the record already resident (`DeviceCycles`, 32 B/cycle, uploaded
//!   once for all tables; its upload time is printed separately).
//!
//! Prints rows/s and the bytes uploaded per event vs the trace bytes per row.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_executor::CycleEvent;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::load::{load_trace, LoadEvent, NUM_LOAD_COLS};
use zkrv_machine::tables::memw_a::{memw_a_trace, MemwAEvent, NUM_MEMW_A_COLS};
use zkrv_machine::tables::store::{store_trace, StoreEvent, NUM_STORE_COLS};
use zkrv_machine_cuda::tables::load::{fill_load, fill_load_rec, pack_loads};
use zkrv_machine_cuda::tables::memw_a::{fill_memw_a, fill_memw_a_rec, pack_accesses};
use zkrv_machine_cuda::tables::store::{fill_store, fill_store_rec, pack_stores};
use zkrv_machine_cuda::tables::{DeviceCycles, DeviceLookups};

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
                r: zkrv_machine_cuda::tables::load::extend_load(v, width, unsigned),
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

/// The word of a load (I-type) or store (S-type) with a 12-bit `imm` and `funct3`.
fn mem_word(store: bool, imm: u64, funct3: u32) -> u32 {
    let imm = imm as u32 & 0xfff;
    if store {
        (imm >> 5) << 25 | 2 << 20 | 1 << 15 | funct3 << 12 | (imm & 31) << 7 | 0x23
    } else {
        imm << 20 | 1 << 15 | funct3 << 12 | 5 << 7 | 0x03
    }
}

/// A record whose cycle k is load k.
fn record_of_loads(events: &[LoadEvent]) -> Vec<CycleEvent> {
    events
        .iter()
        .map(|e| CycleEvent {
            pc: 0x1000,
            word: mem_word(false, e.imm, e.width_idx as u32 | (e.unsigned as u32) << 2),
            rs1_val: e.base,
            rs2_val: 0,
            rd_val: e.r,
        })
        .collect()
}

/// A record whose cycle k is store k.
fn record_of_stores(events: &[StoreEvent]) -> Vec<CycleEvent> {
    events
        .iter()
        .map(|e| CycleEvent {
            pc: 0x1000,
            word: mem_word(true, e.imm, e.width_idx as u32),
            rs1_val: e.base,
            rs2_val: e.val,
            rd_val: 0,
        })
        .collect()
}

/// A record whose cycle k is access k (offset 0 of the 12-bit immediate).
fn record_of_accesses(events: &[MemwAEvent]) -> Vec<CycleEvent> {
    events
        .iter()
        .map(|e| {
            let mut val = [0u8; 8];
            let w = 1usize << e.width_idx;
            val[..w].copy_from_slice(&e.new[e.offset..e.offset + w]);
            CycleEvent {
                pc: 0x1000,
                word: mem_word(e.is_write, 0, e.width_idx as u32),
                rs1_val: e.cell * 8 + e.offset as u64,
                rs2_val: u64::from_le_bytes(val),
                rd_val: 0,
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
    /// Upload bytes per event and whole-fill time of the record path (record already resident).
    rec_bytes: usize,
    rec: f64,
}

fn print(row: &Row) {
    let rate = |ms: f64| row.n as f64 / ms / 1e3;
    println!(
        "{:<7} {:>9} events | host {:>8.2} ms ({:>6.1} M rows/s) | gpu {:>7.2} ms ({:>7.1} M rows/s; pack {:.2}, upload {:.2}, kernel ~{:.2}) | {:.1}x | upload {} B/event vs trace {} B/row ({:.1}%) | record path {:.2} ms, {} B/event ({:.1}%)",
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
        row.rec,
        row.rec_bytes,
        100.0 * row.rec_bytes as f64 / (row.width * 8) as f64,
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
        ($table:literal, $events:expr, $host:ident, $pack:ident, $fill:ident, $width:expr, $in_bytes:expr,
         $record:ident, $rec_fill:ident, $rec_bytes:expr) => {{
            let events = $events;
            let host = wall_ms(3, || {
                let mut l = Lookups::new();
                std::hint::black_box($host(&events, min_height, &mut l));
            });
            let pack = wall_ms(3, || {
                std::hint::black_box($pack(&events).unwrap());
            });
            let (mut upload, mut gpu, mut rec) = (f64::NAN, f64::NAN, f64::NAN);
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
                let t = Instant::now();
                let cycles = DeviceCycles::upload(dev, &$record(&events), &mut stats)?;
                dev.synchronize()?;
                println!(
                    "{}: record of {} cycles uploaded in {:.2} ms (32 B/cycle, not in the record-path time)",
                    $table,
                    cycles.len,
                    t.elapsed().as_secs_f64() * 1e3
                );
                drop($rec_fill(dev, &cycles, &events, min_height, lookups, &mut stats)?);
                dev.synchronize()?;
                let mut g = Vec::new();
                for _ in 0..reps {
                    let t = Instant::now();
                    let trace = $rec_fill(dev, &cycles, &events, min_height, lookups, &mut stats)?;
                    dev.synchronize()?;
                    g.push(t.elapsed().as_secs_f64() * 1e3);
                    drop(trace);
                }
                rec = median(g);
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
                rec_bytes: $rec_bytes,
                rec,
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
        20,
        record_of_loads,
        fill_load_rec,
        4
    );
    bench!(
        "STORE",
        stores(&mut r, n),
        store_trace,
        pack_stores,
        fill_store,
        NUM_STORE_COLS,
        20,
        record_of_stores,
        fill_store_rec,
        4
    );
    bench!(
        "MEMW_A",
        accesses(&mut r, n),
        memw_a_trace,
        pack_accesses,
        fill_memw_a,
        NUM_MEMW_A_COLS,
        28,
        record_of_accesses,
        fill_memw_a_rec,
        16
    );
    Ok(())
}
