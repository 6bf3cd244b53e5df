//! LogUp aux build, GPU (`zkrv_cuda::logup::build_aux_device`, from a resident main trace) vs CPU
//! (`zkrv_stark::logup::build_aux_trace`, 16 threads on the H200 host), and the transfers the GPU path avoids (the
//! device->host copy of the main trace, the host->device copy of the aux trace), timed on this machine.
//! Run: `cargo bench -p zkrv-machine-cuda --features cuda --bench logup_aux` (exits 0 with a message without a GPU).
//!
//! Cases: every table with interactions of the guest `ZKRV_BENCH_GUEST` (default `rv64im`, its example input),
//! then a synthetic 6-column table with 14 interactions (5 term columns) at `2^ZKRV_BENCH_LOG_N` rows (default
//! 22). GPU time: wall clock of the whole build after a warm-up (includes the error-flag and bus-sum
//! downloads), median of `ZKRV_BENCH_REPS` (default 5); CPU time: median of 3.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zkrv_cuda::logup::build_aux_device;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_stark::air::{Air, AirBuilder, CompiledAir};
use zkrv_stark::field::{Ext3, PrimeField64, F};
use zkrv_stark::logup::{build_aux_trace, max_tuple_len, LogupChallenges};
use zkrv_stark::matrix::RowMajorMatrix;

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The synthetic table (same shape as `SinkAir` in tests/logup_parity.rs).
struct SinkAir;

impl Air for SinkAir {
    fn name(&self) -> &str {
        "sink"
    }
    fn width(&self) -> usize {
        6
    }
    fn preprocessed_width(&self) -> usize {
        2
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<_> = (0..6).map(|i| b.main(i)).collect();
        b.send(
            3,
            vec![
                m[0].clone(),
                m[1].clone() * m[2].clone() + 5u64,
                -m[3].clone(),
                b.main_next(0),
            ],
            1u64,
        );
        b.receive(
            4,
            vec![b.preprocessed(0), b.preprocessed_next(1)],
            m[4].clone(),
        );
        b.send(5, vec![b.is_transition() * m[5].clone()], b.is_first_row());
        for i in 0..10 {
            b.send(7, vec![m[i % 6].clone() - (i as u64)], 1u64);
        }
        b.receive(8, vec![m[0].clone() - m[1].clone()], m[4].clone() * 3u64);
    }
}

struct Case {
    label: String,
    air: CompiledAir,
    main: RowMajorMatrix,
    prep: Option<RowMajorMatrix>,
}

fn canon(m: &RowMajorMatrix) -> Vec<u64> {
    m.values.iter().map(|x| x.as_canonical_u64()).collect()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench: {e}");
        std::process::exit(
            if matches!(
                e,
                CudaError::NoLibCuda | CudaError::NoGpu(_) | CudaError::NoNvrtc
            ) {
                0
            } else {
                1
            },
        );
    }
}

