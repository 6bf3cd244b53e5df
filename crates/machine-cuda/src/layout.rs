//! One definition of every layout: generates `kernels/tables/layout.cuh`, the CUDA header of the table fill
//! kernels, from the Rust definitions, which stay the source:
//!
//! - every column struct of the machine ([`zkrv_machine::tables::column_layouts`]): `<T>_WIDTH` and, for every
//!   field by its path, `<T>_COL_<PATH>` (column offset in the row) and, for a field of several columns (an
//!   array or a nested struct), `<T>_COL_<PATH>_LEN` (e.g. `CPU_COL_R1_OLD_TS`, `CPU_COL_DEC_FLAGS_RR1`,
//!   `CPU_COL_RV1` and `CPU_COL_RV1_LEN` = 2; an array's element `k` is `<T>_COL_<PATH> + k`);
//! - the BITWISE lookup kinds (`LK_<KIND>`, `LK_ROWS`), the ALU op codes (`ALU_<OP>`) and the constants the
//!   kernels share with their launchers;
//! - the upload structs (the `#[repr(C)]` structs the launchers upload as they are), each with
//!   `static_assert`s of its size, alignment and every field's offset against `size_of`/`offset_of!` in Rust.
//!
//! The header is committed; `tests/layout_fresh.rs` regenerates it and fails on any difference
//! (`ZKRV_REGEN_LAYOUT=1 cargo test --release -p zkrv-machine-cuda --features cuda --test layout_fresh` rewrites it).
//! Each fill launcher checks its table's width against the committed header ([`check_width`]).

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::OnceLock;

use zkrv_executor::precompile::{KECCAK_F, POSEIDON2, SHA256_COMPRESS};
use zkrv_executor::{CycleEvent, KeccakEvent, Poseidon2Event, Sha256Event};
use zkrv_machine::bus::{alu, NUM_REG_CELLS, REG_INPUT_CURSOR, REG_OUTPUT_CURSOR};
use zkrv_machine::tables::bitwise::{LookupKind, BITWISE_LOG_HEIGHT};
use zkrv_machine::tables::cpu::{RegWalk, NO_DECODE_ROW};
use zkrv_machine::tables::sysio::INPUT_EOF;
use zkrv_machine::tables::{column_layouts, ColumnLayout};

use crate::kernels::LAYOUT_CUH;
use crate::tables::bytewise::BytewiseRequest;
use crate::tables::cpu32::Cpu32In;
use crate::tables::dvrm::DvrmRequest;
use crate::tables::eq::EqRequest;
use crate::tables::input::InputIn;
use crate::tables::load::LoadIn;
use crate::tables::lt::LtRequest;
use crate::tables::memw::MemwIn;
use crate::tables::memw_a::{MemwAIn, MemwARecIn, MEMW_A_TS_BITS};
use crate::tables::mul::MulRequest;
use crate::tables::page::PageIn;
use crate::tables::regfile::RegfileIn;
use crate::tables::regwalk::{WalkSyscall, WALK_NO_CURSOR};
use crate::tables::shift::ShiftRequest;
use crate::tables::store::StoreIn;
use crate::tables::sysio::{SyscallIn, SysioIn};
use zkrv_cuda::CudaError;

/// The committed header's path relative to the crate root.
pub const LAYOUT_PATH: &str = "kernels/tables/layout.cuh";

/// How to rewrite the header after a layout change.
pub const REGEN_HINT: &str =
    "ZKRV_REGEN_LAYOUT=1 cargo test --release -p zkrv-machine-cuda --features cuda --test layout_fresh";

/// A Rust field type with its C spelling (plain C types: the header includes nothing).
pub trait CType {
    /// The C declaration of a field `name` of this type.
    fn c_decl(name: &str) -> String;
}

/// A scalar field type.
pub trait CScalar {
    /// The C type.
    const C: &'static str;
}

macro_rules! c_scalars {
    ($($t:ty => $c:literal),* $(,)?) => {
        $(impl CScalar for $t {
            const C: &'static str = $c;
        }
        impl CType for $t {
            fn c_decl(name: &str) -> String {
                format!("{} {name}", $c)
            }
        })*
    };
}

c_scalars! {
    u8 => "unsigned char",
    u16 => "unsigned short",
    i16 => "short",
    u32 => "unsigned int",
    i32 => "int",
    u64 => "unsigned long long",
    i64 => "long long",
}

