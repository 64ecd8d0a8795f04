/*
 * aof_check.c - see aof_check.h. The lines printed are redis-check-aof's
 * for a multi-part AOF ("Start checking Multi Part AOF", "Start to check
 * BASE AOF (RDB format).", "<type> <name> is valid", "All AOF files and
 * manifest are valid"), the base's format being our snapshot's.
 */
#include "aof_check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aofload.h"
#include "aofman.h"
#include "snapshot.h"

bool aof_check_is_manifest(const char *path)
{
    size_t n = strlen(path), k = strlen(".manifest");
    return n >= k && strcmp(path + n - k, ".manifest") == 0;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            char *nb = realloc(buf, cap = cap * 2 + 4096);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return buf;
}

/* dir of path + "/" + name. */
static char *beside(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    size_t d = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    char *out = malloc(d + strlen(name) + 1);
    if (out != NULL) {
        memcpy(out, path, d);
        strcpy(out + d, name);
    }
    return out;
}

static int count_key(void *ctx, int db, const void *key, size_t len,
                     cf_filter_t *f, int64_t when)
{
    (void)db;
    (void)key;
    (void)len;
    (void)when;
    cf_free(f);
    (*(uint64_t *)ctx)++;
    return 0;
}

static bool check_base(const char *path, const char *name)
{
    char err[512] = "";
    uint64_t keys = 0;
    cf_limits_t lim = {.max_bytes = 0};
    printf("Start to check BASE AOF (RDB format).\n");
    int rc = snap_load(path, &lim, count_key, &keys, err, sizeof(err));
    if (rc < 0) {
        printf("%s\n", err[0] ? err : strerror(-rc));
        printf("BASE AOF %s is not valid, aborting...\n", name);
        return false;
    }
    printf("BASE AOF %s is valid\n", name);
    return true;
}

static bool check_incr(const char *path, const char *name, bool last, bool fix,
                       aof_check_fn *check)
{
    aofload_report_t r;
    memset(&r, 0, sizeof(r));
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size == 0) {
        printf("INCR AOF %s is empty\n", name);
        return true;
    }
    if (check == NULL) {
        printf("INCR AOF %s cannot be checked by this build\n", name);
        return false;
    }
    int rc = check(path, fix && last, &r);
    if (rc == 0 && !r.truncated) {
        printf("INCR AOF %s is %s\n", name,
               r.file_bytes == 0 ? "empty" : "valid");
        return true;
    }
    if (rc == -EINVAL || r.truncated) {
        printf("AOF analyzed: filename=%s, size=%" PRIu64 ", ok_up_to=%" PRIu64
               ", diff=%" PRIu64 "\n",
               name, r.file_bytes, r.good_bytes, r.file_bytes - r.good_bytes);
        if (r.err[0] != '\0')
            printf("%s\n", r.err);
        if (fix && last && stat(path, &st) == 0 &&
            (uint64_t)st.st_size == r.good_bytes) {
            printf("Successfully truncated AOF %s\n", name);
            return true;
        }
        if (fix && !last)
            printf("Failed to truncate AOF %s because it is not the last "
                   "file\n",
                   name);
        else
            printf("AOF %s is not valid. Use the --fix option to try fixing "
                   "it.\n",
                   name);
        return false;
    }
    printf("Cannot open file %s: %s, aborting...\n", path, strerror(-rc));
    return false;
}

int aof_check_manifest(const char *path, bool fix, aof_check_fn *check)
{
    size_t len = 0;
    char err[256];
    char *text = read_all(path, &len);
    if (text == NULL) {
        printf("Cannot open file %s: %s\n", path, strerror(errno));
        return 1;
    }
    aofman_t m;
    printf("Start checking Multi Part AOF\n");
    int rc = aofman_parse(text, len, &m, err, sizeof(err));
    free(text);
    if (rc < 0) {
        printf("The AOF manifest file %s is invalid: %s\n", path, err);
        return 1;
    }
    bool ok = true;
    if (m.base != NULL) {
        char *p = beside(path, m.base->name);
        ok = p != NULL && check_base(p, m.base->name);
        free(p);
    }
    if (ok && m.nincr > 0)
        printf("Start to check INCR files.\n");
    for (size_t i = 0; ok && i < m.nincr; i++) {
        char *p = beside(path, m.incr[i].name);
        ok = p != NULL &&
             check_incr(p, m.incr[i].name, i + 1 == m.nincr, fix, check);
        free(p);
    }
    aofman_free(&m);
    if (ok)
        printf("All AOF files and manifest are valid\n");
    return ok ? 0 : 1;
}
