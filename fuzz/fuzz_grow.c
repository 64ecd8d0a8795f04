/* libFuzzer harness of the growable shape, two ways by the first byte:
 *
 *  even: an operation sequence on a tiny reserve (a growable pair when
 *        bit 1 of the first byte is set), checked against exact
 *        counts: an item added and not deleted is always found and counted
 *        at least as often; the filter dumped and loaded is byte-identical
 *        and answers the same. A failed check aborts.
 *  odd:  the rest is an untrusted serialised filter (its header checksum
 *        fixed, as fuzz_cf.c does, so the field checks are explored); when
 *        accepted it is queried and written to. Nothing may crash.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "cf_fixture.h"
#include "cf_items.h"

#define UNIVERSE 4096

static void check(bool ok)
{
    if (!ok)
        abort();
}

static uint8_t *dump(const cf_filter_t *f, size_t *n)
{
    size_t h = cf_header_len(f);
    uint64_t d = cf_data_len(f);
    uint8_t *buf = malloc(h + (size_t)d);
    if (buf == NULL)
        abort();
    cf_header_write(f, buf);
    for (uint64_t off = 0; off < d;) {
        const void *p;
        size_t got = cf_data_view(f, off, 333, &p);
        check(got > 0);
        memcpy(buf + h + off, p, got);
        off += got;
    }
    *n = h + (size_t)d;
    return buf;
}

static void ops(const uint8_t *data, size_t size)
{
    static uint8_t cnt[UNIVERSE];
    memset(cnt, 0, sizeof(cnt));
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = size > 1 ? 1 + data[1] % 32 : 1;
    p.seed = size > 2 ? data[2] : 0;
    p.growable = size > 0 && (data[0] & 2) ? CF_GROWABLE_PAIR : 1;
    cf_filter_t *f = NULL;
    if (cf_create(&p, &f) != 0)
        abort();
    for (size_t i = 3; i + 2 < size; i += 3) {
        uint32_t id =
            ((uint32_t)data[i + 1] | (uint32_t)data[i + 2] << 8) % UNIVERSE;
        uint64_t k = key_of(id);
        switch (data[i] % 4) {
        case 0:
        case 1:
            if (cnt[id] < 3) {
                int rc = cf_add(f, &k, sizeof(k));
                check(rc == 0 || rc == -EOVERFLOW);
                cnt[id] += rc == 0;
            }
            break;
        case 2:
            if (cnt[id] > 0) {
                check(cf_del(f, &k, sizeof(k)) == 1);
                cnt[id]--;
            }
            break;
        default:
            check(cnt[id] == 0 || cf_exists(f, &k, sizeof(k)));
            break;
        }
        check(cnt[id] == 0 || cf_count(f, &k, sizeof(k)) >= cnt[id]);
    }
    size_t n;
    uint8_t *buf = dump(f, &n);
    cf_filter_t *g = NULL;
    size_t used;
    check(cf_load_header(buf, n, NULL, &g, &used) == 0);
    check(cf_load_data(g, 0, buf + used, n - used) == 0);
    size_t n2;
    uint8_t *buf2 = dump(g, &n2);
    check(n == n2 && memcmp(buf, buf2, n) == 0);
    for (uint32_t id = 0; id < UNIVERSE; id++) {
        uint64_t k = key_of(id);
        if (cnt[id] > 0) {
            check(cf_exists(f, &k, sizeof(k)) && cf_exists(g, &k, sizeof(k)));
            check(cf_count(g, &k, sizeof(k)) >= cnt[id]);
        }
    }
    free(buf);
    free(buf2);
    cf_free(g);
    cf_free(f);
}

static void load(const uint8_t *data, size_t size)
{
    uint8_t *buf;
    cf_filter_t *f = fuzz_load_split(data, size, &buf);
    if (f != NULL) {
        uint64_t room = 16u << 20;
        fuzz_batched(f, buf, size, (size & 2) != 0, &room);
        for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
            (void)cf_exists(f, buf + i, 4);
            (void)cf_count(f, buf + i, 4);
            (void)cf_del(f, buf + i, 2);
            (void)cf_add(f, buf + i, 3);
        }
        cf_stats_t st;
        cf_stats(f, &st);
        size_t dn;
        uint8_t *d = dump(f, &dn);
        free(d);
        cf_free(f);
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        load(data + 1, size - 1);
    else
        ops(data, size);
    return 0;
}
