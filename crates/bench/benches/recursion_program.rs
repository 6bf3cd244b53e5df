//! The recursion verifier program of one proof (docs/recursion.md §4, route (b)): its instructions per kind
//! and the rows per table of the recursion AIR set, from a Poseidon2, non-zk one-proof receipt
//! (`zkrv prove --hash poseidon2 --no-zk`):
//!
//!   cargo bench -p zkrv-bench --features recursion --bench recursion_program -- ELF PROOF [ELF PROOF ...]
//!
//! Builds the program (it depends on the proof's shape only), runs the interpreter over the proof's witness
//! (it must accept) and prints, per proof, the heights, then one line per instruction kind and per table.
//!
//!   cargo bench ... --bench recursion_program -- ELF PROOF_A PROOF_B --extrapolate LOG
//!
//! also prints the program of the shape extrapolated to a CPU height of `2^LOG`: every table whose height
//! grew from `PROOF_A` to `PROOF_B` (two runs of the same program, the second one longer) grows by as many
//! more doublings as the CPU table needs to reach `2^LOG`, the others keep `PROOF_B`'s height. The program
//! of that shape is built (not run: there is no such proof) and counted.

use std::time::Instant;

use zkrv_sdk::{Program, Receipt, ReceiptProof};
use zkrv_stark::recursion::execute;

fn print_counts(program: &zkrv_stark::recursion::Program) {
    let start = (0..program.instrs.len())
        .filter(|&i| program.label(i) == "transcript start")
        .count();
    println!("  public inputs {}", program.public_inputs.len());
    println!("  transcript start (instructions) {start}");
    for (k, n) in program.kind_counts() {
        println!("  kind\t{k}\t{n}");
    }
    for (t, n) in program.table_rows() {
        println!("  table\t{}\t{n}", t.name());
    }
}

/// The program of `b`'s shape with its heights extrapolated to a CPU table of `2^log` (module doc).
fn extrapolate(elf: &str, a: &str, b: &str, log: usize) -> anyhow::Result<()> {
    let program = Program::load(elf)?;
    let (ra, rb) = (Receipt::load(a)?, Receipt::load(b)?);
    let (ReceiptProof::Single(pa), ReceiptProof::Single(pb)) = (&ra.proof, &rb.proof) else {
        anyhow::bail!("segmented receipts (one proof each expected)");
    };
    let cpu = zkrv_machine::table_id::CPU;
    let steps = log
        .checked_sub(pb.stark.log_heights[cpu] as usize)
        .ok_or_else(|| anyhow::anyhow!("target below the second proof's CPU height"))?;
    let mut p = pb.clone();
    for (h, &ha) in p.stark.log_heights.iter_mut().zip(&pa.stark.log_heights) {
        if *h != zkrv_stark::proof::ABSENT_LOG_HEIGHT && *h > ha {
            *h += steps as u8;
        }
    }
    let config = &rb.config;
    let lb = config.fri.log_blowup;
    let lde: Vec<usize> = p
        .stark
        .table_log_heights()
        .iter()
        .flatten()
        .map(|&h| h + lb)
        .collect();
    let (_, lf, layers) = zkrv_stark::pcs::fri_layers(&config.fri, lde.iter().copied());
    p.stark.pcs.fri_roots = vec![[0u8; 32]; layers.len()];
    p.stark.pcs.fri_openings = vec![Default::default(); layers.len()];
    p.stark.pcs.final_poly = vec![zkrv_stark::field::Ext3::default(); 1 << (lf - lb)];
    let vp = zkrv_machine::recursion_program(program.inner(), &rb.statement, &p, config)?;
    let heights: Vec<String> = p
        .stark
        .table_log_heights()
        .iter()
        .zip(zkrv_sdk::TABLE_NAMES)
        .filter_map(|(h, n)| h.map(|h| format!("{n}=2^{h}")))
        .collect();
    println!("shape extrapolated ({})", heights.join(" "));
    println!("  instructions {}", vp.program.instrs.len());
    print_counts(&vp.program);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if let [elf, a, b, flag, log] = &args[..] {
        anyhow::ensure!(
            flag == "--extrapolate",
            "usage: ELF PROOF_A PROOF_B --extrapolate LOG"
        );
        return extrapolate(elf, a, b, log.parse()?);
    }
    anyhow::ensure!(
        !args.is_empty() && args.len().is_multiple_of(2),
        "usage: recursion_program ELF PROOF [ELF PROOF ...]"
    );
    for pair in args.chunks(2) {
        let program = Program::load(&pair[0])?;
        let receipt = Receipt::load(&pair[1])?;
        let ReceiptProof::Single(proof) = &receipt.proof else {
            anyhow::bail!("{}: a segmented receipt (one proof expected)", pair[1]);
        };
        zkrv_machine::verify(
            program.inner(),
            &receipt.statement,
            proof,
            &receipt.config,
            0,
        )
        .map_err(|e| anyhow::anyhow!("{}: the verifier rejects the proof: {e}", pair[1]))?;
        let t = Instant::now();
        let vp = zkrv_machine::recursion_program(
            program.inner(),
            &receipt.statement,
            proof,
            &receipt.config,
        )?;
        let build_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let exec = execute(&vp.program, &vp.witness)
            .map_err(|e| anyhow::anyhow!("{}: the program rejects the proof: {e}", pair[1]))?;
        let exec_s = t.elapsed().as_secs_f64();
        let heights: Vec<String> = proof
            .stark
            .table_log_heights()
            .iter()
            .zip(zkrv_sdk::TABLE_NAMES)
            .filter_map(|(h, n)| h.map(|h| format!("{n}=2^{h}")))
            .collect();
        println!("proof {} ({})", pair[1], heights.join(" "));
        println!(
            "  instructions {} (cells {}, witness {} elements); build {build_s:.2} s, execute {exec_s:.2} s",
            vp.program.instrs.len(),
            vp.program.num_cells,
            vp.witness.len()
        );
        print_counts(&vp.program);
        assert!(exec
            .rows
            .iter()
            .zip(vp.program.table_rows())
            .all(|((t, rows), (u, n))| *t == u && rows.len() == n));
    }
    Ok(())
}
