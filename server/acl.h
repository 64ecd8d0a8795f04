/*
 * acl.h - ACL users as Redis 7 has them: the users, their rules (Redis's
 * whole grammar, selectors included), the permission check the dispatcher
 * asks before a command runs, authentication, and the denial log.
 *
 * A user is a list of selectors, the first its root; a selector is a
 * bitmap of allowed command ids (cmd.h), key patterns with read/write
 * flags, and channel patterns (kept and shown; there are no channels).
 * The check is a bit test, then, only for a selector that has patterns
 * and not allkeys, a pattern match per key argument (cmd_keys_each()).
 *
 * Contract: event loop thread only. s->acl is acl_init()'s; acl_free()
 * releases it. A client's user (client_t.user) is NULL for the default
 * user; deleting a user resets its clients to the default user, not
 * authenticated, and closes them.
 */
#ifndef ACL_H
#define ACL_H

#include <stdbool.h>
#include <stddef.h>

#include "acl_log.h"
#include "server_int.h"

typedef struct acl_user acl_user_t;

/* Creates the registry with the default user (on, ~*, &*, +@all, nopass
 * or requirepass's password) and sets s->auth_required. After
 * cmd_index_build(). 0 or -ENOMEM. */
int acl_init(server_t *s);
void acl_free(server_t *s); /* idempotent */

/* The user named by len bytes at name, or NULL. */
acl_user_t *acl_find(const server_t *s, const char *name, size_t len);
const char *acl_user_name(const acl_user_t *u);
/* The number of users, and the i-th in name order (ACL USERS). */
size_t acl_count(const server_t *s);
acl_user_t *acl_at(const server_t *s, size_t i);

/* Applies the rules argv[0..argc) to the user named name (created when
 * missing), all or nothing, as ACL SETUSER. 0; otherwise -EINVAL with
 * Redis's error text (without "ERR ") in err. */
int acl_setuser(server_t *s, const char *name, size_t nlen, int argc,
                const arg_t *argv, char *err, size_t errlen);
/* Deletes the user u (not the default one): its clients are closed. */
void acl_deluser(server_t *s, acl_user_t *u);

/* requirepass: resets the default user's passwords to pass, or makes it
 * nopass for NULL or "". */
void acl_set_default_password(server_t *s, const char *pass);

/* Whether the default user is nopass (AUTH <password> is then an error). */
bool acl_default_nopass(const server_t *s);

/* AUTH/HELLO: checks user (NULL: default) and pass; on success c is
 * authenticated as that user and true is returned, otherwise the attempt
 * is logged (ACL LOG, acl_access_denied_auth, with cmd, the command's name
 * as sent) and false returned. */
bool acl_authenticate(client_t *c, const arg_t *user, const arg_t *pass,
                      const arg_t *cmd);

/* The dispatcher's check, after authentication, of the command d (ACL id
 * id, cmd.h) that c is about to run or queue, in the context CMD_ACL_*
 * (server_int.h): true when c's user may run it with argv[0..argc);
 * otherwise the denial is logged, the refusal replied and false returned.
 * Only while s->acl is set (acl_init()). */
bool acl_allows(client_t *c, unsigned id, const cmd_def_t *d, int argc,
                const arg_t *argv, int ctx);

/* ACL_OK or the reason u may not run d (ACL id id) with argv[0..argc); for
 * a key denial *pos is the argument index of the key. */
int acl_check(const server_t *s, const acl_user_t *u, unsigned id,
              const cmd_def_t *d, int argc, const arg_t *argv, int *pos);

/* The user's description as ACL LIST shows it after "user <name> ". The
 * result is malloc'd (the caller frees it), or NULL when out of memory. */
char *acl_describe(const server_t *s, const acl_user_t *u);
/* ACL GETUSER's reply for u. */
void acl_reply_user(client_t *c, const acl_user_t *u);

/* INFO stats: acl_access_denied_auth, _cmd, _key, _channel. */
void acl_denied_counts(const server_t *s, uint64_t out[4]);

/* SHA-256 of len bytes at p as 64 lower-case hex digits and a NUL. */
void acl_hash_password(const void *p, size_t len, char hex[65]);

#endif /* ACL_H */
