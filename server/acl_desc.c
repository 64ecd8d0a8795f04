/*
 * acl_desc.c - how a user is described, as Redis 7.0 does it: ACL LIST's
 * rule string and ACL GETUSER's fields. The command rules are rebuilt from
 * the bitmap alone (Redis's ACLDescribeSelectorCommandRules): +@all or
 * -@all, then the category that fits best, again and again, then the
 * single commands still different, so that the rules set back give the
 * same bitmap.
 */
#include "acl.h"

#include <stdlib.h>
#include <string.h>

#include "acl_int.h"
#include "cmd.h"
#include "util.h"

static void set_bit(acl_sel_t *sel, unsigned id, bool on)
{
    if (on)
        sel->bits[id / 64] |= 1ull << (id % 64);
    else
        sel->bits[id / 64] &= ~(1ull << (id % 64));
}

/* Allows or denies id and a container's subcommands, on bits only. */
static void change(const server_t *s, acl_sel_t *sel, unsigned id, bool on)
{
    const cmd_def_t *d = cmd_by_id(s, id, NULL);
    set_bit(sel, id, on);
    if (d->subcommands != NULL)
        for (unsigned k = 0; d->subcommands[k].name != NULL; k++)
            set_bit(sel, id + 1 + k, on);
}

static void category(const server_t *s, acl_sel_t *sel, uint64_t cat, bool on)
{
    size_t n = cmd_id_count(s);
    for (unsigned id = 0; id < n; id++)
        if (cmd_acl_cats(cmd_by_id(s, id, NULL)) & cat)
            change(s, sel, id, on);
}

static void count_cat(const server_t *s, const acl_sel_t *sel, uint64_t cat,
                      unsigned long *on, unsigned long *off)
{
    size_t n = cmd_id_count(s);
    *on = *off = 0;
    for (unsigned id = 0; id < n; id++)
        if (cmd_acl_cats(cmd_by_id(s, id, NULL)) & cat) {
            if (acl_bit(sel, id))
                (*on)++;
            else
                (*off)++;
        }
}

static void cat_name(const server_t *s, sbuf_t *b, unsigned id)
{
    const cmd_def_t *parent = NULL;
    const cmd_def_t *d = cmd_by_id(s, id, &parent);
    if (parent != NULL)
        sb_printf(b, "%s|%s", parent->name, d->name);
    else
        sb_printf(b, "%s", d->name);
}

