//! Mixed-height Keccak-256 Merkle tree over row-major matrices (vector commitment to matrix rows).
//!
//! Layout (docs/architecture.md, "Merkle (mixed heights)"), with `L = log2(max height)`:
//! * a row is hashed as the concatenation of its elements' canonical 8-byte little-endian encodings;
//!   [`hash_rows`] hashes the rows of several matrices concatenated, in commit order;
//! * leaf `i` (level `L`, `2^L` digests) = `H(row_i(M_a) || row_i(M_b) || ...)` over the matrices of height
//!   `2^L`, in the order they were given;
//! * level `l - 1` from level `l`: `p_j = H(d_{2j} || d_{2j+1})` ([`compress`]); if matrices of height
//!   `2^(l-1)` exist, `p_j = H(p_j || hash_rows(row_j of those matrices))`;
//! * the root is the single digest of level 0 (a height-1 matrix is injected at the root).
//!
//! Opening index `q < 2^L` reveals row `q >> (L - log_height)` of every matrix, plus `L` siblings, leaf level
//! first. `H` is Keccak-256 with the original Keccak padding (`tiny_keccak::Keccak::v256`).
//!
//! **Salted (hiding) trees** (zk mode, [`MerkleTree::new_salted`]): every level that holds matrices has a
//! salt matrix of the same height (`2^lh x SALT_WIDTH` fresh random elements, [`crate::zk::salt_matrix`]);
//! its row is hashed after the rows of that level's matrices, exactly as if it were one more matrix of that
//! height: leaf `i` = `H(row_i(M_a) || ... || salt_i)`. An opening also reveals the salt rows of the opened
//! leaf and of every injected level ([`MerkleProof::salts`], largest height first); unopened leaves are then
//! hiding (the salt has 128 bits of entropy).

use rayon::prelude::*;
use tiny_keccak::{Hasher, Keccak};

use crate::field::{PrimeField64, F};
use crate::keccak;
use crate::matrix::RowMajorMatrix;
use crate::zk::ZkRng;

/// A digest: 32 bytes (Keccak-256's output, or a Poseidon2 digest of 4 Goldilocks elements as
/// `le8(canonical)` each, [`crate::poseidon2::digest_to_bytes`]).
pub type Digest = [u8; 32];

/// The hash of the Merkle trees and the transcript: a property of the configuration
/// ([`crate::StarkConfig::hash`]), recorded in the proof's header (docs/stark.md §11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MerkleHash {
    /// Keccak-256 (the default): leaves and nodes as in the module doc, the Keccak transcript.
    #[default]
    Keccak256,
    /// Poseidon2 over Goldilocks, width 8 ([`crate::poseidon2`]): leaves by the rate-4 sponge
    /// ([`crate::poseidon2::hash_elems`]), nodes by [`crate::poseidon2::compress`], the duplex
    /// transcript. For proofs verified inside a recursion AIR (docs/recursion.md).
    Poseidon2,
}

impl MerkleHash {
    /// Every hash, the default first.
    pub const ALL: [MerkleHash; 2] = [Self::Keccak256, Self::Poseidon2];

    /// The name the CLI takes (`--hash keccak|poseidon2`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Keccak256 => "keccak",
            Self::Poseidon2 => "poseidon2",
        }
    }

    /// The hash called `name` ([`MerkleHash::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|h| h.name() == name)
    }

    /// `H(row_0 || row_1 || ...)`: [`hash_rows`] (Keccak) or [`crate::poseidon2::hash_elems`].
    pub fn hash_rows<'a>(self, rows: impl IntoIterator<Item = &'a [F]> + Clone) -> Digest {
        match self {
            Self::Keccak256 => hash_rows(rows),
            Self::Poseidon2 => {
                crate::poseidon2::digest_to_bytes(&crate::poseidon2::hash_elems(rows))
            }
        }
    }

    /// The node hash of two children: [`compress`] (Keccak) or [`crate::poseidon2::compress`] (limbs of
    /// a non-canonical digest reduced; the proof parser refuses those).
    pub fn compress(self, left: &Digest, right: &Digest) -> Digest {
        match self {
            Self::Keccak256 => compress(left, right),
            Self::Poseidon2 => {
                use crate::poseidon2 as p2;
                p2::digest_to_bytes(&p2::compress(
                    &p2::digest_from_bytes_reduced(left),
                    &p2::digest_from_bytes_reduced(right),
                ))
            }
        }
    }

    /// `out[i] = hash_rows(row first + i of every matrix)` (`mats`: `(values, width)` row-major).
    fn leaves(self, lanes: usize, mats: &[(&[F], usize)], first: usize, out: &mut [Digest]) {
        match self {
            Self::Keccak256 => keccak::hash_leaves_with(lanes, mats, first, out),
            Self::Poseidon2 => {
                for (i, o) in out.iter_mut().enumerate() {
                    let r = first + i;
                    *o = self.hash_rows(mats.iter().map(|&(v, w)| &v[r * w..(r + 1) * w]));
                }
            }
        }
    }

    /// `out[j] = compress(pair(j))`.
    fn pairs<'a>(
        self,
        lanes: usize,
        pair: impl Fn(usize) -> (&'a Digest, &'a Digest),
        out: &mut [Digest],
    ) {
        match self {
            Self::Keccak256 => keccak::compress_with(lanes, pair, out),
            Self::Poseidon2 => {
                for (j, o) in out.iter_mut().enumerate() {
                    let (l, r) = pair(j);
                    *o = self.compress(l, r);
                }
            }
        }
    }
}

