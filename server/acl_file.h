/*
 * acl_file.h - users from files, as Redis 7.0 reads and writes them: the
 * "user" lines of the configuration, or an aclfile (ACL LOAD, ACL SAVE).
 *
 * Contract: event loop thread only, after acl_init().
 */
#ifndef ACL_FILE_H
#define ACL_FILE_H

#include <stddef.h>

#include "server_int.h"

/* At start-up: the configuration's "user" lines, or its aclfile (both
 * together are refused). 0, or -1 after logging why (the server must not
 * start). */
int acl_file_startup(server_t *s);

/* ACL LOAD: replaces every user by the file's, or, when any line is bad,
 * changes nothing and returns -EINVAL with Redis's description of every
 * problem in err. Clients of users the file no longer has are closed (the
 * running one, s->acl's, after its reply). */
int acl_file_load(server_t *s, const char *path, char *err, size_t errlen);

/* ACL SAVE: writes every user as a "user" line (password hashes only) to
 * a temporary file, mode 0600, fsyncs it and renames it over path. 0, or
 * -errno after logging why. */
int acl_file_save(server_t *s, const char *path);

/* The parser alone (for the fuzzer): checks text as ACL LOAD would, 0 or
 * -EINVAL with the problems in err; nothing changes. */
int acl_file_check(server_t *s, const char *text, size_t len, char *err,
                   size_t errlen);

#endif /* ACL_FILE_H */
