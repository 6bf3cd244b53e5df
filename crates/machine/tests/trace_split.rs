//! `trace::generate_split` with every device fill selected, completed on the host from its `FillInputs` by
//! the reference fills (`cpu_trace`, `lt_trace`, ...), gives exactly `trace::generate`'s traces and BITWISE
//! lookups: the split loses nothing and double-counts nothing. Real guests plus a program with x0 writes,
//! syscalls (a1/a2, cursor cells) and misaligned memory accesses.

use zkrv_executor::{execute, ExecOptions, Program};
use zkrv_machine::tables::bitwise::LookupKind;
use zkrv_machine::tables::bytewise::bytewise_trace;
use zkrv_machine::tables::cpu::cpu_trace;
use zkrv_machine::tables::cpu32::cpu32_trace;
use zkrv_machine::tables::decode::DecodeTable;
use zkrv_machine::tables::dvrm::dvrm_trace;
use zkrv_machine::tables::eq::eq_trace;
use zkrv_machine::tables::input::input_trace;
use zkrv_machine::tables::load::load_trace;
use zkrv_machine::tables::lt::lt_trace;
use zkrv_machine::tables::memw::memw_trace;
use zkrv_machine::tables::memw_a::memw_a_trace;
use zkrv_machine::tables::mul::{mul_trace, MulRequests};
use zkrv_machine::tables::page::page_trace;
use zkrv_machine::tables::regfile::regfile_trace;
use zkrv_machine::tables::shift::shift_trace;
use zkrv_machine::tables::store::store_trace;
use zkrv_machine::tables::sysio::{syscall_trace, sysio_trace};
use zkrv_machine::trace::{generate, generate_split, DeviceFill};
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;

fn guest(name: &str) -> (Program, Vec<u8>) {
    let dir = format!("{}/../../guests", env!("CARGO_MANIFEST_DIR"));
    let elf = std::fs::read(format!("{dir}/bin/{name}.elf")).unwrap();
    let input = std::fs::read(format!("{dir}/inputs/{name}.bin")).unwrap_or_default();
    (Program::from_elf(&elf).unwrap(), input)
}

const KINDS: [LookupKind; 7] = LookupKind::ALL;

/// Every table left to the device, the register and memory walks and the request lists on the host (their
/// results in the fill inputs).
/// (The precompile tables stay on the host: their device fills need the device memory walk.)
const HOST_WALK: DeviceFill = DeviceFill {
    reg_walk: false,
    mem_walk: false,
    requests: false,
    ..DeviceFill::ALL
        .without(Table::Keccakf)
        .without(Table::Sha256)
        .without(Table::Poseidon2)
};

/// The tables HOST_WALK leaves to the device whose traces the test completes (BITWISE: from the lookups).
fn completed() -> impl Iterator<Item = Table> {
    Table::ALL
        .into_iter()
        .filter(|&t| t != Table::Bitwise && HOST_WALK.has(t))
}

/// A one-column trace of counts.
fn col(counts: &[u64]) -> RowMajorMatrix {
    RowMajorMatrix::new(counts.iter().map(|&x| F::from_u64(x)).collect(), 1)
}

