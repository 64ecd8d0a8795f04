/*
 * test_cmd_admin.c - INFO's section table (server/cmd_admin.c): every
 * section named once, each selectable alone, "default" and the forms of
 * "all" made of the table's flags, run through the real dispatcher.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "cmd_admin.h"
#include "cmdtab.h"
#include "daemon.h"
#include "persist.h"
#include "server_int.h"
#include "unit_fixture.h"

typedef cmd_fixture_t fx_t;

static int setup(void **state)
{
    fx_t *fx = cmd_fixture_new(cmd_admin_table);
    assert_int_equal(persist_init(&fx->f.s), 0); /* INFO persistence */
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    persist_free(&fx->f.s);
    cmd_fixture_free(*state);
    return 0;
}

/* Runs INFO with the NULL-terminated words and returns the text of its
 * RESP2 bulk reply (the caller frees it). */
static char *info(fx_t *fx, const char *const *words)
{
    arg_t argv[8];
    resp_cmd_t cmd = {1, argv};
    argv[0].ptr = "INFO";
    argv[0].len = 4;
    while (words[cmd.argc - 1] != NULL) {
        argv[cmd.argc].ptr = (char *)words[cmd.argc - 1];
        argv[cmd.argc].len = strlen(words[cmd.argc - 1]);
        cmd.argc++;
    }
    cmd_dispatch(&fx->c, &cmd);
    size_t len;
    char *out = resp_out_take(&fx->c.out, &len);
    assert_non_null(out);
    assert_true(out[0] == '$');
    char *body = strstr(out, "\r\n");
    assert_non_null(body);
    body += 2;
    size_t n = strtoul(out + 1, NULL, 10);
    assert_int_equal(body + n + 2, out + len);
    char *text = strndup(body, n);
    free(out);
    return text;
}

#define INFO(fx, ...) info((fx), (const char *const[]){__VA_ARGS__, NULL})

static size_t nsections(void)
{
    size_t n = 0;
    while (cmd_admin_info_sections[n].name != NULL)
        n++;
    return n;
}

/* How often the header of section i is in text. */
static int count_header(const char *text, size_t i)
{
    char hdr[64];
    int n = 0;
    snprintf(hdr, sizeof(hdr), "# %s\r\n", cmd_admin_info_sections[i].title);
    for (const char *p = text; (p = strstr(p, hdr)) != NULL; p++)
        if (p == text || p[-1] == '\n')
            n++;
    return n;
}

/* How many "# " header lines text has. */
static int count_headers(const char *text)
{
    int n = 0;
    for (const char *p = text; *p != '\0'; p++)
        if ((p == text || p[-1] == '\n') && p[0] == '#' && p[1] == ' ')
            n++;
    return n;
}

static void test_table(void **state)
{
    (void)state;
    static const char *const order[] = {
        "server",      "clients", "memory",       "persistence", "stats",
        "replication", "cpu",     "commandstats", "keyspace"};
    size_t n = nsections();
    assert_int_equal(n, sizeof(order) / sizeof(order[0]));
    for (size_t i = 0; i < n; i++) {
        const cmd_admin_info_section_t *s = &cmd_admin_info_sections[i];
        assert_string_equal(s->name, order[i]);
        assert_non_null(s->fn);
        assert_non_null(s->title);
        /* The title is the name, capitalised (CPU all upper, as Redis). */
        assert_int_equal(strlen(s->title), strlen(s->name));
        assert_true(strcasecmp(s->title, s->name) == 0);
        assert_true(isupper((unsigned char)s->title[0]));
        for (size_t j = 0; j < i; j++) {
            assert_true(strcmp(cmd_admin_info_sections[j].name, s->name));
            assert_true(strcmp(cmd_admin_info_sections[j].title, s->title));
        }
        /* The selectors are not section names. */
        assert_true(strcmp(s->name, "default") && strcmp(s->name, "all") &&
                    strcmp(s->name, "everything"));
        /* Only commandstats is left out of the default, as in Redis. */
        assert_true(s->in_default == (strcmp(s->name, "commandstats") != 0));
    }
}

/* "all", "everything" and any case of them: every section once, in table
 * order, one blank line between sections. */
static void test_all(void **state)
{
    fx_t *fx = *state;
    static const char *const forms[] = {"everything", "all", "ALL"};
    size_t n = nsections();
    for (size_t f = 0; f < 3; f++) {
        char *text = INFO(fx, forms[f]);
        const char *last = text;
        for (size_t i = 0; i < n; i++) {
            char hdr[64];
            assert_int_equal(count_header(text, i), 1);
            snprintf(hdr, sizeof(hdr), "%s# %s\r\n", i > 0 ? "\r\n" : "",
                     cmd_admin_info_sections[i].title);
            const char *at = strstr(last, hdr);
            assert_non_null(at);
            assert_true(i > 0 || at == text);
            last = at + 1;
        }
        assert_int_equal(count_headers(text), (int)n);
        free(text);
    }
}

/* No argument and "default": the sections flagged in_default. */
static void test_default(void **state)
{
    fx_t *fx = *state;
    char *texts[] = {info(fx, (const char *const[]){NULL}), INFO(fx, "default"),
                     INFO(fx, "Default", "bogus")};
    for (size_t t = 0; t < 3; t++) {
        int want = 0;
        for (size_t i = 0; i < nsections(); i++) {
            bool in = cmd_admin_info_sections[i].in_default;
            assert_int_equal(count_header(texts[t], i), in ? 1 : 0);
            want += in;
        }
        assert_int_equal(count_headers(texts[t]), want);
        free(texts[t]);
    }
}

/* Each section alone, by its name in any case, asked twice or not. */
static void test_each_section(void **state)
{
    fx_t *fx = *state;
    for (size_t i = 0; i < nsections(); i++) {
        const char *name = cmd_admin_info_sections[i].name;
        char upper[32];
        size_t k = 0;
        for (; name[k] != '\0'; k++)
            upper[k] = (char)toupper((unsigned char)name[k]);
        upper[k] = '\0';
        char *texts[] = {INFO(fx, name), INFO(fx, upper, name)};
        for (size_t t = 0; t < 2; t++) {
            char hdr[64];
            snprintf(hdr, sizeof(hdr), "# %s\r\n",
                     cmd_admin_info_sections[i].title);
            assert_memory_equal(texts[t], hdr, strlen(hdr));
            assert_int_equal(count_headers(texts[t]), 1);
            free(texts[t]);
        }
    }
    /* Two sections come in table order, whatever the order asked. */
    char *text = INFO(fx, "keyspace", "server");
    assert_memory_equal(text, "# Server\r\n", 10);
    assert_non_null(strstr(text, "\r\n\r\n# Keyspace\r\n"));
    free(text);
    /* Unknown sections are ignored: an empty text. */
    text = INFO(fx, "bogus");
    assert_string_equal(text, "");
    free(text);
}

/* hz is the cron's rate. */
static void test_hz(void **state)
{
    fx_t *fx = *state;
    char *text = INFO(fx, "server");
    char want[32];
    snprintf(want, sizeof(want), "\r\nhz:%d\r\n", 1000 / DAEMON_CRON_MS);
    assert_non_null(strstr(text, want));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test_setup_teardown(test_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hz, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
