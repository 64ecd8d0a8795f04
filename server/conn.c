/*
 * conn.c - see conn.h.
 *
 * Every read batch is parsed and dispatched before anything is written, and
 * then all of its replies leave in one uv_write, so a pipeline costs one
 * syscall each way. A batch whose replies pass CONN_PAUSE_BYTES (or the
 * output limit, when lower) is written in parts as they pile up.
 *
 * Without output limits (client-output-buffer-limit normal 0 0 0, Redis's
 * default) a client whose replies pile up is paused: the rest of its batch
 * waits in the parser and nothing more is read until the writes drain, so
 * its pending output stays within about the pause threshold plus one reply
 * (the idle timeout ends a client that never reads again).
 *
 * With limits the client is served as Redis serves it, whether or not it
 * reads: its input is read and run while its unread replies grow, and the
 * moment they pass the hard limit it is closed (before any further command
 * runs). With only a soft limit it is paused once over it, and the cron
 * closes it when it stayed over for the soft seconds. So a client that
 * stops reading is cut off at its limit instead of being held forever.
 */
#include "conn.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argv.h"
#include "check.h"
#include "cmd.h"
#include "cmdclock.h"
#include "conn_info.h"
#include "conn_int.h"
#include "log.h"
#include "multi.h"
#include "tls.h"

/* Pending output above which a client's input is no longer read. */
#define CONN_PAUSE_BYTES (4u * 1024 * 1024)
/* Pending output allowed to a client that has not authenticated. */
#define CONN_UNAUTH_OUT_MAX (64u * 1024)
/* Replies up to this size are written straight from the client buffer;
 * larger ones go to a write request without first being shifted. */
#define CONN_TRY_WRITE_MAX (256u * 1024)
/* Commands of a pipeline looked at ahead, to prefetch their buckets. */
#define CONN_PEEK 32
/* The look stops at a command with more arguments than this: the prefetch
 * hooks serve single-item commands (name, key, item), and walking the
 * arguments of a bulk command ahead would cost as much as parsing it. */
#define CONN_PEEK_ARGS 3

typedef struct conn_write {
    uv_write_t req;
    conn_t *c;
    char *buf;
    size_t len;
} conn_write_t;

static const char maxclients_msg[] = "-ERR max number of clients reached\r\n";
static const char denied_msg[] =
    "-DENIED cuckood is running in protected mode because protected mode is "
    "enabled and no password is set for the default user. In this mode "
    "connections are only accepted from the loopback interface. To accept "
    "connections from other hosts, either set a password (requirepass) or "
    "disable protected mode ('CONFIG SET protected-mode no' from the "
    "loopback interface, or '--protected-mode no' at start-up), and make "
    "sure the server is not reachable from the internet.\r\n";

static void conn_on_close(uv_handle_t *h)
{
    conn_t *c = h->data;
    tls_conn_free(c->tls);
    resp_parser_free(c->parser);
    argv_free(c->postponed);
    resp_out_release(&c->cl.out);
    multi_client_free(&c->cl);
    free(c->cl.name);
    free(c->cl.lib_name);
    free(c->cl.lib_ver);
    free(c);
}

static void conn_on_reject_close(uv_handle_t *h)
{
    free(h->data);
}

void conn_close(conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    server_t *s = c->cl.srv;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        s->clients = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    s->nclients--;
    if (c->read_yield) {
        c->read_yield = false;
        s->read_yields--;
    }
    if (c->cl.monitor) {
        c->cl.monitor = false;
        s->nmonitors--;
    }
    uv_close(&c->h.handle, conn_on_close);
}

static void format_addr(const struct sockaddr_storage *ss, char *buf,
                        size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, ip, sizeof(ip));
        port = ntohs(a->sin_port);
        snprintf(buf, len, "%s:%d", ip, port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
        snprintf(buf, len, "[%s]:%d", ip, port);
    } else {
        snprintf(buf, len, "?:0");
    }
}

