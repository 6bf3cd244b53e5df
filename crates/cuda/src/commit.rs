//! The commit step on the GPU: traces -> coset LDEs (bit-reversed) -> one mixed-height Merkle tree.
//!
//! This is the CUDA side of the prover's "commit a set of traces and their LDEs into one Merkle tree" phase
//! (docs/gpu.md, "The seam"). A trace comes either from the host ([`TraceInput::Host`], uploaded once) or is
//! already resident on the device ([`TraceInput::Device`], e.g. built there from the execution record; no
//! upload). Each trace buffer is dropped as soon as its LDE exists (the LDE is its last consumer here). The LDEs
//! and every tree level stay on the device; phases not on the GPU yet read host copies explicitly through
//! [`DeviceCommitted::download_lde`] / [`DeviceCommitted::open`], and every such byte is counted in
//! [`DeviceCommitted::stats`].

use zkrv_stark::field::F;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{Digest, MatrixDims, MerkleHash, MerkleProof};
use zkrv_stark::zk::{ZkRng, SALT_WIDTH};

use crate::device::{Device, DeviceBuffer};
use crate::error::CudaError;
use crate::merkle::{build_tree, DeviceMerkleTree, MatrixRef};
use crate::poly::coset_lde_batch;
use crate::stats::{TraceOrigin, TransferStats};

/// Stage names used in [`TransferStats`].
pub const STAGE_COMMIT: &str = "commit";
/// Host copies made for phases that still run on the CPU.
pub const STAGE_HOST_COPY: &str = "host-copy";
/// Merkle openings (rows + paths) copied to the host.
pub const STAGE_OPEN: &str = "open";

/// One trace to commit: `2^log_height x width`, row-major, natural row order (row i at `w_n^i`).
pub enum TraceInput<'a> {
    /// A host matrix; uploaded once (counted as host->device bytes).
    Host {
        name: String,
        trace: &'a RowMajorMatrix,
    },
    /// A trace already on the device (`data.len() == width << log_height`); not copied.
    Device {
        name: String,
        data: DeviceBuffer<u64>,
        width: usize,
        log_height: u32,
    },
}

impl TraceInput<'_> {
    fn name(&self) -> &str {
        match self {
            TraceInput::Host { name, .. } | TraceInput::Device { name, .. } => name,
        }
    }
}

/// How a committed matrix is held on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LdeKind {
    /// `data` is the whole LDE.
    Stored,
    /// `data` is the raw coefficients of the trace ([`crate::poly::raw_coeffs`], `2^(log_height -
    /// log_blowup) x width`, `1 / blowup` of the LDE's bytes); LDE rows are recomputed where they are read
    /// ([`crate::poly::lde_rows_from_coeffs`]).
    Coeffs { log_blowup: u32 },
}

/// The LDE of one committed trace on the device, `2^log_height x width` row-major, bit-reversed rows (row i
/// at `g * w_N^{bitrev(i)}`, N = 2^log_height): stored whole, or as its coefficients ([`LdeKind`]).
pub struct DeviceLde {
    pub name: String,
    pub data: DeviceBuffer<u64>,
    pub width: usize,
    pub log_height: u32,
    pub kind: LdeKind,
}

impl DeviceLde {
    /// Storage rows `[a·2^log_k, (a+1)·2^log_k)` of this LDE for every `a` in `groups`
    /// (`(|groups|·2^log_k) x width`); for a stored LDE a device copy, else recomputed (`log_k` at most the
    /// trace's log height).
    pub fn rows(
        &self,
        dev: &Device,
        log_k: u32,
        groups: &[usize],
    ) -> Result<DeviceBuffer<u64>, CudaError> {
        match self.kind {
            LdeKind::Coeffs { log_blowup } => crate::poly::lde_rows_from_coeffs(
                dev,
                &self.data,
                self.log_height - log_blowup,
                self.width,
                log_blowup,
                log_k,
                groups,
            ),
            LdeKind::Stored => {
                let k = 1usize << log_k;
                let out = dev.alloc::<u64>(groups.len() * k * self.width)?;
                for (g, &a) in groups.iter().enumerate() {
                    dev.copy_dtod(
                        &self.data,
                        a * k * self.width,
                        &out,
                        g * k * self.width,
                        k * self.width,
                    )?;
                }
                Ok(out)
            }
        }
    }

