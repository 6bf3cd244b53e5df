//! BYTEWISE (docs/tables.md §6.15): 64-bit AND/OR/XOR (and ANDI/ORI/XORI) through eight BYTE lookups,
//! deduplicated: one row per distinct (op, a, b), the count in `m`.

use std::collections::BTreeMap;

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, alu};
use crate::cols::columns;
use crate::tables::bitwise::{LookupKind, Lookups};
use crate::tables::cpu::c;
use crate::tables::memw_a::pack4;

/// BYTEWISE row (28 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BytewiseCols<T> {
    /// Operand and result bytes, little-endian.
    pub a: [T; 8],
    pub b: [T; 8],
    pub r: [T; 8],
    /// One-hot operation.
    pub is_and: T,
    pub is_or: T,
    pub is_xor: T,
    /// Number of ALU requests this row answers (free counter).
    pub m: T,
}
columns!(BytewiseCols, NUM_BYTEWISE_COLS);

/// The BYTEWISE AIR.
pub struct BytewiseAir;

impl Air for BytewiseAir {
    fn name(&self) -> &str {
        "BYTEWISE"
    }
    fn width(&self) -> usize {
        NUM_BYTEWISE_COLS
    }
    fn column_names(&self) -> Vec<String> {
        BytewiseCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_BYTEWISE_COLS).map(|i| b.main(i)).collect();
        let l = BytewiseCols::from_row(&m);
        for f in [&l.is_and, &l.is_or, &l.is_xor] {
            b.assert_bool("op flag bool", f.clone());
        }
        b.assert_eq(
            "op one-hot",
            l.is_and.clone() + &l.is_or + &l.is_xor,
            Expr::one(),
        );
        // BYTE op codes: AND 0, OR 1, XOR 2; ALU codes: AND, AND + 1, AND + 2.
        let byte_op = l.is_or.clone() + l.is_xor.clone() * c(2);
        for k in 0..8 {
            b.send(
                bus::BYTE,
                vec![
                    byte_op.clone(),
                    l.a[k].clone(),
                    l.b[k].clone(),
                    l.r[k].clone(),
                ],
                Expr::one(),
            );
        }
        b.receive(
            bus::ALU,
            vec![
                byte_op + c(alu::AND),
                pack4(&l.a[..4]),
                pack4(&l.a[4..]),
                pack4(&l.b[..4]),
                pack4(&l.b[4..]),
                pack4(&l.r[..4]),
                pack4(&l.r[4..]),
            ],
            l.m.clone(),
        );
    }
}

/// Height of the BYTEWISE table for `len` requests: the next power of two `>= max(len, min_height)`.
pub fn bytewise_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The BYTEWISE trace from the requests `(alu op, a, b) -> count` (`n x 28`; padding rows are AND of
/// zeros with m = 0, their lookups counted too).
pub fn bytewise_trace(
    requests: &BTreeMap<(u64, u64, u64), u64>,
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = bytewise_height(requests.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_BYTEWISE_COLS];
    let rows = requests
        .iter()
        .map(|(&(op, a, b), &m)| (op, a, b, m))
        .chain(std::iter::repeat((alu::AND, 0, 0, 0)));
    for (chunk, (op, a, b, m)) in values.chunks_mut(NUM_BYTEWISE_COLS).zip(rows) {
        let (r, kind) = match op {
            alu::AND => (a & b, LookupKind::And),
            alu::OR => (a | b, LookupKind::Or),
            _ => (a ^ b, LookupKind::Xor),
        };
        let (ab, bb, rb) = (a.to_le_bytes(), b.to_le_bytes(), r.to_le_bytes());
        for k in 0..8 {
            lookups.add(kind, ((ab[k] as u64) << 8) | bb[k] as u64);
        }
        let row = BytewiseCols::from_row_mut(chunk);
        *row = BytewiseCols {
            a: ab.map(|x| F::from_u64(x as u64)),
            b: bb.map(|x| F::from_u64(x as u64)),
            r: rb.map(|x| F::from_u64(x as u64)),
            is_and: F::from_bool(op == alu::AND),
            is_or: F::from_bool(op == alu::OR),
            is_xor: F::from_bool(op == alu::XOR),
            m: F::from_u64(m),
        };
    }
    RowMajorMatrix::new(values, NUM_BYTEWISE_COLS)
}
