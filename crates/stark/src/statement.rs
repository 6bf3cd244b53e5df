//! What the transcript absorbs before any commitment, shared by prover and verifier, and the helpers both
//! use for the protocol's fixed points (the out-of-domain point and the selectors there).

use crate::air::CompiledAir;
use crate::config::StarkConfig;
use crate::field::{Ext3, Field, PrimeCharacteristicRing, F};
use crate::logup::PublicSource;
use crate::merkle::{keccak256, Digest};
use crate::poly::domain_generator;
use crate::transcript::Transcript;

/// Transcript label of this protocol version.
pub const PROTOCOL_LABEL: &[u8] = b"zkrv-stark-v3";

/// One piece of a public interaction's encoding ([`public_pieces`]): bytes fixed by the interaction's bus,
/// direction and number of values, or a field element (the multiplicity, a value) as its canonical 8 LE
/// bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublicPiece {
    Bytes([u8; 8], usize),
    Field(F),
}

impl PublicPiece {
    /// The piece's bytes.
    pub fn bytes(&self) -> ([u8; 8], usize) {
        match *self {
            PublicPiece::Bytes(b, n) => (b, n),
            PublicPiece::Field(x) => (crate::field::f_to_le_bytes(x), 8),
        }
    }
}

/// One public interaction's encoding, in order: `le4(bus) || direction (1)`, the multiplicity,
/// `le8(values.len())`, the values (the field elements 8 LE bytes each). The one definition of the
/// encoding [`statement_digest`] hashes and [`start_transcript`] absorbs (and the recursion program packs
/// from its public-input cells, `crate::recursion::verifier`).
pub fn public_pieces(p: &crate::logup::PublicRef<'_>) -> Vec<PublicPiece> {
    let mut head = [0u8; 8];
    head[..4].copy_from_slice(&p.bus.to_le_bytes());
    head[4] = p.direction.to_u8();
    let mut v = vec![
        PublicPiece::Bytes(head, 5),
        PublicPiece::Field(p.multiplicity),
        PublicPiece::Bytes((p.values.len() as u64).to_le_bytes(), 8),
    ];
    v.extend(p.values.iter().map(|&x| PublicPiece::Field(x)));
    v
}

/// The encoding of the public interactions, fed to `out` in pieces (one interaction at a time, so that
/// the bytes of a long run of them are never held at once): `le8(count)`, then per interaction its
/// [`public_pieces`] concatenated.
fn encode_public<P: PublicSource + ?Sized>(public: &P, out: &mut dyn FnMut(&[u8])) {
    out(&(public.count() as u64).to_le_bytes());
    let mut buf = Vec::with_capacity(64);
    public.for_each(&mut |p| {
        buf.clear();
        for piece in public_pieces(&p) {
            let (b, n) = piece.bytes();
            buf.extend(&b[..n]);
        }
        out(&buf);
    });
}

/// The encoding of the AIRs' public values ([`CompiledAir::public_values`]), appended to `out`: in table
/// order, `le8(tables)`, then per table `le8(count)` and its values (canonical, 8 LE bytes each); nothing
/// when no AIR has public values (so the digests of such AIRs, whose other encodings are self-delimiting,
/// are those of before public values existed). The one definition [`statement_digest`] hashes and
/// [`air_digest`] absorbs.
pub fn encode_public_values(airs: &[CompiledAir], out: &mut Vec<u8>) {
    if airs.iter().all(|a| a.public_values.is_empty()) {
        return;
    }
    out.extend((airs.len() as u64).to_le_bytes());
    for a in airs {
        out.extend((a.public_values.len() as u64).to_le_bytes());
        for &v in &a.public_values {
            out.extend(crate::field::f_to_le_bytes(v));
        }
    }
}

/// `Keccak256(le8(len) || statement || public interactions || AIR public values)` (the last as
/// [`encode_public_values`] of `airs`), carried in the proof so that a verifier given a different
/// statement, other public interactions or AIRs with other public values (e.g. another start pc of a
/// segment) fails with a specific error ([`crate::VerifyError::Statement`]) before anything else.
pub fn statement_digest<P: PublicSource + ?Sized>(
    statement: &[u8],
    public: &P,
    airs: &[CompiledAir],
) -> Digest {
    use tiny_keccak::{Hasher, Keccak};
    let mut h = Keccak::v256();
    h.update(&(statement.len() as u64).to_le_bytes());
    h.update(statement);
    encode_public(public, &mut |b| h.update(b));
    let mut pv = Vec::new();
    encode_public_values(airs, &mut pv);
    h.update(&pv);
    let mut out = [0u8; 32];
    h.finalize(&mut out);
    out
}