    /// log2 of the trace height (the LDE's over its blowup), for a recomputed LDE; `None` when stored.
    pub fn coeffs_log_height(&self) -> Option<u32> {
        match self.kind {
            LdeKind::Coeffs { log_blowup } => Some(self.log_height - log_blowup),
            LdeKind::Stored => None,
        }
    }
}

/// Levels of a recomputed round's tree not kept on the device: the lowest `TREE_CAP_LEVELS` levels (the
/// leaves and the 3 above them, 15/16 of the tree's digests). An opening recomputes the `2^TREE_CAP_LEVELS`
/// leaves under the queried level-`L - TREE_CAP_LEVELS` node.
pub const TREE_CAP_LEVELS: u32 = 4;

/// Result of [`commit_lde`]: the root, the device LDEs (commit order) and the device Merkle tree.
pub struct DeviceCommitted {
    pub root: Digest,
    pub ldes: Vec<DeviceLde>,
    /// Salted trees (zk mode): one `2^lh x SALT_WIDTH` salt matrix per level `lh` that holds LDEs, largest
    /// first (`zkrv_stark::merkle::MerkleTree::with_salts`); empty otherwise.
    pub salts: Vec<DeviceLde>,
    pub tree: DeviceMerkleTree,
    /// Transfers made so far for this commitment (upload, root, host copies, openings).
    pub stats: TransferStats,
    /// The salt source (zk mode), to regenerate salt rows of a recomputed round (whose `salts` are empty).
    pub salt_seed: Option<(ZkRng, u32)>,
}

/// Views a host matrix of field elements as canonical-or-not u64 (the kernels reduce on load).
pub(crate) fn as_u64(values: &[F]) -> &[u64] {
    // SAFETY: Goldilocks is #[repr(transparent)] over u64.
    unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u64, values.len()) }
}

/// A trace input on the device: a host trace uploaded (counted in `stats`, origin `Uploaded`), a device
/// trace taken as it is (origin `Resident`). Returns `(name, buffer, width, log2 height)`.
fn device_input(
    dev: &Device,
    t: TraceInput<'_>,
    stats: &mut TransferStats,
) -> Result<(String, DeviceBuffer<u64>, usize, u32), CudaError> {
    let name = t.name().to_string();
    match t {
        TraceInput::Host { trace, .. } => {
            let log_n = trace.log_height().ok_or_else(|| {
                CudaError::InvalidArgument(format!(
                    "trace {name}: height {} not a power of two",
                    trace.height()
                ))
            })? as u32;
            let d = dev.upload(as_u64(&trace.values))?;
            stats.add_h2d(STAGE_COMMIT, &name, (trace.values.len() * 8) as u64);
            stats.set_origin(&name, TraceOrigin::Uploaded);
            Ok((name, d, trace.width, log_n))
        }
        TraceInput::Device {
            data,
            width,
            log_height,
            ..
        } => {
            stats.set_origin(&name, TraceOrigin::Resident);
            Ok((name, data, width, log_height))
        }
    }
}

/// Commits `traces` (commit order) with blowup `2^log_blowup`: LDE each on the device, then build the
/// mixed-height Merkle tree of the LDEs. Byte-identical to `MerkleTree::new(traces.map(|t| lde_batch(t,
/// log_blowup)))` on the CPU. Each trace buffer is dropped right after its LDE.
pub fn commit_lde(
    dev: &Device,
    traces: Vec<TraceInput<'_>>,
    log_blowup: u32,
) -> Result<DeviceCommitted, CudaError> {
    commit_lde_inner(dev, traces, log_blowup, false, None, MerkleHash::Keccak256).map(|(c, _)| c)
}

