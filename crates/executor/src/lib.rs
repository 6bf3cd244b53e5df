//! zkrv-executor (skeleton; see docs/architecture.md).
