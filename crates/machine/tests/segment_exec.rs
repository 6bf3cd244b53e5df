//! Segmented execution: cutting a run into segments and re-executing each from its checkpoint gives
//! the unsegmented run back (events, syscalls, output, exit code, registers), whatever the segment size.
//! (In zkrv-machine so that it builds without the executor's unicorn dev-dependency.)

use zkrv_executor::{
    execute, execute_segment, execute_segmented, ExecError, ExecOptions, Program, Record,
};

fn guest(name: &str) -> (Program, Vec<u8>) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
    let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
    let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap_or_default();
    (Program::from_elf(&elf).unwrap(), input)
}

fn full_record(program: &Program, input: &[u8]) -> (Record, Vec<u8>, u32) {
    let run = execute(
        program,
        input,
        &ExecOptions {
            max_cycles: 1 << 26,
            record: true,
        },
    )
    .unwrap();
    (run.record.unwrap(), run.public_output, run.exit_code)
}

/// Re-executes every segment and checks that the pieces put together are the unsegmented run.
fn check_concatenation(name: &str, segment_cycles: u64) {
    let (program, input) = guest(name);
    let (full, output, exit_code) = full_record(&program, &input);
    let seg = execute_segmented(&program, &input, segment_cycles, 1 << 26).unwrap();
    assert_eq!(seg.execution.cycles, full.cycles.len() as u64);
    assert_eq!(seg.execution.public_output, output);
    assert_eq!(seg.execution.exit_code, exit_code);
    let n = seg.checkpoints.len() as u64;
    assert_eq!(
        n,
        (full.cycles.len() as u64).div_ceil(segment_cycles),
        "{name}"
    );
    let (mut events, mut syscalls, mut out) = (Vec::new(), Vec::new(), Vec::new());
    let mut regs = full.init_regs;
    for (i, cp) in seg.checkpoints.iter().enumerate() {
        assert_eq!(cp.index, i);
        assert_eq!(cp.regs, regs, "{name} segment {i}: start registers");
        assert_eq!(cp.cycle_base, events.len() as u64);
        assert_eq!(cp.output_len, out.len() as u64);
        let run = execute_segment(&program, &input, cp).unwrap();
        let last = i + 1 == seg.checkpoints.len();
        assert_eq!(run.exit_code.is_some(), last, "{name} segment {i}");
        assert_eq!(run.record.cycles.len() as u64, cp.cycles);
        assert!(cp.cycles <= segment_cycles && cp.cycles >= 1);
        if !last {
            assert_eq!(cp.cycles, segment_cycles);
            let next = &seg.checkpoints[i + 1];
            assert_eq!(run.end_pc, next.pc);
            assert_eq!(run.end_input_pos, next.input_pos);
            assert_eq!(run.end_input_ended, next.input_ended);
        }
        assert_eq!(run.record.pages, cp.pages);
        assert_eq!(run.record.init_pages, cp.page_data);
        for mut sc in run.record.syscalls.iter().copied() {
            sc.cycle += cp.cycle_base;
            sc.data_offset = 0;
            syscalls.push(sc);
        }
        events.extend_from_slice(&run.record.cycles);
        out.extend_from_slice(&run.output);
        regs = run.record.final_regs;
    }
    assert_eq!(events, full.cycles, "{name}: events of the segments");
    let want: Vec<_> = full
        .syscalls
        .iter()
        .map(|s| {
            let mut s = *s;
            s.data_offset = 0;
            s
        })
        .collect();
    assert_eq!(syscalls, want);
    assert_eq!(out, output);
    assert_eq!(regs, full.final_regs);
}

#[test]
fn segments_concatenate_to_the_unsegmented_run() {
    for (name, sizes) in [
        ("sha256", &[1u64, 7, 1000, 4096, 1 << 20][..]),
        ("fibonacci", &[3, 64][..]),
        ("sort", &[1 << 14][..]),
        ("exitcode", &[1, 2][..]),
    ] {
        for &s in sizes {
            check_concatenation(name, s);
        }
    }
}

#[test]
fn segmented_run_stops_at_max_cycles() {
    let (program, input) = guest("sha256");
    let e = execute_segmented(&program, &input, 100, 1000).unwrap_err();
    assert!(
        matches!(e.error, ExecError::CycleLimit { limit: 1000, .. }),
        "{}",
        e.error
    );
    assert_eq!(e.cycles, 1000);
}

#[test]
fn a_checkpoint_of_another_input_is_refused() {
    let (program, input) = guest("sha256");
    let seg = execute_segmented(&program, &input, 2000, 1 << 26).unwrap();
    let mut cp = seg.checkpoints[1].clone();
    cp.input_pos = input.len() as u64 + 1;
    let e = execute_segment(&program, &input, &cp).unwrap_err();
    assert!(matches!(e, ExecError::CheckpointMismatch { .. }), "{e}");
    // A checkpoint whose pages were dropped replays into pages it does not hold.
    let mut cp = seg.checkpoints[1].clone();
    cp.pages.pop();
    cp.page_data.truncate(cp.pages.len() * 4096);
    assert!(execute_segment(&program, &input, &cp).is_err());
}
