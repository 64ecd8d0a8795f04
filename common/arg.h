/*
 * arg.h - one argument of a command as every layer sees it: a byte view
 * {ptr, len}, and the parsers every command path uses to read a number or
 * a keyword from one (Redis's string2ll rules).
 *
 * Contract: the view does not own its bytes; whoever hands it out says how
 * long they live (protocol/resp.h: until the next parser call; argv.h: until
 * argv_free()). Pure functions over the caller's bytes: no allocation, no
 * I/O, nothing else of ours and no libuv, so protocol/, commands/, module/
 * and server/ can all include it.
 */
#ifndef ARG_H
#define ARG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* len bytes at ptr, binary-safe (may hold NULs). */
typedef struct arg {
    const char *ptr;
    size_t len;
} arg_t;

/* The whole of *a as a signed 64-bit decimal with Redis's string2ll()
 * rules: an optional '-' then digits, no leading zeros (except "0" itself),
 * no '+', no spaces, no overflow, "-0" refused. true and *out on success. */
bool arg_ll(const arg_t *a, long long *out);

/* The same rules for an unsigned value (no '-'): 0 .. UINT64_MAX. */
bool arg_u64(const arg_t *a, uint64_t *out);

/* The whole of *a as a finite decimal number (strtod's syntax, no leading
 * white space, no embedded NUL, at most 63 bytes). true and *out on
 * success. */
bool arg_double(const arg_t *a, double *out);

/* true when *a equals lower (NUL-terminated, lower case) ignoring ASCII
 * case. */
bool arg_is(const arg_t *a, const char *lower);

#endif /* ARG_H */
