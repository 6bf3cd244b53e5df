//! The device radix sort (`kernels/sort.cu`, `zkrv_cuda::sort::stable_sort_perm`) against a stable host sort
//! (`sort_by_key`) of the same key tuples: sizes 0, 1, 2, 255, 256, 257, 4095, 4096, 4097 (tile edges) and
//! 100_000, keys of 1 to 4 words, with many duplicates (narrow key ranges), constant words and bytes (skipped
//! passes) and full-range words; seeded (`ZKRV_SEED` to replay). The host emulation always runs (the kernels'
//! per-tile, per-warp and per-lane logic as loops, `sort_emu_perm`); the GPU part prints `SKIPPED
//! gpu_sort_matches_stable_host_sort (GPU part): <reason>` without a device.
#![cfg(feature = "cuda")]

#[path = "common/dev_util.rs"]
mod dev_util;
#[path = "common/host_emu.rs"]
mod host_emu;

use rand::rngs::StdRng;
use rand::Rng;
use zkrv_cuda::sort::stable_sort_perm;

struct Case {
    name: String,
    n: usize,
    /// keys[0] most significant.
    keys: Vec<Vec<u32>>,
}

/// One key word of `n` entries of the given kind.
fn word(r: &mut StdRng, n: usize, kind: u32) -> Vec<u32> {
    match kind {
        // many duplicates
        0 => (0..n).map(|_| r.gen_range(0..4)).collect(),
        // constant
        1 => vec![0xdead_beef; n],
        // full range
        2 => (0..n).map(|_| r.gen()).collect(),
        // a few distinct large values (duplicates in every byte position)
        3 => {
            let vals: Vec<u32> = (0..5).map(|_| r.gen()).collect();
            (0..n).map(|_| vals[r.gen_range(0..vals.len())]).collect()
        }
        // a dense index-like range (cells), descending runs
        _ => (0..n)
            .map(|i| ((n - i) / 3) as u32 ^ r.gen_range(0..2))
            .collect(),
    }
}

fn cases() -> Vec<Case> {
    let mut r = dev_util::rng("gpu_sort_matches_stable_host_sort");
    let mut out = Vec::new();
    for n in [0usize, 1, 2, 255, 256, 257, 4095, 4096, 4097, 100_000] {
        for words in 1..=4 {
            let kinds: Vec<u32> = (0..words).map(|_| r.gen_range(0..5)).collect();
            let keys = kinds.iter().map(|&k| word(&mut r, n, k)).collect();
            out.push(Case {
                name: format!("n {n}, words {kinds:?}"),
                n,
                keys,
            });
        }
    }
    out
}

fn reference(c: &Case) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..c.n as u32).collect();
    idx.sort_by_key(|&i| c.keys.iter().map(|k| k[i as usize]).collect::<Vec<u32>>());
    idx
}

const DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    u64 ncases;
    rd(&ncases, 8);
    for (u64 c = 0; c < ncases; c++) {
        u64 hdr[2];
        rd(hdr, sizeof hdr);
        const u64 n = hdr[0], words = hdr[1];
        std::vector<std::vector<u32>> keys(words, std::vector<u32>(n + 1));
        std::vector<const u32*> ptrs(words + 1);
        for (u64 w = 0; w < words; w++) {
            rd(keys[w].data(), n * 4);
            ptrs[w] = keys[w].data();
        }
        std::vector<u32> perm(n + 1);
        sort_emu_perm(ptrs.data(), (u32)words, n, perm.data());
        fwrite(perm.data(), 4, n, stdout);
    }
    return 0;
}
"#;

#[test]
fn gpu_sort_matches_stable_host_sort() {
    let cases = cases();
    let want: Vec<Vec<u32>> = cases.iter().map(reference).collect();
    let mut input = (cases.len() as u64).to_le_bytes().to_vec();
    for c in &cases {
        input.extend((c.n as u64).to_le_bytes());
        input.extend((c.keys.len() as u64).to_le_bytes());
        for k in &c.keys {
            input.extend_from_slice(bytemuck::cast_slice(k));
        }
    }
    match host_emu::run("sort", zkrv_cuda::nvrtc::SORT_CU.src, DRIVER, &input) {
        None => {
            eprintln!("SKIPPED gpu_sort_matches_stable_host_sort (host emulation): no C++ compiler")
        }
        Some(out) => {
            let mut at = 0;
            for (c, w) in cases.iter().zip(&want) {
                let got = host_emu::u32s(&out[at..at + 4 * c.n]);
                at += 4 * c.n;
                assert_eq!(&got, w, "host emulation, {}", c.name);
            }
            assert_eq!(at, out.len());
            eprintln!(
                "gpu_sort_matches_stable_host_sort: host emulation matches on {} sorts",
                cases.len()
            );
        }
    }
    let Some(dev) = dev_util::device("gpu_sort_matches_stable_host_sort") else {
        return;
    };
    for (c, w) in cases.iter().zip(&want) {
        let bufs: Vec<_> = c
            .keys
            .iter()
            .map(|k| {
                if k.is_empty() {
                    dev.alloc::<u32>(0).unwrap()
                } else {
                    dev.upload(k).unwrap()
                }
            })
            .collect();
        let refs: Vec<_> = bufs.iter().collect();
        let perm = stable_sort_perm(&dev, &refs, c.n).unwrap();
        assert_eq!(perm.len(), c.n, "GPU, {}: length", c.name);
        assert_eq!(&dev.download(&perm).unwrap(), w, "GPU, {}", c.name);
    }
    // A key word shorter than n is refused.
    let short = dev.upload(&[1u32, 2]).unwrap();
    let e = stable_sort_perm(&dev, &[&short], 3)
        .unwrap_err()
        .to_string();
    assert!(e.contains("key word 0"), "{e}");
    eprintln!(
        "gpu_sort_matches_stable_host_sort: GPU matches on {} sorts",
        cases.len()
    );
}
