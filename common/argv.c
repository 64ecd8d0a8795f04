/*
 * argv.c - see argv.h. Layout: the header, argc views, then each
 * argument's bytes and a NUL, in order.
 */
#include "argv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t argv_size(int argc, const arg_t *args)
{
    if (argc < 0 || (size_t)argc > (SIZE_MAX - sizeof(argv_t)) / sizeof(arg_t))
        return 0;
    size_t total = sizeof(argv_t) + (size_t)argc * sizeof(arg_t);
    for (int i = 0; i < argc; i++) {
        if (args[i].len >= SIZE_MAX - total)
            return 0;
        total += args[i].len + 1;
    }
    return total;
}

argv_t *argv_copy(int argc, const arg_t *args)
{
    size_t total = argv_size(argc, args);
    if (total == 0)
        return NULL;
    void *mem = malloc(total);
    return mem == NULL ? NULL : argv_place(mem, total, argc, args);
}

/* Copies n bytes as two overlapping fixed-size moves below 16 bytes (a
 * command's name and key, the common case), where a call of memcpy() costs
 * more than the copy. */
static inline void copy_bytes(char *dst, const char *src, size_t n)
{
    if (n >= 16) {
        memcpy(dst, src, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n > 0) {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

argv_t *argv_place(void *mem, size_t total, int argc, const arg_t *args)
{
    argv_t *a = mem;
    a->argc = argc;
    a->size = total;
    char *p = (char *)&a->v[argc];
    for (int i = 0; i < argc; i++) {
        copy_bytes(p, args[i].ptr, args[i].len);
        p[args[i].len] = '\0';
        a->v[i].ptr = p;
        a->v[i].len = args[i].len;
        p += args[i].len + 1;
    }
    return a;
}

void argv_free(argv_t *a)
{
    free(a);
}
