#!/usr/bin/env bash
# Checks that the SDK (and what it pulls in: zkrv-machine, zkrv-stark, zkrv-executor) builds with the newest
# semver-compatible versions of its dependencies, as a host that depends on `zkrv-sdk` by path resolves them
# (its own Cargo.lock, not this repository's pins: e.g. postcard 1.2 where the repository pins 1.1.3).
# Works on a copy of the tracked files in a temporary directory; the checkout and its Cargo.lock are untouched.
#
#   bash scripts/check-newest-deps.sh            # cargo update, then cargo check/test of zkrv-sdk's lib + doc test
#   bash scripts/check-newest-deps.sh --minimal  # the oldest versions the manifests allow instead
#                                                # (cargo +nightly update -Z minimal-versions; needs a nightly)
#
# Needs crates.io (the index and the new crates): without it, it says SKIPPED and exits 0. Not part of
# .ci/run: a from-scratch build of the SDK's dependencies takes minutes (docs/cli.md "Tests" records the last result).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=newest
[ "${1:-}" = "--minimal" ] && mode=minimal
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -z | xargs -0 -I{} cp --parents {} "$tmp"
cd "$tmp"
export CARGO_TARGET_DIR="${ZKRV_NEWEST_TARGET:-$tmp/target}"
if [ "$mode" = minimal ]; then
  update=(cargo +nightly update -Z minimal-versions)
else
  update=(cargo update)
fi
if ! "${update[@]}" 2> update.log; then
  if grep -qiE "failed to (get|download|fetch|query)|could not resolve|network|spurious" update.log; then
    echo "SKIPPED: crates.io is unreachable ($(head -1 update.log))"
    exit 0
  fi
  cat update.log >&2
  exit 1
fi
echo "== $mode versions (changes against the repository's Cargo.lock):"
git diff --no-index --stat "$OLDPWD/Cargo.lock" Cargo.lock | tail -1 || true
for crate in postcard serde serde_json thiserror p3-field rayon tiny-keccak; do
  v=$(grep -A1 "^name = \"$crate\"$" Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p' | tr '\n' ' ')
  [ -n "$v" ] && echo "  $crate $v"
done
echo "== cargo check -p zkrv-sdk --lib --tests"
cargo check -q -p zkrv-sdk --lib --tests
echo "== cargo test -p zkrv-sdk --doc (the crate docs' example: prove and verify the typedio guest)"
cargo test -q -p zkrv-sdk --doc
echo "OK: zkrv-sdk builds and its doc test passes with the $mode semver-compatible versions"
