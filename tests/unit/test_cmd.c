/*
 * test_cmd.c - the dispatcher's checks, without a connection: a client_t,
 * a server_t and command tables of the test's own. Arity, unknown
 * commands and subcommands, NOAUTH, OOM over maxmemory, MISCONF through
 * the server's write denial, the prefetch hook (only for an admitted
 * command), the last command a client ran, and the refusal of duplicate
 * and malformed tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "server_int.h"
#include "unit_fixture.h"

static int ran, prefetched;

static void ok_proc(client_t *c, int argc, const arg_t *argv)
{
    ran++;
    resp_add_simple(&c->out, "OK");
}

static void fail_proc(client_t *c, int argc, const arg_t *argv)
{
    ran++;
    resp_add_error(&c->out, "ERR failed on purpose");
}

static void pf_hook(client_t *c, const cmd_def_t *d, int argc,
                    const arg_t *argv)
{
    prefetched++;
    assert_string_equal(d->name, "wr");
}

static const cmd_def_t subs[] = {
    {.name = "one", .arity = 2, .proc = ok_proc},
    {.name = "two", .arity = -3, .flags = CMD_NOAUTH, .proc = ok_proc},
    {.name = NULL},
};

static const cmd_def_t table_a[] = {
    {.name = "rd", .arity = 2, .flags = CMD_READONLY, .proc = ok_proc},
    {.name = "wr",
     .arity = -3,
     .flags = CMD_WRITE | CMD_DENYOOM,
     .proc = ok_proc,
     .prefetch = pf_hook},
    {.name = "del", .arity = 2, .flags = CMD_WRITE, .proc = ok_proc},
    {.name = "open", .arity = 1, .flags = CMD_NOAUTH, .proc = ok_proc},
    {.name = "bad", .arity = 1, .proc = fail_proc},
    {.name = "box", .arity = -2, .subcommands = subs},
    {.name = NULL},
};

static const cmd_def_t table_dup[] = {
    {.name = "rd", .arity = 1, .proc = ok_proc},
    {.name = NULL},
};

static const cmd_def_t table_noproc[] = {
    {.name = "empty", .arity = 1},
    {.name = NULL},
};

typedef cmd_fixture_t fx_t;

static int setup(void **state)
{
    fx_t *fx = cmd_fixture_new(table_a);
    ran = prefetched = 0;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    cmd_fixture_free(*state);
    return 0;
}

/* Dispatches argv (NULL-terminated) and returns the reply (static). */
static const char *run(fx_t *fx, const char *const *words)
{
    static char reply[512];
    arg_t argv[8];
    resp_cmd_t cmd = {0, argv};
    while (words[cmd.argc] != NULL) {
        argv[cmd.argc].ptr = (char *)words[cmd.argc];
        argv[cmd.argc].len = strlen(words[cmd.argc]);
        cmd.argc++;
    }
    cmd_dispatch(&fx->c, &cmd);
    size_t len;
    char *out = resp_out_take(&fx->c.out, &len);
    assert_true(len < sizeof(reply));
    memcpy(reply, out != NULL ? out : "", len);
    reply[len] = '\0';
    free(out);
    return reply;
}

#define RUN(fx, ...) run((fx), (const char *const[]){__VA_ARGS__, NULL})

static void test_arity_and_unknown(void **state)
{
    fx_t *fx = *state;
    assert_string_equal(RUN(fx, "rd", "k"), "+OK\r\n");
    assert_string_equal(RUN(fx, "RD", "k"), "+OK\r\n"); /* any case */
    assert_string_equal(RUN(fx, "rd"),
                        "-ERR wrong number of arguments for 'rd' command\r\n");
    assert_string_equal(RUN(fx, "wr", "k"),
                        "-ERR wrong number of arguments for 'wr' command\r\n");
    assert_string_equal(RUN(fx, "wr", "k", "a", "b"), "+OK\r\n");
    assert_string_equal(
        RUN(fx, "nope", "x"),
        "-ERR unknown command 'nope', with args beginning with: 'x' \r\n");
    assert_int_equal(ran, 3);
}

/* The last command found is tried first: names that share a prefix with
 * it, differ in case or are longer must still find their own entry or
 * none. */
static void test_lookup_repeats(void **state)
{
    fx_t *fx = *state;
    assert_string_equal(RUN(fx, "rd", "k"), "+OK\r\n");
    assert_string_equal(RUN(fx, "Rd", "k"), "+OK\r\n");
    assert_string_equal(RUN(fx, "r", "k"),
                        "-ERR unknown command 'r', with args beginning "
                        "with: 'k' \r\n");
    assert_string_equal(RUN(fx, "rdx", "k"),
                        "-ERR unknown command 'rdx', with args beginning "
                        "with: 'k' \r\n");
    assert_string_equal(RUN(fx, "del", "k"), "+OK\r\n");
    assert_string_equal(RUN(fx, "de", "k"),
                        "-ERR unknown command 'de', with args beginning "
                        "with: 'k' \r\n");
    assert_string_equal(RUN(fx, "del"),
                        "-ERR wrong number of arguments for 'del' command\r\n");
    assert_string_equal(RUN(fx, "rd"),
                        "-ERR wrong number of arguments for 'rd' command\r\n");
    assert_string_equal(RUN(fx, "wr", "k", "v"), "+OK\r\n");
    assert_int_equal(ran, 4);
}

