//! The recursion AIR set (docs/recursion.md §4.4): programs of every instruction kind proven by
//! `prove_program` and accepted by `verify_program`; a malicious prover that builds its own traces (a
//! witness the program rejects, with every copy of a changed cell changed alike so that the memory bus
//! still balances) is rejected by the table whose relation it breaks (`OodMismatch`), a value changed
//! between a cell's writer and one reader by the bus balance, a changed public input by the bus balance;
//! an ill-formed program is refused by name; and the verifier program of a small Poseidon2 inner proof
//! is proven and verified.

mod proto_common;

use proto_common::*;
use zkrv_stark::check::CheckError;
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::MerkleHash;
use zkrv_stark::recursion::air::{
    self, airs, base_cols, bits_cols, check_program, main_traces, p2_cols, preprocessed,
    public_interactions, statement,
};
use zkrv_stark::recursion::{
    build_verifier, execute, prove_program, verify_program, Builder, ExecFailure, Execution, Instr,
    Program, ProgramError, ProveProgramError, Table, Var, VerifyProgramError,
};
use zkrv_stark::{preprocess, prove, Proof, ProveError, StarkConfig, VerifyError};

const P: u64 = 0xffff_ffff_0000_0001;

fn cfg() -> StarkConfig {
    StarkConfig::dev()
}

fn f(x: u64) -> F {
    F::from_u64(x)
}

/// The index of table `t` in the proof's table order.
fn ti(t: Table) -> usize {
    Table::ALL.iter().position(|&x| x == t).unwrap()
}

/// The row of instruction `i` in its table (instructions of a table are its rows in program order).
fn row_of(program: &Program, i: usize) -> usize {
    let t = program.instrs[i].table();
    program.instrs[..i]
        .iter()
        .filter(|x| x.table() == t)
        .count()
}

/// What a prover that picks the memory `mem` (every copy of a cell alike) puts in the execution rows:
/// per instruction its written cells then its read cells (`Bits`: `src` then the bits, padded to 64).
fn rows_from_memory(program: &Program, mem: &[F]) -> Execution {
    let mut rows: Vec<(Table, Vec<Vec<F>>)> = Table::ALL.iter().map(|&t| (t, vec![])).collect();
    for instr in &program.instrs {
        let v = |a: u32| mem[a as usize];
        let row: Vec<F> = match instr {
            Instr::Bits { .. } => {
                let mut r: Vec<F> = instr.reads().into_iter().map(v).collect();
                r.extend(instr.writes().into_iter().map(v));
                r.resize(65, F::ZERO);
                r
            }
            _ => instr
                .writes()
                .into_iter()
                .chain(instr.reads())
                .map(v)
                .collect(),
        };
        rows[ti(instr.table())].1.push(row);
    }
    Execution {
        memory: mem.to_vec(),
        rows,
    }
}

/// Proves `traces` for `program` as a prover of its own making would (no execution, no debug check),
/// with public inputs read from `mem`.
fn prove_traces(program: &Program, traces: Vec<RowMajorMatrix>, mem: &[F]) -> Proof {
    let c = cfg();
    let pre = preprocessed(program, &c).unwrap();
    let values: Vec<F> = program
        .public_inputs
        .iter()
        .map(|&a| mem[a as usize])
        .collect();
    prove(
        &c,
        &airs(),
        &pre,
        traces,
        &public_interactions(program, &values),
        &statement(program),
    )
    .unwrap()
}

/// The debug checker's verdict on `traces` (the first failing constraint or bus, named).
fn checked(program: &Program, traces: Vec<RowMajorMatrix>, mem: &[F]) -> CheckError {
    let c = StarkConfig {
        debug_check: true,
        ..cfg()
    };
    let pre = preprocessed(program, &c).unwrap();
    let values: Vec<F> = program
        .public_inputs
        .iter()
        .map(|&a| mem[a as usize])
        .collect();
    match prove(
        &c,
        &airs(),
        &pre,
        traces,
        &public_interactions(program, &values),
        &statement(program),
    ) {
        Err(ProveError::Check(e)) => e,
        Err(e) => panic!("unexpected prover error {e}"),
        Ok(_) => panic!("the debug checker accepted"),
    }
}

fn verdict(program: &Program, proof: &Proof, mem: &[F]) -> Result<(), VerifyProgramError> {
    let values: Vec<F> = program
        .public_inputs
        .iter()
        .map(|&a| mem[a as usize])
        .collect();
    verify_program(program, &values, proof, &cfg(), 0)
}

