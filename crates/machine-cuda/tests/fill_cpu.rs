//! Parity of the CPU fill kernel (`kernels/tables/cpu.cu`) with the host fill
//! (`zkrv_machine::tables::cpu::cpu_trace`): every cell and the BITWISE lookup histogram, on random programs
//! run through the executor (exact cycle counts at the edges: height 2^k with 2^k - 1, 2^k and 2^k + 1 real
//! rows, the minimum program, a min height far above the cycles) and on the real guests.
//!
//! * `gpu_cpu_fill_matches_cpu`: all 44 columns + lookups.
//! * `gpu_memw_r_fill_matches_cpu`: the MEMW_R column group (`r1`, `r2`, `w`), additionally against an
//!   independent register walk written here (CPU accesses by the DECODE flags, syscall accesses of a1/a2 and
//!   the cursor cells 32/33), on programs with x0 writes, first accesses (old_ts 0) and syscalls.
//!
//! Each runs the kernel's row function on the host (C++ host emulation, always; skipped only without a C++
//! compiler) and on the GPU when one exists (`SKIPPED ... (GPU part)` otherwise), with poisoned allocations.
//! Random programs are seeded; the seed is printed (`ZKRV_SEED` to replay).
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rv_programs.rs"]
mod rv_programs;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zkrv_cuda::{Device, TransferStats};
use zkrv_executor::{CycleEvent, Program, Record};
use zkrv_machine::bus::{REG_INPUT_CURSOR, REG_OUTPUT_CURSOR};
use zkrv_machine::tables::bitwise::{LookupKind, Lookups};
use zkrv_machine::tables::cpu::{cpu_height, cpu_trace, CpuCols, RegWalk, NUM_CPU_COLS};
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::trace::{generate_split, CpuFillInputs, DeviceFill};
use zkrv_machine::Table;
use zkrv_machine::MIN_HEIGHT;
use zkrv_machine_cuda::tables::cpu::fill_cpu;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::field::PrimeField64;

const KINDS: [LookupKind; 7] = LookupKind::ALL;

/// One CPU fill input: the record and the walk/decode data `generate_split` leaves for the device.
struct Case {
    name: String,
    record: Record,
    cpu: CpuFillInputs,
    min_height: usize,
}

fn case(name: String, program: &Program, input: &[u8], record: Record, min_height: usize) -> Case {
    let dt = DecodeTable::new(program).unwrap();
    let device = DeviceFill::of(&[Table::Cpu]);
    let (t, inputs) = generate_split(&dt, &record, input, min_height, device).unwrap();
    assert_eq!(
        t.tables[Table::Cpu].height(),
        0,
        "{name}: CPU left to the device"
    );
    Case {
        name,
        cpu: inputs.cpu.unwrap(),
        record,
        min_height,
    }
}

fn rng(test: &str) -> StdRng {
    let seed = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("{test}: seed {seed}");
    StdRng::seed_from_u64(seed)
}

/// Random programs at the edge cycle counts, a few random sizes, and every guest.
fn cases(test: &str, guests: &[&str]) -> Vec<Case> {
    let mut r = rng(test);
    let mut sizes: Vec<(usize, usize)> = [5, 7, 8, 9, 1023, 1024, 1025, 4095, 4096, 4097]
        .map(|n| (n, MIN_HEIGHT))
        .to_vec();
    sizes.push((5, 1 << 10)); // min height far above the cycles: ~all padding
    for _ in 0..3 {
        sizes.push((r.gen_range(10..3000), MIN_HEIGHT));
    }
    let mut out = Vec::new();
    for (n, mh) in sizes {
        let (p, input, rec) = rv_programs::with_cycles(&mut r, n);
        out.push(case(
            format!("random {n} cycles (min height {mh})"),
            &p,
            &input,
            rec,
            mh,
        ));
    }
    for g in guests {
        let (p, input) = rv_programs::guest(g);
        let rec = rv_programs::run(&p, &input);
        out.push(case(g.to_string(), &p, &input, rec, MIN_HEIGHT));
    }
    out
}

/// The host fill: `height x 44` canonical u64 and the kind-major lookup histogram.
fn reference(c: &Case) -> (Vec<u64>, Vec<u32>) {
    let mut lk = Lookups::new();
    let t = cpu_trace(
        &c.record.cycles,
        &c.cpu.walk,
        &c.cpu.decode,
        c.min_height,
        &mut lk,
    )
    .unwrap();
    let cells = t.values.iter().map(|x| x.as_canonical_u64()).collect();
    (cells, histogram(&lk))
}

fn histogram(lk: &Lookups) -> Vec<u32> {
    KINDS.iter().flat_map(|&k| lk.counts(k).to_vec()).collect()
}

