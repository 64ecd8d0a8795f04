/*
 * test_cmd.c - the dispatcher's checks, without a connection: a client_t,
 * a server_t and command tables of the test's own. Arity, unknown
 * commands and subcommands, NOAUTH, OOM over maxmemory, MISCONF through
 * the server's write denial, the prefetch hook (only for an admitted
 * command), the last command a client ran, the refusal of duplicate
 * and malformed tables, and the key positions of key specs and legacy
 * ranges (cmd_keyspec_each(), cmd_keys_each()) and categories.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
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

/* An array whose second element is an error: the call itself succeeded. */
static void mixed_proc(client_t *c, int argc, const arg_t *argv)
{
    ran++;
    resp_add_array(&c->out, 2);
    resp_add_int(&c->out, 1);
    resp_add_error(&c->out, "ERR inside");
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
    {.name = "mixed", .arity = 1, .proc = mixed_proc},
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

typedef struct stat_seen {
    const char *name;
    uint64_t calls, rejected, failed;
} stat_seen_t;

static void stat_of(void *ctx, const char *name, uint64_t calls, uint64_t usec,
                    uint64_t rejected, uint64_t failed)
{
    stat_seen_t *st = ctx;
    (void)usec;
    if (strcmp(name, st->name) == 0) {
        st->calls = calls;
        st->rejected = rejected;
        st->failed = failed;
    }
}

static stat_seen_t stats(fx_t *fx, const char *name)
{
    stat_seen_t st = {.name = name};
    cmd_stats_each(&fx->f.s, stat_of, &st);
    return st;
}

/* A call fails when its reply is an error (an error inside an array is
 * not the call's); a refusal is no call. */
static void test_stats_and_failures(void **state)
{
    fx_t *fx = *state;
    RUN(fx, "bad");
    RUN(fx, "rd");
    RUN(fx, "rd", "k");
    RUN(fx, "mixed");
    RUN(fx, "bad");
    assert_int_equal(fx->f.s.total_commands, 4);
    stat_seen_t st = stats(fx, "bad");
    assert_int_equal(st.calls, 2);
    assert_int_equal(st.failed, 2);
    st = stats(fx, "rd");
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.rejected, 1);
    assert_int_equal(st.failed, 0);
    st = stats(fx, "mixed");
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.failed, 0);
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

/* ---- key specs ----------------------------------------------------------- */

/* Collects the key positions and flags a walk reports; stops (returns 1)
 * at position stop_at. */
typedef struct keys_seen {
    int pos[16];
    unsigned flags[16];
    int n;
    int stop_at;
} keys_seen_t;

static int see_key(void *ctx, int i, unsigned flags)
{
    keys_seen_t *k = ctx;
    assert_true(k->n < 16);
    k->pos[k->n] = i;
    k->flags[k->n++] = flags;
    return i == k->stop_at ? 1 : 0;
}

/* The positions spec finds in an argc-argument call, as a string "1 2 3". */
static const char *spec_keys(cmd_keyspec_t spec, int argc)
{
    static char buf[64];
    keys_seen_t k = {.stop_at = -1};
    assert_int_equal(cmd_keyspec_each(&spec, argc, see_key, &k), 0);
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < k.n; i++) {
        assert_int_equal(k.flags[i], spec.flags);
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d",
                                i ? " " : "", k.pos[i]);
    }
    return buf;
}

