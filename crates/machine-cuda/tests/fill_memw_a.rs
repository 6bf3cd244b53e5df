//! `gpu_memw_a_fill_matches_cpu`: the MEMW_A fill kernel (kernels/tables/memw_a.cu) against the host fill
//! `zkrv_machine::tables::memw_a::memw_a_trace`, every cell and the BITWISE lookup histogram, on seeded random
//! in-cell accesses at edge sizes and on the real guests' accesses. The kernel's row logic always runs under host
//! emulation (C++); the launcher `zkrv_machine_cuda::tables::memw_a::fill_memw_a` runs on the GPU when there is one
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
use zkrv_machine::tables::memw_a::{memw_a_trace, MemwAEvent, NUM_MEMW_A_COLS};
use zkrv_machine::trace::generate_split;
use zkrv_machine_cuda::tables::memw_a::{
    fill_memw_a, fill_memw_a_rec, pack_accesses, pack_accesses_rec, MemwAIn,
};
use zkrv_machine_cuda::tables::{DeviceCycles, DeviceLookups};

const TEST: &str = "gpu_memw_a_fill_matches_cpu";

/// A valid in-cell access (the walk's invariants): `offset + width <= 8`, `old_ts < ts < 2^28` (edges up to
/// `2^29 - 1`), a read keeps the cell, a write changes only the accessed bytes. Row `k` of a case cycles through
/// every width and, for each width, every offset that fits.
fn random_access(r: &mut StdRng, k: usize) -> MemwAEvent {
    let width_idx = k % 4;
    let width = 1usize << width_idx;
    let offset = (k / 4) % (9 - width);
    let old = pick(r, &EDGES).to_le_bytes();
    let is_write = r.gen_bool(0.5);
    let mut new = old;
    if is_write {
        let val = pick(r, &EDGES).to_le_bytes();
        new[offset..offset + width].copy_from_slice(&val[..width]);
    }
    let ts = match r.gen_range(0..8) {
        0 => [1u64, 5, (1 << 28) - 3, (1 << 29) - 1][r.gen_range(0..4)],
        _ => 4 * r.gen_range(0u64..1 << 26) + 1,
    };
    let old_ts = match r.gen_range(0..4) {
        0 => 0,
        // d = ts - old_ts - 1 at the 16-bit limb boundaries
        1 => ts.saturating_sub(1 + [0u64, 0xffff, 0x1_0000, 0x1_ffff][r.gen_range(0..4)]),
        _ => r.gen_range(0..ts),
    };
    let cell = match r.gen_range(0..8) {
        0 => [0u64, 1, (1 << 28) - 1, (1 << 29) - 1][r.gen_range(0..4)],
        _ => r.gen_range(0..1 << 28),
    };
    MemwAEvent {
        cell,
        ts,
        offset,
        width_idx,
        is_write,
        old,
        new,
        old_ts,
    }
}

struct Case {
    name: String,
    events: Vec<MemwAEvent>,
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
                name: format!("random {n} accesses, min_height {min_height}"),
                events: (0..n).map(|k| random_access(r, k)).collect(),
                min_height,
            });
        }
    }
    cases.push(Case {
        name: "random 5 accesses, min_height 64".into(),
        events: (0..5).map(|k| random_access(r, k)).collect(),
        min_height: 64,
    });
    for (name, fi) in guest_fill_inputs() {
        eprintln!("{TEST}: guest {name}: access {}", fi.accesses.len());
        cases.push(Case {
            name: format!("guest {name} ({} accesses)", fi.accesses.len()),
            events: fi.accesses,
            min_height: fi.min_height,
        });
    }
    cases
}

fn packed_bytes(p: &[MemwAIn]) -> Vec<u8> {
    p.iter().flat_map(|e| e.to_le_bytes()).collect()
}

