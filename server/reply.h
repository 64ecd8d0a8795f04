/*
 * reply.h - the replies the daemon's commands share, in Redis's words
 * (errtext.h): OK, the common errors, the refusals of the dispatcher, the
 * lines of a HELP subcommand and a block of text (INFO, CLIENT LIST).
 *
 * Contract: event loop thread only; each appends one whole reply to
 * c->out and knows nothing of the server beyond the client.
 */
#ifndef REPLY_H
#define REPLY_H

#include <stddef.h>

#include "server.h"
#include "util.h"

void reply_ok(client_t *c);
void reply_syntax_error(client_t *c); /* ERR syntax error */
/* ERR value is not an integer or out of range */
void reply_not_integer(client_t *c);
/* ERR wrong number of arguments for 'cmd' command */
void reply_wrong_arity(client_t *c, const char *cmd);

/* ERR unknown command 'name', with args beginning with: 'a' 'b' ... as
 * Redis 7 words it (name and arguments cut near 128 bytes, CR and LF made
 * spaces). */
void reply_unknown_command(client_t *c, const resp_cmd_t *cmd);
/* ERR unknown subcommand 'sub'. Try PARENT HELP. */
void reply_unknown_subcommand(client_t *c, const char *parent,
                              const arg_t *sub);

/* Replies b as verbatim text (RESP3 =txt, RESP2 bulk), or an error when b
 * failed; frees b->p. */
void reply_text(client_t *c, sbuf_t *b);

/* Replies the n lines of a HELP subcommand, as an array of simple
 * strings. */
void reply_help(client_t *c, const char *const *lines, size_t n);

#endif /* REPLY_H */