fn ood(table: Table) -> Result<(), VerifyProgramError> {
    Err(VerifyProgramError::Verify(VerifyError::OodMismatch {
        table: table.name().into(),
    }))
}

fn bus() -> Result<(), VerifyProgramError> {
    Err(VerifyProgramError::Verify(VerifyError::BusImbalance))
}

/// The statement digest (the transcript's first absorption: program digest and public interactions)
/// is not the proof's.
fn other_statement() -> Result<(), VerifyProgramError> {
    Err(VerifyProgramError::Verify(VerifyError::Statement))
}

/// A program with every instruction kind, its public inputs and witness, and the memory of its run.
fn all_kinds() -> (Program, Vec<F>) {
    let mut b = Builder::new();
    let x = b.public_input(f(12345));
    let y = b.hint(f(P - 3));
    let c = b.constant(f(7));
    let s = b.add(x, y);
    let d = b.sub(s, c);
    let m = b.mul(d, x);
    let m2 = b.mul(m, m);
    b.assert_eq(m, m);
    let e = b.hint_ext(Ext3([f(3), f(P - 1), f(1 << 40)]));
    let g = b.ext_constant(Ext3([f(5), f(0), f(9)]));
    let e1 = b.ext_add(e, g);
    let e2 = b.ext_sub(e1, e);
    let e3 = b.ext_mul(e1, e2);
    let e4 = b.ext_mul_base(e3, m2);
    let e5 = b.ext_inv(e4);
    let one = b.ext_mul(e5, e4);
    let ext_one = b.ext_constant(Ext3::ONE);
    b.ext_assert_eq(one, ext_one);
    let bit1 = b.one();
    let bit0 = b.zero();
    let s1 = b.select(bit1, x, y);
    let s0 = b.select(bit0, x, y);
    b.assert_eq(s1, x);
    b.assert_eq(s0, y);
    let st = b.poseidon2([x, y, c, s, d, m, s1, e5.0[2]]);
    let st2 = b.poseidon2(st);
    let bits = b.bits(c, 5);
    let top = b.hint(f(P - 1)); // hi = 2^32 - 1, lo = 0: the canonical edge
    let tb = b.bits(top, 64);
    let hb = b.bits(st2[3], 64);
    let r = b.add(bits[0], tb[63]);
    let r2 = b.add(r, hb[0]);
    b.public_input(f(99));
    let _ = b.select(bits[1], r2, st2[7]);
    b.finish()
}

#[test]
fn every_instruction_kind_is_proven_and_verified() {
    let (program, witness) = all_kinds();
    let exec = execute(&program, &witness).expect("honest");
    let counts = program.kind_counts();
    assert!(counts.iter().all(|&(_, n)| n > 0), "{counts:?}");
    let proof = prove_program(&program, &witness, &cfg()).unwrap();
    let public = exec.public_inputs(&program);
    assert_eq!(public, vec![f(12345), f(99)]);
    verify_program(&program, &public, &proof, &cfg(), 0).unwrap();
    // The honest traces pass the debug checker too, and the proof survives serialization.
    let c = StarkConfig {
        debug_check: true,
        ..cfg()
    };
    prove_program(&program, &witness, &c).unwrap();
    let back = Proof::from_bytes(&proof.to_bytes()).unwrap();
    verify_program(&program, &public, &back, &cfg(), 0).unwrap();
    // Heights: powers of two of each table's rows (at least 2), as the proof records them.
    let heights = proof.table_log_heights();
    for ((t, rows), h) in program.table_rows().into_iter().zip(heights) {
        assert_eq!(h, Some(air::log_height(rows, &cfg())), "table {}", t.name());
    }
    // Another program (one constant changed) does not accept this proof: its preprocessed traces and
    // statement differ.
    let mut other = program.clone();
    for i in other.instrs.iter_mut() {
        if let Instr::Const { value, .. } = i {
            if *value == f(7) {
                *value = f(8);
            }
        }
    }
    assert_ne!(statement(&other), statement(&program));
    assert_eq!(
        verify_program(&other, &public, &proof, &cfg(), 0),
        other_statement()
    );
}

#[test]
fn a_zk_proof_of_a_program_verifies() {
    let (program, witness) = all_kinds();
    let c = StarkConfig {
        zk_seed: Some(7),
        ..StarkConfig::dev_zk()
    };
    let proof = prove_program(&program, &witness, &c).unwrap();
    let public = execute(&program, &witness).unwrap().public_inputs(&program);
    verify_program(&program, &public, &proof, &c, 0).unwrap();
}

