//! Randomized witness-cell mutation of the whole RV64IM machine (issue 4 item 5, issue 18): witnesses of
//! real guests (guests/bin) and an ALU program, one cell of one real row of one table replaced by a
//! different value, optionally the fixed tables' multiplicities (BITWISE, POW2, DECODE: every table with a
//! preprocessed-only entry, other than the mutated one) recounted as a cheating prover would; then the
//! debug checker decides, and an accepted mutation is classified from the symbolic circuit (readers of each
//! column: [`CompiledAir::column_readers`]), so a new table is covered without editing this file:
//!
//! * **free** (counted, reported with its reason): on the rows that read the cell (its row, and the row
//!   before when some reader looks at the next row) every interaction reading it keeps its contribution
//!   (multiplicity 0 before and after, or the same tuple), except lookups into a fixed table (a bus with a
//!   preprocessed-only entry, [`fixed_lookup_buses`]) that moved to another entry of that table; and the
//!   cell has a reader other than such lookups (a constraint, or an interaction that is gated off here).
//!   Example: DVRM `inv_r` when `beta_r = 0` (its one constraint multiplies it by 0, no bus reads it).
//! * **bug** (fails the test, naming guest, table, row, column index and name): the cell is read by nothing;
//!   or an interaction that is not a fixed-table lookup changed its contribution and the buses still
//!   balance; or only fixed-table lookups read the cell and another entry was accepted (nothing pins it).
//!
//! The verdict is computed from the changed rows only ([`Fuzzer::judge`]: the honest witness passes the
//! full checker, so the mutated one does iff the changed rows satisfy their constraints and multiplicity
//! bounds and their contributions to the buses cancel); it is cross-checked with the full checker
//! ([`check_traces`]) on every accepted mutation and a sample of rejected ones, and the recount with
//! [`recount_lookups`] (BITWISE) on a sample. A few rejected witnesses also go through the prover (checker
//! off) and the verifier must reject them.
//!
//! CI (`mutated_witness_cells_are_rejected`): [`REGRESSION_SEEDS`] and one fresh seed (`ZKRV_SEED`, else
//! the clock; printed as `fuzz_witness seed = ...`), `ZKRV_FUZZ_ITERS` mutations each (default 200) over
//! exitcode, fibonacci and the ALU program. Longer run outside CI (`long_run_every_guest`, ignored):
//! `ZKRV_FUZZ_ITERS` (default 100,000) over every guest in guests/bin and the ALU program, non-zk and zk
//! heights, stopping early after `ZKRV_FUZZ_SECS` seconds if set:
//! `ZKRV_FUZZ_SECS=600 cargo test --release -p zkrv-machine --test fuzz_witness -- --ignored --nocapture`.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use zkrv_executor::Program;
use zkrv_machine::tables::cpu::CpuCols;
use zkrv_machine::{
    memory_init_interactions, prove_witness, public_interactions, recount_lookups, table_id,
    verify, witness_for, Witness, WitnessChecker, TABLE_NAMES,
};
use zkrv_stark::air::{ColumnReaders, CompiledAir, Direction};
use zkrv_stark::check::check_traces;
use zkrv_stark::field::{PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::logup::{fixed_lookup_buses, trace_row_at, PublicInteraction};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Node;
use zkrv_stark::StarkConfig;

/// Seeds that once found something, replayed by CI ([`REGRESSION_ITERS`] mutations each), each with the
/// start of a free-cell reason its campaign must report. Both failed the hand-written list of free cells
/// this test had before issue 18: 1796156675938852968 (issue 18: DVRM `inv_r` when `beta_r = 0`) and 9
/// (MUL `sa_en` 0 -> 1 on a row with `sa_raw = 0` and no high-word request; the first such seed of a scan
/// of seeds 1..3000 with the old test's draws).
const REGRESSION_SEEDS: &[(u64, &str)] = &[
    (
        1796156675938852968,
        "DVRM.inv_r: read by constraints `abs r: beta = 1 -> x_lo != 0`, all still 0; no interaction reads it",
    ),
    (
        9,
        "MUL.sa_en: read by constraints `sa_en bool`, `sb_en implies sa_en`, `sa`, all still 0; interactions #23 (bus 6) have multiplicity 0 here",
    ),
];

/// Mutations of a regression seed's campaign (what it was found with).
const REGRESSION_ITERS: usize = 200;

/// Goldilocks modulus.
const P: u64 = 0xffff_ffff_0000_0001;

struct Rng(u64);

impl Rng {
    /// splitmix64.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a non-negative integer")),
    )
}

fn fresh_seed() -> u64 {
    let s = env_u64("ZKRV_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    eprintln!("fuzz_witness seed = {s}");
    s
}

fn guests_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests").to_string()
}

fn guest(name: &str) -> (Program, Vec<u8>) {
    let root = guests_dir();
    let elf = std::fs::read(format!("{root}/bin/{name}.elf")).unwrap();
    let input = std::fs::read(format!("{root}/inputs/{name}.bin")).unwrap_or_default();
    (Program::from_elf(&elf).unwrap(), input)
}

