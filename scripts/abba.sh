#!/usr/bin/env bash
# Compare the `zkrv` binary of two git revisions with zkrv-abba (docs/PERF.md, "## ABBA tool").
#   scripts/abba.sh REV_A REV_B [zkrv-abba options] -- <zkrv arguments>
# e.g. scripts/abba.sh main~3 main --pairs 10 -- prove guests/bin/sha256.elf
# Each revision is built in a temporary detached worktree under ${ABBA_DIR:-/tmp/zkrv-abba}; the zkrv
# arguments run from the current directory (so guest paths refer to this checkout).
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,6p "$0" >&2; exit 2; }
rev_a=$1; rev_b=$2; shift 2
root=$(git rev-parse --show-toplevel)
dir=${ABBA_DIR:-/tmp/zkrv-abba}
mkdir -p "$dir"

build() { # rev -> path of its zkrv binary on stdout
  local sha wt
  sha=$(git -C "$root" rev-parse --verify "$1^{commit}")
  wt="$dir/$sha"
  [ -d "$wt" ] || git -C "$root" worktree add --detach "$wt" "$sha" >&2
  CARGO_TARGET_DIR="$wt/target" cargo build --release -p zkrv --manifest-path "$wt/Cargo.toml" >&2
  echo "$wt/target/release/zkrv"
}

bin_a=$(build "$rev_a")
bin_b=$(build "$rev_b")
cargo build --release -p zkrv-bench --bin zkrv-abba --manifest-path "$root/Cargo.toml" >&2
abba="${CARGO_TARGET_DIR:-$root/target}/release/zkrv-abba"
exec "$abba" --bin-a "$bin_a" --bin-b "$bin_b" "$@"
