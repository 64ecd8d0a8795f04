/*
 * fuzz_load.c - libFuzzer harness for cuckood-load's parsers. The first
 * byte picks what the rest is:
 *   0      an argv (NUL-separated words) for load_args_parse: it parses or
 *          says why, and what it parses is within the documented bounds;
 *   1..4   an input in the format (byte - 1), with the second byte a
 *          column (0: a CSV header named "id") and the third a split
 *          point: fed whole and fed the way the loader reads it (a prefix,
 *          then more on LOAD_MORE), the items, skips and error are the
 *          same, every item is non-empty and at most LOAD_MAX_RECORD long.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load_args.h"
#include "load_input.h"

static void args(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    char *argv[64];
    int argc = 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    argv[argc++] = "cuckood-load";
    for (size_t i = 0; i <= size && argc < 63;) {
        argv[argc++] = copy + i;
        i += strlen(copy + i) + 1;
    }
    argv[argc] = NULL;
    struct load_opts o;
    char err[200];
    enum load_args_result r = load_args_parse(argc, argv, &o, err, sizeof(err));
    if (r == LOAD_ARGS_ERROR && err[0] == '\0')
        abort();
    if (r == LOAD_ARGS_OK &&
        (o.key_name == NULL || o.batch < 1 || o.batch > LOAD_MAX_BATCH ||
         o.window < 1 || o.window > LOAD_MAX_WINDOW ||
         o.verify > LOAD_MAX_VERIFY || o.port < 1 || o.port > 65535))
        abort();
    free(copy);
}

/* A digest of what the parser gave: items (length and bytes) and skips,
 * with the line each started on; then the error and its line. */
struct digest {
    uint64_t h;
    size_t items, skips;
};

static void mix(struct digest *d, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ b[i]) * 0x100000001b3ull;
}

static void run(enum load_format f, unsigned column, const char *buf,
                size_t size, size_t first, struct digest *d)
{
    struct load_input *in =
        load_input_new(f, column, column == 0 ? "id" : NULL);
    size_t off = 0, len = first < size ? first : size;
    memset(d, 0, sizeof(*d));
    d->h = 14695981039346656037ull;
    for (;;) {
        size_t used;
        const char *item;
        size_t ilen;
        int eof = len == size;
        enum load_step s =
            load_input_next(in, buf + off, len - off, eof, &used, &item, &ilen);
        if (s == LOAD_MORE) {
            if (eof || used != 0)
                abort();
            len = len + 1 + (len - off) * 2;
            if (len > size)
                len = size;
            continue;
        }
        if (s == LOAD_END)
            break;
        uint64_t line = load_input_line(in);
        mix(d, &line, sizeof(line));
        if (s == LOAD_ERROR) {
            const char *e = load_input_error(in);
            if (e[0] == '\0')
                abort();
            mix(d, e, strlen(e));
            break;
        }
        if (used == 0 || used > len - off)
            abort();
        off += used;
        if (s == LOAD_ITEM) {
            if (ilen == 0 || ilen > LOAD_MAX_RECORD)
                abort();
            mix(d, &ilen, sizeof(ilen));
            mix(d, item, ilen);
            d->items++;
        } else {
            d->skips++;
        }
        mix(d, &s, sizeof(s));
    }
    load_input_free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] % 5 == 0) {
        args(data + 1, size - 1);
        return 0;
    }
    if (size < 3)
        return 0;
    enum load_format f = (enum load_format)(data[0] % 5 - 1);
    unsigned column = data[1] % 4;
    if (column == 0 && f != LOAD_CSV)
        column = 1;
    const char *buf = (const char *)data + 3;
    size_t n = size - 3;
    struct digest whole, split;
    run(f, column, buf, n, n, &whole);
    run(f, column, buf, n, data[2] % (n + 1), &split);
    if (whole.h != split.h || whole.items != split.items ||
        whole.skips != split.skips)
        abort();
    return 0;
}