/// A short program for the tables the C guests above barely use: DIV/REMU/MULH/DIVW (DVRM, MUL, CPU32, LT)
/// and a doubleword store/load crossing a cell (MEMW), SRAI (SHIFT), XOR (BYTEWISE); exits with the sum.
fn alu_program() -> Program {
    use zkrv_executor::asm::*;
    let words = vec![
        addi(5, 0, -100),     // t0 = -100
        addi(6, 0, 7),        // t1 = 7
        op(1, 4, 7, 5, 6),    // t2 = div t0, t1 = -14
        op(1, 7, 28, 5, 6),   // t3 = remu t0, t1
        op(1, 1, 29, 5, 6),   // t4 = mulh t0, t1 = -1
        op32(1, 4, 30, 5, 6), // t5 = divw t0, t1 = -14
        srai(31, 5, 3),       // t6 = -100 >> 3
        xor(8, 5, 6),         // s0 = t0 ^ t1
        addi(2, 2, -64),      // sp -= 64
        sd(5, 2, 4),          // [sp+4..12] = t0 (crosses a cell)
        ld(9, 2, 4),          // s1 = [sp+4..12]
        add(10, 7, 28),
        add(10, 10, 29),
        add(10, 10, 30),
        add(10, 10, 31),
        add(10, 10, 8),
        add(10, 10, 9),
        addi(17, 0, 93),
        ECALL,
    ];
    Program::from_words(0x1000, &words).unwrap()
}

/// The CI guests (their order and inputs fix what a seed replays).
fn ci_guests() -> Vec<(String, Program, Vec<u8>)> {
    vec![
        ("exitcode".into(), guest("exitcode").0, vec![]),
        (
            "fibonacci".into(),
            guest("fibonacci").0,
            guest("fibonacci").1,
        ),
        ("alu".into(), alu_program(), vec![]),
    ]
}

fn config(zk: bool, debug_check: bool) -> StarkConfig {
    StarkConfig {
        zk,
        debug_check,
        ..StarkConfig::dev()
    }
}

/// Real rows of table `t`: CPU rows with `is_pad = 0`; every row of a table with preprocessed columns (its
/// main trace is only multiplicities); otherwise the rows before the trailing run of rows equal to the
/// last row (the padding: the last row is skipped even when the table is exactly full).
fn real_rows(w: &Witness, air: &CompiledAir, t: usize) -> usize {
    let m = &w.traces[t];
    let n = m.height();
    if n == 0 {
        // An absent table (a precompile no call uses).
        return 0;
    }
    if air.preprocessed_width > 0 {
        return n;
    }
    if t == table_id::CPU {
        return (0..n)
            .take_while(|&r| CpuCols::from_row(m.row(r)).dec.flags.is_pad == F::ZERO)
            .count();
    }
    // The precompile tables: the rows of the calls (their padding groups differ row to row).
    let is_real = match t {
        table_id::KECCAKF => {
            Some(zkrv_machine::tables::keccakf::KeccakfCols::<usize>::indices().is_real)
        }
        table_id::SHA256 => {
            Some(zkrv_machine::tables::sha256::Sha256Cols::<usize>::indices().is_real)
        }
        _ => None,
    };
    if let Some(c) = is_real {
        // SHA256's first row is a padding boundary row that holds the first call's input state.
        let first = usize::from(t == table_id::SHA256);
        return first + (first..n).take_while(|&r| m.row(r)[c] == F::ONE).count();
    }
    let last = m.row(n - 1);
    let mut k = n - 1;
    while k > 0 && m.row(k - 1) == last {
        k -= 1;
    }
    k
}

/// A different value for a cell holding `old`.
fn new_value(rng: &mut Rng, old: u64) -> u64 {
    loop {
        let v = match rng.below(7) {
            0 => (old + 1) % P,
            // (u128: a cell may hold any field element, e.g. a carry off the rows that range-check it.)
            1 => ((old as u128 + P as u128 - 1) % P as u128) as u64,
            2 => rng.next() % P,
            3 => 1 << 32,
            4 => P - 1,
            5 => rng.below(256),
            _ => old ^ (1 << rng.below(16)),
        };
        if v != old && v < P {
            return v;
        }
    }
}

/// A fixed-table entry: the multiplicity cell of the row of table `table` that holds a bus tuple.
#[derive(Clone, Copy)]
struct Entry {
    table: usize,
    row: usize,
    /// The main column that is the entry's multiplicity.
    col: usize,
    direction: Direction,
}

/// What one table row contributes: per interaction, `(multiplicity, tuple)` (canonical values).
struct RowEval {
    /// First failing constraint.
    fail: Option<usize>,
    contributions: Vec<(u64, Vec<u64>)>,
}

/// Net multiplicity change per `(bus, tuple)` (sends positive).
type Delta = BTreeMap<(u32, Vec<u64>), i128>;

