/* Leaf routines for the rv64im guest: each executes RV64IM instructions on its arguments (lp64 calling
 * convention) so that rv64im.c can record every result. Assembled with -march=rv64im (no C extension).
 */
    .file "rv64im_ops.S"
    .option norvc
    .text

/* uint64_t rr_<op>(uint64_t a, uint64_t b): one register-register instruction. */
.macro RR op
    .globl rr_\op
    .type rr_\op, @function
rr_\op:
    \op a0, a0, a1
    ret
.endm

    RR add
    RR sub
    RR sll
    RR slt
    RR sltu
    RR xor
    RR srl
    RR sra
    RR or
    RR and
    RR addw
    RR subw
    RR sllw
    RR srlw
    RR sraw
    RR mul
    RR mulh
    RR mulhsu
    RR mulhu
    RR div
    RR divu
    RR rem
    RR remu
    RR mulw
    RR divw
    RR divuw
    RR remw
    RR remuw

/* uint64_t br_<op>(uint64_t a, uint64_t b): 1 if the branch is taken, else 0. */
.macro BR op
    .globl br_\op
    .type br_\op, @function
br_\op:
    \op a0, a1, 1f
    li a0, 0
    ret
1:  li a0, 1
    ret
.endm

    BR beq
    BR bne
    BR blt
    BR bge
    BR bltu
    BR bgeu

/* void ri_<op>(uint64_t a, uint64_t *out): the instruction with each of 8 immediates, results to out[0..8). */
.macro RI op
    .globl ri_\op
    .type ri_\op, @function
ri_\op:
    \op t0, a0, 0
    sd t0, 0(a1)
    \op t0, a0, 1
    sd t0, 8(a1)
    \op t0, a0, -1
    sd t0, 16(a1)
    \op t0, a0, 2047
    sd t0, 24(a1)
    \op t0, a0, -2048
    sd t0, 32(a1)
    \op t0, a0, 0x555
    sd t0, 40(a1)
    \op t0, a0, -0x556
    sd t0, 48(a1)
    \op t0, a0, 0x80
    sd t0, 56(a1)
    ret
.endm

    RI addi
    RI slti
    RI sltiu
    RI xori
    RI ori
    RI andi
    RI addiw

/* void sh_<op>(uint64_t a, uint64_t *out): 64-bit immediate shifts by 0, 1, 31, 32, 63. */
.macro SHIFT64 op
    .globl sh_\op
    .type sh_\op, @function
sh_\op:
    \op t0, a0, 0
    sd t0, 0(a1)
    \op t0, a0, 1
    sd t0, 8(a1)
    \op t0, a0, 31
    sd t0, 16(a1)
    \op t0, a0, 32
    sd t0, 24(a1)
    \op t0, a0, 63
    sd t0, 32(a1)
    ret
.endm

    SHIFT64 slli
    SHIFT64 srli
    SHIFT64 srai

/* void shw_<op>(uint64_t a, uint64_t *out): 32-bit immediate shifts by 0, 1, 15, 31. */
.macro SHIFT32 op
    .globl shw_\op
    .type shw_\op, @function
shw_\op:
    \op t0, a0, 0
    sd t0, 0(a1)
    \op t0, a0, 1
    sd t0, 8(a1)
    \op t0, a0, 15
    sd t0, 16(a1)
    \op t0, a0, 31
    sd t0, 24(a1)
    ret
.endm

    SHIFT32 slliw
    SHIFT32 srliw
    SHIFT32 sraiw

/* void ld_all(const uint8_t *p, uint64_t *out): lb lbu lh lhu lw lwu ld at p (offset 0), then at p via
 * offsets +5 and -3 from shifted bases, then with the extreme offsets 2047 and -2048: out[0..35). */
.macro LOADS base, off, o
    lb t0, \off(\base)
    sd t0, (\o + 0)(a1)
    lbu t0, \off(\base)
    sd t0, (\o + 8)(a1)
    lh t0, \off(\base)
    sd t0, (\o + 16)(a1)
    lhu t0, \off(\base)
    sd t0, (\o + 24)(a1)
    lw t0, \off(\base)
    sd t0, (\o + 32)(a1)
    lwu t0, \off(\base)
    sd t0, (\o + 40)(a1)
    ld t0, \off(\base)
    sd t0, (\o + 48)(a1)
.endm

    .globl ld_all
    .type ld_all, @function
