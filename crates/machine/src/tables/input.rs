//! INPUT (docs/tables.md §6.18): the private input stream, one row per byte index, then one end-of-input
//! row (byte = 256), then padding. Main trace only: nothing of it is public (its height, a power of two,
//! bounds the input length). `read` rows of SYSIO look up `INPUT[index, byte]`; the SYSCALL row of a short
//! read looks up `INPUT[cursor + count, 256]`.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::bitwise::Lookups;
use crate::tables::cpu::c;
use crate::tables::sysio::INPUT_EOF;

/// INPUT row (4 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputCols<T> {
    /// Row index = byte index (0, 1, 2, ...).
    pub index: T,
    /// The byte, or 256 on the end-of-input row.
    pub byte: T,
    pub is_eof: T,
    /// Number of lookups of this row (free counter).
    pub m: T,
}
columns!(InputCols, NUM_INPUT_COLS);

/// Where the INPUT table of a segment may hold the end-of-input row (docs/continuations.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EofRule {
    /// Anywhere (a whole run, or the last segment).
    Any,
    /// Nowhere: a segment that pauses before the guest saw the end of the input.
    None,
    /// Only at this index: a segment that pauses after the guest saw the end of the input, which is
    /// its final input cursor.
    At(u64),
}

/// Index of the INPUT table's public value [`InputAir::first`] ([`InputAir::public_values`]).
pub const INPUT_PUBLIC_FIRST: usize = 0;
/// Index of the INPUT table's public value `at` of [`EofRule::At`] (0 for the other rules, where no
/// constraint reads it).
pub const INPUT_PUBLIC_EOF_AT: usize = 1;

/// The INPUT AIR. Each index has exactly one row (`index' = index + 1` from `first`), so the stream is a
/// function of the index; a prover may put the end marker anywhere `eof` allows: the input is its own
/// choice (a witness). A whole run has `first = 0`, `eof = Any`; a segment starts at its input cursor.
/// `first` and the index of [`EofRule::At`] are public values of the AIR (indices `INPUT_PUBLIC_*`); the
/// circuit depends only on the kind of `eof` (three shapes).
pub struct InputAir {
    pub first: u64,
    pub eof: EofRule,
}

impl Air for InputAir {
    fn name(&self) -> &str {
        "INPUT"
    }
    fn width(&self) -> usize {
        NUM_INPUT_COLS
    }
    fn column_names(&self) -> Vec<String> {
        InputCols::<usize>::column_names()
    }
    /// `[first, at of EofRule::At or 0]` (indices `INPUT_PUBLIC_*`).
    fn public_values(&self) -> Vec<F> {
        let at = match self.eof {
            EofRule::At(at) => at,
            EofRule::Any | EofRule::None => 0,
        };
        let mut v = vec![F::ZERO; 2];
        v[INPUT_PUBLIC_FIRST] = F::from_u64(self.first);
        v[INPUT_PUBLIC_EOF_AT] = F::from_u64(at);
        v
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_INPUT_COLS).map(|i| b.main(i)).collect();
        let n: Vec<Expr> = (0..NUM_INPUT_COLS).map(|i| b.main_next(i)).collect();
        let (l, n) = (InputCols::from_row(&m), InputCols::from_row(&n));
        b.assert_zero(
            "first index",
            b.is_first_row() * (l.index.clone() - b.public(INPUT_PUBLIC_FIRST)),
        );
        b.assert_zero(
            "consecutive",
            b.is_transition() * (n.index.clone() - &l.index - Expr::one()),
        );
        b.assert_bool("eof bool", l.is_eof.clone());
        match self.eof {
            EofRule::Any => {}
            EofRule::None => b.assert_zero("no end of input", l.is_eof.clone()),
            EofRule::At(_) => b.assert_zero(
                "end of input at the final cursor",
                l.is_eof.clone() * (l.index.clone() - b.public(INPUT_PUBLIC_EOF_AT)),
            ),
        }
        b.assert_zero(
            "eof byte",
            l.is_eof.clone() * (l.byte.clone() - c(INPUT_EOF)),
        );
        // A data byte is a byte (the end row looks up 0).
        b.send(
            bus::BYTE,
            vec![
                c(bus::BYTE_PAIR),
                l.byte.clone() - l.is_eof.clone() * c(INPUT_EOF),
                Expr::zero(),
                Expr::zero(),
            ],
            Expr::one(),
        );
        b.receive(
            bus::INPUT,
            vec![l.index.clone(), l.byte.clone()],
            l.m.clone(),
        );
    }
}

/// Height of the INPUT table for an input of `len` bytes: the next power of two `>= max(len + 1, min_height)`
/// (the bytes and the end-of-input row).
pub fn input_height(len: usize, min_height: usize) -> usize {
    (len + 1).next_power_of_two().max(min_height)
}

/// The INPUT trace (`n x 4`, n = next power of two > input length): `uses[i]` is how many times index i was
/// looked up (the end row is index `input.len()`).
pub fn input_trace(
    input: &[u8],
    uses: &[u64],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    input_trace_at(input, 0, true, uses, min_height, lookups)
}

/// [`input_trace`] of a segment: `input` holds the bytes at indices `first..first + input.len()`, `uses[i]`
/// counts the lookups of index `first + i`, and the end row (index `first + input.len()`) is there only
/// with `eof_row` (a padding row with byte 0 takes its place otherwise).
pub fn input_trace_at(
    input: &[u8],
    first: u64,
    eof_row: bool,
    uses: &[u64],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = input_height(input.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_INPUT_COLS];
    for (i, chunk) in values.chunks_mut(NUM_INPUT_COLS).enumerate() {
        let row = InputCols::from_row_mut(chunk);
        row.index = F::from_u64(first + i as u64);
        row.m = F::from_u64(uses.get(i).copied().unwrap_or(0));
        use std::cmp::Ordering;
        let kind = match i.cmp(&input.len()) {
            Ordering::Equal if !eof_row => Ordering::Greater,
            k => k,
        };
        match kind {
            std::cmp::Ordering::Less => {
                row.byte = F::from_u64(input[i] as u64);
                lookups.pair(input[i] as u64, 0);
            }
            std::cmp::Ordering::Equal => {
                row.byte = F::from_u64(INPUT_EOF);
                row.is_eof = F::ONE;
                lookups.pair(0, 0);
            }
            std::cmp::Ordering::Greater => lookups.pair(0, 0),
        }
    }
    RowMajorMatrix::new(values, NUM_INPUT_COLS)
}
