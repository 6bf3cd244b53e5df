//! Batched Keccak-256 for Merkle trees: several equal-length messages hashed at once, bit-exact with
//! `tiny_keccak::Keccak::v256` (original Keccak padding `0x01 .. 0x80`, rate 136 bytes = 17 lanes).
//!
//! Every message hashed here is a whole number of 64-bit words (a Merkle leaf is a sequence of canonical
//! field elements, 8 little-endian bytes each; a node is two 32-byte digests), and a Keccak lane is exactly
//! one such word, so absorbing is a plain XOR of words into lanes: no byte shuffling.
//!
//! The state of `N` independent permutations is kept lane-interleaved (`[[u64; N]; 25]`: lane `i` of
//! message `j` at `[i][j]`), so each step is an element-wise operation on `[u64; N]` that LLVM turns into
//! vector instructions. Kernels: AVX-512F (8 messages per permutation, native 64-bit rotates and three-input
//! logic through `std::arch` intrinsics; ~5x the scalar throughput on the AMD EPYC dev box), AVX2 (4 messages,
//! ~1.3x), and the scalar `tiny_keccak` path (1 message; a portable 2-lane kernel was slower than it). The
//! choice is made at run time ([`lanes`]), never at compile time, so the binary stays portable.

use crate::field::{PrimeField64, F};
use crate::merkle::Digest;

const RC: [u64; 24] = [
    0x0000000000000001,
    0x0000000000008082,
    0x800000000000808a,
    0x8000000080008000,
    0x000000000000808b,
    0x0000000080000001,
    0x8000000080008081,
    0x8000000000008009,
    0x000000000000008a,
    0x0000000000000088,
    0x0000000080008009,
    0x000000008000000a,
    0x000000008000808b,
    0x800000000000008b,
    0x8000000000008089,
    0x8000000000008003,
    0x8000000000008002,
    0x8000000000000080,
    0x000000000000800a,
    0x800000008000000a,
    0x8000000080008081,
    0x8000000000008080,
    0x0000000080000001,
    0x8000000080008008,
];

/// Rate of Keccak-256 in 64-bit lanes (136 bytes).
pub const RATE_WORDS: usize = 17;

/// `N` independent 64-bit lanes (one per message), operated on element-wise.
trait Lane: Copy {
    /// Messages per vector.
    const N: usize;
    fn from_fn(f: impl FnMut(usize) -> u64) -> Self;
    fn get(self, j: usize) -> u64;
    fn xor(self, o: Self) -> Self;
    /// `a ^ b ^ c`.
    fn xor3(a: Self, b: Self, c: Self) -> Self;
    /// `a ^ (!b & c)`.
    fn chi(a: Self, b: Self, c: Self) -> Self;
    fn rotl<const R: i32>(self) -> Self;
    fn xor_splat(self, k: u64) -> Self;
}

impl<const N: usize> Lane for [u64; N] {
    const N: usize = N;
    #[inline(always)]
    fn from_fn(f: impl FnMut(usize) -> u64) -> Self {
        std::array::from_fn(f)
    }
    #[inline(always)]
    fn get(self, j: usize) -> u64 {
        self[j]
    }
    #[inline(always)]
    fn xor(mut self, o: Self) -> Self {
        for j in 0..N {
            self[j] ^= o[j];
        }
        self
    }
    #[inline(always)]
    fn xor3(a: Self, b: Self, c: Self) -> Self {
        a.xor(b).xor(c)
    }
    #[inline(always)]
    fn chi(mut a: Self, b: Self, c: Self) -> Self {
        for j in 0..N {
            a[j] ^= !b[j] & c[j];
        }
        a
    }
    #[inline(always)]
    fn rotl<const R: i32>(mut self) -> Self {
        for x in self.iter_mut() {
            *x = x.rotate_left(R as u32);
        }
        self
    }
    #[inline(always)]
    fn xor_splat(mut self, k: u64) -> Self {
        for x in self.iter_mut() {
            *x ^= k;
        }
        self
    }
}

/// Eight lanes in one AVX-512 register: native rotates (`vprolq`) and three-input logic
/// (`vpternlogq`). Only reached from `#[target_feature(enable = "avx512f")]` functions.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Avx512(std::arch::x86_64::__m512i);

