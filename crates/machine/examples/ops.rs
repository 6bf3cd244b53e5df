//! Prints the histogram of executed operations of an ELF and which ones the machine cannot prove yet.
//! Usage: `cargo run -p zkrv-machine --release --example ops -- guests/bin/exitcode.elf [input-file]`

use std::collections::BTreeMap;

use zkrv_executor::{decode, execute, ExecOptions, Op, Program};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let elf = std::fs::read(args.get(1).ok_or("usage: ops <elf> [input]")?)?;
    let input = match args.get(2) {
        Some(p) => std::fs::read(p)?,
        None => Vec::new(),
    };
    let program = Program::from_elf(&elf)?;
    let run = execute(
        &program,
        &input,
        &ExecOptions {
            record: true,
            ..ExecOptions::default()
        },
    )?;
    let rec = run.record.ok_or("no record")?;
    let mut hist: BTreeMap<String, u64> = BTreeMap::new();
    for ev in &rec.cycles {
        let op = decode(ev.word).map(|i| i.op).unwrap_or(Op::Illegal);
        let mut name = format!("{op:?}");
        if op == Op::Ecall {
            name = format!("Ecall({})", ev.rs1_val);
        }
        if !zkrv_machine::supported(op) {
            name.push_str(" (unsupported)");
        }
        *hist.entry(name).or_default() += 1;
    }
    println!(
        "{} cycles, exit {}, {} pages",
        rec.cycles.len(),
        run.exit_code,
        rec.pages.len()
    );
    for (k, v) in hist {
        println!("{v:>10} {k}");
    }
    Ok(())
}
