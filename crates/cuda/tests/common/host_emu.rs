//! Host emulation of kernels: compiles a `.cu` file (a `kernels/*.cu` of this crate, or a table fill kernel of
//! zkrv-machine-cuda, whose `tests/common/host_emu.rs` wraps this file with its headers) as plain C++
//! (`-DZKRV_HOST_EMU`, see `kernels/tables/common.cuh` there) together with a test-provided driver `main`, runs it
//! with binary stdin/stdout, and returns what it wrote. This checks a kernel's per-row logic against the Rust
//! fill on machines without a GPU (CI). Needs a C++ compiler (`$CXX`, else `c++`, `g++`, `clang++`); without
//! one, [`run`] returns `None` and the caller prints a skip (a failure when `ZKRV_REQUIRE_CXX` is set, as in CI).

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The C++ compiler to use, if any.
pub fn compiler() -> Option<String> {
    let mut cands = Vec::new();
    if let Ok(c) = std::env::var("CXX") {
        cands.push(c);
    }
    cands.extend(["c++", "g++", "clang++", "clang++-14"].map(String::from));
    cands.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    })
}

/// Compiles `kernel_src` (the `.cu` text, e.g. `zkrv_cuda::nvrtc::OPEN_CU.src`) followed by `driver` (C++ with
/// a `main` that reads its input from stdin and writes its output to stdout) and runs it on `input`, with this
/// crate's headers ([`run_with`] with `zkrv_cuda::nvrtc::HEADERS`).
/// `None` if no C++ compiler is installed; panics (test failure) if compiling or running fails.
pub fn run(name: &str, kernel_src: &str, driver: &str, input: &[u8]) -> Option<Vec<u8>> {
    run_with(zkrv_cuda::nvrtc::HEADERS, name, kernel_src, driver, input)
}

/// [`run`] with `headers` on the include path (each written under its include name).
pub fn run_with(
    headers: &[zkrv_cuda::Header],
    name: &str,
    kernel_src: &str,
    driver: &str,
    input: &[u8],
) -> Option<Vec<u8>> {
    let Some(cxx) = compiler() else {
        // CI (scripts/test.sh) sets ZKRV_REQUIRE_CXX=1: there a missing compiler is a failure, not a skip.
        assert!(
            std::env::var_os("ZKRV_REQUIRE_CXX").is_none(),
            "ZKRV_REQUIRE_CXX is set but no C++ compiler (c++, g++, clang++) was found"
        );
        return None;
    };
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "zkrv-host-emu-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Every header NVRTC sees (field.cuh, logup.cuh, ...), under its include name.
    for h in headers {
        std::fs::write(dir.join(h.name), h.src).unwrap();
    }
    let src = format!(
        "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <vector>\n{kernel_src}\n// ---- driver ----\n{driver}\n"
    );
    let file = dir.join(format!("{name}.cpp"));
    std::fs::write(&file, src).unwrap();
    let exe = dir.join(name);
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-DZKRV_HOST_EMU", "-w", "-I"])
        .arg(&dir)
        .arg("-o")
        .arg(&exe)
        .arg(&file)
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "{cxx} failed on {name}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the host emulation");
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect("host emulation output");
    writer.join().unwrap().expect("write stdin");
    assert!(
        out.status.success(),
        "host emulation {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    Some(out.stdout)
}

/// Little-endian u64s from bytes.
pub fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Little-endian u32s from bytes.
pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
