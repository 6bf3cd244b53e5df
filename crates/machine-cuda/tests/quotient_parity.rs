//! Parity of the GPU quotient (`zkrv_cuda::quotient`, `CudaBackend`'s `QuotientOps`) with the host
//! `zkrv_stark::backend::{quotient_values, quotient_host}` and `zkrv_stark::zk::{randomize_quotient,
//! random_codeword}`.
//!
//! Cases: every table of the machine, with the real traces of a small guest run (`fibonacci`, dev config)
//! and random LogUp challenges, fold challenge and (claimed) bus sums, non-zk and zk (traces randomized to
//! `2n` rows, quotient blowup `2B`, `2d - 1` chunks).
//!
//! Layers:
//! * `quotient_codegen_compiles_for_sm90`: NVRTC compiles the generated programs of every table of
//!   `precompiles.elf` (machine and precompile tables; a sample of the parts of a table split into many) for
//!   sm_90 (no GPU needed) and prints the compile times; `quotient_split_covers_every_constraint` checks
//!   the split into parts (which tables, the constraint ranges);
//! * `quotient_host_emu_matches_cpu`: the generated sources compiled as C++ (`-DZKRV_HOST_EMU`) and run on the
//!   host over the LDE rows, compared with `quotient_values` row by row (storage order), then the chunks
//!   (`quotient_chunks` of the emulated values vs `quotient_host`); every table twice: its programs as the
//!   prover runs them, and split into parts of `TEST_PART_STATEMENTS` (the split path);
//! * `quotient_kernels_host_emu_match_cpu`: the fixed kernels around the NTTs (chunk split, zk scatter, zk
//!   stream matrix) emulated on the host against `quotient_chunks`, `zk::randomize_quotient`, `ZkRng::matrix`;
//! * `gpu_quotient_matches_cpu`: `CudaBackend::quotient` (+ `randomize_quotient`, `random_codeword`) vs
//!   `CpuBackend`'s on the same committed rounds; prints `SKIPPED ...` without a device.
//!
//! Seeds are printed; `ZKRV_SEED` replays.
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;

use std::borrow::Cow;
use std::convert::Infallible;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use zkrv_cuda::quotient::{
    quotient_kernel_sources, quotient_kernel_sources_with, quotient_params,
    QUOTIENT_SPLIT_STATEMENTS,
};
use zkrv_cuda::{nvrtc, CudaBackend, Device};
use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::{
    quotient_chunks, quotient_host, quotient_log_extension, quotient_values, AuxOps, BackendError,
    CommitOps, CpuBackend, MatrixView, QuotientInputs, QuotientOps, QuotientViews, TraceInput,
};
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::logup::{build_aux_trace, max_tuple_len, LogupChallenges};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::poly::lde_batch;
use zkrv_stark::zk::{self, ZkRng, ROUND_AUX, ROUND_MAIN};
use zkrv_stark::StarkConfig;

const GUEST: &str = "fibonacci";

fn seed() -> u64 {
    let s = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!("seed {s} (ZKRV_SEED={s} replays)");
    s
}

fn rand_ext(rng: &mut StdRng) -> Ext3 {
    Ext3([0; 3].map(|_: u8| F::from_u64(rng.gen())))
}

/// One machine run: the compiled tables (for `config`), their traces and preprocessed traces, and random
/// challenges.
struct Machine {
    config: StarkConfig,
    airs: Vec<CompiledAir>,
    traces: Vec<RowMajorMatrix>,
    prep: Vec<Option<RowMajorMatrix>>,
    ch: LogupChallenges,
    alpha: Ext3,
    /// Claimed bus sums (random: the quotient is then not low degree, which the per-row parity does not
    /// mind; the chunk parity is exact anyway).
    bus_sums: Vec<Ext3>,
    zk_rng: Option<ZkRng>,
}

