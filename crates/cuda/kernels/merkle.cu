// Keccak-256 row hashing and mixed-height Merkle levels, mirroring crates/stark/src/merkle.rs.
//
// Hash: Keccak-256 with the original Keccak padding (tiny_keccak::Keccak::v256): rate 136 bytes = 17 lanes,
// pad byte 0x01 after the message and 0x80 in the last byte of the block. A digest is 32 bytes = lanes 0..3
// stored as 4 little-endian u64 (the byte order of the CPU digest on a little-endian machine).
//
// Rows are hashed as the concatenation of their elements' canonical 8-byte little-endian encodings; since an
// element is exactly one lane, element e of the message is XORed into lane e % 17 of block e / 17.
//
// Poseidon2 (docs/stark.md §11.1; poseidon2.cuh): the same tree shape with the leaf sponge (state 8, rate 4, the
// element count in s[4], chunks of 4 overwrite s[0..4], the last one zero-padded) and the node hash
// P(l || r)[0..4] + l. The per-row functions p2_leaf_at / p2_level_at also compile as plain C++ with
// -DZKRV_HOST_EMU (crates/cuda/tests/poseidon2_parity.rs drives them on the host); the __global__ kernels are
// device-only.
#include "field.cuh"
#ifdef ZKRV_HOST_EMU
#define __constant__ static const
#define __ldg(p) (*(p))
#endif
#include "keccak.cuh"
#include "poseidon2.cuh"


// Pads (original Keccak: 0x01 after the message, 0x80 in the last rate byte), permutes and writes the digest.
// `lane` < 17 is the number of message lanes already absorbed into the current block.
__device__ __forceinline__ void finish(u64 st[25], u32 lane, u64* out) {
    // Unrolled select so that st stays in registers (no dynamic indexing).
#pragma unroll
    for (int q = 0; q < KECCAK_RATE_LANES; q++)
        if (lane == q) st[q] ^= 0x01ULL;
    st[16] ^= 0x8000000000000000ULL;
    keccak_f1600(st);
    out[0] = st[0];
    out[1] = st[1];
    out[2] = st[2];
    out[3] = st[3];
}

// Proof of work (mirrors zkrv_stark::transcript::GrindInput; the transcript's module doc, "grinding"): the value
// of a nonce, whose leading zero bits count. The host writes a template per flushed state
// (zkrv_cuda::merkle::grind_template):
// * Keccak: the 17 rate lanes of the padded one-block message 0x03 || state || le8(0) (41 bytes); the nonce's
//   bytes 33..41 are lane 4's bytes 1..8 and lane 5's byte 0. The value is the digest's first 8 bytes read
//   big-endian (the most significant bit is bit 7 of byte 0).
// * Poseidon2: the permutation input (0, 0, 0, 0, s[4], s[5], s[6], s[7] + 5) with the nonce's low and high
//   32 bits in elements 0 and 1; the value is output element 0 (canonical). `c`: the P2_CONSTS constants.
__device__ __forceinline__ u64 grind_bswap64(u64 x) {
    x = ((x & 0x00ff00ff00ff00ffULL) << 8) | ((x >> 8) & 0x00ff00ff00ff00ffULL);
    x = ((x & 0x0000ffff0000ffffULL) << 16) | ((x >> 16) & 0x0000ffff0000ffffULL);
    return (x << 32) | (x >> 32);
}

__device__ __forceinline__ u64 grind_keccak_value(const u64* tmpl, u64 nonce) {
    u64 st[25];
#pragma unroll
    for (int q = 0; q < 25; q++) st[q] = q < KECCAK_RATE_LANES ? tmpl[q] : 0;
    st[4] ^= nonce << 8;
    st[5] ^= nonce >> 56;
    keccak_f1600(st);
    return grind_bswap64(st[0]);
}

__device__ __forceinline__ u64 grind_p2_value(const u64* tmpl, u64 nonce, const u64* c) {
    u64 s[P2_WIDTH];
#pragma unroll
    for (int q = 0; q < P2_WIDTH; q++) s[q] = tmpl[q];
    s[0] = nonce & 0xffffffffULL;
    s[1] = nonce >> 32;
    p2_permute(s, c);
    return s[0];
}

#ifndef ZKRV_HOST_EMU
// One batch of the nonce search: thread t tests nonce `start + t` (t < count) and lowers `*best` to it when its
// value has `bits` leading zero bits (atomicMin: the smallest valid nonce of the batch wins, whatever the
// order of the threads). `tmpl`: 17 lanes (Keccak) or 8 elements (Poseidon2, `consts` its constants; unused
// for Keccak).
extern "C" __global__ void grind_kernel(const u64* tmpl, u32 poseidon2, const u64* consts, u64 start, u64 count,
                                        u32 bits, unsigned long long* best) {
    __shared__ u64 c[P2_CONSTS];
    if (poseidon2) p2_load_consts(c, consts);
    u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (t >= count) return;
    u64 nonce = start + t;
    u64 v = poseidon2 ? grind_p2_value(tmpl, nonce, c) : grind_keccak_value(tmpl, nonce);
    if ((u32)__clzll((long long)v) >= bits) atomicMin(best, (unsigned long long)nonce);
}
#endif

