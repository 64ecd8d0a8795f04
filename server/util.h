/*
 * util.h - leaf helpers of the daemon: error-text formatting and a growable
 * text buffer. Nothing here knows any other module.
 */
#ifndef UTIL_H
#define UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Formats into err (cut at errlen, always NUL-terminated); NULL or 0 is
 * fine and writes nothing. */
void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A growable text buffer (INFO, CLIENT LIST). All zero is empty; failed is
 * sticky after an allocation failure; the owner frees p. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf_t;

void sb_printf(sbuf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* UTIL_H */
