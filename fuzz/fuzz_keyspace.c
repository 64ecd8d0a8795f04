/*
 * fuzz_keyspace.c - libFuzzer harness for the keyspace's hash table: the
 * input is a sequence of operations (tests/unit/ks_model.h) on two
 * databases, with resizes forced, paused and moved on between them; every
 * reply, walk, SCAN and RANDOMKEY pick must agree with the exact model,
 * and the memory accounting must come back to an empty table's.
 */
#include <stddef.h>
#include <stdint.h>

#include "ks_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an operation takes a few bytes: long inputs only cost time */
    ksm_run(data, size < 65536 ? size : 65536);
    return 0;
}
