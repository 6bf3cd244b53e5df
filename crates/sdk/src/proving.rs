//! Proving a run: [`prove`] (quiet) and [`prove_with`] (the same, reporting to a [`ProveObserver`]), the
//! one place that decides between one proof and segments, opens the engines, validates the segment size,
//! cycle limit and job count, and records the profile.
//!
//! The two paths (docs/continuations.md):
//! * **One proof** (a run of at most [`MAX_PROVABLE_CYCLES`] cycles without
//!   [`ProveOptions::segment_cycles`], or one that fits in one segment of it): the stages of [`STAGES`]
//!   in order, `execute` (the run, no recording), `trace generation` (the run again with recording, the
//!   main traces: device fills on a GPU unless [`ProveOptions::cpu_trace`]), `prove` (the STARK).
//! * **Segments**: the run executed once in recording mode and cut at checkpoints
//!   (`zkrv_machine::segment::plan_run`), then every segment re-executed from its checkpoint, its traces
//!   generated (on the host for the CPU engine; on the device from the segment's record and start state
//!   for a GPU one, unless [`ProveOptions::cpu_trace`]) and proven: on the CPU
//!   [`ProveOptions::segment_jobs`] at a time, on the GPU one worker per device of [`ProveOptions::gpus`],
//!   the host stage of a device's next segment overlapping its current proof
//!   ([`ProveObserver::segment_done`] after each).

use crate::engine::Engine;
use crate::estimate::{rows_to_prove, Work};
use crate::{
    default_segment_rows, Error, Program, ProveOptions, Receipt, ReceiptProof, SegmentDone,
    SegmentProof, MAX_PROVABLE_CYCLES,
};
use std::sync::Arc;
use std::time::Instant;
use zkrv_machine::segment::RunPlan;
use zkrv_stark::backend::LdeMode;
use zkrv_stark::profile::{self, Profile};
use zkrv_stark::StarkConfig;

/// The stages of a one-proof run, in order (the names [`ProveObserver::stage_started`] gets and the
/// top-level stages of [`Proved::profile`]).
pub const STAGES: [&str; 3] = ["execute", "trace generation", "prove"];

