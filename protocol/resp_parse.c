/*
 * resp_parse.c - request parsing over hiredis's reader.
 *
 * hiredis 0.14.1 buffers without limit, accepts nested and non-bulk
 * elements, parses lengths leniently and compacts its buffer with a memmove
 * of the unread tail on every call that has consumed 1 KB. So the parser
 * keeps its own input buffer and runs a small incremental scanner over it
 * that validates one frame's headers as the bytes arrive (each byte is
 * looked at once, payloads are skipped by length). Only validated bytes of
 * the current multibulk frame are handed to the reader, and only once the
 * frame is complete is redisReaderGetReply() called: it then consumes
 * everything it holds, so its compaction never moves anything, and our
 * object functions can size the argv array up front from the count the
 * scanner saw, and leave the arguments where the reader holds them. Inline
 * lines never reach the reader; their words go to the argument arena.
 *
 * A frame that arrives whole (the usual case: a pipeline's frames mostly
 * do) is checked in one walk over its headers and never goes through the
 * reader at all: its arguments point into our own buffer. Copying it into
 * the reader and parsing it a second time there cost twice the rest of the
 * parse. Frames cut across reads still take the reader.
 *
 * hiredis 0.14 and 1.x declare the object functions with different types;
 * CMake passes the installed one's major version as CUCKOOD_HIREDIS_MAJOR.
 */
#include "resp.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h> /* HIREDIS_MAJOR */
#include <hiredis/read.h>

#if !defined(CUCKOOD_HIREDIS_MAJOR)
#error "CUCKOOD_HIREDIS_MAJOR (hiredis's major version) is set by CMake"
#elif CUCKOOD_HIREDIS_MAJOR != HIREDIS_MAJOR
#error "hiredis's headers are not those of the version CMake found"
#elif CUCKOOD_HIREDIS_MAJOR != 0 && CUCKOOD_HIREDIS_MAJOR != 1
#error "cuckood builds with hiredis 0.14 or 1.x"
#endif

/* Redis's wording of each error (RESP_PERR_BULK_START's names the byte
 * found: fail_byte()). */
static const char *const perr_text[] = {
    [RESP_PERR_NOMEM] = "out of memory",
    [RESP_PERR_MBULK] = "Protocol error: invalid multibulk length",
    [RESP_PERR_BULK] = "Protocol error: invalid bulk length",
    [RESP_PERR_INLINE] = "Protocol error: too big inline request",
    [RESP_PERR_QUOTES] = "Protocol error: unbalanced quotes in request",
    [RESP_PERR_MBULK_BIG] = "Protocol error: too big mbulk count string",
    [RESP_PERR_BULK_BIG] = "Protocol error: too big bulk count string",
    [RESP_PERR_QUERYBUF] = "Protocol error: query buffer limit exceeded",
};

/* Buffers bigger than this are released when a smaller command follows. */
#define RESP_KEEP_BYTES (256u * 1024u)
#define RESP_KEEP_ARGS 4096u

/* Longest number line string2ll can accept: "-9223372036854775808". */
#define RESP_NUM_MAX 20
/* Where a frame described by resp_parser_peek() lies: ibuf[start, end). */
struct pk_span {
    size_t start, end;
};

enum scan_state {
    ST_START,       /* at a command boundary */
    ST_MB_LINE,     /* in "*N\r\n", after the '*' */
    ST_BULK_START,  /* expecting the '$' of the next element */
    ST_BULK_LINE,   /* in "$N\r\n", after the '$' */
    ST_BULK_DATA,   /* skipping a payload and its CRLF */
    ST_INLINE,      /* in an inline line */
    ST_DONE_MB,     /* a complete multibulk frame is in the reader */
    ST_DONE_WHOLE,  /* a complete ordinary frame is in ibuf[ihead, spos) */
    ST_DONE_INLINE, /* a complete inline line is in ibuf */
};

struct resp_parser {
    resp_limits_t lim;
    redisReader *rd;

    /* Input not yet handed on: ibuf[ihead, ilen); scanned up to spos. */
    char *ibuf;
    size_t ihead, ilen, icap, spos;
    size_t inflight; /* bytes of the current frame already in the reader */

