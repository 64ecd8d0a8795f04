/*
 * cmdtab.c - see cmdtab.h. Adding a command: its entry here, in its
 * family's array (a subcommand in its container's array), its argument
 * docs beside it, and its proc declared in its module's header.
 *
 * Summary, since, group, complexity, arguments and key specs are those
 * Redis 7 reports for the same command, so that COMMAND INFO and COMMAND
 * DOCS answer as redis-server does (tests/integ/test_diff_command.py
 * compares them).
 */
#include "cmdtab.h"

#include "aof.h"
#include "cmd.h"
#include "cmd_acl.h"
#include "cmd_admin.h"
#include "cmd_client.h"
#include "cmd_command.h"
#include "cmd_conn.h"
#include "cmd_expire.h"
#include "cmd_keys.h"
#include "cmd_object.h"
#include "latency.h"
#include "memstat.h"
#include "monitor.h"
#include "multi.h"
#include "persist.h"
#include "slowlog.h"

/* ---- connection: PING ... SELECT and CLIENT (procs in cmd_conn.c, CLIENT's
 * KILL ... NO-TOUCH in cmd_client.c) */

static const cmd_arg_t message_opt[] = {
    {"message", "string", NULL, CMD_ARG_OPTIONAL, NULL}, CMD_ARG_END};
