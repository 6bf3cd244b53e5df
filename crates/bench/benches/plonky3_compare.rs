//! Side-by-side prove times of Plonky3 (`p3-uni-stark` 0.9.0-rc.2) and zkrv's CPU prover on the same AIR.
//!
//! The AIR ("square-chain"): `width` columns x_0 .. x_{w-1}, `2^log_height` rows,
//! - first row: `x_i = i + 1`                                  (degree 2 with the first-row selector),
//! - transition: `x_i' = x_i^2 + x_{(i+1) mod w}` for every i  (degree 3 with the transition selector),
//!
//! so `width` constraints of degree 3 and `width` of degree 2; both provers get the same trace
//! (row-major `2^log_height x width`, natural row order), the same blowup, query count and grinding bits,
//! Keccak-256 Merkle trees over canonical little-endian rows, a Keccak-256 transcript and a cubic extension.
//!
//! ```text
//! cargo bench -p zkrv-bench --bench plonky3_compare -- [--log-height 16] [--width 64] [--log-blowup 2]
//!     [--queries N] [--pow-bits B] [--log-final-poly-len L] [--runs 5] [--only plonky3|zkrv] [--phases]
//! ```
//! Runs alternate in ABBA order (Plonky3 = A, zkrv = B) so that drift hits both alike. Prints each run's prove
//! time, the median per prover and the ratio zkrv / Plonky3 (> 1: zkrv slower).
//! Results are recorded in docs/PERF.md `## Plonky3 comparison`.

use std::time::Instant;

use p3_air::{Air, AirBuilder, BaseAir, WindowAccess};
use p3_challenger::{HashChallenger, SerializingChallenger64};
use p3_commit::ExtensionMmcs;
use p3_dft::Radix2DitParallel;
use p3_field::extension::CubicTrinomialExtensionField;
use p3_field::PrimeCharacteristicRing;
use p3_fri::{FriParameters, TwoAdicFriPcs};
use p3_goldilocks::Goldilocks;
use p3_keccak::Keccak256Hash;
use p3_matrix::dense::RowMajorMatrix;
use p3_merkle_tree::MerkleTreeMmcs;
use p3_symmetric::{CompressionFunctionFromHasher, SerializingHasher};
use p3_uni_stark::StarkConfig;
use zkrv_bench::abba::{abba_schedule, Side};
use zkrv_bench::stats::{coefficient_of_variation, median};

/// Benchmark parameters (command line, see the module docs).
#[derive(Clone, Debug)]
struct Params {
    log_height: usize,
    width: usize,
    log_blowup: usize,
    queries: usize,
    pow_bits: usize,
    log_final_poly_len: usize,
    runs: usize,
    only: Option<String>,
    /// Also time the proving phases of both provers (extra runs after the ABBA runs).
    phases: bool,
}

impl Params {
    fn from_args() -> Result<Self, String> {
        // Defaults: zkrv's default configuration.
        let fri = zkrv_stark::config::StarkConfig::default().fri;
        let mut p = Params {
            log_height: 16,
            width: 64,
            log_blowup: fri.log_blowup,
            queries: fri.num_queries,
            pow_bits: fri.query_grinding_bits as usize,
            log_final_poly_len: fri.log_final_poly_len,
            runs: 5,
            only: None,
            phases: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            // `cargo bench` passes `--bench`; ignore it and any filter-like word.
            if a == "--bench" || !a.starts_with("--") {
                continue;
            }
            if a == "--phases" {
                p.phases = true;
                continue;
            }
            let v = args.next().ok_or(format!("{a} needs a value"))?;
            let num = || v.parse::<usize>().map_err(|e| format!("{a} {v}: {e}"));
            match a.as_str() {
                "--log-height" => p.log_height = num()?,
                "--width" => p.width = num()?,
                "--log-blowup" => p.log_blowup = num()?,
                "--queries" => p.queries = num()?,
                "--pow-bits" => p.pow_bits = num()?,
                "--log-final-poly-len" => p.log_final_poly_len = num()?,
                "--runs" => p.runs = num()?,
                "--only" => p.only = Some(v.clone()),
                _ => return Err(format!("unknown option {a}")),
            }
        }
        if p.width < 2 || p.runs == 0 || p.log_height < 3 {
            return Err("need --width >= 2, --runs >= 1, --log-height >= 3".into());
        }
        Ok(p)
    }