    /* Scanner state for the current frame. */
    enum scan_state st;
    size_t nargs;    /* declared element count */
    size_t argi;     /* elements whose header has been seen */
    size_t payload;  /* sum of len + 1 over the elements */
    uint64_t remain; /* payload bytes + CRLF left to skip */
    size_t linelen;  /* bytes seen on the current line */
    bool cr;         /* the last byte of the line was '\r' */
    char num[RESP_NUM_MAX + 1];

    /* What the last resp_parser_peek() described (up to RESP_PEEK_MAX
     * frames) and where they lie. The first pk_n have at most three
     * elements, so their description is the whole command:
     * resp_parser_next() takes them from pk_i on without walking them
     * again, as pkcmd. Allocated at the first look; forgotten at every
     * feed (which may move the buffer) and change of limits. */
    resp_peek_t *pk;
    struct pk_span *pk_at;
    size_t pk_i, pk_n;
    resp_cmd_t pkcmd;

    /* The command handed out by resp_parser_next(). */
    resp_cmd_t cmd;
    size_t argcap;
    char *arena;
    size_t arenacap, arenaused;

    int err;          /* 0, -EPROTO or -ENOMEM; sticky */
    resp_perr_t code; /* why, with err */
    char errmsg[128];
};

void resp_limits_default(resp_limits_t *l)
{
    l->max_bulk_len = 512ull * 1024 * 1024;
    l->max_query_buf = 1024ull * 1024 * 1024;
    l->max_args = 1024 * 1024;
    l->max_inline_len = 64 * 1024;
}

static void set_limits(resp_parser_t *p, const resp_limits_t *lim)
{
    if (lim != NULL)
        p->lim = *lim;
    else
        resp_limits_default(&p->lim);
    /* A command's argc is an int (and hiredis 0.14's createArray takes
     * one). */
    if (p->lim.max_args > INT_MAX)
        p->lim.max_args = INT_MAX;
    if (p->rd == NULL)
        return;
        /* The scanner checks every length before the reader sees a byte; the
         * reader's own element bound says the same. Its maxbuf (the spare
         * buffer it keeps between commands) stays at hiredis's 16 KB, below
         * what the parser's own buffers keep (RESP_KEEP_BYTES). */
#if CUCKOOD_HIREDIS_MAJOR >= 1
    /* 0 would mean no limit; with max_args 0 the scanner lets none by. */
    p->rd->maxelements = p->lim.max_args > 0 ? (long long)p->lim.max_args : 1;
#endif
}

/* Records the first error (sticky) with its text; returns the errno. */
static int fail_msg(resp_parser_t *p, resp_perr_t code, const char *msg)
{
    if (p->err == 0) {
        p->err = code == RESP_PERR_NOMEM ? -ENOMEM : -EPROTO;
        p->code = code;
        snprintf(p->errmsg, sizeof(p->errmsg), "%s", msg);
    }
    return p->err;
}

static int fail(resp_parser_t *p, resp_perr_t code)
{
    return fail_msg(p, code, perr_text[code]);
}

/* ---- object functions for the reader ---------------------------------- */

/* The scanner has already checked the frame: one flat array of bulk
 * strings, whose sizes were reserved in argv and arena before the reader
 * runs. Nothing here allocates. */
static void *array_of(const redisReadTask *t, size_t n)
{
    resp_parser_t *p = t->privdata;

    if (p == NULL || t->parent != NULL || n > p->argcap || n > INT_MAX)
        return NULL;
    p->cmd.argc = (int)n;
    return &p->cmd;
}

#if CUCKOOD_HIREDIS_MAJOR >= 1
static void *obj_array(const redisReadTask *t, size_t n)
{
    return array_of(t, n);
}
#else
static void *obj_array(const redisReadTask *t, int n)
{
    return n < 0 ? NULL : array_of(t, (size_t)n);
}
#endif

/* Arguments are not copied: each points into the reader's own buffer,
 * where the frame stays put until the reader is fed again (it is fed only
 * between commands). The byte after a payload is the '\r' of its CRLF,
 * which the reader has already stepped over by the time it calls us (it
 * never looks back, and when it later discards consumed input it only
 * writes the buffer's first byte, the '*' of a frame): it becomes the
 * argument's terminating NUL. */
