/*
 * load_input.h - cuckood-load's input: a stream of bytes cut into items.
 * Formats: one item a line (a trailing \r is dropped), NUL-separated
 * items (any bytes), one column of CSV (RFC 4180 quoting, fields may hold
 * newlines) and one column of PostgreSQL's COPY ... TO STDOUT text format
 * (tab-separated, backslash escapes, \N for NULL). Empty items and NULLs
 * are skipped. A pure parser: the caller owns the buffer and reads.
 */
#ifndef LOAD_INPUT_H
#define LOAD_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* The longest record (a line, or a CSV record with quoted newlines). */
#define LOAD_MAX_RECORD (4u << 20)

enum load_format { LOAD_LINES, LOAD_NUL, LOAD_CSV, LOAD_COPY };

enum load_step {
    LOAD_ITEM,  /* *item, *len: the next item */
    LOAD_SKIP,  /* a record without an item (empty, NULL, a CSV header) */
    LOAD_MORE,  /* the buffer ends inside a record: feed more bytes */
    LOAD_END,   /* eof and nothing left */
    LOAD_ERROR, /* load_input_error() says what, at load_input_line() */
};

struct load_input;

/* column: 1-based for CSV and COPY (ignored otherwise); column_name, for
 * CSV only, instead of a number: the first record is a header naming the
 * columns. NULL on allocation failure. */
struct load_input *load_input_new(enum load_format f, unsigned column,
                                  const char *column_name);
void load_input_free(struct load_input *in);

/* The next record from buf[0..len); *used is set to the bytes it took
 * (always 0 for LOAD_MORE). eof: no bytes follow buf. An item points into
 * buf or into the parser's own buffer, valid until the next call. */
enum load_step load_input_next(struct load_input *in, const char *buf,
                               size_t len, int eof, size_t *used,
                               const char **item, size_t *item_len);

/* The input line (1-based; the record number for NUL-separated input)
 * where the record last returned starts. */
uint64_t load_input_line(const struct load_input *in);

/* What went wrong, after LOAD_ERROR. */
const char *load_input_error(const struct load_input *in);

#endif /* LOAD_INPUT_H */
