//! Segment traces on the device (docs/continuations.md §5a "Device trace generation from a checkpoint"):
//! for several segment plans (tiny segments of rv64im, of sha256 and of sha256_accel: the first, a middle
//! and the last segment, the first segments that read input, start after the end of the input, make a
//! syscall or call a precompile, and a segment starting right after a precompile call), the device traces
//! equal `segment_witness`'s (the host oracle) cell for cell.
//!
//! * `segment_cpu_and_input_fills_match_host` (host emulation, always; no GPU needed): the two fills whose
//!   rows differ at a segment boundary, CPU (the last real row of a paused segment goes on at its end pc)
//!   and INPUT (first index = the start input cursor; the end-of-input row only if the segment sees the end),
//!   run on the host from the inputs `generate_split_at` leaves for the device; cells against the segment
//!   witness's traces, lookups against the host fills'.
//! * `gpu_segment_traces_match_host_and_prove_byte_identical` (GPU; prints `SKIPPED` without one): every
//!   table of `generate_segment_traces` (all device fills and walks) equals the witness's, no main trace is
//!   uploaded at the commitment, and the segment proof is byte-identical to the CPU backend's (no-zk, and zk
//!   with a fixed test seed) and verifies.
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rv_programs.rs"]
mod rv_programs;

use zkrv_cuda::commit::STAGE_COMMIT;
use zkrv_cuda::{CudaBackend, Device, TraceOrigin};
use zkrv_executor::{CycleEvent, Program};
use zkrv_machine::registry::Table;
use zkrv_machine::segment::{
    plan_run, prove_segment_inputs_with, prove_segment_with, segment_run, verify_segment,
    SegmentRun, SegmentWitness,
};
use zkrv_machine::tables::bitwise::{LookupKind, Lookups};
use zkrv_machine::tables::cpu::{cpu_trace, RegWalk, NUM_CPU_COLS};
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::input::{input_trace_at, NUM_INPUT_COLS};
use zkrv_machine::trace::{generate_split_at, DeviceFill, FillInputs};
use zkrv_machine::{min_height, TABLE_NAMES};
use zkrv_machine_cuda::tables::cpu::NO_END_PC;
use zkrv_machine_cuda::tables::input::pack_input;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_machine_cuda::trace_gen::{generate_segment_traces, TraceGenOptions};
use zkrv_stark::backend::{CpuBackend, LdeMode, TraceInput};
use zkrv_stark::field::PrimeField64;
use zkrv_stark::StarkConfig;

/// One segment: its re-execution and the host oracle's witness.
struct Seg {
    name: String,
    program: Program,
    /// The whole run's input and the plan's checkpoint, to re-execute the segment for each use.
    input: Vec<u8>,
    cp: zkrv_executor::Checkpoint,
    count: u32,
    run_id: [u8; 32],
    witness: SegmentWitness,
}

impl Seg {
    fn run(&self) -> SegmentRun {
        segment_run(
            &self.program,
            &self.input,
            &self.cp,
            self.count,
            self.run_id,
        )
        .unwrap()
    }
}

/// The segments checked, of plans in `rows`-row segments under `config`.
fn segments(config: &StarkConfig) -> Vec<Seg> {
    let mut out = Vec::new();
    for (guest, rows) in [("rv64im", 64u64), ("sha256", 1024), ("sha256_accel", 256)] {
        let (program, input) = rv_programs::guest(guest);
        // (zk: a segment is at least the smallest table, 128 rows.)
        let rows = rows.max(min_height(config) as u64);
        let plan = plan_run(&program, &input, rows, 1 << 24, config).unwrap();
        let n = plan.checkpoints.len();
        let count = n as u32;
        let mut picks = vec![0, n / 2, n - 1];
        let first = |f: &dyn Fn(&SegmentRun) -> bool, picks: &mut Vec<usize>| {
            if let Some(i) = (0..n).find(|&i| {
                f(
                    &segment_run(&program, &input, &plan.checkpoints[i], count, plan.run_id)
                        .unwrap(),
                )
            }) {
                picks.push(i);
            }
        };
        first(
            &|r| r.start.input_cursor > 0 && !r.input.is_empty(),
            &mut picks,
        );
        first(&|r| r.start.input_ended, &mut picks);
        first(
            &|r| !r.record.syscalls.is_empty() && r.header.index > 0,
            &mut picks,
        );
        first(&|r| !r.record.sha256.is_empty(), &mut picks);
        let calls: Vec<usize> = (0..n)
            .filter(|&i| {
                let r = segment_run(&program, &input, &plan.checkpoints[i], count, plan.run_id)
                    .unwrap();
                !r.record.sha256.is_empty()
            })
            .collect();
        if let Some(&i) = calls.first().filter(|&&i| i + 1 < n) {
            picks.push(i + 1);
        }
        picks.sort();
        picks.dedup();
        eprintln!("{guest}: {n} segments of {rows} rows, checking {picks:?}");
        for i in picks {
            let cp = plan.checkpoints[i].clone();
            let witness = zkrv_machine::segment::segment_witness(
                &program,
                &input,
                &cp,
                count,
                plan.run_id,
                config,
            )
            .unwrap();
            out.push(Seg {
                name: format!("{guest} segment {i} of {n}"),
                program: program.clone(),
                input: input.clone(),
                cp,
                count,
                run_id: plan.run_id,
                witness,
            });
        }
    }
    out
}