    fn wants(&self, which: &str) -> bool {
        self.only.as_deref().is_none_or(|o| o == which)
    }
}

type Val = Goldilocks;

/// The trace: row 0 is `x_i = i + 1`, row r+1 is `x_i = x_i^2 + x_{i+1 mod w}` of row r.
/// Returned as row-major canonical u64 values, `2^log_height x width`.
fn square_chain_trace(log_height: usize, width: usize) -> Vec<Val> {
    let n = 1usize << log_height;
    let mut v = Vec::with_capacity(n * width);
    v.extend((0..width).map(|i| Val::from_u64(i as u64 + 1)));
    for r in 1..n {
        let prev = (r - 1) * width;
        for i in 0..width {
            let x = v[prev + i];
            let y = v[prev + (i + 1) % width];
            v.push(x * x + y);
        }
    }
    v
}

// ---------------------------------------------------------------------------------------------------------------
// Plonky3 side.

/// The square-chain AIR for `p3-uni-stark`.
struct SquareChainAir {
    width: usize,
}

impl<F> BaseAir<F> for SquareChainAir {
    fn width(&self) -> usize {
        self.width
    }

    fn max_constraint_degree(&self) -> Option<usize> {
        Some(3)
    }
}

impl<AB: AirBuilder> Air<AB> for SquareChainAir {
    fn eval(&self, builder: &mut AB) {
        let main = builder.main();
        let local: Vec<AB::Var> = main.current_slice().to_vec();
        let next: Vec<AB::Var> = main.next_slice().to_vec();
        let w = self.width;
        {
            let mut first = builder.when_first_row();
            for (i, x) in local.iter().enumerate() {
                first.assert_eq(*x, AB::Expr::from_u64(i as u64 + 1));
            }
        }
        let mut tr = builder.when_transition();
        for i in 0..w {
            let x: AB::Expr = local[i].into();
            tr.assert_eq(next[i], x.clone() * x + local[(i + 1) % w].into());
        }
    }
}

type Challenge = CubicTrinomialExtensionField<Val>;
type ByteHash = Keccak256Hash;
type FieldHash = SerializingHasher<ByteHash>;
type Compress = CompressionFunctionFromHasher<ByteHash, 2, 32>;
type ValMmcs = MerkleTreeMmcs<Val, u8, FieldHash, Compress, 2, 32>;
type ChallengeMmcs = ExtensionMmcs<Val, Challenge, ValMmcs>;
type Challenger = SerializingChallenger64<Val, HashChallenger<u8, ByteHash, 32>>;
type Pcs = TwoAdicFriPcs<Val, Radix2DitParallel<Val>, ValMmcs, ChallengeMmcs>;
type P3Config = StarkConfig<Pcs, Challenge, Challenger>;

/// Plonky3 configuration: Keccak-256 over canonical LE bytes for leaves and 2-to-1 compression (as zkrv),
/// binary FRI folding down to a constant, `queries` queries, `pow_bits` of query grinding.
fn plonky3_config(p: &Params) -> P3Config {
    let val_mmcs = ValMmcs::new(FieldHash::new(ByteHash {}), Compress::new(ByteHash {}), 0);
    let challenge_mmcs = ChallengeMmcs::new(val_mmcs.clone());
    let fri_params = FriParameters {
        log_blowup: p.log_blowup,
        log_final_poly_len: p.log_final_poly_len,
        max_log_arity: 1,
        num_queries: p.queries,
        batch_proof_of_work_bits: 0,
        commit_proof_of_work_bits: 0,
        query_proof_of_work_bits: p.pow_bits,
        mmcs: challenge_mmcs,
    };
    let pcs = Pcs::new(Radix2DitParallel::default(), val_mmcs, fri_params);
    P3Config::new(pcs, Challenger::from_hasher(vec![], ByteHash {}))
}

/// One Plonky3 proof of `trace`; returns the prove time in seconds (verifying the proof when `verify`).
fn prove_plonky3(
    config: &P3Config,
    p: &Params,
    trace: &[Val],
    verify: bool,
) -> Result<f64, String> {
    let air = SquareChainAir { width: p.width };
    let m = RowMajorMatrix::new(trace.to_vec(), p.width);
    let t0 = Instant::now();
    let proof =
        p3_uni_stark::prove(config, &air, m, &[]).map_err(|e| format!("plonky3 prove: {e:?}"))?;
    let dt = t0.elapsed().as_secs_f64();
    if verify {
        p3_uni_stark::verify(config, &air, &proof, &[])
            .map_err(|e| format!("plonky3 verify: {e:?}"))?;
    }
    Ok(dt)
}

