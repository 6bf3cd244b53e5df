#!/usr/bin/env bash
# On the GPU machine (no Rust): proves every guest with --backend cpu and --backend gpu, compares the proof bytes and
# verifies the GPU proof; also runs zkrv-cuda device tests. Build here first and copy, stripped, into .device/:
# target/release/zkrv (cargo build --release -p zkrv) and the kernels_compile, parity, proof_parity test binaries
# (scripts/device-build.sh). Logs go to $OUT.
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/smi.txt
(timeout 60 .device/kernels_compile 2>&1; timeout 120 .device/parity --test-threads=1 2>&1; timeout 60 .device/proof_parity 2>&1) | tee $OUT/tests.log | grep -E "test result|FAILED|SKIPPED|panicked"
for g in exitcode fibonacci sha256 keccak sort matmul modexp rv64im rustalloc; do
  in=""; [ -f guests/inputs/$g.bin ] && in="--input guests/inputs/$g.bin"
  t0=$(date +%s.%N); .device/zkrv prove guests/bin/$g.elf $in -o /tmp/$g.cpu.zkrv --backend cpu --zk-test-seed 1 >/tmp/c.log 2>&1 || { echo "$g cpu FAIL"; tail -3 /tmp/c.log; }
  t1=$(date +%s.%N); .device/zkrv prove guests/bin/$g.elf $in -o /tmp/$g.gpu.zkrv --backend gpu --zk-test-seed 1 --stats >$OUT/$g.gpu.log 2>&1 || { echo "$g gpu FAIL"; tail -3 $OUT/$g.gpu.log; }
  t2=$(date +%s.%N)
  if cmp -s /tmp/$g.cpu.zkrv /tmp/$g.gpu.zkrv; then same=identical; else same=DIFFERENT; fi
  .device/zkrv verify --any-exit-code /tmp/$g.gpu.zkrv guests/bin/$g.elf >/dev/null 2>&1 && v=verifies || v=REJECTED
  echo "$g: $same, $v, cpu $(awk "BEGIN{print $t1-$t0}") s, gpu $(awk "BEGIN{print $t2-$t1}") s, $(stat -c %s /tmp/$g.gpu.zkrv) bytes"
done | tee $OUT/guests.txt
