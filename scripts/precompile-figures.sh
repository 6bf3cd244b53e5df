#!/usr/bin/env bash
# Issue 25 figures (docs/PERF.md "Precompiles"): the software hash guests (sha256, keccak) against their
# precompile twins (sha256_accel, keccak_accel) on random inputs of 64 KiB and 1 MiB: cycles (`zkrv run`),
# trace cells per table (crates/machine/examples/trace_cells.rs; the same on every backend), and per mode
# (100-bit preset, --no-zk and zk) prove time, peak memory and proof size (`zkrv prove --profile`), each
# proof verified once. Writes OUT/summary.txt and one log per step.
#
# On the GPU machine: uses .device/zkrv (scripts/device-build.sh) and BACKEND=gpu; trace cells are skipped
# unless .device/trace_cells exists (they are the CPU run's). Elsewhere: builds the zkrv CLI and the
# trace_cells example with cargo and proves with BACKEND=cpu.
#   bash scripts/precompile-figures.sh [OUT]                   (default OUT=/tmp/precompile-figures)
# Environment: SIZES (default "65536 1048576"), GUESTS (default "sha256 sha256_accel keccak keccak_accel"),
# MODES (default "no-zk zk"; "none": cycles and cells only), SKIP (space-separated guest:size:mode to leave unproven, e.g.
# "sha256:1048576:zk"), BACKEND, PROVE_TIMEOUT (seconds per proof, default 3600). A CPU proof whose estimate
# is above 1 hour is refused by zkrv (its estimate is logged) unless YES=1 passes --yes.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/precompile-figures}"
mkdir -p "$out"
if [ -x .device/zkrv ]; then
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export ZKRV_CUDA_CACHE_DIR=/tmp/zkrv-cuda-cache
  [ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
  Z=.device/zkrv; CELLS=.device/trace_cells; BACKEND="${BACKEND:-gpu}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/hw.txt" 2>&1
else
  cargo build --release -q -p zkrv && cargo build --release -q -p zkrv-machine --example trace_cells || exit 1
  Z="${CARGO_TARGET_DIR:-target}/release/zkrv"; CELLS="${CARGO_TARGET_DIR:-target}/release/examples/trace_cells"
  BACKEND="${BACKEND:-cpu}"
  : > "$out/hw.txt"
fi
{ lscpu | grep -E "Model name|^CPU\(s\)"; free -g | head -2; date -u; git log -1 --format='commit %h %s'; } >> "$out/hw.txt"
yes=(); [ "${YES:-0}" = 1 ] && yes=(--yes)
s="$out/summary.txt"
cat "$out/hw.txt" >> "$s"
for size in ${SIZES:-65536 1048576}; do
  in="$out/in$size.bin"
  [ -f "$in" ] || head -c "$size" /dev/urandom > "$in"
  for g in ${GUESTS:-sha256 sha256_accel keccak keccak_accel}; do
    elf=guests/bin/$g.elf; tag=$g-$size
    echo "== $tag $(date -u +%FT%T) load $(cut -d' ' -f1 /proc/loadavg)" >> "$s"
    "$Z" run "$elf" --input "$in" 2>&1 >/dev/null | sed 's/^/run: /' >> "$s"
    if [ -x "$CELLS" ]; then
      "$CELLS" "$elf" "$in" --no-zk > "$out/$tag.cells" 2>&1
      grep -E "^(CPU|KECCAKF|SHA256|total|all cells) " "$out/$tag.cells" | sed 's/^/cells: /' >> "$s"
    fi
    for mode in ${MODES:-no-zk zk}; do
      [ "$mode" = none ] && continue
      if [[ " ${SKIP:-} " == *" $g:$size:$mode "* ]]; then echo "$mode: skipped (SKIP)" >> "$s"; continue; fi
      flag=(); [ "$mode" = no-zk ] && flag=(--no-zk)
      log="$out/$tag-$mode.log"
      timeout "${PROVE_TIMEOUT:-3600}" /usr/bin/time -v "$Z" prove "$elf" --input "$in" -o "$out/$tag-$mode.zkrv" \
        --backend "$BACKEND" "${flag[@]}" "${yes[@]}" --profile > "$log" 2>&1
      rc=$?
      echo "$mode: prove rc=$rc" >> "$s"
      grep -E "estimate|prove time|proof size|peak host|peak device|Maximum resident" "$log" | sed "s/^/$mode: /" >> "$s"
      if [ $rc -eq 0 ]; then
        "$Z" verify "$out/$tag-$mode.zkrv" "$elf" > "$log.verify" 2>&1
        echo "$mode: verify rc=$?" >> "$s"
        rm -f "$out/$tag-$mode.zkrv"
      fi
    done
  done
done
cat "$s"