/// Shape of one committed matrix, as the verifier knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixDims {
    /// Number of columns (base-field elements per row).
    pub width: usize,
    /// log2 of the number of rows.
    pub log_height: usize,
}

/// Authentication path of one opening: `L` sibling digests, from the leaf level (sibling of the leaf) up to
/// level 1 (child of the root).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MerkleProof {
    pub siblings: Vec<Digest>,
    /// Salted trees only: one salt row per level that holds matrices, largest height first (empty for an
    /// unsalted tree).
    pub salts: Vec<Vec<F>>,
}

/// Why a Merkle opening was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MerkleError {
    #[error("commitment has no matrices")]
    NoMatrices,
    #[error("matrix log_height {0} is too large (max 40)")]
    HeightTooLarge(usize),
    #[error("expected rows for {expected} matrices, got {got}")]
    RowCount { expected: usize, got: usize },
    #[error("matrix {matrix}: row has {got} elements, expected width {expected}")]
    RowWidth {
        matrix: usize,
        expected: usize,
        got: usize,
    },
    #[error("proof has {got} siblings, expected {expected}")]
    ProofLength { expected: usize, got: usize },
    #[error("index {index} out of range for a tree of height 2^{log_height}")]
    IndexOutOfRange { index: usize, log_height: usize },
    #[error("recomputed root does not match the commitment")]
    RootMismatch,
    #[error("expected {expected} layers, got {got}")]
    LayerCount { expected: usize, got: usize },
    #[error("layer {layer} has {got} digests, expected {expected}")]
    LayerSize {
        layer: usize,
        expected: usize,
        got: usize,
    },
    #[error("matrix {0}: height is not a power of two, or width is 0")]
    MatrixShape(usize),
    #[error("sibling {0} is not a Poseidon2 digest (a limb is not a canonical field element)")]
    NonCanonicalDigest(usize),
    #[error("expected {expected} salt rows of {width} elements, got {got}")]
    SaltShape {
        expected: usize,
        width: usize,
        got: usize,
    },
}

/// Keccak-256 of `data`.
pub fn keccak256(data: &[u8]) -> Digest {
    let mut h = Keccak::v256();
    h.update(data);
    let mut out = [0u8; 32];
    h.finalize(&mut out);
    out
}

/// `H(left || right)`, 64 bytes in.
#[inline]
pub fn compress(left: &Digest, right: &Digest) -> Digest {
    let mut h = Keccak::v256();
    h.update(left);
    h.update(right);
    let mut out = [0u8; 32];
    h.finalize(&mut out);
    out
}

/// `H(row_0 || row_1 || ...)`, each element as its canonical value in 8 little-endian bytes.
pub fn hash_rows<'a>(rows: impl IntoIterator<Item = &'a [F]>) -> Digest {
    let mut h = Keccak::v256();
    let mut buf = [0u8; 8 * 32];
    for row in rows {
        for chunk in row.chunks(32) {
            for (k, x) in chunk.iter().enumerate() {
                buf[8 * k..8 * k + 8].copy_from_slice(&x.as_canonical_u64().to_le_bytes());
            }
            h.update(&buf[..8 * chunk.len()]);
        }
    }
    let mut out = [0u8; 32];
    h.finalize(&mut out);
    out
}

/// A mixed-height Merkle tree over matrices whose heights are powers of two.
#[derive(Clone, Debug)]
pub struct MerkleTree {
    /// The committed matrices; empty for a digest-only tree ([`MerkleTree::from_coset_blocks`]).
    matrices: Vec<RowMajorMatrix>,
    /// Shapes of the committed matrices, in commit order.
    dims: Vec<MatrixDims>,
    /// Salted trees: one `2^lh x SALT_WIDTH` matrix per level `lh` that holds matrices, largest first.
    salts: Vec<RowMajorMatrix>,
    /// `layers[k]` is level `L - k`: `layers[0]` the `2^L` leaves, `layers[L]` the root.
    layers: Vec<Vec<Digest>>,
    log_max_height: usize,
    /// The leaf and node hash.
    hash: MerkleHash,
}

/// Rows below this are hashed sequentially (rayon overhead).
const PAR_MIN: usize = 1 << 10;
/// Digests per rayon task (a multiple of every batched-Keccak width).
const PAR_CHUNK: usize = 256;

/// Leaf digests `hash.hash_rows(row_i of mats)` for `i < height` (Keccak batched,
/// [`keccak::hash_leaves`]).
fn hash_level_rows(hash: MerkleHash, mats: &[&RowMajorMatrix], height: usize) -> Vec<Digest> {
    let mats: Vec<(&[F], usize)> = mats.iter().map(|m| (&m.values[..], m.width)).collect();
    let mut out = vec![[0u8; 32]; height];
    let lanes = keccak::lanes();
    if height >= PAR_MIN {
        out.par_chunks_mut(PAR_CHUNK)
            .enumerate()
            .for_each(|(c, o)| hash.leaves(lanes, &mats, c * PAR_CHUNK, o));
    } else {
        hash.leaves(lanes, &mats, 0, &mut out);
    }
    out
}

/// `out[k] = hash.compress(left[k], right[k])`, in parallel for long levels (Keccak batched,
/// [`keccak::compress_with`]).
fn compress_pairs(hash: MerkleHash, left: &[Digest], right: &[Digest], out: &mut [Digest]) {
    let lanes = keccak::lanes();
    if out.len() >= PAR_MIN {
        out.par_chunks_mut(PAR_CHUNK)
            .zip(left.par_chunks(PAR_CHUNK).zip(right.par_chunks(PAR_CHUNK)))
            .for_each(|(o, (l, r))| hash.pairs(lanes, |k| (&l[k], &r[k]), o));
    } else {
        hash.pairs(lanes, |k| (&left[k], &right[k]), out);
    }
}

