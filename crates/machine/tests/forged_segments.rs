//! The malicious prover of continuations (issue 24, docs/continuations.md §4 "Soundness argument"): a
//! prover that chooses every header field and every witness value, proving with
//! `segment::prove_segment_unchecked` (no header check on the prover's side). Each forgery is shown to be
//! well formed except for the one thing it targets: either its segments are honest proofs that verify on
//! their own (`verify_segment`) and only a chain check names it, or the circuit's debug checker
//! (`segment_violations`, every violation, not only the first) lists exactly the constraint or bus that
//! catches it. Then `verify_run` must reject it with its specific error.

use zkrv_executor::asm::*;
use zkrv_executor::{Checkpoint, Program, STACK_TOP};
use zkrv_machine::bus;
use zkrv_machine::segment::{
    plan_run, prove_plan, prove_segment_unchecked, run_id, segment_violations, segment_witness,
    verify_run, verify_segment, BadPc, ChainError, RunPlan, RunSummary, SegmentEnd, SegmentProof,
    SegmentWitness,
};
use zkrv_machine::{program_commitment, Statement, VerifyError};
use zkrv_stark::backend::CpuBackend;
use zkrv_stark::check::CheckError;
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::StarkConfig;

const SP: u32 = 2;
const BASE: u64 = 0x1000;

fn config() -> StarkConfig {
    StarkConfig::default()
}

fn prove(program: &Program, w: SegmentWitness) -> SegmentProof {
    prove_segment_unchecked(&CpuBackend::default(), program, w, &config()).unwrap()
}

/// The violations of a witness, by name: `TABLE: constraint` for a constraint, `bus N` for each
/// unbalanced bus.
fn violated(program: &Program, w: &SegmentWitness) -> Vec<String> {
    let mut out = Vec::new();
    for e in segment_violations(program, w, &config()).unwrap() {
        match e {
            CheckError::Constraint {
                table, constraint, ..
            } => out.push(format!("{table}: {constraint}")),
            CheckError::BusImbalance { bus, more, .. } => {
                let mut b: Vec<u32> = more.iter().map(|m| m.0).collect();
                b.push(bus);
                b.sort();
                b.dedup();
                out.extend(b.into_iter().map(|b| format!("bus {b}")));
            }
            e => out.push(e.to_string()),
        }
    }
    out
}

fn chain_err(r: Result<RunSummary, VerifyError>) -> ChainError {
    match r {
        Err(VerifyError::Chain(e)) => *e,
        other => panic!("expected a chain error, got {other:?}"),
    }
}

fn end_mut(h: &mut SegmentWitness) -> &mut zkrv_machine::segment::Boundary {
    match &mut h.header.end {
        SegmentEnd::Pause(b) => b,
        SegmentEnd::Exit(_) => panic!("the last segment has no end boundary"),
    }
}

/// A checkpoint chosen by the prover: no pages, input and output untouched.
fn checkpoint(index: usize, cycle_base: u64, cycles: u64, pc: u64) -> Checkpoint {
    let mut regs = [0u64; 32];
    regs[SP as usize] = STACK_TOP;
    Checkpoint {
        index,
        cycle_base,
        cycles,
        pc,
        regs,
        input_pos: 0,
        input_ended: false,
        output_len: 0,
        pages: Vec::new(),
        page_data: Vec::new(),
    }
}

