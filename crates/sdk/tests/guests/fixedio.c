/* A C guest of crates/sdk/tests/typed_io.rs (built by the test, not bundled): the C runtime's fixed-width
 * helpers against zkrv_sdk::io. Input: a u32, a u64, an i64, a byte string (at most 64 bytes). Output: the
 * u64 plus the u32 (u64), the negated i64 (i64, wrapping), the byte string reversed (byte string), its
 * length (u32).
 * Exits 1 if the byte string is missing or longer than 64 bytes. */
#include "zkrv.h"

int main(void)
{
    uint32_t a = zkrv_read_u32(0);
    uint64_t b = zkrv_read_u64(0);
    int64_t c = zkrv_read_i64(0);
    uint8_t s[64], r[64];
    size_t n = zkrv_read_bytes(s, sizeof s);
    if (n == (size_t)-1)
        return 1;
    for (size_t i = 0; i < n; i++)
        r[i] = s[n - 1 - i];
    zkrv_write_u64(b + a);
    zkrv_write_i64((int64_t)(0 - (uint64_t)c)); /* -c, wrapping */
    zkrv_write_bytes(r, (uint32_t)n);
    zkrv_write_u32((uint32_t)n);
    return 0;
}
