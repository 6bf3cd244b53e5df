//! zkrv-machine: the RV64IM tables (design in docs/tables.md).
