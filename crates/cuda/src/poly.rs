//! Launchers for `kernels/poly.cu`: batched NTT / inverse NTT and the coset LDE (mirrors `zkrv_stark::poly`).
//!
//! Shapes: every matrix is row-major `rows x width` u64 (canonical Goldilocks values; non-canonical inputs are
//! reduced on load). Roots of unity are Plonky3's `two_adic_generator` (as in crates/stark), so outputs are
//! bit-identical to the CPU functions.
//!
//! The NTT is decimation in frequency with up to `KMAX` stages fused per launch in shared memory (default 8, so
//! a size-2^24 transform takes 3 passes over memory instead of 24); see `kernels/poly.cu`.

use std::sync::Arc;

use zkrv_stark::field::{
    Field, PrimeCharacteristicRing, PrimeField64, TwoAdicField, COSET_SHIFT, F,
};

use crate::device::{cfg, Device, DeviceBuffer, KArg};
use crate::error::CudaError;
use crate::nvrtc;

/// Largest supported log2 transform size (Goldilocks two-adicity is 32; tables are 2^log entries).
pub const MAX_LOG_N: u32 = 28;

/// Forward and inverse twiddle tables: `table[h + i] = w_{2h}^i` (resp. `w_{2h}^-i`), `2^log_max` entries.
pub struct Twiddles {
    pub log_max: u32,
    pub fwd: DeviceBuffer<u64>,
    pub inv: DeviceBuffer<u64>,
}

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Twiddle tables covering transforms up to size 2^log_n (built once, grown on demand; at least 2^16).
pub(crate) fn twiddles(dev: &Device, log_n: u32) -> Result<Arc<Twiddles>, CudaError> {
    if log_n > MAX_LOG_N {
        return Err(CudaError::InvalidArgument(format!(
            "log size {log_n} > {MAX_LOG_N}"
        )));
    }
    let mut g = dev
        .twiddles
        .lock()
        .map_err(|_| CudaError::Cache("poisoned lock".into()))?;
    if let Some(t) = g.as_ref() {
        if t.log_max >= log_n {
            return Ok(t.clone());
        }
    }
    let log_max = log_n.max(16);
    let roots: Vec<u64> = (0..=log_max)
        .map(|j| F::two_adic_generator(j as usize).as_canonical_u64())
        .collect();
    let inv_roots: Vec<u64> = (0..=log_max)
        .map(|j| {
            F::two_adic_generator(j as usize)
                .inverse()
                .as_canonical_u64()
        })
        .collect();
    let make = |r: &[u64]| -> Result<DeviceBuffer<u64>, CudaError> {
        let d_roots = dev.upload(r)?;
        let table = dev.alloc::<u64>(1usize << log_max)?;
        let n = 1u64 << log_max;
        let grid = n.div_ceil(256).min(65_535 * 16) as u32;
        // SAFETY: table has 2^log_max entries, roots log_max + 1.
        unsafe {
            dev.launch(
                &nvrtc::POLY_CU,
                "twiddles_kernel",
                cfg(grid, 256, 0),
                &[
                    KArg::U64(table.ptr()),
                    KArg::U64(d_roots.ptr()),
                    KArg::U32(log_max),
                ],
            )?;
        }
        Ok(table)
    };
    let t = Arc::new(Twiddles {
        log_max,
        fwd: make(&roots)?,
        inv: make(&inv_roots)?,
    });
    *g = Some(t.clone());
    Ok(t)
}

