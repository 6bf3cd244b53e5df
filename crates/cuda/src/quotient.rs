//! The quotient round on the GPU (mirrors `zkrv_stark::backend::quotient_host` = `quotient_values` +
//! `quotient_chunks`, and `zkrv_stark::zk::{randomize_quotient, random_codeword}`; kernels
//! `kernels/quotient.cuh` + one generated program per AIR, `kernels/quotient.cu`, `kernels/poly.cu`,
//! `kernels/zk.cu`).
//!
//! **Code generation.** [`quotient_kernel_sources`] is the LogUp aux generator grown to quotients: the same
//! node emitter (`crate::logup::emit_nodes`) writes every circuit node the constraints and interactions read
//! as one `const u64 v<i> = ...;` statement (leaves: LDE cells of the row and its next row, selectors), then
//! the table's fold plan ([`CompiledAir::fold_part_with`], the function behind [`CompiledAir::fold_with`]
//! that the host quotient and the verifier run over field values) is run over a symbolic [`FoldAlgebra`]
//! that emits one `const ext3 e<k> = ...;` statement per extension operation. The challenges, the powers
//! `alpha^(N-1-i)`, the AIR's public values ([`CompiledAir::public_values`]: a segment's start pc, ...) and
//! the `Z_H` table are read from a per-proof parameter block (layout in `kernels/quotient.cuh`), so the
//! sources depend on the AIR's circuit only (every segment of a run shares them) and their CUBINs are cached like the aux
//! programs' (memory + disk, compiled on parallel threads in the background by `CudaBackend::prepare`). The
//! same sources compile as C++ with `-DZKRV_HOST_EMU` (the per-row function `quotient_row`;
//! `tests/quotient_parity.rs`).
//!
//! **Split into parts.** NVRTC's time on one straight-line kernel grows faster than its length (NVRTC 13.0,
//! sm_90: SHA256's 14.6k statements took 78 s, KECCAKF's 57.5k did not finish in 10 minutes). A table whose
//! fold has more than [`QUOTIENT_SPLIT_STATEMENTS`] statements (the three precompile tables; no RV64IM
//! machine table) is split, in fold order, into parts of about [`QUOTIENT_PART_STATEMENTS`] (each own
//! constraint, and the whole LogUp fold, stays in one part), each its own program and kernel
//! ([`QUOTIENT_KERNEL`]) that emits only the nodes its constraints read. Launched in order on one stream
//! over the same rows, the first part writes its partial sum `sum_i alpha^(N-1-i) C_i` at row `s` of the
//! `M x 3` output, each later part adds its own, and the last (which holds the LogUp fold) multiplies by
//! `1/Z_H`. Field arithmetic is exact, so the result equals the host's bit for bit. The parts read the LDE
//! cells and parameters through the read-only cache (`quot_cell`, `quot_ld_nc` in `kernels/quotient.cuh`),
//! which keeps NVVM's time about linear in the part's length (an unsplit program keeps plain loads).
//!
//! **Steps** of one table's quotient (`n = 2^log_n` rows, `c` chunks, LDEs of blowup `2^log_blowup`,
//! bit-reversed): 1. the generated kernel (or its parts, in order), one thread per storage row `s < M` of the
//! quotient domain `g·H_M` (`M = n 2^log_q`, `zkrv_stark::backend::quotient_log_extension`), writes
//! `q = C / Z_H` at row `s` (`M x 3` u64, storage order); 2. `bitrev_rows_scale_kernel` to natural
//! order; 3. inverse DIF NTT of size `M` (bit-reversed, unscaled coefficients); 4. `quotient_split_kernel`: coefficient `k = j n + r` times
//! `g^-k / M` into chunk `j`, row `r` (`n x 3c`); 5. forward DFT of each chunk (DIF + bit reversal): the
//! `n x 3c` natural-order matrix of `quotient_host`. zk: [`randomize_quotient_device`] (inverse DFT, masks
//! from `zk_matrix_kernel`, `quotient_zk_scatter_kernel`, DFT of size `2n`) and [`random_codeword_device`].
//!
//! Every step is exact field arithmetic (no atomics, no reductions), so the output equals the host's bit for
//! bit.

use std::collections::HashMap;
use std::fmt::Write as _;

