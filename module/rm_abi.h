/*
 * rm_abi.h - the part of the Redis module ABI that cuckoo.so uses, declared
 * from the documented module API (API version 1), not copied from any
 * header. Targets Redis 7.0 and later and Valkey 7.2 and later (which keep
 * this API); tested with Debian 12's redis-server 7.0.15.
 *
 * How loading works (documented in the modules introduction): the server
 * calls RedisModule_OnLoad(ctx, argv, argc). The first word of the opaque
 * context is a function "GetApi(name, &fnptr)" that fills a function
 * pointer by its exported name ("RedisModule_OpenKey", ...). rm_init()
 * resolves every pointer below that way and registers the module's name.
 *
 * Contract: one set of process-wide function pointers, filled by rm_init()
 * from the main thread before anything else here is called. rm_Alloc and
 * friends may then be called from any thread (they are the server's
 * allocator); everything else only from the server's main thread.
 */
#ifndef RM_ABI_H
#define RM_ABI_H

#include <stddef.h>
#include <stdint.h>

#define RM_OK 0
#define RM_ERR 1
#define RM_APIVER_1 1

/* OpenKey modes. */
#define RM_READ (1 << 0)
#define RM_WRITE (1 << 1)

/* KeyType() answers. */
#define RM_KEYTYPE_EMPTY 0
#define RM_KEYTYPE_MODULE 6

/* GetContextFlags() bits. */
#define RM_CTX_FLAGS_MULTI (1 << 1)
#define RM_CTX_FLAGS_REPLICATED (1 << 12)
#define RM_CTX_FLAGS_LOADING (1 << 13)
#define RM_CTX_FLAGS_RESP3 (1 << 22)

/* SetModuleOptions(): the module checks IsIOError() itself, so a failed
 * read (a diskless load that breaks off) does not stop the server. */
#define RM_OPTIONS_HANDLE_IO_ERRORS (1 << 0)

/* Key-spec flags of SetCommandInfo(). */
#define RM_CMD_KEY_RO (1ULL << 0)
#define RM_CMD_KEY_RW (1ULL << 1)
#define RM_CMD_KEY_OW (1ULL << 2)
#define RM_CMD_KEY_RM (1ULL << 3)
#define RM_CMD_KEY_ACCESS (1ULL << 4)
#define RM_CMD_KEY_UPDATE (1ULL << 5)
#define RM_CMD_KEY_INSERT (1ULL << 6)
#define RM_CMD_KEY_DELETE (1ULL << 7)
#define RM_CMD_KEY_NOT_KEY (1ULL << 8)
#define RM_CMD_KEY_INCOMPLETE (1ULL << 9)
#define RM_CMD_KEY_VARIABLE_FLAGS (1ULL << 10)

/* Begin-search and find-keys kinds of a key spec (0 = absent). */
#define RM_KSPEC_BS_INDEX 2
#define RM_KSPEC_FK_RANGE 2

/* Argument types and flags of SetCommandInfo(). */
enum {
    RM_ARG_TYPE_STRING,
    RM_ARG_TYPE_INTEGER,
    RM_ARG_TYPE_DOUBLE,
    RM_ARG_TYPE_KEY,
    RM_ARG_TYPE_PATTERN,
    RM_ARG_TYPE_UNIX_TIME,
    RM_ARG_TYPE_PURE_TOKEN,
    RM_ARG_TYPE_ONEOF,
    RM_ARG_TYPE_BLOCK,
};
#define RM_CMD_ARG_OPTIONAL (1 << 0)
#define RM_CMD_ARG_MULTIPLE (1 << 1)
#define RM_CMD_ARG_MULTIPLE_TOKEN (1 << 2)

/* Opaque server objects. */
typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;
typedef struct RedisModuleScanCursor RedisModuleScanCursor;
typedef struct RedisModuleInfoCtx RedisModuleInfoCtx;
typedef uint64_t rm_timer_id;

typedef void (*rm_timer_fn)(RedisModuleCtx *ctx, void *data);
typedef void (*rm_scan_fn)(RedisModuleCtx *ctx, RedisModuleString *keyname,
                           RedisModuleKey *key, void *privdata);
typedef void (*rm_info_fn)(RedisModuleInfoCtx *ctx, int for_crash_report);

typedef int (*rm_cmd_fn)(RedisModuleCtx *ctx, RedisModuleString **argv,
                         int argc);

/* A data type's callbacks, layout version 3 (Redis 6.2+): the server reads
 * the fields up to the version given. */
