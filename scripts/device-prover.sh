#!/usr/bin/env bash
# On the GPU machine: the whole-prover figures (issue 12). Needs .device/ from scripts/device-build.sh and
# .device/inputs/sha256-{65536,131072,262144}.bin (random bytes). Steps, chosen by the arguments:
#   tests   every zkrv-cuda and zkrv-machine-cuda test binary (scripts/device-run.sh)
#   p22     sha256 at 2^22 cycles, --backend gpu, --no-zk and zk: --profile --stats, verify
#   big     2^22 zk under --gpu-memory 24 (cmp with p22's zk proof); zk at 2^23 and 2^24 cycles
#   cpu     2^22 --backend cpu (no-zk and zk, --zk-test-seed 1 against the GPU's) for the speedup and cmp
# Writes $OUT/summary.txt (short) and $OUT/logs.tgz (every log).
set -uo pipefail
OUT="${OUT:-./device-out}"; mkdir -p "$OUT"; L=/tmp/zkrv-prover-logs; rm -rf "$L"; mkdir -p "$L"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
Z=.device/zkrv; E=guests/bin/sha256.elf; I=.device/inputs
S="$OUT/summary.txt"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u; } | tee "$S"
T() { /usr/bin/time -f "wall %e s, maxrss %M KiB" "$@"; }
prove() { # tag input backend flags...
  local tag=$1 in=$2 b=$3; shift 3
  T $Z prove $E --input $I/$in -o /tmp/$tag.zkrv --backend $b --profile --stats "$@" > $L/$tag.txt 2>&1
  local rc=$?
  echo "== $tag rc=$rc ($b $*)" | tee -a "$S"
  grep -E "^\s+(main commit|LogUp aux|aux commit|quotient|quotient commit|DEEP\+FRI open|opened values|DEEP codewords|FRI layers|query rows) |^prove  |^total  |^stage host-copy|^stage open|^total:|peak host|peak device|device buffers|proof size|wall .* maxrss|error" $L/$tag.txt | tee -a "$S"
  if [ $rc -eq 0 ]; then $Z verify /tmp/$tag.zkrv $E --any-exit-code > $L/$tag.verify.txt 2>&1; echo "verify rc=$?" | tee -a "$S"; fi
}
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(tests p22)
for step in "${steps[@]}"; do
  case $step in
    tests) OUT=$L/tests bash scripts/device-run.sh > /dev/null 2>&1; grep -v "^test result" $L/tests/summary.txt | tee -a "$S" ;;
    p22) prove g22n sha256-65536.bin gpu --no-zk; prove g22z sha256-65536.bin gpu --zk-test-seed 1 ;;
    big) prove g22z24 sha256-65536.bin gpu --zk-test-seed 1 --gpu-memory 24
         [ -e /tmp/g22z.zkrv ] && cmp /tmp/g22z.zkrv /tmp/g22z24.zkrv \
           && echo "2^22 zk: --gpu-memory 24 (recomputed LDEs) and stored-LDE proofs identical" | tee -a "$S"
         prove g23z sha256-131072.bin gpu --zk-test-seed 1; prove g24z sha256-262144.bin gpu --zk-test-seed 1 ;;
    cpu) prove c22n sha256-65536.bin cpu --no-zk; prove c22z sha256-65536.bin cpu --zk-test-seed 1
         cmp /tmp/g22n.zkrv /tmp/c22n.zkrv && echo "2^22 no-zk: GPU and CPU proofs identical" | tee -a "$S"
         cmp /tmp/g22z.zkrv /tmp/c22z.zkrv && echo "2^22 zk (seed 1): GPU and CPU proofs identical" | tee -a "$S" ;;
  esac
done
tar czf "$OUT/logs.tgz" -C "$L" .
