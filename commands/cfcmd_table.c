/*
 * cfcmd_table.c - the CF.* family's table: arity, flags, ACL categories and
 * key specs, and the argument documentation COMMAND DOCS reports (see
 * cfcmd.h); the procedures are cfcmd.c's.
 */
#include "cfcmd.h"
#include "cfcmd_procs.h"

/* ---- the table ----------------------------------------------------------- */

#define OPT CMD_ARG_OPTIONAL
#define MULTI CMD_ARG_MULTIPLE

static const cmd_arg_t args_key_item[] = {
    {"key", "key", NULL, 0, NULL},
    {"item", "string", NULL, 0, NULL},
    CMD_ARG_END,
};

static const cmd_arg_t args_insert[] = {
    {"key", "key", NULL, 0, NULL},
    {"capacity", "integer", "CAPACITY", OPT, NULL},
    {"rate", "double", "ERROR", OPT, NULL},
    {"nocreate", "pure-token", "NOCREATE", OPT, NULL},
    {"milliseconds", "integer", "WINDOW", OPT, NULL},
    {"unix-time-milliseconds", "unix-time", "AT", OPT, NULL},
    {"item", "string", "ITEMS", MULTI, NULL},
    CMD_ARG_END,
};

static const cmd_arg_t args_key[] = {
    {"key", "key", NULL, 0, NULL},
    CMD_ARG_END,
};

/* Key specs, as RedisBloom declares them (RO or RW at argument 1) with the
 * access Redis's own commands state for the same effect: reads ACCESS the
 * value (as SISMEMBER), adds INSERT (as SADD), CF.DEL DELETEs (as SREM),
 * CF.RESERVE INSERTs a new filter, CF.LOADCHUNK UPDATEs one (as
 * RESTORE); CF.SCANDUMP only reads, where RedisBloom says RW. */
#define CF_KS(fl) CMD_KS(fl, 1, 0, 1)
#define CF_W (CMD_WRITE | CMD_DENYOOM)
#define CF_R (CMD_READONLY | CMD_FAST)
#define ADD_COMPLEXITY                                                         \
    "O(k + i), where k is the number of sub-filters and i is maxIterations"
#define INSERT_COMPLEXITY                                                      \
    "O(n * (k + i)), where n is the number of items, k is the number of "      \
    "sub-filters and i is maxIterations"

