//! Launch-size guards of the fill kernels at their limits: one step inside each bound is accepted with the
//! exact grid, one step outside is refused with an error naming the bound. No GPU needed.

#[cfg(feature = "cuda")]
#[test]
fn fill_launch_guards_at_limits() {
    use zkrv_machine_cuda::tables::{launch_1d, FILL_BLOCK, MAX_FILL_LOG_ROWS};
    let max_rows = 1u64 << MAX_FILL_LOG_ROWS;
    // Rows: 1 and 2^26 accepted, 0 and 2^26 + 1 refused.
    assert_eq!(launch_1d(1, 44, FILL_BLOCK).unwrap().grid_dim, (1, 1, 1));
    let c = launch_1d(max_rows, 44, FILL_BLOCK).unwrap();
    assert_eq!(c.grid_dim.0 as u64, max_rows / FILL_BLOCK as u64);
    assert_eq!(c.block_dim, (FILL_BLOCK, 1, 1));
    for bad in [0, max_rows + 1] {
        let e = launch_1d(bad, 1, FILL_BLOCK).unwrap_err().to_string();
        assert!(e.contains("rows"), "{e}");
    }
    // Grid rounding: block + 1 rows need two blocks.
    assert_eq!(
        launch_1d(FILL_BLOCK as u64 + 1, 1, FILL_BLOCK)
            .unwrap()
            .grid_dim
            .0,
        2
    );
    // 32-bit cell index: 2^26 x 63 fits (< 2^32), 2^26 x 64 = 2^32 does not; 2^32 - 1 cells exactly fits.
    assert!(launch_1d(max_rows, 63, FILL_BLOCK).is_ok());
    let e = launch_1d(max_rows, 64, FILL_BLOCK).unwrap_err().to_string();
    assert!(e.contains("32-bit"), "{e}");
    assert!(launch_1d(1 << 16, (1 << 16) - 1, FILL_BLOCK).is_ok()); // 2^32 - 2^16 cells
    assert!(launch_1d(3, u32::MAX as u64 / 3, FILL_BLOCK).is_ok()); // exactly u32::MAX cells
    assert!(launch_1d(3, u32::MAX as u64 / 3 + 1, FILL_BLOCK).is_err());
    assert!(launch_1d(2, u64::MAX, FILL_BLOCK).is_err()); // rows * width overflows u64
                                                          // Block size: 32 and 1024 accepted, 0, 16, 48 and 2048 refused.
    assert!(launch_1d(1024, 1, 32).is_ok());
    assert_eq!(launch_1d(1024, 1, 1024).unwrap().grid_dim.0, 1);
    for bad in [0, 16, 48, 2048] {
        let e = launch_1d(1024, 1, bad).unwrap_err().to_string();
        assert!(e.contains("block"), "{e}");
    }
    // Grid: with 32-thread blocks, 2^26 rows need 2^21 blocks, far below the 2^31 - 1 limit; the limit itself
    // cannot be reached with rows <= 2^26, so the row bound is the binding one (checked above).
    assert_eq!(launch_1d(max_rows, 1, 32).unwrap().grid_dim.0, 1 << 21);
}

/// The height of an event table (LOAD, STORE, MEMW_A) at its limits: `max(n, min_height)` rounded up to a power
/// of two, up to 2^26 rows; a larger table or a `min_height` that is not a power of two is refused.
#[cfg(feature = "cuda")]
#[test]
fn event_table_height_at_limits() {
    use zkrv_machine_cuda::tables::{event_table_height, MAX_FILL_LOG_ROWS};
    let max = 1usize << MAX_FILL_LOG_ROWS;
    assert_eq!(event_table_height(0, 1).unwrap(), 1);
    assert_eq!(event_table_height(0, 8).unwrap(), 8);
    assert_eq!(event_table_height(9, 8).unwrap(), 16);
    assert_eq!(event_table_height(5, 64).unwrap(), 64);
    assert_eq!(event_table_height(max - 1, 8).unwrap(), max);
    assert_eq!(event_table_height(max, 8).unwrap(), max);
    assert_eq!(event_table_height(0, max).unwrap(), max);
    let e = event_table_height(max + 1, 8).unwrap_err().to_string();
    assert!(e.contains("exceeds"), "{e}");
    assert!(event_table_height(1, 2 * max).is_err());
    for bad in [0, 3, 12] {
        let e = event_table_height(1, bad).unwrap_err().to_string();
        assert!(e.contains("power of two"), "{e}");
    }
}