use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::quotient_log_extension;
use zkrv_stark::field::{Ext3, Field, PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::logup::{FoldAlgebra, LogupChallenges};
use zkrv_stark::poly::{coset_shift, domain_generator};
use zkrv_stark::symbolic::Node;
use zkrv_stark::zk::{
    quotient_layout, ZkRng, CODEWORD_WIDTH, DOMAIN_CODEWORD, DOMAIN_QUOTIENT, ROUND_QUOTIENT,
};

use crate::backend::DeviceTrace;
use crate::commit::{DeviceLde, LdeKind};
use crate::device::{cfg, Device, DeviceBuffer, KArg};
use crate::error::CudaError;
use crate::logup::{emit_nodes, fnv64};
use crate::nvrtc;
use crate::stats::TransferStats;

/// The kernel of every generated quotient program: `quotient_kernel(main, prep, aux, params, q, m, log_n,
/// log_q)`, one thread per storage row of the quotient domain.
pub const QUOTIENT_KERNEL: &str = "quotient_kernel";
/// Threads per block of the generated row kernel (register-heavy straight-line code).
pub const QUOTIENT_BLOCK: u32 = 128;
/// Transfer-statistics stage of the quotient's own copies (the parameter block).
pub const STAGE_QUOTIENT: &str = "quotient";

/// First parameter after the fixed head of `kernels/quotient.cuh` (`QUOT_P_TUPLE`).
const P_TUPLE: usize = 13;

/// Offsets in the parameter block of `air` (`kernels/quotient.cuh`), the one definition the generator and
/// [`quotient_params`] read.
#[derive(Clone, Copy)]
struct ParamOffsets {
    /// LogUp tuple powers, `max(L, 1)` Ext3.
    tuple: usize,
    /// `alpha^(N-1-i)` per own constraint, Ext3 each.
    powers: usize,
    /// The AIR's public values, one u64 each.
    public: usize,
    /// The `Z_H` table and its inverses.
    zh: usize,
}

fn param_offsets(air: &CompiledAir) -> ParamOffsets {
    let tuple_len = max_tuple(air).max(1);
    let powers = P_TUPLE + 3 * tuple_len;
    let public = powers + 3 * air.constraints.len();
    let zh = public + air.public_values.len();
    ParamOffsets {
        tuple: P_TUPLE,
        powers,
        public,
        zh,
    }
}

fn max_tuple(air: &CompiledAir) -> usize {
    air.interactions
        .iter()
        .map(|i| i.values.len())
        .max()
        .unwrap_or(0)
}

/// A base-side value of the generated code: circuit node `v<k>` or a selector of the point.
#[derive(Clone, Copy)]
enum CBase {
    Node(u32),
    Sel(usize),
}

/// An extension value of the generated code: variable `e<k>` or zero.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CExt {
    Var(u32),
    Zero,
}

/// The symbolic [`FoldAlgebra`]: every operation appends one statement to `out`. Circuit nodes are emitted
/// on first use (with the operands not emitted yet, in topological order, by `crate::logup::emit_nodes`),
/// so that each constraint's value is computed right before its fold term and few values stay live across
/// the `__noinline__` calls. Products of nodes and every extension operation are `__noinline__` calls
/// (`kernels/quotient.cuh`): with inline arithmetic ptxas took 6.5 s (inline base products) to 15 s (inline
/// extension products too) on MEMW, the largest machine table, against about 2 s.
struct CudaFold<'a> {
    nodes: &'a [Node],
    emitted: Vec<bool>,
    out: String,
    next: u32,
    /// Statements written to `out` (extension values and circuit nodes).
    statements: usize,
    /// Loaded parameters and aux cells, by source expression (each loaded once).
    loads: HashMap<String, CExt>,
    tuple_len: usize,
    offsets: ParamOffsets,
    /// Loads of LDE cells and parameters through the read-only cache (`quot_cell`, `quot_ld_nc`): the
    /// parts of a split quotient (the unsplit programs keep plain loads).
    nc: bool,
}

impl<'a> CudaFold<'a> {
    fn new(air: &'a CompiledAir, nc: bool) -> Self {
        CudaFold {
            nodes: &air.circuit.nodes,
            emitted: vec![false; air.circuit.nodes.len()],
            out: String::new(),
            next: 0,
            statements: 0,
            loads: HashMap::new(),
            tuple_len: max_tuple(air).max(1),
            offsets: param_offsets(air),
            nc,
        }
    }
    fn base(b: CBase) -> String {
        match b {
            CBase::Node(k) => format!("v{k}"),
            CBase::Sel(0) => "pt.first".into(),
            CBase::Sel(1) => "pt.last".into(),
            CBase::Sel(_) => "pt.transition".into(),
        }
    }
    fn ext(e: CExt) -> String {
        match e {
            CExt::Var(k) => format!("e{k}"),
            CExt::Zero => "quot_zero()".into(),
        }
    }
    fn emit(&mut self, expr: String) -> CExt {
        let k = self.next;
        self.next += 1;
        self.statements += 1;
        let _ = writeln!(self.out, "    const ext3 e{k} = {expr};");
        CExt::Var(k)
    }
    fn load(&mut self, src: String) -> CExt {
        if let Some(&e) = self.loads.get(&src) {
            return e;
        }
        let ld = if self.nc { "quot_ld_nc" } else { "quot_ld" };
        let e = self.emit(format!("{ld}({src})"));
        self.loads.insert(src, e);
        e
    }
    /// Emits node `k` and the operands it needs that are not emitted yet (a search over the unemitted
    /// operands only, then `crate::logup::emit_nodes` in topological order).
    fn ensure(&mut self, k: u32) {
        if self.emitted[k as usize] {
            return;
        }
        let mut todo = vec![k];
        let mut new = Vec::new();
        self.emitted[k as usize] = true;
        while let Some(i) = todo.pop() {
            new.push(i as usize);
            let mut visit = |j: u32| {
                if !self.emitted[j as usize] {
                    self.emitted[j as usize] = true;
                    todo.push(j);
                }
            };
            match self.nodes[i as usize] {
                Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) => {
                    visit(a);
                    visit(b);
                }
                Node::Neg(a) => visit(a),
                _ => {}
            }
        }
        new.sort_unstable();
        self.statements += new.len();
        let (nc, public) = (self.nc, self.offsets.public);
        emit_nodes(&mut self.out, self.nodes, new, "quot_mul", |l| {
            lde_leaf(l, nc, public)
        });
    }
    fn param(&mut self, off: usize) -> CExt {
        self.load(format!("params + {off}"))
    }
}

