//! The device-memory budget: a proof that does not fit stops before any work with
//! `BackendError::Memory` (bytes needed and available), an allocation past the budget is
//! `CudaError::Budget`, and a proof that fits under a cap still matches the CPU proof. Skips (passing)
//! without a GPU.
#![cfg(feature = "cuda")]

#[path = "../../stark/tests/proto_common/mod.rs"]
mod proto_common;

use proto_common::*;
use zkrv_cuda::{CudaBackend, CudaError, Device};
use zkrv_stark::air::compile_for;
use zkrv_stark::backend::{BackendError, ProofFootprint, TraceInput};
use zkrv_stark::{preprocess, prove, prove_with, ProveError, StarkConfig};

fn device(test: &str) -> Option<Device> {
    match Device::new() {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

#[test]
fn proof_over_budget_fails_before_work() {
    let Some(dev) = device("proof_over_budget_fails_before_work") else {
        return;
    };
    let config = StarkConfig::dev();
    let fx = fixture(9);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let compiled = compile_for(&airs(), &config).unwrap();
    let heights: Vec<usize> = fx.traces.iter().map(|t| t.log_height().unwrap()).collect();
    let prep: Vec<Option<usize>> = pre
        .traces
        .iter()
        .map(|p| p.as_ref().map(|m| m.width))
        .collect();
    let footprint = ProofFootprint::estimate(&compiled, &heights, &prep, &config, 0);
    let backend = CudaBackend::new(dev);
    // Stored LDEs only (in `Auto` mode this budget would recompute instead: `proof_over_store_budget_recomputes`).
    backend.set_lde_mode(zkrv_cuda::GpuLdeMode::Store);
    let need = backend.device_bytes_needed(&footprint);
    assert!(
        need > footprint.total(),
        "a fresh device has no twiddle tables yet"
    );
    // One byte short of what the proof needs on top of what is already live.
    let base = backend.device().memory_in_use();
    backend.device().set_memory_budget(base + need - 1);
    let inputs = fx.traces.iter().cloned().map(TraceInput::Host).collect();
    let err = prove_with(
        &backend,
        &config,
        &airs(),
        &pre,
        inputs,
        &fx.public,
        b"stmt",
    )
    .unwrap_err();
    match err {
        ProveError::Backend(BackendError::Memory {
            needed, available, ..
        }) => {
            assert_eq!(needed, need);
            assert_eq!(available, need - 1);
        }
        e => panic!("expected a memory error, got {e}"),
    }
    assert_eq!(
        backend.device().memory_in_use(),
        base,
        "nothing was allocated"
    );
    // With exactly the estimate it proves, matches the CPU proof, and the live peak stays within it.
    backend.device().set_memory_budget(base + need);
    backend.device().reset_memory_peak();
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
    let cpu = prove(
        &config,
        &airs(),
        &pre,
        fx.traces.clone(),
        &fx.public,
        b"stmt",
    )
    .unwrap();
    assert_eq!(gpu.to_bytes(), cpu.to_bytes());
    let peak = backend.device().memory_peak() - base;
    eprintln!("estimate {need} bytes, live peak {peak} bytes");
    assert!(peak <= need, "live peak {peak} above the estimate {need}");
}

#[test]
fn allocation_past_budget_is_an_error() {
    let Some(dev) = device("allocation_past_budget_is_an_error") else {
        return;
    };
    let base = dev.memory_in_use();
    dev.set_memory_budget(base + (1 << 20));
    let a = dev.alloc::<u64>(1 << 16).unwrap(); // 512 KiB
    let b = match dev.alloc::<u64>(1 << 16) {
        Ok(b) => b,
        Err(e) => panic!("second 512 KiB fits exactly: {e}"),
    };
    match dev.alloc::<u64>(1) {
        Err(CudaError::Budget {
            requested,
            in_use,
            budget,
        }) => {
            assert_eq!(
                (requested, in_use, budget),
                (8, base + (1 << 20), base + (1 << 20))
            );
        }
        r => panic!("expected a budget error, got {r:?}"),
    }
    drop(a);
    assert_eq!(
        dev.memory_in_use(),
        base + (1 << 19),
        "a dropped buffer is returned"
    );
    let c = dev.alloc::<u64>(1 << 16).unwrap();
    assert_eq!(dev.memory_in_use(), base + (1 << 20));
    drop((b, c));
    assert_eq!(dev.memory_in_use(), base);
}

/// A device failure in the middle of a proof (here: the budget exhausted after a round is committed) is a
/// `BackendError::Device` from every operation that allocates, never a panic.
#[test]
fn device_failure_mid_proof_is_an_error() {
    use zkrv_stark::backend::{CommitOps, OpeningOps};
    use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, F};
    use zkrv_stark::matrix::RowMajorMatrix;
    let Some(dev) = device("device_failure_mid_proof_is_an_error") else {
        return;
    };
    let backend = CudaBackend::new(dev);
    let trace = || {
        let v = (0..(4u64 << 10)).map(|i| F::from_u64(i * 31 + 5)).collect();
        TraceInput::Host(RowMajorMatrix::new(v, 4))
    };
    let (_, committed) = backend
        .commit(
            vec![trace()],
            2,
            None,
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .unwrap();
    backend.release_traces(&committed).unwrap();
    // No headroom left.
    backend
        .device()
        .set_memory_budget(backend.device().memory_in_use());
    let err = backend
        .commit(
            vec![trace()],
            2,
            None,
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .err()
        .expect("commit must fail");
    assert!(
        matches!(&err, BackendError::Device(m) if m.contains("budget")),
        "commit: {err}"
    );
    let z = Ext3([F::from_u64(3), F::from_u64(11), F::from_u64(2)]);
    let points = vec![vec![z]];
    let err = backend
        .evaluate(&[(&committed, points.as_slice())], 2)
        .expect_err("evaluate must fail");
    assert!(
        matches!(&err, BackendError::Device(m) if m.contains("budget")),
        "evaluate: {err}"
    );
}

/// `Auto` mode under a budget the stored proof exceeds but the recomputing one fits: the proof recomputes
/// its LDEs, matches the CPU proof byte for byte, and its live peak stays within the recompute estimate.
#[test]
fn proof_over_store_budget_recomputes() {
    let Some(dev) = device("proof_over_store_budget_recomputes") else {
        return;
    };
    let backend = CudaBackend::new(dev);
    let orig = backend.device().memory_budget();
    for config in [
        StarkConfig::dev(),
        StarkConfig {
            zk_seed: Some(11),
            ..StarkConfig::dev_zk()
        },
    ] {
        let fx = fixture(12);
        let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
        let compiled = compile_for(&airs(), &config).unwrap();
        let heights: Vec<usize> = fx.traces.iter().map(|t| t.log_height().unwrap()).collect();
        let prep: Vec<Option<usize>> = pre
            .traces
            .iter()
            .map(|p| p.as_ref().map(|m| m.width))
            .collect();
        let footprint = ProofFootprint::estimate(&compiled, &heights, &prep, &config, 0);
        let store = backend.device_bytes_needed(&footprint);
        let recompute = backend.device_bytes_needed_recompute(&footprint);
        eprintln!("zk {}: store {store} B, recompute {recompute} B", config.zk);
        assert!(
            recompute < store,
            "recomputing must need less: {recompute} >= {store}"
        );
        let base = backend.device().memory_in_use();
        backend.device().set_memory_budget(base + recompute);
        backend.device().reset_memory_peak();
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
        assert!(
            backend.recomputes(),
            "zk {}: expected the recompute mode",
            config.zk
        );
        let cpu = prove(
            &config,
            &airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            b"stmt",
        )
        .unwrap();
        assert_eq!(gpu.to_bytes(), cpu.to_bytes(), "zk {}", config.zk);
        let peak = backend.device().memory_peak() - base;
        eprintln!(
            "zk {}: recompute estimate {recompute} B, live peak {peak} B",
            config.zk
        );
        assert!(
            peak <= recompute,
            "live peak {peak} above the estimate {recompute}"
        );
        // One byte less than the recomputing proof needs (now that the twiddle tables are resident, less
        // than before): the budget error before any work.
        let recompute = backend.device_bytes_needed_recompute(&footprint);
        let base = backend.device().memory_in_use();
        backend.device().set_memory_budget(base + recompute - 1);
        let inputs = fx.traces.iter().cloned().map(TraceInput::Host).collect();
        match prove_with(
            &backend,
            &config,
            &airs(),
            &pre,
            inputs,
            &fx.public,
            b"stmt",
        ) {
            Err(ProveError::Backend(BackendError::Memory { needed, .. })) => {
                assert_eq!(needed, recompute)
            }
            r => panic!("expected the budget error, got {:?}", r.map(|_| ())),
        }
        backend.device().set_memory_budget(orig);
    }
}
