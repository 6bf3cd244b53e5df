//! End to end: proofs made with GPU trace generation (`prove_gpu_tracegen_with`) are byte-identical to the
//! CPU backend's proofs and verify, for every guest; resident tables have no main-trace upload (0 host->device
//! bytes at commit) and are marked resident under their table names; `host_traces` (ZKRV_CPU_TRACE=1) uploads
//! every table and gives the same proof. The GPU part prints `SKIPPED` and passes without a device.
#![cfg(feature = "cuda")]

#[path = "common/rv_programs.rs"]
mod rv_programs;

use zkrv_cuda::commit::{STAGE_COMMIT, STAGE_HOST_COPY};
use zkrv_cuda::{CudaBackend, Device, TraceOrigin};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{prove, table_id, verify, TABLE_NAMES};
use zkrv_machine::{PerTable, Table};
use zkrv_machine_cuda::prove_gpu_tracegen_with;
use zkrv_machine_cuda::tables::{device_fills, DeviceTableFill};
use zkrv_machine_cuda::trace_gen::{
    check_missing_fills, fill_plan, without_missing_fills, TraceGenError, TraceGenOptions,
    DEVICE_FILLS,
};

/// Table indices selected in `device`, in proof order.
fn selected_tables(device: DeviceFill) -> Vec<usize> {
    Table::ALL
        .into_iter()
        .filter(|&t| device.has(t))
        .map(Table::index)
        .collect()
}
use zkrv_stark::StarkConfig;

/// The one list of device fills: every table's fill names its own table and a program of this crate.
#[test]
fn device_fills_cover_the_registry() {
    let fills = device_fills();
    for (t, f) in fills.iter() {
        let f = f.unwrap_or_else(|| panic!("{t} has no device fill"));
        assert_eq!(f.table(), t, "the fill listed for {t}");
        let p = f.program();
        assert!(
            zkrv_machine_cuda::kernels::PROGRAMS
                .iter()
                .any(|q| std::ptr::eq(*q, p)),
            "{t}: program {} is not one of this crate's",
            p.name
        );
    }
}

/// A table without a device fill (as a precompile table added to the registry before its fill): left to
/// the host when it has no rows, a named error (never a silent host fill) when it has rows, and refused by
/// the plan if it is still selected.
#[test]
fn a_table_without_a_device_fill_is_a_named_error_only_with_rows() {
    let all = device_fills();
    let fills: PerTable<Option<&'static dyn DeviceTableFill>> =
        all.map(|t, f| if t == Table::Input { None } else { f });
    let (device, missing) = without_missing_fills(&fills, DeviceFill::ALL);
    assert_eq!(missing, [Table::Input]);
    assert!(!device.has(Table::Input) && device.has(Table::Lt));
    // No rows: fine, INPUT is filled on the host, every other table on the device.
    check_missing_fills(missing.clone(), |_| false).unwrap();
    let plan = fill_plan(&fills, device).unwrap();
    assert_eq!(plan.len(), Table::COUNT - 1);
    assert!(plan.iter().all(|f| f.table() != Table::Input));
    // Rows: the error names the table.
    match check_missing_fills(missing, |t| t == Table::Input) {
        Err(e @ TraceGenError::NoDeviceFill { table: "INPUT" }) => {
            assert!(e.to_string().contains("INPUT"), "{e}")
        }
        other => panic!("expected NoDeviceFill for INPUT, got {other:?}"),
    }
    // Still selected: the plan refuses it.
    match fill_plan(&fills, DeviceFill::ALL) {
        Err(TraceGenError::NoDeviceFill { table: "INPUT" }) => {}
        other => panic!(
            "expected NoDeviceFill for INPUT, got {:?}",
            other.map(|p| p.len())
        ),
    }
}

/// With the memory walk on the device, a precompile table left on the host is refused, naming it (its calls'
/// old timestamps are the device's): never filled wrong behind the caller's back.
#[test]
fn a_precompile_table_on_the_host_with_the_device_memory_walk_is_refused() {
    let (p, _) = rv_programs::guest("precompiles");
    let input = [0u8, 1, 2, 3];
    for t in [Table::Keccakf, Table::Sha256, Table::Poseidon2] {
        let run = zkrv_machine::run_for_proof(&p, &input).unwrap();
        match zkrv_machine::split_traces(&p, run, DeviceFill::ALL.without(t)) {
            Err(e @ zkrv_machine::MachineError::NoDeviceFill { .. }) => {
                assert!(e.to_string().contains(t.name()), "{t}: {e}")
            }
            Err(e) => panic!("{t}: wrong error {e}"),
            Ok(_) => panic!("{t} on the host was accepted with the device memory walk"),
        }
    }
}

