/*
 * fsfault.c - a preload library that stands for the disk under the
 * server in tests: it makes file system calls fail on demand, as a failing
 * disk would (tests/integ/test_disk_faults.py), and records them, so that
 * a test can rebuild what a disk may hold after a power cut at any point
 * (tests/support/fsmodel.py, tests/integ/test_powercut.py).
 *
 * Failures: CUCKOOD_FSFAULT names a control file. Before each call it
 * covers, the library reads that file: a line "<call> <action> [<part>]"
 * (call: write, fsync, fdatasync) acts on the calls on a file whose path
 * contains <part> (any file when it is left out; only files opened by
 * path, never sockets): EIO, ENOSPC or EDQUOT makes the call fail with
 * that error without doing it, SHORT makes a write write half of its
 * bytes (at least one), SLOW makes the call wait 3 s first. No file, or no
 * line for the call, lets it through. A test switches a failure on and off
 * by writing and removing the file while the server runs. Every failure
 * made is counted in "<control file>.count", one line per failure.
 *
 * Recording: CUCKOOD_FSREC names a log file. Every open of a path (with
 * its flags and the fd it gave), write to such an fd (its offset and
 * bytes), ftruncate, fsync and fdatasync (of a file or a directory),
 * rename, unlink and mkdir is appended to it as one record, written with
 * one write(2) to an O_APPEND file so that the server's threads and its
 * forked children log side by side without tearing a record. A record:
 * struct rec below, then the first path, the second path and the data.
 * Paths are absolute (a relative one is joined to the working directory).
 * Times are CLOCK_MONOTONIC, before and after the call, so a test can
 * order them against the replies its clients saw.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ---- failures ----------------------------------------------------------- */

static int (*real_open)(const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);

