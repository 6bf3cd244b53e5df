//! Soundness estimate of a proof, round by round, as the Ethereum Foundation's calculator computes it.
//!
//! Source of the formulas: `ethereum/soundcalc` at commit `809896fb8d3aba4fd8f657c781601e3ef2b968dd`
//! (2026-04-29): `soundcalc/proxgaps/{unique_decoding,johnson_bound}.py` (proximity-gap errors of Ben-Sasson,
//! Carmon, Haböck, Kopparty, Saraf, "On Proximity Gaps for Reed-Solomon Codes", ePrint 2025/2055, "BCHKS25":
//! Theorem 1.3/Corollary 1.4 for unique decoding, Theorem 4.2 for the Johnson regime), `pcs/fri.py` (batching,
//! commit and query rounds), `circuits/deep_ali.py` (ALI and DEEP, Haböck, "A summary on the FRI low degree
//! test", ePrint 2022/1216, Theorem 8), `lookups/logup.py` (univariate LogUp) and `common/utils.py`
//! (`bits = floor(-log2 error)`, grinding divides an error by `2^bits`). Formulas are carried over, not code;
//! docs/stark.md "Security" lists them with the mapping onto zkrv's protocol (crate::pcs module doc).
//!
//! Notation: `|K| = p^3` (challenges in `Ext3`), rate `ρ = 2^-log_blowup`, `k` the FRI code dimension (the
//! largest committed degree bound, `2^(Lmax - log_blowup)`), `n = k/ρ` the evaluation domain size.
//! * **Regime.** Unique decoding: proximity `θ = (1-ρ)/2`, list size `L = 1`, one-function error
//!   `ε_lin = (θ n + 1)/|K|`. Johnson with gap `η = √ρ/(2m)` (soundcalc's `gap_to_radius`; its default for
//!   fields above `2^150` is `η = √ρ/100`, i.e. `m = 50`): `θ = 1 - √ρ - η`, `L = 1/(2η√ρ)`,
//!   `m' = max(⌈√ρ/(2η)⌉, 3) + 1/2`, `ε_lin = ((2m'^5 + 3m'θρ) n / (3ρ√ρ) + m'/√ρ)/|K|`.
//! * **Batching** (DEEP batching of all opened columns at all points with powers of one `α`):
//!   `ε = ε_lin(k) · (batch_size - 1)`.
//! * **Commit round i** (the layers of [`crate::pcs::fri_layers`]; a fold of arity `2^a` by `β`, then the
//!   roll-in of the next height with `β^(2^a)`: a curve of `2^a + 1` functions in powers of `β`, the roll-in
//!   counted at every round; soundcalc's `get_error_powers` with `2^a + 1` functions):
//!   `ε = ε_lin(k_i) · 2^a`, `k_i` the code dimension after the fold (`k / 2^(i+1)` for arity 2).
//! * **Query phase**: `ε = (1 - θ)^num_queries · 2^-query_grinding_bits`.
//! * **ALI** (constraints folded with powers of one challenge): `ε = L · Σ_tables num_constraints / |K|`.
//! * **DEEP** (out-of-domain point, per table, summed over tables): with `k_t` the table's committed degree
//!   bound, `n_t = k_t/ρ`, `d_t` its max constraint degree and 2 opening points (`ζ, ωζ`):
//!   `ε_t = L · (d_t (k_t + 1) + k_t - 1) / (|K| - k_t - n_t)`.
//! * **LogUp** (soundcalc's univariate model `K·H·R/|K|` with one global sum): `ε = N · S / |K|`, `N` the number
//!   of fractions (`Σ_tables height · interactions`), `S` the longest tuple plus the bus id.
//! * **Total** = min over rounds, capped by the Merkle hash: Keccak-256 collisions, 128 bits.

use std::fmt;

use crate::air::CompiledAir;
use crate::config::StarkConfig;

/// Collision resistance of Keccak-256 (birthday bound), the cap on every total.
pub const HASH_COLLISION_BITS: u32 = 128;

