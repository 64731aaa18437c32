/* test_autodiff.c — the derivative rules against finite differences.
 *
 * Every tests/autodiff/cases/<name>.ir is a small f64 graph. For each,
 * on random inputs (symbolic dims bound to 3, or as a "# sizes: n=4 m=2"
 * line says):
 *   - reverse mode: each gradient element (or 12 sampled ones for large
 *     inputs) against the central difference of L = sum_k <ct_k, y_k>;
 *   - forward mode: the output tangents against the central difference
 *     of the outputs along the tangent;
 *   - second order: forward over reverse (Hessian-vector products against
 *     the central difference of the gradients) and reverse over reverse
 *     (the directional derivative of <ct2, (y, grad)>), unless the file says
 *     "# first order only: REASON" — then differentiating twice must fail
 *     (an expected failure that turns into a test failure once it works).
 *     "# zeros: NAME i j" sets those flat elements of input NAME to exactly
 *     zero for the first-order checks (products through zeros); second
 *     order runs without them (those rules' branches on zero counts are
 *     exact at first order only, D175).
 * Then the table: every primitive with a rule has a case; the primitives
 * still without one are exactly the list below. tests/autodiff/text/ holds
 * IR text in (NAME.in.ir) and the reverse-mode graph out (NAME.grad.ir).
 * Errors: a primitive without a rule names it and leaves the graph as it
 * was; bad wrt lists are refused. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "check.h"
#include "test_files.h"
#include "interp/interp.h"

#define CASES "tests/autodiff/cases"
#define TEXTS "tests/autodiff/text"
#define H 1e-5

typedef struct gcase {
    const char *name;
    char *text;
    size_t len;
    int nsizes;
    char size_name[8][32];
    int64_t size_val[8];
    bool first_only;
    const char *zeros;   /* "# zeros: NAME i j ...", or NULL */
} gcase;

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static ts_graph *parse(const gcase *c)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    if (ts_graph_parse(c->text, c->len, c->name, &g, &err) != TS_OK) CHECK_MSG(0, "%s: %s", c->name, err.msg);
    return g;
}

/* "# sizes: n=4 m=2" and "# first order only:" */
static void read_directives(gcase *c)
{
    const char *s = strstr(c->text, "# sizes:");
    if (s) {
        s += 8;
        char nm[32];
        long long v;
        int used;
        while (c->nsizes < 8 && sscanf(s, " %31[A-Za-z_]=%lld%n", nm, &v, &used) == 2) {
            strcpy(c->size_name[c->nsizes], nm);
            c->size_val[c->nsizes++] = v;
            s += used;
        }
    }
    c->first_only = strstr(c->text, "# first order only:") != NULL;
    const char *z = strstr(c->text, "# zeros:");
    c->zeros = z ? z + 8 : NULL;
}

/* "# zeros: NAME i j ...": elements i, j, ... (flat) of input NAME set to
 * exactly 0, for the first-order checks (the product rules' branches). */
static void put_zeros(const gcase *c, const ts_value *v, ts_tensor *t)
{
    char nm[64];
    int used = 0;
    const char *z = c->zeros;
    if (!z || !v->name || sscanf(z, " %63[A-Za-z_0-9]%n", nm, &used) != 1 || strcmp(nm, v->name) != 0) return;
    long long k;
    double *d = ts_tensor_data(t);
    for (z += used; *z != '\n' && sscanf(z, " %lld%n", &k, &used) == 1; z += used)
        if (k >= 0 && k < t->numel) d[k] = 0.0;
}

static bool shape_of(const gcase *c, const ts_value *v, int64_t *shape)
{
    for (int i = 0; i < v->type.rank; i++) {
        ts_dim d = v->type.dims[i];
        if (ts_dim_is_const(d)) {
            shape[i] = d.c;
            continue;
        }
        const char *nm = ts_dim_sym_name(d);
        if (!nm) return false;
        shape[i] = 3;
        for (int k = 0; k < c->nsizes; k++)
            if (strcmp(c->size_name[k], nm) == 0) shape[i] = c->size_val[k];
    }
    return true;
}

static ts_tensor *random_like(const gcase *c, const ts_value *v)
{
    int64_t shape[TS_MAX_RANK];
    ts_tensor *t = NULL;
    ts_err err = {0};
    if (!shape_of(c, v, shape) || ts_tensor_new(v->type.dtype, v->type.rank, shape, &t, &err) != TS_OK) {
        CHECK_MSG(0, "%s: an input of unsupported type", c->name);
        return NULL;
    }
    double *d = ts_tensor_data(t);
    for (int64_t i = 0; i < t->numel; i++) d[i] = urand();
    return t;
}

