//! Shared helpers of the fill parity tests (tests/fill_load.rs, fill_store.rs, fill_memw_a.rs): seeded RNG,
//! the device (poisoned allocations) or a printed skip, the real guests' fill inputs, and cell-by-cell /
//! histogram comparisons that name the first mismatch.

#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, RngCore};
use zkrv_executor::{execute, CycleEvent, ExecOptions, Program, Record};
use zkrv_machine::tables::bitwise::{LookupKind, Lookups};
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::trace::{generate_split, DeviceFill, FillInputs};
use zkrv_machine::Table;
use zkrv_stark::field::PrimeField64;
use zkrv_stark::matrix::RowMajorMatrix;

/// The guests in guests/bin with their inputs in guests/inputs.
pub const GUESTS: [&str; 9] = [
    "exitcode",
    "fibonacci",
    "keccak",
    "matmul",
    "modexp",
    "rustalloc",
    "rv64im",
    "sha256",
    "sort",
];

/// Lookup kinds in histogram order (`LookupKind as usize`).
pub const KINDS: [LookupKind; 7] = LookupKind::ALL;

include!("../../../cuda/tests/common/dev_util.rs");

/// One recorded guest run: the program's DECODE table, the record and the private input.
pub struct GuestRun {
    pub name: &'static str,
    pub decode: DecodeTable,
    pub record: Record,
    pub input: Vec<u8>,
}

/// Runs every guest with recording.
pub fn guest_runs() -> Vec<GuestRun> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests");
    GUESTS
        .iter()
        .map(|&name| {
            let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
            let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap();
            let program = Program::from_elf(&elf).unwrap();
            let run = execute(
                &program,
                &input,
                &ExecOptions {
                    max_cycles: (1 << 26) - 1,
                    record: true,
                },
            )
            .unwrap();
            GuestRun {
                name,
                decode: DecodeTable::new(&program).unwrap(),
                record: run.record.unwrap(),
                input,
            }
        })
        .collect()
}

/// LOAD, STORE and MEMW_A filled on the device.
pub const MEM_FILLS: DeviceFill = DeviceFill::of(&[Table::Load, Table::Store, Table::MemwA]);

/// The fill inputs of every guest (`generate_split` with LOAD, STORE and MEMW_A device-filled).
pub fn guest_fill_inputs() -> Vec<(&'static str, FillInputs)> {
    guest_runs()
        .into_iter()
        .map(|g| {
            let (_, fi) = generate_split(
                &g.decode,
                &g.record,
                &g.input,
                zkrv_machine::MIN_HEIGHT,
                MEM_FILLS,
            )
            .unwrap();
            (g.name, fi)
        })
        .collect()
}

/// Asserts that `got` (row-major u64, e.g. a downloaded device trace) equals `want` cell for cell (as
/// canonical u64), naming the first differing row and column.
pub fn assert_trace_eq(what: &str, want: &RowMajorMatrix, got: &[u64]) {
    let width = want.width;
    assert_eq!(
        got.len(),
        want.values.len(),
        "{what}: {} cells, want {} ({} x {width})",
        got.len(),
        want.values.len(),
        want.values.len() / width.max(1)
    );
    for (i, (w, &g)) in want.values.iter().zip(got).enumerate() {
        let w = w.as_canonical_u64();
        assert_eq!(
            g,
            w,
            "{what}: row {} column {} is {g:#x}, want {w:#x}",
            i / width,
            i % width
        );
    }
}

/// Asserts that `got` (`7 x 2^16` u32, kind-major) equals the host's lookup histogram.
pub fn assert_lookups_eq(what: &str, want: &Lookups, got: &[u32]) {
    assert_eq!(got.len(), 7 << 16, "{what}: histogram length");
    for (k, kind) in KINDS.iter().enumerate() {
        let w = want.counts(*kind);
        let g = &got[k << 16..(k + 1) << 16];
        if let Some(x) = (0..1 << 16).find(|&x| w[x] != g[x]) {
            panic!(
                "{what}: lookup {kind:?}[{x:#x}] counted {} times, want {}",
                g[x], w[x]
            );
        }
    }
}

