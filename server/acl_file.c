/*
 * acl_file.c - see acl_file.h.
 */
#include "acl_file.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "acl_int.h"
#include "cmd.h"
#include "log.h"
#include "util.h"

/* An aclfile larger than this is refused rather than read. */
#define ACL_FILE_MAX (16u << 20)

/* The users a file describes, before they replace the live ones. */
typedef struct staged {
    acl_t set; /* users only; dflt unused */
    sbuf_t errors;
} staged_t;

typedef struct line_ctx {
    const server_t *s;
    acl_user_t *u;
    staged_t *st;
    const char *file;
    int lineno;
    bool syntax_reported;
} line_ctx_t;

static int line_rule(void *ctx, const char *op, size_t len)
{
    line_ctx_t *x = ctx;
    /* Redis trims each rule of tabs and line ends. */
    while (len > 0 && strchr("\t\r\n", op[0]) != NULL)
        op++, len--;
    while (len > 0 && strchr("\t\r\n", op[len - 1]) != NULL)
        len--;
    int rc = acl_user_op(x->s, x->u, op, len);
    if (rc == ENOENT) {
        sb_printf(&x->st->errors,
                  "%s:%d: Error in applying operation '%.*s': "
                  "%s. ",
                  x->file, x->lineno, (int)len, op, acl_op_error(rc));
    } else if (rc != 0 && !x->syntax_reported) {
        sb_printf(&x->st->errors, "%s:%d: %s. ", x->file, x->lineno,
                  acl_op_error(rc));
        x->syntax_reported = true;
    }
    return 0; /* as Redis, the other rules are still tried */
}

static bool bad_name(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == '\0')
            return true;
    return false;
}

/* One line of the file: its words split on single spaces, as Redis's
 * sdssplitlen(" "). */
static void stage_line(const server_t *s, staged_t *st, const char *file,
                       int lineno, const char *line, size_t len)
{
    size_t nwords = 1;
    for (size_t i = 0; i < len; i++)
        nwords += line[i] == ' ';
    arg_t *w = calloc(nwords, sizeof(*w));
    if (w == NULL) {
        st->errors.failed = true;
        return;
    }
    int argc = 0;
    const char *p = line, *end = line + len;
    while (p <= end) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        if (sp == NULL)
            sp = end;
        w[argc++] = (arg_t){.ptr = p, .len = (size_t)(sp - p)};
        p = sp + 1;
    }
    if (argc < 2 || w[0].len != 4 || memcmp(w[0].ptr, "user", 4) != 0) {
        sb_printf(&st->errors,
                  "%s:%d should start with user keyword followed by the "
                  "username. ",
                  file, lineno);
        free(w);
        return;
    }
    if (bad_name(w[1].ptr, w[1].len)) {
        sb_printf(&st->errors,
                  "'%s:%d: username '%.*s' contains invalid characters. ", file,
                  lineno, (int)w[1].len, w[1].ptr);
        free(w);
        return;
    }
    size_t before = st->set.nusers;
    acl_user_t *u = acl_user_new(&st->set, w[1].ptr, w[1].len);
    if (u == NULL) {
        st->errors.failed = true;
    } else if (st->set.nusers == before) {
        sb_printf(&st->errors,
                  "WARNING: Duplicate user '%.*s' found on line "
                  "%d. ",
                  (int)w[1].len, w[1].ptr, lineno);
    } else if (acl_user_blank(s, u) < 0) {
        st->errors.failed = true;
    } else {
        line_ctx_t x = {
            .s = s, .u = u, .st = st, .file = file, .lineno = lineno};
        char err[256];
        if (acl_merge_args(argc - 2, w + 2, line_rule, &x, err, sizeof(err)) !=
            0)
            sb_printf(&st->errors,
                      "%s:%d: Unmatched parenthesis in selector definition.",
                      file, lineno);
    }
    free(w);
}

static void staged_free(staged_t *st)
{
    for (size_t i = 0; i < st->set.nusers; i++)
        acl_user_destroy(st->set.users[i]);
    free(st->set.users);
    free(st->errors.p);
}

