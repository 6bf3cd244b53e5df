//! The device context: one CUDA context and stream, NVRTC-compiled modules, RAII device buffers and pinned host
//! staging buffers.
//!
//! All work of one [`Device`] is queued on its one stream, in order, so buffers are handed to kernels as raw
//! device addresses and cudarc's per-buffer event tracking is switched off (it only matters across streams).
//! A [`DeviceBuffer`] is freed (stream-ordered, `cuMemFreeAsync`) when dropped, after the work queued before.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    result as cu, sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    DeviceRepr, LaunchConfig, PinnedHostSlice, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;

use crate::error::{driver_err, launch_err, CudaError};
use crate::nvrtc::{self, KernelSource};

/// Largest grid x-dimension CUDA accepts (compute capability >= 3.0); launchers refuse larger grids instead
/// of launching a truncated one.
pub const MAX_GRID_X: u64 = (1 << 31) - 1;

/// The loaded module of one [`KernelSource`], with the source it was built from (a second program under the
/// same name is refused, not silently given the first one's module).
struct LoadedModule {
    src: &'static str,
    module: Arc<CudaModule>,
}

/// A CUDA device: context, stream, kernel modules (compiled for its compute capability), twiddle tables.
pub struct Device {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    arch: String,
    name: String,
    /// Modules of the [`KernelSource`] programs, by program name.
    modules: Mutex<HashMap<&'static str, LoadedModule>>,
    /// Modules of generated sources (e.g. the per-AIR LogUp kernels), keyed by (name, source).
    generated: Mutex<HashMap<(String, String), Arc<CudaModule>>>,
    poison: AtomicBool,
    sync_launches: AtomicBool,
    pub(crate) twiddles: Mutex<Option<Arc<crate::poly::Twiddles>>>,
    staging: Mutex<Option<Staging>>,
    /// Bytes of live [`DeviceBuffer`]s, their high-water mark, and the budget [`Device::alloc`] keeps.
    memory: Arc<MemoryBudget>,
}

/// The device-memory budget of one [`Device`]: bytes held by live [`DeviceBuffer`]s (counted at `alloc`,
/// returned on drop), their high-water mark, and the cap. Kernel modules, twiddle tables' bookkeeping and
/// the driver's own reservations are outside it (they are counted by `cuMemGetInfo`, not here).
#[derive(Debug)]
pub struct MemoryBudget {
    live: AtomicU64,
    peak: AtomicU64,
    budget: AtomicU64,
}

impl MemoryBudget {
    fn add(&self, bytes: u64) -> Result<(), CudaError> {
        let budget = self.budget.load(Ordering::Relaxed);
        let mut cur = self.live.load(Ordering::Relaxed);
        loop {
            let next = cur.saturating_add(bytes);
            if next > budget {
                return Err(CudaError::Budget {
                    requested: bytes,
                    in_use: cur,
                    budget,
                });
            }
            match self
                .live
                .compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::Relaxed);
                    return Ok(());
                }
                Err(v) => cur = v,
            }
        }
    }

    fn sub(&self, bytes: u64) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Bytes of `ZKRV_GPU_MEMORY` (GiB, a positive decimal number), if set. Errors name the bad value.
pub fn gpu_memory_from_env() -> Result<Option<u64>, CudaError> {
    match std::env::var("ZKRV_GPU_MEMORY") {
        Err(_) => Ok(None),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => crate::parse_gib(&v).map(Some).ok_or_else(|| {
            CudaError::InvalidArgument(format!(
                "ZKRV_GPU_MEMORY={v:?}: expected GiB, e.g. 24 or 7.5"
            ))
        }),
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({}, {})", self.name, self.arch)
    }
}

/// Whether the NVIDIA driver library can be loaded on this machine.
pub fn libcuda_available() -> bool {
    // SAFETY: only tries to dlopen the library names cudarc knows.
    unsafe { sys::is_culib_present() }
}

