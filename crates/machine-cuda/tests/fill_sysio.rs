//! SYSCALL and SYSIO fill parity (`kernels/tables/sysio.cu` vs `zkrv_machine::tables::sysio::{syscall_trace,
//! sysio_trace}`): every cell (padding rows included) and the BITWISE lookup histogram, on random rows (seeded,
//! `ZKRV_SEED` to replay: every fd, short and full reads, values above the field modulus, LT32 gaps from 0 to
//! 2^32 - 1, every byte run of a cell) at edge sizes, and on the real guests' rows (whose split is checked
//! against `generate`, see `request_fill::guest_inputs`); the packers refuse rows without an LT32 witness or
//! with a byte run outside the cell. The host emulation always runs; the GPU part prints
//! `SKIPPED gpu_<table>_fill_matches_cpu (GPU part): <reason>` without a device.
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/request_fill.rs"]
mod request_fill;

use rand::rngs::StdRng;
use rand::{Rng, RngCore};
use request_fill::{Case, RequestFill};
use zkrv_cuda::backend::DeviceTrace;
use zkrv_cuda::{CudaError, Device, TransferStats};
use zkrv_machine::tables::bitwise::Lookups;
use zkrv_machine::tables::sysio::{
    syscall_trace, sysio_trace, SyscallEventRow, SysioEventRow, NUM_SYSCALL_COLS, NUM_SYSIO_COLS,
};
use zkrv_machine::trace::DeviceFill;
use zkrv_machine::{Table, MIN_HEIGHT};
use zkrv_machine_cuda::tables::sysio::{
    fill_syscall, fill_sysio_resident, pack_syscall, pack_sysio,
};
use zkrv_machine_cuda::tables::upload_requests;
use zkrv_machine_cuda::tables::DeviceLookups;
use zkrv_stark::matrix::RowMajorMatrix;

struct Syscall;
struct Sysio;

impl RequestFill for Syscall {
    const TEST: &'static str = "gpu_syscall_fill_matches_cpu";
    const TABLE: &'static str = "SYSCALL";
    const WIDTH: usize = NUM_SYSCALL_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::SYSIO_CU.src;
    const ROW_FN: &'static str = "syscall_fill_row";
    const REQUEST: &'static str = "SyscallIn";
    const WORDS: usize = 9;
    type Requests = Vec<SyscallEventRow>;

    fn len(r: &Self::Requests) -> usize {
        r.len()
    }
    fn host(r: &Self::Requests, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        syscall_trace(r, min_height, lookups)
    }
    fn words(r: &Self::Requests) -> Vec<u64> {
        pack_syscall(r)
            .unwrap()
            .iter()
            .flat_map(|e| {
                [
                    e.ts,
                    e.fd,
                    e.count,
                    e.buf,
                    e.len,
                    e.a1_old_ts,
                    e.a2_old_ts,
                    e.cursor,
                    e.cursor_old_ts,
                ]
            })
            .collect()
    }
    fn gpu(
        dev: &Device,
        r: &Self::Requests,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        fill_syscall(dev, r, min_height, lookups, stats)
    }
}

impl RequestFill for Sysio {
    const TEST: &'static str = "gpu_sysio_fill_matches_cpu";
    const TABLE: &'static str = "SYSIO";
    const WIDTH: usize = NUM_SYSIO_COLS;
    const KERNEL: &'static str = zkrv_machine_cuda::kernels::SYSIO_CU.src;
    const ROW_FN: &'static str = "sysio_fill_row";
    const REQUEST: &'static str = "SysioIn";
    const WORDS: usize = 8;
    type Requests = Vec<SysioEventRow>;

    fn len(r: &Self::Requests) -> usize {
        r.len()
    }
    fn host(r: &Self::Requests, min_height: usize, lookups: &mut Lookups) -> RowMajorMatrix {
        sysio_trace(r, min_height, lookups)
    }
    fn words(r: &Self::Requests) -> Vec<u64> {
        pack_sysio(r)
            .unwrap()
            .iter()
            .flat_map(|e| [e.ts, e.cell, e.pos, e.rem, e.old_ts, e.old, e.new, e.meta])
            .collect()
    }
    fn gpu(
        dev: &Device,
        r: &Self::Requests,
        min_height: usize,
        lookups: &DeviceLookups,
        stats: &mut TransferStats,
    ) -> Result<DeviceTrace, CudaError> {
        let d = upload_requests(dev, "SYSIO", &pack_sysio(r)?, stats)?;
        fill_sysio_resident(dev, &d, min_height, lookups)
    }
}

/// A timestamp `4 clk + 1` and an earlier one with an LT32 witness (gap 0, 2^32 - 1 or random).
fn ts_pair(r: &mut StdRng, bump: u64) -> (u64, u64) {
    let ts = 4 * r.gen_range(0u64..1 << 26) + 1;
    let t = ts + bump;
    let old = match r.gen_range(0..4) {
        0 => t - 1,
        1 => 0,
        _ => r.gen_range(0..t),
    };
    (ts, old)
}

/// A value: an edge (above the modulus too), small or any.
fn value(r: &mut StdRng) -> u64 {
    match r.gen_range(0..4) {
        0 => [0, 1, u64::MAX, 0xffff_ffff_0000_0001, 0xffff_ffff_0000_0000][r.gen_range(0..5)],
        1 => r.gen_range(0..64),
        _ => r.next_u64(),
    }
}

