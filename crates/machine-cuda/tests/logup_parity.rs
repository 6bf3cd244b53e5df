//! Parity of the GPU LogUp aux build (`zkrv_cuda::logup`) with the host `zkrv_stark::logup::build_aux_trace`:
//! every cell of the aux trace, the bus sum and the errors (multiplicity out of range, zero fingerprint).
//!
//! Cases: a small AIR that uses every leaf kind (next rows, preprocessed columns, selectors, constants, public
//! values, negation, sends and receives, more interactions than one term column holds, an empty tuple) at heights 2 .. 2^12 with
//! random (partly non-canonical) cells; the stark crate's fib/bytes machine; every table of the real guests
//! `fibonacci` and `sort`; a multiplicity out of range (two bad cells: the first in row-major order is reported);
//! a zero fingerprint. zk mode (row stride 2): the small cases and `fibonacci` again, each main trace in the
//! zk-randomized `2n`-row layout (trace on the even rows, random odd rows), compared with the host build on the
//! even rows (`aux_host_emu_matches_cpu`, `gpu_aux_matches_cpu`).
//!
//! Three layers:
//! * `aux_codegen_compiles_for_sm90`: NVRTC compiles the generated source of every AIR (no GPU needed);
//! * `aux_host_emu_matches_cpu`: the generated source compiled as C++ (`-DZKRV_HOST_EMU`) and run on the host
//!   (per-row function + a sequential running sum), so the code generator is checked in CI without a GPU;
//!   `aux_scan_host_emu_matches_prefix_sum` does the same for the running-sum scan kernels;
//! * `gpu_aux_matches_cpu`, `gpu_guest_proofs_match_cpu`: the device build (row kernel + scan) and whole machine
//!   proofs with `CudaBackend` (aux built on the GPU from resident main traces) against the CPU; they print
//!   `SKIPPED ...` without a device.
//!
//! Seeds are printed; `ZKRV_SEED` replays.
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::borrow::Cow;

use zkrv_cuda::logup::{aux_kernel_source, aux_params, build_aux_device_strided, AuxBuildError};
use zkrv_cuda::{nvrtc, Device, TransferStats};
use zkrv_stark::air::{Air, AirBuilder, CompiledAir};
use zkrv_stark::backend::{strided_rows, TraceInput};
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F, P};
use zkrv_stark::logup::{build_aux_trace, max_tuple_len, LogupChallenges, LogupError};
use zkrv_stark::matrix::RowMajorMatrix;

#[path = "../../stark/tests/proto_common/mod.rs"]
mod proto_common;

const BITS: u32 = 32;

/// Uses every leaf kind in interactions: next rows, preprocessed (current and next), the three selectors,
/// constants, public values (read from the parameter block), negation, receives, 13 interactions (more than
/// one term column), an empty tuple.
struct SinkAir;

/// [`SinkAir`]'s public values: the largest field element and a 45-bit value.
const SINK_PUBLIC: [u64; 2] = [P - 1, 0x1234_5678_9abc];

impl Air for SinkAir {
    fn name(&self) -> &str {
        "sink"
    }
    fn width(&self) -> usize {
        6
    }
    fn preprocessed_width(&self) -> usize {
        2
    }
    fn public_values(&self) -> Vec<F> {
        SINK_PUBLIC.map(F::from_u64).to_vec()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let cols: Vec<_> = (0..6).map(|i| b.main(i)).collect();
        let m = |i: usize| cols[i].clone();
        b.send(
            3,
            vec![
                m(0),
                m(1) * m(2) + 5u64,
                -m(3),
                b.main_next(0),
                b.is_first_row(),
                b.public(0) * m(2),
            ],
            1u64,
        );
        b.receive(4, vec![b.preprocessed(0), b.preprocessed_next(1)], m(4));
        b.send(
            5,
            vec![b.is_transition() * m(5) + b.public(1)],
            b.is_first_row(),
        );
        b.send(6, vec![], b.is_last_row() + 2u64);
        for i in 0..9 {
            b.send(7, vec![m(i % 6) - (i as u64)], 1u64);
        }
        b.receive(8, vec![m(0) - m(1)], m(4) * 3u64);
    }
}

