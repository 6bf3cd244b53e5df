//! The limits of a provable run, checked by `run_for_proof` right after execution and before any trace is
//! allocated: at most `MAX_TOUCHED_PAGES` touched 4 KiB pages (the PAGE table's 2^26 rows at 512 rows per
//! page) and at most `MAX_PROVABLE_CYCLES` cycles.

use std::time::Instant;
use zkrv_executor::asm::*;
use zkrv_executor::Program;
use zkrv_machine::{run_for_proof, MachineError, MAX_PROVABLE_CYCLES, MAX_TOUCHED_PAGES};

/// Stores one byte into each of `pages` consecutive 4 KiB pages from 0x1000_0000, then exits 0.
fn touch_pages(pages: u64) -> Program {
    let start = 0x1000_0000i64;
    let mut w = Vec::new();
    w.extend(li(5, start));
    w.extend(li(6, 4096));
    w.extend(li(7, start + 4096 * pages as i64));
    w.push(sb(0, 5, 0));
    w.push(add(5, 5, 6));
    w.push(bltu(5, 7, -8));
    w.extend(li(10, 0));
    w.extend(li(17, 93));
    w.push(ECALL);
    Program::from_words(0x10000, &w).unwrap()
}

#[test]
fn touched_page_limit_is_exact_and_named() {
    assert_eq!(MAX_TOUCHED_PAGES, 131_072);
    let at = run_for_proof(&touch_pages(MAX_TOUCHED_PAGES as u64), b"").expect("at the limit");
    assert_eq!(at.record.pages.len(), MAX_TOUCHED_PAGES);
    drop(at);
    let t = Instant::now();
    let over = MAX_TOUCHED_PAGES + 1;
    match run_for_proof(&touch_pages(over as u64), b"") {
        Err(e @ MachineError::TooMuchMemory { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains(&format!(
                    "touches {over} pages of 4 KiB ({} bytes)",
                    over * 4096
                )),
                "{m}"
            );
            assert!(m.contains("docs/abi.md"), "{m}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a run over the page limit was accepted"),
    }
    assert!(t.elapsed().as_secs() < 60);
}

#[test]
fn cycle_limit_names_the_provable_maximum() {
    let looping = Program::from_words(0x10000, &[jal(0, 0)]).unwrap();
    match run_for_proof(&looping, b"") {
        Err(e @ MachineError::CycleLimit { limit }) => {
            assert_eq!(limit, MAX_PROVABLE_CYCLES);
            assert!(e.to_string().contains("67108863"), "{e}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("an endless loop was accepted"),
    }
}
