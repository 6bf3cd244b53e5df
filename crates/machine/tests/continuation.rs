//! Multi-segment proofs (continuations, docs/continuations.md): a run cut into small segments proves and
//! verifies (memory written early and read many segments later, misaligned stores whose cells cross
//! segment boundaries, input read to its end), and each tampering with the segment list or the chain is
//! rejected with its own error.

use std::time::{Duration, Instant};
use zkrv_executor::asm::*;
use zkrv_executor::{execute, ExecOptions, Program};
use zkrv_machine::segment::{
    plan_run, prove_plan, verify_run, ChainError, PlanError, RunPlan, SegmentEnd, SegmentProof,
};
use zkrv_machine::{MachineError, Statement, VerifyError};
use zkrv_stark::StarkConfig;

const SP: u32 = 2;

/// Reads 4 input bytes, stores early, spins, stores misaligned in a loop (each store read back at once and
/// again at the end), reads the rest of the input (a short read), writes everything to the output.
fn program() -> Program {
    let mut w = vec![];
    let sys = |w: &mut Vec<u32>, num: i32, fd: i32, off: i32, len: i32| {
        w.extend([
            addi(17, 0, num),
            addi(10, 0, fd),
            addi(11, SP, off),
            addi(12, 0, len),
            ECALL,
        ]);
    };
    sys(&mut w, 63, 0, -200, 4); // read 4 input bytes to sp-200
    w.push(lbu(14, SP, -200)); // an input byte in a register
    w.extend(li(6, 0x1122_3344_5566_7788));
    w.push(addi(5, 0, 0x55));
    w.push(sd(5, SP, -64)); // written in the first segment, read at the end
    w.push(sd(6, SP, -13)); // misaligned: crosses two cells
    w.push(addi(8, 0, 27)); // spin 27 iterations
    w.push(addi(7, 7, 1));
    w.push(blt(7, 8, -4));
    w.push(addi(13, 0, 9)); // 9 misaligned store/load pairs
    w.push(add(15, 6, 12)); // loop2: x15 = x6 + x12
    w.push(sd(15, SP, -29));
    w.push(ld(16, SP, -29));
    w.push(addi(12, 12, 1));
    w.push(blt(12, 13, -16));
    w.push(sd(16, SP, -48));
    w.push(ld(9, SP, -64));
    w.push(ld(10, SP, -13));
    w.push(sd(10, SP, -40));
    sys(&mut w, 63, 0, -196, 16); // the rest of the input: a short read
    sys(&mut w, 64, 1, -64, 8);
    sys(&mut w, 64, 1, -48, 16);
    sys(&mut w, 64, 1, -200, 8);
    w.extend([addi(10, 0, 0), addi(17, 0, 93), ECALL]);
    Program::from_words(0x1000, &w).unwrap()
}

const INPUT: &[u8] = b"abcdefg";

fn config() -> StarkConfig {
    StarkConfig::default()
}

fn make_plan(program: &Program, input: &[u8], rows: u64) -> RunPlan {
    plan_run(program, input, rows, 1 << 20, &config()).unwrap()
}

fn chain_err(r: Result<zkrv_machine::segment::RunSummary, VerifyError>) -> ChainError {
    match r {
        Err(VerifyError::Chain(e)) => *e,
        other => panic!("expected a chain error, got {other:?}"),
    }
}

fn start_mut(s: &mut SegmentProof) -> &mut zkrv_machine::segment::Boundary {
    &mut s.header.start
}

/// The held-back-style cases are really in [`program`] cut into segments of 16 rows (15 cycles): the
/// doubleword stored in the first segments at sp-64 is loaded back at least 5 segments later; the
/// misaligned doubleword stored at sp-13 (two cells) is loaded in a later segment; and in the loop of
/// misaligned store/load pairs at sp-29 some store and the load right after it lie in two segments (the
/// store's cells cross a segment boundary before they are read).
fn held_back_shape(program: &Program, segments: usize) {
    let rec = execute(
        program,
        INPUT,
        &ExecOptions {
            record: true,
            ..ExecOptions::default()
        },
    )
    .unwrap()
    .record
    .unwrap();
    let seg = |c: usize| c / 15;
    let at = |word: u32| -> Vec<usize> {
        let c: Vec<usize> = (0..rec.cycles.len())
            .filter(|&c| rec.cycles[c].word == word)
            .collect();
        assert!(!c.is_empty(), "{word:#x} never runs");
        c
    };
    let (w64, r64) = (at(sd(5, SP, -64))[0], at(ld(9, SP, -64))[0]);
    assert!(
        seg(r64) >= seg(w64) + 5,
        "sd/ld sp-64 in segments {} / {}",
        seg(w64),
        seg(r64)
    );
    let (w13, r13) = (at(sd(6, SP, -13))[0], at(ld(10, SP, -13))[0]);
    assert!(seg(r13) > seg(w13), "sd/ld sp-13 in segment {}", seg(w13));
    let crossing = at(sd(15, SP, -29))
        .into_iter()
        .filter(|&c| rec.cycles[c + 1].word == ld(16, SP, -29) && seg(c + 1) == seg(c) + 1)
        .count();
    assert!(
        crossing >= 1,
        "no sp-29 store/load pair across a segment boundary"
    );
    assert_eq!(seg(rec.cycles.len() - 1) + 1, segments);
}

