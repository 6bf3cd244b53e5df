/* rv64im: executes every RV64IM instruction on edge-case operands and writes every result to the public
 * output, so that any difference between two executions of this ELF (zkrv, qemu) shows in the output.
 * No input. Output (all u64 little-endian unless said otherwise), in this order:
 *   1. RR:   for each of the 28 register-register ops (rr_ops order), for each a, b in VALUES: op(a, b)
 *   2. BR:   for each of the 6 branches (br_ops order), for each a, b in VALUES: 1 byte, 1 if taken
 *   3. RI:   for each of the 7 register-immediate ops, for each a in VALUES: 8 results (imms in rv64im_ops.S)
 *   4. SH:   slli srli srai, for each a: 5 results (shamt 0, 1, 31, 32, 63);
 *            slliw srliw sraiw, for each a: 4 results (shamt 0, 1, 15, 31)
 *   5. LOAD: for each offset 0..15 into a 48-byte pattern: 35 results of ld_all
 *   6. STORE: for each of sb sh sw sd, for each offset 0..15: the 32-byte buffer after the store (raw bytes)
 *   7. PAGE: loads across a 4 KiB page boundary: 35 results of ld_all at page - 1 .. page - 7,
 *            then the bytes around the boundary after an sd straddling it (16 raw bytes)
 *   8. UPPER: 11 results of upper_all; JUMP: 8 results of jump_all; X0: 6 results of x0_all
 * VALUES has 16 entries (see below). Hosts can recompute sections 1-4 from the instruction set alone.
 */
#include "zkrv.h"

#include <string.h>

typedef uint64_t (*rr_fn)(uint64_t, uint64_t);
typedef void (*ri_fn)(uint64_t, uint64_t *);
typedef void (*st_fn)(uint8_t *, uint64_t);

#define DECL_RR(op) uint64_t rr_##op(uint64_t, uint64_t);
#define DECL_BR(op) uint64_t br_##op(uint64_t, uint64_t);
#define DECL_RI(op) void op(uint64_t, uint64_t *);
DECL_RR(add) DECL_RR(sub) DECL_RR(sll) DECL_RR(slt) DECL_RR(sltu) DECL_RR(xor) DECL_RR(srl) DECL_RR(sra)
DECL_RR(or) DECL_RR(and) DECL_RR(addw) DECL_RR(subw) DECL_RR(sllw) DECL_RR(srlw) DECL_RR(sraw)
DECL_RR(mul) DECL_RR(mulh) DECL_RR(mulhsu) DECL_RR(mulhu) DECL_RR(div) DECL_RR(divu) DECL_RR(rem)
DECL_RR(remu) DECL_RR(mulw) DECL_RR(divw) DECL_RR(divuw) DECL_RR(remw) DECL_RR(remuw)
DECL_BR(beq) DECL_BR(bne) DECL_BR(blt) DECL_BR(bge) DECL_BR(bltu) DECL_BR(bgeu)
DECL_RI(ri_addi) DECL_RI(ri_slti) DECL_RI(ri_sltiu) DECL_RI(ri_xori) DECL_RI(ri_ori) DECL_RI(ri_andi)
DECL_RI(ri_addiw) DECL_RI(sh_slli) DECL_RI(sh_srli) DECL_RI(sh_srai) DECL_RI(shw_slliw) DECL_RI(shw_srliw)
DECL_RI(shw_sraiw)
void ld_all(const uint8_t *p, uint64_t *out);
void st_sb(uint8_t *, uint64_t);
void st_sh(uint8_t *, uint64_t);
void st_sw(uint8_t *, uint64_t);
void st_sd(uint8_t *, uint64_t);
void upper_all(uint64_t *out);
void jump_all(uint64_t *out);
void x0_all(uint64_t *out);

