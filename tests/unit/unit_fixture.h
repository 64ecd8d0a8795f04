/*
 * unit_fixture.h - what the unit tests' cmocka fixtures share: a server
 * (a libuv loop, a configuration and a server_t built from them), a client
 * of it without a connection, and a scratch directory. Include after
 * cmocka.h; every function asserts through cmocka.
 */
#ifndef CUCKOOD_UNIT_FIXTURE_H
#define CUCKOOD_UNIT_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "server_int.h"

typedef struct srv_fixture {
    uv_loop_t loop;
    cfg_t cfg;
    server_t s;
    bool started, indexed;
} srv_fixture_t;

/* The loop and cfg_init's defaults; srv_fixture_start() builds the server
 * once the test has set the configuration it needs. */
static inline void srv_fixture_init(srv_fixture_t *f)
{
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(cfg_init(&f->cfg), 0);
}

static inline void srv_fixture_start(srv_fixture_t *f)
{
    assert_int_equal(server_init(&f->s, &f->loop, &f->cfg), 0);
    f->started = true;
}

/* The started server's command index, made of one table. */
static inline void srv_fixture_commands(srv_fixture_t *f,
                                        const cmd_def_t *table)
{
    const char *dup = NULL;
    assert_int_equal(cmd_index_build(&f->s, &table, 1, &dup), 0);
    f->indexed = true;
}

/* Frees what init, start and commands made; returns uv_loop_close()'s
 * status (0 when no handle was left open). */
static inline int srv_fixture_free(srv_fixture_t *f)
{
    if (f->indexed)
        cmd_index_free(&f->s);
    f->indexed = false;
    if (f->started)
        server_free(&f->s);
    f->started = false;
    cfg_free(&f->cfg);
    return uv_loop_close(&f->loop);
}

/* c as a client of the started server, without a connection:
 * authenticated, RESP2, on database 0. resp_out_release(&c->out) frees
 * it. */
static inline void srv_fixture_client(srv_fixture_t *f, client_t *c)
{
    c->srv = &f->s;
    c->db = f->s.dbs[0];
    c->resp = 2;
    c->authenticated = true;
    resp_out_init(&c->out, 2);
}

/* A started server with a command index of one table and one client of
 * it: the fixture of the dispatcher's and the command families' tests. */
typedef struct cmd_fixture {
    srv_fixture_t f;
    client_t c;
} cmd_fixture_t;

static inline cmd_fixture_t *cmd_fixture_new(const cmd_def_t *table)
{
    cmd_fixture_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    srv_fixture_init(&fx->f);
    srv_fixture_start(&fx->f);
    srv_fixture_commands(&fx->f, table);
    srv_fixture_client(&fx->f, &fx->c);
    return fx;
}

/* Frees fx; asserts that no handle of the loop was left open. */
static inline void cmd_fixture_free(cmd_fixture_t *fx)
{
    resp_out_release(&fx->c.out);
    assert_int_equal(srv_fixture_free(&fx->f), 0);
    free(fx);
}

typedef struct scratch_dir {
    char path[64];
    char old_cwd[4096]; /* "" unless entered */
} scratch_dir_t;

/* A fresh directory /tmp/<name>-XXXXXX; with enter, it is the working
 * directory until scratch_dir_remove(). */
static inline void scratch_dir_make(scratch_dir_t *d, const char *name,
                                    bool enter)
{
    snprintf(d->path, sizeof(d->path), "/tmp/%s-XXXXXX", name);
    assert_non_null(mkdtemp(d->path));
    d->old_cwd[0] = '\0';
    if (enter) {
        assert_non_null(getcwd(d->old_cwd, sizeof(d->old_cwd)));
        assert_int_equal(chdir(d->path), 0);
    }
}

static inline void scratch_dir_remove(scratch_dir_t *d)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
    assert_int_equal(system(cmd), 0);
    if (d->old_cwd[0] != '\0')
        assert_int_equal(chdir(d->old_cwd), 0);
}

#endif
