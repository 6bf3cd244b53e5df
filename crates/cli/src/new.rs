//! `zkrv new NAME --lang c|rust`: a guest project that builds outside the zkrv repository with one command
//! (`sh build.sh`). The runtime files are this repository's (`guests/c/runtime`, `guests/rust/runtime`,
//! `guests/link.ld`, `guests/rust/.cargo/config.toml`), embedded at compile time, so a template is always
//! the runtime the bundled guests use. A Rust project also gets the drop-in `sha2` and `tiny-keccak` crates
//! (`guests/rust/dropin`, on the precompiles), patched in by its `Cargo.toml`.

use anyhow::{bail, Context, Result};
use std::path::Path;

/// Language of a new guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// C with picolibc (riscv64-unknown-elf-gcc).
    C,
    /// Rust, `no_std`, with the zkrv-guest runtime (Debian's rustc-web, -Zbuild-std).
    Rust,
}

const LINK_LD: &str = include_str!("../../../guests/link.ld");
const C_HEADER: &str = include_str!("../../../guests/c/runtime/zkrv.h");
const C_CRT0: &str = include_str!("../../../guests/c/runtime/crt0.S");
const C_SYSCALLS: &str = include_str!("../../../guests/c/runtime/syscalls.c");
const C_STDIO: &str = include_str!("../../../guests/c/runtime/stdio.c");
const RUST_RUNTIME: &str = include_str!("../../../guests/rust/runtime/src/lib.rs");
const RUST_RUNTIME_TYPED: &str = include_str!("../../../guests/rust/runtime/src/typed.rs");
const RUST_RUNTIME_PRECOMPILE: &str =
    include_str!("../../../guests/rust/runtime/src/precompile.rs");
/// The runtime's manifest (its `serde` feature and dependencies); the workspace-inherited fields are filled
/// in by [`runtime_manifest`].
const RUST_RUNTIME_MANIFEST: &str = include_str!("../../../guests/rust/runtime/Cargo.toml");
const RUST_CARGO_CONFIG: &str = include_str!("../../../guests/rust/.cargo/config.toml");
/// The drop-in `sha2` and `tiny-keccak` crates (guests/README.md "Drop-in"): manifests (their runtime path
/// rewritten by [`dropin_manifest`]) and sources.
const DROPIN_SHA2_MANIFEST: &str = include_str!("../../../guests/rust/dropin/sha2/Cargo.toml");
const DROPIN_SHA2_LIB: &str = include_str!("../../../guests/rust/dropin/sha2/src/lib.rs");
const DROPIN_KECCAK_MANIFEST: &str =
    include_str!("../../../guests/rust/dropin/tiny-keccak/Cargo.toml");
const DROPIN_KECCAK_LIB: &str = include_str!("../../../guests/rust/dropin/tiny-keccak/src/lib.rs");

const DOCS: &str = "guests/README.md (\"Your own guest\") and docs/abi.md of the zkrv repository";

const C_MAIN: &str = r#"/* A zkrv guest (docs/abi.md): reads n (u64) from the private input, writes sum(1..=n) (u64) to the
 * public output, a debug line to fd 2, and exits 0. Inputs and outputs are little-endian; zkrv_sdk::io
 * encodes and decodes them on the host. */
#include "zkrv.h"

/* Hashing: zkrv_sha256(buf, len, out) and zkrv_keccak256(buf, len, out) (zkrv.h) run on the precompiles,
 * one proven table row group per block instead of thousands of instructions (README.md). */
int main(void)
{
    uint64_t n = zkrv_read_u64(10);
    uint64_t sum = 0;
    for (uint64_t i = 1; i <= n; i++)
        sum += i;
    zkrv_debug("summed\n");
    zkrv_write_u64(sum);
    return 0;
}
"#;

const C_BUILD: &str = r#"#!/bin/sh
# Builds NAME.elf (RV64IM, lp64, static; docs/abi.md). Needs riscv64-unknown-elf-gcc and picolibc
# (Debian: apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf).
set -eu
cd "$(dirname "$0")"
CC=${CC:-riscv64-unknown-elf-gcc}
if ! command -v "$CC" > /dev/null 2>&1; then
    echo "error: $CC not found: install gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf (see README.md)" >&2
    exit 1
fi
multilib=$("$CC" -march=rv64im -mabi=lp64 -print-multi-directory)
if [ "$multilib" != "rv64im/lp64" ]; then
    echo "error: $CC selects multilib '$multilib', want rv64im/lp64 (see README.md)" >&2
    exit 1