fn run() -> Result<(), CudaError> {
    let dev = Device::new()?;
    dev.set_debug(false);
    let reps = env("ZKRV_BENCH_REPS", 5) as usize;
    let log_n = env("ZKRV_BENCH_LOG_N", 22) as usize;
    let guest = std::env::var("ZKRV_BENCH_GUEST").unwrap_or_else(|_| "rv64im".into());
    let config = zkrv_stark::StarkConfig::default();
    let bits = config.log_max_multiplicity;
    let mut rng = StdRng::seed_from_u64(1);
    println!(
        "device: {}; host threads: {}",
        dev.name(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    let mut cases = Vec::new();
    let root = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let elf = std::fs::read(format!("{root}/bin/{guest}.elf"))
        .map_err(|e| CudaError::InvalidArgument(format!("guest {guest}: {e}")))?;
    let input = std::fs::read(format!("{root}/inputs/{guest}.bin")).unwrap_or_default();
    let program = zkrv_executor::Program::from_elf(&elf)
        .map_err(|e| CudaError::InvalidArgument(format!("{e:?}")))?;
    let checker = zkrv_machine::WitnessChecker::new(&program, &config)
        .map_err(|e| CudaError::InvalidArgument(e.to_string()))?;
    let w = zkrv_machine::witness(&program, &input)
        .map_err(|e| CudaError::InvalidArgument(e.to_string()))?;
    for (t, air) in checker.compiled().iter().enumerate() {
        if !air.interactions.is_empty() {
            cases.push(Case {
                label: format!("{guest}/{}", air.name),
                air: air.clone(),
                main: w.traces[t].clone(),
                prep: checker.preprocessed()[t].clone(),
            });
        }
    }
    let sink =
        CompiledAir::new(&SinkAir, 3).map_err(|e| CudaError::InvalidArgument(e.to_string()))?;
    let n = 1usize << log_n;
    let main: Vec<F> = (0..6 * n)
        .map(|i| {
            F::new(if i % 6 == 4 {
                rng.gen::<u64>() >> 44
            } else {
                rng.gen::<u64>() % zkrv_stark::field::P
            })
        })
        .collect();
    let prep: Vec<F> = (0..2 * n)
        .map(|_| F::new(rng.gen::<u64>() % zkrv_stark::field::P))
        .collect();
    cases.push(Case {
        label: "sink".into(),
        air: sink,
        main: RowMajorMatrix::new(main, 6),
        prep: Some(RowMajorMatrix::new(prep, 2)),
    });

    let airs: Vec<CompiledAir> = cases.iter().map(|c| c.air.clone()).collect();
    let rand_ext =
        |rng: &mut StdRng| Ext3([0u8; 3].map(|_| F::new(rng.gen::<u64>() % zkrv_stark::field::P)));
    let ch = LogupChallenges::new(
        rand_ext(&mut rng),
        rand_ext(&mut rng),
        max_tuple_len(&airs, &[]),
    );

    println!(
        "{:<22} {:>9} {:>5} {:>4} {:>10} {:>10} {:>7} {:>12} {:>10} {:>12} {:>10}",
        "table",
        "rows",
        "k",
        "aux",
        "gpu ms",
        "cpu ms",
        "cpu/gpu",
        "main bytes",
        "d2h ms",
        "aux bytes",
        "h2d ms"
    );
    let (mut tg, mut tc, mut td, mut tu) = (0.0, 0.0, 0.0, 0.0);
    for c in &cases {
        let d_main = dev.upload(&canon(&c.main))?;
        let d_prep = match &c.prep {
            Some(p) => Some(dev.upload(&canon(p))?),
            None => None,
        };
        let lh = c.main.log_height().unwrap_or(0) as u32;
        let mut stats = TransferStats::default();
        let mut build = || {
            build_aux_device(
                &dev,
                &c.air,
                &d_main,
                lh,
                d_prep.as_ref(),
                &ch,
                bits,
                &mut stats,
                &c.label,
            )
            .map_err(|e| CudaError::InvalidArgument(e.to_string()))
        };
        let (aux, _) = build()?; // warm-up: compile or load the generated program
        let mut g = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            build()?;
            g.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut cpu = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let _ = build_aux_trace(&c.air, &c.main, c.prep.as_ref(), &ch, bits);
            cpu.push(t.elapsed().as_secs_f64() * 1e3);
        }
        // The copies the old path made: main trace down (host copy at commit), aux trace up (aux commit).
        let t = Instant::now();
        let h_main = dev.download(&d_main)?;
        let d2h = t.elapsed().as_secs_f64() * 1e3;
        let h_aux = dev.download(&aux.data)?;
        let t = Instant::now();
        let back = dev.upload(&h_aux)?;
        dev.synchronize()?;
        let h2d = t.elapsed().as_secs_f64() * 1e3;
        drop(back);
        let (gm, cm) = (median(g), median(cpu));
        println!(
            "{:<22} {:>9} {:>5} {:>4} {:>10.3} {:>10.3} {:>7.1} {:>12} {:>10.3} {:>12} {:>10.3}",
            c.label,
            c.main.height(),
            c.air.interactions.len(),
            c.air.aux_width(),
            gm,
            cm,
            cm / gm,
            h_main.len() * 8,
            d2h,
            h_aux.len() * 8,
            h2d
        );
        if c.label != "sink" {
            (tg, tc, td, tu) = (tg + gm, tc + cm, td + d2h, tu + h2d);
        }
    }
    println!(
        "{guest} total: gpu {tg:.3} ms, cpu {tc:.3} ms, avoided copies {:.3} ms (d2h {td:.3} + h2d {tu:.3})",
        td + tu
    );
    Ok(())
}