/// One level up: `H(prev[2k] || prev[2k+1])` (Keccak batched, [`keccak::compress_layer`]).
fn compress_level(hash: MerkleHash, prev: &[Digest]) -> Vec<Digest> {
    let n = prev.len() / 2;
    let mut out = vec![[0u8; 32]; n];
    let lanes = keccak::lanes();
    if n >= PAR_MIN {
        out.par_chunks_mut(PAR_CHUNK)
            .zip(prev.par_chunks(2 * PAR_CHUNK))
            .for_each(|(o, p)| hash.pairs(lanes, |k| (&p[2 * k], &p[2 * k + 1]), o));
    } else {
        hash.pairs(lanes, |k| (&prev[2 * k], &prev[2 * k + 1]), &mut out);
    }
    out
}

impl MerkleTree {
    /// Commit to `matrices` (any power-of-two heights, any widths >= 1, any order; the order within one
    /// height is the hashing order) with Keccak-256 ([`MerkleTree::with_salts`] for another hash).
    ///
    /// # Panics
    /// If `matrices` is empty or a height is not a power of two (prover-side programming errors).
    pub fn new(matrices: Vec<RowMajorMatrix>) -> Self {
        Self::with_salts(MerkleHash::Keccak256, matrices, Vec::new())
    }

    /// A salted (hiding) tree hashed with `hash`: salts of round `round` from `rng`
    /// ([`crate::zk::salt_matrix`]), or unsalted if `salt` is `None`.
    pub fn new_salted(
        hash: MerkleHash,
        matrices: Vec<RowMajorMatrix>,
        salt: Option<(&ZkRng, u32)>,
    ) -> Self {
        let salts = match salt {
            None => Vec::new(),
            Some((rng, round)) => level_heights(&matrices)
                .into_iter()
                .map(|lh| crate::zk::salt_matrix(rng, round, lh))
                .collect(),
        };
        Self::with_salts(hash, matrices, salts)
    }

    /// A tree hashed with `hash`, with the given salt matrices (empty: unsalted; otherwise one per level
    /// that holds matrices, largest height first, each of that height and the same width >= 1).
    ///
    /// # Panics
    /// As [`MerkleTree::new`], or if the salts do not have that shape.
    pub fn with_salts(
        hash: MerkleHash,
        matrices: Vec<RowMajorMatrix>,
        salts: Vec<RowMajorMatrix>,
    ) -> Self {
        assert!(!matrices.is_empty(), "MerkleTree needs at least one matrix");
        check_salts(&matrices, &salts).expect("salt matrices match the levels");
        let log_heights: Vec<usize> = matrices
            .iter()
            .map(|m| {
                m.log_height()
                    .expect("matrix height must be a power of two")
            })
            .collect();
        let log_max_height = *log_heights.iter().max().expect("non-empty");
        let levels = level_heights(&matrices);
        let at_height = |lh: usize| -> Vec<&RowMajorMatrix> {
            let mut v: Vec<&RowMajorMatrix> = matrices
                .iter()
                .zip(&log_heights)
                .filter(|(_, &h)| h == lh)
                .map(|(m, _)| m)
                .collect();
            if let Some(k) = levels.iter().position(|&l| l == lh) {
                v.extend(salts.get(k));
            }
            v
        };

        let mut layers = Vec::with_capacity(log_max_height + 1);
        layers.push(hash_level_rows(
            hash,
            &at_height(log_max_height),
            1 << log_max_height,
        ));
        for level in (0..log_max_height).rev() {
            let prev = layers.last().expect("non-empty");
            let n = 1usize << level;
            let mut next = compress_level(hash, prev);
            let mats = at_height(level);
            if !mats.is_empty() {
                let row_hashes = hash_level_rows(hash, &mats, n);
                let left = next.clone();
                compress_pairs(hash, &left, &row_hashes, &mut next);
            }
            layers.push(next);
        }
        Self {
            dims: matrix_dims(&matrices),
            matrices,
            salts,
            layers,
            log_max_height,
            hash,
        }
    }

