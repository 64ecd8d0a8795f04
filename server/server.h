/*
 * server.h - what command modules see of the daemon: the client, the command
 * table entry, and the services the server gives (configuration, dirty
 * counter, memory headroom, seeds, hit counters, write denial).
 *
 * Contract: everything here lives on the event loop thread.
 */
#ifndef SERVER_H
#define SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmdarg.h"
#include "config.h"
#include "keyspace.h"
#include "resp.h"
#include "resp_out.h"

typedef struct server server_t;
typedef struct client client_t;

/* What a command handler may use of its client. The connection module owns
 * the rest (conn.h's accessors describe it). */
struct client {
    server_t *srv;
    uint64_t id;
    int dbnum;   /* SELECTed database */
    ks_db_t *db; /* srv's database dbnum */
    int resp;    /* 2 or 3 (HELLO) */
    bool authenticated;
    /* The ACL user (acl.h), NULL for the default user, and its name for
     * CLIENT LIST (NULL: "default"). */
    struct acl_user *user;
    const char *user_name;
    bool close_after_reply; /* QUIT, protocol errors */
    /* A connection's client (conn.c sets it); false for the client that
     * replays a file of commands and for one made without a connection. */
    bool is_conn;
    bool monitor; /* MONITOR: fed every command (monitor.h) */
    /* CLIENT REPLY: OFF drops every reply; SKIP drops the next command's
     * (skip_next until the SKIP itself has ended, then skip). */
    bool reply_off, reply_skip, reply_skip_next;
    bool no_evict, no_touch;  /* CLIENT NO-EVICT, CLIENT NO-TOUCH */
    char *name;               /* CLIENT SETNAME, or NULL */
    char *lib_name, *lib_ver; /* CLIENT SETINFO, or NULL */
    /* The last command looked up (its static name for CLIENT LIST) and its
     * subcommand, or NULL; the running one during a call. */
    const struct cmd_def *cmd, *sub;
    resp_out_t out; /* replies are appended here */
    /* Transaction state (multi.h), NULL until MULTI or WATCH. */
    struct multi_client *mstate;
};

/* Command flags (CMD_*) and argument docs (cmd_arg_t) are cmdarg.h's, the
 * vocabulary every command host shares. */

/* The legacy key range of an entry, for its designated initializer. */
#define CMD_KEYRANGE(first, last, step)                                        \
    .first_key = (first), .last_key = (last), .key_step = (step)

typedef void cmd_proc_t(client_t *c, int argc, const arg_t *argv);

typedef struct cmd_def {
    const char *name; /* lower case, e.g. "cf.add" */
    int arity;        /* N exact, -N at least N (name included) */
    unsigned flags;
    cmd_proc_t *proc;
    /* Optional: starts loading what the command will touch, for a command
     * seen ahead in a pipeline. argv holds only the first min(argc, 3)
     * arguments, not NUL-terminated. Called only for a client allowed to
     * run the command. */
    void (*prefetch)(client_t *c, const struct cmd_def *d, int argc,
                     const arg_t *argv);
    const void *data; /* the family's own description, for its procs */
    int first_key, last_key, key_step; /* COMMAND INFO legacy key range */
    /* ACL categories (ACL_CAT_*) beyond those the flags imply: see
     * cmd_acl_cats(). */
    uint64_t acl;
    /* Key specs with access flags, begin 0 ending the list; an entry that
     * has none but a first_key stands for one spec over the legacy range
     * without flags (cmd_keys_each()). */
    cmd_keyspec_t keyspecs[CMD_MAX_KEYSPECS];
    const char *group; /* "connection" "generic" "server" "cf" ... */
    const char *summary;
    const char *since;
    const char *complexity;
    const cmd_arg_t *args;             /* NULL-name terminated, or NULL */
    const struct cmd_def *subcommands; /* e.g. CLIENT SETNAME; NULL-name
                                          terminated, or NULL */
} cmd_def_t;

/* Services the server gives to command handlers. */
const cfg_t *server_cfg(const server_t *s);
/* Counts n changes for the save points. */
void server_dirty(server_t *s, uint64_t n);
/* Bytes that may still be allocated before maxmemory is reached (0 when it
 * is). With maxmemory 0 the limit is the machine's physical memory, or the
 * cgroup memory limit of a container when that is lower; UINT64_MAX only
 * when neither is known. */
uint64_t server_memory_headroom(const server_t *s);
/* A fresh random seed for a new filter. */
uint64_t server_seed(server_t *s);
/* Key-change signals, for what must hear of every change to a key: they
 * call WATCH's listeners (multi.h) directly, and later keyspace
 * notifications too:
 *  - server_key_changed(): key in database dbnum was written, created,
 *    deleted, renamed (called for both names), moved, restored, given or
 *    cleared a timeout, or expired; once per key per command, after the
 *    change.
 *  - server_db_changing(): every key of dbnum is about to go (FLUSHDB, and
 *    FLUSHALL for each database); called before, so that a listener can see
 *    which keys exist.
 *  - server_dbs_swapping(): databases a and b are about to trade contents
 *    (SWAPDB); called before.
 * Each costs one test while no key is watched. */
void server_key_changed(server_t *s, int dbnum, const void *key, size_t len);
void server_db_changing(server_t *s, int dbnum);
void server_dbs_swapping(server_t *s, int a, int b);

/* Whether CLIENT PAUSE (WRITE or ALL) is in force: as Redis 7, nothing is
 * deleted by expiry meanwhile, so that a paused server's data stays as it
 * is (a replica or a failover may be taking it over). */
bool server_writes_paused(const server_t *s);

/* CF lookups count as keyspace hits (key exists) or misses. */
void server_keyspace_hit(server_t *s, bool hit);
/* Write denial (MISCONF): persistence sets a message after a failed
 * background save and clears it (NULL) after a good one; the dispatcher
 * refuses CMD_WRITE commands with it meanwhile. msg must outlive its use. */
void server_deny_writes(server_t *s, const char *msg);
const char *server_writes_denied(const server_t *s); /* or NULL */
/* The append-only file's denial (msg, or NULL to lift it): it applies
 * whatever stop-writes-on-bgsave-error says, as Redis's AOF write errors. */
void server_deny_writes_aof(server_t *s, const char *msg);

/* The replies commands share are reply.h's. */

#endif /* SERVER_H */