/// A mutated cell: table, row, column, the new value, whether the fixed tables were recounted.
#[derive(Clone, Copy, Debug)]
struct Mutation {
    table: usize,
    row: usize,
    col: usize,
    new: u64,
    recount: bool,
}

enum Verdict {
    Rejected(String),
    /// Accepted; `changed[k]` is true when interaction `k` of the mutated table changed its contribution on
    /// a row that reads the cell, `live[k]` when its multiplicity is non-zero there (before or after).
    Accepted {
        changed: Vec<bool>,
        live: Vec<bool>,
    },
}

/// A cell change applied to the witness: `(table, row, col, old value)`, undone in reverse order.
type Undo = Vec<(usize, usize, usize, F)>;

/// The checker of one program under one configuration, and what the classification reads of its circuits.
struct Fuzzer {
    program: Program,
    compiled: Vec<CompiledAir>,
    prep: Vec<Option<RowMajorMatrix>>,
    log_max_multiplicity: u32,
    /// `readers[t][c]`: the constraints and interactions of table t that read main column c.
    readers: Vec<Vec<ColumnReaders>>,
    /// `lookup[t][k]`: interaction k of table t is a lookup into a fixed table (on a fixed-lookup bus, not
    /// an entry itself).
    lookup: Vec<Vec<bool>>,
    /// The fixed tables' entries by `(bus, tuple)`.
    entries: HashMap<(u32, Vec<u64>), Entry>,
}

impl Fuzzer {
    /// `compiled`: the checker's AIRs, possibly weakened by a test.
    fn new(program: &Program, cfg: &StarkConfig, compiled: Option<Vec<CompiledAir>>) -> Self {
        let checker = WitnessChecker::new(program, cfg).unwrap();
        let compiled = compiled.unwrap_or_else(|| checker.compiled().to_vec());
        let prep = checker.preprocessed().to_vec();
        let fixed = fixed_lookup_buses(&compiled);
        let readers = compiled.iter().map(|a| a.column_readers()).collect();
        let lookup = compiled
            .iter()
            .map(|a| {
                (0..a.interactions.len())
                    .map(|k| fixed.contains(&a.interactions[k].bus) && !a.is_fixed_entry(k))
                    .collect()
            })
            .collect();
        let mut entries = HashMap::new();
        for (t, a) in compiled.iter().enumerate() {
            let Some(p) = &prep[t] else { continue };
            let fixed_entries: Vec<(usize, usize)> = (0..a.interactions.len())
                .filter(|&k| a.is_fixed_entry(k))
                .filter_map(
                    |k| match a.circuit.nodes[a.interactions[k].multiplicity as usize] {
                        Node::Main { col, next: false } => Some((k, col)),
                        _ => None,
                    },
                )
                .collect();
            if fixed_entries.is_empty() {
                continue;
            }
            let zeros = RowMajorMatrix::new(vec![F::ZERO; p.height() * a.width], a.width);
            let mut nodes = Vec::new();
            for row in 0..p.height() {
                a.circuit.eval(
                    &trace_row_at(&zeros, Some(p), row),
                    &a.public_values,
                    &mut nodes,
                );
                for &(k, col) in &fixed_entries {
                    let it = &a.interactions[k];
                    let tuple = it
                        .values
                        .iter()
                        .map(|&v| nodes[v as usize].as_canonical_u64())
                        .collect();
                    entries.entry((it.bus, tuple)).or_insert(Entry {
                        table: t,
                        row,
                        col,
                        direction: it.direction,
                    });
                }
            }
        }
        Fuzzer {
            program: program.clone(),
            compiled,
            prep,
            log_max_multiplicity: cfg.log_max_multiplicity,
            readers,
            lookup,
            entries,
        }
    }

    fn public(&self, w: &Witness) -> Vec<PublicInteraction> {
        let mut p = public_interactions(&w.statement);
        p.extend(memory_init_interactions(&self.program, &w.pages).unwrap());
        p
    }

    /// The full debug checker.
    fn full_check(&self, w: &Witness, public: &[PublicInteraction]) -> Result<(), String> {
        check_traces(
            &self.compiled,
            &w.traces,
            &self.prep,
            public,
            self.log_max_multiplicity,
        )
        .map_err(|e| e.to_string())
    }

    fn eval_row(&self, w: &Witness, t: usize, row: usize, nodes: &mut Vec<F>) -> RowEval {
        let a = &self.compiled[t];
        a.circuit.eval(
            &trace_row_at(&w.traces[t], self.prep[t].as_ref(), row),
            &a.public_values,
            nodes,
        );
        let fail = a
            .constraints
            .iter()
            .position(|c| nodes[c.node as usize] != F::ZERO);
        let contributions = a
            .interactions
            .iter()
            .map(|it| {
                let m = nodes[it.multiplicity as usize].as_canonical_u64();
                let tuple = it
                    .values
                    .iter()
                    .map(|&v| nodes[v as usize].as_canonical_u64())
                    .collect();
                (m, tuple)
            })
            .collect();
        RowEval {
            fail,
            contributions,
        }
    }

