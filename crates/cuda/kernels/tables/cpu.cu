// Fill kernel of the CPU table (mirrors crates/machine/src/tables/cpu.rs): see common.cuh for the conventions.
#include "table_common.cuh"