fn machine(rng: &mut StdRng, zk_mode: bool) -> Machine {
    let root = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let elf = std::fs::read(format!("{root}/bin/{GUEST}.elf")).expect("guest ELF");
    let input = std::fs::read(format!("{root}/inputs/{GUEST}.bin")).unwrap_or_default();
    let program = zkrv_executor::Program::from_elf(&elf).expect("ELF");
    let config = if zk_mode {
        StarkConfig::dev_zk()
    } else {
        StarkConfig::dev()
    };
    let checker = zkrv_machine::WitnessChecker::new(&program, &config).expect("checker");
    let w = zkrv_machine::witness_for(&program, &input, &config).expect("witness");
    // The present tables, as the prover sees them (an absent precompile table, 0 rows, has no quotient).
    let present: Vec<usize> = (0..w.traces.len())
        .filter(|&t| w.traces[t].height() > 0)
        .collect();
    let airs: Vec<CompiledAir> = present
        .iter()
        .map(|&t| checker.compiled()[t].clone())
        .collect();
    let prep = present
        .iter()
        .map(|&t| checker.preprocessed()[t].clone())
        .collect();
    let traces = present.iter().map(|&t| w.traces[t].clone()).collect();
    let ch = LogupChallenges::new(rand_ext(rng), rand_ext(rng), max_tuple_len(&airs, &[]));
    let bus_sums = airs.iter().map(|_| rand_ext(rng)).collect();
    Machine {
        config,
        traces,
        prep,
        ch,
        alpha: rand_ext(rng),
        bus_sums,
        zk_rng: zk_mode.then(|| ZkRng::from_test_seed(rng.gen())),
        airs,
    }
}

/// One table's quotient inputs on the host: the LDEs (bit-reversed) as the prover commits them.
struct Case {
    label: String,
    table: usize,
    log_n: usize,
    log_blowup: usize,
    main: RowMajorMatrix,
    prep: Option<RowMajorMatrix>,
    aux: Option<RowMajorMatrix>,
}

fn cases(m: &Machine) -> Vec<Case> {
    let lb = m.config.fri.log_blowup;
    let zk_shift = m.config.zk as usize;
    m.airs
        .iter()
        .enumerate()
        .map(|(t, air)| {
            let trace = &m.traces[t];
            let log_n = trace.log_height().unwrap();
            let prep = m.prep[t].as_ref();
            let aux = (!air.interactions.is_empty()).then(|| {
                build_aux_trace(air, trace, prep, &m.ch, m.config.log_max_multiplicity)
                    .expect("aux")
                    .0
            });
            let (main, aux) = match &m.zk_rng {
                None => (trace.clone(), aux),
                Some(r) => (
                    zk::randomize_trace(trace, r, ROUND_MAIN, t as u64),
                    aux.map(|a| zk::randomize_trace(&a, r, ROUND_AUX, t as u64)),
                ),
            };
            Case {
                label: format!(
                    "{GUEST} {} 2^{log_n}{}",
                    air.name,
                    if m.config.zk { " zk" } else { "" }
                ),
                table: t,
                log_n,
                log_blowup: lb + zk_shift,
                main: lde_batch(&main, lb),
                prep: prep.map(|p| lde_batch(p, lb + zk_shift)),
                aux: aux.map(|a| lde_batch(&a, lb)),
            }
        })
        .collect()
}

/// The quotient's inputs: the case's whole stored LDEs, as one block.
fn whole_ldes<'a>(c: &'a Case) -> impl Fn(usize) -> Result<QuotientInputs<'a>, BackendError> + 'a {
    move |_b| {
        Ok(QuotientInputs {
            main: (Cow::Borrowed(&c.main), 0),
            preprocessed: c.prep.as_ref().map(|p| (Cow::Borrowed(p), 0)),
            aux: c.aux.as_ref().map(|a| (Cow::Borrowed(a), 0)),
        })
    }
}

/// `quotient_values` over whole stored LDEs (one block).
fn host_values(m: &Machine, c: &Case) -> Vec<Ext3> {
    let block_rows = c.main.height();
    let fetch = whole_ldes(c);
    quotient_values(
        &m.airs[c.table],
        c.log_n,
        c.log_blowup,
        block_rows,
        &fetch,
        &m.ch,
        m.bus_sums[c.table],
        m.alpha,
    )
    .expect("quotient_values")
}

fn host_chunks(m: &Machine, c: &Case) -> RowMajorMatrix {
    let block_rows = c.main.height();
    let fetch = whole_ldes(c);
    quotient_host(
        &m.airs[c.table],
        c.log_n,
        c.log_blowup,
        block_rows,
        &fetch,
        &m.ch,
        m.bus_sums[c.table],
        m.alpha,
    )
    .expect("quotient_host")
}

fn raw(values: &[F]) -> impl Iterator<Item = u64> + '_ {
    // The bytes as stored (possibly non-canonical), as a device upload of the matrix would see them.
    values
        .iter()
        .map(|x| unsafe { std::mem::transmute::<F, u64>(*x) })
}

fn canon(m: &RowMajorMatrix) -> Vec<u64> {
    m.values.iter().map(|x| x.as_canonical_u64()).collect()
}

fn assert_cells(label: &str, width: usize, got: &[u64], want: &[u64]) {
    assert_eq!(got.len(), want.len(), "{label}: size");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{label}: cell (row {}, col {}) = {:#x}, host {:#x}",
            i / width,
            i % width,
            got[i],
            want[i]
        );
    }
}

