//! Launchers for `kernels/merkle.cu`: Keccak-256 or Poseidon2 row hashing and mixed-height Merkle trees
//! (mirrors `zkrv_stark::merkle`; layout in docs/architecture.md, "Merkle (mixed heights)"; the Poseidon2
//! hash in docs/stark.md §11).
//!
//! A digest is 32 bytes, held on the device as 4 little-endian u64 (Poseidon2: its 4 canonical elements).

pub use zkrv_stark::merkle::MerkleHash;

use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::transcript::GrindInput;

use crate::device::{cfg, Device, DeviceBuffer, KArg};
use crate::error::CudaError;
use crate::nvrtc;

/// A 32-byte Keccak-256 digest.
pub type Digest = [u8; 32];

/// One matrix of a commitment, resident on the device: `2^log_height x width` row-major u64.
#[derive(Clone, Copy, Debug)]
pub struct MatrixRef<'a> {
    pub data: &'a DeviceBuffer<u64>,
    pub width: usize,
    pub log_height: u32,
}

/// A Merkle tree on the device. `levels[l]` holds the `2^l` digests of level l (`levels[0]` is the root,
/// `levels[log_height]` the leaves), each `2^l x 4` u64. A capped tree ([`crate::commit::commit_coeffs`])
/// keeps only levels `0 ..= levels.len() - 1 < log_height`.
pub struct DeviceMerkleTree {
    pub log_height: u32,
    pub levels: Vec<DeviceBuffer<u64>>,
    /// The leaf and node hash.
    pub hash: MerkleHash,
}

/// The constants `kernels/poseidon2.cuh` reads (`P2_CONSTS` = 94 u64, canonical): the external round
/// constants (full round r element i at `8 r + i`), the 22 internal ones, the internal diagonal; from
/// `zkrv_stark::poseidon2`, the one definition.
pub fn poseidon2_constants() -> Vec<u64> {
    use zkrv_stark::field::PrimeField64;
    use zkrv_stark::poseidon2 as p2;
    let mut c = Vec::with_capacity(94);
    for r in 0..p2::FULL_ROUNDS {
        c.extend(p2::external_rc(r).map(|x| x.as_canonical_u64()));
    }
    c.extend((0..p2::PARTIAL_ROUNDS).map(|r| p2::internal_rc(r).as_canonical_u64()));
    c.extend(p2::internal_diag().map(|x| x.as_canonical_u64()));
    c
}

fn digest_from_lanes(l: &[u64]) -> Digest {
    let mut d = [0u8; 32];
    for (k, v) in l.iter().take(4).enumerate() {
        d[8 * k..8 * k + 8].copy_from_slice(&v.to_le_bytes());
    }
    d
}

impl DeviceMerkleTree {
    /// The root digest (32 bytes copied device -> host).
    pub fn root(&self, dev: &Device) -> Result<Digest, CudaError> {
        let mut l = [0u64; 4];
        dev.copy_dtoh(&self.levels[0], 0, &mut l)?;
        Ok(digest_from_lanes(&l))
    }

    /// Sibling digests of leaf `index` from the leaf level up to level 1 (`log_height` digests, 32 bytes each
    /// copied device -> host).
    pub fn open(&self, dev: &Device, index: usize) -> Result<Vec<Digest>, CudaError> {
        if self.levels.len() != self.log_height as usize + 1 {
            return Err(CudaError::InvalidArgument(
                "open of a capped tree (its lower levels are recomputed by the opening)".into(),
            ));
        }
        if index >> self.log_height != 0 {
            return Err(CudaError::InvalidArgument(format!(
                "leaf {index} of 2^{}",
                self.log_height
            )));
        }
        let mut path = Vec::with_capacity(self.log_height as usize);
        for l in (1..=self.log_height).rev() {
            let i = (index >> (self.log_height - l)) ^ 1;
            let mut lanes = [0u64; 4];
            dev.copy_dtoh(&self.levels[l as usize], 4 * i, &mut lanes)?;
            path.push(digest_from_lanes(&lanes));
        }
        Ok(path)
    }

    /// All digests of level `l`, `2^l` of them.
    pub fn level(&self, dev: &Device, l: u32) -> Result<Vec<Digest>, CudaError> {
        let lanes = dev.download(&self.levels[l as usize])?;
        Ok(lanes.chunks(4).map(digest_from_lanes).collect())
    }
}

