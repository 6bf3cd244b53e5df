//! `gpu_load_fill_matches_cpu`: the LOAD fill kernel (kernels/tables/load.cu) against the host fill
//! `zkrv_machine::tables::load::load_trace`, every cell and the BITWISE lookup histogram, on seeded random
//! loads at edge sizes and on the real guests' loads. The kernel's row logic always runs under host
//! emulation (C++); the launcher `zkrv_machine_cuda::tables::load::fill_load` runs on the GPU when there is one
//! (poisoned allocations), else the GPU part prints a skip. `ZKRV_SEED` replays a seed.
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;

use fill_util::*;
use rand::rngs::StdRng;
use rand::{Rng, RngCore};
use zkrv_cuda::TransferStats;
use zkrv_executor::CycleEvent;
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::load::{load_trace, LoadEvent, NUM_LOAD_COLS};
use zkrv_machine::trace::generate_split;
use zkrv_machine_cuda::tables::load::{extend_load, fill_load, fill_load_rec, pack_loads, LoadIn};
use zkrv_machine_cuda::tables::{DeviceCycles, DeviceLookups};

const TEST: &str = "gpu_load_fill_matches_cpu";

/// A valid load (the walk's invariants): `base + imm < 2^32`, v zero-extended from the width, r its
/// extension, no 8-byte unsigned load. Row `k` of a case cycles through every (width, signedness).
fn random_load(r: &mut StdRng, k: usize) -> LoadEvent {
    let width_idx = k % 4;
    // Flipped every 64 events, so that events 0..128 cover every (width, signedness, offset).
    let unsigned = width_idx < 3 && (k / 4 + k / 64) % 2 == 1;
    let width = 1usize << width_idx;
    let mut v = pick(r, &EDGES);
    if r.gen_bool(0.5) {
        v |= 1 << (8 * width - 1); // sign bit set
    }
    if width < 8 {
        v &= (1u64 << (8 * width)) - 1;
    }
    let (imm, addr) = (rand_imm(r), rand_addr(r, k));
    let ts = rand_ts(r);
    LoadEvent {
        ts,
        base: addr.wrapping_sub(imm),
        imm,
        width_idx,
        unsigned,
        v,
        r: extend_load(v, width, unsigned),
    }
}

struct Case {
    name: String,
    events: Vec<LoadEvent>,
    min_height: usize,
}

fn cases(r: &mut StdRng) -> Vec<Case> {
    let mut cases = Vec::new();
    for n in edge_sizes() {
        for min_height in [1, zkrv_machine::MIN_HEIGHT] {
            if min_height == 1 && n > 17 {
                continue;
            }
            cases.push(Case {
                name: format!("random {n} loads, min_height {min_height}"),
                events: (0..n).map(|k| random_load(r, k)).collect(),
                min_height,
            });
        }
    }
    cases.push(Case {
        name: "random 5 loads, min_height 64".into(),
        events: (0..5).map(|k| random_load(r, k)).collect(),
        min_height: 64,
    });
    for (name, fi) in guest_fill_inputs() {
        eprintln!("{TEST}: guest {name}: load {}", fi.loads.len());
        cases.push(Case {
            name: format!("guest {name} ({} loads)", fi.loads.len()),
            events: fi.loads,
            min_height: fi.min_height,
        });
    }
    cases
}

fn packed_bytes(p: &[LoadIn]) -> Vec<u8> {
    p.iter().flat_map(|e| e.to_le_bytes()).collect()
}

