/*
 * aofman.h - the append-only file's manifest, as Redis 7 lays it out: one
 * line per file, "file <name> seq <n> type <b|i|h>", naming the base (a
 * snapshot), the increments (commands in RESP, loaded in order after the
 * base) and the history (files a rewrite replaced, to be deleted).
 *
 * Naming, for the prefix P (appendfilename): P.<seq>.base.rdb,
 * P.<seq>.incr.aof, the manifest P.manifest, all in appenddirname.
 *
 * Contract: pure (no I/O, no libuv): parsing and formatting of bytes the
 * caller reads and writes. Strings are owned by the manifest and freed by
 * aofman_free(). Returns 0 or a negative errno.
 */
#ifndef AOFMAN_H
#define AOFMAN_H

#include <stddef.h>
#include <stdint.h>

#define AOFMAN_MAX_LINE 1024 /* as Redis's MANIFEST_MAX_LINE */

typedef struct aofman_file {
    char *name;
    int64_t seq;
    char type; /* 'b', 'i' or 'h' */
} aofman_file_t;

typedef struct aofman {
    aofman_file_t *base; /* NULL when none */
    aofman_file_t *incr; /* ascending seq */
    size_t nincr;
    aofman_file_t *hist;
    size_t nhist;
    int64_t base_seq; /* the highest seq given so far, per type */
    int64_t incr_seq;
} aofman_t;

/* Parses len bytes of a manifest into *m (which it initialises). 0, or
 * -EINVAL with Redis's reason and the line number in err ("Invalid AOF
 * manifest file format", "Found duplicate base file information", "Found
 * a non-monotonic sequence number", "Unknown AOF file type", "File can't
 * be a path, just a filename", "Found an empty AOF manifest"), or -ENOMEM;
 * *m is empty after a failure. */
int aofman_parse(const char *buf, size_t len, aofman_t *m, char *err,
                 size_t errlen);

/* The manifest's text (base, history, increments, as Redis writes them) in
 * a new NUL-terminated string the caller frees; NULL when out of memory. */
char *aofman_format(const aofman_t *m);

/* A deep copy of src into *dst. 0 or -ENOMEM (dst empty then). */
int aofman_dup(const aofman_t *src, aofman_t *dst);

/* Adds a new base named for prefix at the next base seq; the former base,
 * if any, becomes history. 0 or -ENOMEM (m unchanged). */
int aofman_new_base(aofman_t *m, const char *prefix);

/* Adds a new increment named for prefix at the next incr seq. 0 or
 * -ENOMEM (m unchanged). */
int aofman_new_incr(aofman_t *m, const char *prefix);

/* After a rewrite whose base covers every increment up to and including
 * seq upto: those increments become history. */
int aofman_retire_incr(aofman_t *m, int64_t upto);

/* Forgets the history (its files are deleted by the caller). */
void aofman_clear_history(aofman_t *m);

/* The last increment's name, or NULL when there is none. */
const char *aofman_last_incr(const aofman_t *m);

void aofman_free(aofman_t *m);

#endif /* AOFMAN_H */
