//! Launchers for `kernels/open.cu`: the DEEP + FRI operations of the opening step on resident data (mirrors
//! `zkrv_stark::backend`, `backend/open.rs`; the protocol is `zkrv_stark::pcs::open`, the backend glue
//! `crate::backend` (`backend/open.rs`)).
//!
//! Layouts: a codeword of `2^s` `Ext3` values is `2^s x 3` row-major u64 (bit-reversed order, canonical);
//! read as `2^(s-a) x 3·2^a` it is the FRI layer matrix of arity `2^a`. LDEs are `2^lh x w` row-major, bit-reversed rows on
//! `g·H_{2^lh}` (`g = 7`). Only small descriptors are uploaded (term and point lists, segment lists, query
//! indices); every function here is deterministic and exact, so results equal the CPU's bit for bit.

use cudarc::driver::LaunchConfig;
use zkrv_stark::field::{Ext3, Field, PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::poly::{coset_shift, domain_generator};

use crate::device::{cfg, Device, DeviceBuffer, KArg, MAX_GRID_X};
use crate::error::CudaError;
use crate::nvrtc;

/// Most distinct opening points one `deep_codeword_kernel` launch handles (`DEEP_MAX_POINTS` in
/// `open.cu`); [`deep_plan`] splits the points of a height into groups of at most this many.
pub const DEEP_MAX_POINTS: usize = 8;

/// Threads per block of `bary_partial_kernel` (`BARY_THREADS` in `open.cu`).
pub const BARY_THREADS: u32 = 256;

/// Canonical words of an `Ext3`.
pub fn ext_words(e: Ext3) -> [u64; 3] {
    e.to_canonical_u64s()
}

/// An `Ext3` from three u64 words (reduced).
pub fn ext_from_words(w: &[u64]) -> Ext3 {
    Ext3([F::new(w[0]), F::new(w[1]), F::new(w[2])])
}

fn grid_1d(n: u64, block: u32) -> Result<LaunchConfig, CudaError> {
    let grid = n.div_ceil(block as u64).max(1);
    if grid > MAX_GRID_X {
        return Err(CudaError::InvalidArgument(format!(
            "grid of {grid} blocks exceeds {MAX_GRID_X}"
        )));
    }
    Ok(cfg(grid as u32, block, 0))
}

// ---------------------------------------------------------------------------------------------------------
// FRI fold

/// Largest FRI folding arity `fri_fold` handles, as log2 (`FRI_MAX_LOG_ARITY` in `open.cu`; the protocol's
/// [`zkrv_stark::pcs::MAX_LOG_FOLDING_ARITY`]).
pub const FRI_MAX_LOG_ARITY: u32 = 3;

/// FRI fold of `cw` (`2^log_size x 3`, bit-reversed) by `2^log_arity` (`1 <= log_arity <= min(log_size,
/// FRI_MAX_LOG_ARITY)`): `log_arity` binary folds with `beta, beta^2, ..`, the binary fold of `2^t` values
/// being `next[j] = (e0 + e1)/2 + b (e0 - e1)/(2x)`, `x = ω_{2^t}^{bitrev_{t-1}(j)}` (one thread per output
/// row, its `2^log_arity` inputs in registers, `1/x` from one power of `ω^{-1}` per row, no table), plus
/// `beta^(2^log_arity) roll[j]` when `roll` (`2^(log_size-log_arity) x 3`) is given. Returns the
/// `2^(log_size-log_arity) x 3` codeword.
pub fn fri_fold(
    dev: &Device,
    cw: &DeviceBuffer<u64>,
    log_size: u32,
    log_arity: u32,
    beta: Ext3,
    roll: Option<&DeviceBuffer<u64>>,
) -> Result<DeviceBuffer<u64>, CudaError> {
    if log_arity == 0
        || log_arity > FRI_MAX_LOG_ARITY
        || log_size < log_arity
        || log_size > 32
        || cw.len() != 3 << log_size
    {
        return Err(CudaError::InvalidArgument(format!(
            "FRI fold of {} words as 2^{log_size} x 3, arity 2^{log_arity}",
            cw.len()
        )));
    }
    let rows = 1u64 << (log_size - log_arity);
    if let Some(r) = roll {
        if r.len() as u64 != 3 * rows {
            return Err(CudaError::InvalidArgument(format!(
                "FRI roll-in of {} words, expected {}",
                r.len(),
                3 * rows
            )));
        }
    }
    let next = dev.alloc::<u64>(3 * rows as usize)?;
    let w_inv = domain_generator(log_size as usize)
        .inverse()
        .as_canonical_u64();
    let root_inv = domain_generator(log_arity as usize)
        .inverse()
        .as_canonical_u64();
    let [b0, b1, b2] = ext_words(beta);
    let [bb0, bb1, bb2] = ext_words(beta.pow(1 << log_arity));
    // SAFETY: cw holds rows·2^log_arity x 3 u64, roll (if any) and next rows x 3; one thread per row j < rows.
    unsafe {
        dev.launch(
            &nvrtc::OPEN_CU,
            "fri_fold_kernel",
            grid_1d(rows, 256)?,
            &[
                KArg::U64(cw.ptr()),
                KArg::U64(roll.map_or(0, |r| r.ptr())),
                KArg::U64(next.ptr()),
                KArg::U64(rows),
                KArg::U32(log_size),
                KArg::U32(log_arity),
                KArg::U64(w_inv),
                KArg::U64(root_inv),
                KArg::U64(b0),
                KArg::U64(b1),
                KArg::U64(b2),
                KArg::U64(bb0),
                KArg::U64(bb1),
                KArg::U64(bb2),
            ],
        )?;
    }
    Ok(next)
}

// ---------------------------------------------------------------------------------------------------------
// DEEP

/// One matrix's share of a DEEP codeword ([`zkrv_stark::backend::DeepTerm`] with its LDE's address):
/// `addr` points at the `2^lh x width` LDE (bit-reversed rows); `values[p][c] = f_c(points[p])`; weight of
/// `(p, c)` is `alpha^(k0 + p·width + c)`.
pub struct DeepInput<'a> {
    pub addr: u64,
    pub width: usize,
    pub points: &'a [Ext3],
    pub values: &'a [Vec<Ext3>],
    pub k0: u64,
}

