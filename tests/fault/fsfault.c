/*
 * fsfault.c - a preload library that makes the server's file system calls
 * fail on demand, as a failing disk would: the tests of what a failed
 * fsync or write gets (tests/integ/test_disk_faults.py).
 *
 * CUCKOOD_FSFAULT names a control file. Before each call it covers, the
 * library reads that file: a line "<call> <error>" (fsync, fdatasync;
 * EIO, ENOSPC, EDQUOT) makes the call fail with that error without doing
 * it; no file, or no line for the call, lets it through. A test switches
 * a failure on and off by writing and removing the file while the server
 * runs. Every failure made is counted in "<control file>.count", one
 * line per failure, so a test can tell that the disk really failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The error the control file asks of call, or 0. */
static int wanted_error(const char *call)
{
    const char *path = getenv("CUCKOOD_FSFAULT");
    if (path == NULL)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char text[512];
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    static const struct {
        const char *name;
        int err;
    } errs[] = {{"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}};
    size_t clen = strlen(call);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, call, clen) != 0 || line[clen] != ' ')
            continue;
        for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
            if (strcmp(line + clen + 1, errs[i].name) == 0)
                return errs[i].err;
    }
    return 0;
}

/* Appends "call" to the count file. */
static void count_failure(const char *call)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s.count", getenv("CUCKOOD_FSFAULT"));
    if (n <= 0 || (size_t)n >= sizeof(path))
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char line[64];
    n = snprintf(line, sizeof(line), "%s\n", call);
    if (write(fd, line, (size_t)n) < 0) {
        /* nothing to do: the count is for the test's information */
    }
    close(fd);
}

static int fail_or_call(const char *call, int fd)
{
    int err = wanted_error(call);
    if (err != 0) {
        count_failure(call);
        errno = err;
        return -1;
    }
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, call);
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd);
}

int fsync(int fd)
{
    return fail_or_call("fsync", fd);
}

int fdatasync(int fd)
{
    return fail_or_call("fdatasync", fd);
}
