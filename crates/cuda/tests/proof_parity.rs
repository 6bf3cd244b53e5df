//! Whole-proof parity on the stark crate's two-table test machine: the proof made with [`CudaBackend`]
//! (commit, aux and opening phases on the GPU; zk and not) is byte-identical to the CPU backend's. Skips (passing) without a GPU.
#![cfg(feature = "cuda")]

#[path = "../../stark/tests/proto_common/mod.rs"]
mod proto_common;

use proto_common::*;
use zkrv_cuda::{CudaBackend, Device, TraceOrigin};
use zkrv_stark::backend::TraceInput;
use zkrv_stark::{preprocess, prove, prove_with, verify, StarkConfig};

/// The opening ran on the device (`OpeningOps`, stage "open"): opened values, FRI roots, the final codeword
/// and one gathered download per opened round and FRI layer.
fn assert_openings_on_device(s: &zkrv_cuda::TransferStats) {
    for what in [
        "opened-values",
        "fri-roots",
        "final-codeword",
        "rows",
        "fri-layers",
    ] {
        let b = s.bytes.get(&("open".to_string(), what.to_string()));
        assert!(b.is_some_and(|b| b.d2h > 0), "no {what} downloads: {s}");
    }
}

#[test]
fn gpu_commit_proof_is_byte_identical_to_cpu() {
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED gpu_commit_proof_is_byte_identical_to_cpu: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    let config = StarkConfig::dev();
    for log_n in [3usize, 9] {
        let fx = fixture(log_n);
        let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
        let cpu = prove(
            &config,
            &airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            b"stmt",
        )
        .unwrap();
        // Table 0 resident on the device, the others from the host.
        let inputs = fx
            .traces
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i == 0 {
                    let raw: Vec<u64> = t
                        .values
                        .iter()
                        .map(zkrv_stark::field::PrimeField64::as_canonical_u64)
                        .collect();
                    let data = backend.device().upload(&raw).unwrap();
                    let log_height = t.log_height().unwrap() as u32;
                    TraceInput::Device(zkrv_cuda::DeviceTrace {
                        data,
                        width: t.width,
                        log_height,
                    })
                } else {
                    TraceInput::Host(t.clone())
                }
            })
            .collect();
        let gpu = prove_with(
            &backend,
            &config,
            &airs(),
            &pre,
            inputs,
            &fx.public,
            b"stmt",
        )
        .unwrap();
        assert_eq!(
            gpu.to_bytes(),
            cpu.to_bytes(),
            "log_n {log_n}: GPU proof differs from CPU proof"
        );
        verify(&config, 0, &airs(), &pre, &fx.public, b"stmt", &gpu).unwrap();
    }
    let s = backend.stats();
    eprintln!("{s}");
    assert!(s.origin.values().any(|o| *o == TraceOrigin::Resident));
    // The resident fib traces (3 x 2^3 and 3 x 2^9 u64) never crossed PCIe: the aux build read them on the
    // device, and both proofs' aux traces entered the aux commitment resident.
    let avoided = s.total_avoided();
    assert_eq!(avoided.d2h, 8 * 3 * ((1 << 3) + (1 << 9)), "{s}");
    assert_openings_on_device(&s);
    assert!(avoided.h2d > 0, "{s}");
}

