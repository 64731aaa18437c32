/* test_rt_math.c — the f32 tsrt_expf, tsrt_logf, tsrt_tanhf, tsrt_erff of
 * src/kernels/cpu/scalar.h against libm's f64 functions: the special
 * values of docs/primitives.md exactly (NaN, ±inf, ±0 with its sign,
 * overflow to inf, underflow to subnormals and 0), then every 211th f32 bit
 * pattern of each function (20 million inputs, both signs, every exponent)
 * within the error bound the compiled path documents (1 ulp for exp and
 * log, 2 ulp for tanh and erf). The error is measured against the exact
 * value (the f64 result, unrounded), in units of the f32 ulp at the f32
 * result's binade (2^-149 for subnormal results).
 *
 * Which code is tested depends on the flags: the default build has no FMA
 * (TSRT_FMAF is a * b + c), test_rt_math_native (-march=native) the FMA
 * path that generated code gets. `test_rt_math --all [threads]` runs the
 * exhaustive check (all 2^32 inputs) and prints each function's maximum
 * error and where it occurs; `--bench` times the functions against libm.
 * tsrt_maxf and tsrt_minf are checked bit for bit against the primitive
 * rule (NaN if either is NaN, b's first; +0 beats -0 in max, -0 in min)
 * on every pair of special values and on random bit patterns, in a
 * vectorized loop and in scalar calls (D146). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "kernels/cpu/scalar.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 4096
#define STRIDE 211   /* prime: every low-bit pattern, every exponent */

typedef struct {
    const char *name;
    void (*fast)(const float *x, float *y, int n);   /* the tsrt loop, vectorized */
    double (*ref)(double);
    float (*libmf)(float);
    double bound;   /* ulp */
} fn;

/* Each loop is its own function, as a generated kernel's loop is: the
 * compiler vectorizes it at -O3 (the native build; at -O2 without
 * -march it may not, which changes no result). */
static void loop_exp(const float *restrict x, float *restrict y, int n)
{
    for (int i = 0; i < n; i++) y[i] = tsrt_expf(x[i]);
}
static void loop_log(const float *restrict x, float *restrict y, int n)
{
    for (int i = 0; i < n; i++) y[i] = tsrt_logf(x[i]);
}
static void loop_tanh(const float *restrict x, float *restrict y, int n)
{
    for (int i = 0; i < n; i++) y[i] = tsrt_tanhf(x[i]);
}
static void loop_erf(const float *restrict x, float *restrict y, int n)
{
    for (int i = 0; i < n; i++) y[i] = tsrt_erff(x[i]);
}

static void loop_exp_np(const float *restrict x, float *restrict y, int n)
{
    for (int i = 0; i < n; i++) y[i] = tsrt_expf_np(x[i]);
}

static const fn fns[] = {
    {"exp", loop_exp, exp, expf, 1.0},
    {"log", loop_log, log, logf, 1.0},
    {"tanh", loop_tanh, tanh, tanhf, 2.0},
    {"erf", loop_erf, erf, erff, 2.0},
};
#define NFN (int)(sizeof fns / sizeof fns[0])

