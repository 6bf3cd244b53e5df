//! Issue 16 follow-up: runs the executor accepts but the SYSCALL table cannot prove (a `read`/`write` whose
//! a1 or a2 is 2^32 or more) are refused before proving, one proof or segmented, naming the call, the run's
//! cycle, the pc, the register and its value; segment sizes are checked before any arithmetic on them; and
//! the verifier's messages about tampered segments say what was found, once.

use zkrv_executor::asm::*;
use zkrv_executor::{execute, execute_segmented, ExecOptions, Program};
use zkrv_machine::segment::{
    check_segment_rows, plan_run, prove_plan, segment_witness, verify_run, verify_segment,
    ChainError, PlanError, SegmentEnd,
};
use zkrv_machine::{run_for_proof, MachineError, VerifyError};
use zkrv_stark::StarkConfig;

const BASE: u64 = 0x1000;

/// `a7 = num; a0..a2 = args; ecall`; returns the ECALL's index in `w` (its cycle in straight-line code).
fn ecall(w: &mut Vec<u32>, num: i64, a0: i64, a1: i64, a2: i64) -> usize {
    w.extend(li(10, a0));
    w.extend(li(11, a1));
    w.extend(li(12, a2));
    w.extend(li(17, num));
    w.push(ECALL);
    w.len() - 1
}

fn exit0(w: &mut Vec<u32>) {
    ecall(w, 93, 0, 0, 0);
}

/// `spin` iterations of a two-instruction loop (x5 counts to x6), `2 * spin + 1` cycles.
fn spin(w: &mut Vec<u32>, spin: i32) {
    w.push(addi(6, 0, spin));
    w.push(addi(5, 5, 1));
    w.push(blt(5, 6, -4));
}

fn syscall_error(e: MachineError) -> (u64, u32, &'static str, &'static str, u64, String) {
    let msg = e.to_string();
    match e {
        MachineError::SyscallArgument {
            cycle,
            pc,
            call,
            register,
            value,
        } => (cycle, pc, call, register, value, msg),
        e => panic!("expected SyscallArgument, got {e}"),
    }
}

#[test]
fn read_and_write_arguments_of_2_pow_32_or_more_are_refused_before_proving() {
    let sp_buf = 0x7fff_ff00;
    // read(0, buf, 2^32): the executor reads min(len, input left) bytes.
    let mut w = Vec::new();
    let at = ecall(&mut w, 63, 0, sp_buf, 1 << 32);
    exit0(&mut w);
    let p = Program::from_words(BASE, &w).unwrap();
    for input in [&b""[..], b"abc"] {
        let run = execute(&p, input, &ExecOptions::default()).expect("the executor runs it");
        assert_eq!(run.exit_code, 0);
        let e = run_for_proof(&p, input).err().expect("refused");
        let (cycle, pc, call, reg, value, msg) = syscall_error(e);
        assert_eq!(
            (cycle, pc as u64, call, reg, value),
            (
                at as u64,
                BASE + 4 * at as u64,
                "read",
                "a2 (length)",
                1 << 32
            )
        );
        assert!(
            msg.contains("below 2^32") && msg.contains("docs/abi.md"),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("cycle {at} (pc {:#x})", BASE + 4 * at as u64)),
            "{msg}"
        );
    }
    // A zero-length write from 0xffffffffffff0000 (a1), to fd 1 and to fd 2 (debug: also a SYSCALL row).
    for fd in [1, 2] {
        let mut w = Vec::new();
        let at = ecall(&mut w, 64, fd, 0xffff_ffff_ffff_0000u64 as i64, 0);
        exit0(&mut w);
        let p = Program::from_words(BASE, &w).unwrap();
        assert!(execute(&p, b"", &ExecOptions::default()).is_ok());
        let (cycle, _, call, reg, value, _) = syscall_error(run_for_proof(&p, b"").err().unwrap());
        assert_eq!(
            (cycle, call, reg, value),
            (at as u64, "write", "a1 (buffer)", 0xffff_ffff_ffff_0000)
        );
    }
    // In range on both (2^32 - 1 bytes of a zero-length read at the end of the input): provable.
    let mut w = Vec::new();
    ecall(&mut w, 63, 0, sp_buf, (1 << 32) - 1);
    exit0(&mut w);
    assert!(run_for_proof(&Program::from_words(BASE, &w).unwrap(), b"").is_ok());
}