/* The command rules of sel into b, without a trailing space. */
static void command_rules(const server_t *s, const acl_sel_t *sel, sbuf_t *b)
{
    size_t n = cmd_id_count(s), nwords = (n + 63) / 64;
    uint64_t fake_bits[nwords > 0 ? nwords : 1];
    uint64_t temp_bits[nwords > 0 ? nwords : 1];
    acl_sel_t fake = {.bits = fake_bits}, temp = {.bits = temp_bits};
    bool additive = !sel->future;
    memset(fake_bits, additive ? 0 : 0xff, sizeof(fake_bits));
    memcpy(temp_bits, sel->bits, nwords * sizeof(uint64_t));
    sb_printf(b, additive ? "-@all" : "+@all");
    bool applied[ACL_NCATS] = {false};
    for (;;) {
        int best = -1;
        unsigned long mindiff = (unsigned long)-1 >> 1, maxsame = 0;
        for (int j = 0; j < ACL_NCATS; j++) {
            if (applied[j])
                continue;
            unsigned long on, off;
            count_cat(s, &temp, 1ull << j, &on, &off);
            unsigned long diff = additive ? off : on;
            unsigned long same = additive ? on : off;
            if (same > diff &&
                (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0)
            break;
        category(s, &fake, 1ull << best, additive);
        category(s, &temp, 1ull << best, !additive);
        sb_printf(b, " %s@%s", additive ? "+" : "-", acl_cat_names[best]);
        applied[best] = true;
    }
    for (unsigned id = 0; id < n; id++) {
        bool ub = acl_bit(sel, id);
        if (ub != acl_bit(&fake, id)) {
            sb_printf(b, " %s", ub ? "+" : "-");
            cat_name(s, b, id);
            change(s, &fake, id, ub);
        }
        if (!ub)
            for (size_t i = 0; i < sel->nfirsts; i++)
                if (sel->firsts[i].id == id) {
                    sb_printf(b, " +");
                    cat_name(s, b, id);
                    sb_printf(b, "|%s", sel->firsts[i].arg);
                }
    }
}

static void pattern(sbuf_t *b, const acl_pat_t *p)
{
    /* A read-write pattern "*" is not "~*": that word means allkeys, which
     * refuses every pattern after it, so a description holding both (Redis
     * 7.0 writes one) would not load back (ACL SAVE, then ACL LOAD). */
    bool all = strcmp(p->s, "*") == 0;
    const char *pre = p->flags == (ACL_PERM_R | ACL_PERM_W)
                          ? (all ? "%RW~" : "~")
                      : p->flags == ACL_PERM_R ? "%R~"
                                               : "%W~";
    sb_printf(b, "%s", pre);
    sb_printf(b, "%s", p->s);
}

static void describe_sel(const server_t *s, const acl_sel_t *sel, sbuf_t *b)
{
    if (sel->allkeys) {
        sb_printf(b, "~* ");
    } else {
        for (size_t i = 0; i < sel->npats; i++) {
            pattern(b, &sel->pats[i]);
            sb_printf(b, " ");
        }
    }
    if (sel->allchannels) {
        sb_printf(b, "&* ");
    } else {
        sb_printf(b, "resetchannels ");
        for (size_t i = 0; i < sel->nchans; i++) {
            sb_printf(b, "&");
            sb_printf(b, "%s", sel->chans[i].s);
            sb_printf(b, " ");
        }
    }
    command_rules(s, sel, b);
}

static const char *const flag_names[] = {
    "on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload"};

char *acl_describe(const server_t *s, const acl_user_t *u)
{
    sbuf_t b = {0};
    for (unsigned i = 0; i < 5; i++)
        if (u->flags & (1u << i))
            sb_printf(&b, "%s ", flag_names[i]);
    for (size_t i = 0; i < u->npass; i++)
        sb_printf(&b, "#%s ", u->pass[i]);
    describe_sel(s, &u->sels[0], &b);
    for (size_t i = 1; i < u->nsels; i++) {
        sb_printf(&b, " (");
        describe_sel(s, &u->sels[i], &b);
        sb_printf(&b, ")");
    }
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p != NULL ? b.p : strdup("");
}

/* commands, keys, channels of sel: three fields of GETUSER's map. */
static void reply_sel(client_t *c, const acl_sel_t *sel)
{
    resp_out_t *o = &c->out;
    sbuf_t b = {0};
    command_rules(c->srv, sel, &b);
    resp_add_cstr(o, "commands");
    resp_add_bulk(o, b.p != NULL ? b.p : "", b.len);
    b.len = 0;
    resp_add_cstr(o, "keys");
    if (sel->allkeys) {
        sb_printf(&b, "~*");
    } else {
        for (size_t i = 0; i < sel->npats; i++) {
            if (i > 0)
                sb_printf(&b, " ");
            pattern(&b, &sel->pats[i]);
        }
    }
    resp_add_bulk(o, b.p != NULL ? b.p : "", b.len);
    b.len = 0;
    resp_add_cstr(o, "channels");
    if (sel->allchannels) {
        sb_printf(&b, "&*");
    } else {
        for (size_t i = 0; i < sel->nchans; i++) {
            sb_printf(&b, i > 0 ? " &" : "&");
            sb_printf(&b, "%s", sel->chans[i].s);
        }
    }
    resp_add_bulk(o, b.p != NULL ? b.p : "", b.len);
    free(b.p);
}

void acl_reply_user(client_t *c, const acl_user_t *u)
{
    resp_out_t *o = &c->out;
    resp_add_map(o, 6);
    resp_add_cstr(o, "flags");
    size_t nflags = 0;
    for (unsigned i = 0; i < 5; i++)
        nflags += (u->flags >> i) & 1;
    resp_add_set(o, nflags);
    for (unsigned i = 0; i < 5; i++)
        if (u->flags & (1u << i))
            resp_add_cstr(o, flag_names[i]);
    resp_add_cstr(o, "passwords");
    resp_add_array(o, u->npass);
    for (size_t i = 0; i < u->npass; i++)
        resp_add_bulk(o, u->pass[i], 64);
    reply_sel(c, &u->sels[0]);
    resp_add_cstr(o, "selectors");
    resp_add_array(o, u->nsels - 1);
    for (size_t i = 1; i < u->nsels; i++) {
        resp_add_map(o, 3);
        reply_sel(c, &u->sels[i]);
    }
}
