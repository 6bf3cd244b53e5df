//! DEEP + FRI operations (`OpeningOps`; the protocol is `zkrv_stark::pcs::open`). Not on the device yet:
//! every operation runs the CPU backend's over the host copies of the committed rounds
//! ([`CudaBackend::host_round`], stage "host-copy"); codewords and FRI layers are host data. Mirrors
//! `zkrv_stark::backend` (`backend/open.rs`).

use zkrv_stark::backend::{
    BackendError, CpuBackend, CpuCommitted, DeepTerm, MatrixView, OpeningOps,
};
use zkrv_stark::field::Ext3;
use zkrv_stark::merkle::{Digest, MerkleTree};
use zkrv_stark::pcs::{BatchOpening, FriLayerOpening, OpenedValues};
use zkrv_stark::zk::ZkRng;

use super::{dev_err, CudaBackend, CudaCommitted};

const HOST: CpuBackend = CpuBackend::new(zkrv_stark::backend::LdeMode::Store);

impl OpeningOps for CudaBackend {
    fn evaluate(
        &self,
        rounds: &[(&CudaCommitted, &[Vec<Ext3>])],
        log_blowup: usize,
    ) -> Result<OpenedValues, BackendError> {
        let host: Vec<(&CpuCommitted, &[Vec<Ext3>])> = rounds
            .iter()
            .map(|(c, p)| Ok((self.host_round(c).map_err(dev_err)?, *p)))
            .collect::<Result<_, BackendError>>()?;
        HOST.evaluate(&host, log_blowup)
    }

    fn deep_codeword(
        &self,
        log_height: usize,
        log_blowup: usize,
        terms: &[DeepTerm<'_, CudaCommitted>],
        alpha: Ext3,
    ) -> Result<Vec<Ext3>, BackendError> {
        let host: Vec<DeepTerm<'_, CpuCommitted>> = terms
            .iter()
            .map(|t| {
                Ok(DeepTerm {
                    matrix: MatrixView {
                        round: self.host_round(t.matrix.round).map_err(dev_err)?,
                        index: t.matrix.index,
                    },
                    points: t.points,
                    values: t.values,
                    k0: t.k0,
                })
            })
            .collect::<Result<_, BackendError>>()?;
        HOST.deep_codeword(log_height, log_blowup, &host, alpha)
    }

    fn commit_fri_layer(
        &self,
        codeword: &Vec<Ext3>,
        salt: Option<(&ZkRng, u32)>,
    ) -> Result<(Digest, MerkleTree), BackendError> {
        HOST.commit_fri_layer(codeword, salt)
    }

    fn fold_fri_layer(
        &self,
        codeword: Vec<Ext3>,
        log_size: usize,
        beta: Ext3,
        roll_in: Option<Vec<Ext3>>,
    ) -> Result<Vec<Ext3>, BackendError> {
        HOST.fold_fri_layer(codeword, log_size, beta, roll_in)
    }

    fn final_codeword(&self, codeword: Vec<Ext3>) -> Result<Vec<Ext3>, BackendError> {
        Ok(codeword)
    }

    fn open_rows(
        &self,
        c: &CudaCommitted,
        indices: &[usize],
    ) -> Result<Vec<BatchOpening>, BackendError> {
        HOST.open_rows(self.host_round(c).map_err(dev_err)?, indices)
    }

    fn open_fri_layer(
        &self,
        layer: &MerkleTree,
        indices: &[usize],
    ) -> Result<Vec<FriLayerOpening>, BackendError> {
        HOST.open_fri_layer(layer, indices)
    }
}