/// Edge sizes: 0, 1, 2 and 2^k - 1, 2^k, 2^k + 1 for k = 4..=10.
pub fn edge_sizes() -> Vec<usize> {
    let mut v = vec![0, 1, 2];
    for k in 4..=10 {
        v.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    v
}

/// The host-emulation driver of an event fill: reads cases `[u32 n_events, u32 rows, n_events x In]` from
/// stdin until EOF, fills each with `row_fn(row, trace, events, n_events, counts, lanes)` on a trace poisoned with
/// 0xff bytes and a zeroed histogram, and writes `rows x width` u64 then `7 x 2^16` u32 per case.
pub fn event_driver(in_struct: &str, in_size: usize, row_fn: &str, width: usize) -> String {
    format!(
        r#"
static_assert(sizeof({in_struct}) == {in_size}, "input struct layout");
int main() {{
    u32 hdr[2];
    while (fread(hdr, 4, 2, stdin) == 2) {{
        std::vector<{in_struct}> ev(hdr[0] + 1);
        if (hdr[0] && fread(ev.data(), sizeof({in_struct}), hdr[0], stdin) != hdr[0]) return 2;
        std::vector<u64> trace((size_t)hdr[1] * {width}, ~0ULL);
        std::vector<u32> counts(7u * LK_ROWS, 0);
        for (u64 r = 0; r < hdr[1]; r++) {row_fn}(r, trace.data(), ev.data(), hdr[0], counts.data(), ~0u);
        fwrite(trace.data(), 8, trace.size(), stdout);
        fwrite(counts.data(), 4, counts.size(), stdout);
    }}
    return 0;
}}
"#
    )
}

/// One case of the host-emulation input: header then the packed events.
pub fn event_case(n_events: usize, rows: usize, packed: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + packed.len());
    v.extend_from_slice(&(n_events as u32).to_le_bytes());
    v.extend_from_slice(&(rows as u32).to_le_bytes());
    v.extend_from_slice(packed);
    v
}

/// Splits the host emulation's output into `(trace, histogram)` per case, given each case's `rows x width`.
pub fn split_output(out: &[u8], shapes: &[(usize, usize)]) -> Vec<(Vec<u64>, Vec<u32>)> {
    let mut at = 0;
    let mut res = Vec::new();
    for &(rows, width) in shapes {
        let tb = rows * width * 8;
        let cb = (7 << 16) * 4;
        assert!(out.len() >= at + tb + cb, "host emulation output too short");
        let t = out[at..at + tb]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let c = out[at + tb..at + tb + cb]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        at += tb + cb;
        res.push((t, c));
    }
    assert_eq!(at, out.len(), "host emulation output has trailing bytes");
    res
}

/// Values at limb boundaries (byte, half, word, sign bits).
pub const EDGES: [u64; 17] = [
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
];

/// An edge value (30%) or a uniform u64.
pub fn pick(r: &mut StdRng, edges: &[u64]) -> u64 {
    if r.gen_bool(0.3) {
        edges[r.gen_range(0..edges.len())]
    } else {
        r.next_u64()
    }
}

/// A load/store offset: a 12-bit immediate, sometimes an edge (incl. the i16 extremes the compact form allows),
/// sign-extended to 64 bits.
pub fn rand_imm(r: &mut StdRng) -> u64 {
    (match r.gen_range(0..4) {
        0 => [-2048i64, -1, 0, 1, 2047, -32768, 32767][r.gen_range(0..7)],
        _ => r.gen_range(-2048..2048),
    }) as u64
}

/// An effective address `< 2^32` for event `k`, sometimes an edge. In the first 32 of every 64 events its
/// offset in the cell (`addr mod 8`) is `k / 4 mod 8`, so with the width index `k mod 4` of the random
/// loads/stores the events `0..32` cover every (width, offset).
pub fn rand_addr(r: &mut StdRng, k: usize) -> u64 {
    let a = match r.gen_range(0..4) {
        0 => [
            0u64,
            1,
            7,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0xffff_f800,
        ][r.gen_range(0..7)],
        _ => r.next_u64() & 0xffff_ffff,
    };
    if (k / 32).is_multiple_of(2) {
        (a & !7) | ((k / 4) % 8) as u64
    } else {
        a
    }
}

