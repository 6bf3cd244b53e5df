//! `gpu_store_fill_matches_cpu`: the STORE fill kernel (kernels/tables/store.cu) against the host fill
//! `zkrv_machine::tables::store::store_trace`, every cell and the BITWISE lookup histogram, on seeded random
//! stores at edge sizes and on the real guests' stores. The kernel's row logic always runs under host
//! emulation (C++); the launcher `zkrv_machine_cuda::tables::store::fill_store` runs on the GPU when there is one
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
use zkrv_machine::tables::store::{store_trace, StoreEvent, NUM_STORE_COLS};
use zkrv_machine::trace::generate_split;
use zkrv_machine_cuda::tables::store::{fill_store, fill_store_rec, pack_stores, StoreIn};
use zkrv_machine_cuda::tables::{DeviceCycles, DeviceLookups};

const TEST: &str = "gpu_store_fill_matches_cpu";

/// A valid store (the walk's invariants): `base + imm < 2^32`, `top` byte `width - 1` of `val`. Row `k` of a
/// case cycles through every width; values at limb boundaries and with sign bits set.
fn random_store(r: &mut StdRng, k: usize) -> StoreEvent {
    let width_idx = k % 4;
    let width = 1usize << width_idx;
    let mut val = pick(r, &EDGES);
    if r.gen_bool(0.3) {
        val |= 1 << (8 * width - 1); // top bit of the written part
    }
    let (imm, addr) = (rand_imm(r), rand_addr(r, k));
    StoreEvent {
        ts: rand_ts(r),
        base: addr.wrapping_sub(imm),
        imm,
        width_idx,
        val,
        top: (val >> (8 * (width - 1))) & 0xff,
    }
}

struct Case {
    name: String,
    events: Vec<StoreEvent>,
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
                name: format!("random {n} stores, min_height {min_height}"),
                events: (0..n).map(|k| random_store(r, k)).collect(),
                min_height,
            });
        }
    }
    cases.push(Case {
        name: "random 5 stores, min_height 64".into(),
        events: (0..5).map(|k| random_store(r, k)).collect(),
        min_height: 64,
    });
    for (name, fi) in guest_fill_inputs() {
        eprintln!("{TEST}: guest {name}: store {}", fi.stores.len());
        cases.push(Case {
            name: format!("guest {name} ({} stores)", fi.stores.len()),
            events: fi.stores,
            min_height: fi.min_height,
        });
    }
    cases
}

fn packed_bytes(p: &[StoreIn]) -> Vec<u8> {
    p.iter().flat_map(|e| e.to_le_bytes()).collect()
}

