// Keccak-256 row hashing and mixed-height Merkle levels, mirroring crates/stark/src/merkle.rs.
//
// Hash: Keccak-256 with the original Keccak padding (tiny_keccak::Keccak::v256): rate 136 bytes = 17 lanes,
// pad byte 0x01 after the message and 0x80 in the last byte of the block. A digest is 32 bytes = lanes 0..3
// stored as 4 little-endian u64 (the byte order of the CPU digest on a little-endian machine).
//
// Rows are hashed as the concatenation of their elements' canonical 8-byte little-endian encodings; since an
// element is exactly one lane, element e of the message is XORed into lane e % 17 of block e / 17.
#include "field.cuh"
#include "keccak.cuh"


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
