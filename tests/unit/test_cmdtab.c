/*
 * test_cmdtab.c - the daemon's command table (cmdtab.h) as one source of
 * every command's metadata: each entry and subcommand is complete (name,
 * arity, proc or subcommands, the COMMAND DOCS fields), its argument docs
 * are well formed, its key specs agree with its legacy key range and with
 * its key arguments, and the families register together without a
 * duplicate name, as main() registers them. The values themselves are
 * compared with redis-server by tests/integ/test_diff_command.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cfhost.h"
#include "cmd.h"
#include "cmdtab.h"
#include "server_int.h"

/* Calls fn(d, parent) for every entry of every family, then for each of
 * its subcommands (parent NULL for a top-level entry). */
typedef void entry_fn(const cmd_def_t *d, const cmd_def_t *parent);
static void each_entry(entry_fn *fn)
{
    for (size_t f = 0; f < CMD_NFAMILIES; f++)
        for (const cmd_def_t *d = cmd_families[f]; d->name != NULL; d++) {
            fn(d, NULL);
            for (const cmd_def_t *s = d->subcommands; s && s->name; s++)
                fn(s, d);
        }
}

static bool filled(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static void check_complete(const cmd_def_t *d, const cmd_def_t *parent)
{
    /* Names are looked up folded to lower case, and shown as written. */
    assert_true(filled(d->name));
    for (const char *p = d->name; *p != '\0'; p++)
        assert_true((*p >= 'a' && *p <= 'z') || *p == '-' || *p == '.' ||
                    *p == '|');
    assert_true(d->arity != 0);
    if (parent != NULL)
        assert_true(d->arity >= 2 || d->arity <= -2);
    /* An entry without a proc is a container that needs its subcommand
     * (COMMAND, which has one, runs alone too). */
    if (d->proc == NULL) {
        assert_non_null(d->subcommands);
        assert_int_equal(d->arity, -2);
    }
    if (d->subcommands != NULL)
        assert_non_null(d->subcommands[0].name);
    assert_null(d->data); /* only the CF family's entries carry one */
    /* What COMMAND DOCS reports of every command (MONITOR alone has no
     * complexity in Redis's docs either). */
    assert_true(filled(d->group));
    assert_true(filled(d->summary));
    assert_true(filled(d->since));
    if (parent != NULL)
        assert_string_equal(d->group, parent->group);
}

static void test_entries_complete(void **state)
{
    (void)state;
    each_entry(check_complete);
}

static const char *const arg_types[] = {
    "key",        "string", "integer", "double",    "pattern",
    "pure-token", "oneof",  "block",   "unix-time",
};

/* Whether args (or their blocks and choices) hold an argument of type
 * "key", after checking each of them. */
static bool check_args(const cmd_arg_t *args)
{
    bool has_key = false;
    assert_non_null(args[0].name); /* no empty table: args is NULL then */
    for (const cmd_arg_t *a = args; a->name != NULL; a++) {
        assert_true(filled(a->name));
        bool known = false;
        for (size_t i = 0; i < sizeof(arg_types) / sizeof(arg_types[0]); i++)
            known |= a->type != NULL && strcmp(a->type, arg_types[i]) == 0;
        assert_true(known);
        bool nested =
            strcmp(a->type, "oneof") == 0 || strcmp(a->type, "block") == 0;
        assert_true(nested == (a->sub != NULL));
        if (strcmp(a->type, "pure-token") == 0)
            assert_true(filled(a->token));
        assert_true(
            (a->flags & ~(unsigned)(CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE |
                                    CMD_ARG_MULTIPLE_TOKEN)) == 0);
        if (a->sub != NULL)
            has_key |= check_args(a->sub);
        has_key |= strcmp(a->type, "key") == 0;
    }
    return has_key;
}

/* The legacy range (first_key, last_key, key_step) that COMMAND INFO
 * shows starts where the first key spec does, and an entry documents a
 * key argument exactly when it has key specs. */
static void check_keys(const cmd_def_t *d, const cmd_def_t *parent)
{
    (void)parent;
    bool has_key_arg = d->args != NULL && check_args(d->args);
    bool has_specs = d->keyspecs[0].begin != 0;
    assert_int_equal(d->first_key, d->keyspecs[0].begin);
    assert_true(has_key_arg == has_specs);
    if (has_specs)
        assert_true(d->key_step >= 1);
}

static void test_args_and_keys(void **state)
{
    (void)state;
    each_entry(check_keys);
}

/* Every family, and the CF.* family after them, into one index, as main()
 * does: no name twice, no malformed entry; and every entry is found by
 * its name in any case. */
static void test_registers_together(void **state)
{
    (void)state;
    const cmd_def_t *tables[CMD_NFAMILIES + 1];
    memcpy(tables, cmd_families, sizeof(cmd_families));
    tables[CMD_NFAMILIES] = cfhost_table();
    assert_non_null(tables[CMD_NFAMILIES]);
    static server_t s;
    const char *dup = "unset";
    assert_int_equal(cmd_index_build(&s, tables, CMD_NFAMILIES + 1, &dup), 0);
    assert_null(dup);
    size_t n = 0;
    for (size_t t = 0; t <= CMD_NFAMILIES; t++)
        for (const cmd_def_t *d = tables[t]; d->name != NULL; d++, n++) {
            char upper[CMD_NAME_MAX];
            size_t len = strlen(d->name);
            assert_true(len < sizeof(upper));
            for (size_t i = 0; i < len; i++)
                upper[i] = (char)(d->name[i] >= 'a' && d->name[i] <= 'z'
                                      ? d->name[i] - 'a' + 'A'
                                      : d->name[i]);
            assert_ptr_equal(cmd_lookup(&s, upper, len), d);
            assert_ptr_equal(cmd_at(&s, n), d);
            /* Subcommand names are unique inside their container. */
            for (const cmd_def_t *a = d->subcommands; a && a->name; a++)
                assert_ptr_equal(cmd_find_sub(d, a->name, strlen(a->name)), a);
        }
    assert_int_equal(cmd_count(&s), n);
    cmd_index_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_complete),
        cmocka_unit_test(test_args_and_keys),
        cmocka_unit_test(test_registers_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
