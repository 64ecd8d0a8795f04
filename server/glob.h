/*
 * glob.h - Redis-style glob matching (*, ?, [abc], [^a-z], \x) for KEYS,
 * SCAN MATCH and CONFIG GET. Binary-safe. Runs in O(len(pattern) *
 * len(string)) at worst: no exponential backtracking on patterns such as
 * "a*a*a*a*b".
 */
#ifndef GLOB_H
#define GLOB_H

#include <stdbool.h>
#include <stddef.h>

bool glob_match(const char *pat, size_t plen, const char *str, size_t slen,
                bool nocase);

#endif /* GLOB_H */