/* Random values of t's dtype and shape. */
static ts_tensor *random_as(const ts_tensor *t)
{
    ts_tensor *r = NULL;
    ts_err err = {0};
    if (ts_tensor_new(t->dtype, t->rank, t->shape, &r, &err) != TS_OK) return NULL;
    double *d = ts_tensor_data(r);
    for (int64_t i = 0; i < r->numel; i++) d[i] = urand();
    return r;
}

static ts_tensor *copy(const ts_tensor *t)
{
    ts_tensor *r = NULL;
    ts_err err = {0};
    ts_tensor_clone(t, &r, &err);
    return r;
}

static void release(int n, ts_tensor **t)
{
    for (int i = 0; i < n; i++) ts_tensor_release(t[i]), t[i] = NULL;
}

/* Run g; outputs into out (n_out = g's count). */
static bool run(const gcase *c, const ts_graph *g, int n_in, ts_tensor **in, ts_tensor **out)
{
    ts_err err = {0};
    int n_out = g->body->n_results;
    if (ts_interp_run_graph(g, n_in, in, n_out, out, &err) != TS_OK) {
        CHECK_MSG(0, "%s: run: %s", c->name, err.msg);
        return false;
    }
    return true;
}

static double dotp(const ts_tensor *a, const ts_tensor *b)
{
    const double *x = ts_tensor_data(a), *y = ts_tensor_data(b);
    double s = 0;
    for (int64_t i = 0; i < a->numel; i++) s += x[i] * y[i];
    return s;
}

static bool close_to(double got, double want)
{
    double m = fabs(got) > fabs(want) ? fabs(got) : fabs(want);
    return fabs(got - want) <= 1e-6 + 1e-5 * m;
}

#define MAXV 16

typedef struct setup {
    ts_graph *g;
    int n_in, n_out;
    ts_tensor *x[MAXV];
    int fin[MAXV], nfin;     /* float inputs */
    int fout[MAXV], nfout;   /* float outputs */
    ts_tensor *y[MAXV];      /* the outputs at x */
} setup;

static bool make_setup(const gcase *c, setup *s, bool zeros)
{
    memset(s, 0, sizeof *s);
    if (!(s->g = parse(c))) return false;
    s->n_in = s->g->body->n_params, s->n_out = s->g->body->n_results;
    if (s->n_in > MAXV || s->n_out > MAXV) {
        CHECK_MSG(0, "%s: too many inputs or outputs", c->name);
        return false;
    }
    for (int i = 0; i < s->n_in; i++) {
        if (!(s->x[i] = random_like(c, s->g->body->params[i]))) return false;
        if (zeros) put_zeros(c, s->g->body->params[i], s->x[i]);
        if (ts_dtype_is_float(s->g->body->params[i]->type.dtype)) s->fin[s->nfin++] = i;
    }
    for (int k = 0; k < s->n_out; k++)
        if (ts_dtype_is_float(s->g->body->results[k]->type.dtype)) s->fout[s->nfout++] = k;
    return run(c, s->g, s->n_in, s->x, s->y);
}

static void free_setup(setup *s)
{
    release(s->n_in, s->x);
    release(MAXV, s->y);
    ts_graph_free(s->g);
}

/* sum_k <w_k, y_k> over float outputs of g at inputs x. */
static double weighted(const gcase *c, const ts_graph *g, int n_in, ts_tensor **x, const int *fk, int nk,
                       ts_tensor **w)
{
    ts_tensor *y[2 * MAXV] = {0};
    double s = NAN;
    if (run(c, g, n_in, x, y)) {
        s = 0;
        for (int j = 0; j < nk; j++) s += dotp(w[j], y[fk[j]]);
    }
    release(g->body->n_results, y);
    return s;
}

/* ---- first order ------------------------------------------------------------------ */

