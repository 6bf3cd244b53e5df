//! `LdeMode::Auto` decides per committed round, so a large proof can mix stored and recomputed rounds. A
//! backend that forces each mix of (main, preprocessed, aux, quotient) rounds gives the `Store` bytes.

mod proto_common;

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};

use proto_common::*;
use zkrv_stark::backend::{
    BackendError, CpuBackend, CpuCommitted, LdeMode, ProverBackend, TraceDims, TraceInput,
};
use zkrv_stark::field::Ext3;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::Digest;
use zkrv_stark::pcs::{FriConfig, OpenedValues, PcsProof};
use zkrv_stark::transcript::Transcript;
use zkrv_stark::zk::ZkRng;
use zkrv_stark::{preprocess, verify_bytes, StarkConfig};

/// Commit number k (in call order) is recomputed iff bit k of `mask` is set.
struct Mixed {
    mask: u32,
    calls: AtomicUsize,
}

impl Mixed {
    fn inner(&self) -> CpuBackend {
        CpuBackend::new(LdeMode::Store)
    }
}

impl ProverBackend for Mixed {
    type DeviceTrace = Infallible;
    type Committed = CpuCommitted;
    fn commit(
        &self,
        traces: Vec<TraceInput<Infallible>>,
        log_blowup: usize,
        salt: Option<(ZkRng, u32)>,
    ) -> Result<(Digest, CpuCommitted), BackendError> {
        let k = self.calls.fetch_add(1, Ordering::SeqCst);
        let mode = if self.mask >> k & 1 == 1 {
            LdeMode::Recompute
        } else {
            LdeMode::Store
        };
        CpuBackend::new(mode).commit(traces, log_blowup, salt)
    }
    fn trace_dims(&self, c: &CpuCommitted) -> Vec<TraceDims> {
        self.inner().trace_dims(c)
    }
    fn host_trace<'a>(
        &self,
        c: &'a CpuCommitted,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError> {
        self.inner().host_trace(c, i)
    }
    fn host_lde<'a>(
        &self,
        c: &'a CpuCommitted,
        i: usize,
    ) -> Result<Cow<'a, RowMajorMatrix>, BackendError> {
        self.inner().host_lde(c, i)
    }
    fn host_lde_rows<'a>(
        &self,
        c: &'a CpuCommitted,
        i: usize,
        start: usize,
        rows: usize,
    ) -> Result<(Cow<'a, RowMajorMatrix>, usize), BackendError> {
        self.inner().host_lde_rows(c, i, start, rows)
    }
    fn open(
        &self,
        fri: &FriConfig,
        rounds: &[(&CpuCommitted, Vec<Vec<Ext3>>)],
        transcript: &mut Transcript,
        hiding: Option<&ZkRng>,
    ) -> (OpenedValues, PcsProof) {
        self.inner().open(fri, rounds, transcript, hiding)
    }
}

#[test]
fn mixed_store_and_recompute_rounds_give_the_store_proof() {
    let plain = StarkConfig {
        debug_check: true,
        ..StarkConfig::dev()
    };
    let zk = StarkConfig {
        zk_seed: Some(7),
        debug_check: true,
        ..StarkConfig::dev_zk()
    };
    for (config, log_n) in [(&plain, 6usize), (&zk, 7usize)] {
        let fx = fixture(log_n);
        let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
        let prove_with = |mask: u32| {
            let b = Mixed {
                mask,
                calls: AtomicUsize::new(0),
            };
            let traces = fx.traces.iter().cloned().map(TraceInput::Host).collect();
            let p = zkrv_stark::prove_with(&b, config, &airs(), &pre, traces, &fx.public, b"mix")
                .unwrap();
            (p.to_bytes(), b.calls.load(Ordering::SeqCst))
        };
        let (want, commits) = prove_with(0);
        println!("zk {}: {commits} commits", config.zk);
        for mask in 1..(1u32 << commits) {
            let (got, _) = prove_with(mask);
            assert_eq!(got, want, "zk {} mask {mask:#b}", config.zk);
        }
        verify_bytes(config, &airs(), &pre, &fx.public, b"mix", &want).unwrap();
    }
}