// ---------------------------------------------------------------------------------------------------------------
// zkrv side.

/// The square-chain AIR on zkrv's AIR builder (same constraints, same order as [`SquareChainAir`]).
struct ZkSquareChainAir {
    width: usize,
}

impl zkrv_stark::air::Air for ZkSquareChainAir {
    fn name(&self) -> &str {
        "square-chain"
    }

    fn width(&self) -> usize {
        self.width
    }

    fn eval(&self, b: &mut zkrv_stark::air::AirBuilder) {
        let w = self.width;
        for i in 0..w {
            let e = b.is_first_row() * (b.main(i) - (i as u64 + 1));
            b.assert_zero(format!("first_x{i}"), e);
        }
        for i in 0..w {
            let x = b.main(i);
            let e = b.is_transition() * (b.main_next(i) - (x.clone() * x + b.main((i + 1) % w)));
            b.assert_zero(format!("step_x{i}"), e);
        }
    }
}

/// zkrv configuration: the default [`zkrv_stark::config::StarkConfig`] with the benchmark's blowup, query
/// count and grinding bits.
fn zkrv_config(p: &Params) -> zkrv_stark::config::StarkConfig {
    let mut c = zkrv_stark::config::StarkConfig::default();
    c.fri.log_blowup = p.log_blowup;
    c.fri.num_queries = p.queries;
    c.fri.query_grinding_bits = p.pow_bits as u32;
    c.fri.log_final_poly_len = p.log_final_poly_len;
    c
}

/// One zkrv CPU proof of `trace`; returns the prove time in seconds and the proof size in bytes (verifying
/// the proof when `verify`).
fn prove_zkrv(
    config: &zkrv_stark::config::StarkConfig,
    p: &Params,
    trace: &[Val],
    verify: bool,
) -> Result<(f64, usize), String> {
    use zkrv_stark::air::Air;
    let air = ZkSquareChainAir { width: p.width };
    let airs: [&dyn Air; 1] = [&air];
    let pre = zkrv_stark::prover::preprocess(&airs, vec![None])
        .map_err(|e| format!("zkrv preprocess: {e}"))?;
    let statement = b"plonky3_compare";
    let m = zkrv_stark::matrix::RowMajorMatrix::new(trace.to_vec(), p.width);
    let t0 = Instant::now();
    let proof = zkrv_stark::prover::prove(config, &airs, &pre, vec![m], &[], statement)
        .map_err(|e| format!("zkrv prove: {e}"))?;
    let dt = t0.elapsed().as_secs_f64();
    let bytes = proof.to_bytes();
    if verify {
        zkrv_stark::verifier::verify_bytes(config, 0, &airs, &pre, &[], statement, &bytes)
            .map_err(|e| format!("zkrv verify: {e}"))?;
    }
    Ok((dt, bytes.len()))
}

// ---------------------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------------------
// Phase timing (--phases).

/// A minimal `tracing` subscriber that adds up the wall time (creation to close) of every span by name.
/// Plonky3's prover is instrumented with spans ("commit to trace data", "commit to quotient poly chunks",
/// "open", ...); zkrv's phases are timed by calling its backend directly ([`zkrv_phases`]).
mod span_timer {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;
    use std::time::Instant;

    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    #[derive(Default)]
    pub struct SpanTimer {
        next: AtomicU64,
        /// id -> (name, start, reference count)
        live: Mutex<HashMap<u64, (&'static str, Instant, usize)>>,
        /// name -> total seconds
        pub totals: Mutex<HashMap<&'static str, f64>>,
    }

    impl SpanTimer {
        pub fn take(&self) -> HashMap<&'static str, f64> {
            std::mem::take(&mut *self.totals.lock().unwrap_or_else(|e| e.into_inner()))
        }
    }