static void conn_set_addrs(conn_t *c)
{
    if (c->is_unix) {
        const char *path = c->cl.srv->cfg->unixsocket;
        snprintf(c->addr, sizeof(c->addr), "%s:0", path ? path : "");
        snprintf(c->laddr, sizeof(c->laddr), "%s:0", path ? path : "");
        return;
    }
    struct sockaddr_storage ss;
    int n = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &n) == 0)
        format_addr(&ss, c->addr, sizeof(c->addr));
    n = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (uv_tcp_getsockname(&c->h.tcp, (struct sockaddr *)&ss, &n) == 0)
        format_addr(&ss, c->laddr, sizeof(c->laddr));
}

void conn_apply_limits(conn_t *c)
{
    const cfg_t *cfg = c->cl.srv->cfg;
    resp_limits_t lim;
    resp_limits_default(&lim);
    lim.max_bulk_len = (size_t)cfg->proto_max_bulk_len;
    lim.max_query_buf = (size_t)cfg->client_query_buffer_limit;
    /* Redis keeps unauthenticated clients to small requests, so a client
     * without the password cannot make the server buffer much. */
    if (!c->cl.authenticated) {
        lim.max_args = 10;
        lim.max_bulk_len = 16384;
    }
    resp_parser_set_limits(c->parser, &lim);
}

static void conn_on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    conn_t *c = h->data;
    /* The parser copies its input, so one slab serves every connection. */
    buf->base = c->cl.srv->read_slab;
    buf->len = SERVER_READ_SLAB;
}

static void conn_stop_reading(conn_t *c)
{
    if (c->reading) {
        uv_read_stop(&c->h.stream);
        c->reading = false;
    }
}

static void conn_on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);
static void conn_run(conn_t *c);
static void conn_resume_if_due(server_t *s);

/* Replies built at which c's dispatching stops to write them: the pause
 * threshold, or the output limit when that is lower. */
static size_t conn_pause_bytes(const conn_t *c)
{
    const cfg_t *cfg = c->cl.srv->cfg;
    uint64_t lim = cfg->cobl_hard > 0 ? cfg->cobl_hard : cfg->cobl_soft;
    return lim > 0 && lim < CONN_PAUSE_BYTES ? (size_t)lim : CONN_PAUSE_BYTES;
}

/* Whether c goes on being read and run with queued replies unread: under
 * a hard limit always (passing it closes c), under a soft limit alone until
 * it is passed, without limits never (c is paused instead). */
static bool conn_runs_on(const conn_t *c, size_t queued)
{
    const cfg_t *cfg = c->cl.srv->cfg;
    return cfg->cobl_hard > 0 ||
           (cfg->cobl_soft > 0 && queued <= cfg->cobl_soft);
}

/* Closes c for its output limits, with Redis's log line and counter. */
static void conn_close_over_limit(conn_t *c)
{
    char info[1024];
    size_t n = conn_describe(&c->cl, info, sizeof(info));
    if (n > 0 && info[n - 1] == '\n')
        info[n - 1] = '\0';
    log_warning("Client %s scheduled to be closed ASAP for overcoming of "
                "output buffer limits.",
                info);
    c->cl.srv->cobl_disconnections++;
    conn_close(c);
}

static void conn_start_reading(conn_t *c)
{
    if (!c->reading && !c->closing && !c->cl.close_after_reply) {
        if (uv_read_start(&c->h.stream, conn_on_alloc, conn_on_read) == 0)
            c->reading = true;
        else
            conn_close(c);
    }
}

static void conn_on_write(uv_write_t *req, int status)
{
    conn_write_t *w = (conn_write_t *)req;
    conn_t *c = w->c;
    c->writes_pending--;
    free(w->buf);
    free(w);
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    c->last_ms = server_now_ms(c->cl.srv); /* output moved: not idle */
    size_t queued = conn_out_queued(c);
    if (queued <= c->cl.srv->cfg->cobl_soft)
        c->obl_soft_since = 0;
    if (c->cl.close_after_reply) {
        if (c->writes_pending == 0)
            conn_close(c);
        return;
    }
    if (queued > conn_pause_bytes(c) / 2 && !conn_runs_on(c, queued))
        return;
    /* The commands left over from the last batch come before new input. */
    if (c->held) {
        conn_run(c);
        conn_resume_if_due(c->cl.srv);
    } else if (!c->reading) {
        conn_start_reading(c);
    }
}

