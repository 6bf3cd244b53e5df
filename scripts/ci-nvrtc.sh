#!/usr/bin/env bash
# Installs NVRTC 13.0 from PyPI (about 90 MB, no GPU or CUDA toolkit needed) so that the `kernels_compile` tests
# of zkrv-cuda and zkrv-machine-cuda can compile every kernel for sm_90. Pinned to 13.0: newer NVRTC emits code the H200's driver
# (580) rejects. Prints the LD_LIBRARY_PATH line to use; with --github-env also appends it to $GITHUB_ENV.
#
#   scripts/ci-nvrtc.sh                 # install into ~/.cache/zkrv-nvrtc (or $NVRTC_DIR)
#   export LD_LIBRARY_PATH=<printed dir>:$LD_LIBRARY_PATH
#   cargo test -p zkrv-cuda -p zkrv-machine-cuda --release --features zkrv-cuda/cuda,zkrv-machine-cuda/cuda \
#     --test kernels_compile --test table_kernels_compile
set -euo pipefail
dir="${NVRTC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zkrv-nvrtc}"
lib="$dir/nvidia/cu13/lib"
# Installed once: a re-run that finds the library reuses it (no network, no pip). Otherwise (first run, or a
# directory left by an interrupted or older install) pip installs into a fresh directory whose entries then
# replace theirs in $dir (`nvidia/`, the dist-info; nothing else in $dir is touched), so pip never meets an
# existing target (its "Target directory ... already exists" warning) and a failed install changes nothing.
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    mkdir -p "$dir"
    tmp=$(mktemp -d "$dir.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        --target "$tmp" "nvidia-cuda-nvrtc==13.0.*" >&2
    for entry in "$tmp"/* "$tmp"/.[!.]*; do
        [ -e "$entry" ] || continue
        rm -rf "${dir:?}/$(basename "$entry")"
        mv "$entry" "$dir/"
    done
fi
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    echo "ci-nvrtc: libnvrtc.so.13 not found under $lib" >&2
    exit 1
fi
echo "export LD_LIBRARY_PATH=$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
if [ "${1:-}" = "--github-env" ] && [ -n "${GITHUB_ENV:-}" ]; then
    echo "LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" >> "$GITHUB_ENV"
fi