/// In-place-capable DIF transform of every block of `2^log_n` rows of `src` (`rows x width`), written to
/// `dst` (may equal `src`): natural-order input, bit-reversed output, no 1/n scaling. `inverse` selects the
/// inverse roots.
///
/// # Safety
/// `src` and `dst` must be live device buffers of `rows * width` u64 on `dev`.
pub(crate) unsafe fn dif_raw(
    dev: &Device,
    src: u64,
    dst: u64,
    rows: usize,
    width: usize,
    log_n: u32,
    inverse: bool,
) -> Result<(), CudaError> {
    let n = 1usize << log_n;
    if !rows.is_multiple_of(n) || width == 0 || rows == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "NTT of size 2^{log_n} over {rows} rows x {width}"
        )));
    }
    if log_n == 0 {
        if src != dst {
            dev.bind()?;
            // SAFETY: caller guarantees both buffers hold rows * width u64.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(
                    dst,
                    src,
                    rows * width * 8,
                    dev.stream.cu_stream(),
                )
            }
            .map_err(|e| crate::error::driver_err("cuMemcpyDtoDAsync", e))?;
        }
        return Ok(());
    }
    let tw = twiddles(dev, log_n)?;
    let table = if inverse { tw.inv.ptr() } else { tw.fwd.ptr() };
    let kmax = env_u32("ZKRV_NTT_KMAX", 8).clamp(1, 12);
    let tile_elems = env_u32("ZKRV_NTT_TILE", 4096).clamp(256, 16384) as usize;
    let block = env_u32("ZKRV_NTT_BLOCK", 256)
        .clamp(256, 1024)
        .next_power_of_two();
    let passes = log_n.div_ceil(kmax);
    let kernel = if env_u32("ZKRV_NTT_RADIX", 4) == 4 {
        "ntt_dif_group_r4_kernel"
    } else {
        "ntt_dif_group_kernel"
    };
    let mut remaining = log_n;
    let mut from = src;
    for p in 0..passes {
        // Spread the stages evenly, larger groups first.
        let left = passes - p;
        let k = remaining.div_ceil(left);
        let log_s = remaining - k;
        let span = (1usize << log_s) * width;
        let tile = (tile_elems >> k)
            .clamp(1, 256)
            .min(span.next_power_of_two());
        let ntiles = span.div_ceil(tile);
        let segments = rows >> (log_s + k);
        let blocks = segments * ntiles;
        if blocks > u32::MAX as usize {
            return Err(CudaError::InvalidArgument(
                "NTT too large for one launch".into(),
            ));
        }
        let smem = ((1usize << k) * tile * 8) as u32;
        // SAFETY: shapes checked above; block (a power of two >= 256) is a multiple of tile (a power of two <= 256).
        unsafe {
            dev.launch(
                &nvrtc::POLY_CU,
                kernel,
                cfg(blocks as u32, block, smem),
                &[
                    KArg::U64(from),
                    KArg::U64(dst),
                    KArg::U64(table),
                    KArg::U32(width as u32),
                    KArg::U32(log_s),
                    KArg::U32(k),
                    KArg::U32(tile.trailing_zeros()),
                ],
            )?;
        }
        from = dst;
        remaining -= k;
    }
    Ok(())
}

/// In-place DIF NTT of every block of `2^log_n` rows of `d` (`rows x width`, row-major): natural-order input,
/// **bit-reversed** output, no 1/n factor; `inverse` uses the inverse roots. The building block of
/// [`coset_lde_batch`], exposed for benchmarks and for callers that want bit-reversed evaluations.
pub fn ntt_dif_in_place(
    dev: &Device,
    d: &DeviceBuffer<u64>,
    rows: usize,
    width: usize,
    log_n: u32,
    inverse: bool,
) -> Result<(), CudaError> {
    if d.len() != rows * width {
        return Err(CudaError::InvalidArgument(format!(
            "buffer of {} is not {rows} x {width}",
            d.len()
        )));
    }
    // SAFETY: d holds rows * width u64 (checked).
    unsafe { dif_raw(dev, d.ptr(), d.ptr(), rows, width, log_n, inverse) }
}

/// Row bit-reversal within blocks of `2^log_n` rows, times `scale`: `dst[bitrev(i)] = src[i] * scale`.
///
/// # Safety
/// `src != dst`, both live buffers of `rows * width` u64.
pub(crate) unsafe fn bitrev_rows_raw(
    dev: &Device,
    src: u64,
    dst: u64,
    rows: usize,
    width: usize,
    log_n: u32,
    scale: u64,
) -> Result<(), CudaError> {
    let cells = (rows * width) as u64;
    let grid = cells.div_ceil(256).min(1 << 20) as u32;
    // SAFETY: forwarded from the caller.
    unsafe {
        dev.launch(
            &nvrtc::POLY_CU,
            "bitrev_rows_scale_kernel",
            cfg(grid.max(1), 256, 0),
            &[
                KArg::U64(src),
                KArg::U64(dst),
                KArg::U32(log_n),
                KArg::U32(width as u32),
                KArg::U64(cells),
                KArg::U64(scale),
            ],
        )
    }
}

