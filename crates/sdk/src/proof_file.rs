//! The `.zkrv` proof file: what a verifier needs besides the ELF.
//!
//! Layout (integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `ZKRVPRF\0` |
//! | 4 | format version (u32, [`VERSION`]) |
//! | 8 | STARK parameters: log_blowup (u8), num_queries (u16), query_grinding_bits (u8), log_final_poly_len (u8), log_folding_arity (u8), log_max_multiplicity (u8), mode (u8: bit 0 zero-knowledge, bit 1 Poseidon2 Merkle/transcript hash, docs/stark.md §11; 0-3) |
//! | 8 + s | statement length s (u64), then `zkrv_machine::Statement::to_bytes` (program commitment 32, exit code u32, output length u64, output) |
//! | 8 + p | proof length p (u64), then `zkrv_machine::Proof::to_bytes` |
//!
//! Version 4 (segments, [`VERSION_SEGMENTED`]) has the same header and statement, then the segments.
//! Nothing may follow. [`decode_any`] never panics: every malformed input is a [`FileError`] naming the
//! field at fault.

use thiserror::Error;
use zkrv_machine::segment::SegmentProof;
use zkrv_machine::{Proof, Statement};
use zkrv_stark::merkle::MerkleHash;
use zkrv_stark::pcs::FriConfig;
use zkrv_stark::{SecurityPreset, StarkConfig};

/// File magic.
pub const MAGIC: [u8; 8] = *b"ZKRVPRF\0";
/// Format version of a one-segment proof (this build writes and reads it).
pub const VERSION: u32 = 3;
/// Format version of a multi-segment proof (continuations, docs/continuations.md): the same header and
/// statement, then `segment rows u64 || segment count u64 || per segment: length u64 ||
/// zkrv_machine::segment::SegmentProof::to_bytes`.
pub const VERSION_SEGMENTED: u32 = 4;

/// A decoded proof file of either version ([`decode_any`]).
#[allow(clippy::large_enum_variant)] // one per file
#[derive(Clone, Debug)]
pub enum Decoded {
    /// Version 3: one proof of the whole run.
    Single {
        /// What is proven.
        statement: Statement,
        /// The proof.
        proof: Proof,
        /// Its STARK parameters (a preset's, in the file's zk mode).
        config: StarkConfig,
    },
    /// Version 4: the run's segments, in order.
    Segmented {
        /// What the whole run proves.
        statement: Statement,
        /// CPU rows per segment.
        segment_rows: u64,
        /// The segments' proofs, in run order.
        segments: Vec<SegmentProof>,
        /// Their STARK parameters.
        config: StarkConfig,
    },
}

/// What a format version holds ("one proof", "segments"), for messages.
fn version_kind(v: u32) -> &'static str {
    match v {
        VERSION => "one proof",
        VERSION_SEGMENTED => "segments",
        _ => "unknown",
    }
}

/// Why a file is not a readable zkrv proof.
#[derive(Debug, Error)]
pub enum FileError {
    /// The file does not start with the magic.
    #[error("not a zkrv proof file (no `ZKRVPRF` magic at the start)")]
    NotZkrv,
    /// A format version this build does not read.
    #[error(
        "proof file format version {found}, but this zkrv reads versions {VERSION} (one proof) and \
         {VERSION_SEGMENTED} (segments) only"
    )]
    Version {
        /// The file's version field.
        found: u32,
    },
    /// The version field names one of the versions this build reads, but the file is laid out as the
    /// other one: the version field is corrupt (or was edited).
    #[error(
        "the version field says {found} ({}), but the file is laid out as version {layout} ({}): its \
         version field is corrupt",
        version_kind(*found),
        version_kind(*layout)
    )]
    VersionMismatch {
        /// The version field.
        found: u32,
        /// The version the layout is.
        layout: u32,
    },
    /// The file ends inside a fixed-size field (named).
    #[error("truncated proof file: {0} is cut short")]
    Truncated(&'static str),
    /// A section's length field exceeds the bytes that follow it.
    #[error(
        "{what} length field says {len} bytes, but {remaining} bytes follow (a truncated file or a \
         corrupt length)"
    )]
    Length {
        /// The section.
        what: &'static str,
        /// Its length field.
        len: u64,
        /// Bytes that follow the field.
        remaining: usize,
    },
    /// A version-4 segment count the rest of the file cannot hold (each segment takes at least its 8-byte
    /// length).
    #[error(
        "segment count {count} needs at least {} bytes, but {remaining} bytes follow (a truncated file or \
         a corrupt count)",
        u128::from(*count) * 8
    )]
    SegmentCount {
        /// The segment count field.
        count: u64,
        /// Bytes that follow it.
        remaining: usize,
    },
    /// Bytes after the last section.
    #[error("{0} trailing bytes after the proof")]
    Trailing(usize),
    /// The statement section does not decode (why).
    #[error("malformed statement: {0}")]
    Statement(String),
    /// The proof section does not decode (why).
    #[error("malformed proof: {0}")]
    Proof(String),
    /// The header's STARK parameters are not a preset's.
    #[error("proof uses STARK parameters {found}, not those of a preset this verifier knows: {expected}")]
    Params {
        /// The file's parameters.
        found: String,
        /// The presets this verifier knows.
        expected: String,
    },
    /// The header's mode byte has a bit other than zk (0) and Poseidon2 (1).
    #[error(
        "proof header: mode byte {found}, expected 0-3 (bit 0: zero-knowledge flag, bit 1: Poseidon2 hash)"
    )]
    ZkByte {
        /// The byte.
        found: u8,
    },
    /// Encoding: parameters a header field cannot hold (which).
    #[error("STARK parameters out of the file format's range: {0}")]
    Unencodable(String),
    #[error("the header's zk flag ({header}) disagrees with the proof's ({proof})")]
    /// The header's zk flag and the proof's zk mode differ.
    ZkFlag {
        /// The header's flag.
        header: bool,
        /// The proof's mode.
        proof: bool,
    },
    /// The header's hash and the proof's hash differ.
    #[error("the header's hash ({}) disagrees with the proof's ({})", header.name(), proof.name())]
    HashFlag {
        /// The header's hash.
        header: MerkleHash,
        /// The proof's hash.
        proof: MerkleHash,
    },
}

