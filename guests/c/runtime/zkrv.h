/* zkrv guest runtime for C (see guests/README.md and docs/abi.md).
 *
 * Private input: fd 0, read with zkrv_read_input. Public output: fd 1, zkrv_write_output.
 * Debug text: fd 2, zkrv_debug (not proven). Exit code: the return value of main, or zkrv_exit.
 */
#ifndef ZKRV_H
#define ZKRV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Raw system calls (Linux riscv64 numbers, so the same ELF runs under qemu-riscv64). */
ssize_t read(int fd, void *buf, size_t len);      /* a7 = 63, fd must be 0 */
ssize_t write(int fd, const void *buf, size_t len); /* a7 = 64, fd 1 = public output, 2 = debug */
_Noreturn void _exit(int code);                   /* a7 = 93 */
void *sbrk(ptrdiff_t incr);                        /* bump pointer over the reserved .heap section */

/* Reads up to len bytes of private input, looping until len bytes or the end of input; returns the count. */
size_t zkrv_read_input(void *buf, size_t len);
/* Reads exactly 8 bytes as a little-endian u64; returns def if the input ends first. */
uint64_t zkrv_read_u64(uint64_t def);
/* Appends len bytes to the public output. */
void zkrv_write_output(const void *buf, size_t len);
/* Appends v as 8 little-endian bytes to the public output. */
void zkrv_write_u64(uint64_t v);
/* Fixed-width input and output (docs/abi.md "Typed I/O"): integers little-endian, 4 or 8 bytes; a byte
 * string is a u32 LE length, then the bytes. The host writes them with zkrv_sdk::io::Input::write_u32,
 * write_u64, write_i64, write_bytes and reads them with OutputReader::read_u32, ... C guests use only these:
 * the postcard frames of Input::write / zkrv_guest::commit are for Rust guests. */
/* Reads exactly len bytes; returns 1, or 0 if the input ends first. */
int zkrv_read_exact(void *buf, size_t len);
/* Reads 4 bytes as a little-endian u32; returns def if the input ends first. */
uint32_t zkrv_read_u32(uint32_t def);
/* Reads a byte string (u32 LE length, then the bytes) into buf; returns its length, or (size_t)-1 if the
 * input ends first or the length exceeds cap (then nothing more is consumed than the length). */
size_t zkrv_read_bytes(void *buf, size_t cap);
/* Reads 8 bytes as a little-endian two's-complement i64; returns def if the input ends first. */
int64_t zkrv_read_i64(int64_t def);
/* Appends v as 4 little-endian bytes to the public output. */
void zkrv_write_u32(uint32_t v);
/* Appends v as 8 little-endian two's-complement bytes to the public output. */
void zkrv_write_i64(int64_t v);
/* Appends a byte string (u32 LE length, then the bytes) to the public output. */
void zkrv_write_bytes(const void *buf, uint32_t len);
/* Writes a NUL-terminated string to the debug stream (fd 2). */
void zkrv_debug(const char *msg);
/* Halts with the given exit code (low 32 bits are the proven exit code). */
_Noreturn void zkrv_exit(uint32_t code);

/* Precompiles (docs/abi.md "Precompiles"): one ecall each, proven by a dedicated table. zkrv only: these
 * guests do not run under qemu-riscv64. Every pointer must be 8-byte aligned (the executor refuses the call
 * otherwise, naming the pointer). */
/* Keccak-f[1600] in place: 25 lanes, lane (x, y) at state[x + 5y] (FIPS 202, tiny-keccak order). a7 = 0x01000001. */
void zkrv_keccak_f(uint64_t state[25]);
/* One SHA-256 compression (FIPS 180-4 6.2.2): state = H0..H7 (updated), block = 64 message bytes, disjoint
 * from the state. a7 = 0x01000002. */
void zkrv_sha256_compress(uint32_t state[8], const uint8_t block[64]);
/* The width-8 Poseidon2 permutation over Goldilocks (Plonky3's parameters) in place; every element must be
 * canonical (< p = 2^64 - 2^32 + 1). a7 = 0x01000003. */
void zkrv_poseidon2(uint64_t state[8]);
/* SHA-256 of buf[0..len) (FIPS 180-4 padding) on the precompile: out = the 32-byte digest. */
void zkrv_sha256(const void *buf, size_t len, uint8_t out[32]);
/* Keccak-256 of buf[0..len) (original Keccak padding 0x01, as Ethereum and tiny-keccak's Keccak::v256) on the
 * precompile: out = the 32-byte digest. */
void zkrv_keccak256(const void *buf, size_t len, uint8_t out[32]);

#endif