/// Random sink traces of height n: cells random (a few non-canonical, >= p), column 4 (a multiplicity) below
/// 2^20.
fn sink_traces(rng: &mut StdRng, n: usize) -> (RowMajorMatrix, RowMajorMatrix) {
    let mut main = Vec::with_capacity(6 * n);
    for _ in 0..n {
        for c in 0..6 {
            let v: u64 = rng.gen();
            main.push(match c {
                4 => F::from_u64(v >> 44),
                _ if v.is_multiple_of(7) => F::new(P + (v % (u64::MAX - P))),
                _ => F::from_u64(v),
            });
        }
    }
    let prep = (0..2 * n).map(|_| F::from_u64(rng.gen())).collect();
    (RowMajorMatrix::new(main, 6), RowMajorMatrix::new(prep, 2))
}

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

/// One aux-build case: an AIR, its traces, the challenges. `main` is `(stride n) x width`: the trace is its
/// rows `0, stride, 2 stride, ..` (stride 2: the zk-randomized layout, odd rows random).
struct Case {
    label: String,
    air: CompiledAir,
    main: RowMajorMatrix,
    stride: usize,
    prep: Option<RowMajorMatrix>,
    ch: LogupChallenges,
}

impl Case {
    /// The trace itself (`n x width`).
    fn logical_main(&self) -> RowMajorMatrix {
        strided_rows(Cow::Borrowed(&self.main), self.stride).into_owned()
    }
    fn n(&self) -> usize {
        self.main.height() / self.stride
    }
    fn host(&self) -> Result<(RowMajorMatrix, Ext3), LogupError> {
        build_aux_trace(
            &self.air,
            &self.logical_main(),
            self.prep.as_ref(),
            &self.ch,
            BITS,
        )
    }
}

/// The small cases and `fibonacci`'s tables in the zk layout ([`zk_cases`]).
fn zk_variants(rng: &mut StdRng) -> Vec<Case> {
    let mut cases = small_cases(rng);
    cases.extend(guest_cases(rng, "fibonacci"));
    zk_cases(rng, cases)
}

/// The zk layout of `cases` (stride 2): trace row `r` at row `2r`, odd rows uniformly random field
/// elements (so a kernel reading an odd row breaks the multiplicity bound or the sums). Preprocessed
/// traces unchanged (zk does not randomize them).
fn zk_cases(rng: &mut StdRng, cases: Vec<Case>) -> Vec<Case> {
    cases
        .into_iter()
        .map(|c| {
            assert_eq!(c.stride, 1);
            let w = c.main.width;
            let mut v = Vec::with_capacity(2 * c.main.values.len());
            for r in 0..c.main.height() {
                v.extend_from_slice(c.main.row(r));
                v.extend((0..w).map(|_| F::new(rng.gen::<u64>() % P)));
            }
            Case {
                label: format!("{} (zk, stride 2)", c.label),
                main: RowMajorMatrix::new(v, w),
                stride: 2,
                ..c
            }
        })
        .collect()
}

fn challenges(rng: &mut StdRng, airs: &[CompiledAir]) -> LogupChallenges {
    LogupChallenges::new(rand_ext(rng), rand_ext(rng), max_tuple_len(airs, &[]))
}

fn compile(air: &dyn Air) -> CompiledAir {
    CompiledAir::new(air, 3).expect("compile")
}

/// The synthetic cases: sink at several heights, one bad multiplicity case, one zero fingerprint case, and
/// the fib/bytes machine.
fn small_cases(rng: &mut StdRng) -> Vec<Case> {
    let sink = compile(&SinkAir);
    let mut cases = Vec::new();
    for log_n in [1usize, 2, 3, 5, 10, 11, 12] {
        let (main, prep) = sink_traces(rng, 1 << log_n);
        cases.push(Case {
            label: format!("sink 2^{log_n}"),
            ch: challenges(rng, std::slice::from_ref(&sink)),
            air: sink.clone(),
            main,
            stride: 1,
            prep: Some(prep),
        });
    }
    // Multiplicity out of range on rows 700 and 300 (interaction 1, column 4): row 300 is reported.
    let (mut main, prep) = sink_traces(rng, 1024);
    main.row_mut(700)[4] = F::from_u64(1 << BITS);
    main.row_mut(300)[4] = F::from_u64(u64::MAX >> 8);
    cases.push(Case {
        label: "sink bad multiplicity".into(),
        ch: challenges(rng, std::slice::from_ref(&sink)),
        air: sink.clone(),
        main,
        stride: 1,
        prep: Some(prep),
    });
    // Zero fingerprint: interaction 12 (bus 8, tuple (m0 - m1)) on row 77: z = 8 + alpha (m0 - m1).
    let (main, prep) = sink_traces(rng, 128);
    let mut ch = challenges(rng, std::slice::from_ref(&sink));
    let r = main.row(77);
    ch.z = Ext3::from(F::from_u64(8)) + ch.alpha * (r[0] - r[1]);
    cases.push(Case {
        label: "sink zero fingerprint".into(),
        ch,
        air: sink,
        main,
        stride: 1,
        prep: Some(prep),
    });
    // fib/bytes (the proof_parity machine).
    let fx = proto_common::fixture(9);
    let airs: Vec<CompiledAir> = proto_common::airs().into_iter().map(compile).collect();
    let ch = challenges(rng, &airs);
    for (t, air) in airs.into_iter().enumerate() {
        cases.push(Case {
            label: format!("proto {}", air.name),
            air,
            main: fx.traces[t].clone(),
            stride: 1,
            prep: fx.preprocessed[t].clone(),
            ch: ch.clone(),
        });
    }
    cases
}