/// [`commit_lde`] with a salted tree when `salt = Some((rng, round))` (zk mode): salts generated on the device
/// ([`crate::zk::salt_matrix`]) and hashed as one more matrix after each level's LDEs, byte-identical to
/// `MerkleTree::new_salted(ldes, Some((rng, round)))` on the CPU.
pub fn commit_lde_salted(
    dev: &Device,
    traces: Vec<TraceInput<'_>>,
    log_blowup: u32,
    salt: Option<(&ZkRng, u32)>,
) -> Result<DeviceCommitted, CudaError> {
    commit_lde_inner(dev, traces, log_blowup, false, salt, MerkleHash::Keccak256).map(|(c, _)| c)
}

/// As [`commit_lde`], but also returns the natural-order trace buffers (`2^log_height x width` each, commit
/// order; host traces as uploaded) for later device readers such as the LogUp aux build. Keeping them costs
/// `8 n w` bytes of VRAM per trace (`1 / blowup` of its LDE) until the caller drops them.
pub fn commit_lde_keep(
    dev: &Device,
    traces: Vec<TraceInput<'_>>,
    log_blowup: u32,
) -> Result<(DeviceCommitted, Vec<DeviceBuffer<u64>>), CudaError> {
    commit_lde_keep_salted(dev, traces, log_blowup, None, MerkleHash::Keccak256)
}

/// [`commit_lde_keep`] with an optional salted tree (see [`commit_lde_salted`]), hashed with `hash`.
pub fn commit_lde_keep_salted(
    dev: &Device,
    traces: Vec<TraceInput<'_>>,
    log_blowup: u32,
    salt: Option<(&ZkRng, u32)>,
    hash: MerkleHash,
) -> Result<(DeviceCommitted, Vec<DeviceBuffer<u64>>), CudaError> {
    let (c, kept) = commit_lde_inner(dev, traces, log_blowup, true, salt, hash)?;
    Ok((c, kept.into_iter().flatten().collect()))
}

/// A natural-order trace buffer kept past its LDE.
type KeptTrace = DeviceBuffer<u64>;

fn commit_lde_inner(
    dev: &Device,
    traces: Vec<TraceInput<'_>>,
    log_blowup: u32,
    keep: bool,
    salt: Option<(&ZkRng, u32)>,
    hash: MerkleHash,
) -> Result<(DeviceCommitted, Vec<Option<KeptTrace>>), CudaError> {
    if traces.is_empty() {
        return Err(CudaError::InvalidArgument("commit of no traces".into()));
    }
    let mut stats = TransferStats::default();
    let mut ldes = Vec::with_capacity(traces.len());
    let mut kept = Vec::with_capacity(traces.len());
    for t in traces {
        let (name, d_trace, width, log_n) = device_input(dev, t, &mut stats)?;
        let lde = coset_lde_batch(dev, &d_trace, log_n, width, log_blowup)?;
        if keep {
            kept.push(Some(d_trace));
        } else {
            drop(d_trace); // last consumer of the trace on the device
            kept.push(None);
        }
        ldes.push(DeviceLde {
            name,
            data: lde,
            width,
            log_height: log_n + log_blowup,
            kind: LdeKind::Stored,
        });
    }
    let mut salts = Vec::new();
    if let Some((rng, round)) = salt {
        let mut levels: Vec<u32> = ldes.iter().map(|l| l.log_height).collect();
        levels.sort_unstable_by(|a, b| b.cmp(a));
        levels.dedup();
        for lh in levels {
            salts.push(DeviceLde {
                name: format!("salt{round}.{lh}"),
                data: crate::zk::salt_matrix(dev, rng, round, lh)?,
                width: SALT_WIDTH,
                log_height: lh,
                kind: LdeKind::Stored,
            });
        }
    }
    // Salts last: within a level, `build_tree` hashes the matrices in list order (LDEs, then the salt).
    let refs: Vec<MatrixRef<'_>> = ldes
        .iter()
        .chain(&salts)
        .map(|l| MatrixRef {
            data: &l.data,
            width: l.width,
            log_height: l.log_height,
        })
        .collect();
    let tree = build_tree(dev, hash, &refs)?;
    let root = tree.root(dev)?;
    stats.add_d2h(STAGE_COMMIT, "", 32);
    Ok((
        DeviceCommitted {
            root,
            ldes,
            salts,
            tree,
            stats,
            salt_seed: salt.map(|(r, round)| (*r, round)),
        },
        kept,
    ))
}