    /// A digest-only tree (no matrices kept) over matrices that are never held whole: bit-reversed LDEs of
    /// blowup `2^log_blowup` given one coset block at a time. `block(c)` returns, for every matrix in
    /// commit order, its storage rows `[c·h/B, (c+1)·h/B)` (`h` its height `dims[m]`, `B = 2^log_blowup`;
    /// [`crate::poly::lde_coset_block`]), for `c = 0, 1, .., B-1`. Every height must be `>= B`.
    ///
    /// Block `c` of every matrix lies under the same subtree (the `c`-th node of level `log_blowup`), so the
    /// tree is hashed one subtree at a time, holding one block of each matrix. Root, layers and openings are
    /// identical to [`MerkleTree::with_salts`] over the whole matrices; [`MerkleTree::open`] returns no rows
    /// (the caller recomputes them), only the path and salts.
    ///
    /// # Panics
    /// As [`MerkleTree::with_salts`], or if a block does not have the shape above.
    pub fn from_coset_blocks(
        hash: MerkleHash,
        dims: Vec<MatrixDims>,
        salts: Vec<RowMajorMatrix>,
        log_blowup: usize,
        mut block: impl FnMut(usize) -> Vec<RowMajorMatrix>,
    ) -> Self {
        assert!(!dims.is_empty(), "MerkleTree needs at least one matrix");
        assert!(
            dims.iter()
                .all(|d| d.width > 0 && d.log_height >= log_blowup),
            "every matrix needs width >= 1 and height >= 2^log_blowup"
        );
        if !salts.is_empty() {
            let levels: Vec<usize> = level_heights_of(&dims);
            assert!(
                salts.len() == levels.len()
                    && salts
                        .iter()
                        .zip(&levels)
                        .all(|(s, &lh)| s.log_height() == Some(lh)),
                "salt matrices match the levels"
            );
        }
        let log_max_height = dims.iter().map(|d| d.log_height).max().expect("non-empty");
        let nb = 1usize << log_blowup;
        let sub_log = log_max_height - log_blowup;
        let mut layers: Vec<Vec<Digest>> = (0..=log_max_height)
            .map(|k| vec![[0u8; 32]; 1 << (log_max_height - k)])
            .collect();
        for c in 0..nb {
            let blocks = block(c);
            assert_eq!(blocks.len(), dims.len(), "one block per matrix");
            for (b, d) in blocks.iter().zip(&dims) {
                assert!(
                    b.width == d.width && b.height() == 1 << (d.log_height - log_blowup),
                    "coset block shape"
                );
            }
            let salt_blocks: Vec<RowMajorMatrix> = salts
                .iter()
                .map(|s| {
                    let h = s.height() >> log_blowup;
                    RowMajorMatrix::new(
                        s.values[c * h * s.width..(c + 1) * h * s.width].to_vec(),
                        s.width,
                    )
                })
                .collect();
            let sub = Self::with_salts(hash, blocks, salt_blocks);
            debug_assert_eq!(sub.log_max_height, sub_log);
            for (k, l) in sub.layers.into_iter().enumerate() {
                let len = l.len();
                layers[k][c * len..(c + 1) * len].copy_from_slice(&l);
            }
        }
        for k in sub_log..log_max_height {
            let (lo, hi) = layers.split_at_mut(k + 1);
            hi[0] = compress_level(hash, &lo[k]);
        }
        Self {
            matrices: Vec::new(),
            dims,
            salts,
            layers,
            log_max_height,
            hash,
        }
    }

    /// A tree from layers hashed elsewhere (e.g. on a GPU), without rehashing: `layers[k]` is level `L - k`
    /// (`layers[0]` the `2^L` leaf digests, `layers[L]` the one-digest root), `L = log2(max height)`,
    /// built from `matrices` as [`MerkleTree::new`] would.
    ///
    /// Checked: a non-empty matrix list with power-of-two heights and widths >= 1, `L + 1` layers of
    /// `2^(L-k)` digests. Not checked (that would cost the rehash this avoids): that the digests are the
    /// hashes of `matrices`; the caller vouches for that, and a wrong layer yields proofs that the verifier
    /// rejects.
    /// `salts` as in [`MerkleTree::with_salts`] (checked).
    pub fn from_layers(
        hash: MerkleHash,
        matrices: Vec<RowMajorMatrix>,
        salts: Vec<RowMajorMatrix>,
        layers: Vec<Vec<Digest>>,
    ) -> Result<Self, MerkleError> {
        if matrices.is_empty() {
            return Err(MerkleError::NoMatrices);
        }
        let mut log_max_height = 0;
        for (i, m) in matrices.iter().enumerate() {
            match m.log_height() {
                Some(lh) if m.width > 0 => log_max_height = log_max_height.max(lh),
                _ => return Err(MerkleError::MatrixShape(i)),
            }
        }
        if layers.len() != log_max_height + 1 {
            return Err(MerkleError::LayerCount {
                expected: log_max_height + 1,
                got: layers.len(),
            });
        }
        for (k, l) in layers.iter().enumerate() {
            let expected = 1usize << (log_max_height - k);
            if l.len() != expected {
                return Err(MerkleError::LayerSize {
                    layer: k,
                    expected,
                    got: l.len(),
                });
            }
        }
        check_salts(&matrices, &salts)?;
        Ok(Self {
            dims: matrix_dims(&matrices),
            matrices,
            salts,
            layers,
            log_max_height,
            hash,
        })
    }

    /// All layers, leaf level first (`layers()[k]` is level `L - k`; see [`MerkleTree::from_layers`]).
    pub fn layers(&self) -> &[Vec<Digest>] {
        &self.layers
    }

    /// The leaf and node hash.
    pub fn hash(&self) -> MerkleHash {
        self.hash
    }

    /// The salt matrices (empty for an unsalted tree; see [`MerkleTree::with_salts`]).
    pub fn salts(&self) -> &[RowMajorMatrix] {
        &self.salts
    }

    /// The commitment.
    pub fn root(&self) -> Digest {
        self.layers[self.log_max_height][0]
    }

    /// The committed matrices, in the order given to [`MerkleTree::new`]; empty for a digest-only tree
    /// ([`MerkleTree::from_coset_blocks`]).
    pub fn matrices(&self) -> &[RowMajorMatrix] {
        &self.matrices
    }

    /// log2 of the largest matrix height (= number of siblings in a proof).
    pub fn log_max_height(&self) -> usize {
        self.log_max_height
    }

    /// Dimensions of the committed matrices, in commit order.
    pub fn dims(&self) -> Vec<MatrixDims> {
        self.dims.clone()
    }

