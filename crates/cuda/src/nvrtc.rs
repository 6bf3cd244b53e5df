//! Run-time compilation of `kernels/*.cu` with NVRTC to CUBIN for one architecture (e.g. `sm_90`), with an
//! in-memory cache and an on-disk cache keyed by a hash of source + headers + options + arch + NVRTC version.
//!
//! The disk cache lives in `$ZKRV_CUDA_CACHE_DIR`, else `$XDG_CACHE_HOME/zkrv-cuda`, else `~/.cache/zkrv-cuda`;
//! it is only a cache: a failure to read or write it falls back to compiling.

use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::nvrtc::sys;

use crate::error::CudaError;

/// `kernels/field.cuh`: Goldilocks and Ext3 arithmetic (mirrors `zkrv_stark::field`).
pub const FIELD_CUH: &str = include_str!("../kernels/field.cuh");
/// `kernels/poly.cu`: NTT / iNTT / coset LDE (mirrors `zkrv_stark::poly`).
pub const POLY_CU: &str = include_str!("../kernels/poly.cu");
/// `kernels/merkle.cu`: Keccak-256 rows and Merkle levels (mirrors `zkrv_stark::merkle`).
pub const MERKLE_CU: &str = include_str!("../kernels/merkle.cu");
/// `kernels/open.cu`: DEEP codeword, opened values, FRI fold, query gathers (mirrors
/// `zkrv_stark::backend`, `backend/open.rs`).
pub const OPEN_CU: &str = include_str!("../kernels/open.cu");
/// `kernels/keccak.cuh`: Keccak-f[1600] (shared by merkle.cu and zk.cu).
pub const KECCAK_CUH: &str = include_str!("../kernels/keccak.cuh");
/// `kernels/zk.cu`: zero-knowledge randomness, salts and randomized traces (mirrors `zkrv_stark::zk`).
pub const ZK_CU: &str = include_str!("../kernels/zk.cu");
/// `kernels/tables/common.cuh`: conventions and helpers of the table fill kernels (included as
/// `table_common.cuh`).
pub const TABLE_COMMON_CUH: &str = include_str!("../kernels/tables/common.cuh");
/// `kernels/tables/<table>.cu`: the trace fill kernels (mirror `zkrv_machine::tables::<table>`).
pub const TABLE_CPU_CU: &str = include_str!("../kernels/tables/cpu.cu");
pub const TABLE_LOAD_CU: &str = include_str!("../kernels/tables/load.cu");
pub const TABLE_STORE_CU: &str = include_str!("../kernels/tables/store.cu");
pub const TABLE_MEMW_A_CU: &str = include_str!("../kernels/tables/memw_a.cu");
pub const TABLE_LT_CU: &str = include_str!("../kernels/tables/lt.cu");
pub const TABLE_SHIFT_CU: &str = include_str!("../kernels/tables/shift.cu");
/// `kernels/logup.cuh`: helpers of the generated LogUp aux row kernels (see `crate::logup`).
pub const LOGUP_CUH: &str = include_str!("../kernels/logup.cuh");
/// `kernels/logup.cu`: the running-sum scan of the LogUp aux trace (mirrors `zkrv_stark::logup`).
pub const LOGUP_CU: &str = include_str!("../kernels/logup.cu");
/// `kernels/quotient.cuh`: helpers of the generated quotient row kernels (see `crate::quotient`).
pub const QUOTIENT_CUH: &str = include_str!("../kernels/quotient.cuh");
/// `kernels/quotient.cu`: chunk split and zk masking of the quotient (mirrors `zkrv_stark::backend`, `zk`).
pub const QUOTIENT_CU: &str = include_str!("../kernels/quotient.cu");
/// The field parity kernels of `field.cuh`, compiled as their own program.
pub const FIELD_TEST_CU: &str = "#define ZKRV_FIELD_TEST_KERNELS\n#include \"field.cuh\"\n";

/// Headers every program may `#include`.
pub const HEADERS: &[(&str, &str)] = &[
    ("field.cuh", FIELD_CUH),
    ("keccak.cuh", KECCAK_CUH),
    ("table_common.cuh", TABLE_COMMON_CUH),
    ("logup.cuh", LOGUP_CUH),
    ("quotient.cuh", QUOTIENT_CUH),
];

/// Every compilable kernel program: (name, source).
pub const PROGRAMS: &[(&str, &str)] = &[
    ("poly.cu", POLY_CU),
    ("merkle.cu", MERKLE_CU),
    ("zk.cu", ZK_CU),
    ("field_test.cu", FIELD_TEST_CU),
    ("logup.cu", LOGUP_CU),
    ("quotient.cu", QUOTIENT_CU),
    ("open.cu", OPEN_CU),
    ("tables/cpu.cu", TABLE_CPU_CU),
    ("tables/load.cu", TABLE_LOAD_CU),
    ("tables/store.cu", TABLE_STORE_CU),
    ("tables/memw_a.cu", TABLE_MEMW_A_CU),
    ("tables/lt.cu", TABLE_LT_CU),
    ("tables/shift.cu", TABLE_SHIFT_CU),
];

/// Whether `libnvrtc` can be loaded (no GPU needed).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library names cudarc knows.
    unsafe { sys::is_culib_present() }
}

/// NVRTC version (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), CudaError> {
    if !nvrtc_available() {
        return Err(CudaError::NoNvrtc);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: library present; out-pointers valid.
    let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    check(r, "nvrtcVersion")?;
    Ok((major, minor))
}

fn check(r: sys::nvrtcResult, what: &str) -> Result<(), CudaError> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Compile {
            file: what.to_string(),
            arch: String::new(),
            log: format!("{r:?}"),
        })
    }
}

