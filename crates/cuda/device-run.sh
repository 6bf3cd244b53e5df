#!/usr/bin/env bash
# Runs the zkrv-cuda test and bench binaries on the GPU machine (no Rust there). Build them here first:
#   crates/cuda/device-build.sh        # copies stripped binaries into .device/
# then, on the device machine from the repo root: crates/cuda/device-run.sh [tests|bench|all]
# Logs go to $OUT (or ./device-out).
set -uo pipefail
out="${OUT:-./device-out}"
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
mode="${1:-all}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 | tee "$out/nvidia-smi.txt"
rc=0
if [ "$mode" = tests ] || [ "$mode" = all ]; then
    timeout 120 .device/kernels_compile --nocapture 2>&1 | tee "$out/kernels_compile.log" || rc=1
    ZKRV_CUDA_BIG=1 timeout 300 .device/parity --test-threads=1 --nocapture 2>&1 | tee "$out/parity.log" || rc=1
    timeout 120 .device/proof_parity --nocapture 2>&1 | tee "$out/proof_parity.log" || rc=1
    timeout 120 .device/fill_cpu --nocapture 2>&1 | tee "$out/fill_cpu.log" || rc=1
    timeout 300 .device/tracegen_e2e --nocapture 2>&1 | tee "$out/tracegen_e2e.log" || rc=1
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
    timeout 300 .device/gpu 2>&1 | tee "$out/bench.log" || rc=1
    timeout 300 .device/tracegen 2>&1 | tee "$out/bench-tracegen.log" || rc=1
    for v in ${ZKRV_NTT_VARIANTS:-}; do
        v="${v//,/ }"
        set -- $v
        ZKRV_BENCH_ONLY_NTT=1 ZKRV_NTT_KMAX=$1 ZKRV_NTT_TILE=$2 ZKRV_NTT_BLOCK=$3 timeout 60 .device/gpu 2>&1 | tee -a "$out/bench-ntt.log" || rc=1
    done
fi
exit $rc