    /// Open leaf `index < 2^L`: the row `index >> (L - log_height)` of each matrix (commit order; none for a
    /// digest-only tree) and the authentication path.
    ///
    /// # Panics
    /// If `index >= 2^L`.
    pub fn open(&self, index: usize) -> (Vec<Vec<F>>, MerkleProof) {
        assert!(
            index < (1 << self.log_max_height),
            "Merkle index out of range"
        );
        let rows = self
            .matrices
            .iter()
            .map(|m| {
                let lh = m.log_height().expect("checked at construction");
                m.row(index >> (self.log_max_height - lh)).to_vec()
            })
            .collect();
        let siblings = (0..self.log_max_height)
            .map(|k| self.layers[k][(index >> k) ^ 1])
            .collect();
        let salts = self
            .salts
            .iter()
            .map(|s| {
                let lh = s.log_height().expect("checked at construction");
                s.row(index >> (self.log_max_height - lh)).to_vec()
            })
            .collect();
        (rows, MerkleProof { siblings, salts })
    }
}

/// The distinct log heights of `matrices`, largest first (the levels that hold matrices).
fn level_heights(matrices: &[RowMajorMatrix]) -> Vec<usize> {
    let mut v: Vec<usize> = matrices.iter().filter_map(|m| m.log_height()).collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v.dedup();
    v
}

/// [`level_heights`] from shapes.
pub fn level_heights_of(dims: &[MatrixDims]) -> Vec<usize> {
    let mut v: Vec<usize> = dims.iter().map(|d| d.log_height).collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v.dedup();
    v
}

fn matrix_dims(matrices: &[RowMajorMatrix]) -> Vec<MatrixDims> {
    matrices
        .iter()
        .map(|m| MatrixDims {
            width: m.width,
            log_height: m.log_height().expect("checked at construction"),
        })
        .collect()
}

fn check_salts(matrices: &[RowMajorMatrix], salts: &[RowMajorMatrix]) -> Result<(), MerkleError> {
    if salts.is_empty() {
        return Ok(());
    }
    let levels = level_heights(matrices);
    let width = salts[0].width;
    if salts.len() != levels.len()
        || salts
            .iter()
            .zip(&levels)
            .any(|(s, &lh)| s.width != width || s.log_height() != Some(lh))
    {
        return Err(MerkleError::SaltShape {
            expected: levels.len(),
            width,
            got: salts.len(),
        });
    }
    Ok(())
}

/// Verify an opening of leaf `index` against `root`. `dims` and `rows` are in commit order, `rows[m]` is
/// the opened row of matrix `m`. `salt_width` is 0 for an unsalted tree, else the width of each salt row
/// the proof must carry (one per distinct height of `dims`, largest first). Returns a typed error on any
/// malformed input; never panics.
pub fn verify_batch(
    hash: MerkleHash,
    root: &Digest,
    dims: &[MatrixDims],
    index: usize,
    rows: &[Vec<F>],
    proof: &MerkleProof,
    salt_width: usize,
) -> Result<(), MerkleError> {
    if dims.is_empty() {
        return Err(MerkleError::NoMatrices);
    }
    if rows.len() != dims.len() {
        return Err(MerkleError::RowCount {
            expected: dims.len(),
            got: rows.len(),
        });
    }
    for (m, (d, r)) in dims.iter().zip(rows).enumerate() {
        if d.log_height > 40 {
            return Err(MerkleError::HeightTooLarge(d.log_height));
        }
        if r.len() != d.width {
            return Err(MerkleError::RowWidth {
                matrix: m,
                expected: d.width,
                got: r.len(),
            });
        }
    }
    let log_max = dims.iter().map(|d| d.log_height).max().unwrap_or(0);
    if index >> log_max != 0 {
        return Err(MerkleError::IndexOutOfRange {
            index,
            log_height: log_max,
        });
    }
    if proof.siblings.len() != log_max {
        return Err(MerkleError::ProofLength {
            expected: log_max,
            got: proof.siblings.len(),
        });
    }
    let mut levels: Vec<usize> = dims.iter().map(|d| d.log_height).collect();
    levels.sort_unstable_by(|a, b| b.cmp(a));
    levels.dedup();
    let expected_salts = if salt_width == 0 { 0 } else { levels.len() };
    if proof.salts.len() != expected_salts || proof.salts.iter().any(|s| s.len() != salt_width) {
        return Err(MerkleError::SaltShape {
            expected: expected_salts,
            width: salt_width,
            got: proof.salts.len(),
        });
    }
    let rows_at = |lh: usize| {
        let salt = levels
            .iter()
            .position(|&l| l == lh)
            .and_then(|k| proof.salts.get(k))
            .map(|s| s.as_slice());
        dims.iter()
            .zip(rows)
            .filter(move |(d, _)| d.log_height == lh)
            .map(|(_, r)| r.as_slice())
            .chain(salt)
    };
    check_siblings(hash, &proof.siblings)?;
    let mut cur = hash.hash_rows(rows_at(log_max));
    for (k, sib) in proof.siblings.iter().enumerate() {
        let idx = index >> k;
        cur = if idx & 1 == 0 {
            hash.compress(&cur, sib)
        } else {
            hash.compress(sib, &cur)
        };
        let level = log_max - k - 1;
        if dims.iter().any(|d| d.log_height == level) {
            cur = hash.compress(&cur, &hash.hash_rows(rows_at(level)));
        }
    }
    if &cur == root {
        Ok(())
    } else {
        Err(MerkleError::RootMismatch)
    }
}

/// One opening for [`verify_batch_many`]: leaf `index`, the opened rows (`rows[m]` of matrix `m`, commit
/// order) and the authentication path.
#[derive(Clone, Copy, Debug)]
pub struct Opening<'a> {
    pub index: usize,
    pub rows: &'a [Vec<F>],
    pub proof: &'a MerkleProof,
}

