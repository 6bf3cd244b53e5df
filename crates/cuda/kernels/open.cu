// DEEP + FRI on the device: the opening operations of crates/stark/src/backend/open.rs (`OpeningOps` of the
// CPU backend) over the resident LDEs, FRI codewords and Merkle levels. Launchers: crates/cuda/src/open.rs.
//
// Layouts (all u64, canonical Goldilocks values unless said otherwise):
// * codeword of 2^s Ext3 values, bit-reversed order: element i = words [3i, 3i + 3) (c0, c1, c2). The same
//   buffer read as a 2^(s-a) x 3·2^a row-major matrix is the FRI layer matrix of arity 2^a (row j =
//   cw[j 2^a .. (j + 1) 2^a]).
// * LDE: 2^lh x w row-major, bit-reversed rows, row i at x_i = g * omega_{2^lh}^{bitrev_lh(i)}, g = 7.
//
// The per-element logic is an `OPEN_HD` function (`fri_fold_row`, `deep_row`, `bary_weight`,
// `bary_accumulate`, `open_gather_segment`) with a thin `extern "C" __global__` wrapper; the file also
// compiles as plain C++ with -DZKRV_HOST_EMU (crates/cuda/tests/open_parity.rs drives those functions, and
// with ZKRV_HOST_EMU_GRID the whole kernels over emulated grids, on the host against the Rust CPU backend).
#include "field.cuh"

#define OPEN_HD __device__ __forceinline__

// The `__global__` wrappers: on the device, and in the host emulation of whole launches (-DZKRV_HOST_EMU with
// ZKRV_HOST_EMU_GRID defined: the test's prelude provides threadIdx, blockIdx, blockDim, __syncthreads and
// __shared__, and runs the grid block by block).
#if !defined(ZKRV_HOST_EMU) || defined(ZKRV_HOST_EMU_GRID)
#define OPEN_KERNELS 1
#endif

// 1/2 = (p + 1) / 2.
#define GL_INV_TWO 0x7FFFFFFF80000001ULL

OPEN_HD ext3 ext3_load(const u64* p) { return ext3{gl_canon(p[0]), gl_canon(p[1]), gl_canon(p[2])}; }

OPEN_HD void ext3_store(u64* p, ext3 a) {
    p[0] = a.c0;
    p[1] = a.c1;
    p[2] = a.c2;
}

// ---------------------------------------------------------------------------------------------------------
// FRI fold (`fold_fri_layer`; CPU: `fold_inv_halves` + `fold_pair` in crates/stark/src/pcs/mod.rs, the verifier's
// `fold_row`), arity 2^a, a = log_arity in [1, FRI_MAX_LOG_ARITY]:
//
// row j of the layer is cw[j 2^a .. (j + 1) 2^a], the values on the coset x_j H_{2^a} in bit-reversed order,
// x_j = omega_{2^s}^{bitrev_{s-a}(j)}. Its fold is a binary folds with beta, beta^2, ..., beta^(2^(a-1)):
//   v'[m] = (v[2m] + v[2m+1])/2 + b (v[2m] - v[2m+1]) / (2x),  m < 2^(a-1-t) at binary step t,
// where pair m of step t sits at x = x_j^(2^t) omega_{2^(a-t)}^{bitrev_{a-1-t}(m)}, so
//   1/(2x) = (1/x_j)^(2^t) * (omega_{2^(a-t)}^{-1})^{bitrev_{a-1-t}(m)} / 2   (one pow per row for 1/x_j).
// For a = 1 this is the binary fold 1/(2x) = w_inv^{bitrev_{s-1}(j)} / 2. Then next[j] += beta^(2^a) roll[j]
// when a roll-in codeword (2^(s-a) values) is given. The result is the same field element as the CPU's
// (exact arithmetic, the same formula).
#define FRI_MAX_LOG_ARITY 3

// One fold pair, the formula of `fold_pair`.
OPEN_HD ext3 fri_fold_pair(ext3 e0, ext3 e1, ext3 beta, u64 x_inv_half) {
    ext3 sum = ext3_mul_base(ext3_add(e0, e1), GL_INV_TWO);
    return ext3_add(sum, ext3_mul(beta, ext3_mul_base(ext3_sub(e0, e1), x_inv_half)));
}

