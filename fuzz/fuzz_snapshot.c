/*
 * fuzz_snapshot.c - libFuzzer harness for the snapshot loader. The input is
 * parsed as a whole snapshot image with the checksum check off (otherwise
 * almost every input would stop there), under a small memory limit; every
 * filter that loads is queried and grown a little, then freed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cf.h"
#include "snapshot_int.h"

static int fuzz_on_key(void *ctx, int db, const void *key, size_t len,
                       cf_filter_t *f, int64_t when)
{
    (void)ctx;
    if (db < 0 || db >= (int)SNAP_MAX_DB || when < -1)
        abort();
    (void)cf_exists(f, key, len);
    (void)cf_count(f, key, len);
    /* growth capped as the daemon caps it (a header may declare a huge
     * capacity for a tiny table, and the next table follows it) */
    uint64_t room = 1 << 20;
    int rc;
    cf_add_many(f, 1, &key, &len, false, &room, &rc);
    (void)cf_del(f, key, len);
    cf_free(f);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_limits_t lim = {.max_bytes = 1 << 20};
    char err[256];

    (void)snap_parse(data, size, "fuzz", false, &lim, fuzz_on_key, NULL, err,
                     sizeof(err));
    /* With the check on, the same input must go no further than it did. */
    (void)snap_parse(data, size, "fuzz", true, &lim, fuzz_on_key, NULL, err,
                     sizeof(err));
    return 0;
}
