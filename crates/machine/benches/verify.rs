//! Verifier timing: `cargo bench -p zkrv-machine --bench verify -- PROOF.zkrv PROG.elf [RUNS]`.
//!
//! Loads a `.zkrv` proof file (written by `zkrv prove`; layout in `crates/sdk/src/proof_file.rs`) and the ELF,
//! then prints:
//! * the median, min and max wall time of `zkrv_machine::verify` over `RUNS` runs (default 15; proof parsing
//!   and ELF loading excluded), after one warm-up run;
//! * one profiled run broken into stages (the verifier's `profile` spans);
//! * the one-off costs around it: ELF load, proof parsing, and the out-of-domain evaluation of each
//!   preprocessed table alone.
//!
//! Not a test: run it by hand on a quiet machine, with the proof file kept outside git.

use std::time::Instant;

use zkrv_executor::Program;
use zkrv_machine::{Proof, Statement};
use zkrv_stark::field::{Ext3, F};
use zkrv_stark::preprocessed::evaluate_at_ood;
use zkrv_stark::profile;
use zkrv_stark::StarkConfig;

fn take<'a>(b: &mut &'a [u8], n: usize) -> &'a [u8] {
    assert!(b.len() >= n, "truncated proof file");
    let (x, y) = b.split_at(n);
    *b = y;
    x
}

fn section<'a>(b: &mut &'a [u8]) -> &'a [u8] {
    let n = u64::from_le_bytes(take(b, 8).try_into().unwrap()) as usize;
    take(b, n)
}

/// Statement and proof of a `.zkrv` file (magic 8, version 4, parameters 8, statement section, proof section).
fn parse_file(bytes: &[u8]) -> (Statement, Proof) {
    let mut b = bytes;
    assert_eq!(take(&mut b, 8), b"ZKRVPRF\0", "not a zkrv proof file");
    take(&mut b, 12);
    let s = section(&mut b);
    let statement = Statement {
        program: s[..32].try_into().unwrap(),
        exit_code: u32::from_le_bytes(s[32..36].try_into().unwrap()),
        output: s[44..].to_vec(),
    };
    let proof = Proof::from_bytes(section(&mut b)).expect("proof parses");
    (statement, proof)
}

fn ms(secs: f64) -> String {
    format!("{:8.2} ms", secs * 1e3)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let [proof_path, elf_path, rest @ ..] = &args[..] else {
        eprintln!(
            "usage: cargo bench -p zkrv-machine --bench verify -- PROOF.zkrv PROG.elf [RUNS]"
        );
        std::process::exit(2);
    };
    let runs: usize = rest.first().map_or(15, |r| r.parse().expect("RUNS"));
    let config = StarkConfig::default();

    let t = Instant::now();
    let elf = std::fs::read(elf_path).expect("read ELF");
    let program = Program::from_elf(&elf).expect("ELF loads");
    let t_elf = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let bytes = std::fs::read(proof_path).expect("read proof");
    let (statement, proof) = parse_file(&bytes);
    let t_parse = t.elapsed().as_secs_f64();

    zkrv_machine::verify(&program, &statement, &proof, &config, 100).expect("proof verifies");
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            zkrv_machine::verify(&program, &statement, &proof, &config, 100)
                .expect("proof verifies");
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];

    let (res, prof) = profile::record(None, || {
        zkrv_machine::verify(&program, &statement, &proof, &config, 100)
    });
    res.expect("proof verifies");

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("proof {proof_path} ({} bytes), ELF {elf_path}", bytes.len());
    println!("load average: {}", load.trim());
    println!(
        "verify: median {} over {runs} runs (min {}, max {})",
        ms(median),
        ms(times[0]),
        ms(times[times.len() - 1])
    );
    println!("one profiled run:");
    for s in &prof.stages {
        println!(
            "  {:<48} {} {:>6} call(s)",
            format!(
                "{}{}",
                "  ".repeat(s.depth),
                s.name.rsplit('/').next().unwrap_or("")
            ),
            ms(s.secs),
            s.calls
        );
    }
    println!("outside verify:");
    println!("  {:<48} {}", "ELF read + parse", ms(t_elf));
    println!("  {:<48} {}", "proof file read + parse", ms(t_parse));
    for (name, trace) in zkrv_machine::preprocessed_traces(&program).expect("program") {
        let h = trace.height();
        let zeta = Ext3([F::new(3), F::new(5), F::new(7)]);
        let t = Instant::now();
        let _ = evaluate_at_ood(&trace, zeta).expect("zeta outside H");
        println!(
            "  {:<48} {}",
            format!("evaluate {name} at OOD alone ({h} x {})", trace.width),
            ms(t.elapsed().as_secs_f64())
        );
    }
}