/// The 8 parameter bytes of `config` (all fields absorbed by the transcript).
fn params_bytes(config: &StarkConfig) -> Result<[u8; 8], FileError> {
    let f = &config.fri;
    let b = |v: usize, what: &str| u8::try_from(v).map_err(|_| FileError::Unencodable(what.into()));
    let q = u16::try_from(f.num_queries)
        .map_err(|_| FileError::Unencodable("num_queries".into()))?
        .to_le_bytes();
    Ok([
        b(f.log_blowup, "log_blowup")?,
        q[0],
        q[1],
        b(f.query_grinding_bits as usize, "query_grinding_bits")?,
        b(f.log_final_poly_len, "log_final_poly_len")?,
        b(f.log_folding_arity, "log_folding_arity")?,
        b(config.log_max_multiplicity as usize, "log_max_multiplicity")?,
        config.zk as u8 | (((config.hash == MerkleHash::Poseidon2) as u8) << 1),
    ])
}

fn params_config(p: &[u8; 8]) -> StarkConfig {
    StarkConfig {
        fri: FriConfig {
            log_blowup: p[0] as usize,
            num_queries: u16::from_le_bytes([p[1], p[2]]) as usize,
            query_grinding_bits: p[3] as u32,
            log_final_poly_len: p[4] as usize,
            log_folding_arity: p[5] as usize,
        },
        log_max_multiplicity: p[6] as u32,
        debug_check: false,
        zk: p[7] & 1 == 1,
        zk_seed: None,
        hash: if p[7] & 2 == 0 {
            MerkleHash::Keccak256
        } else {
            MerkleHash::Poseidon2
        },
    }
}

fn describe(c: &StarkConfig) -> String {
    format!(
        "(blowup 2^{}, {} queries, {} grinding bits, final poly 2^{}, arity 2^{}, multiplicity < 2^{})",
        c.fri.log_blowup,
        c.fri.num_queries,
        c.fri.query_grinding_bits,
        c.fri.log_final_poly_len,
        c.fri.log_folding_arity,
        c.log_max_multiplicity
    )
}

/// Serializes a proof file.
pub fn encode(
    config: &StarkConfig,
    statement: &Statement,
    proof: &Proof,
) -> Result<Vec<u8>, FileError> {
    let s = statement.to_bytes();
    let p = proof.to_bytes();
    let mut v = Vec::with_capacity(36 + s.len() + p.len());
    v.extend_from_slice(&MAGIC);
    v.extend_from_slice(&VERSION.to_le_bytes());
    v.extend_from_slice(&params_bytes(config)?);
    v.extend_from_slice(&(s.len() as u64).to_le_bytes());
    v.extend_from_slice(&s);
    v.extend_from_slice(&(p.len() as u64).to_le_bytes());
    v.extend_from_slice(&p);
    Ok(v)
}

