//! The machine tables (docs/tables.md §6). Each module holds the column struct(s), the AIR and the CPU fill.

pub mod bitwise;
pub mod bytewise;
pub mod cpu;
pub mod cpu32;
pub mod decode;
pub mod dvrm;
pub mod eq;
pub mod input;
pub mod keccakf;
pub mod load;
pub mod lt;
pub mod memw;
pub mod memw_a;
pub mod mul;
pub mod page;
pub mod poseidon2;
pub mod regfile;
pub mod sha256;
pub mod shift;
pub mod store;
pub mod sysio;

/// The layout of one column struct: its name in generated code (the width constant without `NUM_` and
/// `_COLS`, e.g. `CPU`, `DECODE_PREP`), its width and each column's field path ([`crate::cols`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnLayout {
    pub name: &'static str,
    pub width: usize,
    pub columns: Vec<String>,
}

/// Every column struct of the machine (main and preprocessed), in module order: the source of the CUDA
/// layout header (`zkrv_machine_cuda::layout`).
pub fn column_layouts() -> Vec<ColumnLayout> {
    macro_rules! layouts {
        ($($m:ident :: $s:ident => $w:ident),* $(,)?) => {
            vec![$(ColumnLayout {
                name: stringify!($w)
                    .strip_prefix("NUM_")
                    .and_then(|n| n.strip_suffix("_COLS"))
                    .expect("width constant NUM_<NAME>_COLS"),
                width: $m::$w,
                columns: $m::$s::<usize>::column_names(),
            }),*]
        };
    }
    layouts![
        bitwise::BitwisePrepCols => NUM_BITWISE_PREP_COLS,
        bitwise::BitwiseCols => NUM_BITWISE_COLS,
        bytewise::BytewiseCols => NUM_BYTEWISE_COLS,
        cpu::CpuCols => NUM_CPU_COLS,
        cpu32::Cpu32Cols => NUM_CPU32_COLS,
        decode::DecodePrepCols => NUM_DECODE_PREP_COLS,
        decode::DecodeCols => NUM_DECODE_COLS,
        dvrm::DvrmCols => NUM_DVRM_COLS,
        eq::EqCols => NUM_EQ_COLS,
        input::InputCols => NUM_INPUT_COLS,
        keccakf::KeccakfCols => NUM_KECCAKF_COLS,
        load::LoadCols => NUM_LOAD_COLS,
        lt::LtCols => NUM_LT_COLS,
        memw::MemwCols => NUM_MEMW_COLS,
        memw_a::MemwACols => NUM_MEMW_A_COLS,
        mul::MulCols => NUM_MUL_COLS,
        page::PageCols => NUM_PAGE_COLS,
        poseidon2::Poseidon2Cols => NUM_POSEIDON2_COLS,
        regfile::RegfileCols => NUM_REGFILE_COLS,
        sha256::Sha256Cols => NUM_SHA256_COLS,
        shift::ShiftCols => NUM_SHIFT_COLS,
        shift::Pow2PrepCols => NUM_POW2_PREP_COLS,
        store::StoreCols => NUM_STORE_COLS,
        sysio::SyscallCols => NUM_SYSCALL_COLS,
        sysio::SysioCols => NUM_SYSIO_COLS,
    ]
}
