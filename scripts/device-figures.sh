#!/usr/bin/env bash
# On the GPU machine: the issue-6 / issue-4 figures (trace generation per table GPU vs CPU, main-trace H2D with and
# without GPU trace generation, ABBA end-to-end with and without it, SHA-256 at 2^20 and 2^22 cycles on the CPU and
# GPU backends). Needs .device/{zkrv,zkrv-abba,bench-tracegen} and .device/inputs/sha256-{16384,65536}.bin.
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
Z=.device/zkrv; E=guests/bin/sha256.elf; I=.device/inputs
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)"; date -u; } > "$OUT/hw.txt"
cat "$OUT/hw.txt"
# 1. Trace generation per table (every guest + sha256 at ~2^20 end to end; fills only for the bigger ones).
ZKRV_BENCH_PROVE_MAX_CYCLES=1100000 timeout 240 .device/bench-tracegen sort sha256=$I/sha256-16384.bin sha256=$I/sha256-65536.bin sha256:1048576 > "$OUT/tracegen.txt" 2>&1
grep -E "^==|speedup|^CPU |^LT |^LOAD |^STORE |^MEMW_A |^SHIFT |fills total|main-trace host->device|^prove," "$OUT/tracegen.txt" | head -60
# 2. Stats at 2^20: GPU trace generation vs host traces (main-trace H2D).
$Z prove $E --input $I/sha256-16384.bin -o /tmp/g.zkrv --backend gpu --stats > "$OUT/stats-gputrace.txt" 2>&1
ZKRV_CPU_TRACE=1 $Z prove $E --input $I/sha256-16384.bin -o /tmp/h.zkrv --backend gpu --stats > "$OUT/stats-hosttrace.txt" 2>&1
cmp /tmp/g.zkrv /tmp/h.zkrv && echo "2^20: GPU-trace and host-trace proofs identical"
grep -i -E "main-trace|total" "$OUT/stats-gputrace.txt" "$OUT/stats-hosttrace.txt" | head -12
# 3. ABBA end to end at 2^20: A = host traces, B = GPU trace generation.
timeout 200 .device/zkrv-abba --pairs 6 --warmup 1 \
  --a "ZKRV_CPU_TRACE=1 $Z prove $E --input $I/sha256-16384.bin -o /tmp/a.zkrv --backend gpu" \
  --b "$Z prove $E --input $I/sha256-16384.bin -o /tmp/b.zkrv --backend gpu" > "$OUT/abba.txt" 2>&1
tail -15 "$OUT/abba.txt"
# 4. 2^22 cycles: CPU backend (16 cores) and GPU backend, profile + verify.
for b in gpu cpu; do
  timeout 200 $Z prove $E --input $I/sha256-65536.bin -o /tmp/s22.$b.zkrv --backend $b --profile > "$OUT/p22-$b.txt" 2>&1
  grep -E "cycles/s|proof size|peak|Maximum resident|Elapsed|total" "$OUT/p22-$b.txt" | head -8
  $Z verify /tmp/s22.$b.zkrv $E > "$OUT/v22-$b.txt" 2>&1; echo "verify rc=$? $(tail -1 $OUT/v22-$b.txt)"
done
cmp /tmp/s22.gpu.zkrv /tmp/s22.cpu.zkrv && echo "2^22: GPU and CPU proofs identical"