static void *obj_string(const redisReadTask *t, char *s, size_t len)
{
    resp_parser_t *p = t->privdata;
    arg_t *a;

    if (p == NULL || t->parent == NULL || t->idx < 0 || t->idx >= p->cmd.argc)
        return NULL;
    a = &p->cmd.argv[t->idx];
    a->ptr = s;
    a->len = len;
    s[len] = '\0';
    return a;
}

static void *obj_integer(const redisReadTask *t, long long v)
{
    return NULL; /* never reached: the scanner accepts bulk elements only */
}

static void *obj_nil(const redisReadTask *t)
{
    return NULL; /* never reached: "*-1" frames are skipped by the scanner */
}

#if CUCKOOD_HIREDIS_MAJOR >= 1
/* RESP3 types: never reached either (the reader takes NULL as an error). */
static void *obj_double(const redisReadTask *t, double d, char *s, size_t len)
{
    return NULL;
}

static void *obj_bool(const redisReadTask *t, int b)
{
    return NULL;
}
#endif

/* Objects live in the parser; on error the reader hands back a partly
 * built root (or NULL), and there is nothing to free. */
static void obj_free(void *obj)
{
}

static redisReplyObjectFunctions obj_fns = {
    .createString = obj_string,
    .createArray = obj_array,
    .createInteger = obj_integer,
    .createNil = obj_nil,
#if CUCKOOD_HIREDIS_MAJOR >= 1
    .createDouble = obj_double,
    .createBool = obj_bool,
#endif
    .freeObject = obj_free,
};

/* ---- life cycle ----------------------------------------------------- */

resp_parser_t *resp_parser_new(const resp_limits_t *lim)
{
    resp_parser_t *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->rd = redisReaderCreateWithFunctions(&obj_fns);
    if (p->rd == NULL) {
        free(p);
        return NULL;
    }
    set_limits(p, lim);
    /* redisReaderSetPrivdata() casts the assignment to int. */
    p->rd->privdata = p;
    p->st = ST_START;
    return p;
}

void resp_parser_free(resp_parser_t *p)
{
    if (p == NULL)
        return;
    redisReaderFree(p->rd);
    free(p->ibuf);
    free(p->cmd.argv);
    free(p->arena);
    free(p->pk);
    free(p->pk_at);
    free(p);
}

void resp_parser_set_limits(resp_parser_t *p, const resp_limits_t *lim)
{
    set_limits(p, lim);
    p->pk_n = 0; /* walked under the old limits */
}

const char *resp_parser_error(const resp_parser_t *p)
{
    return p->err != 0 ? p->errmsg : NULL;
}

resp_perr_t resp_parser_code(const resp_parser_t *p)
{
    return p->err != 0 ? p->code : RESP_PERR_NONE;
}

size_t resp_parser_pending(const resp_parser_t *p)
{
    return p->ilen - p->ihead + p->inflight;
}

/* ---- scanner -------------------------------------------------------- */

/* Redis's string2ll: optional '-', no '+', no leading zeros, no overflow. */
static bool parse_ll(const char *s, size_t len, long long *out)
{
    unsigned long long v = 0, lim;
    bool neg = false;
    size_t i = 0;

    if (len == 0 || len > RESP_NUM_MAX)
        return false;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return true;
    }
    if (s[0] == '-') {
        neg = true;
        i = 1;
    }
    if (i >= len || s[i] < '1' || s[i] > '9')
        return false;
    lim =
        neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
    for (; i < len; i++) {
        unsigned d;

        if (s[i] < '0' || s[i] > '9')
            return false;
        d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? (long long)(0 - v) : (long long)v;
    return true;
}

/* Feeds one byte of a "*N" or "$N" line. Returns 1 at the end of the line,
 * 0 when more is needed, or an error once the line is too long. */
static int line_byte(resp_parser_t *p, char c, resp_perr_t toobig)
{
    if (p->cr && c == '\n') {
        p->linelen--; /* the '\r' was the terminator */
        return 1;
    }
    if (p->linelen < sizeof(p->num))
        p->num[p->linelen] = c;
    p->linelen++;
    p->cr = c == '\r';
    if (p->linelen - (p->cr ? 1 : 0) > p->lim.max_inline_len)
        return fail(p, toobig);
    return 0;
}

