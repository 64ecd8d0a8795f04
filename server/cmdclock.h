/*
 * cmdclock.h - the clock that times each command (INFO commandstats, the
 * slow log, latency): monotonic nanoseconds, read once per command, so it
 * must be cheap. uv_hrtime() (clock_gettime) costs 30-55 ns in a KVM
 * guest, whose kernel clock is kvm-clock; reading the CPU's time-stamp
 * counter costs about 11 ns there. So on x86-64 with an invariant TSC the
 * counter is read and scaled by a ratio measured against uv_hrtime() by
 * cmdclock_calibrate(); elsewhere, and until the ratio is known, the
 * readings are uv_hrtime()'s.
 *
 * Contract: for differences only (durations), not wall or uptime; never
 * goes backwards. One thread (the event loop). No state but the clock's.
 */
#ifndef CMDCLOCK_H
#define CMDCLOCK_H

#include <stdint.h>

/* The clock now, in ns. */
uint64_t cmdclock_now(void);

/* Measures the counter's rate against uv_hrtime() over the time since the
 * first call (the cron calls it every tick); the counter is used once
 * that span passes CMDCLOCK_SPAN_NS. */
#define CMDCLOCK_SPAN_NS 200000000ull
void cmdclock_calibrate(void);

/* The scaling, exposed for tests: ticks * mult / 2^32. */
uint64_t cmdclock_scale(uint64_t ticks, uint64_t mult);

#endif /* CMDCLOCK_H */
