// Fill kernel of the LOAD table (mirrors crates/machine/src/tables/load.rs): see common.cuh for the conventions.
#include "table_common.cuh"