/// Part size of the forced split in `quotient_host_emu_matches_cpu`: every table with more statements is
/// split into several programs, so that the emulation checks the split path on every machine table.
const TEST_PART_STATEMENTS: usize = 40;

/// Every table of `guests/bin/precompiles.elf` (the machine tables and the three precompile tables), as the
/// prover compiles them (dev config).
fn all_tables() -> Vec<CompiledAir> {
    let root = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let elf = std::fs::read(format!("{root}/bin/precompiles.elf")).expect("guest ELF");
    let program = zkrv_executor::Program::from_elf(&elf).expect("ELF");
    let checker =
        zkrv_machine::WitnessChecker::new(&program, &StarkConfig::dev()).expect("checker");
    checker.compiled().to_vec()
}

/// NVRTC compiles the generated quotient programs of every table of `precompiles.elf` for sm_90 (no GPU
/// needed) and prints the compile times. A table split into more than 4 parts (the precompile tables above
/// `QUOTIENT_SPLIT_STATEMENTS`) compiles a sample: its first part, its last (the LogUp fold, the division
/// by `Z_H`) and its longest; every part of KECCAKF would cost CI about 2-3 min.
#[test]
fn quotient_codegen_compiles_for_sm90() {
    if !nvrtc::nvrtc_available() {
        assert!(
            std::env::var_os("ZKRV_REQUIRE_NVRTC").is_none(),
            "ZKRV_REQUIRE_NVRTC is set but libnvrtc cannot be loaded"
        );
        eprintln!("SKIPPED quotient_codegen_compiles_for_sm90: libnvrtc not loadable");
        return;
    }
    let airs = all_tables();
    for name in ["KECCAKF", "SHA256", "POSEIDON2"] {
        assert!(
            airs.iter().any(|a| a.name == name),
            "precompiles.elf has no table {name}"
        );
    }
    let mut total = std::time::Duration::ZERO;
    let mut programs = 0;
    let mut worst = (std::time::Duration::ZERO, String::new());
    for air in &airs {
        let srcs = quotient_kernel_sources(air);
        assert_eq!(
            srcs,
            quotient_kernel_sources(air),
            "{}: codegen not deterministic",
            air.name
        );
        let sample: Vec<usize> = if srcs.len() <= 4 {
            (0..srcs.len()).collect()
        } else {
            let longest = (0..srcs.len()).max_by_key(|&j| srcs[j].len()).unwrap();
            let mut v = vec![0, srcs.len() - 1, longest];
            v.sort_unstable();
            v.dedup();
            v
        };
        for &j in &sample {
            let src = &srcs[j];
            let label = format!("{} part {} of {}", air.name, j + 1, srcs.len());
            let t = std::time::Instant::now();
            let cubin = nvrtc::compile_cubin(
                &format!("quotient_{}_{j}.cu", air.name),
                src,
                nvrtc::HEADERS,
                "sm_90",
            )
            .unwrap_or_else(|e| panic!("{label}: {e}\n{src}"));
            let dt = t.elapsed();
            assert_eq!(&cubin[..4], b"\x7fELF");
            total += dt;
            programs += 1;
            if dt > worst.0 {
                worst = (dt, label.clone());
            }
            eprintln!(
                "{label}: {} constraints, {} interactions, {} source lines, {} CUBIN bytes, compiled in {:.2?}",
                air.constraints.len(),
                air.interactions.len(),
                src.lines().count(),
                cubin.len(),
                dt
            );
        }
        if sample.len() < srcs.len() {
            eprintln!(
                "{}: compiled {} of its {} parts (a sample)",
                air.name,
                sample.len(),
                srcs.len()
            );
        }
    }
    eprintln!(
        "{programs} quotient programs of {} tables compiled in {total:.2?} (slowest: {} in {:.2?})",
        airs.len(),
        worst.1,
        worst.0
    );
}

