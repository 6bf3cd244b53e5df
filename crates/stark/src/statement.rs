//! What the transcript absorbs before any commitment, shared by prover and verifier, and the helpers both
//! use for the protocol's fixed points (the out-of-domain point and the selectors there).

use crate::air::CompiledAir;
use crate::config::StarkConfig;
use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::logup::PublicInteraction;
use crate::merkle::{keccak256, Digest};
use crate::poly::domain_generator;
use crate::transcript::Transcript;

/// Transcript label of this protocol version.
pub const PROTOCOL_LABEL: &[u8] = b"zkrv-stark-v2";

fn encode_public(public: &[PublicInteraction], out: &mut Vec<u8>) {
    out.extend((public.len() as u64).to_le_bytes());
    for p in public {
        out.extend(p.bus.to_le_bytes());
        out.push(p.direction.to_u8());
        out.extend(crate::field::f_to_le_bytes(p.multiplicity));
        out.extend((p.values.len() as u64).to_le_bytes());
        for v in &p.values {
            out.extend(crate::field::f_to_le_bytes(*v));
        }
    }
}

/// `Keccak256(le8(len) || statement || public interactions)`, carried in the proof so that a verifier given
/// a different statement fails with a specific error before anything else.
pub fn statement_digest(statement: &[u8], public: &[PublicInteraction]) -> Digest {
    let mut buf = Vec::with_capacity(16 + statement.len());
    buf.extend((statement.len() as u64).to_le_bytes());
    buf.extend(statement);
    encode_public(public, &mut buf);
    keccak256(&buf)
}

/// Start the transcript: label, statement bytes, public interactions, configuration, and every table's
/// name, widths and log height.
pub fn start_transcript(
    config: &StarkConfig,
    airs: &[CompiledAir],
    log_heights: &[usize],
    public: &[PublicInteraction],
    statement: &[u8],
) -> Transcript {
    let mut t = Transcript::new(PROTOCOL_LABEL);
    t.observe_u64(statement.len() as u64);
    t.observe_bytes(statement);
    let mut buf = Vec::new();
    encode_public(public, &mut buf);
    t.observe_bytes(&buf);
    config.observe(&mut t);
    t.observe_u64(airs.len() as u64);
    for (air, &lh) in airs.iter().zip(log_heights) {
        t.observe_u64(air.name.len() as u64);
        t.observe_bytes(air.name.as_bytes());
        t.observe_u64(air.width as u64);
        t.observe_u64(air.preprocessed_width as u64);
        t.observe_u64(air.interactions.len() as u64);
        t.observe_u64(lh as u64);
    }
    t
}

/// Sample the out-of-domain point: the first `sample_ext` not in the base field (so outside `H_n` and every
/// LDE coset, which lie in `F`).
pub fn sample_zeta(t: &mut Transcript) -> Ext3 {
    loop {
        let z = t.sample_ext();
        if z.as_base().is_none() {
            return z;
        }
    }
}

/// Values at a point `x` outside `H_n`: `(Z_H(x), [L_0(x), L_{n-1}(x), x - ω^{n-1}])`.
/// `None` if `x` is in `H_n` (a denominator vanishes).
pub fn selectors_at(x: Ext3, log_n: usize) -> Option<(Ext3, [Ext3; 3])> {
    let n = 1u64 << log_n;
    let omega_last = domain_generator(log_n).exp_u64(n - 1);
    let zh = x.pow(n) - F::ONE;
    let n_inv = F::from_u64(n).inverse();
    let first = zh * n_inv * (x - F::ONE).try_inverse()?;
    let last = zh * (omega_last * n_inv) * (x - omega_last).try_inverse()?;
    Some((zh, [first, last, x - omega_last]))
}
