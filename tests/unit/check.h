/* check.h — the smallest test harness: CHECK records a failure and goes
 * on; main returns check_report(), which prints "N passed, N failed". */
#ifndef TS_CHECK_H
#define TS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_pass_, check_fail_;

#define CHECK(cond) do { if (cond) check_pass_++; else { check_fail_++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { if (cond) check_pass_++; else { check_fail_++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define CHECK_STR(a, b) do { const char *ca_ = (a), *cb_ = (b); \
    if (ca_ && cb_ && strcmp(ca_, cb_) == 0) check_pass_++; else { check_fail_++; \
    fprintf(stderr, "%s:%d: CHECK_STR failed:\n  got:      %s\n  expected: %s\n", \
            __FILE__, __LINE__, ca_ ? ca_ : "(null)", cb_ ? cb_ : "(null)"); } } while (0)

static inline int check_report(void)
{
    printf("%d passed, %d failed\n", check_pass_, check_fail_);
    return check_fail_ ? 1 : 0;
}

#endif
