//! Operation counters of the verifier, for the recursion cost model (docs/recursion.md): how many Keccak-f[1600]
//! permutations, cubic-extension multiplications and inversions one `verify` performs, so that the cost of
//! running the verifier as a guest (route (a) of the aggregation issue) can be computed from the cycles each
//! operation costs there.
//!
//! The counters exist only with the crate feature `op-count` (off by default; without it [`bump`] compiles to
//! nothing). Counted where the work is decided, not inside the hash kernels, so the prover's batched hashing is
//! untouched: Merkle openings in [`crate::merkle::verify_tree_openings`] (one permutation per 136 bytes of a
//! leaf, rounded up with the padding, and one per 64-byte node), the transcript (its absorbed bytes / 136 plus one
//! per flush), and every `Ext3 x Ext3`, `Ext3 x F` product and `Ext3` inversion wherever it happens (in a
//! verifier run that is the verifier's own arithmetic).

/// A counted operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Keccak-f[1600] permutations.
    KeccakF = 0,
    /// Bytes absorbed by the transcript (turned into permutations by [`Counts::keccak_f_total`]).
    TranscriptBytes = 1,
    /// `Ext3 x Ext3` products.
    ExtMul = 2,
    /// `Ext3 x F` products.
    ExtBaseMul = 3,
    /// `Ext3` inversions (each one base-field inversion plus 12 base products).
    ExtInv = 4,
    /// Merkle nodes compressed (two digests into one) while checking openings.
    MerkleNodes = 5,
    /// Merkle leaves hashed while checking openings.
    MerkleLeaves = 6,
    /// `sum over leaves of ceil(words / 4)`: the permutations of a rate-4 algebraic sponge (Poseidon2 of width
    /// 8 over Goldilocks, capacity 4) over the same leaves.
    LeafAbsorbsRate4 = 7,
    /// `sum over leaves of ceil(words / 8)`: the same for rate 8 (width 12 or 16).
    LeafAbsorbsRate8 = 8,
    /// Poseidon2 permutations ([`crate::poseidon2::permute`], counted inside it: Merkle openings and the
    /// transcript of the Poseidon2 preset).
    Poseidon2 = 9,
}

const N_OPS: usize = 10;

/// A snapshot of the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts(pub [u64; N_OPS]);

impl Counts {
    /// The count of `op`.
    pub fn get(&self, op: Op) -> u64 {
        self.0[op as usize]
    }

    /// Permutations in all: Merkle openings plus the transcript's absorbed bytes at 136 per permutation.
    pub fn keccak_f_total(&self) -> u64 {
        self.get(Op::KeccakF) + self.get(Op::TranscriptBytes).div_ceil(136)
    }

    /// `self - earlier`, counter by counter.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts(std::array::from_fn(|i| self.0[i] - earlier.0[i]))
    }
}

#[cfg(feature = "op-count")]
static COUNTERS: [std::sync::atomic::AtomicU64; N_OPS] =
    [const { std::sync::atomic::AtomicU64::new(0) }; N_OPS];

/// Adds `n` to the counter of `op` (nothing without the `op-count` feature).
#[inline(always)]
pub fn bump(op: Op, n: u64) {
    #[cfg(feature = "op-count")]
    COUNTERS[op as usize].fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "op-count"))]
    let _ = (op, n);
}

/// The counters now (all zero without the `op-count` feature). Counters are process-wide: take a snapshot
/// before and after the work and subtract ([`Counts::since`]), with no other thread doing counted work.
pub fn snapshot() -> Counts {
    #[cfg(feature = "op-count")]
    {
        Counts(std::array::from_fn(|i| {
            COUNTERS[i].load(std::sync::atomic::Ordering::Relaxed)
        }))
    }
    #[cfg(not(feature = "op-count"))]
    Counts::default()
}

/// Whether the counters are compiled in.
pub const ENABLED: bool = cfg!(feature = "op-count");