/// What [`prove_with`] reports while it proves. Every method has a default that does nothing; the
/// methods are called on the calling thread, except [`ProveObserver::segment_done`] (a segment worker's
/// thread, hence `Send + Sync`).
pub trait ProveObserver: Send + Sync {
    /// A stage of [`STAGES`] starts (one-proof path only).
    fn stage_started(&self, _stage: &str) {}
    /// A stage of [`STAGES`] ended (also on error) after `secs` seconds of wall time.
    fn stage_finished(&self, _stage: &str, _secs: f64) {}
    /// A prover span starts inside a stage: its profile path, `stage/sub/...` (e.g.
    /// `prove/main commit/LDE`; [`zkrv_stark::profile`]).
    fn substage(&self, _path: &str) {}
    /// What the guest wrote to fd 2 (not proven): once, after the execution pass, before any proving, and
    /// on an execution error before [`Error::Exec`] is returned.
    fn guest_stderr(&self, _bytes: &[u8]) {}
    /// Something the caller may want to tell its user ([`Note`]).
    fn note(&self, _note: &Note<'_>) {}
    /// The plan, after the execution pass and before any proving: an `Err` stops the run with
    /// [`Error::Refused`] carrying it (e.g. a host that refuses a CPU proof estimated to take hours).
    fn check_plan(&self, _plan: &Plan) -> Result<(), String> {
        Ok(())
    }
    /// A segment of a segmented run is proven (progress: [`SegmentDone::done`] of [`SegmentDone::count`]).
    fn segment_done(&self, _done: &SegmentDone) {}
}

/// The observer of [`prove`]: reports nothing.
struct Quiet;
impl ProveObserver for Quiet {}

/// The events of [`ProveObserver::note`], in the order they can happen.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Note<'a> {
    /// [`crate::Backend::Auto`] found no usable GPU (the reason): proving on the CPU.
    GpuFallback {
        /// Why no GPU could be used.
        reason: &'a str,
    },
    /// With [`ProveOptions::segment_cycles`] `Some(rows)`: the run fits in one segment of `rows` rows, so
    /// it is proven as one proof (the same bytes as without a segment size).
    FitsOneSegment {
        /// The segment size asked for.
        rows: u64,
    },
    /// The one-proof path starts (its `execute` stage next) on `engine` ([`Engine::name`]).
    ProvingOne {
        /// `cpu` or `gpu (<device>)`.
        engine: &'a str,
    },
    /// Without a segment size: the run (`cycles`) fits in one proof (after [`ProveObserver::check_plan`]).
    FitsOneProof {
        /// Cycles of the run.
        cycles: u64,
    },
    /// Without a segment size: the run is longer than one proof holds ([`MAX_PROVABLE_CYCLES`]); it is
    /// proven in segments of `rows` rows, the backend's default ([`default_segment_rows`]).
    TooLongForOneProof {
        /// The default segment size used.
        rows: u64,
        /// Whether the backend is a GPU (its default differs from the CPU's).
        gpu: bool,
    },
    /// The guest exited with `code`, not 0: the proof will say so (and `Receipt::verify` refuses it).
    ExitCode {
        /// The guest's exit code.
        code: u32,
    },
    /// The segmented path starts proving its segments ([`Plan::segments`] is `Some`).
    ProvingSegments(&'a Plan),
}

/// What is about to be proven ([`ProveObserver::check_plan`], [`Note::ProvingSegments`]).
#[derive(Clone, Debug)]
pub struct Plan {
    /// Whether the engines are GPUs.
    pub gpu: bool,
    /// The first engine's name (`cpu`, `gpu (<device>)`).
    pub engine: String,
    /// Devices proving (1 on the CPU and for one proof; [`ProveOptions::gpus`] for segments on GPUs).
    pub devices: usize,
    /// Cycles of the run.
    pub cycles: u64,
    /// The guest's exit code.
    pub exit_code: u32,
    /// `None`: one proof; `Some(s)`: segments.
    pub segments: Option<SegmentPlan>,
    /// The CPU-table rows to prove ([`crate::estimate`]'s measure of the work).
    pub work: Work,
    /// The STARK parameters the proof uses.
    pub config: StarkConfig,
}

/// The segments of a segmented [`Plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentPlan {
    /// Segments in the run.
    pub count: usize,
    /// CPU rows per segment (a power of two; at most `rows - 1` cycles each).
    pub rows: u64,
    /// CPU backend: segments proven at the same time ([`ProveOptions::segment_jobs`] or
    /// [`default_segment_jobs`], at most `count`); on GPUs one per device.
    pub jobs: usize,
}

/// GPU only: the live-buffer figures of a device after the proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceBuffers {
    /// High-water mark of the bytes held by live device buffers.
    pub peak: u64,
    /// The device's memory budget, bytes.
    pub budget: u64,
    /// The last proof's estimate of its device bytes, made before it started.
    pub estimate: u64,
    /// Whether that proof recomputed its LDEs per coset block (the stored proof did not fit, or the GPU
    /// LDE mode asked for it).
    pub recomputed: bool,
}

/// One device of a GPU proof ([`Proved::devices`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceReport {
    /// `gpu (<device name>)`.
    pub name: String,
    /// Device memory taken during the proof: the memory in use (`cuMemGetInfo`, total - free) after it,
    /// less that before it, bytes (`None` if the driver did not say).
    pub memory_used: Option<u64>,
    /// The device's live-buffer figures.
    pub buffers: Option<DeviceBuffers>,
}

/// What [`prove`] returns.
#[derive(Debug)]
pub struct Proved {
    /// The proven statement, its proof and parameters.
    pub receipt: Receipt,
    /// Instructions executed (including the final ECALL).
    pub cycles: u64,
    /// What the guest wrote to fd 2 (not proven).
    pub debug_output: Vec<u8>,
    /// The engine that proved (`cpu`, `gpu (<name>)`; `N x gpu (<name>)` for segments on N devices).
    pub engine: String,
    /// Why `Backend::Auto` fell back to the CPU.
    pub fallback: Option<String>,
    /// One entry per segment of a segmented proof, in segment order (worker, witness and proof seconds,
    /// the prover's stages); empty for one proof.
    pub segments: Vec<SegmentDone>,
    /// Seconds of proving: the `prove` stage of one proof; the whole segment pipeline of a segmented one.
    pub prove_secs: f64,
    /// The stages, seconds and calls: one proof's [`STAGES`] with the prover's spans under them; for
    /// segments `segments` (the pipeline's wall time) with `segments/witness (sum)` and
    /// `segments/prove (sum)` (the segments' prover spans summed under it).
    pub profile: Profile,
    /// GPU only: the host<->device transfers of the proof (summed over the devices and segments).
    pub transfers: Option<crate::TransferStats>,
    /// GPU one-proof only: the trace-generation report (per table: device fill or host, times, bytes),
    /// as text.
    pub trace_report: Option<String>,
    /// GPU only: one entry per device, in ordinal order; empty on the CPU.
    pub devices: Vec<DeviceReport>,
}

