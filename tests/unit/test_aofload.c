/*
 * test_aofload.c - replaying a file of commands (server/aofload.h) with the
 * real dispatcher: a captured feed written as a file replays to the same
 * data; torn tails are dropped and cut off or refused per the flags; damage
 * elsewhere is named by file and offset and changes no file; an open
 * transaction at the end is dropped; an empty file, a SELECT out of range,
 * unknown and non-write commands; nothing is fed while replaying; nothing
 * expires and maxmemory refuses nothing during a replay; the check and
 * its fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "aof_fixture.h"
#include "aofload.h"
#include "expire.h"

static scratch_dir_t dir;
static char path[128];

static int setup(void **state)
{
    (void)state;
    scratch_dir_make(&dir, "aofload", false);
    snprintf(path, sizeof(path), "%s/f.aof", dir.path);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    scratch_dir_remove(&dir);
    return 0;
}

static void put_arg(FILE *fp, const char *p, size_t len)
{
    fprintf(fp, "$%zu\r\n", len);
    assert_int_equal(fwrite(p, 1, len, fp), len);
    fputs("\r\n", fp);
}

/* Writes a feed as an increment file does: SELECT before a change of
 * database, each command a RESP array. */
static void write_feed(const feed_t *fd, const char *to)
{
    FILE *fp = fopen(to, "wb");
    assert_non_null(fp);
    int db = -1;
    for (size_t i = 0; i < fd->n; i++) {
        if (fd->dbnum[i] != db) {
            char n[16];
            int len = snprintf(n, sizeof(n), "%d", fd->dbnum[i]);
            fputs("*2\r\n", fp);
            put_arg(fp, "SELECT", 6);
            put_arg(fp, n, (size_t)len);
            db = fd->dbnum[i];
        }
        fprintf(fp, "*%d\r\n", fd->cmd[i]->argc);
        for (int j = 0; j < fd->cmd[i]->argc; j++)
            put_arg(fp, fd->cmd[i]->v[j].ptr, fd->cmd[i]->v[j].len);
    }
    assert_int_equal(fclose(fp), 0);
}

