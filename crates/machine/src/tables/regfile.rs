//! REGFILE (docs/tables.md §6.17): consumes the final token of every register cell (x0..x31 and the two
//! I/O cursors). The initial tokens are public interactions ([`crate::public_interactions`]).

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus;
use crate::cols::columns;
use crate::tables::decode::words;

/// REGFILE height: 64 rows (34 used), or the machine's minimum height if larger (zk mode).
pub const REGFILE_HEIGHT: usize = 64;

/// REGFILE row.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegfileCols<T> {
    pub reg: T,
    /// Final value, two words.
    pub fin: [T; 2],
    /// Timestamp of the last access (0 if never accessed).
    pub fin_ts: T,
    /// Boolean: this row consumes a token.
    pub is_real: T,
}
columns!(RegfileCols, NUM_REGFILE_COLS);

/// The REGFILE trace from the final register values and last-access timestamps (`regs.len() <= 64`):
/// `max(REGFILE_HEIGHT, min_height)` rows (a power of two), zero padding rows (`is_real = 0`).
pub fn regfile_trace(regs: &[(u64, u64)], min_height: usize) -> RowMajorMatrix {
    let height = REGFILE_HEIGHT.max(min_height).next_power_of_two();
    let mut values = vec![F::ZERO; height * NUM_REGFILE_COLS];
    for (r, &(val, ts)) in regs.iter().enumerate() {
        let row = RegfileCols::from_row_mut(
            &mut values[r * NUM_REGFILE_COLS..(r + 1) * NUM_REGFILE_COLS],
        );
        let [lo, hi] = words(val);
        *row = RegfileCols {
            reg: F::from_u64(r as u64),
            fin: [F::from_u64(lo), F::from_u64(hi)],
            fin_ts: F::from_u64(ts),
            is_real: F::ONE,
        };
    }
    RowMajorMatrix::new(values, NUM_REGFILE_COLS)
}

/// The REGFILE AIR. With `publish` (a segment that pauses, docs/continuations.md) every row also sends its
/// register's final value on `REG_FINAL`, which the verifier receives from the segment's public end state.
pub struct RegfileAir {
    pub publish: bool,
}

impl Air for RegfileAir {
    fn name(&self) -> &str {
        "REGFILE"
    }
    fn width(&self) -> usize {
        NUM_REGFILE_COLS
    }
    fn column_names(&self) -> Vec<String> {
        RegfileCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_REGFILE_COLS).map(|i| b.main(i)).collect();
        let r = RegfileCols::from_row(&m);
        b.assert_bool("is_real bool", r.is_real.clone());
        b.receive(
            bus::REG_TOKEN,
            vec![
                r.reg.clone(),
                r.fin_ts.clone(),
                r.fin[0].clone(),
                r.fin[1].clone(),
            ],
            r.is_real.clone(),
        );
        if self.publish {
            b.send(
                bus::REG_FINAL,
                vec![r.reg.clone(), r.fin[0].clone(), r.fin[1].clone()],
                r.is_real.clone(),
            );
        }
    }
}