#[test]
fn segmented_run_proves_verifies_and_rejects_each_tampering() {
    let program = program();
    let full = execute(&program, INPUT, &ExecOptions::default()).unwrap();
    let plan = make_plan(&program, INPUT, 16);
    let n = plan.checkpoints.len();
    assert!(n >= 6, "{n} segments of {} cycles", full.cycles);
    held_back_shape(&program, n);
    assert_eq!(plan.statement.output, full.public_output);
    assert_eq!(plan.statement.output.len(), 32);
    let proofs = prove_plan(&program, INPUT, &plan, &config(), 2).unwrap();
    let st = plan.statement.clone();
    let verify =
        |segs: &[SegmentProof], st: &Statement| verify_run(&program, st, 16, segs, &config(), 100);
    let sum = verify(&proofs, &st).unwrap();
    assert_eq!((sum.segments, sum.cycles), (n, full.cycles));
    assert!(proofs.iter().any(|p| !p.writes.is_empty()));
    // The segment size is checked against the segments' cycles (it is in no segment's statement).
    let rows = |r: u64| verify_run(&program, &st, r, &proofs, &config(), 0);
    assert!(matches!(
        chain_err(rows(32)),
        ChainError::SegmentRows {
            index: 0,
            cycles: 15,
            rows: 32
        }
    ));
    assert!(matches!(
        chain_err(rows(8)),
        ChainError::SegmentRows { index: 0, .. }
    ));
    for bad in [0, 1, 24, 1 << 27] {
        assert!(matches!(
            chain_err(rows(bad)),
            ChainError::SegmentSize { rows } if rows == bad
        ));
    }

    // A segment dropped (the middle one; the last one).
    let mut t = proofs.clone();
    t.remove(2);
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::Missing { index: 2 }
    ));
    let mut t = proofs.clone();
    t.pop();
    assert!(
        matches!(chain_err(verify(&t, &st)), ChainError::Missing { index } if index as usize == n - 1)
    );
    // Two swapped.
    let mut t = proofs.clone();
    t.swap(1, 2);
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::OutOfOrder {
            position: 1,
            index: 2
        }
    ));
    // One duplicated.
    let mut t = proofs.clone();
    t.insert(2, proofs[1].clone());
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::Duplicate {
            index: 1,
            first: 1,
            second: 2
        }
    ));
    // A boundary register, pc, input cursor changed on one side.
    let mut t = proofs.clone();
    start_mut(&mut t[3]).regs[7] ^= 1;
    match chain_err(verify(&t, &st)) {
        ChainError::Boundary {
            prev: 2,
            next: 3,
            field,
            ..
        } => assert_eq!(field, "register x7"),
        e => panic!("{e}"),
    }
    let mut t = proofs.clone();
    start_mut(&mut t[3]).pc += 4;
    match chain_err(verify(&t, &st)) {
        ChainError::Boundary { field, .. } => assert_eq!(field, "pc"),
        e => panic!("{e}"),
    }
    let mut t = proofs.clone();
    start_mut(&mut t[n - 1]).input_cursor -= 1;
    match chain_err(verify(&t, &st)) {
        ChainError::Boundary { field, .. } => assert_eq!(field, "the input cursor"),
        e => panic!("{e}"),
    }
    // The same register changed on both sides: the segments' proofs no longer match.
    let mut t = proofs.clone();
    start_mut(&mut t[3]).regs[7] ^= 1;
    if let SegmentEnd::Pause(b) = &mut t[2].header.end {
        b.regs[7] ^= 1;
    }
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::Segment { index: 2, .. }
    ));
    // A memory word of a boundary changed: the segment that wrote it no longer verifies.
    let w = proofs.iter().position(|p| !p.writes.is_empty()).unwrap();
    let mut t = proofs.clone();
    t[w].writes[0].1 ^= 1 << 20;
    match chain_err(verify(&t, &st)) {
        ChainError::Segment { index, source } => {
            assert_eq!(index as usize, w);
            assert!(
                matches!(
                    *source,
                    VerifyError::Stark(zkrv_stark::VerifyError::Statement)
                ),
                "{source}"
            );
        }
        e => panic!("{e}"),
    }
    // The output or exit code of the statement changed.
    let mut s2 = st.clone();
    s2.output[0] ^= 1;
    // (The run id is recomputed from the statement: every segment names another run.)
    assert!(matches!(
        chain_err(verify(&proofs, &s2)),
        ChainError::RunId { index: 0 }
    ));
    let mut s2 = st.clone();
    s2.exit_code = 3;
    assert!(matches!(
        chain_err(verify(&proofs, &s2)),
        ChainError::ExitCode { .. }
    ));

    // Segments of two runs of the same program mixed (another input).
    let plan_b = make_plan(&program, b"ABCDEFG", 16);
    assert_eq!(plan_b.checkpoints.len(), n);
    let k = n / 2;
    let mut plan_one = RunPlan {
        checkpoints: plan_b.checkpoints[k..k + 1].to_vec(),
        ..plan_b
    };
    plan_one.checkpoints[0].index = k;
    // Prove only segment k of run B (as segment k of n).
    let n_b = n as u32;
    let w = zkrv_machine::segment::segment_witness(
        &program,
        b"ABCDEFG",
        &plan_one.checkpoints[0],
        n_b,
        plan_one.run_id,
        &config(),
    )
    .unwrap();
    let seg_b = zkrv_machine::segment::prove_segment_with(
        &zkrv_stark::backend::CpuBackend::default(),
        &program,
        w,
        &config(),
    )
    .unwrap();
    let mut t = proofs.clone();
    t[k] = seg_b;
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::RunId { index } if index as usize == k
    ));

    // A run whose last segment does not exit: the prover proves the first 3 segments as a run of 3.
    let truncated = RunPlan {
        checkpoints: plan.checkpoints[..3].to_vec(),
        statement: plan.statement.clone(),
        run_id: zkrv_machine::segment::run_id(&plan.statement, 16, 3),
        cycles: 0,
        debug_output: Vec::new(),
        segment_rows: 16,
    };
    let short = prove_plan(&program, INPUT, &truncated, &config(), 2).unwrap();
    assert!(matches!(
        chain_err(verify(&short, &st)),
        ChainError::NoExit { index: 2 }
    ));
}