impl FoldAlgebra for CudaFold<'_> {
    type Base = CBase;
    type Ext = CExt;
    fn node(&mut self, k: u32) -> CBase {
        self.ensure(k);
        CBase::Node(k)
    }
    fn selector(&mut self, s: usize) -> CBase {
        CBase::Sel(s)
    }
    fn aux(&mut self, c: usize, next: bool) -> CExt {
        self.load(format!("{} + {}", if next { "a1" } else { "a0" }, 3 * c))
    }
    fn logup_z(&mut self) -> CExt {
        self.param(0)
    }
    fn tuple_alpha(&mut self, l: usize) -> Option<CExt> {
        // Powers the challenges lack are uploaded as zero (the host's `zip` drops those entries).
        (l < self.tuple_len).then(|| self.param(self.offsets.tuple + 3 * l))
    }
    fn fold_alpha(&mut self) -> CExt {
        self.param(3)
    }
    fn power(&mut self, i: usize) -> CExt {
        self.param(self.offsets.powers + 3 * i)
    }
    fn bus_sum(&mut self) -> CExt {
        self.param(6)
    }
    fn zero(&mut self) -> CExt {
        CExt::Zero
    }
    fn add(&mut self, a: CExt, b: CExt) -> CExt {
        match (a, b) {
            (CExt::Zero, x) | (x, CExt::Zero) => x,
            _ => self.emit(format!("quot_add({}, {})", Self::ext(a), Self::ext(b))),
        }
    }
    fn sub(&mut self, a: CExt, b: CExt) -> CExt {
        if b == CExt::Zero {
            return a;
        }
        self.emit(format!("quot_sub({}, {})", Self::ext(a), Self::ext(b)))
    }
    fn mul(&mut self, a: CExt, b: CExt) -> CExt {
        if a == CExt::Zero || b == CExt::Zero {
            return CExt::Zero;
        }
        self.emit(format!(
            "logup_ext3_mul({}, {})",
            Self::ext(a),
            Self::ext(b)
        ))
    }
    fn mul_base(&mut self, a: CExt, b: CBase) -> CExt {
        if a == CExt::Zero {
            return CExt::Zero;
        }
        self.emit(format!(
            "logup_ext3_mul_base({}, {})",
            Self::ext(a),
            Self::base(b)
        ))
    }
    fn base(&mut self, b: CBase) -> CExt {
        self.emit(format!("quot_base({})", Self::base(b)))
    }
    fn neg(&mut self, a: CExt) -> CExt {
        if a == CExt::Zero {
            return a;
        }
        self.emit(format!("quot_neg({})", Self::ext(a)))
    }
    fn sub_bus(&mut self, a: CExt, bus: u32) -> CExt {
        self.emit(format!("quot_sub_bus({}, {bus}ull)", Self::ext(a)))
    }
}

/// The C expression of a circuit leaf on the LDE rows `m0`/`m1` (main), `p0`/`p1` (preprocessed), the
/// point's selectors `pt` and the parameter block (public value `i` at `params[public + i]`); `nc`: cells
/// read through the read-only cache ([`CudaFold::nc`]).
fn lde_leaf(leaf: Node, nc: bool, public: usize) -> String {
    let cell = |row: &str, col: usize| {
        if nc {
            format!("quot_cell({row} + {col})")
        } else {
            format!("gl_canon({row}[{col}])")
        }
    };
    match leaf {
        Node::Main { col, next } => cell(if next { "m1" } else { "m0" }, col),
        Node::Preprocessed { col, next } => cell(if next { "p1" } else { "p0" }, col),
        Node::IsFirstRow => "pt.first".into(),
        Node::IsLastRow => "pt.last".into(),
        Node::IsTransition => "pt.transition".into(),
        Node::Public(i) if nc => format!("quot_cell(params + {})", public + i),
        Node::Public(i) => format!("gl_canon(params[{}])", public + i),
        op => unreachable!("emit_nodes passes leaves only, not {op:?}"),
    }
}

/// Statements (circuit nodes and extension operations) above which the generated quotient of a table is
/// split into parts of [`QUOTIENT_PART_STATEMENTS`], one program each (see the module docs). Every RV64IM
/// machine table stays below it (one program, no extra pass over `q`; MEMW, the largest, has about 1.1k);
/// the precompile tables are above it (POSEIDON2 3.4k, SHA256 14.6k, KECCAKF 57.5k).
pub const QUOTIENT_SPLIT_STATEMENTS: usize = 2_000;

/// Statements per part of a split quotient. NVRTC's time on one straight-line kernel grows faster than its
/// length (NVRTC 13.0, sm_90, 2 busy cores: one program of KECCAKF's 57.5k statements did not finish in
/// 10 min, SHA256's 14.6k took 78 s); a part of 600 takes about 1-1.5 s (the largest units, KECCAKF's
/// LogUp fold and SHA256's largest constraint, make parts of 1.4-2.1k statements: 5-6 s), and the parts
/// compile on parallel threads ([`quotient_compile_jobs`]).
pub const QUOTIENT_PART_STATEMENTS: usize = 600;

/// One part of a table's fold: own constraints `constraints` and, if `logup`, the LogUp constraints;
/// `body` the statements computing its sum `acc` (`statements` of them, `nodes` circuit nodes).
struct FoldPart {
    constraints: std::ops::Range<usize>,
    logup: bool,
    body: String,
    acc: CExt,
    nodes: usize,
    statements: usize,
}

/// `air`'s fold plan as one part when it has at most `split_above` statements, else split as
/// [`fold_parts_with`] into parts of about `part_statements` (with the parts' loads, [`CudaFold::nc`]).
fn fold_parts(air: &CompiledAir, split_above: usize, part_statements: usize) -> Vec<FoldPart> {
    let whole = fold_parts_with(air, usize::MAX, false);
    if whole[0].statements <= split_above {
        return whole;
    }
    fold_parts_with(air, part_statements, true)
}

