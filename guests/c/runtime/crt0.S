/* zkrv guest entry point (C runtime).
 * The loader has already zeroed .bss and the heap (they are NOBITS in a PT_LOAD segment), and sp is set
 * (0x8000_0000 in zkrv, the process stack under qemu; argc/argv are ignored), so _start only sets gp and tp,
 * calls main(0, NULL) and exits with its return value.
 */
    .file "crt0.S"
    .section .text.init.enter, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      tp, __tls_base
    andi    sp, sp, -16
    li      a0, 0
    li      a1, 0
    call    main
    tail    _exit
    .size _start, . - _start