#[test]
fn gpu_load_fill_matches_cpu() {
    let mut r = rng(TEST);
    let cases = cases(&mut r);
    let want: Vec<_> = cases
        .iter()
        .map(|c| {
            let mut l = Lookups::new();
            (load_trace(&c.events, c.min_height, &mut l), l)
        })
        .collect();
    let rows = |k: usize| want[k].0.values.len() / NUM_LOAD_COLS;

    // Host emulation of the kernel's row logic.
    let mut input = Vec::new();
    let mut shapes = Vec::new();
    for (k, c) in cases.iter().enumerate() {
        let packed = pack_loads(&c.events).unwrap();
        input.extend(event_case(c.events.len(), rows(k), &packed_bytes(&packed)));
        shapes.push((rows(k), NUM_LOAD_COLS));
    }
    let driver = event_driver("LoadIn", 20, "load_fill_row", NUM_LOAD_COLS);
    match host_emu::run(
        "load",
        zkrv_machine_cuda::kernels::LOAD_CU.src,
        &driver,
        &input,
    ) {
        None => eprintln!("SKIPPED {TEST} (host emulation): no C++ compiler"),
        Some(out) => {
            for ((c, (t, h)), (wt, wl)) in cases.iter().zip(split_output(&out, &shapes)).zip(&want)
            {
                assert_trace_eq(&format!("host emulation, {}", c.name), wt, &t);
                assert_lookups_eq(&format!("host emulation, {}", c.name), wl, &h);
            }
            eprintln!("{TEST}: host emulation matches on {} cases", cases.len());
        }
    }

    // The launcher and kernel on the GPU.
    let Some(dev) = device(TEST) else { return };
    // One more case on the GPU only: 2^17 + 1 events (2^18 rows, 1024 blocks).
    let (mut cases, mut want) = (cases, want);
    let big = Case {
        name: "random 2^17 + 1 events (GPU only)".into(),
        events: (0..(1 << 17) + 1).map(|k| random_load(&mut r, k)).collect(),
        min_height: zkrv_machine::MIN_HEIGHT,
    };
    let mut l = Lookups::new();
    want.push((load_trace(&big.events, big.min_height, &mut l), l));
    cases.push(big);
    for (k, c) in cases.iter().enumerate() {
        let lookups = DeviceLookups::new(&dev).unwrap();
        let mut stats = TransferStats::default();
        let t = fill_load(&dev, &c.events, c.min_height, &lookups, &mut stats).unwrap();
        assert_eq!(
            (t.width, 1usize << t.log_height),
            (NUM_LOAD_COLS, want[k].0.values.len() / NUM_LOAD_COLS)
        );
        assert_trace_eq(
            &format!("GPU, {}", c.name),
            &want[k].0,
            &dev.download(&t.data).unwrap(),
        );
        assert_lookups_eq(
            &format!("GPU, {}", c.name),
            &want[k].1,
            &dev.download(&lookups.counts).unwrap(),
        );
        assert_eq!(
            stats.stage("trace-gen").h2d,
            20 * c.events.len() as u64,
            "{}: uploaded bytes",
            c.name
        );
    }
    eprintln!("{TEST}: GPU matches on {} cases", cases.len());
    // No silent fallback: a shape or an event the fill cannot take is an error, nothing is filled.
    assert_eq!(cases[2].events.len(), 1);
    let lookups = DeviceLookups::new(&dev).unwrap();
    let mut stats = TransferStats::default();
    let e = fill_load(&dev, &cases[2].events, 3, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("power of two"), "{e}");
    let bad = LoadEvent {
        r: 0,
        ..cases[2].events[0]
    };
    let e = fill_load(&dev, &[bad], 8, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("event 0"), "{e}");
    assert_eq!(stats.total_h2d(), 0);
}

/// Events the compact form cannot represent are refused with an error naming the event, not filled wrongly.
#[test]
fn load_pack_rejects_invalid_events() {
    let ok = LoadEvent {
        ts: 5,
        base: 0x1000,
        imm: (-8i64) as u64,
        width_idx: 0,
        unsigned: false,
        v: 0x80,
        r: 0xffff_ffff_ffff_ff80,
    };
    assert_eq!(pack_loads(&[ok]).unwrap()[0].addr, 0xff8);
    let bad = [
        LoadEvent { width_idx: 4, ..ok },
        LoadEvent { ts: 1 << 32, ..ok },
        LoadEvent { imm: 1 << 15, ..ok },
        LoadEvent { base: 0, ..ok }, // 0 - 8 wraps
        LoadEvent {
            base: (1 << 32) + 8,
            ..ok
        }, // 2^32
        LoadEvent { v: 0x180, ..ok },
        LoadEvent { r: 0x80, ..ok },
    ];
    for (i, e) in bad.iter().enumerate() {
        let err = pack_loads(&[ok, *e]).unwrap_err().to_string();
        assert!(err.contains("LOAD event 1"), "case {i}: {err}");
    }
}

/// Packing runs on several threads for large inputs: the result equals packing event by event, and an error
/// names the first bad event even when a later chunk also has one.
#[test]
fn load_pack_parallel_matches_sequential() {
    use zkrv_machine_cuda::tables::PACK_CHUNK;
    let mut r = rng("load_pack_parallel_matches_sequential");
    let n = 3 * PACK_CHUNK + 17;
    let mut events: Vec<LoadEvent> = (0..n).map(|k| random_load(&mut r, k)).collect();
    let packed = pack_loads(&events).unwrap();
    assert_eq!(packed.len(), n);
    for (k, (e, p)) in events.iter().zip(&packed).enumerate() {
        assert_eq!(pack_loads(&[*e]).unwrap()[0], *p, "event {k}");
    }
    let (first, later) = (2 * PACK_CHUNK + 5, 3 * PACK_CHUNK);
    events[later].width_idx = 7;
    events[first].r ^= 1;
    let err = pack_loads(&events).unwrap_err().to_string();
    assert!(err.contains(&format!("LOAD event {first} ")), "{err}");
}