static void line_reset(resp_parser_t *p)
{
    p->linelen = 0;
    p->cr = false;
}

/* Hands the scanned bytes of the current multibulk frame to the reader. */
static int forward(resp_parser_t *p)
{
    size_t n = p->spos - p->ihead;

    if (n == 0)
        return 0;
    if (redisReaderFeed(p->rd, p->ibuf + p->ihead, n) != REDIS_OK)
        return fail(p, RESP_PERR_NOMEM);
    p->ihead += n;
    p->inflight += n;
    return 0;
}

/* Drops the bytes of a frame that produced no command. */
static void skip_frame(resp_parser_t *p)
{
    p->ihead = p->spos;
    p->st = ST_START;
}

static int mb_header_done(resp_parser_t *p)
{
    long long n;

    if (!parse_ll(p->num, p->linelen, &n) || n > (long long)p->lim.max_args)
        return fail(p, RESP_PERR_MBULK);
    if (n <= 0) {
        skip_frame(p); /* "*0" and "*-1" are no commands */
        return 0;
    }
    p->nargs = (size_t)n;
    p->argi = 0;
    p->payload = 0;
    p->st = ST_BULK_START;
    return 0;
}

static int bulk_header_done(resp_parser_t *p)
{
    long long n;

    if (!parse_ll(p->num, p->linelen, &n) || n < 0 ||
        (unsigned long long)n > p->lim.max_bulk_len)
        return fail(p, RESP_PERR_BULK);
    p->payload += (size_t)n + 1;
    p->remain = (uint64_t)n + 2;
    p->argi++;
    p->st = ST_BULK_DATA;
    return 0;
}

/* Reads "digits\r\n" at *q as a length: no sign, no leading zero (except
 * "0" itself), at most 18 digits. false, with *q unchanged, otherwise. */
static inline bool fast_num(const char **q, const char *end, uint64_t *out)
{
    const char *s = *q;
    uint64_t v = 0;
    int nd = 0;

    /* Most lengths have one or two digits: "d\r\n" or "dd\r\n" (no
     * leading zero) in one go. Anything else takes the general loop. */
    if (end - s >= 4) {
        unsigned d0 = (unsigned)(unsigned char)s[0] - '0';
        unsigned d1 = (unsigned)(unsigned char)s[1] - '0';
        if (d0 <= 9 && s[1] == '\r' && s[2] == '\n') {
            *q = s + 3;
            *out = d0;
            return true;
        }
        if (d0 - 1 <= 8 && d1 <= 9 && s[2] == '\r' && s[3] == '\n') {
            *q = s + 4;
            *out = d0 * 10 + d1;
            return true;
        }
    }
    while (s < end && *s >= '0' && *s <= '9' && nd < 19) {
        v = v * 10 + (uint64_t)(*s - '0');
        s++;
        nd++;
    }
    if (nd == 0 || nd > 18 || (nd > 1 && (*q)[0] == '0') || end - s < 2 ||
        s[0] != '\r' || s[1] != '\n')
        return false;
    *q = s + 2;
    *out = v;
    return true;
}

/* Walks a whole, ordinary multibulk frame starting at q (its '*') within
 * [q, end): returns where the frame ends, with its element count in *n and
 * the sum of len + 1 over its elements in *payload, and its first three
 * elements described in *pk when pk is not NULL. NULL when the frame is
 * incomplete or anything in it is unusual (the byte-wise scan then decides
 * what it is). */
static const char *frame_walk(const resp_parser_t *p, const char *q,
                              const char *end, uint64_t *n, size_t *payload,
                              resp_peek_t *pk, uint64_t max_n)
{
    uint64_t len;

    q++;
    if (!fast_num(&q, end, n) || *n == 0 || *n > p->lim.max_args || *n > max_n)
        return NULL;
    *payload = 0;
    if (pk != NULL)
        pk->argc = *n > INT_MAX ? INT_MAX : (int)*n;
    for (uint64_t i = 0; i < *n; i++) {
        if (q >= end || *q != '$')
            return NULL;
        q++;
        if (!fast_num(&q, end, &len) || len > p->lim.max_bulk_len ||
            (uint64_t)(end - q) < len + 2)
            return NULL;
        if (pk != NULL && i < 3) {
            pk->argv[i].ptr = (char *)q;
            pk->argv[i].len = (size_t)len;
        }
        q += len + 2;
        *payload += (size_t)len + 1;
    }
    return q;
}

