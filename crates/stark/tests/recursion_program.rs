//! The recursion program (docs/recursion.md §4): the interpreter's instructions against the field and the
//! Poseidon2 reference, the write-once memory and every check failing by name; the verifier program of a
//! Poseidon2 inner proof accepting the honest proof and rejecting what `zkrv_stark::verify` rejects
//! (tampered proof bytes, a wrong Merkle sibling, a wrong FRI final polynomial, a wrong opened value), and
//! its public inputs binding the statement and the public interactions.

mod proto_common;

use proto_common::hooked::Hooked;
use proto_common::*;
use zkrv_stark::backend::{LdeMode, TraceInput};
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::merkle::MerkleHash;
use zkrv_stark::poseidon2;
use zkrv_stark::recursion::{
    build_verifier, compress, execute, hash_elems, public_inputs, Builder, CircuitDuplex,
    ExecFailure, Instr, Program, RecursionError, Table, VerifierProgram,
};
use zkrv_stark::transcript::Transcript;
use zkrv_stark::{preprocess, prove, prove_with, verify, Proof, StarkConfig};

const P: u64 = 0xffff_ffff_0000_0001;

/// SplitMix64: a reproducible stream for the printed seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn elem(&mut self) -> F {
        F::from_u64(self.next() % P)
    }
    fn ext(&mut self) -> Ext3 {
        Ext3([self.elem(), self.elem(), self.elem()])
    }
}

/// The memory after running `b`'s program over its own witness (which must pass).
fn run(b: Builder) -> (Program, Vec<F>) {
    let (program, witness) = b.finish();
    let exec = execute(&program, &witness).expect("honest program");
    (program, exec.memory)
}

#[test]
fn arithmetic_matches_the_field() {
    let seed = 0x2600_0201;
    println!("seed = {seed:#x}");
    let mut r = Rng(seed);
    for _ in 0..50 {
        let (x, y) = (r.elem(), r.elem());
        let (e, f) = (r.ext(), r.ext());
        let mut b = Builder::new();
        let (vx, vy) = (b.hint(x), b.hint(y));
        let (ve, vf) = (b.hint_ext(e), b.hint_ext(f));
        let outs = [b.add(vx, vy), b.sub(vx, vy), b.mul(vx, vy)];
        let eouts = [
            b.ext_add(ve, vf),
            b.ext_sub(ve, vf),
            b.ext_mul(ve, vf),
            b.ext_mul_base(ve, vx),
            b.ext_inv(ve),
        ];
        let (_, mem) = run(b);
        let want = [x + y, x - y, x * y];
        for (o, w) in outs.iter().zip(want) {
            assert_eq!(mem[o.0 as usize], w);
        }
        let want = [e + f, e - f, e * f, e * x, e.inverse()];
        for (o, w) in eouts.iter().zip(want) {
            assert_eq!(Ext3(o.0.map(|c| mem[c.0 as usize])), w);
        }
    }
}

#[test]
fn hashing_matches_the_native_poseidon2() {
    let seed = 0x2600_0202;
    println!("seed = {seed:#x}");
    let mut r = Rng(seed);
    for n in [1usize, 3, 4, 5, 8, 13] {
        let elems: Vec<F> = (0..n).map(|_| r.elem()).collect();
        let l: [F; 4] = std::array::from_fn(|_| r.elem());
        let rr: [F; 4] = std::array::from_fn(|_| r.elem());
        let mut b = Builder::new();
        let ev: Vec<_> = elems.iter().map(|&x| b.hint(x)).collect();
        let h = hash_elems(&mut b, &ev);
        let (lv, rv) = (l.map(|x| b.hint(x)), rr.map(|x| b.hint(x)));
        let c = compress(&mut b, &lv, &rv);
        let (_, mem) = run(b);
        assert_eq!(
            h.map(|v| mem[v.0 as usize]),
            poseidon2::hash_elems([&elems[..]])
        );
        assert_eq!(c.map(|v| mem[v.0 as usize]), poseidon2::compress(&l, &rr));
    }
}