/// Runs `program` on the private `input` and proves the run (see [`ProveOptions`]) without reporting
/// progress: [`prove_with`] with an observer that does nothing.
pub fn prove(program: &Program, input: &[u8], opts: &ProveOptions) -> Result<Proved, Error> {
    prove_with(program, input, opts, Arc::new(Quiet))
}

/// Runs `program` on the private `input` and proves the run (see [`ProveOptions`] and the module doc),
/// reporting to `observer`. Errors: a bad segment size, cycle limit or job count ([`Error::SegmentSize`],
/// [`Error::CycleLimitTooLarge`], [`Error::SegmentJobs`], before the guest runs), a zero-knowledge run that
/// needs segments without [`ProveOptions::public_segment_boundaries`] ([`Error::PublicSegmentBoundaries`],
/// before any segment is proven), the observer refuses the plan ([`Error::Refused`]), the run fails or
/// exceeds `max_cycles` ([`Error::Exec`]), exceeds what can be proven ([`Error::Machine`] with
/// `MachineError::TooMuchMemory`), no GPU for [`crate::Backend::Gpu`] ([`Error::NoGpu`]) or fewer than
/// [`ProveOptions::gpus`] ([`Error::GpuCount`]), or a prover error (a segment's names it:
/// `MachineError::Segment`). A run that exits with a code other than 0 is proven: check
/// [`Receipt::exit_code`].
pub fn prove_with(
    program: &Program,
    input: &[u8],
    opts: &ProveOptions,
    observer: Arc<dyn ProveObserver>,
) -> Result<Proved, Error> {
    let obs = observer.as_ref();
    let config = opts.stark_config();
    // The segment size first: the cycle limit below is counted in segments of `rows - 1` cycles.
    opts.validate()?;
    let (engine, fallback) = Engine::open_with(opts.backend, opts.gpu_memory)?;
    engine.set_gpu_lde(opts.gpu_lde);
    if let Some(reason) = &fallback {
        obs.note(&Note::GpuFallback { reason });
    }
    let default_rows = default_segment_rows(engine.is_gpu());
    let rows = opts.segment_cycles.unwrap_or(default_rows);
    let limit = zkrv_machine::segment::max_run_cycles(rows);
    if opts.max_cycles > limit {
        return Err(Error::CycleLimitTooLarge {
            max_cycles: opts.max_cycles,
            segment_rows: rows,
            limit,
        });
    }
    let run = Run {
        program,
        input,
        opts,
        config,
        obs,
        fallback,
    };
    if let Some(rows) = opts.segment_cycles {
        let plan = run.plan(rows)?;
        if plan.checkpoints.len() > 1 {
            return run.segments(plan, engine);
        }
        obs.note(&Note::FitsOneSegment { rows });
    }
    obs.note(&Note::ProvingOne {
        engine: &engine.name(),
    });
    let listener = Arc::clone(&observer);
    let listener: profile::Listener = Box::new(move |path: &str| listener.substage(path));
    let device_base = engine.device_used();
    let (res, profile) = profile::record(Some(listener), || run.one_proof(&engine));
    match res? {
        Some(mut proved) => {
            proved.prove_secs = profile.secs("prove").unwrap_or(0.0);
            proved.profile = profile;
            proved.devices = device_reports(&[engine], &[device_base]);
            Ok(proved)
        }
        None => {
            obs.note(&Note::TooLongForOneProof {
                rows: default_rows,
                gpu: engine.is_gpu(),
            });
            let plan = run.plan(default_rows)?;
            run.segments(plan, engine)
        }
    }
}