/// Every table (with interactions) of a real guest's witness.
fn guest_cases(rng: &mut StdRng, name: &str) -> Vec<Case> {
    let root = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let elf = std::fs::read(format!("{root}/bin/{name}.elf")).expect("guest ELF");
    let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap_or_default();
    let program = zkrv_executor::Program::from_elf(&elf).expect("ELF");
    let config = zkrv_stark::StarkConfig::dev();
    let checker = zkrv_machine::WitnessChecker::new(&program, &config).expect("checker");
    let w = zkrv_machine::witness(&program, &input).expect("witness");
    let ch = challenges(rng, checker.compiled());
    checker
        .compiled()
        .iter()
        .enumerate()
        // Tables with interactions and rows (an absent precompile table has neither aux nor rows).
        .filter(|&(t, a)| !a.interactions.is_empty() && w.traces[t].height() > 0)
        .map(|(t, air)| Case {
            label: format!("{name} {}", air.name),
            air: air.clone(),
            main: w.traces[t].clone(),
            stride: 1,
            prep: checker.preprocessed()[t].clone(),
            ch: ch.clone(),
        })
        .collect()
}

fn raw(m: &RowMajorMatrix) -> Vec<u64> {
    // The bytes as stored (possibly non-canonical), as a device upload of the matrix would see them.
    m.values
        .iter()
        .map(|x| unsafe { std::mem::transmute::<F, u64>(*x) })
        .collect()
}

fn canon(m: &RowMajorMatrix) -> Vec<u64> {
    m.values.iter().map(|x| x.as_canonical_u64()).collect()
}

/// A device or emulated build: (aux cells canonical u64, aux width, bus sum), or the error.
type Built = Result<(Vec<u64>, usize, Ext3), LogupError>;

/// Compares a GPU/emulated result with the host's; `label` names the case.
fn assert_same(label: &str, host: &Result<(RowMajorMatrix, Ext3), LogupError>, got: Built) {
    match (host, got) {
        (Ok((h, hs)), Ok((g, gw, gs))) => {
            assert_eq!(gw, h.width, "{label}: aux width");
            let hv = canon(h);
            assert_eq!(g.len(), hv.len(), "{label}: aux size");
            if let Some(i) = (0..hv.len()).find(|&i| hv[i] != g[i]) {
                panic!(
                    "{label}: aux cell (row {}, col {}) = {:#x}, host {:#x}",
                    i / gw,
                    i % gw,
                    g[i],
                    hv[i]
                );
            }
            assert_eq!(gs, *hs, "{label}: bus sum");
        }
        (Err(he), Err(ge)) => assert_eq!(&ge, he, "{label}: error"),
        (h, g) => panic!(
            "{label}: host {:?} vs device {:?}",
            h.as_ref().map(|r| r.1),
            g.map(|r| r.2)
        ),
    }
}