#[cfg(target_arch = "x86_64")]
impl Lane for Avx512 {
    const N: usize = 8;
    #[inline(always)]
    fn from_fn(f: impl FnMut(usize) -> u64) -> Self {
        let a: [u64; 8] = std::array::from_fn(f);
        // SAFETY: `[u64; 8]` and `__m512i` have the same size; unaligned read.
        Self(unsafe { std::mem::transmute::<[u64; 8], std::arch::x86_64::__m512i>(a) })
    }
    #[inline(always)]
    fn get(self, j: usize) -> u64 {
        // SAFETY: same size, plain bits.
        let a = unsafe { std::mem::transmute::<std::arch::x86_64::__m512i, [u64; 8]>(self.0) };
        a[j]
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: only called from avx512f-enabled code (see the type's docs).
        Self(unsafe { std::arch::x86_64::_mm512_xor_si512(self.0, o.0) })
    }
    #[inline(always)]
    fn xor3(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: as above. 0x96 = A ^ B ^ C.
        Self(unsafe { std::arch::x86_64::_mm512_ternarylogic_epi64::<0x96>(a.0, b.0, c.0) })
    }
    #[inline(always)]
    fn chi(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: as above. 0xD2 = A ^ (!B & C).
        Self(unsafe { std::arch::x86_64::_mm512_ternarylogic_epi64::<0xD2>(a.0, b.0, c.0) })
    }
    #[inline(always)]
    fn rotl<const R: i32>(self) -> Self {
        // SAFETY: as above.
        Self(unsafe { std::arch::x86_64::_mm512_rol_epi64::<R>(self.0) })
    }
    #[inline(always)]
    fn xor_splat(self, k: u64) -> Self {
        // SAFETY: as above.
        Self(unsafe {
            std::arch::x86_64::_mm512_xor_si512(
                self.0,
                std::arch::x86_64::_mm512_set1_epi64(k as i64),
            )
        })
    }
}

/// Keccak-f[1600] on `V::N` interleaved states (lane `i` of every state in `s[i]`; 24 rounds).
#[inline(always)]
fn keccak_f<V: Lane>(s: &mut [V; 25]) {
    macro_rules! rho_pi {
        ($t:ident; $( ($i:expr, $r:expr) ),*) => {
            $(
                let tmp = s[$i];
                s[$i] = $t.rotl::<$r>();
                $t = tmp;
            )*
        };
    }
    for rc in RC {
        // theta
        let c: [V; 5] = std::array::from_fn(|x| {
            V::xor3(V::xor3(s[x], s[x + 5], s[x + 10]), s[x + 15], s[x + 20])
        });
        for x in 0..5 {
            let d = c[(x + 4) % 5].xor(c[(x + 1) % 5].rotl::<1>());
            for y in 0..5 {
                s[x + 5 * y] = s[x + 5 * y].xor(d);
            }
        }
        // rho and pi (the standard lane cycle starting at lane 1)
        let mut t = s[1];
        rho_pi!(t;
            (10, 1), (7, 3), (11, 6), (17, 10), (18, 15), (3, 21), (5, 28), (16, 36),
            (8, 45), (21, 55), (24, 2), (4, 14), (15, 27), (23, 41), (19, 56), (13, 8),
            (12, 25), (2, 43), (20, 62), (14, 18), (22, 39), (9, 61), (6, 20), (1, 44)
        );
        let _ = t;
        // chi
        for y in 0..5 {
            let row = [
                s[5 * y],
                s[5 * y + 1],
                s[5 * y + 2],
                s[5 * y + 3],
                s[5 * y + 4],
            ];
            for x in 0..5 {
                s[5 * y + x] = V::chi(row[x], row[(x + 1) % 5], row[(x + 2) % 5]);
            }
        }
        // iota
        s[0] = s[0].xor_splat(rc);
    }
}

#[inline(always)]
fn squeeze<V: Lane>(s: &[V; 25], out: &mut [Digest]) {
    for (j, d) in out.iter_mut().enumerate() {
        for k in 0..4 {
            d[8 * k..8 * k + 8].copy_from_slice(&s[k].get(j).to_le_bytes());
        }
    }
}

#[inline(always)]
fn pad_and_finish<V: Lane>(s: &mut [V; 25], pos: usize) {
    s[pos] = s[pos].xor_splat(0x01);
    s[RATE_WORDS - 1] = s[RATE_WORDS - 1].xor_splat(0x8000_0000_0000_0000);
    keccak_f(s);
}

/// Leaves `first .. first + out.len()` of the concatenation of `mats`, `V::N` at a time.
#[inline(always)]
fn leaves_range<V: Lane>(mats: &[(&[F], usize)], first: usize, out: &mut [Digest]) {
    let zero = V::from_fn(|_| 0);
    for (g, chunk) in out.chunks_mut(V::N).enumerate() {
        let base = first + g * V::N;
        let last = base + chunk.len() - 1;
        // A short final group repeats its last row; the extra digests are not written.
        let row = |j: usize| (base + j).min(last);
        let mut s = [zero; 25];
        let mut pos = 0;
        for &(values, width) in mats {
            for c in 0..width {
                let w = V::from_fn(|j| values[row(j) * width + c].as_canonical_u64());
                s[pos] = s[pos].xor(w);
                pos += 1;
                if pos == RATE_WORDS {
                    keccak_f(&mut s);
                    pos = 0;
                }
            }
        }
        pad_and_finish(&mut s, pos);
        squeeze(&s, chunk);
    }
}

/// `out[k] = H(pair(k).0 || pair(k).1)` for `k < out.len()`, `V::N` at a time.
#[inline(always)]
fn compress_range<'a, V: Lane>(
    pair: impl Fn(usize) -> (&'a Digest, &'a Digest),
    out: &mut [Digest],
) {
    let n = out.len();
    let zero = V::from_fn(|_| 0);
    let word =
        |d: &Digest, k: usize| u64::from_le_bytes(d[8 * k..8 * k + 8].try_into().expect("8 bytes"));
    for (g, chunk) in out.chunks_mut(V::N).enumerate() {
        let p = |j: usize| pair((g * V::N + j).min(n - 1));
        let mut s = [zero; 25];
        for k in 0..4 {
            s[k] = V::from_fn(|j| word(p(j).0, k));
            s[4 + k] = V::from_fn(|j| word(p(j).1, k));
        }
        pad_and_finish(&mut s, 8);
        squeeze(&s, chunk);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn leaves_avx512(mats: &[(&[F], usize)], first: usize, out: &mut [Digest]) {
        leaves_range::<Avx512>(mats, first, out)
    }
    #[target_feature(enable = "avx2")]
    pub unsafe fn leaves_avx2(mats: &[(&[F], usize)], first: usize, out: &mut [Digest]) {
        leaves_range::<[u64; 4]>(mats, first, out)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn compress_avx512<'a>(
        pair: impl Fn(usize) -> (&'a Digest, &'a Digest),
        out: &mut [Digest],
    ) {
        compress_range::<Avx512>(pair, out)
    }
    #[target_feature(enable = "avx512f")]
    pub unsafe fn permute_avx512(states: &mut [[u64; 25]]) {
        permute_range::<Avx512>(states)
    }
    #[target_feature(enable = "avx2")]
    pub unsafe fn permute_avx2(states: &mut [[u64; 25]]) {
        permute_range::<[u64; 4]>(states)
    }
    #[target_feature(enable = "avx2")]
    pub unsafe fn compress_avx2<'a>(
        pair: impl Fn(usize) -> (&'a Digest, &'a Digest),
        out: &mut [Digest],
    ) {
        compress_range::<[u64; 4]>(pair, out)
    }
}

