//! The machine tables (docs/tables.md §6). Each module holds the column struct(s), the AIR and the CPU fill.

pub mod bitwise;
pub mod bytewise;
pub mod cpu;
pub mod cpu32;
pub mod decode;
pub mod dvrm;
pub mod eq;
pub mod input;
pub mod load;
pub mod lt;
pub mod memw;
pub mod memw_a;
pub mod mul;
pub mod page;
pub mod regfile;
pub mod shift;
pub mod store;
pub mod sysio;
