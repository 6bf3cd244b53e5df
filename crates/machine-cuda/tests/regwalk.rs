//! The device register walk (`kernels/tables/regwalk.cu`, `tables::regwalk::reg_walk`) against the host walk
//! (`zkrv_machine::trace::generate_split`): every cycle's `RegWalk` (old timestamps of the rs1/rs2/rd accesses,
//! the overwritten rd value) and every register cell's final value and timestamp (REGFILE's input), on random
//! RV64IM programs run through the executor (x0 writes, first reads, `read`/`write` syscalls moving the cursor
//! cells, misaligned loads/stores; seeded, `ZKRV_SEED` to replay) at edge cycle counts and on every guest
//! (`precompiles.elf` too: keccak_f and poseidon2 touch no extra register, sha256_compress reads a1), each
//! with several chunk sizes (1, a random one, `WALK_CHUNK`): the chunked scan must equal the sequential walk for
//! any chunking. The host emulation always runs; the GPU part prints `SKIPPED gpu_reg_walk_matches_host_walk
//! (GPU part): <reason>` without a device, else also fills CPU and REGFILE from the walk and compares them with
//! the host fills.
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/rv_programs.rs"]
mod rv_programs;

use rand::Rng;
use zkrv_cuda::TransferStats;
use zkrv_executor::{Program, Record, SyscallEvent};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::cpu::{cpu_trace, RegWalk};
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::regfile::regfile_trace;
use zkrv_machine::trace::{generate_split, CpuFillInputs, DeviceFill};
use zkrv_machine::Table;
use zkrv_machine::MIN_HEIGHT;
use zkrv_machine_cuda::tables::cpu::fill_cpu_walked;
use zkrv_machine_cuda::tables::regfile::fill_regfile_resident;
use zkrv_machine_cuda::tables::regwalk::{initial_regs, pack_walk_syscalls, reg_walk, WALK_CHUNK};
use zkrv_machine_cuda::tables::{DeviceCycles, DeviceLookups};
use zkrv_stark::field::PrimeField64;

struct Case {
    name: String,
    record: Record,
    cpu: CpuFillInputs,
    /// The host walk's final register cells `(value, ts)`.
    regs: Vec<(u64, u64)>,
    chunks: Vec<usize>,
}

fn case(name: String, program: &Program, input: &[u8], record: Record, chunks: Vec<usize>) -> Case {
    let dt = DecodeTable::new(program).unwrap();
    let fill = DeviceFill::of(&[Table::Cpu, Table::Regfile]);
    let (_, inputs) = generate_split(&dt, &record, input, MIN_HEIGHT, fill).unwrap();
    // With the walk on the device the host leaves its results out.
    let (_, dev_inputs) = generate_split(
        &dt,
        &record,
        input,
        MIN_HEIGHT,
        DeviceFill {
            reg_walk: true,
            ..fill
        },
    )
    .unwrap();
    assert!(dev_inputs.cpu.unwrap().walk.is_empty() && dev_inputs.regs.is_empty());
    Case {
        name,
        record,
        cpu: inputs.cpu.unwrap(),
        regs: inputs.regs,
        chunks,
    }
}

fn cases() -> Vec<Case> {
    let mut r = fill_util::rng("gpu_reg_walk_matches_host_walk");
    let mut out = Vec::new();
    let mut sizes = vec![5usize, 7, 8, 9, 511, 512, 513, 1023, 1024, 1025, 4097];
    for _ in 0..3 {
        sizes.push(r.gen_range(10..3000));
    }
    for n in sizes {
        let (p, input, rec) = rv_programs::with_cycles(&mut r, n);
        let chunks = vec![1, r.gen_range(2..700), WALK_CHUNK];
        out.push(case(format!("random {n} cycles"), &p, &input, rec, chunks));
    }
    for g in rv_programs::GUESTS.iter().copied().chain(["precompiles"]) {
        let (p, mut input) = rv_programs::guest(g);
        if g == "precompiles" {
            // Mask 7 (keccak_f, sha256_compress with its a1 read, poseidon2) and several blocks of message.
            input = [7u8].into_iter().chain((0..300).map(|_| r.gen())).collect();
        }
        let rec = rv_programs::run(&p, &input);
        let chunks = vec![r.gen_range(1..100), WALK_CHUNK];
        out.push(case(format!("guest {g}"), &p, &input, rec, chunks));
    }
    assert!(
        out.iter().any(|c| !c.record.sha256.is_empty()
            && !c.record.keccak.is_empty()
            && !c.record.poseidon2.is_empty()),
        "the cases exercise every precompile"
    );
    let syscalls: usize = out.iter().map(|c| c.record.syscalls.len()).sum();
    assert!(syscalls > out.len(), "the cases exercise syscalls");
    out
}

const DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    u64 ncases;
    rd(&ncases, 8);
    for (u64 c = 0; c < ncases; c++) {
        u64 hdr[7];
        rd(hdr, sizeof hdr);
        u64 n = hdr[0], chunk = hdr[1], nsys = hdr[4], ndec = hdr[5];
        u32 base = (u32)hdr[2], slots = (u32)hdr[3];
        (void)hdr[6];
        std::vector<CycleEvent> cyc(n + 1);
        rd(cyc.data(), n * sizeof(CycleEvent));
        std::vector<u32> rop(slots + 1);
        rd(rop.data(), slots * 4ull);
        std::vector<u64> dec(ndec + 1);
        rd(dec.data(), ndec * 8ull);
        std::vector<WalkSyscall> sys(nsys + 1);
        rd(sys.data(), nsys * sizeof(WalkSyscall));
        std::vector<u64> init(REG_CELLS);
        rd(init.data(), REG_CELLS * 8ull);
        u64 nchunks = (n + chunk - 1) / chunk;
        if (nchunks == 0) nchunks = 1;
        std::vector<u32> sts(nchunks * REG_CELLS), swr(nchunks * REG_CELLS);
        std::vector<u64> sval(nchunks * REG_CELLS);
        for (u64 k = 0; k < nchunks; k++)
            regwalk_summarize_chunk(k, chunk, cyc.data(), n, rop.data(), base, slots, dec.data(), sys.data(), nsys,
                                    sts.data(), swr.data(), sval.data());
        std::vector<RegfileIn> fin(REG_CELLS);
        for (u32 r = 0; r < REG_CELLS; r++)
            regwalk_scan_reg(r, nchunks, init.data(), sts.data(), swr.data(), sval.data(), fin.data());
        std::vector<RegWalk> walk(n + 1);
        for (u64 k = 0; k < nchunks; k++)
            regwalk_replay_chunk(k, chunk, cyc.data(), n, rop.data(), base, slots, dec.data(), sys.data(), nsys,
                                 sts.data(), sval.data(), walk.data());
        fwrite(walk.data(), sizeof(RegWalk), n, stdout);
        fwrite(fin.data(), sizeof(RegfileIn), REG_CELLS, stdout);
    }
    return 0;
}
"#;

fn init_of(rec: &Record) -> Vec<u64> {
    initial_regs(&rec.init_regs, 0, 0)
}

#[test]
fn gpu_reg_walk_matches_host_walk() {
    let cases = cases();
    let mut input = Vec::new();
    let mut runs = 0u64;
    for c in &cases {
        let sys = pack_walk_syscalls(&c.record.syscalls, c.record.cycles.len()).unwrap();
        for &chunk in &c.chunks {
            runs += 1;
            for v in [
                c.record.cycles.len() as u64,
                chunk as u64,
                c.cpu.decode.base_pc as u64,
                c.cpu.decode.row_of_pc.len() as u64,
                sys.len() as u64,
                c.cpu.decode.rows.len() as u64,
                0,
            ] {
                input.extend_from_slice(&v.to_le_bytes());
            }
            input.extend_from_slice(bytemuck::cast_slice(&c.record.cycles));
            input.extend_from_slice(bytemuck::cast_slice(&c.cpu.decode.row_of_pc));
            input.extend_from_slice(bytemuck::cast_slice(&c.cpu.decode.rows));
            for s in &sys {
                input.extend_from_slice(&s.cycle.to_le_bytes());
                input.extend_from_slice(&s.cursor.to_le_bytes());
                input.extend_from_slice(&s.count.to_le_bytes());
            }
            input.extend_from_slice(bytemuck::cast_slice(&init_of(&c.record)));
        }
    }
    let mut all = Vec::with_capacity(runs as usize);
    all.extend(runs.to_le_bytes());
    all.extend(input);
    match host_emu::run(
        "regwalk",
        zkrv_machine_cuda::kernels::REGWALK_CU.src,
        DRIVER,
        &all,
    ) {
        None => {
            eprintln!("SKIPPED gpu_reg_walk_matches_host_walk (host emulation): no C++ compiler")
        }
        Some(out) => {
            let mut at = 0;
            for c in &cases {
                let n = c.record.cycles.len();
                for &chunk in &c.chunks {
                    let what = format!("host emulation, {} (chunk {chunk})", c.name);
                    let walk: &[RegWalk] = bytemuck::cast_slice(&out[at..at + 20 * n]);
                    at += 20 * n;
                    check_walk(&what, c, walk);
                    let fin = host_emu::u64s(&out[at..at + 16 * 34]);
                    at += 16 * 34;
                    check_fin(&what, c, &fin);
                }
            }
            assert_eq!(at, out.len());
            eprintln!("gpu_reg_walk_matches_host_walk: host emulation matches on {runs} walks");
        }
    }
    let Some(dev) = fill_util::device("gpu_reg_walk_matches_host_walk") else {
        return;
    };
    for c in &cases {
        let mut stats = TransferStats::default();
        let cycles = DeviceCycles::upload(&dev, &c.record.cycles, &mut stats).unwrap();
        for &chunk in &c.chunks {
            let what = format!("GPU, {} (chunk {chunk})", c.name);
            let w = reg_walk(
                &dev,
                &cycles,
                &c.cpu.decode,
                &init_of(&c.record),
                &c.record.syscalls,
                chunk,
                &mut stats,
            )
            .unwrap();
            let walk = dev.download(&w.walk).unwrap();
            check_walk(&what, c, bytemuck::cast_slice(&walk));
            let fin: Vec<u64> = dev
                .download(&w.fin)
                .unwrap()
                .iter()
                .flat_map(|f| [f.v, f.ts])
                .collect();
            check_fin(&what, c, &fin);
            // The CPU and REGFILE fills from the device walk equal the host fills.
            let lookups = DeviceLookups::new(&dev).unwrap();
            let t = fill_cpu_walked(
                &dev,
                &cycles,
                &w.walk,
                &c.cpu.decode,
                MIN_HEIGHT,
                c.cpu.end_pc,
                &lookups,
                &mut stats,
            )
            .unwrap();
            let mut lk = Lookups::new();
            let want = cpu_trace(
                &c.record.cycles,
                &c.cpu.walk,
                &c.cpu.decode,
                MIN_HEIGHT,
                &mut lk,
            )
            .unwrap();
            fill_util::assert_trace_eq(&what, &want, &dev.download(&t.data).unwrap());
            fill_util::assert_lookups_eq(&what, &lk, &dev.download(&lookups.counts).unwrap());
            let t = fill_regfile_resident(&dev, &w.fin, MIN_HEIGHT, &lookups).unwrap();
            fill_util::assert_trace_eq(
                &what,
                &regfile_trace(&c.regs, MIN_HEIGHT),
                &dev.download(&t.data).unwrap(),
            );
        }
    }
    eprintln!("gpu_reg_walk_matches_host_walk: GPU matches on {runs} walks");
}

