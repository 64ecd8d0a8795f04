/*
 * acl.c - see acl.h.
 *
 * Rules are applied to a copy of the user, which replaces the user's state
 * only when every rule parsed, so that a bad rule changes nothing and the
 * user's address (clients point to it) never changes.
 */
#include "acl.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acl_int.h"
#include "acl_log.h"
#include "cmd.h"
#include "conn.h"
#include "glob.h"
#include "log.h"
#include "resp.h"

/* ---- small helpers ----------------------------------------------------- */

static bool has_spaces(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)s[i]) || s[i] == '\0')
            return true;
    return false;
}

void acl_hash_password(const void *p, size_t len, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(p, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
        mdlen != 32) {
        /* A hash nobody's password has: authentication fails closed. */
        memset(hex, 'x', 64);
        hex[64] = '\0';
        return;
    }
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

static bool valid_hash(const char *s, size_t len)
{
    if (len != 64)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'f') || (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

/* ---- selectors --------------------------------------------------------- */

/* acl-pubsub-default: whether new selectors start with allchannels. */
static bool pubsub_all(const server_t *s)
{
    return s->cfg->acl_pubsub_default == CFG_ACL_PUBSUB_ALL;
}

static int sel_init(acl_sel_t *sel, size_t nwords)
{
    memset(sel, 0, sizeof(*sel));
    sel->bits = calloc(nwords > 0 ? nwords : 1, sizeof(uint64_t));
    return sel->bits != NULL ? 0 : -ENOMEM;
}

static void pats_free(acl_pat_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i].s);
    free(p);
}

static void pats_reset(acl_pat_t **p, size_t *n)
{
    pats_free(*p, *n);
    *p = NULL;
    *n = 0;
}

static void firsts_clear(acl_sel_t *sel)
{
    for (size_t i = 0; i < sel->nfirsts; i++)
        free(sel->firsts[i].arg);
    free(sel->firsts);
    sel->firsts = NULL;
    sel->nfirsts = 0;
}

void acl_sel_free(acl_sel_t *sel)
{
    free(sel->bits);
    pats_free(sel->pats, sel->npats);
    pats_free(sel->chans, sel->nchans);
    firsts_clear(sel);
    free(sel->idx);
    memset(sel, 0, sizeof(*sel));
}

static int pats_copy(acl_pat_t **dst, const acl_pat_t *src, size_t n)
{
    *dst = NULL;
    if (n == 0)
        return 0;
    if ((*dst = calloc(n, sizeof(**dst))) == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        (*dst)[i] = src[i];
        if (((*dst)[i].s = malloc(src[i].len + 1)) == NULL) {
            pats_free(*dst, i);
            *dst = NULL;
            return -ENOMEM;
        }
        memcpy((*dst)[i].s, src[i].s, src[i].len + 1);
    }
    return 0;
}

int acl_sel_copy(acl_sel_t *dst, const acl_sel_t *src, size_t nwords)
{
    if (sel_init(dst, nwords) < 0)
        return -ENOMEM;
    memcpy(dst->bits, src->bits, nwords * sizeof(uint64_t));
    dst->future = src->future;
    dst->allcmds = src->allcmds;
    dst->allkeys = src->allkeys;
    dst->allchannels = src->allchannels;
    dst->npats = src->npats;
    dst->nchans = src->nchans;
    if (pats_copy(&dst->pats, src->pats, src->npats) < 0 ||
        pats_copy(&dst->chans, src->chans, src->nchans) < 0 ||
        !acl_sel_index(dst))
        goto nomem;
    if (src->nfirsts > 0) {
        dst->firsts = calloc(src->nfirsts, sizeof(dst->firsts[0]));
        if (dst->firsts == NULL)
            goto nomem;
        for (size_t i = 0; i < src->nfirsts; i++) {
            dst->firsts[i].id = src->firsts[i].id;
            if ((dst->firsts[i].arg = strdup(src->firsts[i].arg)) == NULL)
                goto nomem;
            dst->nfirsts = i + 1;
        }
    }
    return 0;
nomem:
    acl_sel_free(dst);
    return -ENOMEM;
}

