#!/usr/bin/env bash
# Rebuilds every zkrv guest into guests/bin/<name>.elf and checks that each ELF is RV64IM only.
# Needs the cross toolchains of scripts/install-guest-toolchains.sh. Usage: guests/build.sh [name...]
set -euo pipefail
cd "$(dirname "$0")"
GUESTS_DIR=$(pwd)

CC=${CC:-riscv64-unknown-elf-gcc}
OBJDUMP=${OBJDUMP:-riscv64-unknown-elf-objdump}
READELF=${READELF:-riscv64-unknown-elf-readelf}
# Debian's rustc-web 1.96 (not rustup's toolchain): it ships the library sources for -Zbuild-std.
DEB_CARGO=${DEB_CARGO:-/usr/bin/cargo}
DEB_RUSTC=${DEB_RUSTC:-/usr/bin/rustc}

ARCH_FLAGS=(-march=rv64im -mabi=lp64 -mcmodel=medany)
CFLAGS=(-O2 -Wall -Wextra -Werror -std=c11 -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables
        -fno-stack-protector -Ic/runtime)
LDFLAGS=(--specs=picolibc.specs -nostartfiles -static -T link.ld -Wl,--gc-sections -Wl,--build-id=none -Wl,--strip-debug)
RUNTIME_SRCS=(c/runtime/crt0.S c/runtime/syscalls.c)

C_GUESTS=(fibonacci exitcode sort matmul modexp rv64im precompiles)
# Guests that use the precompile ecalls (zkrv only): not smoke-run under qemu.
NO_QEMU=(precompiles sha256_accel keccak_accel dropin_api)
RUST_GUESTS=(sha256 keccak rustalloc typedio sha256_accel keccak_accel dropin_api)
# Rust guests of the workspace rust/accel (the software guests' sources with sha2 / tiny-keccak patched to
# the precompile drop-ins of rust/dropin); the others are of rust/.
ACCEL_GUESTS=(sha256_accel keccak_accel dropin_api)
declare -A C_EXTRA=([rv64im]="c/programs/rv64im_ops.S")

# Every mnemonic an RV64IM guest may contain (objdump -M no-aliases spelling).
ALLOWED="lui auipc jal jalr beq bne blt bge bltu bgeu lb lh lw ld lbu lhu lwu sb sh sw sd
addi slti sltiu xori ori andi slli srli srai add sub sll slt sltu xor srl sra or and fence ecall
addiw slliw srliw sraiw addw subw sllw srlw sraw
mul mulh mulhsu mulhu div divu rem remu mulw divw divuw remw remuw"

check_elf() {
    local elf=$1
    # e_flags: no RVC (bit 0), float ABI soft (bits 1-2 zero), no RVE.
    local flags
    flags=$("$READELF" -h "$elf" | awk '/Flags:/ {print $2}')
    if [[ "$flags" != "0x0" ]]; then
        echo "error: $elf has e_flags $flags (want 0x0: no RVC, soft-float lp64)" >&2
        exit 1
    fi
    # Every instruction is 4 bytes and an RV64IM mnemonic.
    "$OBJDUMP" -d -M no-aliases,numeric "$elf" | awk -v allowed="$ALLOWED" -v elf="$elf" '
        BEGIN { n = split(allowed, a, /[ \n]+/); for (i = 1; i <= n; i++) ok[a[i]] = 1; bad = 0; count = 0 }
        /^ +[0-9a-f]+:\t/ {
            split($0, f, "\t");
            enc = f[2]; gsub(/ /, "", enc); mn = f[3]; gsub(/ /, "", mn);
            count++;
            if (length(enc) != 8 || !(mn in ok)) { print "error: " elf ": not RV64IM: " $0 > "/dev/stderr"; bad++ }
        }
        END { if (bad > 0 || count == 0) exit 1 }'
    # Every PT_LOAD segment inside [0x1000, 0x7F00_0000).
    local typ off vaddr paddr filesz memsz rest
    while read -r typ off vaddr paddr filesz memsz rest; do
        if [[ "$typ" == LOAD ]] && (( vaddr < 0x1000 || vaddr + memsz > 0x7F000000 )); then
            echo "error: $elf: segment outside the program range: $typ $vaddr $memsz" >&2
            exit 1
        fi
    done < <("$READELF" -lW "$elf")
}

build_c() {
    local name=$1
    # shellcheck disable=SC2086
    "$CC" "${ARCH_FLAGS[@]}" "${CFLAGS[@]}" "${LDFLAGS[@]}" -o "bin/$name.elf" \
        "${RUNTIME_SRCS[@]}" "c/programs/$name.c" ${C_EXTRA[$name]:-}
    check_elf "bin/$name.elf"
    echo "built bin/$name.elf"
}

build_rust() {
    local name=$1 workspace=rust
    [[ " ${ACCEL_GUESTS[*]} " == *" $name "* ]] && workspace=rust/accel
    # Cargo does not track link.ld: removing the old binary forces a relink.
    rm -f "rust/target/riscv64im-unknown-none-elf/release/$name"
    (
        cd "$workspace"
        RUSTC="$DEB_RUSTC" RUSTC_BOOTSTRAP=1 \
            CARGO_TARGET_DIR="$GUESTS_DIR/rust/target" \
            RUSTFLAGS="-C link-arg=-T$GUESTS_DIR/link.ld -C link-arg=-znorelro --remap-path-prefix=$HOME/.cargo/registry/src=/cargo --remap-path-prefix=$GUESTS_DIR=/guests" \
            "$DEB_CARGO" build --release -p "$name" -q
    )
    cp "rust/target/riscv64im-unknown-none-elf/release/$name" "bin/$name.elf"
    check_elf "bin/$name.elf"
    echo "built bin/$name.elf"
}

# Confirm the C compiler links the rv64im/lp64 multilib (picolibc and libgcc).
multilib=$("$CC" "${ARCH_FLAGS[@]}" -print-multi-directory)
if [[ "$multilib" != "rv64im/lp64" ]]; then
    echo "error: $CC selects multilib '$multilib', want rv64im/lp64" >&2
    exit 1
fi

# Runs a built guest on its example input under qemu (if installed) and checks the exit code.
smoke_qemu() {
    local name=$1 want=0
    command -v qemu-riscv64 > /dev/null || return 0
    [[ " ${NO_QEMU[*]} " == *" $name "* ]] && return 0
    [[ "$name" == exitcode ]] && want=42
    local code=0
    qemu-riscv64 -cpu rv64,c=false,a=false,f=false,d=false "bin/$name.elf" < "inputs/$name.bin" > /dev/null 2>&1 || code=$?
    if [[ $code -ne $want ]]; then
        echo "error: bin/$name.elf exits $code under qemu-riscv64 on inputs/$name.bin (want $want)" >&2
        exit 1
    fi
}

mkdir -p bin
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then targets=("${C_GUESTS[@]}" "${RUST_GUESTS[@]}"); fi
for t in "${targets[@]}"; do
    if [[ " ${C_GUESTS[*]} " == *" $t "* ]]; then build_c "$t";
    elif [[ " ${RUST_GUESTS[*]} " == *" $t "* ]]; then build_rust "$t";
    else echo "error: unknown guest $t" >&2; exit 1; fi
    smoke_qemu "$t"
done
