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
    let config = StarkConfig::default();
    if args.iter().any(|a| a == "--witness-only") {
        // Per table: rows x main columns, aux columns (base), quotient chunks, and the bytes each round
        // holds at blowup B (natural + LDE, 8 bytes per element).
        let checker = zkrv_machine::WitnessChecker::new(&program, &config)?;
        let b = 1usize << config.fri.log_blowup;
        let (mut tm, mut ta, mut tq) = (0usize, 0usize, 0usize);
        println!("table       rows     main  aux  chunks  main MB  aux MB  quot MB (natural+LDE)");
        for (t, (tr, air)) in w.traces.iter().zip(checker.compiled()).enumerate() {
            let n = tr.height();
            let aw = if air.interactions.is_empty() {
                0
            } else {
                air.aux_width()
            };
            let qw = 3 * air.num_quotient_chunks;
            let mb = |w: usize| (n * w * 8 * (1 + b)) as f64 / 1e6;
            tm += n * tr.width;
            ta += n * aw;
            tq += n * qw;
            println!(
                "{:10} {:8} {:5} {:4} {:6} {:8.0} {:7.0} {:8.0}",
                zkrv_machine::TABLE_NAMES[t],
                n,
                tr.width,
                aw,
                air.num_quotient_chunks,
                mb(tr.width),
                mb(aw),
                mb(qw)
            );
        }
        let gb = |c: usize| (c * 8 * (1 + b)) as f64 / 1e9;
        println!(
            "total main {:.2} GB, aux {:.2} GB, quotient {:.2} GB (natural + LDE)",
            gb(tm),
            gb(ta),
            gb(tq)
        );
        return Ok(());
    }
    let t0 = Instant::now();
    let (st, proof) = zkrv_machine::prove_witness(&program, w, &config)?;
    let t_prove = t0.elapsed();
    let t0 = Instant::now();
    zkrv_machine::verify(&program, &st, &proof, &config, 100)?;
    println!(
        "prove {t_prove:?} (after witness), verify {:?}, proof {} bytes, exit {}, output {} bytes",
        t0.elapsed(),
        proof.to_bytes().len(),
        st.exit_code,
        st.output.len()
    );
    Ok(())
}