/// One call of [`prove_with`]: its arguments and what it has decided so far.
struct Run<'a> {
    program: &'a Program,
    input: &'a [u8],
    opts: &'a ProveOptions,
    config: StarkConfig,
    obs: &'a dyn ProveObserver,
    fallback: Option<String>,
}

impl Run<'_> {
    /// Runs stage `name` inside a profile span, between [`ProveObserver::stage_started`] and
    /// [`ProveObserver::stage_finished`].
    fn stage<T>(&self, name: &str, f: impl FnOnce() -> T) -> T {
        self.obs.stage_started(name);
        let t = Instant::now();
        let v = profile::time(name, f);
        self.obs.stage_finished(name, t.elapsed().as_secs_f64());
        v
    }

    /// The one-proof path's stages; `None` when the run is longer than one proof holds (found by the
    /// `execute` stage, before any proving).
    fn one_proof(&self, engine: &Engine) -> Result<Option<Proved>, Error> {
        let (program, config) = (&self.program.inner, &self.config);
        let exec = self
            .stage("execute", || {
                self.program.execute(self.input, self.opts.max_cycles)
            })
            .inspect_err(|e| self.guest_stderr_of(e))?;
        if exec.cycles > MAX_PROVABLE_CYCLES {
            return Ok(None);
        }
        self.check_plan(Plan {
            gpu: engine.is_gpu(),
            engine: engine.name(),
            devices: 1,
            cycles: exec.cycles,
            exit_code: exec.exit_code,
            segments: None,
            work: rows_to_prove(exec.cycles, None),
            config: config.clone(),
        })?;
        if self.opts.segment_cycles.is_none() {
            self.obs.note(&Note::FitsOneProof {
                cycles: exec.cycles,
            });
        }
        self.obs.guest_stderr(&exec.debug_output);
        if exec.exit_code != 0 {
            self.obs.note(&Note::ExitCode {
                code: exec.exit_code,
            });
        }
        let prepared = self.stage("trace generation", || {
            no_panic("trace generation", || {
                engine.prepare_traces(program, self.input, self.opts.cpu_trace, config)
            })
        })?;
        let trace_report = match &prepared {
            #[cfg(feature = "cuda")]
            crate::engine::Prepared::Gpu(g) => Some(g.report.to_string()),
            crate::engine::Prepared::Host(_) => None,
        };
        let (statement, proof) = self.stage("prove", || {
            no_panic("proving", || {
                engine.prove(program, prepared, config, self.opts.lde_mode)
            })
        })?;
        Ok(Some(Proved {
            receipt: Receipt {
                statement,
                proof: ReceiptProof::Single(proof),
                config: StarkConfig {
                    zk_seed: None,
                    ..config.clone()
                },
            },
            cycles: exec.cycles,
            debug_output: exec.debug_output,
            engine: engine.name(),
            fallback: self.fallback.clone(),
            segments: Vec::new(),
            prove_secs: 0.0,
            profile: Profile::default(),
            transfers: engine.transfers(),
            trace_report,
            devices: Vec::new(),
        }))
    }

    /// [`ProveObserver::check_plan`], its refusal as [`Error::Refused`].
    fn check_plan(&self, plan: Plan) -> Result<Plan, Error> {
        self.obs.check_plan(&plan).map_err(Error::Refused)?;
        Ok(plan)
    }

    /// The guest's fd-2 text of a failed execution, to the observer.
    fn guest_stderr_of(&self, e: &Error) {
        if let Error::Exec { debug_output, .. } = e {
            self.obs.guest_stderr(debug_output);
        }
    }

    /// The first pass of a segmented proof (`zkrv_machine::segment::plan_run`): the run cut into segments
    /// of `rows` CPU rows, its errors as the SDK's.
    fn plan(&self, rows: u64) -> Result<RunPlan, Error> {
        use zkrv_machine::segment::PlanError;
        let plan = zkrv_machine::segment::plan_run(
            &self.program.inner,
            self.input,
            rows,
            self.opts.max_cycles,
            &self.config,
        );
        plan.map_err(|e| match e {
            PlanError::SegmentSize { rows, reason } => Error::SegmentSize { rows, reason },
            PlanError::RunTooLong {
                max_cycles,
                rows,
                limit,
            } => Error::CycleLimitTooLarge {
                max_cycles,
                segment_rows: rows,
                limit,
            },
            PlanError::Exec(f) => Error::from(f),
            PlanError::Unprovable(e) => Error::Machine(e),
        })
        .inspect_err(|e| self.guest_stderr_of(e))
    }

    /// The segmented path: every segment of `plan` (more than one) proven on `first` and, on the GPU, the
    /// other devices of [`ProveOptions::gpus`].
    fn segments(&self, plan: RunPlan, first: Engine) -> Result<Proved, Error> {
        let (opts, config) = (self.opts, &self.config);
        let n = plan.checkpoints.len();
        if config.zk && !opts.public_segment_boundaries {
            return Err(Error::PublicSegmentBoundaries {
                segments: n,
                segment_rows: plan.segment_rows,
                cycles: plan.cycles,
            });
        }
        let gpu = first.is_gpu();
        let devices = if gpu {
            opts.gpus.resolve().map_err(|e| Error::GpuCount {
                want: None,
                reason: e.to_string(),
            })?
        } else {
            1
        };
        let summary = self.check_plan(Plan {
            gpu,
            engine: first.name(),
            devices,
            cycles: plan.cycles,
            exit_code: plan.statement.exit_code,
            segments: Some(SegmentPlan {
                count: n,
                rows: plan.segment_rows,
                // At most one worker per segment (the scheduler starts no more).
                jobs: if gpu {
                    devices
                } else {
                    opts.segment_jobs
                        .unwrap_or(default_segment_jobs(plan.segment_rows))
                        .clamp(1, n)
                },
            }),
            work: rows_to_prove(plan.cycles, Some((n as u64, plan.segment_rows))),
            config: config.clone(),
        })?;
        let mut engines = vec![first];
        for ordinal in 1..devices {
            let e =
                Engine::open_ordinal(ordinal, opts.gpu_memory).map_err(|e| Error::GpuCount {
                    want: Some(devices),
                    reason: e.to_string(),
                })?;
            e.set_gpu_lde(opts.gpu_lde);
            engines.push(e);
        }
        let device_base: Vec<Option<u64>> = engines.iter().map(Engine::device_used).collect();
        self.obs.guest_stderr(&plan.debug_output);
        if plan.statement.exit_code != 0 {
            self.obs.note(&Note::ExitCode {
                code: plan.statement.exit_code,
            });
        }
        self.obs.note(&Note::ProvingSegments(&summary));
        let jobs = summary.segments.map_or(1, |s| s.jobs);
        let t0 = Instant::now();
        let (segments, dones) = prove_segments(
            &engines,
            &self.program.inner,
            self.input,
            &plan,
            config,
            jobs,
            opts.lde_mode,
            opts.cpu_trace,
            &|d| self.obs.segment_done(d),
        )?;
        let prove_secs = t0.elapsed().as_secs_f64();
        let transfers = gpu.then(|| {
            let mut t = crate::TransferStats::default();
            for s in engines.iter().filter_map(Engine::transfers) {
                t.merge(&s);
            }
            t
        });
        Ok(Proved {
            receipt: Receipt {
                statement: plan.statement,
                proof: ReceiptProof::Segmented {
                    segment_rows: plan.segment_rows,
                    segments,
                },
                config: StarkConfig {
                    zk_seed: None,
                    ..config.clone()
                },
            },
            cycles: plan.cycles,
            debug_output: plan.debug_output,
            engine: match engines.len() {
                1 => engines[0].name(),
                k => format!("{k} x {}", engines[0].name()),
            },
            fallback: self.fallback.clone(),
            prove_secs,
            profile: segments_profile(prove_secs, &dones),
            segments: dones,
            transfers,
            trace_report: None,
            devices: device_reports(&engines, &device_base),
        })
    }
}

