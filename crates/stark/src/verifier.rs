//! The verifier: replays the prover's transcript (see [`crate::prover`]), checks the constraint identity
//! `C(zeta) = Z_H(zeta) * sum_j zeta^(j n) q_j(zeta)` per table at the out-of-domain point, the bus balance,
//! and the DEEP + FRI opening proof. Returns a typed error and never panics on any proof.
//!
//! Absent tables (height byte [`crate::proof::ABSENT_LOG_HEIGHT`], docs/stark.md §10): accepted only for
//! tables that [`Air::may_be_absent`] ([`VerifyError::RequiredTableAbsent`] otherwise); they enter the
//! transcript's table list and nothing else: every later check runs over the present tables, in table
//! order, with the shapes derived from the heights read.

use rayon::prelude::*;
use thiserror::Error;

use crate::air::{compile_for, Air, AirError, CompiledAir};
use crate::config::StarkConfig;
use crate::field::{Ext3, PrimeCharacteristicRing, F};
use crate::logup::{
    max_tuple_len, multiplicity_budget_ok, public_sum, LogupChallenges, PublicSource,
    MAX_LOG_HEIGHT, MIN_LOG_HEIGHT,
};
use crate::merkle::{MatrixDims, MerkleHash};
use crate::pcs::{self, PcsError, VerifierRound};
use crate::poly::domain_generator;
use crate::preprocessed::{evaluate_at_ood, PreprocessedData};
use crate::profile::span;
use crate::proof::{Proof, ProofFormatError};
use crate::security::ProofShape;
use crate::statement::{sample_zeta, selectors_at, start_transcript, statement_digest};
use crate::symbolic::LeafValues;
use crate::zk;

/// Why a proof was rejected.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("proof format: {0}")]
    Format(#[from] ProofFormatError),
    /// The proof's statement digest ([`crate::statement::statement_digest`]) is not the verifier's: another
    /// statement, other public interactions, or AIRs with other public values ([`Air::public_values`]).
    #[error("the proof is for a different statement, public interactions or AIR public values")]
    Statement,
    #[error("proof is {}, but the verifier was configured for {}", mode(*proof), mode(*expected))]
    ZkMode { proof: bool, expected: bool },
    /// The proof's Merkle and transcript hash (its mode byte) is not the verifier's configuration's.
    #[error("proof is hashed with {}, but the verifier was configured for {}", proof.name(), expected.name())]
    HashMismatch {
        proof: MerkleHash,
        expected: MerkleHash,
    },
    #[error("AIR: {0}")]
    Air(#[from] AirError),
    #[error("proof shape does not match the tables: {0}")]
    ShapeMismatch(String),
    #[error("table {table}: log height {log_height} out of range [{MIN_LOG_HEIGHT}, {max}]")]
    HeightOutOfRange {
        table: String,
        log_height: usize,
        max: usize,
    },
    /// The proof marks absent (height byte [`crate::proof::ABSENT_LOG_HEIGHT`]) a table that does not
    /// [`Air::may_be_absent`] (e.g. the CPU or a memory table).
    #[error(
        "table `{table}` is absent from the proof, but it is required (only a table that declares \
         `may_be_absent` can be absent)"
    )]
    RequiredTableAbsent { table: String },
    #[error("multiplicity bound: the tables' heights allow a bus count to reach p")]
    MultiplicityBudget,
    #[error("table `{table}`: constraints at the out-of-domain point do not match the quotient")]
    OodMismatch { table: String },
    #[error("buses do not balance (sum of table sums and public contributions is not zero)")]
    BusImbalance,
    #[error("proof-of-work nonce is invalid")]
    Grinding,
    #[error("opening proof: {0}")]
    Pcs(PcsError),
    /// The parameters give proofs of this shape (the proof's table heights, the batch its AIRs open) fewer
    /// bits provable than the verifier's minimum: [`crate::security::SecurityReport::provable_bits`],
    /// Johnson regime (BCHKS25) as soundcalc computes it, floored, capped at 128.
    #[error(
        "the proof's parameters give {bits} bits provable (Johnson regime, BCHKS25) for its shape, \
         below the verifier's minimum of {min}"
    )]
    WeakParameters { bits: u32, min: u32 },
}