/// [`verify_batch`] of many openings of one tree: `out[k]` is exactly `verify_batch(root, dims,
/// openings[k].index, openings[k].rows, openings[k].proof)`. The openings are hashed together, level by
/// level, with the batched Keccak ([`keccak::hash_leaves`], [`keccak::compress_with`]: 8 or 4 openings per
/// permutation where the CPU has AVX-512F or AVX2). `salt_width` as in [`verify_batch`]. Never panics.
pub fn verify_batch_many(
    hash: MerkleHash,
    root: &Digest,
    dims: &[MatrixDims],
    openings: &[Opening<'_>],
    salt_width: usize,
) -> Vec<Result<(), MerkleError>> {
    // Shape checks (the ones `verify_batch` makes before hashing), then batch the well-formed openings.
    let mut out: Vec<Result<(), MerkleError>> = Vec::with_capacity(openings.len());
    let log_max = dims.iter().map(|d| d.log_height).max().unwrap_or(0);
    let mut levels: Vec<usize> = dims.iter().map(|d| d.log_height).collect();
    levels.sort_unstable_by(|a, b| b.cmp(a));
    levels.dedup();
    for o in openings {
        out.push(check_opening_shape(dims, log_max, o).and_then(|()| {
            check_siblings(hash, &o.proof.siblings)?;
            let expected = if salt_width == 0 { 0 } else { levels.len() };
            if o.proof.salts.len() != expected
                || o.proof.salts.iter().any(|s| s.len() != salt_width)
            {
                Err(MerkleError::SaltShape {
                    expected,
                    width: salt_width,
                    got: o.proof.salts.len(),
                })
            } else {
                Ok(())
            }
        }));
    }
    let ok: Vec<&Opening> = openings
        .iter()
        .zip(&out)
        .filter(|(_, r)| r.is_ok())
        .map(|(o, _)| o)
        .collect();
    if ok.is_empty() {
        return out;
    }
    let n = ok.len();
    let lanes = keccak::lanes();
    // Row hashes at one level: the opened rows of the matrices of that height, one contiguous
    // `n x width` matrix per committed matrix (commit order), hashed as `hash_rows` would.
    let level_hashes = |lh: usize| -> Option<Vec<Digest>> {
        let mut cols: Vec<(Vec<F>, usize)> = dims
            .iter()
            .enumerate()
            .filter(|(_, d)| d.log_height == lh)
            .map(|(m, d)| {
                let mut v = Vec::with_capacity(n * d.width);
                for o in &ok {
                    v.extend_from_slice(&o.rows[m]);
                }
                (v, d.width)
            })
            .collect();
        if cols.is_empty() {
            return None;
        }
        // Salted trees: the level's salt row is hashed after its matrices' rows.
        if salt_width > 0 {
            let k = levels.iter().position(|&l| l == lh)?;
            let mut v = Vec::with_capacity(n * salt_width);
            for o in &ok {
                v.extend_from_slice(&o.proof.salts[k]);
            }
            cols.push((v, salt_width));
        }
        let mats: Vec<(&[F], usize)> = cols.iter().map(|(v, w)| (&v[..], *w)).collect();
        let mut h = vec![[0u8; 32]; n];
        hash.leaves(lanes, &mats, 0, &mut h);
        Some(h)
    };
    let mut cur = level_hashes(log_max).unwrap_or_else(|| vec![[0u8; 32]; n]);
    let mut next = vec![[0u8; 32]; n];
    for k in 0..log_max {
        {
            let cur = &cur;
            hash.pairs(
                lanes,
                |j| {
                    let sib = &ok[j].proof.siblings[k];
                    if (ok[j].index >> k) & 1 == 0 {
                        (&cur[j], sib)
                    } else {
                        (sib, &cur[j])
                    }
                },
                &mut next,
            );
        }
        std::mem::swap(&mut cur, &mut next);
        if let Some(rh) = level_hashes(log_max - k - 1) {
            let left = cur.clone();
            hash.pairs(lanes, |j| (&left[j], &rh[j]), &mut cur);
        }
    }
    let mut j = 0;
    for r in out.iter_mut() {
        if r.is_ok() {
            if &cur[j] != root {
                *r = Err(MerkleError::RootMismatch);
            }
            j += 1;
        }
    }
    out
}

/// The checks [`verify_batch`] makes before hashing.
/// Poseidon2: every sibling is the encoding of 4 canonical elements (one digest, one encoding).
fn check_siblings(hash: MerkleHash, siblings: &[Digest]) -> Result<(), MerkleError> {
    match hash {
        MerkleHash::Keccak256 => Ok(()),
        MerkleHash::Poseidon2 => match siblings
            .iter()
            .position(|d| crate::poseidon2::digest_from_bytes(d).is_none())
        {
            None => Ok(()),
            Some(k) => Err(MerkleError::NonCanonicalDigest(k)),
        },
    }
}

fn check_opening_shape(
    dims: &[MatrixDims],
    log_max: usize,
    o: &Opening<'_>,
) -> Result<(), MerkleError> {
    if dims.is_empty() {
        return Err(MerkleError::NoMatrices);
    }
    if o.rows.len() != dims.len() {
        return Err(MerkleError::RowCount {
            expected: dims.len(),
            got: o.rows.len(),
        });
    }
    for (m, (d, r)) in dims.iter().zip(o.rows).enumerate() {
        if d.log_height > 40 {
            return Err(MerkleError::HeightTooLarge(d.log_height));
        }
        if r.len() != d.width {
            return Err(MerkleError::RowWidth {
                matrix: m,
                expected: d.width,
                got: r.len(),
            });
        }
    }
    if o.index >> log_max != 0 {
        return Err(MerkleError::IndexOutOfRange {
            index: o.index,
            log_height: log_max,
        });
    }
    if o.proof.siblings.len() != log_max {
        return Err(MerkleError::ProofLength {
            expected: log_max,
            got: o.proof.siblings.len(),
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// Openings of many leaves at once (Merkle multiproof)

/// The distinct row indices `index >> shift` of `indices`, ascending: the rows of a matrix `shift` levels
/// below the tree's largest height that a set of leaf openings reveals.
pub fn distinct_rows(indices: &[usize], shift: usize) -> Vec<usize> {
    let mut v: Vec<usize> = indices.iter().map(|&i| i >> shift).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// All openings of one tree at a set of leaves, each value sent once.
///
/// For leaf indices `Q` (largest height `2^L`, duplicates allowed): `rows[m]` holds the rows of matrix `m`
/// (commit order, height `2^lh`) at [`distinct_rows`]`(Q, L - lh)`, ascending; `salts[k]` (salted trees)
/// the salt rows of the `k`-th level that holds matrices (largest first) likewise; `siblings` the digests
/// the verifier cannot compute, in the order it needs them: level by level from the leaves up, and within a
/// level by ascending node index (the sibling of each known node whose sibling is not known). A path of `L`
/// digests per query becomes about `|Q| (L - log2 |Q|)` digests in all.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TreeOpenings {
    pub rows: Vec<Vec<Vec<F>>>,
    pub salts: Vec<Vec<Vec<F>>>,
    pub siblings: Vec<Digest>,
}

/// Builds [`TreeOpenings`] from one full opening per leaf index (`openings[j]` the rows, commit order, and
/// the path of leaf `indices[j]`, as [`MerkleTree::open`] gives them). `dims` are the tree's matrices.
/// Errors if an opening has the wrong shape.
pub fn compress_openings(
    dims: &[MatrixDims],
    indices: &[usize],
    openings: &[(Vec<Vec<F>>, MerkleProof)],
) -> Result<TreeOpenings, MerkleError> {
    if dims.is_empty() {
        return Err(MerkleError::NoMatrices);
    }
    if openings.len() != indices.len() {
        return Err(MerkleError::RowCount {
            expected: indices.len(),
            got: openings.len(),
        });
    }
    let log_max = dims.iter().map(|d| d.log_height).max().unwrap_or(0);
    let levels = level_heights_of(dims);
    for ((rows, proof), &i) in openings.iter().zip(indices) {
        check_opening_shape(
            dims,
            log_max,
            &Opening {
                index: i,
                rows,
                proof,
            },
        )?;
    }
    // The first opening (in query order) of each distinct row.
    let pick =
        |shift: usize, get: &dyn Fn(usize) -> Option<Vec<F>>| -> Result<Vec<Vec<F>>, MerkleError> {
            distinct_rows(indices, shift)
                .into_iter()
                .map(|r| {
                    let j = indices.iter().position(|&i| i >> shift == r).unwrap_or(0);
                    get(j).ok_or(MerkleError::SaltShape {
                        expected: levels.len(),
                        width: 0,
                        got: openings[j].1.salts.len(),
                    })
                })
                .collect()
        };
    let rows = dims
        .iter()
        .enumerate()
        .map(|(m, d)| pick(log_max - d.log_height, &|j| Some(openings[j].0[m].clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let salted = openings.first().is_some_and(|(_, p)| !p.salts.is_empty());
    let salts = if salted {
        levels
            .iter()
            .enumerate()
            .map(|(k, &lh)| pick(log_max - lh, &|j| openings[j].1.salts.get(k).cloned()))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    // Walk the levels as the verifier will, taking each unknown sibling from a path that has it.
    let mut siblings = Vec::new();
    let mut known: Vec<usize> = distinct_rows(indices, 0);
    for k in 0..log_max {
        let mut parents = Vec::with_capacity(known.len());
        let mut t = 0;
        while t < known.len() {
            let node = known[t];
            if node & 1 == 0 && known.get(t + 1) == Some(&(node | 1)) {
                t += 2;
            } else {
                let j = indices.iter().position(|&i| i >> k == node).unwrap_or(0);
                siblings.push(openings[j].1.siblings[k]);
                t += 1;
            }
            parents.push(node >> 1);
        }
        known = parents;
    }
    Ok(TreeOpenings {
        rows,
        salts,
        siblings,
    })
}

/// Verifies [`TreeOpenings`] of the leaves `indices` against `root` (`salt_width` as in [`verify_batch`]):
/// every row and salt row has its shape, the multiproof is consumed exactly, and the recomputed root
/// matches. Hashes a level's nodes together with the batched Keccak. Never panics.
pub fn verify_tree_openings(
    hash: MerkleHash,
    root: &Digest,
    dims: &[MatrixDims],
    indices: &[usize],
    o: &TreeOpenings,
    salt_width: usize,
) -> Result<(), MerkleError> {
    if dims.is_empty() {
        return Err(MerkleError::NoMatrices);
    }
    if let Some(d) = dims.iter().find(|d| d.log_height > 40) {
        return Err(MerkleError::HeightTooLarge(d.log_height));
    }
    let log_max = dims.iter().map(|d| d.log_height).max().unwrap_or(0);
    if let Some(&index) = indices.iter().find(|&&i| i >> log_max != 0) {
        return Err(MerkleError::IndexOutOfRange {
            index,
            log_height: log_max,
        });
    }
    let levels = level_heights_of(dims);
    check_siblings(hash, &o.siblings)?;
    if o.rows.len() != dims.len() {
        return Err(MerkleError::RowCount {
            expected: dims.len(),
            got: o.rows.len(),
        });
    }
    // Per matrix, its distinct rows; every opened row has the matrix's width.
    for (m, (d, rows)) in dims.iter().zip(&o.rows).enumerate() {
        let want = distinct_rows(indices, log_max - d.log_height).len();
        if rows.len() != want {
            return Err(MerkleError::RowCount {
                expected: want,
                got: rows.len(),
            });
        }
        if let Some(r) = rows.iter().find(|r| r.len() != d.width) {
            return Err(MerkleError::RowWidth {
                matrix: m,
                expected: d.width,
                got: r.len(),
            });
        }
    }
    let expected_salts = if salt_width == 0 { 0 } else { levels.len() };
    let salt_ok = o.salts.len() == expected_salts
        && o.salts.iter().zip(&levels).all(|(s, &lh)| {
            s.len() == distinct_rows(indices, log_max - lh).len()
                && s.iter().all(|r| r.len() == salt_width)
        });
    if !salt_ok {
        return Err(MerkleError::SaltShape {
            expected: expected_salts,
            width: salt_width,
            got: o.salts.len(),
        });
    }
    let lanes = keccak::lanes();
    // Row hashes of the level of height `lh` at its distinct rows (`known`, ascending): the rows of its
    // matrices (commit order), then its salt row, as `hash_rows` does.
    let level_hashes = |lh: usize, known: &[usize]| -> Option<Vec<Digest>> {
        let mut cols: Vec<(Vec<F>, usize)> = dims
            .iter()
            .zip(&o.rows)
            .filter(|(d, _)| d.log_height == lh)
            .map(|(d, rows)| (rows.concat(), d.width))
            .collect();
        if cols.is_empty() {
            return None;
        }
        if salt_width > 0 {
            let k = levels.iter().position(|&l| l == lh)?;
            cols.push((o.salts[k].concat(), salt_width));
        }
        let mats: Vec<(&[F], usize)> = cols.iter().map(|(v, w)| (&v[..], *w)).collect();
        let words: usize = mats.iter().map(|m| m.1).sum();
        let per_leaf = (words / keccak::RATE_WORDS + 1) as u64;
        let leaves = known.len() as u64;
        if hash == MerkleHash::Keccak256 {
            crate::opcount::bump(crate::opcount::Op::KeccakF, per_leaf * leaves);
        }
        crate::opcount::bump(crate::opcount::Op::MerkleLeaves, leaves);
        crate::opcount::bump(
            crate::opcount::Op::LeafAbsorbsRate4,
            words.div_ceil(4) as u64 * leaves,
        );
        crate::opcount::bump(
            crate::opcount::Op::LeafAbsorbsRate8,
            words.div_ceil(8) as u64 * leaves,
        );
        let mut h = vec![[0u8; 32]; known.len()];
        hash.leaves(lanes, &mats, 0, &mut h);
        Some(h)
    };
    let mut known = distinct_rows(indices, 0);
    if known.is_empty() {
        return if o.siblings.is_empty() {
            Ok(())
        } else {
            Err(MerkleError::ProofLength {
                expected: 0,
                got: o.siblings.len(),
            })
        };
    }
    let mut cur = level_hashes(log_max, &known).unwrap_or_else(|| vec![[0u8; 32]; known.len()]);
    let mut next_sib = 0usize;
    for k in 0..log_max {
        // Pairs (left, right) of the parents, in ascending parent order.
        let mut pairs: Vec<(Digest, Digest)> = Vec::with_capacity(known.len());
        let mut parents = Vec::with_capacity(known.len());
        let mut t = 0;
        while t < known.len() {
            let node = known[t];
            if node & 1 == 0 && known.get(t + 1) == Some(&(node | 1)) {
                pairs.push((cur[t], cur[t + 1]));
                t += 2;
            } else {
                let Some(sib) = o.siblings.get(next_sib) else {
                    return Err(MerkleError::ProofLength {
                        expected: next_sib + 1,
                        got: o.siblings.len(),
                    });
                };
                next_sib += 1;
                pairs.push(if node & 1 == 0 {
                    (cur[t], *sib)
                } else {
                    (*sib, cur[t])
                });
                t += 1;
            }
            parents.push(node >> 1);
        }
        let mut out = vec![[0u8; 32]; pairs.len()];
        if hash == MerkleHash::Keccak256 {
            crate::opcount::bump(crate::opcount::Op::KeccakF, pairs.len() as u64);
        }
        crate::opcount::bump(crate::opcount::Op::MerkleNodes, pairs.len() as u64);
        hash.pairs(lanes, |j| (&pairs[j].0, &pairs[j].1), &mut out);
        if let Some(rh) = level_hashes(log_max - k - 1, &parents) {
            if hash == MerkleHash::Keccak256 {
                crate::opcount::bump(crate::opcount::Op::KeccakF, rh.len() as u64);
            }
            crate::opcount::bump(crate::opcount::Op::MerkleNodes, rh.len() as u64);
            let left = out.clone();
            hash.pairs(lanes, |j| (&left[j], &rh[j]), &mut out);
        }
        cur = out;
        known = parents;
    }
    if next_sib != o.siblings.len() {
        return Err(MerkleError::ProofLength {
            expected: next_sib,
            got: o.siblings.len(),
        });
    }
    if cur.len() == 1 && &cur[0] == root {
        Ok(())
    } else {
        Err(MerkleError::RootMismatch)
    }
}