#[test]
fn gpu_memw_a_fill_matches_cpu() {
    let mut r = rng(TEST);
    let cases = cases(&mut r);
    let want: Vec<_> = cases
        .iter()
        .map(|c| {
            let mut l = Lookups::new();
            (memw_a_trace(&c.events, c.min_height, &mut l), l)
        })
        .collect();
    let rows = |k: usize| want[k].0.values.len() / NUM_MEMW_A_COLS;

    // Host emulation of the kernel's row logic.
    let mut input = Vec::new();
    let mut shapes = Vec::new();
    for (k, c) in cases.iter().enumerate() {
        let packed = pack_accesses(&c.events).unwrap();
        input.extend(event_case(c.events.len(), rows(k), &packed_bytes(&packed)));
        shapes.push((rows(k), NUM_MEMW_A_COLS));
    }
    let driver = event_driver("MemwAIn", 28, "memw_a_fill_row", NUM_MEMW_A_COLS);
    match host_emu::run(
        "memw_a",
        zkrv_machine_cuda::kernels::MEMW_A_CU.src,
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
            .map(|k| random_access(&mut r, k))
            .collect(),
        min_height: zkrv_machine::MIN_HEIGHT,
    };
    let mut l = Lookups::new();
    want.push((memw_a_trace(&big.events, big.min_height, &mut l), l));
    cases.push(big);
    for (k, c) in cases.iter().enumerate() {
        let lookups = DeviceLookups::new(&dev).unwrap();
        let mut stats = TransferStats::default();
        let t = fill_memw_a(&dev, &c.events, c.min_height, &lookups, &mut stats).unwrap();
        assert_eq!(
            (t.width, 1usize << t.log_height),
            (NUM_MEMW_A_COLS, want[k].0.values.len() / NUM_MEMW_A_COLS)
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
            28 * c.events.len() as u64,
            "{}: uploaded bytes",
            c.name
        );
    }
    eprintln!("{TEST}: GPU matches on {} cases", cases.len());
    // No silent fallback: a shape or an event the fill cannot take is an error, nothing is filled.
    assert_eq!(cases[2].events.len(), 1);
    let lookups = DeviceLookups::new(&dev).unwrap();
    let mut stats = TransferStats::default();
    let e = fill_memw_a(&dev, &cases[2].events, 3, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("power of two"), "{e}");
    let bad = MemwAEvent {
        old_ts: u64::MAX,
        ..cases[2].events[0]
    };
    let e = fill_memw_a(&dev, &[bad], 8, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("event 0"), "{e}");
    assert_eq!(stats.total_h2d(), 0);
}

/// Events the compact form cannot represent are refused with an error naming the event, not filled wrongly.
#[test]
fn memw_a_pack_rejects_invalid_events() {
    let ok = MemwAEvent {
        cell: 0x200,
        ts: 9,
        offset: 6,
        width_idx: 1,
        is_write: true,
        old: [1, 2, 3, 4, 5, 6, 7, 8],
        new: [1, 2, 3, 4, 5, 6, 0xaa, 0xbb],
        old_ts: 5,
    };
    let p = pack_accesses(&[ok]).unwrap()[0];
    assert_eq!((p.addr, p.ts_meta), (0x1006, 9 | 1 << 29 | 1 << 31));
    let bad = [
        MemwAEvent { width_idx: 4, ..ok },
        MemwAEvent { offset: 7, ..ok },
        MemwAEvent {
            offset: usize::MAX,
            ..ok
        },
        MemwAEvent {
            cell: 1 << 29,
            ..ok
        },
        MemwAEvent { ts: 1 << 29, ..ok },
        MemwAEvent { old_ts: 9, ..ok },
        MemwAEvent { old_ts: 10, ..ok },
    ];
    for (i, e) in bad.iter().enumerate() {
        let err = pack_accesses(&[ok, *e]).unwrap_err().to_string();
        assert!(err.contains("MEMW_A event 1"), "case {i}: {err}");
    }
    // Record path: ts must be 4 clk + 1 of a cycle of the record (here 3 cycles), old_ts < ts.
    let p = pack_accesses_rec(&[ok], 3).unwrap()[0];
    assert_eq!((p.clk, p.old_ts, p.old), (2, 5, ok.old));
    for (i, (e, cycles)) in [
        (MemwAEvent { ts: 8, ..ok }, 3),
        (ok, 2),
        (MemwAEvent { ts: 0, ..ok }, 3),
        (MemwAEvent { old_ts: 9, ..ok }, 3),
    ]
    .into_iter()
    .enumerate()
    {
        let first = MemwAEvent {
            ts: 1,
            old_ts: 0,
            ..ok
        };
        let err = pack_accesses_rec(&[first, e], cycles)
            .unwrap_err()
            .to_string();
        assert!(err.contains("MEMW_A event 1"), "case {i}: {err}");
    }
}