#[test]
fn circuit_duplex_follows_the_transcript() {
    let seed = 0x2600_0203;
    println!("seed = {seed:#x}");
    let mut r = Rng(seed);
    let mut t = Transcript::with_hash(MerkleHash::Poseidon2, b"recursion");
    t.observe_field(&[r.elem()]);
    let mut b = Builder::new();
    let (s, pending, out) = t.poseidon2_sponge().unwrap().parts();
    let mut d = CircuitDuplex {
        s: s.map(|x| b.hint(x)),
        pending: pending.iter().map(|&x| b.hint(x)).collect(),
        out: out.iter().map(|&x| b.hint(x)).collect(),
    };
    let mut squeezed = Vec::new();
    let mut want = Vec::new();
    // Absorb runs of 0..6 elements between runs of 1..5 squeezes (partial and full blocks).
    for round in 0..12 {
        for _ in 0..round % 7 {
            let x = r.elem();
            t.observe_field(&[x]);
            let v = b.hint(x);
            d.absorb(&mut b, v);
        }
        for _ in 0..1 + round % 5 {
            want.push(t.sample_field());
            squeezed.push(d.squeeze(&mut b));
        }
    }
    let (_, mem) = run(b);
    let got: Vec<F> = squeezed.iter().map(|v| mem[v.0 as usize]).collect();
    assert_eq!(got, want);
}

#[test]
fn memory_is_write_once_and_checks_fail_by_name() {
    let f = F::from_u64;
    let prog = |instrs: Vec<Instr>| Program {
        label_of: vec![0; instrs.len()],
        labels: vec!["case".into()],
        num_cells: 8,
        instrs,
        public_inputs: Vec::new(),
    };
    let fails = |p: &Program, w: &[F]| execute(p, w).unwrap_err();
    // Written twice.
    let p = prog(vec![
        Instr::Const {
            dst: 0,
            value: f(1),
        },
        Instr::Const {
            dst: 0,
            value: f(2),
        },
    ]);
    let e = fails(&p, &[]);
    assert_eq!((e.instr, e.failure), (1, ExecFailure::WrittenTwice(0)));
    assert_eq!(e.label, "case");
    // Read before written.
    let p = prog(vec![Instr::Add { dst: 0, a: 1, b: 2 }]);
    assert_eq!(fails(&p, &[]).failure, ExecFailure::Unwritten(1));
    // Witness too short / too long.
    let p = prog(vec![Instr::Hint { dst: 0 }]);
    assert_eq!(fails(&p, &[]).failure, ExecFailure::WitnessExhausted);
    assert_eq!(
        fails(&p, &[f(1), f(2)]).failure,
        ExecFailure::WitnessLeftOver(1)
    );
    // assert_eq, select's bit, bits' range, ext_inv of zero.
    let p = prog(vec![
        Instr::Hint { dst: 0 },
        Instr::Hint { dst: 1 },
        Instr::AssertEq { a: 0, b: 1 },
    ]);
    assert!(execute(&p, &[f(5), f(5)]).is_ok());
    let e = fails(&p, &[f(5), f(6)]);
    assert_eq!(
        (e.instr, e.kind, e.failure),
        (2, "assert_eq", ExecFailure::NotEqual { a: 5, b: 6 })
    );
    let p = prog(vec![
        Instr::Hint { dst: 0 },
        Instr::Const {
            dst: 1,
            value: f(7),
        },
        Instr::Const {
            dst: 2,
            value: f(9),
        },
        Instr::Select {
            dst: 3,
            bit: 0,
            a: 1,
            b: 2,
        },
    ]);
    let ex = execute(&p, &[f(1)]).unwrap();
    assert_eq!(ex.memory[3], f(7));
    assert_eq!(execute(&p, &[f(0)]).unwrap().memory[3], f(9));
    assert_eq!(fails(&p, &[f(2)]).failure, ExecFailure::NotBoolean(2));
    let p = prog(vec![
        Instr::Hint { dst: 0 },
        Instr::Bits {
            dst: 1,
            src: 0,
            n: 3,
        },
    ]);
    let ex = execute(&p, &[f(6)]).unwrap();
    assert_eq!(&ex.memory[1..4], &[f(0), f(1), f(1)]);
    assert_eq!(
        fails(&p, &[f(8)]).failure,
        ExecFailure::Range { value: 8, n: 3 }
    );
    let p = prog(vec![
        Instr::Const {
            dst: 0,
            value: f(0),
        },
        Instr::ExtInv {
            dst: [1, 2, 3],
            a: [0, 0, 0],
        },
    ]);
    assert_eq!(fails(&p, &[]).failure, ExecFailure::Zero);
    // Rows: one per instruction, in its table.
    let p = prog(vec![
        Instr::Hint { dst: 0 },
        Instr::Hint { dst: 1 },
        Instr::Mul { dst: 2, a: 0, b: 1 },
        Instr::AssertEq { a: 2, b: 2 },
    ]);
    let ex = execute(&p, &[f(3), f(4)]).unwrap();
    let rows = |t: Table| ex.rows.iter().find(|(u, _)| *u == t).unwrap().1.clone();
    assert_eq!(rows(Table::Memory), vec![vec![f(3)], vec![f(4)]]);
    assert_eq!(
        rows(Table::BaseAlu),
        vec![vec![f(12), f(3), f(4)], vec![f(12), f(12)]]
    );
    assert!(rows(Table::Poseidon2).is_empty());
}

