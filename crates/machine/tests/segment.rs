//! One segment of a run (continuations, docs/continuations.md): its witness passes the debug checker, a
//! changed boundary (start/end pc, a register, a cursor, the end-of-input flag, a memory word in or out,
//! the output) is caught by the constraint or bus it targets, and a segment proves and verifies, while a
//! proof checked against another boundary or other initial memory is rejected. The middle segments of a run
//! share one compiled circuit per table (the instance constants are AIR public values), and a segment proof
//! checked against other instance constants (`verify_segment_as`) is rejected.

use zkrv_executor::{execute_segmented, Checkpoint, Program};
use zkrv_machine::bus;
use zkrv_machine::segment::{
    check_segment, prove_segment_with, segment_run, segment_witness, verify_segment,
    verify_segment_as, SegmentEnd, SegmentHeader, SegmentWitness,
};
use zkrv_machine::tables::cpu::{CPU_PUBLIC_CYCLES, CPU_PUBLIC_END_PC, CPU_PUBLIC_ENTRY};
use zkrv_machine::tables::input::{EofRule, INPUT_PUBLIC_EOF_AT, INPUT_PUBLIC_FIRST};
use zkrv_machine::{compiled_airs_for, AirParams};
use zkrv_stark::check::CheckError;
use zkrv_stark::field::{PrimeCharacteristicRing, F};
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

/// The headers of the segments of `cps` (each segment executed, no traces built).
fn headers(program: &Program, input: &[u8], cps: &[Checkpoint]) -> Vec<SegmentHeader> {
    cps.iter()
        .map(|cp| {
            segment_run(program, input, cp, cps.len() as u32, [7; 32])
                .unwrap()
                .header
        })
        .collect()
}

/// Issue 28 item 1: every middle segment of a run has the same CPU circuit and, per end-of-input kind, the
/// same INPUT circuit (every other table's is the same anyway), while their public values (start pc, end
/// pc, cycles, first input index) differ.
#[test]
fn middle_segments_share_one_circuit_per_table() {
    let (program, input) = guest("sha256");
    let config = StarkConfig::default();
    let cps = checkpoints(&program, &input, 2047);
    let hs = headers(&program, &input, &cps);
    assert!(hs.len() >= 5, "{} segments", hs.len());
    let middle = &hs[1..hs.len() - 1];
    let kind = |h: &SegmentHeader| std::mem::discriminant(&h.air_params().eof);
    let compiled: Vec<_> = middle
        .iter()
        .map(|h| compiled_airs_for(&h.air_params(), &config).unwrap())
        .collect();
    let (cpu, inp) = (
        zkrv_machine::registry::Table::Cpu.index(),
        zkrv_machine::registry::Table::Input.index(),
    );
    for (h, c) in middle.iter().zip(&compiled).skip(1) {
        for (t, (a, b)) in compiled[0].iter().zip(c).enumerate() {
            if t == inp && kind(h) != kind(&middle[0]) {
                continue;
            }
            assert_eq!(
                a.circuit.nodes, b.circuit.nodes,
                "segment {}: {}",
                h.index, a.name
            );
            let roots = |x: &zkrv_stark::air::CompiledAir| -> Vec<u32> {
                x.constraints.iter().map(|c| c.node).collect()
            };
            assert_eq!(roots(a), roots(b), "segment {}: {}", h.index, a.name);
            if t != cpu && t != inp {
                assert_eq!(a.public_values, b.public_values, "{}", a.name);
            }
        }
        // The values are the header's.
        let p = h.air_params();
        let want = |i: usize, v: u64| assert_eq!(c[cpu].public_values[i], F::from_u64(v));
        want(CPU_PUBLIC_ENTRY, p.entry as u64);
        want(CPU_PUBLIC_END_PC, p.end_pc.unwrap() as u64);
        want(CPU_PUBLIC_CYCLES, p.cycles.unwrap());
        assert_eq!(
            c[inp].public_values[INPUT_PUBLIC_FIRST],
            F::from_u64(p.input_first)
        );
        let at = match p.eof {
            EofRule::At(at) => at,
            _ => 0,
        };
        assert_eq!(c[inp].public_values[INPUT_PUBLIC_EOF_AT], F::from_u64(at));
    }
    // The start pcs differ, so without public values the CPU circuits would too.
    let entries: std::collections::BTreeSet<u32> = middle.iter().map(|h| h.start.pc).collect();
    assert!(entries.len() > 1, "{entries:?}");
    let distinct = |t: usize| {
        let mut v: Vec<_> = compiled
            .iter()
            .map(|c| c[t].circuit.nodes.clone())
            .collect();
        v.sort_by_key(|n| format!("{n:?}"));
        v.dedup();
        v.len()
    };
    assert_eq!(distinct(cpu), 1);
    assert!(distinct(inp) <= 2);
    // Same kinds of instance constants as the first segment's: one CPU circuit for the first and middle
    // segments too (only `entry` differs), another for the last (it halts).
    let first = compiled_airs_for(&hs[0].air_params(), &config).unwrap();
    assert_eq!(first[cpu].circuit.nodes, compiled[0][cpu].circuit.nodes);
    let last = compiled_airs_for(&hs[hs.len() - 1].air_params(), &config).unwrap();
    assert_ne!(last[cpu].circuit.nodes, compiled[0][cpu].circuit.nodes);
}