static void write_text(const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

static char *read_text(size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[1 << 16];
    *len = fread(buf, 1, sizeof(buf), fp);
    fclose(fp);
    return buf;
}

#define CMD2(a, b) "*2\r\n$" #a "\r\n" b "\r\n"

static const char *SET_A = "*3\r\n$6\r\nCF.ADD\r\n$1\r\na\r\n$1\r\nx\r\n";
static const char *SET_B = "*3\r\n$6\r\nCF.ADD\r\n$1\r\nb\r\n$1\r\ny\r\n";

static void test_feed_file_replays(void **state)
{
    (void)state;
    aof_fx_t *src = aof_fx_new(true);
    for (int i = 0; i < 300; i++) {
        char k[8], it[8];
        snprintf(k, sizeof(k), "k%d", i % 17);
        snprintf(it, sizeof(it), "%d", i);
        FX(src, "SELECT", i % 3 == 0 ? "0" : "2");
        FX(src, "CF.ADD", k, it);
        if (i % 10 == 0)
            FX(src, "EXPIRE", k, "1000");
        if (i % 13 == 0)
            FX(src, "CF.DEL", k, "5");
        if (i % 29 == 0) {
            FX(src, "MULTI");
            FX(src, "CF.INSERT", k, "ITEMS", "p", "q");
            FX(src, "COPY", k, "copy", "DB", "1", "REPLACE");
            FX(src, "EXEC");
        }
    }
    write_feed(src->feed, path);
    aof_fx_t *dst = aof_fx_new(false);
    aofload_report_t r;
    assert_int_equal(aofload_file(&dst->f.s, path, true, true, &r), 0);
    assert_false(r.truncated);
    assert_true(r.commands > 300);
    assert_int_equal(r.good_bytes, r.file_bytes);
    assert_false(dst->f.s.loading);
    assert_true(assert_same_data(&src->f.s, &dst->f.s) > 17);
    aof_fx_free(dst);
    aof_fx_free(src);
}

static void test_torn_tail(void **state)
{
    (void)state;
    char text[256];
    size_t whole = strlen(SET_A);
    snprintf(text, sizeof(text), "%s%.*s", SET_A, 20, SET_B);
    /* refused unless it is the last file and truncation is allowed */
    for (int k = 0; k < 2; k++) {
        write_text(text);
        aof_fx_t *fx = aof_fx_new(false);
        aofload_report_t r;
        assert_int_equal(aofload_file(&fx->f.s, path, k == 1, false, &r),
                         -EINVAL);
        assert_non_null(strstr(r.err, path));
        assert_non_null(strstr(r.err, "offset 30"));
        size_t len;
        assert_int_equal((read_text(&len), len), strlen(text));
        aof_fx_free(fx);
    }
    write_text(text);
    aof_fx_t *fx = aof_fx_new(false);
    aofload_report_t r;
    assert_int_equal(aofload_file(&fx->f.s, path, true, true, &r), 0);
    assert_true(r.truncated);
    assert_int_equal(r.commands, 1);
    assert_int_equal(r.good_bytes, whole);
    size_t len;
    char *now = read_text(&len);
    assert_int_equal(len, whole);
    assert_memory_equal(now, SET_A, whole);
    assert_int_equal(ks_size(fx->f.s.dbs[0]), 1);
    aof_fx_free(fx);
}

static void check_damage(const char *text, const char *want, uint64_t at)
{
    write_text(text);
    aof_fx_t *fx = aof_fx_new(false);
    aofload_report_t r;
    assert_int_equal(aofload_file(&fx->f.s, path, true, true, &r), -EINVAL);
    char off[48];
    snprintf(off, sizeof(off), "offset %" PRIu64, at);
    if (strstr(r.err, off) == NULL || strstr(r.err, path) == NULL ||
        strstr(r.err, want) == NULL)
        fail_msg("unexpected report: %s", r.err);
    size_t len;
    char *now = read_text(&len);
    assert_int_equal(len, strlen(text));
    assert_memory_equal(now, text, len);
    aof_fx_free(fx);
}

static void test_damage_is_named(void **state)
{
    (void)state;
    char text[512];
    /* not RESP in the middle */
    snprintf(text, sizeof(text), "%s*3\r\n$6\r\nCF.ADD\r\n$x\r\n%s", SET_A,
             SET_B);
    check_damage(text, "Protocol error", strlen(SET_A));
    /* an inline command */
    snprintf(text, sizeof(text), "%sCF.ADD b y\r\n%s", SET_A, SET_B);
    check_damage(text, "RESP array", strlen(SET_A));
    /* an unknown command, a read, a database out of range, an error */
    snprintf(text, sizeof(text), "%s*1\r\n$6\r\nNOSUCH\r\n%s", SET_A, SET_B);
    check_damage(text, "Unknown command 'NOSUCH'", strlen(SET_A));
    snprintf(text, sizeof(text), "%s*1\r\n$4\r\nPING\r\n%s", SET_A, SET_B);
    check_damage(text, "not a write", strlen(SET_A));
    snprintf(text, sizeof(text), "%s%s%s", SET_A, CMD2(6, "SELECT\r\n$2\r\n99"),
             SET_B);
    check_damage(text, "DB index is out of range", strlen(SET_A));
    snprintf(text, sizeof(text), "%s*2\r\n$6\r\nCF.ADD\r\n$1\r\na\r\n%s", SET_A,
             SET_B);
    check_damage(text, "wrong number of arguments", strlen(SET_A));
    /* frames a client may send but a log never holds: empty arrays, blank
     * lines, padded numbers */
    snprintf(text, sizeof(text), "%s*0\r\n%s", SET_A, SET_B);
    check_damage(text, "RESP array", strlen(SET_A));
    snprintf(text, sizeof(text), "%s\r\n%s", SET_A, SET_B);
    check_damage(text, "RESP array", strlen(SET_A));
    snprintf(text, sizeof(text), "%s*03\r\n%s", SET_A, SET_B + 4);
    check_damage(text, "Protocol error", strlen(SET_A));
    snprintf(text, sizeof(text), "%s*0\r\n", SET_A);
    check_damage(text, "RESP array", strlen(SET_A));
    /* a torn command that is not the tail is damage too */
    snprintf(text, sizeof(text), "%sxyz", SET_A);
    check_damage(text, "RESP array", strlen(SET_A));
}

static void test_open_multi_at_tail(void **state)
{
    (void)state;
    char text[512];
    size_t before = strlen(SET_A);
    snprintf(text, sizeof(text), "%s*1\r\n$5\r\nMULTI\r\n%s", SET_A, SET_B);
    write_text(text);
    aof_fx_t *fx = aof_fx_new(false);
    aofload_report_t r;
    assert_int_equal(aofload_file(&fx->f.s, path, true, false, &r), -EINVAL);
    size_t len;
    assert_int_equal((read_text(&len), len), strlen(text));
    aof_fx_free(fx);

    fx = aof_fx_new(false);
    assert_int_equal(aofload_file(&fx->f.s, path, true, true, &r), 0);
    assert_true(r.truncated);
    assert_int_equal(r.good_bytes, before);
    assert_int_equal((read_text(&len), len), before);
    /* the queued command never ran */
    assert_null(ks_find(fx->f.s.dbs[0], "b", 1, &(int64_t){0}));
    assert_non_null(ks_find(fx->f.s.dbs[0], "a", 1, &(int64_t){0}));
    aof_fx_free(fx);
}

static void test_empty_and_missing(void **state)
{
    (void)state;
    write_text("");
    aof_fx_t *fx = aof_fx_new(false);
    aofload_report_t r;
    assert_int_equal(aofload_file(&fx->f.s, path, true, true, &r), 0);
    assert_int_equal(r.commands, 0);
    assert_int_equal(r.file_bytes, 0);
    assert_int_equal(aofload_check(path, false, &r), 0);
    char missing[160];
    snprintf(missing, sizeof(missing), "%s/none.aof", dir.path);
    assert_int_equal(aofload_file(&fx->f.s, missing, true, true, &r), -ENOENT);
    assert_non_null(strstr(r.err, missing));
    assert_int_equal(aofload_check(missing, false, &r), -ENOENT);
    aof_fx_free(fx);
}

/* While replaying nothing is fed, nothing expires, and maxmemory refuses
 * nothing; afterwards the server is as before. */
static void test_replay_rules(void **state)
{
    (void)state;
    char text[512];
    snprintf(text, sizeof(text),
             "%s*3\r\n$9\r\nPEXPIREAT\r\n$1\r\na\r\n$1\r\n5\r\n%s"
             "*3\r\n$10\r\nCF.RESERVE\r\n$1\r\nr\r\n$7\r\n1000000\r\n",
             SET_A, "*3\r\n$6\r\nCF.ADD\r\n$1\r\na\r\n$1\r\nz\r\n");
    write_text(text);
    aof_fx_t *fx = aof_fx_new(true);
    fx->f.cfg.maxmemory = 1;
    aofload_report_t r;
    assert_int_equal(aofload_file(&fx->f.s, path, true, true, &r), 0);
    assert_int_equal(r.commands, 4);
    assert_int_equal(fx->feed->n, 0);
    assert_ptr_equal(fx->f.s.on_propagate, fx_on_propagate);
    assert_false(fx->f.s.loading);
    int64_t when;
    const cf_filter_t *f = ks_find(fx->f.s.dbs[0], "a", 1, &when);
    assert_non_null(f);
    assert_int_equal(when, 5);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.items, 2); /* both adds went to one filter */
    assert_non_null(ks_find(fx->f.s.dbs[0], "r", 1, &when));
    /* past its time, it goes at the first lookup once loaded (logged) */
    assert_null(expire_lookup(&fx->f.s, 0, "a", 1, NULL));
    assert_int_equal(fx->feed->n, 1);
    assert_true(FEED_IS(fx->feed, 0, "DEL", "a"));
    aof_fx_free(fx);
}