static const rr_fn rr_ops[] = {
    rr_add, rr_sub, rr_sll, rr_slt, rr_sltu, rr_xor, rr_srl, rr_sra, rr_or, rr_and,
    rr_addw, rr_subw, rr_sllw, rr_srlw, rr_sraw,
    rr_mul, rr_mulh, rr_mulhsu, rr_mulhu, rr_div, rr_divu, rr_rem, rr_remu,
    rr_mulw, rr_divw, rr_divuw, rr_remw, rr_remuw,
};
static const rr_fn br_ops[] = {br_beq, br_bne, br_blt, br_bge, br_bltu, br_bgeu};
static const ri_fn ri_ops[] = {ri_addi, ri_slti, ri_sltiu, ri_xori, ri_ori, ri_andi, ri_addiw};
static const st_fn st_ops[] = {st_sb, st_sh, st_sw, st_sd};

static const uint64_t VALUES[16] = {
    0, 1, 2, 0xFFFFFFFFFFFFFFFFull /* -1 */, 0xFFFFFFFFFFFFFFFEull /* -2 */, 31, 32, 63,
    0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFF80000000ull /* i32::MIN as i64 */,
    0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0x0123456789ABCDEFull, 0xFEDCBA9876543211ull,
};
#define NV 16

static uint64_t buf[64];
static uint8_t pages[8192] __attribute__((aligned(4096)));

static void out_words(const uint64_t *w, size_t n)
{
    zkrv_write_output(w, n * 8); /* little-endian host: words are already LE */
}

static void fill_pattern(uint8_t *p, size_t n, uint8_t k)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(0x81 + 0x3B * i + k);
}

int main(void)
{
    static uint64_t row[NV];
    /* 1. register-register */
    for (size_t op = 0; op < sizeof(rr_ops) / sizeof(rr_ops[0]); op++)
        for (int i = 0; i < NV; i++) {
            for (int j = 0; j < NV; j++)
                row[j] = rr_ops[op](VALUES[i], VALUES[j]);
            out_words(row, NV);
        }
    /* 2. branches */
    for (size_t op = 0; op < sizeof(br_ops) / sizeof(br_ops[0]); op++)
        for (int i = 0; i < NV; i++) {
            uint8_t taken[NV];
            for (int j = 0; j < NV; j++)
                taken[j] = (uint8_t)br_ops[op](VALUES[i], VALUES[j]);
            zkrv_write_output(taken, NV);
        }
    /* 3. register-immediate */
    for (size_t op = 0; op < sizeof(ri_ops) / sizeof(ri_ops[0]); op++)
        for (int i = 0; i < NV; i++) {
            ri_ops[op](VALUES[i], buf);
            out_words(buf, 8);
        }
    /* 4. immediate shifts */
    const ri_fn sh_ops[] = {sh_slli, sh_srli, sh_srai};
    const ri_fn shw_ops[] = {shw_slliw, shw_srliw, shw_sraiw};
    for (int op = 0; op < 3; op++)
        for (int i = 0; i < NV; i++) {
            sh_ops[op](VALUES[i], buf);
            out_words(buf, 5);
        }
    for (int op = 0; op < 3; op++)
        for (int i = 0; i < NV; i++) {
            shw_ops[op](VALUES[i], buf);
            out_words(buf, 4);
        }
    /* 5. loads at every misalignment (the pattern is in the middle of `pages` so +-2048 stays inside) */
    uint8_t *pat = pages + 2048;
    fill_pattern(pages, sizeof(pages), 0);
    for (int off = 0; off < 16; off++) {
        ld_all(pat + off, buf);
        out_words(buf, 35);
    }
    /* 6. stores at every misalignment */
    for (int op = 0; op < 4; op++)
        for (int off = 0; off < 16; off++) {
            fill_pattern(pat, 32, 7);
            st_ops[op](pat + off, 0xF1E2D3C4B5A69788ull);
            zkrv_write_output(pat, 32);
        }
    /* 7. across the page boundary at pages + 4096 */
    fill_pattern(pages, sizeof(pages), 3);
    for (int back = 1; back <= 7; back++) {
        ld_all(pages + 4096 - back, buf);
        out_words(buf, 35);
    }
    st_sd(pages + 4096 - 3, 0x1122334455667788ull);
    zkrv_write_output(pages + 4096 - 8, 16);
    /* 8. upper immediates, jumps, x0 and fence */
    upper_all(buf);
    out_words(buf, 11);
    jump_all(buf);
    out_words(buf, 8);
    x0_all(buf);
    out_words(buf, 6);
    return 0;
}