/// Serializes a multi-segment proof file (version [`VERSION_SEGMENTED`]).
pub fn encode_segmented(
    config: &StarkConfig,
    statement: &Statement,
    segment_rows: u64,
    segments: &[SegmentProof],
) -> Result<Vec<u8>, FileError> {
    let s = statement.to_bytes();
    let mut v = Vec::new();
    v.extend_from_slice(&MAGIC);
    v.extend_from_slice(&VERSION_SEGMENTED.to_le_bytes());
    v.extend_from_slice(&params_bytes(config)?);
    v.extend_from_slice(&(s.len() as u64).to_le_bytes());
    v.extend_from_slice(&s);
    v.extend_from_slice(&segment_rows.to_le_bytes());
    v.extend_from_slice(&(segments.len() as u64).to_le_bytes());
    for seg in segments {
        let b = seg.to_bytes();
        v.extend_from_slice(&(b.len() as u64).to_le_bytes());
        v.extend_from_slice(&b);
    }
    Ok(v)
}

/// The format version of `bytes` after checking the magic: [`VERSION`] or [`VERSION_SEGMENTED`], else
/// an error ([`FileError::NotZkrv`], [`FileError::Truncated`], [`FileError::Version`]).
fn read_version(bytes: &[u8]) -> Result<u32, FileError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        // A prefix of the magic is a truncated proof file, anything else is some other file.
        if !bytes.is_empty() && MAGIC.starts_with(bytes) {
            return Err(FileError::Truncated("magic"));
        }
        return Err(FileError::NotZkrv);
    }
    let v = bytes
        .get(MAGIC.len()..MAGIC.len() + 4)
        .ok_or(FileError::Truncated("version"))?;
    let found = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
    if found != VERSION && found != VERSION_SEGMENTED {
        return Err(FileError::Version { found });
    }
    Ok(found)
}

/// Parses a proof file of version 3 (one proof) or 4 (segments). Never panics.
///
/// A file whose version field names one version but whose contents are laid out as the other (the field
/// was changed) is [`FileError::VersionMismatch`], whichever way round.
pub fn decode_any(bytes: &[u8]) -> Result<Decoded, FileError> {
    let version = read_version(bytes)?;
    let res = decode_as(bytes, version);
    if res.is_err() {
        let other = if version == VERSION {
            VERSION_SEGMENTED
        } else {
            VERSION
        };
        if decode_as(bytes, other).is_ok() {
            return Err(FileError::VersionMismatch {
                found: version,
                layout: other,
            });
        }
    }
    res
}

/// Parses the bytes after the magic and version field as a file of `version` (3 or 4).
fn decode_as(bytes: &[u8], version: u32) -> Result<Decoded, FileError> {
    let mut r = Reader {
        rest: bytes.get(MAGIC.len() + 4..).unwrap_or_default(),
    };
    let mut p = [0u8; 8];
    p.copy_from_slice(r.take(8, "STARK parameters")?);
    let config = checked_params(&p)?;
    let statement = parse_statement(r.section("statement")?)?;
    if version == VERSION {
        let proof =
            Proof::from_bytes(r.section("proof")?).map_err(|e| FileError::Proof(e.to_string()))?;
        if !r.rest.is_empty() {
            return Err(FileError::Trailing(r.rest.len()));
        }
        if proof.stark.zk != config.zk {
            return Err(FileError::ZkFlag {
                header: config.zk,
                proof: proof.stark.zk,
            });
        }
        if proof.stark.hash != config.hash {
            return Err(FileError::HashFlag {
                header: config.hash,
                proof: proof.stark.hash,
            });
        }
        return Ok(Decoded::Single {
            statement,
            proof,
            config,
        });
    }
    let segment_rows = r.u64("segment rows")?;
    let count = r.u64("segment count")?;
    if count < 2 {
        return Err(FileError::Proof(format!(
            "a version-4 file holds at least 2 segments, this one {count} (a one-segment run is a \
             version-3 file)"
        )));
    }
    // Each segment takes at least its 8-byte length.
    if count > (r.rest.len() / 8) as u64 {
        return Err(FileError::SegmentCount {
            count,
            remaining: r.rest.len(),
        });
    }
    let mut segments = Vec::with_capacity(count as usize);
    for i in 0..count {
        let seg = SegmentProof::from_bytes(r.section("segment")?)
            .map_err(|e| FileError::Proof(format!("segment {i}: {e}")))?;
        if seg.stark.zk != config.zk {
            return Err(FileError::ZkFlag {
                header: config.zk,
                proof: seg.stark.zk,
            });
        }
        if seg.stark.hash != config.hash {
            return Err(FileError::HashFlag {
                header: config.hash,
                proof: seg.stark.hash,
            });
        }
        segments.push(seg);
    }
    if !r.rest.is_empty() {
        return Err(FileError::Trailing(r.rest.len()));
    }
    Ok(Decoded::Segmented {
        statement,
        segment_rows,
        segments,
        config,
    })
}

