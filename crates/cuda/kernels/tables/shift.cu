// Fill kernel of the SHIFT table (mirrors crates/machine/src/tables/shift.rs): see common.cuh for the conventions.
#include "table_common.cuh"