static void conn_flush(conn_t *c)
{
    if (c->closing)
        return;
    server_t *s = c->cl.srv;
    /* Group commit: a connection whose replies wait for the log keeps
     * waiting however many batches it runs in the iteration; its replies
     * go out only once the log holds them (released, or an urgent write
     * and fsync made now by hold_replies). */
    if (s->hold_replies != NULL) {
        if (s->hold_replies(s, c->cl.out.len >= CONN_PAUSE_BYTES)) {
            if (!c->await_log) {
                c->await_log = true;
                s->nheld++;
            }
            return;
        }
        if (c->await_log) { /* what it waited for is on disk now */
            c->await_log = false;
            s->nheld--;
        }
    }
    if (resp_out_failed(&c->cl.out)) {
        log_warning("Closing client %s: out of memory for its replies",
                    c->addr);
        conn_close(c);
        return;
    }
    /* Most batches fit the socket buffer: write them at once, from the
     * connection's own buffer, which then stays for the next batch. Only
     * what the kernel did not take goes through a write request. On TLS
     * the replies are encrypted first and their records go the same way. */
    resp_out_t *o = &c->cl.out;
    if (c->tls != NULL) {
        if (tls_conn_encrypt(c->tls, o) < 0) {
            conn_close(c);
            return;
        }
        o = tls_conn_out(c->tls);
    }
    size_t sent = 0; /* bytes of o the kernel took already */
    if (c->writes_pending == 0 && o->len > 0 && o->len <= CONN_TRY_WRITE_MAX) {
        uv_buf_t now = uv_buf_init(o->buf, (unsigned)o->len);
        int n = uv_try_write(&c->h.stream, &now, 1);
        if (n > 0) {
            c->cl.srv->net_output_bytes += (uint64_t)n;
            if ((size_t)n == o->len) {
                resp_out_consume(o, (size_t)n);
                if (c->cl.close_after_reply)
                    conn_close(c);
                return;
            }
            sent = (size_t)n; /* the rest goes from buf + sent, unmoved */
        }
    }
    size_t len;
    char *buf = resp_out_take(o, &len);
    if (buf == NULL) {
        if (c->cl.close_after_reply && c->writes_pending == 0)
            conn_close(c);
        return;
    }
    conn_write_t *w = len <= UINT_MAX ? malloc(sizeof(*w)) : NULL;
    if (w == NULL) {
        free(buf);
        conn_close(c);
        return;
    }
    w->c = c;
    w->buf = buf;
    w->len = len - sent;
    uv_buf_t ub = uv_buf_init(buf + sent, (unsigned)(len - sent));
    int rc = uv_write(&w->req, &c->h.stream, &ub, 1, conn_on_write);
    if (rc < 0) {
        free(buf);
        free(w);
        conn_close(c);
        return;
    }
    c->writes_pending++;
    c->cl.srv->net_output_bytes += len - sent;

    /* uv_write has already tried to write: what is left queued is what
     * the client has not read. */
    const cfg_t *cfg = c->cl.srv->cfg;
    size_t queued = conn_out_queued(c);
    if (cfg->cobl_hard > 0 && queued > cfg->cobl_hard) {
        conn_close_over_limit(c);
        return;
    }
    /* A client without the password has no business making replies pile
     * up (Redis closes such clients too). */
    if (!c->cl.authenticated && queued > CONN_UNAUTH_OUT_MAX) {
        log_notice("Closing unauthenticated client %s: replies piling up",
                   c->addr);
        conn_close(c);
        return;
    }
    if (cfg->cobl_soft > 0 && queued > cfg->cobl_soft && c->obl_soft_since == 0)
        c->obl_soft_since = server_now_ms(c->cl.srv) | 1;
    if ((queued >= CONN_PAUSE_BYTES && !conn_runs_on(c, queued)) ||
        c->cl.close_after_reply)
        conn_stop_reading(c);
}

/* Records why the parser refused c's input, so the connection knows why it
 * closes whichever layer (plain or TLS) carried the bytes. */
static void conn_parser_failed(conn_t *c)
{
    c->proto_error = resp_parser_error(c->parser);
    c->proto_code = resp_parser_code(c->parser);
}

/* Answers the protocol error the parser found and marks c to close once
 * the answer is written. */
