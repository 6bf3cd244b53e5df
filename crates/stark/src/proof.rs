//! The proof and its versioned binary format (hand-written codec; every length is checked against the
//! remaining bytes before anything is allocated).
//!
//! Layout (all integers little-endian; `u32` lengths; a field element is its canonical `u64`, rejected if
//! `>= p`; an `Ext3` is 3 field elements; a digest is 32 bytes):
//! ```text
//! "ZKRV" | version: u16 (= 5; 4 had FRI layers of arity 2 only, 3 sent one full path per query, 2 had no
//!          zk flag and no salts, 1 also opened a preprocessed round) | mode: u8 (bit 0: zk; bit 1: Poseidon2
//!          hash, docs/stark.md §11; other bits 0: 0 | 1 | 2 | 3)
//! statement_digest: digest
//! log_heights: len u32, then u8 each (log2 of the table's height; ABSENT_LOG_HEIGHT = 0xFF: absent)
//! main_root: digest
//! aux_root: flag u8 (0 | 1), then digest if 1
//! bus_sums: len u32, then Ext3 each
//! quotient_root: digest
//! opened: len u32 rounds { len u32 matrices { len u32 points { len u32 columns { Ext3 } } } }
//! pcs.fri_roots: len u32, digests
//! pcs.final_poly: len u32, Ext3 each
//! pcs.pow_nonce: u64
//! pcs.round_openings: len u32 { tree }      one per round (main, aux, quotient)
//! pcs.fri_openings:   len u32 { tree }      one per FRI layer (`pcs::fri_layers`: rows of 3·2^a elements)
//! tree = rows: len u32 matrices { rows } ; salts: len u32 levels { rows } (empty unless zk) ; siblings: len u32, digests
//! rows = len u32 { len u32, field elements }
//! ```
//! (`merkle::TreeOpenings`: each matrix's rows at the distinct rows the queries reach, ascending; the
//! multiproof's siblings level by level.)
//! ```text
//! ```
//! Trailing bytes are an error. In a Poseidon2 proof (mode bit 1) every digest but `statement_digest` (a
//! Keccak-256 of the statement under either hash) must be 4 canonical field elements
//! ([`crate::poseidon2::digest_from_bytes`]), so that each digest has one encoding.
//!
//! The hash takes bit 1 of the byte that was the zk flag (0 | 1): Keccak proofs are byte-identical to those
//! before the hash choice, and a verifier of that time refuses a Poseidon2 proof (bad zk flag byte).
//!
//! Absent tables (docs/stark.md §10) need no new field: the height byte `0xFF` marks one (no valid log
//! height is that large), and everything else is derived from the heights (an absent table has no opened
//! matrices, no bus sum, no Merkle rows). The version stays 5: proofs whose tables are all present are
//! byte-identical to those before absent tables, and a verifier of that time refuses a proof with an absent
//! table (`HeightOutOfRange`, log height 255) instead of misreading it.

use thiserror::Error;

use crate::field::{f_from_canonical_le_bytes, f_to_le_bytes, Ext3, F};
use crate::merkle::{Digest, MerkleHash, TreeOpenings};
use crate::pcs::{OpenedValues, PcsProof};

pub const MAGIC: &[u8; 4] = b"ZKRV";
/// Version 7 (2026-12-04): the machine's instance constants are AIR public values (docs/stark.md §1), which
/// the statement digest and the AIR digest bind, so a version-6 proof of the machine (constants in its
/// circuits) cannot verify here. Version 6: the AIRs of the precompile tables (docs/tables.md §6.19; the
/// 17-row SHA256 layout) changed every proof's challenges, so a version-5 proof (FRI layers folding by up to
/// 8) cannot verify here. The layout is that of version 5.
pub const VERSION: u16 = 7;
/// The height byte of an absent table in [`Proof::log_heights`] (docs/stark.md §10).
pub const ABSENT_LOG_HEIGHT: u8 = u8::MAX;

/// One proof of one execution (all tables).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// Zero-knowledge mode (docs/stark.md, "Zero knowledge"): the verifier must check it with a config of the
    /// same mode, and every Merkle path carries salts.
    pub zk: bool,
    /// The Merkle and transcript hash (mode bit 1; the verifier checks it against its configuration).
    pub hash: MerkleHash,
    /// Keccak-256 of the statement bytes and the public interactions (see [`crate::prover`]).
    pub statement_digest: Digest,
    /// log2 of every table's height, in table order; [`ABSENT_LOG_HEIGHT`] for an absent table
    /// ([`Proof::table_log_heights`]).
    pub log_heights: Vec<u8>,
    pub main_root: Digest,
    /// Present iff some table has bus interactions.
    pub aux_root: Option<Digest>,
    /// The bus sum of every table that has interactions, in table order.
    pub bus_sums: Vec<Ext3>,
    pub quotient_root: Digest,
    /// `[round][matrix][point][column]`, rounds in order main, aux (if any), quotient. Preprocessed
    /// columns are not opened (the verifier evaluates them, [`crate::preprocessed`]).
    pub opened: OpenedValues,
    pub pcs: PcsProof,
}