/// Commits `traces` (commit order) with blowup `B = 2^log_blowup` keeping only their raw coefficients
/// ([`LdeKind::Coeffs`]) and a tree capped [`TREE_CAP_LEVELS`] levels above the leaves (levels `0 ..=
/// max(L - TREE_CAP_LEVELS, log_blowup)`): the LDE is computed one coset block at a time (block `b` of
/// every matrix = storage rows `[b·n_i, (b+1)·n_i)`, all under node `b` of level `log_blowup`), each
/// block's subtree hashed and its upper levels copied into the tree, then dropped; zk salts are generated
/// per block and not kept. Root and stored levels equal [`commit_lde_salted`]'s. Each trace buffer is
/// dropped once its coefficients exist. Device memory: the coefficients (`8 n w` per trace), the capped
/// tree, and one block of every matrix (as much as the coefficients) while hashing.
pub fn commit_coeffs(
    dev: &Device,
    traces: Vec<TraceInput<'_>>,
    log_blowup: u32,
    salt: Option<(&ZkRng, u32)>,
    hash: MerkleHash,
) -> Result<DeviceCommitted, CudaError> {
    if traces.is_empty() {
        return Err(CudaError::InvalidArgument("commit of no traces".into()));
    }
    let mut stats = TransferStats::default();
    let mut ldes = Vec::with_capacity(traces.len());
    for t in traces {
        let (name, d_trace, width, log_n) = device_input(dev, t, &mut stats)?;
        if log_n + log_blowup > crate::poly::MAX_LOG_N {
            return Err(CudaError::InvalidArgument(format!(
                "LDE size 2^{}",
                log_n + log_blowup
            )));
        }
        let coeffs = crate::poly::raw_coeffs(dev, &d_trace, log_n, width)?;
        drop(d_trace);
        ldes.push(DeviceLde {
            name,
            data: coeffs,
            width,
            log_height: log_n + log_blowup,
            kind: LdeKind::Coeffs { log_blowup },
        });
    }
    let mut levels: Vec<u32> = ldes.iter().map(|l| l.log_height).collect();
    levels.sort_unstable_by(|a, b| b.cmp(a));
    levels.dedup();
    let big_l = levels[0];
    let cap = big_l.saturating_sub(TREE_CAP_LEVELS).max(log_blowup);
    let mut tree_levels: Vec<DeviceBuffer<u64>> = (0..=cap)
        .map(|l| dev.alloc::<u64>(4 << l))
        .collect::<Result<_, _>>()?;
    for b in 0..1usize << log_blowup {
        let blocks: Vec<DeviceBuffer<u64>> = ldes
            .iter()
            .map(|l| l.rows(dev, l.log_height - log_blowup, &[b]))
            .collect::<Result<_, _>>()?;
        let salt_blocks: Vec<(DeviceBuffer<u64>, u32)> = match salt {
            None => Vec::new(),
            Some((rng, round)) => levels
                .iter()
                .map(|&lh| {
                    let rows = 1usize << (lh - log_blowup);
                    crate::zk::salt_rows(dev, rng, round, lh, b * rows, rows)
                        .map(|d| (d, lh - log_blowup))
                })
                .collect::<Result<_, _>>()?,
        };
        let refs: Vec<MatrixRef<'_>> = blocks
            .iter()
            .zip(&ldes)
            .map(|(d, l)| MatrixRef {
                data: d,
                width: l.width,
                log_height: l.log_height - log_blowup,
            })
            .chain(salt_blocks.iter().map(|(d, lh)| MatrixRef {
                data: d,
                width: SALT_WIDTH,
                log_height: *lh,
            }))
            .collect();
        let sub = build_tree(dev, hash, &refs)?;
        for j in 0..=(cap - log_blowup) {
            let n = 1usize << j;
            dev.copy_dtod(
                &sub.levels[j as usize],
                0,
                &tree_levels[(log_blowup + j) as usize],
                4 * b * n,
                4 * n,
            )?;
        }
    }
    for l in (0..log_blowup).rev() {
        let (lo, hi) = tree_levels.split_at_mut(l as usize + 1);
        crate::merkle::level_up(dev, hash, &hi[0], None, &lo[l as usize], 1usize << l)?;
    }
    let tree = DeviceMerkleTree {
        log_height: big_l,
        levels: tree_levels,
        hash,
    };
    let root = tree.root(dev)?;
    stats.add_d2h(STAGE_COMMIT, "", 32);
    Ok(DeviceCommitted {
        root,
        ldes,
        salts: Vec::new(),
        tree,
        stats,
        salt_seed: salt.map(|(r, round)| (*r, round)),
    })
}

