/*
 * fuzz_aclfile.c - libFuzzer harness for the aclfile parser: the input is
 * an aclfile's text, parsed as ACL LOAD parses it (nothing is applied).
 * Every problem must be reported with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "acl_file.h"
#include "acl_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    server_t *s = acl_fixture();
    char err[4096];
    err[0] = '\0';
    if (acl_file_check(s, (const char *)data, size, err, sizeof(err)) != 0 &&
        err[0] == '\0')
        abort();
    return 0;
}
