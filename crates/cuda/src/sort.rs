//! Stable radix sort on the device, returning a permutation (kernels `kernels/sort.cu`, method there): the
//! building block of the device walks (sorting accesses by cell) and of request deduplication.

use cudarc::driver::LaunchConfig;

use crate::device::{Device, DeviceBuffer, KArg};
use crate::error::CudaError;
use crate::nvrtc;

/// Threads per block of the sort kernels (`SORT_BLOCK` in sort.cu).
pub const SORT_BLOCK: u32 = 256;
/// Elements per tile (one block) of a pass (`SORT_TILE` in sort.cu: 256 threads x 16 rounds).
pub const SORT_TILE: usize = 4096;
/// Threads of the one-block scan (`SORT_SCAN_BLOCK` in sort.cu).
const SORT_SCAN_BLOCK: u32 = 1024;
/// Digits per pass (8-bit digits).
const RADIX: usize = 256;
/// Blocks of the byte-histogram launch (grid-stride).
const COUNT_GRID: u64 = 1024;

/// The passes a sort runs, least significant first: `(word, shift)` for every byte of every key word whose
/// digit is not the same for all `n` keys (a pass over a constant digit leaves the order as it is).
/// `byte_counts[w]` is word `w`'s global byte histograms `[byte * 256 + digit]` (4 x 256).
pub fn sort_passes(byte_counts: &[Vec<u32>], n: usize) -> Vec<(usize, u32)> {
    let mut passes = Vec::new();
    for (w, counts) in byte_counts.iter().enumerate().rev() {
        for byte in 0..4 {
            let h = &counts[byte * RADIX..(byte + 1) * RADIX];
            if !h.iter().any(|&c| c as usize == n) {
                passes.push((w, 8 * byte as u32));
            }
        }
    }
    passes
}

