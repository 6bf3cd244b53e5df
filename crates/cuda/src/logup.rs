//! The LogUp aux trace on the GPU (mirrors `zkrv_stark::logup::build_aux_trace`; kernels `kernels/logup.cuh`,
//! `kernels/logup.cu` and one generated program per AIR).
//!
//! **Code generation.** [`aux_kernel_source`] turns a table's [`CompiledAir`] into CUDA source: the
//! `symbolic::Circuit` nodes that the interactions read (values and multiplicities; the constraint-only nodes
//! are pruned) become one statement each, in the circuit's topological order, followed by the fingerprints
//! `fp_k = z - (bus_k + sum_l alpha^(l+1) v_{k,l})`, the multiplicity bound checks, one Montgomery batch
//! inversion of the row's fingerprints, the term columns `t_c = sum_{k in group c} ±m_k / fp_k` and the row's
//! sum `sum_c t_c` (written into the running-sum column). The AIR's public values are read from the
//! per-build parameter block (layout in `kernels/logup.cuh`), not written into the source, so it depends on
//! the circuit only and the segments of a run share it. The source is compiled by NVRTC at run time and
//! cached by a hash of the source (in memory and on disk, `crate::nvrtc::cubin_cached`), so each AIR compiles
//! once per machine. The same source compiles as plain C++ with `-DZKRV_HOST_EMU` (the per-row function
//! `aux_row`), which `tests/logup_parity.rs` runs on the host to check the code generator without a GPU.
//!
//! **Running sum.** `kernels/logup.cu` turns the row sums into the inclusive prefix sum over rows (block scan
//! + carry propagation, recursive over the block totals); the bus sum is the last row's value.
//!
//! Every operation is exact field arithmetic, so the output equals the host aux trace bit for bit, and the
//! errors are the host's: [`LogupError::MultiplicityTooLarge`] for the first `(row, interaction)` in row-major
//! order whose multiplicity is `>= 2^log_max_multiplicity`, else [`LogupError::ZeroFingerprint`] for the first
//! zero fingerprint.

use std::fmt::Write as _;

use zkrv_stark::air::{CompiledAir, Direction, TraceRow};
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::logup::{LogupChallenges, LogupError};
use zkrv_stark::poly::domain_generator;
use zkrv_stark::symbolic::Node;

use crate::backend::DeviceTrace;
use crate::device::{cfg, Device, DeviceBuffer, KArg};
use crate::error::CudaError;
use crate::nvrtc;
use crate::stats::TransferStats;

/// The kernel of every generated aux program: `logup_aux_kernel(main, prep, aux, params, err, n, mstride)`, one thread
/// per row.
pub const AUX_KERNEL: &str = "logup_aux_kernel";
/// Threads per block of the generated row kernel (register-heavy straight-line code).
pub const AUX_BLOCK: u32 = 128;
/// Elements per block of `logup_scan_block_kernel` (`SCAN_ITEMS * SCAN_THREADS` in `kernels/logup.cu`).
const SCAN_BLOCK: u64 = 1024;
const SCAN_THREADS: u32 = 256;
/// Transfer-statistics stage of the aux build's own copies (parameters, error flags, the bus sum).
pub const STAGE_AUX: &str = "aux-build";