const DRIVER: &str = r#"
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

fn le_u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The kernel's row function run on the host (C++) on every case (one compile); `None` without a C++
/// compiler.
fn host_emu_fill(cases: &[Case]) -> Option<Vec<(Vec<u64>, Vec<u32>)>> {
    let mut input = le_u64s(&[cases.len() as u64]);
    for c in cases {
        host_emu_input(c, &mut input);
    }
    let out = host_emu::run(
        "cpu",
        zkrv_machine_cuda::kernels::CPU_CU.src,
        DRIVER,
        &input,
    )?;
    let mut res = Vec::new();
    let mut at = 0;
    for c in cases {
        let cells = cpu_height(c.record.cycles.len(), c.min_height) * NUM_CPU_COLS * 8;
        let end = at + cells + DeviceLookups::LEN * 4;
        assert!(out.len() >= end, "{}: host emulation output size", c.name);
        res.push((
            host_emu::u64s(&out[at..at + cells]),
            host_emu::u32s(&out[at + cells..end]),
        ));
        at = end;
    }
    assert_eq!(at, out.len(), "host emulation output size");
    Some(res)
}

fn host_emu_input(c: &Case, input: &mut Vec<u8>) {
    let n = c.record.cycles.len();
    let height = cpu_height(n, c.min_height);
    let d = &c.cpu.decode;
    input.extend(le_u64s(&[
        n as u64,
        height as u64,
        d.base_pc as u64,
        d.row_of_pc.len() as u64,
        d.rows.len() as u64,
        c.cpu
            .end_pc
            .map_or(zkrv_machine_cuda::tables::cpu::NO_END_PC, u64::from),
    ]));
    input.extend_from_slice(bytemuck::cast_slice::<CycleEvent, u8>(&c.record.cycles));
    input.extend_from_slice(bytemuck::cast_slice::<RegWalk, u8>(&c.cpu.walk));
    input.extend_from_slice(bytemuck::cast_slice::<u32, u8>(&d.row_of_pc));
    input.extend_from_slice(&le_u64s(&d.rows));
}

fn gpu_fill(dev: &Device, c: &Case) -> (Vec<u64>, Vec<u32>) {
    let lookups = DeviceLookups::new(dev).unwrap();
    let mut stats = TransferStats::default();
    let t = fill_cpu(
        dev,
        &c.record.cycles,
        &c.cpu.walk,
        &c.cpu.decode,
        c.min_height,
        c.cpu.end_pc,
        &lookups,
        &mut stats,
    )
    .unwrap();
    let n = c.record.cycles.len();
    assert_eq!(t.width, NUM_CPU_COLS);
    assert_eq!(1usize << t.log_height, cpu_height(n, c.min_height));
    let want_h2d = 32 * n + 20 * n + 4 * c.cpu.decode.row_of_pc.len() + 8 * c.cpu.decode.rows.len();
    assert!(
        stats.total_h2d() >= want_h2d as u64,
        "{}: input bytes counted",
        c.name
    );
    assert_eq!(
        stats.table("record").h2d,
        32 * n as u64,
        "{}: record bytes",
        c.name
    );
    (
        dev.download(&t.data).unwrap(),
        dev.download(&lookups.counts).unwrap(),
    )
}

/// Compares cells `cols` of every row; panics naming the first differing (row, column).
fn compare(what: &str, c: &Case, want: &[u64], got: &[u64], cols: std::ops::Range<usize>) {
    assert_eq!(want.len(), got.len(), "{what} {}: trace size", c.name);
    let names = column_names();
    for (row, (w, g)) in want
        .chunks_exact(NUM_CPU_COLS)
        .zip(got.chunks_exact(NUM_CPU_COLS))
        .enumerate()
    {
        for col in cols.clone() {
            assert_eq!(
                w[col],
                g[col],
                "{what} {}: row {row} (of {} cycles), column {col} ({}) differs",
                c.name,
                c.record.cycles.len(),
                names[col]
            );
        }
    }
}

fn compare_lookups(what: &str, c: &Case, want: &[u32], got: &[u32]) {
    assert_eq!(want.len(), got.len());
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "{what} {}: lookup kind {:?} row {} counted {} times, host {}",
            c.name,
            KINDS[i >> 16],
            i & 0xffff,
            got[i],
            want[i]
        );
    }
}

