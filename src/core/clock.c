/* clock.c — the monotonic clock (vDSO clock_gettime: ~20 ns a call). */
#include "clock.h"

#include <time.h>

int64_t ts_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double ts_now_us(void) { return (double)ts_now_ns() / 1e3; }
double ts_now_ms(void) { return (double)ts_now_ns() / 1e6; }