static void conn_protocol_error(conn_t *c)
{
    if (c->proto_error == NULL)
        conn_parser_failed(c);
    const char *why = c->proto_error;
    /* The tighter limits of a client that has not authenticated get
     * Redis's own wording, so the client can tell why it was cut off. */
    if (!c->cl.authenticated && why != NULL) {
        if (c->proto_code == RESP_PERR_MBULK)
            why = "Protocol error: unauthenticated multibulk length";
        else if (c->proto_code == RESP_PERR_BULK)
            why = "Protocol error: unauthenticated bulk length";
    }
    resp_add_errorf(&c->cl.out, "ERR %s", why != NULL ? why : "Protocol error");
    c->cl.close_after_reply = true;
    log_verbose("Protocol error (%s) from client: %s", why != NULL ? why : "?",
                c->addr);
}

/* Runs one command of c. CLIENT REPLY OFF, and SKIP for the command after
 * it, drop what the command answered, errors included, as Redis does for
 * every command it processes. false when the command waits for a pause to
 * end (nothing done, nothing answered). */
static bool conn_command(conn_t *c, const resp_cmd_t *cmd)
{
    client_t *cl = &c->cl;
    size_t before = cl->out.len;
    if (!cmd_dispatch(cl, cmd))
        return false;
    if ((cl->reply_off || cl->reply_skip) && cl->out.len >= before)
        cl->out.len = before;
    cl->reply_skip = cl->reply_skip_next;
    cl->reply_skip_next = false;
    return true;
}

/* Tries the command c keeps from a pause again: true once it ran. */
static bool conn_run_postponed(conn_t *c)
{
    resp_cmd_t cmd = {c->postponed->argc, c->postponed->v};
    if (!conn_command(c, &cmd))
        return false;
    argv_free(c->postponed);
    c->postponed = NULL;
    return true;
}

/* Dispatches the commands c's parser holds and writes their replies. When
 * the replies pile up past conn_pause_bytes() they are written; then, unless
 * conn_runs_on(), the rest stay in the parser (c->held) and c is not read;
 * conn_on_write calls this again once the writes drain. */
static void conn_run(conn_t *c)
{
    resp_cmd_t *cmd;
    const resp_peek_t *next = NULL;
    size_t ahead = 0; /* commands left of those last looked at */
    c->cl.srv->cmd_clock = cmdclock_now();
    for (;;) {
        size_t stop = conn_pause_bytes(c);
        /* Nothing is written while commands run: what is queued counts
         * towards the pause only for a client that is paused on it. */
        size_t queued = conn_out_queued(c);
        size_t base = conn_runs_on(c, queued) ? 0 : queued;
        int rc = 0;
        c->held = false;
        while (!c->cl.close_after_reply && !c->closing) {
            if (base + c->cl.out.len >= stop) {
                c->held = true;
                break;
            }
            /* A command that waits for a pause keeps the ones after it
             * waiting too, so that c's commands run in order. */
            if (c->postponed != NULL) {
                if (!conn_run_postponed(c))
                    break;
                continue;
            }
            /* In a pipeline, let the next commands start loading what they
             * will touch (the dispatcher's prefetch hooks) before running
             * them: one look per CONN_PEEK commands. A lone command gains
             * nothing from it. */
            if (ahead == 0 && multi_active(&c->cl)) {
                ahead = 1; /* queued: EXEC prefetches what it runs */
            } else if (ahead == 0) {
                /* The next command decides: one without a prefetch hook
                 * (PING) is not worth walking the pipeline for. */
                ahead = resp_parser_peek(c->parser, &next, 1, CONN_PEEK_ARGS);
                if (ahead == 1 && cmd_prefetches(&c->cl, &next[0]))
                    ahead = resp_parser_peek(c->parser, &next, CONN_PEEK,
                                             CONN_PEEK_ARGS);
                if (ahead > 1)
                    cmd_prefetch(&c->cl, next, ahead);
                else
                    ahead = CONN_PEEK; /* none or one: look again later */
            }
            if ((rc = resp_parser_next(c->parser, &cmd)) != 1)
                break;
            ahead--;
            if (!conn_command(c, cmd)) {
                /* The parser's view of it dies with the next parse. */
                c->postponed = argv_copy(cmd->argc, cmd->argv);
                if (c->postponed == NULL) {
                    conn_close(c);
                    return;
                }
                c->postponed_seq = ++c->cl.srv->postpone_seq;
                break;
            }
        }
        if (c->closing)
            return;
        if (rc == -EPROTO) {
            conn_protocol_error(c);
        } else if (rc < 0) {
            conn_close(c); /* out of memory */
            return;
        }
        /* The flush enforces the output limits on what the kernel did not
         * take, so a client that does not read is closed here, before any
         * further command runs. */
        conn_flush(c);
        c->cl.srv->cmd_clock = cmdclock_now(); /* the write is no command's */
        if (c->closing || !c->held)
            break;
        if (c->writes_pending > 0 && !conn_runs_on(c, conn_out_queued(c))) {
            conn_stop_reading(c);
            return;
        }
        /* The kernel took every byte at once, or c is limited rather than
         * paused: go on with the batch. */
    }
    size_t queued = conn_out_queued(c);
    if (!c->closing && !c->reading &&
        (queued <= conn_pause_bytes(c) / 2 || conn_runs_on(c, queued)))
        conn_start_reading(c);
}