/* The common case in one pass: a whole, ordinary multibulk frame already in
 * the buffer at spos (its '*'). It stays there, never handed to the reader:
 * take_whole() points the arguments at it. false, with nothing changed,
 * sends the frame down the byte-wise path, which reaches the same result
 * through the reader and reports the errors. */
static bool frame_fast(resp_parser_t *p)
{
    uint64_t n;
    size_t payload;
    const char *q = frame_walk(p, p->ibuf + p->spos, p->ibuf + p->ilen, &n,
                               &payload, NULL, UINT64_MAX);

    if (q == NULL)
        return false;
    p->nargs = p->argi = (size_t)n;
    p->payload = payload;
    p->remain = 0;
    p->spos = (size_t)(q - p->ibuf);
    p->st = ST_DONE_WHOLE;
    return true;
}

size_t resp_parser_peek(resp_parser_t *p, const resp_peek_t **out, size_t max,
                        size_t max_argc)
{
    p->pk_i = p->pk_n = 0;
    *out = NULL;
    /* At a frame boundary, or just after a complete frame (feeding scans
     * ahead to check limits): spos is where the next frame starts. */
    if (p->err != 0 || (p->st != ST_START && p->st != ST_DONE_MB &&
                        p->st != ST_DONE_WHOLE && p->st != ST_DONE_INLINE))
        return 0;
    if (p->pk == NULL) {
        p->pk = malloc(RESP_PEEK_MAX * sizeof(*p->pk));
        p->pk_at = malloc(RESP_PEEK_MAX * sizeof(*p->pk_at));
        if (p->pk == NULL || p->pk_at == NULL) {
            free(p->pk);
            free(p->pk_at);
            p->pk = NULL;
            p->pk_at = NULL;
            return 0; /* no look: nothing is lost but the prefetch */
        }
    }
    if (max > RESP_PEEK_MAX)
        max = RESP_PEEK_MAX;
    *out = p->pk;
    /* Before the first feed ibuf is NULL, and NULL + 0 is undefined. */
    if (p->spos >= p->ilen)
        return 0;
    const char *q = p->ibuf + p->spos, *end = p->ibuf + p->ilen;
    size_t k = 0;
    uint64_t n;
    size_t payload;
    while (k < max && q < end && *q == '*') {
        const char *start = q;
        if ((q = frame_walk(p, q, end, &n, &payload, &p->pk[k],
                            (uint64_t)max_argc)) == NULL)
            break;
        p->pk_at[k].start = (size_t)(start - p->ibuf);
        p->pk_at[k].end = (size_t)(q - p->ibuf);
        if (p->pk_n == k && n <= 3)
            p->pk_n++;
        k++;
    }
    return k;
}

/* Advances the scanner over ibuf[spos, ilen) until the current frame is
 * complete, the input runs out, or an error. */