impl<T: CScalar, const N: usize> CType for [T; N] {
    fn c_decl(name: &str) -> String {
        format!("{} {name}[{N}]", T::C)
    }
}

/// One field of an upload struct.
#[derive(Clone, Debug)]
pub struct CField {
    /// The C name (the Rust name unless it is a C++ keyword, e.g. `signed`, `new`).
    pub c_name: &'static str,
    /// The C declaration.
    pub decl: String,
    /// Byte offset (`offset_of!`).
    pub offset: usize,
}

/// An upload struct: a `#[repr(C)]` Rust struct the kernels read as it is.
#[derive(Clone, Debug)]
pub struct CStruct {
    /// The name (the same in Rust and C).
    pub name: &'static str,
    /// The Rust path, for the header's comment.
    pub rust_path: &'static str,
    pub size: usize,
    pub align: usize,
    /// In declaration order.
    pub fields: Vec<CField>,
}

/// The [`CStruct`] of `Ty { field [=> c_name]: type, ... }`, checked at compile time against the Rust struct:
/// every listed field exists with the listed type, and the listed sizes add up to `size_of::<Ty>()` (the
/// struct has no unlisted field and no padding). The order is checked by the offsets in the header.
macro_rules! c_struct {
    ($ty:ident { $($f:ident $(=> $cn:ident)? : $t:ty),* $(,)? }) => {{
        const _: () = assert!(
            0 $(+ core::mem::size_of::<$t>())* == core::mem::size_of::<$ty>(),
            concat!("the fields listed for ", stringify!($ty), " do not cover it (a field missing, or padding)")
        );
        #[allow(dead_code)]
        fn field_types(s: &$ty) {
            $(let _: &$t = &s.$f;)*
        }
        CStruct {
            name: stringify!($ty),
            rust_path: std::any::type_name::<$ty>(),
            size: core::mem::size_of::<$ty>(),
            align: core::mem::align_of::<$ty>(),
            fields: vec![$({
                let c_name = c_struct!(@name $f $($cn)?);
                CField {
                    c_name,
                    decl: <$t as CType>::c_decl(c_name),
                    offset: core::mem::offset_of!($ty, $f),
                }
            }),*],
        }
    }};
    (@name $f:ident) => { stringify!($f) };
    (@name $f:ident $cn:ident) => { stringify!($cn) };
}

/// Every upload struct of the table fills.
pub fn upload_structs() -> Vec<CStruct> {
    vec![
        c_struct!(CycleEvent {
            pc: u32,
            word: u32,
            rs1_val: u64,
            rs2_val: u64,
            rd_val: u64
        }),
        c_struct!(KeccakEvent {
            cycle: u64,
            state_ptr: u64,
            input: [u64; 25],
            output: [u64; 25]
        }),
        c_struct!(Sha256Event {
            cycle: u64,
            state_ptr: u64,
            block_ptr: u64,
            state_in: [u32; 8],
            block: [u8; 64],
            state_out: [u32; 8]
        }),
        c_struct!(Poseidon2Event {
            cycle: u64,
            state_ptr: u64,
            input: [u64; 8],
            output: [u64; 8]
        }),
        c_struct!(RegWalk {
            r1_old_ts: u32,
            r2_old_ts: u32,
            w_old_ts: u32,
            w_old: [u32; 2]
        }),
        c_struct!(LoadIn {
            addr: u32,
            ts: u32,
            v: [u32; 2],
            imm: i16,
            flags: u16
        }),
        c_struct!(StoreIn {
            addr: u32,
            ts: u32,
            val: [u32; 2],
            imm: i16,
            width_idx: u16
        }),
        c_struct!(MemwAIn {
            addr: u32,
            ts_meta: u32,
            old_ts: u32,
            old => old_bytes: [u8; 8],
            new => new_bytes: [u8; 8],
        }),
        c_struct!(MemwARecIn { clk: u32, old_ts: u32, old => old_bytes: [u8; 8] }),
        c_struct!(LtRequest { a: u64, b: u64, signed => is_signed: u64, m: u64 }),
        c_struct!(ShiftRequest {
            a: u64,
            b: u64,
            op: u64,
            m: u64
        }),
        c_struct!(MulRequest {
            a: u64,
            b: u64,
            signs: u64,
            m_lo: u64,
            m_hi: u64
        }),
        c_struct!(Cpu32In {
            a: u64,
            b: u64,
            op: u64
        }),
        c_struct!(DvrmRequest {
            n: u64,
            d: u64,
            signed => is_signed: u64,
            m_q: u64,
            m_r: u64
        }),
        c_struct!(EqRequest {
            a: u64,
            b: u64,
            m: u64
        }),
        c_struct!(MemwIn {
            cell: u64,
            ts: u32,
            old_ts: [u32; 2],
            meta: u32,
            old => old_bytes: [u8; 16],
            new => new_bytes: [u8; 16],
        }),
        c_struct!(PageIn {
            v: u64,
            cell: u32,
            ts: u32
        }),
        c_struct!(InputIn { byte: u32, m: u32 }),
        c_struct!(RegfileIn { v: u64, ts: u64 }),
        c_struct!(WalkSyscall {
            cycle: u32,
            cursor: u32,
            count: u64
        }),
        c_struct!(SyscallIn {
            ts: u64,
            fd: u64,
            count: u64,
            buf: u64,
            len: u64,
            a1_old_ts: u64,
            a2_old_ts: u64,
            cursor: u64,
            cursor_old_ts: u64
        }),
        c_struct!(SysioIn {
            ts: u64,
            cell: u64,
            pos: u64,
            rem: u64,
            old_ts: u64,
            old => old_bytes: u64,
            new => new_bytes: u64,
            meta: u64
        }),
        c_struct!(BytewiseRequest {
            op: u64,
            a: u64,
            b: u64,
            m: u64
        }),
    ]
}