/// `x = public hint; assert x == 5; y = x + 5`: the malicious prover's x = 6.
fn assert_five() -> (Program, Vec<F>, Var) {
    let mut b = Builder::new();
    let x = b.public_input(f(5));
    let five = b.constant(f(5));
    b.assert_eq(x, five);
    let _ = b.add(x, five);
    let (p, w) = b.finish();
    (p, w, x)
}

#[test]
fn a_hint_the_program_rejects_cannot_be_proven() {
    let (program, witness, x) = assert_five();
    // The honest prover refuses: the program rejects the witness.
    match prove_program(&program, &[f(6)], &cfg()) {
        Err(ProveProgramError::Exec(e)) => {
            assert_eq!(e.failure, ExecFailure::NotEqual { a: 6, b: 5 })
        }
        r => panic!("{:?}", r.map(|_| ())),
    }
    // A malicious prover writes x = 6 into every row that carries it (the bus balances): the AssertEq
    // row's relation fails.
    let mut mem = execute(&program, &witness).unwrap().memory;
    mem[x.0 as usize] = f(6);
    let traces = main_traces(&program, &rows_from_memory(&program, &mem), &cfg());
    match checked(&program, traces.clone(), &mem) {
        CheckError::Constraint {
            table, constraint, ..
        } => assert_eq!(
            (table.as_str(), constraint.as_str()),
            ("base_alu", "assert_eq")
        ),
        e => panic!("{e}"),
    }
    let proof = prove_traces(&program, traces, &mem);
    assert_eq!(verdict(&program, &proof, &mem), ood(Table::BaseAlu));
}

#[test]
fn a_value_changed_between_writer_and_reader_fails_the_bus() {
    let (program, witness, x) = assert_five();
    let mem = execute(&program, &witness).unwrap().memory;
    // The Add row reads x = 6 while the memory row wrote 5 (its relation holds with dst = 11).
    let add = program
        .instrs
        .iter()
        .position(|i| matches!(i, Instr::Add { .. }))
        .unwrap();
    let mut traces = main_traces(&program, &execute(&program, &witness).unwrap(), &cfg());
    let row = traces[ti(Table::BaseAlu)].row_mut(row_of(&program, add));
    row[base_cols::A] = f(6);
    row[base_cols::DST] = f(11);
    match checked(&program, traces.clone(), &mem) {
        CheckError::BusImbalance { bus, tuple, .. } => {
            assert_eq!(bus, air::MEMORY_BUS);
            assert!(tuple == vec![x.0 as u64, 5] || tuple == vec![x.0 as u64, 6]);
        }
        e => panic!("{e}"),
    }
    let proof = prove_traces(&program, traces, &mem);
    assert_eq!(verdict(&program, &proof, &mem), bus());
}

#[test]
fn a_changed_public_input_is_rejected() {
    let (program, witness, x) = assert_five();
    let proof = prove_program(&program, &witness, &cfg()).unwrap();
    verify_program(&program, &[f(5)], &proof, &cfg(), 0).unwrap();
    assert_eq!(
        verify_program(&program, &[f(6)], &proof, &cfg(), 0),
        other_statement()
    );
    assert_eq!(
        verify_program(&program, &[], &proof, &cfg(), 0),
        Err(VerifyProgramError::PublicInputCount {
            expected: 1,
            got: 0
        })
    );
    // A prover whose statement claims x = 6 over the honest traces (x = 5): the public receive of
    // `[x, 6]` meets the memory row's send of `[x, 5]`.
    let honest = execute(&program, &witness).unwrap();
    let mut claimed = honest.memory.clone();
    claimed[x.0 as usize] = f(6);
    let traces = main_traces(&program, &honest, &cfg());
    let forged = prove_traces(&program, traces, &claimed);
    assert_eq!(verify_program(&program, &[f(6)], &forged, &cfg(), 0), bus());
    // A prover claiming x = 6 consistently (public input included) still breaks the AssertEq row.
    let mut mem = execute(&program, &witness).unwrap().memory;
    mem[x.0 as usize] = f(6);
    let traces = main_traces(&program, &rows_from_memory(&program, &mem), &cfg());
    let forged = prove_traces(&program, traces, &mem);
    assert_eq!(
        verify_program(&program, &[f(6)], &forged, &cfg(), 0),
        ood(Table::BaseAlu)
    );
}

