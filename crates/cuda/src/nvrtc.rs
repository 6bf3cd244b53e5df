//! Run-time compilation of kernel programs ([`KernelSource`]: this crate's `kernels/*.cu`, and the programs
//! other crates declare the same way) with NVRTC to CUBIN for one architecture (e.g. `sm_90`), with an
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

/// A header a kernel program may `#include`, under its include name (e.g. `"field.cuh"`).
#[derive(Clone, Copy, Debug)]
pub struct Header {
    /// The include name (`#include "<name>"`).
    pub name: &'static str,
    /// The header's text.
    pub src: &'static str,
}

/// One NVRTC program: a `.cu` source and the headers it may include. The crate that owns a `.cu` file
/// declares its `KernelSource` as a `static` (this crate's are below; the RV64IM fill kernels are declared in
/// `zkrv-machine-cuda`), and launches name it ([`crate::device::Device::launch`]): there is no central list.
///
/// `name` is the NVRTC program name (shown in compile errors and used in the disk cache's file names); it
/// must be unique among the programs loaded on one device ([`CudaError::Cache`] otherwise). The compiled
/// CUBIN is cached by a hash of `name`, `src`, every header's name and text, the options, the architecture and
/// the NVRTC version ([`cubin_cached`]), so a changed header recompiles exactly the programs that list it.
#[derive(Debug)]
pub struct KernelSource {
    /// Program name, e.g. `"poly.cu"` or `"tables/lt.cu"`.
    pub name: &'static str,
    /// The `.cu` text.
    pub src: &'static str,
    /// The headers NVRTC offers the program (a superset of what it includes is fine).
    pub headers: &'static [Header],
}

/// `kernels/field.cuh`: Goldilocks and Ext3 arithmetic (mirrors `zkrv_stark::field`).
pub const FIELD_CUH: Header = Header {
    name: "field.cuh",
    src: include_str!("../kernels/field.cuh"),
};
/// `kernels/keccak.cuh`: Keccak-f[1600] (shared by merkle.cu and zk.cu).
pub const KECCAK_CUH: Header = Header {
    name: "keccak.cuh",
    src: include_str!("../kernels/keccak.cuh"),
};
/// `kernels/poseidon2.cuh`: the Poseidon2 permutation and node hash (merkle.cu; docs/stark.md §11).
pub const POSEIDON2_CUH: Header = Header {
    name: "poseidon2.cuh",
    src: include_str!("../kernels/poseidon2.cuh"),
};
/// `kernels/logup.cuh`: helpers of the generated LogUp aux row kernels (see `crate::logup`).
pub const LOGUP_CUH: Header = Header {
    name: "logup.cuh",
    src: include_str!("../kernels/logup.cuh"),
};
/// `kernels/quotient.cuh`: helpers of the generated quotient row kernels (see `crate::quotient`).
pub const QUOTIENT_CUH: Header = Header {
    name: "quotient.cuh",
    src: include_str!("../kernels/quotient.cuh"),
};

/// The headers of this crate's programs and of the generated LogUp / quotient sources.
pub const HEADERS: &[Header] = &[
    FIELD_CUH,
    KECCAK_CUH,
    POSEIDON2_CUH,
    LOGUP_CUH,
    QUOTIENT_CUH,
];

const fn program(name: &'static str, src: &'static str) -> KernelSource {
    KernelSource {
        name,
        src,
        headers: HEADERS,
    }
}

/// `kernels/poly.cu`: NTT / iNTT / coset LDE (mirrors `zkrv_stark::poly`).
pub static POLY_CU: KernelSource = program("poly.cu", include_str!("../kernels/poly.cu"));
/// `kernels/merkle.cu`: Keccak-256 rows and Merkle levels (mirrors `zkrv_stark::merkle`).
pub static MERKLE_CU: KernelSource = program("merkle.cu", include_str!("../kernels/merkle.cu"));
/// `kernels/open.cu`: DEEP codeword, opened values, FRI fold, query gathers (mirrors
/// `zkrv_stark::backend`, `backend/open.rs`).
pub static OPEN_CU: KernelSource = program("open.cu", include_str!("../kernels/open.cu"));
/// `kernels/zk.cu`: zero-knowledge randomness, salts and randomized traces (mirrors `zkrv_stark::zk`).
pub static ZK_CU: KernelSource = program("zk.cu", include_str!("../kernels/zk.cu"));
/// `kernels/sort.cu`: the stable LSD radix sort returning a permutation (`crate::sort`).
pub static SORT_CU: KernelSource = program("sort.cu", include_str!("../kernels/sort.cu"));
/// `kernels/logup.cu`: the running-sum scan of the LogUp aux trace (mirrors `zkrv_stark::logup`).
pub static LOGUP_CU: KernelSource = program("logup.cu", include_str!("../kernels/logup.cu"));
/// `kernels/quotient.cu`: chunk split and zk masking of the quotient (mirrors `zkrv_stark::backend`, `zk`).
pub static QUOTIENT_CU: KernelSource =
    program("quotient.cu", include_str!("../kernels/quotient.cu"));
/// The field parity kernels of `field.cuh`, compiled as their own program.
pub static FIELD_TEST_CU: KernelSource = program(
    "field_test.cu",
    "#define ZKRV_FIELD_TEST_KERNELS\n#include \"field.cuh\"\n",
);

/// This crate's kernel programs (for the compile check; launches name their program directly).
pub static PROGRAMS: &[&KernelSource] = &[
    &POLY_CU,
    &MERKLE_CU,
    &ZK_CU,
    &FIELD_TEST_CU,
    &LOGUP_CU,
    &QUOTIENT_CU,
    &OPEN_CU,
    &SORT_CU,
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

/// Compiles the program `name` (source `src`, offered `headers`) to a CUBIN for `arch` (e.g. `"sm_90"`),
/// without caching. Errors: [`CudaError::NoNvrtc`], [`CudaError::Compile`] with NVRTC's log.
pub fn compile_cubin(
    name: &str,
    src: &str,
    headers: &[Header],
    arch: &str,
) -> Result<Vec<u8>, CudaError> {
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
    let h_srcs: Vec<CString> = headers
        .iter()
        .map(|h| CString::new(h.src).unwrap_or_default())
        .collect();
    let h_names: Vec<CString> = headers
        .iter()
        .map(|h| CString::new(h.name).unwrap_or_default())
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
            headers.len() as i32,
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

/// Compiles (or fetches from the memory / disk cache) one program for `arch`; arguments as
/// [`compile_cubin`]. The cache key covers the NVRTC version, `arch`, the options, `name`, `src` and every
/// header's name and text.
pub fn cubin_cached(
    name: &str,
    src: &str,
    headers: &[Header],
    arch: &str,
) -> Result<Arc<Vec<u8>>, CudaError> {
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
    for h in headers {
        parts.push(h.name.as_bytes());
        parts.push(h.src.as_bytes());
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
            let bytes = compile_cubin(name, src, headers, arch)?;
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