fn check_shape(d: &DeviceBuffer<u64>, log_n: u32, width: usize) -> Result<usize, CudaError> {
    if log_n > MAX_LOG_N || width == 0 || width > u32::MAX as usize {
        return Err(CudaError::InvalidArgument(format!(
            "shape 2^{log_n} x {width}"
        )));
    }
    let n = 1usize << log_n;
    if d.len() != n * width {
        return Err(CudaError::InvalidArgument(format!(
            "buffer of {} elements is not 2^{log_n} x {width}",
            d.len()
        )));
    }
    Ok(n)
}

/// Forward DFT of each column: `d` is `2^log_n x width` row-major, evaluations of the column polynomials
/// (coefficients in natural order) at `w_n^i` for row i, natural order. Matches `p3_dft::Radix2Dit::dft_batch`.
pub fn dft_batch(
    dev: &Device,
    d: &DeviceBuffer<u64>,
    log_n: u32,
    width: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let n = check_shape(d, log_n, width)?;
    let tmp = dev.alloc::<u64>(n * width)?;
    let out = dev.alloc::<u64>(n * width)?;
    // SAFETY: both buffers hold n * width u64.
    unsafe {
        dif_raw(dev, d.ptr(), tmp.ptr(), n, width, log_n, false)?;
        bitrev_rows_raw(dev, tmp.ptr(), out.ptr(), n, width, log_n, 1)?;
    }
    Ok(out)
}

/// Inverse DFT of each column (`2^log_n x width`, natural order in and out), including the 1/n factor.
/// Matches `p3_dft::Radix2Dit::idft_batch`.
pub fn idft_batch(
    dev: &Device,
    d: &DeviceBuffer<u64>,
    log_n: u32,
    width: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let n = check_shape(d, log_n, width)?;
    let tmp = dev.alloc::<u64>(n * width)?;
    let out = dev.alloc::<u64>(n * width)?;
    let n_inv = F::from_u64(n as u64).inverse().as_canonical_u64();
    // SAFETY: both buffers hold n * width u64.
    unsafe {
        dif_raw(dev, d.ptr(), tmp.ptr(), n, width, log_n, true)?;
        bitrev_rows_raw(dev, tmp.ptr(), out.ptr(), n, width, log_n, n_inv)?;
    }
    Ok(out)
}

