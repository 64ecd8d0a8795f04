/*
 * cmdclock.c - see cmdclock.h.
 *
 * The ratio is taken over the whole span since the first calibration (so
 * its error shrinks as the server runs), and each calibration re-bases the
 * scaled reading on its own last value, so a new ratio never makes the
 * clock jump. A counter that reads lower than before (another CPU whose
 * counter lags) gives the last reading again.
 */
#include "cmdclock.h"

#include <stdbool.h>
#include <uv.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <x86intrin.h>
#define CMDCLOCK_TSC 1
#endif

static struct {
    bool checked, usable; /* the counter is invariant */
    uint64_t tsc0, ns0;   /* first calibration */
    bool scaled;          /* base and mult are set */
    uint64_t base_tsc, base_ns, mult;
    uint64_t last;
} ck;

uint64_t cmdclock_scale(uint64_t ticks, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}

#ifdef CMDCLOCK_TSC
static bool tsc_invariant(void)
{
    unsigned a, b, c, d;
    if ((unsigned)__get_cpuid_max(0x80000000u, NULL) < 0x80000007u)
        return false;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1u; /* "Invariant TSC" */
}
#endif

static uint64_t scaled_now(void)
{
#ifdef CMDCLOCK_TSC
    uint64_t t = __rdtsc();
    uint64_t v = t > ck.base_tsc
                     ? ck.base_ns + cmdclock_scale(t - ck.base_tsc, ck.mult)
                     : ck.base_ns;
    return v;
#else
    return uv_hrtime();
#endif
}

uint64_t cmdclock_now(void)
{
    uint64_t v = ck.scaled ? scaled_now() : uv_hrtime();
    if (v < ck.last)
        return ck.last;
    return ck.last = v;
}

void cmdclock_calibrate(void)
{
#ifdef CMDCLOCK_TSC
    if (!ck.checked) {
        ck.checked = true;
        ck.usable = tsc_invariant();
        ck.tsc0 = __rdtsc();
        ck.ns0 = uv_hrtime();
        return;
    }
    if (!ck.usable)
        return;
    uint64_t t = __rdtsc(), ns = uv_hrtime();
    if (t <= ck.tsc0 || ns - ck.ns0 < CMDCLOCK_SPAN_NS)
        return;
    /* ns per tick as 32.32 fixed point; a counter slower than 1 tick per
     * 2^32 ns or faster than 2^32 per ns is not believed. */
    unsigned __int128 m =
        ((unsigned __int128)(ns - ck.ns0) << 32) / (t - ck.tsc0);
    if (m == 0 || m > UINT32_MAX * (unsigned __int128)UINT32_MAX)
        return;
    uint64_t now = cmdclock_now(); /* on the old scale: no jump */
    ck.base_tsc = __rdtsc();
    ck.base_ns = now;
    ck.mult = (uint64_t)m;
    ck.scaled = true;
#endif
}