static void bit_set(acl_sel_t *sel, unsigned id, bool on)
{
    if (on) {
        sel->bits[id / 64] |= 1ull << (id % 64);
    } else {
        sel->bits[id / 64] &= ~(1ull << (id % 64));
        sel->allcmds = false;
    }
}

static void firsts_drop(acl_sel_t *sel, unsigned id)
{
    size_t j = 0;
    for (size_t i = 0; i < sel->nfirsts; i++) {
        if (sel->firsts[i].id == id)
            free(sel->firsts[i].arg);
        else
            sel->firsts[j++] = sel->firsts[i];
    }
    sel->nfirsts = j;
}

/* Allows or denies the command of id id, and a container's subcommands
 * with it (Redis's ACLChangeSelectorPerm). */
static void change_perm(const server_t *s, acl_sel_t *sel, unsigned id,
                        bool allow)
{
    const cmd_def_t *d = cmd_by_id(s, id, NULL);
    bit_set(sel, id, allow);
    firsts_drop(sel, id);
    if (d != NULL && d->subcommands != NULL)
        for (unsigned k = 0; d->subcommands[k].name != NULL; k++)
            bit_set(sel, id + 1 + k, allow);
}

uint64_t acl_cat_flag(const char *name, size_t len)
{
    for (int i = 0; i < ACL_NCATS; i++)
        if (acl_word_is(name, len, acl_cat_names[i]))
            return 1ull << i;
    return 0;
}

void acl_sel_category(const server_t *s, acl_sel_t *sel, uint64_t cat,
                      bool allow)
{
    size_t n = cmd_id_count(s);
    for (unsigned id = 0; id < n; id++)
        if (cmd_acl_cats(cmd_by_id(s, id, NULL)) & cat)
            change_perm(s, sel, id, allow);
}

/* The id of the command or "command|subcommand" named by len bytes at
 * name, or -1 (Redis's lookupCommandBySds over the original table). */
int acl_lookup_id(const server_t *s, const char *name, size_t len)
{
    const char *bar = memchr(name, '|', len);
    const cmd_def_t *d = cmd_lookup(s, name, bar ? (size_t)(bar - name) : len);
    if (d == NULL)
        return -1;
    if (bar == NULL)
        return cmd_id_of(s, d);
    const char *sub = bar + 1;
    size_t sublen = len - (size_t)(sub - name);
    if (memchr(sub, '|', sublen) != NULL || d->subcommands == NULL)
        return -1;
    const cmd_def_t *sd = cmd_find_sub(d, sub, sublen);
    return sd != NULL ? cmd_id_of(s, sd) : -1;
}

static unsigned char pattern_kind(const char *p, size_t len)
{
    size_t special = strcspn(p, "*?[\\");
    if (special >= len)
        return ACL_PAT_EXACT;
    return special == len - 1 && p[special] == '*' ? ACL_PAT_PREFIX
                                                   : ACL_PAT_GLOB;
}

static int add_pattern(acl_pat_t **pats, size_t *n, const char *p, size_t len,
                       unsigned flags)
{
    for (size_t i = 0; i < *n; i++)
        if ((*pats)[i].len == len && memcmp((*pats)[i].s, p, len) == 0) {
            (*pats)[i].flags |= flags;
            return 0;
        }
    acl_pat_t *grown = realloc(*pats, (*n + 1) * sizeof(**pats));
    if (grown == NULL)
        return ENOMEM;
    *pats = grown;
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return ENOMEM;
    memcpy(copy, p, len);
    copy[len] = '\0';
    grown[(*n)++] = (acl_pat_t){
        .s = copy, .len = len, .flags = flags, .kind = pattern_kind(copy, len)};
    return 0;
}