static void check_vjp(const gcase *c)
{
    setup s;
    if (!make_setup(c, &s, true)) return free_setup(&s);
    ts_graph *gg = parse(c);
    ts_err err = {0};
    ts_tensor *in[2 * MAXV] = {0}, *out[2 * MAXV] = {0}, *ct[MAXV] = {0};
    if (!gg || ts_graph_grad(gg, -1, NULL, &err) != TS_OK) {
        CHECK_MSG(0, "%s: grad: %s", c->name, err.msg);
        goto done;
    }
    for (int i = 0; i < s.n_in; i++) in[i] = s.x[i];
    for (int j = 0; j < s.nfout; j++) ct[j] = in[s.n_in + j] = random_as(s.y[s.fout[j]]);
    if (!run(c, gg, s.n_in + s.nfout, in, out)) goto done;
    for (int j = 0; j < s.nfin; j++) {
        ts_tensor *xi = s.x[s.fin[j]], *gi = out[s.n_out + j];
        double *xd = ts_tensor_data(xi);
        const double *gd = ts_tensor_data(gi);
        int64_t n = xi->numel, picks = n <= 40 ? n : 12;
        for (int64_t p = 0; p < picks; p++) {
            int64_t e = n <= 40 ? p : (int64_t)((urand() + 1) * 0.5 * (double)n) % n;
            double keep = xd[e];
            xd[e] = keep + H;
            double lp = weighted(c, s.g, s.n_in, s.x, s.fout, s.nfout, ct);
            xd[e] = keep - H;
            double lm = weighted(c, s.g, s.n_in, s.x, s.fout, s.nfout, ct);
            xd[e] = keep;
            double fd = (lp - lm) / (2 * H);
            CHECK_MSG(close_to(gd[e], fd), "%s: d/d(input %d)[%lld]: grad %.10g, finite difference %.10g", c->name,
                      s.fin[j], (long long)e, gd[e], fd);
        }
    }
done:
    release(2 * MAXV, out);
    release(MAXV, ct);
    ts_graph_free(gg);
    free_setup(&s);
}

/* x + a v over the float inputs (new tensors). */
static void shifted(const setup *s, ts_tensor **v, double a, ts_tensor **out)
{
    for (int i = 0; i < s->n_in; i++) out[i] = copy(s->x[i]);
    for (int j = 0; j < s->nfin; j++) {
        double *d = ts_tensor_data(out[s->fin[j]]);
        const double *vd = ts_tensor_data(v[j]);
        for (int64_t e = 0; e < out[s->fin[j]]->numel; e++) d[e] += a * vd[e];
    }
}

/* Elementwise (a - b) / 2H against want. */
static void check_diff(const gcase *c, const char *what, int k, const ts_tensor *a, const ts_tensor *b,
                       const ts_tensor *want)
{
    const double *pa = ts_tensor_data(a), *pb = ts_tensor_data(b), *w = ts_tensor_data(want);
    for (int64_t e = 0; e < want->numel; e++) {
        double fd = (pa[e] - pb[e]) / (2 * H);
        if (!close_to(w[e], fd)) {
            CHECK_MSG(0, "%s: %s %d [%lld]: %.10g, finite difference %.10g", c->name, what, k, (long long)e, w[e],
                      fd);
            return;
        }
    }
    CHECK(1);
}

static void check_jvp(const gcase *c)
{
    setup s;
    if (!make_setup(c, &s, true)) return free_setup(&s);
    ts_graph *gj = parse(c);
    ts_err err = {0};
    ts_tensor *in[2 * MAXV] = {0}, *out[2 * MAXV] = {0}, *v[MAXV] = {0};
    ts_tensor *xp[MAXV] = {0}, *xm[MAXV] = {0}, *yp[MAXV] = {0}, *ym[MAXV] = {0};
    if (!gj || ts_graph_jvp(gj, -1, NULL, &err) != TS_OK) {
        CHECK_MSG(0, "%s: jvp: %s", c->name, err.msg);
        goto done;
    }
    for (int i = 0; i < s.n_in; i++) in[i] = s.x[i];
    for (int j = 0; j < s.nfin; j++) v[j] = in[s.n_in + j] = random_like(c, s.g->body->params[s.fin[j]]);
    if (!run(c, gj, s.n_in + s.nfin, in, out)) goto done;
    shifted(&s, v, H, xp);
    shifted(&s, v, -H, xm);
    if (!run(c, s.g, s.n_in, xp, yp) || !run(c, s.g, s.n_in, xm, ym)) goto done;
    for (int j = 0; j < s.nfout; j++) check_diff(c, "tangent of output", s.fout[j], yp[s.fout[j]], ym[s.fout[j]],
                                                 out[s.n_out + j]);
done:
    release(2 * MAXV, out), release(MAXV, v), release(MAXV, xp), release(MAXV, xm);
    release(MAXV, yp), release(MAXV, ym);
    ts_graph_free(gj);
    free_setup(&s);
}

/* ---- second order --------------------------------------------------------------------- */

/* Forward over reverse: the tangents of the gradients are Hessian-vector
 * products; reverse over reverse: the gradient of <ct2, (y, grad)>. */