// Row j of the folded codeword (2^(log_size - log_arity) rows). w_inv = omega_{2^log_size}^{-1}, root_inv =
// omega_{2^log_arity}^{-1}; roll: 2^(log_size - log_arity) x 3 or null; beta_roll = beta^(2^log_arity).
OPEN_HD void fri_fold_row(const u64* cw, const u64* roll, u64* next, u64 j, u32 log_size, u32 log_arity, u64 w_inv,
                          u64 root_inv, ext3 beta, ext3 beta_roll) {
    ext3 v[1 << FRI_MAX_LOG_ARITY];
    const u32 n = 1u << log_arity;
    const u64* row = cw + 3 * (j << log_arity);
    for (u32 k = 0; k < n; k++) v[k] = ext3_load(row + 3 * k);
    u64 inv_x = gl_pow(w_inv, (u64)bit_reverse((u32)j, log_size - log_arity));
    u64 root = root_inv;
    ext3 b = beta;
    for (u32 t = 0; t < log_arity; t++) {
        const u32 half = n >> (t + 1);
        // In place: pair m reads v[2m], v[2m + 1] (>= m) before writing v[m].
        for (u32 m = 0; m < half; m++) {
            u64 ih = gl_mul(gl_mul(inv_x, gl_pow(root, (u64)bit_reverse(m, log_arity - 1 - t))), GL_INV_TWO);
            v[m] = fri_fold_pair(v[2 * m], v[2 * m + 1], b, ih);
        }
        inv_x = gl_sqr(inv_x);
        root = gl_sqr(root);
        b = ext3_mul(b, b);
    }
    if (roll) v[0] = ext3_add(v[0], ext3_mul(beta_roll, ext3_load(roll + 3 * j)));
    ext3_store(next + 3 * j, v[0]);
}

#ifdef OPEN_KERNELS
// One thread per folded row j < rows = 2^(log_size - log_arity). beta, beta_roll: 3 u64 each, by value.
extern "C" __global__ void fri_fold_kernel(const u64* cw, const u64* roll, u64* next, u64 rows, u32 log_size,
                                           u32 log_arity, u64 w_inv, u64 root_inv, u64 b0, u64 b1, u64 b2, u64 bb0,
                                           u64 bb1, u64 bb2) {
    u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= rows) return;
    fri_fold_row(cw, roll, next, j, log_size, log_arity, w_inv, root_inv, ext3{b0, b1, b2}, ext3{bb0, bb1, bb2});
}
#endif

// ---------------------------------------------------------------------------------------------------------
// DEEP reduced codeword (`deep_codeword`), one thread per LDE row i of height 2^lh:
//   R(x_i) = sum_z inv_z (sum_{(t,p) at z} scale_{t,p} M_t(x_i) - c_z),  inv_z = 1 / (x_i - z),
//   M_t(x_i) = sum_c alpha^c f_{t,c}(x_i)  (row i of term t's LDE),
// computed as sum_t coef_t M_t(x_i) - sum_z inv_z c_z with coef_t = sum_{p of t} scale_{t,p} inv_{z(t,p)}.
// The opened values are exact evaluations, so R(x_i) is the same field element as the CPU's coefficient-form
// result (crates/stark/src/backend/open.rs, `deep_codeword_host`).
//
// Descriptor (u64 words, built by `zkrv_cuda::open::DeepGroup`, at most DEEP_MAX_POINTS points per launch):
//   [0] T terms  [1] Z points  [2] P (point, scale) pairs  [3] W alpha powers
//   terms  at 4:              T x 3  {matrix address, width, end of the term's pairs (exclusive)}
//   pairs  at 4 + 3T:         P x 4  {point index, scale (Ext3)}
//   points at 4 + 3T + 4P:    Z x 6  {z (Ext3), c_z (Ext3)}
//   alpha  at 4 + 3T + 4P + 6Z: W x 3  {alpha^c}, W >= every term's width
#define DEEP_MAX_POINTS 8

// x_i = shift * omega^{bitrev_lh(i)}.
OPEN_HD u64 lde_point(u64 i, u32 log_height, u64 omega, u64 shift) {
    return gl_mul(shift, gl_pow(omega, (u64)bit_reverse((u32)i, log_height)));
}