static float bits2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint32_t f2bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The error of y against the exact value r, in ulps of f32 at (float)r;
 * INFINITY for a wrong special value (NaN-ness, infinity, a zero's sign). */
static double ulp_err(float y, double r)
{
    float rf = (float)r;
    if (isnan(r) || isnan(y)) return isnan(r) && isnan(y) ? 0 : INFINITY;
    if (isinf(rf) || isinf(y)) return rf == y ? 0 : INFINITY;
    if (rf == 0 || y == 0) {
        if (rf == y && signbit(rf) == signbit(y)) return 0;
    }
    if (signbit(rf) != signbit(y) && (rf != 0 || y != 0)) return INFINITY;
    int e;
    frexpf(rf == 0 ? 0x1p-149f : rf, &e);   /* |rf| in [2^(e-1), 2^e) */
    double ulp = ldexp(1.0, (e - 1 - 23) < -149 ? -149 : e - 1 - 23);
    return fabs((double)y - r) / ulp;
}

typedef struct {
    int f;
    uint64_t lo, hi, step;
    double max_ulp, max_abs;
    uint32_t worst, worst_abs;
    uint64_t n, over1;   /* inputs, and those with error > 1 ulp */
    uint32_t max_dist;   /* in floats, from libm's f64 result rounded to f32 */
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    const fn *F = &fns[j->f];
    float x[CHUNK], y[CHUNK];
    for (uint64_t b = j->lo; b < j->hi;) {
        int n = 0;
        for (; n < CHUNK && b < j->hi; n++, b += j->step) x[n] = bits2f((uint32_t)b);
        F->fast(x, y, n);
        for (int i = 0; i < n; i++) {
            double r = F->ref((double)x[i]);
            double u = ulp_err(y[i], r);
            if (u > j->max_ulp || (u != u)) {
                j->max_ulp = u;
                j->worst = f2bits(x[i]);
            }
            if (u > 1) j->over1++;
            float rf = (float)r;
            if (isfinite(rf) && isfinite(y[i]) && signbit(rf) == signbit(y[i])) {
                uint32_t a = f2bits(rf), b = f2bits(y[i]), d = a > b ? a - b : b - a;
                if (d > j->max_dist) j->max_dist = d;
            }
            double a = fabs(r) <= 1 && isfinite(y[i]) ? fabs((double)y[i] - r) : 0;
            if (a > j->max_abs) {
                j->max_abs = a;
                j->worst_abs = f2bits(x[i]);
            }
        }
        j->n += (uint64_t)n;
    }
    return NULL;
}

/* Function f over every step-th bit pattern, split over nth threads. */
static job sweep(int f, uint64_t step, int nth)
{
    job js[16];
    pthread_t th[16];
    uint64_t total = (UINT64_C(1) << 32) / step, per = (total + (uint64_t)nth - 1) / (uint64_t)nth;
    for (int t = 0; t < nth; t++) {
        uint64_t a = per * (uint64_t)t, z = a + per > total ? total : a + per;
        js[t] = (job){.f = f, .lo = a * step, .hi = z * step, .step = step};
        pthread_create(&th[t], NULL, run_job, &js[t]);
    }
    job all = {.f = f};
    for (int t = 0; t < nth; t++) {
        pthread_join(th[t], NULL);
        if (js[t].max_ulp > all.max_ulp || js[t].max_ulp != js[t].max_ulp) {
            all.max_ulp = js[t].max_ulp;
            all.worst = js[t].worst;
        }
        if (js[t].max_abs > all.max_abs) {
            all.max_abs = js[t].max_abs;
            all.worst_abs = js[t].worst_abs;
        }
        all.n += js[t].n;
        if (js[t].max_dist > all.max_dist) all.max_dist = js[t].max_dist;
        all.over1 += js[t].over1;
    }
    return all;
}

/* tsrt_expf_np against tsrt_expf, bit for bit, on every step-th input
 * <= -0 (sign bit set: -0, negatives, -inf, negative NaNs), every input
 * whose result is subnormal or rounds to zero ([-104.5, -86], all of
 * them), +0 and a positive NaN: the lowering uses it only where the
 * argument is <= 0 or NaN (D37). */
static void nonpos_exp(uint32_t step)
{
    float x[CHUNK], y[CHUNK], r[CHUNK];
    uint64_t n_in = 0, bad = 0;
    uint32_t worst = 0;
    const uint32_t lo_dense = f2bits(-86.0f), hi_dense = f2bits(-104.5f);
    for (int part = 0; part < 2; part++) {
        uint64_t b = part == 0 ? UINT64_C(0x80000000) : lo_dense;
        const uint64_t end = part == 0 ? UINT64_C(0x100000000) : (uint64_t)hi_dense + 1;
        const uint64_t st = part == 0 ? step : 1;
        while (b < end) {
            int n = 0;
            if (part == 0 && b == UINT64_C(0x80000000)) x[n++] = 0.0f, x[n++] = NAN;
            for (; n < CHUNK && b < end; n++, b += st) x[n] = bits2f((uint32_t)b);
            loop_exp_np(x, y, n);
            loop_exp(x, r, n);
            for (int i = 0; i < n; i++)
                if (f2bits(y[i]) != f2bits(r[i]) && !(isnan(y[i]) && isnan(r[i]))) bad++, worst = f2bits(x[i]);
            n_in += (uint64_t)n;
        }
    }
    printf("exp_np: %llu inputs <= 0, %llu differ from tsrt_expf\n", (unsigned long long)n_in,
           (unsigned long long)bad);
    CHECK_MSG(bad == 0, "tsrt_expf_np(%a) differs from tsrt_expf", bits2f(worst));
}

static void specials(void)
{
    const float inf = INFINITY, nan = NAN, tiny = 0x1p-149f;
    /* exp */
    CHECK(tsrt_expf(0.0f) == 1.0f && tsrt_expf(-0.0f) == 1.0f);
    CHECK(tsrt_expf(-inf) == 0.0f && !signbit(tsrt_expf(-inf)));
    CHECK(tsrt_expf(inf) == inf);
    CHECK(isnan(tsrt_expf(nan)) && isnan(tsrt_expf(-nan)));
    CHECK(tsrt_expf(88.72283f) == expf(88.72283f));     /* largest finite */
    CHECK(tsrt_expf(88.72284f) == inf && tsrt_expf(89.0f) == inf && tsrt_expf(1e30f) == inf);
    CHECK(tsrt_expf(-103.9f) == tiny);                   /* rounds up to the least subnormal */
    CHECK(tsrt_expf(-104.0f) == 0.0f && tsrt_expf(-1e30f) == 0.0f);
    /* below -104 the result is selected, not computed (D79): +0, and
     * NaN still passes */
    CHECK(tsrt_expf(-104.00001f) == 0.0f && !signbit(tsrt_expf(-104.00001f)));
    CHECK(tsrt_expf(-0x1.fffffep127f) == 0.0f && !signbit(tsrt_expf(-0x1.fffffep127f)));
    CHECK(tsrt_expf_np(-0x1.fffffep127f) == 0.0f && !signbit(tsrt_expf_np(-0x1.fffffep127f)));
    CHECK(tsrt_expf_np(-104.00001f) == 0.0f && tsrt_expf_np(-inf) == 0.0f && isnan(tsrt_expf_np(-nan)));
    CHECK(tsrt_expf_np(-103.9f) == tiny);
    CHECK(tsrt_expf(-87.5f) == expf(-87.5f));            /* subnormal, rounded once */
    CHECK(tsrt_expf(1.0f) == expf(1.0f));
    /* log */
    CHECK(tsrt_logf(1.0f) == 0.0f && !signbit(tsrt_logf(1.0f)));
    CHECK(tsrt_logf(0.0f) == -inf && tsrt_logf(-0.0f) == -inf);
    CHECK(tsrt_logf(inf) == inf);
    CHECK(isnan(tsrt_logf(-1.0f)) && isnan(tsrt_logf(-tiny)) && isnan(tsrt_logf(-inf)));
    CHECK(isnan(tsrt_logf(nan)) && isnan(tsrt_logf(-nan)));
    CHECK(fabsf(tsrt_logf(tiny) - (float)log(0x1p-149)) <= 0x1p-17f);
    CHECK(tsrt_logf(0x1p-126f) == (float)log(0x1p-126));
    CHECK(tsrt_logf(2.0f) == (float)log(2.0) && tsrt_logf(0.5f) == (float)log(0.5));
    /* tanh */
    CHECK(tsrt_tanhf(0.0f) == 0.0f && !signbit(tsrt_tanhf(0.0f)));
    CHECK(tsrt_tanhf(-0.0f) == 0.0f && signbit(tsrt_tanhf(-0.0f)));
    CHECK(tsrt_tanhf(inf) == 1.0f && tsrt_tanhf(-inf) == -1.0f);
    CHECK(isnan(tsrt_tanhf(nan)) && isnan(tsrt_tanhf(-nan)));
    CHECK(tsrt_tanhf(tiny) == tiny && tsrt_tanhf(-tiny) == -tiny);
    CHECK(tsrt_tanhf(20.0f) == 1.0f && tsrt_tanhf(-1e30f) == -1.0f);
    /* erf */
    CHECK(tsrt_erff(0.0f) == 0.0f && !signbit(tsrt_erff(0.0f)));
    CHECK(tsrt_erff(-0.0f) == 0.0f && signbit(tsrt_erff(-0.0f)));
    CHECK(tsrt_erff(inf) == 1.0f && tsrt_erff(-inf) == -1.0f);
    CHECK(isnan(tsrt_erff(nan)) && isnan(tsrt_erff(-nan)));
    CHECK(tsrt_erff(5.0f) == 1.0f && tsrt_erff(-1e30f) == -1.0f);
    CHECK(tsrt_erff(tiny) > 0 && tsrt_erff(-tiny) < 0);
    /* the same through the vectorized loops (the lanes' code, not the scalar one) */
    float x[16] = {0.0f, -0.0f, inf, -inf, nan, -nan, 100.0f, -200.0f, tiny, -tiny, 1.0f, -1.0f, 0.5f, 3.0f, -5.0f, 1e-20f};
    for (int f = 0; f < NFN; f++) {
        float y[16];
        fns[f].fast(x, y, 16);
        for (int i = 0; i < 16; i++) {
            double u = ulp_err(y[i], fns[f].ref((double)x[i]));
            CHECK_MSG(u <= fns[f].bound, "%s(%a) = %a, libm %a: %g ulp", fns[f].name, x[i], y[i],
                      fns[f].ref((double)x[i]), u);
        }
    }
}

/* The rule, spelled out: b if b is NaN, else a if a is NaN, else the AND
 * (max) or OR (min) of the bits where equal (±0), else the larger or
 * smaller. */
static uint32_t ref_maxmin(uint32_t ua, uint32_t ub, int is_max)
{
    const float a = bits2f(ua), b = bits2f(ub);
    if (b != b) return ub;
    if (a != a) return ua;
    if (a == b) return is_max ? (ua & ub) : (ua | ub);
    return (is_max ? a < b : b < a) ? ub : ua;
}

static void loop_maxmin(const float *restrict a, const float *restrict b, float *restrict mx, float *restrict mn,
                        int n)
{
    for (int i = 0; i < n; i++) {
        mx[i] = tsrt_maxf(a[i], b[i]);
        mn[i] = tsrt_minf(a[i], b[i]);
    }
}

static void maxmin_exact(void)
{
    static const uint32_t sp[] = {0u,          0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
                                  0x7fc00001u, 0x7f800001u, 0xff812345u, 1u,          0x80000001u, 0x3f800000u,
                                  0xbf800000u, 0x00800000u, 0x7f7fffffu, 0xff7fffffu, 0x3f800001u, 0x7fffffffu};
    enum { NS = sizeof sp / sizeof sp[0], NR = 1 << 16, N = NS * NS + NR };
    float *a = malloc(sizeof(float) * 4 * N), *b = a + N, *mx = b + N, *mn = mx + N;
    if (!a) {
        CHECK_MSG(0, "out of memory");
        return;
    }
    int n = 0;
    for (int i = 0; i < NS; i++)
        for (int j = 0; j < NS; j++, n++) a[n] = bits2f(sp[i]), b[n] = bits2f(sp[j]);
    uint64_t s = 88172645463325252u;
    for (; n < N; n++) {
        uint32_t r[2];
        for (int k = 0; k < 2; k++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            /* half of them equal in magnitude to the other or a special value */
            r[k] = (uint32_t)(s >> 16);
            if (k && (s & 7) == 0) r[1] = r[0] ^ 0x80000000u;
            if (k && (s & 7) == 1) r[1] = sp[(s >> 8) % NS];
        }
        a[n] = bits2f(r[0]), b[n] = bits2f(r[1]);
    }
    loop_maxmin(a, b, mx, mn, N);
    long bad = 0;
    for (int i = 0; i < N; i++) {
        const uint32_t ua = f2bits(a[i]), ub = f2bits(b[i]);
        const uint32_t wx = ref_maxmin(ua, ub, 1), wn = ref_maxmin(ua, ub, 0);
        const int ok = f2bits(mx[i]) == wx && f2bits(mn[i]) == wn && f2bits(tsrt_maxf(a[i], b[i])) == wx &&
                       f2bits(tsrt_minf(a[i], b[i])) == wn;
        if (!ok && bad++ < 5)
            CHECK_MSG(0, "max/min(%08x, %08x): vector %08x %08x, scalar %08x %08x, want %08x %08x", (unsigned)ua,
                      (unsigned)ub, (unsigned)f2bits(mx[i]), (unsigned)f2bits(mn[i]),
                      (unsigned)f2bits(tsrt_maxf(a[i], b[i])), (unsigned)f2bits(tsrt_minf(a[i], b[i])),
                      (unsigned)wx, (unsigned)wn);
    }
    printf("max/min: %d pairs, %ld differ from the rule\n", N, bad);
    CHECK(bad == 0);
    free(a);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile float sink;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Elements per ns, one thread: the tsrt loop against a loop calling
 * libm's f32 function (what generated kernels called before), over n
 * floats (1M: 8 MB in and out, beyond L2; 4K: in L1, repeated). */
static void bench_n(int n, int reps)
{
    enum { RUNS = 21 };
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    uint64_t s = 1;
    for (int f = 0; f < NFN; f++) {
        for (int i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(s >> 11) * 0x1p-53;   /* [0, 1) */
            x[i] = f == 1 ? (float)(u * 100 + 1e-3) : (float)(u * 20 - 10);
        }
        double t_fast[RUNS], t_libm[RUNS];
        for (int r = 0; r < RUNS; r++) {
            double t0 = now();
            for (int k = 0; k < reps; k++) {
                fns[f].fast(x, y, n);
                sink = y[k % n];
            }
            double t1 = now();
            for (int k = 0; k < reps; k++) {
                for (int i = 0; i < n; i++) y[i] = fns[f].libmf(x[i]);
                sink = y[k % n];
            }
            double t2 = now();
            t_fast[r] = (t1 - t0) / reps;
            t_libm[r] = (t2 - t1) / reps;
        }
        qsort(t_fast, RUNS, sizeof(double), cmp_d);
        qsort(t_libm, RUNS, sizeof(double), cmp_d);
        double ef = n / (t_fast[RUNS / 2] * 1e9), el = n / (t_libm[RUNS / 2] * 1e9);
        printf("%-5s n=%-8d tsrt %6.3f elem/ns (%.3f ns/elem)   libm %6.3f elem/ns (%.2f ns/elem)   x%.1f\n",
               fns[f].name, n, ef, 1 / ef, el, 1 / el, ef / el);
    }
    free(x);
    free(y);
}

static void bench(void)
{
    printf("1 thread, medians of 21 runs, TSRT_FMAF: %s\n",
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(FP_FAST_FMAF)
           "fmaf"
#else
           "a * b + c"
#endif
    );
    bench_n(1 << 20, 1);
    bench_n(4096, 256);
}

int main(int argc, char **argv)
{
    int all = argc > 1 && strcmp(argv[1], "--all") == 0;
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench();
        return 0;
    }
    int nth = all ? (argc > 2 ? atoi(argv[2]) : 2) : 1;
    if (nth < 1 || nth > 16) nth = 1;
    specials();
    maxmin_exact();
    printf("TSRT_FMAF: %s\n",
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(FP_FAST_FMAF)
           "fmaf"
#else
           "a * b + c"
#endif
    );
    nonpos_exp(all ? 1 : STRIDE);
    for (int f = 0; f < NFN; f++) {
        double t0 = now();
        job r = sweep(f, all ? 1 : STRIDE, nth);
        float wx = bits2f(r.worst), wy;
        fns[f].fast(&wx, &wy, 1);
        printf("%-5s %s: %llu inputs, max %.3f ulp at %a (libm %a, got %a), %llu over 1 ulp, max %u floats from (float)libm, max abs err %.3g (|f| <= 1) at %a, "
               "%.1f s\n",
               fns[f].name, all ? "all" : "sampled", (unsigned long long)r.n, r.max_ulp, wx, fns[f].ref((double)wx),
               (double)wy, (unsigned long long)r.over1, r.max_dist, r.max_abs, bits2f(r.worst_abs), now() - t0);
        CHECK_MSG(r.max_ulp <= fns[f].bound, "%s: %g ulp > %g", fns[f].name, r.max_ulp, fns[f].bound);
    }
    return check_report();
}