/// Constants the kernels share with their launchers: (name, value as C text, what it is).
pub fn constants() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "NO_DECODE_ROW",
            format!("{NO_DECODE_ROW:#x}u"),
            "zkrv_machine::tables::cpu::NO_DECODE_ROW: a pc without a DECODE row",
        ),
        (
            "INPUT_EOF",
            format!("{INPUT_EOF}ull"),
            "zkrv_machine::tables::sysio::INPUT_EOF: the byte of the end-of-input row",
        ),
        (
            "REG_CELLS",
            format!("{NUM_REG_CELLS}u"),
            "zkrv_machine::bus::NUM_REG_CELLS: register cells (x0..x31, the input and output cursors)",
        ),
        (
            "REG_INPUT_CURSOR",
            format!("{REG_INPUT_CURSOR}u"),
            "zkrv_machine::bus::REG_INPUT_CURSOR: the input cursor's register cell",
        ),
        (
            "REG_OUTPUT_CURSOR",
            format!("{REG_OUTPUT_CURSOR}u"),
            "zkrv_machine::bus::REG_OUTPUT_CURSOR: the output cursor's register cell",
        ),
        (
            "WALK_NO_CURSOR",
            format!("{WALK_NO_CURSOR:#x}u"),
            "zkrv_machine_cuda::tables::regwalk::WALK_NO_CURSOR: a syscall that moves no cursor",
        ),
        (
            "ECALL_KECCAK_F",
            format!("{KECCAK_F:#x}ull"),
            "zkrv_executor::precompile::KECCAK_F: a7 of a keccak_f call",
        ),
        (
            "ECALL_SHA256_COMPRESS",
            format!("{SHA256_COMPRESS:#x}ull"),
            "zkrv_executor::precompile::SHA256_COMPRESS: a7 of a sha256_compress call",
        ),
        (
            "ECALL_POSEIDON2",
            format!("{POSEIDON2:#x}ull"),
            "zkrv_executor::precompile::POSEIDON2: a7 of a poseidon2 call",
        ),
        (
            "MEMW_A_TS_BITS",
            format!("{MEMW_A_TS_BITS}"),
            "zkrv_machine_cuda::tables::memw_a::MEMW_A_TS_BITS: bits of MemwAIn::ts_meta holding the timestamp",
        ),
    ]
}

/// `field.path[3].x` as a C identifier part: `FIELD_PATH_3_X`.
fn c_ident(path: &str) -> String {
    path.chars()
        .filter_map(|c| match c {
            '.' | '[' => Some('_'),
            ']' => None,
            c => Some(c.to_ascii_uppercase()),
        })
        .collect()
}

/// The nodes of a column path: `a.b[0].c` gives `a`, `a.b`, `a.b[0]`, `a.b[0].c`.
fn prefixes(path: &str) -> Vec<&str> {
    let mut out: Vec<&str> = path
        .char_indices()
        .filter(|&(i, c)| i > 0 && (c == '.' || c == '['))
        .map(|(i, _)| &path[..i])
        .collect();
    out.push(path);
    out
}