fn random_syscalls(r: &mut StdRng, n: usize) -> Vec<SyscallEventRow> {
    (0..n)
        .map(|_| {
            let fd = r.gen_range(0..3);
            let (ts, a1_old_ts) = ts_pair(r, 0);
            let a2_old_ts = r.gen_range(0..ts);
            let cursor_old_ts = r.gen_range(0..ts + 2);
            let len = value(r) >> r.gen_range(0..33);
            let count = if fd == 0 && r.gen_bool(0.5) && len > 0 {
                // A short read: count < len with len - count - 1 < 2^32.
                len - 1 - r.gen_range(0..len.min(1 << 32))
            } else {
                len
            };
            SyscallEventRow {
                ts,
                fd,
                count,
                buf: value(r),
                len,
                a1_old_ts,
                a2_old_ts,
                cursor: value(r),
                cursor_old_ts,
            }
        })
        .collect()
}

fn random_sysio(r: &mut StdRng, n: usize) -> Vec<SysioEventRow> {
    (0..n)
        .map(|_| {
            let (ts, old_ts) = ts_pair(r, 0);
            let offset = r.gen_range(0..8);
            let n = r.gen_range(1..=8 - offset);
            let mut old = [0u8; 8];
            r.fill_bytes(&mut old);
            let mut new = old;
            let is_read = r.gen_bool(0.5);
            if is_read {
                r.fill_bytes(&mut new[offset..offset + n]);
            }
            SysioEventRow {
                ts,
                cell: value(r),
                offset,
                n,
                old,
                new,
                is_read,
                pos: value(r),
                rem: value(r),
                old_ts,
            }
        })
        .collect()
}

fn sizes() -> [usize; 10] {
    [0, 1, 2, 3, 7, 8, 9, 63, 64, 65]
}

#[test]
fn gpu_syscall_fill_matches_cpu() {
    let mut r = fill_util::rng(Syscall::TEST);
    let mut cases: Vec<Case<Vec<SyscallEventRow>>> = sizes()
        .into_iter()
        .map(|n| Case {
            name: format!("{n} random ECALLs"),
            req: random_syscalls(&mut r, n),
            min_height: MIN_HEIGHT,
        })
        .collect();
    cases.push(Case {
        name: "5 random ECALLs, min_height 64".into(),
        req: random_syscalls(&mut r, 5),
        min_height: 64,
    });
    let fill = DeviceFill::of(&[Table::Syscall]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        vec![(
            Table::Syscall,
            syscall_trace(&inputs.syscall, inputs.min_height, lk),
        )]
    }) {
        cases.push(Case {
            name,
            req: inputs.syscall,
            min_height: MIN_HEIGHT,
        });
    }
    request_fill::check::<Syscall>(&cases);
}

#[test]
fn gpu_sysio_fill_matches_cpu() {
    let mut r = fill_util::rng(Sysio::TEST);
    let mut cases: Vec<Case<Vec<SysioEventRow>>> = sizes()
        .into_iter()
        .map(|n| Case {
            name: format!("{n} random cells"),
            req: random_sysio(&mut r, n),
            min_height: MIN_HEIGHT,
        })
        .collect();
    cases.push(Case {
        name: "5 random cells, min_height 64".into(),
        req: random_sysio(&mut r, 5),
        min_height: 64,
    });
    let fill = DeviceFill::of(&[Table::Sysio]);
    for (name, inputs) in request_fill::guest_inputs(fill, |inputs, lk| {
        vec![(
            Table::Sysio,
            sysio_trace(&inputs.sysio, inputs.min_height, lk),
        )]
    }) {
        cases.push(Case {
            name,
            req: inputs.sysio,
            min_height: MIN_HEIGHT,
        });
    }
    request_fill::check::<Sysio>(&cases);
}

/// Rows without an LT32 witness, a bad fd or a byte run outside the cell are refused, naming the row.
#[test]
fn packers_refuse_what_the_tables_cannot_hold() {
    let ok = SyscallEventRow {
        ts: 5,
        fd: 1,
        a1_old_ts: 1,
        a2_old_ts: 2,
        cursor_old_ts: 6,
        ..Default::default()
    };
    assert!(pack_syscall(&[ok]).is_ok());
    for bad in [
        SyscallEventRow { fd: 3, ..ok },
        SyscallEventRow { a1_old_ts: 5, ..ok },
        SyscallEventRow { a2_old_ts: 9, ..ok },
        SyscallEventRow {
            cursor_old_ts: 7,
            ..ok
        },
        SyscallEventRow {
            ts: 1 << 33,
            a1_old_ts: 0,
            a2_old_ts: (1 << 33) - 1,
            cursor_old_ts: 1 << 33,
            ..ok
        },
        SyscallEventRow {
            fd: 0,
            count: 0,
            len: 1 << 33,
            ..ok
        },
    ] {
        let e = pack_syscall(&[ok, bad]).unwrap_err().to_string();
        assert!(e.contains("SYSCALL row 1"), "{e}");
    }
    // fd 2 does not touch the cursor: its cursor timestamp is not checked.
    assert!(pack_syscall(&[SyscallEventRow {
        fd: 2,
        cursor_old_ts: 99,
        ..ok
    }])
    .is_ok());
    let ok = SysioEventRow {
        ts: 5,
        n: 8,
        old_ts: 4,
        ..Default::default()
    };
    assert!(pack_sysio(&[ok]).is_ok());
    for bad in [
        SysioEventRow { n: 0, ..ok },
        SysioEventRow {
            offset: 1,
            n: 8,
            ..ok
        },
        SysioEventRow { old_ts: 5, ..ok },
    ] {
        let e = pack_sysio(&[ok, bad]).unwrap_err().to_string();
        assert!(e.contains("SYSIO row 1"), "{e}");
    }
}