static void test_subcommands(void **state)
{
    fx_t *fx = *state;
    assert_string_equal(RUN(fx, "box", "one"), "+OK\r\n");
    assert_ptr_equal(fx->c.cmd, &table_a[5]);
    assert_ptr_equal(fx->c.sub, &subs[0]);
    assert_string_equal(RUN(fx, "box", "three"),
                        "-ERR unknown subcommand 'three'. Try BOX HELP.\r\n");
    assert_string_equal(
        RUN(fx, "box", "two"),
        "-ERR wrong number of arguments for 'box|two' command\r\n");
    assert_string_equal(RUN(fx, "box"),
                        "-ERR wrong number of arguments for 'box' command\r\n");
    assert_int_equal(ran, 1);
}

static void test_noauth(void **state)
{
    fx_t *fx = *state;
    /* As Redis: NOAUTH while the default user needs a password. */
    fx->c.authenticated = false;
    fx->f.s.auth_required = true;
    const char *noauth = "-NOAUTH Authentication required.\r\n";
    assert_string_equal(RUN(fx, "rd", "k"), noauth);
    assert_string_equal(RUN(fx, "box", "one"), noauth);
    assert_string_equal(RUN(fx, "open"), "+OK\r\n");
    assert_string_equal(RUN(fx, "box", "two", "x"), "+OK\r\n");
    /* Arity is checked first, as Redis does. */
    assert_string_equal(RUN(fx, "rd"),
                        "-ERR wrong number of arguments for 'rd' command\r\n");
    assert_int_equal(ran, 2);
}

static void test_oom(void **state)
{
    fx_t *fx = *state;
    fx->f.cfg.maxmemory = 1; /* anything in use is over it */
    assert_true(server_used_memory(&fx->f.s) > 1);
    assert_string_equal(
        RUN(fx, "wr", "k", "a"),
        "-OOM command not allowed when used memory > 'maxmemory'.\r\n");
    assert_string_equal(RUN(fx, "del", "k"), "+OK\r\n"); /* not DENYOOM */
    assert_string_equal(RUN(fx, "rd", "k"), "+OK\r\n");
    fx->f.cfg.maxmemory = 0;
    assert_string_equal(RUN(fx, "wr", "k", "a"), "+OK\r\n");
}

static void test_misconf(void **state)
{
    fx_t *fx = *state;
    static const char msg[] = "MISCONF test denial";
    fx->f.cfg.stop_writes_on_bgsave_error = true;
    assert_true(fx->f.cfg.nsave > 0); /* the default save points */
    server_deny_writes(&fx->f.s, msg);
    assert_string_equal(RUN(fx, "wr", "k", "a"), "-MISCONF test denial\r\n");
    assert_string_equal(RUN(fx, "del", "k"), "-MISCONF test denial\r\n");
    assert_string_equal(RUN(fx, "rd", "k"), "+OK\r\n");
    server_deny_writes(&fx->f.s, NULL);
    assert_string_equal(RUN(fx, "del", "k"), "+OK\r\n");
}

static void test_stats_and_failures(void **state)
{
    fx_t *fx = *state;
    RUN(fx, "bad");
    RUN(fx, "rd");
    RUN(fx, "rd", "k");
    assert_int_equal(fx->f.s.total_commands, 2);
}

static void test_prefetch_only_when_admitted(void **state)
{
    fx_t *fx = *state;
    resp_peek_t pk[3] = {0};
    pk[0].argc = 3; /* wr k a: admitted, has a hook */
    pk[0].argv[0] = (arg_t){"WR", 2};
    pk[0].argv[1] = (arg_t){"k", 1};
    pk[0].argv[2] = (arg_t){"a", 1};
    pk[1] = pk[0];
    pk[1].argc = 2; /* wrong arity */
    pk[2].argc = 2; /* no hook */
    pk[2].argv[0] = (arg_t){"rd", 2};
    pk[2].argv[1] = (arg_t){"k", 1};
    cmd_prefetch(&fx->c, pk, 3);
    assert_int_equal(prefetched, 1);
    fx->c.authenticated = false; /* NOAUTH: no hook runs */
    fx->f.s.auth_required = true;
    cmd_prefetch(&fx->c, pk, 3);
    assert_int_equal(prefetched, 1);
    assert_int_equal(ran, 0); /* a look ahead runs nothing */
}

static void test_tables_refused(void **state)
{
    fx_t *fx = *state;
    const char *dup = NULL;
    cmd_index_free(&fx->f.s);
    const cmd_def_t *two[] = {table_a, table_dup};
    assert_int_equal(cmd_index_build(&fx->f.s, two, 2, &dup), -EEXIST);
    assert_string_equal(dup, "rd");
    assert_null(fx->f.s.cmds);
    const cmd_def_t *np[] = {table_noproc};
    assert_int_equal(cmd_index_build(&fx->f.s, np, 1, &dup), -EINVAL);
    assert_string_equal(dup, "empty");
    const cmd_def_t *one[] = {table_a};
    assert_int_equal(cmd_index_build(&fx->f.s, one, 1, &dup), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arity_and_unknown, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_subcommands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_repeats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noauth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oom, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misconf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_and_failures, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_prefetch_only_when_admitted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tables_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