/// Row hashes of matrices of one height: `out[i] = H(row_i(M_0) || row_i(M_1) || ...)`, `height x 4` u64,
/// `H` the Keccak-256 or Poseidon2 leaf hash.
pub fn hash_rows(
    dev: &Device,
    hash: MerkleHash,
    mats: &[MatrixRef<'_>],
) -> Result<DeviceBuffer<u64>, CudaError> {
    let Some(first) = mats.first() else {
        return Err(CudaError::InvalidArgument(
            "hash_rows of no matrices".into(),
        ));
    };
    let log_h = first.log_height;
    let height = 1usize << log_h;
    for m in mats {
        if m.log_height != log_h || m.data.len() != m.width << m.log_height {
            return Err(CudaError::InvalidArgument(format!(
                "matrix of {} elements is not 2^{} x {} (group height 2^{log_h})",
                m.data.len(),
                m.log_height,
                m.width
            )));
        }
    }
    let ptrs: Vec<u64> = mats.iter().map(|m| m.data.ptr()).collect();
    let widths: Vec<u32> = mats.iter().map(|m| m.width as u32).collect();
    let total: u64 = mats.iter().map(|m| m.width as u64).sum();
    let d_ptrs = dev.upload(&ptrs)?;
    let d_widths = dev.upload(&widths)?;
    let out = dev.alloc::<u64>(4 * height)?;
    if hash == MerkleHash::Poseidon2 {
        let consts = dev.upload(&poseidon2_constants())?;
        // SAFETY: as below; consts holds the 94 constants.
        unsafe {
            dev.launch(
                &nvrtc::MERKLE_CU,
                "p2_hash_rows_kernel",
                cfg(height.div_ceil(128) as u32, 128, 0),
                &[
                    KArg::U64(d_ptrs.ptr()),
                    KArg::U64(d_widths.ptr()),
                    KArg::U32(mats.len() as u32),
                    KArg::U64(total),
                    KArg::U64(height as u64),
                    KArg::U64(consts.ptr()),
                    KArg::U64(out.ptr()),
                ],
            )?;
        }
        return Ok(out);
    }
    // SAFETY: descriptors describe live buffers of height x width u64 each; out is height x 4.
    unsafe {
        dev.launch(
            &nvrtc::MERKLE_CU,
            "hash_rows_kernel",
            cfg(height.div_ceil(128) as u32, 128, 0),
            &[
                KArg::U64(d_ptrs.ptr()),
                KArg::U64(d_widths.ptr()),
                KArg::U32(mats.len() as u32),
                KArg::U64(total),
                KArg::U64(height as u64),
                KArg::U64(out.ptr()),
            ],
        )?;
    }
    Ok(out)
}

/// Builds the mixed-height Merkle tree of `mats` (commit order; heights any powers of two), hashed with
/// `hash`.
pub fn build_tree(
    dev: &Device,
    hash: MerkleHash,
    mats: &[MatrixRef<'_>],
) -> Result<DeviceMerkleTree, CudaError> {
    let Some(log_max) = mats.iter().map(|m| m.log_height).max() else {
        return Err(CudaError::InvalidArgument(
            "Merkle tree of no matrices".into(),
        ));
    };
    let group = |l: u32| {
        mats.iter()
            .copied()
            .filter(|m| m.log_height == l)
            .collect::<Vec<_>>()
    };
    let mut levels: Vec<Option<DeviceBuffer<u64>>> = (0..=log_max).map(|_| None).collect();
    levels[log_max as usize] = Some(hash_rows(dev, hash, &group(log_max))?);
    for l in (0..log_max).rev() {
        let g = group(l);
        let row_hashes = if g.is_empty() {
            None
        } else {
            Some(hash_rows(dev, hash, &g)?)
        };
        let n_parents = 1usize << l;
        let parents = dev.alloc::<u64>(4 * n_parents)?;
        let children = levels[l as usize + 1]
            .as_ref()
            .ok_or_else(|| CudaError::InvalidArgument("level".into()))?;
        level_up(
            dev,
            hash,
            children,
            row_hashes.as_ref(),
            &parents,
            n_parents,
        )?;
        levels[l as usize] = Some(parents);
    }
    let levels = levels
        .into_iter()
        .map(|l| l.ok_or_else(|| CudaError::InvalidArgument("level".into())))
        .collect::<Result<_, _>>()?;
    Ok(DeviceMerkleTree {
        log_height: log_max,
        levels,
        hash,
    })
}

/// One Merkle level up (`merkle_level_kernel`): `parents[j] = H(children[2j] || children[2j+1])`, then
/// `H(parents[j] || row_hashes[j])` when row hashes are given (matrices at this height). Digests are 4 u64;
/// `children` holds `2 n_parents` digests, `row_hashes` and `parents` at least `n_parents`.
pub fn level_up(
    dev: &Device,
    hash: MerkleHash,
    children: &DeviceBuffer<u64>,
    row_hashes: Option<&DeviceBuffer<u64>>,
    parents: &DeviceBuffer<u64>,
    n_parents: usize,
) -> Result<(), CudaError> {
    if children.len() < 8 * n_parents
        || parents.len() < 4 * n_parents
        || row_hashes.is_some_and(|r| r.len() < 4 * n_parents)
    {
        return Err(CudaError::InvalidArgument(format!(
            "Merkle level of {n_parents} parents from {} child words",
            children.len()
        )));
    }
    if hash == MerkleHash::Poseidon2 {
        let consts = dev.upload(&poseidon2_constants())?;
        // SAFETY: as below; consts holds the 94 constants.
        return unsafe {
            dev.launch(
                &nvrtc::MERKLE_CU,
                "p2_merkle_level_kernel",
                cfg(n_parents.div_ceil(128) as u32, 128, 0),
                &[
                    KArg::U64(children.ptr()),
                    KArg::U64(row_hashes.map_or(0, |r| r.ptr())),
                    KArg::U64(parents.ptr()),
                    KArg::U64(n_parents as u64),
                    KArg::U64(consts.ptr()),
                ],
            )
        };
    }
    // SAFETY: children 2 * n_parents digests, row_hashes (if any) n_parents, parents n_parents (checked).
    unsafe {
        dev.launch(
            &nvrtc::MERKLE_CU,
            "merkle_level_kernel",
            cfg(n_parents.div_ceil(128) as u32, 128, 0),
            &[
                KArg::U64(children.ptr()),
                KArg::U64(row_hashes.map_or(0, |r| r.ptr())),
                KArg::U64(parents.ptr()),
                KArg::U64(n_parents as u64),
            ],
        )
    }
}

/// Keccak-256 of byte messages, one GPU thread each (parity tests): returns one digest per message.
pub fn keccak256_many(dev: &Device, msgs: &[&[u8]]) -> Result<Vec<Digest>, CudaError> {
    let mut bytes = Vec::new();
    let mut offsets = vec![0u64];
    for m in msgs {
        bytes.extend_from_slice(m);
        offsets.push(bytes.len() as u64);
    }
    let n = msgs.len();
    let d_bytes = dev.upload(&bytes)?;
    let d_off = dev.upload(&offsets)?;
    let out = dev.alloc::<u64>(4 * n.max(1))?;
    // SAFETY: offsets has n + 1 entries bounding `bytes`; out has 4n u64.
    unsafe {
        dev.launch(
            &nvrtc::MERKLE_CU,
            "keccak256_bytes_kernel",
            cfg((n as u32).div_ceil(64).max(1), 64, 0),
            &[
                KArg::U64(d_bytes.ptr()),
                KArg::U64(d_off.ptr()),
                KArg::U64(out.ptr()),
                KArg::U32(n as u32),
            ],
        )?;
    }
    let lanes = dev.download(&out)?;
    Ok(lanes.chunks(4).take(n).map(digest_from_lanes).collect())
}

/// Bench helper: permutes `n_states` Keccak states `iters` times each (`states` is `25 x n_states`).
pub fn keccak_permute_bench(
    dev: &Device,
    states: &DeviceBuffer<u64>,
    iters: u32,
) -> Result<(), CudaError> {
    let n = states.len() / 25;
    // SAFETY: states holds 25 * n u64.
    unsafe {
        dev.launch(
            &nvrtc::MERKLE_CU,
            "keccak_perm_bench_kernel",
            cfg((n as u32).div_ceil(128).max(1), 128, 0),
            &[
                KArg::U64(states.ptr()),
                KArg::U32(n as u32),
                KArg::U32(iters),
            ],
        )
    }
}

/// Bench helper: permutes `n_states` Poseidon2 states `iters` times each (`states` is `8 x n_states`).
pub fn poseidon2_permute_bench(
    dev: &Device,
    states: &DeviceBuffer<u64>,
    iters: u32,
) -> Result<(), CudaError> {
    let n = states.len() / 8;
    let consts = dev.upload(&poseidon2_constants())?;
    // SAFETY: states holds 8 * n canonical u64; consts the 94 constants.
    unsafe {
        dev.launch(
            &nvrtc::MERKLE_CU,
            "p2_perm_bench_kernel",
            cfg((n as u32).div_ceil(128).max(1), 128, 0),
            &[
                KArg::U64(states.ptr()),
                KArg::U32(n as u32),
                KArg::U32(iters),
                KArg::U64(consts.ptr()),
            ],
        )
    }
}

/// Nonces tested per launch of `grind_kernel` (2^22: a 20-bit proof of work needs ~2^20 on average, so one
/// launch nearly always suffices).
pub const GRIND_BATCH: u64 = 1 << 22;

/// The template `grind_kernel` completes with each nonce (layout in `kernels/merkle.cu`, "Proof of work"):
/// Keccak: the 17 rate lanes of the padded message `0x03 || state || le8(0)`; Poseidon2: the permutation input
/// `(0, 0, 0, 0, s[4], s[5], s[6], s[7] + 5)` (canonical).
pub fn grind_template(input: &GrindInput) -> Vec<u64> {
    match input {
        GrindInput::Keccak(state) => {
            let mut block = [0u8; 8 * 17];
            block[0] = 0x03;
            block[1..33].copy_from_slice(state);
            block[41] ^= 0x01;
            block[8 * 17 - 1] ^= 0x80;
            block
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()
        }
        GrindInput::Poseidon2(s) => {
            let tag = F::from_u64(zkrv_stark::poseidon2::GRIND_TAG);
            [
                F::ZERO,
                F::ZERO,
                F::ZERO,
                F::ZERO,
                s[4],
                s[5],
                s[6],
                s[7] + tag,
            ]
            .iter()
            .map(|x| x.as_canonical_u64())
            .collect()
        }
    }
}

/// Proof of work on the device: the smallest nonce `n >= 0` whose value for `input` has `bits <= 64` leading
/// zero bits, the nonce [`GrindInput::search`] finds on the host. Batches of [`GRIND_BATCH`] nonces in order,
/// each one launch and an 8-byte download, until one holds a valid nonce.
///
/// Errors: [`CudaError::InvalidArgument`] for `bits > 64`; a device error; the search reaching the end of
/// `u64` (a `bits` of 64 with no such nonce).
pub fn grind(dev: &Device, input: &GrindInput, bits: u32) -> Result<u64, CudaError> {
    if bits > 64 {
        return Err(CudaError::InvalidArgument(format!(
            "grinding bits {bits} > 64"
        )));
    }
    let tmpl = dev.upload(&grind_template(input))?;
    let poseidon2 = matches!(input, GrindInput::Poseidon2(_));
    let consts = dev.upload(&poseidon2_constants())?;
    let best = dev.upload(&[u64::MAX])?;
    let mut start = 0u64;
    loop {
        let count = GRIND_BATCH.min(u64::MAX - start);
        // SAFETY: tmpl holds 17 (Keccak) or 8 (Poseidon2) u64, consts the 94 constants, best one u64; every
        // thread index below `count` tests nonce `start + t <= u64::MAX - 1`.
        unsafe {
            dev.launch(
                &nvrtc::MERKLE_CU,
                "grind_kernel",
                cfg(count.div_ceil(256) as u32, 256, 0),
                &[
                    KArg::U64(tmpl.ptr()),
                    KArg::U32(poseidon2 as u32),
                    KArg::U64(consts.ptr()),
                    KArg::U64(start),
                    KArg::U64(count),
                    KArg::U32(bits),
                    KArg::U64(best.ptr()),
                ],
            )?;
        }
        let found = dev.download(&best)?[0];
        if found != u64::MAX {
            return Ok(found);
        }
        if count < GRIND_BATCH {
            return Err(CudaError::InvalidArgument(format!(
                "no {bits}-bit proof-of-work nonce below 2^64 - 1"
            )));
        }
        start += count;
    }
}
