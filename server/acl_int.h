/*
 * acl_int.h - the ACL module's state, shared by acl.c (users, rules, the
 * check), acl_desc.c (how a user is described) and cmd_acl.c (the ACL
 * command).
 *
 * Contract: event loop thread only.
 */
#ifndef ACL_INT_H
#define ACL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "acl.h"

/* Key pattern permissions. */
#define ACL_PERM_R 1u
#define ACL_PERM_W 2u

/* User flags, in the order ACL GETUSER and ACL LIST show them. */
#define ACL_U_ON 1u
#define ACL_U_OFF 2u
#define ACL_U_NOPASS 4u
#define ACL_U_SKIP_SANITIZE 8u
#define ACL_U_SANITIZE 16u

/* How a key pattern matches, decided once when it is added, so that the
 * common patterns cost a compare: "seen:*" is the prefix "seen:", "k1" is
 * the key itself, and the rest go through the glob matcher. */
enum { ACL_PAT_GLOB, ACL_PAT_PREFIX, ACL_PAT_EXACT };

typedef struct acl_pat {
    char *s; /* NUL-terminated copy */
    size_t len;
    unsigned flags;     /* ACL_PERM_*; 0 for a channel */
    unsigned char kind; /* ACL_PAT_* */
} acl_pat_t;

/* "+cmd|arg": a first argument allowed for a command otherwise denied. */
typedef struct acl_first {
    unsigned id;
    char *arg;
} acl_first_t;

typedef struct acl_sel {
    uint64_t *bits; /* allowed command ids, (cmd_id_count() + 63) / 64 words */
    bool future;    /* +@all: the commands of the future too */
    bool allcmds;   /* every bit set since +@all: the bits need no test */
    bool allkeys, allchannels;
    acl_pat_t *pats, *chans;
    size_t npats, nchans;
    acl_first_t *firsts;
    size_t nfirsts;
    /* The key patterns indexed by the first byte they require, so that a
     * key is tried against those that can match only: idx holds the
     * indexes into pats of the nany patterns that may match any first
     * byte (globs, "*"), then those of the others grouped by first byte,
     * byte b's from bstart[b] to bstart[b + 1] (counted after nany).
     * acl_sel_index() rebuilds it whenever pats changes. */
    uint32_t *idx;
    uint32_t nany;
    uint32_t bstart[257];
} acl_sel_t;

typedef char acl_hash_t[65]; /* SHA-256 hex, NUL-terminated */

struct acl_user {
    char *name;
    size_t namelen;
    unsigned flags; /* ACL_U_* */
    acl_hash_t *pass;
    size_t npass;
    acl_sel_t *sels; /* sels[0] is the root selector */
    size_t nsels;
};

typedef struct acl {
    acl_user_t **users; /* sorted by name, as Redis's rax */
    size_t nusers;
    acl_user_t *dflt;
    /* The client whose command runs (its own deletion closes it after
     * the reply), or NULL. */
    const client_t *running;
    uint64_t denied[4]; /* auth, cmd, key, channel */
} acl_t;

/* Whether the len bytes at s are the word lower, in any case. */
static inline bool acl_word_is(const char *s, size_t len, const char *lower)
{
    size_t n = strlen(lower);
    return len == n && strncasecmp(s, lower, n) == 0;
}

/* Whether sel's bitmap allows the command of id id. */
static inline bool acl_bit(const acl_sel_t *sel, unsigned id)
{
    return (sel->bits[id / 64] >> (id % 64)) & 1;
}

/* Two SHA-256 hex hashes compared in time that does not depend on where
 * they differ. */
static inline bool acl_hash_eq(const char *a, const char *b)
{
    unsigned diff = 0;
    for (int i = 0; i < 64; i++)
        diff |= (unsigned)(a[i] ^ b[i]);
    return diff == 0;
}

/* One rule on a selector or on a user: 0 or an errno value naming the
 * error (acl_op_error()). */
int acl_sel_op(const server_t *s, acl_sel_t *sel, const char *op, size_t len);
int acl_user_op(const server_t *s, acl_user_t *u, const char *op, size_t len);
const char *acl_op_error(int err);

/* Rebuilds sel's pattern index (idx, nany, bstart); false when out of
 * memory (then the index is empty and every pattern is tried). */
bool acl_sel_index(acl_sel_t *sel);

/* Selector and user state: copies, blank, release. */
int acl_sel_copy(acl_sel_t *dst, const acl_sel_t *src, size_t nwords);
void acl_sel_free(acl_sel_t *sel);
void acl_sel_category(const server_t *s, acl_sel_t *sel, uint64_t cat,
                      bool allow);
int acl_user_blank(const server_t *s, acl_user_t *u);
int acl_user_copy(const server_t *s, acl_user_t *dst, const acl_user_t *src);
void acl_user_clear(acl_user_t *u);
void acl_user_destroy(acl_user_t *u);
/* The user named name in a, created blank-less (no state) when missing;
 * NULL when out of memory. */
acl_user_t *acl_user_new(acl_t *a, const char *name, size_t len);

/* The user named name in a, or NULL. */
acl_user_t *acl_find_in(const acl_t *a, const char *name, size_t len);

/* The category bit of name (without '@'), or 0. */
uint64_t acl_cat_flag(const char *name, size_t len);
/* The id of "cmd" or "cmd|sub", or -1. */
int acl_lookup_id(const server_t *s, const char *name, size_t len);

/* Calls fn for each rule of argv, a selector "(a b)" spread over several
 * arguments joined into one. 0; fn's non-zero return; or -EINVAL with
 * Redis's "Unmatched parenthesis" error in err. */
typedef int acl_rule_fn(void *ctx, const char *op, size_t len);
int acl_merge_args(int argc, const arg_t *argv, acl_rule_fn *fn, void *ctx,
                   char *err, size_t errlen);
/* Applies argv's rules to tmp; 0, or non-zero with Redis's error in err. */
int acl_apply(const server_t *s, acl_user_t *tmp, int argc, const arg_t *argv,
              char *err, size_t errlen);

/* Recomputes s->auth_required from the default user. */
void acl_sync_auth(server_t *s);
/* Resets the clients of u to the default user and closes them (by, the
 * running client, after its reply). */
void acl_unlink_clients(server_t *s, const acl_user_t *u, const client_t *by);

#endif /* ACL_INT_H */
