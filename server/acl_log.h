/*
 * acl_log.h - the ACL denial log (ACL LOG), as Redis 7.0 keeps it: newest
 * first, similar denials within a minute counted on one entry, at most
 * acllog-max-len entries.
 *
 * Contract: event loop thread only. The log is allocated on first use and
 * released by acl_log_free().
 */
#ifndef ACL_LOG_H
#define ACL_LOG_H

#include <stddef.h>

#include "server_int.h"

/* The reasons of a denial, as Redis's ACL LOG names them (ACL_OK: none). */
enum {
    ACL_OK = 0,
    ACL_DENIED_CMD,
    ACL_DENIED_KEY,
    ACL_DENIED_AUTH,
    ACL_DENIED_CHANNEL
};

/* Adds a denial of c for reason (acl.h's ACL_DENIED_*) in context ctx
 * (CMD_ACL_*): object is the command's full name, the key, or for AUTH
 * the command name; username the user concerned. */
void acl_log_add(client_t *c, int reason, int ctx, const char *object,
                 size_t olen, const char *username, size_t ulen);
/* ACL LOG [count] (negative: none), ACL LOG RESET. */
void acl_log_reply(client_t *c, long long count);
void acl_log_reset(server_t *s);
/* Drops the oldest entries past max (CONFIG SET acllog-max-len). */
void acl_log_trim(server_t *s, uint64_t max);
void acl_log_free(server_t *s);

#endif /* ACL_LOG_H */
