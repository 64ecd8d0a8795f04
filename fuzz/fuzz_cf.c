/* libFuzzer harness: an untrusted filter encoding (header + data) is loaded
 * and, when accepted, queried and written to. Nothing may crash.
 *
 * A header carries an XXH3 checksum that random bytes almost never match;
 * a hostile client computes it. So the harness fixes the checksum of the
 * header length the input claims, and the field checks behind it are what
 * the fuzzer explores. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "cf_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size + 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    size_t used, rest;
    cf_filter_t *f = fuzz_load_header(buf, size, &used, &rest);
    if (f != NULL) {
        (void)cf_load_data(f, 0, buf + used, rest);
        /* the batched paths too (one straight-line probe per shape) */
        uint64_t room = 16u << 20;
        fuzz_batched(f, buf, size, (size & 1) != 0, &room);
        for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
            const void *k = buf + i;
            size_t kl = 4;
            int r1;
            (void)cf_exists(f, buf + i, 4);
            (void)cf_count(f, buf + i, 4);
            cf_add_many(f, 1, &k, &kl, false, &room, &r1);
            (void)cf_del(f, buf + i, 2);
        }
        cf_free(f);
    }
    free(buf);
    return 0;
}