/// The split into parts: every table of `precompiles.elf` below `QUOTIENT_SPLIT_STATEMENTS` (all the
/// machine tables) is one program, the three precompile tables are split, and a forced split has several
/// parts where the table has several constraints; the parts name their constraint ranges, which tile the
/// table's constraints in order.
#[test]
fn quotient_split_covers_every_constraint() {
    let airs = all_tables();
    for air in &airs {
        let one = quotient_kernel_sources_with(air, usize::MAX, 1);
        assert_eq!(one.len(), 1, "{}", air.name);
        let statements = one[0]
            .lines()
            .filter(|l| l.starts_with("    const u64 v") || l.starts_with("    const ext3 e"))
            .count();
        let srcs = quotient_kernel_sources(air);
        let precompile = ["KECCAKF", "SHA256", "POSEIDON2"].contains(&air.name.as_str());
        assert_eq!(
            srcs.len() > 1,
            precompile,
            "{}: {} parts",
            air.name,
            srcs.len()
        );
        assert_eq!(
            srcs.len() > 1,
            statements > QUOTIENT_SPLIT_STATEMENTS,
            "{}: {statements} statements",
            air.name
        );
        if srcs.len() == 1 {
            assert_eq!(srcs[0], one[0], "{}: an unsplit table's program", air.name);
        }
        let forced = quotient_kernel_sources_with(air, 0, TEST_PART_STATEMENTS);
        for parts in [&srcs, &forced] {
            if parts.len() == 1 {
                continue;
            }
            // "// Part j of J: own constraints a..b[ and the LogUp constraints]."
            let mut next = 0;
            for (j, src) in parts.iter().enumerate() {
                let line = src
                    .lines()
                    .find(|l| l.starts_with("// Part "))
                    .unwrap_or_else(|| panic!("{} part {j}: no part line", air.name));
                let head = format!(
                    "// Part {} of {}: own constraints {next}..",
                    j + 1,
                    parts.len()
                );
                assert!(
                    line.starts_with(&head),
                    "{}: {line:?}, expected {head:?}",
                    air.name
                );
                let end: usize = line[head.len()..]
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(end > next || j + 1 == parts.len(), "{}: {line}", air.name);
                let logup = line.contains("LogUp");
                assert_eq!(
                    logup,
                    j + 1 == parts.len() && !air.interactions.is_empty(),
                    "{}: {line}",
                    air.name
                );
                next = end;
            }
            assert_eq!(
                next,
                air.constraints.len(),
                "{}: constraints covered",
                air.name
            );
        }
        if air.constraints.len() > 2 * TEST_PART_STATEMENTS {
            assert!(forced.len() > 1, "{}: forced split", air.name);
        }
    }
}

/// The host-emulation driver: reads cases `[id, log_n, log_q, w, pw, aw, nparams]` + the first `M` rows of
/// the main, preprocessed and aux LDEs + params (u64 LE) until EOF; per case writes `q` (`M x 3`, storage
/// order; cells never written stay ~0).
/// Case `id` runs the parts of `programs[id]` in order on each row.
fn emu_program(programs: &[Vec<String>]) -> (String, String) {
    let mut src = String::from("#include \"quotient.cuh\"\n");
    let mut cases = String::new();
    for (i, parts) in programs.iter().enumerate() {
        cases.push_str(&format!("            case {i}:\n"));
        for (j, part) in parts.iter().enumerate() {
            src.push_str(&format!("namespace air{i}_{j} {{\n{part}\n}}\n"));
            cases.push_str(&format!(
                "                air{i}_{j}::quotient_row(main.data(), prep.data(), aux.data(), params.data(), q.data(), s, log_n, log_q);\n"
            ));
        }
        cases.push_str("                break;\n");
    }
    let driver = format!(
        r#"
static bool rd(u64* p, size_t k) {{ return fread(p, 8, k, stdin) == k; }}
int main() {{
    u64 h[7];
    while (rd(h, 7)) {{
        u64 id = h[0], w = h[3], pw = h[4], aw = h[5], np = h[6];
        u32 log_n = (u32)h[1], log_q = (u32)h[2];
        u64 m = 1ull << (log_n + log_q);
        std::vector<u64> main(m * w), prep(m * pw + 1), aux(m * aw + 1), params(np), q(3 * m, ~0ull);
        if (!rd(main.data(), m * w) || !rd(prep.data(), m * pw) || !rd(aux.data(), m * aw) || !rd(params.data(), np)) return 2;
        for (u64 s = 0; s < m; s++) {{
            switch (id) {{
{cases}            default: return 3;
            }}
        }}
        fwrite(q.data(), 8, 3 * m, stdout);
    }}
    return 0;
}}
"#
    );
    (src, driver)
}

