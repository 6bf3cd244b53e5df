//! `LdeMode::Auto` decides per committed round, so a large proof can mix stored and recomputed rounds. A
//! backend that forces each mix of (main, preprocessed, aux, quotient) rounds gives the `Store` bytes.

mod proto_common;

use std::sync::atomic::Ordering;

use proto_common::hooked::Hooked;
use proto_common::*;
use zkrv_stark::backend::{LdeMode, TraceInput};
use zkrv_stark::{preprocess, verify_bytes, StarkConfig};

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
            // Commit number k (in call order) is recomputed iff bit k of `mask` is set.
            let b = Hooked::new(
                move |k| {
                    if mask >> k & 1 == 1 {
                        LdeMode::Recompute
                    } else {
                        LdeMode::Store
                    }
                },
                |_, _| {},
            );
            let traces = fx.traces.iter().cloned().map(TraceInput::Host).collect();
            let p = zkrv_stark::prove_with(&b, config, &airs(), &pre, traces, &fx.public, b"mix")
                .unwrap();
            (p.to_bytes(), b.commits.load(Ordering::SeqCst))
        };
        let (want, commits) = prove_with(0);
        println!("zk {}: {commits} commits", config.zk);
        for mask in 1..(1u32 << commits) {
            let (got, _) = prove_with(mask);
            assert_eq!(got, want, "zk {} mask {mask:#b}", config.zk);
        }
        verify_bytes(config, 0, &airs(), &pre, &fx.public, b"mix", &want).unwrap();
    }
}