/// Keccak-f[1600] on every state, `V::N` at a time (a partial last group is padded with zero states).
#[inline(always)]
fn permute_range<V: Lane>(states: &mut [[u64; 25]]) {
    for chunk in states.chunks_mut(V::N) {
        let mut s: [V; 25] =
            std::array::from_fn(|i| V::from_fn(|j| chunk.get(j).map_or(0, |st| st[i])));
        keccak_f(&mut s);
        for (j, st) in chunk.iter_mut().enumerate() {
            for (i, lane) in st.iter_mut().enumerate() {
                *lane = s[i].get(j);
            }
        }
    }
}

/// Keccak-f[1600] on each of `states` (lane `i` at `state[i]`), batched with the widest kernel of this CPU
/// ([`lanes`]); bit-exact with [`keccak_f1600`] on each state.
pub fn permute_many(states: &mut [[u64; 25]]) {
    let lanes = lanes();
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the features were detected at run time (`lanes` <= `detected_lanes`).
        if lanes == 8 {
            return unsafe { x86::permute_avx512(states) };
        }
        if lanes == 4 {
            return unsafe { x86::permute_avx2(states) };
        }
    }
    let _ = lanes;
    for st in states.iter_mut() {
        tiny_keccak::keccakf(st);
    }
}

/// Which kernel [`hash_leaves`] and the compressions use on this CPU: 8 (AVX-512F), 4 (AVX2) or 1 (scalar
/// `tiny_keccak`), the number of messages per permutation. `ZKRV_KECCAK_LANES=1|4|8` lowers it (for
/// benchmarks; a value the CPU cannot run is ignored).
pub fn lanes() -> usize {
    static LANES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LANES.get_or_init(|| {
        let hw = detected_lanes();
        match std::env::var("ZKRV_KECCAK_LANES")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            Some(n @ (1 | 4 | 8)) if n <= hw => n,
            _ => hw,
        }
    })
}

