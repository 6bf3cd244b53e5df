//! The quotient round (`QuotientOps`). Not on the device yet: the quotient of a table runs
//! `zkrv_stark::backend::quotient_host` over the host copies of the rounds it reads
//! ([`CudaBackend::host_round`], stage "host-copy"), and the chunks, zk masks and random codeword are host
//! matrices uploaded by the quotient commitment. Mirrors `zkrv_stark::backend` (`backend/quotient.rs`).

use std::borrow::Cow;

use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::{
    quotient_host, BackendError, MatrixView, QuotientInputs, QuotientOps, QuotientViews, TraceInput,
};
use zkrv_stark::field::Ext3;
use zkrv_stark::logup::LogupChallenges;
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::zk::{self as host_zk, ZkRng};

use super::{dev_err, CudaBackend, CudaCommitted, DeviceTrace};

impl CudaBackend {
    /// The host copy of one committed LDE (bit-reversed, `nB x w`).
    fn host_lde<'a>(
        &self,
        v: MatrixView<'a, CudaCommitted>,
    ) -> Result<&'a RowMajorMatrix, BackendError> {
        self.host_round(v.round)
            .map_err(dev_err)?
            .tree
            .matrices()
            .get(v.index)
            .ok_or_else(|| BackendError::Shape(format!("round has no matrix {}", v.index)))
    }
}

fn host_only(t: TraceInput<DeviceTrace>, what: &str) -> Result<RowMajorMatrix, BackendError> {
    match t {
        TraceInput::Host(m) => Ok(m),
        TraceInput::Device(_) => Err(BackendError::Device(format!(
            "{what}: a device-resident quotient matrix is not supported yet"
        ))),
    }
}

impl QuotientOps for CudaBackend {
    fn quotient(
        &self,
        air: &CompiledAir,
        v: QuotientViews<'_, CudaCommitted>,
        challenges: &LogupChallenges,
        bus_sum: Ext3,
        alpha: Ext3,
    ) -> Result<TraceInput<DeviceTrace>, BackendError> {
        let main = self.host_lde(v.main)?;
        let prep = v.preprocessed.map(|p| self.host_lde(p)).transpose()?;
        let aux = v.aux.map(|a| self.host_lde(a)).transpose()?;
        // The whole stored LDE is one block, read in place.
        let block_rows = main.height();
        let fetch = |b: usize| -> Result<QuotientInputs<'_>, BackendError> {
            let start = b * block_rows;
            Ok(QuotientInputs {
                main: (Cow::Borrowed(main), start),
                preprocessed: prep.map(|m| (Cow::Borrowed(m), start)),
                aux: aux.map(|m| (Cow::Borrowed(m), start)),
            })
        };
        let q = quotient_host(
            air,
            v.log_n,
            v.log_blowup,
            block_rows,
            &fetch,
            challenges,
            bus_sum,
            alpha,
        )?;
        Ok(TraceInput::Host(q))
    }

    fn randomize_quotient(
        &self,
        chunks: TraceInput<DeviceTrace>,
        rng: &ZkRng,
        table: u64,
        num_queries: usize,
    ) -> Result<TraceInput<DeviceTrace>, BackendError> {
        let q = host_only(chunks, "randomize_quotient")?;
        Ok(TraceInput::Host(host_zk::randomize_quotient(
            q,
            rng,
            table,
            num_queries,
        )))
    }

    fn random_codeword(
        &self,
        rng: &ZkRng,
        log_height: usize,
    ) -> Result<TraceInput<DeviceTrace>, BackendError> {
        Ok(TraceInput::Host(host_zk::random_codeword(rng, log_height)))
    }
}