static int scan(resp_parser_t *p)
{
    int rc;

    while (p->spos < p->ilen && p->st != ST_DONE_MB && p->st != ST_DONE_WHOLE &&
           p->st != ST_DONE_INLINE) {
        char c = p->ibuf[p->spos];

        switch (p->st) {
        case ST_START:
            if (c == '*' && frame_fast(p))
                break;
            line_reset(p);
            p->spos++;
            if (c == '*') {
                p->st = ST_MB_LINE;
            } else if (c == '\n') {
                p->st = ST_DONE_INLINE;
            } else {
                p->linelen = 1;
                p->st = ST_INLINE;
            }
            break;
        case ST_INLINE: {
            /* Redis ends an inline line at '\n' and counts the bytes before
             * it against the cap. */
            size_t avail = p->ilen - p->spos;
            size_t room = p->lim.max_inline_len >= p->linelen
                              ? p->lim.max_inline_len - p->linelen + 1
                              : 0;
            size_t look = avail < room ? avail : room;
            const char *nl = memchr(p->ibuf + p->spos, '\n', look);

            if (nl != NULL) {
                p->linelen += (size_t)(nl - (p->ibuf + p->spos));
                p->spos = (size_t)(nl - p->ibuf) + 1;
                p->st = ST_DONE_INLINE;
                if (p->linelen > p->lim.max_inline_len)
                    return fail(p, RESP_PERR_INLINE);
            } else {
                p->linelen += look;
                p->spos += look;
                if (p->linelen > p->lim.max_inline_len)
                    return fail(p, RESP_PERR_INLINE);
            }
            break;
        }
        case ST_MB_LINE:
            p->spos++;
            rc = line_byte(p, c, RESP_PERR_MBULK_BIG);
            if (rc < 0)
                return rc;
            if (rc == 1 && (rc = mb_header_done(p)) < 0)
                return rc;
            break;
        case ST_BULK_START:
            if (c != '$') {
                char msg[64];

                /* An error reply cannot carry CR, LF (or, for us, NUL). */
                if (c == '\r' || c == '\n' || c == '\0')
                    c = ' ';
                snprintf(msg, sizeof(msg),
                         "Protocol error: expected '$', got '%c'", c);
                return fail_msg(p, RESP_PERR_BULK_START, msg);
            }
            p->spos++;
            line_reset(p);
            p->st = ST_BULK_LINE;
            break;
        case ST_BULK_LINE:
            p->spos++;
            rc = line_byte(p, c, RESP_PERR_BULK_BIG);
            if (rc < 0)
                return rc;
            if (rc == 1 && (rc = bulk_header_done(p)) < 0)
                return rc;
            break;
        case ST_BULK_DATA: {
            size_t avail = p->ilen - p->spos;
            size_t n = p->remain < avail ? (size_t)p->remain : avail;

            p->spos += n;
            p->remain -= n;
            if (p->remain == 0)
                p->st = p->argi == p->nargs ? ST_DONE_MB : ST_BULK_START;
            break;
        }
        default:
            break;
        }
    }
    switch (p->st) {
    case ST_BULK_START:
    case ST_BULK_LINE:
    case ST_BULK_DATA:
    case ST_DONE_MB:
        return forward(p);
    default:
        return 0;
    }
}

static bool frame_ready(const resp_parser_t *p)
{
    return p->st == ST_DONE_MB || p->st == ST_DONE_WHOLE ||
           p->st == ST_DONE_INLINE;
}

/* ---- input buffer --------------------------------------------------- */

static int ibuf_append(resp_parser_t *p, const char *buf, size_t len)
{
    size_t used = p->ilen - p->ihead;

    if (p->ihead == p->ilen) {
        p->ihead = p->ilen = p->spos = 0;
        if (p->icap > RESP_KEEP_BYTES && len <= RESP_KEEP_BYTES) {
            free(p->ibuf);
            p->ibuf = NULL;
            p->icap = 0;
        }
    }
    if (p->icap - p->ilen < len && p->ihead > 0 && p->ihead >= used) {
        /* Moving the tail down is paid for by the bytes consumed before it,
         * so the copies stay linear in the input. */
        memmove(p->ibuf, p->ibuf + p->ihead, used);
        p->spos -= p->ihead;
        p->ilen = used;
        p->ihead = 0;
    }
    if (p->icap - p->ilen < len) {
        size_t need = p->ilen + len;
        size_t cap = p->icap < 4096 ? 4096 : p->icap;
        char *nb;

        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        nb = realloc(p->ibuf, cap);
        if (nb == NULL)
            return fail(p, RESP_PERR_NOMEM);
        p->ibuf = nb;
        p->icap = cap;
    }
    memcpy(p->ibuf + p->ilen, buf, len);
    p->ilen += len;
    return 0;
}

int resp_parser_feed(resp_parser_t *p, const char *buf, size_t len)
{
    int rc;

    if (p->err != 0)
        return p->err;
    if (len == 0)
        return 0;
    p->pk_n = 0; /* the buffer may move */
    if (len > p->lim.max_query_buf ||
        resp_parser_pending(p) > p->lim.max_query_buf - len) {
        fail(p, RESP_PERR_QUERYBUF);
        return frame_ready(p) ? 0 : p->err;
    }
    if ((rc = ibuf_append(p, buf, len)) < 0)
        return rc;
    if (frame_ready(p))
        return 0; /* scanned by resp_parser_next() once that one is out */
    if ((rc = scan(p)) < 0) {
        /* Nothing past the error is ever used. */
        p->ilen = p->spos = p->ihead;
        return rc;
    }
    return 0;
}