static void test_keyspec_each(void **state)
{
    static const struct {
        cmd_keyspec_t spec;
        int argc;
        const char *keys;
    } cases[] = {
        /* One key, a range to the end, every other argument. */
        {CMD_KS(KS_RO, 1, 0, 1), 3, "1"},
        {CMD_KS(KS_RM, 1, -1, 1), 5, "1 2 3 4"},
        {CMD_KS(KS_OW, 1, -1, 2), 6, "1 3 5"},
        /* A negative last counts from the end: -2 leaves the last one. */
        {CMD_KS(KS_RW, 1, -2, 1), 5, "1 2 3"},
        {CMD_KS(KS_RW, 2, -2, 1), 3, ""},
        /* A limit takes 1/limit of the arguments after begin (Redis's
         * ranges whose keys fill a share of the call); 1 is no limit. */
        {{.flags = KS_RO, .begin = 1, .last = -1, .step = 1, .limit = 2},
         7,
         "1 2 3"},
        {{.flags = KS_RO, .begin = 1, .last = -1, .step = 1, .limit = 3},
         7,
         "1 2"},
        {{.flags = KS_RO, .begin = 1, .last = -1, .step = 1, .limit = 1},
         7,
         "1 2 3 4 5 6"},
        /* Too few arguments: nothing past argc, nothing before begin. */
        {CMD_KS(KS_RO, 2, 0, 1), 2, ""},
        {CMD_KS(KS_RO, 1, 1, 1), 2, "1"},
        {CMD_KS(KS_RO, 1, 0, 1), 1, ""},
        /* A step of 0 counts as 1; begin 0 is no spec. */
        {CMD_KS(KS_RO, 1, -1, 0), 4, "1 2 3"},
        {CMD_KS(KS_RO, 0, -1, 1), 4, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(spec_keys(cases[i].spec, cases[i].argc),
                            cases[i].keys);
    /* The walk stops at the callback's first non-zero return. */
    cmd_keyspec_t all = CMD_KS(KS_RO, 1, -1, 1);
    keys_seen_t k = {.stop_at = 2};
    assert_int_equal(cmd_keyspec_each(&all, 6, see_key, &k), 1);
    assert_int_equal(k.n, 2);
}

static void test_keys_each(void **state)
{
    /* RENAME's two specs, in order with their flags. */
    static const cmd_def_t rename = {
        .name = "rename",
        .arity = 3,
        .keyspecs = {CMD_KS(KS_RW | KS_ACCESS | KS_DELETE, 1, 0, 1),
                     CMD_KS(KS_OW | KS_UPDATE, 2, 0, 1)},
    };
    keys_seen_t k = {.stop_at = -1};
    assert_int_equal(cmd_keys_each(&rename, 3, see_key, &k), 0);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.pos[0], 1);
    assert_int_equal(k.flags[0], KS_RW | KS_ACCESS | KS_DELETE);
    assert_int_equal(k.pos[1], 2);
    assert_int_equal(k.flags[1], KS_OW | KS_UPDATE);
    /* A stop in the first spec does not reach the second. */
    k = (keys_seen_t){.stop_at = 1};
    assert_int_equal(cmd_keys_each(&rename, 3, see_key, &k), 1);
    assert_int_equal(k.n, 1);

    /* Without specs, the legacy range: an absolute last key, or one from
     * the end, without flags. */
    static const cmd_def_t legacy = {.name = "l", CMD_KEYRANGE(1, 3, 2)};
    k = (keys_seen_t){.stop_at = -1};
    cmd_keys_each(&legacy, 6, see_key, &k);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.pos[0], 1);
    assert_int_equal(k.pos[1], 3);
    assert_int_equal(k.flags[0], 0);
    static const cmd_def_t tail = {.name = "t", CMD_KEYRANGE(2, -1, 1)};
    k = (keys_seen_t){.stop_at = -1};
    cmd_keys_each(&tail, 5, see_key, &k);
    assert_int_equal(k.n, 3);
    assert_int_equal(k.pos[2], 4);
    /* No keys at all. */
    static const cmd_def_t none = {.name = "n", .arity = 1};
    k = (keys_seen_t){.stop_at = -1};
    assert_int_equal(cmd_keys_each(&none, 4, see_key, &k), 0);
    assert_int_equal(k.n, 0);
}

static void test_acl_cats(void **state)
{
    static const cmd_def_t get = {
        .name = "g", .flags = CMD_READONLY | CMD_FAST, .acl = ACL_CAT_KEYSPACE};
    assert_int_equal(cmd_acl_cats(&get),
                     ACL_CAT_KEYSPACE | ACL_CAT_READ | ACL_CAT_FAST);
    static const cmd_def_t cfg = {.name = "c", .flags = CMD_ADMIN};
    assert_int_equal(cmd_acl_cats(&cfg),
                     ACL_CAT_ADMIN | ACL_CAT_DANGEROUS | ACL_CAT_SLOW);
    /* An entry that names @fast is not also @slow (LASTSAVE's way). */
    static const cmd_def_t fast = {.name = "f", .acl = ACL_CAT_FAST};
    assert_int_equal(cmd_acl_cats(&fast), ACL_CAT_FAST);
    /* A scripting command is not @read. */
    assert_int_equal(cmd_acl_implied(CMD_READONLY, ACL_CAT_SCRIPTING),
                     ACL_CAT_SCRIPTING | ACL_CAT_SLOW);
    assert_int_equal(cmd_acl_implied(CMD_WRITE | CMD_DENYOOM, ACL_CAT_CUCKOO),
                     ACL_CAT_CUCKOO | ACL_CAT_WRITE | ACL_CAT_SLOW);
    assert_int_equal(cmd_acl_cat_find("READ", 4), ACL_CAT_READ);
    assert_int_equal(cmd_acl_cat_find("cuckoo", 6), ACL_CAT_CUCKOO);
    assert_int_equal(cmd_acl_cat_find("rea", 3), 0);
    assert_int_equal(cmd_acl_cat_find("@read", 5), 0);
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
        cmocka_unit_test(test_keyspec_each),
        cmocka_unit_test(test_keys_each),
        cmocka_unit_test(test_acl_cats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
