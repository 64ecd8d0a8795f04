/*
 * resp_out.h - reply encoding into a growable output buffer, in RESP2 or
 * RESP3 (chosen per buffer, switched by HELLO).
 *
 * Contract:
 *  - No I/O, no libuv, nothing from filter/. Not thread-safe.
 *  - The buffer owns its bytes; resp_out_take() hands them to the caller (who
 *    frees them with free()) and leaves the buffer empty, so the server can
 *    give them to one write request and keep encoding.
 *  - Errors are sticky: after an allocation failure every append is a no-op
 *    and resp_out_failed() is true; the caller then closes the connection.
 *  - In RESP2, RESP3-only types degrade as Redis does: map -> flat array of
 *    2n, set -> array, bool -> integer 0/1, null -> $-1 (null bulk), double
 *    -> bulk string, verbatim -> bulk string, big number -> bulk string.
 */
#ifndef RESP_OUT_H
#define RESP_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct resp_out {
    char *buf;
    size_t len;
    size_t cap;
    int proto; /* 2 or 3 */
    bool failed;
    /* Where the last error reply added (resp_add_error(),
     * resp_add_errorf()) starts in buf, or RESP_OUT_NO_ERROR. The caller
     * may reset it, for example before a command, to learn afterwards
     * whether the command's reply is an error. */
    size_t error_at;
} resp_out_t;

#define RESP_OUT_NO_ERROR SIZE_MAX

void resp_out_init(resp_out_t *o, int proto);
void resp_out_release(resp_out_t *o); /* frees the buffer */

/* Returns the encoded bytes (malloc'd, *len of them) and empties o; NULL with
 * *len 0 when there is nothing. */
char *resp_out_take(resp_out_t *o, size_t *len);
bool resp_out_failed(const resp_out_t *o);

/* Drops the first n (at most len) bytes, which the caller has written
 * straight from o->buf. The buffer is kept for the next replies, unless it
 * is left empty with more than RESP_OUT_KEEP bytes allocated: then it is
 * freed, so one large reply does not pin its memory to the connection. */
#define RESP_OUT_KEEP (64u * 1024)
void resp_out_consume(resp_out_t *o, size_t n);

void resp_add_simple(resp_out_t *o, const char *s); /* +s */
void resp_add_error(resp_out_t *o, const char *s);  /* -s (no prefix added) */
void resp_add_errorf(resp_out_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void resp_add_int(resp_out_t *o, int64_t v); /* :v */
void resp_add_bulk(resp_out_t *o, const void *p, size_t len);
void resp_add_cstr(resp_out_t *o, const char *s); /* bulk of strlen */
void resp_add_null(resp_out_t *o);                /* RESP3 _ ; RESP2 $-1 */
void resp_add_null_array(resp_out_t *o);          /* RESP3 _ ; RESP2 *-1 */
void resp_add_array(resp_out_t *o, size_t n);
void resp_add_map(resp_out_t *o, size_t npairs);
void resp_add_set(resp_out_t *o, size_t n);
void resp_add_bool(resp_out_t *o, bool b); /* RESP3 #t/#f ; RESP2 :1/:0 */
/* n resp_add_bool()s in one call: v[0] .. v[n-1]. */
void resp_add_bools(resp_out_t *o, const bool *v, size_t n);
void resp_add_double(resp_out_t *o, double d);
/* Verbatim string: RESP3 "=len\r\nfmt:..." with a 3-letter format such as
 * "txt"; RESP2 a plain bulk string. */
void resp_add_verbatim(resp_out_t *o, const char *fmt, const void *p,
                       size_t len);
/* Appends pre-encoded bytes as they are. */
void resp_add_raw(resp_out_t *o, const void *p, size_t len);

#endif /* RESP_OUT_H */
