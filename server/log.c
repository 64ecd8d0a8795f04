/* log.c - see log.h. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_level = CFG_LOG_NOTICE;
static FILE *log_fp; /* NULL = stdout */

int log_init(int level, const char *path)
{
    log_level = level;
    log_close();
    if (path == NULL || path[0] == '\0')
        return 0;
    FILE *fp = fopen(path, "a");
    if (fp == NULL)
        return -errno;
    log_fp = fp;
    return 0;
}

void log_set_level(int level)
{
    log_level = level;
}

void log_close(void)
{
    if (log_fp != NULL)
        fclose(log_fp);
    log_fp = NULL;
}

void log_msg(int level, const char *fmt, ...)
{
    static const char marks[] = ".-*#";
    if (level < log_level)
        return;
    if (level < CFG_LOG_DEBUG || level > CFG_LOG_WARNING)
        level = CFG_LOG_WARNING;
    FILE *fp = log_fp != NULL ? log_fp : stdout;
    struct timeval tv;
    struct tm tm;
    char ts[64];
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    size_t n = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S", &tm);
    snprintf(ts + n, sizeof(ts) - n, ".%03d", (int)(tv.tv_usec / 1000));
    fprintf(fp, "%d:M %s %c ", (int)getpid(), ts, marks[level]);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(fp, fmt, ap);
    va_end(ap);
    fputc('\n', fp);
    fflush(fp);
}