const cfcmd_def_t cfcmd_table[] = {
    {.name = "cf.reserve",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_INSERT)},
     .since = "1.0.0",
     .arity = -3,
     .flags = CF_W,
     .proc = cfcmd_reserve,
     .created = CFCMD_CREATED_INSTEAD,
     .summary = "Creates a new Cuckoo Filter",
     .complexity = "O(1)",
     .args = CMD_ARGS({"key", "key", NULL, 0, NULL},
                      {"capacity", "integer", NULL, 0, NULL},
                      {"bucketsize", "integer", "BUCKETSIZE", OPT, NULL},
                      {"maxiterations", "integer", "MAXITERATIONS", OPT, NULL},
                      {"expansion", "integer", "EXPANSION", OPT, NULL},
                      {"rate", "double", "ERROR", OPT, NULL},
                      {"milliseconds", "integer", "WINDOW", OPT, NULL})},
    {.name = "cf.add",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_INSERT)},
     .since = "1.0.0",
     .arity = 3,
     .flags = CF_W | CMD_FAST,
     .proc = cfcmd_add,
     .prefetch = cfcmd_prefetch_item,
     .summary = "Adds an item to a Cuckoo Filter",
     .complexity = ADD_COMPLEXITY,
     .args = args_key_item},
    {.name = "cf.addnx",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_INSERT)},
     .since = "1.0.0",
     .arity = 3,
     .flags = CF_W | CMD_FAST,
     .proc = cfcmd_addnx,
     .prefetch = cfcmd_prefetch_item,
     .summary = "Adds an item to a Cuckoo Filter if the item did not exist "
                "previously.",
     .complexity = ADD_COMPLEXITY,
     .args = args_key_item},
    {.name = "cf.insert",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_INSERT)},
     .since = "1.0.0",
     .arity = -4,
     .flags = CF_W,
     .proc = cfcmd_insert,
     .summary = "Adds one or more items to a Cuckoo Filter. A filter will be "
                "created if it does not exist",
     .complexity = INSERT_COMPLEXITY,
     .args = args_insert},
    {.name = "cf.insertnx",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_INSERT)},
     .since = "1.0.0",
     .arity = -4,
     .flags = CF_W,
     .proc = cfcmd_insertnx,
     .summary = "Adds one or more items to a Cuckoo Filter if the items did "
                "not exist previously. A filter will be created if it does "
                "not exist",
     .complexity = INSERT_COMPLEXITY,
     .args = args_insert},
    {.name = "cf.exists",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RO | KS_ACCESS)},
     .since = "1.0.0",
     .arity = 3,
     .flags = CF_R,
     .proc = cfcmd_exists,
     .prefetch = cfcmd_prefetch_item,
     .summary = "Checks whether one or more items exist in a Cuckoo Filter",
     .complexity = "O(k), where k is the number of sub-filters",
     .args = args_key_item},
    {.name = "cf.mexists",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RO | KS_ACCESS)},
     .since = "1.0.0",
     .arity = -3,
     .flags = CF_R,
     .proc = cfcmd_mexists,
     .summary = "Checks whether one or more items exist in a Cuckoo Filter",
     .complexity = "O(k * n), where k is the number of sub-filters and n is "
                   "the number of items",
     .args = CMD_ARGS({"key", "key", NULL, 0, NULL},
                      {"item", "string", NULL, MULTI, NULL})},
    {.name = "cf.del",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_DELETE)},
     .since = "1.0.0",
     .arity = 3,
     .flags = CMD_WRITE | CMD_FAST,
     .proc = cfcmd_del,
     .prefetch = cfcmd_prefetch_item,
     .summary = "Deletes an item from a Cuckoo Filter",
     .complexity = "O(k), where k is the number of sub-filters",
     .args = args_key_item},
    {.name = "cf.count",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RO | KS_ACCESS)},
     .since = "1.0.0",
     .arity = 3,
     .flags = CF_R,
     .proc = cfcmd_count,
     .prefetch = cfcmd_prefetch_item,
     .summary = "Return the number of times an item might be in a Cuckoo "
                "Filter",
     .complexity = "O(k), where k is the number of sub-filters",
     .args = args_key_item},
    {.name = "cf.info",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RO | KS_ACCESS)},
     .since = "1.0.0",
     .arity = 2,
     .flags = CF_R,
     .proc = cfcmd_info,
     .summary = "Returns information about a Cuckoo Filter",
     .complexity = "O(1)",
     .args = args_key},
    {.name = "cf.scandump",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RO | KS_ACCESS)},
     .since = "1.0.0",
     .arity = 3,
     .flags = CMD_READONLY,
     .proc = cfcmd_scandump,
     .summary = "Begins an incremental save of the bloom filter",
     .complexity = "O(n), where n is the capacity",
     .args = CMD_ARGS({"key", "key", NULL, 0, NULL},
                      {"iterator", "integer", NULL, 0, NULL})},
    {.name = "cf.loadchunk",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_UPDATE)},
     .since = "1.0.0",
     .arity = 4,
     .flags = CF_W,
     .proc = cfcmd_loadchunk,
     .created = CFCMD_CREATED_SELF,
     .summary = "Restores a filter previously saved using SCANDUMP",
     .complexity = "O(n), where n is the capacity",
     .args = CMD_ARGS({"key", "key", NULL, 0, NULL},
                      {"iterator", "integer", NULL, 0, NULL},
                      {"data", "string", NULL, 0, NULL})},
    {.name = "cf.compact",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RW | KS_UPDATE)},
     .since = "2.2.0",
     .arity = 2,
     .flags = CMD_WRITE,
     .proc = cfcmd_compact,
     .summary = "Moves the items of newer sub-filters into older ones",
     .complexity = "O(n), where n is the number of slots",
     .args = args_key},
    {.name = "cf.debug",
     .acl = ACL_CAT_CUCKOO,
     .keyspecs = {CF_KS(KS_RO | KS_ACCESS)},
     .since = "1.0.0",
     .arity = 2,
     .flags = CF_R,
     .proc = cfcmd_debug,
     .summary = "Returns a Cuckoo Filter's figures on one line: bucket "
                "size, buckets, items, deletes, filters, max iterations and "
                "expansion",
     .complexity = "O(1)",
     .args = args_key},
    {.name = NULL},
};
