#!/usr/bin/env bash
# Runs the whole zkrv test suite, installing what it needs first (Debian packages, the NVRTC wheel used to
# compile-check the CUDA kernels without a GPU). Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v qemu-riscv64 >/dev/null || need_apt+=(qemu-user)
command -v cmake >/dev/null || need_apt+=(cmake)
command -v clang >/dev/null || command -v clang-14 >/dev/null || need_apt+=(clang-14)
# C++ compiler for the host emulation of the GPU kernels (crates/cuda/tests/common/host_emu.rs, also used by
# crates/machine-cuda/tests for the fill kernels).
command -v c++ >/dev/null || command -v g++ >/dev/null || command -v clang++ >/dev/null \
  || command -v clang++-14 >/dev/null || need_apt+=(g++)
# C cross toolchain for the new-guest end-to-end test (crates/cli/tests/new_user.rs: `zkrv new --lang c`,
# built outside the checkout, run, proven, verified).
command -v riscv64-unknown-elf-gcc >/dev/null || need_apt+=(gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)
# Rust guest toolchain for the same test with `--lang rust` (Debian 12's rustc-web with the library sources for
# -Zbuild-std, and ld.lld-14), where apt has it; elsewhere that test says it skipped.
if { [ ! -x /usr/bin/cargo ] || [ ! -x /usr/bin/rustc ] || ! command -v ld.lld-14 >/dev/null; } \
  && apt-cache show cargo-web rust-web-src >/dev/null 2>&1; then
  need_apt+=(rustc-web cargo-web rust-web-src lld-14)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== installing ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# NVRTC (no GPU needed) so that the kernel compile-check test really compiles every .cu file.
eval "$(bash scripts/ci-nvrtc.sh)"
export ZKRV_REQUIRE_NVRTC=1
# The kernel host-emulation parity tests must run, not skip, here.
export ZKRV_REQUIRE_CXX=1

echo "== cargo test --workspace --release"
# Both CUDA crates' `cuda` features: the backend's kernels and the RV64IM fill kernels are compile-checked
# (kernels_compile, table_kernels_compile) and host-emulated.
cargo test --workspace --release --features zkrv-cuda/cuda,zkrv-machine-cuda/cuda "$@"