impl Device {
    /// Opens GPU 0. Errors (never panics) when libcuda or libnvrtc cannot be loaded or no GPU is present.
    pub fn new() -> Result<Device, CudaError> {
        Self::with_ordinal(0)
    }

    /// The number of CUDA devices (`cuDeviceGetCount`). Errors (never panics) when libcuda cannot be
    /// loaded or the driver fails to initialize.
    pub fn count() -> Result<usize, CudaError> {
        if !libcuda_available() {
            return Err(CudaError::NoLibCuda);
        }
        let count = CudaContext::device_count()
            .map_err(|e| CudaError::NoGpu(format!("cuInit/cuDeviceGetCount: {e}")))?;
        Ok(count.max(0) as usize)
    }

    /// Opens GPU `ordinal`.
    pub fn with_ordinal(ordinal: usize) -> Result<Device, CudaError> {
        if !libcuda_available() {
            return Err(CudaError::NoLibCuda);
        }
        if !nvrtc::nvrtc_available() {
            return Err(CudaError::NoNvrtc);
        }
        let count = CudaContext::device_count()
            .map_err(|e| CudaError::NoGpu(format!("cuInit/cuDeviceGetCount: {e}")))?;
        if count <= ordinal as i32 {
            return Err(CudaError::NoGpu(format!(
                "{count} device(s), asked for #{ordinal}"
            )));
        }
        let ctx =
            CudaContext::new(ordinal).map_err(|e| driver_err("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: every buffer of this Device is used on its one stream only (see the module docs).
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| driver_err("compute capability", e))?;
        let name = ctx.name().map_err(|e| driver_err("cuDeviceGetName", e))?;
        let stream = ctx
            .new_stream()
            .map_err(|e| driver_err("cuStreamCreate", e))?;
        let debug = cfg!(debug_assertions) || std::env::var_os("ZKRV_CUDA_DEBUG").is_some();
        Ok(Device {
            ctx,
            stream,
            arch: format!("sm_{major}{minor}"),
            name,
            modules: Mutex::new(HashMap::new()),
            generated: Mutex::new(HashMap::new()),
            poison: AtomicBool::new(debug),
            sync_launches: AtomicBool::new(debug),
            twiddles: Mutex::new(None),
            staging: Mutex::new(None),
            memory: Arc::new(MemoryBudget {
                live: AtomicU64::new(0),
                peak: AtomicU64::new(0),
                budget: AtomicU64::new(u64::MAX),
            }),
        })
        .and_then(|d: Device| {
            // Default budget: the device's free memory now, capped by ZKRV_GPU_MEMORY.
            let (free, _) = d.mem_info()?;
            let cap = gpu_memory_from_env()?.unwrap_or(u64::MAX);
            d.set_memory_budget((free as u64).min(cap));
            Ok(d)
        })
    }

    /// Device name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// NVRTC architecture the kernels are compiled for, e.g. "sm_90".
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// (free, total) device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize), CudaError> {
        self.ctx
            .mem_get_info()
            .map_err(|e| driver_err("cuMemGetInfo", e))
    }

    /// Caps the bytes of live [`DeviceBuffer`]s: an allocation past it fails with [`CudaError::Budget`]
    /// (before any driver call). Default: the free memory when the device was opened, capped by
    /// `ZKRV_GPU_MEMORY` (GiB).
    pub fn set_memory_budget(&self, bytes: u64) {
        self.memory.budget.store(bytes, Ordering::Relaxed);
    }

    /// The budget of [`Device::set_memory_budget`], in bytes.
    pub fn memory_budget(&self) -> u64 {
        self.memory.budget.load(Ordering::Relaxed)
    }

    /// Bytes held by live [`DeviceBuffer`]s now.
    pub fn memory_in_use(&self) -> u64 {
        self.memory.live.load(Ordering::Relaxed)
    }

    /// High-water mark of [`Device::memory_in_use`] since the device was opened or the last
    /// [`Device::reset_memory_peak`].
    pub fn memory_peak(&self) -> u64 {
        self.memory.peak.load(Ordering::Relaxed)
    }

