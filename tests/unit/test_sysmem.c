/* Unit tests for server/sysmem.c: the cgroup memory limit read from fake
 * /proc/self/cgroup files and cgroup trees (v1 and v2) in a temporary
 * directory. */
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

#include "sysmem.h"
#include "unit_fixture.h"

#define MiB (1024ull * 1024ull)
#define NONE UINT64_MAX

typedef struct fixture {
    scratch_dir_t dir;
    char proc[128]; /* the fake /proc/self/cgroup */
    char root[128]; /* the fake /sys/fs/cgroup */
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    scratch_dir_make(&fx->dir, "test_sysmem", false);
    snprintf(fx->proc, sizeof(fx->proc), "%s/cgroup", fx->dir.path);
    snprintf(fx->root, sizeof(fx->root), "%s/sys", fx->dir.path);
    assert_int_equal(mkdir(fx->root, 0700), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;
    scratch_dir_remove(&fx->dir);
    free(fx);
    return 0;
}

/* Writes text to path, creating its directories. */
static void put(const char *path, const char *text)
{
    char d[512];
    snprintf(d, sizeof(d), "%s", path);
    for (char *p = d + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        assert_true(mkdir(d, 0700) == 0 || errno == EEXIST);
        *p = '/';
    }
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Writes text to root/rel. */
static void put_in(const fixture_t *fx, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", fx->root, rel);
    put(p, text);
}

static uint64_t limit(const fixture_t *fx)
{
    return sysmem_cgroup_limit(fx->proc, fx->root);
}

static void test_v2_limit(void **state)
{
    fixture_t *fx = *state;
    put(fx->proc, "0::/kubepods/pod1/c1\n");
    put_in(fx, "kubepods/pod1/c1/memory.max", "1073741824\n");
    assert_int_equal(limit(fx), 1024 * MiB);
}

static void test_v2_max_is_none(void **state)
{
    fixture_t *fx = *state;
    put(fx->proc, "0::/user.slice/session-1.scope\n");
    put_in(fx, "user.slice/session-1.scope/memory.max", "max\n");
    put_in(fx, "user.slice/memory.max", "max\n");
    assert_true(limit(fx) == NONE);
}

/* The lowest limit on the way up wins, wherever it is. */
static void test_v2_nested(void **state)
{
    fixture_t *fx = *state;
    put(fx->proc, "0::/kubepods/pod1/c1\n");
    put_in(fx, "kubepods/pod1/c1/memory.max", "max\n");
    put_in(fx, "kubepods/pod1/memory.max", "536870912\n");
    put_in(fx, "kubepods/memory.max", "1073741824\n");
    assert_int_equal(limit(fx), 512 * MiB);
    put_in(fx, "kubepods/pod1/c1/memory.max", "268435456\n");
    assert_int_equal(limit(fx), 256 * MiB);
    put_in(fx, "kubepods/memory.max", "134217728\n");
    assert_int_equal(limit(fx), 128 * MiB);
}

/* In a cgroup namespace the process sees "0::/" and the root holds the
 * container's own limit. */
static void test_v2_namespace_root(void **state)
{
    fixture_t *fx = *state;
    put(fx->proc, "0::/"); /* the last line may lack its newline */
    put_in(fx, "memory.max", "2147483648\n");
    assert_int_equal(limit(fx), 2048 * MiB);
}

static void test_v1_limit(void **state)
{
    fixture_t *fx = *state;
    put(fx->proc, "9:name=systemd:/docker/abc\n"
                  "4:cpu,memory:/docker/abc\n"
                  "3:cpuset:/docker/abc\n"
                  "0::/\n");
    put_in(fx, "memory/docker/abc/memory.limit_in_bytes", "268435456\n");
    put_in(fx, "memory/memory.limit_in_bytes", "9223372036854771712\n");
    assert_int_equal(limit(fx), 256 * MiB);
    /* v1's "unlimited" is the largest page multiple below 2^63. */
    put_in(fx, "memory/docker/abc/memory.limit_in_bytes",
           "9223372036854771712\n");
    assert_true(limit(fx) == NONE);
}

/* Docker on cgroup v1 without a cgroup namespace: /proc/self/cgroup names
 * the host's path, but the container's group is mounted as the root. */
static void test_v1_container_mounted_as_root(void **state)
{
    fixture_t *fx = *state;
    put(fx->proc, "4:memory:/docker/0123456789abcdef\n0::/\n");
    put_in(fx, "memory/memory.limit_in_bytes", "536870912\n");
    assert_int_equal(limit(fx), 512 * MiB);
}

/* A hybrid host: memory on v1, the unified tree without memory.max. */
static void test_hybrid(void **state)
{
    fixture_t *fx = *state;
    put(fx->proc, "4:memory:/app\n0::/app\n");
    put_in(fx, "memory/app/memory.limit_in_bytes", "104857600\n");
    put_in(fx, "app/cgroup.procs", "1\n");
    assert_int_equal(limit(fx), 100 * MiB);
    put_in(fx, "app/memory.max", "52428800\n");
    assert_int_equal(limit(fx), 50 * MiB);
}

static void test_missing_is_none(void **state)
{
    fixture_t *fx = *state;
    assert_true(limit(fx) == NONE); /* no /proc/self/cgroup */
    put(fx->proc, "0::/a/b\n");
    assert_true(limit(fx) == NONE); /* no files in the tree */
    put(fx->proc, "4:memory:/a/b\n");
    assert_true(limit(fx) == NONE);
    assert_true(sysmem_cgroup_limit(fx->proc, "/nonexistent") == NONE);
}

/* What cannot be read as a number of bytes sets no limit. */
static void test_junk_is_none(void **state)
{
    fixture_t *fx = *state;
    static const char *junk[] = {"",
                                 "\n",
                                 "12abc\n",
                                 "-5\n",
                                 " 100\n",
                                 "max100\n",
                                 "99999999999999999999999\n"};
    put(fx->proc, "0::/a\n");
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
        put_in(fx, "a/memory.max", junk[i]);
        assert_true(limit(fx) == NONE);
    }
    /* A line too long to read is skipped whole, also what looks like a
     * line in its tail. */
    char big[4200];
    memset(big, 'x', 4095);
    memcpy(big, "4:memory:/", 10);
    strcpy(big + 4095, "0::/a\n"); /* where a 4 KiB read stops */
    put(fx->proc, big);
    put_in(fx, "a/memory.max", "4096\n");
    assert_true(limit(fx) == NONE);
    /* Malformed lines are skipped. */
    put(fx->proc, "garbage\n0:memory\n4:memory:relative\n0::/a\n");
    put_in(fx, "a/memory.max", "4096\n");
    assert_int_equal(limit(fx), 4096);
}

/* The effective limit is never above the machine's memory. */
static void test_limit_at_most_physical(void **state)
{
    (void)state;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    assert_true(pages > 0 && psize > 0);
    assert_true(sysmem_limit() > 0);
    assert_true(sysmem_limit() <= (uint64_t)pages * (uint64_t)psize);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v2_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_max_is_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_namespace_root, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_v1_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v1_container_mounted_as_root,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_hybrid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_is_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_junk_is_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_at_most_physical, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
