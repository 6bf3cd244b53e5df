//! The host memory a proof of one run (or one segment of that height) needs on the CPU backend, from the
//! tables' shapes (`zkrv_stark::backend::ProofFootprint`): builds the traces of `ELF` on `INPUT` (the 100-bit
//! preset, zk and not) and prints each table's height and the modelled peaks. Used to choose
//! `zkrv_machine::segment::DEFAULT_CPU_SEGMENT_ROWS` (docs/PERF.md "Continuations on the CPU: zk").
//!
//! `cargo run --release -p zkrv-machine --example segment_footprint -- guests/bin/sha256.elf INPUT`
//!
//! "store" is `ProofFootprint::total` (every round's LDE kept, `ZKRV_LDE=store`). "recompute" models the
//! CPU backend's recompute mode (what `ZKRV_LDE=auto` does for a round that does not fit in a quarter of the
//! free memory): `total_recompute(0)` (coefficients and full Merkle trees per round, one coset block at a
//! time) plus the zk salt matrices, which the CPU keeps whole for its trees. At 2^20 zk rows it is 10.4 GiB,
//! 3% under the measured 10.75 GiB peak of a sha256 segment.

use zkrv_executor::Program;
use zkrv_stark::backend::{gib, ProofFootprint};
use zkrv_stark::config::SecurityPreset;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [elf, input] = args.as_slice() else {
        return Err("usage: segment_footprint ELF INPUT".into());
    };
    let program = Program::from_elf(&std::fs::read(elf)?)?;
    let input = std::fs::read(input)?;
    for zk in [true, false] {
        let config = SecurityPreset::Bits100.config(zk);
        let w = zkrv_machine::witness_for(&program, &input, &config)?;
        let airs = zkrv_machine::compiled_airs(&program, &config)?;
        let checker = zkrv_machine::WitnessChecker::new(&program, &config)?;
        let log_heights: Vec<usize> = w
            .traces
            .iter()
            .map(|t| t.height().trailing_zeros() as usize)
            .collect();
        let prep_widths: Vec<Option<usize>> = checker
            .preprocessed()
            .iter()
            .map(|p| p.as_ref().map(|m| m.width))
            .collect();
        let f = ProofFootprint::estimate(&airs, &log_heights, &prep_widths, &config, 0);
        let salts = f.main.salts + f.aux.salts + f.quotient.salts;
        println!(
            "{}: table heights 2^{log_heights:?}; store {}, recompute {} (of which trees {}, salts {})",
            if zk { "zk" } else { "no-zk" },
            gib(f.total()),
            gib(f.total_recompute(0) + salts),
            gib(f.main.tree + f.aux.tree + f.quotient.tree + f.preprocessed.tree),
            gib(salts)
        );
    }
    Ok(())
}