#define RM_TYPE_METHOD_VERSION 3
typedef struct rm_type_methods {
    uint64_t version;
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*rdb_save)(RedisModuleIO *rdb, void *value);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key,
                        void *value);
    size_t (*mem_usage)(const void *value);
    void (*digest)(RedisModuleDigest *md, void *value);
    void (*free)(void *value);
    void *aux_load;
    void *aux_save;
    int aux_save_triggers;
    size_t (*free_effort)(RedisModuleString *key, const void *value);
    void (*unlink)(RedisModuleString *key, const void *value);
    void *(*copy)(RedisModuleString *fromkey, RedisModuleString *tokey,
                  const void *value);
    void *defrag;
} rm_type_methods_t;

/* SetCommandInfo(), info version 1 (Redis 7.0+). The server walks the
 * arrays with the sizes given in the version record. */
typedef struct rm_command_arg {
    const char *name;
    int type; /* RM_ARG_TYPE_* */
    int key_spec_index;
    const char *token;
    const char *summary;
    const char *since;
    int flags; /* RM_CMD_ARG_* */
    const char *deprecated_since;
    struct rm_command_arg *subargs;
    const char *display_text; /* read by 7.2+; ignored by 7.0 */
} rm_command_arg_t;

typedef struct rm_command_history {
    const char *since;
    const char *changes;
} rm_command_history_t;

typedef struct rm_key_spec {
    const char *notes;
    uint64_t flags; /* RM_CMD_KEY_* */
    int begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    int find_keys_type;
    union {
        struct {
            int lastkey;
            int keystep;
            int limit;
        } range;
        struct {
            int keynumidx;
            int firstkey;
            int keystep;
        } keynum;
    } fk;
} rm_key_spec_t;

typedef struct rm_command_info_version {
    int version;
    size_t sizeof_historyentry;
    size_t sizeof_keyspec;
    size_t sizeof_arg;
} rm_command_info_version_t;

typedef struct rm_command_info {
    const rm_command_info_version_t *version;
    const char *summary;
    const char *complexity;
    const char *since;
    rm_command_history_t *history;
    const char *tips;
    int arity;
    rm_key_spec_t *key_specs; /* zero-terminated */
    rm_command_arg_t *args;   /* zero-terminated */
} rm_command_info_t;

/* Every function we use: X(return type, name, parameter list). The
 * pointer is RM_<name>, resolved from "RedisModule_<name>". */