impl DeviceCommitted {
    /// Shapes of the committed LDE matrices (commit order), as `zkrv_stark::merkle::verify_batch` wants them.
    pub fn dims(&self) -> Vec<MatrixDims> {
        self.ldes
            .iter()
            .map(|l| MatrixDims {
                width: l.width,
                log_height: l.log_height as usize,
            })
            .collect()
    }

    /// Host copy of LDE `i` (for phases not on the GPU yet; counted under stage "host-copy").
    pub fn download_lde(&mut self, dev: &Device, i: usize) -> Result<RowMajorMatrix, CudaError> {
        let l = self
            .ldes
            .get(i)
            .ok_or_else(|| CudaError::InvalidArgument(format!("no LDE {i}")))?;
        let v = dev.download(&l.data)?;
        self.stats
            .add_d2h(STAGE_HOST_COPY, &l.name, (v.len() * 8) as u64);
        Ok(RowMajorMatrix::new(
            v.into_iter().map(F::new).collect(),
            l.width,
        ))
    }

    /// Opens leaf `index` like `MerkleTree::open`: the row `index >> (L - log_height)` of each LDE (commit
    /// order) and the `L` siblings, leaf level first. Copies only those rows and digests (stage "open").
    pub fn open(
        &mut self,
        dev: &Device,
        index: usize,
    ) -> Result<(Vec<Vec<F>>, MerkleProof), CudaError> {
        let big_l = self.tree.log_height;
        if index >> big_l != 0 {
            return Err(CudaError::InvalidArgument(format!(
                "index {index} >= 2^{big_l}"
            )));
        }
        let mut rows = Vec::with_capacity(self.ldes.len());
        for l in &self.ldes {
            let r = index >> (big_l - l.log_height);
            let mut row = vec![0u64; l.width];
            dev.copy_dtoh(&l.data, r * l.width, &mut row)?;
            self.stats
                .add_d2h(STAGE_OPEN, &l.name, (l.width * 8) as u64);
            rows.push(row.into_iter().map(F::new).collect());
        }
        let mut salts = Vec::with_capacity(self.salts.len());
        for l in &self.salts {
            let r = index >> (big_l - l.log_height);
            let mut row = vec![0u64; l.width];
            dev.copy_dtoh(&l.data, r * l.width, &mut row)?;
            self.stats
                .add_d2h(STAGE_OPEN, &l.name, (l.width * 8) as u64);
            salts.push(row.into_iter().map(F::new).collect());
        }
        let siblings = self.tree.open(dev, index)?;
        self.stats
            .add_d2h(STAGE_OPEN, "", (siblings.len() * 32) as u64);
        Ok((rows, MerkleProof { siblings, salts }))
    }
}
