/*
 * check.h - CK_ASSERT(cond): an invariant the code relies on, checked in
 * the builds that hunt for bugs (the sanitizer and fuzz builds define
 * CUCKOOD_CHECKS) and compiled out of the others, as SQLite's
 * assert() and Redis's debug asserts are. A failed check prints the
 * condition with its file and line to stderr and aborts, so the
 * sanitizer or the fuzzer reports where the state went wrong rather than
 * where it was later misread. Never put an effect the code needs inside.
 */
#ifndef CHECK_H
#define CHECK_H

#ifdef CUCKOOD_CHECKS
#include <stdio.h>
#include <stdlib.h>

#define CK_ASSERT(cond)                                                        \
    ((cond) ? (void)0                                                          \
            : (fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__,      \
                       __LINE__, #cond),                                       \
               abort()))
#else
#define CK_ASSERT(cond) ((void)0)
#endif

#endif /* CHECK_H */
