//! PAGE (docs/tables.md §6.17): consumes the final token of every 8-byte cell of every touched 4 KiB page.
//! The initial tokens are public interactions computed by the verifier from the ELF and the page list
//! ([`crate::memory_init_interactions`]).

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;

/// Cells per 4 KiB page.
pub const CELLS_PER_PAGE: usize = 512;

/// PAGE row (5 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageCols<T> {
    pub cell: T,
    /// Final cell value, two words of 4 bytes (little-endian).
    pub fin: [T; 2],
    /// Timestamp of the last access (0 if never accessed).
    pub fin_ts: T,
    pub is_real: T,
}
columns!(PageCols, NUM_PAGE_COLS);

/// The PAGE AIR. With `publish` (a segment that pauses, docs/continuations.md) every row also sends its
/// cell's final value on `MEM_FINAL`, which the verifier receives from the segment's public end memory.
pub struct PageAir {
    pub publish: bool,
}

impl Air for PageAir {
    fn name(&self) -> &str {
        "PAGE"
    }
    fn width(&self) -> usize {
        NUM_PAGE_COLS
    }
    fn column_names(&self) -> Vec<String> {
        PageCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_PAGE_COLS).map(|i| b.main(i)).collect();
        let l = PageCols::from_row(&m);
        b.assert_bool("is_real bool", l.is_real.clone());
        b.receive(
            bus::MEM_TOKEN,
            vec![
                l.cell.clone(),
                l.fin_ts.clone(),
                l.fin[0].clone(),
                l.fin[1].clone(),
            ],
            l.is_real.clone(),
        );
        if self.publish {
            b.send(
                bus::MEM_FINAL,
                vec![l.cell.clone(), l.fin[0].clone(), l.fin[1].clone()],
                l.is_real.clone(),
            );
        }
    }
}

/// Height of the PAGE table for `len` cells: the next power of two `>= max(len, min_height)`.
pub fn page_height(len: usize, min_height: usize) -> usize {
    len.next_power_of_two().max(min_height)
}

/// The PAGE trace from `(cell, final value, final ts)` rows (`n x 5`, n = [`page_height`]; padding rows are
/// zero, `is_real = 0`).
pub fn page_trace(cells: &[(u64, u64, u64)], min_height: usize) -> RowMajorMatrix {
    let n = page_height(cells.len(), min_height);
    let mut values = vec![F::ZERO; n * NUM_PAGE_COLS];
    for (chunk, &(cell, v, ts)) in values.chunks_mut(NUM_PAGE_COLS).zip(cells) {
        *PageCols::from_row_mut(chunk) = PageCols {
            cell: F::from_u64(cell),
            fin: [F::from_u64(v & 0xffff_ffff), F::from_u64(v >> 32)],
            fin_ts: F::from_u64(ts),
            is_real: F::ONE,
        };
    }
    RowMajorMatrix::new(values, NUM_PAGE_COLS)
}
