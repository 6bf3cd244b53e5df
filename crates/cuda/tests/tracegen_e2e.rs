//! End to end: proofs made with GPU trace generation (`prove_gpu_tracegen_with`) are byte-identical to the
//! CPU backend's proofs and verify, for every guest; resident tables have no main-trace upload (0 host->device
//! bytes at commit) and are marked resident under their table names; `host_traces` (ZKRV_CPU_TRACE=1) uploads
//! every table and gives the same proof. The GPU part prints `SKIPPED` and passes without a device.
#![cfg(feature = "cuda")]

#[path = "common/rv_programs.rs"]
mod rv_programs;

use zkrv_cuda::commit::{STAGE_COMMIT, STAGE_HOST_COPY};
use zkrv_cuda::trace_gen::{selected_tables, TraceGenOptions, DEVICE_FILLS};
use zkrv_cuda::{prove_gpu_tracegen_with, CudaBackend, Device, TraceOrigin};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{prove, verify, TABLE_NAMES};
use zkrv_stark::StarkConfig;

#[test]
fn trace_gen_options() {
    assert_eq!(selected_tables(DeviceFill::NONE), Vec::<usize>::new());
    let all: Vec<&str> = selected_tables(DeviceFill::ALL)
        .into_iter()
        .map(|t| TABLE_NAMES[t])
        .collect();
    assert_eq!(
        all,
        [
            "CPU", "EQ", "LT", "LOAD", "STORE", "MEMW_A", "PAGE", "BYTEWISE", "INPUT", "CPU32",
            "DVRM", "SHIFT", "MUL", "MEMW"
        ]
    );
    const { assert!(DEVICE_FILLS.cpu, "the CPU table has a device fill") };
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
        // (host traces, record path): the default on every guest; on the first and the largest ones also the
        // fills uploading their own inputs, and all traces on the host.
        let modes = if k == 0 || *g == "sort" {
            vec![(false, true), (false, false), (true, true)]
        } else {
            vec![(false, true)]
        };
        for (host_traces, record_path) in modes {
            backend.reset_stats();
            let opts = TraceGenOptions {
                host_traces,
                record_path,
                ..TraceGenOptions::default()
            };
            let (st, proof, report) = prove_gpu_tracegen_with(&backend, &p, &input, &config, opts)
                .unwrap_or_else(|e| panic!("{g}: {e}"));
            let mode = format!("host traces: {host_traces}, record path: {record_path}");
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
            verify(&p, &st, &proof, &config).unwrap();
            let stats = backend.stats();
            assert_eq!(report.tables.len(), TABLE_NAMES.len());
            for t in &report.tables {
                let commit_h2d = stats
                    .bytes
                    .get(&(STAGE_COMMIT.to_string(), t.name.to_string()))
                    .map_or(0, |b| b.h2d);
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
                selected_tables(DEVICE_FILLS)
                    .into_iter()
                    .map(|t| TABLE_NAMES[t])
                    .collect()
            };
            assert_eq!(resident, want, "{g}: resident tables");
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
    verify(&p, &st, &proof, &config).unwrap();
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