/// Runs the honest program, lets `tamper` change the memory (consistently) and the traces, and checks
/// the debug checker names `constraint` of `table` and the verifier rejects with `OodMismatch(table)`.
fn malicious(
    program: &Program,
    witness: &[F],
    table: Table,
    constraint: &str,
    tamper: impl Fn(&mut Vec<F>),
    tamper_traces: impl Fn(&mut [RowMajorMatrix], &[F]),
) {
    let mut mem = execute(program, witness).unwrap().memory;
    tamper(&mut mem);
    let mut traces = main_traces(program, &rows_from_memory(program, &mem), &cfg());
    tamper_traces(&mut traces, &mem);
    match checked(program, traces.clone(), &mem) {
        CheckError::Constraint {
            table: t,
            constraint: c,
            ..
        } => assert_eq!((t.as_str(), c.as_str()), (table.name(), constraint)),
        e => panic!("{e}"),
    }
    let proof = prove_traces(program, traces, &mem);
    assert_eq!(verdict(program, &proof, &mem), ood(table));
}

#[test]
fn a_wrong_value_in_each_table_is_rejected_by_that_table() {
    // memory: a constant changed (and every reader of it).
    let mut b = Builder::new();
    let h = b.hint(f(3));
    let c = b.constant(f(4));
    let s = b.add(h, c);
    b.assert_eq(s, s);
    let (p, w) = b.finish();
    malicious(
        &p,
        &w,
        Table::Memory,
        "const value",
        |m| m[c.0 as usize] = f(5),
        |_, _| {},
    );
    // base_alu: a sum changed.
    malicious(
        &p,
        &w,
        Table::BaseAlu,
        "add",
        |m| m[s.0 as usize] = f(8),
        |_, _| {},
    );

    // ext_alu: an inverse that is not one (the prover's "inverse" of zero, say).
    let mut b = Builder::new();
    let a = b.hint_ext(Ext3([f(2), f(3), f(4)]));
    let inv = b.ext_inv(a);
    b.ext_assert_eq(inv, inv);
    let (p, w) = b.finish();
    malicious(
        &p,
        &w,
        Table::ExtAlu,
        "ext_inv: a * dst = 1 [0]",
        |m| m[inv.0[1].0 as usize] += F::ONE,
        |_, _| {},
    );
    // ... and a product changed.
    let mut b = Builder::new();
    let a = b.hint_ext(Ext3([f(2), f(3), f(4)]));
    let e = b.hint_ext(Ext3([f(5), f(6), f(P - 7)]));
    let prod = b.ext_mul(a, e);
    b.ext_assert_eq(prod, prod);
    let (p, w) = b.finish();
    malicious(
        &p,
        &w,
        Table::ExtAlu,
        "ext_mul [2]",
        |m| m[prod.0[2].0 as usize] += F::ONE,
        |_, _| {},
    );

    // select: a bit of 2 (dst = b + 2 (a - b), consistent).
    let mut b = Builder::new();
    let bit = b.hint(f(1));
    let (x, y) = (b.hint(f(10)), b.hint(f(20)));
    let d = b.select(bit, x, y);
    b.assert_eq(d, d);
    let (p, w) = b.finish();
    malicious(
        &p,
        &w,
        Table::Select,
        "bit boolean",
        |m| {
            m[bit.0 as usize] = f(2);
            m[d.0 as usize] = f(20) + f(2) * (f(10) - f(20));
        },
        |_, _| {},
    );
    // ... and the other input chosen.
    malicious(
        &p,
        &w,
        Table::Select,
        "select",
        |m| m[d.0 as usize] = f(20),
        |_, _| {},
    );

    // poseidon2: one output element changed (in the row and in its reader).
    let mut b = Builder::new();
    let s: [Var; 8] = std::array::from_fn(|i| b.hint(f(i as u64 + 1)));
    let o = b.poseidon2(s);
    b.assert_eq(o[5], o[5]);
    let (p, w) = b.finish();
    let pos = p
        .instrs
        .iter()
        .position(|i| matches!(i, Instr::Poseidon2 { .. }))
        .unwrap();
    let r = row_of(&p, pos);
    malicious(
        &p,
        &w,
        Table::Poseidon2,
        "full round 7: state [5]",
        |m| m[o[5].0 as usize] += F::ONE,
        |t, m| t[ti(Table::Poseidon2)].row_mut(r)[p2_cols::OUTPUT + 5] = m[o[5].0 as usize],
    );

    // bits: the non-canonical decomposition of 5 as p + 5 (hi = 2^32 - 1, lo = 6).
    let mut b = Builder::new();
    let x = b.hint(f(5));
    let bits = b.bits(x, 64);
    b.assert_eq(bits[1], bits[1]);
    let (p, w) = b.finish();
    let alias = P + 5;
    malicious(
        &p,
        &w,
        Table::Bits,
        "bits canonical: hi = 2^32 - 1 needs lo = 0",
        |m| {
            for (k, v) in bits.iter().enumerate() {
                m[v.0 as usize] = f((alias >> k) & 1);
            }
        },
        |_, _| {},
    );
    // ... and 17 passed off as 4 bits (bit 4 set past n).
    let mut b = Builder::new();
    let x = b.hint(f(1));
    let bits = b.bits(x, 4);
    b.assert_eq(bits[3], bits[3]);
    let (p, w) = b.finish();
    let pos = p
        .instrs
        .iter()
        .position(|i| matches!(i, Instr::Bits { .. }))
        .unwrap();
    let r = row_of(&p, pos);
    assert!(execute(&p, &[f(17)]).is_err());
    malicious(
        &p,
        &w,
        Table::Bits,
        "bit 4 zero past n",
        |m| m[x.0 as usize] = f(17),
        |t, _| t[ti(Table::Bits)].row_mut(r)[bits_cols::BITS + 4] = F::ONE,
    );
    // ... and a bit of 2 (1 + 2 · 2 = 5 recombined, bit cells read as written).
    let mut b = Builder::new();
    let x = b.hint(f(5));
    let bits = b.bits(x, 3);
    b.assert_eq(bits[1], bits[1]);
    let (p, w) = b.finish();
    malicious(
        &p,
        &w,
        Table::Bits,
        "bit 1 boolean",
        |m| {
            m[bits[1].0 as usize] = f(2);
            m[bits[2].0 as usize] = f(0);
        },
        |_, _| {},
    );
}

