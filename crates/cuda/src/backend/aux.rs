//! The LogUp aux build on the device (`AuxOps`, [`crate::logup::build_aux_device_strided`]): reads the
//! committed main (and preprocessed) traces where they are and leaves the aux trace resident for the aux
//! commitment. Mirrors `zkrv_stark::backend` (`backend/cpu.rs`, `build_aux`).

use std::sync::atomic::Ordering;

use zkrv_stark::air::CompiledAir;
use zkrv_stark::backend::{strided_rows, AuxError, AuxOps, BackendError, TraceInput};
use zkrv_stark::field::Ext3;
use zkrv_stark::logup::LogupChallenges;

use super::{aux_err, cpu_aux_forced, CudaBackend, CudaCommitted, DeviceTrace};
use crate::logup::build_aux_device_strided;
use crate::stats::TransferStats;

impl AuxOps for CudaBackend {
    fn build_aux(
        &self,
        air: &CompiledAir,
        main: &CudaCommitted,
        table: usize,
        main_row_stride: usize,
        preprocessed: Option<(&CudaCommitted, usize)>,
        challenges: &LogupChallenges,
        log_max_multiplicity: u32,
    ) -> Result<(TraceInput<DeviceTrace>, Ext3), AuxError> {
        if cpu_aux_forced() {
            let m = strided_rows(
                std::borrow::Cow::Borrowed(self.host_trace(main, table)?),
                main_row_stride,
            );
            let p = match preprocessed {
                Some((c, i)) => Some(self.host_trace(c, i)?),
                None => None,
            };
            let (aux, sum) =
                zkrv_stark::logup::build_aux_trace(air, &m, p, challenges, log_max_multiplicity)?;
            return Ok((TraceInput::Host(aux), sum));
        }
        let poisoned = || AuxError::Backend(BackendError::Device("poisoned lock".into()));
        let released = |c: &CudaCommitted, i: usize| {
            AuxError::Backend(BackendError::Device(format!(
                "trace c{}.t{i} was released before its aux build",
                c.round
            )))
        };
        let dims = main
            .dims
            .get(table)
            .ok_or_else(|| AuxError::Backend(BackendError::Device(format!("no trace {table}"))))?;
        let naturals = main.naturals.lock().map_err(|_| poisoned())?;
        // A recomputing round keeps no natural traces: rebuilt from the coefficients for this build only.
        let rebuilt = |c: &CudaCommitted, i: usize| -> Result<_, AuxError> {
            c.natural_from_coeffs(&self.dev, i)
                .map_err(AuxError::Backend)?
                .ok_or_else(|| released(c, i))
        };
        let tmp_main;
        let d_main = match naturals.get(table).and_then(Option::as_ref) {
            Some(b) => b,
            None => {
                tmp_main = rebuilt(main, table)?;
                &tmp_main
            }
        };
        let prep_guard = match preprocessed {
            Some((c, _)) => Some(c.naturals.lock().map_err(|_| poisoned())?),
            None => None,
        };
        let tmp_prep;
        let d_prep = match (preprocessed, &prep_guard) {
            (Some((c, i)), Some(g)) => Some(match g.get(i).and_then(Option::as_ref) {
                Some(b) => b,
                None => {
                    tmp_prep = rebuilt(c, i)?;
                    &tmp_prep
                }
            }),
            _ => None,
        };
        main.aux_read.store(true, Ordering::Relaxed);
        let name = self.table_name(main.round, table);
        let mut stats = TransferStats::default();
        // zk: the committed main trace is `2n` rows (stride 2), the aux trace `n`.
        let stride_log = main_row_stride.max(1).trailing_zeros() as usize;
        if !main_row_stride.is_power_of_two() || dims.log_height < stride_log {
            return Err(AuxError::Backend(BackendError::Device(format!(
                "aux build of `{name}`: row stride {main_row_stride} of a 2^{} row trace",
                dims.log_height
            ))));
        }
        let built = build_aux_device_strided(
            &self.dev,
            air,
            d_main,
            main_row_stride,
            (dims.log_height - stride_log) as u32,
            d_prep,
            challenges,
            log_max_multiplicity,
            &mut stats,
            &name,
        );
        self.record(|s| s.merge(&stats));
        let (aux, sum) = built.map_err(aux_err)?;
        // The aux trace enters the aux commitment resident: the host build's upload is gone.
        // (In zk mode the host build uploaded the randomized `2n`-row aux trace.)
        let up = aux.data.num_bytes() as u64 * main_row_stride as u64;
        self.record(|s| s.add_avoided_h2d("aux-upload", &name, up));
        Ok((TraceInput::Device(aux), sum))
    }
}
