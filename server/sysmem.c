/*
 * sysmem.c - see sysmem.h.
 */
#include "sysmem.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A limit of this size or more is "none": cgroup v1 writes its unlimited
 * value as the largest page multiple below 2^63. */
#define SYSMEM_NO_LIMIT ((uint64_t)1 << 62)

/* The machine's physical memory in bytes; UINT64_MAX when unknown. */
static uint64_t sysmem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0 ||
        (uint64_t)pages > UINT64_MAX / (uint64_t)psize)
        return UINT64_MAX;
    return (uint64_t)pages * (uint64_t)psize;
}

/* The limit held in dir/file: a decimal number of bytes and a newline.
 * UINT64_MAX for "max", a value too large to be a limit, or anything that
 * cannot be read as a number. */
static uint64_t read_limit(const char *dir, const char *file)
{
    char path[4200], buf[64];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
        sizeof(path))
        return UINT64_MAX;
    FILE *fp = fopen(path, "re");
    if (fp == NULL)
        return UINT64_MAX;
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    uint64_t v = 0;
    const char *p = buf;
    if (*p < '0' || *p > '9')
        return UINT64_MAX;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return UINT64_MAX;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (*p != '\0' && *p != '\n')
        return UINT64_MAX;
    return v >= SYSMEM_NO_LIMIT ? UINT64_MAX : v;
}

/* The lowest limit in file on the way from base + path up to base. */
static uint64_t walk_up(const char *base, const char *path, const char *file)
{
    char dir[4200];
    uint64_t low = UINT64_MAX;
    size_t bl = strlen(base);
    if ((size_t)snprintf(dir, sizeof(dir), "%s%s", base, path) >= sizeof(dir))
        return UINT64_MAX;
    for (;;) {
        uint64_t v = read_limit(dir, file);
        if (v < low)
            low = v;
        char *slash = strrchr(dir + bl, '/');
        if (slash == NULL)
            break;
        *slash = '\0';
    }
    return low;
}

/* Whether the comma-separated controller list names "memory". */
static bool has_memory(const char *list)
{
    size_t n = strlen("memory");
    for (const char *p = list; p != NULL; p = strchr(p, ',')) {
        if (*p == ',')
            p++;
        if (strncmp(p, "memory", n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    }
    return false;
}

uint64_t sysmem_cgroup_limit(const char *proc_cgroup, const char *root)
{
    FILE *fp = fopen(proc_cgroup, "re");
    char line[4096], v1[4200];
    uint64_t low = UINT64_MAX;
    if (fp == NULL)
        return UINT64_MAX;
    if ((size_t)snprintf(v1, sizeof(v1), "%s/memory", root) >= sizeof(v1)) {
        fclose(fp);
        return UINT64_MAX;
    }
    bool cut = false; /* inside a line too long for the buffer */
    while (fgets(line, sizeof(line), fp) != NULL) {
        /* "<id>:<controllers>:<path>"; the path may hold ':' itself. */
        char *nl = strchr(line, '\n'), *c1 = strchr(line, ':'), *c2;
        bool was_cut = cut;
        cut = nl == NULL && !feof(fp);
        if (was_cut || cut || c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
            continue; /* too long, or malformed */
        if (nl != NULL)
            *nl = '\0';
        *c1 = *c2 = '\0';
        const char *path = c2 + 1;
        if (path[0] != '/')
            continue;
        if (path[1] == '\0')
            path = ""; /* the root itself */
        uint64_t v = UINT64_MAX;
        if (strcmp(line, "0") == 0 && c1[1] == '\0')
            v = walk_up(root, path, "memory.max");
        else if (has_memory(c1 + 1))
            v = walk_up(v1, path, "memory.limit_in_bytes");
        if (v < low)
            low = v;
    }
    fclose(fp);
    return low;
}

uint64_t sysmem_limit(void)
{
    uint64_t phys = sysmem_physical();
    uint64_t cg = sysmem_cgroup_limit("/proc/self/cgroup", "/sys/fs/cgroup");
    return cg < phys ? cg : phys;
}
