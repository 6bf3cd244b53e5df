/* fibonacci: input n (u64 LE, default 10); output fib(n) mod 2^64 (u64 LE), fib(0) = 0, fib(1) = 1. */
#include "zkrv.h"

int main(void)
{
    uint64_t n = zkrv_read_u64(10);
    uint64_t a = 0, b = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    zkrv_write_u64(a);
    return 0;
}