fn column_names() -> Vec<String> {
    let i = CpuCols::<usize>::indices();
    let mut v = vec![String::new(); NUM_CPU_COLS];
    let mut set = |k: usize, s: &str| v[k] = s.to_string();
    set(i.pc, "pc");
    set(i.clk, "clk");
    set(i.next_pc, "next_pc");
    set(i.taken, "taken");
    set(i.jalr_bit0, "jalr_bit0");
    set(i.is_halt, "is_halt");
    for k in i.dec.op..i.rv1[0] {
        set(k, "dec.*");
    }
    set(i.rv1[0], "rv1[0]");
    set(i.rv1[1], "rv1[1]");
    set(i.rv2[0], "rv2[0]");
    set(i.rv2[1], "rv2[1]");
    for h in 0..4 {
        set(i.res[h], &format!("res[{h}]"));
    }
    set(i.r1.old_ts, "r1.old_ts");
    set(i.r1.d0, "r1.d0");
    set(i.r2.old_ts, "r2.old_ts");
    set(i.r2.d0, "r2.d0");
    set(i.w.old_ts, "w.old_ts");
    set(i.w.d0, "w.d0");
    set(i.w.old[0], "w.old[0]");
    set(i.w.old[1], "w.old[1]");
    v
}

/// The MEMW_R columns: `r1`, `r2`, `w` (the last 8 columns of the CPU row).
fn memw_r_cols() -> std::ops::Range<usize> {
    let i = CpuCols::<usize>::indices();
    assert_eq!(i.w.old[1], NUM_CPU_COLS - 1);
    i.r1.old_ts..NUM_CPU_COLS
}

fn device(test: &str) -> Option<Device> {
    match Device::new() {
        Ok(d) => {
            d.set_debug(true);
            eprintln!("{test}: GPU {} ({})", d.name(), d.arch());
            Some(d)
        }
        Err(e) => {
            eprintln!("SKIPPED {test} (GPU part): {e}");
            None
        }
    }
}

#[test]
fn gpu_cpu_fill_matches_cpu() {
    const T: &str = "gpu_cpu_fill_matches_cpu";
    let cases = cases(T, &rv_programs::GUESTS);
    let refs: Vec<_> = cases.iter().map(reference).collect();
    match host_emu_fill(&cases) {
        None => eprintln!("SKIPPED {T} (host emulation): no C++ compiler"),
        Some(emu) => {
            for ((c, (want, want_lk)), (got, got_lk)) in cases.iter().zip(&refs).zip(&emu) {
                compare("host emulation", c, want, got, 0..NUM_CPU_COLS);
                compare_lookups("host emulation", c, want_lk, got_lk);
            }
            eprintln!("{T}: host emulation matched on {} records", cases.len());
        }
    }
    let Some(dev) = device(T) else { return };
    for (c, (want, want_lk)) in cases.iter().zip(&refs) {
        let (got, got_lk) = gpu_fill(&dev, c);
        compare("GPU", c, want, &got, 0..NUM_CPU_COLS);
        compare_lookups("GPU", c, want_lk, &got_lk);
    }
    eprintln!("{T}: GPU matched on {} records", cases.len());
    // Refused before anything is uploaded: a walk of the wrong length, a min height that is not a power of
    // two, a height above the launch bound 2^26 (min height 2^27).
    let c = &cases[0];
    let lookups = DeviceLookups::new(&dev).unwrap();
    let n = c.record.cycles.len();
    for (walk, mh, what) in [
        (&c.cpu.walk[..n - 1], MIN_HEIGHT, "walk"),
        (&c.cpu.walk[..], 3, "power of two"),
        (&c.cpu.walk[..], 1 << 27, "rows"),
    ] {
        let mut stats = TransferStats::default();
        let e = fill_cpu(
            &dev,
            &c.record.cycles,
            walk,
            &c.cpu.decode,
            mh,
            None,
            &lookups,
            &mut stats,
        )
        .err()
        .unwrap_or_else(|| panic!("{what}: accepted"))
        .to_string();
        assert!(e.contains(what), "{what}: {e}");
        assert_eq!(stats.total_h2d(), 0, "{what}: nothing uploaded");
    }
}