#[test]
fn ill_formed_programs_are_refused_by_name() {
    let (program, _) = all_kinds();
    let c = cfg();
    let mut p = program.clone();
    p.instrs.insert(0, Instr::Add { dst: 0, a: 1, b: 1 });
    assert!(matches!(
        check_program(&p),
        Err(ProgramError::WrittenTwice { instr: 1, .. })
            | Err(ProgramError::ReadBeforeWrite { instr: 0, .. })
    ));
    let mut p = program.clone();
    p.instrs.push(Instr::AssertEq {
        a: p.num_cells,
        b: 0,
    });
    assert!(matches!(
        preprocessed(&p, &c),
        Err(ProgramError::OutOfMemory { .. })
    ));
    let mut p = program.clone();
    p.instrs.push(Instr::Bits {
        dst: p.num_cells - 2,
        src: 0,
        n: 5,
    });
    assert!(matches!(
        check_program(&p),
        Err(ProgramError::OutOfMemory { .. }) | Err(ProgramError::WrittenTwice { .. })
    ));
    let mut p = program.clone();
    let cst = p
        .instrs
        .iter()
        .find_map(|i| match i {
            Instr::Const { dst, .. } => Some(*dst),
            _ => None,
        })
        .unwrap();
    p.public_inputs.push(cst);
    assert_eq!(
        check_program(&p),
        Err(ProgramError::PublicNotHint {
            index: 2,
            addr: cst
        })
    );
    // verify_program refuses them too (no panic, no proof needed).
    let (proof_program, w, _) = assert_five();
    let proof = prove_program(&proof_program, &w, &c).unwrap();
    assert!(matches!(
        verify_program(&p, &[F::ZERO; 3], &proof, &c, 0),
        Err(VerifyProgramError::Program(
            ProgramError::PublicNotHint { .. }
        ))
    ));
}

