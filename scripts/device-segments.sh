#!/usr/bin/env bash
# On the GPU machine (no Rust): segmented proofs on the GPU engine (docs/continuations.md §5a). Build here first:
# `bash scripts/device-build.sh kernels_compile` (copies .device/zkrv, built with its default `cuda` feature).
# Then on the device: `bash scripts/device-segments.sh [quick|long|2mib]` (default quick). Logs go to $OUT.
#   quick: sha256 in 3 segments of 4096 rows, sha256_accel and keccak_accel in segments of 1024 rows
#          (precompile calls) and modexp in 16 segments of 16384 rows, GPU (traces built on the device; sha256 also --cpu-trace) vs CPU
#          with one --zk-test-seed: the files must be byte-identical and verify, and the GPU's main-trace
#          host->device bytes 0 per segment; with several GPUs, --gpus all must give the same bytes and use
#          every device (the --profile worker column).
#   long:  sha256 on 1.1 MB of zeros (about 70M cycles, more than one proof holds): automatic segments of 2^22
#          rows on the GPU(s), --profile (witness / prove / wait seconds per segment, peak memory), verify.
#   2mib:  sha256 on 2 MiB of zeros (133M cycles, 32 segments of 2^22 rows), --no-zk, --profile --stats:
#          the cycles/s figure of issue 28 and the per-segment main-trace host->device bytes (must be 0).
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
Z=.device/zkrv
mode="${1:-quick}"
ngpu=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/smi.txt"
fail=0
# prove NAME ELF INPUT ROWS BACKEND EXTRA...: writes /tmp/NAME.zkrv, the log to $OUT/NAME.log.
prove() {
  local name=$1 elf=$2 input=$3 rows=$4 backend=$5; shift 5
  local t0; t0=$(date +%s.%N)
  if ! $Z prove "guests/bin/$elf.elf" --input "$input" -o "/tmp/$name.zkrv" --segment-cycles "$rows" \
      --backend "$backend" --zk-test-seed 1 --public-segment-boundaries --profile --stats "$@" >"$OUT/$name.log" 2>&1; then
    echo "$name: prove FAILED"; tail -5 "$OUT/$name.log"; fail=1; return
  fi
  echo "$name: $(grep -m1 '^segments' "$OUT/$name.log"), $(awk "BEGIN{print $(date +%s.%N)-$t0}") s"
}
same() {
  if cmp -s "/tmp/$1.zkrv" "/tmp/$2.zkrv"; then echo "$1 == $2: identical"; else echo "$1 vs $2: DIFFERENT"; fail=1; fi
}
verifies() {
  if $Z verify "/tmp/$1.zkrv" "guests/bin/$2.elf" >"$OUT/$1.verify.log" 2>&1; then echo "$1: verifies";
  else echo "$1: REJECTED"; tail -3 "$OUT/$1.verify.log"; fail=1; fi
}
workers() { # the distinct workers of the --profile per-segment table
  awk '/^segment +worker/{t=1; next} t && /^[0-9]+ /{print $2} t && !/^[0-9]+ /{t=0}' "$OUT/$1.log" | sort -u | tr '\n' ' '
}
if [ "$mode" = quick ]; then
  prove sha256-cpu sha256 guests/inputs/sha256.bin 4096 cpu
  prove sha256-gpu sha256 guests/inputs/sha256.bin 4096 gpu
  same sha256-cpu sha256-gpu; verifies sha256-gpu sha256
  grep -q "trace generation    device (.*main-trace host->device 0 bytes per segment" "$OUT/sha256-gpu.log" \
    && echo "sha256-gpu: traces built on the device, 0 main-trace bytes" || { echo "sha256-gpu: no device trace generation line"; fail=1; }
  prove sha256-gpu-host sha256 guests/inputs/sha256.bin 4096 gpu --cpu-trace
  same sha256-cpu sha256-gpu-host
  grep -q "trace generation    host (--cpu-trace)" "$OUT/sha256-gpu-host.log" \
    && echo "sha256-gpu-host: --cpu-trace uploads" || { echo "sha256-gpu-host: no host trace generation line"; fail=1; }
  prove accel-cpu sha256_accel guests/inputs/sha256_accel.bin 1024 cpu
  prove accel-gpu sha256_accel guests/inputs/sha256_accel.bin 1024 gpu
  same accel-cpu accel-gpu; verifies accel-gpu sha256_accel
  prove keccak-cpu keccak_accel guests/inputs/keccak_accel.bin 1024 cpu
  prove keccak-gpu keccak_accel guests/inputs/keccak_accel.bin 1024 gpu
  same keccak-cpu keccak-gpu; verifies keccak-gpu keccak_accel
  prove modexp-cpu modexp guests/inputs/modexp.bin 16384 cpu
  prove modexp-gpu modexp guests/inputs/modexp.bin 16384 gpu
  same modexp-cpu modexp-gpu; verifies modexp-gpu modexp
  echo "modexp-gpu: workers $(workers modexp-gpu)"
  if [ "$ngpu" -gt 1 ]; then
    prove modexp-gpus modexp guests/inputs/modexp.bin 16384 gpu --gpus all
    same modexp-cpu modexp-gpus; verifies modexp-gpus modexp
    w=$(workers modexp-gpus); echo "modexp-gpus: workers $w (of $ngpu GPUs)"
    [ "$(echo $w | wc -w)" -eq "$ngpu" ] || { echo "modexp-gpus: not every GPU proved a segment"; fail=1; }
  fi
elif [ "$mode" = 2mib ]; then
  head -c 2097152 /dev/zero > /tmp/zeros2m.bin
  t0=$(date +%s.%N)
  if $Z prove guests/bin/sha256.elf --input /tmp/zeros2m.bin -o /tmp/2mib.zkrv --backend gpu --no-zk \
      --profile --stats --profile-json "$OUT/2mib.json" >"$OUT/2mib.log" 2>&1; then
    echo "2mib: $(grep -m1 '^segments' "$OUT/2mib.log"), $(awk "BEGIN{print $(date +%s.%N)-$t0}") s end to end"
    grep -E "prove time|trace generation  |main-trace host->device|^total:|peak" "$OUT/2mib.log"
    verifies 2mib sha256
  else
    echo "2mib: prove FAILED"; tail -8 "$OUT/2mib.log"; fail=1
  fi
else
  head -c 1100000 /dev/zero > /tmp/zeros.bin
  t0=$(date +%s.%N)
  if $Z prove guests/bin/sha256.elf --input /tmp/zeros.bin -o /tmp/long.zkrv --backend gpu --gpus all \
      --public-segment-boundaries --profile --profile-json "$OUT/long.json" >"$OUT/long.log" 2>&1; then
    echo "long: $(grep -m1 '^segments' "$OUT/long.log"), $(awk "BEGIN{print $(date +%s.%N)-$t0}") s"
    grep -E "longer than one proof|^segment +worker|^[0-9]+ +[0-9]+ |peak|prove time" "$OUT/long.log"
    verifies long sha256
  else
    echo "long: prove FAILED"; tail -8 "$OUT/long.log"; fail=1
  fi
fi
exit $fail
