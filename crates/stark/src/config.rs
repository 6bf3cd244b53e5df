//! Protocol configuration and its security presets (estimator in [`crate::security`], docs/stark.md).

use std::fmt;

use crate::merkle::MerkleHash;
use crate::pcs::FriConfig;

/// Everything that parameterizes a proof. All fields except `debug_check` and `zk_seed` are absorbed by the
/// transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StarkConfig {
    /// Zero-knowledge mode (docs/stark.md, "Zero knowledge"): salted Merkle leaves, randomized traces
    /// (degree `< 2n`), randomized quotient chunks and a random FRI codeword. Part of the transcript and of
    /// the proof header. Max constraint degree `blowup` instead of `blowup + 1`; every table needs at
    /// least `2^zk::min_log_height(num_queries)` rows.
    pub zk: bool,
    /// Prover only, zk mode: `None` (default) draws a fresh 256-bit seed from the OS for every proof;
    /// `Some(s)` uses the fixed, public test seed `s` ([`crate::zk::ZkRng::from_test_seed`]): deterministic
    /// proofs for tests and CPU/GPU parity checks, **not** zero-knowledge.
    pub zk_seed: Option<u64>,
    pub fri: FriConfig,
    /// Every bus multiplicity must lie in `[0, 2^log_max_multiplicity)` (the no-wrap bound of LogUp, see
    /// [`crate::logup`]).
    pub log_max_multiplicity: u32,
    /// Run the debug checker ([`crate::check`]) before proving (prover only; not part of the statement).
    pub debug_check: bool,
    /// The Merkle and transcript hash (docs/stark.md §11): Keccak-256 by default, Poseidon2 for proofs
    /// that a recursion AIR verifies. Recorded in the proof header; a verifier refuses a proof of another
    /// hash ([`crate::VerifyError::HashMismatch`]).
    pub hash: MerkleHash,
}

impl Default for StarkConfig {
    /// The 100-bit preset ([`SecurityPreset::Bits100`]) without zero knowledge.
    fn default() -> Self {
        SecurityPreset::Bits100.config(false)
    }
}

/// The parameter sets zkrv proves with. The 100- and 128-bit presets meet their level in the Johnson
/// regime ([`crate::security`], BCHKS25) with at least 1 bit to spare for every trace height up to
/// `2^MAX_LOG_HEIGHT`, in zk and non-zk mode (pinned by `crates/machine/tests/security.rs`); `Dev` is fast
/// and below 100 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecurityPreset {
    /// Blowup 4, 44 queries, 16 grinding bits, FRI arity up to 8: about 59 bits provable. Development and
    /// tests only.
    Dev,
    /// The default: blowup 8, 55 queries, 20 grinding bits: >= 100 bits provable (>= 102.1 before
    /// flooring).
    Bits100,
    /// Blowup 4, 82 queries, 20 grinding bits: >= 100 bits provable, as [`SecurityPreset::Bits100`], for
    /// half the LDE and Merkle work per committed cell and ~1.5x the query openings: 36% faster GPU proving
    /// and ~40% larger proofs at 2^22 rows (docs/PERF.md "Blowup 4 against blowup 8"). For proofs that a
    /// recursion layer aggregates, or where prove time matters more than proof size. Max constraint degree
    /// 5 (4 in zk mode).
    Bits100Fast,
    /// Blowup 8, 78 queries, 20 grinding bits: 128 bits provable (>= 129.6 before flooring and the
    /// Keccak-256 collision bound, which caps every level at 128).
    Bits128,
}

impl SecurityPreset {
    /// Every preset, by level (weakest first; of one level, the smaller proofs first).
    pub const ALL: [SecurityPreset; 4] =
        [Self::Dev, Self::Bits100, Self::Bits100Fast, Self::Bits128];