/// The forgery of issue 24, as it was found: the honest run faults after a `jalr` to address 0 (cycle 7);
/// the prover "continues" it through a segment of padding rows only from pc 0 to the exit code at 0x101c.
/// Before the fix `zkrv verify` said `proof OK` for it (exit code 0). Now the verifier refuses pc 0 as a
/// boundary (no instruction there), and the circuit refuses the padding segment on its own: its only
/// violation is the new "first row is real" (so it is otherwise a valid witness, the old forgery).
#[test]
fn a_jump_to_pc_0_cannot_be_continued_through_padding() {
    let mut words = vec![addi(0, 0, 0); 6];
    words.push(jalr(0, 0, 0)); // 0x1018: jumps to 0, where the honest run faults
    words.extend([addi(10, 0, 0), addi(17, 0, 93), ECALL]); // 0x101c: exit(0)
    let program = Program::from_words(BASE, &words).unwrap();
    assert!(
        zkrv_executor::execute(&program, b"", &Default::default()).is_err(),
        "the honest run faults"
    );
    let rows = 8u64;
    let statement = Statement {
        program: program_commitment(&program),
        exit_code: 0,
        output: Vec::new(),
    };
    let id = run_id(&statement, rows, 3);
    let witness = |cp: &Checkpoint| segment_witness(&program, b"", cp, 3, id, &config()).unwrap();
    let w0 = witness(&checkpoint(0, 0, 7, BASE));
    assert!(matches!(&w0.header.end, SegmentEnd::Pause(b) if b.pc == 0));
    // Segment 1: zero cycles from pc 0 (all padding), claiming a full segment and moving to 0x101c.
    let mut w1 = witness(&checkpoint(1, 7, 0, 0));
    w1.header.cycles = rows - 1;
    end_mut(&mut w1).pc = 0x101c;
    let w2 = witness(&checkpoint(2, 14, 3, 0x101c));
    assert_eq!(w2.header.end, SegmentEnd::Exit(0));

    assert_eq!(violated(&program, &w0), Vec::<String>::new());
    assert_eq!(violated(&program, &w1), ["CPU: first row is real"]);
    assert_eq!(violated(&program, &w2), Vec::<String>::new());

    let proofs: Vec<SegmentProof> = [w0, w1, w2]
        .into_iter()
        .map(|w| prove(&program, w))
        .collect();
    let e = chain_err(verify_run(
        &program,
        &statement,
        rows,
        &proofs,
        &config(),
        100,
    ));
    assert!(
        matches!(
            e,
            ChainError::Pc {
                index: 0,
                pc: BadPc {
                    which: "end",
                    pc: 0
                }
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("end pc 0x0 is not an instruction"),
        "{e}"
    );
    // The same padding segment verified alone is refused for its start pc.
    match verify_segment(&program, &proofs[1], &[], &[], &config(), 100) {
        Err(VerifyError::BadSegment(r)) => assert!(r.contains("start pc 0x0"), "{r}"),
        other => panic!("{other:?}"),
    }
}

/// A run with input, output and memory writes in every segment: 43 cycles in segments of 16 rows.
fn io_program(variant: i32) -> Program {
    let mut w = vec![
        addi(17, 0, 63), // read(0, sp-64, 4)
        addi(10, 0, 0),
        addi(11, SP, -64),
        addi(12, 0, 4),
        ECALL,
        lw(5, SP, -64),
        addi(5, 5, 1),
        sd(5, SP, -56),
        addi(0, 0, variant), // a no-op that differs between the two programs
        addi(8, 0, 8),
        addi(7, 7, 1), // loop: 8 x (addi, sd, blt)
        sd(7, SP, -48),
        blt(7, 8, -8),
    ];
    w.extend([
        addi(17, 0, 64),
        addi(10, 0, 1),
        addi(11, SP, -56),
        addi(12, 0, 8),
        ECALL,
    ]);
    w.extend([addi(10, 0, 0), addi(17, 0, 93), ECALL]);
    Program::from_words(BASE, &w).unwrap()
}

const INPUT: &[u8] = &[1, 2, 3, 4, 5];
const ROWS: u64 = 16;

fn make_plan(program: &Program, input: &[u8]) -> RunPlan {
    plan_run(program, input, ROWS, 1 << 20, &config()).unwrap()
}

fn witnesses(program: &Program, input: &[u8], plan: &RunPlan) -> Vec<SegmentWitness> {
    let n = plan.checkpoints.len() as u32;
    plan.checkpoints
        .iter()
        .map(|cp| segment_witness(program, input, cp, n, plan.run_id, &config()).unwrap())
        .collect()
}

#[test]
fn forged_segment_lists_and_boundaries_are_rejected() {
    let program = io_program(1);
    let plan = make_plan(&program, INPUT);
    let st = plan.statement.clone();
    let n = plan.checkpoints.len();
    assert_eq!(n, 3, "3 segments of 15 cycles");
    let ws = witnesses(&program, INPUT, &plan);
    assert!(ws.iter().take(2).all(|w| !w.writes.is_empty()));
    let proofs = prove_plan(&program, INPUT, &plan, &config(), 1).unwrap();
    let verify = |segs: &[SegmentProof], st: &Statement| {
        verify_run(&program, st, ROWS, segs, &config(), 100)
    };
    let sum = verify(&proofs, &st).unwrap();
    assert_eq!(sum.cycles, plan.cycles);
    // Every honest segment verifies on its own: the list forgeries below are otherwise well formed.
    for (p, w) in proofs.iter().zip(&ws) {
        verify_segment(&program, p, &w.init, &w.output, &config(), 100).unwrap();
        assert_eq!(violated(&program, w), Vec::<String>::new());
    }

    // Dropped, duplicated, reordered segments.
    let mut t = proofs.clone();
    t.remove(1);
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::Missing { index: 1 }
    ));
    let mut t = proofs.clone();
    t.insert(1, proofs[1].clone());
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::Duplicate {
            index: 1,
            first: 1,
            second: 2
        }
    ));
    let mut t = proofs.clone();
    t.swap(0, 1);
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::OutOfOrder {
            position: 0,
            index: 1
        }
    ));
    // A count that says 2 for a run of 3 (the last segment dropped, counts rewritten and re-proven).
    let mut t = Vec::new();
    for w in &ws[..2] {
        let mut w = w.clone();
        w.header.count = 2;
        w.header.run_id = run_id(&st, ROWS, 2);
        t.push(prove(&program, w));
    }
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::NoExit { index: 1 }
    ));

    // A run id the prover picked (the segment re-proven with it: a valid STARK proof of its statement).
    let mut w = ws[1].clone();
    w.header.run_id = [9; 32];
    let p = prove(&program, w.clone());
    verify_segment(&program, &p, &w.init, &w.output, &config(), 100).unwrap();
    let mut t = proofs.clone();
    t[1] = p;
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::RunId { index: 1 }
    ));
    // A segment of another run of the program (another input, hence another output and statement).
    let input_b = [7, 2, 3, 4, 5];
    let plan_b = make_plan(&program, &input_b);
    let wb = witnesses(&program, &input_b, &plan_b);
    let mut t = proofs.clone();
    t[2] = prove(&program, wb[2].clone());
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::RunId { index: 2 }
    ));
    // A segment of another program (one no-op differs) with this run's id and the same boundaries: its
    // DECODE lookups miss this program's table, and its STARK statement names the other program.
    let other = io_program(2);
    let mut w = witnesses(&other, INPUT, &make_plan(&other, INPUT))[0].clone();
    w.header.run_id = plan.run_id;
    assert_eq!(w.header, ws[0].header);
    assert_eq!(violated(&program, &w), [format!("bus {}", bus::DECODE)]);
    let mut t = proofs.clone();
    t[0] = prove(&other, w);
    match chain_err(verify(&t, &st)) {
        ChainError::Segment { index: 0, source } => {
            assert!(matches!(*source, VerifyError::Stark(_)), "{source}")
        }
        e => panic!("{e}"),
    }

    // The boundary between segments 1 and 2 changed on both sides and both segments re-proven: the segment whose end no longer
    // matches its registers, cursors or memory fails on its final-value bus.
    type Edit = fn(&mut zkrv_machine::segment::Boundary);
    let edits: [(&str, Edit, u32); 4] = [
        ("register x7", |b| b.regs[7] ^= 1, bus::REG_FINAL),
        ("pc", |b| b.pc += 4, 0),
        ("input cursor", |b| b.input_cursor += 1, bus::REG_FINAL),
        ("output cursor", |b| b.output_cursor += 1, bus::REG_FINAL),
    ];
    for (what, edit, final_bus) in edits {
        let (mut a, mut b) = (ws[1].clone(), ws[2].clone());
        edit(end_mut(&mut a));
        edit(&mut b.header.start);
        let va = violated(&program, &a);
        if final_bus != 0 {
            assert_eq!(va, [format!("bus {final_bus}")], "{what}");
        } else {
            assert_eq!(
                va,
                ["CPU: real rows continue or pause at the end pc"],
                "{what}"
            );
        }
        let mut t = proofs.clone();
        t[1] = prove(&program, a);
        t[2] = prove(&program, b);
        match chain_err(verify(&t, &st)) {
            ChainError::Segment { index: 1, .. } => {}
            e => panic!("{what}: {e}"),
        }
    }
    // A published write changed: the segment's final memory no longer matches.
    let mut a = ws[0].clone();
    a.writes[0].1 ^= 1 << 40;
    assert_eq!(violated(&program, &a), [format!("bus {}", bus::MEM_FINAL)]);
    let mut t = proofs.clone();
    t[0] = prove(&program, a);
    assert!(matches!(
        chain_err(verify(&t, &st)),
        ChainError::Segment { index: 0, .. }
    ));
}