#ifndef ZKRV_HOST_EMU
// Keccak-f[1600] throughput kernel for the bench: each thread permutes its own state `iters` times.
extern "C" __global__ void keccak_perm_bench_kernel(u64* states, u32 n_states, u32 iters) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_states) return;
    u64 st[25];
#pragma unroll
    for (int q = 0; q < 25; q++) st[q] = states[(u64)q * n_states + i];
    for (u32 it = 0; it < iters; it++) keccak_f1600(st);
#pragma unroll
    for (int q = 0; q < 25; q++) states[(u64)q * n_states + i] = st[q];
}

// Keccak-256 of arbitrary byte messages, one per thread, for parity tests: message i is
// bytes[offsets[i] .. offsets[i + 1]]. out: n x 4 u64.
extern "C" __global__ void keccak256_bytes_kernel(const unsigned char* bytes, const u64* offsets, u64* out, u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u64 st[25];
    for (int q = 0; q < 25; q++) st[q] = 0;
    u64 start = offsets[i], end = offsets[i + 1];
    u32 pos = 0;  // byte position inside the block
    for (u64 b = start; b < end; b++) {
        st[pos >> 3] ^= (u64)bytes[b] << (8 * (pos & 7));
        if (++pos == 8 * KECCAK_RATE_LANES) {
            keccak_f1600(st);
            pos = 0;
        }
    }
    st[pos >> 3] ^= 0x01ULL << (8 * (pos & 7));
    st[16] ^= 0x8000000000000000ULL;
    keccak_f1600(st);
    for (int q = 0; q < 4; q++) out[4 * (u64)i + q] = st[q];
}

#endif  // !ZKRV_HOST_EMU

// Row hashes of a group of matrices of the same height: digest[i] = H(row_i(M_0) || row_i(M_1) || ...).
// ptrs[m]: device address of matrix m (height x widths[m], row-major); total_width = sum of widths;
// out: height x 4 u64.
struct RowCursor {
    const u64* const* ptrs;
    const u32* widths;
    u32 n_mats, m, w, c;
    u64 row;
    const u64* cur;
    __device__ __forceinline__ void skip_empty() {
        while (m < n_mats && widths[m] == 0) m++;
        if (m < n_mats) {
            w = widths[m];
            cur = ptrs[m] + row * w;
        }
    }
    __device__ __forceinline__ u64 next() {
        u64 v = gl_canon(__ldg(cur + c));
        if (++c == w) {
            c = 0;
            m++;
            skip_empty();
        }
        return v;
    }
};

#ifndef ZKRV_HOST_EMU
extern "C" __global__ void hash_rows_kernel(const u64* const* ptrs, const u32* widths, u32 n_mats, u64 total_width,
                                            u64 height, u64* out) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i >= height) return;
    u64 st[25];
#pragma unroll
    for (int q = 0; q < 25; q++) st[q] = 0;
    RowCursor cur{ptrs, widths, n_mats, 0, 0, 0, i, nullptr};
    cur.skip_empty();
    u64 e0 = 0;
    for (; e0 + KECCAK_RATE_LANES <= total_width; e0 += KECCAK_RATE_LANES) {
#pragma unroll
        for (int q = 0; q < KECCAK_RATE_LANES; q++) st[q] ^= cur.next();
        keccak_f1600(st);
    }
    const u32 rem = (u32)(total_width - e0);
#pragma unroll
    for (int q = 0; q < KECCAK_RATE_LANES; q++)
        if (q < rem) st[q] ^= cur.next();
    finish(st, rem, out + 4 * i);
}

