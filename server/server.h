/*
 * server.h - the server's shared state and the command interface that every
 * command module (cmd_*.c) implements.
 *
 * Contract: everything here lives on the event loop thread.
 */
#ifndef SERVER_H
#define SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "keyspace.h"
#include "resp.h"
#include "resp_out.h"

typedef struct server server_t;
typedef struct client client_t;

/* What a command handler may use of its client. The connection module owns
 * the rest (it embeds this struct first). */
struct client {
    server_t *srv;
    uint64_t id;
    int dbnum;          /* SELECTed database */
    ks_db_t *db;        /* srv's database dbnum */
    int resp;           /* 2 or 3 (HELLO) */
    bool authenticated;
    bool close_after_reply; /* QUIT, protocol errors */
    char *name;         /* CLIENT SETNAME, or NULL */
    resp_out_t out;     /* replies are appended here */
};

/* Command flags (for COMMAND INFO and the dispatcher). */
enum {
    CMD_WRITE = 1 << 0,    /* changes data: bumps dirty, refused on MISCONF */
    CMD_READONLY = 1 << 1,
    CMD_DENYOOM = 1 << 2,  /* may allocate: refused over maxmemory */
    CMD_FAST = 1 << 3,
    CMD_NOAUTH = 1 << 4,   /* allowed before AUTH */
    CMD_ADMIN = 1 << 5,
    CMD_LOADING = 1 << 6,
    CMD_STALE = 1 << 7,
};

/* Argument documentation for COMMAND DOCS, as Redis 7 reports it. */
enum { CMD_ARG_OPTIONAL = 1 << 0, CMD_ARG_MULTIPLE = 1 << 1,
       CMD_ARG_MULTIPLE_TOKEN = 1 << 2 };
typedef struct cmd_arg {
    const char *name;
    const char *type; /* "key" "string" "integer" "double" "pattern"
                         "pure-token" "oneof" "block" */
    const char *token; /* or NULL */
    unsigned flags;
    const struct cmd_arg *sub; /* for oneof/block: NULL-name terminated */
} cmd_arg_t;

typedef void cmd_proc_t(client_t *c, int argc, const resp_arg_t *argv);

typedef struct cmd_def {
    const char *name;     /* lower case, e.g. "cf.add" */
    int arity;            /* N exact, -N at least N (name included) */
    unsigned flags;
    cmd_proc_t *proc;
    int first_key, last_key, key_step; /* COMMAND INFO key spec */
    const char *group;    /* "connection" "generic" "server" "cf" ... */
    const char *summary;
    const char *since;
    const char *complexity;
    const cmd_arg_t *args; /* NULL-name terminated, or NULL */
    const struct cmd_def *subcommands; /* e.g. CLIENT SETNAME; NULL-name
                                          terminated, or NULL */
} cmd_def_t;

/* Every module exports its table; the dispatcher knows them all. */
extern const cmd_def_t cmd_cf_table[];      /* cmd_cf.c; NULL-name ends it */
extern const cmd_def_t cmd_server_table[];  /* server commands */

/* Given a look at the next commands of a pipeline, starts loading the
 * filter buckets that the single-item CF commands among them will probe, so
 * that their cache misses overlap instead of adding up (cmd_cf.c). */
void cmd_cf_prefetch(client_t *c, const resp_peek_t *next, size_t n);

/* Services the server gives to command handlers. */
const cfg_t *server_cfg(const server_t *s);
/* Counts n changes for the save points. */
void server_dirty(server_t *s, uint64_t n);
/* true when allocating extra more bytes would pass maxmemory. */
bool server_over_maxmemory(const server_t *s, uint64_t extra);
/* Bytes that may still be allocated before maxmemory is reached (0 when it
 * is). With maxmemory 0 the limit is the machine's physical memory;
 * UINT64_MAX only when that is unknown. */
uint64_t server_memory_headroom(const server_t *s);
/* A fresh random seed for a new filter. */
uint64_t server_seed(server_t *s);
/* CF lookups count as keyspace hits (key exists) or misses. */
void server_keyspace_hit(server_t *s, bool hit);

/* Common replies with Redis's wording. */
void reply_wrong_arity(client_t *c, const char *cmd);  /* ERR wrong number of arguments for 'x' command */
void reply_syntax_error(client_t *c);                  /* ERR syntax error */
void reply_ok(client_t *c);

#endif /* SERVER_H */