#[test]
fn aux_codegen_compiles_for_sm90() {
    if !nvrtc::nvrtc_available() {
        assert!(
            std::env::var_os("ZKRV_REQUIRE_NVRTC").is_none(),
            "ZKRV_REQUIRE_NVRTC is set but libnvrtc cannot be loaded"
        );
        eprintln!("SKIPPED aux_codegen_compiles_for_sm90: libnvrtc not loadable");
        return;
    }
    let mut rng = StdRng::seed_from_u64(seed());
    let mut airs: Vec<CompiledAir> = vec![compile(&SinkAir)];
    airs.extend(proto_common::airs().into_iter().map(compile));
    airs.extend(
        guest_cases(&mut rng, "fibonacci")
            .into_iter()
            .map(|c| c.air),
    );
    for air in &airs {
        let src = aux_kernel_source(air);
        assert_eq!(
            src,
            aux_kernel_source(air),
            "{}: codegen not deterministic",
            air.name
        );
        let t = std::time::Instant::now();
        let cubin = nvrtc::compile_cubin(
            &format!("logup_aux_{}.cu", air.name),
            &src,
            nvrtc::HEADERS,
            "sm_90",
        )
        .unwrap_or_else(|e| panic!("{}: {e}\n{src}", air.name));
        assert_eq!(&cubin[..4], b"\x7fELF");
        eprintln!(
            "{}: {} interactions, {} source bytes, compiled in {:.2?}",
            air.name,
            air.interactions.len(),
            src.len(),
            t.elapsed()
        );
    }
}

/// The host-emulation driver: reads cases `[id, n, width, pw, aw, nparams, main row stride]` + main
/// (`stride n x width`) + prep + params (u64 LE)
/// until EOF; per case writes err[0], err[1] and the `n x aw` aux trace (cells never written stay ~0) with the
/// running sum column scanned sequentially when no error was flagged.
fn emu_program(airs: &[&CompiledAir]) -> (String, String) {
    let mut src = String::from("#include \"logup.cuh\"\n");
    let mut cases = String::new();
    for (i, a) in airs.iter().enumerate() {
        src.push_str(&format!(
            "namespace air{i} {{\n{}\n}}\n",
            aux_kernel_source(a)
        ));
        cases.push_str(&format!(
            "            case {i}: air{i}::aux_row(main.data(), prep.data(), aux.data(), params.data(), err, r, n, ms); break;\n"
        ));
    }
    let driver = format!(
        r#"
static bool rd(u64* p, size_t k) {{ return fread(p, 8, k, stdin) == k; }}
int main() {{
    u64 h[7];
    while (rd(h, 7)) {{
        u64 id = h[0], n = h[1], w = h[2], pw = h[3], aw = h[4], np = h[5], ms = h[6];
        std::vector<u64> main(ms * n * w), prep(n * pw + 1), params(np), aux(n * aw, ~0ull);
        if (!rd(main.data(), ms * n * w) || !rd(prep.data(), n * pw) || !rd(params.data(), np)) return 2;
        u64 err[2] = {{~0ull, ~0ull}};
        for (u64 r = 0; r < n; r++) {{
            switch (id) {{
{cases}            default: return 3;
            }}
        }}
        if (err[0] == ~0ull && err[1] == ~0ull) {{
            ext3 s = ext3{{0, 0, 0}};
            for (u64 r = 0; r < n; r++) {{
                u64* c = aux.data() + r * aw + aw - 3;
                s = ext3_add(s, logup_load_ext3(c));
                logup_store_ext3(c, s);
            }}
        }}
        fwrite(err, 8, 2, stdout);
        fwrite(aux.data(), 8, n * aw, stdout);
    }}
    return 0;
}}
"#
    );
    (src, driver)
}

