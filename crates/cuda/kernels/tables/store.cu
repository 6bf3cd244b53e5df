// Fill kernel of the STORE table (mirrors crates/machine/src/tables/store.rs): see common.cuh for the conventions.
#include "table_common.cuh"
