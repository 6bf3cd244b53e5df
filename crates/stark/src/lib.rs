//! zkrv-stark: a multi-table STARK over Goldilocks with LogUp buses, Keccak-256 (or Poseidon2) Merkle commitments and one batched
//! DEEP-ALI + FRI proof over tables of mixed heights. See docs/architecture.md for the shared conventions.

// Foundations.
pub mod field;
pub mod keccak;
pub mod matrix;
pub mod merkle;
pub mod opcount;
pub mod pcs;
pub mod poly;
pub mod poseidon2;
pub mod transcript;

// Protocol (AIR, LogUp, prover, verifier).
pub mod air;
pub mod backend;
pub mod check;
pub mod config;
pub mod logup;
pub mod preprocessed;
pub mod profile;
pub mod proof;
pub mod prover;
pub mod recursion;
pub mod security;
pub mod statement;
pub mod symbolic;
pub mod verifier;
pub mod zk;

pub use config::{SecurityPreset, StarkConfig};
pub use preprocessed::{preprocess, PreprocessedData};
pub use proof::Proof;
pub use prover::{prove, prove_with, ProveError};
pub use verifier::{verify, verify_bytes, VerifyError};
