//! The prover: one proof for all tables of an execution. Protocol steps (docs/stark.md):
//!
//! 1. transcript absorbs the statement ([`crate::statement::start_transcript`]);
//! 2. main root (all main traces, one mixed-height tree); preprocessed columns are not committed (the
//!    verifier evaluates them itself, [`crate::preprocessed`]);
//! 3. LogUp challenges `z`, `a`; aux root (all aux traces, one tree); the bus sums;
//! 4. constraint-folding challenge `alpha`; quotient root (every table's quotient chunks, one tree);
//! 5. out-of-domain point `zeta`; DEEP + FRI opening of main/aux at `zeta` and `zeta ω_n` (per table),
//!    quotient chunks at `zeta`.
//!
//! Absent tables (height-0 traces of tables that [`Air::may_be_absent`], docs/stark.md §10) enter only
//! the transcript's table list (step 1) and the proof's heights; every later step, and every backend
//! operation, runs over the present tables in table order (a backend's commit index `i` is the `i`-th
//! present table, and so are the zk stream indices), so a proof whose tables are all present is the same
//! as before absent tables existed.
//!
//! zk mode (`StarkConfig::zk`, docs/stark.md "Zero knowledge"): main and aux traces are randomized to
//! `2n` rows ([`crate::zk::randomize_trace`]) before their commitment, every commitment is a salted tree,
//! the quotient chunks are randomized ([`crate::zk::randomize_quotient`]) and a random codeword
//! ([`crate::zk::random_codeword`]) is committed last in the quotient round; FRI layers are salted.

use thiserror::Error;

use crate::air::{compile_for, Air, AirError, CompiledAir};
use crate::backend::{
    AuxError, BackendError, CpuBackend, MatrixView, ProofFootprint, ProverBackend, QuotientViews,
    TraceDims, TraceInput,
};
use crate::check::{check_traces, CheckError};
use crate::config::StarkConfig;
use crate::field::Ext3;
use crate::logup::{
    max_tuple_len, multiplicity_budget_ok, LogupChallenges, LogupError, PublicInteraction,
    MAX_LOG_HEIGHT,
};
use crate::matrix::RowMajorMatrix;
use crate::poly::domain_generator;
pub use crate::preprocessed::{preprocess, PreprocessedData};
use crate::profile::span;
use crate::proof::{Proof, ABSENT_LOG_HEIGHT};
use crate::statement::{sample_zeta, start_transcript, statement_digest};
use crate::zk::{self, ROUND_AUX, ROUND_MAIN, ROUND_QUOTIENT};

