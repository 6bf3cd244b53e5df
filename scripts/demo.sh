#!/usr/bin/env bash
# Runs, proves and verifies the bundled Fibonacci guest (n = 90, from guests/inputs/fibonacci.bin).
# Usage: bash scripts/demo.sh [--backend auto|cpu|gpu]   (extra arguments go to `zkrv prove`)
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
echo "== zkrv verify $dir/fibonacci.zkrv $elf"
zkrv verify "$dir/fibonacci.zkrv" "$elf"
