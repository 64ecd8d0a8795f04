/*
 * config.h - the server's configuration: embedded defaults, a redis.conf-
 * style file of "directive value..." lines, "--directive value" overrides on
 * the command line, CONFIG GET (glob patterns) and CONFIG SET.
 *
 * Contract: directive names follow Redis where Redis has one. Errors are
 * reported as text naming the file, the line and the reason (for start-up)
 * or Redis's CONFIG SET wording. Strings in cfg_t are owned by it and freed
 * by cfg_free(). Not thread-safe.
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfcmd.h"

#define CFG_MAX_BIND 16
#define CFG_MAX_SAVE 16

enum { CFG_LOG_DEBUG, CFG_LOG_VERBOSE, CFG_LOG_NOTICE, CFG_LOG_WARNING };
enum { CFG_TLS_AUTH_NO, CFG_TLS_AUTH_YES, CFG_TLS_AUTH_OPTIONAL };
/* appendfsync, in the order Redis lists them in its error text */
enum { CFG_FSYNC_EVERYSEC, CFG_FSYNC_ALWAYS, CFG_FSYNC_NO };
/* enable-debug-command, in the order Redis lists them */
enum { CFG_DEBUG_NO, CFG_DEBUG_YES, CFG_DEBUG_LOCAL };

typedef struct cfg_save_point {
    int64_t seconds;
    int64_t changes;
} cfg_save_point_t;

#define CFG_ACL_PUBSUB_ALL 0
#define CFG_ACL_PUBSUB_RESET 1

/* A "user name rule..." line: its words after "user". */
typedef struct cfg_user {
    char **argv; /* argc words, NULL-terminated */
    int argc;
} cfg_user_t;