    /// Restarts [`Device::memory_peak`] from the bytes in use now.
    pub fn reset_memory_peak(&self) {
        self.memory
            .peak
            .store(self.memory_in_use(), Ordering::Relaxed);
    }

    /// Debug mode: fill fresh buffers with 0xff and synchronise after every launch, so that unwritten cells show
    /// and a failing kernel is named. On by default in debug builds or with `ZKRV_CUDA_DEBUG` set; tests turn it
    /// on explicitly.
    pub fn set_debug(&self, on: bool) {
        self.poison.store(on, Ordering::Relaxed);
        self.sync_launches.store(on, Ordering::Relaxed);
    }

    /// Makes this device's context current on the calling thread (raw driver calls need it; the prover may
    /// call in from any thread).
    pub(crate) fn bind(&self) -> Result<(), CudaError> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("cuCtxSetCurrent", e))
    }

    /// Waits for all queued work; reports asynchronous kernel failures.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.stream
            .synchronize()
            .map_err(|e| launch_err("(stream synchronize)", e))
    }

    /// Loads (compiling or fetching from the cache) kernel `name` of `program`. Errors:
    /// [`CudaError::Cache`] when another program of the same name was loaded on this device, compile and
    /// driver errors naming the program / kernel.
    pub fn function(
        &self,
        program: &'static KernelSource,
        name: &str,
    ) -> Result<CudaFunction, CudaError> {
        let module = {
            let mut mods = self
                .modules
                .lock()
                .map_err(|_| CudaError::Cache("poisoned lock".into()))?;
            match mods.get(program.name) {
                Some(m) if std::ptr::eq(m.src, program.src) || m.src == program.src => {
                    m.module.clone()
                }
                Some(_) => {
                    return Err(CudaError::Cache(format!(
                        "two kernel programs named {} (names must be unique)",
                        program.name
                    )))
                }
                None => {
                    let file = program.name;
                    let cubin =
                        nvrtc::cubin_cached(file, program.src, program.headers, &self.arch)?;
                    let m = self
                        .ctx
                        .load_module(Ptx::from_binary(cubin.as_ref().clone()))
                        .map_err(|e| driver_err(format!("cuModuleLoadData({file})"), e))?;
                    mods.insert(
                        file,
                        LoadedModule {
                            src: program.src,
                            module: m.clone(),
                        },
                    );
                    m
                }
            }
        };
        module
            .load_function(name)
            .map_err(|e| driver_err(format!("cuModuleGetFunction({name})"), e))
    }

    /// Loads a kernel function of a source generated at run time (compiled by NVRTC with this crate's headers
    /// [`nvrtc::HEADERS`], CUBIN cached in memory and on disk by a hash of the source, see
    /// [`nvrtc::cubin_cached`]; the module is kept for this device's life).
    pub(crate) fn generated_function(
        &self,
        name: &str,
        src: &str,
        kernel: &str,
    ) -> Result<CudaFunction, CudaError> {
        let module = {
            let mut mods = self
                .generated
                .lock()
                .map_err(|_| CudaError::Cache("poisoned lock".into()))?;
            let key = (name.to_string(), src.to_string());
            match mods.get(&key) {
                Some(m) => m.clone(),
                None => {
                    let cubin = nvrtc::cubin_cached(name, src, nvrtc::HEADERS, &self.arch)?;
                    let m = self
                        .ctx
                        .load_module(Ptx::from_binary(cubin.as_ref().clone()))
                        .map_err(|e| driver_err(format!("cuModuleLoadData({name})"), e))?;
                    mods.insert(key, m.clone());
                    m
                }
            }
        };
        module
            .load_function(kernel)
            .map_err(|e| driver_err(format!("cuModuleGetFunction({kernel})"), e))
    }

    /// Launches `kernel` of `program` with scalar/pointer arguments `args` (each a `u64`, `u32` or device
    /// address as `u64`).
    ///
    /// # Safety
    /// The argument list must match the kernel's parameters (types and order), every address must point to a
    /// live buffer of this device large enough for what the kernel touches, and `cfg` must satisfy the kernel's
    /// documented launch shape.
    pub unsafe fn launch(
        &self,
        program: &'static KernelSource,
        kernel: &str,
        cfg: LaunchConfig,
        args: &[KArg],
    ) -> Result<(), CudaError> {
        let f = self.function(program, kernel)?;
        self.launch_function(&f, kernel, cfg, args)
    }

    /// Launches `kernel` of the generated source `src` (see [`Device::generated_function`]).
    ///
    /// # Safety
    /// As [`Device::launch`].
    pub(crate) unsafe fn launch_generated(
        &self,
        name: &str,
        src: &str,
        kernel: &str,
        cfg: LaunchConfig,
        args: &[KArg],
    ) -> Result<(), CudaError> {
        let f = self.generated_function(name, src, kernel)?;
        self.launch_function(&f, kernel, cfg, args)
    }

    /// # Safety
    /// As [`Device::launch`].
    unsafe fn launch_function(
        &self,
        f: &CudaFunction,
        kernel: &str,
        cfg: LaunchConfig,
        args: &[KArg],
    ) -> Result<(), CudaError> {
        if cfg.shared_mem_bytes > 48 * 1024 {
            f.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                cfg.shared_mem_bytes as i32,
            )
            .map_err(|e| driver_err("cuFuncSetAttribute", e))?;
        }
        let mut b = self.stream.launch_builder(f);
        for a in args {
            match a {
                KArg::U64(v) => b.arg(v),
                KArg::U32(v) => b.arg(v),
            };
        }
        b.launch(cfg).map_err(|e| launch_err(kernel, e))?;
        if self.sync_launches.load(Ordering::Relaxed) {
            self.stream
                .synchronize()
                .map_err(|e| launch_err(kernel, e))?;
        }
        Ok(())
    }

    /// Allocates `len` elements; in debug mode every byte is set to 0xff.
    pub fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>, CudaError> {
        self.bind()?;
        let bytes = len.max(1) * std::mem::size_of::<T>();
        self.memory.add(bytes as u64)?;
        // SAFETY: the memory is uninitialised; callers write it before reading (poisoned in debug mode).
        let slice = match unsafe { self.stream.alloc::<T>(len.max(1)) } {
            Ok(s) => s,
            Err(e) => {
                self.memory.sub(bytes as u64);
                return Err(match driver_err("alloc", e) {
                    CudaError::OutOfMemory { .. } => CudaError::OutOfMemory { bytes },
                    other => other,
                });
            }
        };
        let buf = DeviceBuffer {
            slice,
            len,
            counted: bytes as u64,
            memory: self.memory.clone(),
            _t: PhantomData,
        };
        if self.poison.load(Ordering::Relaxed) {
            // SAFETY: the buffer is live and `bytes` long.
            unsafe { cu::memset_d8_async(buf.ptr(), 0xff, bytes, self.stream.cu_stream()) }
                .map_err(|e| driver_err("cuMemsetD8Async", e))?;
        }
        Ok(buf)
    }

    /// Allocates `len` zeroed elements.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<DeviceBuffer<T>, CudaError> {
        let buf = self.alloc::<T>(len)?;
        // SAFETY: live buffer of at least this many bytes.
        unsafe {
            cu::memset_d8_async(
                buf.ptr(),
                0,
                len.max(1) * std::mem::size_of::<T>(),
                self.stream.cu_stream(),
            )
        }
        .map_err(|e| driver_err("cuMemsetD8Async", e))?;
        Ok(buf)
    }

    /// Copies a host slice to a new device buffer. Large slices go through two pinned staging buffers
    /// (double-buffered), small ones directly.
    pub fn upload<T: DeviceRepr + Copy>(&self, h: &[T]) -> Result<DeviceBuffer<T>, CudaError> {
        let d = self.alloc::<T>(h.len())?;
        self.copy_htod(h, &d, 0)?;
        Ok(d)
    }

    /// Copies `h` into `d` at element offset `offset`.
    pub fn copy_htod<T: DeviceRepr + Copy>(
        &self,
        h: &[T],
        d: &DeviceBuffer<T>,
        offset: usize,
    ) -> Result<(), CudaError> {
        self.bind()?;
        if offset + h.len() > d.len() {
            return Err(CudaError::InvalidArgument(format!(
                "copy of {} elements at {offset} into a buffer of {}",
                h.len(),
                d.len()
            )));
        }
        let sz = std::mem::size_of::<T>();
        let bytes: &[u8] =
            // SAFETY: plain-old-data view of the host slice.
            unsafe { std::slice::from_raw_parts(h.as_ptr() as *const u8, std::mem::size_of_val(h)) };
        let dst = d.ptr() + (offset * sz) as u64;
        if bytes.len() <= STAGE_BYTES {
            // SAFETY: pageable copy, synchronous with respect to the host buffer.
            unsafe { cu::memcpy_htod_async(dst, bytes, self.stream.cu_stream()) }
                .map_err(|e| driver_err("cuMemcpyHtoDAsync", e))?;
            return self.synchronize();
        }
        let mut guard = self
            .staging
            .lock()
            .map_err(|_| CudaError::Cache("poisoned lock".into()))?;
        if guard.is_none() {
            *guard = Some(Staging::new(self)?);
        }
        let st = guard
            .as_mut()
            .ok_or_else(|| CudaError::Cache("staging".into()))?;
        for (k, chunk) in bytes.chunks(STAGE_BYTES).enumerate() {
            let slot = k % 2;
            st.done[slot]
                .synchronize()
                .map_err(|e| driver_err("cuEventSynchronize", e))?;
            let buf = st.bufs[slot]
                .as_mut_slice()
                .map_err(|e| driver_err("pinned", e))?;
            par_copy(&mut buf[..chunk.len()], chunk);
            // SAFETY: pinned source stays untouched until `done[slot]` fires; destination in bounds.
            unsafe {
                cu::memcpy_htod_async(
                    dst + (k * STAGE_BYTES) as u64,
                    &st.bufs[slot]
                        .as_slice()
                        .map_err(|e| driver_err("pinned", e))?[..chunk.len()],
                    self.stream.cu_stream(),
                )
            }
            .map_err(|e| driver_err("cuMemcpyHtoDAsync", e))?;
            st.done[slot]
                .record(&self.stream)
                .map_err(|e| driver_err("cuEventRecord", e))?;
        }
        self.synchronize()
    }

    /// Copies a device buffer back to a new host vector (through the pinned staging buffers when large).
    pub fn download<T: DeviceRepr + Copy + Default>(
        &self,
        d: &DeviceBuffer<T>,
    ) -> Result<Vec<T>, CudaError> {
        let mut h = vec![T::default(); d.len()];
        self.copy_dtoh(d, 0, &mut h)?;
        Ok(h)
    }

    /// Copies `h.len()` elements of `d` starting at element `offset` into `h`.
    pub fn copy_dtoh<T: DeviceRepr + Copy>(
        &self,
        d: &DeviceBuffer<T>,
        offset: usize,
        h: &mut [T],
    ) -> Result<(), CudaError> {
        self.bind()?;
        if offset + h.len() > d.len() {
            return Err(CudaError::InvalidArgument(format!(
                "copy of {} elements at {offset} from a buffer of {}",
                h.len(),
                d.len()
            )));
        }
        let sz = std::mem::size_of::<T>();
        let n_bytes = std::mem::size_of_val(h);
        // SAFETY: plain-old-data view of the host slice.
        let bytes: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(h.as_mut_ptr() as *mut u8, n_bytes) };
        let src = d.ptr() + (offset * sz) as u64;
        if n_bytes <= STAGE_BYTES {
            // SAFETY: in-bounds copy; synchronised before returning.
            unsafe { cu::memcpy_dtoh_async(bytes, src, self.stream.cu_stream()) }
                .map_err(|e| driver_err("cuMemcpyDtoHAsync", e))?;
            return self.synchronize();
        }
        let mut guard = self
            .staging
            .lock()
            .map_err(|_| CudaError::Cache("poisoned lock".into()))?;
        if guard.is_none() {
            *guard = Some(Staging::new(self)?);
        }
        let st = guard
            .as_mut()
            .ok_or_else(|| CudaError::Cache("staging".into()))?;
        let n_chunks = n_bytes.div_ceil(STAGE_BYTES);
        let range = |k: usize| k * STAGE_BYTES..((k + 1) * STAGE_BYTES).min(n_bytes);
        let issue = |st: &mut Staging, k: usize| -> Result<(), CudaError> {
            let r = range(k);
            let slot = k % 2;
            let dst = st.bufs[slot]
                .as_mut_slice()
                .map_err(|e| driver_err("pinned", e))?;
            // SAFETY: pinned destination is read only after `done[slot]` fires.
            unsafe {
                cu::memcpy_dtoh_async(
                    &mut dst[..r.len()],
                    src + r.start as u64,
                    self.stream.cu_stream(),
                )
            }
            .map_err(|e| driver_err("cuMemcpyDtoHAsync", e))?;
            st.done[slot]
                .record(&self.stream)
                .map_err(|e| driver_err("cuEventRecord", e))
        };
        issue(st, 0)?;
        for k in 0..n_chunks {
            if k + 1 < n_chunks {
                issue(st, k + 1)?;
            }
            let slot = k % 2;
            st.done[slot]
                .synchronize()
                .map_err(|e| driver_err("cuEventSynchronize", e))?;
            let r = range(k);
            let src_h = st.bufs[slot]
                .as_slice()
                .map_err(|e| driver_err("pinned", e))?;
            par_copy(&mut bytes[r.clone()], &src_h[..r.len()]);
        }
        Ok(())
    }

    /// Device-to-device copy of `len` elements.
    pub fn copy_dtod<T: DeviceRepr>(
        &self,
        src: &DeviceBuffer<T>,
        src_off: usize,
        dst: &DeviceBuffer<T>,
        dst_off: usize,
        len: usize,
    ) -> Result<(), CudaError> {
        self.bind()?;
        if src_off + len > src.len() || dst_off + len > dst.len() {
            return Err(CudaError::InvalidArgument(
                "device copy out of bounds".into(),
            ));
        }
        let sz = std::mem::size_of::<T>();
        // SAFETY: both ranges in bounds of live buffers.
        unsafe {
            cu::memcpy_dtod_async(
                dst.ptr() + (dst_off * sz) as u64,
                src.ptr() + (src_off * sz) as u64,
                len * sz,
                self.stream.cu_stream(),
            )
        }
        .map_err(|e| driver_err("cuMemcpyDtoDAsync", e))
    }

    /// Runs `f` between two events on the stream and returns the elapsed device time in milliseconds.
    pub fn time_ms(&self, f: impl FnOnce() -> Result<(), CudaError>) -> Result<f32, CudaError> {
        self.bind()?;
        let start = self
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| driver_err("cuEventCreate", e))?;
        let end = self
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| driver_err("cuEventCreate", e))?;
        start
            .record(&self.stream)
            .map_err(|e| driver_err("cuEventRecord", e))?;
        f()?;
        end.record(&self.stream)
            .map_err(|e| driver_err("cuEventRecord", e))?;
        end.synchronize()
            .map_err(|e| launch_err("(timed region)", e))?;
        start
            .elapsed_ms(&end)
            .map_err(|e| driver_err("cuEventElapsedTime", e))
    }
}

