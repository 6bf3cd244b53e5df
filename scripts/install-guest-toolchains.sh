#!/usr/bin/env bash
# Installs (Debian 12 apt) what guests/build.sh needs to rebuild the guest ELFs, and qemu-user to check them.
# Running or proving the committed guests/bin/*.elf needs none of this.
#   C guests:    riscv64-unknown-elf-gcc + picolibc (rv64im/lp64 multilib), binutils for the RV64IM check
#   Rust guests: Debian's rustc-web/cargo-web 1.96 with library sources (rust-web-src) for -Zbuild-std, ld.lld-14
#   Checks:      qemu-riscv64 (qemu-user) for crates/guest-tests/tests/qemu.rs
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
    gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf picolibc-riscv64-unknown-elf \
    clang-14 lld-14 \
    rustc-web cargo-web rust-web-src \
    qemu-user