static void resolve(void)
{
    if (real_open == NULL) {
        real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
        real_write =
            (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    }
}

enum { ACT_SHORT = -1, ACT_SLOW = -2 };

/* What the control file asks of call on the file at path: 0 (nothing), an
 * errno, ACT_SHORT or ACT_SLOW. */
static int wanted(const char *call, const char *path)
{
    const char *ctl = getenv("CUCKOOD_FSFAULT");
    if (ctl == NULL || path == NULL)
        return 0;
    resolve();
    int fd = real_open(ctl, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char text[1024];
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    static const struct {
        const char *name;
        int act;
    } acts[] = {{"EIO", EIO},
                {"ENOSPC", ENOSPC},
                {"EDQUOT", EDQUOT},
                {"SHORT", ACT_SHORT},
                {"SLOW", ACT_SLOW}};
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char c[32], a[32], part[512] = "";
        if (sscanf(line, "%31s %31s %511s", c, a, part) < 2 ||
            strcmp(c, call) != 0 || strstr(path, part) == NULL)
            continue;
        for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
            if (strcmp(a, acts[i].name) == 0)
                return acts[i].act;
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
    int fd = real_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char line[64];
    n = snprintf(line, sizeof(line), "%s\n", call);
    if (real_write(fd, line, (size_t)n) < 0) {
        /* nothing to do: the count is for the test's information */
    }
    close(fd);
}

/* ---- recording ---------------------------------------------------------- */

enum {
    OP_OPEN = 1,   /* path, off = flags, ret = fd */
    OP_WRITE = 2,  /* path, off, data */
    OP_TRUNC = 3,  /* path, off = length */
    OP_FSYNC = 4,  /* path (a file or a directory), off = 1 for fdatasync */
    OP_RENAME = 5, /* path, path2 */
    OP_UNLINK = 6, /* path */
    OP_MKDIR = 7,  /* path */
};

struct rec {
    uint32_t magic; /* "FSR1" */
    uint32_t op;
    int32_t pid;
    int32_t ret; /* the call's result (-errno on failure) */
    uint64_t t0, t1;
    uint64_t off, len; /* len: bytes of data after the paths */
    uint32_t plen, plen2;
};

#define REC_MAGIC 0x31525346u
#define MAX_FD 4096

static int rec_fd = -2; /* -2: not looked at yet, -1: not recording */
static dev_t rec_dev;   /* the log's identity, to find it again */
static ino_t rec_ino;
static char *fd_path[MAX_FD]; /* the path each fd was opened with */

static void open_log(void)
{
    const char *p = getenv("CUCKOOD_FSREC");
    struct stat st;
    resolve();
    rec_fd = p == NULL ? -1
                       : real_open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                                   0600);
    if (rec_fd >= 0 && fstat(rec_fd, &st) == 0) {
        rec_dev = st.st_dev;
        rec_ino = st.st_ino;
    }
}

static int recorder(void)
{
    if (rec_fd == -2)
        open_log();
    return rec_fd;
}

/* The log's fd, opened again when it is no longer the log: the server's
 * forked children close every descriptor (close_range(2), which this
 * library does not see), and the number may since name another file. */
static int log_fd(void)
{
    struct stat st;
    if (recorder() < 0)
        return -1;
    if (fstat(rec_fd, &st) != 0 || st.st_dev != rec_dev || st.st_ino != rec_ino)
        open_log();
    return rec_fd;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* path made absolute, malloc'd; NULL when it cannot be. */
static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        return NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *a = malloc(n);
    if (a != NULL)
        snprintf(a, n, "%s/%s", cwd, path);
    return a;
}

static void emit(uint32_t op, int ret, uint64_t t0, const char *p1,
                 const char *p2, uint64_t off, const void *data, size_t len)
{
    int fd = p1 != NULL ? log_fd() : -1;
    if (fd < 0)
        return;
    struct rec r = {REC_MAGIC,
                    op,
                    (int32_t)getpid(),
                    ret,
                    t0,
                    now_ns(),
                    off,
                    len,
                    (uint32_t)strlen(p1),
                    p2 ? (uint32_t)strlen(p2) : 0};
    struct iovec v[4] = {{&r, sizeof(r)},
                         {(void *)p1, r.plen},
                         {(void *)(p2 ? p2 : ""), r.plen2},
                         {(void *)data, len}};
    /* One call, so that a record is never split by another writer's. */
    if (writev(fd, v, 4) < 0) {
        /* a record lost makes the test's model wrong, not the server */
    }
}

/* Whether paths of fds are kept: for the record or for the faults. */
static bool tracking(void)
{
    return recorder() >= 0 || getenv("CUCKOOD_FSFAULT") != NULL;
}

static void remember(int fd, const char *path)
{
    if (fd < 0 || fd >= MAX_FD || !tracking())
        return;
    free(fd_path[fd]);
    fd_path[fd] = absolute(path);
}

static const char *path_of(int fd)
{
    return fd >= 0 && fd < MAX_FD ? fd_path[fd] : NULL;
}

/* ---- the calls ---------------------------------------------------------- */

static int open_common(const char *path, int flags, mode_t mode)
{
    resolve();
    uint64_t t0 = now_ns();
    int fd = real_open(path, flags, mode);
    if (fd >= 0 && tracking()) {
        remember(fd, path);
        emit(OP_OPEN, fd, t0, path_of(fd), NULL, (uint64_t)flags, NULL, 0);
    }
    return fd;
}

/* The mode argument of an open that creates (va_start needs the caller's
 * own frame, hence a macro). */
#define MODE_OF(flags, mode)                                                   \
    do {                                                                       \
        if ((flags) & (O_CREAT | O_TMPFILE)) {                                 \
            va_list ap;                                                        \
            va_start(ap, flags);                                               \
            (mode) = va_arg(ap, mode_t);                                       \
            va_end(ap);                                                        \
        }                                                                      \
    } while (0)

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    MODE_OF(flags, mode);
    return open_common(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    MODE_OF(flags, mode);
    return open_common(path, flags, mode);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    resolve();
    const char *p = path_of(fd);
    uint64_t t0 = p ? now_ns() : 0;
    int act = wanted("write", p);
    if (act > 0) {
        count_failure("write");
        errno = act;
        return -1;
    }
    if (act == ACT_SLOW) {
        count_failure("write");
        sleep(3);
    }
    if (act == ACT_SHORT && n > 1) {
        count_failure("write");
        n /= 2;
    }
    ssize_t w = real_write(fd, buf, n);
    if (p != NULL && w > 0) {
        off_t end = lseek(fd, 0, SEEK_CUR);
        emit(OP_WRITE, (int)w, t0, p, NULL, (uint64_t)(end - w), buf,
             (size_t)w);
    }
    return w;
}

int ftruncate(int fd, off_t len)
{
    int (*real)(int, off_t) =
        (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
    uint64_t t0 = now_ns();
    int rc = real(fd, len);
    if (rc == 0)
        emit(OP_TRUNC, 0, t0, path_of(fd), NULL, (uint64_t)len, NULL, 0);
    return rc;
}

static int sync_call(const char *call, int fd, int data_only)
{
    resolve();
    int act = wanted(call, path_of(fd));
    if (act > 0) {
        count_failure(call);
        errno = act;
        return -1;
    }
    if (act == ACT_SLOW) {
        count_failure(call);
        sleep(3);
    }
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, call);
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    uint64_t t0 = now_ns();
    int rc = real(fd);
    if (rc == 0)
        emit(OP_FSYNC, 0, t0, path_of(fd), NULL, (uint64_t)data_only, NULL, 0);
    return rc;
}

int fsync(int fd)
{
    return sync_call("fsync", fd, 0);
}

int fdatasync(int fd)
{
    return sync_call("fdatasync", fd, 1);
}

int rename(const char *from, const char *to)
{
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    uint64_t t0 = now_ns();
    int rc = real(from, to);
    if (rc == 0 && recorder() >= 0) {
        char *a = absolute(from), *b = absolute(to);
        emit(OP_RENAME, 0, t0, a, b, 0, NULL, 0);
        free(a);
        free(b);
    }
    return rc;
}

int unlink(const char *path)
{
    int (*real)(const char *) =
        (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    uint64_t t0 = now_ns();
    int rc = real(path);
    if (rc == 0 && recorder() >= 0) {
        char *a = absolute(path);
        emit(OP_UNLINK, 0, t0, a, NULL, 0, NULL, 0);
        free(a);
    }
    return rc;
}

int mkdir(const char *path, mode_t mode)
{
    int (*real)(const char *, mode_t) =
        (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
    uint64_t t0 = now_ns();
    int rc = real(path, mode);
    if (rc == 0 && recorder() >= 0) {
        char *a = absolute(path);
        emit(OP_MKDIR, 0, t0, a, NULL, 0, NULL, 0);
        free(a);
    }
    return rc;
}

int close(int fd)
{
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "close");
    /* Forgotten first: the number may be reused (a socket) once closed. */
    if (fd >= 0 && fd < MAX_FD && fd_path[fd] != NULL) {
        char *p = fd_path[fd];
        fd_path[fd] = NULL;
        free(p);
    }
    return real(fd);
}
