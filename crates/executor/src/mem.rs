//! Guest memory: one flat, lazily zeroed host allocation covering `[0, GUEST_MEM_END)`.
//!
//! The 2 GiB block comes from `alloc_zeroed` (calloc/mmap on Linux), so the host only commits
//! pages the guest touches. Guest address `a` is byte `a` of the block; the guard page
//! `[0, 0x1000)` exists but every access to it is rejected by the bounds checks.

use crate::{GUEST_MEM_END, GUEST_MEM_START};
use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Flat guest memory. All accessors take a guest address and check it.
pub(crate) struct FlatMem {
    ptr: *mut u8,
}

const SIZE: usize = GUEST_MEM_END as usize;
// 16 = the System allocator's MIN_ALIGN: larger alignments go through posix_memalign + memset,
// which would touch all 2 GiB; calloc of a fresh mmap does not.
const ALIGN: usize = 16;

impl FlatMem {
    /// Allocates zeroed guest memory; `None` if the host refuses 2 GiB of address space.
    pub(crate) fn new() -> Option<FlatMem> {
        let layout = Layout::from_size_align(SIZE, ALIGN).ok()?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            None
        } else {
            Some(FlatMem { ptr })
        }
    }

    /// Whether `[addr, addr + len)` lies inside the guest address space.
    #[inline(always)]
    pub(crate) fn in_bounds(addr: u64, len: u64) -> bool {
        (GUEST_MEM_START..=GUEST_MEM_END).contains(&addr) && len <= GUEST_MEM_END - addr
    }

    /// Reads `N <= 8` bytes at `addr` (little-endian, zero-extended), or `None` if out of bounds.
    #[inline(always)]
    pub(crate) fn read<const N: usize>(&self, addr: u64) -> Option<u64> {
        if !Self::in_bounds(addr, N as u64) {
            return None;
        }
        let mut b = [0u8; 8];
        // SAFETY: [addr, addr + N) is inside the SIZE-byte allocation (checked above), N <= 8.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(addr as usize), b.as_mut_ptr(), N) };
        Some(u64::from_le_bytes(b))
    }

    /// Writes the low `N <= 8` bytes of `val` at `addr`; `false` if out of bounds.
    #[inline(always)]
    pub(crate) fn write<const N: usize>(&mut self, addr: u64, val: u64) -> bool {
        if !Self::in_bounds(addr, N as u64) {
            return false;
        }
        let b = val.to_le_bytes();
        // SAFETY: [addr, addr + N) is inside the allocation (checked above), N <= 8.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), self.ptr.add(addr as usize), N) };
        true
    }

    /// The bytes `[addr, addr + len)`, or `None` if out of bounds.
    pub(crate) fn slice(&self, addr: u64, len: u64) -> Option<&[u8]> {
        if !Self::in_bounds(addr, len) {
            return None;
        }
        // SAFETY: the range is inside the allocation; `&self` prevents concurrent writes.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.add(addr as usize), len as usize) })
    }

    /// The mutable bytes `[addr, addr + len)`, or `None` if out of bounds.
    pub(crate) fn slice_mut(&mut self, addr: u64, len: u64) -> Option<&mut [u8]> {
        if !Self::in_bounds(addr, len) {
            return None;
        }
        // SAFETY: the range is inside the allocation; `&mut self` makes the borrow unique.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(addr as usize), len as usize) })
    }
}

impl Drop for FlatMem {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc_zeroed` with this exact layout.
        unsafe { dealloc(self.ptr, Layout::from_size_align_unchecked(SIZE, ALIGN)) }
    }
}

// SAFETY: FlatMem owns its allocation exclusively (like a Box<[u8]>).
unsafe impl Send for FlatMem {}
