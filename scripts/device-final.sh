#!/usr/bin/env bash
# On the GPU machine: the zkrv-cuda and zkrv-machine-cuda tests, the guest parity run (zk, seeded) and an ABBA comparison of GPU trace
# generation (B) against host traces (A) on SHA-256 at ~2^18 cycles. Needs .device/ from scripts/device-build.sh,
# .device/zkrv-abba and .device/inputs/sha256-4096.bin.
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
bash scripts/device-run.sh "$@" > /dev/null 2>&1; grep -v "^test result" "$OUT/summary.txt"
bash scripts/device-guest-parity.sh > "$OUT/guest-parity.txt" 2>&1; grep -v "^test result" "$OUT/guest-parity.txt" | tail -9
Z=.device/zkrv; E=guests/bin/sha256.elf; IN=.device/inputs/sha256-4096.bin
$Z prove $E --input $IN -o /tmp/zk.zkrv --backend gpu --stats > "$OUT/zk-stats.txt" 2>&1; echo "zk gpu prove rc=$?"
grep -E "avoided total|main-trace host->device|^total:" "$OUT/zk-stats.txt"
timeout 240 .device/zkrv-abba --pairs 8 --warmup 1 \
  --a "ZKRV_CPU_TRACE=1 $Z prove $E --input $IN -o /tmp/a.zkrv --backend gpu --no-zk" \
  --b "$Z prove $E --input $IN -o /tmp/b.zkrv --backend gpu --no-zk" > "$OUT/abba.txt" 2>&1
grep -v "^run " "$OUT/abba.txt" | tail -20
