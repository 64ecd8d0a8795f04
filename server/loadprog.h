/*
 * loadprog.h - the start-up load seen from outside: as Redis, the server
 * listens before it loads its files, and while it loads it serves its
 * clients between keys or commands. Commands without the `loading` flag
 * answer -LOADING, INFO shows loading:1 and the loading_* fields, and a
 * SHUTDOWN or SIGTERM ends the load (nothing is saved, no file changes).
 *
 * Contract: event loop thread. The loaders (persist.c, aof.c, aofload.c)
 * announce the bytes they will read, report their position, and stop when
 * loadprog_step() says so; main() brackets the load with loadprog_begin()
 * and loadprog_end(). Without loadprog_begin() (the file checker, tests,
 * benchmarks) the steps only count.
 */
#ifndef LOADPROG_H
#define LOADPROG_H

#include <stdbool.h>
#include <stdint.h>

#include "server.h"
#include "util.h"

/* The load starts: clients are served from now on (they are listening). */
void loadprog_begin(server_t *s);

/* A loader will read n more bytes (the files' sizes). */
void loadprog_expect(server_t *s, uint64_t n);

/* One key or command loaded, at byte pos of the current file: applies
 * key-load-delay and, every 1024 steps or
 * loading-process-events-interval-bytes, serves the clients. false once
 * the server is shutting down: the loader stops with -ECANCELED. */
bool loadprog_step(server_t *s, uint64_t pos);

/* The current file is loaded; it held n bytes. */
void loadprog_file_done(server_t *s, uint64_t n);

/* The load is over (done or failed): commands run again. While it runs,
 * server_int.h's s->load.active tells the dispatcher to answer
 * ERRTEXT_LOADING to commands without the loading flag. */
void loadprog_end(server_t *s);

/* INFO persistence's loading:, async_loading: and, while loading, the
 * loading_* fields (as Redis 7.0). */
void loadprog_info_head(const server_t *s, sbuf_t *b);
void loadprog_info_tail(const server_t *s, sbuf_t *b);

#endif