/// Why proving failed (all are caller errors or, for `Check`, an unsatisfied trace).
#[derive(Debug, Error)]
pub enum ProveError {
    #[error(transparent)]
    Air(#[from] AirError),
    #[error("{0}")]
    Shape(String),
    #[error("table `{table}`: log height {log_height} outside [{min}, {max}]")]
    HeightOutOfRange {
        table: String,
        log_height: usize,
        min: usize,
        max: usize,
    },
    /// A height-0 (absent) trace for a table that does not [`Air::may_be_absent`].
    #[error(
        "table `{table}` has no rows, but it is required (only a table that declares \
         `may_be_absent` can be absent)"
    )]
    RequiredTableAbsent { table: String },
    #[error("{0}")]
    Rng(#[from] crate::zk::RngError),
    #[error("total multiplicity bound reaches p: lower heights or log_max_multiplicity")]
    MultiplicityBudget,
    #[error("debug check failed: {0}")]
    Check(#[from] CheckError),
    #[error(transparent)]
    Logup(#[from] LogupError),
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl From<AuxError> for ProveError {
    fn from(e: AuxError) -> Self {
        match e {
            AuxError::Logup(e) => ProveError::Logup(e),
            AuxError::Backend(e) => ProveError::Backend(e),
        }
    }
}

/// Prove on the CPU. `traces[t]` is table `t`'s `n_t x width_t` main trace (natural order); a trace of
/// height 0 (`RowMajorMatrix::new(vec![], width)`) makes the table absent (docs/stark.md §10), refused
/// with [`ProveError::RequiredTableAbsent`] unless the table [`Air::may_be_absent`].
pub fn prove(
    config: &StarkConfig,
    airs: &[&dyn Air],
    preprocessed: &PreprocessedData,
    traces: Vec<RowMajorMatrix>,
    public: &[PublicInteraction],
    statement: &[u8],
) -> Result<Proof, ProveError> {
    prove_with(
        &CpuBackend::default(),
        config,
        airs,
        preprocessed,
        traces.into_iter().map(TraceInput::Host).collect(),
        public,
        statement,
    )
}

/// Prove with any backend (see [`ProverBackend`]); an absent table's trace is [`TraceInput::absent`].
/// Errors as [`prove`].
pub fn prove_with<B: ProverBackend>(
    backend: &B,
    config: &StarkConfig,
    airs: &[&dyn Air],
    preprocessed: &PreprocessedData,
    traces: Vec<TraceInput<B::DeviceTrace>>,
    public: &[PublicInteraction],
    statement: &[u8],
) -> Result<Proof, ProveError> {
    let lb = config.fri.log_blowup;
    let s_compile = span("compile AIRs");
    let all_compiled = compile_for(airs, config)?;
    drop(s_compile);
    if traces.len() != airs.len()
        || preprocessed.traces.len() != airs.len()
        || preprocessed.log_heights.len() != airs.len()
    {
        return Err(ProveError::Shape(format!(
            "{} tables, {} traces, {} preprocessed entries",
            airs.len(),
            traces.len(),
            preprocessed.traces.len()
        )));
    }
    // Absent tables (docs/stark.md §10): from here on, everything runs over the present tables, in table
    // order (`compiled[i]` is table `present[i]`).
    let present: Vec<usize> = (0..airs.len())
        .filter(|&t| !traces[t].is_absent())
        .collect();
    if let Some(t) =
        (0..airs.len()).find(|&t| traces[t].is_absent() && !all_compiled[t].may_be_absent)
    {
        return Err(ProveError::RequiredTableAbsent {
            table: all_compiled[t].name.clone(),
        });
    }
    if present.is_empty() {
        return Err(ProveError::Shape("every table is absent".into()));
    }
    let traces: Vec<_> = traces.into_iter().filter(|t| !t.is_absent()).collect();
    let compiled: Vec<CompiledAir> = present.iter().map(|&t| all_compiled[t].clone()).collect();
    let prep_traces: Vec<Option<&RowMajorMatrix>> = present
        .iter()
        .map(|&t| preprocessed.traces[t].as_ref())
        .collect();
    let prep_log_heights: Vec<Option<usize>> = present
        .iter()
        .map(|&t| preprocessed.log_heights[t])
        .collect();
    let nt = present.len();
    // zk: one random source for the whole proof; committed traces are 2n rows (`zk_shift = 1`).
    let rng = if config.zk {
        Some(config.zk_rng()?)
    } else {
        None
    };
    let zk_shift = config.zk as usize;
    let salt = |round: u32| rng.map(|r| (r, round));

    let s_prepare = span("backend prepare");
    backend.prepare(&compiled)?;
    drop(s_prepare);
    {
        let _s = span("reserve");
        // What the proof keeps in memory when every round is stored, before any work.
        let dims: Vec<TraceDims> = traces.iter().map(|t| backend.input_dims(t)).collect();
        let log_heights: Vec<usize> = dims.iter().map(|d| d.log_height).collect();
        let prep_widths: Vec<Option<usize>> =
            prep_traces.iter().map(|p| p.map(|m| m.width)).collect();
        let resident: u64 = traces
            .iter()
            .zip(&dims)
            .filter(|(t, _)| matches!(t, TraceInput::Device(_)))
            .map(|(_, d)| (8 * d.width as u64) << d.log_height)
            .sum();
        let footprint =
            ProofFootprint::estimate(&compiled, &log_heights, &prep_widths, config, resident);
        backend.reserve(&footprint)?;
    }

    // Main commitment (before the transcript: it does not depend on any challenge).
    let traces = match &rng {
        None => traces,
        Some(r) => {
            let _s = span("zk randomize");
            traces
                .into_iter()
                .enumerate()
                .map(|(t, tr)| backend.randomize_trace(tr, r, ROUND_MAIN, t as u64))
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    let (main_root, main) = {
        let _s = span("main commit");
        backend.commit(traces, lb, salt(ROUND_MAIN), config.hash)?
    };
    let dims = backend.trace_dims(&main);
    let min_lh = config.min_log_height();
    let mut log_heights = Vec::with_capacity(nt);
    for (t, air) in compiled.iter().enumerate() {
        let d = dims[t];
        if d.width != air.width {
            return Err(ProveError::Shape(format!(
                "table `{}`: trace width {} != {}",
                air.name, d.width, air.width
            )));
        }
        let lh = d.log_height.saturating_sub(zk_shift);
        if !(min_lh..=MAX_LOG_HEIGHT).contains(&lh) {
            return Err(ProveError::HeightOutOfRange {
                table: air.name.clone(),
                log_height: lh,
                min: min_lh,
                max: MAX_LOG_HEIGHT,
            });
        }
        if let Some(plh) = prep_log_heights[t] {
            if plh != lh {
                return Err(ProveError::Shape(format!(
                    "table `{}`: trace height 2^{lh} != preprocessed height 2^{plh}",
                    air.name
                )));
            }
        }
        log_heights.push(lh);
    }
    // Host copy of a main trace for the debug checker (`n x w`; in zk mode the even rows of the committed
    // `2n x w` trace): an explicit download.
    let host_main = |t: usize| -> Result<RowMajorMatrix, ProveError> {
        let m = backend.download_trace(&main, t)?;
        Ok(if rng.is_some() { zk::even_rows(&m) } else { m })
    };
    let budget: Vec<(usize, usize)> = compiled
        .iter()
        .zip(&log_heights)
        .map(|(a, &lh)| (lh, a.interactions.len()))
        .collect();
    if !multiplicity_budget_ok(&budget, public, config.log_max_multiplicity) {
        return Err(ProveError::MultiplicityBudget);
    }
    if config.debug_check {
        let _s = span("debug check");
        let host: Vec<_> = (0..nt).map(host_main).collect::<Result<_, _>>()?;
        let prep: Vec<Option<RowMajorMatrix>> = prep_traces.iter().map(|p| p.cloned()).collect();
        check_traces(&compiled, &host, &prep, public, config.log_max_multiplicity)?;
    }

    // Every table's height, absent ones as `None`: the transcript binds which tables are present.
    let mut all_heights: Vec<Option<usize>> = vec![None; airs.len()];
    for (i, &t) in present.iter().enumerate() {
        all_heights[t] = Some(log_heights[i]);
    }
    let s_start = span("transcript start");
    let mut transcript = start_transcript(config, &all_compiled, &all_heights, public, statement);
    drop(s_start);

    // Preprocessed LDEs for the quotient (committed by the backend for its LDEs only: the root is neither
    // observed nor opened), with the blowup the quotient reads: `B`, or `2B` in zk mode, where the main and
    // aux LDEs over `H_n` are `2n B` rows.
    let prep_tables: Vec<usize> = (0..nt).filter(|&t| prep_traces[t].is_some()).collect();
    let prep = if prep_tables.is_empty() {
        None
    } else {
        let _s = span("preprocessed LDE");
        let inputs = prep_tables
            .iter()
            .filter_map(|&t| prep_traces[t].cloned().map(TraceInput::Host))
            .collect();
        Some(backend.commit(inputs, lb + zk_shift, None, config.hash)?.1)
    };
    transcript.observe_digest(&main_root);

    // LogUp.
    let z = transcript.sample_ext();
    let a = transcript.sample_ext();
    let challenges = LogupChallenges::new(z, a, max_tuple_len(&compiled, public));
    let bus_tables: Vec<usize> = (0..nt)
        .filter(|&t| !compiled[t].interactions.is_empty())
        .collect();
    let prep_index = |t: usize| prep_tables.iter().position(|&p| p == t);
    let mut aux_traces = Vec::with_capacity(bus_tables.len());
    let mut bus_sums = vec![Ext3::ZERO; nt];
    let s_aux = span("LogUp aux");
    for &t in &bus_tables {
        let prep_round = match (&prep, prep_index(t)) {
            (Some(c), Some(i)) => Some((c, i)),
            _ => None,
        };
        // zk: the committed main trace is the randomized 2n-row one; the backend reads its even rows (the
        // trace, row stride 2) and the n-row aux trace is randomized in turn (on the device when it comes
        // back resident). The preprocessed trace is not randomized (stride 1).
        let (aux, sum) = backend.build_aux(
            &compiled[t],
            &main,
            t,
            1 + zk_shift,
            prep_round,
            &challenges,
            config.log_max_multiplicity,
        )?;
        let aux = match &rng {
            None => aux,
            Some(r) => backend.randomize_trace(aux, r, ROUND_AUX, t as u64)?,
        };
        aux_traces.push(aux);
        bus_sums[t] = sum;
    }
    // Last readers of the natural-order main and preprocessed traces.
    backend.release_traces(&main)?;
    if let Some(c) = &prep {
        backend.release_traces(c)?;
    }
    drop(s_aux);
    let aux = if bus_tables.is_empty() {
        None
    } else {
        let _s = span("aux commit");
        let (root, c) = backend.commit(aux_traces, lb, salt(ROUND_AUX), config.hash)?;
        backend.release_traces(&c)?;
        transcript.observe_digest(&root);
        Some((root, c))
    };
    let claimed: Vec<Ext3> = bus_tables.iter().map(|&t| bus_sums[t]).collect();
    transcript.observe_ext(&claimed);

    // Quotient. In zk mode the LDEs are `2n B` rows: the quotient sees blowup `2B` over `H_n`.
    let alpha = transcript.sample_ext();
    let s_quotient = span("quotient");
    let lb_q = lb + zk_shift;
    let mut quotients = Vec::with_capacity(nt + 1);
    for (t, air) in compiled.iter().enumerate() {
        let views = QuotientViews {
            main: MatrixView {
                round: &main,
                index: t,
            },
            preprocessed: prep
                .as_ref()
                .zip(prep_index(t))
                .map(|(round, index)| MatrixView { round, index }),
            aux: aux
                .as_ref()
                .zip(bus_tables.iter().position(|&b| b == t))
                .map(|((_, round), index)| MatrixView { round, index }),
            log_n: log_heights[t],
            log_blowup: lb_q,
        };
        let q = backend.quotient(air, views, &challenges, bus_sums[t], alpha)?;
        let q = match &rng {
            None => q,
            Some(r) => backend.randomize_quotient(q, r, t as u64, config.fri.num_queries)?,
        };
        quotients.push(q);
    }
    if let Some(r) = &rng {
        let lh = zk::codeword_log_height(
            &config.fri,
            log_heights.iter().copied().max().unwrap_or(0) + zk_shift,
        );
        quotients.push(backend.random_codeword(r, lh)?);
    }
    drop(s_quotient);
    let (quotient_root, quotient) = {
        let _s = span("quotient commit");
        let (root, c) = backend.commit(quotients, lb, salt(ROUND_QUOTIENT), config.hash)?;
        backend.release_traces(&c)?;
        (root, c)
    };
    transcript.observe_digest(&quotient_root);

    // Openings.
    let zeta = sample_zeta(&mut transcript);
    let two_points =
        |t: usize| -> Vec<Ext3> { vec![zeta, zeta * domain_generator(log_heights[t])] };
    let mut rounds: Vec<(&B::Committed, Vec<Vec<Ext3>>)> = Vec::new();
    rounds.push((&main, (0..nt).map(two_points).collect()));
    if let Some((_, c)) = &aux {
        rounds.push((c, bus_tables.iter().map(|&t| two_points(t)).collect()));
    }
    rounds.push((&quotient, vec![vec![zeta]; nt + rng.is_some() as usize]));
    let (opened, pcs) = {
        let _s = span("DEEP+FRI open");
        crate::pcs::open(backend, &config.fri, &rounds, &mut transcript, rng.as_ref())?
    };

    Ok(Proof {
        zk: config.zk,
        hash: config.hash,
        statement_digest: statement_digest(statement, public, &all_compiled),
        log_heights: all_heights
            .iter()
            .map(|h| h.map_or(ABSENT_LOG_HEIGHT, |h| h as u8))
            .collect(),
        main_root,
        aux_root: aux.as_ref().map(|(r, _)| *r),
        bus_sums: claimed,
        quotient_root,
        opened,
        pcs,
    })
}