fi
if ! "$CC" -march=rv64im -mabi=lp64 -mcmodel=medany -O2 -Wall -Wextra -std=c11 -ffunction-sections \
    -fdata-sections -fno-asynchronous-unwind-tables -fno-stack-protector -Izkrv \
    --specs=picolibc.specs -nostartfiles -static -T zkrv/link.ld -Wl,--gc-sections -Wl,--build-id=none \
    -o NAME.elf zkrv/crt0.S zkrv/syscalls.c zkrv/stdio.c src/*.c; then
    echo "error: the build failed; guest rules: docs/abi.md, build notes: README.md" >&2
    exit 1
fi
echo "built NAME.elf"
"#;

const RUST_MAIN: &str = r#"//! A zkrv guest (docs/abi.md): reads a typed `Job` from the private input, commits the sum 1 + ... + n
//! (a `u64`) to the public output, writes a debug line to fd 2, and exits 0 (returning from main). A panic
//! exits 101.
//!
//! Typed I/O (docs/abi.md "Typed I/O"): `zkrv_guest::read::<T>()` and `zkrv_guest::commit(&v)` take any
//! serde type, one frame each (a u32 LE length, then the value's postcard bytes). A Rust host writes the
//! input with `zkrv_sdk::io::Input::new().write(&job)` and reads the output with
//! `receipt.output_value::<u64>()`. Fixed-width helpers (`read_u64`, `write_u64`, `read_bytes`, ...) exist too.
//!
//! Hashing: `zkrv_guest::{sha256, keccak, poseidon2}` call the precompiles, and the `sha2` and `tiny-keccak`
//! crates' APIs run on them unchanged (Cargo.toml patches both to the drop-ins in zkrv-dropin/; README.md).
#![no_std]
#![no_main]

// The private input's type, shared with the host helper that writes it from JSON (host/, README.md).
mod job;
use job::Job;

zkrv_guest::entry!(main);

fn main() {
    let job: Job = zkrv_guest::read();
    let sum: u64 = (1..=job.n).sum();
    zkrv_guest::debug("summed\n");
    zkrv_guest::commit(&sum);
}
"#;

const RUST_JOB: &str = r#"//! The private input's type: read by the guest (`src/main.rs`, `zkrv_guest::read::<Job>()`) and written
//! from JSON by the host helper (`host/src/main.rs`: `cd host && cargo run -q -- '{"n": 100}' > ../input.bin`).
//! Change it here and both follow. A Rust host with `zkrv-sdk` writes it with
//! `zkrv_sdk::io::Input::new().write(&job)` (its own type need only match this one in the serde data model).
//!
//! It is compiled twice: in the `no_std` guest and in the `std` host helper. Take `Vec`, `String`, `Box`
//! from `alloc` (imported below), which both have; not from `std`.

extern crate alloc;
#[allow(unused_imports)]
use alloc::{boxed::Box, string::String, vec::Vec};

/// What the guest sums: 1 + ... + n.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Job {
    pub n: u64,
}
"#;

const RUST_HOST_CARGO: &str = r#"[package]
name = "NAME-input"
version = "0.1.0"
edition = "2021"
publish = false

# `cargo run -q -- JSON` (from this directory): the guest's private input, as a typed frame.
[[bin]]
name = "make-input"
path = "src/main.rs"

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
postcard = { version = "1", features = ["alloc"] }

# A standalone workspace (not the guest's).
[workspace]
"#;

/// The host helper builds for the machine zkrv was built for, not the guest's RISC-V target of the project's
/// `.cargo/config.toml` (cargo reads the config of the directory it runs in and its parents).
const RUST_HOST_CONFIG: &str = r#"# make-input runs on this machine: build for it, not for the guest's target (../.cargo/config.toml).
[build]
target = "HOST_TARGET"
"#;

const RUST_HOST_MAIN: &str = r#"//! make-input: the guest's private input from JSON, one typed frame (docs/abi.md "Typed I/O": a u32 LE
//! length, then the value's postcard bytes) of the `Job` of ../src/job.rs, the type the guest reads:
//!
//!     cd host && cargo run -q -- '{"n": 100}' > ../input.bin
//!
//! The argument is the JSON text, or `-` to read it from stdin. Errors name the cause and exit 1.

use std::io::{IsTerminal, Read, Write};

#[path = "../../src/job.rs"]
mod job;

fn main() {
    if let Err(e) = run() {
        eprintln!("make-input: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let usage = "usage: make-input JSON (or - to read it from stdin), e.g. make-input '{\"n\": 100}' > ../input.bin";
    let arg = std::env::args().nth(1).ok_or(usage)?;
    let text = if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("reading stdin: {e}"))?;
        s
    } else {
        arg
    };
    let job: job::Job = serde_json::from_str(&text)
        .map_err(|e| format!("the JSON is not a Job (../src/job.rs): {e}"))?;
    let body = postcard::to_allocvec(&job).map_err(|e| format!("encoding the Job: {e}"))?;
    let len = u32::try_from(body.len()).map_err(|_| "the encoded Job is larger than 4 GiB")?;
    let mut out = std::io::stdout().lock();
    if out.is_terminal() {
        return Err(format!("the input is binary: redirect stdout to a file (> ../input.bin); {usage}"));
    }
    out.write_all(&len.to_le_bytes())
        .and_then(|()| out.write_all(&body))
        .and_then(|()| out.flush())
        .map_err(|e| format!("writing stdout: {e}"))
}
"#;

const RUST_CARGO: &str = r#"[package]
name = "NAME"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
# Feature `serde`: typed I/O (`zkrv_guest::read::<T>()`, `zkrv_guest::commit(&v)`). serde and postcard come
# from crates.io (fetched on the first build).
zkrv-guest = { path = "zkrv-guest", features = ["serde"] }
serde = { version = "1", default-features = false, features = ["alloc", "derive"] }
# Hashing on the precompiles: add either as from crates.io and `[patch.crates-io]` below swaps in zkrv's
# drop-in (zkrv-dropin/), so `sha2::{Sha256, Digest}` and `tiny_keccak::{Keccak, Hasher}` code runs on the
# sha256_compress and keccak_f precompiles unchanged, in dependencies of dependencies too (README.md).
# sha2 = { version = "0.10", default-features = false }
# tiny-keccak = { version = "2", features = ["keccak"] }

[patch.crates-io]
sha2 = { path = "zkrv-dropin/sha2" }
tiny-keccak = { path = "zkrv-dropin/tiny-keccak" }

# A standalone workspace (not part of any enclosing one); host/ is the host helper's own.
[workspace]
exclude = ["host"]

[profile.release]
opt-level = 3
lto = true
codegen-units = 1
panic = "abort"
debug = false

[profile.dev]
panic = "abort"
"#;

/// The runtime's manifest for a standalone copy: the fields it inherits from the guests' workspace
/// (guests/rust/Cargo.toml) written out.
fn runtime_manifest() -> String {
    RUST_RUNTIME_MANIFEST
        .lines()
        .map(|l| match l.trim() {
            "version.workspace = true" => "version = \"0.1.0\"",
            "edition.workspace = true" => "edition = \"2021\"",
            "license.workspace = true" => "license = \"MIT OR Apache-2.0\"",
            "publish.workspace = true" => "publish = false",
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A drop-in crate's manifest for the project: its runtime dependency points at the project's `zkrv-guest/`
/// copy instead of the repository's `guests/rust/runtime`.
fn dropin_manifest(manifest: &str) -> String {
    manifest.replace(
        r#"zkrv-guest = { path = "../../runtime" }"#,
        r#"zkrv-guest = { path = "../../zkrv-guest" }"#,
    )
}

const RUST_BUILD: &str = r#"#!/bin/sh
# Builds NAME.elf (RV64IM, target riscv64im-unknown-none-elf, -Zbuild-std; docs/abi.md). Needs Debian's
# rustc-web, cargo-web and rust-web-src (the library sources for -Zbuild-std) and ld.lld-14; rustup's
# toolchain works too if it has the rust-src component (DEB_RUSTC/DEB_CARGO override the paths).
set -eu
cd "$(dirname "$0")"
DEB_CARGO=${DEB_CARGO:-/usr/bin/cargo}
DEB_RUSTC=${DEB_RUSTC:-/usr/bin/rustc}
for tool in "$DEB_CARGO" "$DEB_RUSTC" ld.lld-14; do
    if ! command -v "$tool" > /dev/null 2>&1; then
        echo "error: $tool not found: install rustc-web cargo-web rust-web-src lld-14 (see README.md)" >&2
        exit 1
    fi
done
rm -f target/riscv64im-unknown-none-elf/release/NAME
if ! CARGO_TARGET_DIR="$(pwd)/target" RUSTC="$DEB_RUSTC" RUSTC_BOOTSTRAP=1 RUSTFLAGS="-C link-arg=-T$(pwd)/link.ld -C link-arg=-znorelro" \
    "$DEB_CARGO" build --release -q; then
    echo "error: the build failed. \"can't find crate for core\": the library sources are missing (rust-web-src);" >&2
    echo "\"failed to get serde\" / \"no matching package\": crates.io could not be reached (serde and postcard are fetched once);" >&2
    echo "\"undefined symbol: __tls_base\" or \"_start\": link.ld was not used. See README.md and docs/abi.md." >&2
    exit 1
fi
cp target/riscv64im-unknown-none-elf/release/NAME NAME.elf
echo "built NAME.elf"
"#;

const README: &str = r#"# NAME: a zkrv guest (LANG)

Build (one command; the toolchain is named in build.sh and below):

```sh
sh build.sh                                  # -> NAME.elf
```

Run, prove and verify with n = 100 (INPUT_NOTE):

```sh
INPUT_CMD
zkrv run NAME.elf --input input.bin | OUTPUT_CMD
zkrv program-id NAME.elf                             # the ID to publish before proving
zkrv prove NAME.elf --input input.bin -o NAME.zkrv   # zero-knowledge by default
zkrv verify NAME.zkrv NAME.elf                       # exit 0: valid, exit code 0
zkrv verify --json NAME.zkrv NAME.elf                # the statement in full, for scripts
```

From a Rust host (crate `zkrv-sdk` of the zkrv repository):

```rust
HOST_CODE
```

Toolchain (Debian 12): TOOLCHAIN

Layout: `src/` your code; `zkrv/` (C) or `zkrv-guest/` (Rust) the runtime: entry point, system calls
(private input on fd 0, public output on fd 1, debug text on fd 2), HELPERS, a 1 MiB heap; `link.ld` the
memory layout. The rules a guest must follow (RV64IM only, the address space, what is proven, the memory and
cycle limits of a proof) are in DOCS.

Hashing on the precompiles (docs/abi.md "Precompiles"): each SHA-256 block or Keccak-f\[1600\] permutation is
one ecall, proven by its own table, instead of thousands of RV64IM instructions (the zkrv repository's
sha256_accel guest takes over 200x fewer cycles than its software twin on 64 KiB, keccak_accel over
40x; docs/PERF.md "Precompiles"). PRECOMPILES
"#;

/// The language-specific parts of the README: the input encoding, the commands that write the input and
/// show the output, the host code, the I/O helpers.
struct ReadmeParts {
    input_note: &'static str,
    input_cmd: &'static str,
    output_cmd: &'static str,
    host_code: &'static str,
    helpers: &'static str,
    precompiles: &'static str,
}

const C_README: ReadmeParts = ReadmeParts {
    input_note: "n is a u64, little-endian, read with `zkrv_read_u64`; the sum is written with `zkrv_write_u64`",
    input_cmd: r"printf '\144\0\0\0\0\0\0\0' > input.bin             # n = 100 as a u64 LE",
    output_cmd: "od -An -tu8    # 5050",
    host_code: r#"let program = zkrv_sdk::Program::load("NAME.elf")?;
let input = zkrv_sdk::io::Input::new().write_u64(100).into_bytes();
let proved = zkrv_sdk::prove(&program, &input, &zkrv_sdk::ProveOptions::default())?;
proved.receipt.verify(&program)?;
assert_eq!(proved.receipt.output_reader().read_u64()?, 5050);"#,
    helpers: "fixed-width helpers (`zkrv_read_u64`, `zkrv_read_i64`, `zkrv_read_u32`, `zkrv_read_bytes`, \
              `zkrv_write_u64`, `zkrv_write_bytes`, ...; docs/abi.md \"Typed I/O\")",
    precompiles: "API (`zkrv/zkrv.h`): `zkrv_sha256(buf, len, out)` and `zkrv_keccak256(buf, len, out)` (whole \
                  messages; Keccak-256 with the original padding, as Ethereum), `zkrv_sha256_compress(state, \
                  block)`, `zkrv_keccak_f(state)` and `zkrv_poseidon2(state)` (one call each; 8-aligned \
                  pointers). A guest that calls them runs under zkrv only, not qemu.",
};

const RUST_README: ReadmeParts = ReadmeParts {
    input_note: "the input is `Job { n: 100 }` of `src/job.rs` as a typed frame, which the host helper \
                 `host/` (`make-input`, built for this machine by your host cargo, e.g. rustup's) writes from \
                 JSON: a u32 LE length, 1, then postcard's varint 100, the bytes `01 00 00 00 64` (`printf \
                 '\\1\\0\\0\\0\\144'` writes the same); change `Job` in `src/job.rs` and both the guest \
                 and the helper follow. The output is the frame of the u64 5050, `02 00 00 00 ba 27`",
    input_cmd: r#"(cd host && cargo run -q -- '{"n": 100}') > input.bin   # Job { n: 100 } from JSON"#,
    output_cmd: "od -An -tx1    # 02 00 00 00 ba 27",
    host_code: r#"#[derive(serde::Serialize)]
struct Job { n: u64 }

let program = zkrv_sdk::Program::load("NAME.elf")?;
let input = zkrv_sdk::io::Input::new().write(&Job { n: 100 })?.into_bytes();
let proved = zkrv_sdk::prove(&program, &input, &zkrv_sdk::ProveOptions::default())?;
proved.receipt.verify(&program)?;
assert_eq!(proved.receipt.output_value::<u64>()?, 5050);"#,
    helpers: "typed I/O (`zkrv_guest::read::<T>()`, `zkrv_guest::commit(&v)` for any serde type) and \
              fixed-width helpers (`read_u64`, `write_u64`, `read_bytes`, `write_bytes`, ...; docs/abi.md \
              \"Typed I/O\")",
    precompiles: "API: `zkrv_guest::sha256::{sha256, compress}`, `zkrv_guest::keccak::{keccak256, keccak_f}`, \
                  `zkrv_guest::poseidon2::{permute, compress}`. Code written against the `sha2` and \
                  `tiny-keccak` crates needs no edits: add them as dependencies (commented in `Cargo.toml`) \
                  and the `[patch.crates-io]` there replaces both with zkrv's drop-ins in `zkrv-dropin/` \
                  (sha2 0.10: `Sha256` with the `Digest` trait; tiny-keccak 2: `Keccak`, `Sha3`, `Shake`, \
                  `Hasher`), for every crate of the build:\n\n```rust\nuse sha2::{Digest, Sha256};\n\
                  use tiny_keccak::{Hasher, Keccak};\n\nlet digest: [u8; 32] = Sha256::digest(b\"abc\").into();\n\
                  let mut k = Keccak::v256();\nk.update(b\"abc\");\nlet mut out = [0u8; 32];\n\
                  k.finalize(&mut out);\n```\n\nSHA-512, cSHAKE and KMAC have no precompile and no drop-in.",
};

/// Names a Rust guest cannot take (compared with `-` read as `_`, as cargo names the crate), and why: the
/// project's own packages (the runtime copy and the template's dependencies) and the libraries built with
/// `-Zbuild-std`.
const RUST_RESERVED: &[(&str, &str)] = &[
    (
        "zkrv_guest",
        "the project holds the runtime package zkrv-guest (two packages of one name cannot build)",
    ),
    ("serde", "the template depends on the serde package"),
    (
        "sha2",
        "the project holds the drop-in sha2 package (zkrv-dropin/sha2)",
    ),
    (
        "tiny_keccak",
        "the project holds the drop-in tiny-keccak package (zkrv-dropin/tiny-keccak)",
    ),
    ("digest", "the drop-in sha2 depends on the digest package"),
    ("postcard", "the runtime depends on the postcard package"),
    ("std", "it is a Rust built-in library"),
    ("core", "it is a Rust built-in library"),
    ("alloc", "it is a Rust built-in library"),
    ("test", "it is a Rust built-in library"),
    ("proc_macro", "it is a Rust built-in library"),
    (
        "compiler_builtins",
        "it is a library built with -Zbuild-std",
    ),
];

/// Creates the project directory `dir` (which must not exist) for a guest named after its last component.
pub fn create(dir: &Path, lang: Lang) -> Result<()> {
    // `foo/` and `./foo` name the same directory as `foo` (and print as it).
    let dir: std::path::PathBuf = dir.components().collect();
    let dir = dir.as_path();
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .context("zkrv new: NAME must end in a directory name")?;
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !valid {
        bail!("zkrv new: guest name {name:?}: use lowercase letters, digits, '_' and '-', starting with a letter");
    }
    if lang == Lang::Rust {
        let crate_name = name.replace('-', "_");
        if let Some(why) = RUST_RESERVED
            .iter()
            .find(|(n, _)| *n == crate_name)
            .map(|(_, why)| why)
        {
            bail!(
                "zkrv new: guest name {name:?} cannot be used for a Rust guest: {why}; choose another name"
            );
        }
    }
    if std::fs::symlink_metadata(dir).is_ok() {
        bail!("zkrv new: {} already exists", dir.display());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        if parent.exists() && !parent.is_dir() {
            bail!(
                "zkrv new: {} is not a directory (the new project's parent must be one)",
                parent.display()
            );
        }
        if !parent.is_dir() {
            bail!(
                "zkrv new: the parent directory {} does not exist (create it first)",
                parent.display()
            );
        }
    }
    let fill = |t: &str| t.replace("NAME", name);
    let (lang_name, toolchain) = match lang {
        Lang::C => (
            "C",
            "`apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf` (or the zkrv \
             repository's scripts/install-guest-toolchains.sh).",
        ),
        Lang::Rust => (
            "Rust",
            "`apt-get install rustc-web cargo-web rust-web-src lld-14` (or the zkrv repository's \
             scripts/install-guest-toolchains.sh); the build uses /usr/bin/cargo and /usr/bin/rustc with \
             RUSTC_BOOTSTRAP=1 for -Zbuild-std. The input helper `host/` builds with any host cargo (rustup's \
             stable, or the same Debian cargo) and fetches serde, serde_json and postcard from crates.io.",
        ),
    };
    let parts = match lang {
        Lang::C => &C_README,
        Lang::Rust => &RUST_README,
    };
    let readme = README
        .replace("INPUT_NOTE", parts.input_note)
        .replace("INPUT_CMD", parts.input_cmd)
        .replace("OUTPUT_CMD", parts.output_cmd)
        .replace("HOST_CODE", parts.host_code)
        .replace("HELPERS", parts.helpers)
        .replace("PRECOMPILES", parts.precompiles)
        .replace("NAME", name)
        .replace("LANG", lang_name)
        .replace("TOOLCHAIN", toolchain)
        .replace("DOCS", DOCS);
    let files: Vec<(&str, String)> = match lang {
        Lang::C => vec![
            ("README.md", readme),
            ("build.sh", fill(C_BUILD)),
            ("src/main.c", C_MAIN.to_string()),
            ("zkrv/zkrv.h", C_HEADER.to_string()),
            ("zkrv/crt0.S", C_CRT0.to_string()),
            ("zkrv/syscalls.c", C_SYSCALLS.to_string()),
            ("zkrv/stdio.c", C_STDIO.to_string()),
            ("zkrv/link.ld", LINK_LD.to_string()),
        ],
        Lang::Rust => vec![
            ("README.md", readme),
            ("build.sh", fill(RUST_BUILD)),
            ("Cargo.toml", fill(RUST_CARGO)),
            (".cargo/config.toml", RUST_CARGO_CONFIG.to_string()),
            ("src/main.rs", RUST_MAIN.to_string()),
            ("src/job.rs", RUST_JOB.to_string()),
            ("host/Cargo.toml", fill(RUST_HOST_CARGO)),
            (
                "host/.cargo/config.toml",
                RUST_HOST_CONFIG.replace("HOST_TARGET", env!("ZKRV_BUILD_TARGET")),
            ),
            ("host/src/main.rs", RUST_HOST_MAIN.to_string()),
            ("zkrv-guest/Cargo.toml", runtime_manifest()),
            ("zkrv-guest/src/lib.rs", RUST_RUNTIME.to_string()),
            ("zkrv-guest/src/typed.rs", RUST_RUNTIME_TYPED.to_string()),
            (
                "zkrv-guest/src/precompile.rs",
                RUST_RUNTIME_PRECOMPILE.to_string(),
            ),
            (
                "zkrv-dropin/sha2/Cargo.toml",
                dropin_manifest(DROPIN_SHA2_MANIFEST),
            ),
            ("zkrv-dropin/sha2/src/lib.rs", DROPIN_SHA2_LIB.to_string()),
            (
                "zkrv-dropin/tiny-keccak/Cargo.toml",
                dropin_manifest(DROPIN_KECCAK_MANIFEST),
            ),
            (
                "zkrv-dropin/tiny-keccak/src/lib.rs",
                DROPIN_KECCAK_LIB.to_string(),
            ),
            ("link.ld", LINK_LD.to_string()),
        ],
    };
    for (rel, text) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("zkrv new: creating {}", parent.display()))?;
        }
        std::fs::write(&path, text)
            .with_context(|| format!("zkrv new: writing {}", path.display()))?;
    }
    println!(
        "created {} ({lang_name} guest {name}); build it with: sh {}/build.sh",
        dir.display(),
        dir.display()
    );
    Ok(())
}
