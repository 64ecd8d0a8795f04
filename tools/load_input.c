/*
 * load_input.c - cuts cuckood-load's input into items (load_input.h).
 *
 * Each call looks at one record from the start of the caller's buffer and
 * either returns it whole or asks for more bytes, so a record split across
 * two reads is parsed once, from its start, when it is complete. Decoded
 * items (CSV quotes, COPY escapes) are built in the parser's own buffer,
 * which grows up to LOAD_MAX_RECORD.
 */
#include "load_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct load_input {
    enum load_format format;
    unsigned column;         /* 1-based; 0 while a CSV header is awaited */
    const char *column_name; /* CSV header lookup, else NULL */
    uint64_t line;           /* where the last record starts */
    uint64_t next_line;      /* where the next record starts */
    char *out;               /* decoded item */
    size_t out_len, out_cap;
    char err[160];
};

struct load_input *load_input_new(enum load_format f, unsigned column,
                                  const char *column_name)
{
    struct load_input *in = calloc(1, sizeof(*in));
    if (in == NULL)
        return NULL;
    in->format = f;
    in->column = column_name != NULL ? 0 : (column ? column : 1);
    in->column_name = column_name;
    in->next_line = 1;
    in->out_cap = 256;
    in->out = malloc(in->out_cap);
    if (in->out == NULL) {
        free(in);
        return NULL;
    }
    return in;
}

void load_input_free(struct load_input *in)
{
    if (in == NULL)
        return;
    free(in->out);
    free(in);
}

uint64_t load_input_line(const struct load_input *in)
{
    return in->line;
}

const char *load_input_error(const struct load_input *in)
{
    return in->err;
}

static enum load_step fail(struct load_input *in, const char *what)
{
    snprintf(in->err, sizeof(in->err), "%s", what);
    return LOAD_ERROR;
}

/* Appends one byte to the decoded item; the record limit bounds it. */
static int put(struct load_input *in, char c)
{
    if (in->out_len == in->out_cap) {
        size_t cap = in->out_cap * 2;
        char *p = realloc(in->out, cap);
        if (p == NULL)
            return -1;
        in->out = p;
        in->out_cap = cap;
    }
    in->out[in->out_len++] = c;
    return 0;
}

static enum load_step too_long(struct load_input *in)
{
    in->line = in->next_line;
    return fail(in, "record longer than 4 MiB");
}

/* The record up to sep (or to the end of the input): LOAD_ITEM with its
 * length in *n and the separator counted in *used, or what the caller
 * returns instead (LOAD_MORE, LOAD_END, LOAD_ERROR). */
static enum load_step cut(struct load_input *in, const char *buf, size_t len,
                          int eof, char sep, size_t *used, size_t *n)
{
    const char *end = memchr(buf, sep, len);
    size_t take;
    if (end == NULL) {
        if (!eof)
            return len > LOAD_MAX_RECORD ? too_long(in) : LOAD_MORE;
        if (len == 0)
            return LOAD_END;
        *n = take = len;
    } else {
        *n = (size_t)(end - buf);
        take = *n + 1;
    }
    if (*n > LOAD_MAX_RECORD)
        return too_long(in);
    in->line = in->next_line++;
    *used = take;
    return LOAD_ITEM;
}

/* Lines and NUL-separated items: up to the separator. */
static enum load_step next_plain(struct load_input *in, const char *buf,
                                 size_t len, int eof, size_t *used,
                                 const char **item, size_t *item_len)
{
    char sep = in->format == LOAD_NUL ? '\0' : '\n';
    size_t n;
    enum load_step st = cut(in, buf, len, eof, sep, used, &n);
    if (st != LOAD_ITEM)
        return st;
    if (sep == '\n' && n > 0 && buf[n - 1] == '\r')
        n--;
    if (n == 0)
        return LOAD_SKIP;
    *item = buf;
    *item_len = n;
    return LOAD_ITEM;
}

/* Decodes one field of COPY's text format into in->out: \N (NULL) is
 * reported as 1, a plain field as 0, no memory as -1. */
static int copy_field(struct load_input *in, const char *f, size_t n)
{
    in->out_len = 0;
    if (n == 2 && f[0] == '\\' && f[1] == 'N')
        return 1;
    for (size_t i = 0; i < n; i++) {
        char c = f[i];
        if (c != '\\' || i + 1 == n) {
            if (put(in, c) < 0)
                return -1;
            continue;
        }
        c = f[++i];
        unsigned v = 0, k = 0;
        switch (c) {
        case 'b':
            c = '\b';
            break;
        case 'f':
            c = '\f';
            break;
        case 'n':
            c = '\n';
            break;
        case 'r':
            c = '\r';
            break;
        case 't':
            c = '\t';
            break;
        case 'v':
            c = '\v';
            break;
        case 'x':
            while (k < 2 && i + 1 < n &&
                   strchr("0123456789abcdefABCDEF", f[i + 1]) != NULL &&
                   f[i + 1] != '\0') {
                char h = f[++i];
                v = v * 16 + (unsigned)(h <= '9'   ? h - '0'
                                        : h <= 'F' ? h - 'A' + 10
                                                   : h - 'a' + 10);
                k++;
            }
            if (k == 0)
                break; /* "\x" alone is an x, as PostgreSQL reads it */
            c = (char)v;
            break;
        default:
            if (c >= '0' && c <= '7') {
                v = (unsigned)(c - '0');
                while (++k < 3 && i + 1 < n && f[i + 1] >= '0' &&
                       f[i + 1] <= '7')
                    v = v * 8 + (unsigned)(f[++i] - '0');
                c = (char)(v & 0xff);
            }
            break;
        }
        if (put(in, c) < 0)
            return -1;
    }
    return 0;
}