/// Splits `air`'s fold plan ([`CompiledAir::fold_part_with`]) greedily, in order, into parts of about
/// `max_statements` statements (a part closes once it has reached `max_statements`; units are one own
/// constraint each, then the whole LogUp fold).
fn fold_parts_with<'a>(air: &'a CompiledAir, max_statements: usize, nc: bool) -> Vec<FoldPart> {
    let n = air.constraints.len();
    let units = n + usize::from(!air.interactions.is_empty());
    let mut parts = Vec::new();
    let mut fold = CudaFold::new(air, nc);
    let mut acc = CExt::Zero;
    let mut start = 0;
    let close = |fold: &mut CudaFold<'a>, acc: CExt, range: std::ops::Range<usize>, logup: bool| {
        let nodes = fold.emitted.iter().filter(|&&e| e).count();
        let f = std::mem::replace(fold, CudaFold::new(air, nc));
        FoldPart {
            constraints: range,
            logup,
            body: f.out,
            acc,
            nodes,
            statements: f.statements,
        }
    };
    for u in 0..units {
        if u > start && fold.statements >= max_statements {
            parts.push(close(&mut fold, acc, start..u, false));
            acc = CExt::Zero;
            start = u;
        }
        let t = if u < n {
            air.fold_part_with(&mut fold, u..u + 1, false)
        } else {
            air.fold_part_with(&mut fold, n..n, true)
        };
        acc = fold.add(acc, t);
    }
    let logup = !air.interactions.is_empty();
    parts.push(close(&mut fold, acc, start.min(n)..n, logup));
    parts
}

/// CUDA sources of the quotient row kernels of `air` (see the module docs), in launch order: one program
/// (every RV64IM machine table), or, above [`QUOTIENT_SPLIT_STATEMENTS`], one per part of about
/// [`QUOTIENT_PART_STATEMENTS`]. [`quotient_kernel_sources_with`] with those bounds.
pub fn quotient_kernel_sources(air: &CompiledAir) -> Vec<String> {
    quotient_kernel_sources_with(air, QUOTIENT_SPLIT_STATEMENTS, QUOTIENT_PART_STATEMENTS)
}

/// CUDA sources of the quotient row kernels of `air`: one program when its fold has at most `split_above`
/// statements, else one per part of about `part_statements` (a part closes once it has that many; each own
/// constraint, and the whole LogUp fold, stays in one part). Deterministic: the same AIR and bounds give the
/// same texts (so the CUBIN cache hits). Each defines `QUOT_HD void quotient_row(const u64* main, const
/// u64* prep, const u64* aux, const u64* params, u64* q, u64 s, u32 log_n, u32 log_q)` and, unless
/// `ZKRV_HOST_EMU` is defined, the kernel [`QUOTIENT_KERNEL`]. `main`, `prep`, `aux` are the bit-reversed LDEs (`(n B) x width`
/// row-major, any blowup `B >= 2^log_q`; `prep`/`aux` may be null when the AIR has no preprocessed columns
/// / no interactions); only rows `< M = 2^(log_n + log_q)` are read; `params` as in `kernels/quotient.cuh`
/// ([`quotient_params`]). Run in order on row `s`, the parts leave `q[3s .. 3s + 3)` (storage order) equal
/// to `C / Z_H`: one part writes it; of several, the first writes its partial sum of `C`, each later part
/// adds its own, the last also multiplies by `1 / Z_H`.
pub fn quotient_kernel_sources_with(
    air: &CompiledAir,
    split_above: usize,
    part_statements: usize,
) -> Vec<String> {
    let parts = fold_parts(air, split_above, part_statements);
    let count = parts.len();
    parts
        .iter()
        .enumerate()
        .map(|(j, p)| part_source(air, p, j, count))
        .collect()
}

