/*
 * config_load.c - see config_load.h: the configuration file and the
 * command line, line by line through config.c's directive table
 * (config_int.h).
 */
#include "config_load.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "util.h"

/* A config file larger than this is refused rather than read into memory. */
#define CFG_MAX_FILE (16u << 20)

/* Applies one line (already trimmed, not a comment). */
static int load_line(cfg_t *c, const char *where, const char *line,
                     cfg_load_t *ld, char *err, size_t errlen)
{
    char why[WHY_LEN];
    char **argv = NULL, *buf = NULL;
    int argc = 0, rc;
    const cfg_def_t *d;

    rc = cfg_split_args(line, &argv, &argc, &buf);
    if (rc == -EINVAL) {
        set_err(err, errlen,
                "%s: '%s': Unbalanced quotes in configuration line", where,
                line);
        return rc;
    }
    if (rc < 0) {
        set_err(err, errlen, "%s: out of memory", where);
        return rc;
    }
    d = argc > 0 ? cfg_def_find(argv[0]) : NULL;
    if (argc >= 2 && strcasecmp(argv[0], "user") == 0) {
        /* As Redis, the rules are checked when the users are created. */
        if ((rc = cfg_add_user(c, argv + 1, argc - 1)) < 0)
            set_err(err, errlen, "%s: out of memory", where);
    } else if (d == NULL) {
        set_err(err, errlen,
                "%s: '%s': Bad directive or wrong number of arguments", where,
                line);
        rc = -EINVAL;
    } else if ((rc = cfg_apply(c, d, argv + 1, argc - 1, ld, why)) < 0) {
        set_err(err, errlen, "%s: '%s': %s", where, line, why);
    }
    free(argv);
    free(buf);
    return rc;
}

static int load_text(cfg_t *c, const char *name, const char *text,
                     cfg_load_t *ld, char *err, size_t errlen)
{
    const char *p = text;
    char where[512];
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;

    while (*p != '\0' && rc == 0) {
        const char *eol = strchr(p, '\n');
        size_t n = eol != NULL ? (size_t)(eol - p) : strlen(p);
        const char *s = p, *e = p + n;

        lineno++;
        p = eol != NULL ? eol + 1 : p + n;
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        if (s == e || *s == '#')
            continue;
        if ((size_t)(e - s) + 1 > cap) {
            char *nl = realloc(line, (size_t)(e - s) + 1);
            if (nl == NULL) {
                set_err(err, errlen, "%s:%d: out of memory", name, lineno);
                rc = -ENOMEM;
                break;
            }
            line = nl;
            cap = (size_t)(e - s) + 1;
        }
        memcpy(line, s, (size_t)(e - s));
        line[e - s] = '\0';
        snprintf(where, sizeof(where), "%s:%d", name, lineno);
        rc = load_line(c, where, line, ld, err, errlen);
    }
    free(line);
    return rc;
}

/* Reads the whole file (config is not a hot path). */
static int read_file(const char *path, char **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;

    if (f == NULL) {
        rc = -errno;
        set_err(err, errlen, "%s: can't open the config file: %s", path,
                strerror(errno));
        return rc;
    }
    for (;;) {
        if (cap - len < 4096) {
            char *nb;
            if (cap >= CFG_MAX_FILE) {
                set_err(err, errlen, "%s: config file larger than %u bytes",
                        path, CFG_MAX_FILE);
                rc = -EFBIG;
                break;
            }
            cap = cap == 0 ? 8192 : cap * 2;
            nb = realloc(buf, cap + 1);
            if (nb == NULL) {
                set_err(err, errlen, "%s: out of memory", path);
                rc = -ENOMEM;
                break;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                rc = -EIO;
                set_err(err, errlen, "%s: can't read the config file: %s", path,
                        strerror(errno != 0 ? errno : EIO));
            }
            break;
        }
    }
    fclose(f);
    if (rc == 0 && memchr(buf, '\0', len) != NULL) {
        set_err(err, errlen, "%s: config file contains a NUL byte", path);
        rc = -EINVAL;
    }
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

/* One "--name v1 v2" group of the command line, applied as a config line so
 * the same table and messages serve both. */
static int load_option(cfg_t *c, char **argv, int from, int to, cfg_load_t *ld,
                       char *err, size_t errlen)
{
    char why[WHY_LEN];
    char **words = NULL, *buf = NULL, **all = NULL, *shown = NULL;
    size_t shown_len = 1;
    int nwords = 0, rc, nall = 0;
    const cfg_def_t *d;

    for (int i = from; i < to; i++)
        shown_len += strlen(argv[i]) + 1;
    shown = malloc(shown_len);
    if (shown == NULL)
        return -ENOMEM;
    shown[0] = '\0';
    for (int i = from; i < to; i++) {
        if (i > from)
            strcat(shown, " ");
        strcat(shown, argv[i]);
    }
    /* "--port 7000" may also come as one word, as redis-server allows. */
    rc = cfg_split_args(argv[from] + 2, &words, &nwords, &buf);
    if (rc == -EINVAL) {
        set_err(err, errlen, "command line: '%s': Unbalanced quotes", shown);
        goto out;
    }
    if (rc < 0) {
        set_err(err, errlen, "command line: out of memory");
        goto out;
    }
    all = calloc((size_t)(nwords + (to - from) + 1), sizeof(*all));
    if (all == NULL) {
        rc = -ENOMEM;
        set_err(err, errlen, "command line: out of memory");
        goto out;
    }
    for (int i = 0; i < nwords; i++)
        all[nall++] = words[i];
    for (int i = from + 1; i < to; i++)
        all[nall++] = argv[i];
    d = nall > 0 ? cfg_def_find(all[0]) : NULL;
    if (d == NULL) {
        set_err(err, errlen,
                "command line: '%s': Bad directive or wrong "
                "number of arguments",
                shown);
        rc = -EINVAL;
        goto out;
    }
    if (d->type == T_SAVE && nall == 1) {
        static char empty[] = "";
        all[nall++] = empty; /* a bare --save means save "" */
    }
    rc = cfg_apply(c, d, all + 1, nall - 1, ld, why);
    if (rc < 0)
        set_err(err, errlen, "command line: '%s': %s", shown, why);
out:
    free(all);
    free(words);
    free(buf);
    free(shown);
    return rc;
}

static bool is_option(const char *s)
{
    return s[0] == '-' && s[1] == '-';
}

int cfg_load_args(cfg_t *c, int argc, char **argv, char *err, size_t errlen)
{
    cfg_load_t ld = {false};
    int i = 1, rc;

    if (argc > 1 && !is_option(argv[1])) {
        const char *path = argv[1];
        char *text = NULL, *abs;

        if ((rc = read_file(path, &text, err, errlen)) < 0)
            return rc;
        rc = load_text(c, path, text, &ld, err, errlen);
        free(text);
        if (rc < 0)
            return rc;
        abs = realpath(path, NULL);
        if (abs == NULL)
            abs = strdup(path);
        if (abs == NULL) {
            set_err(err, errlen, "%s: out of memory", path);
            return -ENOMEM;
        }
        free(c->config_file);
        c->config_file = abs;
        i = 2;
    }
    while (i < argc) {
        int j = i + 1;
        if (!is_option(argv[i])) {
            set_err(err, errlen, "command line: '%s': expected a --directive",
                    argv[i]);
            return -EINVAL;
        }
        while (j < argc && !is_option(argv[j]))
            j++;
        if ((rc = load_option(c, argv, i, j, &ld, err, errlen)) < 0)
            return rc;
        i = j;
    }
    return 0;
}