static int add_firstarg(const server_t *s, acl_sel_t *sel, unsigned id,
                        const char *arg, size_t len)
{
    for (size_t i = 0; i < sel->nfirsts; i++)
        if (sel->firsts[i].id == id && strlen(sel->firsts[i].arg) == len &&
            strncasecmp(sel->firsts[i].arg, arg, len) == 0)
            return 0;
    acl_first_t *grown =
        realloc(sel->firsts, (sel->nfirsts + 1) * sizeof(sel->firsts[0]));
    if (grown == NULL)
        return ENOMEM;
    sel->firsts = grown;
    char *copy = strndup(arg, len);
    if (copy == NULL)
        return ENOMEM;
    grown[sel->nfirsts++] = (acl_first_t){.id = id, .arg = copy};
    const cmd_def_t *d = cmd_by_id(s, id, NULL);
    log_warning("Deprecation warning: Allowing a first arg of an otherwise "
                "blocked command is a misuse of ACL and may get disabled in "
                "the future (offender: +%s|%s)",
                d->name, copy);
    return 0;
}

/* "+name" for a name with '|': a subcommand, or a first argument of a
 * command without subcommands. */
static int allow_with_bar(const server_t *s, acl_sel_t *sel, const char *op,
                          size_t len)
{
    const char *bar = op + len;
    while (bar > op && bar[-1] != '|')
        bar--;
    size_t baselen = (size_t)(bar - 1 - op);
    int base = acl_lookup_id(s, op, baselen);
    if (base < 0)
        return ENOENT;
    const cmd_def_t *parent = NULL;
    const cmd_def_t *d = cmd_by_id(s, (unsigned)base, &parent);
    if (parent != NULL)
        return ECHILD;
    if (bar == op + len)
        return EINVAL;
    if (d->subcommands != NULL) {
        int id = acl_lookup_id(s, op, len);
        if (id < 0)
            return ENOENT;
        change_perm(s, sel, (unsigned)id, true);
        return 0;
    }
    /* A first argument is kept as one word of the description: one that
     * could not be read back is refused. */
    if (has_spaces(bar, (size_t)(op + len - bar)))
        return EINVAL;
    return add_firstarg(s, sel, (unsigned)base, bar, (size_t)(op + len - bar));
}

static int sel_rule(const server_t *s, acl_sel_t *sel, const char *op,
                    size_t len);

/* Whether pattern p needs a given first byte: an exact key, or a prefix
 * of at least one byte. */
static bool anchored(const acl_pat_t *p)
{
    return p->kind != ACL_PAT_GLOB && p->len > (p->kind == ACL_PAT_PREFIX);
}

bool acl_sel_index(acl_sel_t *sel)
{
    free(sel->idx);
    sel->idx = NULL;
    sel->nany = 0;
    memset(sel->bstart, 0, sizeof(sel->bstart));
    if (sel->npats == 0)
        return true;
    if ((sel->idx = malloc(sel->npats * sizeof(sel->idx[0]))) == NULL)
        return false;
    uint32_t count[256] = {0};
    for (size_t i = 0; i < sel->npats; i++) {
        if (anchored(&sel->pats[i]))
            count[(unsigned char)sel->pats[i].s[0]]++;
        else
            sel->idx[sel->nany++] = (uint32_t)i;
    }
    for (int b = 0; b < 256; b++)
        sel->bstart[b + 1] = sel->bstart[b] + count[b];
    uint32_t fill[256];
    memcpy(fill, sel->bstart, sizeof(fill));
    for (size_t i = 0; i < sel->npats; i++)
        if (anchored(&sel->pats[i]))
            sel->idx[sel->nany + fill[(unsigned char)sel->pats[i].s[0]]++] =
                (uint32_t)i;
    return true;
}