const STMT: &[u8] = b"program=fib;exit=0";

fn p2_config() -> StarkConfig {
    StarkConfig::dev().with_hash(MerkleHash::Poseidon2)
}

struct Inner {
    config: StarkConfig,
    pre: zkrv_stark::PreprocessedData,
    fx: Fixture,
    proof: Proof,
}

fn inner(log_n: usize, stmt: &[u8]) -> Inner {
    let fx = fixture(log_n);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    let config = p2_config();
    let proof = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, stmt).unwrap();
    Inner {
        config,
        pre,
        fx,
        proof,
    }
}

impl Inner {
    fn native(&self, p: &Proof) -> bool {
        verify(
            &self.config,
            0,
            &airs(),
            &self.pre,
            &self.fx.public,
            STMT,
            p,
        )
        .is_ok()
    }
    fn build(&self, p: &Proof) -> Result<VerifierProgram, RecursionError> {
        build_verifier(&self.config, &airs(), &self.pre, &self.fx.public, STMT, p)
    }
    /// The program's verdict: `Err(label)` of the failing instruction.
    fn program(&self, p: &Proof) -> Result<(), String> {
        let vp = self.build(p).map_err(|e| format!("build: {e}"))?;
        execute(&vp.program, &vp.witness)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

#[test]
fn verifier_program_accepts_an_honest_proof_and_its_shape_fixes_it() {
    let a = inner(7, STMT);
    assert!(a.native(&a.proof));
    let vp = a.build(&a.proof).unwrap();
    let exec = execute(&vp.program, &vp.witness).expect("the honest proof is accepted");
    for (t, rows) in &exec.rows {
        println!("{:>10}: {} rows", t.name(), rows.len());
    }
    for (k, n) in vp.program.kind_counts() {
        println!("{k:>14}: {n}");
    }
    let count = |k: &str| {
        vp.program
            .kind_counts()
            .iter()
            .find(|c| c.0 == k)
            .unwrap()
            .1
    };
    // Every query checks its paths and its final polynomial.
    assert!(count("poseidon2") > a.config.fri.num_queries * 7);
    assert!(count("assert_eq") > a.config.fri.num_queries * 4);
    // Another statement (other challenges, other query indices): the same program, another witness.
    let stmt2 = b"program=fib;exit=1";
    let b2 = inner(7, stmt2);
    let vp2 = build_verifier(
        &b2.config,
        &airs(),
        &b2.pre,
        &b2.fx.public,
        stmt2,
        &b2.proof,
    )
    .unwrap();
    assert_eq!(vp2.program, vp.program);
    assert_ne!(vp2.witness, vp.witness);
    execute(&vp2.program, &vp2.witness).unwrap();
    // A proof of another shape (height 2^8) gets another program.
    let c = inner(8, STMT);
    assert_ne!(c.build(&c.proof).unwrap().program, vp.program);
    // Heights out of range or a preprocessed trace of another height: a shape error, no program.
    for h in [0u8, 60, u8::MAX] {
        let mut p = a.proof.clone();
        p.log_heights[0] = h;
        assert!(
            matches!(a.build(&p), Err(RecursionError::Shape(_))),
            "height {h}"
        );
    }
    let mut p = a.proof.clone();
    p.log_heights[1] += 1;
    assert!(matches!(a.build(&p), Err(RecursionError::Shape(_))));
    // The Keccak preset and zk are refused by name.
    let k = StarkConfig::dev();
    let kp = prove(&k, &airs(), &a.pre, a.fx.traces.clone(), &a.fx.public, STMT).unwrap();
    assert!(matches!(
        build_verifier(&k, &airs(), &a.pre, &a.fx.public, STMT, &kp),
        Err(RecursionError::Unsupported(_))
    ));
}

/// Runs `vp` with its first hint labelled `label` plus one: the error.
fn tamper_first_hint(vp: &VerifierProgram, label: &str) -> zkrv_stark::recursion::ExecError {
    let p = &vp.program;
    let pos = (0..p.instrs.len())
        .find(|&i| p.label(i) == label && matches!(p.instrs[i], Instr::Hint { .. }))
        .unwrap_or_else(|| panic!("no hint labelled {label}"));
    let k = p.instrs[..pos]
        .iter()
        .filter(|i| matches!(i, Instr::Hint { .. }))
        .count();
    let mut w = vp.witness.clone();
    w[k] += F::ONE;
    execute(p, &w).unwrap_err()
}

#[test]
fn verifier_program_rejects_what_the_verifier_rejects() {
    let a = inner(7, STMT);
    // A malicious prover's chosen values.
    let mut p = a.proof.clone();
    p.pcs.round_openings[0].siblings[0][0] ^= 1;
    assert!(!a.native(&p));
    let e = a.program(&p).unwrap_err();
    println!("wrong Merkle sibling: {e}");
    assert!(e.contains("round 0 Merkle path"), "{e}");

    // A prover whose fold `target` is off by one everywhere, the rest committed consistently (so the
    // transcript, the grinding and the paths pass): the fold check of the next layer, or the final
    // polynomial, fails.
    let cheat = |target: usize| {
        let traces = a.fx.traces.iter().cloned().map(TraceInput::Host).collect();
        let hook = Hooked::new(|_| LdeMode::Store, |_, _| {}).with_fold(move |l, cw| {
            if l == target {
                cw.iter_mut().for_each(|v| *v += Ext3::ONE);
            }
        });
        prove_with(
            &hook,
            &a.config,
            &airs(),
            &a.pre,
            traces,
            &a.fx.public,
            STMT,
        )
        .unwrap()
    };
    let layers = a.proof.pcs.fri_roots.len();
    assert!(layers >= 2);
    let p = cheat(0);
    assert!(!a.native(&p));
    let e = a.program(&p).unwrap_err();
    println!("wrong FRI fold: {e}");
    assert!(e.contains("query 0: FRI layer 1 fold"), "{e}");
    let p = cheat(layers - 1);
    assert!(!a.native(&p));
    let e = a.program(&p).unwrap_err();
    println!("wrong FRI final polynomial: {e}");
    assert!(e.contains("query 0: final polynomial"), "{e}");
    // A prover whose aux trace breaks the running sum of `bytes` (committed consistently): the verifier's
    // out-of-domain check of `bytes` fails, and the program's.
    let traces = a.fx.traces.iter().cloned().map(TraceInput::Host).collect();
    let hook = Hooked::new(
        |_| LdeMode::Store,
        |air, aux| {
            if air.name == "bytes" {
                let w = aux.width;
                aux.row_mut(3)[w - 2] += F::ONE;
            }
        },
    );
    let p = prove_with(
        &hook,
        &a.config,
        &airs(),
        &a.pre,
        traces,
        &a.fx.public,
        STMT,
    )
    .unwrap();
    assert_eq!(
        verify(&a.config, 0, &airs(), &a.pre, &a.fx.public, STMT, &p),
        Err(zkrv_stark::VerifyError::OodMismatch {
            table: "bytes".into()
        })
    );
    let e = a.program(&p).unwrap_err();
    println!("broken running sum: {e}");
    assert!(e.contains("OOD: table `bytes`"), "{e}");
    // Another public output (the public interaction's value): the bus balance fails, in both.
    let mut public = a.fx.public.clone();
    public[0].values[0] += F::ONE;
    assert!(verify(&a.config, 0, &airs(), &a.pre, &public, STMT, &a.proof).is_err());
    let vp = build_verifier(&a.config, &airs(), &a.pre, &public, STMT, &a.proof).unwrap();
    let e = execute(&vp.program, &vp.witness).unwrap_err();
    println!("other public value: {e}");
    let vp = a.build(&a.proof).unwrap();
    // A preprocessed value at zeta: the OOD check of `bytes`.
    let e = tamper_first_hint(&vp, "OOD: table `bytes`");
    assert_eq!(e.label, "OOD: table `bytes`", "{e}");
    // A changed final polynomial (the grinding nonce no longer holds).
    let mut p = a.proof.clone();
    p.pcs.final_poly[0] += Ext3::ONE;
    assert!(!a.native(&p));
    let e = a.program(&p).unwrap_err();
    assert!(e.contains("PCS: grinding"), "{e}");

    let mut p = a.proof.clone();
    p.opened[0][0][0][0] += Ext3::ONE;
    assert!(!a.native(&p));
    let e = a.program(&p).unwrap_err();
    println!("wrong opened value: {e}");

    let mut p = a.proof.clone();
    p.pcs.fri_openings[0].rows[0][0][0] += F::ONE;
    assert!(!a.native(&p));
    let e = a.program(&p).unwrap_err();
    println!("wrong FRI layer row: {e}");
    assert!(e.contains("FRI layer 0 Merkle path"), "{e}");

    let mut p = a.proof.clone();
    p.pcs.pow_nonce ^= 1;
    let native = a.native(&p);
    let prog = a.program(&p);
    println!("other nonce: native {native}, program {prog:?}");
    assert_eq!(native, prog.is_ok());

    // Tampered witness: the row hinted for query 3 of the quotient round.
    let vp = a.build(&a.proof).unwrap();
    let e = tamper_first_hint(&vp, "query 3: round 2 Merkle path");
    assert_eq!(e.label, "query 3: round 2 Merkle path", "{e}");

    // Flipped bytes past the header (the statement digest is compared with the public input, not in
    // the program; the heights fix the program): wherever the proof still parses, both reject.
    let seed = 0x2600_0204;
    println!("seed = {seed:#x}");
    let mut r = Rng(seed);
    let bytes = a.proof.to_bytes();
    let start = 7 + 32 + 4 + a.proof.log_heights.len();
    let mut checked = 0;
    for _ in 0..40 {
        let i = start + (r.next() as usize) % (bytes.len() - start);
        let mut bb = bytes.clone();
        bb[i] ^= 1 << (r.next() % 8);
        let Ok(p) = Proof::from_bytes(&bb) else {
            continue;
        };
        let native = a.native(&p);
        let prog = a.program(&p);
        assert_eq!(
            native,
            prog.is_ok(),
            "byte {i}: native {native}, program {prog:?}"
        );
        assert!(!native, "byte {i}");
        checked += 1;
    }
    println!("{checked} flipped proofs parsed, all rejected by both");
    assert!(checked > 10);
}

/// The witness of `vp` with its public-input cells (the first hints) set to `inputs`.
fn with_public_inputs(vp: &VerifierProgram, inputs: &[F]) -> Vec<F> {
    assert_eq!(vp.program.public_inputs.len(), inputs.len());
    let mut w = vp.witness.clone();
    w[..inputs.len()].copy_from_slice(inputs);
    w
}

#[test]
fn verifier_program_binds_its_public_inputs() {
    let a = inner(7, STMT);
    let vp = a.build(&a.proof).unwrap();
    let want = public_inputs(STMT, &a.fx.public);
    // The statement packed 7 bytes per element, then per public interaction its multiplicity and values.
    let n_public: usize = a.fx.public.iter().map(|p| 1 + p.values.len()).sum();
    assert_eq!(want.len(), STMT.len().div_ceil(7) + n_public);
    assert_eq!(want[0], F::from_u64(u64::from_le_bytes(*b"program\0")));
    let exec = execute(&vp.program, &vp.witness).unwrap();
    assert_eq!(exec.public_inputs(&vp.program), want);
    assert_eq!(&vp.witness[..want.len()], &want[..]);

    // A proof of another statement run with this statement's public inputs: the transcript start (and
    // every challenge after it) differs from the one that proof was made for.
    let stmt2 = b"program=fib;exit=1";
    let b2 = inner(7, stmt2);
    assert!(matches!(
        verify(&a.config, 0, &airs(), &a.pre, &a.fx.public, STMT, &b2.proof),
        Err(zkrv_stark::VerifyError::Statement)
    ));
    let vp2 = build_verifier(
        &b2.config,
        &airs(),
        &b2.pre,
        &b2.fx.public,
        stmt2,
        &b2.proof,
    )
    .unwrap();
    assert_eq!(vp2.program, vp.program);
    execute(&vp2.program, &vp2.witness).unwrap();
    let e = execute(&vp2.program, &with_public_inputs(&vp2, &want)).unwrap_err();
    println!("another statement's proof with these public inputs: {e}");
    assert!(e.label.starts_with("OOD: table"), "{e}");

    // A wrong public interaction (each of its multiplicity and values), in the public inputs only or
    // given to both verifiers: rejected.
    let first = STMT.len().div_ceil(7);
    for k in 0..1 + a.fx.public[0].values.len() {
        let mut bad = want.clone();
        bad[first + k] += F::ONE;
        // The public input alone: its bytes (hints) no longer recombine to it.
        let e = execute(&vp.program, &with_public_inputs(&vp, &bad)).unwrap_err();
        println!("public interaction 0, cell {k} changed: {e}");
        assert_eq!(e.label, "transcript start", "{e}");
        let mut public = a.fx.public.clone();
        if k == 0 {
            public[0].multiplicity += F::ONE;
        } else {
            public[0].values[k - 1] += F::ONE;
        }
        assert_eq!(public_inputs(STMT, &public), bad);
        assert!(verify(&a.config, 0, &airs(), &a.pre, &public, STMT, &a.proof).is_err());
        let vpb = build_verifier(&a.config, &airs(), &a.pre, &public, STMT, &a.proof).unwrap();
        // A whole witness made for it (the transcript start consistent): the challenges differ.
        assert_eq!(vpb.program, vp.program);
        let e = execute(&vpb.program, &vpb.witness).unwrap_err();
        println!("public interaction 0, cell {k} changed, consistent witness: {e}");
        assert!(e.label.starts_with("OOD: table"), "{e}");
    }
    // The bytes the transcript absorbs of a public interaction are its cells' canonical bytes: a part
    // that does not recombine to the cell, or the non-canonical bytes of `m + p` for the multiplicity `m`
    // (parts `[0, 2)`, `[2, 4)`, `[4, 8)` of its 8 bytes at offset 5: the hints after the public inputs,
    // then the canonical check's `w`), fail in the transcript start.
    let e = tamper_first_hint(&vp, "transcript start");
    assert_eq!(e.label, "transcript start", "{e}");
    let m = a.fx.public[0].multiplicity.as_canonical_u64();
    let n = m as u128 + P as u128;
    assert!(n < 1 << 64);
    let mut w = vp.witness.clone();
    let k = want.len();
    assert_eq!(w[k].as_canonical_u64(), m & 0xffff);
    w[k] = F::from_u64((n & 0xffff) as u64);
    w[k + 1] = F::from_u64(((n >> 16) & 0xffff) as u64);
    w[k + 2] = F::from_u64((n >> 32) as u64);
    w[k + 3] = F::ZERO;
    let e = execute(&vp.program, &w).unwrap_err();
    println!("non-canonical bytes of the multiplicity: {e}");
    assert_eq!(e.label, "transcript start", "{e}");
    assert!(e.to_string().ends_with("!= 0"), "{e}");
    // A changed statement byte, in the public inputs only: rejected.
    let mut bad = want.clone();
    bad[1] += F::ONE;
    let e = execute(&vp.program, &with_public_inputs(&vp, &bad)).unwrap_err();
    println!("statement element 1 changed: {e}");
    assert!(e.label.starts_with("OOD: table"), "{e}");
}
