/* sort: input n (u64 LE, default 1000) and seed (u64 LE, default 1). Generates n values with xorshift64
 * (xorshift.h), sorts them ascending (picolibc qsort) and outputs, as u64 LE: n, the checksum of the sorted
 * array, its first and its last element (0 and 0 when n = 0). Exits 1 if the heap cannot hold n values.
 */
#include "xorshift.h"
#include "zkrv.h"

#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    uint64_t n = zkrv_read_u64(1000);
    uint64_t seed = zkrv_read_u64(1);
    if (n > (1u << 24)) {
        zkrv_debug("sort: n too large\n");
        return 1;
    }
    uint64_t *a = malloc(n ? n * sizeof(uint64_t) : 1);
    if (!a) {
        zkrv_debug("sort: out of heap\n");
        return 1;
    }
    uint64_t x = xorshift_init(seed);
    for (uint64_t i = 0; i < n; i++)
        a[i] = xorshift_next(&x);
    qsort(a, n, sizeof(uint64_t), cmp_u64);
    uint64_t h = CHECKSUM_INIT;
    for (uint64_t i = 0; i < n; i++)
        h = checksum_step(h, a[i]);
    zkrv_write_u64(n);
    zkrv_write_u64(h);
    zkrv_write_u64(n ? a[0] : 0);
    zkrv_write_u64(n ? a[n - 1] : 0);
    return 0;
}