/// The `#define`s of one column struct. Panics (a bug in the column structs or here) if a field's columns
/// are not contiguous or two fields give one name.
fn table_section(t: &ColumnLayout, out: &mut String, names: &mut HashMap<String, String>) {
    assert_eq!(t.columns.len(), t.width, "{}: width", t.name);
    // Node path -> (first column, number of columns), in pre-order (first seen).
    let mut order: Vec<&str> = Vec::new();
    let mut span: HashMap<&str, (usize, usize, usize)> = HashMap::new();
    for (c, path) in t.columns.iter().enumerate() {
        for node in prefixes(path) {
            let e = span.entry(node).or_insert_with(|| {
                order.push(node);
                (c, c, 0)
            });
            e.1 = c;
            e.2 += 1;
        }
    }
    let mut define = |name: String, value: usize, what: &str, out: &mut String| {
        if let Some(prev) = names.insert(name.clone(), what.to_string()) {
            panic!("layout.cuh: {name} names both {prev} and {what}");
        }
        writeln!(out, "#define {name} {value}").unwrap();
    };
    writeln!(out, "// {}: {} columns.", t.name, t.width).unwrap();
    define(format!("{}_WIDTH", t.name), t.width, t.name, out);
    for node in order {
        let (first, last, count) = span[node];
        assert_eq!(
            last - first + 1,
            count,
            "{}.{node}: columns not contiguous",
            t.name
        );
        // An element of an array of scalars is `<array> + k`, not a name of its own.
        if count == 1 && node.ends_with(']') {
            continue;
        }
        let what = format!("{}.{node}", t.name);
        define(
            format!("{}_COL_{}", t.name, c_ident(node)),
            first,
            &what,
            out,
        );
        if count > 1 {
            define(
                format!("{}_COL_{}_LEN", t.name, c_ident(node)),
                count,
                &what,
                out,
            );
        }
    }
    out.push('\n');
}

fn struct_section(s: &CStruct, out: &mut String) {
    writeln!(
        out,
        "// {} ({} bytes, align {}).",
        s.rust_path, s.size, s.align
    )
    .unwrap();
    writeln!(out, "struct {} {{", s.name).unwrap();
    for f in &s.fields {
        writeln!(out, "    {};", f.decl).unwrap();
    }
    writeln!(out, "}};").unwrap();
    writeln!(
        out,
        "static_assert(sizeof({0}) == {1}, \"{0}: size\");",
        s.name, s.size
    )
    .unwrap();
    writeln!(
        out,
        "static_assert(alignof({0}) == {1}, \"{0}: alignment\");",
        s.name, s.align
    )
    .unwrap();
    for f in &s.fields {
        writeln!(
            out,
            "static_assert(ZKRV_OFFSETOF({0}, {1}) == {2}, \"{0}.{1}: offset\");",
            s.name, f.c_name, f.offset
        )
        .unwrap();
    }
    out.push('\n');
}