/// The verifier program of a small Poseidon2-hashed, no-zk inner proof (the protocol tests' fib
/// machine, as `recursion_program.rs`), proven by the recursion AIR set and verified.
#[test]
fn the_verifier_program_of_a_small_inner_proof_is_proven() {
    const STMT: &[u8] = b"program=fib;exit=0";
    let fx = fixture(5);
    let inner_cfg = StarkConfig::dev().with_hash(MerkleHash::Poseidon2);
    let pre = preprocess(&proto_common::airs(), fx.preprocessed.clone()).unwrap();
    let inner = prove(
        &inner_cfg,
        &proto_common::airs(),
        &pre,
        fx.traces.clone(),
        &fx.public,
        STMT,
    )
    .unwrap();
    let vp = build_verifier(
        &inner_cfg,
        &proto_common::airs(),
        &pre,
        &fx.public,
        STMT,
        &inner,
    )
    .unwrap();
    let exec = execute(&vp.program, &vp.witness).expect("the honest inner proof is accepted");
    let t0 = std::time::Instant::now();
    let outer = prove_program(&vp.program, &vp.witness, &cfg()).unwrap();
    let prove_s = t0.elapsed().as_secs_f64();
    let public = exec.public_inputs(&vp.program);
    let t1 = std::time::Instant::now();
    verify_program(&vp.program, &public, &outer, &cfg(), 0).unwrap();
    println!(
        "verifier program: {} instructions {:?}; recursion proof {} bytes, prove {prove_s:.2} s, \
         verify {:.2} s",
        vp.program.instrs.len(),
        vp.program.table_rows(),
        outer.to_bytes().len(),
        t1.elapsed().as_secs_f64()
    );
    // The same proof for another statement's public inputs is rejected.
    let mut other = public.clone();
    other[0] += F::ONE;
    assert_eq!(
        verify_program(&vp.program, &other, &outer, &cfg(), 0),
        other_statement()
    );
}

/// A prover that proves against preprocessed columns of its own (the verifier rebuilds them from the
/// program): the `AssertEq` row's flag dropped (and its reads' multiplicities with it) so that x = 6
/// passes its own checker, or a table padded to twice its height.
#[test]
fn a_prover_cannot_choose_the_preprocessed_columns_or_heights() {
    let (program, witness, x) = assert_five();
    let c = cfg();
    let mut mem = execute(&program, &witness).unwrap().memory;
    mem[x.0 as usize] = f(6);
    for i in &program.instrs {
        if let Instr::Add { dst, .. } = i {
            mem[*dst as usize] = f(11);
        }
    }
    let traces = main_traces(&program, &rows_from_memory(&program, &mem), &c);
    let honest = preprocessed(&program, &c).unwrap();
    let mut own = honest.traces.clone();
    let assert = program
        .instrs
        .iter()
        .position(|i| matches!(i, Instr::AssertEq { .. }))
        .unwrap();
    let base = own[ti(Table::BaseAlu)].as_mut().unwrap();
    base.row_mut(row_of(&program, assert))[base_cols::IS_ASSERT] = F::ZERO;
    let mem_t = own[ti(Table::Memory)].as_mut().unwrap();
    for r in 0..mem_t.height() {
        let row = mem_t.row_mut(r);
        if row[air::memory_cols::ADDR] == f(x.0 as u64) || row[air::memory_cols::CONST] == f(5) {
            row[air::memory_cols::MULT] -= F::ONE;
        }
    }
    let own = preprocess(&airs(), own).unwrap();
    let public = public_interactions(&program, &[f(6)]);
    let checked_cfg = StarkConfig {
        debug_check: true,
        ..c.clone()
    };
    // Its own checker passes: the forgery is consistent with its own columns.
    prove(
        &checked_cfg,
        &airs(),
        &own,
        traces.clone(),
        &public,
        &statement(&program),
    )
    .unwrap();
    let forged = prove(&c, &airs(), &own, traces, &public, &statement(&program)).unwrap();
    // The verifier's own columns (the honest multiplicities, the flag) break the proof's LogUp terms at
    // the first table whose columns differ: memory's send multiplicities.
    assert_eq!(
        verify_program(&program, &[f(6)], &forged, &c, 0),
        ood(Table::Memory)
    );

    // Heights: the memory table padded to twice its rows (preprocessed and main alike).
    let honest_exec = execute(&program, &witness).unwrap();
    let mut traces = main_traces(&program, &honest_exec, &c);
    let mut own = honest.traces.clone();
    let t = ti(Table::Memory);
    let double = |m: &RowMajorMatrix| {
        let mut v = m.values.clone();
        v.resize(2 * m.values.len(), F::ZERO);
        RowMajorMatrix::new(v, m.width)
    };
    traces[t] = double(&traces[t]);
    own[t] = Some(double(own[t].as_ref().unwrap()));
    let own = preprocess(&airs(), own).unwrap();
    let public = public_interactions(&program, &[f(5)]);
    let padded = prove(&c, &airs(), &own, traces, &public, &statement(&program)).unwrap();
    assert!(matches!(
        verify_program(&program, &[f(5)], &padded, &c, 0),
        Err(VerifyProgramError::Verify(VerifyError::ShapeMismatch(m))) if m.contains("preprocessed")
    ));
}
