/* Unit tests for server/persist.c: loading at start-up, the write gate and
 * INFO persistence, with a real server state and snapshot files in a
 * temporary directory (the working directory, as main() arranges). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cf.h"
#include "keyspace.h"
#include "persist.h"
#include "server_int.h"
#include "snapshot.h"
#include "unit_fixture.h"

typedef struct fixture {
    scratch_dir_t dir; /* the working directory */
    srv_fixture_t f;
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    scratch_dir_make(&fx->dir, "test_persist", true);
    srv_fixture_init(&fx->f);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    /* Not asserted: these tests check persistence, not that every handle
     * of the loop was closed. */
    persist_free(&fx->f.s);
    (void)srv_fixture_free(&fx->f);
    scratch_dir_remove(&fx->dir);
    free(fx);
    return 0;
}

static void start(fixture_t *fx, int databases)
{
    fx->f.cfg.databases = databases;
    srv_fixture_start(&fx->f);
    assert_int_equal(persist_init(&fx->f.s), 0);
}

static cf_filter_t *mkfilter(const char *item)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = 1000;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    assert_true(cf_add(f, item, strlen(item)) >= 0);
    return f;
}

/* A snapshot with key "k<db>" holding item "i<db>" in each listed db. */
typedef struct src {
    const int *dbs;
    int n;
    cf_filter_t *f[8];
} src_t;

static int src_iter(void *p, snap_each_fn *each, void *ctx)
{
    src_t *s = p;
    for (int i = 0; i < s->n; i++) {
        char key[16];
        snprintf(key, sizeof(key), "k%d", s->dbs[i]);
        int rc = each(ctx, s->dbs[i], key, strlen(key), s->f[i], -1);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void write_snapshot(const int *dbs, int n)
{
    src_t s = {dbs, n, {0}};
    char err[256];
    for (int i = 0; i < n; i++) {
        char item[16];
        snprintf(item, sizeof(item), "i%d", dbs[i]);
        s.f[i] = mkfilter(item);
    }
    assert_int_equal(snap_save("dump.cuckoo", src_iter, &s, err, sizeof(err)),
                     0);
    for (int i = 0; i < n; i++)
        cf_free(s.f[i]);
}

static void test_missing_file_is_empty_start(void **state)
{
    fixture_t *fx = *state;
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    assert_int_equal(ks_size(fx->f.s.dbs[0]), 0);
    assert_null(server_writes_denied(&fx->f.s));
}

static void test_loads_every_database(void **state)
{
    fixture_t *fx = *state;
    static const int dbs[] = {0, 3, 15};
    write_snapshot(dbs, 3);
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    for (int i = 0; i < 3; i++) {
        char key[16], item[16];
        snprintf(key, sizeof(key), "k%d", dbs[i]);
        snprintf(item, sizeof(item), "i%d", dbs[i]);
        const cf_filter_t *f = ks_get(fx->f.s.dbs[dbs[i]], key, strlen(key));
        assert_non_null(f);
        assert_true(cf_exists(f, item, strlen(item)));
        assert_int_equal(ks_size(fx->f.s.dbs[dbs[i]]), 1);
    }
    assert_int_equal(ks_size(fx->f.s.dbs[1]), 0);
}

static void test_database_out_of_range_refused(void **state)
{
    fixture_t *fx = *state;
    static const int dbs[] = {1, 7};
    write_snapshot(dbs, 2);
    start(fx, 4);
    assert_int_equal(persist_load(&fx->f.s), -ERANGE);
    /* Nothing half-loaded stays. */
    assert_int_equal(ks_size(fx->f.s.dbs[1]), 0);
}

static void test_corrupt_file_refused_and_kept(void **state)
{
    fixture_t *fx = *state;
    static const int dbs[] = {0};
    write_snapshot(dbs, 1);
    FILE *fp = fopen("dump.cuckoo", "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 20, SEEK_SET), 0);
    int ch = fgetc(fp);
    assert_int_equal(fseek(fp, 20, SEEK_SET), 0);
    fputc(ch ^ 0x01, fp);
    fclose(fp);
    struct stat before, after;
    assert_int_equal(stat("dump.cuckoo", &before), 0);
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), -EINVAL);
    assert_int_equal(ks_size(fx->f.s.dbs[0]), 0);
    assert_int_equal(stat("dump.cuckoo", &after), 0);
    assert_int_equal(before.st_size, after.st_size);
    assert_int_equal(before.st_mtime, after.st_mtime);
}

/* A pid no process can have: above the kernel's pid_max (at most 2^22). */
static long dead_pid(void)
{
    long max = 4194304;
    FILE *fp = fopen("/proc/sys/kernel/pid_max", "r");
    if (fp != NULL) {
        if (fscanf(fp, "%ld", &max) != 1)
            max = 4194304;
        fclose(fp);
    }
    return max + 1;
}

/* The start-up sweep removes what a dead process left, and keeps the file
 * of a live one (another instance sharing the directory). */
static void test_stale_temp_removed(void **state)
{
    fixture_t *fx = *state;
    char dead[64], live[64];
    snprintf(dead, sizeof(dead), "dump.cuckoo.tmp-%ld-3", dead_pid());
    snprintf(live, sizeof(live), "dump.cuckoo.tmp-%ld-4", (long)getppid());
    FILE *fp = fopen(dead, "wb");
    assert_non_null(fp);
    fclose(fp);
    assert_non_null(fp = fopen(live, "wb"));
    fclose(fp);
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    assert_int_equal(access(dead, F_OK), -1);
    assert_int_equal(access(live, F_OK), 0);
    unlink(live);
}

/* uv_timer_start and uv_signal_start are wrapped (tests/CMakeLists.txt links
 * this test with --wrap) so that one of them can fail on demand: with a
 * valid handle and signal neither fails in practice. */
static int fail_timer_start, fail_signal_start;

int __real_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout,
                          uint64_t repeat);