/// The distinct opening points of `inputs`, in first-appearance order.
pub fn deep_points(inputs: &[DeepInput<'_>]) -> Vec<Ext3> {
    let mut pts: Vec<Ext3> = Vec::new();
    for z in inputs
        .iter()
        .flat_map(|i| i.points.iter().zip(i.values).map(|(z, _)| z))
    {
        if !pts.contains(z) {
            pts.push(*z);
        }
    }
    pts
}

/// The launch descriptors of one DEEP codeword (layout in `open.cu`, "DEEP reduced codeword"): the distinct
/// points in first-appearance order, split into groups of [`DEEP_MAX_POINTS`], one descriptor per group with
/// the terms that have a point in it. Per term and point `p`: `scale = alpha^(k0 + p·w)`; per point `z`:
/// `c_z = Σ scale · Σ_c alpha^c v_{p,c}` (the opened values, as the CPU zips them). Empty if no term has a
/// point (the codeword is then zero).
pub fn deep_plan(inputs: &[DeepInput<'_>], alpha: Ext3) -> Vec<Vec<u64>> {
    let points = deep_points(inputs);
    let max_w = inputs.iter().map(|i| i.width).max().unwrap_or(0);
    let apow = alpha.powers_n(max_w.max(1));
    let mut cz = vec![Ext3::ZERO; points.len()];
    // Per input: (point index, scale).
    let pairs: Vec<Vec<(usize, Ext3)>> = inputs
        .iter()
        .map(|inp| {
            let aw = alpha.pow(inp.width as u64);
            let mut scale = alpha.pow(inp.k0);
            let mut v = Vec::with_capacity(inp.points.len());
            for (z, zv) in inp.points.iter().zip(inp.values) {
                let mz: Ext3 = zv
                    .iter()
                    .zip(&apow[..inp.width])
                    .map(|(&v, &a)| a * v)
                    .sum();
                let zi = points.iter().position(|p| p == z).unwrap_or(0);
                cz[zi] += scale * mz;
                v.push((zi, scale));
                scale *= aw;
            }
            v
        })
        .collect();
    let mut groups = Vec::new();
    for (g, chunk) in points.chunks(DEEP_MAX_POINTS).enumerate() {
        let lo = g * DEEP_MAX_POINTS;
        let hi = lo + chunk.len();
        let mut terms: Vec<u64> = Vec::new();
        let mut pair_words: Vec<u64> = Vec::new();
        let mut n_terms = 0u64;
        let mut n_pairs = 0u64;
        let mut width = 1usize;
        for (inp, ps) in inputs.iter().zip(&pairs) {
            let mine: Vec<&(usize, Ext3)> =
                ps.iter().filter(|(zi, _)| (lo..hi).contains(zi)).collect();
            if mine.is_empty() {
                continue;
            }
            for (zi, s) in mine {
                pair_words.push((zi - lo) as u64);
                pair_words.extend(ext_words(*s));
                n_pairs += 1;
            }
            terms.extend([inp.addr, inp.width as u64, n_pairs]);
            n_terms += 1;
            width = width.max(inp.width);
        }
        let mut desc = vec![n_terms, chunk.len() as u64, n_pairs, width as u64];
        desc.extend(terms);
        desc.extend(pair_words);
        for (k, z) in chunk.iter().enumerate() {
            desc.extend(ext_words(*z));
            desc.extend(ext_words(cz[lo + k]));
        }
        // W = the group's largest width (>= 1, so the table is never empty).
        for a in &apow[..width] {
            desc.extend(ext_words(*a));
        }
        groups.push(desc);
    }
    groups
}

/// The DEEP reduced codeword of LDE height `2^log_height` (`2^log_height x 3`, bit-reversed) from the
/// descriptors of [`deep_plan`] (whose matrix addresses must be live `2^log_height x width` LDEs): one launch
/// per group of points, one thread per LDE row. Returns the codeword and the descriptor bytes uploaded.
pub fn deep_codeword(
    dev: &Device,
    log_height: u32,
    groups: &[Vec<u64>],
) -> Result<(DeviceBuffer<u64>, u64), CudaError> {
    if log_height > 32 {
        return Err(CudaError::InvalidArgument(format!(
            "DEEP codeword of height 2^{log_height}"
        )));
    }
    let n = 1u64 << log_height;
    if groups.is_empty() {
        return Ok((dev.alloc_zeros::<u64>(3 * n as usize)?, 0));
    }
    let out = dev.alloc::<u64>(3 * n as usize)?;
    // SAFETY: the descriptor's addresses are live 2^log_height x width LDEs (caller); out holds n x 3.
    let uploaded = unsafe { deep_codeword_rows(dev, log_height, groups, &out, 0, n, false)? };
    Ok((out, uploaded))
}

/// Rows `[row0, row_end)` of a DEEP codeword of height `2^log_height` into `out` (`2^log_height x 3`):
/// written, or added to what `out` holds when `accumulate` (the codeword is linear in its terms, so
/// descriptors of disjoint term sets may be run one after the other). Returns the descriptor bytes uploaded.
///
/// # Safety
/// For every term of `groups`, `addr + 8·i·width` must be readable for `width` words at every row `i` in
/// `[row0, row_end)` (a recomputed block's address less `row0` rows); `out` holds `2^log_height x 3` u64.
pub unsafe fn deep_codeword_rows(
    dev: &Device,
    log_height: u32,
    groups: &[Vec<u64>],
    out: &DeviceBuffer<u64>,
    row0: u64,
    row_end: u64,
    accumulate: bool,
) -> Result<u64, CudaError> {
    if log_height > 32
        || row_end > 1u64 << log_height
        || row0 >= row_end
        || out.len() as u64 != 3 << log_height
    {
        return Err(CudaError::InvalidArgument(format!(
            "DEEP rows {row0}..{row_end} of a codeword of 2^{log_height}"
        )));
    }
    let omega = domain_generator(log_height as usize).as_canonical_u64();
    let shift = coset_shift().as_canonical_u64();
    let mut uploaded = 0u64;
    for (g, desc) in groups.iter().enumerate() {
        let d = dev.upload(desc)?;
        uploaded += (desc.len() * 8) as u64;
        // SAFETY: forwarded from the caller; the descriptor's tables are as documented in open.cu; one
        // thread per row in [row0, row_end).
        unsafe {
            dev.launch(
                &nvrtc::OPEN_CU,
                "deep_codeword_kernel",
                grid_1d(row_end - row0, 128)?,
                &[
                    KArg::U64(d.ptr()),
                    KArg::U64(out.ptr()),
                    KArg::U64(row_end),
                    KArg::U32(log_height),
                    KArg::U64(omega),
                    KArg::U64(shift),
                    KArg::U32(u32::from(accumulate || g > 0)),
                    KArg::U64(row0),
                ],
            )?;
        }
    }
    Ok(uploaded)
}

// ---------------------------------------------------------------------------------------------------------
// Opened values (barycentric)

/// `s = (z^n - g^n) / (n·g^n)`, the scale of the barycentric weights on `g·H_n`, `n = 2^log_n`.
pub fn bary_scale(log_n: u32, z: Ext3) -> Ext3 {
    let n = 1u64 << log_n;
    let g = coset_shift();
    let gn = g.exp_u64(n);
    (z.pow(n) - gn) * (F::from_u64(n) * gn).inverse()
}

/// Whether `z` lies in `g·H_n` (`n = 2^log_n`), and then the bit-reversed row `k < n` with
/// `x_k = g·ω_n^{bitrev(k)} = z` (the CPU's `Bary::InDomain`; a linear search, for this rare case only).
pub fn bary_in_domain(log_n: u32, z: Ext3) -> Option<usize> {
    let n = 1usize << log_n;
    let t = z * coset_shift().inverse();
    let t = t.as_base()?;
    if t.exp_u64(n as u64) != F::ONE {
        return None;
    }
    let w = domain_generator(log_n as usize);
    let mut cur = F::ONE;
    for j in 0..n {
        if cur == t {
            return Some(zkrv_stark::poly::reverse_bits(j, log_n as usize));
        }
        cur *= w;
    }
    None
}

/// Barycentric weights `w_k = s·x_k / (z - x_k)` of the first `n = 2^log_n` rows (`n x 3`); `z` must not
/// lie in `g·H_n` ([`bary_in_domain`]).
pub fn bary_weights(dev: &Device, log_n: u32, z: Ext3) -> Result<DeviceBuffer<u64>, CudaError> {
    if log_n > 32 {
        return Err(CudaError::InvalidArgument(format!(
            "barycentric weights on 2^{log_n} points"
        )));
    }
    let n = 1u64 << log_n;
    let out = dev.alloc::<u64>(3 * n as usize)?;
    let [z0, z1, z2] = ext_words(z);
    let [s0, s1, s2] = ext_words(bary_scale(log_n, z));
    // SAFETY: out holds n x 3 u64; one thread per k < n.
    unsafe {
        dev.launch(
            &nvrtc::OPEN_CU,
            "bary_weights_kernel",
            grid_1d(n, 256)?,
            &[
                KArg::U64(out.ptr()),
                KArg::U64(n),
                KArg::U32(log_n),
                KArg::U64(domain_generator(log_n as usize).as_canonical_u64()),
                KArg::U64(coset_shift().as_canonical_u64()),
                KArg::U64(z0),
                KArg::U64(z1),
                KArg::U64(z2),
                KArg::U64(s0),
                KArg::U64(s1),
                KArg::U64(s2),
            ],
        )?;
    }
    Ok(out)
}

/// The grid of `bary_partial_kernel` for `n` rows of `width >= 1` columns: `n_blocks` row blocks of
/// `rows_per_block` rows (at most 1024 blocks, about 1024 rows each) times `tiles` column tiles of
/// `min(width, BARY_THREADS)` columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaryShape {
    pub n_blocks: u64,
    pub rows_per_block: u64,
    pub tiles: u64,
}

/// See [`BaryShape`].
pub fn bary_shape(n: u64, width: usize) -> BaryShape {
    let n_blocks = n.div_ceil(1024).clamp(1, 1024);
    let wt = width.clamp(1, BARY_THREADS as usize);
    BaryShape {
        n_blocks,
        rows_per_block: n.div_ceil(n_blocks),
        tiles: width.div_ceil(wt) as u64,
    }
}

/// `out[out_off + 3c ..] = Σ_{k<n} w_k · mat[k][c]` for every column `c` of `mat` (`>= n` rows x `width`,
/// row-major; only the first `n` rows are read), `n = weights.len() / 3`: a two-pass reduction in a fixed
/// order (per block of rows, then over the blocks), so the result does not depend on scheduling.
pub fn bary_eval(
    dev: &Device,
    weights: &DeviceBuffer<u64>,
    mat: &DeviceBuffer<u64>,
    width: usize,
    out: &DeviceBuffer<u64>,
    out_off: usize,
) -> Result<(), CudaError> {
    let n = (weights.len() / 3) as u64;
    if width == 0 || (mat.len() as u64) < n * width as u64 || out_off + 3 * width > out.len() {
        return Err(CudaError::InvalidArgument(format!(
            "barycentric evaluation of {} words x {width} at {n} points into {} at {out_off}",
            mat.len(),
            out.len()
        )));
    }
    let BaryShape {
        n_blocks,
        rows_per_block,
        tiles,
    } = bary_shape(n, width);
    if tiles > 65535 || n_blocks > MAX_GRID_X {
        return Err(CudaError::InvalidArgument(format!(
            "barycentric evaluation of {width} columns"
        )));
    }
    let partial = dev.alloc::<u64>(3 * width * n_blocks as usize)?;
    let launch = LaunchConfig {
        grid_dim: (n_blocks as u32, tiles as u32, 1),
        block_dim: (BARY_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: weights n x 3, mat >= n x width, partial n_blocks x width x 3; blockDim = BARY_THREADS.
    unsafe {
        dev.launch(
            &nvrtc::OPEN_CU,
            "bary_partial_kernel",
            launch,
            &[
                KArg::U64(weights.ptr()),
                KArg::U64(mat.ptr()),
                KArg::U64(width as u64),
                KArg::U64(n),
                KArg::U64(rows_per_block),
                KArg::U64(partial.ptr()),
            ],
        )?;
        // SAFETY: out holds out_off + width x 3 u64 (checked above).
        dev.launch(
            &nvrtc::OPEN_CU,
            "bary_final_kernel",
            grid_1d(width as u64, 128)?,
            &[
                KArg::U64(partial.ptr()),
                KArg::U64(width as u64),
                KArg::U64(n_blocks),
                KArg::U64(out.ptr() + 8 * out_off as u64),
            ],
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// Query openings

/// One piece of every query's opening: row `(q >> shift) ^ flip` of `src` (`rows x width` row-major).
/// Matrix and salt rows: `shift = L - log_height`, no flip; Merkle sibling `k` (leaf level first): level
/// `L - k` of the tree (`width = 4`, the digest's little-endian lanes), `shift = k`, flip.
pub struct GatherSegment<'a> {
    pub src: &'a DeviceBuffer<u64>,
    pub width: usize,
    pub shift: u32,
    pub flip: bool,
}

/// What [`gather_openings`] brought back.
pub struct Gathered {
    /// `queries x stride` u64: per query the segments in order.
    pub words: Vec<u64>,
    /// The sum of the segment widths.
    pub stride: usize,
    /// Descriptor bytes uploaded (segments and indices).
    pub uploaded: u64,
    /// Bytes downloaded (`8 · words.len()`).
    pub downloaded: u64,
}

/// Gathers every segment of every query into one `indices.len() x stride` buffer (`stride` = the sum of the
/// widths, segments in the given order) with one launch and downloads it once.
pub fn gather_openings(
    dev: &Device,
    segs: &[GatherSegment<'_>],
    indices: &[usize],
) -> Result<Gathered, CudaError> {
    let stride: usize = segs.iter().map(|s| s.width).sum();
    if indices.is_empty() || stride == 0 {
        return Ok(Gathered {
            words: Vec::new(),
            stride,
            uploaded: 0,
            downloaded: 0,
        });
    }
    if segs.len() > 65535 || indices.len() as u64 > MAX_GRID_X {
        return Err(CudaError::InvalidArgument(format!(
            "gather of {} segments x {} queries",
            segs.len(),
            indices.len()
        )));
    }
    let mut words = Vec::with_capacity(5 * segs.len() + indices.len());
    let mut off = 0usize;
    for s in segs {
        let rows = s.src.len() / s.width.max(1);
        for &q in indices {
            let r = (q >> s.shift) ^ usize::from(s.flip);
            if r >= rows {
                return Err(CudaError::InvalidArgument(format!(
                    "opening row {r} of a {rows}-row segment (query {q})"
                )));
            }
        }
        words.extend([
            s.src.ptr(),
            s.width as u64,
            s.shift as u64,
            u64::from(s.flip),
            off as u64,
        ]);
        off += s.width;
    }
    words.extend(indices.iter().map(|&q| q as u64));
    let d = dev.upload(&words)?;
    let out = dev.alloc::<u64>(indices.len() * stride)?;
    let launch = LaunchConfig {
        grid_dim: (indices.len() as u32, segs.len() as u32, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the descriptor addresses are live buffers whose opened rows are in bounds (checked above); out
    // holds indices.len() x stride u64.
    unsafe {
        dev.launch(
            &nvrtc::OPEN_CU,
            "open_gather_kernel",
            launch,
            &[
                KArg::U64(d.ptr()),
                KArg::U64(d.ptr() + 8 * 5 * segs.len() as u64),
                KArg::U64(stride as u64),
                KArg::U64(out.ptr()),
            ],
        )?;
    }
    let v = dev.download(&out)?;
    Ok(Gathered {
        uploaded: (words.len() * 8) as u64,
        downloaded: (v.len() * 8) as u64,
        words: v,
        stride,
    })
}

/// Where an opening segment reads: matrix `i` of the tree (its LDEs in commit order, then its salt
/// matrices, largest height first), or level `l` of the tree (`2^l x 4` lanes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentSource {
    Matrix(usize),
    Level(usize),
}

/// One segment of [`opening_plan`]: as [`GatherSegment`], with its source named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentPlan {
    pub source: SegmentSource,
    pub width: usize,
    pub shift: u32,
    pub flip: bool,
}

/// The segments of one query's opening of a tree of `2^log_tree` leaves over matrices `mats`
/// (`(width, log_height)` each, in tree order: LDEs, then salts): the row `q >> (log_tree - lh)` of every
/// matrix, then the `log_tree` siblings, leaf level first (sibling `k` = digest `(q >> k) ^ 1` of level
/// `log_tree - k`), the order of `MerkleTree::open`.
pub fn opening_plan(log_tree: u32, mats: &[(usize, u32)]) -> Vec<SegmentPlan> {
    let mut v: Vec<SegmentPlan> = mats
        .iter()
        .enumerate()
        .map(|(i, &(width, lh))| SegmentPlan {
            source: SegmentSource::Matrix(i),
            width,
            shift: log_tree - lh,
            flip: false,
        })
        .collect();
    v.extend((0..log_tree).map(|k| SegmentPlan {
        source: SegmentSource::Level((log_tree - k) as usize),
        width: 4,
        shift: k,
        flip: true,
    }));
    v
}

/// One query's gathered chunk of [`opening_plan`] split back: the rows of the `n_mats` matrices (field
/// elements) and the sibling digests.
pub fn split_opening(
    plan: &[SegmentPlan],
    n_mats: usize,
    chunk: &[u64],
) -> (Vec<Vec<F>>, Vec<[u8; 32]>) {
    let mut rows = Vec::with_capacity(n_mats);
    let mut at = 0;
    for s in &plan[..n_mats] {
        rows.push(chunk[at..at + s.width].iter().map(|&v| F::new(v)).collect());
        at += s.width;
    }
    let siblings = chunk[at..].chunks_exact(4).map(digest_from_lanes).collect();
    (rows, siblings)
}

/// A digest from its 4 little-endian lanes.
pub fn digest_from_lanes(l: &[u64]) -> [u8; 32] {
    let mut d = [0u8; 32];
    for (k, x) in l.iter().take(4).enumerate() {
        d[8 * k..8 * k + 8].copy_from_slice(&x.to_le_bytes());
    }
    d
}