/// zk mode with a fixed test seed: the GPU proof (salts on the GPU, a device-resident trace randomized by
/// `zk.cu`, the aux traces built on the GPU from the randomized main traces with row stride 2 and randomized
/// on the device) is byte-identical to the CPU proof, and no resident main trace is downloaded.
#[test]
fn gpu_zk_proof_is_byte_identical_to_cpu() {
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED gpu_zk_proof_is_byte_identical_to_cpu: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    let config = StarkConfig {
        zk_seed: Some(20261130),
        ..StarkConfig::dev_zk()
    };
    for log_n in [7usize, 9] {
        let fx = fixture(log_n);
        let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
        let cpu = prove(
            &config,
            &airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            b"stmt",
        )
        .unwrap();
        let inputs = fx
            .traces
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i == 0 {
                    let raw: Vec<u64> = t
                        .values
                        .iter()
                        .map(zkrv_stark::field::PrimeField64::as_canonical_u64)
                        .collect();
                    let data = backend.device().upload(&raw).unwrap();
                    TraceInput::Device(zkrv_cuda::DeviceTrace {
                        data,
                        width: t.width,
                        log_height: t.log_height().unwrap() as u32,
                    })
                } else {
                    TraceInput::Host(t.clone())
                }
            })
            .collect();
        let gpu = prove_with(
            &backend,
            &config,
            &airs(),
            &pre,
            inputs,
            &fx.public,
            b"stmt",
        )
        .unwrap();
        assert!(gpu.zk);
        assert_eq!(
            gpu.to_bytes(),
            cpu.to_bytes(),
            "zk log_n {log_n}: GPU proof differs from CPU proof"
        );
        verify(&config, 0, &airs(), &pre, &fx.public, b"stmt", &gpu).unwrap();
    }
    let s = backend.stats();
    eprintln!("{s}");
    // The aux builds ran on the GPU over the randomized 2n-row main traces (row stride 2): the resident fib
    // traces (3 x 2 x 2^7 and 3 x 2 x 2^9 u64 after zk randomization) never crossed PCIe, and the aux traces
    // were randomized on the device and entered the aux commitment resident.
    let avoided = s.total_avoided();
    assert_eq!(avoided.d2h, 8 * 3 * 2 * ((1 << 7) + (1 << 9)), "{s}");
    assert_openings_on_device(&s);
    // (`release_traces` counts a resident trace as avoided only if `host_trace` never downloaded it.)
    assert!(avoided.h2d > 0, "{s}");
}

/// `GpuLdeMode::Recompute` (coefficients only, LDE blocks recomputed where they are read, trees capped
/// `TREE_CAP_LEVELS` levels above the leaves, FRI layer trees capped too): the proofs, zk and not, small and
/// large enough for a 4-level cap, are byte-identical to the CPU backend's, and the proof reports that it
/// recomputed.
#[test]
fn gpu_recomputed_proof_is_byte_identical_to_cpu() {
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED gpu_recomputed_proof_is_byte_identical_to_cpu: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    backend.set_lde_mode(zkrv_cuda::GpuLdeMode::Recompute);
    let zk = StarkConfig {
        zk_seed: Some(7),
        ..StarkConfig::dev_zk()
    };
    for (config, log_n) in [
        (StarkConfig::dev(), 3usize),
        (StarkConfig::dev(), 10),
        // Table 1 (2^8 rows) 4 and 5 levels below table 0: injected into the kept node, and above it.
        (StarkConfig::dev(), 12),
        (StarkConfig::dev(), 13),
        (zk.clone(), 7),
        (zk, 10),
    ] {
        let fx = fixture(log_n);
        let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
        let cpu = prove(
            &config,
            &airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            b"stmt",
        )
        .unwrap();
        let inputs = fx.traces.iter().cloned().map(TraceInput::Host).collect();
        let gpu = prove_with(
            &backend,
            &config,
            &airs(),
            &pre,
            inputs,
            &fx.public,
            b"stmt",
        )
        .unwrap();
        assert!(backend.recomputes());
        assert_eq!(
            gpu.to_bytes(),
            cpu.to_bytes(),
            "recompute, zk {} log_n {log_n}: GPU proof differs from CPU proof",
            config.zk
        );
        verify(&config, 0, &airs(), &pre, &fx.public, b"stmt", &gpu).unwrap();
    }
    assert_openings_on_device(&backend.stats());
}