fn check(name: &str, program: &Program, input: &[u8], min_height: usize) {
    let run = execute(
        program,
        input,
        &ExecOptions {
            max_cycles: 1 << 24,
            record: true,
        },
    )
    .unwrap();
    let rec = run.record.unwrap();
    let dt = DecodeTable::new(program).unwrap();
    let full = generate(&dt, &rec, input, min_height).unwrap();
    // The host reference walk (with the device walk, CPU's walk and REGFILE's cells are left empty).
    let (_, on_device) = generate_split(&dt, &rec, input, min_height, DeviceFill::ALL).unwrap();
    assert!(on_device.cpu.as_ref().unwrap().walk.is_empty());
    assert!(
        on_device.regs.is_empty(),
        "{name}: REGFILE cells left to the device"
    );
    // With the request lists on the device, the host makes none.
    assert!(
        on_device.eq.is_empty()
            && on_device.lt.is_empty()
            && on_device.bytewise.is_empty()
            && on_device.shift.is_empty()
            && on_device.mul.is_empty()
            && on_device.cpu32.is_empty()
            && on_device.dvrm.is_empty()
            && on_device.pow2.is_empty(),
        "{name}: request lists left to the device"
    );
    let (mut split, inputs) = generate_split(&dt, &rec, input, min_height, HOST_WALK).unwrap();
    // Real rows per host-filled table: none on the host in the split; the full one counts its events.
    assert!(
        Table::ALL
            .into_iter()
            .all(|t| split.events[t].is_none() || !HOST_WALK.has(t)),
        "{name}: events"
    );
    // The tables HOST_WALK keeps on the host (the precompile tables) are the full walk's.
    for t in Table::ALL.into_iter().filter(|&t| !HOST_WALK.has(t)) {
        assert_eq!(split.tables[t], full.tables[t], "{name}: {t} on the host");
    }
    assert_eq!(
        full.events[Table::Cpu],
        Some(rec.cycles.len()),
        "{name}: CPU rows"
    );
    assert_eq!(
        full.events[Table::Load],
        Some(inputs.loads.len()),
        "{name}: LOAD rows"
    );
    assert_eq!(
        full.events[Table::Lt],
        Some(inputs.lt.len()),
        "{name}: LT rows"
    );
    assert_eq!(
        full.events[Table::Decode],
        None,
        "{name}: DECODE is fixed-height"
    );
    for t in completed() {
        let m = &split.tables[t];
        assert_eq!(m.height(), 0, "{name}: {t} left to the device");
    }
    // The split's BITWISE is built on the device: 0 x 7 until then.
    assert_eq!(split.tables[Table::Bitwise].height(), 0, "{name}: BITWISE");
    let lk = &mut split.lookups;
    let cpu = inputs.cpu.as_ref().unwrap();
    assert_eq!(cpu.walk.len(), rec.cycles.len());
    let cpu_t = cpu_trace(&rec.cycles, &cpu.walk, &cpu.decode, min_height, lk).unwrap();
    assert_eq!(cpu_t, full.tables[Table::Cpu], "{name}: CPU");
    assert_eq!(
        lt_trace(&inputs.lt, min_height, lk),
        full.tables[Table::Lt],
        "{name}: LT"
    );
    assert_eq!(
        load_trace(&inputs.loads, min_height, lk),
        full.tables[Table::Load],
        "{name}"
    );
    assert_eq!(
        store_trace(&inputs.stores, min_height, lk),
        full.tables[Table::Store],
        "{name}"
    );
    assert_eq!(
        memw_a_trace(&inputs.accesses, min_height, lk),
        full.tables[Table::MemwA],
        "{name}"
    );
    let sh = shift_trace(&inputs.shift, min_height, lk, &mut MulRequests::new());
    assert_eq!(sh.shift, full.tables[Table::Shift], "{name}: SHIFT");
    assert_eq!(sh.pow2, full.tables[Table::Pow2], "{name}: POW2");
    assert_eq!(
        col(&inputs.pow2),
        full.tables[Table::Pow2],
        "{name}: POW2 reference counts"
    );
    let (cpu32, _) = cpu32_trace(&inputs.cpu32, min_height, lk).unwrap();
    assert_eq!(cpu32, full.tables[Table::Cpu32], "{name}: CPU32");
    let (dvrm, _) = dvrm_trace(&inputs.dvrm, min_height, lk);
    assert_eq!(dvrm, full.tables[Table::Dvrm], "{name}: DVRM");
    assert_eq!(
        eq_trace(&inputs.eq, min_height),
        full.tables[Table::Eq],
        "{name}: EQ"
    );
    assert_eq!(
        page_trace(&inputs.page, min_height),
        full.tables[Table::Page],
        "{name}: PAGE"
    );
    assert_eq!(
        input_trace(&inputs.input, &inputs.input_uses, min_height, lk),
        full.tables[Table::Input],
        "{name}: INPUT"
    );
    assert_eq!(
        bytewise_trace(&inputs.bytewise, min_height, lk),
        full.tables[Table::Bytewise],
        "{name}: BYTEWISE"
    );
    assert_eq!(
        mul_trace(&inputs.mul, min_height, lk),
        full.tables[Table::Mul],
        "{name}: MUL"
    );
    assert_eq!(
        col(&inputs.decode),
        full.tables[Table::Decode],
        "{name}: DECODE multiplicities"
    );
    assert_eq!(
        regfile_trace(&inputs.regs, min_height),
        full.tables[Table::Regfile],
        "{name}: REGFILE"
    );
    assert_eq!(
        memw_trace(&inputs.general, min_height, lk),
        full.tables[Table::Memw],
        "{name}: MEMW"
    );
    assert_eq!(
        syscall_trace(&inputs.syscall, min_height, lk),
        full.tables[Table::Syscall],
        "{name}: SYSCALL"
    );
    assert_eq!(
        sysio_trace(&inputs.sysio, min_height, lk),
        full.tables[Table::Sysio],
        "{name}: SYSIO"
    );
    assert!(
        split.bitwise_on_device,
        "{name}: BITWISE left to the device"
    );
    for k in KINDS {
        assert!(
            split.lookups.counts(k) == full.lookups.counts(k),
            "{name}: lookups of kind {k:?} differ"
        );
    }
    println!("{name}: {} cycles, split == full", rec.cycles.len());
}

#[test]
fn split_completed_on_the_host_equals_generate() {
    for name in ["exitcode", "fibonacci", "rv64im", "sort", "keccak"] {
        let (p, input) = guest(name);
        check(name, &p, &input, MIN_HEIGHT);
    }
    let (p, input) = guest("fibonacci");
    check("fibonacci (min height 2^12)", &p, &input, 1 << 12);
}

