/*
 * aofman.c - see aofman.h. The rules are Redis 7's aofLoadManifestFromFile:
 * lines starting with '#' are comments, keys come in pairs in any order
 * (unknown ones are skipped, for forward compatibility), at least the
 * three known ones must be there, increments must have ascending seqs.
 */
#include "aofman.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arg.h"
#include "resp.h"
#include "util.h"

typedef struct line_words {
    char *w[AOFMAN_MAX_LINE / 2 + 2];
    int n;
} line_words_t;

static int add_word(void *ctx, char *word, size_t len)
{
    line_words_t *lw = ctx;
    if (memchr(word, '\0', len) != NULL)
        return -EINVAL;
    lw->w[lw->n++] = word;
    return 0;
}

static int push(aofman_file_t **arr, size_t *n, const aofman_file_t *f)
{
    aofman_file_t *a = realloc(*arr, (*n + 1) * sizeof(*a));
    if (a == NULL)
        return -ENOMEM;
    *arr = a;
    a[(*n)++] = *f;
    return 0;
}

/* Parses the words of one line into *f (name owned by f). NULL or the
 * reason. */
static const char *parse_line(line_words_t *lw, aofman_file_t *f, bool *oom)
{
    const char *name = NULL;
    if (lw->n < 6 || lw->n % 2 != 0)
        return "Invalid AOF manifest file format";
    for (int i = 0; i < lw->n; i += 2) {
        const char *k = lw->w[i], *v = lw->w[i + 1];
        if (strcasecmp(k, "file") == 0) {
            if (strchr(v, '/') != NULL)
                return "File can't be a path, just a filename";
            name = v;
        } else if (strcasecmp(k, "seq") == 0) {
            long long ll;
            if (!arg_ll(&(arg_t){v, strlen(v)}, &ll) || ll <= 0)
                return "Invalid AOF manifest file format";
            f->seq = ll;
        } else if (strcasecmp(k, "type") == 0) {
            f->type = v[0];
        }
    }
    if (name == NULL || name[0] == '\0' || f->seq == 0 || f->type == '\0')
        return "Invalid AOF manifest file format";
    if (f->type != 'b' && f->type != 'i' && f->type != 'h')
        return "Unknown AOF file type";
    if ((f->name = strdup(name)) == NULL)
        *oom = true;
    return NULL;
}

static const char *add_file(aofman_t *m, aofman_file_t *f, bool *oom)
{
    if (f->type == 'b') {
        if (m->base != NULL)
            return "Found duplicate base file information";
        if ((m->base = malloc(sizeof(*m->base))) == NULL)
            goto nomem;
        *m->base = *f;
        m->base_seq = f->seq;
    } else if (f->type == 'h') {
        if (push(&m->hist, &m->nhist, f) < 0)
            goto nomem;
    } else {
        if (f->seq <= m->incr_seq)
            return "Found a non-monotonic sequence number";
        if (push(&m->incr, &m->nincr, f) < 0)
            goto nomem;
        m->incr_seq = f->seq;
    }
    return NULL;
nomem:
    *oom = true;
    return NULL;
}

