//! zkrv-stark (skeleton; see docs/architecture.md).
