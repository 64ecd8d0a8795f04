/*
 * modargs.h - the module's load arguments: `--loadmodule cuckoo.so
 * cf-bucket-size 4 cf-error-rate 0.001 ...`, the same names, bounds,
 * cross-checks and refusal words as the daemon's cf-* directives (a rate is
 * met by any encoding the core may choose, semi-sorted included), applied
 * in order.
 *
 * Contract: pure; no allocation, no server calls.
 */
#ifndef MODARGS_H
#define MODARGS_H

#include <stddef.h>

#include "cfcmd.h"

/* The daemon's defaults: bucket size 4, 12-bit fingerprints, no rate,
 * 500 iterations, expansion 1, 32 sub-filters, initial size 1024. */
void modargs_default(cfcmd_defaults_t *d);

/* Applies argc words (name value pairs) to *d in order. 0 on success;
 * -EINVAL with a message in why (whylen bytes) naming the directive and the
 * problem otherwise, *d then being partly applied. */
int modargs_parse(cfcmd_defaults_t *d, int argc, const arg_t *argv, char *why,
                  size_t whylen);

#endif /* MODARGS_H */