/// Runs `cases` through the host emulation (one compile for all); `None` without a C++ compiler.
fn emulate(cases: &[Case]) -> Option<Vec<Built>> {
    let airs: Vec<&CompiledAir> = cases.iter().map(|c| &c.air).collect();
    let (src, driver) = emu_program(&airs);
    let mut input = Vec::new();
    let put = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes());
    for (i, c) in cases.iter().enumerate() {
        let n = c.n();
        let lh = n.trailing_zeros();
        let params = aux_params(&c.air, lh, &c.ch, BITS).unwrap();
        let pw = c.air.preprocessed_width;
        for x in [
            i as u64,
            n as u64,
            c.air.width as u64,
            pw as u64,
            c.air.aux_width() as u64,
        ] {
            put(&mut input, x);
        }
        put(&mut input, params.len() as u64);
        put(&mut input, c.stride as u64);
        for x in raw(&c.main) {
            put(&mut input, x);
        }
        if pw > 0 {
            for x in raw(c.prep.as_ref().unwrap()) {
                put(&mut input, x);
            }
        }
        for x in params {
            put(&mut input, x);
        }
    }
    let out = host_emu::u64s(&host_emu::run("logup_aux", &src, &driver, &input)?);
    let mut pos = 0;
    let mut res = Vec::new();
    for c in cases {
        let (n, aw, k) = (c.n(), c.air.aux_width(), c.air.interactions.len() as u64);
        let (e0, e1) = (out[pos], out[pos + 1]);
        let aux = out[pos + 2..pos + 2 + n * aw].to_vec();
        pos += 2 + n * aw;
        res.push(if e0 != u64::MAX {
            let (row, interaction) = ((e0 / k) as usize, (e0 % k) as usize);
            let it = &c.air.interactions[interaction];
            // The value as the host reports it (the kernel only flags the position).
            Err(LogupError::MultiplicityTooLarge {
                table: c.air.name.clone(),
                row,
                interaction,
                bus: it.bus,
                value: host_multiplicity(c, row, interaction),
                bits: BITS,
            })
        } else if e1 != u64::MAX {
            Err(LogupError::ZeroFingerprint {
                table: c.air.name.clone(),
                row: (e1 / k) as usize,
                interaction: (e1 % k) as usize,
            })
        } else {
            let s = &aux[(n - 1) * aw + aw - 3..n * aw];
            let sum = Ext3([F::new(s[0]), F::new(s[1]), F::new(s[2])]);
            Ok((aux, aw, sum))
        });
    }
    assert_eq!(pos, out.len(), "host emulation output length");
    Some(res)
}

/// Multiplicity of `interaction` on `row`, evaluated with the host circuit.
fn host_multiplicity(c: &Case, row: usize, interaction: usize) -> u64 {
    let main = c.logical_main();
    let n = main.height();
    let nxt = (row + 1) % n;
    let omega = zkrv_stark::poly::domain_generator(n.trailing_zeros() as usize);
    let tr = zkrv_stark::air::TraceRow {
        main: main.row(row),
        main_next: main.row(nxt),
        prep: c.prep.as_ref().map_or(&[][..], |p| p.row(row)),
        prep_next: c.prep.as_ref().map_or(&[][..], |p| p.row(nxt)),
        first: F::from_bool(row == 0),
        last: F::from_bool(row == n - 1),
        transition: omega.exp_u64(row as u64) - omega.exp_u64(n as u64 - 1),
    };
    let mut v = Vec::new();
    c.air.circuit.eval(&tr, &c.air.public_values, &mut v);
    v[c.air.interactions[interaction].multiplicity as usize].as_canonical_u64()
}

