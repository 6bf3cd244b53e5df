// Seeded RNG and the device for the GPU parity tests, shared with zkrv-machine-cuda's
// tests/common/fill_util.rs (which `include!`s this file, hence no inner attributes here).

/// A seeded RNG (`ZKRV_SEED` replays a run); prints the seed.
pub fn rng(test: &str) -> rand::rngs::StdRng {
    use rand::SeedableRng;
    let seed = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("{test}: seed {seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// The GPU in debug mode (fresh allocations poisoned with 0xff), or `None` after printing the skip line.
pub fn device(test: &str) -> Option<zkrv_cuda::Device> {
    match zkrv_cuda::Device::new() {
        Ok(d) => {
            d.set_debug(true);
            eprintln!("{test}: GPU part on {} ({})", d.name(), d.arch());
            Some(d)
        }
        Err(e) => {
            eprintln!("SKIPPED {test} (GPU part): {e}");
            None
        }
    }
}
