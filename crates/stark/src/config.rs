//! Protocol configuration and its security figures (formulas and sources in docs/stark.md).

use std::fmt;

use crate::pcs::FriConfig;
use crate::transcript::Transcript;

/// Everything that parameterizes a proof. All fields except `debug_check` and `zk_seed` are absorbed by the
/// transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StarkConfig {
    /// Zero-knowledge mode (docs/stark.md, "Zero knowledge"): salted Merkle leaves, randomized traces
    /// (degree `< 2n`), randomized quotient chunks and a random FRI codeword. Part of the transcript and of
    /// the proof header. Max constraint degree `blowup` (4) instead of `blowup + 1`; every table needs at
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
}

impl Default for StarkConfig {
    /// Blowup 4 (max constraint degree 5), 44 queries, 16 grinding bits, final polynomial of 4
    /// coefficients: 104 bits conjectured (see [`StarkConfig::security_report`]).
    fn default() -> Self {
        Self {
            fri: FriConfig {
                log_blowup: 2,
                num_queries: 44,
                query_grinding_bits: 16,
                log_final_poly_len: 2,
                log_folding_arity: 1,
            },
            log_max_multiplicity: 32,
            debug_check: false,
            zk: false,
            zk_seed: None,
        }
    }
}

/// Security figures of a configuration for a given proof size.
#[derive(Clone, Debug, PartialEq)]
pub struct SecurityReport {
    /// ethSTARK Conjecture 5.1 regime: `num_queries * log_blowup + grinding_bits` (capped by the field).
    pub conjectured_bits: f64,
    /// Johnson-regime (proven) bound of FRI/DEEP, see `FriConfig::provable_security_bits`.
    pub provable_fri_bits: f64,
    /// LogUp and constraint-batching / out-of-domain errors over `Ext3` (`|K| = p^3`), see docs/stark.md.
    pub algebraic_bits: f64,
    /// `min(provable_fri_bits, algebraic_bits)`.
    pub provable_bits: f64,
    pub log_max_lde_height: usize,
    pub num_polys: usize,
}

impl fmt::Display for SecurityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conjectured {:.1} bits; provable {:.1} bits (FRI {:.1}, algebraic {:.1}) for LDE height 2^{} and {} committed columns",
            self.conjectured_bits,
            self.provable_bits,
            self.provable_fri_bits,
            self.algebraic_bits,
            self.log_max_lde_height,
            self.num_polys
        )
    }
}

/// `log2 |Ext3|`.
const EXT_BITS: f64 = 3.0 * 64.0;

impl StarkConfig {
    /// The default configuration in zero-knowledge mode (OS randomness).
    pub fn default_zk() -> Self {
        Self {
            zk: true,
            ..Self::default()
        }
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

    /// Security for proofs whose largest trace has height `2^log_max_height` and `num_polys` committed
    /// base columns over all rounds (main, aux, preprocessed, quotient).
    pub fn security_report(&self, log_max_height: usize, num_polys: usize) -> SecurityReport {
        // zk mode: committed polynomials have degree < 2n (and the random codeword may be taller).
        let log_committed = if self.zk {
            crate::zk::codeword_log_height(&self.fri, log_max_height + 1)
        } else {
            log_max_height
        };
        let log_d = log_committed + self.fri.log_blowup;
        let conjectured_bits = self.fri.conjectured_security_bits();
        let provable_fri_bits = self.fri.provable_security_bits(log_d, num_polys);
        // Algebraic errors (Schwartz-Zippel over Ext3): LogUp with 2^log_max_height rows per table times
        // ~2^8 interaction columns (fingerprint collision / sum cancellation, degree ~ n * k in z plus the
        // tuple length in alpha), constraint folding (number of constraints, ~2^12), out-of-domain
        // sampling (degree of the quotient identity ~ max_degree * n), each ~ 2^(log n + 12) / |K|.
        let algebraic_bits = EXT_BITS - (log_committed as f64 + 12.0) - 1.0;
        SecurityReport {
            conjectured_bits,
            provable_fri_bits,
            algebraic_bits,
            provable_bits: provable_fri_bits.min(algebraic_bits),
            log_max_lde_height: log_d,
            num_polys,
        }
    }

    /// Absorb the configuration (fixed-width little-endian fields).
    pub fn observe(&self, t: &mut Transcript) {
        t.observe_bytes(b"config");
        t.observe_u64(self.fri.log_blowup as u64);
        t.observe_u64(self.fri.num_queries as u64);
        t.observe_u64(self.fri.query_grinding_bits as u64);
        t.observe_u64(self.fri.log_final_poly_len as u64);
        t.observe_u64(self.fri.log_folding_arity as u64);
        t.observe_u64(self.log_max_multiplicity as u64);
        t.observe_u64(self.zk as u64);
    }
}