int __real_uv_signal_start(uv_signal_t *h, uv_signal_cb cb, int signum);

int __wrap_uv_timer_start(uv_timer_t *h, uv_timer_cb cb, uint64_t timeout,
                          uint64_t repeat)
{
    if (fail_timer_start != 0)
        return fail_timer_start;
    return __real_uv_timer_start(h, cb, timeout, repeat);
}

int __wrap_uv_signal_start(uv_signal_t *h, uv_signal_cb cb, int signum)
{
    if (fail_signal_start != 0)
        return fail_signal_start;
    return __real_uv_signal_start(h, cb, signum);
}

/* persist_start() reports a handle that cannot be started and leaves
 * nothing active; then it can start again. */
static void test_start_fails_cleanly(void **state)
{
    fixture_t *fx = *state;
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    for (int round = 0; round < 2; round++) {
        fail_timer_start = round == 0 ? UV_EINVAL : 0;
        fail_signal_start = round == 1 ? UV_ENOSYS : 0;
        int rc = persist_start(&fx->f.s);
        fail_timer_start = fail_signal_start = 0;
        assert_int_equal(rc, round == 0 ? UV_EINVAL : UV_ENOSYS);
        uv_run(&fx->f.loop, UV_RUN_DEFAULT); /* ends: nothing is active */
        assert_false(uv_loop_alive(&fx->f.loop));
    }
    assert_int_equal(persist_start(&fx->f.s), 0);
    assert_true(uv_loop_alive(&fx->f.loop));
    persist_on_shutdown(&fx->f.s);
    uv_run(&fx->f.loop, UV_RUN_DEFAULT);
    assert_false(uv_loop_alive(&fx->f.loop));
}

static void test_write_gate(void **state)
{
    fixture_t *fx = *state;
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    assert_null(server_writes_denied(&fx->f.s));
    /* What a failed background save sets (its text: test_persist.py). */
    static const char misconf[] = "MISCONF unable to persist";
    server_deny_writes(&fx->f.s, misconf);
    assert_ptr_equal(server_writes_denied(&fx->f.s), misconf);
    fx->f.cfg.stop_writes_on_bgsave_error = false;
    assert_null(server_writes_denied(&fx->f.s));
    fx->f.cfg.stop_writes_on_bgsave_error = true;
    fx->f.cfg.nsave = 0; /* save "": no MISCONF, as Redis */
    assert_null(server_writes_denied(&fx->f.s));
}

static void test_info_fields(void **state)
{
    fixture_t *fx = *state;
    sbuf_t b = {0};
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    fx->f.s.dirty = 42;
    persist_info(&fx->f.s, &b);
    assert_false(b.failed);
    const char *buf = b.p;
    assert_non_null(strstr(buf, "loading:0\r\n"));
    assert_non_null(strstr(buf, "rdb_changes_since_last_save:42\r\n"));
    assert_non_null(strstr(buf, "rdb_bgsave_in_progress:0\r\n"));
    assert_non_null(strstr(buf, "rdb_last_bgsave_status:ok\r\n"));
    assert_non_null(strstr(buf, "rdb_last_bgsave_time_sec:-1\r\n"));
    assert_non_null(strstr(buf, "rdb_current_bgsave_time_sec:-1\r\n"));
    fx->f.s.persist->last_bgsave_err = true;
    b.len = 0;
    persist_info(&fx->f.s, &b);
    assert_non_null(strstr(b.p, "rdb_last_bgsave_status:err\r\n"));
    free(b.p);
}

static void test_shutdown_save_writes_file(void **state)
{
    fixture_t *fx = *state;
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    cf_filter_t *f = mkfilter("x");
    assert_int_equal(ks_add(fx->f.s.dbs[2], "key", 3, &f), 0);
    fx->f.s.dirty = 1;
    assert_int_equal(persist_shutdown_save(&fx->f.s, false, true, false), 0);
    assert_int_equal(fx->f.s.dirty, 0);
    assert_int_equal(access("dump.cuckoo", F_OK), 0);
    /* Once done, later calls do nothing. */
    assert_int_equal(unlink("dump.cuckoo"), 0);
    assert_int_equal(persist_shutdown_save(&fx->f.s, false, true, false), 0);
    assert_int_equal(access("dump.cuckoo", F_OK), -1);
}

static void test_shutdown_save_failure(void **state)
{
    fixture_t *fx = *state;
    char err[256];
    start(fx, 16);
    assert_int_equal(persist_load(&fx->f.s), 0);
    assert_int_equal(mkdir("adir", 0755), 0);
    assert_int_equal(
        cfg_set(&fx->f.cfg, "dbfilename", "adir", err, sizeof(err)), 0);
    assert_true(persist_shutdown_save(&fx->f.s, false, false, false) < 0);
    /* NOSAVE needs no save; a forced exit after a failure exits non-zero. */
    assert_int_equal(persist_shutdown_save(&fx->f.s, true, false, false), 0);
    fx->f.s.persist->shutdown_done = false;
    assert_int_equal(persist_shutdown_save(&fx->f.s, false, false, true), 0);
    assert_true(fx->f.s.persist->shutdown_failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_missing_file_is_empty_start, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_loads_every_database, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_database_out_of_range_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_file_refused_and_kept,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_fails_cleanly, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stale_temp_removed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_write_gate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_save_writes_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_save_failure, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