#[test]
fn quotient_host_emu_matches_cpu() {
    let mut rng = StdRng::seed_from_u64(seed());
    let machines = [machine(&mut rng, false), machine(&mut rng, true)];
    // One emulation program for both modes (the zk AIRs differ only in their chunk counts, which the
    // generated source does not depend on): case `t` runs table `t`'s programs, case `T + t` the same
    // table split into parts of `TEST_PART_STATEMENTS` (the split path on every table).
    let tables = machines[0].airs.len();
    let mut programs: Vec<Vec<String>> = machines[0]
        .airs
        .iter()
        .map(quotient_kernel_sources)
        .collect();
    programs.extend(
        machines[0]
            .airs
            .iter()
            .map(|a| quotient_kernel_sources_with(a, 0, TEST_PART_STATEMENTS)),
    );
    let split_parts: usize = programs[tables..].iter().map(Vec::len).sum();
    eprintln!("forced split: {tables} tables in {split_parts} programs");
    let (src, driver) = emu_program(&programs);
    let mut input = Vec::new();
    let put = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes());
    let mut all = Vec::new();
    for m in &machines {
        for c in cases(m) {
            let air = &m.airs[c.table];
            assert_eq!(
                quotient_kernel_sources(air),
                quotient_kernel_sources(&machines[0].airs[c.table])
            );
            let log_q = quotient_log_extension(air.num_quotient_chunks, c.log_blowup);
            let rows = 1usize << (c.log_n + log_q);
            let params = quotient_params(air, c.log_n, log_q, &m.ch, m.bus_sums[c.table], m.alpha);
            let (pw, aw) = (air.preprocessed_width, air.aux_width());
            for split in [false, true] {
                let id = c.table + if split { tables } else { 0 };
                for x in [id, c.log_n, log_q, air.width, pw, aw, params.len()] {
                    put(&mut input, x as u64);
                }
                for x in raw(&c.main.values[..rows * air.width]) {
                    put(&mut input, x);
                }
                if pw > 0 {
                    for x in raw(&c.prep.as_ref().unwrap().values[..rows * pw]) {
                        put(&mut input, x);
                    }
                }
                if aw > 0 {
                    for x in raw(&c.aux.as_ref().unwrap().values[..rows * aw]) {
                        put(&mut input, x);
                    }
                }
                for &x in &params {
                    put(&mut input, x);
                }
            }
            all.push((m, c, rows));
        }
    }
    let t = std::time::Instant::now();
    let Some(out) = host_emu::run("quotient", &src, &driver, &input) else {
        eprintln!("SKIPPED quotient_host_emu_matches_cpu: no C++ compiler");
        return;
    };
    eprintln!(
        "host emulation of {} cases (compile + run): {:.2?}",
        all.len(),
        t.elapsed()
    );
    let out = host_emu::u64s(&out);
    let mut pos = 0;
    for (m, c, rows) in &all {
        let got = &out[pos..pos + 3 * rows];
        pos += 3 * rows;
        let split = &out[pos..pos + 3 * rows];
        pos += 3 * rows;
        let want = host_values(m, c);
        assert!(want.iter().any(|e| !e.is_zero()), "{}: q is zero", c.label);
        let want_u64: Vec<u64> = want
            .iter()
            .flat_map(|e| e.0.map(|x| x.as_canonical_u64()))
            .collect();
        assert_cells(
            &format!("{}: q (storage order)", c.label),
            3,
            got,
            &want_u64,
        );
        assert_cells(
            &format!(
                "{}: q (storage order), split into {} parts",
                c.label,
                programs[tables + c.table].len()
            ),
            3,
            split,
            &want_u64,
        );
        // And the chunks, from the emulated values.
        let q: Vec<Ext3> = got
            .chunks_exact(3)
            .map(|e| Ext3([F::new(e[0]), F::new(e[1]), F::new(e[2])]))
            .collect();
        let chunks = m.airs[c.table].num_quotient_chunks;
        let from_emu = quotient_chunks(q, c.log_n, chunks);
        assert_eq!(from_emu, host_chunks(m, c), "{}: chunks", c.label);
        eprintln!("{}: {rows} quotient rows, {chunks} chunks: ok", c.label);
    }
    assert_eq!(pos, out.len(), "host emulation output length");
}

