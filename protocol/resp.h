/*
 * resp.h - request parsing: RESP multibulk frames (walked in place when they
 * arrive whole, else through hiredis's reader with our own object
 * functions) and inline commands, into argument vectors.
 *
 * Contract:
 *  - No I/O, no libuv, nothing from filter/. One parser per connection; not
 *    thread-safe.
 *  - The parser copies what it is fed; the caller's buffer may be reused at
 *    once after resp_parser_feed() returns.
 *  - A command returned by resp_parser_next() is owned by the parser and stays
 *    valid until the next call of resp_parser_next(), resp_parser_feed() or
 *    resp_parser_free(); argument bytes are NUL-terminated (the NUL is not
 *    counted in len) and binary-safe. They are not copied out of the
 *    parser's buffers, so they must not be kept past that point.
 *  - Errors are sticky: after -EPROTO every later call fails the same way and
 *    resp_parser_error() gives Redis's wording, e.g.
 *    "Protocol error: invalid multibulk length".
 */
#ifndef RESP_H
#define RESP_H

#include <stddef.h>

#include "arg.h"

typedef struct resp_parser resp_parser_t; /* opaque */

/* Each argument is an arg_t view into the parser's buffers whose bytes are
 * followed by a NUL (not counted in len). */
typedef struct resp_cmd {
    int argc; /* >= 1 */
    arg_t *argv;
} resp_cmd_t;

typedef struct resp_limits {
    size_t max_bulk_len;   /* proto-max-bulk-len; default 512 MB */
    size_t max_query_buf;  /* client-query-buffer-limit; default 1 GB */
    size_t max_args;       /* largest *N accepted; default 1024*1024 */
    size_t max_inline_len; /* inline and header line cap; default 64 KB */
} resp_limits_t;

/* Fills *l with Redis's defaults. */
void resp_limits_default(resp_limits_t *l);

/* Returns a new parser (the caller frees it with resp_parser_free()), or NULL
 * when out of memory. lim is copied; NULL means the defaults. */
resp_parser_t *resp_parser_new(const resp_limits_t *lim);
void resp_parser_free(resp_parser_t *p); /* NULL is fine */

/* Changes the limits of a live parser (CONFIG SET, authentication state). */
void resp_parser_set_limits(resp_parser_t *p, const resp_limits_t *lim);

/* Appends len bytes of input. 0, or -EPROTO when the bytes buffered but not
 * yet parsed would pass max_query_buf, or a declared bulk or multibulk length
 * is over its limit (checked before the payload is buffered), or -ENOMEM.
 * An error found behind a complete command is held back: 0 is returned, and
 * resp_parser_next() gives the commands before the error, then -EPROTO. */
int resp_parser_feed(resp_parser_t *p, const char *buf, size_t len);

/* Parses the next complete command: 1 and *out set when there is one, 0 when
 * more input is needed, -EPROTO on a protocol error, -ENOMEM when out of
 * memory. Empty frames (*0, *-1, blank inline lines) are skipped silently. */
int resp_parser_next(resp_parser_t *p, resp_cmd_t **out);

/* Why the parser failed: each reason has one text, Redis's
 * (resp_parser_error()), except RESP_PERR_BULK_START's, which names the
 * byte found. */
typedef enum resp_perr {
    RESP_PERR_NONE = 0,  /* no error */
    RESP_PERR_NOMEM,     /* out of memory (-ENOMEM); the rest are -EPROTO */
    RESP_PERR_MBULK,     /* a *N the parser refuses: malformed or too many */
    RESP_PERR_BULK,      /* a $N the parser refuses: malformed or too long */
    RESP_PERR_INLINE,    /* an inline command over max_inline_len */
    RESP_PERR_QUOTES,    /* an inline command with unbalanced quotes */
    RESP_PERR_MBULK_BIG, /* a *N line over max_inline_len */
    RESP_PERR_BULK_BIG,  /* a $N line over max_inline_len */
    RESP_PERR_QUERYBUF,  /* unparsed input over max_query_buf */
    RESP_PERR_BULK_START /* something else than '$' where a bulk starts */
} resp_perr_t;

/* The error message after a failure ("Protocol error: ..."), or NULL. */
const char *resp_parser_error(const resp_parser_t *p);
/* The reason of the failure, or RESP_PERR_NONE while there is none. */
resp_perr_t resp_parser_code(const resp_parser_t *p);

/* A look at a command that is buffered but not yet returned: its first
 * three arguments (fewer when argc is smaller), pointing into the parser's
 * buffer, NOT NUL-terminated, valid until the next call of any parser
 * function. */
typedef struct resp_peek {
    int argc;
    arg_t argv[3];
} resp_peek_t;

/* Describes up to max (at most RESP_PEEK_MAX) complete multibulk commands
 * buffered ahead, without consuming or checking them beyond their framing,
 * in an array of the parser's (*out) valid until the next call of any
 * parser function. Right after a feed, the first complete frame is already
 * scanned and is not described (the look starts after it); after
 * resp_parser_next() has returned a command, the look starts with the next
 * one. Stops at the first frame that is incomplete or unusual (inline,
 * oversized, malformed) or has more than max_argc elements (so that the
 * look does not walk the many arguments of a bulk command it has no use
 * for). Returns how many it described. Meant for prefetching what a
 * pipeline will touch before running it; resp_parser_next() then takes the
 * frames of up to three elements it described without walking them
 * again. */
#define RESP_PEEK_MAX 32
size_t resp_parser_peek(resp_parser_t *p, const resp_peek_t **out, size_t max,
                        size_t max_argc);

/* Bytes fed but not yet consumed by a returned command (query buffer). */
size_t resp_parser_pending(const resp_parser_t *p);

/* Called by resp_splitargs() for each word: its bytes (NUL-terminated, may
 * hold NULs itself from \x00) and length. A negative return stops the
 * split and is returned. */
typedef int resp_word_fn(void *ctx, char *word, size_t len);

/* Splits s[0..len) into words as Redis's sdssplitargs() does: words are
 * separated by white space; "..." takes the escapes \n \r \t \b \a \xHH
 * and \c (any other character as itself), '...' takes \' only; a closing
 * quote must be followed by white space or the end; the line ends at its
 * first NUL. The words are written one after another into out, which has
 * room for len + 1 bytes, each followed by a NUL, and handed to fn. Returns
 * 0, -EPROTO on unbalanced quotes, or fn's negative return. */
int resp_splitargs(const char *s, size_t len, char *out, resp_word_fn *fn,
                   void *ctx);

#endif /* RESP_H */
