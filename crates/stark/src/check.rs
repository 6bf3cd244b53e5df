//! Debug checker: evaluates every constraint of every table on every trace row (no commitments, no
//! randomness) and balances every bus on concrete tuples, naming what fails.
//!
//! A constraint failure names the table, the row and the constraint (name and index) and its value; a bus
//! imbalance names the bus, the tuple, the net multiplicity and the first contributing (table, row) pairs.
//! The prover runs it first when `StarkConfig::debug_check` is set.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;

use crate::air::{CompiledAir, Direction};
use crate::field::{PrimeField64, F};
use crate::logup::{with_trace_rows, PublicInteraction};
use crate::matrix::RowMajorMatrix;

/// Where a bus contribution comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Row { table: String, row: usize },
    Public { index: usize },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Row { table, row } => write!(f, "{table}[{row}]"),
            Source::Public { index } => write!(f, "public[{index}]"),
        }
    }
}

/// One contribution to a tuple's net multiplicity (positive: send, negative: receive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contribution {
    pub source: Source,
    pub multiplicity: i128,
}

fn fmt_contribs(c: &[Contribution]) -> String {
    c.iter()
        .map(|c| format!("{}: {:+}", c.source, c.multiplicity))
        .collect::<Vec<_>>()
        .join(", ")
}

fn fmt_more(more: &[(u32, Vec<u64>, i128)]) -> String {
    if more.is_empty() {
        return String::new();
    }
    let items: Vec<String> = more
        .iter()
        .map(|(b, t, n)| format!("bus {b} {t:?}: {n:+}"))
        .collect();
    format!("; also {}", items.join(", "))
}

/// What the checker found.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CheckError {
    #[error("table `{table}`: {reason}")]
    Shape { table: String, reason: String },
    #[error("table `{table}` row {row}: constraint `{constraint}` (#{index}) evaluates to {value}, not 0")]
    Constraint {
        table: String,
        row: usize,
        constraint: String,
        index: usize,
        value: u64,
    },
    #[error("table `{table}` row {row} interaction {interaction} (bus {bus}): multiplicity {value} >= 2^{bits}")]
    Multiplicity {
        table: String,
        row: usize,
        interaction: usize,
        bus: u32,
        value: u64,
        bits: u32,
    },
    #[error("bus {bus} unbalanced: tuple {tuple:?} has net multiplicity {net} (sends positive) from [{}]{}; {unbalanced} unbalanced tuple(s) in all{}", fmt_contribs(.contributions), if *.truncated { ", ..." } else { "" }, fmt_more(.more))]
    BusImbalance {
        bus: u32,
        tuple: Vec<u64>,
        net: i128,
        /// The first contributions (at most [`MAX_REPORTED`]).
        contributions: Vec<Contribution>,
        truncated: bool,
        unbalanced: usize,
        /// Further unbalanced `(bus, tuple, net)` (at most [`MAX_REPORTED`]).
        more: Vec<(u32, Vec<u64>, i128)>,
    },
}

/// At most this many contributions are listed in a bus error.
pub const MAX_REPORTED: usize = 8;

type TupleMap = BTreeMap<(u32, Vec<u64>), (i128, Vec<Contribution>, bool)>;

fn add_contribution(map: &mut TupleMap, bus: u32, tuple: Vec<u64>, m: i128, source: Source) {
    let e = map.entry((bus, tuple)).or_insert((0, Vec::new(), false));
    e.0 += m;
    if e.1.len() < MAX_REPORTED {
        e.1.push(Contribution {
            source,
            multiplicity: m,
        });
    } else {
        e.2 = true;
    }
}

