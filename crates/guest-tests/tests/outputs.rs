//! Every prebuilt guest run by zkrv's executor on the inputs of `common::cases`: public output and exit code
//! must equal the host's own computation (`common::expected`, `common::rv64im_expected`).

mod common;

use common::{cases, expected, load, run};

fn check_guest(name: &str) {
    let program = load(name);
    for input in cases(name) {
        let (want_code, want_out) = expected(name, &input);
        let exec = run(name, &program, &input);
        println!("{name}: {}-byte input, {} cycles", input.len(), exec.cycles);
        assert_eq!(
            exec.exit_code,
            want_code,
            "{name}: exit code on a {}-byte input",
            input.len()
        );
        assert_eq!(
            exec.public_output,
            want_out,
            "{name}: public output on a {}-byte input (input starts {:02x?})",
            input.len(),
            &input[..input.len().min(16)]
        );
    }
}

#[test]
fn fibonacci_matches_host() {
    check_guest("fibonacci");
}

#[test]
fn exitcode_exits_42_with_output_and_debug_text() {
    check_guest("exitcode");
    let exec = run("exitcode", &load("exitcode"), b"");
    assert_eq!(exec.debug_output, b"exitcode: exiting with 42\n");
}

#[test]
fn sort_matches_host() {
    check_guest("sort");
}

#[test]
fn matmul_matches_host() {
    check_guest("matmul");
}

#[test]
fn modexp_matches_num_bigint() {
    check_guest("modexp");
}

#[test]
fn sha256_matches_sha2() {
    check_guest("sha256");
}

#[test]
fn keccak_matches_tiny_keccak() {
    check_guest("keccak");
}

/// The 1 MiB input of the executor speed benchmark: right digest, and the guest reads it in large chunks
/// (few cycles per byte beyond the compression function itself).
#[test]
fn sha256_one_mib() {
    let input: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let exec = run("sha256", &load("sha256"), &input);
    assert_eq!(exec.exit_code, 0);
    assert_eq!(exec.public_output, expected("sha256", &input).1);
    let per_byte = exec.cycles as f64 / input.len() as f64;
    println!(
        "sha256 of 1 MiB: {} cycles ({per_byte:.1} per byte)",
        exec.cycles
    );
    assert!(
        per_byte < 100.0,
        "sha256 guest takes {per_byte:.1} cycles per byte"
    );
}

#[test]
fn rustalloc_matches_host() {
    check_guest("rustalloc");
}

#[test]
fn typedio_matches_host() {
    check_guest("typedio");
}

/// The Rust runtime's typed `read` on malformed input: the reason on the debug output, exit code 103.
#[test]
fn rust_typed_read_errors_report_on_debug_output() {
    let program = load("typedio");
    for (input, msg) in [
        (&[1u8, 0][..], "the input ends before the value's frame"),
        (
            &[9, 0, 0, 0, 4][..],
            "the input ends inside the value's frame",
        ),
        (
            &[1, 0, 0, 0, 0xff][..],
            "the frame does not decode as the type",
        ),
    ] {
        let exec = run("typedio", &program, input);
        assert_eq!(exec.exit_code, 103);
        let text = String::from_utf8_lossy(&exec.debug_output);
        assert!(
            text.starts_with("zkrv-guest: read::<typedio::Request>: ") && text.contains(msg),
            "{input:?}: debug output {text:?}"
        );
    }
}

/// The Rust runtime's panic handler: message on the debug output, exit code 101.
#[test]
fn rust_panics_report_on_debug_output() {
    let program = load("rustalloc");
    for (n, msg) in [
        (2_000_000u64, "n = 2000000 is too large"),
        (100_000, "memory allocation of"),
    ] {
        let exec = run("rustalloc", &program, &common::le_words(&[n, 1]));
        assert_eq!(exec.exit_code, 101);
        let text = String::from_utf8_lossy(&exec.debug_output);
        assert!(
            text.starts_with("guest panicked at ") && text.contains(msg),
            "n = {n}: debug output {text:?}"
        );
    }
}

#[test]
fn rv64im_matches_isa_semantics() {
    let exec = run("rv64im", &load("rv64im"), b"");
    assert_eq!(exec.exit_code, 0);
    let (want, known) = common::rv64im_expected();
    common::assert_masked_eq("rv64im under zkrv", &exec.public_output, &want, &known);
}

/// The example inputs committed in guests/inputs/<name>.bin give the host model's output.
#[test]
fn example_inputs_match_host() {
    for name in common::GUESTS {
        let path = common::guests_dir().join(format!("inputs/{name}.bin"));
        let input = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let exec = run(name, &load(name), &input);
        println!(
            "{name}: example input ({} bytes): {} cycles",
            input.len(),
            exec.cycles
        );
        if name == "rv64im" {
            let (want, known) = common::rv64im_expected();
            common::assert_masked_eq("rv64im", &exec.public_output, &want, &known);
            assert_eq!(exec.exit_code, 0);
        } else {
            assert_eq!(
                (exec.exit_code, exec.public_output),
                expected(name, &input),
                "{name} on {}",
                path.display()
            );
        }
    }
}

/// Recording the execution (what the prover consumes) changes nothing the guest sees: same output, exit
/// code and cycle count, one cycle event per executed instruction, and the last event is the exit ECALL.
#[test]
fn recorded_runs_match_plain_runs() {
    for name in common::GUESTS {
        let input = std::fs::read(common::guests_dir().join(format!("inputs/{name}.bin")))
            .expect("example input");
        let program = load(name);
        let plain = run(name, &program, &input);
        let opts = zkrv_executor::ExecOptions {
            max_cycles: common::MAX_CYCLES,
            record: true,
        };
        let recorded = zkrv_executor::execute(&program, &input, &opts)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(recorded.public_output, plain.public_output, "{name}");
        assert_eq!(recorded.exit_code, plain.exit_code, "{name}");
        assert_eq!(recorded.cycles, plain.cycles, "{name}");
        let record = recorded
            .record
            .unwrap_or_else(|| panic!("{name}: no record"));
        assert_eq!(
            record.cycles.len() as u64,
            plain.cycles,
            "{name}: one event per cycle"
        );
        assert_eq!(
            record.cycles.last().map(|e| e.word),
            Some(0x0000_0073),
            "{name}: ends with ECALL"
        );
    }
}
