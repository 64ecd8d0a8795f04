/*
 * errtext.h - the error replies that more than one command, or more than
 * one command host, gives with the same words, as Redis keeps its shared
 * replies in one place (createSharedObjects()): each text exists once, so
 * the daemon's dispatcher, its commands and the CF.* layer that the module
 * runs too cannot drift apart.
 *
 * They live in common/ because every layer may include common/: the
 * command layer (commands/) may not include server/, and the daemon
 * includes both.
 *
 * Contract: each is the whole text of a RESP error, its code word first,
 * without the leading '-' and the CRLF. Header only.
 */
#ifndef ERRTEXT_H
#define ERRTEXT_H

/* A command flagged deny-OOM over maxmemory. */
#define ERRTEXT_LOADING "LOADING Redis is loading the dataset in memory"
#define ERRTEXT_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERRTEXT_WRONGTYPE                                                      \
    "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERRTEXT_NOAUTH "NOAUTH Authentication required."
#define ERRTEXT_SYNTAX "ERR syntax error"
#define ERRTEXT_NOT_INTEGER "ERR value is not an integer or out of range"
/* An allocation failed while the reply was being built. */
#define ERRTEXT_NOMEM "ERR out of memory"
/* A printf format taking the command's name ("config|set" for a
 * subcommand). */
#define ERRTEXT_ARITY_FMT "ERR wrong number of arguments for '%s' command"

#endif /* ERRTEXT_H */
