//! DEEP + FRI operations on the device (`OpeningOps`; the protocol is `zkrv_stark::pcs::open`), over the
//! resident LDEs, Merkle levels and salts of the committed rounds: no LDE is copied to the host. Kernels:
//! `kernels/open.cu`, launchers [`crate::open`]. Mirrors `zkrv_stark::backend` (`backend/open.rs`).
//!
//! | operation | on the device | host <-> device (stage "open") |
//! |---|---|---|
//! | `evaluate` | barycentric weights per (height, point), fixed-order two-pass reduction per matrix | `Σ w·|points|` `Ext3` down (one download); a point in `g·H_n` reads that row |
//! | `deep_codeword` | one pass over the LDE rows of the height, one launch per 8 distinct points | term/point descriptors up |
//! | `commit_fri_layer` | the codeword buffer is the `2^(s-a) x 3·2^a` layer matrix of arity `2^a` (shared, no copy), tree + zk salts on the device | root down |
//! | `fold_fri_layer` | one kernel, one output row per thread (its `2^a` inputs in registers, one power for `1/x`) | - |
//! | `final_codeword` | - | `2^Lf x 3` words down |
//! | `open_rows`, `open_fri_layer` | one gather launch per round: rows, salt rows, siblings of every query | segment list + indices up, the openings down (once) |
//!
//! `DeepInconsistent`: the CPU backend detects opened values that are not the evaluations of the committed
//! columns (a nonzero remainder of its synthetic division). The direct formula over the LDE rows has no
//! cheap equivalent, so this backend does not check it; the CPU backend (the oracle) keeps the check and the
//! parity tests (`tests/open_parity.rs`, `tests/proof_parity.rs`) compare both backends' outputs.
//! `PointInDomain` is checked on the host as the CPU does (`(z/g)^(2^lh) = 1`).

use std::collections::BTreeMap;
use std::sync::Arc;

