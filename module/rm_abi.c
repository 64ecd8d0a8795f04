/*
 * rm_abi.c - see rm_abi.h: the function pointers and their resolution.
 */
#include "rm_abi.h"

#define RM_DEFINE(ret, name, params) ret(*rm_##name) params;
RM_API(RM_DEFINE)
RM_API_OPTIONAL(RM_DEFINE)
#undef RM_DEFINE

typedef int (*rm_getapi_fn)(const char *name, void *out);

int rm_init(RedisModuleCtx *ctx, const char *name, int version)
{
    /* The context's first word is the server's GetApi function. */
    rm_getapi_fn getapi = (rm_getapi_fn)((void **)ctx)[0];
    if (getapi == NULL)
        return RM_ERR;
#define RM_RESOLVE(ret, fn, params)                                            \
    if (getapi("RedisModule_" #fn, (void *)&rm_##fn) != RM_OK ||               \
        rm_##fn == NULL)                                                       \
        return RM_ERR;
    RM_API(RM_RESOLVE)
#undef RM_RESOLVE
#define RM_RESOLVE_OPTIONAL(ret, fn, params)                                   \
    if (getapi("RedisModule_" #fn, (void *)&rm_##fn) != RM_OK)                 \
        rm_##fn = NULL;
    RM_API_OPTIONAL(RM_RESOLVE_OPTIONAL)
#undef RM_RESOLVE_OPTIONAL
    if (rm_IsModuleNameBusy(name))
        return RM_ERR;
    rm_SetModuleAttribs(ctx, name, version, RM_APIVER_1);
    return RM_OK;
}