/// The configuration of 8 parameter bytes, if they are those of a preset (either zk mode).
fn checked_params(p: &[u8; 8]) -> Result<StarkConfig, FileError> {
    let config = params_config(p);
    if p[7] > 3 {
        return Err(FileError::ZkByte { found: p[7] });
    }
    if SecurityPreset::of(&config).is_none() {
        return Err(FileError::Params {
            found: describe(&config),
            expected: SecurityPreset::ALL
                .iter()
                .map(|s| format!("{} {}", s.name(), describe(&s.config(false))))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(config)
}

/// A cursor that reports which field ran out.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], FileError> {
        if self.rest.len() < n {
            return Err(FileError::Truncated(what));
        }
        let (a, b) = self.rest.split_at(n);
        self.rest = b;
        Ok(a)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, FileError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A length-prefixed section: a length the rest cannot hold is [`FileError::Length`].
    fn section(&mut self, what: &'static str) -> Result<&'a [u8], FileError> {
        let len = self.u64(what)?;
        match usize::try_from(len) {
            Ok(n) if n <= self.rest.len() => self.take(n, what),
            _ => Err(FileError::Length {
                what,
                len,
                remaining: self.rest.len(),
            }),
        }
    }
}

fn parse_statement(b: &[u8]) -> Result<Statement, FileError> {
    let bad = |m: &str| FileError::Statement(m.to_string());
    if b.len() < 44 {
        return Err(bad("shorter than its 44-byte header"));
    }
    let mut program = [0u8; 32];
    program.copy_from_slice(&b[..32]);
    let exit_code = u32::from_le_bytes([b[32], b[33], b[34], b[35]]);
    let mut l = [0u8; 8];
    l.copy_from_slice(&b[36..44]);
    let len = u64::from_le_bytes(l);
    if len > zkrv_machine::MAX_PUBLIC_OUTPUT {
        return Err(bad(&format!(
            "output length field says {len} bytes, more than any provable run writes (at most \
             MAX_OUTPUT = {} bytes in total, one proof or all segments, docs/abi.md)",
            zkrv_machine::MAX_PUBLIC_OUTPUT
        )));
    }
    let output = &b[44..];
    if output.len() as u64 != len {
        return Err(bad(&format!(
            "output length field says {len} bytes, {} present",
            output.len()
        )));
    }
    Ok(Statement {
        program,
        exit_code,
        output: output.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_errors() {
        let c = StarkConfig::default();
        assert!(matches!(decode_any(b""), Err(FileError::NotZkrv)));
        assert!(matches!(
            decode_any(b"\x7fELF...."),
            Err(FileError::NotZkrv)
        ));
        assert!(matches!(decode_any(b"ZKRV"), Err(FileError::Truncated(_))));
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&7u32.to_le_bytes());
        assert!(matches!(
            decode_any(&v),
            Err(FileError::Version { found: 7 })
        ));
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&VERSION.to_le_bytes());
        v.extend_from_slice(&params_bytes(&c).unwrap());
        assert!(matches!(decode_any(&v), Err(FileError::Truncated(_))));
        // A huge section length is named (not allocated).
        v.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            decode_any(&v),
            Err(FileError::Length {
                what: "statement",
                len: u64::MAX,
                remaining: 0
            })
        ));
        let mut weak = c.clone();
        weak.fri.num_queries = 1;
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&VERSION.to_le_bytes());
        v.extend_from_slice(&params_bytes(&weak).unwrap());
        assert!(matches!(decode_any(&v), Err(FileError::Params { .. })));
        // A mode byte above 3 is named as such (not as unknown parameters).
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&VERSION.to_le_bytes());
        let mut p = params_bytes(&c).unwrap();
        p[7] = 4;
        v.extend_from_slice(&p);
        let e = decode_any(&v)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("mode byte 4"), "{e}");
    }

    /// A segment count near 2^63 is shown with its true byte need (8 per segment), not a saturated u64.
    #[test]
    fn segment_count_message_does_not_overflow() {
        let e = FileError::SegmentCount {
            count: 9_223_372_036_854_775_814,
            remaining: 40,
        }
        .to_string();
        assert!(
            e.starts_with("segment count 9223372036854775814 needs at least 73786976294838206512 bytes, but 40"),
            "{e}"
        );
        assert!(!e.contains(&u64::MAX.to_string()), "{e}");
    }

    #[test]
    fn params_roundtrip() {
        for preset in SecurityPreset::ALL {
            for zk in [false, true] {
                for hash in MerkleHash::ALL {
                    let c = preset.config(zk).with_hash(hash);
                    assert_eq!(params_config(&params_bytes(&c).unwrap()), c);
                }
            }
        }
    }
}
