/* stdio and abort for zkrv C guests (picolibc's tinystdio; docs/abi.md "C: printf, assert, abort").
 *
 * stdout writes to fd 1, the public output (proven), stderr to fd 2, the debug text (not proven), one
 * `write` per character, as the ABI's write does; stdin reads fd 0, the private input. abort() (and so a
 * failed assert(), after its message on stderr) exits with code 134 (128 + SIGABRT), as a shell reports
 * a process killed by SIGABRT. */
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#include "zkrv.h"

static int zkrv_put_fd1(char c, FILE *f)
{
    (void)f;
    return write(1, &c, 1) == 1 ? (unsigned char)c : EOF;
}

static int zkrv_put_fd2(char c, FILE *f)
{
    (void)f;
    return write(2, &c, 1) == 1 ? (unsigned char)c : EOF;
}

static int zkrv_get_fd0(FILE *f)
{
    (void)f;
    unsigned char c;
    return read(0, &c, 1) == 1 ? c : EOF;
}

static FILE zkrv_stdin = FDEV_SETUP_STREAM(NULL, zkrv_get_fd0, NULL, _FDEV_SETUP_READ);
static FILE zkrv_stdout = FDEV_SETUP_STREAM(zkrv_put_fd1, NULL, NULL, _FDEV_SETUP_WRITE);
static FILE zkrv_stderr = FDEV_SETUP_STREAM(zkrv_put_fd2, NULL, NULL, _FDEV_SETUP_WRITE);

FILE *const stdin = &zkrv_stdin;
FILE *const stdout = &zkrv_stdout;
FILE *const stderr = &zkrv_stderr;

/* One process: abort() is raise(SIGABRT) = kill(getpid(), SIGABRT), which ends the run. */
pid_t getpid(void)
{
    return 1;
}

int kill(pid_t pid, int sig)
{
    (void)pid;
    _exit(128 + sig);
}