fn cells(m: &zkrv_stark::matrix::RowMajorMatrix) -> Vec<u64> {
    m.values.iter().map(|x| x.as_canonical_u64()).collect()
}

fn histogram(lk: &Lookups) -> Vec<u32> {
    LookupKind::ALL
        .iter()
        .flat_map(|&k| lk.counts(k).to_vec())
        .collect()
}

fn le_u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Panics naming the first differing (row, column).
fn compare(what: &str, width: usize, want: &[u64], got: &[u64]) {
    assert_eq!(want.len(), got.len(), "{what}: trace size");
    if let Some(k) = (0..want.len()).find(|&k| want[k] != got[k]) {
        panic!(
            "{what}: row {} column {}: host {} device {}",
            k / width,
            k % width,
            want[k],
            got[k]
        );
    }
}

const CPU_DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
static void one_case() {
    u64 hdr[6];
    rd(hdr, sizeof hdr);
    u64 n = hdr[0], height = hdr[1], ndec = hdr[4];
    u32 base = (u32)hdr[2], slots = (u32)hdr[3];
    std::vector<CycleEvent> cyc(n + 1);
    rd(cyc.data(), n * sizeof(CycleEvent));
    std::vector<RegWalk> walk(n + 1);
    rd(walk.data(), n * sizeof(RegWalk));
    std::vector<u32> rop(slots + 1);
    rd(rop.data(), slots * 4ull);
    std::vector<u64> dec(ndec + 1);
    rd(dec.data(), ndec * 8ull);
    std::vector<u64> out(height * CPU_WIDTH, ~0ull);
    std::vector<u32> counts(7 * LK_ROWS, 0);
    for (u64 row = 0; row < height; row++) {
        counts[LK_U16 * LK_ROWS] += cpu_fill_row(row, out.data(), cyc.data(), walk.data(), n, rop.data(), base,
                                                 slots, dec.data(), counts.data(), height, hdr[5]);
    }
    fwrite(out.data(), 8, out.size(), stdout);
    fwrite(counts.data(), 4, counts.size(), stdout);
}
int main() {
    u64 cases;
    rd(&cases, 8);
    for (u64 k = 0; k < cases; k++) one_case();
    return 0;
}
"#;

const INPUT_DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    u64 cases;
    rd(&cases, 8);
    std::vector<u32> counts(LK_COUNT * LK_ROWS);
    for (u64 k = 0; k < cases; k++) {
        u64 hdr[3];
        rd(hdr, sizeof hdr);
        u64 len = hdr[0], rows = hdr[1], first = hdr[2];
        std::vector<InputIn> in(len + 1);
        rd(in.data(), len * sizeof(InputIn));
        std::vector<u64> trace(rows * INPUT_WIDTH, ~0ull);
        std::fill(counts.begin(), counts.end(), 0u);
        for (u64 r = 0; r < rows; r++) input_fill_row(r, in.data(), len, rows, trace.data(), counts.data(), ~0u, first);
        fwrite(trace.data(), 8, trace.size(), stdout);
        fwrite(counts.data(), 4, counts.size(), stdout);
    }
    return 0;
}
"#;