fn grid(blocks: u64, block: u32) -> Result<LaunchConfig, CudaError> {
    if blocks == 0 || blocks > crate::device::MAX_GRID_X {
        return Err(CudaError::InvalidArgument(format!(
            "sort: grid of {blocks} blocks"
        )));
    }
    Ok(LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The permutation that sorts the key tuples stably: `keys[0]` is the most significant 32-bit word,
/// `keys.last()` the least; returns `perm` (`n` u32 on the device) with `(keys[0][perm[i]], ..,
/// keys[k-1][perm[i]])` non-decreasing in `i` (lexicographically) and equal tuples in increasing index order.
/// No keys, `n` 0 or 1: the identity. Synchronizes once (the byte histograms are read back to skip the
/// passes over constant digits); device memory: `8 n + 1024 (n / 4096 + 1)` bytes besides `perm`.
/// Errors: a key buffer shorter than `n`, `n >= 2^32`, allocation, launch.
pub fn stable_sort_perm(
    dev: &Device,
    keys: &[&DeviceBuffer<u32>],
    n: usize,
) -> Result<DeviceBuffer<u32>, CudaError> {
    if n as u64 > u32::MAX as u64 {
        return Err(CudaError::InvalidArgument(format!(
            "sort of {n} elements: at most 2^32 - 1"
        )));
    }
    if let Some((w, k)) = keys.iter().enumerate().find(|(_, k)| k.len() < n) {
        return Err(CudaError::InvalidArgument(format!(
            "sort of {n} elements: key word {w} holds {}",
            k.len()
        )));
    }
    let passes = if n < 2 || keys.is_empty() {
        Vec::new()
    } else {
        let counts = dev.alloc_zeros::<u32>(keys.len() * 4 * RADIX)?;
        let cfg = grid(
            (n as u64).div_ceil(SORT_BLOCK as u64).min(COUNT_GRID),
            SORT_BLOCK,
        )?;
        for (w, k) in keys.iter().enumerate() {
            // SAFETY: `k` holds >= n u32, `counts` 4 x 256 u32 at word w's offset; grid-stride kernel.
            unsafe {
                dev.launch(
                    &nvrtc::SORT_CU,
                    "sort_count_bytes",
                    cfg,
                    &[
                        KArg::U64(k.ptr()),
                        KArg::U64(n as u64),
                        KArg::U64(counts.ptr() + (w * 4 * RADIX * 4) as u64),
                    ],
                )?;
            }
        }
        let h = dev.download(&counts)?;
        let per_word: Vec<Vec<u32>> = h.chunks(4 * RADIX).map(|c| c.to_vec()).collect();
        sort_passes(&per_word, n)
    };
    if passes.is_empty() {
        let perm = dev.alloc::<u32>(n)?;
        if n > 0 {
            // SAFETY: `perm` holds n u32; the kernel skips i >= n.
            unsafe {
                dev.launch(
                    &nvrtc::SORT_CU,
                    "sort_iota",
                    grid((n as u64).div_ceil(SORT_BLOCK as u64), SORT_BLOCK)?,
                    &[KArg::U64(perm.ptr()), KArg::U64(n as u64)],
                )?;
            }
        }
        return Ok(perm);
    }
    let n_tiles = n.div_ceil(SORT_TILE) as u64;
    let tiles = grid(n_tiles, SORT_BLOCK)?;
    let scan = grid(1, SORT_SCAN_BLOCK)?;
    let counts = dev.alloc::<u32>(RADIX * n_tiles as usize)?;
    let bufs = [dev.alloc::<u32>(n)?, dev.alloc::<u32>(n)?];
    let mut cur: Option<usize> = None;
    for &(w, shift) in &passes {
        let key = keys[w].ptr();
        let perm_in = cur.map_or(0, |c| bufs[c].ptr());
        let out = cur.map_or(0, |c| 1 - c);
        // SAFETY (all three): `key` holds >= n u32, `perm_in` (when not null) n indices < n, `counts` 256 x
        // n_tiles u32, `bufs[out]` n u32; one block per tile of 4096 (the kernels bound-check against n), one
        // block for the scan; the sum of the counts is n < 2^32.
        unsafe {
            dev.launch(
                &nvrtc::SORT_CU,
                "sort_block_hist",
                tiles,
                &[
                    KArg::U64(key),
                    KArg::U64(perm_in),
                    KArg::U64(n as u64),
                    KArg::U32(shift),
                    KArg::U64(n_tiles),
                    KArg::U64(counts.ptr()),
                ],
            )?;
            dev.launch(
                &nvrtc::SORT_CU,
                "sort_scan",
                scan,
                &[KArg::U64(counts.ptr()), KArg::U64(counts.len() as u64)],
            )?;
            dev.launch(
                &nvrtc::SORT_CU,
                "sort_scatter",
                tiles,
                &[
                    KArg::U64(key),
                    KArg::U64(perm_in),
                    KArg::U64(n as u64),
                    KArg::U32(shift),
                    KArg::U64(n_tiles),
                    KArg::U64(counts.ptr()),
                    KArg::U64(bufs[out].ptr()),
                ],
            )?;
        }
        cur = Some(out);
    }
    let [a, b] = bufs;
    Ok(if cur == Some(1) { b } else { a })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_skip_constant_digits() {
        // One word: byte 0 varies, bytes 1..3 constant.
        let mut c = vec![0u32; 4 * RADIX];
        c[3] = 2;
        c[7] = 3;
        c[RADIX] = 5;
        c[2 * RADIX + 9] = 5;
        c[3 * RADIX] = 5;
        assert_eq!(sort_passes(&[c.clone()], 5), vec![(0, 0)]);
        // Two words: the least significant (last) first.
        let mut d = vec![0u32; 4 * RADIX];
        for b in 0..4 {
            d[b * RADIX + b] = 2;
            d[b * RADIX + 100] = 3;
        }
        assert_eq!(
            sort_passes(&[c, d], 5),
            vec![(1, 0), (1, 8), (1, 16), (1, 24), (0, 0)]
        );
    }
}
