//! Syscalls other than exit (docs/tables.md §6.18): SYSCALL (one row per `read`/`write` ECALL: receives the
//! CPU's ECALL, reads a1/a2 and the I/O cursor, starts and closes the byte chain) and SYSIO (one row per
//! 8-byte cell transferred: a `write` to fd 1 reads the cell and sends its bytes to the public OUTPUT bus,
//! a `read` from fd 0 writes bytes taken from the private INPUT bus into the cell; positions are
//! consecutive from the cursor). fd 2 (debug text) is not proven: its SYSCALL row only returns len.

use zkrv_stark::air::{Air, AirBuilder};
use zkrv_stark::field::{PrimeCharacteristicRing, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::symbolic::Expr;

use crate::bus::{self, REG_OUTPUT_CURSOR};
use crate::cols::columns;
use crate::tables::bitwise::Lookups;
use crate::tables::cpu::{c, lt32, reg_access, RegReadCols};
use crate::tables::memw_a::pack4;

/// Linux riscv64 `write`.
pub const SYS_WRITE: u64 = 64;
/// Linux riscv64 `read`.
pub const SYS_READ: u64 = 63;
/// The INPUT byte value that marks the end of the private input.
pub const INPUT_EOF: u64 = 256;

/// SYSCALL row (18 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyscallCols<T> {
    /// `4 clk + 1` of the ECALL.
    pub ts: T,
    /// write to fd 1 (proven output) / write to fd 2 (debug, not proven) / read from fd 0.
    pub is_out: T,
    pub is_dbg: T,
    pub is_in: T,
    /// Bytes transferred (the return value): len for write, min(len, input left) for read.
    pub count: T,
    /// read: count < len, so the input ended (proven by an end-of-input INPUT lookup).
    pub short: T,
    /// LT32 witness of `count < len` when short.
    pub short_d0: T,
    /// a1 (buffer address) and a2 (length), two words each; high words are 0.
    pub buf: [T; 2],
    pub len: [T; 2],
    /// Reads of a1 and a2 at `ts`.
    pub a1: RegReadCols<T>,
    pub a2: RegReadCols<T>,
    /// I/O cursor (register 33 for output, 32 for input) before the call; its token's timestamp and the
    /// LT32 witness (the cursor is written at `ts + 2`).
    pub cursor: T,
    pub cursor_old_ts: T,
    pub cursor_d0: T,
}
columns!(SyscallCols, NUM_SYSCALL_COLS);

/// SYSIO row (40 columns).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SysioCols<T> {
    pub ts: T,
    pub cell: T,
    /// One-hot offset of the first transferred byte in the cell.
    pub sel: [T; 8],
    /// Bytes of the cell that are transferred (a contiguous run starting at the offset).
    pub mask: [T; 8],
    /// The cell's bytes before and after (write to fd 1: unchanged; read: masked bytes from the input).
    pub old: [T; 8],
    pub new: [T; 8],
    /// Stream position of the first transferred byte, and the bytes left in the call before this row.
    pub pos: T,
    pub rem: T,
    /// 1 for a read (input -> memory), 0 for a write (memory -> output).
    pub is_read: T,
    pub old_ts: T,
    pub d0: T,
    pub mu: T,
}
columns!(SysioCols, NUM_SYSIO_COLS);

/// The SYSCALL AIR.
pub struct SyscallAir;