/// The inputs `generate_split_at` leaves for the device CPU and INPUT fills of a segment.
fn fill_inputs(s: &Seg, config: &StarkConfig) -> (SegmentRun, FillInputs) {
    let run = s.run();
    let dt = DecodeTable::new(&s.program).unwrap();
    let device = DeviceFill::of(&[Table::Cpu, Table::Input]);
    let (t, inputs) = generate_split_at(
        &dt,
        &run.record,
        &run.input,
        &run.start,
        min_height(config),
        device,
    )
    .unwrap();
    assert_eq!(t.tables[Table::Cpu].height(), 0, "{}: CPU left", s.name);
    assert_eq!(t.tables[Table::Input].height(), 0, "{}: INPUT left", s.name);
    (run, inputs)
}

/// The two configurations checked: no-zk, and zk (min height 128) with a fixed test seed.
fn configs() -> [(&'static str, StarkConfig); 2] {
    let zk = StarkConfig {
        zk_seed: Some(20261204),
        ..StarkConfig::dev_zk()
    };
    [("no-zk", StarkConfig::dev()), ("zk", zk)]
}

#[test]
fn segment_cpu_and_input_fills_match_host() {
    for (what, config) in configs() {
        eprintln!("{what}:");
        check_cpu_and_input(&config);
    }
}

fn check_cpu_and_input(config: &StarkConfig) {
    let config = config.clone();
    let segs = segments(&config);
    let mut cpu_in = le_u64s(&[segs.len() as u64]);
    let mut input_in = le_u64s(&[segs.len() as u64]);
    // Per segment: (CPU cells, CPU lookups, INPUT cells, INPUT lookups) of the host.
    let mut want = Vec::new();
    let mut paused_ends = 0;
    let mut late_inputs = 0;
    for s in &segs {
        let (run, inputs) = fill_inputs(s, &config);
        let cpu = inputs.cpu.as_ref().unwrap();
        let cycles: &[CycleEvent] = &run.record.cycles;
        let mh = inputs.min_height;
        let w = &s.witness.traces;
        // The end pc the fill is given is the paused segment's (a row that a whole run would end at pc + 4).
        assert_eq!(cpu.end_pc, run.start.end_pc, "{}", s.name);
        if let (Some(pc), Some(last)) = (cpu.end_pc, cycles.last()) {
            paused_ends += (pc as u64 != last.pc as u64 + 4) as usize;
        }
        late_inputs += (inputs.input_first > 0) as usize;
        let mut lk = Lookups::new();
        cpu_trace(cycles, &cpu.walk, &cpu.decode, mh, &mut lk).unwrap();
        let cpu_h = histogram(&lk);
        let mut lk = Lookups::new();
        input_trace_at(
            &inputs.input,
            inputs.input_first,
            inputs.input_eof_row,
            &inputs.input_uses,
            mh,
            &mut lk,
        );
        let input_h = histogram(&lk);
        want.push((
            cells(&w[Table::Cpu.index()]),
            cpu_h,
            w[Table::Cpu.index()].height(),
            cells(&w[Table::Input.index()]),
            input_h,
            w[Table::Input.index()].height(),
        ));
        let d = &cpu.decode;
        cpu_in.extend(le_u64s(&[
            cycles.len() as u64,
            w[Table::Cpu.index()].height() as u64,
            d.base_pc as u64,
            d.row_of_pc.len() as u64,
            d.rows.len() as u64,
            cpu.end_pc.map_or(NO_END_PC, u64::from),
        ]));
        cpu_in.extend_from_slice(bytemuck::cast_slice::<CycleEvent, u8>(cycles));
        cpu_in.extend_from_slice(bytemuck::cast_slice::<RegWalk, u8>(&cpu.walk));
        cpu_in.extend_from_slice(bytemuck::cast_slice::<u32, u8>(&d.row_of_pc));
        cpu_in.extend_from_slice(&le_u64s(&d.rows));
        let packed = pack_input(&inputs.input, &inputs.input_uses, inputs.input_eof_row).unwrap();
        input_in.extend(le_u64s(&[
            packed.len() as u64,
            w[Table::Input.index()].height() as u64,
            inputs.input_first,
        ]));
        for q in &packed {
            input_in.extend(le_u64s(&[q.byte as u64 | (q.m as u64) << 32]));
        }
    }
    // The plans do exercise the boundary rows.
    assert!(paused_ends > 0, "no paused segment ends off pc + 4");
    assert!(late_inputs > 0, "no segment starts inside the input");
    let Some(cpu_out) = host_emu::run(
        "segment_cpu",
        zkrv_machine_cuda::kernels::CPU_CU.src,
        CPU_DRIVER,
        &cpu_in,
    ) else {
        eprintln!(
            "SKIPPED segment_cpu_and_input_fills_match_host (host emulation): no C++ compiler"
        );
        return;
    };
    let input_out = host_emu::run(
        "segment_input",
        zkrv_machine_cuda::kernels::INPUT_CU.src,
        INPUT_DRIVER,
        &input_in,
    )
    .expect("C++ compiler");
    let (mut a, mut b) = (0, 0);
    for (s, (cw, ch, chh, iw, ih, ihh)) in segs.iter().zip(&want) {
        let n = chh * NUM_CPU_COLS * 8;
        let got = host_emu::u64s(&cpu_out[a..a + n]);
        let hist = host_emu::u32s(&cpu_out[a + n..a + n + DeviceLookups::LEN * 4]);
        a += n + DeviceLookups::LEN * 4;
        compare(&format!("{} CPU", s.name), NUM_CPU_COLS, cw, &got);
        assert!(&hist == ch, "{} CPU: lookups", s.name);
        let n = ihh * NUM_INPUT_COLS * 8;
        let got = host_emu::u64s(&input_out[b..b + n]);
        let hist = host_emu::u32s(&input_out[b + n..b + n + DeviceLookups::LEN * 4]);
        b += n + DeviceLookups::LEN * 4;
        compare(&format!("{} INPUT", s.name), NUM_INPUT_COLS, iw, &got);
        assert!(&hist == ih, "{} INPUT: lookups", s.name);
    }
    assert_eq!(a, cpu_out.len(), "CPU host emulation output size");
    assert_eq!(b, input_out.len(), "INPUT host emulation output size");
    eprintln!(
        "{} segments: CPU and INPUT equal the segment witness ({paused_ends} paused ends, {late_inputs} \
         inputs from a cursor)",
        segs.len()
    );
}

#[test]
fn gpu_segment_traces_match_host_and_prove_byte_identical() {
    const T: &str = "gpu_segment_traces_match_host_and_prove_byte_identical";
    let dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED {T}: {e}");
            return;
        }
    };
    dev.set_debug(true);
    let backend = CudaBackend::new(dev);
    for (what, config) in configs() {
        let opts = TraceGenOptions {
            min_height: min_height(&config),
            ..TraceGenOptions::default()
        };
        for s in segments(&config) {
            let name = format!("{} ({what})", s.name);
            backend.reset_stats();
            let (w, report) = generate_segment_traces(&backend, &s.program, s.run(), opts)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(w.header, s.witness.header, "{name}: header");
            assert_eq!(w.traces.len(), s.witness.traces.len());
            for (k, (d, h)) in w.traces.iter().zip(&s.witness.traces).enumerate() {
                let what = format!("{name} {}", TABLE_NAMES[k]);
                match d {
                    TraceInput::Device(d) => {
                        assert_eq!((1usize << d.log_height, d.width), (h.height(), h.width));
                        let got = backend.device().download(&d.data).unwrap();
                        compare(&what, h.width, &cells(h), &got);
                    }
                    TraceInput::Host(m) => {
                        assert_eq!(m.height(), 0, "{what}: only absent tables stay on the host");
                        assert_eq!(h.height(), 0, "{what}: absent on the host too");
                    }
                }
            }
            let proof = prove_segment_inputs_with(&backend, &s.program, w, &config)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            // Every table with rows resident: no main trace crosses PCIe at the commitment.
            let stats = backend.stats();
            for t in &report.tables {
                let h2d = stats
                    .bytes
                    .get(&(STAGE_COMMIT.to_string(), t.name.to_string()))
                    .map_or(0, |b| b.h2d);
                assert_eq!(h2d, 0, "{name}: {} main-trace bytes at commit", t.name);
                if t.rows > 0 {
                    assert_eq!(t.origin, TraceOrigin::Resident, "{name}: {}", t.name);
                }
            }
            let cpu = prove_segment_with(
                &CpuBackend::new(LdeMode::Auto),
                &s.program,
                s.witness.clone(),
                &config,
            )
            .unwrap();
            assert!(
                proof.to_bytes() == cpu.to_bytes(),
                "{name}: GPU segment proof differs from the CPU proof"
            );
            verify_segment(
                &s.program,
                &proof,
                &s.witness.init,
                &s.witness.output,
                &config,
                0,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            eprintln!("{name}: byte-identical, 0 main-trace bytes host->device\n{report}");
        }
    }
}
