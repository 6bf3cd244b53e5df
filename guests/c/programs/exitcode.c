/* exitcode: writes "bye" to the public output and a line to the debug stream, then exits with code 42. */
#include "zkrv.h"

int main(void)
{
    zkrv_debug("exitcode: exiting with 42\n");
    zkrv_write_output("bye", 3);
    return 42;
}