/// Why bytes are not a proof.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ProofFormatError {
    #[error("bad magic (the STARK proof does not start with `ZKRV`)")]
    Magic,
    #[error(
        "unsupported proof version {0} (this zkrv reads version {VERSION} only: its machine's AIRs, with the \
         precompile tables and the instance constants as public values, differ from the ones the proof was \
         made for; prove again with this zkrv)"
    )]
    Version(u16),
    #[error("truncated: needed {needed} bytes at offset {offset}, {remaining} left")]
    Truncated {
        offset: usize,
        needed: usize,
        remaining: usize,
    },
    #[error(
        "length {len} at offset {offset} exceeds what the remaining {remaining} bytes can hold"
    )]
    Length {
        offset: usize,
        len: usize,
        remaining: usize,
    },
    #[error("non-canonical field element at offset {0}")]
    NonCanonical(usize),
    #[error("bad {field} flag byte {value} at offset {offset} (0 or 1)")]
    Flag {
        /// The flag's name (`zk`, `aux root`).
        field: &'static str,
        offset: usize,
        value: u8,
    },
    #[error("{0} trailing bytes")]
    Trailing(usize),
    #[error(
        "bad mode byte {value:#04x} (bit 0: zk, bit 1: Poseidon2 hash; no other bit may be set)"
    )]
    Mode { value: u8 },
    #[error(
        "digest at offset {0} is not a Poseidon2 digest (a limb is not a canonical field element)"
    )]
    NonCanonicalDigest(usize),
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: usize) {
        self.0.extend((v as u32).to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend(v.to_le_bytes());
    }
    fn f(&mut self, v: F) {
        self.0.extend(f_to_le_bytes(v));
    }
    fn ext(&mut self, v: Ext3) {
        for c in v.0 {
            self.f(c);
        }
    }
    fn digest(&mut self, d: &Digest) {
        self.0.extend(d);
    }
    fn exts(&mut self, v: &[Ext3]) {
        self.u32(v.len());
        for e in v {
            self.ext(*e);
        }
    }
    fn digests(&mut self, v: &[Digest]) {
        self.u32(v.len());
        for d in v {
            self.digest(d);
        }
    }
    fn rows(&mut self, rows: &[Vec<F>]) {
        self.u32(rows.len());
        for r in rows {
            self.u32(r.len());
            for &x in r {
                self.f(x);
            }
        }
    }
    fn tree(&mut self, t: &TreeOpenings) {
        self.u32(t.rows.len());
        for m in &t.rows {
            self.rows(m);
        }
        self.u32(t.salts.len());
        for l in &t.salts {
            self.rows(l);
        }
        self.digests(&t.siblings);
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    /// Digests read from now on must be canonical Poseidon2 digests.
    p2_digests: bool,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }
    fn take(&mut self, k: usize) -> Result<&'a [u8], ProofFormatError> {
        if self.remaining() < k {
            return Err(ProofFormatError::Truncated {
                offset: self.pos,
                needed: k,
                remaining: self.remaining(),
            });
        }
        let s = &self.b[self.pos..self.pos + k];
        self.pos += k;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, ProofFormatError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ProofFormatError> {
        let s = self.take(2)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u64(&mut self) -> Result<u64, ProofFormatError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    /// A length prefix whose items take at least `min_item_bytes` each: rejected unless the remaining
    /// bytes can hold that many items.
    fn len(&mut self, min_item_bytes: usize) -> Result<usize, ProofFormatError> {
        let offset = self.pos;
        let s = self.take(4)?;
        let len = u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize;
        if len.saturating_mul(min_item_bytes.max(1)) > self.remaining() {
            return Err(ProofFormatError::Length {
                offset,
                len,
                remaining: self.remaining(),
            });
        }
        Ok(len)
    }
    fn f(&mut self) -> Result<F, ProofFormatError> {
        let offset = self.pos;
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        f_from_canonical_le_bytes(a).ok_or(ProofFormatError::NonCanonical(offset))
    }
    fn ext(&mut self) -> Result<Ext3, ProofFormatError> {
        Ok(Ext3([self.f()?, self.f()?, self.f()?]))
    }
    fn digest(&mut self) -> Result<Digest, ProofFormatError> {
        let offset = self.pos;
        let mut d = [0u8; 32];
        d.copy_from_slice(self.take(32)?);
        if self.p2_digests && crate::poseidon2::digest_from_bytes(&d).is_none() {
            return Err(ProofFormatError::NonCanonicalDigest(offset));
        }
        Ok(d)
    }
    fn exts(&mut self) -> Result<Vec<Ext3>, ProofFormatError> {
        let n = self.len(24)?;
        (0..n).map(|_| self.ext()).collect()
    }
    fn digests(&mut self) -> Result<Vec<Digest>, ProofFormatError> {
        let n = self.len(32)?;
        (0..n).map(|_| self.digest()).collect()
    }
    fn rows(&mut self) -> Result<Vec<Vec<F>>, ProofFormatError> {
        let n_rows = self.len(4)?;
        let mut rows = Vec::with_capacity(n_rows);
        for _ in 0..n_rows {
            let w = self.len(8)?;
            rows.push((0..w).map(|_| self.f()).collect::<Result<Vec<F>, _>>()?);
        }
        Ok(rows)
    }
    fn tree(&mut self) -> Result<TreeOpenings, ProofFormatError> {
        let n = self.len(4)?;
        let rows = (0..n).map(|_| self.rows()).collect::<Result<_, _>>()?;
        let n = self.len(4)?;
        let salts = (0..n).map(|_| self.rows()).collect::<Result<_, _>>()?;
        let siblings = self.digests()?;
        Ok(TreeOpenings {
            rows,
            salts,
            siblings,
        })
    }
    fn trees(&mut self) -> Result<Vec<TreeOpenings>, ProofFormatError> {
        let n = self.len(12)?;
        (0..n).map(|_| self.tree()).collect()
    }
    fn flag(&mut self, field: &'static str) -> Result<bool, ProofFormatError> {
        let offset = self.pos;
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(ProofFormatError::Flag {
                field,
                offset,
                value,
            }),
        }
    }
}