/* What one read did to a connection's input. */
typedef enum conn_input {
    /* Buffered: run the commands that are complete. */
    CONN_INPUT_OK,
    /* TLS close_notify: run what came, then close. */
    CONN_INPUT_PEER_END,
    /* The parser refused the input, why is in c->proto_error: answer it,
     * then close. */
    CONN_INPUT_BAD_REQUEST,
    /* The handshake or a record failed (logged): send the session's alert,
     * then close. */
    CONN_INPUT_BAD_TLS,
    /* Out of memory: close at once. */
    CONN_INPUT_FAILED,
} conn_input_t;

/* Plaintext from a TLS session into the parser (tls_sink_fn). A refused
 * request stops the session's input; conn_input() tells it from a TLS
 * failure by the error recorded on c. */
static int conn_feed(void *ctx, const char *plain, size_t len)
{
    conn_t *c = ctx;
    int rc = resp_parser_feed(c->parser, plain, len);
    if (rc == -EPROTO)
        conn_parser_failed(c);
    return rc;
}

/* Passes len bytes read from c's socket to its parser, through its TLS
 * session on a TLS connection. */
static conn_input_t conn_input(conn_t *c, const char *buf, size_t len)
{
    if (c->tls == NULL) {
        int rc = resp_parser_feed(c->parser, buf, len);
        if (rc == -EPROTO) {
            conn_parser_failed(c);
            return CONN_INPUT_BAD_REQUEST;
        }
        return rc < 0 ? CONN_INPUT_FAILED : CONN_INPUT_OK;
    }
    int rc = tls_conn_input(c->tls, buf, len, conn_feed, c);
    if (c->proto_error != NULL)
        return CONN_INPUT_BAD_REQUEST;
    if (rc == 1)
        return CONN_INPUT_PEER_END;
    if (rc == -EPROTO)
        return CONN_INPUT_BAD_TLS;
    return rc < 0 ? CONN_INPUT_FAILED : CONN_INPUT_OK;
}

/* As Redis: the commands a transaction queued are input not run yet, so
 * together with the unparsed input they may not pass the query buffer
 * limit; a client that passes it is closed without a reply. */
static bool conn_over_query_limit(conn_t *c)
{
    size_t queued = multi_queued_bytes(&c->cl);
    if (queued == 0 || queued + resp_parser_pending(c->parser) <=
                           c->cl.srv->cfg->client_query_buffer_limit)
        return false;
    log_warning("Closing client that reached max query buffer length: %s",
                c->addr);
    conn_close(c);
    return true;
}

/* After the loop's poll: the clients that yielded are read again, each
 * once more at most before the others' input is polled. */
static void conn_on_read_resume(uv_check_t *h)
{
    server_t *s = h->data;
    for (conn_t *c = s->clients, *next; c != NULL && s->read_yields > 0;
         c = next) {
        next = c->next; /* a failed start closes c */
        if (!c->read_yield)
            continue;
        c->read_yield = false;
        s->read_yields--;
        if (!c->held)
            conn_start_reading(c);
    }
    CK_ASSERT(s->read_yields == 0);
    uv_check_stop(h);
}