/// Multiplicity of soundcalc's default Johnson gap for fields above `2^150`: `η = √ρ/100`, `m = 50`.
pub const SOUNDCALC_DEFAULT_M: u32 = 50;

/// The Johnson gaps the estimator tries, as multiplicities `m` (`η = √ρ/(2m)`); any gap gives a valid
/// bound (BCHKS25 Theorem 4.2 holds for every `η > 0`), so the report states the best one.
pub const JOHNSON_M_RANGE: std::ops::RangeInclusive<u32> = 3..=100;

/// `|K| = p^3` as a float.
fn ext_field_size() -> f64 {
    (crate::field::P as f64).powi(3)
}

/// A proof-level regime of the proximity-gap analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// Unique decoding radius `(1-ρ)/2` (BCHKS25 Corollary 1.4).
    UniqueDecoding,
    /// Johnson regime with gap `η = √ρ/(2m)` (BCHKS25 Theorem 4.2).
    Johnson { m: u32 },
}

impl fmt::Display for Regime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Regime::UniqueDecoding => write!(f, "unique decoding"),
            Regime::Johnson { m } => write!(f, "Johnson, gap √ρ/{}", 2 * m),
        }
    }
}

impl Regime {
    /// `(θ, L, ε_lin)` for rate `rho` and code dimension `k` (see the module doc).
    fn params(&self, rho: f64, k: f64) -> (f64, f64, f64) {
        let field = ext_field_size();
        let n = k / rho;
        match *self {
            Regime::UniqueDecoding => {
                let theta = (1.0 - rho) / 2.0;
                (theta, 1.0, (theta * n + 1.0) / field)
            }
            Regime::Johnson { m } => {
                let s = rho.sqrt();
                let eta = s / (2.0 * m as f64);
                let theta = 1.0 - s - eta;
                let list = 1.0 / (2.0 * eta * s);
                let mm = (s / (2.0 * eta)).ceil().max(3.0) + 0.5;
                let first = (2.0 * mm.powi(5) + 3.0 * mm * theta * rho) * n / (3.0 * rho * s);
                (theta, list, (first + mm / s) / field)
            }
        }
    }
}

/// What the estimate needs of one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableShape {
    pub name: String,
    /// log2 of the trace height (rows).
    pub log_height: usize,
    /// Constraints folded into the quotient: the AIR's, one per LogUp term column, and the 3 running-sum
    /// constraints of a table with interactions.
    pub num_constraints: usize,
    /// Max constraint degree, LogUp included.
    pub degree: usize,
    pub num_interactions: usize,
    /// Longest interaction tuple (values, without the bus id); 0 without interactions.
    pub max_tuple_len: usize,
}

impl TableShape {
    /// The shape of `air` at height `2^log_height`.
    pub fn new(air: &CompiledAir, log_height: usize) -> Self {
        let n_int = air.interactions.len();
        Self {
            name: air.name.clone(),
            log_height,
            num_constraints: air.num_folded_constraints(),
            degree: air.degree,
            num_interactions: n_int,
            max_tuple_len: air
                .interactions
                .iter()
                .map(|i| i.values.len())
                .max()
                .unwrap_or(0),
        }
    }
}

/// What the estimate needs of a proof: its tables and the DEEP batch size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofShape {
    pub tables: Vec<TableShape>,
    /// Terms of the DEEP batching: opened (column, point) pairs over all rounds (`Σ` of
    /// `opened[r][m][p].len()`).
    pub batch_size: usize,
}

impl ProofShape {
    /// Shape of a proof: `airs` with their `log_heights` (same order) and its opened values.
    pub fn new(airs: &[CompiledAir], log_heights: &[usize], batch_size: usize) -> Self {
        Self {
            tables: airs
                .iter()
                .zip(log_heights)
                .map(|(a, &lh)| TableShape::new(a, lh))
                .collect(),
            batch_size,
        }
    }