/// Keccak-256 of the compiled AIRs, in order: for each table its name, widths, every circuit node (tag and
/// operands, [`crate::symbolic::Node`]; a public value is tag 10 with its index), the constraint roots, the
/// interactions (bus, direction, value and multiplicity nodes) and the LogUp grouping; then the AIRs'
/// public values ([`encode_public_values`]), so that the transcript binds them too. Absorbed by [`start_transcript`] (defence in depth: a
/// verifier built with other constraints derives other challenges even where the shapes agree).
pub fn air_digest(airs: &[CompiledAir]) -> Digest {
    use crate::symbolic::Node;
    let mut b: Vec<u8> = Vec::new();
    let u = |b: &mut Vec<u8>, v: u64| b.extend(v.to_le_bytes());
    u(&mut b, airs.len() as u64);
    for a in airs {
        u(&mut b, a.name.len() as u64);
        b.extend(a.name.as_bytes());
        u(&mut b, a.width as u64);
        u(&mut b, a.preprocessed_width as u64);
        u(&mut b, a.circuit.nodes.len() as u64);
        for n in &a.circuit.nodes {
            let (tag, x, y) = match *n {
                Node::Const(c) => (0u64, c, 0),
                Node::Main { col, next } => (1, col as u64, next as u64),
                Node::Preprocessed { col, next } => (2, col as u64, next as u64),
                Node::IsFirstRow => (3, 0, 0),
                Node::IsLastRow => (4, 0, 0),
                Node::IsTransition => (5, 0, 0),
                Node::Add(l, r) => (6, l as u64, r as u64),
                Node::Sub(l, r) => (7, l as u64, r as u64),
                Node::Mul(l, r) => (8, l as u64, r as u64),
                Node::Neg(l) => (9, l as u64, 0),
                Node::Public(i) => (10, i as u64, 0),
            };
            for v in [tag, x, y] {
                u(&mut b, v);
            }
        }
        u(&mut b, a.constraints.len() as u64);
        for c in &a.constraints {
            u(&mut b, c.node as u64);
        }
        u(&mut b, a.interactions.len() as u64);
        for i in &a.interactions {
            u(&mut b, i.bus as u64);
            u(&mut b, i.direction.to_u8() as u64);
            u(&mut b, i.multiplicity as u64);
            u(&mut b, i.values.len() as u64);
            for &v in &i.values {
                u(&mut b, v as u64);
            }
        }
        u(&mut b, a.logup.groups.len() as u64);
        for g in &a.logup.groups {
            u(&mut b, g.len() as u64);
            for &k in g {
                u(&mut b, k as u64);
            }
        }
        u(&mut b, a.num_quotient_chunks as u64);
    }
    encode_public_values(airs, &mut b);
    keccak256(&b)
}

/// The log height the transcript absorbs for an absent table (docs/stark.md §10); no present table has it.
pub const ABSENT_TRANSCRIPT_HEIGHT: u64 = u64::MAX;

/// Start the transcript of `config.hash` ([`Transcript::with_hash`]): label, statement bytes, public interactions, configuration, every table's
/// name, widths and log height (`None`: absent, observed as [`ABSENT_TRANSCRIPT_HEIGHT`], so the set of
/// present tables is bound before any challenge), and the [`air_digest`] of the tables (all of them,
/// absent ones included).
pub fn start_transcript<P: PublicSource + ?Sized>(
    config: &StarkConfig,
    airs: &[CompiledAir],
    log_heights: &[Option<usize>],
    public: &P,
    statement: &[u8],
) -> Transcript {
    let mut t = Transcript::with_hash(config.hash, PROTOCOL_LABEL);
    observe_start(&mut t, config, airs, log_heights, public, statement);
    t
}

/// What [`start_transcript`] absorbs after [`Transcript::with_hash`], into any [`StartSink`] (the native
/// transcript, or the recursion program's circuit transcript, which takes the statement and the public
/// interactions from its public-input cells).
pub fn observe_start<S: StartSink + ?Sized, P: PublicSource + ?Sized>(
    t: &mut S,
    config: &StarkConfig,
    airs: &[CompiledAir],
    log_heights: &[Option<usize>],
    public: &P,
    statement: &[u8],
) {
    t.observe_u64(statement.len() as u64);
    t.observe_statement(statement);
    t.observe_bytes(&(public.count() as u64).to_le_bytes());
    public.for_each(&mut |p| t.observe_public(&public_pieces(&p)));
    config.observe(t);
    t.observe_u64(airs.len() as u64);
    for (air, &lh) in airs.iter().zip(log_heights) {
        t.observe_u64(air.name.len() as u64);
        t.observe_bytes(air.name.as_bytes());
        t.observe_u64(air.width as u64);
        t.observe_u64(air.preprocessed_width as u64);
        t.observe_u64(air.interactions.len() as u64);
        t.observe_u64(lh.map_or(ABSENT_TRANSCRIPT_HEIGHT, |h| h as u64));
    }
    t.observe_bytes(b"airs");
    t.observe_bytes(&air_digest(airs));
}

/// What the transcript start is absorbed into ([`observe_start`]): `observe_bytes` and `observe_u64` as
/// [`Transcript`]'s (the bytes of one call packed on their own), the statement bytes, and one public
/// interaction's [`public_pieces`] (absorbed as the bytes of one call).
pub trait StartSink {
    fn observe_bytes(&mut self, bytes: &[u8]);
    fn observe_u64(&mut self, x: u64);
    fn observe_statement(&mut self, statement: &[u8]) {
        self.observe_bytes(statement);
    }
    fn observe_public(&mut self, pieces: &[PublicPiece]) {
        let mut buf = Vec::with_capacity(8 * pieces.len());
        for piece in pieces {
            let (b, n) = piece.bytes();
            buf.extend(&b[..n]);
        }
        self.observe_bytes(&buf);
    }
}

impl StartSink for Transcript {
    fn observe_bytes(&mut self, bytes: &[u8]) {
        Transcript::observe_bytes(self, bytes);
    }
    fn observe_u64(&mut self, x: u64) {
        Transcript::observe_u64(self, x);
    }
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