impl Proof {
    /// Every table's log height, in table order: `None` for an absent table ([`ABSENT_LOG_HEIGHT`]).
    /// Unchecked (the verifier checks the range and which tables may be absent).
    pub fn table_log_heights(&self) -> Vec<Option<usize>> {
        self.log_heights
            .iter()
            .map(|&h| (h != ABSENT_LOG_HEIGHT).then_some(h as usize))
            .collect()
    }

    /// Serialize (see the module docs for the layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend(MAGIC);
        w.0.extend(VERSION.to_le_bytes());
        w.u8(self.zk as u8 | (((self.hash == MerkleHash::Poseidon2) as u8) << 1));
        w.digest(&self.statement_digest);
        w.u32(self.log_heights.len());
        w.0.extend(&self.log_heights);
        w.digest(&self.main_root);
        match &self.aux_root {
            None => w.u8(0),
            Some(d) => {
                w.u8(1);
                w.digest(d);
            }
        }
        w.exts(&self.bus_sums);
        w.digest(&self.quotient_root);
        w.u32(self.opened.len());
        for round in &self.opened {
            w.u32(round.len());
            for mat in round {
                w.u32(mat.len());
                for pt in mat {
                    w.exts(pt);
                }
            }
        }
        w.digests(&self.pcs.fri_roots);
        w.exts(&self.pcs.final_poly);
        w.u64(self.pcs.pow_nonce);
        for trees in [&self.pcs.round_openings, &self.pcs.fri_openings] {
            w.u32(trees.len());
            for t in trees {
                w.tree(t);
            }
        }
        w.0
    }

    /// Parse, checking every length against the remaining bytes before allocating. Never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Proof, ProofFormatError> {
        let mut r = Reader {
            b: bytes,
            pos: 0,
            p2_digests: false,
        };
        if r.take(4)? != MAGIC {
            return Err(ProofFormatError::Magic);
        }
        let v = r.u16()?;
        if v != VERSION {
            return Err(ProofFormatError::Version(v));
        }
        let mode = r.u8()?;
        if mode > 3 {
            return Err(ProofFormatError::Mode { value: mode });
        }
        let zk = mode & 1 == 1;
        let hash = if mode & 2 == 0 {
            MerkleHash::Keccak256
        } else {
            MerkleHash::Poseidon2
        };
        let statement_digest = r.digest()?;
        r.p2_digests = hash == MerkleHash::Poseidon2;
        let n = r.len(1)?;
        let log_heights = r.take(n)?.to_vec();
        let main_root = r.digest()?;
        let aux_root = match r.flag("aux root")? {
            false => None,
            true => Some(r.digest()?),
        };
        let bus_sums = r.exts()?;
        let quotient_root = r.digest()?;
        let n_rounds = r.len(4)?;
        let mut opened = Vec::with_capacity(n_rounds);
        for _ in 0..n_rounds {
            let n_mats = r.len(4)?;
            let mut round = Vec::with_capacity(n_mats);
            for _ in 0..n_mats {
                let n_pts = r.len(4)?;
                let mut mat = Vec::with_capacity(n_pts);
                for _ in 0..n_pts {
                    mat.push(r.exts()?);
                }
                round.push(mat);
            }
            opened.push(round);
        }
        let fri_roots = r.digests()?;
        let final_poly = r.exts()?;
        let pow_nonce = r.u64()?;
        let round_openings = r.trees()?;
        let fri_openings = r.trees()?;
        if r.remaining() != 0 {
            return Err(ProofFormatError::Trailing(r.remaining()));
        }
        Ok(Proof {
            zk,
            hash,
            statement_digest,
            log_heights,
            main_root,
            aux_root,
            bus_sums,
            quotient_root,
            opened,
            pcs: PcsProof {
                fri_roots,
                final_poly,
                pow_nonce,
                round_openings,
                fri_openings,
            },
        })
    }
}