/// The source of part `j` of `count` of `air`'s quotient (see [`quotient_kernel_sources_with`]).
fn part_source(air: &CompiledAir, part: &FoldPart, j: usize, count: usize) -> String {
    let zh = param_offsets(air).zh;
    let aw = air.aux_width();
    let body = &part.body;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// Generated by zkrv_cuda::quotient::quotient_kernel_sources for table `{}`: {} constraints, {} \
         interactions ({} term columns),\n// main width {}, preprocessed width {}, aux width {aw}, {} of {} \
         circuit nodes.\n// (The source does not depend on the chunk count: zk and non-zk proofs share it.)",
        air.name.replace(['\n', '\r'], " "),
        air.constraints.len(),
        air.interactions.len(),
        air.logup.groups.len(),
        air.width,
        air.preprocessed_width,
        part.nodes,
        air.circuit.nodes.len(),
    );
    if count > 1 {
        let _ = writeln!(
            s,
            "// Part {} of {count}: own constraints {}..{}{}.",
            j + 1,
            part.constraints.start,
            part.constraints.end,
            if part.logup {
                " and the LogUp constraints"
            } else {
                ""
            }
        );
    }
    s.push_str("#include \"quotient.cuh\"\n\n");
    s.push_str(
        "QUOT_HD void quotient_row(const u64* main, const u64* prep, const u64* aux, const u64* params, \
         u64* q, u64 s, u32 log_n, u32 log_q) {\n",
    );
    s.push_str("    const u64 nxt = quot_next_row(s, log_n);\n");
    let last = j + 1 == count;
    // The point's selectors and 1/Z_H cost a base-field inverse: computed only where read.
    if last || body.contains("pt.") {
        let _ = writeln!(
            s,
            "    const quot_point pt = quot_point_at(params, params + {zh}, bit_reverse((u32)s, log_n + \
             log_q), log_q);"
        );
    }
    for (var, buf, row, w) in [
        ("m0", "main", "s", air.width),
        ("m1", "main", "nxt", air.width),
        ("p0", "prep", "s", air.preprocessed_width),
        ("p1", "prep", "nxt", air.preprocessed_width),
        ("a0", "aux", "s", aw),
        ("a1", "aux", "nxt", aw),
    ] {
        // The leaves read `m0[..]` or `quot_cell(m0 + ..)`, ...; the aux loads `quot_ld(a0 + ..)`.
        if body.contains(&format!("{var}[")) || body.contains(&format!("({var} + ")) {
            let _ = writeln!(s, "    const u64* {var} = {buf} + {row} * {w}ull;");
        }
    }
    s.push_str(
        "    (void)nxt;\n    (void)main;\n    (void)prep;\n    (void)aux;\n    (void)log_q;\n",
    );
    s.push_str(body);
    let acc = CudaFold::ext(part.acc);
    let v = match (j, last) {
        (0, true) => format!("logup_ext3_mul_base({acc}, pt.zh_inv)"),
        (0, false) => acc,
        (_, false) => format!("quot_add(quot_ld(q + 3 * s), {acc})"),
        (_, true) => format!("logup_ext3_mul_base(quot_add(quot_ld(q + 3 * s), {acc}), pt.zh_inv)"),
    };
    let _ = writeln!(s, "    quot_store(q + 3 * s, {v});");
    s.push_str("}\n\n#ifndef ZKRV_HOST_EMU\n");
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void {QUOTIENT_KERNEL}(const u64* main, const u64* prep, const u64* aux, \
         const u64* params, u64* q, u64 m, u32 log_n, u32 log_q, u64 s0) {{"
    );
    s.push_str(
        "    u64 s = s0 + (u64)blockIdx.x * blockDim.x + threadIdx.x;\n    if (s < m) quotient_row(main, prep, aux, \
         params, q, s, log_n, log_q);\n}\n#endif\n",
    );
    s
}

/// The parameter block of `kernels/quotient.cuh` for a table of `2^log_n` rows and quotient domain of
/// `2^(log_n + log_q)` points: `z`, the fold challenge `alpha`, the bus sum, `g`, `ω_M`, `ω_n^(n-1)`, `1/n`,
/// the LogUp tuple powers (the AIR's longest tuple; powers the challenges lack are zero), `alpha^(N-1-i)`
/// per own constraint ([`CompiledAir::fold_challenge`]), the AIR's public values
/// ([`CompiledAir::public_values`]), then `Z_H(g ω_M^i)` for `i < 2^log_q` and their inverses.
pub fn quotient_params(
    air: &CompiledAir,
    log_n: usize,
    log_q: usize,
    ch: &LogupChallenges,
    bus_sum: Ext3,
    alpha: Ext3,
) -> Vec<u64> {
    let ext = |p: &mut Vec<u64>, e: Ext3| p.extend(e.0.iter().map(|c| c.as_canonical_u64()));
    let n = 1u64 << log_n;
    let g = coset_shift();
    let mut p = Vec::new();
    ext(&mut p, ch.z);
    ext(&mut p, alpha);
    ext(&mut p, bus_sum);
    p.push(g.as_canonical_u64());
    p.push(domain_generator(log_n + log_q).as_canonical_u64());
    p.push(domain_generator(log_n).exp_u64(n - 1).as_canonical_u64());
    p.push(F::from_u64(n).inverse().as_canonical_u64());
    debug_assert_eq!(p.len(), P_TUPLE);
    for l in 0..max_tuple(air).max(1) {
        ext(
            &mut p,
            ch.alpha_powers.get(l).copied().unwrap_or(Ext3::ZERO),
        );
    }
    for pw in air.fold_challenge(alpha).powers {
        ext(&mut p, pw);
    }
    debug_assert_eq!(p.len(), param_offsets(air).public);
    p.extend(air.public_values.iter().map(|v| v.as_canonical_u64()));
    debug_assert_eq!(p.len(), param_offsets(air).zh);
    let g_n = g.exp_u64(n);
    let omega_q = domain_generator(log_q);
    let zh: Vec<F> = (0..1u64 << log_q)
        .map(|i| g_n * omega_q.exp_u64(i) - F::ONE)
        .collect();
    p.extend(zh.iter().map(|z| z.as_canonical_u64()));
    p.extend(zh.iter().map(|z| z.inverse().as_canonical_u64()));
    p
}

/// The NVRTC program name of a generated quotient source.
fn program_name(src: &str) -> String {
    format!("quotient_{:016x}.cu", fnv64(src.as_bytes()))
}

/// The generated quotient programs of `air`, `(NVRTC program name, source)` in launch order
/// ([`quotient_kernel_sources`]).
fn quotient_programs(air: &CompiledAir) -> Vec<(String, String)> {
    quotient_kernel_sources(air)
        .into_iter()
        .map(|src| (program_name(&src), src))
        .collect()
}

/// The NVRTC jobs `(program name, source)` of the quotients of `airs`: `quotient.cu`, then the generated
/// programs of every AIR (for `crate::logup::precompile`, which compiles them on parallel threads).
pub fn quotient_compile_jobs(airs: &[CompiledAir]) -> Vec<(String, String)> {
    let q = &crate::nvrtc::QUOTIENT_CU;
    let mut jobs: Vec<(String, String)> = vec![(q.name.into(), q.src.into())];
    for a in airs {
        jobs.extend(quotient_programs(a));
    }
    jobs
}