int aofman_parse(const char *buf, size_t len, aofman_t *m, char *err,
                 size_t errlen)
{
    memset(m, 0, sizeof(*m));
    const char *why = NULL;
    bool oom = false;
    int linenum = 0;
    size_t pos = 0;
    char *copy = malloc(AOFMAN_MAX_LINE + 1);
    line_words_t *lw = malloc(sizeof(*lw));
    if (copy == NULL || lw == NULL) {
        oom = true;
        goto out;
    }
    if (len == 0)
        why = "Found an empty AOF manifest";
    while (why == NULL && !oom && pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;
        linenum++;
        if (buf[pos] == '#') {
            pos += n + 1;
            continue;
        }
        if (nl == NULL || n > AOFMAN_MAX_LINE - 1) {
            why = nl == NULL && n <= AOFMAN_MAX_LINE - 1
                      ? "Invalid AOF manifest file format"
                      : "The AOF manifest file contains too long line";
            break;
        }
        lw->n = 0;
        aofman_file_t f = {0};
        if (resp_splitargs(buf + pos, n, copy, add_word, lw) < 0 ||
            memchr(buf + pos, '\0', n) != NULL) {
            why = "Invalid AOF manifest file format";
        } else if ((why = parse_line(lw, &f, &oom)) == NULL && !oom) {
            why = add_file(m, &f, &oom);
            if (why != NULL || oom)
                free(f.name);
        }
        pos += n + 1;
    }
out:
    free(copy);
    free(lw);
    if (why == NULL && !oom)
        return 0;
    aofman_free(m);
    if (oom) {
        set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    set_err(err, errlen, "%s (line %d)", why, linenum);
    return -EINVAL;
}

/* Appends one line to b; a name with white space or quotes is written as
 * a quoted word, which resp_splitargs reads back. */
static void format_file(sbuf_t *b, const aofman_file_t *f)
{
    bool plain = true;
    for (const char *p = f->name; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '\'' || *p == '\\' || *p >= 127)
            plain = false;
    if (plain) {
        sb_printf(b, "file %s", f->name);
    } else {
        sb_printf(b, "file \"");
        for (const unsigned char *p = (const unsigned char *)f->name; *p; p++)
            if (*p < ' ' || *p >= 127 || *p == '"' || *p == '\\')
                sb_printf(b, "\\x%02x", *p);
            else
                sb_printf(b, "%c", *p);
        sb_printf(b, "\"");
    }
    sb_printf(b, " seq %" PRId64 " type %c\n", f->seq, f->type);
}

char *aofman_format(const aofman_t *m)
{
    sbuf_t b = {0};
    sb_printf(&b, "%s", "");
    if (m->base != NULL)
        format_file(&b, m->base);
    for (size_t i = 0; i < m->nhist; i++)
        format_file(&b, &m->hist[i]);
    for (size_t i = 0; i < m->nincr; i++)
        format_file(&b, &m->incr[i]);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static int dup_files(aofman_file_t **dst, const aofman_file_t *src, size_t n)
{
    *dst = NULL;
    if (n == 0)
        return 0;
    if ((*dst = calloc(n, sizeof(**dst))) == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        (*dst)[i] = src[i];
        if (((*dst)[i].name = strdup(src[i].name)) == NULL)
            return -ENOMEM;
    }
    return 0;
}

int aofman_dup(const aofman_t *src, aofman_t *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->base_seq = src->base_seq;
    dst->incr_seq = src->incr_seq;
    int rc = dup_files(&dst->base, src->base, src->base != NULL);
    dst->nincr = src->nincr;
    dst->nhist = src->nhist;
    if (rc == 0)
        rc = dup_files(&dst->incr, src->incr, src->nincr);
    if (rc == 0)
        rc = dup_files(&dst->hist, src->hist, src->nhist);
    if (rc < 0)
        aofman_free(dst);
    return rc;
}

static char *file_name(const char *prefix, int64_t seq, const char *kind)
{
    size_t n = strlen(prefix) + strlen(kind) + 32;
    char *name = malloc(n);
    if (name != NULL)
        snprintf(name, n, "%s.%" PRId64 "%s", prefix, seq, kind);
    return name;
}

int aofman_new_base(aofman_t *m, const char *prefix)
{
    aofman_file_t f = {file_name(prefix, m->base_seq + 1, ".base.rdb"),
                       m->base_seq + 1, 'b'};
    aofman_file_t *nb = malloc(sizeof(*nb));
    if (f.name == NULL || nb == NULL ||
        (m->base != NULL && push(&m->hist, &m->nhist, m->base) < 0)) {
        free(f.name);
        free(nb);
        return -ENOMEM;
    }
    if (m->base != NULL)
        m->hist[m->nhist - 1].type = 'h';
    free(m->base);
    *nb = f;
    m->base = nb;
    m->base_seq = f.seq;
    return 0;
}

int aofman_new_incr(aofman_t *m, const char *prefix)
{
    aofman_file_t f = {file_name(prefix, m->incr_seq + 1, ".incr.aof"),
                       m->incr_seq + 1, 'i'};
    if (f.name == NULL || push(&m->incr, &m->nincr, &f) < 0) {
        free(f.name);
        return -ENOMEM;
    }
    m->incr_seq = f.seq;
    return 0;
}

int aofman_retire_incr(aofman_t *m, int64_t upto)
{
    size_t k = 0;
    while (k < m->nincr && m->incr[k].seq <= upto)
        k++;
    for (size_t i = 0; i < k; i++) {
        aofman_file_t h = m->incr[i];
        h.type = 'h';
        if (push(&m->hist, &m->nhist, &h) < 0) {
            /* the ones moved so far stay moved: shift what is left */
            memmove(m->incr, m->incr + i, (m->nincr - i) * sizeof(*m->incr));
            m->nincr -= i;
            return -ENOMEM;
        }
    }
    memmove(m->incr, m->incr + k, (m->nincr - k) * sizeof(*m->incr));
    m->nincr -= k;
    return 0;
}

void aofman_clear_history(aofman_t *m)
{
    for (size_t i = 0; i < m->nhist; i++)
        free(m->hist[i].name);
    free(m->hist);
    m->hist = NULL;
    m->nhist = 0;
}

const char *aofman_last_incr(const aofman_t *m)
{
    return m->nincr > 0 ? m->incr[m->nincr - 1].name : NULL;
}

void aofman_free(aofman_t *m)
{
    if (m->base != NULL)
        free(m->base->name);
    free(m->base);
    for (size_t i = 0; i < m->nincr; i++)
        free(m->incr[i].name);
    free(m->incr);
    aofman_clear_history(m);
    memset(m, 0, sizeof(*m));
}