/// The host split for the device fills of LOAD, STORE and MEMW_A, on every guest: `generate_split` leaves the
/// three tables empty and counts none of their lookups; their host fills from the returned inputs give back
/// exactly `generate`'s tables, and the split's lookups plus theirs equal `generate`'s lookups.
#[test]
fn mem_split_matches_generate() {
    use zkrv_machine::tables::load::load_trace;
    use zkrv_machine::tables::store::store_trace;
    use zkrv_machine::trace::generate;
    for g in guest_runs() {
        let h = zkrv_machine::MIN_HEIGHT;
        let full = generate(&g.decode, &g.record, &g.input, h).unwrap();
        let (split, fi) = generate_split(&g.decode, &g.record, &g.input, h, MEM_FILLS).unwrap();
        for (t, m) in [
            ("LOAD", &split.tables[zkrv_machine::Table::Load]),
            ("STORE", &split.tables[zkrv_machine::Table::Store]),
            ("MEMW_A", &split.tables[zkrv_machine::Table::MemwA]),
        ] {
            assert!(m.values.is_empty(), "{}: split {t} is not empty", g.name);
        }
        assert_eq!(
            split.tables[zkrv_machine::Table::Cpu].values,
            full.tables[zkrv_machine::Table::Cpu].values,
            "{}: CPU",
            g.name
        );
        assert_eq!(
            split.tables[zkrv_machine::Table::Memw].values,
            full.tables[zkrv_machine::Table::Memw].values,
            "{}: MEMW",
            g.name
        );
        let mut lookups = split.lookups.clone();
        let load = load_trace(&fi.loads, fi.min_height, &mut lookups);
        let store = store_trace(&fi.stores, fi.min_height, &mut lookups);
        let memw_a = memw_a_trace(&fi.accesses, fi.min_height, &mut lookups);
        assert_eq!(
            load.values,
            full.tables[zkrv_machine::Table::Load].values,
            "{}: LOAD",
            g.name
        );
        assert_eq!(
            store.values,
            full.tables[zkrv_machine::Table::Store].values,
            "{}: STORE",
            g.name
        );
        assert_eq!(
            memw_a.values,
            full.tables[zkrv_machine::Table::MemwA].values,
            "{}: MEMW_A",
            g.name
        );
        for kind in KINDS {
            assert_eq!(
                lookups.counts(kind),
                full.lookups.counts(kind),
                "{}: lookups {kind:?}",
                g.name
            );
        }
    }
}

