#!/usr/bin/env bash
# Builds the test and bench binaries of zkrv-cuda and zkrv-machine-cuda and the zkrv CLI (release, both crates'
# `cuda` features) on this machine and copies them, stripped, into .device/ (git-ignored) for a run on the GPU
# machine (scripts/device-run.sh there). Test names are unique across the two crates.
#   bash scripts/device-build.sh [TEST_NAME ...]     # default: every test of both crates
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device
tests=("$@")
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
pkgs=(-p zkrv-cuda -p zkrv-machine-cuda --features zkrv-cuda/cuda,zkrv-machine-cuda/cuda)
cargo test --release "${pkgs[@]}" --no-run "${args[@]}" --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil, os
for line in sys.stdin:
    try: m = json.loads(line)
    except Exception: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        name = m["target"]["name"]
        shutil.copy(m["executable"], ".device/" + name)
        print(".device/" + name)
'
# Bench harnesses (harness = false binaries), with the same copy step.
cargo bench "${pkgs[@]}" --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    try: m = json.loads(line)
    except Exception: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in m["target"]["kind"]:
        shutil.copy(m["executable"], ".device/bench-" + m["target"]["name"])
        print(".device/bench-" + m["target"]["name"])
'
cargo build --release -p zkrv 2>&1 | tail -1 || true
bin="${CARGO_TARGET_DIR:-target}/release/zkrv"
[ -x "$bin" ] && cp "$bin" .device/zkrv
strip .device/* 2>/dev/null || true
ls -la .device
