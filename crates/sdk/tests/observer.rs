//! `zkrv_sdk::prove_with`: what a `ProveObserver` is told, in order, on the one-proof and the segmented
//! paths, and that a refused plan stops the run before any proving (`Error::Refused`).

use std::sync::{Arc, Mutex};
use zkrv_sdk::{
    prove, prove_with, Error, Note, Plan, Program, ProveObserver, ProveOptions, SecurityPreset,
    SegmentDone,
};

fn bundled(name: &str) -> Program {
    Program::load(format!(
        "{}/../../guests/bin/{name}.elf",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("bundled guest loads")
}

/// Records every call as a line; refuses the plan when `refuse` is set.
#[derive(Default)]
struct Log {
    events: Mutex<Vec<String>>,
    refuse: bool,
}

impl Log {
    fn push(&self, e: String) {
        self.events.lock().unwrap().push(e);
    }
    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
}

impl ProveObserver for Log {
    fn stage_started(&self, stage: &str) {
        self.push(format!("start {stage}"));
    }
    fn stage_finished(&self, stage: &str, secs: f64) {
        assert!(secs >= 0.0);
        self.push(format!("end {stage}"));
    }
    fn substage(&self, path: &str) {
        if path.starts_with("prove/") && !path["prove/".len()..].contains('/') {
            self.push("substage".into());
        }
    }
    fn guest_stderr(&self, bytes: &[u8]) {
        self.push(format!("stderr {}", bytes.len()));
    }
    fn note(&self, note: &Note<'_>) {
        let n = match note {
            Note::ProvingOne { .. } => "one".to_string(),
            Note::FitsOneProof { cycles } => format!("fits {cycles}"),
            Note::FitsOneSegment { rows } => format!("fits segment {rows}"),
            Note::ExitCode { code } => format!("exit {code}"),
            Note::ProvingSegments(p) => format!("segments {}", p.segments.unwrap().count),
            other => format!("{other:?}"),
        };
        self.push(format!("note {n}"));
    }
    fn check_plan(&self, plan: &Plan) -> Result<(), String> {
        self.push(format!(
            "plan {} {}",
            plan.cycles,
            plan.segments.map_or(1, |s| s.count)
        ));
        if self.refuse {
            return Err("refused by the test".into());
        }
        Ok(())
    }
    fn segment_done(&self, d: &SegmentDone) {
        self.push(format!("segment {} of {}", d.index, d.count));
    }
}

/// Without zero knowledge a proof is deterministic: `proved` (with an observer) is byte for byte what
/// [`prove`] gives for `opts`, and it verifies.
fn same_as_quiet(program: &Program, opts: &ProveOptions, proved: &zkrv_sdk::Proved) {
    let quiet = prove(program, b"", opts).expect("proves");
    assert_eq!(
        quiet.receipt.to_bytes().unwrap(),
        proved.receipt.to_bytes().unwrap()
    );
    proved
        .receipt
        .check_with(program, 0)
        .expect("verifies (dev preset: no minimum)");
}

fn fast() -> ProveOptions {
    ProveOptions {
        zk: false,
        security: SecurityPreset::Dev,
        ..ProveOptions::default()
    }
}

/// One proof: the stages in order, the plan and notes between execute and trace generation, the prover's
/// spans inside `prove`; the profile has the three stages; the proof file is the one `prove` gives.
#[test]
fn one_proof_reports_stages_in_order() {
    let program = bundled("exitcode");
    let log = Arc::new(Log::default());
    let proved = prove_with(&program, b"", &fast(), log.clone()).expect("proves");
    let ev = log.events();
    let cycles = proved.cycles;
    let exit = proved.receipt.exit_code();
    let pos = |e: &str| {
        ev.iter()
            .position(|x| x == e)
            .unwrap_or_else(|| panic!("{e:?} not in {ev:?}"))
    };
    let order = [
        "note one".to_string(),
        "start execute".into(),
        "end execute".into(),
        format!("plan {cycles} 1"),
        format!("note fits {cycles}"),
        "start trace generation".into(),
        "end trace generation".into(),
        "start prove".into(),
        "substage".into(),
        "end prove".into(),
    ];
    let at: Vec<usize> = order.iter().map(|e| pos(e)).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{ev:?}");
    // The exit-code note comes exactly when the guest did not exit with 0.
    assert_eq!(
        ev.contains(&format!("note exit {exit}")),
        exit != 0,
        "{ev:?}"
    );
    assert!(!ev.iter().any(|e| e.starts_with("segment")), "{ev:?}");
    for s in zkrv_sdk::STAGES {
        assert!(proved.profile.secs(s).is_some(), "{s} not in the profile");
    }
    assert_eq!(proved.prove_secs, proved.profile.secs("prove").unwrap());
    assert!(proved.devices.is_empty() && proved.transfers.is_none());
    same_as_quiet(&program, &fast(), &proved);
}

/// A refused plan is `Error::Refused` with the observer's reason, after execution and before trace
/// generation (no proving stage starts), on both paths.
#[test]
fn refused_plan_stops_before_proving() {
    let program = bundled("exitcode");
    for segment_cycles in [None, Some(128)] {
        let log = Arc::new(Log {
            refuse: true,
            ..Log::default()
        });
        let opts = ProveOptions {
            segment_cycles,
            ..fast()
        };
        match prove_with(&program, b"", &opts, log.clone()) {
            Err(Error::Refused(why)) => assert_eq!(why, "refused by the test"),
            other => panic!("{segment_cycles:?}: expected Refused, got {other:?}"),
        }
        let ev = log.events();
        assert!(ev.iter().any(|e| e.starts_with("plan ")), "{ev:?}");
        assert!(
            !ev.iter()
                .any(|e| e == "start trace generation" || e.starts_with("segment")),
            "{segment_cycles:?}: proving started: {ev:?}"
        );
    }
}

/// Segments: the plan names them, every segment is reported once, and the proof file is the one `prove`
/// gives for the same options.
#[test]
fn segmented_run_reports_each_segment() {
    let program = bundled("exitcode");
    let opts = ProveOptions {
        segment_cycles: Some(64),
        ..fast()
    };
    let log = Arc::new(Log::default());
    let proved = prove_with(&program, b"", &opts, log.clone()).expect("proves");
    let n = proved.receipt.segments();
    assert!(n > 1, "{n} segments");
    let ev = log.events();
    assert!(
        ev.contains(&format!("plan {} {n}", proved.cycles)),
        "{ev:?}"
    );
    assert!(ev.contains(&format!("note segments {n}")), "{ev:?}");
    for i in 0..n {
        let done = format!("segment {i} of {n}");
        assert_eq!(ev.iter().filter(|e| **e == done).count(), 1, "{ev:?}");
    }
    assert!(!ev.iter().any(|e| e.starts_with("start ")), "{ev:?}");
    assert_eq!(proved.segments.len(), n);
    assert!(proved.profile.secs("segments").is_some());
    same_as_quiet(&program, &opts, &proved);
}