#[test]
fn bad_plans_and_failed_segments_are_named() {
    let program = program();
    // Smaller than the table minimum, not a power of two.
    for (rows, zk) in [(4u64, false), (64, true), (24, false)] {
        let c = if zk {
            StarkConfig::default_zk()
        } else {
            config()
        };
        match plan_run(&program, INPUT, rows, 1 << 20, &c) {
            Err(e @ PlanError::SegmentSize { .. }) => {
                let m = e.to_string();
                assert!(
                    m.contains("smallest table") || m.contains("power of two"),
                    "{m}"
                );
            }
            _ => panic!("rows {rows} accepted"),
        }
    }
    // A program that never exits stops at max_cycles.
    let spin = Program::from_words(0x1000, &[jal(0, 0)]).unwrap();
    match plan_run(&spin, b"", 16, 1000, &config()) {
        Err(PlanError::Exec(f)) => {
            assert!(
                f.error.to_string().contains("cycle limit of 1000"),
                "{}",
                f.error
            )
        }
        _ => panic!("an endless run was planned"),
    }
    // In tiny segments with a large limit it fails after the plain pass alone, keeping no checkpoint per
    // segment (2^28 cycles in segments of 16 rows would be 2^24 checkpoints: minutes and gigabytes; the
    // plain pass takes about a second).
    match plan_run(&spin, b"", 16, 1 << 28, &config()) {
        Err(PlanError::Exec(f)) => {
            let m = f.error.to_string();
            assert!(
                m.contains("cycle limit of 268435456 instruction(s) reached without an exit"),
                "{m}"
            );
            assert_eq!(f.cycles, 1 << 28);
        }
        _ => panic!("an endless run was planned"),
    }
    // A segment that fails to prove is named (its checkpoint lost a page): the first after segment 0
    // that touches memory.
    let mut p = make_plan(&program, INPUT, 16);
    let i = (1..p.checkpoints.len())
        .find(|&i| !p.checkpoints[i].pages.is_empty())
        .unwrap();
    let cp = &mut p.checkpoints[i];
    cp.pages.pop();
    cp.page_data.truncate(cp.pages.len() * 4096);
    match prove_plan(&program, INPUT, &p, &config(), 1) {
        Err(MachineError::Segment { index, .. }) => assert_eq!(index, i),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("proved a corrupted segment"),
    }
}

