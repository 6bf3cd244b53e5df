//! The trace cells a proof of `ELF` on `INPUT` commits, per table: its height (rows, a power of two; 0 for
//! an absent table), main width and aux width (LogUp, base columns; `CompiledAir::aux_width`), and the cells
//! height x width of each (preprocessed columns excluded: they are fixed per program), under the 100-bit
//! preset (zk, or not with `--no-zk`: zk raises the smallest height). Used for docs/PERF.md "Precompiles".
//!
//! `cargo run --release -p zkrv-machine --example trace_cells -- guests/bin/sha256_accel.elf INPUT [--no-zk]`

use zkrv_executor::Program;
use zkrv_machine::Table;
use zkrv_stark::config::SecurityPreset;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (elf, input, zk) = match args.as_slice() {
        [elf, input] => (elf, input, true),
        [elf, input, flag] if flag == "--no-zk" => (elf, input, false),
        _ => return Err("usage: trace_cells ELF INPUT [--no-zk]".into()),
    };
    let program = Program::from_elf(&std::fs::read(elf)?)?;
    let input = std::fs::read(input)?;
    let config = SecurityPreset::Bits100.config(zk);
    let w = zkrv_machine::witness_for(&program, &input, &config)?;
    let airs = zkrv_machine::compiled_airs(&program, &config)?;
    let cycles =
        zkrv_executor::execute(&program, &input, &zkrv_executor::ExecOptions::default())?.cycles;
    println!(
        "{elf}: {cycles} cycles, {}",
        if zk { "zk" } else { "no-zk" }
    );
    println!(
        "{:<10} {:>9} {:>5} {:>5} {:>14} {:>14}",
        "table", "rows", "main", "aux", "main cells", "aux cells"
    );
    let (mut main_total, mut aux_total) = (0u64, 0u64);
    for ((t, trace), air) in Table::ALL.into_iter().zip(&w.traces).zip(&airs) {
        let rows = trace.height() as u64;
        let (main, aux) = (rows * trace.width as u64, rows * air.aux_width() as u64);
        main_total += main;
        aux_total += aux;
        if rows > 0 {
            println!(
                "{:<10} {rows:>9} {:>5} {:>5} {main:>14} {aux:>14}",
                t.to_string(),
                trace.width,
                air.aux_width()
            );
        }
    }
    println!(
        "{:<10} {:>9} {:>5} {:>5} {main_total:>14} {aux_total:>14}",
        "total", "", "", ""
    );
    println!("all cells  {}", main_total + aux_total);
    Ok(())
}