/// The per-device figures of `engines` (GPU only), memory in use measured against `base` (before the
/// proof).
fn device_reports(engines: &[Engine], base: &[Option<u64>]) -> Vec<DeviceReport> {
    engines
        .iter()
        .zip(base)
        .filter(|(e, _)| e.is_gpu())
        .map(|(e, b)| DeviceReport {
            name: e.name(),
            memory_used: e.device_used().zip(*b).map(|(u, b)| u.saturating_sub(b)),
            buffers: e.device_buffers(),
        })
        .collect()
}

/// The profile of a segmented proof: `segments` (the pipeline's `secs`), `segments/witness (sum)` and
/// `segments/prove (sum)`, and each segment's prover stages summed under the latter.
fn segments_profile(secs: f64, dones: &[SegmentDone]) -> Profile {
    let mut prof = Profile::default();
    prof.add("segments", secs);
    for (name, secs) in [
        ("witness (sum)", dones.iter().map(|d| d.witness_secs).sum()),
        ("prove (sum)", dones.iter().map(|d| d.prove_secs).sum()),
    ] {
        prof.stages.push(profile::Stage {
            name: format!("segments/{name}"),
            depth: 1,
            secs,
            calls: dones.len() as u64,
        });
    }
    for d in dones {
        for st in &d.profile.stages {
            let name = format!("segments/prove (sum)/{}", st.name);
            match prof.stages.iter_mut().find(|s| s.name == name) {
                Some(s) => {
                    s.secs += st.secs;
                    s.calls += st.calls;
                }
                None => prof.stages.push(profile::Stage {
                    depth: name.matches('/').count(),
                    name,
                    secs: st.secs,
                    calls: st.calls,
                }),
            }
        }
    }
    prof
}

