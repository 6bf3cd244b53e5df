//! Proves and verifies one guest run and prints the timings and table heights.
//! Usage: `cargo run -p zkrv-machine --release --example prove_elf -- <elf> [input-file] [--witness-only]`

use std::time::Instant;

use zkrv_executor::Program;
use zkrv_stark::StarkConfig;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let elf = std::fs::read(
        args.get(1)
            .ok_or("usage: prove_elf <elf> [input] [--witness-only]")?,
    )?;
    let input = match args.get(2).filter(|a| !a.starts_with("--")) {
        Some(p) => std::fs::read(p)?,
        None => Vec::new(),
    };
    let program = Program::from_elf(&elf)?;
    let t0 = Instant::now();
    let w = zkrv_machine::witness(&program, &input)?;
    let t_witness = t0.elapsed();
    let cells: usize = w.traces.iter().map(|t| t.height() * t.width).sum();
    let heights: Vec<usize> = w.traces.iter().map(|t| t.height()).collect();
    println!("witness {t_witness:?}: heights {heights:?}, {cells} main cells");
    if args.iter().any(|a| a == "--witness-only") {
        return Ok(());
    }
    let config = StarkConfig::default();
    let t0 = Instant::now();
    let (st, proof) = zkrv_machine::prove_witness(&program, w, &config)?;
    let t_prove = t0.elapsed();
    let t0 = Instant::now();
    zkrv_machine::verify(&program, &st, &proof, &config)?;
    println!(
        "prove {t_prove:?} (after witness), verify {:?}, proof {} bytes, exit {}, output {} bytes",
        t0.elapsed(),
        proof.to_bytes().len(),
        st.exit_code,
        st.output.len()
    );
    Ok(())
}