int acl_sel_op(const server_t *s, acl_sel_t *sel, const char *op, size_t len)
{
    int rc = sel_rule(s, sel, op, len);
    if (rc == 0 &&
        (op[0] == '~' || op[0] == '%' || acl_word_is(op, len, "allkeys") ||
         acl_word_is(op, len, "resetkeys")) &&
        !acl_sel_index(sel))
        return ENOMEM;
    return rc;
}

static int sel_rule(const server_t *s, acl_sel_t *sel, const char *op,
                    size_t len)
{
    size_t nwords = (cmd_id_count(s) + 63) / 64;
    if (acl_word_is(op, len, "allkeys") || acl_word_is(op, len, "~*") ||
        acl_word_is(op, len, "resetkeys")) {
        sel->allkeys = !acl_word_is(op, len, "resetkeys");
        pats_reset(&sel->pats, &sel->npats);
    } else if (acl_word_is(op, len, "allchannels") ||
               acl_word_is(op, len, "&*") ||
               acl_word_is(op, len, "resetchannels")) {
        sel->allchannels = !acl_word_is(op, len, "resetchannels");
        pats_reset(&sel->chans, &sel->nchans);
    } else if (acl_word_is(op, len, "allcommands") ||
               acl_word_is(op, len, "+@all")) {
        memset(sel->bits, 0xff, nwords * sizeof(uint64_t));
        sel->allcmds = sel->future = true;
        firsts_clear(sel);
    } else if (acl_word_is(op, len, "nocommands") ||
               acl_word_is(op, len, "-@all")) {
        memset(sel->bits, 0, nwords * sizeof(uint64_t));
        sel->allcmds = sel->future = false;
        firsts_clear(sel);
    } else if (op[0] == '~' || op[0] == '%') {
        if (sel->allkeys)
            return EEXIST;
        unsigned flags = 0;
        size_t off = 1;
        if (op[0] == '%') {
            for (; off < len; off++) {
                char ch = (char)toupper((unsigned char)op[off]);
                if (ch == 'R' && !(flags & ACL_PERM_R)) {
                    flags |= ACL_PERM_R;
                } else if (ch == 'W' && !(flags & ACL_PERM_W)) {
                    flags |= ACL_PERM_W;
                } else if (op[off] == '~') {
                    off++;
                    break;
                } else {
                    return EINVAL;
                }
            }
            if (flags == 0)
                return EINVAL;
        } else {
            flags = ACL_PERM_R | ACL_PERM_W;
        }
        if (has_spaces(op + off, len - off))
            return EINVAL;
        int rc =
            add_pattern(&sel->pats, &sel->npats, op + off, len - off, flags);
        if (rc != 0)
            return rc;
        sel->allkeys = false;
    } else if (op[0] == '&') {
        if (sel->allchannels)
            return EISDIR;
        if (has_spaces(op + 1, len - 1))
            return EINVAL;
        int rc = add_pattern(&sel->chans, &sel->nchans, op + 1, len - 1, 0);
        if (rc != 0)
            return rc;
    } else if (op[0] == '+' && (len < 2 || op[1] != '@')) {
        if (memchr(op + 1, '|', len - 1) != NULL)
            return allow_with_bar(s, sel, op + 1, len - 1);
        int id = acl_lookup_id(s, op + 1, len - 1);
        if (id < 0)
            return ENOENT;
        change_perm(s, sel, (unsigned)id, true);
    } else if (op[0] == '-' && (len < 2 || op[1] != '@')) {
        int id = acl_lookup_id(s, op + 1, len - 1);
        if (id < 0)
            return ENOENT;
        change_perm(s, sel, (unsigned)id, false);
    } else if ((op[0] == '+' || op[0] == '-') && op[1] == '@') {
        uint64_t cat = acl_cat_flag(op + 2, len - 2);
        if (cat == 0)
            return ENOENT;
        acl_sel_category(s, sel, cat, op[0] == '+');
    } else {
        return EINVAL;
    }
    return 0;
}