fn check_walk(what: &str, c: &Case, walk: &[RegWalk]) {
    assert_eq!(walk.len(), c.cpu.walk.len(), "{what}: walk length");
    for (i, (g, w)) in walk.iter().zip(&c.cpu.walk).enumerate() {
        assert_eq!(g, w, "{what}: cycle {i} (pc {:#x})", c.record.cycles[i].pc);
    }
}

fn check_fin(what: &str, c: &Case, fin: &[u64]) {
    let got: Vec<(u64, u64)> = fin.chunks(2).map(|p| (p[0], p[1])).collect();
    assert_eq!(got, c.regs, "{what}: final register cells");
    // and REGFILE from them is the host's
    let t = regfile_trace(&got, MIN_HEIGHT);
    assert_eq!(
        t.values
            .iter()
            .map(|x| x.as_canonical_u64())
            .collect::<Vec<_>>(),
        regfile_trace(&c.regs, MIN_HEIGHT)
            .values
            .iter()
            .map(|x| x.as_canonical_u64())
            .collect::<Vec<_>>()
    );
}

/// Calls the walk cannot represent, or cycles out of order, are refused naming the call.
#[test]
fn pack_walk_syscalls_refuses_what_the_walk_cannot_hold() {
    let call = |cycle, num, fd, ret, len| SyscallEvent {
        cycle,
        num,
        args: [fd, 0, len],
        ret,
        ..Default::default()
    };
    let ok = pack_walk_syscalls(
        &[
            call(1, 63, 0, 5, 9),
            call(3, 64, 1, 0, 7),
            call(4, 64, 2, 0, 6),
            call(5, 93, 0, 0, 0),
        ],
        6,
    )
    .unwrap();
    assert_eq!(ok.len(), 3, "the exit is not a walk syscall");
    assert_eq!(
        (ok[0].cursor, ok[0].count),
        (32, 5),
        "read: input cursor by the bytes read"
    );
    assert_eq!(
        (ok[1].cursor, ok[1].count),
        (33, 7),
        "write fd 1: output cursor by len"
    );
    assert_eq!(ok[2].cursor, u32::MAX, "write fd 2 moves no cursor");
    for (bad, what) in [
        (vec![call(1, 63, 1, 0, 0)], "syscall 0"),
        (vec![call(1, 64, 0, 0, 0)], "syscall 0"),
        (vec![call(1, 57, 0, 0, 0)], "syscall 0"),
        (
            vec![call(2, 64, 1, 0, 0), call(2, 64, 1, 0, 0)],
            "syscall 1",
        ),
        (vec![call(6, 64, 1, 0, 0)], "syscall 0"),
    ] {
        let e = pack_walk_syscalls(&bad, 6).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
}