#[test]
fn aux_host_emu_matches_cpu() {
    let mut rng = StdRng::seed_from_u64(seed());
    let mut cases = small_cases(&mut rng);
    for g in ["fibonacci", "sort"] {
        cases.extend(guest_cases(&mut rng, g));
    }
    // zk mode: the same kinds of cases read from the 2n-row randomized layout with row stride 2.
    cases.extend(zk_variants(&mut rng));
    let t = std::time::Instant::now();
    let Some(got) = emulate(&cases) else {
        eprintln!("SKIPPED aux_host_emu_matches_cpu: no C++ compiler");
        return;
    };
    eprintln!(
        "host emulation of {} cases: {:.2?}",
        cases.len(),
        t.elapsed()
    );
    let mut errors = 0;
    for (c, g) in cases.iter().zip(got) {
        let host = c.host();
        errors += host.is_err() as usize;
        assert_same(&c.label, &host, g);
    }
    assert_eq!(
        errors, 4,
        "the two error cases (stride 1 and 2) must fail on the host"
    );
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

#[test]
fn gpu_aux_matches_cpu() {
    let Some(dev) = device_or_skip("gpu_aux_matches_cpu") else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(seed());
    let mut cases = small_cases(&mut rng);
    // 2^21 rows: the running-sum scan recurses twice (2048 blocks of 1024 rows, then 2, then 1).
    let sink = compile(&SinkAir);
    let (main, prep) = sink_traces(&mut rng, 1 << 21);
    cases.push(Case {
        label: "sink 2^21".into(),
        ch: challenges(&mut rng, std::slice::from_ref(&sink)),
        air: sink,
        main,
        stride: 1,
        prep: Some(prep),
    });
    for g in ["fibonacci", "sort"] {
        cases.extend(guest_cases(&mut rng, g));
    }
    // zk mode: row stride 2 over the 2n-row randomized layout.
    cases.extend(zk_variants(&mut rng));
    let mut stats = TransferStats::default();
    for c in &cases {
        let main = dev.upload(&raw(&c.main)).unwrap();
        let prep = c.prep.as_ref().map(|p| dev.upload(&raw(p)).unwrap());
        let lh = c.n().trailing_zeros();
        let t = std::time::Instant::now();
        let got = build_aux_device_strided(
            &dev,
            &c.air,
            &main,
            c.stride,
            lh,
            prep.as_ref(),
            &c.ch,
            BITS,
            &mut stats,
            &c.label,
        );
        let first = t.elapsed();
        // Again, with the program loaded: the build itself.
        let t = std::time::Instant::now();
        let again = build_aux_device_strided(
            &dev,
            &c.air,
            &main,
            c.stride,
            lh,
            prep.as_ref(),
            &c.ch,
            BITS,
            &mut stats,
            &c.label,
        );
        let dt = t.elapsed();
        assert_eq!(again.is_ok(), got.is_ok(), "{}: second build", c.label);
        let got = match got {
            Ok((tr, sum)) => Ok((dev.download(&tr.data).unwrap(), tr.width, sum)),
            Err(AuxBuildError::Logup(e)) => Err(e),
            Err(AuxBuildError::Cuda(e)) => panic!("{}: {e}", c.label),
        };
        let t = std::time::Instant::now();
        let host = c.host();
        let cpu = t.elapsed();
        eprintln!(
            "{}: 2^{lh} rows x {} aux columns: GPU {:.2?} (first use, compiles or loads), {:.2?} (again); CPU {:.2?}",
            c.label,
            c.air.aux_width(),
            first,
            dt,
            cpu
        );
        assert_same(&c.label, &host, got);
        // Inputs untouched.
        assert_eq!(
            dev.download(&main).unwrap(),
            raw(&c.main),
            "{}: main modified",
            c.label
        );
    }
    eprintln!("{stats}");
}

/// Whole machine proofs with `CudaBackend` (aux traces built on the GPU from the committed main traces,
/// some entering resident) are byte-identical to CPU proofs and verify.
#[test]
fn gpu_guest_proofs_match_cpu() {
    let Some(dev) = device_or_skip("gpu_guest_proofs_match_cpu") else {
        return;
    };
    let backend = zkrv_cuda::CudaBackend::new(dev);
    let root = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let config = zkrv_stark::StarkConfig::dev();
    for name in ["fibonacci", "sort"] {
        let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
        let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap_or_default();
        let program = zkrv_executor::Program::from_elf(&elf).unwrap();
        let w = zkrv_machine::witness(&program, &input).unwrap();
        let (st, cpu) = zkrv_machine::prove_witness(&program, w.clone(), &config).unwrap();
        // Every other table enters resident (uploaded here, as a device fill would leave it).
        let inputs = w
            .traces
            .iter()
            .enumerate()
            .map(|(t, m)| {
                // (An absent precompile table has no rows to upload: it stays a host input.)
                if t % 2 == 0 && m.height() > 0 {
                    TraceInput::Device(zkrv_cuda::DeviceTrace {
                        data: backend.device().upload(&raw(m)).unwrap(),
                        width: m.width,
                        log_height: m.log_height().unwrap() as u32,
                    })
                } else {
                    TraceInput::Host(m.clone())
                }
            })
            .collect();
        let (_, gpu) = zkrv_machine::prove_inputs_with(
            &backend,
            &program,
            w.statement.clone(),
            w.pages.clone(),
            inputs,
            &config,
        )
        .unwrap();
        assert_eq!(gpu.to_bytes(), cpu.to_bytes(), "{name}: GPU proof differs");
        zkrv_machine::verify(&program, &st, &gpu, &config, 0).unwrap();
    }
    let s = backend.stats();
    eprintln!("{s}");
    let a = s.total_avoided();
    assert!(
        a.h2d > 0,
        "aux traces should enter the aux commitment resident"
    );
    assert!(a.d2h > 0, "resident main traces should never be downloaded");
}

/// Writes the generated sources of the guest tables to `$ZKRV_DUMP_AUX` (a folder), for inspection.
#[test]
fn dump_aux_sources() {
    let Some(dir) = std::env::var_os("ZKRV_DUMP_AUX") else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(1);
    for c in guest_cases(&mut rng, "fibonacci") {
        std::fs::write(
            std::path::Path::new(&dir).join(format!("{}.cu", c.air.name)),
            aux_kernel_source(&c.air),
        )
        .unwrap();
    }
}

/// The running-sum scan kernels of `kernels/logup.cu`, emulated on the host: blocks run one after the other,
/// the 256 threads of a block as OS threads meeting at a real barrier (`__syncthreads`), `__shared__` as a
/// static array; the recursion over block totals mirrors `zkrv_cuda::logup::scan_ext3`. Compared with a
/// sequential prefix sum in Rust, at edge sizes around the 1024-element block and with a stride.
#[test]
fn aux_scan_host_emu_matches_prefix_sum() {
    let prelude = r#"
#include <thread>
#include <mutex>
#include <condition_variable>
struct emu_dim { unsigned x; };
static thread_local emu_dim threadIdx;
static emu_dim blockIdx, blockDim;
static std::mutex emu_m;
static std::condition_variable emu_cv;
static unsigned emu_waiting = 0, emu_gen = 0;
static void __syncthreads() {
    std::unique_lock<std::mutex> l(emu_m);
    unsigned g = emu_gen;
    if (++emu_waiting == blockDim.x) { emu_waiting = 0; emu_gen++; emu_cv.notify_all(); }
    else emu_cv.wait(l, [&] { return emu_gen != g; });
}
#define __shared__ static
"#;
    let driver = r#"
template <class F> static void emu_launch(unsigned grid, unsigned block, F f) {
    blockDim.x = block;
    for (unsigned b = 0; b < grid; b++) {
        blockIdx.x = b;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < block; t++) ts.emplace_back([&, t] { threadIdx.x = t; f(); });
        for (auto& t : ts) t.join();
    }
}
static void scan(u64* data, u64 stride, u64 n) {
    u64 blocks = (n + SCAN_BLOCK - 1) / SCAN_BLOCK;
    std::vector<u64> sums(3 * blocks, ~0ull);
    emu_launch(blocks, SCAN_THREADS, [&] { logup_scan_block_kernel(data, stride, n, sums.data()); });
    if (blocks > 1) {
        scan(sums.data(), 3, blocks);
        emu_launch((n + 255) / 256, 256, [&] { logup_scan_add_kernel(data, stride, n, sums.data()); });
    }
}
int main() {
    u64 h[2];
    while (fread(h, 8, 2, stdin) == 2) {
        u64 n = h[0], stride = h[1];
        std::vector<u64> d(n * stride);
        if (fread(d.data(), 8, d.size(), stdin) != d.size()) return 2;
        scan(d.data(), stride, n);
        fwrite(d.data(), 8, d.size(), stdout);
    }
    return 0;
}
"#;
    let mut rng = StdRng::seed_from_u64(seed());
    let mut input = Vec::new();
    let mut expect = Vec::new();
    for (n, stride) in [
        (1usize, 3usize),
        (2, 3),
        (1023, 3),
        (1024, 5),
        (1025, 3),
        (5 * 1024 + 17, 7),
    ] {
        input.extend_from_slice(&(n as u64).to_le_bytes());
        input.extend_from_slice(&(stride as u64).to_le_bytes());
        let mut acc = Ext3::ZERO;
        for _ in 0..n {
            let e = rand_ext(&mut rng);
            acc += e;
            for j in 0..stride {
                // Columns other than the first three must come back untouched.
                let v = if j < 3 {
                    e.0[j].as_canonical_u64()
                } else {
                    rng.gen::<u64>()
                };
                input.extend_from_slice(&v.to_le_bytes());
                expect.push(if j < 3 {
                    acc.0[j].as_canonical_u64()
                } else {
                    v
                });
            }
        }
    }
    let src = format!("{prelude}\n{}", nvrtc::LOGUP_CU.src);
    let Some(out) = host_emu::run("logup_scan", &src, driver, &input) else {
        eprintln!("SKIPPED aux_scan_host_emu_matches_prefix_sum: no C++ compiler");
        return;
    };
    let got = host_emu::u64s(&out);
    assert_eq!(got.len(), expect.len());
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expect[i]) {
        panic!("scan cell {i}: {:#x}, expected {:#x}", got[i], expect[i]);
    }
}