/* A read that filled the whole slab likely left more in the kernel: c
 * stops being read until the loop has polled every other client (libuv
 * would otherwise read it up to 32 times in a row, and run what each read
 * brings). So one client's pipeline runs a slab's worth of commands per
 * loop turn, as Redis runs one read's. */
static void conn_yield_read(conn_t *c)
{
    server_t *s = c->cl.srv;
    if (!c->reading || c->closing || c->read_yield || !s->handles_open ||
        s->shutting_down)
        return;
    conn_stop_reading(c);
    c->read_yield = true;
    s->read_yields++;
    if (!uv_is_active((uv_handle_t *)&s->read_resume)) {
        s->read_resume.data = s;
        uv_check_start(&s->read_resume, conn_on_read_resume);
    }
}

static void conn_on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    conn_t *c = st->data;

    if (nread == UV_EOF && c->writes_pending > 0) {
        /* The client finished sending (a half-close, as "nc -q" does):
         * deliver the replies still queued, then close. */
        c->cl.close_after_reply = true;
        conn_stop_reading(c);
        return;
    }
    if (nread < 0) {
        conn_close(c); /* EOF or error */
        return;
    }
    if (nread == 0)
        return;
    c->cl.srv->net_input_bytes += (uint64_t)nread;
    c->last_ms = server_now_ms(c->cl.srv);
    if (!c->spoke && c->tls == NULL &&
        tls_looks_like_hello(buf->base, (size_t)nread)) {
        log_verbose("Closing client %s: a TLS handshake on a plain-text port",
                    c->addr);
        conn_close(c);
        return;
    }
    c->spoke = true;
    /* A pause that has run out releases the clients that waited before
     * this one's commands run. */
    conn_resume_if_due(c->cl.srv);
    switch (conn_input(c, buf->base, (size_t)nread)) {
    case CONN_INPUT_OK:
        if (conn_over_query_limit(c))
            break;
        conn_run(c);
        conn_resume_if_due(c->cl.srv);
        if ((size_t)nread == buf->len)
            conn_yield_read(c);
        break;
    case CONN_INPUT_PEER_END:
        /* The client has finished sending. What it sent before runs, then
         * the connection closes as at EOF. */
        conn_run(c);
        if (!c->closing && c->writes_pending > 0) {
            c->cl.close_after_reply = true;
            conn_stop_reading(c);
        } else {
            conn_close(c);
        }
        break;
    case CONN_INPUT_BAD_REQUEST:
        conn_protocol_error(c);
        conn_flush(c);
        break;
    case CONN_INPUT_BAD_TLS:
        if (c->cl.close_after_reply) {
            conn_close(c); /* an answer is already on its way: drop it */
            break;
        }
        c->cl.close_after_reply = true;
        conn_stop_reading(c);
        conn_flush(c);
        break;
    case CONN_INPUT_FAILED:
        conn_close(c);
        break;
    }
}

/* true for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
static bool is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const unsigned char *b =
            ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
        static const unsigned char lo[16] = {[15] = 1};
        static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
        return memcmp(b, lo, 16) == 0 ||
               (memcmp(b, mapped, 12) == 0 && b[12] == 127);
    }
    return false;
}

/* Whether c's peer is local (the unix socket or a loopback address);
 * unknown when the address cannot be read. */
static bool peer_local(conn_t *c, bool unknown)
{
    if (c->is_unix)
        return true;
    struct sockaddr_storage ss;
    int n = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &n) != 0)
        return unknown;
    return is_loopback(&ss);
}

/* Protected mode as in Redis: without a password, only local clients. */
static bool conn_denied(server_t *s, conn_t *c)
{
    if (!s->cfg->protected_mode || s->auth_required)
        return false;
    return !peer_local(c, true);
}

static void conn_reject(uv_handle_t *h, const char *msg, size_t len)
{
    /* uv_try_write on a fresh socket: the kernel buffer is empty, so the
     * short message goes out whole or not at all. */
    if (msg != NULL) {
        uv_buf_t b = uv_buf_init((char *)msg, (unsigned)len);
        (void)uv_try_write((uv_stream_t *)h, &b, 1);
    }
    uv_close(h, conn_on_reject_close);
}

