//! Proving with the CUDA backend.
//!
//! `zkrv_machine` has no entry point that takes a prover backend yet (`prove_witness` always uses the CPU),
//! so this module mirrors `zkrv_machine::prove_witness` with `zkrv_stark::prove_with`: same tables in the same
//! order, same preprocessed traces and public interactions. If the machine's table list changes, the trace
//! count or widths stop matching and proving fails with [`GpuProveError::TableMismatch`] or a prover shape
//! error; the caller also verifies the proof before writing it. To be replaced by
//! `zkrv_machine::prove_with_backend` once it exists.

use zkrv_executor::Program;
use zkrv_machine::tables::bitwise::{bitwise_preprocessed, BitwiseAir};
use zkrv_machine::tables::bytewise::BytewiseAir;
use zkrv_machine::tables::cpu::CpuAir;
use zkrv_machine::tables::cpu32::Cpu32Air;
use zkrv_machine::tables::decode::{DecodeAir, DecodeTable};
use zkrv_machine::tables::dvrm::DvrmAir;
use zkrv_machine::tables::eq::EqAir;
use zkrv_machine::tables::input::InputAir;
use zkrv_machine::tables::load::LoadAir;
use zkrv_machine::tables::lt::LtAir;
use zkrv_machine::tables::memw::MemwAir;
use zkrv_machine::tables::memw_a::MemwAAir;
use zkrv_machine::tables::mul::MulAir;
use zkrv_machine::tables::page::PageAir;
use zkrv_machine::tables::regfile::RegfileAir;
use zkrv_machine::tables::shift::{pow2_preprocessed, Pow2Air, ShiftAir};
use zkrv_machine::tables::store::StoreAir;
use zkrv_machine::tables::sysio::{SyscallAir, SysioAir};
use zkrv_machine::{
    memory_init_interactions, public_interactions, Proof, Statement, Witness, MIN_HEIGHT,
};
use zkrv_stark::air::Air;
use zkrv_stark::backend::TraceInput;
use zkrv_stark::{preprocess, prove_with, StarkConfig};

/// Number of tables of the machine this module mirrors.
pub const NUM_TABLES: usize = 20;

/// Why the GPU path could not prove.
#[derive(Debug, thiserror::Error)]
pub enum GpuProveError {
    #[error("the machine produced {traces} traces but the CLI's GPU path knows {tables} tables: this zkrv_machine changed its table list (the GPU path needs zkrv_machine::prove_with_backend); use --backend cpu")]
    TableMismatch { traces: usize, tables: usize },
    #[error("bad program: {0}")]
    BadProgram(String),
    #[error(transparent)]
    Machine(#[from] zkrv_machine::MachineError),
    #[error("prover: {0}")]
    Prove(#[from] zkrv_stark::ProveError),
}

/// `zkrv_machine::prove_witness` on `backend`.
pub fn prove_witness(
    backend: &zkrv_cuda::CudaBackend,
    program: &Program,
    witness: Witness,
    config: &StarkConfig,
) -> Result<(Statement, Proof), GpuProveError> {
    let entry = u32::try_from(program.entry)
        .map_err(|_| GpuProveError::BadProgram(format!("entry {:#x} >= 2^32", program.entry)))?;
    let decode = DecodeTable::new(program)?;
    let cpu = CpuAir { entry };
    let airs: Vec<&dyn Air> = vec![
        &cpu,
        &DecodeAir,
        &BitwiseAir,
        &RegfileAir,
        &EqAir,
        &LtAir,
        &LoadAir,
        &StoreAir,
        &MemwAAir,
        &PageAir,
        &BytewiseAir,
        &SyscallAir,
        &SysioAir,
        &InputAir,
        &Cpu32Air,
        &DvrmAir,
        &ShiftAir,
        &Pow2Air,
        &MulAir,
        &MemwAir,
    ];
    debug_assert_eq!(airs.len(), NUM_TABLES);
    if witness.traces.len() != airs.len() {
        return Err(GpuProveError::TableMismatch {
            traces: witness.traces.len(),
            tables: airs.len(),
        });
    }
    let mut prep = vec![None; airs.len()];
    prep[1] = Some(decode.preprocessed_trace(MIN_HEIGHT));
    prep[2] = Some(bitwise_preprocessed());
    prep[17] = Some(pow2_preprocessed());
    let pre = preprocess(config, &airs, prep)?;
    let mut public = public_interactions(&witness.statement);
    public.extend(
        memory_init_interactions(program, &witness.pages).map_err(GpuProveError::BadProgram)?,
    );
    let stark = prove_with(
        backend,
        config,
        &airs,
        &pre,
        witness.traces.into_iter().map(TraceInput::Host).collect(),
        &public,
        &witness.statement.to_bytes(),
    )?;
    Ok((
        witness.statement,
        Proof {
            pages: witness.pages,
            stark,
        },
    ))
}