/* ---- commands ------------------------------------------------------- */

static int reserve(resp_parser_t *p, size_t nargs, size_t bytes)
{
    if (nargs > p->argcap ||
        (p->argcap > RESP_KEEP_ARGS && nargs <= RESP_KEEP_ARGS)) {
        size_t cap = nargs > 16 ? nargs : 16;
        arg_t *a = realloc(p->cmd.argv, cap * sizeof(*a));

        if (a == NULL)
            return fail(p, RESP_PERR_NOMEM);
        p->cmd.argv = a;
        p->argcap = cap;
    }
    if (bytes > p->arenacap ||
        (p->arenacap > RESP_KEEP_BYTES && bytes <= RESP_KEEP_BYTES)) {
        size_t cap = bytes > 256 ? bytes : 256;
        char *a;

        /* Old contents are dead: no need for realloc's copy. */
        free(p->arena);
        p->arena = NULL;
        p->arenacap = 0;
        a = malloc(cap);
        if (a == NULL)
            return fail(p, RESP_PERR_NOMEM);
        p->arena = a;
        p->arenacap = cap;
    }
    p->arenaused = 0;
    p->cmd.argc = 0;
    return 0;
}

static int take_multibulk(resp_parser_t *p, resp_cmd_t **out)
{
    void *reply = NULL;
    int rc;

    /* Whatever happens, this frame is finished with. */
    p->st = ST_START;
    if ((rc = reserve(p, p->nargs, 0)) < 0) /* the arena is not used */
        return rc;
    if (redisReaderGetReply(p->rd, &reply) != REDIS_OK || reply == NULL ||
        p->cmd.argc != (int)p->nargs) {
        /* The scanner and the reader disagree: not expected to happen. */
        if (p->rd->err == REDIS_ERR_OOM)
            return fail(p, RESP_PERR_NOMEM);
        return fail(p, RESP_PERR_MBULK);
    }
    p->inflight = 0;
    *out = &p->cmd;
    return 1;
}

/* A frame frame_fast() found whole in ibuf[ihead, spos): its arguments
 * point into ibuf, where it stays until the next feed (which may move the
 * buffer, hence the pointers are taken now and not when it was scanned).
 * The '\r' after each payload becomes its NUL. */
static int take_whole(resp_parser_t *p, resp_cmd_t **out)
{
    const char *q = p->ibuf + p->ihead + 1, *end = p->ibuf + p->spos;
    uint64_t n = 0, len = 0;
    int rc;

    p->st = ST_START;
    if ((rc = reserve(p, p->nargs, 0)) < 0)
        return rc;
    /* The frame was checked by frame_walk(): only its lengths are read. */
    (void)fast_num(&q, end, &n);
    for (size_t i = 0; i < p->nargs; i++) {
        arg_t *a = &p->cmd.argv[i];
        q++; /* '$' */
        (void)fast_num(&q, end, &len);
        a->ptr = q;
        a->len = (size_t)len;
        p->ibuf[(size_t)(q - p->ibuf) + len] = '\0';
        q += len + 2;
    }
    p->cmd.argc = (int)p->nargs;
    p->ihead = p->spos;
    *out = &p->cmd;
    return 1;
}

static int add_arg(resp_parser_t *p, size_t start)
{
    arg_t *a;

    if ((size_t)p->cmd.argc == p->argcap) {
        size_t cap = p->argcap * 2;
        arg_t *na = realloc(p->cmd.argv, cap * sizeof(*na));

        if (na == NULL)
            return fail(p, RESP_PERR_NOMEM);
        p->cmd.argv = na;
        p->argcap = cap;
    }
    a = &p->cmd.argv[p->cmd.argc++];
    a->ptr = p->arena + start;
    a->len = p->arenaused - start;
    p->arena[p->arenaused++] = '\0';
    return 0;
}

/* One word of an inline line, already in the arena at word. */
static int add_inline_word(void *ctx, char *word, size_t len)
{
    resp_parser_t *p = ctx;
    size_t start = (size_t)(word - p->arena);
    p->arenaused = start + len;
    return add_arg(p, start);
}