/// One bit-reversed LDE the quotient reads: the buffer and its width.
pub struct LdeRef<'a> {
    pub data: &'a DeviceBuffer<u64>,
    pub width: usize,
}

fn grid(n: u64, block: u32) -> Result<u32, CudaError> {
    u32::try_from(n.div_ceil(block as u64).max(1))
        .map_err(|_| CudaError::InvalidArgument(format!("launch of {n} threads")))
}

/// Step 1 of the quotient (see the module docs): `q = C / Z_H` of `air` on the quotient domain, `M x 3` u64
/// in storage order (row `s` at the natural point `bitrev_M(s)`), equal to
/// `zkrv_stark::backend::quotient_values`. `main`, `prep`, `aux`: the table's LDEs (`2^(log_n + log_blowup)`
/// rows, bit-reversed); `prep` is required iff `air.preprocessed_width > 0`, `aux` iff the AIR has
/// interactions. Returns `(q, log_q)`, `M = 2^(log_n + log_q)`. The parameter upload is counted in `stats`
/// (stage [`STAGE_QUOTIENT`], `table`).
#[allow(clippy::too_many_arguments)]
pub fn quotient_values_device(
    dev: &Device,
    air: &CompiledAir,
    main: LdeRef<'_>,
    prep: Option<LdeRef<'_>>,
    aux: Option<LdeRef<'_>>,
    log_n: usize,
    log_blowup: usize,
    challenges: &LogupChallenges,
    bus_sum: Ext3,
    alpha: Ext3,
    stats: &mut TransferStats,
    table: &str,
) -> Result<(DeviceBuffer<u64>, usize), CudaError> {
    let log_q = quotient_log_extension(air.num_quotient_chunks, log_blowup);
    let log_m = log_n + log_q;
    let lde_rows = 1usize << (log_n + log_blowup);
    if log_n + log_blowup > 32 {
        return Err(CudaError::InvalidArgument(format!(
            "quotient of `{}`: LDE of 2^{} rows",
            air.name,
            log_n + log_blowup
        )));
    }
    let check = |what: &str, l: &LdeRef<'_>, w: usize| -> Result<u64, CudaError> {
        if l.width != w || l.data.len() != w * lde_rows {
            return Err(CudaError::InvalidArgument(format!(
                "quotient of `{}`: {what} LDE of {} x {} is not 2^{} x {w}",
                air.name,
                l.data.len() / l.width.max(1),
                l.width,
                log_n + log_blowup
            )));
        }
        Ok(l.data.ptr())
    };
    let main_ptr = check("main", &main, air.width)?;
    let prep_ptr = match (air.preprocessed_width, &prep) {
        (0, _) => 0,
        (pw, Some(p)) => check("preprocessed", p, pw)?,
        (_, None) => {
            return Err(CudaError::InvalidArgument(format!(
                "quotient of `{}`: no preprocessed LDE",
                air.name
            )))
        }
    };
    let aux_ptr = match (air.interactions.is_empty(), &aux) {
        (true, _) => 0,
        (false, Some(a)) => check("aux", a, air.aux_width())?,
        (false, None) => {
            return Err(CudaError::InvalidArgument(format!(
                "quotient of `{}`: no aux LDE",
                air.name
            )))
        }
    };
    let params = quotient_params(air, log_n, log_q, challenges, bus_sum, alpha);
    let d_params = dev.upload(&params)?;
    stats.add_h2d(STAGE_QUOTIENT, table, (params.len() * 8) as u64);
    let q = dev.alloc::<u64>(3 << log_m)?;
    let programs = quotient_programs(air);
    // SAFETY: main/prep/aux hold 2^(log_n + log_blowup) >= M rows of their widths (checked above) or are
    // null when the generated code never reads them; q holds M x 3 u64; rows s < M.
    unsafe {
        launch_quotient(
            dev,
            &programs,
            [main_ptr, prep_ptr, aux_ptr],
            &d_params,
            &q,
            0,
            1u64 << log_m,
            log_n,
            log_q,
        )?;
    }
    Ok((q, log_q))
}

/// Launches the generated quotient kernels `programs` ([`quotient_programs`] of one AIR, in order, on the
/// device's stream) over storage rows `[s0, s_end)` of the quotient domain.
///
/// # Safety
/// `lde[k] + 8·s·w_k` (main, prep, aux) must be readable for every row `s` in `[s0, s_end)` and its next
/// row ([`quot_next_row`], same block of `2^log_n`), or the pointer null where the AIR never reads it;
/// `q` holds `2^(log_n + log_q) x 3` u64; `params` is `quotient_params`'s block for this AIR.
#[allow(clippy::too_many_arguments)]
unsafe fn launch_quotient(
    dev: &Device,
    programs: &[(String, String)],
    lde: [u64; 3],
    params: &DeviceBuffer<u64>,
    q: &DeviceBuffer<u64>,
    s0: u64,
    s_end: u64,
    log_n: usize,
    log_q: usize,
) -> Result<(), CudaError> {
    for (name, src) in programs {
        // SAFETY: forwarded from the caller; one thread per row s in [s0, s_end); the parts run in order
        // on one stream (each reads the partial sums its predecessors wrote at its own rows).
        unsafe {
            dev.launch_generated(
                name,
                src,
                QUOTIENT_KERNEL,
                cfg(grid(s_end - s0, QUOTIENT_BLOCK)?, QUOTIENT_BLOCK, 0),
                &[
                    KArg::U64(lde[0]),
                    KArg::U64(lde[1]),
                    KArg::U64(lde[2]),
                    KArg::U64(params.ptr()),
                    KArg::U64(q.ptr()),
                    KArg::U64(s_end),
                    KArg::U32(log_n as u32),
                    KArg::U32(log_q as u32),
                    KArg::U64(s0),
                ],
            )?;
        }
    }
    Ok(())
}