/// Bit-reverses `x` over `bits` bits.
pub fn bit_reverse(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Low-degree extension on the coset `g * H_{n * 2^log_blowup}` (g = 7) of a trace.
///
/// Input: `d_trace`, `2^log_n x width` row-major, row i = evaluation at `w_n^i` (natural order); not modified.
/// Output: `(2^log_n * 2^log_blowup) x width` row-major in **bit-reversed** row order: row i is the evaluation at
/// `g * w_{nB}^{bitrev(i)}` (docs/architecture.md, "LDE"). Same bytes as `zkrv_stark::poly::lde_batch`.
pub fn coset_lde_batch(
    dev: &Device,
    d_trace: &DeviceBuffer<u64>,
    log_n: u32,
    width: usize,
    log_blowup: u32,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let n = check_shape(d_trace, log_n, width)?;
    if log_n + log_blowup > MAX_LOG_N {
        return Err(CudaError::InvalidArgument(format!(
            "LDE size 2^{}",
            log_n + log_blowup
        )));
    }
    let blowup = 1usize << log_blowup;
    let coeffs = dev.alloc::<u64>(n * width)?;
    // SAFETY: d_trace and coeffs hold n * width u64.
    unsafe { dif_raw(dev, d_trace.ptr(), coeffs.ptr(), n, width, log_n, true)? };
    let w_big = F::two_adic_generator((log_n + log_blowup) as usize);
    let g = F::from_u64(COSET_SHIFT);
    let shifts: Vec<u64> = (0..blowup)
        .map(|a| (g * w_big.exp_u64(bit_reverse(a, log_blowup) as u64)).as_canonical_u64())
        .collect();
    let d_shifts = dev.upload(&shifts)?;
    let n_inv = F::from_u64(n as u64).inverse().as_canonical_u64();
    let out = dev.alloc::<u64>(n * blowup * width)?;
    // SAFETY: coeffs is n x width, out is (n * blowup) x width, shifts has blowup entries; grid (n/32, blowup).
    unsafe {
        launch_scatter(
            dev,
            coeffs.ptr(),
            out.ptr(),
            d_shifts.ptr(),
            log_n,
            width,
            blowup,
            n_inv,
        )?;
        dif_raw(dev, out.ptr(), out.ptr(), n * blowup, width, log_n, false)?;
    }
    drop(coeffs);
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
unsafe fn launch_scatter(
    dev: &Device,
    coeffs: u64,
    out: u64,
    shifts: u64,
    log_n: u32,
    width: usize,
    blowup: usize,
    n_inv: u64,
) -> Result<(), CudaError> {
    let n = 1usize << log_n;
    let mut c = cfg(n.div_ceil(32) as u32, 256, 0);
    c.grid_dim.1 = blowup as u32;
    // SAFETY: forwarded from coset_lde_batch.
    unsafe {
        dev.launch(
            &nvrtc::POLY_CU,
            "lde_scatter_kernel",
            c,
            &[
                KArg::U64(coeffs),
                KArg::U64(out),
                KArg::U64(shifts),
                KArg::U32(log_n),
                KArg::U32(width as u32),
                KArg::U64(n_inv),
            ],
        )
    }
}

/// The raw coefficients [`coset_lde_batch`] starts from: the inverse DIF of a trace (`2^log_n x width`,
/// natural order in), `2^log_n x width` with row `i` holding `n · c_{bitrev(i)}` (coefficient `c_j` of
/// `X^j`, not yet divided by `n`). What a recomputing commitment keeps instead of the LDE
/// ([`crate::commit::LdeKind::Coeffs`]): `1 / blowup` of its bytes.
pub fn raw_coeffs(
    dev: &Device,
    d_trace: &DeviceBuffer<u64>,
    log_n: u32,
    width: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let n = check_shape(d_trace, log_n, width)?;
    let coeffs = dev.alloc::<u64>(n * width)?;
    // SAFETY: d_trace and coeffs hold n * width u64.
    unsafe { dif_raw(dev, d_trace.ptr(), coeffs.ptr(), n, width, log_n, true)? };
    Ok(coeffs)
}

/// Evaluations of the column polynomials of raw coefficients ([`raw_coeffs`], `2^log_n x width`) on the
/// cosets `x_g·H_K`, `K = 2^log_k <= n`, one per `xs[g]`: `(|xs|·K) x width` row-major, row `g·K + j` =
/// `p(x_g · ω_K^{bitrev_k(j)})` (bit-reversed within each group). `K = n`: one coset scatter per group and a
/// size-`n` NTT (the LDE's own steps); `K < n`: the coefficients folded modulo `X^K - x_g^K`
/// (`coset_fold_kernel`, `n / K` terms per cell, split across up to 2^15 thread blocks when there are few
/// cells and summed by `fold_sum_kernel`), then size-`K` NTTs.
pub fn coset_evals(
    dev: &Device,
    coeffs: &DeviceBuffer<u64>,
    log_n: u32,
    width: usize,
    log_k: u32,
    xs: &[F],
) -> Result<DeviceBuffer<u64>, CudaError> {
    let n = check_shape(coeffs, log_n, width)?;
    if log_k > log_n || xs.is_empty() || xs.len() > 65_535 {
        return Err(CudaError::InvalidArgument(format!(
            "coset evaluations on {} cosets of 2^{log_k} from 2^{log_n} coefficients",
            xs.len()
        )));
    }
    let k_rows = 1usize << log_k;
    let x_words: Vec<u64> = xs.iter().map(|x| x.as_canonical_u64()).collect();
    let d_xs = dev.upload(&x_words)?;
    let n_inv = F::from_u64(n as u64).inverse().as_canonical_u64();
    let out = dev.alloc::<u64>(xs.len() * k_rows * width)?;
    // SAFETY: coeffs is n x width, out (|xs| K) x width, d_xs |xs| entries; grids as the kernels expect.
    unsafe {
        if log_k == log_n {
            launch_scatter(
                dev,
                coeffs.ptr(),
                out.ptr(),
                d_xs.ptr(),
                log_n,
                width,
                xs.len(),
                n_inv,
            )?;
        } else {
            let cells = (k_rows * width) as u64;
            // Split the n/K terms of each cell so that about 2^20 threads run (few cells: queries).
            let threads = cells * xs.len() as u64;
            let log_terms = log_n - log_k;
            let log_split = (20u32.saturating_sub(threads.max(1).ilog2()))
                .min(log_terms)
                .min(15);
            let partial = if log_split > 0 {
                Some(dev.alloc::<u64>((xs.len() * k_rows * width) << log_split)?)
            } else {
                None
            };
            let mut c = cfg(cells.div_ceil(256) as u32, 256, 0);
            c.grid_dim.1 = xs.len() as u32;
            c.grid_dim.2 = 1 << log_split;
            dev.launch(
                &nvrtc::POLY_CU,
                "coset_fold_kernel",
                c,
                &[
                    KArg::U64(coeffs.ptr()),
                    KArg::U64(partial.as_ref().map_or(out.ptr(), |p| p.ptr())),
                    KArg::U64(d_xs.ptr()),
                    KArg::U32(log_n),
                    KArg::U32(log_k),
                    KArg::U32(width as u32),
                    KArg::U64(n_inv),
                    KArg::U32(log_split),
                ],
            )?;
            if let Some(p) = &partial {
                let all = cells * xs.len() as u64;
                dev.launch(
                    &nvrtc::POLY_CU,
                    "fold_sum_kernel",
                    cfg(all.div_ceil(256).min(1 << 16) as u32, 256, 0),
                    &[
                        KArg::U64(p.ptr()),
                        KArg::U64(out.ptr()),
                        KArg::U64(all),
                        KArg::U32(1 << log_split),
                    ],
                )?;
            }
        }
        dif_raw(
            dev,
            out.ptr(),
            out.ptr(),
            xs.len() * k_rows,
            width,
            log_k,
            false,
        )?;
    }
    Ok(out)
}

/// The coset of `H_{2^log_k}` holding LDE storage rows `[a·2^log_k, (a+1)·2^log_k)` of an LDE of height
/// `2^log_lde` (bit-reversed on `g·H_{2^log_lde}`): its base point `g·ω_{2^log_lde}^{bitrev(a)}`, `bitrev`
/// over `log_lde - log_k` bits, so that storage row `a·2^log_k + j` is the point `x_a·ω^{bitrev_k(j)}`.
pub fn lde_group_point(log_lde: u32, log_k: u32, a: usize) -> F {
    let w = F::two_adic_generator(log_lde as usize);
    F::from_u64(COSET_SHIFT) * w.exp_u64(bit_reverse(a, log_lde - log_k) as u64)
}

/// Storage rows of the LDE (blowup `2^log_blowup`) of raw coefficients `coeffs` (`2^log_n x width`), in
/// groups of `2^log_k` (`log_k <= log_n`): group `g` is rows `[groups[g]·2^log_k, (groups[g]+1)·2^log_k)`.
/// Returns `(|groups|·2^log_k) x width`, the same values as those rows of [`coset_lde_batch`]'s output.
pub fn lde_rows_from_coeffs(
    dev: &Device,
    coeffs: &DeviceBuffer<u64>,
    log_n: u32,
    width: usize,
    log_blowup: u32,
    log_k: u32,
    groups: &[usize],
) -> Result<DeviceBuffer<u64>, CudaError> {
    let log_lde = log_n + log_blowup;
    if let Some(&a) = groups
        .iter()
        .find(|&&a| (a as u64) << log_k >= 1u64 << log_lde)
    {
        return Err(CudaError::InvalidArgument(format!(
            "LDE row group {a} of 2^{log_k} beyond 2^{log_lde} rows"
        )));
    }
    let xs: Vec<F> = groups
        .iter()
        .map(|&a| lde_group_point(log_lde, log_k, a))
        .collect();
    coset_evals(dev, coeffs, log_n, width, log_k, &xs)
}

/// The natural-order trace (`2^log_n x width`, row `i` at `ω_n^i`) of raw coefficients ([`raw_coeffs`]).
pub fn natural_from_coeffs(
    dev: &Device,
    coeffs: &DeviceBuffer<u64>,
    log_n: u32,
    width: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let n = check_shape(coeffs, log_n, width)?;
    let rev = coset_evals(dev, coeffs, log_n, width, log_n, &[F::ONE])?;
    let out = dev.alloc::<u64>(n * width)?;
    // SAFETY: rev and out hold n x width u64 and are distinct.
    unsafe { bitrev_rows_raw(dev, rev.ptr(), out.ptr(), n, width, log_n, 1)? };
    Ok(out)
}