OPEN_HD ext3 deep_row(const u64* desc, u64 i, u32 log_height, u64 omega, u64 shift) {
    const u64 n_terms = desc[0], n_points = desc[1], n_pairs = desc[2];
    const u64* terms = desc + 4;
    const u64* pairs = terms + 3 * n_terms;
    const u64* points = pairs + 4 * n_pairs;
    const u64* alpha = points + 6 * n_points;
    const u64 x = lde_point(i, log_height, omega, shift);
    const u64 nz = n_points < DEEP_MAX_POINTS ? n_points : DEEP_MAX_POINTS;
    // inv[z] = 1 / (x - z) by one Montgomery batch inversion (no x - z is zero: the host refused points in
    // the domain): inv[z] holds the prefix product d_0 ... d_{z-1} first.
    ext3 inv[DEEP_MAX_POINTS], d[DEEP_MAX_POINTS];
    ext3 prod = ext3{1, 0, 0};
    for (u64 z = 0; z < nz; z++) {
        ext3 pz = ext3_load(points + 6 * z);
        d[z] = ext3{gl_sub(x, pz.c0), gl_neg(pz.c1), gl_neg(pz.c2)};
        inv[z] = prod;
        prod = ext3_mul(prod, d[z]);
    }
    ext3 r = ext3_inv(prod);
    for (u64 z = nz; z-- > 0;) {
        inv[z] = ext3_mul(inv[z], r);
        r = ext3_mul(r, d[z]);
    }
    ext3 acc = ext3{0, 0, 0};
    for (u64 z = 0; z < nz; z++) acc = ext3_sub(acc, ext3_mul(inv[z], ext3_load(points + 6 * z + 3)));
    u64 p = 0;
    for (u64 t = 0; t < n_terms; t++) {
        const u64* mat = (const u64*)terms[3 * t];
        const u64 w = terms[3 * t + 1], p_end = terms[3 * t + 2];
        ext3 coef = ext3{0, 0, 0};
        for (; p < p_end; p++) {
            u64 z = pairs[4 * p];
            coef = ext3_add(coef, ext3_mul(ext3_load(pairs + 4 * p + 1), inv[z < DEEP_MAX_POINTS ? z : 0]));
        }
        const u64* row = mat + i * w;
        ext3 m = ext3{0, 0, 0};
        for (u64 c = 0; c < w; c++) m = ext3_add(m, ext3_mul_base(ext3_load(alpha + 3 * c), gl_canon(row[c])));
        acc = ext3_add(acc, ext3_mul(coef, m));
    }
    return acc;
}

#ifdef OPEN_KERNELS
// One thread per row i < 2^log_height; out: 2^log_height x 3. accumulate != 0: out[i] += R(x_i) (a later
// group of points), else out[i] = R(x_i).
// Rows [row0, n) of the codeword (a recomputing backend runs one coset block at a time).
extern "C" __global__ void deep_codeword_kernel(const u64* desc, u64* out, u64 n, u32 log_height, u64 omega,
                                                u64 shift, u32 accumulate, u64 row0) {
    u64 i = row0 + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    ext3 r = deep_row(desc, i, log_height, omega, shift);
    if (accumulate) r = ext3_add(r, ext3_load(out + 3 * i));
    ext3_store(out + 3 * i, r);
}
#endif

// ---------------------------------------------------------------------------------------------------------
// Opened values (`evaluate`, CPU: `bary_weights` / `bary_apply`): f(z) = sum_k w_k f(x_k) over the first
// n = 2^log_n LDE rows (the points g * H_n in bit-reversed order, x_k = g * omega_n^{bitrev_{log_n}(k)}),
// w_k = s x_k / (z - x_k), s = (z^n - g^n) / (n g^n) (computed on the host). z in g * H_n is handled on the
// host (the CPU's `Bary::InDomain`: the row itself).

OPEN_HD ext3 bary_weight(u64 k, u32 log_n, u64 omega_n, u64 shift, ext3 z, ext3 s) {
    u64 x = lde_point(k, log_n, omega_n, shift);
    ext3 d = ext3{gl_sub(z.c0, x), z.c1, z.c2};
    return ext3_mul(ext3_inv(d), ext3_mul_base(s, x));
}

#ifdef OPEN_KERNELS
// One thread per k < n; out: n x 3.
extern "C" __global__ void bary_weights_kernel(u64* out, u64 n, u32 log_n, u64 omega_n, u64 shift, u64 z0, u64 z1,
                                               u64 z2, u64 s0, u64 s1, u64 s2) {
    u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    ext3_store(out + 3 * k, bary_weight(k, log_n, omega_n, shift, ext3{z0, z1, z2}, ext3{s0, s1, s2}));
}
#endif

