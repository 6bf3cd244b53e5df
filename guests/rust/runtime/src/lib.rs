//! Minimal `no_std` runtime for zkrv RV64IM guests (ABI: `docs/abi.md` of the zkrv repository).
//!
//! A guest crate is `#![no_std] #![no_main]`, depends on this crate and names its entry function with
//! [`entry!`]. The runtime provides `_start` (sets `gp`/`tp`, calls the entry, exits 0 when it returns), the
//! system calls ([`read_input`], [`write_output`], [`debug`], [`exit`]), fixed-width and byte-string helpers,
//! typed values with feature `serde` (`read::<T>()`, `commit(&v)`: docs/abi.md "Typed I/O"), a panic handler
//! (message to fd 2, exit code 101) and a bump allocator over `.heap` (`__heap_start..__heap_end`, 1 MiB by
//! default; freed memory is never reused, but the last block grows in place). Allocation failure panics.
//! The precompiles (docs/abi.md "Precompiles"; zkrv only, not under qemu): [`keccak`] (`keccak_f`,
//! `keccak256`), [`sha256`] (`compress`, `sha256`), [`poseidon2`] (`permute`, `compress`).
#![no_std]

extern crate alloc;

use alloc::vec::Vec;
use core::alloc::{GlobalAlloc, Layout};
use core::arch::{asm, global_asm};
use core::cell::UnsafeCell;
use core::fmt::Write;

/// Linux riscv64 system call numbers (the zkrv ABI uses the same ones).
const SYS_READ: usize = 63;
const SYS_WRITE: usize = 64;
const SYS_EXIT: usize = 93;

mod precompile;
pub use precompile::{keccak, poseidon2, sha256};

/// Exit code of a guest that panicked.
pub const PANIC_EXIT_CODE: u32 = 101;

global_asm!(
    ".section .text.init.enter, \"ax\", @progbits",
    ".globl _start",
    "_start:",
    ".option push",
    ".option norelax",
    "la gp, __global_pointer$",
    ".option pop",
    "la tp, __tls_base",
    "andi sp, sp, -16",
    "call __zkrv_main",
    "li a0, 0",
    "li a7, 93",
    "ecall",
);

/// Declares the guest's entry function, `fn() -> ()`. Returning from it exits with code 0.
#[macro_export]
macro_rules! entry {
    ($path:path) => {
        #[no_mangle]
        extern "C" fn __zkrv_main() {
            let f: fn() = $path;
            f()
        }
    };
}

#[inline(always)]
fn syscall3(n: usize, a0: usize, a1: usize, a2: usize) -> usize {
    let ret;
    // SAFETY: zkrv and Linux system calls only read/write the buffer passed in a1..a2, which the
    // callers below derive from valid slices.
    unsafe {
        asm!("ecall", inlateout("a0") a0 => ret, in("a1") a1, in("a2") a2, in("a7") n,
             options(nostack));
    }
    ret
}

/// Halts the guest; the low 32 bits of `code` are the proven exit code.
pub fn exit(code: u32) -> ! {
    loop {
        syscall3(SYS_EXIT, code as usize, 0, 0);
    }
}

/// Reads the next bytes of the private input into `buf`, looping until `buf` is full or the input ends.
/// Returns the number of bytes read (less than `buf.len()` only at the end of the input).
pub fn read_input(buf: &mut [u8]) -> usize {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        let n = syscall3(SYS_READ, 0, rest.as_mut_ptr() as usize, rest.len()) as isize;
        if n <= 0 {
            break;
        }
        done += n as usize;
    }
    done
}

/// Reads the rest of the private input into a vector (allocates on the bump heap).
pub fn read_input_to_end() -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = read_input(&mut chunk);
        out.extend_from_slice(&chunk[..n]);
        if n < chunk.len() {
            return out;
        }
    }
}

/// Reads 8 bytes of private input as a little-endian `u64`, or returns `default` if the input ends first.
pub fn read_u64(default: u64) -> u64 {
    let mut b = [0u8; 8];
    if read_input(&mut b) == 8 {
        u64::from_le_bytes(b)
    } else {
        default
    }
}

/// Reads 4 bytes of private input as a little-endian `u32`, or returns `default` if the input ends first.
pub fn read_u32(default: u32) -> u32 {
    let mut b = [0u8; 4];
    if read_input(&mut b) == 4 {
        u32::from_le_bytes(b)
    } else {
        default
    }
}

/// Reads a byte string: a `u32` little-endian length, then that many bytes (the encoding of
/// `zkrv_sdk::io::Input::write_bytes` on host). `None` if the input ends first.
pub fn read_bytes() -> Option<Vec<u8>> {
    let mut l = [0u8; 4];
    if read_input(&mut l) != 4 {
        return None;
    }
    let mut out = Vec::new();
    out.resize(u32::from_le_bytes(l) as usize, 0);
    if read_input(&mut out) != out.len() {
        return None;
    }
    Some(out)
}

fn write_fd(fd: usize, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let n = syscall3(SYS_WRITE, fd, bytes.as_ptr() as usize, bytes.len()) as isize;
        if n <= 0 {
            exit(102);
        }
        bytes = &bytes[n as usize..];
    }
}

/// Appends `bytes` to the public output (fd 1), which is part of the proven statement.
pub fn write_output(bytes: &[u8]) {
    write_fd(1, bytes)
}

/// Appends `v` as 8 little-endian bytes to the public output.
pub fn write_u64(v: u64) {
    write_output(&v.to_le_bytes())
}

