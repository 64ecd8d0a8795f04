/* libFuzzer harness: an untrusted filter encoding (header + data) is loaded
 * and, when accepted, queried and written to. Nothing may crash. */
#include <stddef.h>
#include <stdint.h>

#include "cf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_limits_t lim = {.max_bytes = 16u << 20};
    cf_filter_t *f = NULL;
    size_t used = 0;
    if (cf_load_header(data, size, &lim, &f, &used) != 0)
        return 0;
    uint64_t total = cf_data_len(f);
    size_t rest = size - used;
    if (rest > total)
        rest = (size_t)total;
    (void)cf_load_data(f, 0, data + used, rest);
    for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
        (void)cf_exists(f, data + i, 4);
        (void)cf_count(f, data + i, 4);
        (void)cf_add(f, data + i, 4);
        (void)cf_del(f, data + i, 2);
    }
    cf_free(f);
    return 0;
}
