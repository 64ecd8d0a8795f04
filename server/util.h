/*
 * util.h - leaf helpers of the daemon: error-text formatting and a growable
 * text buffer, byte counts for people. Nothing here knows any other module.
 */
#ifndef UTIL_H
#define UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* n bytes as Redis's INFO *_human fields write them: "512B", "1.50K",
 * "2.00M", ... up to "P" (cut at len, NUL-terminated). */
void human_bytes(char *buf, size_t len, uint64_t n);

#endif /* UTIL_H */