static void check_second(const gcase *c)
{
    setup s;
    if (!make_setup(c, &s, false)) return free_setup(&s);
    ts_graph *gg = parse(c), *fr = parse(c), *rr = parse(c);
    ts_err err = {0};
    ts_tensor *in[4 * MAXV] = {0}, *out[4 * MAXV] = {0}, *ct[MAXV] = {0}, *v[MAXV] = {0}, *ct2[2 * MAXV] = {0};
    ts_tensor *xp[2 * MAXV] = {0}, *xm[2 * MAXV] = {0}, *gp[2 * MAXV] = {0}, *gm[2 * MAXV] = {0};
    if (!gg || !fr || !rr) goto done;
    bool ok = ts_graph_grad(gg, -1, NULL, &err) == TS_OK && ts_graph_grad(fr, -1, NULL, &err) == TS_OK &&
              ts_graph_jvp(fr, s.nfin, s.fin, &err) == TS_OK && ts_graph_grad(rr, -1, NULL, &err) == TS_OK &&
              ts_graph_grad(rr, s.nfin, s.fin, &err) == TS_OK;
    if (c->first_only) {
        CHECK_MSG(!ok, "%s: says first order only, but differentiating twice works now: drop the line", c->name);
        goto done;
    }
    if (!ok) {
        CHECK_MSG(0, "%s: second order: %s", c->name, err.msg);
        goto done;
    }
    int n_gin = s.n_in + s.nfout, n_gout = s.n_out + s.nfin;
    for (int j = 0; j < s.nfout; j++) ct[j] = random_as(s.y[s.fout[j]]);
    for (int j = 0; j < s.nfin; j++) v[j] = random_like(c, s.g->body->params[s.fin[j]]);
    /* forward over reverse: inputs x, ct, v; the last nfin outputs are H v */
    for (int i = 0; i < s.n_in; i++) in[i] = s.x[i];
    for (int j = 0; j < s.nfout; j++) in[s.n_in + j] = ct[j];
    for (int j = 0; j < s.nfin; j++) in[n_gin + j] = v[j];
    if (!run(c, fr, n_gin + s.nfin, in, out)) goto done;
    shifted(&s, v, H, xp);
    shifted(&s, v, -H, xm);
    for (int j = 0; j < s.nfout; j++) xp[s.n_in + j] = copy(ct[j]), xm[s.n_in + j] = copy(ct[j]);
    if (!run(c, gg, n_gin, xp, gp) || !run(c, gg, n_gin, xm, gm)) goto done;
    int n_frout = fr->body->n_results;
    for (int j = 0; j < s.nfin; j++)
        check_diff(c, "Hessian-vector product, input", s.fin[j], gp[s.n_out + j], gm[s.n_out + j],
                   out[n_frout - s.nfin + j]);
    release(4 * MAXV, out);
    /* reverse over reverse: inputs x, ct, ct2 (one per float output of gg) */
    int fk[2 * MAXV], nk = 0;
    for (int k = 0; k < n_gout; k++)
        if (ts_dtype_is_float(gg->body->results[k]->type.dtype)) {
            fk[nk] = k;
            ct2[nk] = random_as(gp[k]);
            in[n_gin + nk] = ct2[nk];
            nk++;
        }
    if (!run(c, rr, n_gin + nk, in, out)) goto done;
    double want = 0, got = 0;
    for (int j = 0; j < s.nfin; j++) got += dotp(out[rr->body->n_results - s.nfin + j], v[j]);
    double lp = weighted(c, gg, n_gin, xp, fk, nk, ct2), lm = weighted(c, gg, n_gin, xm, fk, nk, ct2);
    want = (lp - lm) / (2 * H);
    CHECK_MSG(close_to(got, want), "%s: reverse over reverse: <grad2, v> %.10g, finite difference %.10g", c->name, got,
              want);
done:
    release(4 * MAXV, out), release(MAXV, ct), release(MAXV, v), release(2 * MAXV, ct2);
    release(2 * MAXV, xp), release(2 * MAXV, xm), release(2 * MAXV, gp), release(2 * MAXV, gm);
    ts_graph_free(gg), ts_graph_free(fr), ts_graph_free(rr);
    free_setup(&s);
}

/* ---- the table ------------------------------------------------------------------------ */

static int names_of(const char *dir, const char *suffix, char names[][128], int cap)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t l = strlen(e->d_name), sl = strlen(suffix);
        if (l > sl && strcmp(e->d_name + l - sl, suffix) == 0 && n < cap && l < 120) strcpy(names[n++], e->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    return n;
}

static void test_cases(void)
{
    static char names[256][128];
    int n = names_of(CASES, ".ir", names, 256);
    CHECK_MSG(n > 0, "no cases in %s", CASES);
    for (int i = 0; i < n; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%.120s", CASES, names[i]);
        gcase c = {.name = names[i]};
        if (!(c.text = slurp(path, &c.len))) {
            CHECK_MSG(0, "cannot read %s", path);
            continue;
        }
        read_directives(&c);
        check_vjp(&c);
        check_jvp(&c);
        check_second(&c);
        free(c.text);
    }
}