fn options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".into(),
        "-lineinfo".into(),
    ]
}

struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed once.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

/// Compiles one program to a CUBIN for `arch` (e.g. `"sm_90"`), without caching.
pub fn compile_cubin(name: &str, src: &str, arch: &str) -> Result<Vec<u8>, CudaError> {
    if !nvrtc_available() {
        return Err(CudaError::NoNvrtc);
    }
    let cerr = |log: String| CudaError::Compile {
        file: name.to_string(),
        arch: arch.to_string(),
        log,
    };
    let c_src = CString::new(src).map_err(|_| cerr("source contains NUL".into()))?;
    let c_name = CString::new(name).map_err(|_| cerr("name contains NUL".into()))?;
    let h_srcs: Vec<CString> = HEADERS
        .iter()
        .map(|(_, s)| CString::new(*s).unwrap_or_default())
        .collect();
    let h_names: Vec<CString> = HEADERS
        .iter()
        .map(|(n, _)| CString::new(*n).unwrap_or_default())
        .collect();
    let h_src_ptrs: Vec<*const c_char> = h_srcs.iter().map(|s| s.as_ptr()).collect();
    let h_name_ptrs: Vec<*const c_char> = h_names.iter().map(|s| s.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: all pointers live until the call returns; NVRTC copies the strings.
    let r = unsafe {
        sys::nvrtcCreateProgram(
            &mut prog,
            c_src.as_ptr(),
            c_name.as_ptr(),
            HEADERS.len() as i32,
            h_src_ptrs.as_ptr(),
            h_name_ptrs.as_ptr(),
        )
    };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(cerr(format!("nvrtcCreateProgram: {r:?}")));
    }
    let prog = Program(prog);
    let opts: Vec<CString> = options(arch)
        .into_iter()
        .filter_map(|o| CString::new(o).ok())
        .collect();
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: valid program and option strings.
    let r = unsafe { sys::nvrtcCompileProgram(prog.0, opt_ptrs.len() as i32, opt_ptrs.as_ptr()) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(cerr(format!("{r:?}: {}", program_log(&prog))));
    }
    let mut size = 0usize;
    // SAFETY: compiled program; out-pointer valid.
    let r = unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return Err(cerr(format!(
            "nvrtcGetCUBINSize: {r:?} (arch must be a real sm_XX)"
        )));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: buffer of the size NVRTC reported.
    let r = unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(cerr(format!("nvrtcGetCUBIN: {r:?}")));
    }
    Ok(cubin)
}

fn program_log(prog: &Program) -> String {
    let mut size = 0usize;
    // SAFETY: valid program.
    unsafe {
        if sys::nvrtcGetProgramLogSize(prog.0, &mut size) != sys::nvrtcResult::NVRTC_SUCCESS
            || size == 0
        {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        if sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr() as *mut c_char)
            != sys::nvrtcResult::NVRTC_SUCCESS
        {
            return String::new();
        }
        CStr::from_bytes_until_nul(&buf)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// FNV-1a 64 over the byte strings, each followed by a separator.
fn cache_key(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain(std::iter::once(&0xffu8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("ZKRV_CUDA_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("zkrv-cuda"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("zkrv-cuda"))
}

/// (name, arch, key) -> the CUBIN, behind a per-entry lock so that concurrent callers of one program (e.g. a
/// background precompile and the first launch) compile it once.
type MemCache = Mutex<HashMap<(String, String, u64), Arc<Mutex<Option<Arc<Vec<u8>>>>>>>;

/// Compiles (or fetches from the memory / disk cache) one program for `arch`.
pub fn cubin_cached(name: &str, src: &str, arch: &str) -> Result<Arc<Vec<u8>>, CudaError> {
    static MEM: OnceLock<MemCache> = OnceLock::new();
    let (major, minor) = nvrtc_version()?;
    let ver = format!("{major}.{minor}");
    let opts = options(arch).join(" ");
    let mut parts: Vec<&[u8]> = vec![
        ver.as_bytes(),
        arch.as_bytes(),
        opts.as_bytes(),
        name.as_bytes(),
        src.as_bytes(),
    ];
    for (n, s) in HEADERS {
        parts.push(n.as_bytes());
        parts.push(s.as_bytes());
    }
    let key = cache_key(&parts);
    let mem = MEM.get_or_init(Default::default);
    let mkey = (name.to_string(), arch.to_string(), key);
    let slot = mem
        .lock()
        .map_err(|_| CudaError::Cache("poisoned lock".into()))?
        .entry(mkey)
        .or_default()
        .clone();
    let mut slot = slot
        .lock()
        .map_err(|_| CudaError::Cache("poisoned lock".into()))?;
    if let Some(c) = slot.as_ref() {
        return Ok(c.clone());
    }
    let file = cache_dir().map(|d| {
        d.join(format!(
            "{}-{arch}-{key:016x}.cubin",
            name.replace('.', "_")
        ))
    });
    let cubin = match file.as_ref().and_then(|f| std::fs::read(f).ok()) {
        Some(bytes) if !bytes.is_empty() => bytes,
        _ => {
            let bytes = compile_cubin(name, src, arch)?;
            if let Some(f) = &file {
                // Best effort: write to a temporary name, then rename (atomic on one filesystem).
                if let Some(dir) = f.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let tmp = f.with_extension(format!("tmp{}", std::process::id()));
                if std::fs::write(&tmp, &bytes).is_ok() {
                    let _ = std::fs::rename(&tmp, f);
                }
            }
            bytes
        }
    };
    let cubin = Arc::new(cubin);
    *slot = Some(cubin.clone());
    Ok(cubin)
}
