//! Compiles every kernel program of this crate (`zkrv_machine_cuda::kernels::PROGRAMS`) with NVRTC for sm_90
//! (the H200) whenever libnvrtc can be loaded; no GPU needed (CI gets libnvrtc from `scripts/ci-nvrtc.sh`).
//! Also checks the open registry's rule that program names are unique beside zkrv-cuda's own programs (a
//! device refuses a second program under a loaded name). Without libnvrtc (or the `cuda` feature) it prints a
//! skip; with `ZKRV_REQUIRE_NVRTC` set a missing libnvrtc is a failure.

#[cfg(feature = "cuda")]
#[test]
fn program_names_are_unique() {
    use std::collections::HashSet;
    let mut seen = HashSet::new();
    for p in zkrv_cuda::nvrtc::PROGRAMS
        .iter()
        .chain(zkrv_machine_cuda::kernels::PROGRAMS)
    {
        assert!(seen.insert(p.name), "two kernel programs named {}", p.name);
        assert!(!p.src.is_empty(), "{}: empty source", p.name);
    }
    // Every kernel file of this crate is a program (so the compile check below covers it).
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/tables");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".cu"))
        .map(|n| format!("tables/{n}"))
        .collect();
    files.sort();
    let mut names: Vec<String> = zkrv_machine_cuda::kernels::PROGRAMS
        .iter()
        .map(|p| p.name.to_string())
        .collect();
    names.sort();
    assert_eq!(names, files, "kernels/tables/*.cu and kernels::PROGRAMS");
}

#[cfg(feature = "cuda")]
#[test]
fn table_kernels_compile() {
    use zkrv_cuda::nvrtc;
    if !nvrtc::nvrtc_available() {
        assert!(
            std::env::var_os("ZKRV_REQUIRE_NVRTC").is_none(),
            "ZKRV_REQUIRE_NVRTC is set but libnvrtc cannot be loaded (LD_LIBRARY_PATH from scripts/ci-nvrtc.sh?)"
        );
        eprintln!("SKIPPED table_kernels_compile: libnvrtc not loadable (run scripts/ci-nvrtc.sh and set LD_LIBRARY_PATH)");
        return;
    }
    for p in zkrv_machine_cuda::kernels::PROGRAMS {
        let t = std::time::Instant::now();
        let cubin = nvrtc::compile_cubin(p.name, p.src, p.headers, "sm_90")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            &cubin[..4],
            b"\x7fELF",
            "{}: CUBIN is not an ELF image",
            p.name
        );
        eprintln!(
            "compiled {} for sm_90: {} bytes in {:.2?}",
            p.name,
            cubin.len(),
            t.elapsed()
        );
    }
    // Without this crate's headers a table kernel does not compile: the headers a program lists are what
    // NVRTC offers it (and what its cache key covers).
    match nvrtc::compile_cubin(
        zkrv_machine_cuda::kernels::LT_CU.name,
        zkrv_machine_cuda::kernels::LT_CU.src,
        nvrtc::HEADERS,
        "sm_90",
    ) {
        Err(zkrv_cuda::CudaError::Compile { file, log, .. }) => {
            assert_eq!(file, "tables/lt.cu");
            assert!(log.contains("table_common.cuh"), "log: {log}");
        }
        other => panic!("expected a compile error for a missing header, got {other:?}"),
    }
}

#[cfg(not(feature = "cuda"))]
#[test]
fn table_kernels_compile() {
    eprintln!("SKIPPED table_kernels_compile: zkrv-machine-cuda built without the `cuda` feature");
}