    impl Subscriber for SpanTimer {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            live.insert(id, (span.metadata().name(), Instant::now(), 1));
            Id::from_u64(id)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
        fn clone_span(&self, id: &Id) -> Id {
            if let Some(e) = self
                .live
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(&id.into_u64())
            {
                e.2 += 1;
            }
            id.clone()
        }
        fn try_close(&self, id: Id) -> bool {
            let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            let Some(e) = live.get_mut(&id.into_u64()) else {
                return false;
            };
            e.2 -= 1;
            if e.2 > 0 {
                return false;
            }
            let (name, start, _) = *e;
            live.remove(&id.into_u64());
            drop(live);
            *self
                .totals
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(name)
                .or_default() += start.elapsed().as_secs_f64();
            true
        }
    }
}

/// Named phase durations in seconds, in protocol order.
type Phases = Vec<(&'static str, f64)>;

/// Plonky3's phases from its tracing spans; the quotient phase (LDE onto the quotient domain + constraint
/// evaluation) is what is left of `prove` after the three named spans.
fn plonky3_phases(
    timer: &span_timer::SpanTimer,
    config: &P3Config,
    p: &Params,
    trace: &[Val],
) -> Result<Phases, String> {
    timer.take();
    let total = prove_plonky3(config, p, trace, false)?;
    let t = timer.take();
    let get = |k: &str| t.get(k).copied().unwrap_or(0.0);
    let (c, q, o) = (
        get("commit to trace data"),
        get("commit to quotient poly chunks"),
        get("open"),
    );
    Ok(vec![
        ("commit main (LDE + Merkle)", c),
        ("quotient (LDE + constraints)", total - c - q - o),
        ("commit quotient", q),
        ("open (DEEP + FRI)", o),
        ("total", total),
    ])
}

/// zkrv's phases, each timed around the backend call the prover makes (main commit, quotient, quotient
/// commit, DEEP+FRI opening at the prover's points); "other" is a full `prove` minus their sum.
fn zkrv_phases(
    config: &zkrv_stark::config::StarkConfig,
    p: &Params,
    trace: &[Val],
) -> Result<Phases, String> {
    use zkrv_stark::backend::{
        CommitOps, CpuBackend, MatrixView, QuotientOps, QuotientViews, TraceInput,
    };
    use zkrv_stark::field::Ext3;
    let (total, _) = prove_zkrv(config, p, trace, false)?;
    let lb = config.fri.log_blowup;
    let air = ZkSquareChainAir { width: p.width };
    let compiled = zkrv_stark::air::CompiledAir::new(&air, config.max_constraint_degree())
        .map_err(|e| e.to_string())?;
    let backend = CpuBackend::default();
    let m = zkrv_stark::matrix::RowMajorMatrix::new(trace.to_vec(), p.width);
    let t0 = Instant::now();
    let (_, main) = backend
        .commit(
            vec![TraceInput::Host(m)],
            lb,
            None,
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .map_err(|e| e.to_string())?;
    let t_commit = t0.elapsed().as_secs_f64();
    let e = |a: u64, b: u64, c: u64| Ext3::from_u64s([a, b, c]);
    let challenges = zkrv_stark::logup::LogupChallenges::new(e(3, 5, 7), e(11, 13, 17), 1);
    let t0 = Instant::now();
    let views = QuotientViews {
        main: MatrixView {
            round: &main,
            index: 0,
        },
        preprocessed: None,
        aux: None,
        log_n: p.log_height,
        log_blowup: lb,
    };
    let q = backend
        .quotient(&compiled, views, &challenges, Ext3::ZERO, e(19, 23, 29))
        .map_err(|e| e.to_string())?;
    let TraceInput::Host(q) = q;
    let t_quot = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let (_, quotient) = backend
        .commit(
            vec![TraceInput::Host(q)],
            lb,
            None,
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .map_err(|e| e.to_string())?;
    let t_qcommit = t0.elapsed().as_secs_f64();
    let zeta = e(31, 37, 41);
    let zeta_next = zeta * Ext3::from_base(zkrv_stark::poly::domain_generator(p.log_height));
    let rounds = vec![
        (&main, vec![vec![zeta, zeta_next]]),
        (&quotient, vec![vec![zeta]]),
    ];
    let mut transcript = zkrv_stark::transcript::Transcript::new(b"plonky3_compare phases");
    let t0 = Instant::now();
    let _ = zkrv_stark::pcs::open(&backend, &config.fri, &rounds, &mut transcript, None)
        .map_err(|e| e.to_string())?;
    let t_open = t0.elapsed().as_secs_f64();
    Ok(vec![
        ("commit main (LDE + Merkle)", t_commit),
        ("quotient (LDE + constraints)", t_quot),
        ("commit quotient", t_qcommit),
        ("open (DEEP + FRI)", t_open),
        (
            "other (prove - phases)",
            total - t_commit - t_quot - t_qcommit - t_open,
        ),
        ("total", total),
    ])
}

/// Medians per phase over `runs` runs of each prover, printed as a table.
fn report_phases(timer: &span_timer::SpanTimer, p: &Params, trace: &[Val]) -> Result<(), String> {
    let (p3_config, zk_config) = (plonky3_config(p), zkrv_config(p));
    let (mut p3, mut zk): (Vec<Phases>, Vec<Phases>) = (Vec::new(), Vec::new());
    for _ in 0..p.runs {
        if p.wants("plonky3") {
            p3.push(plonky3_phases(timer, &p3_config, p, trace)?);
        }
        if p.wants("zkrv") {
            zk.push(zkrv_phases(&zk_config, p, trace)?);
        }
    }
    for (name, runs) in [("plonky3", &p3), ("zkrv", &zk)] {
        let Some(first) = runs.first() else { continue };
        println!("phases {name} (median of {} runs):", runs.len());
        for (i, (phase, _)) in first.iter().enumerate() {
            let v: Vec<f64> = runs.iter().map(|r| r[i].1).collect();
            println!("  {phase:<30} {:>9.4} s", median(&v));
        }
    }
    Ok(())
}

fn run(p: &Params, timer: Option<&span_timer::SpanTimer>) -> Result<(), String> {
    println!(
        "square-chain AIR: width {}, height 2^{}, blowup 2^{}, {} queries, {} grinding bits, final poly 2^{}, \
         {} runs, {} threads",
        p.width,
        p.log_height,
        p.log_blowup,
        p.queries,
        p.pow_bits,
        p.log_final_poly_len,
        p.runs,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    let t0 = Instant::now();
    let trace = square_chain_trace(p.log_height, p.width);
    println!(
        "trace generation: {:.3} s (not timed below)",
        t0.elapsed().as_secs_f64()
    );

    let p3_config = plonky3_config(p);
    let zk_config = zkrv_config(p);
    let (mut t_p3, mut t_zk) = (Vec::new(), Vec::new());
    // ABBA order across runs (zkrv-abba's schedule), so that drift hits both provers alike.
    for (run, side) in abba_schedule(p.runs) {
        let verify = run == 0;
        match side {
            Side::A if p.wants("plonky3") => {
                let dt = prove_plonky3(&p3_config, p, &trace, verify)?;
                println!(
                    "run {run} plonky3: prove {dt:.4} s{}",
                    if verify { " (verified)" } else { "" }
                );
                t_p3.push(dt);
            }
            Side::B if p.wants("zkrv") => {
                let (dt, bytes) = prove_zkrv(&zk_config, p, &trace, verify)?;
                println!(
                    "run {run} zkrv:    prove {dt:.4} s, {bytes} proof bytes{}",
                    if verify { " (verified)" } else { "" }
                );
                t_zk.push(dt);
            }
            _ => {}
        }
    }
    let (m_p3, m_zk) = (median(&t_p3), median(&t_zk));
    if !t_p3.is_empty() {
        println!(
            "median prove plonky3: {m_p3:.4} s (CV {:.1}%)",
            100.0 * coefficient_of_variation(&t_p3)
        );
    }
    if !t_zk.is_empty() {
        println!(
            "median prove zkrv:    {m_zk:.4} s (CV {:.1}%)",
            100.0 * coefficient_of_variation(&t_zk)
        );
    }
    if !t_p3.is_empty() && !t_zk.is_empty() {
        println!("ratio zkrv / plonky3 (medians): {:.3}", m_zk / m_p3);
    }
    if let Some(timer) = timer {
        report_phases(timer, p, &trace)?;
    }
    Ok(())
}

fn main() {
    let result = Params::from_args().and_then(|p| {
        if p.phases {
            let timer = std::sync::Arc::new(span_timer::SpanTimer::default());
            tracing::subscriber::set_global_default(timer.clone()).map_err(|e| e.to_string())?;
            run(&p, Some(&timer))
        } else {
            run(&p, None)
        }
    });
    if let Err(e) = result {
        eprintln!("plonky3_compare: {e}");
        std::process::exit(1);
    }
}
