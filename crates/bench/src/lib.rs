//! zkrv-bench (skeleton; see docs/architecture.md).