/* Still without rules: custom kernels and send. */
static const ts_op missing[] = {TS_OP_CUSTOM, TS_OP_SEND};

static void test_table(void)
{
    int counts[TS_OP_COUNT] = {0};
    ts_err err = {0};
    CHECK(ts_ir_count_op_cases(CASES, counts, &err) > 0);
    for (int op = 0; op < TS_OP_COUNT; op++) {
        ts_ad_kind k = ts_ad_op_kind((ts_op)op);
        bool listed = false;
        for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) listed |= missing[i] == (ts_op)op;
        const char *name = ts_op_get((ts_op)op)->name;
        CHECK_MSG((k == TS_AD_MISSING) == listed, "%s: %s", name,
                  listed ? "has a rule now: take it off the missing list" : "has no rule and is not listed missing");
        /* their cotangents' dims, world*(n/world), are not n (see
         * cases/collective.ir) */
        if (k == TS_AD_RULE && op != TS_OP_REDUCE_SCATTER && op != TS_OP_ALL_TO_ALL)
            CHECK_MSG(counts[op] > 0, "%s has a derivative rule but no case in %s", name, CASES);
    }
}

/* ---- text in, text out --------------------------------------------------------------- */

static void test_text(void)
{
    static char names[64][128];
    int n = names_of(TEXTS, ".in.ir", names, 64);
    CHECK_MSG(n > 0, "no cases in %s", TEXTS);
    for (int i = 0; i < n; i++) {
        char path[300], want_path[300];
        snprintf(path, sizeof path, "%s/%.120s", TEXTS, names[i]);
        snprintf(want_path, sizeof want_path, "%s/%.*s.grad.ir", TEXTS, (int)strlen(names[i]) - 6, names[i]);
        size_t len = 0, wlen = 0;
        char *text = slurp(path, &len), *want = slurp(want_path, &wlen), *got = NULL;
        ts_graph *g = NULL;
        ts_err err = {0};
        if (!text || ts_graph_parse(text, len, path, &g, &err) != TS_OK || ts_graph_grad(g, -1, NULL, &err) != TS_OK ||
            ts_graph_to_text(g, &got, &err) != TS_OK)
            CHECK_MSG(0, "%s: %s", path, err.msg);
        else if (!want)
            CHECK_MSG(0, "%s is missing; the graph is:\n%s", want_path, got);
        else
            CHECK_STR(got, want);
        ts_free_string(got);
        ts_graph_free(g);
        free(text), free(want);
    }
}

/* ---- errors ------------------------------------------------------------------------ */

static void test_errors(void)
{
    /* running products along a symbolic axis: no rule (the doubling
     * steps need the length) */
    const char *src = "graph @w(%x: f64[n], %k: i64[]) {\n"
                      "  %c: f64[n] = cumulative(%x) {kind=prod, axis=0}\n"
                      "  %r: f64[n] = exp(%c)\n"
                      "  return %r\n"
                      "}\n";
    ts_graph *g = NULL;
    ts_err err = {0};
    char *before = NULL, *after = NULL;
    CHECK_MSG(ts_graph_parse(src, strlen(src), "w", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    ts_graph_to_text(g, &before, &err);
    CHECK(ts_graph_grad(g, -1, NULL, &err) == TS_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.msg, "cumulative with kind=prod along a symbolic axis") != NULL, "%s", err.msg);
    CHECK(ts_graph_jvp(g, -1, NULL, &err) == TS_ERR_UNSUPPORTED);
    ts_graph_to_text(g, &after, &err);
    CHECK_STR(after, before);   /* left as it was */
    int bad[] = {1}, twice[] = {0, 0}, out_of_range[] = {5};
    err = (ts_err){0};
    CHECK(ts_graph_grad(g, 1, bad, &err) == TS_ERR_INVALID_ARG);
    CHECK_MSG(strstr(err.msg, "floating-point") != NULL, "%s", err.msg);
    CHECK(ts_graph_grad(g, 2, twice, &err) == TS_ERR_INVALID_ARG);
    CHECK(ts_graph_jvp(g, 1, out_of_range, &err) == TS_ERR_INVALID_ARG);
    CHECK(ts_graph_grad(NULL, -1, NULL, &err) == TS_ERR_INVALID_ARG);
    ts_free_string(before), ts_free_string(after);
    ts_graph_free(g);
}

int main(void)
{
    test_cases();
    test_table();
    test_text();
    test_errors();
    return check_report();
}