/// [`quotient_values_device`] over LDEs that may be recomputed ([`crate::commit::LdeKind::Coeffs`]): when
/// every LDE is stored, exactly that; otherwise one block of `n` rows at a time (block `b` = storage rows
/// `[b n, (b+1) n)`, a coset of `H_n` closed under the next-row map), each LDE's block recomputed
/// ([`crate::commit::DeviceLde::rows`]) and dropped after the kernel. Same output.
#[allow(clippy::too_many_arguments)]
pub fn quotient_values_lde(
    dev: &Device,
    air: &CompiledAir,
    main: &DeviceLde,
    prep: Option<&DeviceLde>,
    aux: Option<&DeviceLde>,
    log_n: usize,
    log_blowup: usize,
    challenges: &LogupChallenges,
    bus_sum: Ext3,
    alpha: Ext3,
    stats: &mut TransferStats,
    table: &str,
) -> Result<(DeviceBuffer<u64>, usize), CudaError> {
    let all = [Some(main), prep, aux];
    if all.iter().flatten().all(|l| l.kind == LdeKind::Stored) {
        fn r(l: &DeviceLde) -> LdeRef<'_> {
            LdeRef {
                data: &l.data,
                width: l.width,
            }
        }
        return quotient_values_device(
            dev,
            air,
            r(main),
            prep.map(r),
            aux.map(r),
            log_n,
            log_blowup,
            challenges,
            bus_sum,
            alpha,
            stats,
            table,
        );
    }
    let log_q = quotient_log_extension(air.num_quotient_chunks, log_blowup);
    let log_m = log_n + log_q;
    let reads_prep = air.preprocessed_width > 0;
    let reads_aux = !air.interactions.is_empty();
    for (what, l, w, need) in [
        ("main", Some(main), air.width, true),
        ("preprocessed", prep, air.preprocessed_width, reads_prep),
        ("aux", aux, air.aux_width(), reads_aux),
    ] {
        match l {
            Some(l) if l.width != w || l.log_height as usize != log_n + log_blowup => {
                return Err(CudaError::InvalidArgument(format!(
                    "quotient of `{}`: {what} LDE of 2^{} x {} is not 2^{} x {w}",
                    air.name,
                    l.log_height,
                    l.width,
                    log_n + log_blowup
                )))
            }
            None if need => {
                return Err(CudaError::InvalidArgument(format!(
                    "quotient of `{}`: no {what} LDE",
                    air.name
                )))
            }
            _ => {}
        }
    }
    let params = quotient_params(air, log_n, log_q, challenges, bus_sum, alpha);
    let d_params = dev.upload(&params)?;
    stats.add_h2d(STAGE_QUOTIENT, table, (params.len() * 8) as u64);
    let q = dev.alloc::<u64>(3 << log_m)?;
    let programs = quotient_programs(air);
    let n = 1u64 << log_n;
    for b in 0..1usize << log_q {
        let used = |l: Option<&DeviceLde>, read: bool| -> Result<_, CudaError> {
            match l {
                Some(l) if read => Ok(Some((l.rows(dev, log_n as u32, &[b])?, l.width))),
                _ => Ok(None),
            }
        };
        let m_blk = used(Some(main), true)?;
        let p_blk = used(prep, reads_prep)?;
        let a_blk = used(aux, reads_aux)?;
        // Block b's buffer holds rows [b n, (b+1) n): its address less b n rows is "row 0".
        let base = |x: &Option<(DeviceBuffer<u64>, usize)>| {
            x.as_ref().map_or(0, |(d, w)| {
                d.ptr().wrapping_sub(8 * b as u64 * n * *w as u64)
            })
        };
        // SAFETY: each block holds rows [b n, (b+1) n) of its LDE (the kernel reads rows of that block
        // only: the next row stays in the block); q holds M x 3.
        unsafe {
            launch_quotient(
                dev,
                &programs,
                [base(&m_blk), base(&p_blk), base(&a_blk)],
                &d_params,
                &q,
                b as u64 * n,
                (b as u64 + 1) * n,
                log_n,
                log_q,
            )?;
        }
    }
    Ok((q, log_q))
}

/// Steps 2-5 of the quotient (see the module docs), as `zkrv_stark::backend::quotient_chunks`: from `q`
/// (`2^(log_n + log_q) x 3` u64, storage order, not modified) the `2^log_n x 3 chunks` matrix of the
/// chunks on `H_n` (row-major, natural order, canonical).
pub fn quotient_chunks_device(
    dev: &Device,
    q: &DeviceBuffer<u64>,
    log_n: usize,
    log_q: usize,
    chunks: usize,
) -> Result<DeviceBuffer<u64>, CudaError> {
    let log_m = log_n + log_q;
    let m = 1usize << log_m;
    if q.len() != 3 * m || chunks == 0 || log_m > crate::poly::MAX_LOG_N as usize {
        return Err(CudaError::InvalidArgument(format!(
            "quotient chunks: q of {} for 2^{log_m} x 3, {chunks} chunks",
            q.len()
        )));
    }
    let nat = dev.alloc::<u64>(3 * m)?;
    // SAFETY: q and nat hold M x 3 u64 and are distinct.
    unsafe {
        crate::poly::bitrev_rows_raw(dev, q.ptr(), nat.ptr(), m, 3, log_m as u32, 1)?;
        crate::poly::dif_raw(dev, nat.ptr(), nat.ptr(), m, 3, log_m as u32, true)?;
    }
    let n = 1usize << log_n;
    let coeffs = dev.alloc::<u64>(3 * chunks * n)?;
    let g_inv = coset_shift().inverse().as_canonical_u64();
    let m_inv = F::from_u64(m as u64).inverse().as_canonical_u64();
    // SAFETY: nat holds M x 3, coeffs n x 3 chunks u64; one thread per (row, chunk).
    unsafe {
        dev.launch(
            &nvrtc::QUOTIENT_CU,
            "quotient_split_kernel",
            cfg(grid((n * chunks) as u64, 256)?, 256, 0),
            &[
                KArg::U64(nat.ptr()),
                KArg::U64(coeffs.ptr()),
                KArg::U32(log_m as u32),
                KArg::U32(log_n as u32),
                KArg::U32(chunks as u32),
                KArg::U64(g_inv),
                KArg::U64(m_inv),
            ],
        )?;
    }
    drop(nat);
    crate::poly::dft_batch(dev, &coeffs, log_n as u32, 3 * chunks)
}

