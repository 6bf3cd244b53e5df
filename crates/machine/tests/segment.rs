//! One segment of a run (continuations, docs/continuations.md): its witness passes the debug checker, a
//! changed boundary (start/end pc, a register, a cursor, the end-of-input flag, a memory word in or out,
//! the output) is caught by the constraint or bus it targets, and a segment proves and verifies, while a
//! proof checked against another boundary or other initial memory is rejected.

use zkrv_executor::{execute_segmented, Checkpoint, Program};
use zkrv_machine::bus;
use zkrv_machine::segment::{
    check_segment, prove_segment_with, segment_witness, verify_segment, SegmentEnd, SegmentWitness,
};
use zkrv_stark::check::CheckError;
use zkrv_stark::StarkConfig;

fn guest(name: &str) -> (Program, Vec<u8>) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
    let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
    let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap_or_default();
    (Program::from_elf(&elf).unwrap(), input)
}

fn checkpoints(program: &Program, input: &[u8], cycles: u64) -> Vec<Checkpoint> {
    execute_segmented(program, input, cycles, 1 << 26)
        .unwrap()
        .checkpoints
}

fn witness(program: &Program, input: &[u8], cps: &[Checkpoint], i: usize) -> SegmentWitness {
    let config = StarkConfig::default();
    segment_witness(program, input, &cps[i], cps.len() as u32, [7; 32], &config).unwrap()
}

fn end(w: &mut SegmentWitness) -> &mut zkrv_machine::segment::Boundary {
    match &mut w.header.end {
        SegmentEnd::Pause(b) => b,
        SegmentEnd::Exit(_) => panic!("the last segment has no end boundary"),
    }
}

fn expect_bus(r: Result<(), CheckError>, want: u32, what: &str) {
    match r {
        Err(CheckError::BusImbalance { bus, .. }) if bus == want => {}
        other => panic!("{what}: expected an imbalance on bus {want}, got {other:?}"),
    }
}

fn expect_constraint(r: Result<(), CheckError>, want: &str, what: &str) {
    match r {
        Err(CheckError::Constraint { constraint, .. }) if constraint == want => {}
        other => panic!("{what}: expected constraint `{want}`, got {other:?}"),
    }
}

#[test]
fn a_changed_boundary_is_caught_by_its_constraint_or_bus() {
    let (program, input) = guest("sha256");
    let config = StarkConfig::default();
    let cps = checkpoints(&program, &input, 2047);
    assert!(cps.len() >= 4, "{} segments", cps.len());
    let check = |w: &SegmentWitness| check_segment(&program, w, &config);
    // A middle segment that changes memory.
    let w = (1..cps.len() - 1)
        .map(|i| witness(&program, &input, &cps, i))
        .find(|w| !w.writes.is_empty())
        .expect("a middle segment writes memory");
    check(&w).unwrap();

    let mut t = w.clone();
    end(&mut t).regs[5] ^= 1;
    expect_bus(check(&t), bus::REG_FINAL, "end register x5");
    let mut t = w.clone();
    end(&mut t).pc += 4;
    expect_constraint(
        check(&t),
        "real rows continue or pause at the end pc",
        "end pc",
    );
    let mut t = w.clone();
    t.header.start.pc += 4;
    expect_constraint(check(&t), "entry pc", "start pc");
    let mut t = w.clone();
    t.header.start.regs[10] ^= 1 << 40;
    expect_bus(check(&t), bus::REG_TOKEN, "start register a0");
    let mut t = w.clone();
    end(&mut t).output_cursor += 1;
    expect_bus(check(&t), bus::REG_FINAL, "end output cursor");
    let mut t = w.clone();
    t.writes[0].1 ^= 1;
    expect_bus(check(&t), bus::MEM_FINAL, "a published write");
    let mut t = w.clone();
    t.writes.remove(0);
    expect_bus(check(&t), bus::MEM_FINAL, "a write left out");
    // A changed memory-in word: some cell of the pages is read or carried to the end.
    let mut t = w.clone();
    t.init[0] ^= 1;
    expect_bus(check(&t), bus::MEM_TOKEN, "a memory-in word");

    // The segments that read input, and the one that sees its end.
    for i in 0..cps.len() - 1 {
        let w = witness(&program, &input, &cps, i);
        let b = match &w.header.end {
            SegmentEnd::Pause(b) => b.clone(),
            SegmentEnd::Exit(_) => unreachable!(),
        };
        if b.input_cursor > w.header.start.input_cursor {
            let mut t = w.clone();
            t.header.start.input_cursor += 1;
            t.header.start.regs[0] = 0;
            assert!(check(&t).is_err(), "segment {i}: start input cursor + 1");
            let mut t = w.clone();
            end(&mut t).input_cursor -= 1;
            if b.input_ended {
                // The end cursor also places the end-of-input row.
                expect_constraint(
                    check(&t),
                    "end of input at the final cursor",
                    "end input cursor",
                );
            } else {
                expect_bus(check(&t), bus::REG_FINAL, "end input cursor");
            }
        }
        if b.input_ended && !w.header.start.input_ended {
            let mut t = w.clone();
            end(&mut t).input_ended = false;
            expect_constraint(check(&t), "no end of input", "end-of-input flag");
        }
        if i > 0 && w.header.start.input_ended {
            let mut t = w.clone();
            t.header.start.input_ended = false;
            end(&mut t).input_ended = false;
            // Without the flag the segment may not hold the end row it reads.
            assert!(check(&t).is_err(), "segment {i}: input no longer ended");
        }
    }
    // The last segment: the output it writes and its exit code.
    let w = witness(&program, &input, &cps, cps.len() - 1);
    check(&w).unwrap();
    assert!(!w.output.is_empty());
    let mut t = w.clone();
    t.output[0] ^= 1;
    expect_bus(check(&t), bus::OUTPUT, "an output byte");
    let mut t = w.clone();
    t.header.end = SegmentEnd::Exit(1);
    expect_bus(check(&t), bus::HALT, "exit code");
}

#[test]
fn a_segment_proves_and_verifies_against_its_own_boundary_only() {
    let (program, input) = guest("sha256");
    let config = StarkConfig::default();
    let cps = checkpoints(&program, &input, 4095);
    for i in [1, cps.len() - 1] {
        let w = witness(&program, &input, &cps, i);
        check_segment(&program, &w, &config).unwrap();
        let (init, output) = (w.init.clone(), w.output.clone());
        let proof = prove_segment_with(
            &zkrv_stark::backend::CpuBackend::default(),
            &program,
            w,
            &config,
        )
        .unwrap();
        verify_segment(&program, &proof, &init, &output, &config, 0).unwrap();
        let bytes = proof.to_bytes();
        let back = zkrv_machine::segment::SegmentProof::from_bytes(&bytes).unwrap();
        assert_eq!(back, proof);
        let statement = |r: Result<(), zkrv_machine::VerifyError>| {
            assert!(
                matches!(
                    r,
                    Err(zkrv_machine::VerifyError::Stark(
                        zkrv_stark::VerifyError::Statement
                    ))
                ),
                "{r:?}"
            )
        };
        let mut t = proof.clone();
        t.header.start.regs[8] ^= 1;
        statement(verify_segment(&program, &t, &init, &output, &config, 0));
        let mut bad = init.clone();
        bad[3] ^= 1 << 33;
        statement(verify_segment(&program, &proof, &bad, &output, &config, 0));
        if let SegmentEnd::Pause(_) = proof.header.end {
            let mut t = proof.clone();
            t.writes[0].1 ^= 1;
            statement(verify_segment(&program, &t, &init, &output, &config, 0));
        }
    }
}