/// FRI folding arity 2, 4 and 8 (`log_folding_arity` 1..3; layers of `3·2^a` columns, variable arity where a
/// lower height is rolled in): GPU proofs, stored and recomputed (capped FRI layer trees), zk and not, are
/// byte-identical to the CPU backend's.
#[test]
fn gpu_proofs_are_byte_identical_to_cpu_at_every_arity() {
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED gpu_proofs_are_byte_identical_to_cpu_at_every_arity: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    for mode in [
        zkrv_cuda::GpuLdeMode::Store,
        zkrv_cuda::GpuLdeMode::Recompute,
    ] {
        backend.set_lde_mode(mode);
        for a in 1..=3usize {
            for (zk, log_n) in [(false, 3usize), (false, 12), (true, 10)] {
                let mut config = if zk {
                    StarkConfig {
                        zk_seed: Some(11),
                        ..StarkConfig::dev_zk()
                    }
                } else {
                    StarkConfig::dev()
                };
                config.fri.log_folding_arity = a;
                let fx = fixture(log_n);
                let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
                let cpu =
                    prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, b"a").unwrap();
                let inputs = fx.traces.iter().cloned().map(TraceInput::Host).collect();
                let gpu =
                    prove_with(&backend, &config, &airs(), &pre, inputs, &fx.public, b"a").unwrap();
                assert_eq!(
                    gpu.to_bytes(),
                    cpu.to_bytes(),
                    "{mode:?} arity 2^{a} zk {zk} log_n {log_n}: GPU proof differs from CPU proof"
                );
                verify(&config, 0, &airs(), &pre, &fx.public, b"a", &gpu).unwrap();
            }
        }
    }
}

/// Absent tables (docs/stark.md §10): the machine `[fib, bytes, square, caller]` with `square` absent
/// (`TraceInput::absent`) and `fib` resident, zk and not, stored and recomputed LDEs: the GPU proof is
/// byte-identical to the CPU proof, marks `square` absent and verifies; and with `square` present and
/// called, too (the commit indices of the present tables shift past the absent one).
#[test]
fn gpu_proof_with_an_absent_table_is_byte_identical_to_cpu() {
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED gpu_proof_with_an_absent_table_is_byte_identical_to_cpu: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    let zk = StarkConfig {
        zk_seed: Some(20261130),
        ..StarkConfig::dev_zk()
    };
    for mode in [
        zkrv_cuda::GpuLdeMode::Store,
        zkrv_cuda::GpuLdeMode::Recompute,
    ] {
        backend.set_lde_mode(mode);
        for (config, log_n) in [(StarkConfig::dev(), 5usize), (zk.clone(), 7)] {
            for (calls, square) in [(0usize, false), (5, true)] {
                let fx = fixture_absent(log_n, calls, square);
                let pre = preprocess(&airs_absent(), fx.preprocessed.clone()).unwrap();
                let cpu = prove(
                    &config,
                    &airs_absent(),
                    &pre,
                    fx.traces.clone(),
                    &fx.public,
                    b"absent",
                )
                .unwrap();
                let inputs = fx
                    .traces
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if i == 0 {
                            let raw: Vec<u64> = t
                                .values
                                .iter()
                                .map(zkrv_stark::field::PrimeField64::as_canonical_u64)
                                .collect();
                            let data = backend.device().upload(&raw).unwrap();
                            TraceInput::Device(zkrv_cuda::DeviceTrace {
                                data,
                                width: t.width,
                                log_height: t.log_height().unwrap() as u32,
                            })
                        } else if i == SQUARE && !square {
                            TraceInput::absent(t.width)
                        } else {
                            TraceInput::Host(t.clone())
                        }
                    })
                    .collect();
                let gpu = prove_with(
                    &backend,
                    &config,
                    &airs_absent(),
                    &pre,
                    inputs,
                    &fx.public,
                    b"absent",
                )
                .unwrap();
                assert_eq!(
                    gpu.log_heights[SQUARE] == zkrv_stark::proof::ABSENT_LOG_HEIGHT,
                    !square
                );
                assert_eq!(
                    gpu.to_bytes(),
                    cpu.to_bytes(),
                    "{mode:?} zk {} square present {square}: GPU proof differs from CPU proof",
                    config.zk
                );
                verify(
                    &config,
                    0,
                    &airs_absent(),
                    &pre,
                    &fx.public,
                    b"absent",
                    &gpu,
                )
                .unwrap();
            }
        }
    }
}