#[test]
fn trace_gen_options() {
    assert_eq!(selected_tables(DeviceFill::NONE), Vec::<usize>::new());
    let (with_fills, _) = without_missing_fills(&device_fills(), DeviceFill::ALL);
    let all: Vec<&str> = selected_tables(with_fills)
        .into_iter()
        .map(|t| TABLE_NAMES[t])
        .collect();
    let with_fill: Vec<&str> = TABLE_NAMES
        .into_iter()
        .filter(|&n| device_fills()[Table::from_name(n).unwrap()].is_some())
        .collect();
    assert_eq!(
        all, with_fill,
        "every table but the host-only ones has a device fill"
    );
    // BITWISE reads the histogram every other fill counts into: it runs last.
    let order: Vec<usize> = fill_plan(&device_fills(), with_fills)
        .unwrap()
        .into_iter()
        .map(|f| f.table().index())
        .collect();
    assert_eq!(order.len(), with_fill.len());
    assert_eq!(order.last(), Some(&table_id::BITWISE));
    let pos = |t: usize| order.iter().position(|&x| x == t).unwrap();
    assert!(
        pos(table_id::CPU) < pos(table_id::DECODE),
        "CPU counts DECODE"
    );
    assert!(
        pos(table_id::SHIFT) < pos(table_id::POW2),
        "SHIFT counts POW2"
    );
    assert_eq!(DEVICE_FILLS, DeviceFill::ALL);
    // DECODE without CPU, POW2 without SHIFT on the device: refused (nothing would count them).
    for (bad, what) in [
        (DeviceFill::ALL.without(Table::Cpu), "DECODE"),
        (DeviceFill::ALL.without(Table::Shift), "POW2"),
        (DeviceFill::ALL.without(Table::Regfile), "register walk"),
        (DeviceFill::ALL.without(Table::Page), "memory walk"),
        (DeviceFill::ALL.without(Table::Lt), "request lists"),
        (DeviceFill::ALL.without(Table::Pow2), "request lists"),
    ] {
        let e = bad.check().unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
    DeviceFill::ALL.check().unwrap();
    let host = TraceGenOptions {
        host_traces: true,
        ..TraceGenOptions::default()
    };
    assert_eq!(host.device_tables(), DeviceFill::NONE);
    assert_eq!(TraceGenOptions::default().device_tables(), DEVICE_FILLS);
}

#[test]
fn gpu_tracegen_proofs_are_byte_identical_to_cpu() {
    const T: &str = "gpu_tracegen_proofs_are_byte_identical_to_cpu";
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED {T}: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    let config = StarkConfig::dev();
    for (k, g) in rv_programs::GUESTS.iter().enumerate() {
        let (p, input) = rv_programs::guest(g);
        let (st_cpu, proof_cpu) = prove(&p, &input, &config).unwrap();
        // (host traces, record path, device fills): the default on every guest; on the first and the largest
        // ones also the fills uploading their own inputs, all traces on the host, and the three walks on the
        // host with the tables that read them there too (the request tables, MEMW, PAGE, SYSIO, REGFILE and the
        // precompile tables: their device fills read only the device walks' lists) and BITWISE on the device
        // (which then adds the host fills' lookups to the device histogram; CPU and LOAD/STORE/MEMW_A upload
        // the host walks' results).
        let walk_readers = DeviceFill::walk_readers()
            .into_iter()
            .fold(zkrv_machine::TableSet::EMPTY, |s, (_, r)| {
                r.iter().fold(s, |s, t| s.with(t))
            });
        // The precompile fills read the device memory walk (`DeviceFill::check`): with the walks on the
        // host they stay on the host too.
        let precompiles = zkrv_machine::TableSet::EMPTY
            .with(Table::Keccakf)
            .with(Table::Sha256)
            .with(Table::Poseidon2);
        let partial = DeviceFill {
            tables: DEVICE_FILLS
                .tables
                .minus(walk_readers)
                .minus(precompiles)
                .with(Table::Load)
                .with(Table::Store)
                .with(Table::MemwA)
                .with(Table::Cpu),
            reg_walk: false,
            mem_walk: false,
            requests: false,
        };
        let modes = if k == 0 || *g == "sort" {
            vec![
                (false, true, DEVICE_FILLS),
                (false, false, DEVICE_FILLS),
                (true, true, DEVICE_FILLS),
                (false, true, partial),
            ]
        } else {
            vec![(false, true, DEVICE_FILLS)]
        };
        for (host_traces, record_path, device) in modes {
            backend.reset_stats();
            let opts = TraceGenOptions {
                host_traces,
                record_path,
                device,
                ..TraceGenOptions::default()
            };
            let (st, proof, report) = prove_gpu_tracegen_with(&backend, &p, &input, &config, opts)
                .unwrap_or_else(|e| panic!("{g}: {e}"));
            let mode = format!(
                "host traces: {host_traces}, record path: {record_path}, all fills: {}",
                device == DEVICE_FILLS
            );
            eprintln!("{g} ({mode}):\n{report}");
            assert_eq!(st, st_cpu, "{g}: statement");
            assert!(
                proof.to_bytes() == proof_cpu.to_bytes(),
                "{g} ({mode}): GPU trace-gen proof differs from the CPU proof"
            );
            let trace_gen_h2d = backend.stats().stage("trace-gen").h2d;
            if host_traces {
                assert_eq!(trace_gen_h2d, 0, "{g}: no fill inputs with host traces");
            } else {
                assert!(trace_gen_h2d > 0, "{g}: fill inputs counted");
            }
            verify(&p, &st, &proof, &config, 0).unwrap();
            let stats = backend.stats();
            assert_eq!(report.tables.len(), TABLE_NAMES.len());
            for t in &report.tables {
                let commit_h2d = stats
                    .bytes
                    .get(&(STAGE_COMMIT.to_string(), t.name.to_string()))
                    .map_or(0, |b| b.h2d);
                if t.rows == 0 {
                    // An absent table (a precompile not called, docs/stark.md §10): nothing committed.
                    assert_eq!(stats.origin.get(t.name), None, "{g}: {} is absent", t.name);
                    assert_eq!(commit_h2d, 0, "{g}: {} is absent", t.name);
                    continue;
                }
                assert_eq!(stats.origin.get(t.name), Some(&t.origin), "{g}: {}", t.name);
                match t.origin {
                    TraceOrigin::Resident => {
                        assert!(!host_traces);
                        assert_eq!(commit_h2d, 0, "{g}: {} is resident", t.name);
                    }
                    TraceOrigin::Uploaded => {
                        assert_eq!(commit_h2d, (t.rows * t.width * 8) as u64, "{g}: {}", t.name)
                    }
                }
            }
            let resident: Vec<&str> = report
                .tables
                .iter()
                .filter(|t| t.origin == TraceOrigin::Resident)
                .map(|t| t.name)
                .collect();
            let want: Vec<&str> = if host_traces {
                Vec::new()
            } else {
                // Absent tables (precompiles not called) have no rows and nothing to make resident.
                let absent =
                    |name: &str| report.tables.iter().any(|t| t.name == name && t.rows == 0);
                selected_tables(device)
                    .into_iter()
                    .map(|t| TABLE_NAMES[t])
                    .filter(|name| !absent(name))
                    .collect()
            };
            assert_eq!(resident, want, "{g}: resident tables");
            if !host_traces && device == DEVICE_FILLS {
                // The request lists are built on the device: the request tables upload nothing.
                for t in ["EQ", "LT", "BYTEWISE", "SHIFT", "MUL", "CPU32", "DVRM"] {
                    let h2d = stats
                        .bytes
                        .get(&("trace-gen".to_string(), t.to_string()))
                        .map_or(0, |b| b.h2d);
                    assert_eq!(h2d, 0, "{g}: {t} fill inputs uploaded");
                }
                assert!(report.requests_s > 0.0, "{g}: device request lists timed");
                // Every table resident: no main trace crosses PCIe at commit.
                let main_h2d: u64 = report
                    .tables
                    .iter()
                    .filter_map(|t| {
                        stats
                            .bytes
                            .get(&(STAGE_COMMIT.to_string(), t.name.to_string()))
                    })
                    .map(|b| b.h2d)
                    .sum();
                assert_eq!(main_h2d, 0, "{g}: main-trace host->device bytes");
                let bw = stats
                    .bytes
                    .get(&("trace-gen".to_string(), "BITWISE".to_string()))
                    .map_or(0, |b| b.h2d);
                assert_eq!(
                    bw, 0,
                    "{g}: no host lookups to upload with every fill on the device"
                );
            }
        }
    }
}

/// zk mode (fixed test seed): with GPU trace generation the resident main traces are randomized on the
/// device, the LogUp aux build reads their even rows there (row stride 2) and the aux traces are randomized
/// on the device: the proof is byte-identical to the CPU zk proof, verifies, and no resident main trace
/// is downloaded (its `2n x w` randomized buffer is counted as avoided).
#[test]
fn gpu_tracegen_zk_proof_is_byte_identical_to_cpu() {
    const T: &str = "gpu_tracegen_zk_proof_is_byte_identical_to_cpu";
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED {T}: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    let config = StarkConfig {
        zk_seed: Some(20261130),
        ..StarkConfig::dev_zk()
    };
    let g = rv_programs::GUESTS[0];
    let (p, input) = rv_programs::guest(g);
    let (st_cpu, proof_cpu) = prove(&p, &input, &config).unwrap();
    // Device fills regardless of ZKRV_CPU_TRACE.
    let opts = TraceGenOptions {
        host_traces: false,
        ..TraceGenOptions::default()
    };
    let (st, proof, report) = prove_gpu_tracegen_with(&backend, &p, &input, &config, opts)
        .unwrap_or_else(|e| panic!("{g}: {e}"));
    eprintln!("{g} (zk):\n{report}");
    assert_eq!(st, st_cpu, "{g}: statement");
    assert!(
        proof.to_bytes() == proof_cpu.to_bytes(),
        "{g} (zk): GPU trace-gen proof differs from the CPU proof"
    );
    verify(&p, &st, &proof, &config, 0).unwrap();
    let stats = backend.stats();
    eprintln!("{stats}");
    let mut resident = 0;
    for t in report
        .tables
        .iter()
        .filter(|t| t.origin == TraceOrigin::Resident)
    {
        resident += 1;
        let avoided = stats
            .avoided
            .get(&(STAGE_HOST_COPY.to_string(), t.name.to_string()))
            .map_or(0, |b| b.d2h);
        assert_eq!(
            avoided,
            (2 * t.rows * t.width * 8) as u64,
            "{g} (zk): resident {} ({} x {}) must not be downloaded",
            t.name,
            t.rows,
            t.width
        );
    }
    assert!(resident > 0, "{g} (zk): no resident table");
}

/// `guests/bin/precompiles.elf` (guests/c/programs/precompiles.c: the first input byte selects the
/// precompiles, bit 0 keccak_f, bit 1 sha256_compress, bit 2 poseidon2, 0 all) with GPU trace generation,
/// no-zk and zk (fixed test seed): for every selection (each precompile alone, all three) the proof is
/// byte-identical to the CPU proof and verifies, the called precompiles' tables resident and the others absent.
/// Prints `SKIPPED` without a device.
#[test]
fn gpu_tracegen_precompile_proofs_are_byte_identical_to_cpu() {
    const T: &str = "gpu_tracegen_precompile_proofs_are_byte_identical_to_cpu";
    let (p, _) = rv_programs::guest("precompiles");
    let msg =
        b"zkrv precompiles: keccak_f, sha256_compress and poseidon2 on the device, seventy bytes+";
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED {T}: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    let zk = StarkConfig {
        zk_seed: Some(20261203),
        ..StarkConfig::dev_zk()
    };
    let mut proved = 0;
    for mask in [4u8, 1, 2, 0] {
        let input: Vec<u8> = [mask].into_iter().chain(msg.iter().copied()).collect();
        let rec = rv_programs::run(&p, &input);
        let opts = TraceGenOptions {
            host_traces: false,
            ..TraceGenOptions::default()
        };
        for (what, config) in [("no-zk", StarkConfig::dev()), ("zk", zk.clone())] {
            backend.reset_stats();
            let (st_cpu, proof_cpu) = prove(&p, &input, &config).unwrap();
            let (st, proof, report) = prove_gpu_tracegen_with(&backend, &p, &input, &config, opts)
                .unwrap_or_else(|e| panic!("mask {mask} ({what}): {e}"));
            eprintln!("precompiles mask {mask} ({what}):\n{report}");
            assert_eq!(st, st_cpu, "mask {mask} ({what}): statement");
            assert!(
                proof.to_bytes() == proof_cpu.to_bytes(),
                "mask {mask} ({what}): GPU trace-gen proof differs from the CPU proof"
            );
            verify(&p, &st, &proof, &config, 0).unwrap();
            for (t, calls) in [
                ("KECCAKF", rec.keccak.len()),
                ("SHA256", rec.sha256.len()),
                ("POSEIDON2", rec.poseidon2.len()),
            ] {
                let g = report.tables.iter().find(|g| g.name == t).unwrap();
                if calls > 0 {
                    assert_eq!(g.origin, TraceOrigin::Resident, "mask {mask} ({what}): {t}");
                } else {
                    assert_eq!(g.rows, 0, "mask {mask} ({what}): {t} is absent");
                }
            }
            proved += 1;
        }
    }
    assert_eq!(proved, 8, "4 selections, no-zk and zk");
    eprintln!("{T}: {proved} proofs byte-identical");
}
