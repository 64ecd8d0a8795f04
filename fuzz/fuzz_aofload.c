/*
 * fuzz_aofload.c - libFuzzer harness for the append-only file's replay
 * (server/aofload.h): each input is a file of commands, checked, then
 * replayed as the last file (with and without aof-load-truncated) into a
 * server with the command families that a log holds, through the real
 * dispatcher. The data is dropped between inputs; the machine's memory
 * seen by the server is capped so that a replayed CF.RESERVE or RESTORE
 * cannot ask for more than a fuzzer may hold.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "aofload.h"
#include "cfhost.h"
#include "cmd.h"
#include "cmdtab.h"
#include "multi.h"
#include "propagate.h"

static uv_loop_t loop;
static cfg_t cfg;
static server_t srv;
static char path[] = "/tmp/fuzz_aofload-XXXXXX";

static void init_once(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    int fd = mkstemp(path);
    if (fd < 0 || uv_loop_init(&loop) != 0 || cfg_init(&cfg) != 0 ||
        server_init(&srv, &loop, &cfg) != 0)
        abort();
    close(fd);
    const cmd_def_t *tables[] = {cmd_conn_table, cmd_keys_table,
                                 cmd_expire_table, multi_table, cfhost_table()};
    const char *dup;
    if (cmd_index_build(&srv, tables, sizeof(tables) / sizeof(tables[0]),
                        &dup) != 0 ||
        multi_init(&srv) != 0)
        abort();
    srv.phys_memory = 64 << 20;
}

static void write_file(const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    aofload_report_t r;
    write_file(data, size);
    int check = aofload_check(path, false, &r);
    uint64_t good = r.good_bytes;
    if (r.good_bytes > size || (check == 0 && good != size))
        abort();
    for (int k = 0; k < 2; k++) {
        write_file(data, size);
        int rc = aofload_file(&srv, path, true, k == 1, &r);
        if (srv.loading || r.good_bytes > size)
            abort();
        /* a file the check finds whole replays whole or is refused for
         * what it says; a torn one is cut where the check said */
        if (rc == 0 && r.truncated && r.good_bytes != good)
            abort();
        for (int i = 0; i < srv.ndbs; i++)
            ks_flush(srv.dbs[i]);
    }
    return 0;
}