fn detected_lanes() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 8;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return 4;
        }
    }
    1
}

/// Keccak-256 leaves `first .. first + out.len()`: leaf `i` = `H(row_i(M_0) || row_i(M_1) || ...)` over
/// `mats` = `(row-major values, width)` pairs of equal height (> `first + out.len() - 1`), each element as
/// its canonical value in 8 little-endian bytes (same bytes as [`crate::merkle::hash_rows`]).
pub fn hash_leaves(mats: &[(&[F], usize)], first: usize, out: &mut [Digest]) {
    hash_leaves_with(lanes(), mats, first, out)
}

/// [`hash_leaves`] with an explicit kernel width (`lanes` in {1, 4, 8}, clamped to what the CPU runs).
pub fn hash_leaves_with(lanes: usize, mats: &[(&[F], usize)], first: usize, out: &mut [Digest]) {
    if out.is_empty() {
        return;
    }
    let lanes = lanes.min(detected_lanes());
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the features were detected at run time (`detected_lanes`).
        if lanes == 8 {
            return unsafe { x86::leaves_avx512(mats, first, out) };
        }
        if lanes == 4 {
            return unsafe { x86::leaves_avx2(mats, first, out) };
        }
    }
    let _ = lanes;
    for (k, o) in out.iter_mut().enumerate() {
        let i = first + k;
        *o = crate::merkle::hash_rows(mats.iter().map(|&(v, w)| &v[i * w..(i + 1) * w]));
    }
}

/// One Merkle level up: `out[k] = H(children[2k] || children[2k+1])`.
///
/// # Panics
/// If `children.len() != 2 * out.len()`.
pub fn compress_layer(children: &[Digest], out: &mut [Digest]) {
    assert_eq!(children.len(), 2 * out.len(), "two children per node");
    compress_with(lanes(), |k| (&children[2 * k], &children[2 * k + 1]), out)
}

/// Injection of shorter matrices: `out[k] = H(out[k] || right[k])` (in place).
///
/// # Panics
/// If `right.len() != out.len()`.
pub fn compress_inject(out: &mut [Digest], right: &[Digest]) {
    assert_eq!(right.len(), out.len(), "one right digest per node");
    let left = out.to_vec();
    compress_with(lanes(), |k| (&left[k], &right[k]), out)
}

/// `out[k] = H(pair(k).0 || pair(k).1)` with an explicit kernel width (`lanes` in {1, 4, 8}, clamped to
/// what the CPU runs).
pub fn compress_with<'a>(
    lanes: usize,
    pair: impl Fn(usize) -> (&'a Digest, &'a Digest),
    out: &mut [Digest],
) {
    if out.is_empty() {
        return;
    }
    let lanes = lanes.min(detected_lanes());
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the features were detected at run time (`detected_lanes`).
        if lanes == 8 {
            return unsafe { x86::compress_avx512(pair, out) };
        }
        if lanes == 4 {
            return unsafe { x86::compress_avx2(pair, out) };
        }
    }
    let _ = lanes;
    for (k, o) in out.iter_mut().enumerate() {
        let (l, r) = pair(k);
        *o = crate::merkle::compress(l, r);
    }
}

/// Keccak-256 of a message of whole 64-bit words (word `k` = bytes `8k..8k+8`, little-endian), one message
/// at a time. Bit-exact with `tiny_keccak` on the same bytes.
pub fn keccak256_words(words: &[u64]) -> Digest {
    let mut s = [[0u64; 1]; 25];
    let mut pos = 0;
    for &w in words {
        s[pos][0] ^= w;
        pos += 1;
        if pos == RATE_WORDS {
            keccak_f(&mut s);
            pos = 0;
        }
    }
    pad_and_finish(&mut s, pos);
    let mut out = [[0u8; 32]];
    squeeze(&s, &mut out);
    out[0]
}

/// Keccak-f[1600] on one state (lane `i` at `state[i]`), for tests against a reference.
pub fn keccak_f1600(state: &mut [u64; 25]) {
    let mut s: [[u64; 1]; 25] = state.map(|x| [x]);
    keccak_f(&mut s);
    *state = s.map(|x| x[0]);
}
