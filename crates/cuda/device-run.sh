#!/usr/bin/env bash
# Runs the zkrv-cuda and zkrv-machine-cuda test and bench binaries on the GPU machine (no Rust there). Build them here first:
#   bash scripts/device-build.sh       # copies stripped test binaries and bench-<name> binaries into .device/
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
    # Every test binary of both crates, one by one (summary in $out/summary.txt).
    OUT="$out" bash scripts/device-run.sh || rc=1
    grep -q -E "rc=[1-9]" "$out/summary.txt" && rc=1
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
    timeout 300 .device/bench-gpu 2>&1 | tee "$out/bench.log" || rc=1
    timeout 300 .device/bench-tracegen 2>&1 | tee "$out/bench-tracegen.log" || rc=1
    for v in ${ZKRV_NTT_VARIANTS:-}; do
        v="${v//,/ }"
        set -- $v
        ZKRV_BENCH_ONLY_NTT=1 ZKRV_NTT_KMAX=$1 ZKRV_NTT_TILE=$2 ZKRV_NTT_BLOCK=$3 timeout 60 .device/bench-gpu 2>&1 | tee -a "$out/bench-ntt.log" || rc=1
    done
fi
exit $rc