static void test_check_and_fix(void **state)
{
    (void)state;
    char text[512];
    aofload_report_t r;
    snprintf(text, sizeof(text), "%s%s", SET_A, SET_B);
    write_text(text);
    assert_int_equal(aofload_check(path, false, &r), 0);
    assert_int_equal(r.commands, 2);
    assert_int_equal(r.good_bytes, strlen(text));
    /* torn: reported, then cut to the whole commands */
    snprintf(text, sizeof(text), "%s%.*s", SET_A, 7, SET_B);
    write_text(text);
    assert_int_equal(aofload_check(path, false, &r), -EINVAL);
    assert_true(r.truncated);
    assert_int_equal(r.good_bytes, strlen(SET_A));
    size_t len;
    assert_int_equal((read_text(&len), len), strlen(text));
    assert_int_equal(aofload_check(path, true, &r), -EINVAL);
    assert_int_equal((read_text(&len), len), strlen(SET_A));
    assert_int_equal(aofload_check(path, false, &r), 0);
    /* an open transaction is cut before its MULTI */
    snprintf(text, sizeof(text), "%s*1\r\n$5\r\nMULTI\r\n%s", SET_A, SET_B);
    write_text(text);
    assert_int_equal(aofload_check(path, true, &r), -EINVAL);
    assert_non_null(strstr(r.err, "MULTI without EXEC"));
    assert_int_equal((read_text(&len), len), strlen(SET_A));
    /* damage in the middle: the prefix before it */
    snprintf(text, sizeof(text), "%sgarbage\r\n%s", SET_A, SET_B);
    write_text(text);
    assert_int_equal(aofload_check(path, false, &r), -EINVAL);
    assert_false(r.truncated);
    assert_int_equal(r.good_bytes, strlen(SET_A));
    assert_non_null(strstr(r.err, "offset 30"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_feed_file_replays, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damage_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_multi_at_tail, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_empty_and_missing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_replay_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_and_fix, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