/// A random record with `n` loads among junk cycles, and its loads as the walk derives them (12-bit offsets,
/// `ts = 4 clk + 1`, `rd_val = r`).
fn random_load_record(r: &mut StdRng, n: usize) -> (Vec<CycleEvent>, Vec<LoadEvent>) {
    let (mut cycles, mut events) = (Vec::new(), Vec::new());
    for k in 0..n {
        for _ in 0..r.gen_range(0..3) {
            cycles.push(junk_cycle(r));
        }
        let mut e = random_load(r, k);
        let addr = e.base.wrapping_add(e.imm);
        e.imm = rand_imm12(r);
        e.base = addr.wrapping_sub(e.imm);
        e.ts = 4 * cycles.len() as u64 + 1;
        let funct3 = e.width_idx as u32 | (e.unsigned as u32) << 2;
        cycles.push(CycleEvent {
            pc: r.next_u32(),
            word: mem_word(r, false, e.imm, funct3),
            rs1_val: e.base,
            rs2_val: r.next_u64(),
            rd_val: e.r,
        });
        events.push(e);
    }
    cycles.push(junk_cycle(r));
    (cycles, events)
}

/// The record path (`fill_load_rec`, kernel `load_fill_rec`): rows read from the resident record and one cycle
/// index per load equal the host fill, on random records and on the guests' records.
#[test]
fn gpu_load_fill_rec_matches_cpu() {
    const T: &str = "gpu_load_fill_rec_matches_cpu";
    let mut r = rng(T);
    let h = zkrv_machine::MIN_HEIGHT;
    let mut cases: Vec<(String, Vec<CycleEvent>, Vec<LoadEvent>)> = edge_sizes()
        .into_iter()
        .map(|n| {
            let (c, e) = random_load_record(&mut r, n);
            (format!("random record, {n} loads"), c, e)
        })
        .collect();
    for g in guest_runs() {
        let (_, fi) = generate_split(&g.decode, &g.record, &g.input, h, MEM_FILLS).unwrap();
        cases.push((format!("guest {}", g.name), g.record.cycles, fi.loads));
    }
    let want: Vec<_> = cases
        .iter()
        .map(|(_, _, ev)| {
            let mut l = Lookups::new();
            (load_trace(ev, h, &mut l), l)
        })
        .collect();
    let rows = |k: usize| want[k].0.values.len() / NUM_LOAD_COLS;

    let mut input = Vec::new();
    let mut shapes = Vec::new();
    for (k, (_, cycles, ev)) in cases.iter().enumerate() {
        let clks: Vec<u8> = ev
            .iter()
            .flat_map(|e| (((e.ts - 1) / 4) as u32).to_le_bytes())
            .collect();
        input.extend(rec_case(cycles, ev.len(), rows(k), &clks));
        shapes.push((rows(k), NUM_LOAD_COLS));
    }
    let driver = rec_driver("u32", 4, "load_fill_rec_row", NUM_LOAD_COLS);
    match host_emu::run(
        "load_rec",
        zkrv_machine_cuda::kernels::LOAD_CU.src,
        &driver,
        &input,
    ) {
        None => eprintln!("SKIPPED {T} (host emulation): no C++ compiler"),
        Some(out) => {
            for (((name, _, _), (t, hist)), (wt, wl)) in
                cases.iter().zip(split_output(&out, &shapes)).zip(&want)
            {
                assert_trace_eq(&format!("host emulation, {name}"), wt, &t);
                assert_lookups_eq(&format!("host emulation, {name}"), wl, &hist);
            }
            eprintln!("{T}: host emulation matches on {} cases", cases.len());
        }
    }

    let Some(dev) = device(T) else { return };
    for (k, (name, cycles, ev)) in cases.iter().enumerate() {
        let lookups = DeviceLookups::new(&dev).unwrap();
        let mut stats = TransferStats::default();
        let d_cycles = DeviceCycles::upload(&dev, cycles, &mut stats).unwrap();
        let t = fill_load_rec(&dev, &d_cycles, ev, h, &lookups, &mut stats).unwrap();
        assert_eq!((t.width, 1usize << t.log_height), (NUM_LOAD_COLS, rows(k)));
        assert_trace_eq(
            &format!("GPU, {name}"),
            &want[k].0,
            &dev.download(&t.data).unwrap(),
        );
        assert_lookups_eq(
            &format!("GPU, {name}"),
            &want[k].1,
            &dev.download(&lookups.counts).unwrap(),
        );
        assert_eq!(stats.table("LOAD").h2d, 4 * ev.len() as u64, "{name}");
        assert_eq!(
            stats.table("record").h2d,
            32 * cycles.len() as u64,
            "{name}"
        );
    }
    // A load whose cycle is not in the record is refused.
    let (_, cycles, ev) = &cases[3];
    let lookups = DeviceLookups::new(&dev).unwrap();
    let mut stats = TransferStats::default();
    let d_cycles = DeviceCycles::upload(&dev, &cycles[..0], &mut stats).unwrap();
    let e = fill_load_rec(&dev, &d_cycles, ev, h, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("LOAD event 0"), "{e}");
    eprintln!("{T}: GPU matches on {} cases", cases.len());
}