/// The header text from explicit inputs (see [`layout_cuh`]).
pub fn layout_cuh_from(tables: &[ColumnLayout], structs: &[CStruct]) -> String {
    let mut out = String::new();
    let mut names = HashMap::new();
    writeln!(
        out,
        "// GENERATED by zkrv_machine_cuda::layout (crates/machine-cuda/src/layout.rs) from the Rust definitions; do not edit.\n\
         // Regenerate: {REGEN_HINT}\n\
         //\n\
         // Column offsets are in u64 cells of a row-major trace row (`<T>_COL_<FIELD>`, `<T>_COL_<FIELD>_LEN`\n\
         // for a field of several columns, `<T>_WIDTH`); upload structs are checked against Rust's layout.\n\
         #pragma once\n\n\
         // Field offsets of the upload structs (NVRTC has no offsetof: EDG's __INTADDR__ is its constant form).\n\
         #if defined(__CUDACC_RTC__)\n\
         #define ZKRV_OFFSETOF(T, f) ((unsigned long long)__INTADDR__(&(((T*)0)->f)))\n\
         #else\n\
         #define ZKRV_OFFSETOF(T, f) __builtin_offsetof(T, f)\n\
         #endif\n"
    )
    .unwrap();
    writeln!(
        out,
        "// zkrv_machine::tables::bitwise::LookupKind: histogram `counts[kind * LK_ROWS + x]`."
    )
    .unwrap();
    for k in LookupKind::ALL {
        writeln!(
            out,
            "#define LK_{} {}u",
            format!("{k:?}").to_ascii_uppercase(),
            k as u32
        )
        .unwrap();
    }
    writeln!(out, "#define LK_COUNT {}u", LookupKind::ALL.len()).unwrap();
    writeln!(out, "#define LK_ROWS {}u\n", 1u32 << BITWISE_LOG_HEIGHT).unwrap();
    writeln!(out, "// zkrv_machine::bus::alu: ALU op codes.").unwrap();
    for (name, code) in alu::ALL {
        writeln!(out, "#define ALU_{name} {code}ull").unwrap();
    }
    out.push('\n');
    for (name, value, what) in constants() {
        writeln!(out, "// {what}.\n#define {name} {value}").unwrap();
    }
    out.push('\n');
    writeln!(
        out,
        "// ---- Column layouts (zkrv_machine::tables::column_layouts) ----\n"
    )
    .unwrap();
    for t in tables {
        table_section(t, &mut out, &mut names);
    }
    writeln!(out, "// ---- Upload structs ----\n").unwrap();
    for s in structs {
        struct_section(s, &mut out);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The header as the Rust definitions give it now (what `kernels/tables/layout.cuh` must hold).
pub fn layout_cuh() -> String {
    layout_cuh_from(&column_layouts(), &upload_structs())
}

/// `<table>_WIDTH` of the committed header (the one the kernels are compiled with), if it defines it.
pub fn header_width(table: &str) -> Option<usize> {
    static WIDTHS: OnceLock<HashMap<String, usize>> = OnceLock::new();
    WIDTHS
        .get_or_init(|| {
            LAYOUT_CUH
                .src
                .lines()
                .filter_map(|l| {
                    let rest = l.strip_prefix("#define ")?;
                    let (name, value) = rest.split_once(' ')?;
                    let table = name.strip_suffix("_WIDTH")?;
                    Some((table.to_string(), value.trim().parse().ok()?))
                })
                .collect()
        })
        .get(table)
        .copied()
}

/// Checks that the kernels' header gives `table` the width the Rust column struct has.
/// Errors: [`CudaError::InvalidArgument`] (a stale header: regenerate it, see [`REGEN_HINT`]).
pub fn check_width(table: &str, width: usize) -> Result<(), CudaError> {
    match header_width(table) {
        Some(w) if w == width => Ok(()),
        got => Err(CudaError::InvalidArgument(format!(
            "{table} fill: the Rust table has {width} columns but {LAYOUT_PATH} gives {got:?}; regenerate it: {REGEN_HINT}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idents_and_prefixes() {
        assert_eq!(c_ident("dec.flags.is_pad"), "DEC_FLAGS_IS_PAD");
        assert_eq!(c_ident("e[1].f"), "E_1_F");
        assert_eq!(prefixes("a.b[0].c"), ["a", "a.b", "a.b[0]", "a.b[0].c"]);
    }

    #[test]
    fn nested_fields_and_arrays() {
        let t = ColumnLayout {
            name: "T",
            width: 5,
            columns: ["a", "b[0]", "b[1]", "c.d", "c.e"]
                .map(String::from)
                .to_vec(),
        };
        let h = layout_cuh_from(&[t], &[]);
        for l in [
            "#define T_WIDTH 5",
            "#define T_COL_A 0",
            "#define T_COL_B 1",
            "#define T_COL_B_LEN 2",
            "#define T_COL_C 3",
            "#define T_COL_C_LEN 2",
            "#define T_COL_C_D 3",
            "#define T_COL_C_E 4",
        ] {
            assert!(h.lines().any(|x| x == l), "missing {l} in\n{h}");
        }
        assert!(!h.contains("T_COL_B_0"), "{h}");
    }

    #[test]
    fn a_changed_column_struct_changes_the_header() {
        let mut tables = column_layouts();
        let base = layout_cuh_from(&tables, &upload_structs());
        let cpu = tables.iter_mut().find(|t| t.name == "CPU").unwrap();
        cpu.columns.swap(0, 1);
        assert_ne!(layout_cuh_from(&tables, &upload_structs()), base);
    }

    #[test]
    fn widths_of_the_committed_header() {
        assert_eq!(
            header_width("CPU"),
            Some(zkrv_machine::tables::cpu::NUM_CPU_COLS)
        );
        assert!(check_width("LT", zkrv_machine::tables::lt::NUM_LT_COLS).is_ok());
        assert!(check_width("LT", 3).is_err());
        assert!(check_width("NOPE", 3).is_err());
    }
}