/// A random record with `n` in-cell accesses among junk cycles, and its accesses as the walk derives them
/// (12-bit offsets, `ts = 4 clk + 1`, a store's `rs2_val` holds the written bytes low, random bytes above).
fn random_access_record(r: &mut StdRng, n: usize) -> (Vec<CycleEvent>, Vec<MemwAEvent>) {
    let (mut cycles, mut events) = (Vec::new(), Vec::new());
    for k in 0..n {
        for _ in 0..r.gen_range(0..3) {
            cycles.push(junk_cycle(r));
        }
        let mut e = random_access(r, k);
        e.ts = 4 * cycles.len() as u64 + 1;
        e.old_ts = match r.gen_range(0..3) {
            0 => 0,
            1 => e.ts - 1,
            _ => r.gen_range(0..e.ts),
        };
        let width = 1usize << e.width_idx;
        let imm = rand_imm12(r);
        let base = (e.cell * 8 + e.offset as u64).wrapping_sub(imm);
        let mut val = r.next_u64().to_le_bytes();
        if e.is_write {
            val[..width].copy_from_slice(&e.new[e.offset..e.offset + width]);
        }
        let unsigned = !e.is_write && width < 8 && r.gen_bool(0.5);
        cycles.push(CycleEvent {
            pc: r.next_u32(),
            word: mem_word(
                r,
                e.is_write,
                imm,
                e.width_idx as u32 | (unsigned as u32) << 2,
            ),
            rs1_val: base,
            rs2_val: u64::from_le_bytes(val),
            rd_val: r.next_u64(),
        });
        events.push(e);
    }
    cycles.push(junk_cycle(r));
    (cycles, events)
}

/// The record path (`fill_memw_a_rec`, kernel `memw_a_fill_rec`): rows read from the resident record and a
/// `MemwARecIn` per access equal the host fill, on random records and on the guests' records.
#[test]
fn gpu_memw_a_fill_rec_matches_cpu() {
    const T: &str = "gpu_memw_a_fill_rec_matches_cpu";
    let mut r = rng(T);
    let h = zkrv_machine::MIN_HEIGHT;
    let mut cases: Vec<(String, Vec<CycleEvent>, Vec<MemwAEvent>)> = edge_sizes()
        .into_iter()
        .map(|n| {
            let (c, e) = random_access_record(&mut r, n);
            (format!("random record, {n} accesses"), c, e)
        })
        .collect();
    for g in guest_runs() {
        let (_, fi) = generate_split(&g.decode, &g.record, &g.input, h, MEM_FILLS).unwrap();
        cases.push((format!("guest {}", g.name), g.record.cycles, fi.accesses));
    }
    let want: Vec<_> = cases
        .iter()
        .map(|(_, _, ev)| {
            let mut l = Lookups::new();
            (memw_a_trace(ev, h, &mut l), l)
        })
        .collect();
    let rows = |k: usize| want[k].0.values.len() / NUM_MEMW_A_COLS;

    let mut input = Vec::new();
    let mut shapes = Vec::new();
    for (k, (_, cycles, ev)) in cases.iter().enumerate() {
        let packed: Vec<u8> = pack_accesses_rec(ev, cycles.len())
            .unwrap()
            .iter()
            .flat_map(|p| p.to_le_bytes())
            .collect();
        input.extend(rec_case(cycles, ev.len(), rows(k), &packed));
        shapes.push((rows(k), NUM_MEMW_A_COLS));
    }
    let driver = rec_driver("MemwARecIn", 16, "memw_a_fill_rec_row", NUM_MEMW_A_COLS);
    match host_emu::run(
        "memw_a_rec",
        zkrv_machine_cuda::kernels::MEMW_A_CU.src,
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
        let t = fill_memw_a_rec(&dev, &d_cycles, ev, h, &lookups, &mut stats).unwrap();
        assert_eq!(
            (t.width, 1usize << t.log_height),
            (NUM_MEMW_A_COLS, rows(k))
        );
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
        assert_eq!(stats.table("MEMW_A").h2d, 16 * ev.len() as u64, "{name}");
        assert_eq!(
            stats.table("record").h2d,
            32 * cycles.len() as u64,
            "{name}"
        );
    }
    // An access whose cycle is not in the record is refused.
    let (_, cycles, ev) = &cases[3];
    let lookups = DeviceLookups::new(&dev).unwrap();
    let mut stats = TransferStats::default();
    let d_cycles = DeviceCycles::upload(&dev, &cycles[..0], &mut stats).unwrap();
    let e = fill_memw_a_rec(&dev, &d_cycles, ev, h, &lookups, &mut stats)
        .err()
        .unwrap();
    assert!(e.to_string().contains("MEMW_A event 0"), "{e}");
    eprintln!("{T}: GPU matches on {} cases", cases.len());
}