/* ---- users ------------------------------------------------------------- */

void acl_user_clear(acl_user_t *u)
{
    for (size_t i = 0; i < u->nsels; i++)
        acl_sel_free(&u->sels[i]);
    free(u->sels);
    free(u->pass);
    u->sels = NULL;
    u->pass = NULL;
    u->nsels = u->npass = 0;
}

/* A new user's state: off, no password, nothing allowed (Redis's
 * ACLCreateUser). */
int acl_user_blank(const server_t *s, acl_user_t *u)
{
    u->flags = ACL_U_OFF;
    u->pass = NULL;
    u->npass = 0;
    u->nsels = 1;
    if ((u->sels = calloc(1, sizeof(u->sels[0]))) == NULL)
        return -ENOMEM;
    if (sel_init(&u->sels[0], (cmd_id_count(s) + 63) / 64) < 0) {
        free(u->sels);
        u->sels = NULL;
        return -ENOMEM;
    }
    u->sels[0].allchannels = pubsub_all(s);
    return 0;
}

int acl_user_copy(const server_t *s, acl_user_t *dst, const acl_user_t *src)
{
    size_t nwords = (cmd_id_count(s) + 63) / 64;
    dst->flags = src->flags;
    dst->npass = dst->nsels = 0;
    dst->pass = NULL;
    if ((dst->sels = calloc(src->nsels, sizeof(dst->sels[0]))) == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < src->nsels; i++) {
        if (acl_sel_copy(&dst->sels[i], &src->sels[i], nwords) < 0)
            goto nomem;
        dst->nsels = i + 1;
    }
    if (src->npass > 0) {
        if ((dst->pass = malloc(src->npass * sizeof(dst->pass[0]))) == NULL)
            goto nomem;
        memcpy(dst->pass, src->pass, src->npass * sizeof(dst->pass[0]));
        dst->npass = src->npass;
    }
    return 0;
nomem:
    acl_user_clear(dst);
    return -ENOMEM;
}

static int add_hash(acl_user_t *u, const char *hex)
{
    for (size_t i = 0; i < u->npass; i++)
        if (memcmp(u->pass[i], hex, 64) == 0)
            return 0;
    acl_hash_t *grown = realloc(u->pass, (u->npass + 1) * sizeof(u->pass[0]));
    if (grown == NULL)
        return ENOMEM;
    u->pass = grown;
    memcpy(u->pass[u->npass++], hex, 65);
    return 0;
}

static int del_hash(acl_user_t *u, const char *hex)
{
    for (size_t i = 0; i < u->npass; i++)
        if (memcmp(u->pass[i], hex, 64) == 0) {
            memmove(&u->pass[i], &u->pass[i + 1],
                    (u->npass - i - 1) * sizeof(u->pass[0]));
            u->npass--;
            return 0;
        }
    return ENODEV;
}

typedef struct split_ctx {
    const server_t *s;
    acl_sel_t *sel;
    int err;
} split_ctx_t;

static int sel_word(void *ctx, char *word, size_t len)
{
    split_ctx_t *x = ctx;
    if (x->err == 0 && len > 0)
        x->err = acl_sel_op(x->s, x->sel, word, len);
    return 0;
}

/* "(rules)": a new selector made of them (Redis's
 * aclCreateSelectorFromOpSet: the words as sdssplitargs cuts them). */
static int add_selector(const server_t *s, acl_user_t *u, const char *op,
                        size_t len)
{
    size_t nwords = (cmd_id_count(s) + 63) / 64;
    acl_sel_t sel;
    if (sel_init(&sel, nwords) < 0)
        return ENOMEM;
    char *out = malloc(len);
    if (out == NULL) {
        acl_sel_free(&sel);
        return ENOMEM;
    }
    sel.allchannels = pubsub_all(s);
    split_ctx_t x = {.s = s, .sel = &sel};
    /* Unbalanced quotes give no words: an empty selector, as Redis. */
    (void)resp_splitargs(op + 1, len - 2, out, sel_word, &x);
    free(out);
    if (x.err != 0) {
        acl_sel_free(&sel);
        return x.err;
    }
    acl_sel_t *grown = realloc(u->sels, (u->nsels + 1) * sizeof(u->sels[0]));
    if (grown == NULL) {
        acl_sel_free(&sel);
        return ENOMEM;
    }
    u->sels = grown;
    u->sels[u->nsels++] = sel;
    return 0;
}