static enum load_step next_copy(struct load_input *in, const char *buf,
                                size_t len, int eof, size_t *used,
                                const char **item, size_t *item_len)
{
    size_t n;
    enum load_step st = cut(in, buf, len, eof, '\n', used, &n);
    if (st != LOAD_ITEM)
        return st;
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    if (n == 0)
        return LOAD_SKIP;
    /* The column's field: between the (column-1)th and the column-th tab
     * (COPY escapes tabs inside data, so a raw tab always separates). */
    size_t start = 0;
    for (unsigned c = 1; c < in->column; c++) {
        const char *t = memchr(buf + start, '\t', n - start);
        if (t == NULL) {
            snprintf(in->err, sizeof(in->err), "no column %u (the row has %u)",
                     in->column, c);
            return LOAD_ERROR;
        }
        start = (size_t)(t - buf) + 1;
    }
    const char *t = memchr(buf + start, '\t', n - start);
    size_t flen = (t == NULL ? n : (size_t)(t - buf)) - start;
    int r = copy_field(in, buf + start, flen);
    if (r < 0)
        return fail(in, "out of memory");
    if (r == 1 || in->out_len == 0)
        return LOAD_SKIP;
    *item = in->out;
    *item_len = in->out_len;
    return LOAD_ITEM;
}

/* One CSV record (RFC 4180: fields separated by commas, records by
 * newlines, a field in double quotes may hold commas, newlines and "" for
 * a quote). The wanted field is decoded into in->out; in header mode
 * every field is, and compared with the column's name. */
static enum load_step next_csv(struct load_input *in, const char *buf,
                               size_t len, int eof, size_t *used,
                               const char **item, size_t *item_len)
{
    int header = in->column == 0;
    unsigned field = 1, found = 0;
    int have = 0; /* the wanted field was seen */
    uint64_t newlines = 0;
    size_t i = 0;
    in->out_len = 0;
    if (len == 0 && eof)
        return LOAD_END;
    for (;;) {
        int want = header || field == in->column;
        int at_end = 0;
        if (want)
            in->out_len = 0;
        if (i < len && buf[i] == '"') {
            i++;
            for (;;) {
                if (i == len) {
                    if (eof) {
                        in->line = in->next_line;
                        return fail(in, "unterminated quoted field");
                    }
                    goto more;
                }
                char c = buf[i];
                if (c == '"') {
                    if (i + 1 == len && !eof)
                        goto more;
                    if (i + 1 < len && buf[i + 1] == '"') {
                        if (want && put(in, '"') < 0)
                            return fail(in, "out of memory");
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                if (c == '\n')
                    newlines++;
                if (want && put(in, c) < 0)
                    return fail(in, "out of memory");
                i++;
            }
            /* After the closing quote: a separator or the end. */
            if (i == len) {
                if (!eof)
                    goto more;
                at_end = 1;
            } else if (buf[i] == ',') {
                i++;
            } else if (buf[i] == '\n') {
                i++;
                at_end = 1;
            } else if (buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n') {
                i += 2;
                at_end = 1;
            } else if (buf[i] == '\r' && i + 1 == len && !eof) {
                goto more;
            } else {
                in->line = in->next_line;
                return fail(in, "a character after a closing quote");
            }
        } else {
            size_t s = i;
            while (i < len && buf[i] != ',' && buf[i] != '\n')
                i++;
            if (i == len && !eof)
                goto more;
            size_t e = i;
            if (i == len || buf[i] == '\n') {
                at_end = 1;
                if (e > s && buf[e - 1] == '\r')
                    e--;
            }
            if (i < len)
                i++;
            if (want)
                for (size_t k = s; k < e; k++)
                    if (put(in, buf[k]) < 0)
                        return fail(in, "out of memory");
            if (at_end && field == 1 && e == s && !header) {
                /* A blank line. */
                in->line = in->next_line;
                in->next_line += 1 + newlines;
                *used = i;
                return LOAD_SKIP;
            }
        }
        if (i > LOAD_MAX_RECORD)
            return too_long(in);
        if (want) {
            have = 1;
            if (header && found == 0 &&
                in->out_len == strlen(in->column_name) &&
                memcmp(in->out, in->column_name, in->out_len) == 0)
                found = field;
        }
        if (at_end)
            break;
        field++;
    }
    in->line = in->next_line;
    in->next_line += (i > 0 && buf[i - 1] == '\n' ? 1 : 0) + newlines;
    *used = i;
    if (header) {
        /* Only now: a header cut short by LOAD_MORE is parsed again. */
        in->column = found;
        if (in->column == 0) {
            snprintf(in->err, sizeof(in->err),
                     "no column named '%.60s' in the header", in->column_name);
            return LOAD_ERROR;
        }
        in->out_len = 0;
        return LOAD_SKIP;
    }
    if (!have) {
        snprintf(in->err, sizeof(in->err), "no column %u (the record has %u)",
                 in->column, field);
        return LOAD_ERROR;
    }
    if (in->out_len == 0)
        return LOAD_SKIP;
    *item = in->out;
    *item_len = in->out_len;
    return LOAD_ITEM;
more:
    if (len > LOAD_MAX_RECORD)
        return too_long(in);
    return LOAD_MORE;
}

enum load_step load_input_next(struct load_input *in, const char *buf,
                               size_t len, int eof, size_t *used,
                               const char **item, size_t *item_len)
{
    *used = 0;
    switch (in->format) {
    case LOAD_LINES:
    case LOAD_NUL:
        return next_plain(in, buf, len, eof, used, item, item_len);
    case LOAD_COPY:
        return next_copy(in, buf, len, eof, used, item, item_len);
    case LOAD_CSV:
        return next_csv(in, buf, len, eof, used, item, item_len);
    }
    CK_ASSERT(0);
    return fail(in, "unknown format");
}
