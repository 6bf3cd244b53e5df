//! zkrv-stark: a multi-table STARK over Goldilocks with LogUp buses, Keccak-256 Merkle commitments and one batched
//! DEEP-ALI + FRI proof over tables of mixed heights. See docs/architecture.md for the shared conventions.

// Foundations.
pub mod field;
pub mod matrix;
pub mod merkle;
pub mod pcs;
pub mod poly;
pub mod transcript;

// Protocol (AIR, LogUp, prover, verifier).
pub mod air;
pub mod check;
pub mod logup;
pub mod symbolic;
