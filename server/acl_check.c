/*
 * acl_check.c - the ACL module's run-time side (acl.h): the permission
 * check the dispatcher asks (acl_allows), authentication, and the
 * registry's set-up. The rules and users themselves are acl.c's.
 */
#include "acl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_int.h"
#include "acl_log.h"
#include "cmd.h"
#include "glob.h"

/* ---- the check --------------------------------------------------------- */

typedef struct key_ctx {
    const acl_sel_t *sel;
    const arg_t *argv;
    int pos;
} key_ctx_t;

/* What a key spec's flags ask of a pattern, as Redis's
 * ACLSelectorCheckKey(); a spec without access flags (a legacy range) asks
 * for both. */
static inline unsigned key_needs(unsigned f)
{
    if (!(f & (KS_RO | KS_RW | KS_OW | KS_RM)))
        return ACL_PERM_R | ACL_PERM_W;
    unsigned need = 0;
    if (f & KS_ACCESS)
        need |= ACL_PERM_R;
    if (f & (KS_INSERT | KS_DELETE | KS_UPDATE))
        need |= ACL_PERM_W;
    return need;
}

static inline bool pattern_match(const acl_pat_t *pat, const arg_t *k)
{
    if (pat->kind == ACL_PAT_GLOB)
        return glob_match(pat->s, pat->len, k->ptr, k->len, false);
    size_t n = pat->kind == ACL_PAT_PREFIX ? pat->len - 1 : pat->len;
    if (k->len < n || (pat->kind == ACL_PAT_EXACT && k->len != n))
        return false;
    for (size_t i = 0; i < n; i++)
        if (k->ptr[i] != pat->s[i])
            return false;
    return true;
}

/* Whether one of sel's patterns lets a key with spec flags through. */
static inline bool key_allowed(const acl_sel_t *sel, const arg_t *k,
                               unsigned flags)
{
    unsigned need = key_needs(flags);
    if (sel->idx == NULL) { /* no index: every pattern */
        for (size_t p = 0; p < sel->npats; p++) {
            const acl_pat_t *pat = &sel->pats[p];
            if ((pat->flags & need) == need && pattern_match(pat, k))
                return true;
        }
        return false;
    }
    uint32_t from = 0, to = sel->nany;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t j = from; j < to; j++) {
            const acl_pat_t *pat = &sel->pats[sel->idx[j]];
            if ((pat->flags & need) == need && pattern_match(pat, k))
                return true;
        }
        if (k->len == 0)
            break;
        unsigned char b = (unsigned char)k->ptr[0];
        from = sel->nany + sel->bstart[b];
        to = sel->nany + sel->bstart[b + 1];
    }
    return false;
}

static int key_check(void *ctx, int i, unsigned flags)
{
    key_ctx_t *x = ctx;
    if (key_allowed(x->sel, &x->argv[i], flags))
        return 0;
    x->pos = i;
    return ACL_DENIED_KEY;
}

static bool first_arg_allows(const acl_sel_t *sel, unsigned id,
                             const cmd_def_t *parent, int argc,
                             const arg_t *argv)
{
    int idx = parent != NULL ? 2 : 1;
    if (argc <= idx)
        return false;
    for (size_t i = 0; i < sel->nfirsts; i++)
        if (sel->firsts[i].id == id &&
            acl_word_is(argv[idx].ptr, argv[idx].len, sel->firsts[i].arg) &&
            strlen(sel->firsts[i].arg) == argv[idx].len)
            return true;
    return false;
}

static int sel_check(const server_t *s, const acl_sel_t *sel, unsigned id,
                     const cmd_def_t *d, int argc, const arg_t *argv, int *pos)
{
    if (!sel->allcmds && !(d->flags & CMD_NOAUTH) && !acl_bit(sel, id)) {
        const cmd_def_t *parent = NULL;
        (void)cmd_by_id(s, id, &parent);
        if (!first_arg_allows(sel, id, parent, argc, argv))
            return ACL_DENIED_CMD;
    }
    if (sel->allkeys)
        return ACL_OK;
    key_ctx_t x = {.sel = sel, .argv = argv, .pos = 0};
    int rc = cmd_keys_each(d, argc, key_check, &x);
    if (rc != 0)
        *pos = x.pos;
    return rc;
}

int acl_check(const server_t *s, const acl_user_t *u, unsigned id,
              const cmd_def_t *d, int argc, const arg_t *argv, int *pos)
{
    /* As Redis: of the selectors' refusals the strongest reason, and of
     * equal ones the last key. */
    int relevant = ACL_DENIED_CMD, last = 0;
    for (size_t i = 0; i < u->nsels; i++) {
        int p = 0;
        int rc = sel_check(s, &u->sels[i], id, d, argc, argv, &p);
        if (rc == ACL_OK)
            return ACL_OK;
        if (rc > relevant || (rc == relevant && p > last)) {
            relevant = rc;
            last = p;
        }
    }
    *pos = last;
    return relevant;
}

/* ---- the dispatcher's hook, authentication, set-up --------------------- */

static const acl_user_t *client_user(const client_t *c)
{
    return c->user != NULL ? c->user : c->srv->acl->dflt;
}