// One Merkle level up: parent[j] = H(child[2j] || child[2j+1]); if `row_hashes` is non-null (matrices of this
// parent height exist), parent[j] = H(parent[j] || row_hashes[j]). Digests are 4 u64 each.
extern "C" __global__ void merkle_level_kernel(const u64* __restrict__ children, const u64* __restrict__ row_hashes,
                                               u64* __restrict__ parents, u64 n_parents) {
    u64 j = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (j >= n_parents) return;
    u64 st[25];
#pragma unroll
    for (int q = 0; q < 25; q++) st[q] = 0;
#pragma unroll
    for (int q = 0; q < 8; q++) st[q] = children[8 * j + q];
    st[8] ^= 0x01ULL;
    st[16] ^= 0x8000000000000000ULL;
    keccak_f1600(st);
    if (row_hashes != nullptr) {
        u64 p0 = st[0], p1 = st[1], p2 = st[2], p3 = st[3];
#pragma unroll
        for (int q = 0; q < 25; q++) st[q] = 0;
        st[0] = p0;
        st[1] = p1;
        st[2] = p2;
        st[3] = p3;
#pragma unroll
        for (int q = 0; q < 4; q++) st[4 + q] = row_hashes[4 * j + q];
        st[8] ^= 0x01ULL;
        st[16] ^= 0x8000000000000000ULL;
        keccak_f1600(st);
    }
#pragma unroll
    for (int q = 0; q < 4; q++) parents[4 * j + q] = st[q];
}
#endif  // !ZKRV_HOST_EMU

// Poseidon2 leaf i of a group (the same RowCursor walk as hash_rows_kernel): s = [0, 0, 0, 0, n, 0, 0, 0], each
// chunk of 4 elements overwrites s[0..4] (the last zero-padded) and is followed by P; out[0..4] = s[0..4].
__device__ __forceinline__ void p2_leaf_at(const u64* const* ptrs, const u32* widths, u32 n_mats, u64 total_width,
                                           u64 i, const u64* c, u64* out) {
    u64 s[P2_WIDTH];
#pragma unroll
    for (int q = 0; q < P2_WIDTH; q++) s[q] = 0;
    s[P2_RATE] = total_width;  // n < 2^32 < p
    RowCursor cur{ptrs, widths, n_mats, 0, 0, 0, i, nullptr};
    cur.skip_empty();
    u64 e0 = 0;
    for (; e0 + P2_RATE <= total_width; e0 += P2_RATE) {
#pragma unroll
        for (int q = 0; q < P2_RATE; q++) s[q] = cur.next();
        p2_permute(s, c);
    }
    const u32 rem = (u32)(total_width - e0);
    if (rem > 0) {
#pragma unroll
        for (int q = 0; q < P2_RATE; q++) s[q] = q < rem ? cur.next() : 0;
        p2_permute(s, c);
    }
#pragma unroll
    for (int q = 0; q < 4; q++) out[q] = s[q];
}

// Poseidon2 parent j: compress(children[2j], children[2j+1]), then compress(parent, row_hashes[j]) if given.
__device__ __forceinline__ void p2_level_at(const u64* children, const u64* row_hashes, u64* parents, u64 j,
                                            const u64* c) {
    u64 d[4];
    p2_compress(children + 8 * j, children + 8 * j + 4, c, d);
    if (row_hashes != nullptr) {
        u64 e[4];
        p2_compress(d, row_hashes + 4 * j, c, e);
#pragma unroll
        for (int q = 0; q < 4; q++) d[q] = e[q];
    }
#pragma unroll
    for (int q = 0; q < 4; q++) parents[4 * j + q] = d[q];
}

#ifndef ZKRV_HOST_EMU
// Poseidon2 row hashes of a group (as hash_rows_kernel); consts: the P2_CONSTS constants (poseidon2.cuh).
extern "C" __global__ void p2_hash_rows_kernel(const u64* const* ptrs, const u32* widths, u32 n_mats,
                                               u64 total_width, u64 height, const u64* consts, u64* out) {
    __shared__ u64 c[P2_CONSTS];
    p2_load_consts(c, consts);
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i >= height) return;
    p2_leaf_at(ptrs, widths, n_mats, total_width, i, c, out + 4 * i);
}

// Poseidon2 Merkle level up (as merkle_level_kernel).
extern "C" __global__ void p2_merkle_level_kernel(const u64* __restrict__ children,
                                                  const u64* __restrict__ row_hashes, u64* __restrict__ parents,
                                                  u64 n_parents, const u64* consts) {
    __shared__ u64 c[P2_CONSTS];
    p2_load_consts(c, consts);
    u64 j = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (j >= n_parents) return;
    p2_level_at(children, row_hashes, parents, j, c);
}

// Poseidon2 throughput kernel for the bench: each thread permutes its own state `iters` times.
extern "C" __global__ void p2_perm_bench_kernel(u64* states, u32 n_states, u32 iters, const u64* consts) {
    __shared__ u64 c[P2_CONSTS];
    p2_load_consts(c, consts);
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_states) return;
    u64 s[P2_WIDTH];
#pragma unroll
    for (int q = 0; q < P2_WIDTH; q++) s[q] = states[P2_WIDTH * i + q];
    for (u32 k = 0; k < iters; k++) p2_permute(s, c);
#pragma unroll
    for (int q = 0; q < P2_WIDTH; q++) states[P2_WIDTH * i + q] = s[q];
}
#endif  // !ZKRV_HOST_EMU
