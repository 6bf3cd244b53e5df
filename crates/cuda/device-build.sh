#!/usr/bin/env bash
# Builds the zkrv-cuda test and bench binaries (release, feature cuda) and copies them, stripped, to .device/
# (git-ignored) for crates/cuda/device-run.sh on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(pwd)/target-cuda}"
mkdir -p .device
{
    cargo test -p zkrv-cuda --release --features cuda --no-run --message-format=json
    cargo bench -p zkrv-cuda --features cuda --no-run --message-format=json
} | python3 -c '
import json, shutil, subprocess, sys
for line in sys.stdin:
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("reason") == "compiler-artifact" and j.get("executable") and j["target"]["name"] in ("parity", "kernels_compile", "proof_parity", "gpu", "fill_cpu", "tracegen_e2e", "tracegen"):
        dst = ".device/" + j["target"]["name"]
        shutil.copy(j["executable"], dst)
        subprocess.run(["strip", dst], check=True)
        print("copied", dst)
'
ls -la .device