    /// The rows of table `t` that see a change of row `row`: the row, and the row before (cyclic) when
    /// some reader of column `col` reads the next row.
    fn rows_seeing(&self, w: &Witness, t: usize, row: usize, col: usize) -> Vec<usize> {
        let n = w.traces[t].height();
        let mut rows = vec![row];
        if self.readers[t][col].next_row && n > 1 {
            rows.push((row + n - 1) % n);
        }
        rows
    }

    /// Sets cell `(t, row, col)` to `new` and folds the effect on the rows that see it into `delta`;
    /// returns the row evaluations before and after, or why a changed row breaks a constraint or a
    /// multiplicity bound.
    #[allow(clippy::too_many_arguments)]
    fn set_cell(
        &self,
        w: &mut Witness,
        (t, row, col): (usize, usize, usize),
        new: F,
        undo: &mut Undo,
        delta: &mut Delta,
        nodes: &mut Vec<F>,
    ) -> Result<Vec<(RowEval, RowEval)>, String> {
        let rows = self.rows_seeing(w, t, row, col);
        let before: Vec<RowEval> = rows
            .iter()
            .map(|&r| self.eval_row(w, t, r, nodes))
            .collect();
        undo.push((t, row, col, w.traces[t].row(row)[col]));
        w.traces[t].row_mut(row)[col] = new;
        let a = &self.compiled[t];
        let mut out = Vec::new();
        for (&r, b) in rows.iter().zip(before) {
            let after = self.eval_row(w, t, r, nodes);
            if let Some(i) = after.fail {
                return Err(format!(
                    "{}[{r}]: constraint `{}`",
                    a.name, a.constraints[i].name
                ));
            }
            for (k, it) in a.interactions.iter().enumerate() {
                let m = after.contributions[k].0;
                if m >> self.log_max_multiplicity != 0 {
                    return Err(format!("{}[{r}]: multiplicity of interaction {k}", a.name));
                }
                let sign = match it.direction {
                    Direction::Send => 1,
                    Direction::Receive => -1,
                };
                for (e, s) in [(&b, -sign), (&after, sign)] {
                    let (m, tuple) = &e.contributions[k];
                    if *m != 0 {
                        *delta.entry((it.bus, tuple.clone())).or_default() += s * *m as i128;
                    }
                }
            }
            out.push((b, after));
        }
        Ok(out)
    }

    /// Applies `m` to `w` (recording the changes in `undo`) and decides whether the debug checker accepts
    /// the result, from the changed rows only (see the module doc). With `m.recount`, every fixed-table
    /// entry whose tuple's net count changed gets its multiplicity adjusted (if the tuple is an entry and
    /// the new count is in range), as recounting the lookups would.
    fn judge(&self, w: &mut Witness, m: Mutation, undo: &mut Undo) -> Verdict {
        let mut nodes = Vec::new();
        let mut delta = Delta::new();
        let n_int = self.compiled[m.table].interactions.len();
        let cell = (m.table, m.row, m.col);
        let evals = match self.set_cell(w, cell, F::from_u64(m.new), undo, &mut delta, &mut nodes) {
            Ok(e) => e,
            Err(why) => return Verdict::Rejected(why),
        };
        let (mut changed, mut live) = (vec![false; n_int], vec![false; n_int]);
        for (b, a) in &evals {
            for k in 0..n_int {
                let (x, y) = (&b.contributions[k], &a.contributions[k]);
                live[k] |= x.0 != 0 || y.0 != 0;
                changed[k] |= x.0 != y.0 || (x.0 != 0 && x.1 != y.1);
            }
        }
        if m.recount {
            let pending: Vec<((u32, Vec<u64>), i128)> = delta
                .iter()
                .filter(|(_, &net)| net != 0)
                .map(|(k, &net)| (k.clone(), net))
                .collect();
            for (key, net) in pending {
                // A fixed table's own mutated multiplicity is not recounted away.
                let Some(e) = self.entries.get(&key).filter(|e| e.table != m.table) else {
                    continue;
                };
                let old = w.traces[e.table].row(e.row)[e.col].as_canonical_u64() as i128;
                let new = match e.direction {
                    Direction::Receive => old + net,
                    Direction::Send => old - net,
                };
                if new < 0 || new >> self.log_max_multiplicity != 0 {
                    continue;
                }
                let cell = (e.table, e.row, e.col);
                if let Err(why) = self.set_cell(
                    w,
                    cell,
                    F::from_u64(new as u64),
                    undo,
                    &mut delta,
                    &mut nodes,
                ) {
                    return Verdict::Rejected(format!("recounted {why}"));
                }
            }
        }
        if let Some(((bus, tuple), net)) = delta.iter().find(|(_, &net)| net != 0) {
            return Verdict::Rejected(format!("bus {bus} tuple {tuple:?} net {net}"));
        }
        Verdict::Accepted { changed, live }
    }

