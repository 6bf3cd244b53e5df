//! The verifier's operation counts for one proof (docs/recursion.md, the route measurement of the aggregation
//! issue): Keccak-f[1600] permutations, cubic-extension products and inversions of one `verify`.
//!
//!   cargo bench -p zkrv-bench --features op-count --bench recursion_cost -- ELF PROOF [ELF PROOF ...]
//!
//! Prints one line per proof: its size, heights, the counts and the verify time (host, counters on). The counts
//! are deterministic for a proof; multiply them by the guest cycles of each operation for route (a)'s cost.

use std::time::Instant;

use zkrv_sdk::{Program, Receipt};
use zkrv_stark::opcount::{self, Op};

fn main() -> anyhow::Result<()> {
    anyhow::ensure!(opcount::ENABLED, "build with --features op-count");
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    anyhow::ensure!(
        !args.is_empty() && args.len().is_multiple_of(2),
        "usage: recursion_cost ELF PROOF [ELF PROOF ...]"
    );
    println!(
        "proof\tbytes\tsegments\tkeccak_f(merkle)\ttranscript_bytes\tkeccak_f(all)\text_mul\text_base_mul\text_inv\t\
         merkle_nodes\tmerkle_leaves\tleaf_absorbs_r4\tleaf_absorbs_r8\tposeidon2\tverify_s"
    );
    for pair in args.chunks(2) {
        let program = Program::load(&pair[0])?;
        let bytes = std::fs::metadata(&pair[1])?.len();
        let receipt = Receipt::load(&pair[1])?;
        let before = opcount::snapshot();
        let t = Instant::now();
        receipt.check_with(&program, 0)?;
        let secs = t.elapsed().as_secs_f64();
        let c = opcount::snapshot().since(&before);
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.3}",
            pair[1],
            bytes,
            receipt.segments(),
            c.get(Op::KeccakF),
            c.get(Op::TranscriptBytes),
            c.keccak_f_total(),
            c.get(Op::ExtMul),
            c.get(Op::ExtBaseMul),
            c.get(Op::ExtInv),
            c.get(Op::MerkleNodes),
            c.get(Op::MerkleLeaves),
            c.get(Op::LeafAbsorbsRate4),
            c.get(Op::LeafAbsorbsRate8),
            c.get(Op::Poseidon2),
            secs
        );
    }
    Ok(())
}