/// A kernel argument: a scalar or a device address.
#[derive(Clone, Copy, Debug)]
pub enum KArg {
    /// A `uint64_t` (or a device address).
    U64(u64),
    /// A `uint32_t`.
    U32(u32),
}

const STAGE_BYTES: usize = 32 << 20;

/// `dst.copy_from_slice(src)` on up to 8 threads (a single core copies ~6 GB/s, below PCIe's ~55 GB/s).
fn par_copy(dst: &mut [u8], src: &[u8]) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads <= 1 || src.len() < (4 << 20) {
        dst.copy_from_slice(src);
        return;
    }
    let part = src.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (d, c) in dst.chunks_mut(part).zip(src.chunks(part)) {
            s.spawn(move || d.copy_from_slice(c));
        }
    });
}

/// Two pinned host buffers of 32 MiB used to stage large host<->device copies.
struct Staging {
    bufs: [PinnedHostSlice<u8>; 2],
    done: [cudarc::driver::CudaEvent; 2],
}

impl Staging {
    fn new(dev: &Device) -> Result<Self, CudaError> {
        let alloc = || -> Result<PinnedHostSlice<u8>, CudaError> {
            // SAFETY: u8 has no invalid bit patterns; the buffer is written before it is read.
            unsafe { dev.ctx.alloc_pinned::<u8>(STAGE_BYTES) }
                .map_err(|e| driver_err("cuMemHostAlloc", e))
        };
        let ev = || {
            dev.ctx
                .new_event(None)
                .map_err(|e| driver_err("cuEventCreate", e))
        };
        let done = [ev()?, ev()?];
        // Record once so that the first synchronize() returns at once.
        done[0]
            .record(&dev.stream)
            .map_err(|e| driver_err("cuEventRecord", e))?;
        done[1]
            .record(&dev.stream)
            .map_err(|e| driver_err("cuEventRecord", e))?;
        Ok(Staging {
            bufs: [alloc()?, alloc()?],
            done,
        })
    }
}