// sum_{k = begin, begin + step, ... < end} w_k m[k][c]: one thread's share of column c.
OPEN_HD ext3 bary_accumulate(const u64* weights, const u64* mat, u64 width, u64 c, u64 begin, u64 end, u64 step) {
    ext3 acc = ext3{0, 0, 0};
    for (u64 k = begin; k < end; k += step)
        acc = ext3_add(acc, ext3_mul_base(ext3_load(weights + 3 * k), gl_canon(mat[k * width + c])));
    return acc;
}

#define BARY_THREADS 256

#ifdef OPEN_KERNELS
// Pass 1 of the fixed-order reduction. Block (b, y) sums rows [b R, min((b + 1) R, n)) of the column tile
// [y Wt, y Wt + Wt), Wt = min(width, BARY_THREADS): thread t takes column y Wt + t % Wt and every L-th row
// from row t / Wt (L = BARY_THREADS / Wt lanes); the L lane sums are added in lane order.
// partial: gridDim.x x width x 3. blockDim.x = BARY_THREADS.
extern "C" __global__ void bary_partial_kernel(const u64* weights, const u64* mat, u64 width, u64 n,
                                               u64 rows_per_block, u64* partial) {
    __shared__ ext3 lanes[BARY_THREADS];
    const u32 t = threadIdx.x;
    const u64 wt = width < BARY_THREADS ? width : BARY_THREADS;
    const u64 n_lanes = BARY_THREADS / wt;
    const u64 lane = t / wt, cl = t % wt, c = (u64)blockIdx.y * wt + cl;
    const u64 begin = (u64)blockIdx.x * rows_per_block;
    const u64 end = begin + rows_per_block < n ? begin + rows_per_block : n;
    ext3 acc = ext3{0, 0, 0};
    if (lane < n_lanes && c < width) acc = bary_accumulate(weights, mat, width, c, begin + lane, end, n_lanes);
    lanes[t] = acc;
    __syncthreads();
    if (lane == 0 && c < width) {
        ext3 s = lanes[cl];
        for (u64 l = 1; l < n_lanes; l++) s = ext3_add(s, lanes[l * wt + cl]);
        ext3_store(partial + 3 * ((u64)blockIdx.x * width + c), s);
    }
}

// Pass 2: out[c] = sum_b partial[b][c] in block order; one thread per column. out: width x 3.
extern "C" __global__ void bary_final_kernel(const u64* partial, u64 width, u64 n_blocks, u64* out) {
    u64 c = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= width) return;
    ext3 s = ext3{0, 0, 0};
    for (u64 b = 0; b < n_blocks; b++) s = ext3_add(s, ext3_load(partial + 3 * (b * width + c)));
    ext3_store(out + 3 * c, s);
}
#endif

// ---------------------------------------------------------------------------------------------------------
// Query openings (`open_rows`, `open_fri_layer`): every opened row, salt row and Merkle sibling of every query
// of one tree gathered into one buffer (one launch, one download). Segment s (5 u64 words):
//   {source address, width, shift, flip, offset}: query q copies row (idx[q] >> shift) ^ flip of the
//   `width`-wide row-major source to out[q * stride + offset ..]. Matrices: shift = L - lh, flip 0; salts
//   likewise; sibling k (leaf level first): the level L - k digests (width 4), shift k, flip 1.
// Values are copied as they are (digests are bytes, not field elements).

OPEN_HD void open_gather_segment(const u64* seg, u64 index, u64* out_row, u64 first, u64 step) {
    const u64* src = (const u64*)seg[0];
    const u64 width = seg[1];
    const u64 row = (index >> seg[2]) ^ seg[3];
    for (u64 e = first; e < width; e += step) out_row[seg[4] + e] = src[row * width + e];
}

#ifdef OPEN_KERNELS
// grid (queries, segments); out: n_queries x stride.
extern "C" __global__ void open_gather_kernel(const u64* segs, const u64* idx, u64 stride, u64* out) {
    const u64 q = blockIdx.x;
    open_gather_segment(segs + 5 * (u64)blockIdx.y, idx[q], out + q * stride, threadIdx.x, blockDim.x);
}
#endif
