/* zkrv guest system calls and helpers for C (numbers as Linux riscv64, see docs/abi.md). */
#include "zkrv.h"

#include <errno.h>
#include <string.h>

static inline long zkrv_syscall3(long n, long a0, long a1, long a2)
{
    register long r_a0 __asm__("a0") = a0;
    register long r_a1 __asm__("a1") = a1;
    register long r_a2 __asm__("a2") = a2;
    register long r_a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(r_a0) : "r"(r_a1), "r"(r_a2), "r"(r_a7) : "memory");
    return r_a0;
}

ssize_t read(int fd, void *buf, size_t len)
{
    return zkrv_syscall3(63, fd, (long)buf, (long)len);
}

ssize_t write(int fd, const void *buf, size_t len)
{
    return zkrv_syscall3(64, fd, (long)buf, (long)len);
}

_Noreturn void _exit(int code)
{
    for (;;)
        zkrv_syscall3(93, code, 0, 0);
}

/* picolibc's exit() runs atexit handlers then calls _exit; _Exit is the same as _exit here. */
_Noreturn void _Exit(int code)
{
    _exit(code);
}

_Noreturn void zkrv_exit(uint32_t code)
{
    _exit((int)code);
}

extern char __heap_start[], __heap_end[];
static char *heap_top = __heap_start;

void *sbrk(ptrdiff_t incr)
{
    char *old = heap_top;
    if (incr < 0 ? (size_t)(-incr) > (size_t)(old - __heap_start)
                 : (size_t)incr > (size_t)(__heap_end - old)) {
        errno = ENOMEM;
        return (void *)-1;
    }
    heap_top = old + incr;
    return old;
}

size_t zkrv_read_input(void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = read(0, (char *)buf + done, len - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    return done;
}

uint64_t zkrv_read_u64(uint64_t def)
{
    uint8_t b[8];
    if (zkrv_read_input(b, 8) != 8)
        return def;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

void zkrv_write_output(const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(1, p, len);
        if (n <= 0)
            zkrv_exit(102);
        p += n;
        len -= (size_t)n;
    }
}

void zkrv_write_u64(uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    zkrv_write_output(b, 8);
}

void zkrv_debug(const char *msg)
{
    write(2, msg, strlen(msg));
}

int zkrv_read_exact(void *buf, size_t len)
{
    return zkrv_read_input(buf, len) == len;
}

uint32_t zkrv_read_u32(uint32_t def)
{
    uint8_t b[4];
    if (!zkrv_read_exact(b, 4))
        return def;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

size_t zkrv_read_bytes(void *buf, size_t cap)
{
    uint8_t b[4];
    if (!zkrv_read_exact(b, 4))
        return (size_t)-1;
    size_t len = (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 | (size_t)b[3] << 24;
    if (len > cap || !zkrv_read_exact(buf, len))
        return (size_t)-1;
    return len;
}

void zkrv_write_u32(uint32_t v)
{
    uint8_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    zkrv_write_output(b, 4);
}

void zkrv_write_bytes(const void *buf, uint32_t len)
{
    zkrv_write_u32(len);
    zkrv_write_output(buf, len);
}

int64_t zkrv_read_i64(int64_t def)
{
    uint8_t b[8];
    if (!zkrv_read_exact(b, 8))
        return def;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return (int64_t)v;
}

void zkrv_write_i64(int64_t v)
{
    zkrv_write_u64((uint64_t)v);
}

/* ---- Precompiles (docs/abi.md "Precompiles"). a0 comes back 0: it is an output of the asm. ---- */

static inline void zkrv_precompile(long n, void *a0, const void *a1)
{
    register long r_a0 __asm__("a0") = (long)a0;
    register long r_a1 __asm__("a1") = (long)a1;
    register long r_a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(r_a0) : "r"(r_a1), "r"(r_a7) : "memory");
}

void zkrv_keccak_f(uint64_t state[25])
{
    zkrv_precompile(0x01000001, state, 0);
}

void zkrv_sha256_compress(uint32_t state[8], const uint8_t block[64])
{
    zkrv_precompile(0x01000002, state, block);
}

void zkrv_poseidon2(uint64_t state[8])
{
    zkrv_precompile(0x01000003, state, 0);
}

void zkrv_sha256(const void *buf, size_t len, uint8_t out[32])
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint32_t h[8] __attribute__((aligned(8)));
    uint8_t block[64] __attribute__((aligned(8)));
    const uint8_t *p = buf;
    size_t n = len;
    memcpy(h, iv, sizeof h);
    for (; n >= 64; n -= 64, p += 64) {
        memcpy(block, p, 64);
        zkrv_sha256_compress(h, block);
    }
    /* The tail, 0x80, zeros, the bit length big-endian in the last 8 bytes (one or two blocks). */
    memset(block, 0, 64);
    memcpy(block, p, n);
    block[n] = 0x80;
    if (n >= 56) {
        zkrv_sha256_compress(h, block);
        memset(block, 0, 64);
    }
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        block[63 - i] = (uint8_t)(bits >> (8 * i));
    zkrv_sha256_compress(h, block);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

void zkrv_keccak256(const void *buf, size_t len, uint8_t out[32])
{
    enum { RATE = 136 };
    uint64_t st[25];
    uint8_t block[RATE];
    const uint8_t *p = buf;
    size_t n = len;
    memset(st, 0, sizeof st);
    for (;;) {
        size_t take = n < RATE ? n : RATE;
        memset(block, 0, RATE);
        memcpy(block, p, take);
        if (take < RATE) {
            block[take] ^= 0x01;
            block[RATE - 1] ^= 0x80;
        }
        for (int i = 0; i < RATE / 8; i++) {
            uint64_t lane = 0;
            for (int k = 7; k >= 0; k--)
                lane = (lane << 8) | block[8 * i + k];
            st[i] ^= lane;
        }
        zkrv_keccak_f(st);
        if (take < RATE)
            break;
        p += RATE;
        n -= RATE;
    }
    for (int i = 0; i < 32; i++)
        out[i] = (uint8_t)(st[i / 8] >> (8 * (i % 8)));
}
