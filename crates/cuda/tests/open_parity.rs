//! Parity of the device opening operations (`OpeningOps` of [`CudaBackend`], `kernels/open.cu`) with the CPU
//! backend, operation by operation, on random data (seed printed; `ZKRV_SEED` replays):
//!
//! * `open_kernels_host_emu_match_cpu` (no GPU, runs in CI): `open.cu` compiled as plain C++
//!   (`-DZKRV_HOST_EMU`); its per-element functions (`fri_fold_row`, `deep_row`, `bary_weight` +
//!   `bary_accumulate`) driven on the host over the descriptors of `zkrv_cuda::open` and compared with the
//!   CPU backend's `fold_fri_layer`, `deep_codeword` and `evaluate`.
//! * `open_kernel_launches_host_emu_match_cpu` (no GPU): the whole kernels over emulated grids
//!   (`ZKRV_HOST_EMU_GRID`), incl. the two-pass reduction and the opening gather against `MerkleTree::open`.
//! * on a GPU (each prints `SKIPPED <test>: <reason>` without one): `gpu_fri_fold_matches_cpu` (arity 2, 4,
//!   8; 2^a..2^20, with and without roll-in), `gpu_fri_layer_commit_and_open_match_cpu` (roots, openings,
//!   final codeword at arity 2, 4, 8; zk salted and not; full and capped trees), `gpu_deep_codeword_matches_cpu` (several heights, terms, shared and many points,
//!   `PointInDomain`), `gpu_evaluate_matches_cpu` (stored rounds, points in and out of `g·H_n`),
//!   `gpu_open_rows_matches_cpu` (mixed-height rounds, zk and not).
#![cfg(feature = "cuda")]