    /// Why an accepted mutation is harmless (`Ok`, a reason without row-specific values) or a bug (`Err`).
    fn classify(&self, m: Mutation, changed: &[bool], live: &[bool]) -> Result<String, String> {
        let a = &self.compiled[m.table];
        let r = &self.readers[m.table][m.col];
        let cell = format!("{}.{}", a.name, a.column_names[m.col]);
        let desc = |ks: &[usize]| {
            let v: Vec<String> = ks
                .iter()
                .map(|&k| format!("#{k} (bus {})", a.interactions[k].bus))
                .collect();
            v.join(", ")
        };
        if r.constraints.is_empty() && r.interactions.is_empty() {
            return Err("read by no constraint and no interaction".into());
        }
        let lookup = &self.lookup[m.table];
        let feeds: Vec<usize> = (0..changed.len())
            .filter(|&k| changed[k] && !lookup[k])
            .collect();
        if !feeds.is_empty() {
            return Err(format!(
                "feeds interaction {} whose contribution changed, and the buses still balance",
                desc(&feeds)
            ));
        }
        let moved: Vec<usize> = (0..changed.len()).filter(|&k| changed[k]).collect();
        if !moved.is_empty()
            && r.constraints.is_empty()
            && r.interactions.iter().all(|&k| lookup[k])
        {
            return Err(format!(
                "read only by lookups into fixed tables ({}) and another entry was accepted: nothing pins it",
                desc(&moved)
            ));
        }
        let mut parts = Vec::new();
        if !r.constraints.is_empty() {
            let names: Vec<String> = r
                .constraints
                .iter()
                .take(4)
                .map(|&i| format!("`{}`", a.constraints[i].name))
                .collect();
            let more = r.constraints.len().saturating_sub(4);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            parts.push(format!(
                "read by constraints {}{more}, all still 0",
                names.join(", ")
            ));
        }
        let gated: Vec<usize> = r
            .interactions
            .iter()
            .copied()
            .filter(|&k| !live[k])
            .collect();
        let same: Vec<usize> = r
            .interactions
            .iter()
            .copied()
            .filter(|&k| live[k] && !changed[k])
            .collect();
        if r.interactions.is_empty() {
            parts.push("no interaction reads it".into());
        }
        if !gated.is_empty() {
            parts.push(format!(
                "interactions {} have multiplicity 0 here",
                desc(&gated)
            ));
        }
        if !same.is_empty() {
            parts.push(format!("interactions {} keep their tuple", desc(&same)));
        }
        if !moved.is_empty() {
            parts.push(format!(
                "lookups {} moved to another entry of their fixed table",
                desc(&moved)
            ));
        }
        Ok(format!("{cell}: {}", parts.join("; ")))
    }
}

/// A prepared guest: its witness (honest; mutations are undone) and checker.
struct Target {
    label: String,
    fuzzer: Fuzzer,
    witness: Witness,
    public: Vec<PublicInteraction>,
    /// `(table, real rows)` of the tables with real rows.
    reals: Vec<(usize, usize)>,
    zk: bool,
}

impl Target {
    fn new(label: &str, program: &Program, input: &[u8], zk: bool) -> Self {
        Self::with_airs(label, program, input, zk, None)
    }

    fn with_airs(
        label: &str,
        program: &Program,
        input: &[u8],
        zk: bool,
        compiled: Option<Vec<CompiledAir>>,
    ) -> Self {
        let cfg = config(zk, true);
        let fuzzer = Fuzzer::new(program, &cfg, compiled);
        let witness = witness_for(program, input, &cfg).unwrap();
        let public = fuzzer.public(&witness);
        fuzzer
            .full_check(&witness, &public)
            .unwrap_or_else(|e| panic!("{label}: honest witness rejected: {e}"));
        let reals: Vec<(usize, usize)> = (0..fuzzer.compiled.len())
            .map(|t| (t, real_rows(&witness, &fuzzer.compiled[t], t)))
            .filter(|&(_, n)| n > 0)
            .collect();
        Target {
            label: label.to_string(),
            fuzzer,
            witness,
            public,
            reals,
            zk,
        }
    }

    fn describe(&self) -> String {
        let v: Vec<String> = self
            .reals
            .iter()
            .map(|&(t, n)| {
                format!(
                    "{}={n}/{}",
                    self.fuzzer.compiled[t].name,
                    self.witness.traces[t].height()
                )
            })
            .collect();
        format!("{}: real rows {v:?}", self.label)
    }
}

/// How much of the fast verdict is cross-checked with the full checker (and the recount with
/// [`recount_lookups`]), and how many rejected witnesses go through the prover.
#[derive(Clone, Copy)]
struct Validation {
    /// Full check of at most this many accepted mutations per target.
    accepted: usize,
    /// Full check of every `rejected_every`-th rejected mutation (0: none), at most `rejected` per target.
    rejected_every: usize,
    rejected: usize,
    /// Full prove + verify of at most this many rejected mutations per campaign (not on `fibonacci`).
    proofs: usize,
    /// No full check on a target with more main cells than this (a check of 2^18 CPU rows takes seconds).
    max_cells: usize,
}

