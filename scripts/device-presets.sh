#!/usr/bin/env bash
# On the GPU machine (no Rust): the soundness presets on the GPU backend (issue 15, docs/stark.md "Security").
# Build here first: `bash scripts/device-build.sh kernels_compile` (copies .device/zkrv). Then on the device:
# `bash scripts/device-presets.sh`. Logs go to $OUT.
#   1. parity: for every preset (dev, 100, 128), zk (one --zk-test-seed) and --no-zk, small guests proven on the CPU
#      and the GPU backend: the proof files must be byte-identical, and verify (the dev preset with
#      --min-security 0; a dev proof must be refused by the default --min-security 100).
#   2. figures: sha256 at 2^20 and 2^22 cycles (fixed pseudo-random inputs of 16,000 and 65,536 B), every preset,
#      zk and not, on the GPU backend: proof size, prove stage and whole-command time, verify time. The GPU and CPU
#      proofs are byte-identical (1.), so the sizes are the CPU backend's too.
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
Z=.device/zkrv
fail=0
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)"; date -u; } | tee "$OUT/presets-hw.txt"
python3 -c 'import random,sys; r=random.Random(15); open("/tmp/s20.bin","wb").write(bytes(r.randrange(256) for _ in range(16000))); open("/tmp/s22.bin","wb").write(bytes(r.randrange(256) for _ in range(65536)))'

log="$OUT/presets-parity.log"; : > "$log"
for preset in dev 100 128; do
  for zk in zk nozk; do
    flag="--zk-test-seed 1"; [ $zk = nozk ] && flag="--no-zk"
    for g in fibonacci keccak sort; do
      for b in cpu gpu; do
        $Z prove guests/bin/$g.elf --input guests/inputs/$g.bin -o /tmp/p-$b.zkrv --backend $b --security $preset $flag >>"$log" 2>&1 \
          || { echo "$preset $zk $g $b: prove FAILED"; fail=1; }
      done
      if cmp -s /tmp/p-cpu.zkrv /tmp/p-gpu.zkrv; then same=identical; else same=DIFFERENT; fail=1; fi
      ms=100; [ $preset = dev ] && ms=0
      if $Z verify /tmp/p-gpu.zkrv guests/bin/$g.elf --min-security $ms >>"$log" 2>&1; then v=verifies; else v=REJECTED; fail=1; fi
      if [ $preset = dev ]; then
        if $Z verify /tmp/p-gpu.zkrv guests/bin/$g.elf >>"$log" 2>&1; then v="$v, default min-security ACCEPTED"; fail=1;
        else v="$v, refused at min-security 100"; fi
      fi
      echo "preset $preset $zk $g: cpu/gpu $same ($(stat -c %s /tmp/p-gpu.zkrv) B), $v"
    done
  done
done

echo "preset zk size proof_bytes prove_stage_s command_s verify_s" | tee "$OUT/presets-figures.txt"
for preset in 100 128 dev; do
  for zk in zk nozk; do
    flag=""; [ $zk = nozk ] && flag="--no-zk"
    for s in 20 22; do
      f="$OUT/presets-$preset-$zk-$s.log"
      t0=$(date +%s.%N)
      if ! $Z prove guests/bin/sha256.elf --input /tmp/s$s.bin -o /tmp/s.zkrv --backend gpu --security $preset $flag --profile >"$f" 2>&1; then
        echo "$preset $zk 2^$s: prove FAILED"; tail -3 "$f"; fail=1; continue
      fi
      t1=$(date +%s.%N)
      ms=100; [ $preset = dev ] && ms=0
      $Z verify /tmp/s.zkrv guests/bin/sha256.elf --min-security $ms >>"$f" 2>&1 || { echo "$preset $zk 2^$s: REJECTED"; fail=1; }
      t2=$(date +%s.%N)
      stage=$(awk '$1=="prove" && NF>=3 {print $2; exit}' "$f")
      echo "$preset $zk 2^$s $(stat -c %s /tmp/s.zkrv) $stage $(awk "BEGIN{printf \"%.2f %.3f\", $t1-$t0, $t2-$t1}")" | tee -a "$OUT/presets-figures.txt"
    done
  done
done
exit $fail
