/*
 * bench_aofload.c - replay speed of the append-only file: writes a file of
 * one CF.RESERVE and N (default 1M) logged CF.ADD commands as an increment
 * file holds them, then loads it with aofload_file() into a fresh server,
 * best of ROUNDS rounds. The reference, measured in the same run, is the
 * core adding the same N items to a filter of the same shape one by one
 * (cf_add_many() with n = 1): the ratio is what parsing and dispatching a
 * logged command costs over the insert itself.
 *
 *   ./build/bench/bench_aofload [n] [rounds]
 *
 * Times are process CPU time (CLOCK_PROCESS_CPUTIME_ID) and wall time;
 * the target is at least 1M replayed CF.ADD per second of CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aofload.h"
#include "cfhost.h"
#include "cmd.h"
#include "cmdtab.h"
#include "multi.h"

#define CAPACITY 2000000

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(FILE *fp, const char *s, size_t len)
{
    fprintf(fp, "$%zu\r\n", len);
    fwrite(s, 1, len, fp);
    fputs("\r\n", fp);
}

static void write_log(const char *path, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL) {
        perror(path);
        exit(1);
    }
    char cap[24], item[32];
    int len = snprintf(cap, sizeof(cap), "%d", CAPACITY);
    fputs("*2\r\n", fp);
    put(fp, "SELECT", 6);
    put(fp, "0", 1);
    fputs("*3\r\n", fp);
    put(fp, "CF.RESERVE", 10);
    put(fp, "bench", 5);
    put(fp, cap, (size_t)len);
    for (size_t i = 0; i < n; i++) {
        len = snprintf(item, sizeof(item), "item:%zu", i);
        fputs("*3\r\n", fp);
        put(fp, "CF.ADD", 6);
        put(fp, "bench", 5);
        put(fp, item, (size_t)len);
    }
    if (fclose(fp) != 0) {
        perror(path);
        exit(1);
    }
}

typedef struct srv {
    uv_loop_t loop;
    cfg_t cfg;
    server_t s;
} srv_t;

static void srv_start(srv_t *v)
{
    const cmd_def_t *tables[] = {cmd_conn_table, cmd_keys_table,
                                 cmd_expire_table, multi_table, cfhost_table()};
    const char *dup;
    memset(v, 0, sizeof(*v));
    if (uv_loop_init(&v->loop) != 0 || cfg_init(&v->cfg) != 0 ||
        server_init(&v->s, &v->loop, &v->cfg) != 0 ||
        cmd_index_build(&v->s, tables, sizeof(tables) / sizeof(tables[0]),
                        &dup) != 0 ||
        multi_init(&v->s) != 0) {
        fprintf(stderr, "cannot start a server\n");
        exit(1);
    }
}

static void srv_stop(srv_t *v)
{
    cmd_index_free(&v->s);
    multi_free(&v->s);
    server_free(&v->s);
    cfg_free(&v->cfg);
    uv_loop_close(&v->loop);
}

/* The core alone: the same items into a filter of the same shape. */
static double core_pass(size_t n)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = CAPACITY;
    cf_filter_t *f;
    if (cf_create(&p, &f) != 0)
        exit(1);
    char item[32];
    uint64_t room = UINT64_MAX;
    double t0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(item, sizeof(item), "item:%zu", i);
        const void *k = item;
        size_t l = (size_t)len;
        int rc;
        cf_add_many(f, 1, &k, &l, false, &room, &rc);
    }
    double t = now(CLOCK_PROCESS_CPUTIME_ID) - t0;
    cf_free(f);
    return t;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    char path[] = "/tmp/bench_aofload-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || n == 0 || rounds < 1)
        return 1;
    close(fd);
    write_log(path, n);
    double best_cpu = 1e30, best_wall = 1e30, best_core = 1e30;
    uint64_t bytes = 0;
    for (int r = 0; r < rounds; r++) {
        srv_t v;
        srv_start(&v);
        aofload_report_t rep;
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        int rc = aofload_file(&v.s, path, true, false, &rep);
        double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        double wall = now(CLOCK_MONOTONIC) - w0;
        if (rc != 0 || rep.commands != n + 2) {
            fprintf(stderr, "load failed: %d %s\n", rc, rep.err);
            return 1;
        }
        bytes = rep.file_bytes;
        best_cpu = cpu < best_cpu ? cpu : best_cpu;
        best_wall = wall < best_wall ? wall : best_wall;
        srv_stop(&v);
        double core = core_pass(n);
        best_core = core < best_core ? core : best_core;
    }
    unlink(path);
    double rate = (double)n / best_cpu;
    printf("aofload: %zu CF.ADD, %.1f MB file, best of %d: %.3f s CPU "
           "(%.3f s wall), %.2fM commands/s of CPU, %.0f ns per command\n",
           n, (double)bytes / 1e6, rounds, best_cpu, best_wall, rate / 1e6,
           best_cpu * 1e9 / (double)n);
    printf("core: the same adds one by one %.0f ns per item; replay / core "
           "= %.2f\n",
           best_core * 1e9 / (double)n, best_cpu / best_core);
    printf("target aofload_cmds_per_cpu_sec %.0f >= 1000000 %s\n", rate,
           rate >= 1e6 ? "met" : "MISSED");
    return 0;
}