    /// Shape of proofs of `airs` (compiled for `config`) at `log_heights`, with the batch size the verifier
    /// expects (its shape check in [`crate::verifier`]): main and aux columns at 2 points, quotient chunks
    /// (zk: [`crate::zk::quotient_layout`]) and the zk random codeword at 1 point.
    pub fn for_config(airs: &[CompiledAir], log_heights: &[usize], config: &StarkConfig) -> Self {
        let mut batch = 0;
        for (a, &lh) in airs.iter().zip(log_heights) {
            batch += 2 * a.width;
            if !a.interactions.is_empty() {
                batch += 2 * a.aux_width();
            }
            let chunks = if config.zk {
                crate::zk::quotient_layout(a.num_quotient_chunks, lh, config.fri.num_queries).0
            } else {
                a.num_quotient_chunks
            };
            batch += 3 * chunks;
        }
        if config.zk {
            batch += crate::zk::CODEWORD_WIDTH;
        }
        Self::new(airs, log_heights, batch)
    }

    /// Shape of `proof` for `airs` (its heights and its number of opened values); an absent table
    /// (docs/stark.md §10) is left out: nothing of it is committed or opened.
    pub fn of_proof(airs: &[CompiledAir], proof: &crate::Proof) -> Self {
        let (present, heights): (Vec<CompiledAir>, Vec<usize>) = airs
            .iter()
            .zip(proof.table_log_heights())
            .filter_map(|(a, h)| h.map(|h| (a.clone(), h)))
            .unzip();
        Self::new(&present, &heights, batch_size(&proof.opened))
    }

    /// The same tables, every one at height `2^log_height` (the worst case of a height bound).
    pub fn all_at(&self, log_height: usize) -> Self {
        let mut s = self.clone();
        for t in &mut s.tables {
            t.log_height = log_height;
        }
        s
    }
}

/// DEEP batch size of opened values `[round][matrix][point][column]`.
pub fn batch_size(opened: &crate::pcs::OpenedValues) -> usize {
    opened.iter().flatten().flatten().map(|p| p.len()).sum()
}

/// One round of the protocol and its soundness.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    pub name: String,
    /// `-log2` of the round's error, grinding included (not floored).
    pub bits: f64,
    /// Proof-of-work bits credited to this round.
    pub grinding_bits: u32,
}

/// The round-by-round estimate in one regime.
#[derive(Clone, Debug, PartialEq)]
pub struct RegimeReport {
    pub regime: Regime,
    pub rounds: Vec<Round>,
}

impl RegimeReport {
    /// `floor(min over rounds)`, capped at [`HASH_COLLISION_BITS`].
    pub fn total_bits(&self) -> u32 {
        floor_bits(self.min_round_bits()).min(HASH_COLLISION_BITS)
    }

    /// The weakest round's bits, grinding included: not floored and not capped by the hash (the figure a
    /// margin is measured on); 0 without rounds.
    pub fn min_round_bits(&self) -> f64 {
        let min = self
            .rounds
            .iter()
            .map(|r| r.bits)
            .fold(f64::INFINITY, f64::min);
        if min.is_finite() {
            min
        } else {
            0.0
        }
    }