impl Air for SyscallAir {
    fn name(&self) -> &str {
        "SYSCALL"
    }
    fn width(&self) -> usize {
        NUM_SYSCALL_COLS
    }
    fn column_names(&self) -> Vec<String> {
        SyscallCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_SYSCALL_COLS).map(|i| b.main(i)).collect();
        let l = SyscallCols::from_row(&m);
        b.assert_bool("is_out bool", l.is_out.clone());
        b.assert_bool("is_dbg bool", l.is_dbg.clone());
        b.assert_bool("is_in bool", l.is_in.clone());
        b.assert_bool("short bool", l.short.clone());
        b.assert_zero("one kind a", l.is_out.clone() * &l.is_dbg);
        b.assert_zero("one kind b", l.is_out.clone() * &l.is_in);
        b.assert_zero("one kind c", l.is_dbg.clone() * &l.is_in);
        b.assert_zero("buf below 2^32", l.buf[1].clone());
        b.assert_zero("len below 2^32", l.len[1].clone());
        let write = l.is_out.clone() + &l.is_dbg;
        let mu = write.clone() + &l.is_in;
        // write returns len; read returns len unless the input ran out (short).
        b.assert_zero("write count", write * (l.count.clone() - &l.len[0]));
        b.assert_zero(
            "short only for read",
            l.short.clone() * (Expr::one() - &l.is_in),
        );
        b.assert_zero(
            "full read",
            l.is_in.clone() * (Expr::one() - &l.short) * (l.len[0].clone() - &l.count),
        );
        lt32(b, &l.count, &l.len[0], &l.short_d0, &l.short);
        b.send(
            bus::INPUT,
            vec![l.cursor.clone() + &l.count, c(INPUT_EOF)],
            l.short.clone(),
        );
        let fd = l.is_out.clone() + l.is_dbg.clone() * c(2);
        b.receive(
            bus::ECALL,
            vec![
                l.ts.clone(),
                c(SYS_WRITE) - &l.is_in,
                Expr::zero(),
                fd,
                Expr::zero(),
                l.count.clone(),
                Expr::zero(),
            ],
            mu.clone(),
        );
        let (a1, a2) = (c(11), c(12));
        reg_access(
            b,
            &a1,
            &l.ts,
            &l.a1.old_ts,
            &l.a1.d0,
            [&l.buf[0], &l.buf[1]],
            [&l.buf[0], &l.buf[1]],
            &mu,
        );
        reg_access(
            b,
            &a2,
            &l.ts,
            &l.a2.old_ts,
            &l.a2.d0,
            [&l.len[0], &l.len[1]],
            [&l.len[0], &l.len[1]],
            &mu,
        );
        let chained = l.is_out.clone() + &l.is_in;
        let end = l.cursor.clone() + &l.count;
        let zero = Expr::zero();
        reg_access(
            b,
            &(c(REG_OUTPUT_CURSOR) - &l.is_in),
            &(l.ts.clone() + c(2)),
            &l.cursor_old_ts,
            &l.cursor_d0,
            [&l.cursor, &zero],
            [&end, &zero],
            &chained,
        );
        b.send(
            bus::IO_CHAIN,
            vec![
                l.ts.clone(),
                l.buf[0].clone(),
                l.cursor.clone(),
                l.count.clone(),
                l.is_in.clone(),
            ],
            chained.clone(),
        );
        b.receive(
            bus::IO_CHAIN,
            vec![
                l.ts.clone(),
                l.buf[0].clone() + &l.count,
                end,
                Expr::zero(),
                l.is_in.clone(),
            ],
            chained,
        );
    }
}

/// The SYSIO AIR.
pub struct SysioAir;

impl Air for SysioAir {
    fn name(&self) -> &str {
        "SYSIO"
    }
    fn width(&self) -> usize {
        NUM_SYSIO_COLS
    }
    fn column_names(&self) -> Vec<String> {
        SysioCols::<usize>::column_names()
    }
    fn eval(&self, b: &mut AirBuilder) {
        let m: Vec<Expr> = (0..NUM_SYSIO_COLS).map(|i| b.main(i)).collect();
        let l = SysioCols::from_row(&m);
        let one = Expr::one;
        let sum = |v: &[Expr]| v.iter().fold(Expr::zero(), |a, x| a + x);
        for x in l.sel.iter().chain(&l.mask) {
            b.assert_bool("flag bool", x.clone());
        }
        b.assert_bool("mu bool", l.mu.clone());
        b.assert_bool("is_read bool", l.is_read.clone());
        b.assert_eq("sel one-hot", sum(&l.sel), one());
        for j in 0..8 {
            let delta = l.new[j].clone() - &l.old[j];
            b.assert_zero("write keeps memory", (one() - &l.is_read) * delta.clone());
            b.assert_zero("read keeps unmasked bytes", (one() - &l.mask[j]) * delta);
        }
        // The run starts at the offset (when the row is active) and is contiguous.
        let mut starts = Expr::zero();
        for j in 0..8 {
            starts = starts + l.sel[j].clone() * &l.mask[j];
            b.assert_zero(
                "no byte before the offset",
                l.mask[j].clone() * sum(&l.sel[j + 1..]),
            );
            if j > 0 {
                b.assert_zero(
                    "contiguous",
                    l.mask[j].clone() * (one() - &l.mask[j - 1]) * (one() - &l.sel[j]),
                );
            }
        }
        b.assert_eq("starts at the offset", starts, l.mu.clone());
        let n = sum(&l.mask);
        // A run that stops inside the cell ends the call.
        b.assert_zero(
            "ends inside the cell",
            (one() - &l.mask[7]) * (l.rem.clone() - &n),
        );
        let offset = (0..8).fold(Expr::zero(), |a, i| a + l.sel[i].clone() * c(i as u64));
        let addr = l.cell.clone() * c(8) + &offset;
        b.receive(
            bus::IO_CHAIN,
            vec![
                l.ts.clone(),
                addr.clone(),
                l.pos.clone(),
                l.rem.clone(),
                l.is_read.clone(),
            ],
            l.mu.clone(),
        );
        b.send(
            bus::IO_CHAIN,
            vec![
                l.ts.clone(),
                addr + &n,
                l.pos.clone() + &n,
                l.rem.clone() - &n,
                l.is_read.clone(),
            ],
            l.mu.clone(),
        );
        for j in 0..8 {
            let index = l.pos.clone() + c(j as u64) - &offset;
            b.send(
                bus::OUTPUT,
                vec![index.clone(), l.new[j].clone()],
                l.mask[j].clone() * (one() - &l.is_read),
            );
            b.send(
                bus::INPUT,
                vec![index, l.new[j].clone()],
                l.mask[j].clone() * &l.is_read,
            );
        }
        // The bytes must be bytes: the packed token value alone would let an unmasked byte absorb a change of
        // a masked (output) byte.
        for k in 0..4 {
            b.send(
                bus::BYTE,
                vec![
                    c(bus::BYTE_PAIR),
                    l.new[2 * k].clone(),
                    l.new[2 * k + 1].clone(),
                    Expr::zero(),
                ],
                l.mu.clone(),
            );
        }
        b.receive(
            bus::MEM_TOKEN,
            vec![
                l.cell.clone(),
                l.old_ts.clone(),
                pack4(&l.old[..4]),
                pack4(&l.old[4..]),
            ],
            l.mu.clone(),
        );
        b.send(
            bus::MEM_TOKEN,
            vec![
                l.cell.clone(),
                l.ts.clone(),
                pack4(&l.new[..4]),
                pack4(&l.new[4..]),
            ],
            l.mu.clone(),
        );
        lt32(b, &l.old_ts, &l.ts, &l.d0, &l.mu);
    }
}