ld_all:
    LOADS a0, 0, 0
    addi t1, a0, -5
    LOADS t1, 5, 56
    addi t1, a0, 3
    LOADS t1, -3, 112
    addi t1, a0, -2047
    LOADS t1, 2047, 168
    li t2, 2048
    add t1, a0, t2
    LOADS t1, -2048, 224
    ret

/* void st_<op>(uint8_t *p, uint64_t v): store v at p + 0 (via the offset -7 from p + 7). */
.macro STORE op
    .globl st_\op
    .type st_\op, @function
st_\op:
    addi t0, a0, 7
    \op a1, -7(t0)
    ret
.endm

    STORE sb
    STORE sh
    STORE sw
    STORE sd

/* void upper_all(uint64_t *out): lui with 6 immediates, auipc with 4 (raw values: addresses are fixed by the
 * ELF), then out[10] = auipc - (address of that auipc) for an immediate of 0x12345. */
    .globl upper_all
    .type upper_all, @function
upper_all:
    lui t0, 0
    sd t0, 0(a0)
    lui t0, 1
    sd t0, 8(a0)
    lui t0, 0x7ffff
    sd t0, 16(a0)
    lui t0, 0x80000
    sd t0, 24(a0)
    lui t0, 0xfffff
    sd t0, 32(a0)
    lui t0, 0x12345
    sd t0, 40(a0)
    auipc t0, 0
    sd t0, 48(a0)
    auipc t0, 1
    sd t0, 56(a0)
    auipc t0, 0x80000
    sd t0, 64(a0)
    auipc t0, 0xfffff
    sd t0, 72(a0)
1:  auipc t0, 0x12345
    lla t1, 1b
    sub t0, t0, t1
    sd t0, 80(a0)
    ret

/* void jump_all(uint64_t *out): link values of jal/jalr relative to their own address, the lowest target bit
 * cleared by jalr, jalr with rd == rs1, a negative jalr offset, a backward loop (out[0..8)). */
    .globl jump_all
    .type jump_all, @function
jump_all:
1:  jal t0, 2f
    li t0, -1                      /* skipped */
2:  lla t1, 1b
    sub t0, t0, t1                 /* 4 */
    sd t0, 0(a0)

    lla t1, 4f + 1                 /* odd target: jalr clears bit 0 */
3:  jalr t2, 0(t1)
    li t2, -1                      /* skipped */
4:  lla t1, 3b
    sub t2, t2, t1                 /* 4 */
    sd t2, 8(a0)

    lla t1, 6f
5:  jalr t1, 0(t1)                 /* rd == rs1: target uses the old value */
    li t1, -1                      /* skipped */
6:  lla t3, 5b
    sub t1, t1, t3                 /* 4 */
    sd t1, 16(a0)

    lla t1, 8f + 16
7:  jalr t2, -16(t1)               /* negative offset */
    li t2, -1                      /* skipped */
8:  lla t1, 7b
    sub t2, t2, t1
    sd t2, 24(a0)

    li t0, 0                       /* backward loop: sum 1..10 with bne */
    li t1, 10
9:  add t0, t0, t1
    addi t1, t1, -1
    bne t1, zero, 9b
    sd t0, 32(a0)

    li t0, 5                       /* backward blt/bgeu loop */
    li t1, 0
10: addi t1, t1, 3
    blt t1, t0, 10b
    sd t1, 40(a0)

    jal zero, 11f                  /* jal with rd = x0 */
    li t1, -1
11: sd t1, 48(a0)

    lla t1, 12f
    jalr zero, 0(t1)               /* jalr with rd = x0 */
    li t1, -1
12: lla t2, 12b
    sub t1, t1, t2                 /* 0 */
    sd t1, 56(a0)
    ret

/* void x0_all(uint64_t *out): writes to x0 are discarded; fence executes as a no-op (out[0..6)). */
    .globl x0_all
    .type x0_all, @function
x0_all:
    addi zero, zero, 5
    sd zero, 0(a0)
    lui zero, 0x12345
    sd zero, 8(a0)
    li t0, 77
    add zero, t0, t0
    mv t1, zero
    sd t1, 16(a0)
    ld zero, 0(a0)                 /* load into x0: the access happens, the result is discarded */
    sd zero, 24(a0)
    mul zero, t0, t0
    sd zero, 32(a0)
    fence
    fence rw, rw
    fence r, w
    sd t0, 40(a0)
    ret
