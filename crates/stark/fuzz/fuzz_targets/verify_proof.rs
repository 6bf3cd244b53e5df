//! Fuzz `verify_bytes` on the two-table test machine (tests/proto_common). The input is either raw proof
//! bytes (first byte even) or a patch list applied to a valid proof (first byte odd): each 5-byte record
//! `offset: u32 LE, xor: u8` flips bits at `offset mod len`, and a trailing record shorter than 5 bytes
//! truncates the proof at `len - (its first byte)`. The verifier must never panic and never accept a changed
//! proof.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use zkrv_stark::{preprocess, prove, verify_bytes, PreprocessedData, Proof, StarkConfig};

#[path = "../../tests/proto_common/mod.rs"]
mod proto_common;

const STMT: &[u8] = b"fuzz";

struct Ctx {
    config: StarkConfig,
    fx: proto_common::Fixture,
    pre: PreprocessedData,
    bytes: Vec<u8>,
}

fn ctx() -> &'static Ctx {
    static CTX: OnceLock<Ctx> = OnceLock::new();
    CTX.get_or_init(|| {
        let config = StarkConfig::default();
        let fx = proto_common::fixture(3);
        let pre = preprocess(&proto_common::airs(), fx.preprocessed.clone()).unwrap();
        let proof = prove(
            &config,
            &proto_common::airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            STMT,
        )
        .unwrap();
        Ctx {
            config,
            fx,
            pre,
            bytes: proof.to_bytes(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let c = ctx();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let input = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let mut b = c.bytes.clone();
        let mut recs = rest.chunks(5);
        for r in recs.by_ref() {
            if r.len() == 5 {
                let off = u32::from_le_bytes([r[0], r[1], r[2], r[3]]) as usize % b.len();
                b[off] ^= r[4];
            } else {
                let cut = (r[0] as usize).min(b.len());
                b.truncate(b.len() - cut);
            }
        }
        b
    };
    let r = verify_bytes(
        &c.config,
        0,
        &proto_common::airs(),
        &c.pre,
        &c.fx.public,
        STMT,
        &input,
    );
    if r.is_ok() {
        assert_eq!(
            Proof::from_bytes(&input).ok(),
            Proof::from_bytes(&c.bytes).ok()
        );
    }
});
