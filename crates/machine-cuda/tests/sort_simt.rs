//! The cooperative kernels of the device sort and memory walk run as written (their `__global__` code, not
//! the per-row functions `tests/sort.rs` and `tests/memwalk.rs` emulate) on the host SIMT emulation
//! (`common/simt_emu.rs`: a thread per CUDA thread, block and warp barriers): the whole sort as
//! `zkrv_cuda::sort::stable_sort_perm` drives it (byte histograms, passes over non-constant digits, per-tile
//! histograms, the one-block scan, the warp-ranked stable scatter) against `sort_by_key`, and the memory walk's
//! one-block segmented scan (`memwalk_seg_scan`) against the sequential scan of its operator. Small sizes
//! (tile edges, scan-segment edges; a thread per CUDA thread is slow); seeded, `ZKRV_SEED` to replay.
#![cfg(feature = "cuda")]

#[path = "common/fill_util.rs"]
mod fill_util;
#[path = "common/host_emu.rs"]
mod host_emu;
#[path = "common/simt_emu.rs"]
mod simt_emu;

use rand::Rng;

const DRIVER: &str = r#"
static void rd(void* p, size_t n) {
    if (n && fread(p, 1, n, stdin) != n) { fprintf(stderr, "short input\n"); exit(1); }
}
int main() {
    u64 nsorts;
    rd(&nsorts, 8);
    for (u64 s = 0; s < nsorts; s++) {
        u64 hdr[2];
        rd(hdr, sizeof hdr);
        std::vector<std::vector<u32>> keys(hdr[1], std::vector<u32>(hdr[0] + 1));
        for (auto& k : keys) rd(k.data(), 4 * hdr[0]);
        std::vector<u32> perm(hdr[0] + 1);
        simt_sort(keys, hdr[0], perm.data());
        fwrite(perm.data(), 4, hdr[0], stdout);
    }
    u64 nscans;
    rd(&nscans, 8);
    for (u64 s = 0; s < nscans; s++) {
        u64 n;
        rd(&n, 8);
        std::vector<u32> hm(n + 1);
        std::vector<u64> d(n + 1);
        rd(hm.data(), 4 * n);
        rd(d.data(), 8 * n);
        // The sequential exclusive scan.
        std::vector<u32> whm(n + 1);
        std::vector<u64> wd(n + 1);
        MwSum run = {0, 0};
        for (u64 i = 0; i < n; i++) {
            whm[i] = run.hm;
            wd[i] = run.d;
            run = mw_combine(run, MwSum{hm[i], d[i]});
        }
        u32* ph = hm.data();
        u64* pd = d.data();
        simt_launch(1, MW_SCAN_BLOCK, [&] { memwalk_seg_scan(n, ph, pd); });
        u64 bad = 0;
        for (u64 i = 0; i < n; i++) bad += hm[i] != whm[i] || d[i] != wd[i];
        fwrite(&bad, 8, 1, stdout);
    }
    return 0;
}
"#;

#[test]
fn simt_sort_and_segmented_scan_kernels_match() {
    let mut r = fill_util::rng("simt_sort_and_segmented_scan_kernels_match");
    let mut sorts: Vec<Vec<Vec<u32>>> = Vec::new();
    for (n, words) in [
        (0usize, 1usize),
        (1, 2),
        (2, 1),
        (255, 2),
        (257, 1),
        (4096, 1),
        (4097, 2),
        (600, 3),
    ] {
        let keys = (0..words)
            .map(|w| {
                let range = [4u32, 1 << 12, u32::MAX][(w + n) % 3];
                (0..n).map(|_| r.gen_range(0..=range)).collect()
            })
            .collect();
        sorts.push(keys);
    }
    let mut input = (sorts.len() as u64).to_le_bytes().to_vec();
    let mut want = Vec::new();
    for keys in &sorts {
        let n = keys[0].len();
        input.extend((n as u64).to_le_bytes());
        input.extend((keys.len() as u64).to_le_bytes());
        for k in keys {
            input.extend_from_slice(bytemuck::cast_slice(k));
        }
        let mut idx: Vec<u32> = (0..n as u32).collect();
        idx.sort_by_key(|&i| keys.iter().map(|k| k[i as usize]).collect::<Vec<u32>>());
        want.push(idx);
    }
    let scans = [1usize, 5, 1023, 1024, 1025, 5000];
    input.extend((scans.len() as u64).to_le_bytes());
    for &n in &scans {
        input.extend((n as u64).to_le_bytes());
        // Cell starts (bit 8) about one in 8, masks random.
        let hm: Vec<u32> = (0..n)
            .map(|_| r.gen_range(0..256u32) | if r.gen_range(0..8) == 0 { 0x100 } else { 0 })
            .collect();
        let d: Vec<u64> = (0..n).map(|_| r.gen()).collect();
        input.extend_from_slice(bytemuck::cast_slice(&hm));
        input.extend_from_slice(bytemuck::cast_slice(&d));
    }
    let src = format!(
        "{}\n{}\n{}\n{}",
        simt_emu::SHIM,
        zkrv_cuda::nvrtc::SORT_CU.src,
        zkrv_machine_cuda::kernels::MEMWALK_CU.src,
        simt_emu::SIMT_SORT
    );
    let Some(out) = host_emu::run("sort_simt", &src, DRIVER, &input) else {
        eprintln!("SKIPPED simt_sort_and_segmented_scan_kernels_match: no C++ compiler");
        return;
    };
    let mut at = 0;
    for (keys, w) in sorts.iter().zip(&want) {
        let got = host_emu::u32s(&out[at..at + 4 * w.len()]);
        at += 4 * w.len();
        assert_eq!(&got, w, "sort of {} keys of {} words", w.len(), keys.len());
    }
    for &n in &scans {
        let bad = host_emu::u64s(&out[at..at + 8])[0];
        at += 8;
        assert_eq!(bad, 0, "segmented scan of {n}: {bad} entries differ");
    }
    assert_eq!(at, out.len());
    eprintln!(
        "simt_sort_and_segmented_scan_kernels_match: {} sorts and {} scans match",
        sorts.len(),
        scans.len()
    );
}
