//! Freshness of the generated layout header: `kernels/tables/layout.cuh` must be exactly what
//! `zkrv_machine_cuda::layout::layout_cuh()` generates from the Rust column structs, lookup kinds, ALU codes and upload
//! structs now. No GPU or NVRTC needed (CI). `ZKRV_REGEN_LAYOUT=1` rewrites the file instead of checking it.
#![cfg(feature = "cuda")]

use zkrv_machine_cuda::layout::{layout_cuh, LAYOUT_PATH, REGEN_HINT};

#[test]
fn layout_header_is_fresh() {
    let want = layout_cuh();
    let path = format!("{}/{LAYOUT_PATH}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("ZKRV_REGEN_LAYOUT").is_some() {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("writing {path}: {e}"));
        eprintln!(
            "layout_header_is_fresh: wrote {path} ({} bytes)",
            want.len()
        );
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| have.lines().count().min(want.lines().count()));
        panic!(
            "{LAYOUT_PATH} is stale (first difference at line {}: committed {:?}, generated {:?}).\n\
             The Rust layouts changed; regenerate the header with:\n    {REGEN_HINT}",
            line + 1,
            have.lines().nth(line),
            want.lines().nth(line),
        );
    }
    // The copy compiled into the crate (what NVRTC and the host emulation see) is the committed file.
    assert_eq!(
        zkrv_machine_cuda::kernels::LAYOUT_CUH.src, want,
        "the embedded layout.cuh differs from the generated one: rebuild after regenerating ({REGEN_HINT})"
    );
}
