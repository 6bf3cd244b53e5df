// Fill kernel of the LT table (mirrors crates/machine/src/tables/lt.rs): see common.cuh for the conventions.
#include "table_common.cuh"