#[path = "common/host_emu.rs"]
mod host_emu;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zkrv_cuda::open::{
    bary_scale, bary_shape, deep_plan, ext_words, opening_plan, split_opening, DeepInput,
    SegmentPlan, SegmentSource,
};
use zkrv_cuda::{nvrtc, CudaBackend, CudaCommitted, Device};
use zkrv_stark::backend::{
    CommitOps, CpuBackend, CpuCommitted, DeepTerm, HostCopy, LdeMode, MatrixView, OpeningOps,
    TraceInput,
};
use zkrv_stark::field::{Ext3, Field, PrimeField64, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::MerkleTree;
use zkrv_stark::poly::{coset_point, coset_shift, domain_generator};
use zkrv_stark::zk::ZkRng;

const CPU: CpuBackend = CpuBackend::new(LdeMode::Store);

fn seed(test: &str) -> u64 {
    let seed = std::env::var("ZKRV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("{test}: seed {seed}");
    seed
}

fn backend(test: &str) -> Option<CudaBackend> {
    match Device::new() {
        Ok(d) => {
            d.set_debug(true);
            eprintln!("{test}: running on {} ({})", d.name(), d.arch());
            Some(CudaBackend::new(d))
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

fn rand_f(r: &mut StdRng) -> F {
    F::new(r.gen::<u64>())
}

fn rand_ext(r: &mut StdRng) -> Ext3 {
    Ext3([rand_f(r), rand_f(r), rand_f(r)])
}

fn rand_codeword(r: &mut StdRng, log_size: usize) -> Vec<Ext3> {
    (0..1usize << log_size).map(|_| rand_ext(r)).collect()
}

fn rand_matrix(r: &mut StdRng, log_h: usize, width: usize) -> RowMajorMatrix {
    RowMajorMatrix::new((0..(width << log_h)).map(|_| rand_f(r)).collect(), width)
}

fn words(v: &[Ext3]) -> Vec<u64> {
    v.iter().flat_map(|e| ext_words(*e)).collect()
}

fn push(buf: &mut Vec<u8>, ws: &[u64]) {
    for w in ws {
        buf.extend_from_slice(&w.to_le_bytes());
    }
}

/// The opening points of one matrix of trace height `2^log_n`: `z` and `z·ω_n` (the next-row point),
/// optionally a point of its own.
fn points_for(r: &mut StdRng, z: Ext3, log_n: usize, extra: bool) -> Vec<Ext3> {
    let mut p = vec![z, z * domain_generator(log_n)];
    if extra {
        p.push(rand_ext(r));
    }
    p
}

/// A CPU round of random traces (`(log_n, width)` each), committed with blowup `2^lb`.
fn cpu_round(
    r: &mut StdRng,
    shapes: &[(usize, usize)],
    lb: usize,
    salt: Option<(ZkRng, u32)>,
) -> (Vec<RowMajorMatrix>, CpuCommitted) {
    let traces: Vec<RowMajorMatrix> = shapes.iter().map(|&(h, w)| rand_matrix(r, h, w)).collect();
    let inputs = traces.iter().cloned().map(TraceInput::Host).collect();
    let (_, c) = CPU
        .commit(inputs, lb, salt, zkrv_stark::merkle::MerkleHash::Keccak256)
        .unwrap();
    (traces, c)
}

/// A random fold case of a codeword of `2^s` values at arity `2^a` for the emulated `fri_fold_row` /
/// `fri_fold_kernel` (command 1 of both drivers): `(codeword, beta, roll-in)`.
fn push_fold(
    input: &mut Vec<u8>,
    r: &mut StdRng,
    s: usize,
    a: usize,
    roll: bool,
) -> (Vec<Ext3>, Ext3, Option<Vec<Ext3>>) {
    let cw = rand_codeword(r, s);
    let beta = rand_ext(r);
    let roll_cw = roll.then(|| rand_codeword(r, s - a));
    let w_inv = domain_generator(s).inverse().as_canonical_u64();
    let root_inv = domain_generator(a).inverse().as_canonical_u64();
    push(
        input,
        &[1, s as u64, a as u64, u64::from(roll), w_inv, root_inv],
    );
    push(input, &words(&[beta, beta.pow(1 << a)]));
    push(input, &words(&cw));
    if let Some(rc) = &roll_cw {
        push(input, &words(rc));
    }
    (cw, beta, roll_cw)
}

// ---------------------------------------------------------------------------------------------------------
// Host emulation

const DRIVER: &str = r#"
static u64 rd() { u64 v; if (fread(&v, 8, 1, stdin) != 1) exit(3); return v; }
static void rdv(std::vector<u64>& v, u64 n) { v.resize(n); if (n && fread(v.data(), 8, n, stdin) != n) exit(4); }
static void wr(const u64* p, u64 n) { fwrite(p, 8, n, stdout); }
static ext3 rde() { ext3 e; e.c0 = rd(); e.c1 = rd(); e.c2 = rd(); return e; }
int main() {
    u64 cmd;
    while (fread(&cmd, 8, 1, stdin) == 1) {
        if (cmd == 1) {  // fold: log_size, log_arity, has_roll, w_inv, root_inv, beta, beta^(2^a), cw, roll
            u32 s = (u32)rd(), a = (u32)rd(); u64 has_roll = rd(), w_inv = rd(), root_inv = rd();
            ext3 beta = rde(), beta_roll = rde();
            u64 rows = 1ull << (s - a);
            std::vector<u64> cw, roll, next(3 * rows);
            rdv(cw, 3ull << s);
            if (has_roll) rdv(roll, 3 * rows);
            for (u64 j = 0; j < rows; j++)
                fri_fold_row(cw.data(), has_roll ? roll.data() : nullptr, next.data(), j, s, a, w_inv, root_inv, beta,
                             beta_roll);
            wr(next.data(), next.size());
        } else if (cmd == 2) {  // deep: log_height, omega, shift, n_mats, mats (len, words), n_groups, groups
            u32 lh = (u32)rd(); u64 omega = rd(), shift = rd(), n_mats = rd();
            std::vector<std::vector<u64>> mats(n_mats);
            for (auto& m : mats) rdv(m, rd());
            u64 n_groups = rd(), n = 1ull << lh;
            std::vector<u64> out(3 * n, 0);
            for (u64 g = 0; g < n_groups; g++) {
                std::vector<u64> desc;
                rdv(desc, rd());
                for (u64 t = 0; t < desc[0]; t++) desc[4 + 3 * t] = (u64)mats[desc[4 + 3 * t]].data();
                for (u64 i = 0; i < n; i++) {
                    ext3 r = deep_row(desc.data(), i, lh, omega, shift);
                    if (g > 0) r = ext3_add(r, ext3_load(out.data() + 3 * i));
                    ext3_store(out.data() + 3 * i, r);
                }
            }
            wr(out.data(), out.size());
        } else if (cmd == 3) {  // bary: log_n, omega_n, shift, z, s, width, rows (n x width)
            u32 log_n = (u32)rd(); u64 omega = rd(), shift = rd();
            ext3 z = rde(), s = rde();
            u64 width = rd(), n = 1ull << log_n;
            std::vector<u64> mat, w(3 * n), out(3 * width);
            rdv(mat, n * width);
            for (u64 k = 0; k < n; k++) ext3_store(w.data() + 3 * k, bary_weight(k, log_n, omega, shift, z, s));
            // Three lanes (rows k = l mod 3), added in lane order, as bary_partial_kernel does.
            for (u64 c = 0; c < width; c++) {
                ext3 acc = ext3{0, 0, 0};
                for (u64 l = 0; l < 3; l++) acc = ext3_add(acc, bary_accumulate(w.data(), mat.data(), width, c, l, n, 3));
                ext3_store(out.data() + 3 * c, acc);
            }
            wr(w.data(), w.size());
            wr(out.data(), out.size());
        } else {
            return 5;
        }
    }
    return 0;
}
"#;

/// The C++ emulation of `open.cu` against the CPU backend: FRI folds (arity 2, 4, 8; 2^a..2^12, with and
/// without roll-in),
/// DEEP codewords (several heights, shared points, more than `DEEP_MAX_POINTS` points in one height) and
/// barycentric weights + column sums (the CPU's `evaluate`).
#[test]
fn open_kernels_host_emu_match_cpu() {
    let mut r = StdRng::seed_from_u64(seed("open_kernels_host_emu_match_cpu"));
    let mut input = Vec::new();
    let mut expect: Vec<u64> = Vec::new();

    // 1. Folds.
    for a in 1..=3usize {
        for s in a..=12usize {
            for roll in [false, true] {
                let (cw, beta, roll_cw) = push_fold(&mut input, &mut r, s, a, roll);
                let next = CPU.fold_fri_layer(cw, s, a, beta, roll_cw).unwrap();
                expect.extend(words(&next));
            }
        }
    }

    // 2. DEEP codewords: per case the trace shapes of one height (lb = 1), the points per matrix.
    let lb = 1usize;
    for (log_n, widths, many) in [
        (1usize, vec![1usize, 3], false),
        (3, vec![2, 7, 5], false),
        (4, vec![4, 1], true),
        (6, vec![9], false),
    ] {
        let shapes: Vec<(usize, usize)> = widths.iter().map(|&w| (log_n, w)).collect();
        let (_, c) = cpu_round(&mut r, &shapes, lb, None);
        let z = rand_ext(&mut r);
        // Matrices share `z` and `z·ω`; with `many`, each also opens at 5 points of its own (> 8 in all).
        let points: Vec<Vec<Ext3>> = (0..shapes.len())
            .map(|_| {
                let mut p = points_for(&mut r, z, log_n, false);
                if many {
                    p.extend((0..5).map(|_| rand_ext(&mut r)));
                }
                p
            })
            .collect();
        let values = CPU.evaluate(&[(&c, &points)], lb).unwrap().remove(0);
        let alpha = rand_ext(&mut r);
        let (pts, vals, ws) = ([points.clone()], [values.clone()], [widths.to_vec()]);
        let all = [vec![true; widths.len()]];
        let terms = deep_terms(&[&c], &pts, &vals, &ws, &all, 3); // terms need not start at 0
        let lh = log_n + lb;
        let cw = CPU.deep_codeword(lh, lb, &terms, alpha).unwrap();
        let inputs: Vec<DeepInput<'_>> = terms
            .iter()
            .enumerate()
            .map(|(m, t)| DeepInput {
                addr: m as u64, // the driver replaces the matrix index by its host copy's address
                width: widths[m],
                points: t.points,
                values: t.values,
                k0: t.k0,
            })
            .collect();
        let groups = deep_plan(&inputs, alpha);
        assert_eq!(groups.len(), if many { 2 } else { 1 });
        push(
            &mut input,
            &[
                2,
                lh as u64,
                domain_generator(lh).as_canonical_u64(),
                coset_shift().as_canonical_u64(),
                widths.len() as u64,
            ],
        );
        for m in 0..widths.len() {
            let lde = CPU.download_lde(&c, m).unwrap();
            let v: Vec<u64> = lde.values.iter().map(|x| x.as_canonical_u64()).collect();
            push(&mut input, &[v.len() as u64]);
            push(&mut input, &v);
        }
        push(&mut input, &[groups.len() as u64]);
        for g in &groups {
            push(&mut input, &[g.len() as u64]);
            push(&mut input, g);
        }
        expect.extend(words(&cw));
    }

    // 3. Barycentric weights and sums.
    for (log_n, width) in [(0usize, 1usize), (1, 2), (4, 3), (7, 5), (9, 1)] {
        let (_, c) = cpu_round(&mut r, &[(log_n, width)], lb, None);
        let z = rand_ext(&mut r);
        let vals = CPU.evaluate(&[(&c, &[vec![z]])], lb).unwrap();
        let lh = log_n + lb;
        let n = 1usize << log_n;
        let s = bary_scale(log_n as u32, z);
        push(
            &mut input,
            &[
                3,
                log_n as u64,
                domain_generator(log_n).as_canonical_u64(),
                coset_shift().as_canonical_u64(),
            ],
        );
        push(&mut input, &words(&[z, s]));
        push(&mut input, &[width as u64]);
        let lde = CPU.download_lde(&c, 0).unwrap();
        let rows: Vec<u64> = lde.values[..n * width]
            .iter()
            .map(|x| x.as_canonical_u64())
            .collect();
        push(&mut input, &rows);
        // w_k = s·x_k / (z - x_k), x_k the point of LDE row k (k < n: the points of g·H_n).
        let weights: Vec<Ext3> = (0..n)
            .map(|k| {
                let x = coset_point(lh, k);
                (z - x).inverse() * (s * x)
            })
            .collect();
        expect.extend(words(&weights));
        expect.extend(words(&vals[0][0][0]));
    }

    let Some(out) = host_emu::run("open", nvrtc::OPEN_CU.src, DRIVER, &input) else {
        eprintln!("SKIPPED open_kernels_host_emu_match_cpu: no C++ compiler");
        return;
    };
    let got = host_emu::u64s(&out);
    assert_eq!(got.len(), expect.len(), "output length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expect[i]) {
        panic!("word {i}: {:#x}, expected {:#x}", got[i], expect[i]);
    }
}

/// Host emulation of whole launches (`-DZKRV_HOST_EMU -DZKRV_HOST_EMU_GRID`): grids run block by block, the
/// threads of a block as OS threads with a barrier for `__syncthreads`.
const GRID_PRELUDE: &str = r#"
#define ZKRV_HOST_EMU_GRID
#include <thread>
#include <mutex>
#include <condition_variable>
struct emu_dim { unsigned x, y, z; };
static thread_local emu_dim threadIdx;
static emu_dim blockIdx, blockDim, gridDim;
static std::mutex emu_m;
static std::condition_variable emu_cv;
static unsigned emu_waiting = 0, emu_gen = 0;
static void __syncthreads() {
    std::unique_lock<std::mutex> l(emu_m);
    unsigned g = emu_gen;
    if (++emu_waiting == blockDim.x) { emu_waiting = 0; emu_gen++; emu_cv.notify_all(); }
    else emu_cv.wait(l, [&] { return emu_gen != g; });
}
#define __shared__ static
"#;

const GRID_DRIVER: &str = r#"
// threaded: the kernel synchronises its block (one OS thread per CUDA thread); else threads run in turn.
template <class F> static void emu_launch(unsigned gx, unsigned gy, unsigned block, bool threaded, F f) {
    gridDim = emu_dim{gx, gy, 1};
    blockDim = emu_dim{block, 1, 1};
    for (unsigned y = 0; y < gy; y++)
        for (unsigned x = 0; x < gx; x++) {
            blockIdx = emu_dim{x, y, 0};
            if (threaded) {
                std::vector<std::thread> ts;
                for (unsigned t = 0; t < block; t++) ts.emplace_back([&, t] { threadIdx = emu_dim{t, 0, 0}; f(); });
                for (auto& t : ts) t.join();
            } else {
                for (unsigned t = 0; t < block; t++) { threadIdx = emu_dim{t, 0, 0}; f(); }
            }
        }
}
static u64 rd() { u64 v; if (fread(&v, 8, 1, stdin) != 1) exit(3); return v; }
static void rdv(std::vector<u64>& v, u64 n) { v.resize(n); if (n && fread(v.data(), 8, n, stdin) != n) exit(4); }
static void wr(const u64* p, u64 n) { fwrite(p, 8, n, stdout); }
static unsigned blocks(u64 n, unsigned b) { return (unsigned)((n + b - 1) / b); }
int main() {
    u64 cmd;
    while (fread(&cmd, 8, 1, stdin) == 1) {
        if (cmd == 1) {  // fri_fold_kernel: log_size, log_arity, has_roll, w_inv, root_inv, beta, beta^(2^a), cw, roll
            u32 s = (u32)rd(), a = (u32)rd(); u64 has_roll = rd(), w_inv = rd(), root_inv = rd();
            u64 b[6]; for (auto& x : b) x = rd();
            u64 rows = 1ull << (s - a);
            std::vector<u64> cw, roll, next(3 * rows, ~0ull);
            rdv(cw, 3ull << s);
            if (has_roll) rdv(roll, 3 * rows);
            emu_launch(blocks(rows, 256), 1, 256, false, [&] {
                fri_fold_kernel(cw.data(), has_roll ? roll.data() : nullptr, next.data(), rows, s, a, w_inv, root_inv,
                                b[0], b[1], b[2], b[3], b[4], b[5]);
            });
            wr(next.data(), next.size());
        } else if (cmd == 2) {  // deep_codeword_kernel: log_height, omega, shift, mats, groups
            u32 lh = (u32)rd(); u64 omega = rd(), shift = rd(), n_mats = rd();
            std::vector<std::vector<u64>> mats(n_mats);
            for (auto& m : mats) rdv(m, rd());
            u64 n_groups = rd(), n = 1ull << lh;
            std::vector<u64> out(3 * n, ~0ull);
            for (u64 g = 0; g < n_groups; g++) {
                std::vector<u64> desc;
                rdv(desc, rd());
                for (u64 t = 0; t < desc[0]; t++) desc[4 + 3 * t] = (u64)mats[desc[4 + 3 * t]].data();
                emu_launch(blocks(n, 128), 1, 128, false,
                           [&] { deep_codeword_kernel(desc.data(), out.data(), n, lh, omega, shift, g > 0, 0); });
            }
            wr(out.data(), out.size());
        } else if (cmd == 3) {  // bary kernels: log_n, omega_n, shift, z, s, width, n_blocks, rows_per_block, tiles, rows
            u32 log_n = (u32)rd(); u64 omega = rd(), shift = rd();
            u64 zs[6]; for (auto& x : zs) x = rd();
            u64 width = rd(), n_blocks = rd(), rpb = rd(), tiles = rd(), n = 1ull << log_n;
            std::vector<u64> mat, w(3 * n, ~0ull), partial(3 * width * n_blocks, ~0ull), out(3 * width, ~0ull);
            rdv(mat, n * width);
            emu_launch(blocks(n, 256), 1, 256, false, [&] {
                bary_weights_kernel(w.data(), n, log_n, omega, shift, zs[0], zs[1], zs[2], zs[3], zs[4], zs[5]);
            });
            emu_launch((unsigned)n_blocks, (unsigned)tiles, BARY_THREADS, true,
                       [&] { bary_partial_kernel(w.data(), mat.data(), width, n, rpb, partial.data()); });
            emu_launch(blocks(width, 128), 1, 128, false,
                       [&] { bary_final_kernel(partial.data(), width, n_blocks, out.data()); });
            wr(out.data(), out.size());
        } else if (cmd == 4) {  // open_gather_kernel: srcs, segments (source index patched), indices
            u64 n_srcs = rd();
            std::vector<std::vector<u64>> srcs(n_srcs);
            for (auto& m : srcs) rdv(m, rd());
            u64 n_segs = rd(), n_q = rd(), stride = rd();
            std::vector<u64> segs, idx, out;
            rdv(segs, 5 * n_segs);
            rdv(idx, n_q);
            for (u64 k = 0; k < n_segs; k++) segs[5 * k] = (u64)srcs[segs[5 * k]].data();
            out.assign(n_q * stride, ~0ull);
            emu_launch((unsigned)n_q, (unsigned)n_segs, 64, false,
                       [&] { open_gather_kernel(segs.data(), idx.data(), stride, out.data()); });
            wr(out.data(), out.size());
        } else {
            return 5;
        }
    }
    return 0;
}
"#;

/// Gather input of one tree for the emulated `open_gather_kernel`: the tree's matrices (rows as given,
/// then salts) and levels as sources, the segments of [`opening_plan`] and the indices.
fn push_gather(input: &mut Vec<u8>, tree: &MerkleTree, idx: &[usize]) -> Vec<SegmentPlan> {
    let mats: Vec<&RowMajorMatrix> = tree.matrices().iter().chain(tree.salts()).collect();
    let dims: Vec<(usize, u32)> = mats
        .iter()
        .map(|m| (m.width, m.log_height().unwrap() as u32))
        .collect();
    let lt = tree.log_max_height();
    let plan = opening_plan(lt as u32, &dims);
    // Sources: the matrices, then device level l = host layer lt - l.
    push(input, &[4, (mats.len() + lt + 1) as u64]);
    for m in &mats {
        let v: Vec<u64> = m.values.iter().map(|x| x.as_canonical_u64()).collect();
        push(input, &[v.len() as u64]);
        push(input, &v);
    }
    for l in 0..=lt {
        let lanes: Vec<u64> = tree.layers()[lt - l]
            .iter()
            .flat_map(|d| {
                d.chunks(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            })
            .collect();
        push(input, &[lanes.len() as u64]);
        push(input, &lanes);
    }
    let stride: usize = plan.iter().map(|p| p.width).sum();
    push(input, &[plan.len() as u64, idx.len() as u64, stride as u64]);
    let mut off = 0;
    for p in &plan {
        let src = match p.source {
            SegmentSource::Matrix(i) => i,
            SegmentSource::Level(l) => mats.len() + l,
        };
        push(
            input,
            &[
                src as u64,
                p.width as u64,
                p.shift as u64,
                u64::from(p.flip),
                off,
            ],
        );
        off += p.width as u64;
    }
    push(input, &idx.iter().map(|&q| q as u64).collect::<Vec<_>>());
    plan
}

/// The whole kernels of `open.cu` over emulated grids (launch shapes from `zkrv_cuda::open`): FRI folds,
/// DEEP codewords with several point groups (the accumulate path), the barycentric weights and the
/// two-pass reduction (column tiles and row blocks: widths around 256, several row blocks), and the
/// opening gather of mixed-height, salted and FRI layer trees, against the CPU backend and `MerkleTree::open`.
#[test]
fn open_kernel_launches_host_emu_match_cpu() {
    let mut r = StdRng::seed_from_u64(seed("open_kernel_launches_host_emu_match_cpu"));
    let mut input = Vec::new();
    let mut expect: Vec<u64> = Vec::new();
    let lb = 1usize;

    for (s, a) in [
        (1usize, 1usize),
        (2, 1),
        (9, 1),
        (10, 1),
        (2, 2),
        (11, 2),
        (3, 3),
        (12, 3),
    ] {
        for roll in [false, true] {
            let (cw, beta, roll_cw) = push_fold(&mut input, &mut r, s, a, roll);
            expect.extend(words(&CPU.fold_fri_layer(cw, s, a, beta, roll_cw).unwrap()));
        }
    }

    for (log_n, widths) in [(2usize, vec![3usize, 1]), (7, vec![2, 5])] {
        let shapes: Vec<(usize, usize)> = widths.iter().map(|&w| (log_n, w)).collect();
        let (_, c) = cpu_round(&mut r, &shapes, lb, None);
        let z = rand_ext(&mut r);
        let points: Vec<Vec<Ext3>> = (0..shapes.len())
            .map(|_| {
                let mut p = points_for(&mut r, z, log_n, false);
                p.extend((0..6).map(|_| rand_ext(&mut r)));
                p
            })
            .collect();
        let values = CPU.evaluate(&[(&c, &points)], lb).unwrap().remove(0);
        let alpha = rand_ext(&mut r);
        let (pts, vals, ws) = ([points.clone()], [values.clone()], [widths.to_vec()]);
        let all = [vec![true; widths.len()]];
        let terms = deep_terms(&[&c], &pts, &vals, &ws, &all, 0);
        let lh = log_n + lb;
        expect.extend(words(&CPU.deep_codeword(lh, lb, &terms, alpha).unwrap()));
        let inputs: Vec<DeepInput<'_>> = terms
            .iter()
            .enumerate()
            .map(|(m, t)| DeepInput {
                addr: m as u64,
                width: widths[m],
                points: t.points,
                values: t.values,
                k0: t.k0,
            })
            .collect();
        let groups = deep_plan(&inputs, alpha);
        assert!(groups.len() >= 2, "{} point groups", groups.len());
        push(
            &mut input,
            &[
                2,
                lh as u64,
                domain_generator(lh).as_canonical_u64(),
                coset_shift().as_canonical_u64(),
                widths.len() as u64,
            ],
        );
        for m in 0..widths.len() {
            let v: Vec<u64> = CPU
                .download_lde(&c, m)
                .unwrap()
                .values
                .iter()
                .map(|x| x.as_canonical_u64())
                .collect();
            push(&mut input, &[v.len() as u64]);
            push(&mut input, &v);
        }
        push(&mut input, &[groups.len() as u64]);
        for g in &groups {
            push(&mut input, &[g.len() as u64]);
            push(&mut input, g);
        }
    }

    for (log_n, width) in [
        (0usize, 1usize),
        (3, 255),
        (5, 257),
        (11, 3),
        (11, 40),
        (12, 1),
    ] {
        let (_, c) = cpu_round(&mut r, &[(log_n, width)], lb, None);
        let z = rand_ext(&mut r);
        let vals = CPU.evaluate(&[(&c, &[vec![z]])], lb).unwrap();
        let n = 1usize << log_n;
        let shape = bary_shape(n as u64, width);
        push(
            &mut input,
            &[
                3,
                log_n as u64,
                domain_generator(log_n).as_canonical_u64(),
                coset_shift().as_canonical_u64(),
            ],
        );
        push(&mut input, &words(&[z, bary_scale(log_n as u32, z)]));
        push(
            &mut input,
            &[
                width as u64,
                shape.n_blocks,
                shape.rows_per_block,
                shape.tiles,
            ],
        );
        let lde = CPU.download_lde(&c, 0).unwrap();
        let rows: Vec<u64> = lde.values[..n * width]
            .iter()
            .map(|x| x.as_canonical_u64())
            .collect();
        push(&mut input, &rows);
        expect.extend(words(&vals[0][0][0]));
    }

    // Gathers: (tree, indices); the expected chunks are the CPU openings in the plan's layout.
    let rng = ZkRng::from_test_seed(r.gen());
    let mut trees: Vec<MerkleTree> = Vec::new();
    for (shapes, salt) in [
        (vec![(4usize, 3usize), (2, 20), (4, 1), (0, 2)], None),
        (vec![(3, 5), (1, 2), (3, 1)], Some((rng, 4))),
        (vec![(0, 4)], None),
    ] {
        let (_, c) = cpu_round(&mut r, &shapes, lb, salt);
        trees.push(c.tree);
    }
    for a in 1..=3 {
        let (_, fri) = CPU
            .commit_fri_layer(
                &rand_codeword(&mut r, 6),
                a,
                Some((&rng, 17)),
                zkrv_stark::merkle::MerkleHash::Keccak256,
            )
            .unwrap();
        trees.push(fri);
    }
    let mut gathers = Vec::new();
    for tree in &trees {
        let lt = tree.log_max_height();
        let mut idx: Vec<usize> = (0..20).map(|_| r.gen_range(0..1usize << lt)).collect();
        idx.extend([0, (1 << lt) - 1]);
        let plan = push_gather(&mut input, tree, &idx);
        let stride: usize = plan.iter().map(|p| p.width).sum();
        gathers.push((tree, idx, plan, expect.len(), stride));
        expect.extend(std::iter::repeat_n(0, 22 * stride)); // checked by `split_opening` below
    }

    let src = format!("{GRID_PRELUDE}\n{}", nvrtc::OPEN_CU.src);
    let Some(out) = host_emu::run("open_grid", &src, GRID_DRIVER, &input) else {
        eprintln!("SKIPPED open_kernel_launches_host_emu_match_cpu: no C++ compiler");
        return;
    };
    let got = host_emu::u64s(&out);
    assert_eq!(got.len(), expect.len(), "output length");
    for (tree, idx, plan, at, stride) in &gathers {
        let n_mats = tree.matrices().len() + tree.salts().len();
        for (k, &q) in idx.iter().enumerate() {
            let chunk = &got[at + k * stride..at + (k + 1) * stride];
            let (mut rows, siblings) = split_opening(plan, n_mats, chunk);
            let salts = rows.split_off(tree.matrices().len());
            let (want_rows, want_proof) = tree.open(q);
            assert_eq!(rows, want_rows, "gather rows of leaf {q}");
            assert_eq!(salts, want_proof.salts, "gather salts of leaf {q}");
            assert_eq!(siblings, want_proof.siblings, "gather siblings of leaf {q}");
        }
    }
    let in_gather = |i: usize| gathers.iter().any(|g| (g.3..g.3 + 22 * g.4).contains(&i));
    if let Some(i) = (0..got.len()).find(|&i| !in_gather(i) && got[i] != expect[i]) {
        panic!("word {i}: {:#x}, expected {:#x}", got[i], expect[i]);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Device

/// Every fold size 2^a..2^20 at arity 2, 4 and 8, with and without roll-in.
#[test]
fn gpu_fri_fold_matches_cpu() {
    let test = "gpu_fri_fold_matches_cpu";
    let Some(gpu) = backend(test) else { return };
    let mut r = StdRng::seed_from_u64(seed(test));
    for a in 1..=3usize {
        for s in a..=20usize {
            for roll in [false, true] {
                let cw = rand_codeword(&mut r, s);
                let beta = rand_ext(&mut r);
                let roll_cw = roll.then(|| rand_codeword(&mut r, s - a));
                let d_cw = gpu.upload_codeword(&cw).unwrap();
                let d_roll = roll_cw.as_ref().map(|v| gpu.upload_codeword(v).unwrap());
                let d_next = gpu.fold_fri_layer(d_cw, s, a, beta, d_roll).unwrap();
                assert_eq!(d_next.log_size, s - a);
                let got = gpu.download_codeword(&d_next).unwrap();
                let want = CPU.fold_fri_layer(cw, s, a, beta, roll_cw).unwrap();
                assert!(
                    got == want,
                    "fold 2^{s} arity 2^{a} roll-in {roll}: GPU differs"
                );
            }
        }
    }
    // Shape errors, not panics.
    for (s, a) in [(4, 1), (3, 0), (3, 4), (2, 3)] {
        let cw = gpu.upload_codeword(&rand_codeword(&mut r, 3)).unwrap();
        assert!(gpu.fold_fri_layer(cw, s, a, Ext3::ONE, None).is_err());
    }
}

/// Layer roots and openings at arity 2, 4 and 8 (every row of small layers, random rows with repeats of
/// larger ones), zk salted and not, with the full tree and capped as in recompute mode
/// (`open_fri_layer_capped`), then the fold down to a final codeword.
#[test]
fn gpu_fri_layer_commit_and_open_match_cpu() {
    let test = "gpu_fri_layer_commit_and_open_match_cpu";
    let Some(gpu) = backend(test) else { return };
    let mut r = StdRng::seed_from_u64(seed(test));
    let rng = ZkRng::from_test_seed(r.gen());
    for mode in [
        zkrv_cuda::GpuLdeMode::Store,
        zkrv_cuda::GpuLdeMode::Recompute,
    ] {
        gpu.set_lde_mode(mode);
        for zk in [false, true] {
            for a in 1..=3usize {
                for s in [1usize, 2, 3, 5, 8, 12, 16] {
                    if s < a {
                        continue;
                    }
                    let cw = rand_codeword(&mut r, s);
                    let round = zkrv_stark::zk::ROUND_FRI + s as u32;
                    let salt = zk.then_some((&rng, round));
                    let (cpu_root, cpu_layer) = CPU
                        .commit_fri_layer(&cw, a, salt, zkrv_stark::merkle::MerkleHash::Keccak256)
                        .unwrap();
                    let d_cw = gpu.upload_codeword(&cw).unwrap();
                    let (gpu_root, gpu_layer) = gpu
                        .commit_fri_layer(&d_cw, a, salt, zkrv_stark::merkle::MerkleHash::Keccak256)
                        .unwrap();
                    let what = format!("{mode:?} zk {zk} 2^{s} arity 2^{a}");
                    assert_eq!(gpu_root, cpu_root, "{what}: FRI layer roots differ");
                    let rows = 1usize << (s - a);
                    let mut idx: Vec<usize> = if rows <= 64 {
                        (0..rows).collect()
                    } else {
                        (0..100).map(|_| r.gen_range(0..rows)).collect()
                    };
                    idx.push(idx[0]);
                    idx.push(rows - 1);
                    let want = CPU.open_fri_layer(&cpu_layer, &idx).unwrap();
                    let got = gpu.open_fri_layer(&gpu_layer, &idx).unwrap();
                    assert_eq!(got, want, "{what}: FRI layer openings differ");
                    assert!(got.iter().all(|o| o.values.len() == 1 << a));
                    assert!(gpu.open_fri_layer(&gpu_layer, &[rows]).is_err());
                    // The layer shares the codeword's buffer: folding it must not disturb the opened values.
                    let beta = rand_ext(&mut r);
                    let d_next = gpu.fold_fri_layer(d_cw, s, a, beta, None).unwrap();
                    assert_eq!(gpu.open_fri_layer(&gpu_layer, &idx).unwrap(), want);
                    let next = CPU.fold_fri_layer(cw, s, a, beta, None).unwrap();
                    assert_eq!(
                        gpu.final_codeword(d_next).unwrap(),
                        CPU.final_codeword(next).unwrap(),
                        "{what}: final codewords differ"
                    );
                }
            }
        }
    }
    let s = gpu.stats();
    eprintln!("{s}");
    assert!(s.bytes.keys().any(|(stage, _)| stage == "open"), "{s}");
}

/// The same random traces committed by both backends (GPU from host traces).
fn both_rounds(
    gpu: &CudaBackend,
    r: &mut StdRng,
    shapes: &[(usize, usize)],
    lb: usize,
    salt: Option<(ZkRng, u32)>,
) -> (CpuCommitted, CudaCommitted) {
    let (traces, c) = cpu_round(r, shapes, lb, salt);
    let (_, g) = gpu
        .commit(
            traces.into_iter().map(TraceInput::Host).collect(),
            lb,
            salt,
            zkrv_stark::merkle::MerkleHash::Keccak256,
        )
        .unwrap();
    (c, g)
}

fn deep_terms<'a, C>(
    rounds: &[&'a C],
    points: &'a [Vec<Vec<Ext3>>],
    values: &'a [Vec<Vec<Vec<Ext3>>>],
    widths: &[Vec<usize>],
    want_height: &[Vec<bool>],
    k0: u64,
) -> Vec<DeepTerm<'a, C>> {
    let mut k = k0;
    let mut terms = Vec::new();
    for (ri, c) in rounds.iter().enumerate() {
        for (m, (pts, vals)) in points[ri].iter().zip(&values[ri]).enumerate() {
            if want_height[ri][m] {
                terms.push(DeepTerm {
                    matrix: MatrixView {
                        round: *c,
                        index: m,
                    },
                    points: pts,
                    values: vals,
                    k0: k,
                });
            }
            k += (pts.len() * widths[ri][m]) as u64;
        }
    }
    terms
}

/// Two rounds of mixed heights (blowup 2 and 4): the opened values, and the DEEP codeword of every height
/// with points shared across terms and rounds, more than 8 points at one height, and a point in the LDE
/// domain (`PointInDomain` from both backends).
#[test]
fn gpu_deep_codeword_matches_cpu() {
    let test = "gpu_deep_codeword_matches_cpu";
    let Some(gpu) = backend(test) else { return };
    let mut r = StdRng::seed_from_u64(seed(test));
    for lb in [1usize, 2] {
        let shapes0 = [(3usize, 4usize), (6, 17), (3, 1), (9, 5)];
        let shapes1 = [(6usize, 3usize), (3, 2), (12, 7)];
        let (c0, g0) = both_rounds(&gpu, &mut r, &shapes0, lb, None);
        let (c1, g1) = both_rounds(&gpu, &mut r, &shapes1, lb, None);
        let z = rand_ext(&mut r);
        let pts = |r: &mut StdRng, shapes: &[(usize, usize)], many: bool| -> Vec<Vec<Ext3>> {
            shapes
                .iter()
                .map(|&(h, _)| {
                    let extra = r.gen_bool(0.5);
                    let mut p = points_for(r, z, h, extra);
                    if many && h == 3 {
                        p.extend((0..6).map(|_| rand_ext(r)));
                    }
                    p
                })
                .collect()
        };
        let points = vec![pts(&mut r, &shapes0, true), pts(&mut r, &shapes1, false)];
        let widths: Vec<Vec<usize>> = [&shapes0[..], &shapes1[..]]
            .iter()
            .map(|s| s.iter().map(|x| x.1).collect())
            .collect();
        let heights: Vec<Vec<usize>> = [&shapes0[..], &shapes1[..]]
            .iter()
            .map(|s| s.iter().map(|x| x.0 + lb).collect())
            .collect();
        let cpu_req = [(&c0, &points[0][..]), (&c1, &points[1][..])];
        let gpu_req = [(&g0, &points[0][..]), (&g1, &points[1][..])];
        let values = CPU.evaluate(&cpu_req, lb).unwrap();
        assert_eq!(
            gpu.evaluate(&gpu_req, lb).unwrap(),
            values,
            "lb {lb}: opened values differ"
        );
        let alpha = rand_ext(&mut r);
        for lh in [3 + lb, 6 + lb, 9 + lb, 12 + lb] {
            let want_h: Vec<Vec<bool>> = heights
                .iter()
                .map(|v| v.iter().map(|&h| h == lh).collect())
                .collect();
            let ct = deep_terms(&[&c0, &c1], &points, &values, &widths, &want_h, 0);
            let gt = deep_terms(&[&g0, &g1], &points, &values, &widths, &want_h, 0);
            let want = CPU.deep_codeword(lh, lb, &ct, alpha).unwrap();
            let d = gpu.deep_codeword(lh, lb, &gt, alpha).unwrap();
            assert_eq!(d.log_size, lh);
            let got = gpu.download_codeword(&d).unwrap();
            assert!(got == want, "lb {lb} height 2^{lh}: DEEP codewords differ");
        }
        // A point of the LDE domain (row 5 of height 2^(3 + lb)): both backends refuse it.
        let lh = 3 + lb;
        let mut bad = points.clone();
        bad[0][0][0] = Ext3::from(coset_point(lh, 5));
        let want_h: Vec<Vec<bool>> = heights
            .iter()
            .map(|v| v.iter().map(|&h| h == lh).collect())
            .collect();
        let ct = deep_terms(&[&c0, &c1], &bad, &values, &widths, &want_h, 0);
        let gt = deep_terms(&[&g0, &g1], &bad, &values, &widths, &want_h, 0);
        let e_cpu = CPU.deep_codeword(lh, lb, &ct, alpha).err();
        let e_gpu = gpu.deep_codeword(lh, lb, &gt, alpha).err();
        assert!(
            matches!(
                e_cpu,
                Some(zkrv_stark::backend::BackendError::PointInDomain { .. })
            ),
            "{e_cpu:?}"
        );
        assert!(
            matches!(e_gpu, Some(zkrv_stark::backend::BackendError::PointInDomain { log_height }) if log_height == lh),
            "{e_gpu:?}"
        );
    }
}

/// Opened values of stored rounds: random points, points of `g·H_n` (the CPU's `InDomain`: the row itself),
/// points of the LDE domain outside `g·H_n`, shared and distinct points, several rounds and heights, and a
/// salted (zk) round.
#[test]
fn gpu_evaluate_matches_cpu() {
    let test = "gpu_evaluate_matches_cpu";
    let Some(gpu) = backend(test) else { return };
    let mut r = StdRng::seed_from_u64(seed(test));
    let rng = ZkRng::from_test_seed(r.gen());
    for lb in [1usize, 3] {
        let shapes0 = [(0usize, 3usize), (2, 5), (5, 64), (2, 1), (10, 300)];
        let shapes1 = [(5usize, 2usize), (0, 1)];
        let (c0, g0) = both_rounds(&gpu, &mut r, &shapes0, lb, None);
        let (c1, g1) = both_rounds(&gpu, &mut r, &shapes1, lb, Some((rng, 7)));
        let z = rand_ext(&mut r);
        let mk = |r: &mut StdRng, shapes: &[(usize, usize)]| -> Vec<Vec<Ext3>> {
            shapes
                .iter()
                .map(|&(h, _)| {
                    let lh = h + lb;
                    let n = 1usize << h;
                    let mut p = vec![z, rand_ext(r)];
                    // In g·H_n: a row < n of the LDE.
                    p.push(Ext3::from(coset_point(lh, r.gen_range(0..n))));
                    // In the LDE domain but not in g·H_n: a row >= n.
                    p.push(Ext3::from(coset_point(lh, r.gen_range(n..n << lb))));
                    p
                })
                .collect()
        };
        let points = [mk(&mut r, &shapes0), mk(&mut r, &shapes1)];
        let want = CPU
            .evaluate(&[(&c0, &points[0][..]), (&c1, &points[1][..])], lb)
            .unwrap();
        let got = gpu
            .evaluate(&[(&g0, &points[0][..]), (&g1, &points[1][..])], lb)
            .unwrap();
        assert_eq!(got, want, "lb {lb}: opened values differ");
        // Shape errors, not panics.
        assert!(gpu.evaluate(&[(&g0, &points[1][..])], lb).is_err());
    }
    let s = gpu.stats();
    assert!(
        !s.bytes
            .keys()
            .any(|(stage, table)| stage == "host-copy" && table != "codeword"),
        "evaluate made a host copy: {s}"
    );
}

/// Opened rows, salts and paths of mixed-height rounds at random query indices (with repeats, first and
/// last leaf), zk salted and not, including a round whose largest matrix has height 2^(0 + lb).
#[test]
fn gpu_open_rows_matches_cpu() {
    let test = "gpu_open_rows_matches_cpu";
    let Some(gpu) = backend(test) else { return };
    let mut r = StdRng::seed_from_u64(seed(test));
    let rng = ZkRng::from_test_seed(r.gen());
    for zk in [false, true] {
        for (lb, shapes) in [
            (
                1usize,
                vec![(4usize, 3usize), (2, 20), (4, 1), (0, 2), (7, 9)],
            ),
            (2, vec![(3, 40), (3, 2)]),
            (1, vec![(0, 5)]),
            (3, vec![(11, 17), (1, 3), (6, 1)]),
        ] {
            let salt = zk.then_some((rng, 9));
            let (c, g) = both_rounds(&gpu, &mut r, &shapes, lb, salt);
            assert_eq!(g.device().root, c.tree.root(), "zk {zk}: roots differ");
            let lt = shapes.iter().map(|s| s.0).max().unwrap() + lb;
            let mut idx: Vec<usize> = (0..60).map(|_| r.gen_range(0..1usize << lt)).collect();
            idx.extend([0, (1 << lt) - 1, idx[3]]);
            let want = CPU.open_rows(&c, &idx).unwrap();
            let got = gpu.open_rows(&g, &idx).unwrap();
            assert_eq!(got, want, "zk {zk} lb {lb} {shapes:?}: openings differ");
            assert!(gpu.open_rows(&g, &[1 << lt]).is_err());
        }
    }
    let s = gpu.stats();
    eprintln!("{s}");
    assert!(
        !s.bytes.keys().any(|(stage, _)| stage == "host-copy"),
        "open_rows made a host copy: {s}"
    );
}