int acl_user_op(const server_t *s, acl_user_t *u, const char *op, size_t len)
{
    char hex[65];
    if (len == 0)
        return 0;
    if (acl_word_is(op, len, "on")) {
        u->flags = (u->flags | ACL_U_ON) & ~ACL_U_OFF;
    } else if (acl_word_is(op, len, "off")) {
        u->flags = (u->flags | ACL_U_OFF) & ~ACL_U_ON;
    } else if (acl_word_is(op, len, "skip-sanitize-payload")) {
        u->flags = (u->flags | ACL_U_SKIP_SANITIZE) & ~ACL_U_SANITIZE;
    } else if (acl_word_is(op, len, "sanitize-payload")) {
        u->flags = (u->flags | ACL_U_SANITIZE) & ~ACL_U_SKIP_SANITIZE;
    } else if (acl_word_is(op, len, "nopass")) {
        u->flags |= ACL_U_NOPASS;
        u->npass = 0;
    } else if (acl_word_is(op, len, "resetpass")) {
        u->flags &= ~ACL_U_NOPASS;
        u->npass = 0;
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        /* >pass and <pass name a password, #hash and !hash its hash. */
        if (op[0] == '>' || op[0] == '<') {
            acl_hash_password(op + 1, len - 1, hex);
        } else {
            if (!valid_hash(op + 1, len - 1))
                return EBADMSG;
            memcpy(hex, op + 1, 64);
            hex[64] = '\0';
        }
        if (op[0] == '<' || op[0] == '!')
            return del_hash(u, hex);
        int rc = add_hash(u, hex);
        if (rc != 0)
            return rc;
        u->flags &= ~ACL_U_NOPASS;
    } else if (op[0] == '(' && op[len - 1] == ')') {
        return add_selector(s, u, op, len);
    } else if (acl_word_is(op, len, "clearselectors")) {
        for (size_t i = 1; i < u->nsels; i++)
            acl_sel_free(&u->sels[i]);
        u->nsels = 1;
    } else if (acl_word_is(op, len, "reset")) {
        u->flags &= ~(ACL_U_NOPASS | ACL_U_ON | ACL_U_SKIP_SANITIZE);
        u->flags |= ACL_U_OFF | ACL_U_SANITIZE;
        u->npass = 0;
        for (size_t i = 1; i < u->nsels; i++)
            acl_sel_free(&u->sels[i]);
        u->nsels = 1;
        acl_sel_op(s, &u->sels[0], "resetkeys", 9);
        acl_sel_op(s, &u->sels[0], "resetchannels", 13);
        if (pubsub_all(s))
            acl_sel_op(s, &u->sels[0], "allchannels", 11);
        acl_sel_op(s, &u->sels[0], "-@all", 5);
    } else {
        return acl_sel_op(s, &u->sels[0], op, len);
    }
    return 0;
}

const char *acl_op_error(int err)
{
    switch (err) {
    case ENOENT:
        return "Unknown command or category name in ACL";
    case EINVAL:
        return "Syntax error";
    case EEXIST:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) "
               "is not valid and does not have any effect. Try 'resetkeys' "
               "to start with an empty list of patterns";
    case EISDIR:
        return "Adding a pattern after the * pattern (or the 'allchannels' "
               "flag) is not valid and does not have any effect. Try "
               "'resetchannels' to start with an empty list of channels";
    case ENODEV:
        return "The password you are trying to remove from the user does not "
               "exist";
    case EBADMSG:
        return "The password hash must be exactly 64 characters and contain "
               "only lowercase hexadecimal characters";
    case EALREADY:
        return "Duplicate user found. A user can only be defined once in "
               "config files";
    case ECHILD:
        return "Allowing first-arg of a subcommand is not supported";
    case ENOMEM:
        return "Out of memory";
    default:
        return "Wrong format";
    }
}

