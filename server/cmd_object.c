/*
 * cmd_object.c - see cmd_object.h.
 */
#include "cmd_object.h"

#include "expire.h"
#include "reply.h"
#include "server_int.h"

static bool live(client_t *c, const arg_t *key)
{
    return expire_lookup(c->srv, c->dbnum, key->ptr, key->len, NULL) != NULL;
}

/* OBJECT's subcommands. A filter is one allocation that nothing shares, so
 * its encoding is what redis-server answers for a module's value, "raw",
 * and its reference count 1. No access time or counter is kept: the idle
 * time is 0, and the frequency, as in Redis under a policy other than
 * LFU (the only policy here is noeviction), is refused. */
void cmd_object_encoding(client_t *c, int argc, const arg_t *argv)
{
    if (!live(c, &argv[2]))
        resp_add_null(&c->out);
    else
        resp_add_cstr(&c->out, "raw");
}

static void object_int(client_t *c, const arg_t *key, int64_t v)
{
    if (!live(c, key))
        resp_add_null(&c->out);
    else
        resp_add_int(&c->out, v);
}

void cmd_object_refcount(client_t *c, int argc, const arg_t *argv)
{
    object_int(c, &argv[2], 1);
}

void cmd_object_idletime(client_t *c, int argc, const arg_t *argv)
{
    object_int(c, &argv[2], 0);
}

void cmd_object_freq(client_t *c, int argc, const arg_t *argv)
{
    if (!live(c, &argv[2])) {
        resp_add_null(&c->out);
        return;
    }
    resp_add_error(&c->out,
                   "ERR An LFU maxmemory policy is not selected, access "
                   "frequency not tracked. Please note that when switching "
                   "between policies at runtime LRU and LFU data will take "
                   "some time to adjust.");
}

void cmd_object_help(client_t *c, int argc, const arg_t *argv)
{
    static const char *const lines[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to "
        "store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned "
        "integer is",
        "    proportional to the logarithm of the recent access frequency of "
        "the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated "
        "number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with "
        "the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}
