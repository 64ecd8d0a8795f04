/*
 * cmd_debug.c - see cmd_debug.h.
 */
#include "cmd_debug.h"

#include <inttypes.h>
#include <stdio.h>

#include "config.h"
#include "conn.h"
#include "errtext.h"
#include "keyspace.h"
#include "lazyfree.h"
#include "reply.h"
#include "server_int.h"
#include "util.h"

/* Redis's text for a subcommand it does not know or got the wrong number
 * of arguments for. */
static void syntax_error(client_t *c, const arg_t *sub)
{
    char name[129];
    size_t n = sub->len < 128 ? sub->len : 128;
    for (size_t i = 0; i < n; i++) {
        char ch = ((const char *)sub->ptr)[i];
        name[i] = ch == '\r' || ch == '\n' ? ' ' : ch;
    }
    name[n] = '\0';
    char msg[256];
    snprintf(msg, sizeof(msg),
             "ERR unknown subcommand or wrong number of arguments for '%s'. "
             "Try DEBUG HELP.",
             name);
    resp_add_error(&c->out, msg);
}

/* One table's part of HTSTATS, in Redis's words. */
static void table_stats(sbuf_t *b, const ks_db_t *db, int table)
{
    ks_table_stats_t st;
    if (!ks_table_stats(db, table, &st))
        return;
    sb_printf(b, "Hash table %d stats (%s):\n", table,
              table == 0 ? "main hash table" : "rehashing target");
    if (st.keys == 0) {
        sb_printf(b, "No stats available for empty dictionaries\n");
        return;
    }
    sb_printf(b,
              " table size: %zu\n"
              " number of elements: %zu\n"
              " different slots: %zu\n"
              " max chain length: %zu\n"
              " avg chain length (counted): %.02f\n"
              " avg chain length (computed): %.02f\n"
              " Chain length distribution:\n",
              st.buckets, st.keys, st.used, st.max_chain,
              (double)st.keys / (double)st.used,
              (double)st.keys / (double)st.used);
    for (size_t i = 0; i < KS_CHAIN_STATS; i++)
        if (st.chains[i] != 0)
            sb_printf(b, "   %zu: %zu (%.02f%%)\n", i, st.chains[i],
                      (double)st.chains[i] * 100.0 / (double)st.buckets);
    if (table == 0 && st.moved > 0)
        sb_printf(b, " buckets moved to table 1: %zu\n", st.moved);
}

static void htstats(client_t *c, const arg_t *dbarg)
{
    long long dbid;
    if (!arg_ll(dbarg, &dbid)) {
        resp_add_error(&c->out, ERRTEXT_NOT_INTEGER);
        return;
    }
    if (dbid < 0 || dbid >= c->srv->ndbs) {
        resp_add_error(&c->out, "ERR Out of range database");
        return;
    }
    const ks_db_t *db = c->srv->dbs[dbid];
    sbuf_t b = {0};
    sb_printf(&b, "[Dictionary HT]\n");
    table_stats(&b, db, 0);
    table_stats(&b, db, 1);
    /* Timeouts live in the keys' entries, not in a second table. */
    sb_printf(&b, "[Expires HT]\n");
    sb_printf(&b,
              "No stats available: the %zu timeouts live in the keys' "
              "entries\n",
              ks_expires(db));
    reply_text(c, &b);
}

/* A <0|1> argument (any integer; not 0 is on): false when it was refused
 * (replied). */
static bool switch_arg(client_t *c, const arg_t *a, bool *on)
{
    long long v;
    if (!arg_ll(a, &v)) {
        resp_add_error(&c->out, ERRTEXT_NOT_INTEGER);
        return false;
    }
    *on = v != 0;
    return true;
}

void cmd_debug_proc(client_t *c, int argc, const arg_t *argv)
{
    int allow = c->srv->cfg->enable_debug_command;
    if (allow == CFG_DEBUG_NO ||
        (allow == CFG_DEBUG_LOCAL && !conn_is_local(c))) {
        resp_add_error(&c->out,
                       "ERR DEBUG command not allowed. If the "
                       "enable-debug-command option is set to \"local\", you "
                       "can run it from a local connection, otherwise you "
                       "need to set this option in the configuration file, "
                       "and then restart the server.");
        return;
    }
    const arg_t *sub = &argv[1];
    if (argc == 2 && arg_is(sub, "help")) {
        static const char *const lines[] = {
            "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DICT-RESIZING <0|1>",
            "    Enable or disable the main dict resizing (and the move of "
            "a resize under way).",
            "LAZYFREE-HOLD <0|1>",
            "    Hold (1) or release (0) the lazy free thread: what is "
            "handed over waits, counted as pending.",
            "HTSTATS <dbid>",
            "    Return hash table statistics of the specified Redis "
            "database.",
            "HELP",
            "    Prints this help.",
        };
        reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
    } else if (argc == 3 && arg_is(sub, "htstats")) {
        htstats(c, &argv[2]);
    } else if (argc == 3 && arg_is(sub, "dict-resizing")) {
        bool on;
        if (switch_arg(c, &argv[2], &on)) {
            ks_set_resizing(on);
            reply_ok(c);
        }
    } else if (argc == 3 && arg_is(sub, "lazyfree-hold")) {
        bool on;
        if (switch_arg(c, &argv[2], &on)) {
            lazyfree_hold(on);
            reply_ok(c);
        }
    } else {
        syntax_error(c, sub);
    }
}