static void conn_accept_kind(server_t *s, uv_stream_t *listener, bool is_unix,
                             bool tls);

void conn_accept(server_t *s, uv_stream_t *listener, bool is_unix)
{
    conn_accept_kind(s, listener, is_unix, false);
}

void conn_accept_tls(server_t *s, uv_stream_t *listener)
{
    conn_accept_kind(s, listener, false, s->tls != NULL);
}

static void conn_accept_kind(server_t *s, uv_stream_t *listener, bool is_unix,
                             bool tls)
{
    conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        log_warning("Out of memory accepting a client");
        return;
    }
    c->cl.srv = s;
    c->cl.is_conn = true;
    c->is_unix = is_unix;
    int rc = is_unix ? uv_pipe_init(s->loop, &c->h.pipe, 0)
                     : uv_tcp_init(s->loop, &c->h.tcp);
    if (rc < 0) {
        free(c);
        return;
    }
    c->h.handle.data = c;
    if ((rc = uv_accept(listener, &c->h.stream)) < 0) {
        log_verbose("Accepting client connection: %s", uv_strerror(rc));
        s->rejected_connections++;
        uv_close(&c->h.handle, conn_on_reject_close);
        return;
    }
    if (s->nclients >= s->cfg->maxclients) {
        s->rejected_connections++;
        /* A TLS client could not read the plain-text message. */
        conn_reject(&c->h.handle, tls ? NULL : maxclients_msg,
                    sizeof(maxclients_msg) - 1);
        return;
    }
    if (conn_denied(s, c)) {
        s->rejected_connections++;
        log_verbose("Denied a non-local client in protected mode");
        conn_reject(&c->h.handle, tls ? NULL : denied_msg,
                    sizeof(denied_msg) - 1);
        return;
    }
    c->parser = resp_parser_new(NULL);
    if (c->parser == NULL) {
        uv_close(&c->h.handle, conn_on_reject_close);
        return;
    }
    if (!is_unix) {
        uv_tcp_nodelay(&c->h.tcp, 1);
        if (s->cfg->tcp_keepalive > 0)
            uv_tcp_keepalive(&c->h.tcp, 1, (unsigned)s->cfg->tcp_keepalive);
    }
    uv_os_fd_t fd;
    c->fd = uv_fileno(&c->h.handle, &fd) == 0 ? (int)fd : -1;
    c->cl.id = ++s->next_client_id;
    c->cl.dbnum = 0;
    c->cl.db = s->dbs[0];
    c->cl.resp = 2;
    c->cl.authenticated = !s->auth_required;
    resp_out_init(&c->cl.out, 2);
    c->created_ms = c->last_ms = server_now_ms(s);
    conn_set_addrs(c);
    conn_apply_limits(c);
    if (tls && (c->tls = tls_conn_new(s->tls, c->addr)) == NULL) {
        log_warning("Out of memory accepting a TLS client");
        resp_parser_free(c->parser);
        uv_close(&c->h.handle, conn_on_reject_close);
        return;
    }

    c->next = s->clients;
    if (s->clients != NULL)
        s->clients->prev = c;
    s->clients = c;
    s->nclients++;
    s->total_connections++;
    conn_start_reading(c);
    log_debug("Accepted %s", c->addr);
}

client_t *conn_next_client(const server_t *s, const client_t *prev)
{
    conn_t *c = prev == NULL ? s->clients : conn_of(prev)->next;
    return c != NULL ? &c->cl : NULL;
}

const char *conn_addr(const client_t *cl)
{
    return conn_of(cl)->addr;
}

void conn_client_limits(client_t *cl)
{
    conn_apply_limits(conn_of(cl));
}

