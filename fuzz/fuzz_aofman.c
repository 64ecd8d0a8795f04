/*
 * fuzz_aofman.c - libFuzzer harness for the AOF manifest parser: any input
 * either parses or is refused with a reason; what parses formats to a
 * text that parses again to the same files (names, seqs and types), when
 * its lines fit the parser's line limit.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aofman.h"

/* Whether every line of text fits the parser's limit: a name of many
 * escaped bytes can make the written line longer than the one read. */
static int lines_fit(const char *text)
{
    for (const char *p = text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        if (nl == NULL || nl - p > AOFMAN_MAX_LINE - 1)
            return 0;
        p = nl + 1;
    }
    return 1;
}

static void same_files(const aofman_file_t *a, const aofman_file_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].name, b[i].name) != 0 || a[i].seq != b[i].seq ||
            a[i].type != b[i].type)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    aofman_t m, again;
    char err[256];
    if (aofman_parse((const char *)data, size, &m, err, sizeof(err)) < 0) {
        if (err[0] == '\0')
            abort(); /* a refusal always says why */
        return 0;
    }
    char *text = aofman_format(&m);
    if (text == NULL)
        abort();
    if (text[0] != '\0' && lines_fit(text)) {
        if (aofman_parse(text, strlen(text), &again, err, sizeof(err)) < 0)
            abort();
        if ((m.base == NULL) != (again.base == NULL) ||
            m.nincr != again.nincr || m.nhist != again.nhist)
            abort();
        if (m.base != NULL)
            same_files(m.base, again.base, 1);
        same_files(m.incr, again.incr, m.nincr);
        same_files(m.hist, again.hist, m.nhist);
        aofman_free(&again);
    }
    free(text);
    aofman_free(&m);
    return 0;
}