static const cmd_arg_t message_arg[] = {{"message", "string", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t auth_args[] = {
    {"username", "string", NULL, CMD_ARG_OPTIONAL, NULL},
    {"password", "string", NULL, 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t hello_auth_block[] = {
    {"username", "string", NULL, 0, NULL},
    {"password", "string", NULL, 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t hello_block[] = {
    {"protover", "integer", NULL, 0, NULL},
    {"auth", "block", "AUTH", CMD_ARG_OPTIONAL, hello_auth_block},
    {"clientname", "string", "SETNAME", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_arg_t hello_args[] = {
    {"arguments", "block", NULL, CMD_ARG_OPTIONAL, hello_block}, CMD_ARG_END};
static const cmd_arg_t index_arg[] = {{"index", "integer", NULL, 0, NULL},
                                      CMD_ARG_END};
static const cmd_arg_t name_arg[] = {
    {"connection-name", "string", NULL, 0, NULL}, CMD_ARG_END};
static const cmd_arg_t setinfo_attr[] = {
    {"libname", "string", "LIB-NAME", 0, NULL},
    {"libver", "string", "LIB-VER", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t setinfo_args[] = {
    {"attr", "oneof", NULL, 0, setinfo_attr}, CMD_ARG_END};
static const cmd_arg_t client_type[] = {
    {"normal", "pure-token", "NORMAL", 0, NULL},
    {"master", "pure-token", "MASTER", 0, NULL},
    {"replica", "pure-token", "REPLICA", 0, NULL},
    {"pubsub", "pure-token", "PUBSUB", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t client_list_args[] = {
    {"client-type", "oneof", "TYPE", CMD_ARG_OPTIONAL, client_type},
    {"client-id", "integer", "ID", CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    CMD_ARG_END};
static const cmd_arg_t kill_ip_port[] = {{"ip:port", "string", NULL, 0, NULL},
                                         CMD_ARG_END};
static const cmd_arg_t kill_skipme[] = {{"yes", "pure-token", "YES", 0, NULL},
                                        {"no", "pure-token", "NO", 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t kill_filter[] = {
    {"client-id", "integer", "ID", CMD_ARG_OPTIONAL, NULL},
    {"client-type", "oneof", "TYPE", CMD_ARG_OPTIONAL, client_type},
    {"username", "string", "USER", CMD_ARG_OPTIONAL, NULL},
    {"addr", "string", "ADDR", CMD_ARG_OPTIONAL, NULL},
    {"laddr", "string", "LADDR", CMD_ARG_OPTIONAL, NULL},
    {"skipme", "oneof", "SKIPME", CMD_ARG_OPTIONAL, kill_skipme},
    CMD_ARG_END};
static const cmd_arg_t kill_forms[] = {
    {"old-format", "block", NULL, 0, kill_ip_port},
    {"new-format", "block", NULL, CMD_ARG_MULTIPLE, kill_filter},
    CMD_ARG_END};
static const cmd_arg_t kill_args[] = {{"filter", "oneof", NULL, 0, kill_forms},
                                      CMD_ARG_END};
static const cmd_arg_t pause_mode[] = {
    {"write", "pure-token", "WRITE", 0, NULL},
    {"all", "pure-token", "ALL", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t pause_args[] = {
    {"timeout", "integer", NULL, 0, NULL},
    {"mode", "oneof", NULL, CMD_ARG_OPTIONAL, pause_mode},
    CMD_ARG_END};
static const cmd_arg_t reply_mode[] = {{"on", "pure-token", "ON", 0, NULL},
                                       {"off", "pure-token", "OFF", 0, NULL},
                                       {"skip", "pure-token", "SKIP", 0, NULL},
                                       CMD_ARG_END};
static const cmd_arg_t reply_args[] = {{"action", "oneof", NULL, 0, reply_mode},
                                       CMD_ARG_END};
static const cmd_arg_t on_off[] = {{"on", "pure-token", "ON", 0, NULL},
                                   {"off", "pure-token", "OFF", 0, NULL},
                                   CMD_ARG_END};
static const cmd_arg_t enabled_args[] = {{"enabled", "oneof", NULL, 0, on_off},
                                         CMD_ARG_END};
static const cmd_def_t client_subs[] = {
    {.name = "kill",
     .arity = -3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_kill,
     .group = "connection",
     .summary = "Terminates open connections.",
     .since = "2.4.0",
     .complexity = "O(N) where N is the number of client connections",
     .args = kill_args},
    {.name = "pause",
     .arity = -3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_pause,
     .group = "connection",
     .summary = "Suspends commands processing.",
     .since = "3.0.0",
     .complexity = "O(1)",
     .args = pause_args},
    {.name = "unpause",
     .arity = 2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_unpause,
     .group = "connection",
     .summary = "Resumes processing commands from paused clients.",
     .since = "6.2.0",
     .complexity = "O(N) Where N is the number of paused clients"},
    {.name = "reply",
     .arity = 3,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_reply,
     .group = "connection",
     .summary = "Instructs the server whether to reply to commands.",
     .since = "3.2.0",
     .complexity = "O(1)",
     .args = reply_args},
    {.name = "no-evict",
     .arity = 3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_no_evict,
     .group = "connection",
     .summary = "Sets the client eviction mode of the connection.",
     .since = "7.0.0",
     .complexity = "O(1)",
     .args = enabled_args},
    {.name = "no-touch",
     .arity = 3,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_no_touch,
     .group = "connection",
     .summary = "Controls whether commands sent by the client affect the "
                "LRU/LFU of accessed keys.",
     .since = "7.2.0",
     .complexity = "O(1)",
     .args = enabled_args},
    {.name = "getname",
     .arity = 2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_client_getname_proc,
     .group = "connection",
     .summary = "Returns the name of the connection.",
     .since = "2.6.9",
     .complexity = "O(1)"},
    {.name = "id",
     .arity = 2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_client_id_proc,
     .group = "connection",
     .summary = "Returns the unique client ID of the connection.",
     .since = "5.0.0",
     .complexity = "O(1)"},
    {.name = "info",
     .arity = 2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_client_info_proc,
     .group = "connection",
     .summary = "Returns information about the connection.",
     .since = "6.2.0",
     .complexity = "O(1)"},
    {.name = "list",
     .arity = -2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_client_list_proc,
     .group = "connection",
     .summary = "Lists open connections.",
     .since = "2.4.0",
     .complexity = "O(N) where N is the number of client connections",
     .args = client_list_args},
    {.name = "setinfo",
     .arity = 4,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_client_setinfo_proc,
     .group = "connection",
     .summary = "Sets information specific to the client or connection.",
     .since = "7.2.0",
     .complexity = "O(1)",
     .args = setinfo_args},
    {.name = "setname",
     .arity = 3,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_client_setname_proc,
     .group = "connection",
     .summary = "Sets the connection name.",
     .since = "2.6.9",
     .complexity = "O(1)",
     .args = name_arg},
    {.name = "help",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_client_help_proc,
     .group = "connection",
     .summary = "Returns helpful text about the different subcommands.",
     .since = "5.0.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};

const cmd_def_t cmd_conn_table[] = {
    {.name = "ping",
     .arity = -1,
     .flags = CMD_FAST,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_ping_proc,
     .group = "connection",
     .summary = "Returns the server's liveliness response.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = message_opt},
    {.name = "echo",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_echo_proc,
     .group = "connection",
     .summary = "Returns the given string.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = message_arg},
    {.name = "quit",
     .arity = -1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH |
              CMD_ALLOW_BUSY,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_quit_proc,
     .group = "connection",
     .summary = "Closes the connection.",
     .since = "1.0.0",
     .complexity = "O(1)"},
    {.name = "hello",
     .arity = -1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH |
              CMD_ALLOW_BUSY,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_hello_proc,
     .group = "connection",
     .summary = "Handshakes with the server.",
     .since = "6.0.0",
     .complexity = "O(1)",
     .args = hello_args},
    {.name = "auth",
     .arity = -2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH |
              CMD_ALLOW_BUSY,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_auth_proc,
     .group = "connection",
     .summary = "Authenticates the connection.",
     .since = "1.0.0",
     .complexity =
         "O(N) where N is the number of passwords defined for the user",
     .args = auth_args},
    {.name = "select",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_conn_select_proc,
     .group = "connection",
     .summary = "Changes the selected database.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = index_arg},
    {.name = "client",
     .arity = -2,
     .group = "connection",
     .summary = "A container for client connection commands.",
     .since = "2.4.0",
     .complexity = "Depends on subcommand.",
     .subcommands = client_subs},
    CMD_DEF_END,
};

/* ---- RESET (cmd_client.c) ------------------------------------------------ */

const cmd_def_t cmd_client_table[] = {
    {.name = "reset",
     .arity = 1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH |
              CMD_ALLOW_BUSY,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_reset_proc,
     .group = "connection",
     .summary = "Resets the connection.",
     .since = "6.2.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};

/* ---- MONITOR (monitor.c) ------------------------------------------------- */

const cmd_def_t monitor_table[] = {
    {.name = "monitor",
     .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = monitor_proc,
     .group = "server",
     .summary = "Listens for all requests received by the server in real-time.",
     .since = "1.0.0"},
    CMD_DEF_END,
};

/* ---- the keyspace: DEL ... WAIT (cmd_keys.c) and OBJECT (cmd_object.c) --- */

static const cmd_arg_t keys_multi[] = {
    {"key", "key", NULL, CMD_ARG_MULTIPLE, NULL}, CMD_ARG_END};
static const cmd_arg_t key_arg[] = {{"key", "key", NULL, 0, NULL}, CMD_ARG_END};
static const cmd_arg_t pattern_arg[] = {{"pattern", "pattern", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t scan_args[] = {
    {"cursor", "integer", NULL, 0, NULL},
    {"pattern", "pattern", "MATCH", CMD_ARG_OPTIONAL, NULL},
    {"count", "integer", "COUNT", CMD_ARG_OPTIONAL, NULL},
    {"type", "string", "TYPE", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_arg_t rename_args[] = {{"key", "key", NULL, 0, NULL},
                                        {"newkey", "key", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t flush_mode[] = {
    {"async", "pure-token", "ASYNC", 0, NULL},
    {"sync", "pure-token", "SYNC", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t flush_args[] = {
    {"flush-type", "oneof", NULL, CMD_ARG_OPTIONAL, flush_mode}, CMD_ARG_END};
static const cmd_arg_t copy_args[] = {
    {"source", "key", NULL, 0, NULL},
    {"destination", "key", NULL, 0, NULL},
    {"destination-db", "integer", "DB", CMD_ARG_OPTIONAL, NULL},
    {"replace", "pure-token", "REPLACE", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_arg_t move_args[] = {{"key", "key", NULL, 0, NULL},
                                      {"db", "integer", NULL, 0, NULL},
                                      CMD_ARG_END};
static const cmd_arg_t swapdb_args[] = {{"index1", "integer", NULL, 0, NULL},
                                        {"index2", "integer", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t restore_args[] = {
    {"key", "key", NULL, 0, NULL},
    {"ttl", "integer", NULL, 0, NULL},
    {"serialized-value", "string", NULL, 0, NULL},
    {"replace", "pure-token", "REPLACE", CMD_ARG_OPTIONAL, NULL},
    {"absttl", "pure-token", "ABSTTL", CMD_ARG_OPTIONAL, NULL},
    {"seconds", "integer", "IDLETIME", CMD_ARG_OPTIONAL, NULL},
    {"frequency", "integer", "FREQ", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_arg_t wait_args[] = {{"numreplicas", "integer", NULL, 0, NULL},
                                      {"timeout", "integer", NULL, 0, NULL},
                                      CMD_ARG_END};

#define OBJECT_SUB(n, p, sum, since_)                                          \
    {                                                                          \
        .name = n, .arity = 3, .flags = CMD_READONLY, .proc = p,               \
        CMD_KEYRANGE(2, 2, 1), .acl = ACL_CAT_KEYSPACE,                        \
        .keyspecs = {CMD_KS(KS_RO, 2, 0, 1)}, .group = "generic",              \
        .summary = sum, .since = since_, .complexity = "O(1)", .args = key_arg \
    }
static const cmd_def_t object_subs[] = {
    OBJECT_SUB("encoding", cmd_object_encoding,
               "Returns the internal encoding of a Redis object.", "2.2.3"),
    OBJECT_SUB("freq", cmd_object_freq,
               "Returns the logarithmic access frequency counter of a Redis "
               "object.",
               "4.0.0"),
    OBJECT_SUB("idletime", cmd_object_idletime,
               "Returns the time since the last access to a Redis object.",
               "2.2.3"),
    OBJECT_SUB("refcount", cmd_object_refcount,
               "Returns the reference count of a value of a key.", "2.2.3"),
    {.name = "help",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_KEYSPACE,
     .proc = cmd_object_help,
     .group = "generic",
     .summary = "Returns helpful text about the different subcommands.",
     .since = "6.2.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};

const cmd_def_t cmd_keys_table[] = {
    {.name = "del",
     .arity = -2,
     .flags = CMD_WRITE,
     CMD_KEYRANGE(1, -1, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RM | KS_DELETE, 1, -1, 1)},
     .proc = cmd_keys_del_proc,
     .group = "generic",
     .summary = "Deletes one or more keys.",
     .since = "1.0.0",
     .complexity = "O(N) where N is the number of keys that will be removed.",
     .args = keys_multi},
    {.name = "unlink",
     .arity = -2,
     .flags = CMD_WRITE | CMD_FAST,
     CMD_KEYRANGE(1, -1, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RM | KS_DELETE, 1, -1, 1)},
     .proc = cmd_keys_del_proc,
     .group = "generic",
     .summary = "Asynchronously deletes one or more keys.",
     .since = "4.0.0",
     .complexity = "O(1) for each key removed regardless of its size.",
     .args = keys_multi},
    {.name = "exists",
     .arity = -2,
     .flags = CMD_READONLY | CMD_FAST,
     CMD_KEYRANGE(1, -1, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO, 1, -1, 1)},
     .proc = cmd_keys_exists_proc,
     .group = "generic",
     .summary = "Determines whether one or more keys exist.",
     .since = "1.0.0",
     .complexity = "O(N) where N is the number of keys to check.",
     .args = keys_multi},
    {.name = "type",
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     CMD_KEYRANGE(1, 1, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO, 1, 0, 1)},
     .proc = cmd_keys_type_proc,
     .group = "generic",
     .summary = "Determines the type of value stored at a key.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = key_arg},
    {.name = "keys",
     .arity = 2,
     .flags = CMD_READONLY,
     .acl = ACL_CAT_KEYSPACE | ACL_CAT_DANGEROUS,
     .proc = cmd_keys_keys_proc,
     .group = "generic",
     .summary = "Returns all key names that match a pattern.",
     .since = "1.0.0",
     .complexity = "O(N) with N being the number of keys in the database",
     .args = pattern_arg},
    {.name = "scan",
     .arity = -2,
     .flags = CMD_READONLY,
     .acl = ACL_CAT_KEYSPACE,
     .proc = cmd_keys_scan_proc,
     .group = "generic",
     .summary = "Iterates over the key names in the database.",
     .since = "2.8.0",
     .complexity = "O(1) for every call. O(N) for a complete iteration.",
     .args = scan_args},
    {.name = "rename",
     .arity = 3,
     .flags = CMD_WRITE,
     CMD_KEYRANGE(1, 2, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_ACCESS | KS_DELETE, 1, 0, 1),
                  CMD_KS(KS_OW | KS_UPDATE, 2, 0, 1)},
     .proc = cmd_keys_rename_proc,
     .group = "generic",
     .summary = "Renames a key and overwrites the destination.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = rename_args},
    {.name = "dbsize",
     .arity = 1,
     .flags = CMD_READONLY | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .proc = cmd_keys_dbsize_proc,
     .group = "server",
     .summary = "Returns the number of keys in the database.",
     .since = "1.0.0",
     .complexity = "O(1)"},
    {.name = "flushdb",
     .arity = -1,
     .flags = CMD_WRITE,
     .acl = ACL_CAT_KEYSPACE | ACL_CAT_DANGEROUS,
     .proc = cmd_keys_flushdb_proc,
     .group = "server",
     .summary = "Removes all keys from the current database.",
     .since = "1.0.0",
     .complexity =
         "O(N) where N is the number of keys in the selected database",
     .args = flush_args},
    {.name = "flushall",
     .arity = -1,
     .flags = CMD_WRITE,
     .acl = ACL_CAT_KEYSPACE | ACL_CAT_DANGEROUS,
     .proc = cmd_keys_flushall_proc,
     .group = "server",
     .summary = "Removes all keys from all databases.",
     .since = "1.0.0",
     .complexity = "O(N) where N is the total number of keys in all databases",
     .args = flush_args},
    {.name = "copy",
     .arity = -3,
     .flags = CMD_WRITE | CMD_DENYOOM,
     CMD_KEYRANGE(1, 2, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO | KS_ACCESS, 1, 0, 1),
                  CMD_KS(KS_OW | KS_UPDATE, 2, 0, 1)},
     .proc = cmd_keys_copy_proc,
     .group = "generic",
     .summary = "Copies the value of a key to a new key.",
     .since = "6.2.0",
     .complexity = "O(N) worst case for collections, where N is the number "
                   "of nested items. O(1) for string values.",
     .args = copy_args},
    {.name = "renamenx",
     .arity = 3,
     .flags = CMD_WRITE | CMD_FAST,
     CMD_KEYRANGE(1, 2, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_ACCESS | KS_DELETE, 1, 0, 1),
                  CMD_KS(KS_OW | KS_INSERT, 2, 0, 1)},
     .proc = cmd_keys_renamenx_proc,
     .group = "generic",
     .summary = "Renames a key only when the target key name doesn't exist.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = rename_args},
    {.name = "move",
     .arity = 3,
     .flags = CMD_WRITE | CMD_FAST,
     CMD_KEYRANGE(1, 1, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_ACCESS | KS_UPDATE, 1, 0, 1)},
     .proc = cmd_keys_move_proc,
     .group = "generic",
     .summary = "Moves a key to another database.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = move_args},
    {.name = "swapdb",
     .arity = 3,
     .flags = CMD_WRITE | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE | ACL_CAT_DANGEROUS,
     .proc = cmd_keys_swapdb_proc,
     .group = "server",
     .summary = "Swaps two Redis databases.",
     .since = "4.0.0",
     .complexity = "O(N) where N is the count of clients watching or "
                   "blocking on keys from both databases.",
     .args = swapdb_args},
    {.name = "dump",
     .arity = 2,
     .flags = CMD_READONLY,
     CMD_KEYRANGE(1, 1, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO | KS_ACCESS, 1, 0, 1)},
     .proc = cmd_keys_dump_proc,
     .group = "generic",
     .summary = "Returns a serialized representation of the value stored at "
                "a key.",
     .since = "2.6.0",
     .complexity = "O(1) to access the key and additional O(N*M) to "
                   "serialize it.",
     .args = key_arg},
    {.name = "restore",
     .arity = -4,
     .flags = CMD_WRITE | CMD_DENYOOM,
     CMD_KEYRANGE(1, 1, 1),
     .acl = ACL_CAT_KEYSPACE | ACL_CAT_DANGEROUS,
     .keyspecs = {CMD_KS(KS_OW | KS_UPDATE, 1, 0, 1)},
     .proc = cmd_keys_restore_proc,
     .group = "generic",
     .summary = "Creates a key from the serialized representation of a "
                "value.",
     .since = "2.6.0",
     .complexity = "O(1) to create the new key and additional O(N*M) to "
                   "reconstruct the serialized value.",
     .args = restore_args},
    {.name = "touch",
     .arity = -2,
     .flags = CMD_READONLY | CMD_FAST,
     CMD_KEYRANGE(1, -1, 1),
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO, 1, -1, 1)},
     .proc = cmd_keys_exists_proc,
     .group = "generic",
     .summary = "Returns the number of existing keys out of those specified "
                "after updating the time they were last accessed.",
     .since = "3.2.1",
     .complexity = "O(N) where N is the number of keys that will be touched.",
     .args = keys_multi},
    {.name = "randomkey",
     .arity = 1,
     .flags = CMD_READONLY,
     .acl = ACL_CAT_KEYSPACE,
     .proc = cmd_keys_randomkey_proc,
     .group = "generic",
     .summary = "Returns a random key name from the database.",
     .since = "1.0.0",
     .complexity = "O(1)"},
    {.name = "object",
     .arity = -2,
     .group = "generic",
     .summary = "A container for object introspection commands.",
     .since = "2.2.3",
     .complexity = "Depends on subcommand.",
     .subcommands = object_subs},
    {.name = "wait",
     .arity = 3,
     .flags = CMD_NOSCRIPT,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_keys_wait_proc,
     .group = "generic",
     .summary = "Blocks until the asynchronous replication of all preceding "
                "write commands sent by the connection is completed.",
     .since = "3.0.0",
     .complexity = "O(1)",
     .args = wait_args},
    CMD_DEF_END,
};

/* ---- timeouts (cmd_expire.c) --------------------------------------------- */

static const cmd_arg_t cond_tokens[] = {{"nx", "pure-token", "NX", 0, NULL},
                                        {"xx", "pure-token", "XX", 0, NULL},
                                        {"gt", "pure-token", "GT", 0, NULL},
                                        {"lt", "pure-token", "LT", 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t expire_args[] = {
    {"key", "key", NULL, 0, NULL},
    {"seconds", "integer", NULL, 0, NULL},
    {"condition", "oneof", NULL, CMD_ARG_OPTIONAL, cond_tokens},
    CMD_ARG_END};
static const cmd_arg_t pexpire_args[] = {
    {"key", "key", NULL, 0, NULL},
    {"milliseconds", "integer", NULL, 0, NULL},
    {"condition", "oneof", NULL, CMD_ARG_OPTIONAL, cond_tokens},
    CMD_ARG_END};
static const cmd_arg_t expireat_args[] = {
    {"key", "key", NULL, 0, NULL},
    {"unix-time-seconds", "unix-time", NULL, 0, NULL},
    {"condition", "oneof", NULL, CMD_ARG_OPTIONAL, cond_tokens},
    CMD_ARG_END};
static const cmd_arg_t pexpireat_args[] = {
    {"key", "key", NULL, 0, NULL},
    {"unix-time-milliseconds", "unix-time", NULL, 0, NULL},
    {"condition", "oneof", NULL, CMD_ARG_OPTIONAL, cond_tokens},
    CMD_ARG_END};

#define KEY1 .first_key = 1, .last_key = 1, .key_step = 1, .group = "generic"

const cmd_def_t cmd_expire_table[] = {
    {.name = "expire",
     .arity = -3,
     .flags = CMD_WRITE | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_UPDATE, 1, 0, 1)},
     .proc = cmd_expire_expire_proc,
     KEY1,
     .summary = "Sets the expiration time of a key in seconds.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = expire_args},
    {.name = "pexpire",
     .arity = -3,
     .flags = CMD_WRITE | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_UPDATE, 1, 0, 1)},
     .proc = cmd_expire_pexpire_proc,
     KEY1,
     .summary = "Sets the expiration time of a key in milliseconds.",
     .since = "2.6.0",
     .complexity = "O(1)",
     .args = pexpire_args},
    {.name = "expireat",
     .arity = -3,
     .flags = CMD_WRITE | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_UPDATE, 1, 0, 1)},
     .proc = cmd_expire_expireat_proc,
     KEY1,
     .summary = "Sets the expiration time of a key to a Unix timestamp.",
     .since = "1.2.0",
     .complexity = "O(1)",
     .args = expireat_args},
    {.name = "pexpireat",
     .arity = -3,
     .flags = CMD_WRITE | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_UPDATE, 1, 0, 1)},
     .proc = cmd_expire_pexpireat_proc,
     KEY1,
     .summary =
         "Sets the expiration time of a key to a Unix milliseconds timestamp.",
     .since = "2.6.0",
     .complexity = "O(1)",
     .args = pexpireat_args},
    {.name = "ttl",
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO | KS_ACCESS, 1, 0, 1)},
     .proc = cmd_expire_ttl_proc,
     KEY1,
     .summary = "Returns the expiration time in seconds of a key.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = key_arg},
    {.name = "pttl",
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO | KS_ACCESS, 1, 0, 1)},
     .proc = cmd_expire_pttl_proc,
     KEY1,
     .summary = "Returns the expiration time in milliseconds of a key.",
     .since = "2.6.0",
     .complexity = "O(1)",
     .args = key_arg},
    {.name = "expiretime",
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO | KS_ACCESS, 1, 0, 1)},
     .proc = cmd_expire_expiretime_proc,
     KEY1,
     .summary = "Returns the expiration time of a key as a Unix timestamp.",
     .since = "7.0.0",
     .complexity = "O(1)",
     .args = key_arg},
    {.name = "pexpiretime",
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RO | KS_ACCESS, 1, 0, 1)},
     .proc = cmd_expire_pexpiretime_proc,
     KEY1,
     .summary = "Returns the expiration time of a key as a Unix milliseconds "
                "timestamp.",
     .since = "7.0.0",
     .complexity = "O(1)",
     .args = key_arg},
    {.name = "persist",
     .arity = 2,
     .flags = CMD_WRITE | CMD_FAST,
     .acl = ACL_CAT_KEYSPACE,
     .keyspecs = {CMD_KS(KS_RW | KS_UPDATE, 1, 0, 1)},
     .proc = cmd_expire_persist_proc,
     KEY1,
     .summary = "Removes the expiration time of a key.",
     .since = "2.2.0",
     .complexity = "O(1)",
     .args = key_arg},
    CMD_DEF_END,
};

/* ---- transactions (multi.c) ---------------------------------------------- */

static const cmd_arg_t watch_args[] = {
    {"key", "key", NULL, CMD_ARG_MULTIPLE, NULL}, CMD_ARG_END};

/* Redis's flags that this vocabulary has (allow_busy has no meaning here;
 * EXEC's skip_slowlog is main.c's on_call). */
const cmd_def_t multi_table[] = {
    {.name = "multi",
     .arity = 1,
     .flags =
         CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
     .acl = ACL_CAT_TRANSACTION,
     .proc = multi_proc,
     .group = "transactions",
     .summary = "Mark the start of a transaction block",
     .since = "1.2.0",
     .complexity = "O(1)"},
    {.name = "exec",
     .arity = 1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SKIP_SLOWLOG,
     .acl = ACL_CAT_TRANSACTION,
     .proc = multi_exec_proc,
     .group = "transactions",
     .summary = "Execute all commands issued after MULTI",
     .since = "1.2.0",
     .complexity = "Depends on commands in the transaction"},
    {.name = "discard",
     .arity = 1,
     .flags =
         CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
     .acl = ACL_CAT_TRANSACTION,
     .proc = multi_discard_proc,
     .group = "transactions",
     .summary = "Discard all commands issued after MULTI",
     .since = "2.0.0",
     .complexity = "O(N), when N is the number of queued commands"},
    {.name = "watch",
     .arity = -2,
     .flags =
         CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
     CMD_KEYRANGE(1, -1, 1),
     .acl = ACL_CAT_TRANSACTION,
     .keyspecs = {CMD_KS(KS_RO, 1, -1, 1)},
     .proc = multi_watch_proc,
     .group = "transactions",
     .summary = "Watch the given keys to determine execution of the "
                "MULTI/EXEC block",
     .since = "2.2.0",
     .complexity = "O(1) for every key.",
     .args = watch_args},
    {.name = "unwatch",
     .arity = 1,
     .flags =
         CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
     .acl = ACL_CAT_TRANSACTION,
     .proc = multi_unwatch_proc,
     .group = "transactions",
     .summary = "Forget about all watched keys",
     .since = "2.2.0",
     .complexity = "O(1)"},
    {.name = NULL},
};

/* ---- COMMAND's subcommands (cmd_command.c) ------------------------------- */

static const cmd_arg_t command_names[] = {
    {"command-name", "string", NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    CMD_ARG_END};
static const cmd_arg_t filterby_opts[] = {
    {"module-name", "string", "MODULE", 0, NULL},
    {"category", "string", "ACLCAT", 0, NULL},
    {"pattern", "pattern", "PATTERN", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t list_args[] = {
    {"filterby", "oneof", "FILTERBY", CMD_ARG_OPTIONAL, filterby_opts},
    CMD_ARG_END};

static const cmd_def_t command_subs[] = {
    {.name = "count",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_command_count_proc,
     .group = "server",
     .summary = "Returns a count of commands.",
     .since = "2.8.13",
     .complexity = "O(1)"},
    {.name = "docs",
     .arity = -2,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_command_docs_proc,
     .group = "server",
     .summary =
         "Returns documentary information about one, multiple or all commands.",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of commands to look up",
     .args = command_names},
    {.name = "getkeys",
     .arity = -4,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_command_getkeys_proc,
     .group = "server",
     .summary = "Extract keys given a full Redis command",
     .since = "2.8.13",
     .complexity = "O(N) where N is the number of arguments to the command"},
    {.name = "getkeysandflags",
     .arity = -4,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_command_getkeysandflags_proc,
     .group = "server",
     .summary = "Extract keys and access flags given a full Redis command",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of arguments to the command"},
    {.name = "info",
     .arity = -2,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_command_info_proc,
     .group = "server",
     .summary = "Returns information about one, multiple or all commands.",
     .since = "2.8.13",
     .complexity = "O(N) where N is the number of commands to look up",
     .args = command_names},
    {.name = "list",
     .arity = -2,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_command_list_proc,
     .group = "server",
     .summary = "Returns a list of command names.",
     .since = "7.0.0",
     .complexity = "O(N) where N is the total number of commands",
     .args = list_args},
    CMD_DEF_END,
};

/* ---- the server: COMMAND, INFO, TIME, CONFIG, MEMORY (procs in cmd_admin.c,
 * memstat.c), SHUTDOWN */

static const cmd_arg_t section_args[] = {
    {"section", "string", NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    CMD_ARG_END};
static const cmd_arg_t config_get_args[] = {
    {"parameter", "string", NULL, CMD_ARG_MULTIPLE, NULL}, CMD_ARG_END};
static const cmd_arg_t config_pair[] = {{"parameter", "string", NULL, 0, NULL},
                                        {"value", "string", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t config_set_args[] = {
    {"data", "block", NULL, CMD_ARG_MULTIPLE, config_pair}, CMD_ARG_END};
static const cmd_arg_t shutdown_save[] = {
    {"nosave", "pure-token", "NOSAVE", 0, NULL},
    {"save", "pure-token", "SAVE", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t shutdown_args[] = {
    {"save-selector", "oneof", NULL, CMD_ARG_OPTIONAL, shutdown_save},
    {"now", "pure-token", "NOW", CMD_ARG_OPTIONAL, NULL},
    {"force", "pure-token", "FORCE", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_arg_t memory_usage_args[] = {
    {"key", "key", NULL, 0, NULL},
    {"count", "integer", "SAMPLES", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_def_t memory_subs[] = {
    {.name = "usage",
     .arity = -3,
     .flags = CMD_READONLY,
     CMD_KEYRANGE(2, 2, 1),
     .keyspecs = {CMD_KS(KS_RO, 2, 0, 1)},
     .proc = cmd_admin_memory_usage_proc,
     .group = "server",
     .summary = "Estimates the memory usage of a key.",
     .since = "4.0.0",
     .complexity = "O(1)",
     .args = memory_usage_args},
    {.name = "stats",
     .arity = 2,
     .proc = memstat_stats_proc,
     .group = "server",
     .summary = "Returns details about memory usage.",
     .since = "4.0.0",
     .complexity = "O(N) where N is the number of keys"},
    {.name = "doctor",
     .arity = 2,
     .proc = memstat_doctor_proc,
     .group = "server",
     .summary = "Outputs a memory problems report.",
     .since = "4.0.0",
     .complexity = "O(1)"},
    {.name = "purge",
     .arity = 2,
     .proc = memstat_purge_proc,
     .group = "server",
     .summary = "Asks the allocator to release memory.",
     .since = "4.0.0",
     .complexity = "Depends on how much memory is allocated, could be slow"},
    {.name = "malloc-stats",
     .arity = 2,
     .proc = memstat_malloc_stats_proc,
     .group = "server",
     .summary = "Returns the allocator statistics.",
     .since = "4.0.0",
     .complexity = "Depends on how much memory is allocated, could be slow"},
    {.name = "help",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .proc = memstat_help_proc,
     .group = "server",
     .summary = "Returns helpful text about the different subcommands.",
     .since = "4.0.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};
static const cmd_def_t config_subs[] = {
    {.name = "get",
     .arity = -3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = cmd_admin_config_get_proc,
     .group = "server",
     .summary = "Returns the effective values of configuration parameters.",
     .since = "2.0.0",
     .complexity =
         "O(N) when N is the number of configuration parameters provided",
     .args = config_get_args},
    {.name = "set",
     .arity = -4,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = cmd_admin_config_set_proc,
     .group = "server",
     .summary = "Sets configuration parameters in-flight.",
     .since = "2.0.0",
     .complexity =
         "O(N) when N is the number of configuration parameters provided",
     .args = config_set_args},
    {.name = "resetstat",
     .arity = 2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = cmd_admin_config_resetstat_proc,
     .group = "server",
     .summary = "Resets the server's statistics.",
     .since = "2.0.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};

const cmd_def_t cmd_admin_table[] = {
    {.name = "command",
     .arity = -1,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_command_proc,
     .group = "server",
     .summary = "Returns detailed information about all commands.",
     .since = "2.8.13",
     .complexity = "O(N) where N is the total number of Redis commands",
     .subcommands = command_subs},
    {.name = "info",
     .arity = -1,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_DANGEROUS,
     .proc = cmd_admin_info_proc,
     .group = "server",
     .summary = "Returns information and statistics about the server.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = section_args},
    {.name = "time",
     .arity = 1,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .proc = cmd_admin_time_proc,
     .group = "server",
     .summary = "Returns the server time.",
     .since = "2.6.0",
     .complexity = "O(1)"},
    {.name = "config",
     .arity = -2,
     .group = "server",
     .summary = "A container for server configuration commands.",
     .since = "2.0.0",
     .complexity = "Depends on subcommand.",
     .subcommands = config_subs},
    {.name = "memory",
     .arity = -2,
     .group = "server",
     .summary = "A container for memory diagnostics commands.",
     .since = "4.0.0",
     .complexity = "Depends on subcommand.",
     .subcommands = memory_subs},
    {.name = "shutdown",
     .arity = -1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE |
              CMD_NO_MULTI | CMD_ALLOW_BUSY,
     .proc = cmd_admin_shutdown_proc,
     .group = "server",
     .summary = "Synchronously saves the database(s) to disk and shuts down "
                "the server.",
     .since = "1.0.0",
     .complexity = "O(N) when saving, where N is the total number of keys in "
                   "all databases",
     .args = shutdown_args},
    CMD_DEF_END,
};

/* ---- snapshots (persist.c) ----------------------------------------------- */

static const cmd_arg_t bgsave_args[] = {
    {"schedule", "pure-token", "SCHEDULE", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};

const cmd_def_t cmd_persist_table[] = {
    {.name = "save",
     .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING | CMD_NO_MULTI,
     .proc = persist_save_proc,
     .group = "server",
     .summary = "Synchronously saves the database(s) to disk.",
     .since = "1.0.0",
     .complexity = "O(N) where N is the total number of keys in all databases"},
    {.name = "bgsave",
     .arity = -1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING,
     .proc = persist_bgsave_proc,
     .group = "server",
     .summary = "Asynchronously saves the database(s) to disk.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = bgsave_args},
    {.name = "lastsave",
     .arity = 1,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .acl = ACL_CAT_ADMIN | ACL_CAT_DANGEROUS,
     .proc = persist_lastsave_proc,
     .group = "server",
     .summary =
         "Returns the Unix timestamp of the last successful save to disk.",
     .since = "1.0.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};

/* ---- the append-only file (aof_run.c) ------------------------------------ */

const cmd_def_t cmd_aof_table[] = {
    {.name = "bgrewriteaof",
     .arity = 1,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING,
     .proc = aof_bgrewriteaof_proc,
     .group = "server",
     .summary = "Asynchronously rewrites the append-only file to disk.",
     .since = "1.0.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};

/* ---- LATENCY (latency.c) ------------------------------------------------- */

static const cmd_arg_t event_arg[] = {{"event", "string", NULL, 0, NULL},
                                      CMD_ARG_END};
static const cmd_arg_t events_arg[] = {
    {"event", "string", NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    CMD_ARG_END};

static const cmd_def_t latency_subs[] = {
    {.name = "doctor",
     .arity = 2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = latency_doctor_proc,
     .group = "server",
     .summary = "Returns a human-readable latency analysis report.",
     .since = "2.8.13",
     .complexity = "O(1)"},
    {.name = "help",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .proc = latency_help_proc,
     .group = "server",
     .summary = "Returns helpful text about the different subcommands.",
     .since = "2.8.13",
     .complexity = "O(1)"},
    {.name = "history",
     .arity = 3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = latency_history_proc,
     .group = "server",
     .summary = "Returns timestamp-latency samples for an event.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .args = event_arg},
    {.name = "latest",
     .arity = 2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = latency_latest_proc,
     .group = "server",
     .summary = "Returns the latest latency samples for all events.",
     .since = "2.8.13",
     .complexity = "O(1)"},
    {.name = "reset",
     .arity = -2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .proc = latency_reset_proc,
     .group = "server",
     .summary = "Resets the latency data for one or more events.",
     .since = "2.8.13",
     .complexity = "O(1)",
     .args = events_arg},
    CMD_DEF_END,
};

const cmd_def_t latency_table[] = {
    {.name = "latency",
     .arity = -2,
     .group = "server",
     .summary = "A container for latency diagnostics commands.",
     .since = "2.8.13",
     .complexity = "Depends on subcommand.",
     .subcommands = latency_subs},
    CMD_DEF_END,
};

/* ---- SLOWLOG (slowlog.c) ------------------------------------------------- */

static const cmd_arg_t count_arg[] = {
    {"count", "integer", NULL, CMD_ARG_OPTIONAL, NULL}, CMD_ARG_END};

static const cmd_def_t slowlog_subs[] = {
    {.name = "get",
     .arity = -2,
     .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE,
     .proc = slowlog_get_proc,
     .group = "server",
     .summary = "Returns the slow log's entries.",
     .since = "2.2.12",
     .complexity = "O(N) where N is the number of entries returned",
     .args = count_arg},
    {.name = "help",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .proc = slowlog_help_proc,
     .group = "server",
     .summary = "Show helpful text about the different subcommands",
     .since = "6.2.0",
     .complexity = "O(1)"},
    {.name = "len",
     .arity = 2,
     .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE,
     .proc = slowlog_len_proc,
     .group = "server",
     .summary = "Returns the number of entries in the slow log.",
     .since = "2.2.12",
     .complexity = "O(1)"},
    {.name = "reset",
     .arity = 2,
     .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE,
     .proc = slowlog_reset_proc,
     .group = "server",
     .summary = "Clears all entries from the slow log.",
     .since = "2.2.12",
     .complexity = "O(N) where N is the number of entries in the slowlog"},
    CMD_DEF_END,
};

const cmd_def_t slowlog_table[] = {
    {.name = "slowlog",
     .arity = -2,
     .group = "server",
     .summary = "A container for slow log commands.",
     .since = "2.2.12",
     .complexity = "Depends on subcommand.",
     .subcommands = slowlog_subs},
    CMD_DEF_END,
};

/* ---- ACL (cmd_acl.c) ----------------------------------------------------- */

#define ACL_ADMIN (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define ACL_PLAIN (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)

/* clang-format off */
#define SUB(n, a, f, p, s, c)                                                  \
    {.name = n, .arity = a, .flags = f, .proc = p, .group = "server",          \
     .summary = s, .since = "6.0.0", .complexity = c}
/* clang-format on */

static const cmd_def_t acl_subs[] = {
    SUB("cat", -2, ACL_PLAIN, cmd_acl_cat_proc,
        "Lists the ACL categories, or the commands inside a category.",
        "O(1) since the categories and commands are a fixed set."),
    SUB("deluser", -3, ACL_ADMIN, cmd_acl_deluser_proc,
        "Deletes ACL users, and terminates their connections.",
        "O(1) amortized time considering the typical user."),
    SUB("dryrun", -4, ACL_ADMIN, cmd_acl_dryrun_proc,
        "Simulates the execution of a command by a user, without executing "
        "the command.",
        "O(1)."),
    SUB("genpass", -2, ACL_PLAIN, cmd_acl_genpass_proc,
        "Generates a pseudorandom, secure password that can be used to "
        "identify ACL users.",
        "O(N)"),
    SUB("getuser", 3, ACL_ADMIN, cmd_acl_getuser_proc,
        "Lists the ACL rules of a user.",
        "O(N). Where N is the number of password, command and pattern rules "
        "that the user has."),
    SUB("help", 2, CMD_LOADING | CMD_STALE, cmd_acl_help_proc,
        "Returns helpful text about the different subcommands.", "O(1)"),
    SUB("list", 2, ACL_ADMIN, cmd_acl_list_proc,
        "Dumps the effective rules in ACL file format.",
        "O(N). Where N is the number of configured users."),
    SUB("load", 2, ACL_ADMIN, cmd_acl_load_proc,
        "Reloads the rules from the configured ACL file.",
        "O(N). Where N is the number of configured users."),
    SUB("log", -2, ACL_ADMIN, cmd_acl_log_proc,
        "Lists recent security events generated due to ACL rules.",
        "O(N) with N being the number of entries shown."),
    SUB("save", 2, ACL_ADMIN, cmd_acl_save_proc,
        "Saves the effective ACL rules in the configured ACL file.",
        "O(N). Where N is the number of configured users."),
    SUB("setuser", -3, ACL_ADMIN, cmd_acl_setuser_proc,
        "Creates and modifies an ACL user and its rules.",
        "O(N). Where N is the number of rules provided."),
    SUB("users", 2, ACL_ADMIN, cmd_acl_users_proc, "Lists all ACL users.",
        "O(N). Where N is the number of configured users."),
    SUB("whoami", 2, ACL_PLAIN, cmd_acl_whoami_proc,
        "Returns the authenticated username of the current connection.",
        "O(1)"),
    CMD_DEF_END,
};

const cmd_def_t cmd_acl_table[] = {
    {.name = "acl",
     .arity = -2,
     .group = "server",
     .summary = "A container for Access List Control commands.",
     .since = "6.0.0",
     .complexity = "Depends on subcommand.",
     .subcommands = acl_subs},
    CMD_DEF_END,
};
