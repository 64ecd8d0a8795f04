/*
 * bench_chain.c - a filter that grows far past its reservation, as a
 * cache guard's does: CF.RESERVE-like capacity C with expansion E, then N
 * distinct adds, then the false-positive rate on 1M items never added,
 * then a delete of every second item added and a check of every item
 * added and kept.
 *
 *   bench_chain [N [E [C]]]      (defaults 1000000 2 1000)
 *
 * Prints the tables, adds refused, bytes per item, the false-positive
 * rate, deletes that found nothing, and items lost (false negatives: must
 * be 0). The core is used directly, without the server.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cf.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long e = argc > 2 ? atol(argv[2]) : 2;
    long c = argc > 3 ? atol(argv[3]) : 1000;
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = (uint64_t)c;
    p.expansion = (uint32_t)e;
    cf_filter_t *f;
    if (n < 1 || cf_create(&p, &f) != 0) {
        fprintf(stderr, "usage: bench_chain [N [E [C]]]\n");
        return 2;
    }
    char k[32];
    long refused = 0, fp = 0, missed = 0, lost = 0;
    char *in = calloc((size_t)n, 1); /* added: deleted and checked */
    if (in == NULL)
        return 2;
    for (long i = 0; i < n; i++) {
        in[i] = cf_add(f, k, (size_t)snprintf(k, sizeof(k), "i:%ld", i)) == 0;
        refused += !in[i];
    }
    cf_stats_t st;
    cf_stats(f, &st);
    for (long i = 0; i < 1000000; i++)
        fp += cf_exists(f, k, (size_t)snprintf(k, sizeof(k), "a:%ld", i));
    for (long i = 0; i < n; i += 2)
        if (in[i])
            missed +=
                cf_del(f, k, (size_t)snprintf(k, sizeof(k), "i:%ld", i)) != 1;
    for (long i = 1; i < n; i += 2)
        if (in[i])
            lost +=
                !cf_exists(f, k, (size_t)snprintf(k, sizeof(k), "i:%ld", i));
    printf("items %ld, capacity %ld, expansion %ld (used %u): %lu tables, "
           "%ld adds refused, %.2f B/item, FPR %.2f%%, %ld deletes found "
           "nothing, %ld kept items lost\n",
           n, c, e, st.expansion, (unsigned long)st.nfilters, refused,
           (double)st.size_bytes / (double)(n - refused), fp / 1e4, missed,
           lost);
    cf_free(f);
    free(in);
    return lost != 0;
}