/// One SYSCALL row, as the fill produces it.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyscallEventRow {
    pub ts: u64,
    /// 0 (read), 1 or 2 (write).
    pub fd: u64,
    pub count: u64,
    pub buf: u64,
    pub len: u64,
    pub a1_old_ts: u64,
    pub a2_old_ts: u64,
    pub cursor: u64,
    pub cursor_old_ts: u64,
}

/// One SYSIO row, as the fill produces it.
#[derive(Clone, Copy, Debug, Default)]
pub struct SysioEventRow {
    pub ts: u64,
    pub cell: u64,
    pub offset: usize,
    /// Number of transferred bytes in this cell (>= 1).
    pub n: usize,
    pub old: [u8; 8],
    pub new: [u8; 8],
    pub is_read: bool,
    pub pos: u64,
    pub rem: u64,
    pub old_ts: u64,
}

/// The SYSCALL trace (`n x 18`; padding rows are all zero).
pub fn syscall_trace(
    rows: &[SyscallEventRow],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = rows.len().next_power_of_two().max(min_height);
    let mut values = vec![F::ZERO; n * NUM_SYSCALL_COLS];
    for (chunk, e) in values.chunks_mut(NUM_SYSCALL_COLS).zip(rows) {
        let row = SyscallCols::from_row_mut(chunk);
        let f = F::from_u64;
        *row = SyscallCols {
            ts: f(e.ts),
            is_out: F::from_bool(e.fd == 1),
            is_dbg: F::from_bool(e.fd == 2),
            is_in: F::from_bool(e.fd == 0),
            count: f(e.count),
            short: F::from_bool(e.fd == 0 && e.count < e.len),
            short_d0: F::ZERO,
            buf: [f(e.buf), F::ZERO],
            len: [f(e.len), F::ZERO],
            a1: RegReadCols {
                old_ts: f(e.a1_old_ts),
                d0: f(lookups.lt32(e.a1_old_ts, e.ts)),
            },
            a2: RegReadCols {
                old_ts: f(e.a2_old_ts),
                d0: f(lookups.lt32(e.a2_old_ts, e.ts)),
            },
            cursor: f(e.cursor),
            cursor_old_ts: f(e.cursor_old_ts),
            cursor_d0: F::ZERO,
        };
        if e.fd == 0 && e.count < e.len {
            row.short_d0 = f(lookups.lt32(e.count, e.len));
        }
        if e.fd != 2 {
            row.cursor_d0 = f(lookups.lt32(e.cursor_old_ts, e.ts + 2));
        } else {
            row.cursor = F::ZERO;
            row.cursor_old_ts = F::ZERO;
        }
    }
    RowMajorMatrix::new(values, NUM_SYSCALL_COLS)
}

/// The SYSIO trace (`n x 40`; padding rows: offset 0, nothing transferred, inactive).
pub fn sysio_trace(
    rows: &[SysioEventRow],
    min_height: usize,
    lookups: &mut Lookups,
) -> RowMajorMatrix {
    let n = rows.len().next_power_of_two().max(min_height);
    let mut values = vec![F::ZERO; n * NUM_SYSIO_COLS];
    for (r, chunk) in values.chunks_mut(NUM_SYSIO_COLS).enumerate() {
        let row = SysioCols::from_row_mut(chunk);
        let Some(e) = rows.get(r) else {
            row.sel[0] = F::ONE;
            continue;
        };
        let f = F::from_u64;
        row.ts = f(e.ts);
        row.cell = f(e.cell);
        row.sel[e.offset] = F::ONE;
        for j in e.offset..e.offset + e.n {
            row.mask[j] = F::ONE;
        }
        row.old = e.old.map(|x| f(x as u64));
        row.new = e.new.map(|x| f(x as u64));
        row.is_read = F::from_bool(e.is_read);
        row.pos = f(e.pos);
        row.rem = f(e.rem);
        row.old_ts = f(e.old_ts);
        row.d0 = f(lookups.lt32(e.old_ts, e.ts));
        row.mu = F::ONE;
        for k in 0..4 {
            lookups.pair(e.new[2 * k] as u64, e.new[2 * k + 1] as u64);
        }
    }
    RowMajorMatrix::new(values, NUM_SYSIO_COLS)
}
