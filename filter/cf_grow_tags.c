/*
 * cf_grow_tags.c - what the growable shape's addressing reads before any
 * bucket: the per-tag constants, shared by every filter (read-only), a
 * filter's seeded words, and the view of an inline filter's state
 * (gr_get()). cf_grow.c, cf_grow_cmp.c, cf_grow_look.c, cf_grow_mem.c and
 * cf_grow_dump.c read them.
 */
#include "cf_grow_int.h"

/* Per tag, shared by every filter (read-only): mix64(t + 1) and
 * mix64(t << 32 ^ CF_GOLDEN), with splitmix64's finaliser (gr_mix64()). A
 * filter xors its own seeded word into them (gr_h0(), gr_g()), so that it needs
 * no table of its own: a small filter is 512 bytes smaller. */
const uint64_t gr_tag_h[GR_TAGS] = {
    0x08AED0390BD5BAE2ull, 0x3FB6798525919E24ull, 0x306AA4FE48055565ull,
    0x143D3CC553BDDDE8ull, 0x15D3F4E10DDCD9FAull, 0xF5A593B8F1B56699ull,
    0x6B0F1B050E05E6DEull, 0x56D3529DF4E186D8ull, 0xFB74B31DA772B7E6ull,
    0x26EFA42565A0C804ull, 0xF8FA299A44E2023Cull, 0xEB4B2770E36ACD32ull,
    0x0817A3B4410A2226ull, 0xD61E360A1C0BCDBCull, 0x99D0BE24FB657402ull,
    0x141E15E3507BBD69ull, 0x05FEAE9BA1D072F1ull, 0x9071F592287DFC64ull,
    0xD31DDCA8E36B1A0Eull, 0x4DDF484ACB419008ull, 0xF322C03A126BFBC7ull,
    0x86C49CF00DA5F5C7ull, 0xF57A90E3736079F2ull, 0x04EF27F3279BC19Cull,
    0xAEE2278AC7CA27AFull, 0x0B7701CBAE1B14C4ull, 0x08CB2CCEF60DDF3Full,
    0x410CB5D0E651BC87ull, 0x17B002985AF0F385ull, 0xC871C60310ED6034ull,
    0x77D03F2AFDE649B6ull, 0x8EB39C6E0678CD7Aull,
};
const uint64_t gr_tag_g[GR_TAGS] = {
    0x581D94C186728DEBull, 0x9E132642624382BCull, 0x285BEB035D10FFE4ull,
    0xB12FC7C591D00FCAull, 0xD11181F9ED980EFCull, 0x020902AF312FCD21ull,
    0x4BD1AB99D4670B8Bull, 0x9D71635D46BE5263ull, 0x790D7D48E52F1F3Dull,
    0x04B63340F709A6C9ull, 0x40B7E2853E6275D8ull, 0x4A87A647BEED957Eull,
    0x3A36A94FAE1D9CCFull, 0x0632D088C322D9F0ull, 0x001B3622AED40BD2ull,
    0xB0E6CA768A6A11BEull, 0xDE675F2F00FF9286ull, 0x1A88D71D7585F460ull,
    0xD59A129E2C5E9A30ull, 0x21BA4BF80F274EC2ull, 0xAFD4656584E9F4A1ull,
    0x7A7061F7AAF5494Aull, 0x6DC66913F678A3FAull, 0xDE7F216A5974A07Full,
    0x0B5A3F25D3602111ull, 0x40D8E9393EE52125ull, 0xA08F0651E601F6CDull,
    0xDAD00962DF3CF086ull, 0x38FF3B466E0454A9ull, 0x84AE1CD417E47413ull,
    0x54742F37C0AEA230ull, 0x6297C960DD9E1094ull,
};

/* splitmix64's finaliser: spreads a tag into the per-tag constants. */
uint64_t gr_mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 32);
}

void gr_constants(struct cf_grow *g, uint64_t seed)
{
    g->h_seed = gr_mix64(seed ^ 0x5851F42D4C957F2Dull);
    g->g_seed = gr_mix64(seed ^ CF_GOLDEN ^ 0x2545F4914F6CDD1Dull);
    g->nbig = g->n0 << g->level;
    g->lmask = (1ull << g->level) - 1;
}

/* ---- inline filters (GR_SHAPE_INLINE) ---- */

void gr_view(const cf_filter_t *f, struct cf_grow *vt)
{
    memset(vt, 0, sizeof(*vt));
    vt->n0 = gr_base_buckets(f->n.s.capacity);
    vt->target = CF_GROW_TARGET;
    vt->capacity = f->n.s.capacity;
    vt->rng = f->u.one;
    vt->items = vt->entries = f->n.s.items;
    vt->deleted = f->deleted;
    vt->phase = GR_COMPACT;
    vt->remap = 1;
    vt->cmp = (uint8_t *)(uintptr_t)f->data;
    vt->conv_at[0] = vt->conv_at[1] = GR_EV_BEFORE;
    gr_constants(vt, f->seed);
    vt->nb = vt->n0;
    vt->cap_init = vt->n0;
}

void gr_done(cf_filter_t *f, const struct cf_grow *g)
{
    if (!gr_inline(f))
        return;
    /* a compact filter's entries are its items: one counter */
    CK_ASSERT(g->phase == GR_COMPACT && g->entries == g->items &&
              g->items <= UINT32_MAX);
    f->n.s.items = (uint32_t)g->items;
    f->deleted = g->deleted;
    f->u.one = g->rng;
}
