// Fill kernel of the MEMW_A table (mirrors crates/machine/src/tables/memw_a.rs): see common.cuh for the conventions.
#include "table_common.cuh"