/// Why the device aux build failed: the trace breaks a LogUp precondition (the host's error), or the device
/// failed.
#[derive(Debug, thiserror::Error)]
pub enum AuxBuildError {
    #[error(transparent)]
    Logup(#[from] LogupError),
    #[error(transparent)]
    Cuda(#[from] CudaError),
}

/// Longest interaction tuple of `air` (0 without interactions).
fn max_tuple(air: &CompiledAir) -> usize {
    air.interactions
        .iter()
        .map(|i| i.values.len())
        .max()
        .unwrap_or(0)
}

/// Offset of public value 0 in the aux parameter block of `air` (`kernels/logup.cuh`): after the fixed head
/// (`LOGUP_P_ALPHA` = 6) and the `max(L, 1)` tuple powers, 3 u64 each. Depends on the AIR's shape only.
fn aux_param_public(air: &CompiledAir) -> usize {
    6 + 3 * max_tuple(air).max(1)
}

/// CUDA source of the aux row kernel of `air` (see the module docs). Deterministic: the same AIR gives the
/// same text (so the CUBIN cache hits); the AIR's public values are read from `params`
/// ([`aux_params`]), so instances that differ only in them (the segments of a run) share one source.
/// Defines `LOGUP_HD void aux_row(const u64* main, const u64* prep,
/// u64* aux, const u64* params, u64* err, u64 row, u64 n, u64 mstride)` and, unless `ZKRV_HOST_EMU` is defined,
/// the kernel [`AUX_KERNEL`]. `main` is `(mstride n) x width` row-major, logical row `r` at physical row
/// `mstride r` (`mstride = 1`; `2` for the zk-randomized `2n`-row main trace, whose even rows are the trace), `prep`
/// `n x preprocessed_width` (may be null when that width is 0), `aux` `n x aux_width`, all row-major u64 in
/// natural order; `params`/`err` as in `kernels/logup.cuh`.
pub fn aux_kernel_source(air: &CompiledAir) -> String {
    let nodes = &air.circuit.nodes;
    let k = air.interactions.len();
    let g = air.logup.groups.len();
    let aw = air.aux_width();
    // Nodes the interactions read, and their operands.
    let roots = air
        .interactions
        .iter()
        .flat_map(|it| it.values.iter().copied().chain([it.multiplicity]));
    let need = needed_nodes(nodes, roots);
    let uses = |p: fn(&Node) -> bool| nodes.iter().zip(&need).any(|(n, &u)| u && p(n));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// Generated by zkrv_cuda::logup::aux_kernel_source for table `{}`: {k} interactions, {g} term \
         columns,\n// main width {}, preprocessed width {}, aux width {aw}, {} of {} circuit nodes.",
        air.name.replace(['\n', '\r'], " "),
        air.width,
        air.preprocessed_width,
        need.iter().filter(|&&u| u).count(),
        nodes.len()
    );
    s.push_str("#include \"logup.cuh\"\n\n");
    if k == 0 {
        // No interactions: the aux trace is the host's `n x 1` zero matrix, written by the launcher.
        return s;
    }
    s.push_str(
        "LOGUP_HD void aux_row(const u64* main, const u64* prep, u64* aux, const u64* params, u64* err, \
         u64 row, u64 n, u64 mstride) {\n",
    );
    let _ = writeln!(s, "    const u64 nxt = row + 1 == n ? 0 : row + 1;");
    if uses(|n| matches!(n, Node::Main { next: false, .. })) {
        let _ = writeln!(
            s,
            "    const u64* m0 = main + row * mstride * {}ull;",
            air.width
        );
    }
    if uses(|n| matches!(n, Node::Main { next: true, .. })) {
        let _ = writeln!(
            s,
            "    const u64* m1 = main + nxt * mstride * {}ull;",
            air.width
        );
    }
    if uses(|n| matches!(n, Node::Preprocessed { next: false, .. })) {
        let _ = writeln!(
            s,
            "    const u64* p0 = prep + row * {}ull;",
            air.preprocessed_width
        );
    }
    if uses(|n| matches!(n, Node::Preprocessed { next: true, .. })) {
        let _ = writeln!(
            s,
            "    const u64* p1 = prep + nxt * {}ull;",
            air.preprocessed_width
        );
    }
    s.push_str("    (void)nxt;\n    (void)mstride;\n");
    let emit = (0..nodes.len()).filter(|&i| need[i]);
    let public = aux_param_public(air);
    emit_nodes(&mut s, nodes, emit, "gl_mul", |leaf| match leaf {
        Node::Main { col, next } => format!("gl_canon({}[{col}])", if next { "m1" } else { "m0" }),
        Node::Preprocessed { col, next } => {
            format!("gl_canon({}[{col}])", if next { "p1" } else { "p0" })
        }
        Node::IsFirstRow => "(row == 0 ? 1ull : 0ull)".into(),
        Node::IsLastRow => "(row == n - 1 ? 1ull : 0ull)".into(),
        Node::IsTransition => {
            "gl_sub(gl_pow(params[LOGUP_P_OMEGA], row), params[LOGUP_P_OMEGA_LAST])".into()
        }
        Node::Public(i) => format!("params[{}]", public + i),
        op => unreachable!("emit_nodes passes leaves only, not {op:?}"),
    });
    let _ = writeln!(
        s,
        "    const u64 bound = params[LOGUP_P_BOUND];\n    u64 ms[{k}];\n    ext3 fp[{k}];\n    bool bad = false;"
    );
    for (idx, it) in air.interactions.iter().enumerate() {
        let _ = writeln!(
            s,
            "    // interaction {idx}: bus {}, {:?}",
            it.bus, it.direction
        );
        let _ = writeln!(
            s,
            "    if (v{m} >= bound) {{ logup_flag(err, row * {k}ull + {idx}ull); bad = true; }}",
            m = it.multiplicity
        );
        let m = match it.direction {
            Direction::Send => format!("v{}", it.multiplicity),
            Direction::Receive => format!("gl_neg(v{})", it.multiplicity),
        };
        let _ = writeln!(s, "    ms[{idx}] = {m};");
        let _ = writeln!(s, "    fp[{idx}] = logup_fp_start(params, {}ull);", it.bus);
        for (l, v) in it.values.iter().enumerate() {
            let _ = writeln!(
                s,
                "    fp[{idx}] = logup_fp_absorb(params, fp[{idx}], {l}, v{v});"
            );
        }
    }
    s.push_str("    if (bad) return;\n");
    let _ = writeln!(
        s,
        "    if (!logup_batch_inverse<{k}>(fp, row, err)) return;"
    );
    let _ = writeln!(s, "    u64* out = aux + row * {aw}ull;");
    s.push_str("    ext3 s = ext3{0, 0, 0};\n");
    for (c, group) in air.logup.groups.iter().enumerate() {
        s.push_str("    {\n        ext3 t = ext3{0, 0, 0};\n");
        for &j in group {
            let _ = writeln!(
                s,
                "        t = ext3_add(t, logup_ext3_mul_base(fp[{j}], ms[{j}]));"
            );
        }
        let _ = writeln!(
            s,
            "        logup_store_ext3(out + {}, t);\n        s = ext3_add(s, t);\n    }}",
            3 * c
        );
    }
    let _ = writeln!(s, "    logup_store_ext3(out + {}, s);", 3 * g);
    s.push_str("}\n\n#ifndef ZKRV_HOST_EMU\n");
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void {AUX_KERNEL}(const u64* main, const u64* prep, u64* aux, \
         const u64* params, u64* err, u64 n, u64 mstride) {{"
    );
    s.push_str(
        "    u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n    if (row < n) aux_row(main, prep, aux, \
         params, err, row, n, mstride);\n}\n#endif\n",
    );
    s
}

/// The circuit nodes that `roots` read: the roots and, transitively, their operands (one reverse sweep over
/// the topological order). `need[i]` says whether node `i` is emitted by [`emit_nodes`].
pub(crate) fn needed_nodes(nodes: &[Node], roots: impl IntoIterator<Item = u32>) -> Vec<bool> {
    let mut need = vec![false; nodes.len()];
    for r in roots {
        need[r as usize] = true;
    }
    for i in (0..nodes.len()).rev() {
        if !need[i] {
            continue;
        }
        match nodes[i] {
            Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) => {
                need[a as usize] = true;
                need[b as usize] = true;
            }
            Node::Neg(a) => need[a as usize] = true,
            _ => {}
        }
    }
    need
}

/// The code generator's node emitter, shared by the aux ([`aux_kernel_source`]) and quotient
/// (`crate::quotient::quotient_kernel_sources`) row kernels: one `const u64 v<i> = ...;` statement per
/// node of `emit` (indices into `nodes`, increasing: the circuit's topological order, operands first). Constants and operations are emitted
/// here, products with the function `mul` (`gl_mul` inline, or a `__noinline__` wrapper where the kernel's
/// compile time needs it); `leaf(node)` gives the C expression of a leaf (main or preprocessed cell,
/// selector), which is where the two kernels differ (trace rows vs LDE rows).
pub(crate) fn emit_nodes(
    s: &mut String,
    nodes: &[Node],
    emit: impl IntoIterator<Item = usize>,
    mul: &str,
    leaf: impl Fn(Node) -> String,
) {
    for i in emit {
        let e = match nodes[i] {
            Node::Const(c) => format!("{c}ull"),
            Node::Add(a, b) => format!("gl_add(v{a}, v{b})"),
            Node::Sub(a, b) => format!("gl_sub(v{a}, v{b})"),
            Node::Mul(a, b) => format!("{mul}(v{a}, v{b})"),
            Node::Neg(a) => format!("gl_neg(v{a})"),
            l => leaf(l),
        };
        let _ = writeln!(s, "    const u64 v{i} = {e};");
    }
}

/// The parameter block of `kernels/logup.cuh` for a trace of height `2^log_height`: `z`, `ω_n`, `ω_n^(n-1)`,
/// `2^log_max_multiplicity`, then `alpha^1 .. alpha^L` for the AIR's longest tuple `L` (powers the
/// challenges lack are zero, which drops those tuple entries exactly like the host's `zip`), then the
/// AIR's public values ([`CompiledAir::public_values`], canonical).
/// Errors if `log_max_multiplicity >= 64`.
pub fn aux_params(
    air: &CompiledAir,
    log_height: u32,
    ch: &LogupChallenges,
    log_max_multiplicity: u32,
) -> Result<Vec<u64>, CudaError> {
    if log_max_multiplicity >= 64 {
        return Err(CudaError::InvalidArgument(format!(
            "log_max_multiplicity {log_max_multiplicity} >= 64"
        )));
    }
    let n = 1u64 << log_height;
    let omega = domain_generator(log_height as usize);
    let omega_last = omega.exp_u64(n - 1);
    let mut p: Vec<u64> = ch.z.0.iter().map(|c| c.as_canonical_u64()).collect();
    p.push(omega.as_canonical_u64());
    p.push(omega_last.as_canonical_u64());
    p.push(1u64 << log_max_multiplicity);
    for l in 0..max_tuple(air).max(1) {
        let a = ch.alpha_powers.get(l).copied().unwrap_or(Ext3::ZERO);
        p.extend(a.0.iter().map(|c| c.as_canonical_u64()));
    }
    debug_assert_eq!(p.len(), aux_param_public(air));
    p.extend(air.public_values.iter().map(|v| v.as_canonical_u64()));
    Ok(p)
}

/// Node values of `air`'s circuit on logical row `row` of the device traces (downloads rows `row` and
/// `row + 1`; main row `r` is physical row `main_row_stride * r`): used to report the multiplicity of a
/// failed bound check exactly as the host computes it.
fn host_nodes_at(
    dev: &Device,
    air: &CompiledAir,
    main: &DeviceBuffer<u64>,
    main_row_stride: usize,
    prep: Option<&DeviceBuffer<u64>>,
    log_height: u32,
    row: usize,
) -> Result<Vec<F>, CudaError> {
    let n = 1usize << log_height;
    let nxt = (row + 1) % n;
    let fetch = |buf: &DeviceBuffer<u64>, w: usize, r: usize| -> Result<Vec<F>, CudaError> {
        let mut v = vec![0u64; w];
        dev.copy_dtoh(buf, r * w, &mut v)?;
        Ok(v.into_iter().map(F::new).collect())
    };
    let (m0, m1) = (
        fetch(main, air.width, main_row_stride * row)?,
        fetch(main, air.width, main_row_stride * nxt)?,
    );
    let (p0, p1) = match prep {
        Some(p) if air.preprocessed_width > 0 => (
            fetch(p, air.preprocessed_width, row)?,
            fetch(p, air.preprocessed_width, nxt)?,
        ),
        _ => (Vec::new(), Vec::new()),
    };
    let omega = domain_generator(log_height as usize);
    let omega_last = omega.exp_u64(n as u64 - 1);
    let tr = TraceRow {
        main: &m0,
        main_next: &m1,
        prep: &p0,
        prep_next: &p1,
        first: if row == 0 { F::ONE } else { F::ZERO },
        last: if row == n - 1 { F::ONE } else { F::ZERO },
        transition: omega.exp_u64(row as u64) - omega_last,
    };
    let mut out = Vec::new();
    air.circuit.eval(&tr, &air.public_values, &mut out);
    Ok(out)
}

/// Inclusive prefix sum in Ext3, in place, of the `n` elements at device address `ptr + 8 * stride * i`
/// (3 u64 each). Also the exact integer prefix sum of three u64 counters per element when every element and
/// every prefix is below the Goldilocks prime (Goldilocks addition of such values is integer addition): the
/// request lists' offsets and run lengths (`zkrv_machine_cuda::tables::requests`). Errors: launch failures.
pub fn scan_ext3(dev: &Device, ptr: u64, stride: u64, n: u64) -> Result<(), CudaError> {
    if n == 0 {
        return Ok(());
    }
    let blocks = n.div_ceil(SCAN_BLOCK);
    if blocks > u32::MAX as u64 {
        return Err(CudaError::InvalidArgument(format!("scan of {n} elements")));
    }
    let sums = dev.alloc::<u64>(3 * blocks as usize)?;
    // SAFETY: `ptr` addresses n strided Ext3 elements (caller); `sums` holds 3 * blocks u64; launch shape as
    // documented in kernels/logup.cu.
    unsafe {
        dev.launch(
            &nvrtc::LOGUP_CU,
            "logup_scan_block_kernel",
            cfg(blocks as u32, SCAN_THREADS, 0),
            &[
                KArg::U64(ptr),
                KArg::U64(stride),
                KArg::U64(n),
                KArg::U64(sums.ptr()),
            ],
        )?;
    }
    if blocks > 1 {
        scan_ext3(dev, sums.ptr(), 3, blocks)?;
        let threads = 256u32;
        let grid = n.div_ceil(threads as u64);
        if grid > u32::MAX as u64 {
            return Err(CudaError::InvalidArgument(format!("scan of {n} elements")));
        }
        // SAFETY: as above; `sums` now holds the inclusive prefix of the block totals.
        unsafe {
            dev.launch(
                &nvrtc::LOGUP_CU,
                "logup_scan_add_kernel",
                cfg(grid as u32, threads, 0),
                &[
                    KArg::U64(ptr),
                    KArg::U64(stride),
                    KArg::U64(n),
                    KArg::U64(sums.ptr()),
                ],
            )?;
        }
    }
    Ok(())
}

/// Builds `air`'s LogUp aux trace on the device from its resident main trace: returns the aux trace
/// (`2^log_height x aux_width` row-major u64, natural order, canonical values; `2^log_height x 1` zeros when
/// the table has no interactions, like the host) and the bus sum (the last running-sum value), equal bit for
/// bit to `zkrv_stark::logup::build_aux_trace` on host copies of the same traces.
///
/// `main`: `2^log_height x air.width`; `prep`: `2^log_height x air.preprocessed_width` (required iff that width
/// is nonzero). `table` names the table in `stats` (stage [`STAGE_AUX`]: the parameter block and error flags
/// uploaded, the flags and the bus sum downloaded). Neither input is modified.
#[allow(clippy::too_many_arguments)]
pub fn build_aux_device(
    dev: &Device,
    air: &CompiledAir,
    main: &DeviceBuffer<u64>,
    log_height: u32,
    prep: Option<&DeviceBuffer<u64>>,
    challenges: &LogupChallenges,
    log_max_multiplicity: u32,
    stats: &mut TransferStats,
    table: &str,
) -> Result<(DeviceTrace, Ext3), AuxBuildError> {
    build_aux_device_strided(
        dev,
        air,
        main,
        1,
        log_height,
        prep,
        challenges,
        log_max_multiplicity,
        stats,
        table,
    )
}

/// [`build_aux_device`] on a main trace read with a row stride: `main` is `(main_row_stride 2^log_height) x
/// air.width` row-major u64 and logical row `r` is physical row `main_row_stride * r` (the next row of the
/// last is row 0). zk mode passes the committed `2n x w` randomized main trace with `main_row_stride = 2`
/// (its even rows are the trace, `zkrv_stark::zk::randomize_trace`); the result equals the host build on
/// `zkrv_stark::zk::even_rows` of it. The preprocessed trace is read with stride 1 (zk does not randomize
/// it). Errors (besides [`build_aux_device`]'s): `main_row_stride` not 1 or 2.
#[allow(clippy::too_many_arguments)]
pub fn build_aux_device_strided(
    dev: &Device,
    air: &CompiledAir,
    main: &DeviceBuffer<u64>,
    main_row_stride: usize,
    log_height: u32,
    prep: Option<&DeviceBuffer<u64>>,
    challenges: &LogupChallenges,
    log_max_multiplicity: u32,
    stats: &mut TransferStats,
    table: &str,
) -> Result<(DeviceTrace, Ext3), AuxBuildError> {
    if !(1..=2).contains(&main_row_stride) {
        return Err(CudaError::InvalidArgument(format!(
            "aux build of `{}`: main row stride {main_row_stride} (1 or 2)",
            air.name
        ))
        .into());
    }
    if log_height > 32 || main.len() != (air.width * main_row_stride) << log_height {
        return Err(CudaError::InvalidArgument(format!(
            "aux build of `{}`: main buffer of {} is not ({main_row_stride} 2^{log_height}) x {}",
            air.name,
            main.len(),
            air.width
        ))
        .into());
    }
    let n = 1usize << log_height;
    let prep_ptr = match (air.preprocessed_width, prep) {
        (0, _) => 0,
        (pw, Some(p)) if p.len() == pw << log_height => p.ptr(),
        (pw, p) => {
            return Err(CudaError::InvalidArgument(format!(
                "aux build of `{}`: preprocessed buffer of {:?} is not 2^{log_height} x {pw}",
                air.name,
                p.map(|p| p.len())
            ))
            .into())
        }
    };
    let k = air.interactions.len();
    if k == 0 {
        let data = dev.alloc_zeros::<u64>(n)?;
        return Ok((
            DeviceTrace {
                data,
                width: 1,
                log_height,
            },
            Ext3::ZERO,
        ));
    }
    let aw = air.aux_width();
    let g = air.logup.groups.len();
    let params = aux_params(air, log_height, challenges, log_max_multiplicity)?;
    let d_params = dev.upload(&params)?;
    let d_err = dev.upload(&[u64::MAX; 2])?;
    stats.add_h2d(STAGE_AUX, table, (params.len() * 8 + 16) as u64);
    let aux = dev.alloc::<u64>(n * aw)?;
    let src = aux_kernel_source(air);
    let name = program_name(&src);
    let grid = (n as u64).div_ceil(AUX_BLOCK as u64);
    // SAFETY: `main` is (main_row_stride n) x width and `prep` n x preprocessed_width (checked above) or unused (null when the
    // width is 0: the generated code then never reads it); `aux` holds n x aux_width u64; `params` is the
    // block `aux_params` built for this AIR; `err` holds 2 u64; one thread per row.
    unsafe {
        dev.launch_generated(
            &name,
            &src,
            AUX_KERNEL,
            cfg(grid as u32, AUX_BLOCK, 0),
            &[
                KArg::U64(main.ptr()),
                KArg::U64(prep_ptr),
                KArg::U64(aux.ptr()),
                KArg::U64(d_params.ptr()),
                KArg::U64(d_err.ptr()),
                KArg::U64(n as u64),
                KArg::U64(main_row_stride as u64),
            ],
        )?;
    }
    let err = dev.download(&d_err)?;
    stats.add_d2h(STAGE_AUX, table, 16);
    if err[0] != u64::MAX {
        let (row, interaction) = ((err[0] / k as u64) as usize, (err[0] % k as u64) as usize);
        let nodes = host_nodes_at(dev, air, main, main_row_stride, prep, log_height, row)?;
        let it = &air.interactions[interaction];
        return Err(LogupError::MultiplicityTooLarge {
            table: air.name.clone(),
            row,
            interaction,
            bus: it.bus,
            value: nodes[it.multiplicity as usize].as_canonical_u64(),
            bits: log_max_multiplicity,
        }
        .into());
    }
    if err[1] != u64::MAX {
        return Err(LogupError::ZeroFingerprint {
            table: air.name.clone(),
            row: (err[1] / k as u64) as usize,
            interaction: (err[1] % k as u64) as usize,
        }
        .into());
    }
    scan_ext3(dev, aux.ptr() + 8 * (3 * g) as u64, aw as u64, n as u64)?;
    let mut last = [0u64; 3];
    dev.copy_dtoh(&aux, (n - 1) * aw + 3 * g, &mut last)?;
    stats.add_d2h(STAGE_AUX, table, 24);
    Ok((
        DeviceTrace {
            data: aux,
            width: aw,
            log_height,
        },
        Ext3(last.map(F::new)),
    ))
}

/// The NVRTC program name of a generated source (the CUBIN cache key hashes the full source anyway).
fn program_name(src: &str) -> String {
    format!("logup_aux_{:016x}.cu", fnv64(src.as_bytes()))
}

/// The NVRTC jobs `(program name, source)` of the aux build of `airs`: the scan program, then one aux
/// program per AIR with interactions (for [`precompile`]).
pub fn aux_compile_jobs(airs: &[CompiledAir]) -> Vec<(String, String)> {
    let scan = &crate::nvrtc::LOGUP_CU;
    let mut jobs: Vec<(String, String)> = vec![(scan.name.into(), scan.src.into())];
    for a in airs.iter().filter(|a| !a.interactions.is_empty()) {
        let src = aux_kernel_source(a);
        jobs.push((program_name(&src), src));
    }
    jobs
}

/// Starts compiling `jobs` (`(program name, source)`, e.g. [`aux_compile_jobs`] and
/// `crate::quotient::quotient_compile_jobs`) for `arch` on a background thread (several NVRTC compiles at
/// once, one per host core at most, in list order), filling the CUBIN cache so that the aux builds and
/// quotients later find them ready; returns at once. Every job is compiled with [`crate::nvrtc::HEADERS`], the
/// headers of this crate's programs and generated sources (so the cache keys match the launches'). Errors are left for the launch to report (it compiles
/// again). The first proof on a machine with a cold disk cache otherwise pays one sequential compile per
/// table (0.3-1 s each) inside the aux and quotient phases.
pub fn precompile(arch: &str, jobs: Vec<(String, String)>) {
    if jobs.is_empty() {
        return;
    }
    let arch = arch.to_string();
    let spawned = std::thread::Builder::new()
        .name("zkrv-nvrtc".into())
        .spawn(move || {
            let next = std::sync::atomic::AtomicUsize::new(0);
            let workers = std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(jobs.len());
            std::thread::scope(|sc| {
                for _ in 0..workers {
                    sc.spawn(|| loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((name, src)) = jobs.get(i) else {
                            break;
                        };
                        let _ = crate::nvrtc::cubin_cached(name, src, crate::nvrtc::HEADERS, &arch);
                    });
                }
            });
        });
    // Without a thread the programs compile on first use instead.
    drop(spawned);
}

/// FNV-1a 64 over `b`.
pub(crate) fn fnv64(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