static void stage_text(const server_t *s, staged_t *st, const char *file,
                       const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    int lineno = 0;
    while (p < end || (p == end && lineno == 0 && len > 0)) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end;
        const char *b = p;
        lineno++;
        p = nl != NULL ? nl + 1 : end;
        while (b < e && strchr(" \t\r\n", *b) != NULL)
            b++;
        while (e > b && strchr(" \t\r\n", e[-1]) != NULL)
            e--;
        if (b < e)
            stage_line(s, st, file, lineno, b, (size_t)(e - b));
        if (nl == NULL)
            break;
    }
}

int acl_file_check(server_t *s, const char *text, size_t len, char *err,
                   size_t errlen)
{
    staged_t st = {0};
    stage_text(s, &st, "fuzz", text, len);
    int rc = st.errors.len > 0 || st.errors.failed ? -EINVAL : 0;
    set_err(err, errlen, "%s", st.errors.p != NULL ? st.errors.p : "");
    staged_free(&st);
    return rc;
}

/* Moves src's state into dst (src is left without state). */
static void take_state(acl_user_t *dst, acl_user_t *src)
{
    acl_user_clear(dst);
    dst->flags = src->flags;
    dst->pass = src->pass;
    dst->npass = src->npass;
    dst->sels = src->sels;
    dst->nsels = src->nsels;
    src->pass = NULL;
    src->sels = NULL;
    src->npass = src->nsels = 0;
}

/* The live users become st's: the existing structures keep their address
 * (clients point to them), those st lacks are deleted. */