/// The segment scheduler (`prove_segments`): several workers, with and without the witness/proof
/// pipeline, prove every segment once, in any completion order, and each worker proves some; progress
/// counts 1..=n; a failing segment stops the run with its name. One real 2-worker pipelined run verifies;
/// the other runs use a stub prover that checks each (real) witness against that run's proof of its
/// segment and returns the proof (fast).
#[test]
fn scheduler_spreads_segments_over_workers() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use zkrv_machine::segment::{prove_segment_with, prove_segments, Schedule, SegmentWitness};
    let program = program();
    let plan = make_plan(&program, INPUT, 16);
    let n = plan.checkpoints.len();
    let backend = zkrv_stark::backend::CpuBackend::default();
    // The reference: a real pipelined run on 2 workers, which verifies; the prover's stages are recorded
    // per segment.
    let prove = |_: usize, w: SegmentWitness| prove_segment_with(&backend, &program, w, &config());
    let schedule = Schedule {
        workers: 2,
        pipelined: true,
    };
    let (reference, dones) =
        prove_segments(&program, INPUT, &plan, &config(), schedule, &prove, &|_| {}).unwrap();
    verify_run(&program, &plan.statement, 16, &reference, &config(), 0).unwrap();
    assert!(dones
        .iter()
        .all(|d| d.profile.secs("main commit").is_some()));
    let stub = |w: SegmentWitness| {
        let r = &reference[w.header.index as usize];
        assert_eq!(
            (&w.header, &w.pages, &w.writes),
            (&r.header, &r.pages, &r.writes)
        );
        // Slow the prover so that every worker gets segments and witnesses queue up.
        std::thread::sleep(std::time::Duration::from_millis(30));
        Ok(r.clone())
    };
    for (workers, pipelined) in [(1, true), (3, false), (3, true)] {
        let calls = AtomicUsize::new(0);
        let seen = Mutex::new(Vec::new());
        let prove = |worker: usize, w: SegmentWitness| {
            calls.fetch_add(1, Ordering::Relaxed);
            assert!(worker < workers);
            stub(w)
        };
        let schedule = Schedule { workers, pipelined };
        let (proofs, dones) =
            prove_segments(&program, INPUT, &plan, &config(), schedule, &prove, &|d| {
                seen.lock().unwrap().push((d.done, d.index, d.worker))
            })
            .unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), n, "{schedule:?}");
        assert_eq!(proofs.len(), n);
        assert_eq!(
            dones.iter().map(|d| d.index).collect::<Vec<_>>(),
            (0..n).collect::<Vec<_>>()
        );
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(
            seen.iter().map(|s| s.0).collect::<Vec<_>>(),
            (1..=n).collect::<Vec<_>>(),
            "progress"
        );
        let used: std::collections::BTreeSet<usize> = dones.iter().map(|d| d.worker).collect();
        assert_eq!(used.len(), workers, "{schedule:?}: workers used {used:?}");
        assert!(dones
            .iter()
            .all(|d| d.prove_secs >= 0.03 && d.witness_secs > 0.0));
    }
    // A failure in segment 2 (of 2 workers): named, and the run stops handing out segments.
    for pipelined in [false, true] {
        let calls = AtomicUsize::new(0);
        let failed = std::sync::atomic::AtomicBool::new(false);
        let prove = |_: usize, w: SegmentWitness| {
            calls.fetch_add(1, Ordering::Relaxed);
            if w.header.index == 2 {
                failed.store(true, Ordering::Release);
                return Err(MachineError::Internal("injected".into()));
            }
            // Segments after the failing one wait for it to be proven (segments are handed out in order,
            // so it is already in a worker's hands): on a loaded machine a slow worker could otherwise reach
            // segment 2 only after the others proved every segment, and nothing would be left to stop.
            let t = Instant::now();
            while w.header.index > 2
                && !failed.load(Ordering::Acquire)
                && t.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            stub(w)
        };
        let schedule = Schedule {
            workers: 2,
            pipelined,
        };
        match prove_segments(&program, INPUT, &plan, &config(), schedule, &prove, &|_| {}) {
            Err(MachineError::Segment {
                index: 2, source, ..
            }) => {
                assert!(source.to_string().contains("injected"), "{source}")
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a failed segment was not reported"),
        }
        let c = calls.load(Ordering::Relaxed);
        assert!(
            c < n,
            "{pipelined}: {c} of {n} segments proven after a failure"
        );
    }
}