#[test]
fn segmented_runs_are_refused_in_the_first_pass_naming_the_runs_cycle() {
    // 201 cycles of spinning, then read(0, buf, 2^40): in the 4th segment of 64 rows.
    let mut w = Vec::new();
    spin(&mut w, 100);
    let at = ecall(&mut w, 63, 0, 0x7fff_ff00, 1 << 40);
    exit0(&mut w);
    let p = Program::from_words(BASE, &w).unwrap();
    let full = execute(&p, b"", &ExecOptions::default()).unwrap();
    let config = StarkConfig::default();
    // The one-proof check names the same cycle as the segmented one.
    let (cycle, pc, ..) = syscall_error(run_for_proof(&p, b"").err().unwrap());
    assert_eq!(pc as u64, BASE + 4 * at as u64);
    assert_eq!(cycle, full.cycles - 1 - (w.len() - 1 - at) as u64);
    match plan_run(&p, b"", 64, 1 << 20, &config) {
        Err(PlanError::Unprovable(e)) => {
            let (c, pc2, call, reg, value, _) = syscall_error(e);
            assert_eq!(
                (c, pc2, call, reg, value),
                (cycle, pc, "read", "a2 (length)", 1 << 40)
            );
        }
        Err(e) => panic!("expected Unprovable, got {e}"),
        Ok(_) => panic!("planned a run that cannot be proven"),
    }
    // The per-segment check (a checkpoint from the unchecked first pass) names the run's cycle too.
    let seg = execute_segmented(&p, b"", 63, 1 << 20).unwrap();
    let k = (cycle / 63) as usize;
    let cp = &seg.checkpoints[k];
    assert!(cp.cycle_base > 0);
    let Err(e) = segment_witness(&p, b"", cp, seg.checkpoints.len() as u32, [0; 32], &config)
    else {
        panic!("segment {k} accepted")
    };
    let (c, pc2, ..) = syscall_error(e);
    assert_eq!((c, pc2), (cycle, pc));
}

#[test]
fn segment_sizes_are_checked_before_any_arithmetic() {
    let zk = StarkConfig::default_zk();
    for rows in [0u64, 1, 2, 3, 100] {
        let why = check_segment_rows(rows, &zk).expect_err("refused");
        assert!(
            why.contains("power of two") || why.contains("smallest table"),
            "{rows}: {why}"
        );
    }
    assert!(check_segment_rows(64, &zk)
        .unwrap_err()
        .contains("smallest table (128 rows"));
    assert!(check_segment_rows(1 << 27, &zk)
        .unwrap_err()
        .contains("larger than 2^26"));
    assert_eq!(check_segment_rows(128, &zk), Ok(()));
    // plan_run refuses them the same way, before anything runs (no `rows - 1` of 0).
    let p = Program::from_words(BASE, &[addi(10, 0, 0), addi(17, 0, 93), ECALL]).unwrap();
    for rows in [0u64, 1] {
        match plan_run(&p, b"", rows, 1 << 20, &zk) {
            Err(e @ PlanError::SegmentSize { .. }) => {
                let m = e.to_string();
                assert!(
                    m.contains("power of two") || m.contains("smallest table"),
                    "{m}"
                )
            }
            _ => panic!("segment size {rows} accepted"),
        }
    }
}

#[test]
fn tampered_segment_messages_say_what_was_found_once() {
    // Two segments of 16 rows (15 cycles): the first pauses, the second exits; one output byte.
    let mut w = Vec::new();
    spin(&mut w, 6);
    w.push(sd(5, 2, -8));
    ecall(&mut w, 64, 1, 0x7fff_fff8, 1);
    exit0(&mut w);
    let p = Program::from_words(BASE, &w).unwrap();
    let config = StarkConfig::default();
    let plan = plan_run(&p, b"", 16, 1 << 20, &config).unwrap();
    assert_eq!(plan.checkpoints.len(), 2);
    let proofs = prove_plan(&p, b"", &plan, &config, 1).unwrap();
    let st = plan.statement.clone();
    let verify = |segs: &[zkrv_machine::segment::SegmentProof]| match verify_run(
        &p, &st, 16, segs, &config, 0,
    ) {
        Err(VerifyError::Chain(e)) => *e,
        other => panic!("expected a chain error, got {other:?}"),
    };
    verify_run(&p, &st, 16, &proofs, &config, 0).expect("the honest proof verifies");

    // Cycles set to 0: "claims 0 cycles", not "more than its CPU table holds".
    let mut t = proofs.clone();
    t[0].header.cycles = 0;
    let e = verify(&t);
    assert!(matches!(e, ChainError::NoCycles { index: 0 }), "{e}");
    assert_eq!(
        e.to_string(),
        "segment 0 claims 0 cycles; a segment runs at least 1"
    );
    // Too many: the bound is named.
    let mut t = proofs.clone();
    t[0].header.cycles = 16;
    let m = verify(&t).to_string();
    assert_eq!(
        m,
        "segment 0 claims 16 cycles, more than its CPU table of 2^4 rows holds (15 at most: one padding row)"
    );

    // An end register x0 edited: the segment is named once.
    let mut t = proofs.clone();
    let SegmentEnd::Pause(end) = &mut t[0].header.end else {
        panic!("segment 0 pauses")
    };
    end.regs[0] = 0x10000;
    let m = verify(&t).to_string();
    assert_eq!(m, "segment 0: x0 is 0x10000 at its end");
    // verify_segment alone says "bad segment" once.
    let e = verify_segment(&p, &t[0], &[], &[], &config, 0).unwrap_err();
    assert_eq!(e.to_string(), "bad segment: x0 is 0x10000 at its end");

    // Output cursors moved on both sides of the boundary past the output: named once, with the bounds.
    let mut t = proofs.clone();
    if let SegmentEnd::Pause(end) = &mut t[0].header.end {
        end.output_cursor = 1000;
    }
    t[1].header.start.output_cursor = 1000;
    let m = verify(&t).to_string();
    assert_eq!(
        m,
        "segment 0: it writes output bytes [0, 1000), but the public output has 1 bytes"
    );
}