static int commit(server_t *s, staged_t *st)
{
    acl_t *a = s->acl;
    for (size_t i = a->nusers; i-- > 0;) {
        acl_user_t *u = a->users[i];
        if (u != a->dflt && acl_find_in(&st->set, u->name, u->namelen) == NULL)
            acl_deluser(s, u);
    }
    for (size_t i = 0; i < st->set.nusers; i++) {
        acl_user_t *nu = st->set.users[i];
        acl_user_t *u = acl_user_new(a, nu->name, nu->namelen);
        if (u == NULL)
            return -ENOMEM;
        take_state(u, nu);
    }
    if (acl_find_in(&st->set, "default", 7) == NULL) {
        acl_user_t fresh = {0};
        if (acl_user_blank(s, &fresh) < 0)
            return -ENOMEM;
        acl_sel_op(s, &fresh.sels[0], "+@all", 5);
        acl_sel_op(s, &fresh.sels[0], "~*", 2);
        acl_sel_op(s, &fresh.sels[0], "&*", 2);
        fresh.flags = ACL_U_ON | ACL_U_NOPASS;
        take_state(a->dflt, &fresh);
    }
    acl_sync_auth(s);
    return 0;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        set_err(err, errlen, "Error loading ACLs, opening file '%s': %s", path,
                strerror(errno));
        return NULL;
    }
    char *buf = malloc(ACL_FILE_MAX + 1);
    size_t n = buf != NULL ? fread(buf, 1, ACL_FILE_MAX + 1, fp) : 0;
    bool bad = ferror(fp) != 0;
    fclose(fp);
    if (buf == NULL || bad || n > ACL_FILE_MAX) {
        set_err(err, errlen, "Error loading ACLs, reading file '%s': %s", path,
                buf == NULL ? "out of memory"
                : bad       ? "read error"
                            : "file too large");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int acl_file_load(server_t *s, const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = read_file(path, &len, err, errlen);
    if (text == NULL)
        return -EINVAL;
    staged_t st = {0};
    stage_text(s, &st, path, text, len);
    free(text);
    int rc = 0;
    if (st.errors.failed) {
        set_err(err, errlen, "Error loading ACLs: out of memory");
        rc = -ENOMEM;
    } else if (st.errors.len > 0) {
        set_err(err, errlen,
                "%sWARNING: ACL errors detected, no change to the previously "
                "active ACL rules was performed",
                st.errors.p);
        rc = -EINVAL;
    } else if ((rc = commit(s, &st)) < 0) {
        set_err(err, errlen, "Error loading ACLs: out of memory");
    }
    staged_free(&st);
    return rc;
}

int acl_file_save(server_t *s, const char *path)
{
    sbuf_t b = {0};
    for (size_t i = 0; i < acl_count(s); i++) {
        const acl_user_t *u = acl_at(s, i);
        char *d = acl_describe(s, u);
        if (d == NULL) {
            b.failed = true;
            break;
        }
        sb_printf(&b, "user %s %s\n", u->name, d);
        free(d);
    }
    if (b.failed) {
        free(b.p);
        log_warning("Writing ACL file for ACL SAVE: out of memory");
        return -ENOMEM;
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d-%llu", path, (int)getpid(),
             (unsigned long long)server_now_ms(s));
    int rc = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = -errno;
        log_warning("Opening temp ACL file for ACL SAVE: %s", strerror(errno));
        free(b.p);
        return rc;
    }
    size_t off = 0;
    while (off < b.len) {
        ssize_t n = write(fd, b.p + off, b.len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : -EIO;
            break;
        }
        off += (size_t)n;
    }
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    free(b.p);
    if (rc < 0) {
        log_warning("Writing ACL file for ACL SAVE: %s", strerror(-rc));
        unlink(tmp);
        return rc;
    }
    /* The rename itself lasts once the directory is on disk. */
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

/* The configuration's "user" lines, as Redis's ACLLoadConfiguredUsers():
 * a line for "default" resets it first. */
static int config_users(server_t *s)
{
    const cfg_t *cfg = s->cfg;
    for (int i = 0; i < cfg->nusers; i++) {
        const cfg_user_t *cu = &cfg->users[i];
        const char *name = cu->argv[0];
        if (bad_name(name, strlen(name))) {
            log_warning("Spaces not allowed in ACL usernames");
            return -1;
        }
        arg_t *w = calloc((size_t)cu->argc, sizeof(*w));
        if (w == NULL)
            return -1;
        for (int j = 0; j < cu->argc; j++)
            w[j] = (arg_t){.ptr = cu->argv[j], .len = strlen(cu->argv[j])};
        arg_t reset = {.ptr = "reset", .len = 5};
        char err[512];
        int rc = 0;
        if (strcmp(name, "default") == 0)
            rc = acl_setuser(s, "default", 7, 1, &reset, err, sizeof(err));
        if (rc == 0)
            rc = acl_setuser(s, name, strlen(name), cu->argc - 1, w + 1, err,
                             sizeof(err));
        free(w);
        if (rc < 0) {
            log_warning("Error loading ACL rules for the user named '%s': %s",
                        name, err);
            return -1;
        }
        const acl_user_t *u = acl_find(s, name, strlen(name));
        if (u != NULL && (u->flags & ACL_U_OFF))
            log_notice("The user '%s' is disabled (there is no 'on' modifier "
                       "in the user description). Make sure this is not a "
                       "configuration error.",
                       name);
    }
    return 0;
}

int acl_file_startup(server_t *s)
{
    const cfg_t *cfg = s->cfg;
    bool file = cfg->aclfile != NULL && cfg->aclfile[0] != '\0';
    if (file && cfg->nusers > 0) {
        log_warning("Configuring Redis with users defined in redis.conf and "
                    "at the same setting an ACL file path is invalid. This "
                    "setup is very likely to lead to configuration errors "
                    "and security holes, please define either an ACL file or "
                    "declare users directly in your redis.conf, but not "
                    "both.");
        return -1;
    }
    if (config_users(s) < 0) {
        log_warning("Critical error while loading ACLs. Exiting.");
        return -1;
    }
    if (file) {
        char err[4096];
        if (acl_file_load(s, cfg->aclfile, err, sizeof(err)) < 0) {
            log_warning("Aborting Redis startup because of ACL errors: %s",
                        err);
            return -1;
        }
    }
    return 0;
}
