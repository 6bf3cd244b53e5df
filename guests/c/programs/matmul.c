/* matmul: input n (u64 LE, default 16) and seed (u64 LE, default 1). Fills A then B (n x n, row-major) with
 * xorshift64 values (xorshift.h), computes C = A * B with wrapping u64 arithmetic and outputs, as u64 LE:
 * the checksum of C (row-major), C[0][0] and C[n-1][n-1] (0 and 0 when n = 0).
 * Exits 1 if the heap cannot hold the three matrices.
 */
#include "xorshift.h"
#include "zkrv.h"

#include <stdlib.h>

int main(void)
{
    uint64_t n = zkrv_read_u64(16);
    uint64_t seed = zkrv_read_u64(1);
    if (n > 4096) {
        zkrv_debug("matmul: n too large\n");
        return 1;
    }
    size_t nn = (size_t)(n * n);
    uint64_t *a = malloc(3 * nn * sizeof(uint64_t) + 8);
    if (!a) {
        zkrv_debug("matmul: out of heap\n");
        return 1;
    }
    uint64_t *b = a + nn, *c = b + nn;
    uint64_t x = xorshift_init(seed);
    for (size_t i = 0; i < 2 * nn; i++)
        a[i] = xorshift_next(&x);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            c[i * n + j] = 0;
        for (size_t k = 0; k < n; k++) {
            uint64_t aik = a[i * n + k];
            const uint64_t *brow = b + k * n;
            uint64_t *crow = c + i * n;
            for (size_t j = 0; j < n; j++)
                crow[j] += aik * brow[j];
        }
    }
    uint64_t h = CHECKSUM_INIT;
    for (size_t i = 0; i < nn; i++)
        h = checksum_step(h, c[i]);
    zkrv_write_u64(h);
    zkrv_write_u64(nn ? c[0] : 0);
    zkrv_write_u64(nn ? c[nn - 1] : 0);
    return 0;
}