/* The full name of d, "parent|sub" for a subcommand. */
static size_t full_name(const server_t *s, unsigned id, const cmd_def_t *d,
                        char *buf, size_t len)
{
    const cmd_def_t *parent = NULL;
    (void)cmd_by_id(s, id, &parent);
    int n = parent != NULL ? snprintf(buf, len, "%s|%s", parent->name, d->name)
                           : snprintf(buf, len, "%s", d->name);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

bool acl_allows(client_t *c, unsigned id, const cmd_def_t *d, int argc,
                const arg_t *argv, int ctx)
{
    const acl_user_t *u = client_user(c);
    const acl_sel_t *root = &u->sels[0];
    /* The common cases are decided here: a user that may run everything
     * costs one test; one without selectors a bit test, and for a command
     * of one key its patterns. The rest, and every refusal, go through
     * acl_check(). */
    if (u->nsels == 1) {
        if (root->allcmds && root->allkeys)
            return true;
        const cmd_keyspec_t *ks = &d->keyspecs[0];
        if ((root->allcmds || (d->flags & CMD_NOAUTH) || acl_bit(root, id)) &&
            (root->allkeys || (ks->begin > 0 && ks->begin < argc &&
                               ks->last == 0 && d->keyspecs[1].begin == 0 &&
                               key_allowed(root, &argv[ks->begin], ks->flags))))
            return true;
    }
    server_t *s = c->srv;
    int pos = 0;
    int rc = acl_check(s, u, id, d, argc, argv, &pos);
    if (rc == ACL_OK)
        return true;
    char name[2 * CMD_NAME_MAX + 2];
    size_t nlen = full_name(s, id, d, name, sizeof(name));
    if (rc == ACL_DENIED_KEY)
        acl_log_add(c, rc, ctx, argv[pos].ptr, argv[pos].len, u->name,
                    u->namelen);
    else
        acl_log_add(c, rc, ctx, name, nlen, u->name, u->namelen);
    s->acl->denied[rc == ACL_DENIED_CMD ? 1 : rc == ACL_DENIED_KEY ? 2 : 3]++;
    if (ctx == CMD_ACL_EXEC) {
        resp_add_errorf(&c->out,
                        "NOPERM ACLs rules changed between the moment the "
                        "transaction was accumulated and the EXEC call. This "
                        "command is no longer allowed for the following "
                        "reason: %s",
                        rc == ACL_DENIED_CMD
                            ? "no permission to execute the command or "
                              "subcommand"
                            : "no permission to touch the specified keys");
    } else if (rc == ACL_DENIED_CMD) {
        resp_add_errorf(&c->out,
                        "NOPERM this user has no permissions to run the '%s' "
                        "command",
                        name);
    } else {
        resp_add_error(&c->out, "NOPERM this user has no permissions to "
                                "access one of the keys used as arguments");
    }
    return false;
}

bool acl_authenticate(client_t *c, const arg_t *user, const arg_t *pass,
                      const arg_t *cmd)
{
    server_t *s = c->srv;
    acl_user_t *u =
        user != NULL ? acl_find(s, user->ptr, user->len) : s->acl->dflt;
    bool ok = false;
    if (u != NULL && !(u->flags & ACL_U_OFF)) {
        if (u->flags & ACL_U_NOPASS) {
            ok = true;
        } else {
            char hex[65];
            acl_hash_password(pass->ptr, pass->len, hex);
            for (size_t i = 0; i < u->npass; i++)
                ok |= acl_hash_eq(hex, u->pass[i]);
        }
    }
    if (ok) {
        c->user = u == s->acl->dflt ? NULL : u;
        c->user_name = u == s->acl->dflt ? NULL : u->name;
        return true;
    }
    const char *name = user != NULL ? user->ptr : "default";
    size_t nlen = user != NULL ? user->len : 7;
    acl_log_add(c, ACL_DENIED_AUTH,
                c->mstate != NULL ? CMD_ACL_MULTI : CMD_ACL_TOP, cmd->ptr,
                cmd->len, name, nlen);
    s->acl->denied[0]++;
    return false;
}

bool acl_default_nopass(const server_t *s)
{
    return (s->acl->dflt->flags & ACL_U_NOPASS) != 0;
}

void acl_denied_counts(const server_t *s, uint64_t out[4])
{
    for (int i = 0; i < 4; i++)
        out[i] = s->acl != NULL ? s->acl->denied[i] : 0;
}

int acl_init(server_t *s)
{
    if ((s->acl = calloc(1, sizeof(*s->acl))) == NULL)
        return -ENOMEM;
    acl_user_t *d = acl_user_new(s->acl, "default", 7);
    if (d == NULL || acl_user_blank(s, d) < 0) {
        acl_free(s);
        return -ENOMEM;
    }
    s->acl->dflt = d;
    acl_sel_op(s, &d->sels[0], "+@all", 5);
    acl_sel_op(s, &d->sels[0], "~*", 2);
    acl_sel_op(s, &d->sels[0], "&*", 2);
    d->flags = ACL_U_ON;
    acl_set_default_password(s, s->cfg->requirepass);
    return 0;
}

void acl_free(server_t *s)
{
    if (s->acl == NULL)
        return;
    for (size_t i = 0; i < s->acl->nusers; i++)
        acl_user_destroy(s->acl->users[i]);
    free(s->acl->users);
    free(s->acl);
    s->acl = NULL;
}
