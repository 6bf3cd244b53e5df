#!/usr/bin/env bash
# Issue 4 figures: proves the SHA-256 guest at CPU-table heights 2^18, 2^20 (no-zk and zk) and 2^22 (no-zk) on
# the CPU backend and verifies each proof 5 times. Inputs are random bytes sized so that the CPU table is exactly
# that height (3,900 B, 16,000 B, 65,536 B). Writes OUT/summary.txt (cycles, prove time, cycles/s, peak memory,
# proof size, verify wall times) and each run's `--profile` log. Needs ~16 GiB of memory for 2^22 (default
# ZKRV_LDE=auto); ~8 minutes on 2 cores.
#   bash scripts/sha256-figures.sh [OUT]        (default OUT=/tmp/sha256-figures)
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p zkrv
Z="${CARGO_TARGET_DIR:-target}/release/zkrv"
E=guests/bin/sha256.elf
out="${1:-/tmp/sha256-figures}"
mkdir -p "$out"
for spec in "3900 --no-zk" "3900 zk" "16000 --no-zk" "16000 zk" "65536 --no-zk"; do
  set -- $spec
  size=$1; mode=$2; flag=""; [ "$mode" = "--no-zk" ] && flag=--no-zk
  tag=$size-${mode#--}
  [ -f "$out/in$size.bin" ] || head -c "$size" /dev/urandom > "$out/in$size.bin"
  echo "== $tag $(date -u +%FT%T) load $(cut -d' ' -f1 /proc/loadavg)" >> "$out/summary.txt"
  /usr/bin/time -v "$Z" prove $E --input "$out/in$size.bin" -o "$out/$tag.zkrv" $flag --profile > "$out/$tag.log" 2>&1
  grep -E "cycles  |prove time|peak host|proof size|Maximum resident" "$out/$tag.log" >> "$out/summary.txt"
  for _ in 1 2 3 4 5; do /usr/bin/time -f "%e" "$Z" verify "$out/$tag.zkrv" $E > /dev/null 2>> "$out/verify-$tag.txt"; done
  echo "verify s: $(tr '\n' ' ' < "$out/verify-$tag.txt")" >> "$out/summary.txt"
done
cat "$out/summary.txt"