/// Runs `f`, a panic in it (e.g. a device failure inside a backend method that cannot return an error)
/// as [`Error::Internal`] naming `what` and the panic's message.
fn no_panic<T>(what: &str, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(Error::Internal(format!(
            "{what} failed: {}",
            panic_message(p.as_ref())
        )))
    })
}

/// The message of a caught panic (`panic!` with a string or a format), else `unknown panic`.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// The segments a CPU engine proves at the same time by default: 2 up to 2^19 rows, else 1 (a zk segment
/// of 2^20 rows alone peaks at 10.7 GiB: two would not fit in 16 GiB).
pub fn default_segment_jobs(segment_rows: u64) -> usize {
    if segment_rows <= 1 << 19 {
        2
    } else {
        1
    }
}

/// Proves every segment of `plan` on `engines` with `zkrv_machine::segment::prove_segments`:
/// * GPU engines: one worker per engine (one device each, one segment at a time), each overlapping the
///   re-execution of its next segment with the GPU proof of the current one (the pipeline of
///   `zkrv_machine::segment::Schedule`). The segment's traces are built on the device from its record and
///   start state (docs/continuations.md §5a); with `cpu_trace` on the host (in the producer, overlapped
///   too) and uploaded.
/// * a CPU engine: `jobs` workers, each building then proving its segment (no overlap: the CPU prover uses
///   every core, and one witness per worker keeps memory low), with the CPU backend's LDE mode `lde`.
///
/// `on_done` is called after each segment. Returns the proofs in segment order and their
/// [`SegmentDone`]s; a failure names its segment (`MachineError::Segment`); a panic in a worker is a
/// `MachineError::Internal`.
#[allow(clippy::too_many_arguments)] // private: the one caller is `Run::segments`
fn prove_segments(
    engines: &[Engine],
    program: &zkrv_executor::Program,
    input: &[u8],
    plan: &RunPlan,
    config: &StarkConfig,
    jobs: usize,
    lde: LdeMode,
    cpu_trace: bool,
    on_done: &(dyn Fn(&SegmentDone) + Sync),
) -> Result<(Vec<SegmentProof>, Vec<SegmentDone>), Error> {
    let gpu = engines[0].is_gpu();
    let schedule = zkrv_machine::segment::Schedule {
        workers: if gpu { engines.len() } else { jobs.max(1) },
        pipelined: gpu,
    };
    // Every engine is of one kind: the first one decides what the producer builds.
    let build = |cp: &zkrv_executor::Checkpoint, count: u32, run_id: [u8; 32]| {
        engines[0].segment_input(program, input, cp, count, run_id, cpu_trace, config)
    };
    let prove = |worker: usize, w: crate::engine::SegmentInput| {
        let engine = &engines[if gpu { worker } else { 0 }];
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            engine.prove_segment(program, w, config, lde)
        }))
        .unwrap_or_else(|p| {
            Err(zkrv_machine::MachineError::Internal(format!(
                "the prover panicked: {}",
                panic_message(p.as_ref())
            )))
        })
    };
    Ok(zkrv_machine::segment::prove_segments_built(
        plan, schedule, &build, &prove, on_done,
    )?)
}
