/*
 * acl_fixture.h - the ACL harnesses' server: the daemon's command tables
 * and the ACL module, without a loop or listeners (the ACL code needs the
 * command index and the users only). Built once per process.
 */
#ifndef ACL_FIXTURE_H
#define ACL_FIXTURE_H

#include <stdlib.h>

#include "acl.h"
#include "cfhost.h"
#include "cmd.h"
#include "cmd_admin.h"
#include "cmdtab.h"
#include "multi.h"
#include "server_int.h"
#include "slowlog.h"

static server_t *acl_fixture(void)
{
    static server_t s;
    static cfg_t cfg;
    static int ready;
    if (ready)
        return &s;
    const char *dup = NULL;
    const cmd_def_t *tables[] = {
        cmd_conn_table,   cmd_client_table, cmd_keys_table,
        cmd_expire_table, multi_table,      cmd_admin_table,
        slowlog_table,    cmd_acl_table,    cfhost_table()};
    if (cfg_init(&cfg) < 0)
        abort();
    s.cfg = &cfg;
    if (tables[8] == NULL ||
        cmd_index_build(&s, tables, sizeof(tables) / sizeof(tables[0]), &dup) <
            0 ||
        acl_init(&s) < 0)
        abort();
    ready = 1;
    return &s;
}

#endif /* ACL_FIXTURE_H */