#[derive(Default)]
struct Tally {
    mutations: usize,
    rejected: usize,
    free: usize,
}

#[derive(Default)]
struct Report {
    tally: BTreeMap<String, Tally>,
    free: BTreeMap<String, usize>,
    bugs: Vec<String>,
    full_checks: usize,
    recount_checks: usize,
    proofs: usize,
}

impl Report {
    fn total(&self) -> Tally {
        let mut t = Tally::default();
        for e in self.tally.values() {
            t.mutations += e.mutations;
            t.rejected += e.rejected;
            t.free += e.free;
        }
        t
    }

    fn print(&self, what: &str, elapsed: Duration) {
        let t = self.total();
        eprintln!(
            "fuzz_witness {what}: {} mutations, {} rejected, {} free, {} bugs; {} full checks, {} recount checks, {} full proofs; {elapsed:.1?}",
            t.mutations,
            t.rejected,
            t.free,
            self.bugs.len(),
            self.full_checks,
            self.recount_checks,
            self.proofs
        );
        for (name, e) in &self.tally {
            eprintln!(
                "  {name}: {} mutations, {} rejected, {} free",
                e.mutations, e.rejected, e.free
            );
        }
        for (why, k) in &self.free {
            eprintln!("  free x{k}: {why}");
        }
        for b in &self.bugs {
            eprintln!("  BUG: {b}");
        }
    }
}

/// One mutation of `target` (undone before returning).
fn mutate_once(
    target: &mut Target,
    m: Mutation,
    i: usize,
    seed: u64,
    val: Validation,
    budget: &mut [usize; 3],
    report: &mut Report,
) {
    let Target {
        fuzzer,
        witness: w,
        public,
        label,
        zk,
        ..
    } = target;
    let old = w.traces[m.table].row(m.row)[m.col].as_canonical_u64();
    let mut undo = Undo::new();
    let verdict = fuzzer.judge(w, m, &mut undo);
    let table = &fuzzer.compiled[m.table].name;
    let cell = format!(
        "{label} {table}[{}] col {} `{}`: {old} -> {} (recount {}, seed {seed})",
        m.row, m.col, fuzzer.compiled[m.table].column_names[m.col], m.new, m.recount
    );
    fn tally<'a>(r: &'a mut Report, table: &str) -> &'a mut Tally {
        r.tally.entry(table.to_string()).or_default()
    }
    tally(report, table).mutations += 1;
    let cells: usize = w.traces.iter().map(|t| t.values.len()).sum();
    if cells > val.max_cells {
        budget[0] = usize::MAX;
        budget[1] = usize::MAX;
    }
    let full = |w: &Witness| fuzzer.full_check(w, public);
    match verdict {
        Verdict::Accepted { changed, live } => {
            if budget[0] < val.accepted {
                budget[0] += 1;
                report.full_checks += 1;
                if let Err(err) = full(w) {
                    panic!("fast verdict accepts, the full checker rejects: {cell}: {err}");
                }
            }
            match fuzzer.classify(m, &changed, &live) {
                Ok(why) => {
                    tally(report, table).free += 1;
                    *report.free.entry(why).or_default() += 1;
                }
                Err(why) => {
                    eprintln!("ACCEPTED: {cell}: {why}");
                    report.bugs.push(format!("{cell}: {why}"));
                }
            }
        }
        Verdict::Rejected(why) => {
            tally(report, table).rejected += 1;
            let sample = val.rejected_every > 0
                && report.tally.values().map(|t| t.rejected).sum::<usize>() % val.rejected_every
                    == 0
                && budget[1] < val.rejected;
            if sample {
                budget[1] += 1;
                report.full_checks += 1;
                if full(w).is_ok() {
                    panic!("fast verdict rejects ({why}), the full checker accepts: {cell}");
                }
            }
            if label.as_str() != "fibonacci" && !*zk && i % 50 == 49 && budget[2] < val.proofs {
                // The full path: prover with the checker off, then the verifier must reject.
                budget[2] += 1;
                report.proofs += 1;
                let cfg = config(false, false);
                if let Ok((st, proof)) = prove_witness(&fuzzer.program, w.clone(), &cfg) {
                    assert!(
                        verify(&fuzzer.program, &st, &proof, &cfg, 0).is_err(),
                        "verifier accepted {cell}"
                    );
                }
            }
        }
    }
    // The emulated recount against the machine's own (BITWISE), on a sample.
    let recounted: Vec<usize> = undo[1..].iter().map(|u| u.0).collect();
    if m.recount
        && !recounted.is_empty()
        && recounted.iter().all(|&t| t == table_id::BITWISE)
        && report.recount_checks < 4
        && cells <= val.max_cells
    {
        report.recount_checks += 1;
        let mut real = w.clone();
        for &(t, r, c, v) in undo[1..].iter().rev() {
            real.traces[t].row_mut(r)[c] = v;
        }
        recount_lookups(&fuzzer.program, &mut real).unwrap();
        assert!(
            real.traces[table_id::BITWISE] == w.traces[table_id::BITWISE],
            "emulated recount differs from recount_lookups: {cell}"
        );
    }
    for &(t, r, c, v) in undo.iter().rev() {
        w.traces[t].row_mut(r)[c] = v;
    }
}

