#!/usr/bin/env bash
# Runs, proves and verifies the bundled Fibonacci guest (n = 90, from guests/inputs/fibonacci.bin).
# Usage: bash scripts/demo.sh [--backend auto|cpu|gpu]   (extra arguments go to `zkrv prove`; with
# `--security dev` the verify step gets `--min-security 0`, since a dev proof is below the default 100 bits)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p zkrv
zkrv() { cargo run --release -q -p zkrv -- "$@"; }
elf=guests/bin/fibonacci.elf
input=guests/inputs/fibonacci.bin
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "== zkrv run $elf --input $input   (public output: fib(90) as a u64)"
zkrv run "$elf" --input "$input" | od -An -tu8
echo "== zkrv prove $elf --input $input -o $dir/fibonacci.zkrv $*"
zkrv prove "$elf" --input "$input" -o "$dir/fibonacci.zkrv" "$@"
# A dev-preset proof is below verify's default --min-security 100: accept it explicitly (the demo's own).
verify_args=()
prev=
for a in "$@"; do
  if [ "$a" = "--security=dev" ] || { [ "$prev" = "--security" ] && [ "$a" = "dev" ]; }; then
    verify_args=(--min-security 0)
  fi
  prev=$a
done
echo "== zkrv verify $dir/fibonacci.zkrv $elf${verify_args[*]:+ ${verify_args[*]}}"
zkrv verify "$dir/fibonacci.zkrv" "$elf" ${verify_args[@]+"${verify_args[@]}"}
