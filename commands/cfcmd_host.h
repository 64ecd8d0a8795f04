/*
 * cfcmd_host.h - what the CF.* family asks of a host (cfcmd_host_t: the
 * keyspace, a reply sink, change notification, memory headroom, seeds and
 * defaults) and the shape of one command of the family (cfcmd_def_t).
 * cfcmd.h includes it; commands/ itself includes it where the whole
 * family's header would close a cycle.
 *
 * Contract: types only.
 */
#ifndef CFCMD_HOST_H
#define CFCMD_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cf.h"
#include "cfcmd_opt.h"
#include "cmdarg.h"

/* What a host gives the commands. Every function gets the host's per-call
 * context h (for the daemon, the client). */
typedef struct cfcmd_host {
    /* The filter under key, or NULL when the key is absent. Returns
     * -EINVAL when the key holds another type (the command answers
     * WRONGTYPE), else 0. A lookup for a read counts a keyspace hit or
     * miss; prefetch lookups pass read = false and count nothing. */
    int (*find)(void *h, const arg_t *key, bool read, cf_filter_t **out);
    /* Stores *f, a new filter, under key (absent: find() said so). The host
     * takes the filter on 0 and may have moved it: *f is then its address
     * (the one passed is stale). -ENOMEM leaves *f unchanged and the
     * filter to the caller. */
    int (*create)(void *h, const arg_t *key, cf_filter_t **f);
    /* The filter under key changed: changes counts the writes (the host's
     * dirty counter, replication), and the filter's size may have changed
     * (the host recounts its memory). Called once per command that
     * changed something, after the change. */
    void (*changed)(void *h, const arg_t *key, cf_filter_t *f,
                    uint64_t changes);
    /* Bytes that may still be allocated (UINT64_MAX: no known bound). With
     * *maxmemory set the bound is the host's maxmemory (the refusal is
     * Redis's OOM error), else the machine's memory. */
    uint64_t (*headroom)(void *h, bool *maxmemory);
    /* A seed for a new filter's hash. */
    uint64_t (*seed)(void *h);
    /* The defaults for filters created without parameters. */
    const cfcmd_defaults_t *(*defaults)(void *h);

    /* The reply sink. proto() is 2 or 3 (HELLO); the shapes follow it. */
    int (*proto)(void *h);
    void (*reply_int)(void *h, long long v);
    void (*reply_bool)(void *h, bool b); /* RESP2 :1/:0 */
    void (*reply_simple)(void *h, const char *s);
    void (*reply_error)(void *h, const char *s); /* the whole text */
    void (*reply_bulk)(void *h, const void *p, size_t len);
    void (*reply_null)(void *h);
    void (*reply_double)(void *h, double d);
    void (*reply_array)(void *h, size_t n);
    void (*reply_map)(void *h, size_t npairs); /* RESP2: a 2n array */
    /* Optional, NULL when the host has none (CFCMD_HOST_INIT leaves it
     * so): n reply_bool()s in one call, for the bulk commands' items. */
    void (*reply_bools)(void *h, const bool *v, size_t n);

    /* Optional (NULL: the wall clock): the time, unix milliseconds, that
     * filters with a window answer for (a host may offset it for tests),
     * or CFCMD_NO_CLOCK while it replays a log or a primary's stream. */
    uint64_t (*now_ms)(void *h);
    /* Optional (NULL: nothing to do): a write to a filter with a window
     * depends on the time, so its log or replica must carry the time.
     * The running command changed such a filter; its adds had time at (unix
     * ms) and its items are items[0..nitems), its last nitems arguments. A
     * host that logs or replicates it does so in the form
     * cfcmd_timed_form() gives (CF.INSERT[NX] key AT at ITEMS, then the
     * items) instead of as it was sent. Called once, after the change and
     * its changed(). */
    void (*log_timed)(void *h, bool nx, const arg_t *key, uint64_t at,
                      const arg_t *items, size_t nitems);
} cfcmd_host_t;

/* The initializer of a host whose functions are named P##find,
 * P##create, ... P##map (P##int for reply_int, and so on); the optional
 * ones left NULL. CFCMD_HOST_INIT_FIELDS(P) is its list of fields, for a
 * host that sets an optional one too. */
#define CFCMD_HOST_INIT_FIELDS(P)                                              \
    .find = P##find, .create = P##create, .changed = P##changed,               \
    .headroom = P##headroom, .seed = P##seed, .defaults = P##defaults,         \
    .proto = P##proto, .reply_int = P##int, .reply_bool = P##bool,             \
    .reply_simple = P##simple, .reply_error = P##error, .reply_bulk = P##bulk, \
    .reply_null = P##null, .reply_double = P##double, .reply_array = P##array, \
    .reply_map = P##map
#define CFCMD_HOST_INIT(P)                                                     \
    {                                                                          \
        CFCMD_HOST_INIT_FIELDS(P)                                              \
    }

/* now_ms()'s answer while a host replays commands (an AOF, a replica's
 * stream): the times the commands carry (AT) are then the only clock, so
 * the replay makes the same filter, byte for byte, as the original. */
#define CFCMD_NO_CLOCK UINT64_MAX

typedef void cfcmd_proc_t(const cfcmd_host_t *host, void *h, int argc,
                          const arg_t *argv);

/* What a host's log or replica gets when a command creates a filter
 * (cfcmd_def_t.created). The new filter's hash seed is random, so a replay
 * must get the filter's header (CF.LOADCHUNK key 1 <header>), not the
 * command that drew the seed. */
typedef enum cfcmd_created {
    /* The header, then the command: a write to an absent key (CF.ADD,
     * CF.INSERT) makes a filter and fills it. */
    CFCMD_CREATED_BEFORE = 0,
    /* The header instead of the command: the empty filter is the
     * command's whole effect (CF.RESERVE). */
    CFCMD_CREATED_INSTEAD,
    /* The command alone: its own bytes are the filter (CF.LOADCHUNK). */
    CFCMD_CREATED_SELF
} cfcmd_created_t;

/* One command of the family, with what a host's table and COMMAND DOCS
 * need. Keys: argument 1 only (first = last = step = 1), with the access
 * its key spec states. */
typedef struct cfcmd_def {
    const char *name; /* lower case, e.g. "cf.add" */
    int arity;        /* N exact, -N at least N (name included) */
    unsigned flags;   /* CMD_* of cmdarg.h */
    /* ACL categories beyond those the flags imply (cmd_acl_implied()):
     * ACL_CAT_CUCKOO for every command, as RedisBloom files them. */
    uint64_t acl;
    /* The key spec of argument 1 (cmdarg.h), begin 0 ending the list. */
    cmd_keyspec_t keyspecs[CMD_MAX_KEYSPECS];
    cfcmd_proc_t *proc;
    /* Starts loading what the command will probe (argv holds at least the
     * name, key and first item), so that the cache misses of the commands
     * of a pipeline overlap. NULL when not worth it. */
    cfcmd_proc_t *prefetch;
    cfcmd_created_t created; /* for a command that may create a filter */
    const char *summary;
    const char *since;
    const char *complexity;
    const cmd_arg_t *args; /* NULL-name terminated */
} cfcmd_def_t;

#endif /* CFCMD_HOST_H */