    /// The name the CLI takes (`--security dev|100|100-fast|128`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Dev => "dev",
            Self::Bits100 => "100",
            Self::Bits100Fast => "100-fast",
            Self::Bits128 => "128",
        }
    }

    /// The preset called `name` ([`SecurityPreset::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The level the preset is built to meet (bits provable, Johnson regime); `None` for `Dev`.
    pub fn target_bits(self) -> Option<u32> {
        match self {
            Self::Dev => None,
            Self::Bits100 | Self::Bits100Fast => Some(100),
            Self::Bits128 => Some(128),
        }
    }

    /// The weakest preset built to meet `bits` bits provable ([`SecurityPreset::target_bits`]): the 100-bit
    /// preset up to 100, the 128-bit one from 101 to 128; `None` above 128 (no preset reaches it).
    pub fn weakest_meeting(bits: u32) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.target_bits().is_some_and(|t| t >= bits))
    }

    /// The FRI parameters (docs/stark.md "Security" gives the measurements behind them). Every preset folds
    /// FRI by up to 8 per layer (`log_folding_arity = 3`; by less where a lower height is rolled in,
    /// [`crate::pcs::fri_layers`]): the smallest proofs of arity 2, 4 and 8 at the same soundness.
    pub fn fri(self) -> FriConfig {
        let (log_blowup, num_queries, query_grinding_bits) = match self {
            Self::Dev => (2, 44, 16),
            // One query more than the level needs at `2^MAX_LOG_HEIGHT` rows (the 128-bit preset two since the
            // precompile tables: their 2,700 columns enlarge the batching round's term count, worst case all
            // present): at least 1 bit of margin at every height (`crates/machine/tests/security.rs`; 100-bit
            // 2.1, 128-bit 1.6 bits).
            Self::Bits100 => (3, 55, 20),
            // Blowup 4: ~0.99 bits per query in the Johnson regime (against ~1.46 at blowup 8).
            Self::Bits100Fast => (2, 82, 20),
            Self::Bits128 => (3, 78, 20),
        };
        FriConfig {
            log_blowup,
            num_queries,
            query_grinding_bits,
            log_final_poly_len: 2,
            log_folding_arity: 3,
        }
    }

    /// The preset's configuration, in zk mode or not (OS randomness, no debug check).
    pub fn config(self, zk: bool) -> StarkConfig {
        StarkConfig {
            fri: self.fri(),
            log_max_multiplicity: 32,
            debug_check: false,
            zk,
            zk_seed: None,
            hash: MerkleHash::Keccak256,
        }
    }

    /// The preset whose parameters `config` has (its zk mode, seed, debug flag and hash aside).
    pub fn of(config: &StarkConfig) -> Option<Self> {
        Self::ALL.into_iter().find(|p| {
            p.fri() == config.fri
                && config.log_max_multiplicity == p.config(false).log_max_multiplicity
        })
    }
}

impl fmt::Display for SecurityPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target_bits() {
            Some(b) if *self == Self::Bits100Fast => write!(f, "{b}-bit fast preset (blowup 4)"),
            Some(b) => write!(f, "{b}-bit preset"),
            None => write!(f, "dev preset (below 100 bits)"),
        }
    }
}

impl StarkConfig {
    /// This configuration with Merkle and transcript hash `hash`.
    pub fn with_hash(self, hash: MerkleHash) -> Self {
        Self { hash, ..self }
    }

    /// The default configuration in zero-knowledge mode (OS randomness).
    pub fn default_zk() -> Self {
        SecurityPreset::Bits100.config(true)
    }

    /// The fast development preset ([`SecurityPreset::Dev`], below 100 bits), without zero knowledge.
    pub fn dev() -> Self {
        SecurityPreset::Dev.config(false)
    }

    /// The fast development preset in zero-knowledge mode.
    pub fn dev_zk() -> Self {
        SecurityPreset::Dev.config(true)
    }

    /// Max constraint degree: `blowup + 1`; in zk mode `blowup` (the quotient of degree-`< 2n` traces,
    /// `< (2d - 1) n`, must fit the LDE domain of size `2n * blowup`).
    pub fn max_constraint_degree(&self) -> usize {
        (1usize << self.fri.log_blowup) + !self.zk as usize
    }

    /// Smallest log height of a table: 1, or in zk mode [`crate::zk::min_log_height`] of the query count.
    pub fn min_log_height(&self) -> usize {
        if self.zk {
            crate::zk::min_log_height(self.fri.num_queries)
        } else {
            crate::logup::MIN_LOG_HEIGHT
        }
    }

    /// The prover's random source in zk mode (the test seed, or a fresh OS seed).
    pub fn zk_rng(&self) -> Result<crate::zk::ZkRng, crate::zk::RngError> {
        match self.zk_seed {
            Some(s) => Ok(crate::zk::ZkRng::from_test_seed(s)),
            None => crate::zk::ZkRng::from_os(),
        }
    }

    /// The round-by-round security of proofs of shape `shape` under this configuration
    /// ([`crate::security`]).
    pub fn security(&self, shape: &crate::security::ProofShape) -> crate::security::SecurityReport {
        crate::security::SecurityReport::new(self, shape)
    }

    /// Absorb the configuration (fixed-width little-endian fields); a hash other than Keccak-256 is
    /// absorbed after them as `"hash" || le8(1)` (Poseidon2), so that Keccak transcripts are those of
    /// before the hash choice.
    pub fn observe<T: crate::statement::StartSink + ?Sized>(&self, t: &mut T) {
        t.observe_bytes(b"config");
        t.observe_u64(self.fri.log_blowup as u64);
        t.observe_u64(self.fri.num_queries as u64);
        t.observe_u64(self.fri.query_grinding_bits as u64);
        t.observe_u64(self.fri.log_final_poly_len as u64);
        t.observe_u64(self.fri.log_folding_arity as u64);
        t.observe_u64(self.log_max_multiplicity as u64);
        t.observe_u64(self.zk as u64);
        match self.hash {
            MerkleHash::Keccak256 => {}
            MerkleHash::Poseidon2 => {
                t.observe_bytes(b"hash");
                t.observe_u64(1);
            }
        }
    }
}
