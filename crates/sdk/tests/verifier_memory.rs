//! Verifier memory of a crafted segmented (version 4) proof file (issue 24 item 5): the heap the verifier
//! holds must be a small constant times the file's size, however many pages a segment lists. A segment's
//! memory tokens (512 init and 512 final per listed page) are made on the fly from the page list, the
//! published writes and the ELF; the verifier keeps only the written cells, never 4 KiB per page.
//!
//! Measured with a counting global allocator (this test binary's only test, so nothing else allocates
//! meanwhile): the peak heap above the baseline while the file is decoded and verified. `ZKRV_TEST_PAGES=N`
//! measures one file with N listed pages and prints the figure (for before/after comparisons).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use zkrv_sdk::proof_file::{decode_any, encode_segmented, Decoded};
use zkrv_sdk::{prove, Error, Program, ProveOptions, Receipt};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                let d = new_size - layout.size();
                let now = LIVE.fetch_add(d, Ordering::Relaxed) + d;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak heap bytes above the live bytes at the start while `f` runs.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed) - base)
}

/// An honest two-segment file of `exitcode` (no zk: the verifier's memory path is the same), and its
/// program.
fn honest() -> (Program, Vec<u8>) {
    let program = Program::load(format!(
        "{}/../../guests/bin/exitcode.elf",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("bundled guest loads");
    let opts = ProveOptions {
        zk: false,
        segment_cycles: Some(128),
        ..ProveOptions::default()
    };
    let r = prove(&program, b"", &opts).unwrap().receipt;
    assert_eq!(r.segments(), 2);
    let bytes = r.to_bytes().unwrap();
    Receipt::from_bytes(&bytes)
        .unwrap()
        .verify_any_exit(&program)
        .expect("the honest file verifies");
    (program, bytes)
}

/// `bytes` with `extra` more pages listed in segment 0 (from 0x1000 up, merged with its own pages, so its
/// writes stay inside them), and with `write` a published write to the first cell of each: a well-formed
/// file whose segment-0 STARK proof then fails.
fn crafted(bytes: &[u8], extra: u32, write: bool) -> Vec<u8> {
    let Ok(Decoded::Segmented {
        statement,
        segment_rows,
        mut segments,
        config,
    }) = decode_any(bytes)
    else {
        panic!("not a segmented file")
    };
    let s = &mut segments[0];
    s.pages.extend((0..extra).map(|k| 0x1000 + k * 4096));
    s.pages.sort_unstable();
    s.pages.dedup();
    if write {
        s.writes
            .extend((0..extra).map(|k| ((0x1000 + k * 4096) / 8, 0x5eed_0000 + k as u64)));
        s.writes.sort_unstable_by_key(|w| w.0);
        s.writes.dedup_by_key(|w| w.0);
    }
    encode_segmented(&config, &statement, segment_rows, &segments).unwrap()
}

/// Decodes and verifies `file`: it must be refused as an invalid segment 0; returns the peak heap.
fn verify_peak(program: &Program, file: &[u8]) -> usize {
    let (r, peak) = peak_of(|| Receipt::from_bytes(file).and_then(|r| r.verify(program)));
    match r {
        Err(Error::Invalid(e)) => assert!(e.to_string().contains("segment 0"), "{e}"),
        other => panic!("expected an invalid segment 0, got {other:?}"),
    }
    peak
}

#[test]
fn crafted_segment_pages_cost_the_verifier_a_constant_times_the_file() {
    let (program, bytes) = honest();
    if let Some(n) = std::env::var("ZKRV_TEST_PAGES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        let file = crafted(&bytes, n, false);
        let peak = verify_peak(&program, &file);
        eprintln!(
            "{n} crafted pages: file {} bytes, verifier peak {peak} bytes ({:.1}x the file)",
            file.len(),
            peak as f64 / file.len() as f64
        );
        return;
    }
    // The fixed part: the honest file (AIRs, preprocessed DECODE, one STARK verification per thread).
    let small = crafted(&bytes, 1 << 10, false);
    let big = crafted(&bytes, 1 << 17, false);
    let written = crafted(&bytes, 1 << 17, true);
    let p_small = verify_peak(&program, &small);
    let p_big = verify_peak(&program, &big);
    let p_written = verify_peak(&program, &written);
    let per_byte = |a: usize, b: usize, fa: &[u8], fb: &[u8]| {
        b.saturating_sub(a) as f64 / (fb.len() - fa.len()) as f64
    };
    eprintln!(
        "crafted pages 2^10 -> 2^17: file {} -> {} bytes, verifier peak {p_small} -> {p_big} bytes \
         (the peak grows {:.2} bytes per file byte); one write per page more: file {} bytes, peak \
         {p_written} bytes ({:.2} bytes per file byte of the writes)",
        small.len(),
        big.len(),
        per_byte(p_small, p_big, &small, &big),
        written.len(),
        per_byte(p_big, p_written, &big, &written),
    );
    // 2^17 pages = 512 KiB more file: the decoded page list (4 bytes a page, as in the file); never the
    // 4 KiB (image) or 2 x 512 tokens per page of an expanded segment memory (1225x the file before).
    assert!(
        per_byte(p_small, p_big, &small, &big) <= 2.0,
        "pages: the verifier's peak grew {} bytes for {} more file bytes",
        p_big.saturating_sub(p_small),
        big.len() - small.len()
    );
    // A write: 12 file bytes, 16 decoded and 16 in the run image.
    assert!(
        per_byte(p_big, p_written, &big, &written) <= 3.0,
        "writes: the verifier's peak grew {} bytes for {} more file bytes",
        p_written.saturating_sub(p_big),
        written.len() - big.len()
    );
    for (p, f) in [(p_big, &big), (p_written, &written)] {
        assert!(
            p <= 8 * f.len() + (64 << 20),
            "verifier peak {p} bytes for a {} byte file",
            f.len()
        );
    }
}
