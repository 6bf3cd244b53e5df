//! The quotient round (`QuotientOps`) on the device ([`crate::quotient`]): the quotient chunks of a table
//! are computed from the resident LDEs of its main, preprocessed and aux traces by the table's generated
//! quotient kernel and the chunk assembly (coset IDFT, split, DFT), and stay resident
//! (`TraceInput::Device`, `n x 3c`) for the quotient commitment; in zk mode the chunks are masked and the
//! random codeword generated on the device too. No LDE is copied to the host. Mirrors `zkrv_stark::backend`
//! (`backend/quotient.rs`).

use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::{BackendError, MatrixView, QuotientOps, QuotientViews, TraceInput};
use zkrv_stark::field::Ext3;
use zkrv_stark::logup::LogupChallenges;
use zkrv_stark::zk::{self as host_zk, ZkRng};

use super::{dev_err, CudaBackend, CudaCommitted, DeviceTrace};
use crate::commit::DeviceLde;
use crate::quotient::{quotient_device, random_codeword_device, randomize_quotient_device};
use crate::stats::TransferStats;

/// The device LDE of a view (stored or recomputed, bit-reversed, `nB x w`).
fn lde<'a>(v: MatrixView<'a, CudaCommitted>) -> Result<&'a DeviceLde, BackendError> {
    v.round
        .gpu
        .ldes
        .get(v.index)
        .ok_or_else(|| BackendError::Shape(format!("round has no matrix {}", v.index)))
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
        let name = self.table_name(v.main.round.round, v.main.index);
        let mut stats = TransferStats::default();
        let q = quotient_device(
            &self.dev,
            air,
            lde(v.main)?,
            v.preprocessed.map(lde).transpose()?,
            v.aux.map(lde).transpose()?,
            v.log_n,
            v.log_blowup,
            challenges,
            bus_sum,
            alpha,
            &mut stats,
            &name,
        );
        self.record(|s| s.merge(&stats));
        Ok(TraceInput::Device(q.map_err(dev_err)?))
    }

    /// Device chunks: masked on the device (bit-exact with the host function); host chunks: the host
    /// function.
    fn randomize_quotient(
        &self,
        chunks: TraceInput<DeviceTrace>,
        rng: &ZkRng,
        table: u64,
        num_queries: usize,
    ) -> Result<TraceInput<DeviceTrace>, BackendError> {
        match chunks {
            TraceInput::Host(q) => Ok(TraceInput::Host(host_zk::randomize_quotient(
                q,
                rng,
                table,
                num_queries,
            ))),
            TraceInput::Device(d) => Ok(TraceInput::Device(
                randomize_quotient_device(&self.dev, &d, rng, table, num_queries)
                    .map_err(dev_err)?,
            )),
        }
    }

    fn random_codeword(
        &self,
        rng: &ZkRng,
        log_height: usize,
    ) -> Result<TraceInput<DeviceTrace>, BackendError> {
        Ok(TraceInput::Device(
            random_codeword_device(&self.dev, rng, log_height).map_err(dev_err)?,
        ))
    }
}