/* ---- the registry ------------------------------------------------------ */

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c != 0 ? c : (alen > blen) - (alen < blen);
}

/* The index where the user named name is, or would be inserted. */
static size_t find_pos(const acl_t *a, const char *name, size_t len,
                       bool *found)
{
    size_t lo = 0, hi = a->nusers;
    *found = false;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c =
            name_cmp(a->users[mid]->name, a->users[mid]->namelen, name, len);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

acl_user_t *acl_find_in(const acl_t *a, const char *name, size_t len)
{
    bool found;
    size_t i = find_pos(a, name, len, &found);
    return found ? a->users[i] : NULL;
}

acl_user_t *acl_find(const server_t *s, const char *name, size_t len)
{
    return acl_find_in(s->acl, name, len);
}

const char *acl_user_name(const acl_user_t *u)
{
    return u->name;
}

size_t acl_count(const server_t *s)
{
    return s->acl->nusers;
}

acl_user_t *acl_at(const server_t *s, size_t i)
{
    return s->acl->users[i];
}

acl_user_t *acl_user_new(acl_t *a, const char *name, size_t len)
{
    bool found;
    size_t pos = find_pos(a, name, len, &found);
    if (found)
        return a->users[pos];
    acl_user_t *u = calloc(1, sizeof(*u));
    acl_user_t **grown =
        u != NULL ? realloc(a->users, (a->nusers + 1) * sizeof(a->users[0]))
                  : NULL;
    if (grown == NULL || (u->name = malloc(len + 1)) == NULL) {
        if (grown != NULL)
            a->users = grown;
        free(u);
        return NULL;
    }
    a->users = grown;
    memcpy(u->name, name, len);
    u->name[len] = '\0';
    u->namelen = len;
    memmove(&a->users[pos + 1], &a->users[pos],
            (a->nusers - pos) * sizeof(a->users[0]));
    a->users[pos] = u;
    a->nusers++;
    return u;
}

void acl_user_destroy(acl_user_t *u)
{
    if (u == NULL)
        return;
    acl_user_clear(u);
    free(u->name);
    free(u);
}

/* Whether new connections must authenticate: the default user has
 * passwords or is off (Redis's authRequired()). */
void acl_sync_auth(server_t *s)
{
    const acl_user_t *d = s->acl->dflt;
    s->auth_required = !(d->flags & ACL_U_NOPASS) || (d->flags & ACL_U_OFF);
}

int acl_merge_args(int argc, const arg_t *argv, acl_rule_fn *fn, void *ctx,
                   char *err, size_t errlen)
{
    int open = -1;
    char *buf = NULL;
    size_t blen = 0;
    for (int j = 0; j < argc; j++) {
        const char *op = argv[j].ptr;
        size_t len = argv[j].len;
        if (open < 0 && len > 0 && op[0] == '(' && op[len - 1] != ')') {
            open = j;
            blen = 0;
        } else if (open < 0) {
            int rc = fn(ctx, op, len);
            if (rc != 0) {
                free(buf);
                return rc;
            }
            continue;
        }
        char *grown = realloc(buf, blen + len + 2);
        if (grown == NULL) {
            free(buf);
            snprintf(err, errlen, "Out of memory");
            return -ENOMEM;
        }
        buf = grown;
        if (blen > 0)
            buf[blen++] = ' ';
        memcpy(buf + blen, op, len);
        blen += len;
        buf[blen] = '\0';
        if (j > open && len > 0 && op[len - 1] == ')') {
            open = -1;
            int rc = fn(ctx, buf, blen);
            if (rc != 0) {
                free(buf);
                return rc;
            }
        }
    }
    free(buf);
    if (open >= 0) {
        snprintf(err, errlen,
                 "Unmatched parenthesis in acl selector starting at '%.*s'.",
                 (int)argv[open].len, argv[open].ptr);
        return -EINVAL;
    }
    return 0;
}

typedef struct setuser_ctx {
    const server_t *s;
    acl_user_t *tmp;
    char *err;
    size_t errlen;
} setuser_ctx_t;

static int setuser_rule(void *ctx, const char *op, size_t len)
{
    setuser_ctx_t *x = ctx;
    int rc = acl_user_op(x->s, x->tmp, op, len);
    if (rc == 0)
        return 0;
    snprintf(x->err, x->errlen, "Error in ACL SETUSER modifier '%.*s': %s",
             (int)len, op, acl_op_error(rc));
    return -EINVAL;
}

int acl_apply(const server_t *s, acl_user_t *tmp, int argc, const arg_t *argv,
              char *err, size_t errlen)
{
    setuser_ctx_t x = {.s = s, .tmp = tmp, .err = err, .errlen = errlen};
    return acl_merge_args(argc, argv, setuser_rule, &x, err, errlen);
}

int acl_setuser(server_t *s, const char *name, size_t nlen, int argc,
                const arg_t *argv, char *err, size_t errlen)
{
    acl_user_t *u = acl_find(s, name, nlen);
    acl_user_t tmp = {0};
    int rc = u != NULL ? acl_user_copy(s, &tmp, u) : acl_user_blank(s, &tmp);
    if (rc < 0) {
        snprintf(err, errlen, "Out of memory");
        return -ENOMEM;
    }
    if ((rc = acl_apply(s, &tmp, argc, argv, err, errlen)) != 0) {
        acl_user_clear(&tmp);
        return -EINVAL;
    }
    if (u == NULL && (u = acl_user_new(s->acl, name, nlen)) == NULL) {
        acl_user_clear(&tmp);
        snprintf(err, errlen, "Out of memory");
        return -ENOMEM;
    }
    acl_user_clear(u);
    u->flags = tmp.flags;
    u->pass = tmp.pass;
    u->npass = tmp.npass;
    u->sels = tmp.sels;
    u->nsels = tmp.nsels;
    if (u == s->acl->dflt)
        acl_sync_auth(s);
    return 0;
}

void acl_unlink_clients(server_t *s, const acl_user_t *u, const client_t *by)
{
    client_t *next;
    for (client_t *c = conn_next_client(s, NULL); c != NULL; c = next) {
        next = conn_next_client(s, c); /* closing unlinks c */
        if (c->user != u)
            continue;
        c->user = NULL;
        c->user_name = NULL;
        c->authenticated = false;
        conn_kill(c, by);
    }
}

void acl_deluser(server_t *s, acl_user_t *u)
{
    acl_t *a = s->acl;
    bool found;
    size_t pos = find_pos(a, u->name, u->namelen, &found);
    if (!found || u == a->dflt)
        return;
    memmove(&a->users[pos], &a->users[pos + 1],
            (a->nusers - pos - 1) * sizeof(a->users[0]));
    a->nusers--;
    acl_unlink_clients(s, u, a->running);
    acl_user_destroy(u);
}

void acl_set_default_password(server_t *s, const char *pass)
{
    acl_user_t *d = s->acl->dflt;
    d->npass = 0;
    d->flags &= ~ACL_U_NOPASS;
    if (pass != NULL && pass[0] != '\0') {
        char hex[65];
        acl_hash_password(pass, strlen(pass), hex);
        (void)add_hash(d, hex);
    } else {
        d->flags |= ACL_U_NOPASS;
    }
    acl_sync_auth(s);
}
