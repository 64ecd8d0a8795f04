/*
 * fuzz_restore.c - libFuzzer harness for RESTORE's payload parser. Each
 * input is parsed twice: as it is (almost every input stops at the
 * version and checksum, as it must), and with its trailer made right, so
 * that the filter encoding behind it is explored. A filter that loads is
 * queried, grown a little under a cap, dumped again and copied; the new
 * payload must parse too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cf.h"
#include "dump.h"

static void exercise(cf_filter_t *f)
{
    static const char key[] = "fuzz";
    const void *k = key;
    size_t len = sizeof(key) - 1;
    cf_limits_t lim = {.max_bytes = 1 << 20};
    (void)cf_exists(f, key, len);
    (void)cf_count(f, key, len);
    /* growth capped as the daemon caps it */
    uint64_t room = 1 << 20;
    int rc;
    cf_add_many(f, 1, &k, &len, false, &room, &rc);
    (void)cf_del(f, key, len);

    uint8_t *p;
    size_t plen;
    cf_filter_t *g;
    if (dump_encode(f, &p, &plen) == 0) {
        if (dump_decode(p, plen, &lim, &g) == 0)
            cf_free(g);
        else if (cf_size_bytes(f) < (1 << 19))
            abort(); /* our own payload of a small filter must load */
        free(p);
    }
    if (dump_clone(f, &lim, &g) == 0)
        cf_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_limits_t lim = {.max_bytes = 1 << 20};
    cf_filter_t *f;

    if (dump_decode(data, size, &lim, &f) == 0) {
        exercise(f);
        cf_free(f);
    }
    if (size < DUMP_OVERHEAD)
        return 0;
    uint8_t *p = malloc(size);
    if (p == NULL)
        return 0;
    memcpy(p, data, size);
    p[size - 10] = DUMP_VERSION & 0xFF;
    p[size - 9] = DUMP_VERSION >> 8;
    uint64_t h = XXH64(p, size - 8, 0);
    for (int i = 0; i < 8; i++)
        p[size - 8 + i] = (uint8_t)(h >> (8 * i));
    if (dump_decode(p, size, &lim, &f) == 0) {
        exercise(f);
        cf_free(f);
    }
    free(p);
    return 0;
}