/// An owned device allocation of `len` elements of `T` (freed, stream-ordered, on drop).
pub struct DeviceBuffer<T> {
    slice: CudaSlice<T>,
    len: usize,
    /// Bytes charged to `memory` at allocation, returned on drop.
    counted: u64,
    memory: Arc<MemoryBudget>,
    _t: PhantomData<T>,
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        self.memory.sub(self.counted);
    }
}

impl<T> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceBuffer<{}>[{}]",
            std::any::type_name::<T>(),
            self.len
        )
    }
}

impl<T> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Raw device address (valid while `self` lives; use only on the owning Device's stream).
    pub fn ptr(&self) -> u64 {
        let (p, _sync) = self.slice.device_ptr(self.slice.stream());
        p
    }
}

/// A page-locked host buffer (fast, asynchronous DMA) of `len` elements.
pub struct PinnedBuffer<T: DeviceRepr + ValidAsZeroBits> {
    inner: PinnedHostSlice<T>,
}

impl<T: DeviceRepr + ValidAsZeroBits> PinnedBuffer<T> {
    /// Allocates `len` elements of page-locked host memory.
    pub fn new(dev: &Device, len: usize) -> Result<Self, CudaError> {
        // SAFETY: T is valid as all-zero bits; the buffer is written before it is read.
        let inner = unsafe { dev.ctx.alloc_pinned::<T>(len.max(1)) }
            .map_err(|e| driver_err("cuMemHostAlloc", e))?;
        Ok(PinnedBuffer { inner })
    }

    /// The host memory (waits for pending copies into or out of it).
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], CudaError> {
        self.inner
            .as_mut_slice()
            .map_err(|e| driver_err("pinned", e))
    }

    /// The host memory (waits for pending copies).
    pub fn as_slice(&self) -> Result<&[T], CudaError> {
        self.inner.as_slice().map_err(|e| driver_err("pinned", e))
    }
}

/// A launch shape: `grid` blocks of `block` threads with `smem` bytes of dynamic shared memory.
pub fn cfg(grid: u32, block: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: smem,
    }
}