/// A segment proof checked against other instance constants of the same shapes (another start pc, end pc,
/// cycle count, first input index, end-of-input index: a verifier that derived them otherwise) is rejected
/// with `Statement`: the AIRs' public values are bound into the statement digest.
#[test]
fn a_segment_proof_is_rejected_for_other_air_params() {
    let (program, input) = guest("sha256");
    let config = StarkConfig::default();
    let cps = checkpoints(&program, &input, 4095);
    let hs = headers(&program, &input, &cps);
    // A middle segment after the end of the input (its INPUT AIR has `EofRule::At`).
    let i = (1..hs.len() - 1)
        .find(|&i| matches!(hs[i].air_params().eof, EofRule::At(_)))
        .expect("a middle segment after the end of the input");
    let w = witness(&program, &input, &cps, i);
    let (init, output) = (w.init.clone(), w.output.clone());
    let proof = prove_segment_with(
        &zkrv_stark::backend::CpuBackend::default(),
        &program,
        w,
        &config,
    )
    .unwrap();
    let own = proof.header.air_params();
    let verify_as =
        |p: &AirParams| verify_segment_as(&program, &proof, &init, &output, &config, 0, p);
    verify_as(&own).unwrap();
    let at = match own.eof {
        EofRule::At(at) => at,
        _ => unreachable!(),
    };
    let others = [
        (
            "entry pc",
            AirParams {
                entry: own.entry + 4,
                ..own
            },
        ),
        (
            "end pc",
            AirParams {
                end_pc: own.end_pc.map(|p| p + 4),
                ..own
            },
        ),
        (
            "cycles",
            AirParams {
                cycles: own.cycles.map(|c| c - 1),
                ..own
            },
        ),
        (
            "input first",
            AirParams {
                input_first: own.input_first + 1,
                ..own
            },
        ),
        (
            "end-of-input index",
            AirParams {
                eof: EofRule::At(at + 1),
                ..own
            },
        ),
        // Another shape (the CPU halts instead of pausing): another circuit and other values.
        (
            "no end pc",
            AirParams {
                end_pc: None,
                ..own
            },
        ),
        // The shapes whose public-value slot holds 0 (`None` / `Any` encode no value): a prover must not get
        // its segment checked under a laxer rule (end of input anywhere, or never) or as a whole run (no
        // cycle count) because the slot's value coincides.
        (
            "end of input anywhere",
            AirParams {
                eof: EofRule::Any,
                ..own
            },
        ),
        (
            "end of input nowhere",
            AirParams {
                eof: EofRule::None,
                ..own
            },
        ),
        (
            "end of input at 0",
            AirParams {
                eof: EofRule::At(0),
                ..own
            },
        ),
        (
            "no cycle count",
            AirParams {
                cycles: None,
                ..own
            },
        ),
    ];
    for (what, p) in others {
        let r = verify_as(&p);
        assert!(
            matches!(
                r,
                Err(zkrv_machine::VerifyError::Stark(
                    zkrv_stark::VerifyError::Statement
                ))
            ),
            "{what}: {r:?}"
        );
    }
}