fn mode(zk: bool) -> &'static str {
    if zk {
        "zero-knowledge (zk)"
    } else {
        "non-zk"
    }
}

/// Leaf values at the out-of-domain point.
struct OodRow<'a> {
    main: &'a [Ext3],
    main_next: &'a [Ext3],
    prep: &'a [Ext3],
    prep_next: &'a [Ext3],
    sel: [Ext3; 3],
}

impl LeafValues<Ext3> for OodRow<'_> {
    fn main(&self, col: usize, next: bool) -> Ext3 {
        if next {
            self.main_next[col]
        } else {
            self.main[col]
        }
    }
    fn preprocessed(&self, col: usize, next: bool) -> Ext3 {
        if next {
            self.prep_next[col]
        } else {
            self.prep[col]
        }
    }
    fn is_first_row(&self) -> Ext3 {
        self.sel[0]
    }
    fn is_last_row(&self) -> Ext3 {
        self.sel[1]
    }
    fn is_transition(&self) -> Ext3 {
        self.sel[2]
    }
}

/// `sum_k X^k v[3c + k]`: the value of extension column `c` from its 3 opened base-column values.
fn ext_column(v: &[Ext3], c: usize) -> Ext3 {
    let x = Ext3([F::ZERO, F::ONE, F::ZERO]);
    v[3 * c] + x * v[3 * c + 1] + x * x * v[3 * c + 2]
}

/// Verify serialized proof bytes ([`verify`]; `min_bits` as there).
pub fn verify_bytes<P: PublicSource + ?Sized>(
    config: &StarkConfig,
    min_bits: u32,
    airs: &[&dyn Air],
    preprocessed: &PreprocessedData,
    public: &P,
    statement: &[u8],
    proof_bytes: &[u8],
) -> Result<(), VerifyError> {
    let proof = Proof::from_bytes(proof_bytes)?;
    verify(
        config,
        min_bits,
        airs,
        preprocessed,
        public,
        statement,
        &proof,
    )
}

/// Check that the opened values of one round have the expected shape: `points[m]` points of `widths[m]`
/// columns per matrix.
pub(crate) fn check_round_shape(
    opened: &[Vec<Vec<Ext3>>],
    widths: &[usize],
    points: usize,
    what: &str,
) -> Result<(), VerifyError> {
    if opened.len() != widths.len() {
        return Err(VerifyError::ShapeMismatch(format!(
            "{what}: {} matrices opened, expected {}",
            opened.len(),
            widths.len()
        )));
    }
    for (m, (o, &w)) in opened.iter().zip(widths).enumerate() {
        if o.len() != points || o.iter().any(|p| p.len() != w) {
            return Err(VerifyError::ShapeMismatch(format!(
                "{what}: matrix {m} opened values do not have {points} points x {w} columns"
            )));
        }
    }
    Ok(())
}

/// Verify a proof against the tables, the preprocessed traces (rebuilt by the caller from trusted data; see
/// [`crate::preprocessed`]), the public interactions and the statement bytes.
///
/// `config` is the prover's (it is part of the transcript; a proof file states it, so the prover chose
/// it): parameters the PCS cannot run with are refused first ([`crate::pcs::FriConfig::check`], e.g.
/// `num_queries == 0`: [`PcsError::NoQueries`]), then parameters that give proofs of this proof's shape
/// fewer than `min_bits` bits provable ([`crate::security::SecurityReport::provable_bits`]: Johnson
/// regime, BCHKS25, as soundcalc; floored, at most 128): [`VerifyError::WeakParameters`]. `min_bits = 0`
/// accepts any parameters the PCS runs with (tests, toy configurations); 100 is the CLI's default.
pub fn verify<P: PublicSource + ?Sized>(
    config: &StarkConfig,
    min_bits: u32,
    airs: &[&dyn Air],
    preprocessed: &PreprocessedData,
    public: &P,
    statement: &[u8],
    proof: &Proof,
) -> Result<(), VerifyError> {
    verify_queries(
        config,
        min_bits,
        airs,
        preprocessed,
        public,
        statement,
        proof,
    )
    .map(|_| ())
}

