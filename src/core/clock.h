/* clock.h — a monotonic clock for timing compiles, runs and trace events.
 * CLOCK_MONOTONIC: never jumps with wall-clock changes; the origin is
 * arbitrary (boot), so only differences mean anything. */
#ifndef TS_CLOCK_H
#define TS_CLOCK_H

#include <stdint.h>

int64_t ts_now_ns(void);
double ts_now_us(void);
double ts_now_ms(void);

#endif