#define RM_API(X)                                                              \
    X(void *, Alloc, (size_t bytes))                                           \
    X(void *, Calloc, (size_t nmemb, size_t size))                             \
    X(void *, Realloc, (void *ptr, size_t bytes))                              \
    X(void, Free, (void *ptr))                                                 \
    X(void, SetModuleAttribs,                                                  \
      (RedisModuleCtx * ctx, const char *name, int ver, int apiver))           \
    X(int, IsModuleNameBusy, (const char *name))                               \
    X(void, SetModuleOptions, (RedisModuleCtx * ctx, int options))             \
    X(int, CreateCommand,                                                      \
      (RedisModuleCtx * ctx, const char *name, rm_cmd_fn fn,                   \
       const char *strflags, int firstkey, int lastkey, int keystep))          \
    X(RedisModuleCommand *, GetCommand,                                        \
      (RedisModuleCtx * ctx, const char *name))                                \
    X(int, SetCommandInfo,                                                     \
      (RedisModuleCommand * cmd, const rm_command_info_t *info))               \
    X(int, GetContextFlags, (RedisModuleCtx * ctx))                            \
    X(const char *, StringPtrLen, (const RedisModuleString *str, size_t *len)) \
    X(RedisModuleKey *, OpenKey,                                               \
      (RedisModuleCtx * ctx, RedisModuleString * name, int mode))              \
    X(void, CloseKey, (RedisModuleKey * key))                                  \
    X(int, KeyType, (RedisModuleKey * key))                                    \
    X(RedisModuleType *, CreateDataType,                                       \
      (RedisModuleCtx * ctx, const char *name, int encver,                     \
       rm_type_methods_t *methods))                                            \
    X(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey * key))            \
    X(void *, ModuleTypeGetValue, (RedisModuleKey * key))                      \
    X(int, ModuleTypeSetValue,                                                 \
      (RedisModuleKey * key, RedisModuleType * mt, void *value))               \
    X(int, ReplyWithLongLong, (RedisModuleCtx * ctx, long long ll))            \
    X(int, ReplyWithSimpleString, (RedisModuleCtx * ctx, const char *msg))     \
    X(int, ReplyWithError, (RedisModuleCtx * ctx, const char *err))            \
    X(int, ReplyWithStringBuffer,                                              \
      (RedisModuleCtx * ctx, const char *buf, size_t len))                     \
    X(int, ReplyWithNull, (RedisModuleCtx * ctx))                              \
    X(int, ReplyWithDouble, (RedisModuleCtx * ctx, double d))                  \
    X(int, ReplyWithArray, (RedisModuleCtx * ctx, long len))                   \
    X(int, ReplyWithMap, (RedisModuleCtx * ctx, long len))                     \
    X(int, ReplyWithBool, (RedisModuleCtx * ctx, int b))                       \
    X(int, ReplicateVerbatim, (RedisModuleCtx * ctx))                          \
    X(int, Replicate,                                                          \
      (RedisModuleCtx * ctx, const char *cmdname, const char *fmt, ...))       \
    X(void, SaveUnsigned, (RedisModuleIO * io, uint64_t value))                \
    X(uint64_t, LoadUnsigned, (RedisModuleIO * io))                            \
    X(void, SaveStringBuffer,                                                  \
      (RedisModuleIO * io, const char *str, size_t len))                       \
    X(char *, LoadStringBuffer, (RedisModuleIO * io, size_t * lenptr))         \
    X(int, IsIOError, (RedisModuleIO * io))                                    \
    X(void, EmitAOF,                                                           \
      (RedisModuleIO * io, const char *cmdname, const char *fmt, ...))         \
    X(void, DigestAddStringBuffer,                                             \
      (RedisModuleDigest * md, const char *ele, size_t len))                   \
    X(void, DigestEndSequence, (RedisModuleDigest * md))                       \
    X(void, Log,                                                               \
      (RedisModuleCtx * ctx, const char *level, const char *fmt, ...))         \
    X(void, LogIOError,                                                        \
      (RedisModuleIO * io, const char *level, const char *fmt, ...))           \
    X(float, GetUsedMemoryRatio, (void))                                       \
    X(RedisModuleServerInfoData *, GetServerInfo,                              \
      (RedisModuleCtx * ctx, const char *section))                             \
    X(void, FreeServerInfo,                                                    \
      (RedisModuleCtx * ctx, RedisModuleServerInfoData * data))                \
    X(unsigned long long, ServerInfoGetFieldUnsigned,                          \
      (RedisModuleServerInfoData * data, const char *field, int *out_err))     \
    X(long long, Milliseconds, (void))                                         \
    X(rm_timer_id, CreateTimer,                                                \
      (RedisModuleCtx * ctx, long long period, rm_timer_fn callback,           \
       void *data))                                                            \
    X(int, SelectDb, (RedisModuleCtx * ctx, int newid))                        \
    X(RedisModuleScanCursor *, ScanCursorCreate, (void))                       \
    X(void, ScanCursorRestart, (RedisModuleScanCursor * cursor))               \
    X(int, Scan,                                                               \
      (RedisModuleCtx * ctx, RedisModuleScanCursor * cursor, rm_scan_fn fn,    \
       void *privdata))                                                        \
    X(int, RegisterInfoFunc, (RedisModuleCtx * ctx, rm_info_fn cb))            \
    X(int, InfoAddSection, (RedisModuleInfoCtx * ctx, const char *name))       \
    X(int, InfoAddFieldULongLong,                                              \
      (RedisModuleInfoCtx * ctx, const char *field, unsigned long long value))

/* Functions of newer servers, which older ones lack: rm_init() leaves
 * their pointers NULL when the server has none, and the caller degrades.
 * SetCommandACLCategories came with Redis 7.2, AddACLCategory with 7.4;
 * Valkey 8 has both. */
#define RM_API_OPTIONAL(X)                                                     \
    X(int, AddACLCategory, (RedisModuleCtx * ctx, const char *name))           \
    X(int, SetCommandACLCategories,                                            \
      (RedisModuleCommand * cmd, const char *aclflags))

#define RM_DECLARE(ret, name, params) extern ret(*rm_##name) params;
RM_API(RM_DECLARE)
RM_API_OPTIONAL(RM_DECLARE)
#undef RM_DECLARE

/* Resolves every function of RM_API through ctx's GetApi, and those of
 * RM_API_OPTIONAL the server has, and registers the module as
 * name/version. RM_OK, or RM_ERR when a function of RM_API is missing (a
 * server older than 7.0) or the name is taken. */
int rm_init(RedisModuleCtx *ctx, const char *name, int version);

#endif /* RM_ABI_H */
