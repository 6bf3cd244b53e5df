#!/usr/bin/env bash
# On the GPU machine (no Rust): runs the test binaries in .device/ (from scripts/device-build.sh) one by one, with
# the GPU parts active, and summarises. Logs under $OUT. The tests find guests/ through the build machine's path
# (CARGO_MANIFEST_DIR), so that path is linked to this checkout when it does not exist.
#   bash scripts/device-run.sh [BINARY ...]          # default: every test binary in .device/
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/smi.txt"
bins=("$@")
[ ${#bins[@]} -eq 0 ] && bins=($(ls .device | grep -v -E '^(zkrv|zkrv-abba|inputs|bench-.*|.*\.sh)$'))
for b in "${bins[@]}"; do
  t0=$(date +%s.%N)
  timeout 300 ".device/$b" --test-threads=1 --nocapture > "$OUT/$b.log" 2>&1; rc=$?
  t1=$(date +%s.%N)
  res=$(grep -E "^test result" "$OUT/$b.log" | tail -1)
  skips=$(grep -c "SKIPPED" "$OUT/$b.log")
  printf "%-22s rc=%s %5.1fs skips=%s %s\n" "$b" "$rc" "$(awk "BEGIN{print $t1-$t0}")" "$skips" "$res"
  grep -E "panicked|FAILED|failed" "$OUT/$b.log" | head -5
done | tee "$OUT/summary.txt"