typedef struct cfg {
    char *config_file; /* absolute path, or NULL when none was given */

    /* network */
    int port;                 /* 6379; 0 = no TCP listener */
    char *bind[CFG_MAX_BIND]; /* "127.0.0.1" by default */
    int nbind;
    char *unixsocket;         /* NULL = none */
    unsigned unixsocketperm;  /* octal, 0 = default umask */
    bool protected_mode;      /* yes */
    int tcp_backlog;          /* 511 */
    int tcp_keepalive;        /* 300 seconds */
    int timeout;              /* 0 = never close idle clients */
    int enable_debug_command; /* CFG_DEBUG_NO */
    bool activerehashing;     /* yes: the cron moves a resize on */
    /* lazyfree-lazy-*: all no, as in Redis 7. There is no eviction (the
     * policy is noeviction), so lazy_eviction is only kept. */
    bool lazyfree_lazy_eviction;
    bool lazyfree_lazy_expire;     /* expired filters freed off the loop */
    bool lazyfree_lazy_server_del; /* RENAME's and RESTORE's overwrites */
    bool lazyfree_lazy_user_del;   /* DEL as UNLINK */
    bool lazyfree_lazy_user_flush; /* FLUSHALL/FLUSHDB without a flag: ASYNC */

    /* TLS (Redis's directives; the Unix socket stays plain) */
    int tls_port;        /* 0 = no TLS listener */
    char *tls_cert_file; /* PEM; NULL = none */
    char *tls_key_file;
    char *tls_key_file_pass;
    char *tls_ca_cert_file; /* CAs that sign client certificates */
    char *tls_ca_cert_dir;
    int tls_auth_clients;           /* CFG_TLS_AUTH_YES */
    char *tls_protocols;            /* "TLSv1.2 TLSv1.3" */
    char *tls_ciphers;              /* TLSv1.2 cipher list; NULL = OpenSSL's */
    char *tls_ciphersuites;         /* TLSv1.3 suites; NULL = OpenSSL's */
    bool tls_prefer_server_ciphers; /* no */
    bool tls_session_caching;       /* yes */
    int tls_session_cache_size;     /* 20480 sessions */
    int tls_session_cache_timeout;  /* 300 seconds */
    int tls_handshake_timeout;      /* 10000 ms, then the client is closed */

    /* security and limits */
    char *requirepass; /* NULL = none */
    char *aclfile;     /* NULL = none: users from "user" lines */
    cfg_user_t *users; /* the "user" lines, in order */
    int nusers;
    uint64_t maxclients;         /* 10000 */
    uint64_t maxmemory;          /* 0 = no limit (bytes; "1gb" accepted) */
    uint64_t proto_max_bulk_len; /* 512mb */
    uint64_t client_query_buffer_limit; /* 1gb */
    uint64_t cobl_hard; /* client-output-buffer-limit normal: 0 0 0 */
    uint64_t cobl_soft;
    int cobl_soft_seconds;

    /* keyspace and persistence */
    int databases;                       /* 16 */
    char *dir;                           /* "." */
    char *dbfilename;                    /* "dump.cuckoo" */
    cfg_save_point_t save[CFG_MAX_SAVE]; /* 3600 1 300 100 60 10000 */
    int nsave;                           /* 0 = snapshots only on demand */
    bool stop_writes_on_bgsave_error;    /* yes */

    /* the append-only file (aof.h) */
    bool appendonly;                 /* no */
    char *appenddirname;             /* "appendonlydir", under dir */
    char *appendfilename;            /* "appendonly.aof", the files' prefix */
    int appendfsync;                 /* CFG_FSYNC_EVERYSEC */
    bool no_appendfsync_on_rewrite;  /* no */
    int auto_aof_rewrite_percentage; /* 100; 0 = no automatic rewrite */
    uint64_t auto_aof_rewrite_min_size; /* 64mb */
    bool aof_load_truncated;            /* yes */
    bool aof_timestamp_enabled;         /* no: "yes" is refused (unsupported) */
    bool aof_use_rdb_preamble;          /* yes; the base is always a snapshot */
    /* Redis's hidden debugging settings of the start-up load: a delay per
     * key or command loaded (microseconds; negative -n: 1 us with
     * probability 1/n), and how many bytes are loaded between two rounds of
     * serving the clients (LOADING replies, INFO). */
    int64_t key_load_delay; /* 0 */
    /* Hidden, for tests: milliseconds added to the clock filters with a
     * window answer for (CF.RESERVE ... WINDOW), so a test moves time on
     * instead of sleeping through a window. */
    int64_t cf_window_clock_offset;                 /* 0 */
    uint64_t loading_process_events_interval_bytes; /* 2mb */

    /* monitoring */
    int64_t slowlog_log_slower_than; /* 10000 us; negative: off, 0: all */
    uint64_t slowlog_max_len;        /* 128 entries */
    uint64_t acllog_max_len;         /* 128 entries (ACL LOG) */
    int acl_pubsub_default; /* CFG_ACL_PUBSUB_RESET: new users' channels */
    uint64_t latency_monitor_threshold; /* 0 ms = off */

    /* process */
    int loglevel;   /* CFG_LOG_NOTICE */
    char *logfile;  /* "" = stdout */
    char *pidfile;  /* NULL = none */
    bool daemonize; /* no */

    /* The cf-* directives: defaults for filters a command creates without
     * their own (bucket 4, 12 bits unless cf-error-rate sets a rate, 500
     * iterations, expansion 1, 32 sub-filters, initial size 1024). */
    cfcmd_defaults_t cf;
} cfg_t;

/* Fills c with the embedded defaults. 0 or -ENOMEM. */
int cfg_init(cfg_t *c);
void cfg_free(cfg_t *c);

/* Adds a "user" line's words (argv[0] the name). 0 or -ENOMEM. */
int cfg_add_user(cfg_t *c, char **argv, int argc);

/* CONFIG GET: calls fn(name, value) for every directive matching the glob
 * pattern (case-insensitive), values formatted as Redis does ("save" as
 * "3600 1 300 100", sizes in bytes, booleans "yes"/"no"). */
typedef void cfg_get_fn(void *ctx, const char *name, const char *value);
void cfg_get(const cfg_t *c, const char *pattern, cfg_get_fn *fn, void *ctx);

/* CONFIG SET of one directive at run time. 0, or -EINVAL with Redis's wording
 * in err ("ERR Unknown option or number of arguments for CONFIG SET -
 * 'x'" / "ERR CONFIG SET failed (possibly related to argument 'x') - ..."),
 * including for directives that cannot change at run time. */
int cfg_set(cfg_t *c, const char *name, const char *value, char *err,
            size_t errlen);

#endif /* CONFIG_H */