/// The pipeline API on the CPU backend: a split completed on the host and proved with `prove_inputs_with`
/// gives the same proof bytes as `prove`.
#[test]
fn prove_inputs_with_split_equals_prove() {
    use zkrv_machine::{prove, prove_inputs_with, verify, witness_split};
    use zkrv_stark::backend::{CpuBackend, TraceInput};
    use zkrv_stark::StarkConfig;
    let (p, input) = guest("exitcode");
    let config = StarkConfig::dev();
    let (st_ref, proof_ref) = prove(&p, &input, &config).unwrap();
    let mut s = witness_split(&p, &input, HOST_WALK).unwrap();
    let mh = s.inputs.min_height;
    let lk = &mut s.traces.lookups;
    let cpu = s.inputs.cpu.as_ref().unwrap();
    s.traces.tables[Table::Cpu] =
        cpu_trace(&s.record.cycles, &cpu.walk, &cpu.decode, mh, lk).unwrap();
    s.traces.tables[Table::Lt] = lt_trace(&s.inputs.lt, mh, lk);
    s.traces.tables[Table::Load] = load_trace(&s.inputs.loads, mh, lk);
    s.traces.tables[Table::Store] = store_trace(&s.inputs.stores, mh, lk);
    s.traces.tables[Table::MemwA] = memw_a_trace(&s.inputs.accesses, mh, lk);
    s.traces.tables[Table::Shift] =
        shift_trace(&s.inputs.shift, mh, lk, &mut MulRequests::new()).shift;
    s.traces.tables[Table::Mul] = mul_trace(&s.inputs.mul, mh, lk);
    s.traces.tables[Table::Bytewise] = bytewise_trace(&s.inputs.bytewise, mh, lk);
    s.traces.tables[Table::Cpu32] = cpu32_trace(&s.inputs.cpu32, mh, lk).unwrap().0;
    s.traces.tables[Table::Dvrm] = dvrm_trace(&s.inputs.dvrm, mh, lk).0;
    s.traces.tables[Table::Eq] = eq_trace(&s.inputs.eq, mh);
    s.traces.tables[Table::Page] = page_trace(&s.inputs.page, mh);
    s.traces.tables[Table::Input] = input_trace(&s.inputs.input, &s.inputs.input_uses, mh, lk);
    s.traces.tables[Table::Memw] = memw_trace(&s.inputs.general, mh, lk);
    s.traces.tables[Table::Regfile] = regfile_trace(&s.inputs.regs, mh);
    s.traces.tables[Table::Syscall] = syscall_trace(&s.inputs.syscall, mh, lk);
    s.traces.tables[Table::Sysio] = sysio_trace(&s.inputs.sysio, mh, lk);
    s.traces.tables[Table::Decode] = col(&s.inputs.decode);
    s.traces.tables[Table::Pow2] = col(&s.inputs.pow2);
    let bitwise = s.traces.lookups.trace();
    let (mut traces, pages) = s.traces.into_table_order();
    assert_eq!(
        traces[Table::Bitwise as usize].height(),
        0,
        "BITWISE left to the device"
    );
    traces[Table::Bitwise as usize] = bitwise;
    let traces = traces.into_iter().map(TraceInput::Host).collect();
    let (st, proof) = prove_inputs_with(
        &CpuBackend::default(),
        &p,
        s.statement,
        pages,
        traces,
        &config,
    )
    .unwrap();
    assert_eq!(st, st_ref);
    assert_eq!(proof.to_bytes(), proof_ref.to_bytes());
    verify(&p, &st, &proof, &config, 0).unwrap();
}

/// `DeviceFill::check` is driven by the `needs` table and the walks' readers: each inconsistent selection is
/// refused with an error naming the selected table or walk and what it lacks.
#[test]
fn device_fill_check_names_what_is_missing() {
    DeviceFill::ALL.check().unwrap();
    DeviceFill::NONE.check().unwrap();
    HOST_WALK.check().unwrap();
    let err = |d: DeviceFill| d.check().unwrap_err().to_string();
    let e = err(DeviceFill::of(&[Table::Decode]));
    assert!(e.contains("DECODE on the device needs CPU"), "{e}");
    let e = err(DeviceFill::of(&[Table::Pow2]));
    assert!(e.contains("POW2 on the device needs SHIFT"), "{e}");
    let e = err(DeviceFill {
        reg_walk: true,
        ..DeviceFill::of(&[Table::Cpu])
    });
    assert!(
        e.contains("the register walk") && e.contains("REGFILE"),
        "{e}"
    );
    let e = err(DeviceFill::ALL.without(Table::Sysio));
    assert!(e.contains("the memory walk") && e.contains("SYSIO"), "{e}");
    let e = err(DeviceFill::ALL.without(Table::Mul).without(Table::Eq));
    assert!(
        e.contains("the request lists") && e.contains("EQ, MUL"),
        "{e}"
    );
    assert_eq!(
        DeviceFill::NONE.with(Table::Lt).with(Table::Shift),
        DeviceFill::of(&[Table::Shift, Table::Lt])
    );
    assert!(
        DeviceFill::ALL.has(Table::Memw) && !DeviceFill::ALL.without(Table::Memw).has(Table::Memw)
    );
    // The table every other table needs nothing of (a new table gets this without an edit).
    assert!(DeviceFill::needs()[Table::Lt].is_empty());
}