/// Appends `v` as 4 little-endian bytes to the public output.
pub fn write_u32(v: u32) {
    write_output(&v.to_le_bytes())
}

/// Appends a byte string (a `u32` little-endian length, then the bytes) to the public output; panics if
/// `bytes` is 4 GiB or longer.
pub fn write_bytes(bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).unwrap_or_else(|_| panic!("write_bytes: {} bytes", bytes.len()));
    write_u32(len);
    write_output(bytes)
}

/// Writes `msg` to the debug stream (fd 2): copied to the host's stderr, not proven.
pub fn debug(msg: &str) {
    write_fd(2, msg.as_bytes())
}

struct DebugWriter;

impl Write for DebugWriter {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        debug(s);
        Ok(())
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let _ = writeln!(DebugWriter, "guest {info}");
    exit(PANIC_EXIT_CODE)
}

extern "C" {
    static mut __heap_start: u8;
    static mut __heap_end: u8;
}

/// Bump allocator over `__heap_start..__heap_end`; `dealloc` is a no-op. Guests are single-threaded.
struct BumpAlloc {
    next: UnsafeCell<usize>,
}

// SAFETY: a zkrv guest has a single hart and no interrupts.
unsafe impl Sync for BumpAlloc {}

impl BumpAlloc {
    /// Reserves `size` bytes aligned to `align` (a power of two); null when the heap is exhausted.
    fn bump(&self, size: usize, align: usize) -> *mut u8 {
        // Only the addresses of the linker-script symbols are taken.
        let (start, end) =
            (core::ptr::addr_of_mut!(__heap_start) as usize, core::ptr::addr_of_mut!(__heap_end) as usize);
        // SAFETY: single-threaded guest, no reentrancy: no other reference to `next` is live.
        let next = unsafe { &mut *self.next.get() };
        if *next == 0 {
            *next = start;
        }
        let Some(aligned) = next.checked_add(align - 1).map(|a| a & !(align - 1)) else {
            return core::ptr::null_mut();
        };
        match aligned.checked_add(size) {
            Some(new_next) if new_next <= end => {
                *next = new_next;
                aligned as *mut u8
            }
            _ => core::ptr::null_mut(),
        }
    }
}

// SAFETY: `alloc` returns fresh, suitably aligned, non-overlapping blocks inside the heap section (or null);
// `realloc` only extends the most recent block in place or copies into a fresh one.
unsafe impl GlobalAlloc for BumpAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.bump(layout.size(), layout.align())
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let next = &mut *self.next.get();
        let end = core::ptr::addr_of_mut!(__heap_end) as usize;
        // The most recent block grows (or shrinks) in place, so a growing Vec does not leak its old buffers.
        if ptr as usize + layout.size() == *next {
            if let Some(new_next) = (ptr as usize).checked_add(new_size) {
                if new_next <= end {
                    *next = new_next;
                    return ptr;
                }
            }
            return core::ptr::null_mut();
        }
        let new = self.bump(new_size, layout.align());
        if !new.is_null() {
            core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
        }
        new
    }
}

#[global_allocator]
static ALLOC: BumpAlloc = BumpAlloc { next: UnsafeCell::new(0) };

/// Exit code of [`read`] when the typed input is malformed (it ends inside a frame, or the frame's bytes are
/// not a postcard encoding of the type or leave bytes unread); the reason is on fd 2.
pub const READ_ERROR_EXIT_CODE: u32 = 103;
/// Exit code of [`commit`] when the value cannot be encoded (postcard refuses it: a sequence of unknown
/// length, a custom `Serialize` error); the reason is on fd 2.
pub const COMMIT_ERROR_EXIT_CODE: u32 = 104;

#[cfg(feature = "serde")]
pub mod typed;

/// Reads the next typed value of the private input: one frame (a `u32` LE length, then the value's postcard
/// bytes; docs/abi.md "Typed I/O"), as written on the host by `zkrv_sdk::io::Input::write`. On malformed
/// input it prints `zkrv-guest: read::<T>: <reason>` to fd 2 and exits [`READ_ERROR_EXIT_CODE`] (103); use
/// [`try_read`] to handle the error instead.
#[cfg(feature = "serde")]
pub fn read<T: serde::de::DeserializeOwned>() -> T {
    match try_read() {
        Ok(v) => v,
        Err(e) => {
            let _ = writeln!(DebugWriter, "zkrv-guest: read::<{}>: {e}", core::any::type_name::<T>());
            exit(READ_ERROR_EXIT_CODE)
        }
    }
}

/// [`read`], returning the error instead of exiting.
#[cfg(feature = "serde")]
pub fn try_read<T: serde::de::DeserializeOwned>() -> Result<T, typed::ReadError> {
    typed::read_value(read_input)
}

/// Appends `value` to the public output as one frame (a `u32` LE length, then its postcard bytes), which the
/// host reads with `zkrv_sdk::io::OutputReader::read` or `Receipt::output_value`. If postcard cannot encode
/// it, prints `zkrv-guest: commit::<T>: <reason>` to fd 2 and exits [`COMMIT_ERROR_EXIT_CODE`] (104).
#[cfg(feature = "serde")]
pub fn commit<T: serde::Serialize + ?Sized>(value: &T) {
    match typed::encode_frame(value) {
        Ok(frame) => write_output(&frame),
        Err(e) => {
            let _ = writeln!(DebugWriter, "zkrv-guest: commit::<{}>: {e}", core::any::type_name::<T>());
            exit(COMMIT_ERROR_EXIT_CODE)
        }
    }
}
