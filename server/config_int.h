/*
 * config_int.h - what config.c shares with config_load.c: the directive
 * table's lookup, one directive applied, and the word splitting of a
 * configuration line.
 *
 * Contract: as config.h; start-up and the event loop thread only.
 */
#ifndef CONFIG_INT_H
#define CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* The room for a refusal's reason. */
#define WHY_LEN 256

/* The directive table: each row names a field of cfg_t, its type and
 * bounds. */
enum {
    T_INT,    /* int */
    T_U32,    /* uint32_t */
    T_U64,    /* uint64_t, plain integer */
    T_MEM,    /* uint64_t, memory units accepted */
    T_BOOL,   /* bool, yes/no */
    T_STR,    /* char * */
    T_OCTAL,  /* unsigned, octal */
    T_ENUM,   /* int, one of enum_names */
    T_DOUBLE, /* double */
    T_SAVE,   /* save points, several pairs */
    T_BIND,   /* several addresses */
    T_COBL,   /* client-output-buffer-limit classes */
    T_I64,    /* int64_t, signed, the whole range */
};

#define F_MUT 0x01      /* CONFIG SET may change it */
#define F_NULLABLE 0x02 /* "" is stored as NULL */
#define F_NONEMPTY 0x04 /* "" is refused */
#define F_NOPATH 0x08   /* a file name, not a path */
#define F_CF 0x10       /* a cf-* default: checked by the command layer */
#define F_HIDDEN                                                               \
    0x20 /* as Redis's hidden settings: CONFIG GET matches it                  \
            only by its exact name, never by a pattern */

typedef union cfg_val {
    uint64_t u;
    double d;
} cfg_val_t;

typedef struct cfg_def {
    const char *name;
    unsigned char type;
    unsigned char flags;
    size_t off;
    uint64_t min, max;
    /* T_ENUM: the accepted words, NULL-terminated; the index is stored. */
    const char *const *names;
} cfg_def_t;

/* State shared by the lines of one start-up load (file, then command line):
 * as in Redis, the first "save" line replaces the defaults and later ones
 * append to it. */
typedef struct cfg_load {
    bool save_seen;
} cfg_load_t;

/* The directive called name (any case), or NULL. */
const cfg_def_t *cfg_def_find(const char *name);

/* Applies one directive's value words: 0, or -EINVAL with the reason in
 * why (WHY_LEN bytes), or -ENOMEM. Nothing changes unless it returns 0. ld
 * is NULL at run time (CONFIG SET). */
int cfg_apply(cfg_t *c, const cfg_def_t *d, char **argv, int argc,
              cfg_load_t *ld, char *why);

/* Splits line into words in place of a buffer the caller frees (*buf) and
 * an array (*out, also the caller's), as redis-server reads its
 * configuration. 0, -EINVAL on unbalanced quotes or a NUL byte in a word
 * (it cannot live in a C string: refused, not truncated), -ENOMEM. */
int cfg_split_args(const char *line, char ***out, int *argc, char **buf);

#endif /* CONFIG_INT_H */