/* Splits an inline line with resp_splitargs(), into the arena. */
static int split_inline(resp_parser_t *p, const char *s, size_t len)
{
    int rc;

    /* Output never exceeds the input plus one NUL. */
    if ((rc = reserve(p, 16, len + 1)) < 0)
        return rc;
    rc = resp_splitargs(s, len, p->arena + p->arenaused, add_inline_word, p);
    if (rc == -EPROTO)
        return fail(p, RESP_PERR_QUOTES);
    return rc;
}

static int take_inline(resp_parser_t *p, resp_cmd_t **out)
{
    const char *line = p->ibuf + p->ihead;
    size_t len = p->spos - p->ihead; /* includes the '\n' */
    int rc;

    len--;
    if (len > 0 && line[len - 1] == '\r')
        len--;
    rc = split_inline(p, line, len);
    p->ihead = p->spos;
    p->st = ST_START;
    if (rc < 0)
        return rc;
    if (p->cmd.argc == 0)
        return 0; /* a blank line */
    *out = &p->cmd;
    return 1;
}

/* The frames after the first of a read, in one pass: a whole, ordinary
 * multibulk frame at ihead (== spos, at a frame boundary) is walked once
 * and its arguments pointed at where they lie, as frame_walk() and
 * take_whole() would in two. 0, with nothing taken, for anything else
 * (incomplete, unusual or larger than the argument array at hand): the
 * byte-wise scan decides then. */
static int take_fast(resp_parser_t *p, resp_cmd_t **out)
{
    const char *q = p->ibuf + p->spos + 1, *end = p->ibuf + p->ilen;
    uint64_t n, len;
    int rc;

    /* A frame the last look walked already. */
    while (p->pk_i < p->pk_n && p->pk_at[p->pk_i].start < p->spos)
        p->pk_i++;
    if (p->pk_i < p->pk_n && p->pk_at[p->pk_i].start == p->spos) {
        const resp_peek_t *f = &p->pk[p->pk_i];
        for (int i = 0; i < f->argc; i++)
            p->ibuf[(size_t)(f->argv[i].ptr - p->ibuf) + f->argv[i].len] = '\0';
        p->pkcmd.argc = f->argc;
        p->pkcmd.argv = (arg_t *)f->argv;
        p->ihead = p->spos = p->pk_at[p->pk_i++].end;
        *out = &p->pkcmd;
        return 1;
    }
    if (!fast_num(&q, end, &n) || n == 0 || n > p->lim.max_args ||
        (n > 16 && n > p->argcap))
        return 0;
    if ((rc = reserve(p, (size_t)n, 0)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        arg_t *a = &p->cmd.argv[i];
        if (q >= end || *q != '$')
            return 0;
        q++;
        if (!fast_num(&q, end, &len) || len > p->lim.max_bulk_len ||
            (uint64_t)(end - q) < len + 2)
            return 0;
        a->ptr = q;
        a->len = (size_t)len;
        q += len + 2;
    }
    /* Only a frame taken is changed: the '\r' after each payload becomes
     * its NUL. */
    for (size_t i = 0; i < n; i++)
        p->ibuf[(size_t)(p->cmd.argv[i].ptr - p->ibuf) + p->cmd.argv[i].len] =
            '\0';
    p->cmd.argc = (int)n;
    p->ihead = p->spos = (size_t)(q - p->ibuf);
    *out = &p->cmd;
    return 1;
}

int resp_parser_next(resp_parser_t *p, resp_cmd_t **out)
{
    int rc;

    *out = NULL;
    if (p->st == ST_START && p->err == 0 && p->spos == p->ihead &&
        p->spos < p->ilen && p->ibuf[p->spos] == '*' &&
        (rc = take_fast(p, out)) != 0)
        return rc;
    for (;;) {
        if (p->st == ST_DONE_WHOLE)
            return take_whole(p, out);
        if (p->st == ST_DONE_MB)
            return take_multibulk(p, out);
        if (p->st == ST_DONE_INLINE) {
            if ((rc = take_inline(p, out)) != 0)
                return rc;
            continue;
        }
        if (p->err != 0)
            return p->err;
        if ((rc = scan(p)) < 0) {
            p->ilen = p->spos = p->ihead;
            return rc;
        }
        if (!frame_ready(p))
            return 0;
    }
}