/// Check all tables: shapes, every constraint on every row, multiplicity bounds, then bus balance (with the
/// public interactions). `traces[t]` is the `n_t x width_t` natural-order trace of table `t`;
/// `preprocessed[t]` its preprocessed trace (`None` iff the preprocessed width is 0); a `0 x width_t` trace of
/// a table that `may_be_absent` is an absent table (docs/stark.md §10: checked as nothing). The error is the
/// first finding of [`violations`].
pub fn check_traces<M: Borrow<RowMajorMatrix>>(
    airs: &[CompiledAir],
    traces: &[M],
    preprocessed: &[Option<RowMajorMatrix>],
    public: &[PublicInteraction],
    log_max_multiplicity: u32,
) -> Result<(), CheckError> {
    match violations(airs, traces, preprocessed, public, log_max_multiplicity)?
        .into_iter()
        .next()
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Everything [`check_traces`] can find, not only the first: per table, in row order, every failing
/// constraint (each constraint reported once, at its first failing row) and every interaction whose
/// multiplicity is out of range (once per interaction), then one [`CheckError::BusImbalance`] listing the
/// unbalanced buses. Empty iff the traces are a valid witness. A shape error is the `Err`. For tests that
/// show a crafted witness breaks exactly the constraints they target.
pub fn violations<M: Borrow<RowMajorMatrix>>(
    airs: &[CompiledAir],
    traces: &[M],
    preprocessed: &[Option<RowMajorMatrix>],
    public: &[PublicInteraction],
    log_max_multiplicity: u32,
) -> Result<Vec<CheckError>, CheckError> {
    let mut found = Vec::new();
    let mut tuples: TupleMap = BTreeMap::new();
    for (t, air) in airs.iter().enumerate() {
        let shape = |reason: String| CheckError::Shape {
            table: air.name.clone(),
            reason,
        };
        let main: &RowMajorMatrix = traces
            .get(t)
            .ok_or_else(|| shape("no trace given".into()))?
            .borrow();
        let n = main.height();
        if n == 0 && air.may_be_absent && main.width == air.width {
            // An absent table (docs/stark.md §10): no rows, no constraint, no interaction.
            continue;
        }
        if main.width != air.width || !n.is_power_of_two() {
            return Err(shape(format!(
                "trace is {n} x {}, expected a power-of-two height and width {}",
                main.width, air.width
            )));
        }
        let prep = preprocessed.get(t).and_then(|p| p.as_ref());
        match prep {
            None if air.preprocessed_width > 0 => {
                return Err(shape("missing preprocessed trace".into()))
            }
            Some(p) if p.width != air.preprocessed_width || p.height() != n => {
                return Err(shape(format!(
                    "preprocessed trace is {} x {}, expected {n} x {}",
                    p.height(),
                    p.width,
                    air.preprocessed_width
                )))
            }
            _ => {}
        }
        // Per row: the failing constraints, and the interaction tuples.
        type RowResult = (Vec<(usize, u64)>, Vec<(Vec<u64>, u64)>);
        let rows: Vec<RowResult> =
            with_trace_rows(main, prep, Vec::new, |nodes: &mut Vec<F>, _, row| {
                air.circuit.eval(row, &air.public_values, nodes);
                let fails = air
                    .constraints
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| {
                        let v = nodes[c.node as usize].as_canonical_u64();
                        (v != 0).then_some((i, v))
                    })
                    .collect();
                let its = air
                    .interactions
                    .iter()
                    .map(|it| {
                        (
                            it.values
                                .iter()
                                .map(|&v| nodes[v as usize].as_canonical_u64())
                                .collect(),
                            nodes[it.multiplicity as usize].as_canonical_u64(),
                        )
                    })
                    .collect();
                (fails, its)
            });
        let mut constraint_seen = vec![false; air.constraints.len()];
        let mut interaction_seen = vec![false; air.interactions.len()];
        for (row, (fails, its)) in rows.into_iter().enumerate() {
            for (index, value) in fails {
                if !std::mem::replace(&mut constraint_seen[index], true) {
                    found.push(CheckError::Constraint {
                        table: air.name.clone(),
                        row,
                        constraint: air.constraints[index].name.clone(),
                        index,
                        value,
                    });
                }
            }
            for (k, (tuple, m)) in its.into_iter().enumerate() {
                let it = &air.interactions[k];
                if m >> log_max_multiplicity != 0 {
                    if !std::mem::replace(&mut interaction_seen[k], true) {
                        found.push(CheckError::Multiplicity {
                            table: air.name.clone(),
                            row,
                            interaction: k,
                            bus: it.bus,
                            value: m,
                            bits: log_max_multiplicity,
                        });
                    }
                    continue;
                }
                if m == 0 {
                    continue;
                }
                let signed = match it.direction {
                    Direction::Send => m as i128,
                    Direction::Receive => -(m as i128),
                };
                let source = Source::Row {
                    table: air.name.clone(),
                    row,
                };
                add_contribution(&mut tuples, it.bus, tuple, signed, source);
            }
        }
    }
    for (index, p) in public.iter().enumerate() {
        let m = p.multiplicity.as_canonical_u64() as i128;
        let signed = match p.direction {
            Direction::Send => m,
            Direction::Receive => -m,
        };
        let tuple = p.values.iter().map(|v| v.as_canonical_u64()).collect();
        add_contribution(&mut tuples, p.bus, tuple, signed, Source::Public { index });
    }
    let mut bad = tuples.into_iter().filter(|(_, e)| e.0 != 0);
    if let Some(((bus, tuple), (net, contributions, truncated))) = bad.next() {
        let rest: Vec<(u32, Vec<u64>, i128)> = bad.map(|((b, t), e)| (b, t, e.0)).collect();
        found.push(CheckError::BusImbalance {
            bus,
            tuple,
            net,
            contributions,
            truncated,
            unbalanced: 1 + rest.len(),
            more: rest.into_iter().take(MAX_REPORTED).collect(),
        });
    }
    Ok(found)
}
