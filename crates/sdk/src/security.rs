//! The soundness of a preset, before any proof (`zkrv security`; docs/stark.md "Security"): the
//! round-by-round table of proofs whose tables all have `2^log_height` rows, the worst case of that height.
//! A proof's own figure is [`crate::Receipt::security_report`].

use crate::Error;
use zkrv_stark::StarkConfig;

/// The round-by-round soundness report (both regimes, BCHKS25; docs/stark.md "Security"): `Display` is
/// the table, [`SecurityReport::summary`] the one-line figure, [`SecurityReport::provable_bits`] the
/// Johnson-regime bits.
pub use zkrv_stark::security::SecurityReport;

/// The largest log2 table height the prover supports (2^26 rows).
pub const MAX_LOG_HEIGHT: usize = zkrv_stark::logup::MAX_LOG_HEIGHT;

/// log2 of the smallest table height of a proof under `config` (`zkrv_machine::min_height`: 8 rows
/// without zk; in zk mode enough rows to hide every opened evaluation): no proof has a table below it.
pub fn min_log_height(config: &StarkConfig) -> usize {
    zkrv_machine::min_height(config).trailing_zeros() as usize
}

/// The security of proofs under `config` with every table at `2^log_height` rows
/// (`zkrv_machine::worst_case_security`; the table shapes do not depend on the program, so a
/// one-instruction program stands for all). Errors: a height the machine does not take.
pub fn worst_case(config: &StarkConfig, log_height: usize) -> Result<SecurityReport, Error> {
    // `ecall` (exit): the smallest program there is.
    let exit = zkrv_executor::Program::from_words(0x1000, &[0x0000_0073u32])
        .map_err(|e| Error::Internal(format!("building the reference program: {e}")))?;
    Ok(zkrv_machine::worst_case_security(
        &exit, config, log_height,
    )?)
}