fn device_or_skip(test: &str) -> Option<Device> {
    match Device::new() {
        Ok(d) => {
            d.set_debug(true);
            Some(d)
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

/// Quotient chunks (zk: randomized) of every table and the random codeword with backend `b`, from the
/// committed main, preprocessed and aux rounds, as the prover computes them; `host` downloads a result.
fn backend_quotients<B>(
    b: &B,
    m: &Machine,
    resident: impl Fn(&RowMajorMatrix) -> TraceInput<B::DeviceTrace>,
    host: impl Fn(TraceInput<B::DeviceTrace>) -> RowMajorMatrix,
) -> Vec<RowMajorMatrix>
where
    B: CommitOps + AuxOps + QuotientOps,
{
    let lb = m.config.fri.log_blowup;
    let zk_shift = m.config.zk as usize;
    let salt = |round: u32| m.zk_rng.map(|r| (r, round));
    let mains: Vec<_> = m
        .traces
        .iter()
        .enumerate()
        .map(|(t, tr)| {
            // Every other table enters resident.
            let input = if t % 2 == 0 {
                resident(tr)
            } else {
                TraceInput::Host(tr.clone())
            };
            match &m.zk_rng {
                None => input,
                Some(r) => b.randomize_trace(input, r, ROUND_MAIN, t as u64).unwrap(),
            }
        })
        .collect();
    let (_, main) = b
        .commit(
            mains,
            lb,
            salt(ROUND_MAIN),
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .unwrap();
    let prep_tables: Vec<usize> = (0..m.airs.len()).filter(|&t| m.prep[t].is_some()).collect();
    let prep_inputs = prep_tables
        .iter()
        .map(|&t| TraceInput::Host(m.prep[t].clone().unwrap()))
        .collect();
    let (_, prep) = b
        .commit(
            prep_inputs,
            lb + zk_shift,
            None,
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .unwrap();
    let bus_tables: Vec<usize> = (0..m.airs.len())
        .filter(|&t| !m.airs[t].interactions.is_empty())
        .collect();
    let mut auxes = Vec::new();
    for &t in &bus_tables {
        let pi = prep_tables.iter().position(|&p| p == t).map(|i| (&prep, i));
        let (aux, _) = b
            .build_aux(
                &m.airs[t],
                &main,
                t,
                1 + zk_shift,
                pi,
                &m.ch,
                m.config.log_max_multiplicity,
            )
            .unwrap();
        auxes.push(match &m.zk_rng {
            None => aux,
            Some(r) => b.randomize_trace(aux, r, ROUND_AUX, t as u64).unwrap(),
        });
    }
    b.release_traces(&main).unwrap();
    b.release_traces(&prep).unwrap();
    let (_, aux) = b
        .commit(
            auxes,
            lb,
            salt(ROUND_AUX),
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .unwrap();
    let mut out = Vec::new();
    for (t, air) in m.airs.iter().enumerate() {
        let views = QuotientViews {
            main: MatrixView {
                round: &main,
                index: t,
            },
            preprocessed: prep_tables
                .iter()
                .position(|&p| p == t)
                .map(|index| MatrixView {
                    round: &prep,
                    index,
                }),
            aux: bus_tables
                .iter()
                .position(|&p| p == t)
                .map(|index| MatrixView { round: &aux, index }),
            log_n: m.traces[t].log_height().unwrap(),
            log_blowup: lb + zk_shift,
        };
        let q = b
            .quotient(air, views, &m.ch, m.bus_sums[t], m.alpha)
            .unwrap();
        let q = match &m.zk_rng {
            None => q,
            Some(r) => b
                .randomize_quotient(q, r, t as u64, m.config.fri.num_queries)
                .unwrap(),
        };
        out.push(host(q));
    }
    if let Some(r) = &m.zk_rng {
        let lh = zk::codeword_log_height(
            &m.config.fri,
            m.traces
                .iter()
                .map(|t| t.log_height().unwrap())
                .max()
                .unwrap()
                + zk_shift,
        );
        out.push(host(b.random_codeword(r, lh).unwrap()));
    }
    out
}

#[test]
fn gpu_quotient_matches_cpu() {
    let Some(dev) = device_or_skip("gpu_quotient_matches_cpu") else {
        return;
    };
    let backend = CudaBackend::new(dev);
    let mut rng = StdRng::seed_from_u64(seed());
    for zk_mode in [false, true] {
        let m = machine(&mut rng, zk_mode);
        let cpu = CpuBackend::default();
        let t = std::time::Instant::now();
        let want = backend_quotients(
            &cpu,
            &m,
            |tr| TraceInput::Host(tr.clone()),
            |q: TraceInput<Infallible>| match q {
                TraceInput::Host(q) => q,
                TraceInput::Device(d) => match d {},
            },
        );
        let t_cpu = t.elapsed();
        let t = std::time::Instant::now();
        let got = backend_quotients(
            &backend,
            &m,
            |tr| {
                TraceInput::Device(zkrv_cuda::DeviceTrace {
                    data: backend
                        .device()
                        .upload(&raw(&tr.values).collect::<Vec<_>>())
                        .unwrap(),
                    width: tr.width,
                    log_height: tr.log_height().unwrap() as u32,
                })
            },
            |q| match q {
                TraceInput::Device(d) => {
                    let v = backend.device().download(&d.data).unwrap();
                    RowMajorMatrix::new(v.into_iter().map(F::new).collect(), d.width)
                }
                TraceInput::Host(_) => panic!("a host quotient matrix from the CUDA backend"),
            },
        );
        let t_gpu = t.elapsed();
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let label = match m.airs.get(i) {
                Some(a) => format!("{} (zk {zk_mode})", a.name),
                None => "random codeword".into(),
            };
            assert_eq!(
                (g.height(), g.width),
                (w.height(), w.width),
                "{label}: shape"
            );
            assert_cells(&label, w.width, &canon(g), &canon(w));
        }
        eprintln!(
            "zk {zk_mode}: {} quotient matrices identical (rounds + quotients: CPU {t_cpu:.2?}, GPU {t_gpu:.2?})",
            got.len()
        );
    }
    let s = backend.stats();
    eprintln!("{s}");
    for ((stage, table), b) in &s.bytes {
        assert!(
            stage != "host-copy" || b.d2h == 0,
            "host copy of {table} during the quotient"
        );
    }
}

/// The fixed kernels of the quotient (`kernels/quotient.cu`: `quotient_split_kernel`,
/// `quotient_zk_scatter_kernel`) and `zk_matrix_kernel` (`kernels/zk.cu`), emulated on the host (one thread
/// at a time; they use no shared memory), against the host functions: the split kernel's output is the
/// chunk coefficients `idft(quotient_chunks(q))` from the inverse NTT of `q`; the scatter kernel's the
/// coefficients `idft(randomize_quotient(chunks))`; the stream matrix `ZkRng::matrix`. Edge shapes: one
/// chunk, `c > M/n` (coefficients past `M` are zero), one masked chunk (`count = 1`), several.
#[test]
fn quotient_kernels_host_emu_match_cpu() {
    use zkrv_stark::poly::{bit_reverse_slice, idft_batch, reverse_bits};
    use zkrv_stark::zk::{quotient_layout, DOMAIN_CODEWORD, DOMAIN_QUOTIENT, ROUND_QUOTIENT};
    let prelude = r#"
#include "logup.cuh"
#define __constant__
struct emu_dim { unsigned x; };
static emu_dim threadIdx, blockIdx, blockDim;
"#;
    let driver = r#"
template <class F> static void emu_launch(u64 threads, F f) {
    blockDim.x = 256;
    for (u64 t = 0; t < threads; t++) { blockIdx.x = (unsigned)(t / 256); threadIdx.x = (unsigned)(t % 256); f(); }
}
int main() {
    u64 h[8];
    while (fread(h, 8, 8, stdin) == 8) {
        if (h[0] == 0) {  // split: log_m, log_n, chunks, g_inv, m_inv
            u64 log_m = h[1], log_n = h[2], c = h[3];
            std::vector<u64> in(3ull << log_m), out((3ull << log_n) * c, ~0ull);
            if (fread(in.data(), 8, in.size(), stdin) != in.size()) return 2;
            emu_launch((1ull << log_n) * c, [&] { quotient_split_kernel(in.data(), out.data(), (u32)log_m, (u32)log_n, (u32)c, h[4], h[5]); });
            fwrite(out.data(), 8, out.size(), stdout);
        } else if (h[0] == 1) {  // scatter: log_n, c, count, m
            u64 log_n = h[1], c = h[2], count = h[3], m = h[4], n = 1ull << log_n, hh = 2 * n - m;
            std::vector<u64> in(n * 3 * c), masks(hh * 3 * (count - 1) + 1), out(2 * n * 3 * count, ~0ull);
            if (fread(in.data(), 8, in.size(), stdin) != in.size()) return 2;
            if (fread(masks.data(), 8, masks.size() - 1, stdin) != masks.size() - 1) return 2;
            emu_launch(2 * n * count, [&] { quotient_zk_scatter_kernel(in.data(), masks.data(), out.data(), (u32)log_n, (u32)c, (u32)count, m); });
            fwrite(out.data(), 8, out.size(), stdout);
        } else {  // stream matrix: seed (4), domain | round << 32, index, rows | width << 40
            u64 rows = h[7] & ((1ull << 40) - 1), width = h[7] >> 40;
            std::vector<u64> out(rows * width, ~0ull);
            emu_launch(rows, [&] { zk_matrix_kernel(h[1], h[2], h[3], h[4], (u32)(h[5] & 0xffffffffu), (u32)(h[5] >> 32), h[6], rows, (u32)width, out.data()); });
            fwrite(out.data(), 8, out.size(), stdout);
        }
    }
    return 0;
}
"#;
    let src = format!(
        "{prelude}\n{}\n{}\n",
        nvrtc::QUOTIENT_CU.src,
        nvrtc::ZK_CU.src.replace("#include \"field.cuh\"", "")
    );
    let mut rng = StdRng::seed_from_u64(seed());
    let put = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes());
    let mut input = Vec::new();
    let mut expect: Vec<(String, usize, Vec<u64>)> = Vec::new();
    let rand_q =
        |rng: &mut StdRng, len: usize| -> Vec<Ext3> { (0..len).map(|_| rand_ext(rng)).collect() };
    // Split.
    for (log_n, log_q, c) in [
        (1usize, 0usize, 1usize),
        (3, 1, 2),
        (4, 2, 3),
        (5, 3, 5),
        (3, 1, 3),
        (6, 2, 4),
    ] {
        let log_m = log_n + log_q;
        let q = rand_q(&mut rng, 1 << log_m);
        // The inverse DIF NTT of natural-order q: unscaled coefficients in bit-reversed order.
        let mut nat = q.clone();
        bit_reverse_slice(&mut nat);
        let co = idft_batch(RowMajorMatrix::new(
            nat.iter().flat_map(|e| e.0).collect(),
            3,
        ));
        let m_f = F::from_u64(1 << log_m);
        let mut dif = vec![0u64; 3 << log_m];
        for k in 0..1usize << log_m {
            let r = reverse_bits(k, log_m);
            for e in 0..3 {
                dif[3 * r + e] = (co.values[3 * k + e] * m_f).as_canonical_u64();
            }
        }
        use zkrv_stark::field::Field;
        let g_inv = zkrv_stark::poly::coset_shift().inverse().as_canonical_u64();
        let m_inv = m_f.inverse().as_canonical_u64();
        for x in [0, log_m as u64, log_n as u64, c as u64, g_inv, m_inv, 0, 0] {
            put(&mut input, x);
        }
        for x in dif {
            put(&mut input, x);
        }
        let want = canon(&idft_batch(quotient_chunks(q, log_n, c)));
        expect.push((
            format!("split 2^{log_n} x {c} (M = 2^{log_m})"),
            3 * c,
            want,
        ));
    }
    // zk scatter.
    let zrng = ZkRng::from_test_seed(rng.gen());
    for (log_n, c, queries) in [
        (3usize, 3usize, 1usize),
        (5, 5, 7),
        (4, 7, 1),
        (3, 1, 1),
        (7, 5, 44),
        (8, 5, 44),
    ] {
        let n = 1usize << log_n;
        let chunks = RowMajorMatrix::new(
            (0..n * 3 * c).map(|_| F::from_u64(rng.gen())).collect(),
            3 * c,
        );
        let table: u64 = rng.gen_range(0..20);
        let (count, m) = quotient_layout(c, log_n, queries);
        let coeffs = idft_batch(chunks.clone());
        for x in [1, log_n as u64, c as u64, count as u64, m as u64, 0, 0, 0] {
            put(&mut input, x);
        }
        for x in canon(&coeffs) {
            put(&mut input, x);
        }
        if count > 1 {
            let masks = zrng.matrix(
                DOMAIN_QUOTIENT,
                ROUND_QUOTIENT,
                table,
                2 * n - m,
                3 * (count - 1),
            );
            for x in canon(&masks) {
                put(&mut input, x);
            }
        }
        let want = canon(&idft_batch(zk::randomize_quotient(
            chunks, &zrng, table, queries,
        )));
        expect.push((
            format!("zk scatter 2^{log_n} x {c} ({count} of {m})"),
            3 * count,
            want,
        ));
    }
    // Stream matrices (quotient masks, random codeword).
    for (domain, index, rows, width) in [
        (DOMAIN_QUOTIENT, 5u64, 37usize, 6usize),
        (DOMAIN_CODEWORD, 0, 64, 3),
        (DOMAIN_QUOTIENT, 2, 3, 17),
    ] {
        let s = zrng.seed_words();
        for x in [
            2,
            s[0],
            s[1],
            s[2],
            s[3],
            domain as u64 | (ROUND_QUOTIENT as u64) << 32,
            index,
            rows as u64 | (width as u64) << 40,
        ] {
            put(&mut input, x);
        }
        let want = canon(&zrng.matrix(domain, ROUND_QUOTIENT, index, rows, width));
        expect.push((format!("stream matrix {rows} x {width}"), width, want));
    }
    let Some(out) = host_emu::run("quotient_kernels", &src, driver, &input) else {
        eprintln!("SKIPPED quotient_kernels_host_emu_match_cpu: no C++ compiler");
        return;
    };
    let out = host_emu::u64s(&out);
    let mut pos = 0;
    for (label, width, want) in &expect {
        assert_cells(label, *width, &out[pos..pos + want.len()], want);
        pos += want.len();
        eprintln!("{label}: ok");
    }
    assert_eq!(pos, out.len(), "host emulation output length");
}
