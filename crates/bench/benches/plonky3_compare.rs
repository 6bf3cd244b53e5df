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
//!     [--queries N] [--pow-bits B] [--runs 5] [--only plonky3|zkrv]
//! ```
//! Prints each run's prove time, the median per prover and the ratio zkrv / Plonky3 (> 1: zkrv slower).
//! Results are recorded in docs/PERF.md `## Plonky3 comparison`.

use std::time::Instant;

use p3_air::{Air, AirBuilder, BaseAir, WindowAccess};
use p3_challenger::{HashChallenger, SerializingChallenger64};
use p3_commit::ExtensionMmcs;
use p3_dft::Radix2DitParallel;
use p3_field::extension::CubicTrinomialExtensionField;
use p3_field::{PrimeCharacteristicRing, PrimeField64};
use p3_fri::{FriParameters, TwoAdicFriPcs};
use p3_goldilocks::Goldilocks;
use p3_keccak::Keccak256Hash;
use p3_matrix::dense::RowMajorMatrix;
use p3_merkle_tree::MerkleTreeMmcs;
use p3_symmetric::{CompressionFunctionFromHasher, SerializingHasher};
use p3_uni_stark::StarkConfig;

/// Benchmark parameters (command line, see the module docs).
#[derive(Clone, Debug)]
struct Params {
    log_height: usize,
    width: usize,
    log_blowup: usize,
    queries: usize,
    pow_bits: usize,
    runs: usize,
    only: Option<String>,
}

impl Params {
    fn from_args() -> Result<Self, String> {
        let mut p = Params {
            log_height: 16,
            width: 64,
            log_blowup: 2,
            queries: DEFAULT_QUERIES,
            pow_bits: DEFAULT_POW_BITS,
            runs: 5,
            only: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            // `cargo bench` passes `--bench`; ignore it and any filter-like word.
            if a == "--bench" || !a.starts_with("--") {
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

/// Query count and grinding bits used when not given on the command line (zkrv's default configuration).
const DEFAULT_QUERIES: usize = 100;
const DEFAULT_POW_BITS: usize = 0;

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
        log_final_poly_len: 0,
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

/// Proves `runs` times with Plonky3 (verifying the first proof), returning the prove times in seconds.
fn bench_plonky3(p: &Params, trace: &[Val]) -> Result<Vec<f64>, String> {
    let config = plonky3_config(p);
    let air = SquareChainAir { width: p.width };
    let mut times = Vec::with_capacity(p.runs);
    for run in 0..p.runs {
        let m = RowMajorMatrix::new(trace.to_vec(), p.width);
        let t0 = Instant::now();
        let proof = p3_uni_stark::prove(&config, &air, m, &[])
            .map_err(|e| format!("plonky3 prove: {e:?}"))?;
        let dt = t0.elapsed().as_secs_f64();
        if run == 0 {
            p3_uni_stark::verify(&config, &air, &proof, &[])
                .map_err(|e| format!("plonky3 verify: {e:?}"))?;
        }
        println!("plonky3 run {run}: prove {dt:.4} s");
        times.push(dt);
    }
    Ok(times)
}

// ---------------------------------------------------------------------------------------------------------------

fn median(v: &[f64]) -> f64 {
    zkrv_bench::stats::median(v)
}

fn main() {
    let p = match Params::from_args() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("plonky3_compare: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "square-chain AIR: width {}, height 2^{}, blowup 2^{}, {} queries, {} pow bits, {} runs, {} threads",
        p.width,
        p.log_height,
        p.log_blowup,
        p.queries,
        p.pow_bits,
        p.runs,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    let t0 = Instant::now();
    let trace = square_chain_trace(p.log_height, p.width);
    println!(
        "trace generation: {:.3} s (not timed below); x_0 of the last row = {}",
        t0.elapsed().as_secs_f64(),
        trace[trace.len() - p.width].as_canonical_u64()
    );

    let mut medians = Vec::new();
    if p.wants("plonky3") {
        match bench_plonky3(&p, &trace) {
            Ok(t) => medians.push(("plonky3", median(&t))),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    for (name, m) in &medians {
        println!("median prove {name}: {m:.4} s");
    }
}