/// Draws one mutation of a real row of `target` (of table `only` if given).
fn draw(rng: &mut Rng, target: &Target, only: Option<usize>) -> Mutation {
    let reals: Vec<(usize, usize)> = target
        .reals
        .iter()
        .copied()
        .filter(|&(t, _)| only.is_none_or(|o| o == t))
        .collect();
    let (table, n) = reals[rng.below(reals.len() as u64) as usize];
    let width = target.witness.traces[table].width;
    let row = rng.below(n as u64) as usize;
    let col = rng.below(width as u64) as usize;
    let old = target.witness.traces[table].row(row)[col].as_canonical_u64();
    let new = new_value(rng, old);
    let recount = table != table_id::BITWISE && rng.below(2) == 0;
    Mutation {
        table,
        row,
        col,
        new,
        recount,
    }
}

/// How a campaign spreads its mutations over the targets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// `total / targets` each, target after target (as the first version of this test drew them, so old
    /// seeds replay).
    Sequential,
    /// A random target for every mutation (a run cut short by its deadline still covers every target).
    Interleaved,
}

/// `total` mutations over `targets`, optionally only of table `only`; stops after `deadline`.
fn campaign(
    targets: &mut [Target],
    seed: u64,
    total: usize,
    only: Option<usize>,
    order: Order,
    val: Validation,
    deadline: Option<Instant>,
) -> Report {
    let mut rng = Rng(seed);
    let mut report = Report::default();
    let n_targets = targets.len();
    let mut budgets = vec![[0usize; 3]; n_targets];
    let past = |d: Option<Instant>| d.is_some_and(|d| Instant::now() > d);
    if order == Order::Interleaved {
        for i in 0..total {
            if past(deadline) {
                break;
            }
            let gi = rng.below(n_targets as u64) as usize;
            let m = draw(&mut rng, &targets[gi], only);
            mutate_once(
                &mut targets[gi],
                m,
                i,
                seed,
                val,
                &mut budgets[gi],
                &mut report,
            );
        }
        return report;
    }
    let mut proofs = 0;
    for (gi, target) in targets.iter_mut().enumerate() {
        let n_iter = total / n_targets + usize::from(gi < total % n_targets);
        let budget = &mut budgets[gi];
        budget[2] = proofs;
        for i in 0..n_iter {
            if past(deadline) {
                return report;
            }
            let m = draw(&mut rng, target, only);
            mutate_once(target, m, i, seed, val, budget, &mut report);
        }
        proofs = budget[2];
    }
    report
}

fn ci_targets(compiled: impl Fn(&Program) -> Option<Vec<CompiledAir>>) -> Vec<Target> {
    ci_guests()
        .iter()
        .map(|(name, p, input)| Target::with_airs(name, p, input, false, compiled(p)))
        .collect()
}

/// Every column of every table is read by some constraint or interaction (a column read by nothing is a
/// missing constraint; the fuzzer would report it only when it happens to hit it).
fn assert_no_dead_columns(f: &Fuzzer) {
    for (t, a) in f.compiled.iter().enumerate() {
        for (c, r) in f.readers[t].iter().enumerate() {
            assert!(
                !r.constraints.is_empty() || !r.interactions.is_empty(),
                "{} col {c} `{}` is read by no constraint and no interaction",
                a.name,
                a.column_names[c]
            );
        }
    }
}