void conn_cron(server_t *s)
{
    uint64_t now = server_now_ms(s);
    const cfg_t *cfg = s->cfg;
    conn_t *next;
    conn_resume_if_due(s);
    for (conn_t *c = s->clients; c != NULL; c = next) {
        next = c->next;
        /* As Redis: idle means neither input nor output moved, so a client
         * that stopped reading while replies wait is closed too. Monitors
         * and clients waiting for a pause are not idle. */
        if (cfg->timeout > 0 && !c->closing && !c->cl.monitor &&
            c->postponed == NULL &&
            now - c->last_ms > (uint64_t)cfg->timeout * 1000) {
            log_verbose("Closing idle client %s", c->addr);
            conn_close(c);
            continue;
        }
        /* A handshake that does not finish in time (a client that opens
         * connections and stalls) gives its descriptor back. */
        if (c->tls != NULL && !tls_conn_ready(c->tls) && !c->closing &&
            now - c->created_ms >= (uint64_t)cfg->tls_handshake_timeout) {
            tls_conn_timed_out(c->tls);
            conn_close(c);
            continue;
        }
        if (c->obl_soft_since != 0 && cfg->cobl_soft > 0 &&
            conn_out_queued(c) > cfg->cobl_soft &&
            now - c->obl_soft_since >= (uint64_t)cfg->cobl_soft_seconds * 1000)
            conn_close_over_limit(c);
    }
}

const char *conn_laddr(const client_t *cl)
{
    return conn_of(cl)->laddr;
}

bool conn_is_unix(const client_t *cl)
{
    return conn_of(cl)->is_unix;
}

bool conn_is_local(const client_t *cl)
{
    return peer_local(conn_of(cl), false);
}

void conn_kill(client_t *victim, const client_t *by)
{
    if (victim == by)
        victim->close_after_reply = true; /* once this reply is written */
    else
        conn_close(conn_of(victim));
}

void conn_release_held(server_t *s)
{
    conn_t *next;
    for (conn_t *c = s->clients; c != NULL && s->nheld > 0; c = next) {
        next = c->next;
        if (!c->await_log)
            continue;
        c->await_log = false;
        s->nheld--;
        conn_flush(c);
    }
    s->nheld = 0; /* those that closed meanwhile */
}

void conn_push(client_t *cl)
{
    conn_t *c = conn_of(cl);
    if (!c->closing && cl->out.len > 0)
        conn_flush(c);
}

void conn_pause(server_t *s, uint64_t ms, bool all)
{
    uint64_t now = server_now_ms(s);
    uint64_t end = ms > UINT64_MAX - now ? UINT64_MAX : now + ms;
    if (s->pause_kind != 0 && now >= s->pause_end_ms)
        s->pause_kind = 0; /* run out, not yet noticed */
    /* As Redis: the longer end, and the stricter kind, of the pauses. */
    int kind = all ? SERVER_PAUSE_ALL : SERVER_PAUSE_WRITE;
    if (kind > s->pause_kind)
        s->pause_kind = kind;
    if (end > s->pause_end_ms)
        s->pause_end_ms = end;
}

void conn_unpause(server_t *s)
{
    s->pause_kind = 0;
    s->pause_end_ms = 0;
    s->pause_over = true;
}

static int conn_by_seq(const void *a, const void *b)
{
    uint64_t x = (*(conn_t *const *)a)->postponed_seq;
    uint64_t y = (*(conn_t *const *)b)->postponed_seq;
    return x < y ? -1 : x > y;
}

/* Runs the clients that waited for the pause, in the order they began to
 * wait. Called between commands, never from within one. */
static void conn_resume_if_due(server_t *s)
{
    if (s->pause_kind != 0 && server_now_ms(s) >= s->pause_end_ms) {
        s->pause_kind = 0;
        s->pause_over = true;
    }
    if (!s->pause_over)
        return;
    s->pause_over = false;
    size_t n = 0;
    for (conn_t *c = s->clients; c != NULL; c = c->next)
        n += c->postponed != NULL;
    if (n == 0)
        return;
    conn_t **wait = malloc(n * sizeof(*wait));
    if (wait == NULL) {
        s->pause_over = true; /* the cron tries again */
        return;
    }
    size_t k = 0;
    for (conn_t *c = s->clients; c != NULL && k < n; c = c->next)
        if (c->postponed != NULL)
            wait[k++] = c;
    qsort(wait, k, sizeof(*wait), conn_by_seq);
    /* A closed client stays allocated until its close callback, which
     * runs on a later loop iteration, so every pointer stays good. */
    for (size_t i = 0; i < k; i++)
        if (!wait[i]->closing && wait[i]->postponed != NULL)
            conn_run(wait[i]);
    free(wait);
}