/// A timestamp `4 clk + 1` (clk < 2^26), sometimes an edge up to `2^32 - 1`.
pub fn rand_ts(r: &mut StdRng) -> u64 {
    match r.gen_range(0..8) {
        0 => [0u64, 1, (1 << 28) - 3, u32::MAX as u64][r.gen_range(0..4)],
        _ => 4 * r.gen_range(0u64..1 << 26) + 1,
    }
}

/// The host-emulation driver of a record-path fill: reads cases `[u32 n_cycles, u32 n_events, u32 rows,
/// n_cycles x 4 u64, n_events x In]` from stdin until EOF, fills each with `row_fn(row, trace, cycles, events,
/// n_events, counts, lanes)` on a poisoned trace and a zeroed histogram, writes as [`event_driver`].
pub fn rec_driver(in_struct: &str, in_size: usize, row_fn: &str, width: usize) -> String {
    format!(
        r#"
static_assert(sizeof({in_struct}) == {in_size}, "input struct layout");
int main() {{
    u32 hdr[3];
    while (fread(hdr, 4, 3, stdin) == 3) {{
        std::vector<CycleEvent> cycles((size_t)hdr[0] + 1);
        if (hdr[0] && fread(cycles.data(), sizeof(CycleEvent), hdr[0], stdin) != hdr[0]) return 2;
        std::vector<{in_struct}> ev(hdr[1] + 1);
        if (hdr[1] && fread(ev.data(), sizeof({in_struct}), hdr[1], stdin) != hdr[1]) return 2;
        std::vector<u64> trace((size_t)hdr[2] * {width}, ~0ULL);
        std::vector<u32> counts(7u * LK_ROWS, 0);
        for (u64 r = 0; r < hdr[2]; r++)
            {row_fn}(r, trace.data(), cycles.data(), ev.data(), hdr[1], counts.data(), ~0u);
        fwrite(trace.data(), 8, trace.size(), stdout);
        fwrite(counts.data(), 4, counts.size(), stdout);
    }}
    return 0;
}}
"#
    )
}

/// One case of the record-path host-emulation input.
pub fn rec_case(cycles: &[CycleEvent], n_events: usize, rows: usize, packed: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(12 + 32 * cycles.len() + packed.len());
    v.extend_from_slice(&(cycles.len() as u32).to_le_bytes());
    v.extend_from_slice(&(n_events as u32).to_le_bytes());
    v.extend_from_slice(&(rows as u32).to_le_bytes());
    for c in cycles {
        for w in [
            c.pc as u64 | (c.word as u64) << 32,
            c.rs1_val,
            c.rs2_val,
            c.rd_val,
        ] {
            v.extend_from_slice(&w.to_le_bytes());
        }
    }
    v.extend_from_slice(packed);
    v
}

/// A random cycle (not a load or store the fill reads; fills the gaps of a random record).
pub fn junk_cycle(r: &mut StdRng) -> CycleEvent {
    CycleEvent {
        pc: r.next_u32(),
        word: r.next_u32(),
        rs1_val: r.next_u64(),
        rs2_val: r.next_u64(),
        rd_val: r.next_u64(),
    }
}

/// A random 12-bit immediate, sign-extended, sometimes an edge.
pub fn rand_imm12(r: &mut StdRng) -> u64 {
    (match r.gen_range(0..4) {
        0 => [-2048i64, -1, 0, 1, 2047][r.gen_range(0..5)],
        _ => r.gen_range(-2048..2048),
    }) as u64
}

/// The word of a load (I-type, opcode 0x03) or store (S-type, opcode 0x23) with a 12-bit `imm` and `funct3`;
/// random register numbers.
pub fn mem_word(r: &mut StdRng, store: bool, imm: u64, funct3: u32) -> u32 {
    let imm = imm as u32 & 0xfff;
    let (rs1, rx) = (r.gen_range(0..32u32), r.gen_range(0..32u32));
    if store {
        (imm >> 5) << 25 | rx << 20 | rs1 << 15 | funct3 << 12 | (imm & 31) << 7 | 0x23
    } else {
        imm << 20 | rs1 << 15 | funct3 << 12 | rx << 7 | 0x03
    }
}