#[test]
fn mutated_witness_cells_are_rejected() {
    let total = env_u64("ZKRV_FUZZ_ITERS").map_or(200, |v| v as usize);
    let fresh = fresh_seed();
    let t0 = Instant::now();
    let mut targets = ci_targets(|_| None);
    assert_no_dead_columns(&targets[0].fuzzer);
    for t in &targets {
        eprintln!("{}", t.describe());
        assert_eq!(
            t.fuzzer
                .compiled
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>(),
            TABLE_NAMES
        );
    }
    eprintln!("fuzz_witness: guests ready in {:.1?}", t0.elapsed());
    let mut bugs = Vec::new();
    let seeds = REGRESSION_SEEDS
        .iter()
        .map(|&(s, why)| (s, Some(why)))
        .chain([(fresh, None)]);
    for (seed, expect) in seeds {
        let kind = if expect.is_some() {
            "regression"
        } else {
            "fresh"
        };
        let t1 = Instant::now();
        let val = Validation {
            accepted: usize::MAX,
            rejected_every: 25,
            rejected: 4,
            proofs: if kind == "fresh" { 2 } else { 0 },
            max_cells: usize::MAX,
        };
        let n = if expect.is_some() {
            REGRESSION_ITERS
        } else {
            total
        };
        let report = campaign(&mut targets, seed, n, None, Order::Sequential, val, None);
        report.print(&format!("{kind} seed {seed}"), t1.elapsed());
        if let Some(why) = expect {
            assert!(
                report.free.keys().any(|k| k.starts_with(why)),
                "seed {seed} no longer reports `{why}` free: {:?}",
                report.free
            );
        }
        bugs.extend(report.bugs);
    }
    for t in &targets {
        t.fuzzer.full_check(&t.witness, &t.public).unwrap();
    }
    eprintln!("fuzz_witness: total {:.1?}", t0.elapsed());
    assert!(
        bugs.is_empty(),
        "{} accepted mutations that are not free: {}",
        bugs.len(),
        bugs.join("; ")
    );
}

/// A deliberately weakened DVRM (without `abs r: beta = 1 -> x_lo != 0`, the only constraint on `inv_r`)
/// is caught: the fuzzer finds the column that nothing reads any more. The honest AIR, same seed: no bug.
#[test]
fn weakened_constraint_is_caught() {
    let dvrm = TABLE_NAMES.iter().position(|&n| n == "DVRM").unwrap();
    let weaken = |p: &Program| {
        let mut airs = WitnessChecker::new(p, &config(false, true))
            .unwrap()
            .compiled()
            .to_vec();
        let a = &mut airs[dvrm];
        let k = a
            .constraints
            .iter()
            .position(|c| c.name == "abs r: beta = 1 -> x_lo != 0")
            .unwrap();
        a.constraints.remove(k);
        Some(airs)
    };
    let val = Validation {
        accepted: usize::MAX,
        rejected_every: 0,
        rejected: 0,
        proofs: 0,
        max_cells: usize::MAX,
    };
    let alu = || ("alu", alu_program());
    let (name, p) = alu();
    let mut weak = vec![Target::with_airs(name, &p, &[], false, weaken(&p))];
    let report = campaign(&mut weak, 18, 100, Some(dvrm), Order::Sequential, val, None);
    report.print("weakened DVRM", Duration::ZERO);
    assert!(
        report.bugs.iter().any(|b| b.contains("DVRM[")
            && b.contains("`inv_r`")
            && b.contains("read by no constraint")),
        "weakened constraint not caught: {:?}",
        report.bugs
    );
    let mut honest = vec![Target::new(name, &p, &[], false)];
    let report = campaign(
        &mut honest,
        18,
        100,
        Some(dvrm),
        Order::Sequential,
        val,
        None,
    );
    assert!(report.bugs.is_empty(), "{:?}", report.bugs);
    assert!(report.total().mutations == 100);
}

/// The longer run (outside CI): every guest in guests/bin and the ALU program, non-zk and zk heights.
#[test]
#[ignore]
fn long_run_every_guest() {
    let total = env_u64("ZKRV_FUZZ_ITERS").map_or(100_000, |v| v as usize);
    let deadline = env_u64("ZKRV_FUZZ_SECS").map(|s| Instant::now() + Duration::from_secs(s));
    let seed = fresh_seed();
    let t0 = Instant::now();
    let mut names: Vec<String> = std::fs::read_dir(format!("{}/bin", guests_dir()))
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "elf").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    let mut targets = Vec::new();
    for zk in [false, true] {
        for name in &names {
            let (p, input) = guest(name);
            let t = Target::new(
                &format!("{name}{}", if zk { "/zk" } else { "" }),
                &p,
                &input,
                zk,
            );
            eprintln!("{} ({:.1?})", t.describe(), t0.elapsed());
            targets.push(t);
        }
        let t = Target::new(if zk { "alu/zk" } else { "alu" }, &alu_program(), &[], zk);
        targets.push(t);
    }
    let prepared = t0.elapsed();
    eprintln!(
        "fuzz_witness long run: {} targets ready in {prepared:.1?}",
        targets.len()
    );
    let val = Validation {
        accepted: 4,
        rejected_every: 500,
        rejected: 2,
        proofs: 0,
        max_cells: 1 << 22,
    };
    let t1 = Instant::now();
    let report = campaign(
        &mut targets,
        seed,
        total,
        None,
        Order::Interleaved,
        val,
        deadline,
    );
    let elapsed = t1.elapsed();
    report.print(&format!("long run seed {seed}"), elapsed);
    let t = report.total();
    eprintln!(
        "fuzz_witness long run: {} mutations in {elapsed:.1?} ({:.0}/s) after {prepared:.1?} of preparation",
        t.mutations,
        t.mutations as f64 / elapsed.as_secs_f64()
    );
    assert!(report.bugs.is_empty(), "{:?}", report.bugs);
}
