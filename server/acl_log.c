/*
 * acl_log.c - see acl_log.h.
 */
#include "acl_log.h"

#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "resp_out.h"

/* Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA: a denial like one of the last
 * ten within this many ms bumps that entry's count. */
#define GROUP_MS 60000
#define GROUP_SCAN 10

typedef struct entry {
    struct entry *next, *prev;
    uint64_t count;
    int reason, ctx;
    char *object, *username, *cinfo;
    size_t olen, ulen, clen;
    uint64_t ctime_ms;
} entry_t;

struct acl_log {
    entry_t *head, *tail; /* newest first */
    uint64_t len;
};

static void entry_free(entry_t *e)
{
    free(e->object);
    free(e->username);
    free(e->cinfo);
    free(e);
}

static void unlink_entry(struct acl_log *l, entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        l->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        l->tail = e->prev;
    e->next = e->prev = NULL;
    l->len--;
}

static void push_head(struct acl_log *l, entry_t *e)
{
    e->prev = NULL;
    e->next = l->head;
    if (l->head)
        l->head->prev = e;
    else
        l->tail = e;
    l->head = e;
    l->len++;
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

void acl_log_trim(server_t *s, uint64_t max)
{
    struct acl_log *l = s->acl_log;
    while (l != NULL && l->len > max) {
        entry_t *e = l->tail;
        unlink_entry(l, e);
        entry_free(e);
    }
}

void acl_log_add(client_t *c, int reason, int ctx, const char *object,
                 size_t olen, const char *username, size_t ulen)
{
    server_t *s = c->srv;
    if (s->acl_log == NULL &&
        (s->acl_log = calloc(1, sizeof(*s->acl_log))) == NULL)
        return;
    struct acl_log *l = s->acl_log;
    char info[1024];
    size_t ilen = conn_describe(c, info, sizeof(info));
    if (ilen > 0 && info[ilen - 1] == '\n')
        ilen--; /* Redis's client-info has no line end */
    uint64_t now = server_now_ms(c->srv);
    int scan = GROUP_SCAN;
    for (entry_t *e = l->head; e != NULL && scan-- > 0; e = e->next) {
        uint64_t delta =
            now > e->ctime_ms ? now - e->ctime_ms : e->ctime_ms - now;
        if (e->reason != reason || e->ctx != ctx || delta > GROUP_MS ||
            e->olen != olen || memcmp(e->object, object, olen) != 0 ||
            e->ulen != ulen || memcmp(e->username, username, ulen) != 0)
            continue;
        char *ci = dup_bytes(info, ilen);
        if (ci == NULL)
            return;
        free(e->cinfo);
        e->cinfo = ci;
        e->clen = ilen;
        e->ctime_ms = now;
        e->count++;
        unlink_entry(l, e);
        push_head(l, e);
        return;
    }
    entry_t *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return;
    e->count = 1;
    e->reason = reason;
    e->ctx = ctx;
    e->ctime_ms = now;
    e->object = dup_bytes(object, olen);
    e->username = dup_bytes(username, ulen);
    e->cinfo = dup_bytes(info, ilen);
    e->olen = olen;
    e->ulen = ulen;
    e->clen = ilen;
    if (e->object == NULL || e->username == NULL || e->cinfo == NULL) {
        entry_free(e);
        return;
    }
    push_head(l, e);
    acl_log_trim(s, s->cfg->acllog_max_len);
}

static const char *reason_name(int r)
{
    switch (r) {
    case ACL_DENIED_CMD:
        return "command";
    case ACL_DENIED_KEY:
        return "key";
    case ACL_DENIED_CHANNEL:
        return "channel";
    case ACL_DENIED_AUTH:
        return "auth";
    default:
        return "unknown";
    }
}

void acl_log_reply(client_t *c, long long count)
{
    struct acl_log *l = c->srv->acl_log;
    uint64_t len = l != NULL ? l->len : 0;
    if (count < 0)
        count = 0;
    if ((uint64_t)count > len)
        count = (long long)len;
    resp_out_t *o = &c->out;
    resp_add_array(o, (size_t)count);
    uint64_t now = server_now_ms(c->srv);
    static const char *const ctxs[] = {"toplevel", "multi", "multi"};
    for (entry_t *e = l != NULL ? l->head : NULL; e != NULL && count-- > 0;
         e = e->next) {
        resp_add_map(o, 7);
        resp_add_cstr(o, "count");
        resp_add_int(o, (int64_t)e->count);
        resp_add_cstr(o, "reason");
        resp_add_cstr(o, reason_name(e->reason));
        resp_add_cstr(o, "context");
        resp_add_cstr(o, ctxs[e->ctx]);
        resp_add_cstr(o, "object");
        resp_add_bulk(o, e->object, e->olen);
        resp_add_cstr(o, "username");
        resp_add_bulk(o, e->username, e->ulen);
        resp_add_cstr(o, "age-seconds");
        resp_add_double(o, (double)(now - e->ctime_ms) / 1000.0);
        resp_add_cstr(o, "client-info");
        resp_add_bulk(o, e->cinfo, e->clen);
    }
}

void acl_log_reset(server_t *s)
{
    struct acl_log *l = s->acl_log;
    while (l != NULL && l->head != NULL) {
        entry_t *e = l->head;
        unlink_entry(l, e);
        entry_free(e);
    }
}

void acl_log_free(server_t *s)
{
    acl_log_reset(s);
    free(s->acl_log);
    s->acl_log = NULL;
}