/// The quotient chunks of one table on the device ([`quotient_values_device`] then
/// [`quotient_chunks_device`]): `2^log_n x 3c` row-major, natural order on `H_n`, equal to
/// `zkrv_stark::backend::quotient_host`.
#[allow(clippy::too_many_arguments)]
pub fn quotient_device(
    dev: &Device,
    air: &CompiledAir,
    main: &DeviceLde,
    prep: Option<&DeviceLde>,
    aux: Option<&DeviceLde>,
    log_n: usize,
    log_blowup: usize,
    challenges: &LogupChallenges,
    bus_sum: Ext3,
    alpha: Ext3,
    stats: &mut TransferStats,
    table: &str,
) -> Result<DeviceTrace, CudaError> {
    let (q, log_q) = quotient_values_lde(
        dev, air, main, prep, aux, log_n, log_blowup, challenges, bus_sum, alpha, stats, table,
    )?;
    let c = air.num_quotient_chunks;
    let data = quotient_chunks_device(dev, &q, log_n, log_q, c)?;
    Ok(DeviceTrace {
        data,
        width: 3 * c,
        log_height: log_n as u32,
    })
}

/// zk: `zkrv_stark::zk::randomize_quotient` on the device: `chunks` is `2^log_n x 3c` (natural order on
/// `H_n`, not modified), the result `2^(log_n + 1) x 3 count` ([`quotient_layout`]) on `H_2n`, masks from
/// stream `(DOMAIN_QUOTIENT, ROUND_QUOTIENT, table, k)`, bit-exact.
pub fn randomize_quotient_device(
    dev: &Device,
    chunks: &DeviceTrace,
    rng: &ZkRng,
    table: u64,
    num_queries: usize,
) -> Result<DeviceTrace, CudaError> {
    let log_n = chunks.log_height as usize;
    let n = 1usize << log_n;
    if chunks.width == 0 || !chunks.width.is_multiple_of(3) || chunks.data.len() != n * chunks.width
    {
        return Err(CudaError::InvalidArgument(format!(
            "randomize_quotient: buffer of {} is not 2^{log_n} x {} (3 per chunk)",
            chunks.data.len(),
            chunks.width
        )));
    }
    let c = chunks.width / 3;
    let (count, m) = quotient_layout(c, log_n, num_queries);
    let h = 2 * n - m;
    let coeffs = crate::poly::idft_batch(dev, &chunks.data, log_n as u32, chunks.width)?;
    let masks = if count > 1 {
        crate::zk::stream_matrix(
            dev,
            rng,
            DOMAIN_QUOTIENT,
            ROUND_QUOTIENT,
            table,
            h,
            3 * (count - 1),
        )?
    } else {
        dev.alloc::<u64>(1)?
    };
    let w = 3 * count;
    let out = dev.alloc::<u64>(2 * n * w)?;
    // SAFETY: coeffs is n x 3c, masks h x 3 (count - 1) (read only when count > 1), out 2n x 3 count; one
    // thread per (row, chunk).
    unsafe {
        dev.launch(
            &nvrtc::QUOTIENT_CU,
            "quotient_zk_scatter_kernel",
            cfg(grid((2 * n * count) as u64, 256)?, 256, 0),
            &[
                KArg::U64(coeffs.ptr()),
                KArg::U64(masks.ptr()),
                KArg::U64(out.ptr()),
                KArg::U32(log_n as u32),
                KArg::U32(c as u32),
                KArg::U32(count as u32),
                KArg::U64(m as u64),
            ],
        )?;
    }
    drop(coeffs);
    drop(masks);
    let data = crate::poly::dft_batch(dev, &out, log_n as u32 + 1, w)?;
    Ok(DeviceTrace {
        data,
        width: w,
        log_height: log_n as u32 + 1,
    })
}

/// zk: `zkrv_stark::zk::random_codeword` on the device: `2^log_height x 3`, row `r` = stream
/// `(DOMAIN_CODEWORD, ROUND_QUOTIENT, 0, r)`.
pub fn random_codeword_device(
    dev: &Device,
    rng: &ZkRng,
    log_height: usize,
) -> Result<DeviceTrace, CudaError> {
    let data = crate::zk::stream_matrix(
        dev,
        rng,
        DOMAIN_CODEWORD,
        ROUND_QUOTIENT,
        0,
        1 << log_height,
        CODEWORD_WIDTH,
    )?;
    Ok(DeviceTrace {
        data,
        width: CODEWORD_WIDTH,
        log_height: log_height as u32,
    })
}