#[test]
fn gpu_store_fill_matches_cpu() {
    let mut r = rng(TEST);
    let cases = cases(&mut r);
    let want: Vec<_> = cases
        .iter()
        .map(|c| {
            let mut l = Lookups::new();
            (store_trace(&c.events, c.min_height, &mut l), l)
        })
        .collect();
    let rows = |k: usize| want[k].0.values.len() / NUM_STORE_COLS;

    // Host emulation of the kernel's row logic.
    let mut input = Vec::new();
    let mut shapes = Vec::new();
    for (k, c) in cases.iter().enumerate() {
        let packed = pack_stores(&c.events).unwrap();
        input.extend(event_case(c.events.len(), rows(k), &packed_bytes(&packed)));
        shapes.push((rows(k), NUM_STORE_COLS));
    }
    let driver = event_driver("StoreIn", 20, "store_fill_row", NUM_STORE_COLS);
    match host_emu::run(
        "store",
        zkrv_machine_cuda::kernels::STORE_CU.src,
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
        events: (0..(1 << 17) + 1)
            .map(|k| random_store(&mut r, k))
            .collect(),
        min_height: zkrv_machine::MIN_HEIGHT,
    };
    let mut l = Lookups::new();
    want.push((store_trace(&big.events, big.min_height, &mut l), l));
    cases.push(big);
    for (k, c) in cases.iter().enumerate() {
        let lookups = DeviceLookups::new(&dev).unwrap();
        let mut stats = TransferStats::default();
        let t = fill_store(&dev, &c.events, c.min_height, &lookups, &mut stats).unwrap();
        assert_eq!(
            (t.width, 1usize << t.log_height),
            (NUM_STORE_COLS, want[k].0.values.len() / NUM_STORE_COLS)
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
    let e = fill_store(&dev, &cases[2].events, 3, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("power of two"), "{e}");
    let bad = StoreEvent {
        width_idx: 4,
        ..cases[2].events[0]
    };
    let e = fill_store(&dev, &[bad], 8, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("event 0"), "{e}");
    assert_eq!(stats.total_h2d(), 0);
}

/// Events the compact form cannot represent are refused with an error naming the event, not filled wrongly.
#[test]
fn store_pack_rejects_invalid_events() {
    let ok = StoreEvent {
        ts: 5,
        base: 0x1000,
        imm: (-8i64) as u64,
        width_idx: 1,
        val: 0xdead_beef_cafe_8001,
        top: 0x80,
    };
    assert_eq!(pack_stores(&[ok]).unwrap()[0].addr, 0xff8);
    let bad = [
        StoreEvent { width_idx: 4, ..ok },
        StoreEvent { ts: 1 << 32, ..ok },
        StoreEvent { imm: 1 << 15, ..ok },
        StoreEvent { base: 0, ..ok }, // 0 - 8 wraps
        StoreEvent {
            base: (1 << 32) + 8,
            ..ok
        }, // 2^32
        StoreEvent { top: 0x01, ..ok },
    ];
    for (i, e) in bad.iter().enumerate() {
        let err = pack_stores(&[ok, *e]).unwrap_err().to_string();
        assert!(err.contains("STORE event 1"), "case {i}: {err}");
    }
}

/// A random record with `n` stores among junk cycles, and its stores as the walk derives them (12-bit offsets,
/// `ts = 4 clk + 1`, `rs2_val = val`).
fn random_store_record(r: &mut StdRng, n: usize) -> (Vec<CycleEvent>, Vec<StoreEvent>) {
    let (mut cycles, mut events) = (Vec::new(), Vec::new());
    for k in 0..n {
        for _ in 0..r.gen_range(0..3) {
            cycles.push(junk_cycle(r));
        }
        let mut e = random_store(r, k);
        let addr = e.base.wrapping_add(e.imm);
        e.imm = rand_imm12(r);
        e.base = addr.wrapping_sub(e.imm);
        e.ts = 4 * cycles.len() as u64 + 1;
        cycles.push(CycleEvent {
            pc: r.next_u32(),
            word: mem_word(r, true, e.imm, e.width_idx as u32),
            rs1_val: e.base,
            rs2_val: e.val,
            rd_val: r.next_u64(),
        });
        events.push(e);
    }
    cycles.push(junk_cycle(r));
    (cycles, events)
}

/// The record path (`fill_store_rec`, kernel `store_fill_rec`): rows read from the resident record and one cycle
/// index per store equal the host fill, on random records and on the guests' records.
#[test]
fn gpu_store_fill_rec_matches_cpu() {
    const T: &str = "gpu_store_fill_rec_matches_cpu";
    let mut r = rng(T);
    let h = zkrv_machine::MIN_HEIGHT;
    let mut cases: Vec<(String, Vec<CycleEvent>, Vec<StoreEvent>)> = edge_sizes()
        .into_iter()
        .map(|n| {
            let (c, e) = random_store_record(&mut r, n);
            (format!("random record, {n} stores"), c, e)
        })
        .collect();
    for g in guest_runs() {
        let (_, fi) = generate_split(&g.decode, &g.record, &g.input, h, MEM_FILLS).unwrap();
        cases.push((format!("guest {}", g.name), g.record.cycles, fi.stores));
    }
    let want: Vec<_> = cases
        .iter()
        .map(|(_, _, ev)| {
            let mut l = Lookups::new();
            (store_trace(ev, h, &mut l), l)
        })
        .collect();
    let rows = |k: usize| want[k].0.values.len() / NUM_STORE_COLS;

    let mut input = Vec::new();
    let mut shapes = Vec::new();
    for (k, (_, cycles, ev)) in cases.iter().enumerate() {
        let clks: Vec<u8> = ev
            .iter()
            .flat_map(|e| (((e.ts - 1) / 4) as u32).to_le_bytes())
            .collect();
        input.extend(rec_case(cycles, ev.len(), rows(k), &clks));
        shapes.push((rows(k), NUM_STORE_COLS));
    }
    let driver = rec_driver("u32", 4, "store_fill_rec_row", NUM_STORE_COLS);
    match host_emu::run(
        "store_rec",
        zkrv_machine_cuda::kernels::STORE_CU.src,
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
        let t = fill_store_rec(&dev, &d_cycles, ev, h, &lookups, &mut stats).unwrap();
        assert_eq!((t.width, 1usize << t.log_height), (NUM_STORE_COLS, rows(k)));
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
        assert_eq!(stats.table("STORE").h2d, 4 * ev.len() as u64, "{name}");
        assert_eq!(
            stats.table("record").h2d,
            32 * cycles.len() as u64,
            "{name}"
        );
    }
    // A store whose cycle is not in the record is refused.
    let (_, cycles, ev) = &cases[3];
    let lookups = DeviceLookups::new(&dev).unwrap();
    let mut stats = TransferStats::default();
    let d_cycles = DeviceCycles::upload(&dev, &cycles[..0], &mut stats).unwrap();
    let e = fill_store_rec(&dev, &d_cycles, ev, h, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("STORE event 0"), "{e}");
    eprintln!("{T}: GPU matches on {} cases", cases.len());
}
