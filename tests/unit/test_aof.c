/* Unit tests for server/aof.c: the feed's RESP and SELECTs, the files at
 * start, the write gate on a write error, and start-up refusals, with a
 * real server state in a temporary working directory. The sink is called
 * directly, as the dispatcher's propagation will call it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aof.h"
#include "aof_int.h"
#include "persist.h"
#include "server_int.h"
#include "unit_fixture.h"

typedef struct fixture {
    scratch_dir_t dir;
    srv_fixture_t f;
    bool started;
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    scratch_dir_make(&fx->dir, "test_aof", true);
    srv_fixture_init(&fx->f);
    fx->f.cfg.appendonly = true;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    if (fx->started) {
        aof_on_shutdown(&fx->f.s);
        uv_run(&fx->f.loop, UV_RUN_DEFAULT); /* the handles close */
    }
    aof_free(&fx->f.s);
    persist_free(&fx->f.s);
    (void)srv_fixture_free(&fx->f);
    scratch_dir_remove(&fx->dir);
    free(fx);
    return 0;
}

static void start(fixture_t *fx)
{
    srv_fixture_start(&fx->f);
    assert_int_equal(persist_init(&fx->f.s), 0);
    assert_int_equal(aof_init(&fx->f.s, NULL), 0);
    assert_int_equal(aof_load(&fx->f.s), 0);
    assert_int_equal(aof_start(&fx->f.s), 0);
    fx->started = true;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

static void feed(server_t *s, int db, int argc, const char **words)
{
    arg_t argv[8];
    for (int i = 0; i < argc; i++)
        argv[i] = (arg_t){words[i], strlen(words[i])};
    s->on_propagate(s, db, argc, argv);
}

static void test_start_writes_base_incr_manifest(void **state)
{
    fixture_t *fx = *state;
    start(fx);
    struct stat st;
    assert_int_equal(stat("appendonlydir/appendonly.aof.1.base.rdb", &st), 0);
    assert_int_equal(stat("appendonlydir/appendonly.aof.1.incr.aof", &st), 0);
    assert_int_equal(st.st_size, 0);
    size_t len;
    char *m = slurp("appendonlydir/appendonly.aof.manifest", &len);
    assert_string_equal(m, "file appendonly.aof.1.base.rdb seq 1 type b\n"
                           "file appendonly.aof.1.incr.aof seq 1 type i\n");
    free(m);
    assert_ptr_equal(fx->f.s.on_propagate, aof_feed);
}

static void test_feed_is_resp_with_selects(void **state)
{
    fixture_t *fx = *state;
    start(fx);
    server_t *s = &fx->f.s;
    feed(s, 0, 3, (const char *[]){"CF.ADD", "f", "a"});
    feed(s, 0, 2, (const char *[]){"DEL", "g"});
    feed(s, 3, 3, (const char *[]){"CF.ADD", "f", "b\r\n"});
    aof_flush(s, true);
    size_t len;
    char *got = slurp("appendonlydir/appendonly.aof.1.incr.aof", &len);
    const char *want = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
                       "*3\r\n$6\r\nCF.ADD\r\n$1\r\nf\r\n$1\r\na\r\n"
                       "*2\r\n$3\r\nDEL\r\n$1\r\ng\r\n"
                       "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n"
                       "*3\r\n$6\r\nCF.ADD\r\n$1\r\nf\r\n$3\r\nb\r\n\r\n";
    assert_int_equal(len, strlen(want));
    assert_memory_equal(got, want, len);
    free(got);
    sbuf_t b = {0};
    aof_info(s, &b);
    assert_non_null(strstr(b.p, "aof_enabled:1\r\n"));
    assert_non_null(strstr(b.p, "aof_buffer_length:0\r\n"));
    assert_int_equal(s->aof->incr_size, len);
    free(b.p);
}

static void test_always_holds_replies_until_synced(void **state)
{
    fixture_t *fx = *state;
    fx->f.cfg.appendfsync = CFG_FSYNC_ALWAYS;
    start(fx);
    server_t *s = &fx->f.s;
    assert_non_null(s->hold_replies);
    assert_false(s->hold_replies(s, false)); /* nothing to log: no wait */
    feed(s, 0, 3, (const char *[]){"CF.ADD", "f", "a"});
    /* what a connection asks before it replies: wait for the sync */
    assert_true(s->hold_replies(s, false));
    struct stat st;
    assert_int_equal(stat("appendonlydir/appendonly.aof.1.incr.aof", &st), 0);
    assert_int_equal(st.st_size, 0);
    /* urgent: written and synced now, no wait */
    assert_false(s->hold_replies(s, true));
    assert_int_equal(stat("appendonlydir/appendonly.aof.1.incr.aof", &st), 0);
    assert_true(st.st_size > 0);
    assert_int_equal(s->aof->len, 0);
}

static void test_write_error_denies_writes_until_it_clears(void **state)
{
    fixture_t *fx = *state;
    start(fx);
    server_t *s = &fx->f.s;
    int good = s->aof->fd;
    /* Injected failure: the increment's descriptor swapped for one that
     * cannot be written (EBADF), as a disk that refuses writes. */
    s->aof->fd = open("/dev/null", O_RDONLY);
    assert_true(s->aof->fd >= 0);
    feed(s, 0, 3, (const char *[]){"CF.ADD", "f", "a"});
    aof_flush(s, true);
    const char *denied = server_writes_denied(s);
    assert_non_null(denied);
    assert_non_null(strstr(denied, "MISCONF Errors writing to the AOF file: "));
    assert_true(s->aof->len > 0); /* kept for the retry */
    sbuf_t b = {0};
    aof_info(s, &b);
    assert_non_null(strstr(b.p, "aof_last_write_status:err\r\n"));
    free(b.p);
    close(s->aof->fd);
    s->aof->fd = good;
    aof_flush(s, false); /* the retry */
    assert_null(server_writes_denied(s));
    assert_int_equal(s->aof->len, 0);
    struct stat st;
    assert_int_equal(stat("appendonlydir/appendonly.aof.1.incr.aof", &st), 0);
    assert_int_equal(st.st_size, 53); /* SELECT 0, then the command */
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_damaged_manifest_refuses_start(void **state)
{
    fixture_t *fx = *state;
    assert_int_equal(mkdir("appendonlydir", 0755), 0);
    const char *bad = "file appendonly.aof.1.base.rdb seq 1 type b\n"
                      "file appendonly.aof.1.incr.aof seq 1 type z\n";
    write_file("appendonlydir/appendonly.aof.manifest", bad);
    srv_fixture_start(&fx->f);
    assert_int_equal(persist_init(&fx->f.s), 0);
    assert_int_equal(aof_init(&fx->f.s, NULL), 0);
    assert_int_equal(aof_load(&fx->f.s), -EINVAL);
    size_t len;
    char *m = slurp("appendonlydir/appendonly.aof.manifest", &len);
    assert_string_equal(m, bad); /* untouched */
    free(m);
}

static void test_missing_base_refuses_start(void **state)
{
    fixture_t *fx = *state;
    assert_int_equal(mkdir("appendonlydir", 0755), 0);
    write_file("appendonlydir/appendonly.aof.manifest",
               "file appendonly.aof.1.base.rdb seq 1 type b\n");
    srv_fixture_start(&fx->f);
    assert_int_equal(persist_init(&fx->f.s), 0);
    assert_int_equal(aof_init(&fx->f.s, NULL), 0);
    assert_int_equal(aof_load(&fx->f.s), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_start_writes_base_incr_manifest,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_is_resp_with_selects, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_always_holds_replies_until_synced,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_write_error_denies_writes_until_it_clears, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_manifest_refuses_start,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_base_refuses_start, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