/// [`verify`], returning what the verifier sampled: the `num_queries` query indices in the largest LDE
/// domain (`q < 2^Lmax`; round tree `r` is opened at `q >> (Lmax - Lt_r)`), e.g. for tests that play an
/// attacker who reads the openings.
pub fn verify_queries<P: PublicSource + ?Sized>(
    config: &StarkConfig,
    min_bits: u32,
    airs: &[&dyn Air],
    preprocessed: &PreprocessedData,
    public: &P,
    statement: &[u8],
    proof: &Proof,
) -> Result<Vec<usize>, VerifyError> {
    // Before anything is derived from the parameters (degree bound, layouts, the estimate).
    config.fri.check().map_err(VerifyError::Pcs)?;
    if proof.zk != config.zk {
        return Err(VerifyError::ZkMode {
            proof: proof.zk,
            expected: config.zk,
        });
    }
    if proof.hash != config.hash {
        return Err(VerifyError::HashMismatch {
            proof: proof.hash,
            expected: config.hash,
        });
    }
    let all_compiled: Vec<CompiledAir> = {
        let _s = span("compile AIRs");
        compile_for(airs, config)?
    };
    if proof.statement_digest != statement_digest(statement, public, &all_compiled) {
        return Err(VerifyError::Statement);
    }
    let lb = config.fri.log_blowup;
    // zk: main, aux and quotient matrices have 2n rows (degree < 2n).
    let zk_shift = config.zk as usize;
    let n_all = all_compiled.len();
    if proof.log_heights.len() != n_all
        || preprocessed.log_heights.len() != n_all
        || preprocessed.traces.len() != n_all
    {
        return Err(VerifyError::ShapeMismatch(format!(
            "{} log heights, {} preprocessed entries for {n_all} tables",
            proof.log_heights.len(),
            preprocessed.log_heights.len()
        )));
    }
    // Absent tables: only those that may be absent (which have no preprocessed columns, `AirError::
    // AbsentWithPreprocessed`); from here on everything runs over the present ones (`compiled[i]` is table
    // `present[i]`).
    let all_heights = proof.table_log_heights();
    if let Some(t) =
        (0..n_all).find(|&t| all_heights[t].is_none() && !all_compiled[t].may_be_absent)
    {
        return Err(VerifyError::RequiredTableAbsent {
            table: all_compiled[t].name.clone(),
        });
    }
    let present: Vec<usize> = (0..n_all).filter(|&t| all_heights[t].is_some()).collect();
    if present.is_empty() {
        return Err(VerifyError::ShapeMismatch("every table is absent".into()));
    }
    let compiled: Vec<CompiledAir> = present.iter().map(|&t| all_compiled[t].clone()).collect();
    let prep_traces: Vec<Option<&crate::matrix::RowMajorMatrix>> = present
        .iter()
        .map(|&t| preprocessed.traces[t].as_ref())
        .collect();
    let log_heights: Vec<usize> = all_heights.iter().flatten().copied().collect();
    let nt = compiled.len();
    for (t, air) in compiled.iter().enumerate() {
        let lh = log_heights[t];
        if !(MIN_LOG_HEIGHT..=MAX_LOG_HEIGHT).contains(&lh) {
            return Err(VerifyError::HeightOutOfRange {
                table: air.name.clone(),
                log_height: lh,
                max: MAX_LOG_HEIGHT,
            });
        }
        let prep = &prep_traces[t];
        match (air.preprocessed_width, preprocessed.log_heights[present[t]]) {
            (0, None) if prep.is_none() => {}
            (w, Some(plh))
                if w > 0
                    && plh == lh
                    && prep
                        .as_ref()
                        .is_some_and(|m| m.width == w && m.height() == 1 << lh) => {}
            _ => {
                return Err(VerifyError::ShapeMismatch(format!(
                    "table `{}`: height does not match the preprocessed trace",
                    air.name
                )))
            }
        }
    }
    // The level of the parameters for this shape: the heights (checked above) and the batch the opened
    // values must have (checked below).
    if min_bits > 0 {
        let shape = ProofShape::for_config(&compiled, &log_heights, config);
        let bits = config.security(&shape).provable_bits();
        if bits < min_bits {
            return Err(VerifyError::WeakParameters {
                bits,
                min: min_bits,
            });
        }
    }
    let budget: Vec<(usize, usize)> = compiled
        .iter()
        .zip(&log_heights)
        .map(|(a, &lh)| (lh, a.interactions.len()))
        .collect();
    if !multiplicity_budget_ok(&budget, public, config.log_max_multiplicity) {
        return Err(VerifyError::MultiplicityBudget);
    }
    let prep_tables: Vec<usize> = (0..nt)
        .filter(|&t| compiled[t].preprocessed_width > 0)
        .collect();
    let bus_tables: Vec<usize> = (0..nt)
        .filter(|&t| !compiled[t].interactions.is_empty())
        .collect();
    if bus_tables.is_empty() != proof.aux_root.is_none() {
        return Err(VerifyError::ShapeMismatch("aux root presence".into()));
    }
    if proof.bus_sums.len() != bus_tables.len() {
        return Err(VerifyError::ShapeMismatch(format!(
            "{} bus sums for {} tables with interactions",
            proof.bus_sums.len(),
            bus_tables.len()
        )));
    }

    // Transcript replay.
    let s_transcript = span("transcript");
    let mut transcript = start_transcript(config, &all_compiled, &all_heights, public, statement);
    transcript.observe_digest(&proof.main_root);
    let z = transcript.sample_ext();
    let a = transcript.sample_ext();
    let challenges = LogupChallenges::new(z, a, max_tuple_len(&compiled, public));
    if let Some(root) = &proof.aux_root {
        transcript.observe_digest(root);
    }
    transcript.observe_ext(&proof.bus_sums);
    let alpha = transcript.sample_ext();
    transcript.observe_digest(&proof.quotient_root);
    let zeta = sample_zeta(&mut transcript);
    drop(s_transcript);

    // Preprocessed values at zeta and zeta·ω_n, computed here from the trusted traces.
    let s_prep = span("preprocessed at OOD");
    let prep_values: Vec<[Vec<Ext3>; 2]> = prep_tables
        .par_iter()
        .map(|&t| {
            prep_traces[t]
                .and_then(|m| evaluate_at_ood(m, zeta))
                .ok_or_else(|| VerifyError::OodMismatch {
                    table: compiled[t].name.clone(),
                })
        })
        .collect::<Result<_, _>>()?;
    drop(s_prep);

    // Shape of the opened values.
    let has_aux = !bus_tables.is_empty();
    let n_rounds = 2 + has_aux as usize;
    if proof.opened.len() != n_rounds {
        return Err(VerifyError::ShapeMismatch(format!(
            "{} opened rounds, expected {n_rounds}",
            proof.opened.len()
        )));
    }
    let main_round = 0;
    let aux_round = has_aux.then_some(1);
    let quotient_round = 1 + has_aux as usize;
    let widths: Vec<usize> = compiled.iter().map(|a| a.width).collect();
    check_round_shape(&proof.opened[main_round], &widths, 2, "main")?;
    if let Some(ar) = aux_round {
        let widths: Vec<usize> = bus_tables
            .iter()
            .map(|&t| compiled[t].aux_width())
            .collect();
        check_round_shape(&proof.opened[ar], &widths, 2, "aux")?;
    }
    // Committed quotient chunks per table: (count, coefficients per chunk); zk: `zk::quotient_layout`.
    let q_layout: Vec<(usize, usize)> = compiled
        .iter()
        .zip(&log_heights)
        .map(|(a, &lh)| {
            if config.zk {
                zk::quotient_layout(a.num_quotient_chunks, lh, config.fri.num_queries)
            } else {
                (a.num_quotient_chunks, 1 << lh)
            }
        })
        .collect();
    let mut widths: Vec<usize> = q_layout.iter().map(|&(count, _)| 3 * count).collect();
    if config.zk {
        widths.push(zk::CODEWORD_WIDTH);
    }
    check_round_shape(&proof.opened[quotient_round], &widths, 1, "quotient")?;

    // Out-of-domain check per table.
    let s_ood = span("OOD constraints");
    let empty: Vec<Ext3> = Vec::new();
    let mut scratch = Vec::new();
    for (t, air) in compiled.iter().enumerate() {
        let lh = log_heights[t];
        let table_err = || VerifyError::OodMismatch {
            table: air.name.clone(),
        };
        let (zh, sel) = selectors_at(zeta, lh).ok_or_else(table_err)?;
        let main = &proof.opened[main_round][t];
        let (prep, prep_next) = match prep_tables.iter().position(|&p| p == t) {
            Some(i) => (&prep_values[i][0], &prep_values[i][1]),
            None => (&empty, &empty),
        };
        let (aux_local, aux_next, bus_sum) =
            match (aux_round, bus_tables.iter().position(|&b| b == t)) {
                (Some(ar), Some(i)) => {
                    let o = &proof.opened[ar][i];
                    let k = air.logup.num_ext_columns();
                    (
                        (0..k).map(|c| ext_column(&o[0], c)).collect(),
                        (0..k).map(|c| ext_column(&o[1], c)).collect(),
                        proof.bus_sums[i],
                    )
                }
                _ => (Vec::new(), Vec::new(), Ext3::ZERO),
            };
        let row = OodRow {
            main: &main[0],
            main_next: &main[1],
            prep,
            prep_next,
            sel,
        };
        let folded = air.eval_folded(
            &row,
            &aux_local,
            &aux_next,
            &challenges,
            bus_sum,
            &air.fold_challenge(alpha),
            &mut scratch,
        );
        let q_open = &proof.opened[quotient_round][t][0];
        let (count, m) = q_layout[t];
        let zeta_m = zeta.pow(m as u64);
        let mut q = Ext3::ZERO;
        for j in (0..count).rev() {
            q = q * zeta_m + ext_column(q_open, j);
        }
        if folded != zh * q {
            return Err(table_err());
        }
    }

    drop(s_ood);

    // Bus balance.
    let s_bus = span("bus balance");
    let public_contribution =
        public_sum(public, &challenges).map_err(|_| VerifyError::BusImbalance)?;
    let total: Ext3 = proof.bus_sums.iter().copied().sum::<Ext3>() + public_contribution;
    if !total.is_zero() {
        return Err(VerifyError::BusImbalance);
    }

    drop(s_bus);

    // Opening proof.
    let _s_pcs = span("PCS");
    let two_points = |t: usize| -> [Ext3; 2] { [zeta, zeta * domain_generator(log_heights[t])] };
    let mut rounds: Vec<VerifierRound> = Vec::with_capacity(n_rounds);
    let mk = |tables: &[usize],
              width: &dyn Fn(usize) -> usize,
              opened: &[Vec<Vec<Ext3>>],
              pts: usize,
              shift: usize| {
        tables
            .iter()
            .zip(opened)
            .map(|(&t, o)| {
                let points = two_points(t);
                (
                    MatrixDims {
                        width: width(t),
                        log_height: log_heights[t] + shift + lb,
                    },
                    (0..pts).map(|p| (points[p], o[p].clone())).collect(),
                )
            })
            .collect::<Vec<_>>()
    };
    let all: Vec<usize> = (0..nt).collect();
    rounds.push((
        proof.main_root,
        mk(
            &all,
            &|t| compiled[t].width,
            &proof.opened[main_round],
            2,
            zk_shift,
        ),
    ));
    if let (Some(root), Some(ar)) = (&proof.aux_root, aux_round) {
        rounds.push((
            *root,
            mk(
                &bus_tables,
                &|t| compiled[t].aux_width(),
                &proof.opened[ar],
                2,
                zk_shift,
            ),
        ));
    }
    let mut quotient_mats = mk(
        &all,
        &|t| 3 * q_layout[t].0,
        &proof.opened[quotient_round],
        1,
        zk_shift,
    );
    if config.zk {
        // The random codeword (checked shape above: nt + 1 matrices), at least the largest trace height.
        let lh = zk::codeword_log_height(
            &config.fri,
            log_heights.iter().copied().max().unwrap_or(0) + zk_shift,
        ) + lb;
        quotient_mats.push((
            MatrixDims {
                width: zk::CODEWORD_WIDTH,
                log_height: lh,
            },
            vec![(zeta, proof.opened[quotient_round][nt][0].clone())],
        ));
    }
    rounds.push((proof.quotient_root, quotient_mats));
    // zk: every opened round is salted (the preprocessed columns are evaluated by the verifier, not opened).
    let salted: Vec<bool> = vec![true; rounds.len()];
    let hiding = config.zk.then_some(&salted[..]);
    pcs::verify(&config.fri, &rounds, &proof.pcs, &mut transcript, hiding).map_err(|e| match e {
        PcsError::Grinding => VerifyError::Grinding,
        e => VerifyError::Pcs(e),
    })
}