#[test]
fn claimed_cycles_are_proven_and_bounded() {
    let program = io_program(1);
    let plan = make_plan(&program, INPUT);
    let st = plan.statement.clone();
    let ws = witnesses(&program, INPUT, &plan);
    let proofs = prove_plan(&program, INPUT, &plan, &config(), 1).unwrap();
    let verify = |segs: &[SegmentProof]| verify_run(&program, &st, ROWS, segs, &config(), 100);
    let last = ws.len() - 1;
    let real = ws[last].header.cycles;
    assert!(real < ROWS - 1, "the last segment is short ({real} cycles)");

    // The last segment claims one cycle fewer or more than it has: the halt is not its last claimed
    // cycle. The chain's checks all pass (a last segment may be short), the STARK proof does not.
    for claim in [real - 1, real + 1] {
        let mut w = ws[last].clone();
        w.header.cycles = claim;
        assert_eq!(
            violated(&program, &w),
            ["CPU: the halt is the segment's last cycle"],
            "claim {claim}"
        );
        let mut t = proofs.clone();
        t[last] = prove(&program, w);
        match chain_err(verify(&t)) {
            ChainError::Segment { index, source } => {
                assert_eq!(index as usize, last);
                assert!(matches!(*source, VerifyError::Stark(_)), "{source}");
            }
            e => panic!("claim {claim}: {e}"),
        }
    }
    // A middle segment that claims fewer cycles: the pause is not its last claimed cycle (and the chain
    // names the segment size; alone, its STARK proof fails).
    let mut w = ws[1].clone();
    w.header.cycles -= 1;
    assert_eq!(
        violated(&program, &w),
        ["CPU: the pause is the segment's last cycle"]
    );
    let p = prove(&program, w.clone());
    assert!(matches!(
        verify_segment(&program, &p, &w.init, &w.output, &config(), 100),
        Err(VerifyError::Stark(_))
    ));
    let mut t = proofs.clone();
    t[1] = p;
    assert!(matches!(
        chain_err(verify(&t)),
        ChainError::SegmentRows {
            index: 1,
            cycles: 14,
            rows: 16
        }
    ));
    // Zero cycles and more cycles than the table holds, claimed in the header.
    let mut w = ws[1].clone();
    w.header.cycles = 0;
    assert_eq!(
        violated(&program, &w),
        ["CPU: the pause is the segment's last cycle"]
    );
    let mut t = proofs.clone();
    t[1].header.cycles = 0;
    assert!(matches!(
        chain_err(verify(&t)),
        ChainError::NoCycles { index: 1 }
    ));
    let mut t = proofs.clone();
    t[last].header.cycles = ROWS;
    assert!(matches!(chain_err(verify(&t)), ChainError::Cycles { .. }));
    // A cycle base that is not the sum of the proven cycles before it; x0 nonzero at a boundary.
    let mut t = proofs.clone();
    t[1].header.cycle_base += 1;
    assert!(matches!(
        chain_err(verify(&t)),
        ChainError::CycleBase {
            index: 1,
            found: 16,
            expected: 15
        }
    ));
    let mut t = proofs.clone();
    t[1].header.start.regs[0] = 1;
    match chain_err(verify(&t)) {
        ChainError::Bad { index: 1, reason } => assert_eq!(reason, "x0 is 0x1 at its start"),
        e => panic!("{e}"),
    }

    // A segment from a pc outside the text (the first row made to sit there): the DECODE lookup of its
    // real first row misses, and the verifier names the pc before any proof.
    for pc in [0x8000u32, BASE as u32 + 0x1000, 0] {
        let mut w = ws[1].clone();
        w.header.start.pc = pc;
        let cpu = &mut w.traces[zkrv_machine::Table::Cpu.index()];
        cpu.values[0] = F::from_u64(pc as u64);
        assert!(
            violated(&program, &w).contains(&format!("bus {}", bus::DECODE)),
            "pc {pc:#x}: {:?}",
            violated(&program, &w)
        );
        let mut t = proofs.clone();
        t[1].header.start.pc = pc;
        match chain_err(verify(&t)) {
            ChainError::Pc { index: 1, pc: bad } => {
                assert_eq!(bad, BadPc { which: "start", pc })
            }
            e => panic!("pc {pc:#x}: {e}"),
        }
    }
}
