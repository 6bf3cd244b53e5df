/* modexp: big-integer modular exponentiation base^exp mod m.
 *
 * Input: three u32 LE lengths (base_len, exp_len, mod_len, each at most 512 bytes), then base, exp and m as
 * big-endian byte strings of those lengths (the layout of EIP-198 with u32 LE lengths).
 * Output: base^exp mod m as mod_len big-endian bytes; all zeros when m = 0 (as EIP-198). 0^0 = 1.
 * Exit codes: 0 ok, 1 input too short, 2 a length over 512.
 * Arithmetic: 32-bit limbs, schoolbook multiplication, Knuth's algorithm D (Hacker's Delight divmnu) for the
 * reduction, left-to-right square-and-multiply over the exponent bits.
 */
#include "zkrv.h"

#include <string.h>

#define MAX_BYTES 512
#define MAX_LIMBS (MAX_BYTES / 4)

/* Little-endian limbs from big-endian bytes; returns the limb count without leading zero limbs. */
static int from_be(uint32_t *out, const uint8_t *bytes, uint32_t len)
{
    int n = (int)((len + 3) / 4);
    memset(out, 0, (size_t)n * 4);
    for (uint32_t i = 0; i < len; i++) {
        uint32_t pos = len - 1 - i; /* byte significance */
        out[pos / 4] |= (uint32_t)bytes[i] << (8 * (pos % 4));
    }
    while (n > 0 && out[n - 1] == 0)
        n--;
    return n;
}

static int nlz32(uint32_t x)
{
    int n = 0;
    if (x == 0)
        return 32;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

/* r[0..n) = u[0..m) mod v[0..n), with v[n-1] != 0 and n >= 1. */
static void mod_reduce(uint32_t *r, const uint32_t *u, int m, const uint32_t *v, int n)
{
    static uint32_t un[2 * MAX_LIMBS + 2], vn[MAX_LIMBS];
    const uint64_t b = 1ull << 32;
    if (m < n) {
        memset(r, 0, (size_t)n * 4);
        memcpy(r, u, (size_t)m * 4);
        return;
    }
    if (n == 1) {
        uint64_t k = 0;
        for (int j = m - 1; j >= 0; j--)
            k = ((k << 32) | u[j]) % v[0];
        r[0] = (uint32_t)k;
        return;
    }
    int s = nlz32(v[n - 1]);
    for (int i = n - 1; i > 0; i--)
        vn[i] = (v[i] << s) | (uint32_t)((uint64_t)v[i - 1] >> (32 - s));
    vn[0] = v[0] << s;
    un[m] = (uint32_t)((uint64_t)u[m - 1] >> (32 - s));
    for (int i = m - 1; i > 0; i--)
        un[i] = (u[i] << s) | (uint32_t)((uint64_t)u[i - 1] >> (32 - s));
    un[0] = u[0] << s;
    for (int j = m - n; j >= 0; j--) {
        uint64_t num = ((uint64_t)un[j + n] << 32) | un[j + n - 1];
        uint64_t qhat = num / vn[n - 1];
        uint64_t rhat = num - qhat * vn[n - 1];
        while (qhat >= b || qhat * vn[n - 2] > ((rhat << 32) | un[j + n - 2])) {
            qhat--;
            rhat += vn[n - 1];
            if (rhat >= b)
                break;
        }
        int64_t k = 0, t;
        for (int i = 0; i < n; i++) {
            uint64_t p = qhat * vn[i];
            t = (int64_t)un[i + j] - k - (int64_t)(p & 0xFFFFFFFFull);
            un[i + j] = (uint32_t)t;
            k = (int64_t)(p >> 32) - (t >> 32);
        }
        t = (int64_t)un[j + n] - k;
        un[j + n] = (uint32_t)t;
        if (t < 0) {
            uint64_t c = 0;
            for (int i = 0; i < n; i++) {
                uint64_t sum = (uint64_t)un[i + j] + vn[i] + c;
                un[i + j] = (uint32_t)sum;
                c = sum >> 32;
            }
            un[j + n] += (uint32_t)c;
        }
    }
    for (int i = 0; i < n - 1; i++)
        r[i] = (un[i] >> s) | (uint32_t)((uint64_t)un[i + 1] << (32 - s));
    r[n - 1] = un[n - 1] >> s;
}

/* r = a * b mod m, all n limbs (r may alias a or b). */
static void mul_mod(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *m, int n)
{
    static uint32_t prod[2 * MAX_LIMBS];
    memset(prod, 0, (size_t)(2 * n) * 4);
    for (int i = 0; i < n; i++) {
        uint64_t c = 0;
        for (int j = 0; j < n; j++) {
            uint64_t t = (uint64_t)a[i] * b[j] + prod[i + j] + c;
            prod[i + j] = (uint32_t)t;
            c = t >> 32;
        }
        prod[i + n] = (uint32_t)c;
    }
    mod_reduce(r, prod, 2 * n, m, n);
}

static int read_len(uint32_t *len)
{
    uint8_t b[4];
    if (zkrv_read_input(b, 4) != 4)
        return 0;
    *len = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 1;
}

int main(void)
{
    static uint8_t base_b[MAX_BYTES], exp_b[MAX_BYTES], mod_b[MAX_BYTES], out[MAX_BYTES];
    static uint32_t base[MAX_LIMBS], m[MAX_LIMBS], x[MAX_LIMBS], r[MAX_LIMBS];
    uint32_t base_len, exp_len, mod_len;
    if (!read_len(&base_len) || !read_len(&exp_len) || !read_len(&mod_len))
        return 1;
    if (base_len > MAX_BYTES || exp_len > MAX_BYTES || mod_len > MAX_BYTES)
        return 2;
    if (zkrv_read_input(base_b, base_len) != base_len || zkrv_read_input(exp_b, exp_len) != exp_len ||
        zkrv_read_input(mod_b, mod_len) != mod_len)
        return 1;

    int n = from_be(m, mod_b, mod_len);
    memset(r, 0, sizeof(r));
    if (n > 0) {
        int nb = from_be(base, base_b, base_len);
        mod_reduce(x, base, nb, m, n); /* x = base mod m */
        uint32_t one = 1;
        mod_reduce(r, &one, 1, m, n); /* r = 1 mod m */
        for (uint32_t i = 0; i < exp_len; i++) {
            for (int bit = 7; bit >= 0; bit--) {
                mul_mod(r, r, r, m, n);
                if ((exp_b[i] >> bit) & 1)
                    mul_mod(r, r, x, m, n);
            }
        }
    }
    for (uint32_t i = 0; i < mod_len; i++) {
        uint32_t pos = mod_len - 1 - i;
        out[i] = (uint8_t)(r[pos / 4] >> (8 * (pos % 4)));
    }
    zkrv_write_output(out, mod_len);
    return 0;
}
