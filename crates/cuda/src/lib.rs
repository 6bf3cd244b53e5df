//! zkrv-cuda (skeleton; see docs/architecture.md).