use zkrv_stark::backend::{BackendError, DeepTerm, OpeningOps};
use zkrv_stark::field::{Ext3, Field, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{Digest, MerkleHash, MerkleProof, MerkleTree};
use zkrv_stark::pcs::{BatchOpening, FriLayerOpening, OpenedValues};
use zkrv_stark::poly::coset_shift;
use zkrv_stark::transcript::GrindInput;
use zkrv_stark::zk::{ZkRng, SALT_WIDTH};

use super::{dev_err, CudaBackend, CudaCommitted};
use crate::commit::{LdeKind, STAGE_HOST_COPY, STAGE_OPEN, TREE_CAP_LEVELS};
use crate::device::DeviceBuffer;
use crate::merkle::{build_tree, DeviceMerkleTree, MatrixRef};
use crate::open::{self as kernels, DeepInput, GatherSegment, SegmentSource};

/// One `Ext3` codeword of `2^log_size` values on the device (a DEEP reduced codeword or a FRI layer's
/// values): `2^log_size x 3` row-major u64, element `i` = words `[3i, 3i + 3)`, bit-reversed order,
/// canonical. Shared (`Arc`) with the FRI layer committed from it, so the fold that consumes the codeword
/// does not copy it: `24 · 2^log_size` bytes of VRAM.
pub struct DeviceCodeword {
    pub data: Arc<DeviceBuffer<u64>>,
    pub log_size: usize,
}

/// One committed FRI layer of arity `2^log_arity` on the device: its values (the codeword it was committed
/// from, read as the `2^log_rows x 3·2^log_arity` layer matrix, row `j = cw[j·2^a .. (j+1)·2^a]`), in zk mode
/// its `2^log_rows x SALT_WIDTH` salt matrix, and its Merkle tree (`32 · (2^(log_rows+1) - 1)` bytes of
/// levels; in recompute mode capped, [`TREE_CAP_LEVELS`] levels fewer).
pub struct DeviceFriLayer {
    pub values: Arc<DeviceBuffer<u64>>,
    pub log_rows: usize,
    pub log_arity: usize,
    pub salt: Option<DeviceBuffer<u64>>,
    pub tree: DeviceMerkleTree,
}

/// Whether `z` is a point of the LDE domain `g·H_{2^lh}`: `(z/g)^(2^lh) = 1` (as the CPU backend).
fn xs_contain(lh: usize, z: Ext3) -> bool {
    let mut t = z * coset_shift().inverse();
    for _ in 0..lh {
        t = t.square();
    }
    t == Ext3::ONE
}

fn ext_row(words: &[u64]) -> Vec<Ext3> {
    words.chunks_exact(3).map(kernels::ext_from_words).collect()
}

/// One opened leaf: the rows of the tree's matrices (tree order) and the siblings, leaf level first.
type OpenedLeaf = (Vec<Vec<F>>, Vec<Digest>);

impl CudaBackend {
    /// Uploads a host codeword (`Ext3` values, bit-reversed order; the length a power of two), e.g. for
    /// tests and tools (stage "host-copy"); never part of proving.
    pub fn upload_codeword(&self, values: &[Ext3]) -> Result<DeviceCodeword, BackendError> {
        if !values.len().is_power_of_two() {
            return Err(BackendError::Shape(format!(
                "codeword of {} values",
                values.len()
            )));
        }
        let words: Vec<u64> = values.iter().flat_map(|e| kernels::ext_words(*e)).collect();
        let data = self.dev.upload(&words).map_err(dev_err)?;
        self.record(|s| s.add_h2d(STAGE_HOST_COPY, "codeword", (words.len() * 8) as u64));
        Ok(DeviceCodeword {
            data: Arc::new(data),
            log_size: values.len().trailing_zeros() as usize,
        })
    }

    /// Downloads a device codeword (stage "host-copy"); for tests and tools.
    pub fn download_codeword(&self, cw: &DeviceCodeword) -> Result<Vec<Ext3>, BackendError> {
        let v = self.dev.download(&cw.data).map_err(dev_err)?;
        self.record(|s| s.add_d2h(STAGE_HOST_COPY, "codeword", (v.len() * 8) as u64));
        Ok(ext_row(&v))
    }

    /// One gather + one download of the given segments at `indices` (see [`kernels::gather_openings`]).
    fn gather(
        &self,
        what: &str,
        segs: &[GatherSegment<'_>],
        indices: &[usize],
    ) -> Result<(Vec<u64>, usize), BackendError> {
        let g = kernels::gather_openings(&self.dev, segs, indices).map_err(dev_err)?;
        self.record(|s| {
            s.add_h2d(STAGE_OPEN, what, g.uploaded);
            s.add_d2h(STAGE_OPEN, what, g.downloaded);
        });
        Ok((g.words, g.stride))
    }

    /// Opens `tree` at `indices` ([`kernels::opening_plan`]): per query the rows of `mats` (the tree's
    /// matrices in tree order, `(buffer, width, log_height)`: LDEs, then salts) and the siblings, leaf level
    /// first; one gather launch and one download.
    fn open_tree(
        &self,
        what: &str,
        tree: &DeviceMerkleTree,
        mats: &[(&DeviceBuffer<u64>, usize, u32)],
        indices: &[usize],
    ) -> Result<Vec<OpenedLeaf>, BackendError> {
        let dims: Vec<(usize, u32)> = mats.iter().map(|m| (m.1, m.2)).collect();
        let plan = kernels::opening_plan(tree.log_height, &dims);
        let mut segs = Vec::with_capacity(plan.len());
        for p in &plan {
            let src = match p.source {
                SegmentSource::Matrix(i) => mats[i].0,
                SegmentSource::Level(l) => tree
                    .levels
                    .get(l)
                    .ok_or_else(|| BackendError::Device(format!("Merkle tree has no level {l}")))?,
            };
            segs.push(GatherSegment {
                src,
                width: p.width,
                shift: p.shift,
                flip: p.flip,
            });
        }
        let (v, stride) = self.gather(what, &segs, indices)?;
        Ok(v.chunks_exact(stride.max(1))
            .take(indices.len())
            .map(|chunk| kernels::split_opening(&plan, mats.len(), chunk))
            .collect())
    }
}

impl OpeningOps for CudaBackend {
    /// Per height, the barycentric weights of each distinct point are computed once on the device and shared
    /// by every matrix of that height (dropped before the next height); each matrix's values at a point are
    /// reduced on the device into one output buffer, downloaded once at the end.
    fn evaluate(
        &self,
        rounds: &[(&CudaCommitted, &[Vec<Ext3>])],
        lb: usize,
    ) -> Result<OpenedValues, BackendError> {
        let mut values: OpenedValues = rounds
            .iter()
            .map(|(_, points)| points.iter().map(|p| vec![Vec::new(); p.len()]).collect())
            .collect();
        let mut mats_by_height: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        let mut total = 0usize;
        for (r, (c, points)) in rounds.iter().enumerate() {
            let ldes = &c.gpu.ldes;
            if ldes.len() != points.len() {
                return Err(BackendError::Shape(format!(
                    "round {r}: {} point lists for {} matrices",
                    points.len(),
                    ldes.len()
                )));
            }
            for (m, l) in ldes.iter().enumerate() {
                let lh = l.log_height as usize;
                if lh < lb {
                    return Err(BackendError::Shape("LDE shorter than the blowup".into()));
                }
                mats_by_height.entry(lh).or_default().push((r, m));
                total += 3 * l.width * points[m].len();
            }
        }
        let out = self.dev.alloc::<u64>(total.max(1)).map_err(dev_err)?;
        // (round, matrix, point, offset in `out`) of every value reduced on the device.
        let mut slots: Vec<(usize, usize, usize, usize)> = Vec::new();
        let mut off = 0usize;
        let mut row_bytes = 0u64;
        for (&lh, list) in &mats_by_height {
            let log_n = (lh - lb) as u32;
            enum Bary {
                Weights(DeviceBuffer<u64>),
                InDomain(usize),
            }
            let mut cache: Vec<(Ext3, Bary)> = Vec::new();
            for &(r, m) in list {
                let (c, points) = rounds[r];
                let lde = &c.gpu.ldes[m];
                // The first `n` storage rows (g·H_n): the stored LDE, or block 0 recomputed.
                let block;
                let rows: &DeviceBuffer<u64> = match lde.kind {
                    LdeKind::Stored => &lde.data,
                    LdeKind::Coeffs { .. } => {
                        block = lde.rows(&self.dev, log_n, &[0]).map_err(dev_err)?;
                        &block
                    }
                };
                for (p, &z) in points[m].iter().enumerate() {
                    let pos = match cache.iter().position(|(q, _)| *q == z) {
                        Some(pos) => pos,
                        None => {
                            let b = match kernels::bary_in_domain(log_n, z) {
                                Some(k) => Bary::InDomain(k),
                                None => Bary::Weights(
                                    kernels::bary_weights(&self.dev, log_n, z).map_err(dev_err)?,
                                ),
                            };
                            cache.push((z, b));
                            cache.len() - 1
                        }
                    };
                    match &cache[pos].1 {
                        Bary::Weights(w) => {
                            kernels::bary_eval(&self.dev, w, rows, lde.width, &out, off)
                                .map_err(dev_err)?;
                            slots.push((r, m, p, off));
                        }
                        Bary::InDomain(k) => {
                            let mut row = vec![0u64; lde.width];
                            self.dev
                                .copy_dtoh(rows, k * lde.width, &mut row)
                                .map_err(dev_err)?;
                            row_bytes += (row.len() * 8) as u64;
                            values[r][m][p] =
                                row.into_iter().map(|v| Ext3::from(F::new(v))).collect();
                        }
                    }
                    off += 3 * lde.width;
                }
            }
        }
        let v = self.dev.download(&out).map_err(dev_err)?;
        self.record(|s| {
            s.add_d2h(
                STAGE_OPEN,
                "opened-values",
                (v.len() * 8) as u64 + row_bytes,
            )
        });
        for (r, m, p, off) in slots {
            let w = rounds[r].0.gpu.ldes[m].width;
            values[r][m][p] = ext_row(&v[off..off + 3 * w]);
        }
        Ok(values)
    }

    /// Stored LDEs: one pass over the rows of the height. Recomputed LDEs: one coset block of `n` rows at
    /// a time and one term at a time (the codeword is linear in its terms), each term's block recomputed
    /// and dropped after its launch.
    fn deep_codeword(
        &self,
        log_height: usize,
        log_blowup: usize,
        terms: &[DeepTerm<'_, CudaCommitted>],
        alpha: Ext3,
    ) -> Result<DeviceCodeword, BackendError> {
        let recomputed = terms.iter().any(|t| {
            t.matrix
                .round
                .gpu
                .ldes
                .get(t.matrix.index)
                .is_some_and(|l| l.kind != LdeKind::Stored)
        });
        if recomputed {
            return self.deep_codeword_blocks(log_height, log_blowup, terms, alpha);
        }
        let mut inputs = Vec::with_capacity(terms.len());
        for t in terms {
            let lde = t
                .matrix
                .round
                .gpu
                .ldes
                .get(t.matrix.index)
                .ok_or_else(|| BackendError::Shape("DEEP term of a missing matrix".into()))?;
            if lde.log_height as usize != log_height {
                return Err(BackendError::Shape(format!(
                    "DEEP term of height 2^{} in the codeword of height 2^{log_height}",
                    lde.log_height
                )));
            }
            inputs.push(DeepInput {
                addr: lde.data.ptr(),
                width: lde.width,
                points: t.points,
                values: t.values,
                k0: t.k0,
            });
        }
        if kernels::deep_points(&inputs)
            .into_iter()
            .any(|z| xs_contain(log_height, z))
        {
            return Err(BackendError::PointInDomain { log_height });
        }
        let groups = kernels::deep_plan(&inputs, alpha);
        let (data, up) =
            kernels::deep_codeword(&self.dev, log_height as u32, &groups).map_err(dev_err)?;
        self.record(|s| s.add_h2d(STAGE_OPEN, "deep-descriptors", up));
        Ok(DeviceCodeword {
            data: Arc::new(data),
            log_size: log_height,
        })
    }

    fn commit_fri_layer(
        &self,
        codeword: &DeviceCodeword,
        log_arity: usize,
        salt: Option<(&ZkRng, u32)>,
        hash: MerkleHash,
    ) -> Result<(Digest, DeviceFriLayer), BackendError> {
        if log_arity == 0
            || log_arity > kernels::FRI_MAX_LOG_ARITY as usize
            || codeword.log_size < log_arity
            || codeword.data.len() != 3 << codeword.log_size
        {
            return Err(BackendError::Shape(format!(
                "FRI layer of {} values, arity 2^{log_arity}",
                codeword.data.len() / 3
            )));
        }
        let log_rows = codeword.log_size - log_arity;
        let salt = salt
            .map(|(rng, round)| crate::zk::salt_matrix(&self.dev, rng, round, log_rows as u32))
            .transpose()
            .map_err(dev_err)?;
        let mut refs = vec![MatrixRef {
            data: &codeword.data,
            width: 3 << log_arity,
            log_height: log_rows as u32,
        }];
        // The salt is hashed after the layer's row, as `MerkleTree::new_salted` does.
        refs.extend(salt.as_ref().map(|s| MatrixRef {
            data: s,
            width: SALT_WIDTH,
            log_height: log_rows as u32,
        }));
        let mut tree = build_tree(&self.dev, hash, &refs).map_err(dev_err)?;
        let root = tree.root(&self.dev).map_err(dev_err)?;
        if self.recomputes() {
            // Capped as the trace rounds' trees: the opening rehashes the leaves under the kept level.
            let cap = (log_rows as u32).saturating_sub(TREE_CAP_LEVELS);
            tree.levels.truncate(cap as usize + 1);
        }
        self.record(|s| s.add_d2h(STAGE_OPEN, "fri-roots", 32));
        Ok((
            root,
            DeviceFriLayer {
                values: Arc::clone(&codeword.data),
                log_rows,
                log_arity,
                salt,
                tree,
            },
        ))
    }

    fn fold_fri_layer(
        &self,
        codeword: DeviceCodeword,
        log_size: usize,
        log_arity: usize,
        beta: Ext3,
        roll_in: Option<DeviceCodeword>,
    ) -> Result<DeviceCodeword, BackendError> {
        if log_arity == 0
            || log_arity > kernels::FRI_MAX_LOG_ARITY as usize
            || log_size < log_arity
            || codeword.log_size != log_size
            || codeword.data.len() != 3 << log_size
        {
            return Err(BackendError::Shape(format!(
                "FRI fold of {} values as 2^{log_size}, arity 2^{log_arity}",
                codeword.data.len() / 3
            )));
        }
        if let Some(r) = &roll_in {
            if r.log_size != log_size - log_arity {
                return Err(BackendError::Shape("FRI roll-in of another height".into()));
            }
        }
        let next = kernels::fri_fold(
            &self.dev,
            &codeword.data,
            log_size as u32,
            log_arity as u32,
            beta,
            roll_in.as_ref().map(|r| &*r.data),
        )
        .map_err(dev_err)?;
        Ok(DeviceCodeword {
            data: Arc::new(next),
            log_size: log_size - log_arity,
        })
    }

    fn final_codeword(&self, codeword: DeviceCodeword) -> Result<Vec<Ext3>, BackendError> {
        let v = self.dev.download(&codeword.data).map_err(dev_err)?;
        self.record(|s| s.add_d2h(STAGE_OPEN, "final-codeword", (v.len() * 8) as u64));
        Ok(ext_row(&v))
    }

    /// On the device ([`crate::merkle::grind`]): one launch of 2^22 nonces (nearly always enough at 20 bits)
    /// and an 8-byte download per batch.
    fn grind(&self, input: &GrindInput, bits: u32) -> Result<u64, BackendError> {
        let nonce = crate::merkle::grind(&self.dev, input, bits).map_err(dev_err)?;
        self.record(|s| s.add_d2h(STAGE_OPEN, "grinding", 8));
        Ok(nonce)
    }

    /// One gather launch and one download for the whole round: per query the row of every LDE (commit
    /// order), the salt row of every salted level (largest height first) and the siblings, leaf level first.
    fn open_rows(
        &self,
        c: &CudaCommitted,
        indices: &[usize],
    ) -> Result<Vec<BatchOpening>, BackendError> {
        let tree = &c.gpu.tree;
        let lt = tree.log_height;
        if let Some(&i) = indices.iter().find(|&&i| i >> lt != 0) {
            return Err(BackendError::Shape(format!(
                "query index {i} beyond 2^{lt} rows"
            )));
        }
        if tree.levels.len() != lt as usize + 1 {
            return self.open_rows_capped(c, indices);
        }
        let mats: Vec<(&DeviceBuffer<u64>, usize, u32)> = c
            .gpu
            .ldes
            .iter()
            .chain(&c.gpu.salts)
            .map(|l| (&l.data, l.width, l.log_height))
            .collect();
        let n_ldes = c.gpu.ldes.len();
        Ok(self
            .open_tree("rows", tree, &mats, indices)?
            .into_iter()
            .map(|(mut rows, siblings)| {
                let salts = rows.split_off(n_ldes);
                BatchOpening {
                    rows,
                    proof: MerkleProof { siblings, salts },
                }
            })
            .collect())
    }

    fn open_fri_layer(
        &self,
        layer: &DeviceFriLayer,
        indices: &[usize],
    ) -> Result<Vec<FriLayerOpening>, BackendError> {
        let lt = layer.log_rows;
        if let Some(&i) = indices.iter().find(|&&i| i >> lt != 0) {
            return Err(BackendError::Shape(format!(
                "FRI query row {i} beyond 2^{lt}"
            )));
        }
        let lr = layer.log_rows as u32;
        if layer.tree.levels.len() != lr as usize + 1 {
            return self.open_fri_layer_capped(layer, indices);
        }
        let width = 3 << layer.log_arity;
        let mut mats: Vec<(&DeviceBuffer<u64>, usize, u32)> = vec![(&layer.values, width, lr)];
        mats.extend(layer.salt.as_ref().map(|s| (s, SALT_WIDTH, lr)));
        Ok(self
            .open_tree("fri-layers", &layer.tree, &mats, indices)?
            .into_iter()
            .map(|(mut rows, siblings)| {
                let salts = rows.split_off(1);
                FriLayerOpening {
                    values: rows[0]
                        .chunks_exact(3)
                        .map(|c| Ext3([c[0], c[1], c[2]]))
                        .collect(),
                    proof: MerkleProof { siblings, salts },
                }
            })
            .collect())
    }
}

/// The rows of the `2^k` leaves under one kept node of a capped tree, per matrix of the tree (tree order:
/// matrices, then salts), and the stored part of the path.
struct CappedGroup {
    /// Per matrix: its rows under the node (`2^(k - d)` rows for a matrix `d` levels below the top, `d <=
    /// k`), or the single opened row (`d > k`).
    rows: Vec<Vec<Vec<F>>>,
    /// The stored node the rebuilt subtree must hash to.
    node: Digest,
    /// Siblings from the kept level up to level 1.
    upper: Vec<Digest>,
}

/// Opens query `q` of a capped tree of `2^big_l` leaves, kept to level `big_l - k`, over matrices of the
/// given log heights (tree order: matrices, then salts; `n_mats` of them matrices): the subtree of the
/// group's leaves rebuilt on the host ([`MerkleTree::with_salts`] over the group's rows), checked against
/// the stored node, then its `k` siblings and the stored ones. Returns the rows (matrices) and the proof.
fn finish_capped(
    hash: MerkleHash,
    big_l: u32,
    k: u32,
    heights: &[u32],
    n_mats: usize,
    q: usize,
    g: CappedGroup,
) -> Result<BatchOpening, BackendError> {
    let local = q & ((1usize << k) - 1);
    let mut in_tree: Vec<RowMajorMatrix> = Vec::new();
    let mut in_salts: Vec<RowMajorMatrix> = Vec::new();
    for (i, (rows, &lh)) in g.rows.iter().zip(heights).enumerate() {
        if big_l - lh <= k {
            let w = rows.first().map_or(0, Vec::len);
            let m = RowMajorMatrix::new(rows.concat(), w);
            if i < n_mats {
                in_tree.push(m);
            } else {
                in_salts.push(m);
            }
        }
    }
    let (sub_rows, sub_proof) = if k == 0 {
        (
            Vec::new(),
            MerkleProof {
                siblings: Vec::new(),
                salts: Vec::new(),
            },
        )
    } else {
        let sub = MerkleTree::with_salts(hash, in_tree, in_salts);
        if sub.root() != g.node {
            return Err(BackendError::Device(format!(
                "the leaves recomputed under query {q} do not hash to the committed tree's node"
            )));
        }
        sub.open(local)
    };
    let mut sub_rows = sub_rows.into_iter();
    let mut sub_salts = sub_proof.salts.into_iter();
    let mut rows = Vec::with_capacity(n_mats);
    let mut salts = Vec::new();
    for (i, (r, &lh)) in g.rows.into_iter().zip(heights).enumerate() {
        let row = if big_l - lh <= k {
            if i < n_mats {
                sub_rows.next()
            } else {
                sub_salts.next()
            }
            .ok_or_else(|| BackendError::Device("capped opening: missing row".into()))?
        } else {
            r.into_iter()
                .next()
                .ok_or_else(|| BackendError::Device("capped opening: missing row".into()))?
        };
        if i < n_mats {
            rows.push(row);
        } else {
            salts.push(row);
        }
    }
    let mut siblings = sub_proof.siblings;
    siblings.extend(g.upper);
    Ok(BatchOpening {
        rows,
        proof: MerkleProof { siblings, salts },
    })
}

impl CudaBackend {
    /// The stored node at the kept level `cap` above each query and the stored siblings (levels `cap` to
    /// 1), one gather.
    fn capped_path(
        &self,
        what: &str,
        tree: &DeviceMerkleTree,
        indices: &[usize],
    ) -> Result<Vec<(Digest, Vec<Digest>)>, BackendError> {
        let big_l = tree.log_height;
        let cap = tree.levels.len() as u32 - 1;
        let mut segs = vec![GatherSegment {
            src: &tree.levels[cap as usize],
            width: 4,
            shift: big_l - cap,
            flip: false,
        }];
        for l in (1..=cap).rev() {
            segs.push(GatherSegment {
                src: &tree.levels[l as usize],
                width: 4,
                shift: big_l - l,
                flip: true,
            });
        }
        let (v, stride) = self.gather(what, &segs, indices)?;
        Ok(v.chunks_exact(stride.max(1))
            .take(indices.len())
            .map(|c| {
                let mut d = c.chunks_exact(4).map(kernels::digest_from_lanes);
                let node = d.next().unwrap_or([0; 32]);
                (node, d.collect())
            })
            .collect())
    }

    /// `open_rows` of a recomputed round: per matrix the rows under each query's kept node recomputed
    /// from the coefficients on the device (one launch per matrix for all queries) and downloaded, salt rows
    /// regenerated on the host, the subtree rebuilt and checked on the host ([`finish_capped`]).
    fn open_rows_capped(
        &self,
        c: &CudaCommitted,
        indices: &[usize],
    ) -> Result<Vec<BatchOpening>, BackendError> {
        let tree = &c.gpu.tree;
        let big_l = tree.log_height;
        let k = big_l - (tree.levels.len() as u32 - 1);
        // A matrix `d <= k` levels below the top is hashed under the kept node (at `d = k`, injected into
        // the node itself); one further down is injected into a kept level and opens one row.
        let group_of = |d: u32| -> (u32, Vec<usize>) {
            if d <= k {
                (k - d, indices.iter().map(|&q| q >> k).collect())
            } else {
                (0, indices.iter().map(|&q| q >> d).collect())
            }
        };
        let mut per_mat: Vec<Vec<Vec<Vec<F>>>> = Vec::new();
        let mut heights: Vec<u32> = Vec::new();
        let mut down = 0u64;
        for l in &c.gpu.ldes {
            let d = big_l - l.log_height;
            let (log_k, groups) = group_of(d);
            let buf = l.rows(&self.dev, log_k, &groups).map_err(dev_err)?;
            let v = self.dev.download(&buf).map_err(dev_err)?;
            down += (v.len() * 8) as u64;
            let kr = 1usize << log_k;
            per_mat.push(
                v.chunks_exact(kr * l.width)
                    .map(|g| {
                        g.chunks_exact(l.width)
                            .map(|r| r.iter().map(|&x| F::new(x)).collect())
                            .collect()
                    })
                    .collect(),
            );
            heights.push(l.log_height);
        }
        self.record(|s| s.add_d2h(STAGE_OPEN, "rows", down));
        let n_mats = per_mat.len();
        if let Some((rng, round)) = c.gpu.salt_seed {
            let mut levels: Vec<u32> = c.gpu.ldes.iter().map(|l| l.log_height).collect();
            levels.sort_unstable_by(|a, b| b.cmp(a));
            levels.dedup();
            for lh in levels {
                let (log_k, groups) = group_of(big_l - lh);
                let kr = 1usize << log_k;
                per_mat.push(
                    groups
                        .iter()
                        .map(|&a| {
                            (0..kr)
                                .map(|j| {
                                    let mut row = vec![F::ZERO; SALT_WIDTH];
                                    rng.fill(
                                        zkrv_stark::zk::DOMAIN_SALT,
                                        round,
                                        lh as u64,
                                        (a * kr + j) as u64,
                                        &mut row,
                                    );
                                    row
                                })
                                .collect()
                        })
                        .collect(),
                );
                heights.push(lh);
            }
        }
        let paths = self.capped_path("rows", tree, indices)?;
        let mut per_query: Vec<Vec<Vec<Vec<F>>>> = vec![Vec::new(); indices.len()];
        for m in per_mat {
            for (j, g) in m.into_iter().enumerate() {
                per_query[j].push(g);
            }
        }
        per_query
            .into_iter()
            .zip(paths)
            .zip(indices)
            .map(|((rows, (node, upper)), &q)| {
                finish_capped(
                    tree.hash,
                    big_l,
                    k,
                    &heights,
                    n_mats,
                    q,
                    CappedGroup { rows, node, upper },
                )
            })
            .collect()
    }

    /// `open_fri_layer` of a capped layer tree: the values (`2^k` rows of `3·2^a` words) and salts of the
    /// rows under each query's kept node gathered from the device, the subtree rebuilt and checked on the
    /// host.
    fn open_fri_layer_capped(
        &self,
        layer: &DeviceFriLayer,
        indices: &[usize],
    ) -> Result<Vec<FriLayerOpening>, BackendError> {
        let tree = &layer.tree;
        let big_l = tree.log_height;
        let k = big_l - (tree.levels.len() as u32 - 1);
        let kr = 1usize << k;
        let width = 3 << layer.log_arity;
        let mut segs = vec![GatherSegment {
            src: &layer.values,
            width: width * kr,
            shift: k,
            flip: false,
        }];
        if let Some(s) = &layer.salt {
            segs.push(GatherSegment {
                src: s,
                width: SALT_WIDTH * kr,
                shift: k,
                flip: false,
            });
        }
        let (v, stride) = self.gather("fri-layers", &segs, indices)?;
        let paths = self.capped_path("fri-layers", tree, indices)?;
        let mut heights = vec![big_l];
        if layer.salt.is_some() {
            heights.push(big_l);
        }
        v.chunks_exact(stride.max(1))
            .take(indices.len())
            .zip(paths)
            .zip(indices)
            .map(|((chunk, (node, upper)), &q)| {
                let to_rows = |words: &[u64], w: usize| -> Vec<Vec<F>> {
                    words
                        .chunks_exact(w)
                        .map(|r| r.iter().map(|&x| F::new(x)).collect())
                        .collect()
                };
                let mut rows = vec![to_rows(&chunk[..width * kr], width)];
                if layer.salt.is_some() {
                    rows.push(to_rows(&chunk[width * kr..], SALT_WIDTH));
                }
                let o = finish_capped(
                    tree.hash,
                    big_l,
                    k,
                    &heights,
                    1,
                    q,
                    CappedGroup { rows, node, upper },
                )?;
                let values = o.rows[0]
                    .chunks_exact(3)
                    .map(|c| Ext3([c[0], c[1], c[2]]))
                    .collect();
                Ok(FriLayerOpening {
                    values,
                    proof: o.proof,
                })
            })
            .collect()
    }

    /// [`OpeningOps::deep_codeword`] over recomputed LDEs (see there).
    fn deep_codeword_blocks(
        &self,
        log_height: usize,
        log_blowup: usize,
        terms: &[DeepTerm<'_, CudaCommitted>],
        alpha: Ext3,
    ) -> Result<DeviceCodeword, BackendError> {
        let mut lde_of = Vec::with_capacity(terms.len());
        for t in terms {
            let l = t
                .matrix
                .round
                .gpu
                .ldes
                .get(t.matrix.index)
                .ok_or_else(|| BackendError::Shape("DEEP term of a missing matrix".into()))?;
            if l.log_height as usize != log_height || log_height < log_blowup {
                return Err(BackendError::Shape(format!(
                    "DEEP term of height 2^{} in the codeword of height 2^{log_height}",
                    l.log_height
                )));
            }
            lde_of.push(l);
        }
        let all: Vec<DeepInput<'_>> = terms
            .iter()
            .zip(&lde_of)
            .map(|(t, l)| DeepInput {
                addr: 0,
                width: l.width,
                points: t.points,
                values: t.values,
                k0: t.k0,
            })
            .collect();
        if kernels::deep_points(&all)
            .into_iter()
            .any(|z| xs_contain(log_height, z))
        {
            return Err(BackendError::PointInDomain { log_height });
        }
        let out = self
            .dev
            .alloc_zeros::<u64>(3usize << log_height)
            .map_err(dev_err)?;
        let log_n = (log_height - log_blowup) as u32;
        let n = 1u64 << log_n;
        let mut up = 0u64;
        for b in 0..1usize << log_blowup {
            let row0 = b as u64 * n;
            for (t, l) in terms.iter().zip(&lde_of) {
                let block;
                let addr = match l.kind {
                    LdeKind::Stored => l.data.ptr(),
                    LdeKind::Coeffs { .. } => {
                        block = l.rows(&self.dev, log_n, &[b]).map_err(dev_err)?;
                        block.ptr().wrapping_sub(8 * row0 * l.width as u64)
                    }
                };
                let input = DeepInput {
                    addr,
                    width: l.width,
                    points: t.points,
                    values: t.values,
                    k0: t.k0,
                };
                let groups = kernels::deep_plan(&[input], alpha);
                if groups.is_empty() {
                    continue;
                }
                // SAFETY: `addr` reads rows [row0, row0 + n) of the term's LDE (the stored LDE, or the
                // recomputed block less row0 rows, alive until the launch is queued); out is 2^lh x 3.
                up += unsafe {
                    kernels::deep_codeword_rows(
                        &self.dev,
                        log_height as u32,
                        &groups,
                        &out,
                        row0,
                        row0 + n,
                        true,
                    )
                }
                .map_err(dev_err)?;
            }
        }
        self.record(|s| s.add_h2d(STAGE_OPEN, "deep-descriptors", up));
        Ok(DeviceCodeword {
            data: Arc::new(out),
            log_size: log_height,
        })
    }
}
