#!/usr/bin/env bash
# On the GPU machine (no Rust): the issue-13 checks and figures of GPU trace generation (docs/gpu.md "Trace
# generation", docs/PERF.md). Build here first:
#   bash scripts/device-build.sh sort sort_simt memwalk requests regwalk tracegen_e2e proof_parity memory_budget \
#     fill_load fill_store fill_memw_a fill_memw fill_page fill_sysio
#   cargo build --release -p zkrv-bench --bin zkrv-abba && cp target/release/zkrv-abba .device/
# Then on the device: `bash scripts/device-tracegen.sh`. Logs go to $OUT (summary.txt, tests.tgz, figures.txt).
#   1. the device tests above (device parity of the sort, the memory walk, the request lists, every fill; whole
#      proofs byte-identical to host trace generation);
#   2. bench-tracegen at 2^22 (sha256 over 65,536 B): per-table fill times, the walks, the request lists;
#   3. `zkrv prove --backend gpu --profile --stats` at 2^22, zk and --no-zk, with GPU trace generation and with
#      --cpu-trace: trace generation time, host->device bytes per cycle, proofs byte-identical;
#   4. zkrv-abba, 2^22 --no-zk: GPU trace generation (B) vs --cpu-trace (A), whole command.
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT/t"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
Z=.device/zkrv; E=guests/bin/sha256.elf
S="$OUT/summary.txt"; : > "$S"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)"; date -u; } >> "$S"
fail=0
for t in sort sort_simt memwalk requests regwalk fill_load fill_store fill_memw_a fill_memw fill_page fill_sysio tracegen_e2e proof_parity memory_budget; do
  [ -x .device/$t ] || { echo "$t: not built" >> "$S"; continue; }
  timeout 120 .device/$t --test-threads=1 > "$OUT/t/$t.log" 2>&1; rc=$?
  [ $rc -ne 0 ] && fail=1
  echo "$t rc=$rc $(grep -E '^test result' "$OUT/t/$t.log" | tail -1)" >> "$S"
done
python3 -c 'import random; r=random.Random(7); open("/tmp/s22.bin","wb").write(bytes(r.randrange(256) for _ in range(65536)))'
ZKRV_BENCH_PROVE_MAX_CYCLES=0 timeout 120 .device/bench-tracegen sha256=/tmp/s22.bin > "$OUT/t/bench.log" 2>&1 || fail=1
F="$OUT/figures.txt"; grep -E "walk|request|fills total|host trace gen|^[A-Z0-9_]+ +[0-9]" "$OUT/t/bench.log" > "$F"
for zk in nozk zk; do
  flag="--no-zk"; [ $zk = zk ] && flag="--zk-test-seed 1"
  for tg in gpu cpu; do
    x=""; [ $tg = cpu ] && x="--cpu-trace"
    timeout 120 $Z prove $E --input /tmp/s22.bin -o /tmp/$zk-$tg.zkrv --backend gpu $flag $x --profile --stats > "$OUT/t/prove-$zk-$tg.log" 2>&1 || fail=1
    echo "$zk trace-gen on $tg: $(grep -E '\[2/5\]' "$OUT/t/prove-$zk-$tg.log" | tr -s ' ') | $(grep -E '^prove time' "$OUT/t/prove-$zk-$tg.log" | tr -s ' ') | $(grep -E 'trace-gen inputs' "$OUT/t/prove-$zk-$tg.log")" >> "$F"
  done
  cmp -s /tmp/$zk-gpu.zkrv /tmp/$zk-cpu.zkrv && echo "$zk: GPU trace generation and --cpu-trace proofs identical" >> "$F" || { echo "$zk: proofs DIFFER" >> "$F"; fail=1; }
  $Z verify /tmp/$zk-gpu.zkrv $E >/dev/null 2>&1 && echo "$zk: verifies" >> "$F" || { echo "$zk: REJECTED" >> "$F"; fail=1; }
done
if [ -x .device/zkrv-abba ]; then
  timeout 150 .device/zkrv-abba --pairs 6 --warmup 1 \
    --a "$Z prove $E --input /tmp/s22.bin -o /tmp/a.zkrv --backend gpu --no-zk --cpu-trace" \
    --b "$Z prove $E --input /tmp/s22.bin -o /tmp/b.zkrv --backend gpu --no-zk" > "$OUT/t/abba.log" 2>&1 || fail=1
  tail -12 "$OUT/t/abba.log" >> "$F"
fi
tar czf "$OUT/tests.tgz" -C "$OUT" t && rm -rf "$OUT/t"
cat "$S" "$F"
exit $fail