/// Independent reference of the MEMW_R columns of every real row: `[r1.old_ts, r1.d0, r2.old_ts, r2.d0,
/// w.old_ts, w.d0, w.old lo, w.old hi]`. Walks the register cells (x0..x31, cursors 32/33) with the accesses
/// of docs/tables.md §6.4: a non-exit ECALL touches a1, a2 at `ts + 1` and its cursor at `ts + 3` (fd 0: input,
/// fd 1: output, fd 2: none) before the row's own rs1 (`ts + 1`), rs2 (`ts + 2`) and rd (`ts + 3`) accesses.
/// Also checks that every read token carries the value the record says was read.
fn naive_memw_r(c: &Case) -> Vec<[u64; 8]> {
    let rec = &c.record;
    let mut cell: Vec<(u64, u64)> = (0..34)
        .map(|r| (0, if r < 32 { rec.init_regs[r] } else { 0 }))
        .collect();
    let mut ecalls = 0;
    let mut out = Vec::new();
    for (i, ev) in rec.cycles.iter().enumerate() {
        let d = c.cpu.decode.fields(c.cpu.decode.row_of(ev.pc).unwrap());
        let ts = 4 * i as u64;
        if d.flags.is_ecall == 1 {
            if ev.rs1_val != 93 && ev.rs1_val != 94 {
                let sc = rec.syscalls[ecalls];
                cell[11].0 = ts + 1;
                cell[12].0 = ts + 1;
                let (fd, len) = (sc.args[0], sc.args[2]);
                let cur = match fd {
                    0 => Some((REG_INPUT_CURSOR as usize, sc.ret)),
                    1 => Some((REG_OUTPUT_CURSOR as usize, len)),
                    _ => None,
                };
                if let Some((k, count)) = cur {
                    cell[k] = (ts + 3, cell[k].1 + count);
                }
            }
            ecalls += 1;
        }
        let mut row = [0u64; 8];
        let d0 = |old: u64, now: u64| {
            assert!(old < now, "{}: access at {now} after {old}", c.name);
            (now - old - 1) & 0xffff
        };
        if d.flags.rr1 == 1 {
            let (old, v) = cell[d.rs1 as usize];
            assert_eq!(v, ev.rs1_val, "{}: x{} read at cycle {i}", c.name, d.rs1);
            row[0] = old;
            row[1] = d0(old, ts + 1);
            cell[d.rs1 as usize].0 = ts + 1;
        }
        if d.flags.rr2 == 1 {
            let (old, v) = cell[d.rs2 as usize];
            assert_eq!(v, ev.rs2_val, "{}: x{} read at cycle {i}", c.name, d.rs2);
            row[2] = old;
            row[3] = d0(old, ts + 2);
            cell[d.rs2 as usize].0 = ts + 2;
        }
        if d.flags.wr == 1 {
            let (old, v) = cell[d.rd as usize];
            row[4] = old;
            row[5] = d0(old, ts + 3);
            row[6] = v & 0xffff_ffff;
            row[7] = v >> 32;
            // The written value: rd_val for everything that writes (ALU, loads, links, constants, ECALL a0).
            cell[d.rd as usize] = (ts + 3, ev.rd_val);
        }
        out.push(row);
    }
    for (r, (cell, want)) in cell.iter().zip(rec.final_regs).enumerate() {
        assert_eq!(cell.1, want, "{}: final x{r}", c.name);
    }
    out
}

#[test]
fn gpu_memw_r_fill_matches_cpu() {
    const T: &str = "gpu_memw_r_fill_matches_cpu";
    // Random programs have x0 writes (1/8 of destinations), first reads of never-written registers
    // (old_ts 0) and write/read syscalls (a1/a2 and the cursor cells) at every size.
    let cases = cases(T, &["exitcode", "fibonacci", "sort", "rustalloc"]);
    let cols = memw_r_cols();
    let mut syscalls = 0;
    let mut x0_writes = 0;
    for c in &cases {
        let (want, _) = reference(c);
        let naive = naive_memw_r(c);
        for (i, row) in naive.iter().enumerate() {
            assert_eq!(
                &want[i * NUM_CPU_COLS + cols.start..(i + 1) * NUM_CPU_COLS],
                row,
                "{}: row {i}: host MEMW_R vs the independent register walk",
                c.name
            );
        }
        syscalls += c.record.syscalls.len();
        x0_writes += c
            .record
            .cycles
            .iter()
            .filter(|e| {
                (e.word >> 7) & 31 == 0 && matches!(e.word & 0x7f, 0x13 | 0x33 | 0x1b | 0x3b | 0x03)
            })
            .count();
    }
    assert!(
        syscalls > cases.len(),
        "cases exercise syscalls ({syscalls})"
    );
    assert!(x0_writes > 0, "cases exercise x0 writes");
    eprintln!("{T}: host MEMW_R = independent walk on {} records ({syscalls} syscalls, {x0_writes} x0 writes)", cases.len());
    match host_emu_fill(&cases) {
        None => eprintln!("SKIPPED {T} (host emulation): no C++ compiler"),
        Some(emu) => {
            for (c, (got, got_lk)) in cases.iter().zip(&emu) {
                let (want, want_lk) = reference(c);
                compare("host emulation", c, &want, got, cols.clone());
                compare_lookups("host emulation", c, &want_lk, got_lk);
            }
        }
    }
    let Some(dev) = device(T) else { return };
    for c in &cases {
        let (want, _) = reference(c);
        let (got, _) = gpu_fill(&dev, c);
        compare("GPU", c, &want, &got, cols.clone());
    }
    eprintln!("{T}: GPU MEMW_R matched on {} records", cases.len());
}