    /// The round of least soundness (the first one if tied).
    pub fn weakest(&self) -> Option<&Round> {
        self.rounds.iter().min_by(|a, b| {
            a.bits
                .partial_cmp(&b.bits)
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    }
}

/// soundcalc's `get_bits_of_security_from_error`: `floor(-log2 ε)`, 0 for `ε >= 1` or not a number.
pub fn floor_bits(bits: f64) -> u32 {
    if bits.is_nan() || bits <= 0.0 {
        0
    } else {
        bits.floor().min(u32::MAX as f64) as u32
    }
}

fn bits_of(err: f64) -> f64 {
    if err.is_nan() || err >= 1.0 {
        0.0
    } else {
        -err.log2()
    }
}

/// The round-by-round estimate of proofs of shape `shape` under `config` in `regime` (formulas in the module
/// doc). Never panics: degenerate inputs give 0-bit rounds, parameters the PCS refuses
/// ([`crate::pcs::FriConfig::check`]; no query aside, which only leaves the grinding) one 0-bit round.
pub fn estimate(config: &StarkConfig, shape: &ProofShape, regime: Regime) -> RegimeReport {
    let fri = &config.fri;
    if let Err(crate::pcs::PcsError::Config(why)) = fri.check() {
        return RegimeReport {
            regime,
            rounds: vec![Round {
                name: format!("unsupported parameters ({why})"),
                bits: 0.0,
                grinding_bits: 0,
            }],
        };
    }
    let field = ext_field_size();
    let rho = (-(fri.log_blowup as f64)).exp2();
    let zk = config.zk as usize;
    let log_max_trace = shape.tables.iter().map(|t| t.log_height).max().unwrap_or(0);
    // FRI code dimension: the largest committed degree bound (zk: degree < 2n, and the random codeword).
    let log_k = if config.zk {
        crate::zk::codeword_log_height(fri, log_max_trace + 1)
    } else {
        log_max_trace
    };
    let k = (log_k as f64).exp2();
    let (theta, list, eps_lin) = regime.params(rho, k);
    let mut rounds = Vec::new();
    let round = |name: String, err: f64, grinding_bits: u32| Round {
        name,
        bits: bits_of(err) + grinding_bits as f64,
        grinding_bits,
    };

    // LogUp (challenges z, a after the main commitment).
    let fractions: f64 = shape
        .tables
        .iter()
        .map(|t| (t.log_height as f64).exp2() * t.num_interactions as f64)
        .sum();
    if fractions > 0.0 {
        let s = shape
            .tables
            .iter()
            .map(|t| t.max_tuple_len)
            .max()
            .unwrap_or(0)
            + 1;
        rounds.push(round("LogUp".into(), fractions * s as f64 / field, 0));
    }

    // ALI: constraint folding.
    let constraints: usize = shape.tables.iter().map(|t| t.num_constraints).sum();
    rounds.push(round("ALI".into(), list * constraints as f64 / field, 0));

    // DEEP: the quotient identity at the out-of-domain point, every table (union bound).
    const OPENING_POINTS: f64 = 2.0;
    let mut deep = 0.0;
    for t in &shape.tables {
        let kt = ((t.log_height + zk) as f64).exp2();
        let nt = kt / rho;
        // soundcalc's multi-point condition k + m_max < (1 - θ) n; a violation leaves no soundness.
        if kt + OPENING_POINTS >= (1.0 - theta) * nt {
            deep = 1.0;
            break;
        }
        deep +=
            list * (t.degree as f64 * (kt + OPENING_POINTS - 1.0) + kt - 1.0) / (field - kt - nt);
    }
    rounds.push(round("DEEP".into(), deep, 0));

    // DEEP batching of every opened value with powers of alpha.
    rounds.push(round(
        format!("batching ({} terms)", shape.batch_size),
        eps_lin * shape.batch_size.saturating_sub(1) as f64,
        0,
    ));

    // FRI commit phase: the layers of `pcs::fri_layers` over the reduced codewords' heights (every table's
    // LDE height, and the zk random codeword's), each fold of arity 2^a with a roll-in.
    let mut heights: Vec<usize> = shape
        .tables
        .iter()
        .map(|t| t.log_height + zk + fri.log_blowup)
        .collect();
    if config.zk {
        heights.push(log_k + fri.log_blowup);
    }
    let (_, _, layers) = crate::pcs::fri_layers(fri, heights.iter().copied());
    let mut log_dim = log_k;
    for (i, l) in layers.iter().enumerate() {
        log_dim = log_dim.saturating_sub(l.log_arity);
        let (_, _, e) = regime.params(rho, (log_dim as f64).exp2());
        let functions = (1usize << l.log_arity) + 1;
        rounds.push(round(
            format!("FRI fold {} (arity {})", i + 1, 1 << l.log_arity),
            e * (functions - 1) as f64,
            0,
        ));
    }

    // Query phase, with the proof of work before the query indices.
    rounds.push(round(
        format!("FRI queries ({})", fri.num_queries),
        (1.0 - theta).powf(fri.num_queries as f64),
        fri.query_grinding_bits,
    ));
    RegimeReport { regime, rounds }
}

/// Security of proofs of shape `shape` under `config` in both regimes (the Johnson one at the best gap of
/// [`JOHNSON_M_RANGE`]) and at soundcalc's default Johnson gap.
#[derive(Clone, Debug, PartialEq)]
pub struct SecurityReport {
    pub unique_decoding: RegimeReport,
    /// The Johnson regime at the gap that maximizes the total (the smallest such `m`).
    pub johnson: RegimeReport,
    /// The Johnson regime at soundcalc's default gap `√ρ/100` ([`SOUNDCALC_DEFAULT_M`]).
    pub johnson_default_gap: RegimeReport,
}

impl SecurityReport {
    pub fn new(config: &StarkConfig, shape: &ProofShape) -> Self {
        let mut best = estimate(
            config,
            shape,
            Regime::Johnson {
                m: *JOHNSON_M_RANGE.start(),
            },
        );
        // The gap of the largest weakest round (not floored, not capped: the same total, and the best
        // margin).
        for m in JOHNSON_M_RANGE.skip(1) {
            let r = estimate(config, shape, Regime::Johnson { m });
            if r.min_round_bits() > best.min_round_bits() {
                best = r;
            }
        }
        Self {
            unique_decoding: estimate(config, shape, Regime::UniqueDecoding),
            johnson: best,
            johnson_default_gap: estimate(
                config,
                shape,
                Regime::Johnson {
                    m: SOUNDCALC_DEFAULT_M,
                },
            ),
        }
    }

    /// The provable level: the Johnson total (never below the unique-decoding one, which it contains).
    pub fn provable_bits(&self) -> u32 {
        self.johnson
            .total_bits()
            .max(self.unique_decoding.total_bits())
    }

    /// The provable level before flooring and the hash cap: the weakest round of the better regime, in
    /// bits (grinding included). `provable_bits() == min(floor(this), 128)`.
    pub fn provable_round_bits(&self) -> f64 {
        self.johnson
            .min_round_bits()
            .max(self.unique_decoding.min_round_bits())
    }

    /// Bits to spare over `target`: [`SecurityReport::provable_round_bits`] minus `target` (negative below
    /// it). Statistical and grinding bits only: the Keccak-256 cap of 128 bits is not counted, so a 128-bit
    /// preset has a margin where its weakest round exceeds 128 bits.
    pub fn margin_bits(&self, target: u32) -> f64 {
        self.provable_round_bits() - target as f64
    }

    /// One line: "100 bits provable (Johnson regime, BCHKS25)", with ", below 100 bits" under 100.
    pub fn summary(&self) -> String {
        let regime = if self.johnson.total_bits() >= self.unique_decoding.total_bits() {
            "Johnson regime"
        } else {
            "unique decoding"
        };
        let mut s = format!("{} bits provable ({regime}, BCHKS25)", self.provable_bits());
        if self.provable_bits() < 100 {
            s.push_str(", below 100 bits");
        }
        s
    }
}

impl fmt::Display for SecurityReport {
    /// The round-by-round table, one column per regime, bits floored as soundcalc prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cols = [
            &self.unique_decoding,
            &self.johnson,
            &self.johnson_default_gap,
        ];
        writeln!(
            f,
            "{:<24} {:>16} {:>22} {:>22}",
            "round", "unique decoding", cols[1].regime, cols[2].regime
        )?;
        for (i, r) in self.johnson.rounds.iter().enumerate() {
            let g = if r.grinding_bits > 0 {
                format!(" (incl. {} grinding)", r.grinding_bits)
            } else {
                String::new()
            };
            writeln!(
                f,
                "{:<24} {:>16} {:>22} {:>22}{g}",
                r.name,
                floor_bits(cols[0].rounds[i].bits),
                floor_bits(r.bits),
                floor_bits(cols[2].rounds[i].bits),
            )?;
        }
        writeln!(
            f,
            "{:<24} {:>16} {:>22} {:>22}",
            format!("total (hash cap {HASH_COLLISION_BITS})"),
            cols[0].total_bits(),
            cols[1].total_bits(),
            cols[2].total_bits()
        )
    }
}
