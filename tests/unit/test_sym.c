/* test_sym.c — symbolic dimensions: canonical form, printing, parsing,
 * evaluation, import, and behaviour under allocation failure. */
#include "check.h"
#include "core/sym.h"

#include <stdint.h>
#include <stdlib.h>

static ts_symtab *T;

/* Printed text of d; a few rotating buffers so several can be live. */
static const char *str(ts_dim d)
{
    static char bufs[8][1024];
    static int next;
    char *out = bufs[next++ % 8];
    ts_buf b = {0};
    ts_dim_print(&b, d);
    snprintf(out, sizeof bufs[0], "%s", b.data ? b.data : "");
    ts_buf_free(&b);
    return out;
}

/* Parse all of s in table t; a failure is a CHECK failure and yields 0. */
static ts_dim parse_in(ts_symtab *t, const char *s)
{
    ts_dim d = ts_dim_const(0);
    ts_err err = {0};
    size_t used = 0;
    ts_status st = ts_dim_parse(t, s, strlen(s), &d, &used, &err);
    CHECK_MSG(st == TS_OK && used == strlen(s), "parse \"%s\": %s (used %zu)", s, err.msg, used);
    return d;
}

static ts_dim P(const char *s) { return parse_in(T, s); }

static ts_dim sym(const char *name)
{
    ts_dim d = ts_dim_const(0);
    CHECK(ts_dim_sym(T, name, &d, NULL) == TS_OK);
    return d;
}

typedef ts_status (*op_fn)(ts_symtab *, ts_dim, ts_dim, ts_dim *, ts_err *);

static ts_dim op(op_fn fn, ts_dim a, ts_dim b)
{
    ts_dim d = ts_dim_const(0);
    ts_err err = {0};
    CHECK_MSG(fn(T, a, b, &d, &err) == TS_OK, "%s", err.msg);
    return d;
}

/* Parse, print, and check the text and that it parses back to the node. */
static void check_print(const char *in, const char *want)
{
    ts_dim d = P(in);
    const char *got = str(d);
    CHECK_STR(got, want);
    CHECK_MSG(ts_dim_eq(P(got), d), "\"%s\" does not parse back", got);
}

static ts_status parse_status(const char *s, size_t *used, ts_err *err)
{
    ts_dim d;
    return ts_dim_parse(T, s, strlen(s), &d, used, err);
}

/* ---- interning ---------------------------------------------------------- */

static void test_intern(void)
{
    ts_dim n1 = sym("n"), n2 = sym("n"), m = sym("m");
    CHECK(n1.x != NULL && n1.x == n2.x && ts_dim_eq(n1, n2));
    CHECK(!ts_dim_eq(n1, m));
    CHECK_STR(ts_dim_sym_name(n1), "n");
    CHECK(ts_dim_sym_name(ts_dim_const(3)) == NULL);

    ts_dim a = sym("a"), b = sym("b");
    ts_dim ab = op(ts_dim_mul, a, b), ba = op(ts_dim_mul, b, a);
    CHECK(ab.x == ba.x);
    CHECK_STR(str(ba), "a*b");
    CHECK(ts_dim_sym_name(ab) == NULL);
    CHECK(ts_dim_eq(P("batch*seq"), P("seq * batch")));

    ts_dim c = op(ts_dim_add, ts_dim_const(2), ts_dim_const(3));
    CHECK(ts_dim_is_const(c) && c.c == 5 && c.x == NULL);

    ts_err err = {0};
    ts_dim d;
    CHECK(ts_dim_sym(T, "1x", &d, &err) == TS_ERR_INVALID_ARG);
    CHECK(ts_dim_sym(T, "a-b", &d, NULL) == TS_ERR_INVALID_ARG);
    CHECK(ts_dim_sym(T, "", &d, NULL) == TS_ERR_INVALID_ARG);
    CHECK(ts_dim_sym(T, "_ok_9", &d, NULL) == TS_OK);
}

static void test_fresh(void)
{
    ts_symtab *t = ts_symtab_new();
    ts_dim d, nz1;
    CHECK(ts_dim_sym(t, "nz1", &nz1, NULL) == TS_OK);
    CHECK(ts_dim_fresh(t, "nz", &d, NULL) == TS_OK);
    CHECK_STR(ts_dim_sym_name(d), "nz0");
    CHECK(ts_dim_fresh(t, "nz", &d, NULL) == TS_OK);
    CHECK_STR(ts_dim_sym_name(d), "nz2");
    CHECK(ts_dim_fresh(t, "nz", &d, NULL) == TS_OK);
    CHECK_STR(ts_dim_sym_name(d), "nz3");
    CHECK(ts_dim_fresh(t, "u", &d, NULL) == TS_OK);
    CHECK_STR(ts_dim_sym_name(d), "u0");
    CHECK(ts_dim_fresh(t, "", &d, NULL) == TS_ERR_INVALID_ARG);
    CHECK(ts_dim_fresh(t, "9", &d, NULL) == TS_ERR_INVALID_ARG);
    for (int i = 0; i < 500; i++) CHECK(ts_dim_fresh(t, "k", &d, NULL) == TS_OK);
    CHECK_STR(ts_dim_sym_name(d), "k499");
    ts_symtab_free(t);
}

/* ---- simplification ----------------------------------------------------- */

static void test_fold(void)
{
    ts_err err = {0};
    ts_dim d;
    CHECK(P("2+3*4").c == 14 && ts_dim_is_const(P("2+3*4")));
    CHECK(ts_dim_add(T, ts_dim_const(INT64_MAX), ts_dim_const(1), &d, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strstr(err.msg, "overflow") != NULL, "%s", err.msg);
    CHECK(ts_dim_sub(T, ts_dim_const(INT64_MIN), ts_dim_const(1), &d, NULL) == TS_ERR_SHAPE);
    CHECK(ts_dim_mul(T, ts_dim_const(INT64_MAX / 2 + 1), ts_dim_const(2), &d, NULL) == TS_ERR_SHAPE);
    CHECK(ts_dim_div(T, ts_dim_const(INT64_MIN), ts_dim_const(-1), &d, NULL) == TS_ERR_SHAPE);
    CHECK(ts_dim_mod(T, ts_dim_const(INT64_MIN), ts_dim_const(-1), &d, NULL) == TS_OK && d.c == 0);
    /* overflow inside a polynomial, not only between constants */
    ts_dim n = sym("n"), big;
    CHECK(ts_dim_mul(T, n, ts_dim_const(INT64_MAX), &big, NULL) == TS_OK);
    CHECK(ts_dim_add(T, big, n, &d, NULL) == TS_ERR_SHAPE);
    CHECK(ts_dim_add(T, big, ts_dim_const(1), &d, NULL) == TS_OK);

    /* floor semantics, as in Python */
    CHECK(P("-7/2").c == -4 && P("-7%2").c == 1);
    CHECK(P("7/-2").c == -4 && P("7%-2").c == -1);
    CHECK(P("-7/-2").c == 3 && P("-7%-2").c == -1);
    CHECK(P("7/2").c == 3 && P("7%2").c == 1);
    CHECK(P("max(3, 5)").c == 5 && P("min(3, 5)").c == 3);
    CHECK(P("max(-3, -5)").c == -3 && P("min(-3, -5)").c == -5);
}

static void test_identities(void)
{
    ts_dim x = sym("x"), zero = ts_dim_const(0), one = ts_dim_const(1);
    CHECK(ts_dim_eq(op(ts_dim_add, x, zero), x));
    CHECK(ts_dim_eq(op(ts_dim_add, zero, x), x));
    CHECK(ts_dim_eq(op(ts_dim_sub, x, zero), x));
    CHECK(ts_dim_eq(op(ts_dim_mul, x, one), x));
    CHECK(ts_dim_eq(op(ts_dim_mul, one, x), x));
    CHECK(ts_dim_eq(op(ts_dim_mul, x, zero), zero));
    CHECK(ts_dim_eq(op(ts_dim_sub, x, x), zero));
    CHECK(ts_dim_eq(P("x+y-x-y"), zero));
    /* division by a symbol that divides every term exactly (an
     * all_gather's (n*world)/world) */
    CHECK(ts_dim_eq(P("(4*world)/world"), P("4")));
    CHECK(ts_dim_eq(P("(x*world + world)/world"), P("x+1")));
    CHECK(ts_dim_eq(P("(x*x*y)/x"), P("x*y")));
    CHECK(ts_dim_eq(P("(-2*x*y)/y"), P("-2*x")));
    CHECK(!ts_dim_eq(P("(x*world + 1)/world"), P("x")));   /* not exact: stays a floor division */
    CHECK(!ts_dim_eq(P("world*(4/world)"), P("4")));       /* floor: 4/world*world is not 4 for world = 3 */
    CHECK(!ts_dim_eq(P("(x*y)/(x+y)"), P("1")));
    CHECK(ts_dim_eq(P("x*(y+1)-x*y-x"), zero));

    CHECK_STR(str(P("n+n")), "2*n");
    CHECK(ts_dim_eq(P("a*b-b*a"), zero));
    CHECK(ts_dim_eq(P("n/1"), P("n")));
    CHECK_STR(str(P("(4*n+8)/4")), "n+2");
    CHECK_STR(str(P("(4*n-8)/-4")), "-n+2");
    CHECK_STR(str(P("(6*a*b+3)/3")), "2*a*b+1");
    CHECK(ts_dim_eq(P("n%1"), zero));
    CHECK(ts_dim_eq(P("n%-1"), zero));
    CHECK(ts_dim_eq(P("(4*n+8)%4"), zero));
    CHECK_STR(str(P("(4*n+6)%4")), "(4*n+6)%4");
    CHECK(ts_dim_eq(P("max(a, a)"), P("a")));
    CHECK(ts_dim_eq(P("min(a+1, a+1)"), P("a+1")));
    CHECK(ts_dim_eq(P("max(n, n+1)"), P("n+1")));
    CHECK(ts_dim_eq(P("min(n, n+1)"), P("n")));
    CHECK(ts_dim_eq(P("max(b, a)"), P("max(a, b)")));
    CHECK(ts_dim_eq(P("min(b*b, a)"), P("min(a, b*b)")));
    CHECK(ts_dim_eq(P("(n+2-3)/1+1"), P("n")));
    ts_dim n = sym("n");
    ts_dim d = op(ts_dim_add, op(ts_dim_div, op(ts_dim_sub, op(ts_dim_add, n, ts_dim_const(2)),
                                                 ts_dim_const(3)), ts_dim_const(1)), ts_dim_const(1));
    CHECK(ts_dim_eq(d, n));

    /* extra canonicalisations */
    CHECK(ts_dim_eq(P("n/-2"), P("(-n)/2")));
    CHECK(ts_dim_eq(P("n/2/3"), P("n/6")));
    CHECK(ts_dim_eq(P("n%s%s"), P("n%s")));
    CHECK(ts_dim_eq(P("n/-1"), P("-n")));
    CHECK_STR(str(P("2*(n+1)")), "2*n+2");
    CHECK_STR(str(P("(n+1)*(n-1)")), "n*n-1");
    CHECK_STR(str(P("(a+b)*(b+a)")), "a*a+2*a*b+b*b");
    CHECK_STR(str(P("(a-b)*(a+b)")), "a*a-b*b");
}

static void test_div_zero(void)
{
    ts_err err = {0};
    ts_dim d, n = sym("n");
    CHECK(ts_dim_div(T, n, ts_dim_const(0), &d, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strstr(err.msg, "division by zero") && strstr(err.msg, "n / 0"), "%s", err.msg);
    ts_err_clear(&err);
    CHECK(ts_dim_mod(T, n, ts_dim_const(0), &d, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strstr(err.msg, "modulo by zero") != NULL, "%s", err.msg);
    CHECK(ts_dim_div(T, ts_dim_const(3), ts_dim_const(0), &d, NULL) == TS_ERR_SHAPE);
    CHECK(ts_dim_div(T, n, op(ts_dim_sub, n, n), &d, NULL) == TS_ERR_SHAPE);
    /* a symbolic divisor is fine until evaluated */
    CHECK(ts_dim_div(T, n, sym("s"), &d, NULL) == TS_OK);
}

/* ---- printing ----------------------------------------------------------- */

static void test_print(void)
{
    static const char *const cases[][2] = {
        {"n+1", "n+1"},             {"1+n", "n+1"},
        {"2*n-1", "2*n-1"},         {"-1+n*2", "2*n-1"},
        {"b*a", "a*b"},             {"n*n", "n*n"},
        {"n*n*n+n", "n*n*n+n"},     {"n+n*n", "n*n+n"},
        {"-n", "-n"},               {"3-n", "-n+3"},
        {"-h+k", "k-h"},             {"-a-b", "-a-b"},
        {"-b-a-1", "-a-b-1"},       {"0-2*n", "-2*n"},
        {"(h+2*p-k)/s+1", "(h+2*p-k)/s+1"},
        {"1+(2*p+h-k)/s", "(h+2*p-k)/s+1"},
        {"n/2", "n/2"},             {"(n+1)/2", "(n+1)/2"},
        {"n/(a*b)", "n/(a*b)"},     {"n/s/t", "n/s/t"},
        {"n/(s/t)", "n/(s/t)"},     {"-(n/s)", "-(n/s)"},
        {"(-n)/s", "-n/s"},         {"n%s", "n%s"},
        {"2*(n/s)", "2*(n/s)"},     {"(a/s)*n", "n*(a/s)"},
        {"(a/s)*(a/s)", "a/s*(a/s)"},
        {"max(4, n)", "max(n, 4)"}, {"-max(b,a)", "-max(a, b)"},
        {"n/-m", "n/(-m)"},         {"y+(-n)/s", "y+(-n/s)"},
        {"x-y/s*z", "x-z*(y/s)"},   {"n/s%3", "n/s%3"},
        {"n%7", "n%7"},             {"n%-2", "-(-n%2)"},
        {"max(a+1, b)*2", "2*max(b, a+1)"},
        {"min(a, max(b, c))", "min(a, max(b, c))"},
        {"  batch * seq ", "batch*seq"},
        {"2*a*b/(c+d)", "2*a*b/(c+d)"},
        {"-2*n/s", "-2*n/s"},       {"(-(a*b))/s", "-a*b/s"},
        {"-(a*b)", "-a*b"},         {"-(n/s)*t", "-t*(n/s)"},
        {"7", "7"},                 {"-7", "-7"},
        {"max", "max"},             {"min*max", "max*min"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_print(cases[i][0], cases[i][1]);

    /* creation order does not change the text */
    ts_symtab *t = ts_symtab_new();
    ts_dim z = parse_in(t, "zz"), y = parse_in(t, "yy");
    (void)z;
    (void)y;
    ts_buf b = {0};
    ts_dim_print(&b, parse_in(t, "yy*zz+zz-yy"));
    CHECK_STR(b.data, "yy*zz+zz-yy");
    ts_buf_free(&b);
    ts_symtab_free(t);
}

static void test_print_int64_min(void)
{
    ts_dim m = P("-9223372036854775808");
    CHECK(ts_dim_is_const(m) && m.c == INT64_MIN);
    CHECK_STR(str(m), "-9223372036854775808");
    check_print("n-9223372036854775807-1", "n+(-9223372036854775808)");
    ts_dim n = sym("n"), a = sym("a"), d;
    CHECK(ts_dim_mul(T, n, ts_dim_const(INT64_MIN), &d, NULL) == TS_OK);
    CHECK_STR(str(d), "-9223372036854775808*n");
    CHECK(ts_dim_eq(P(str(d)), d));
    CHECK(ts_dim_add(T, d, a, &d, NULL) == TS_OK);
    CHECK_STR(str(d), "a+(-9223372036854775808)*n");
    CHECK(ts_dim_eq(P(str(d)), d));
    CHECK(ts_dim_div(T, n, ts_dim_const(INT64_MIN), &d, NULL) == TS_OK);
    CHECK_STR(str(d), "n/(-9223372036854775808)");
    CHECK(ts_dim_eq(P(str(d)), d));
}

static void test_roundtrip(void)
{
    static const char *const exprs[] = {
        "n", "n+1", "n-1", "-n", "-n-1", "2*n", "-2*n", "n*n", "n*n*m", "a*b*c-a*b+c",
        "(n+1)*(n+1)*(n+1)", "n/2", "(n+1)/2", "(n-1)/2+1", "(h+2*p-k)/s+1",
        "((h+2*p-k)/s+1)/2", "(h-(k-1)*d-1)/s+1", "n/(s+1)", "n/(s*t)", "n/(s/2)",
        "n/s/t/u", "n%3", "(n+1)%s", "n%s%t", "n%(s%t)", "(n/s)%t", "n/(s%t)",
        "max(a, b)", "min(a, b)", "max(a, b)+1", "max(a, b)*2", "max(a, b)*max(a, b)",
        "max(a, min(b, c))", "max(n/2, 1)", "min(-n, 0)", "max(-n, -m)", "-max(a, b)",
        "-(n/2)", "-(n%3)", "(-n)/2", "(-n)%3", "n/-s", "n%-s", "-n/-s", "n*(m/2)",
        "n*(m/2)+n/2*m", "(n/2)*(n/2)", "(n/2)*(n/2)*(m%3)", "x-(y/s)", "x+(-y)/s",
        "x-(-y)/s", "x-(-y)/s*z", "3*(n/2)-(n/2)*m", "(a/b)/(c/d)", "(a%b)/(c%d)",
        "max(max(a, b), max(c, d))", "min(max(a, 1), max(b, 2))*3-1",
        "(batch*seq*heads)/(heads*2)", "4*batch*seq/4", "(2*n+1)/2", "(2*n+1)%2",
        "n*n-2*n+1", "(a+b)/(a-b)", "-(a+b)/(a-b)", "(-(a+b))/(a-b)", "-a*b/c",
        "-(a*b/c)", "-(a/b)*c", "max(a, b)/max(c, d)%e", "0-max(a, b)*2+7",
    };
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
        ts_dim d = P(exprs[i]);
        char text[1024];
        snprintf(text, sizeof text, "%s", str(d));
        ts_dim back = P(text);
        CHECK_MSG(ts_dim_eq(back, d), "%s -> %s -> %s", exprs[i], text, str(back));
        CHECK_STR(str(back), text);
    }
}

/* ---- parsing ------------------------------------------------------------ */

static void check_parse_error(const char *s, size_t want_used, const char *want_msg)
{
    ts_err err = {0};
    size_t used = 12345;
    ts_status st = parse_status(s, &used, &err);
    CHECK_MSG(st == TS_ERR_PARSE, "\"%s\" gave %d", s, (int)st);
    CHECK_MSG(used == want_used, "\"%s\": used %zu, want %zu (%s)", s, used, want_used, err.msg);
    CHECK_MSG(strstr(err.msg, want_msg) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", s, err.msg,
              want_msg);
}

static void check_parse_stop(const char *s, size_t want_used, const char *want_text)
{
    ts_dim d;
    size_t used = 0;
    ts_err err = {0};
    CHECK_MSG(ts_dim_parse(T, s, strlen(s), &d, &used, &err) == TS_OK, "%s: %s", s, err.msg);
    CHECK_MSG(used == want_used, "\"%s\": used %zu, want %zu", s, used, want_used);
    CHECK_STR(str(d), want_text);
}

static void test_parse(void)
{
    check_parse_error("batch*", 6, "end of expression");
    check_parse_error("(n", 2, "expected ')'");
    check_parse_error("3/0", 1, "division by zero");
    check_parse_error("n%0", 1, "modulo by zero");
    check_parse_error("", 0, "end of expression");
    check_parse_error("   ", 3, "end of expression");
    check_parse_error("n+*2", 2, "unexpected '*'");
    check_parse_error("n+$", 2, "unexpected '$'");
    check_parse_error(")", 0, "unexpected ')'");
    check_parse_error("99999999999999999999", 0, "out of range");
    check_parse_error("n+9223372036854775808", 2, "out of range");
    check_parse_error("9223372036854775807+1", 19, "overflow");
    check_parse_error("--9223372036854775808", 0, "overflow");
    check_parse_error("max(a b)", 6, "expected ','");
    check_parse_error("min(a, b", 8, "expected ')'");
    check_parse_error("max(a)", 5, "expected ','");

    check_parse_stop("n]", 1, "n");
    check_parse_stop("n ]", 2, "n");
    check_parse_stop("batch*seq, 4]", 9, "batch*seq");
    check_parse_stop("4n", 1, "4");
    check_parse_stop(" n + 1 ", 7, "n+1");
    check_parse_stop("\tn\t*\t2", 6, "2*n");
    check_parse_stop("max (a, b) x", 11, "max(a, b)");
    check_parse_stop("max + 1", 7, "max+1");
    check_parse_stop("n*-2", 4, "-2*n");
    check_parse_stop("--n", 3, "n");
    check_parse_stop("n - -5", 6, "n+5");
    check_parse_stop("9223372036854775807", 19, "9223372036854775807");

    /* len bounds the text, and a NUL ends it */
    ts_dim d;
    size_t used;
    CHECK(ts_dim_parse(T, "n+1", 1, &d, &used, NULL) == TS_OK && used == 1 && ts_dim_eq(d, sym("n")));
    CHECK(ts_dim_parse(T, "n+1\0+2", 6, &d, &used, NULL) == TS_OK && used == 3);
    CHECK_STR(str(d), "n+1");
    CHECK(ts_dim_parse(T, "n+", 2, &d, &used, NULL) == TS_ERR_PARSE && used == 2);
    CHECK(ts_dim_parse(T, NULL, 0, &d, &used, NULL) == TS_ERR_INVALID_ARG);
}

static void test_parse_depth(void)
{
    char buf[4096];
    int k = 0;
    for (int i = 0; i < 40; i++) buf[k++] = '(';
    buf[k++] = 'n';
    for (int i = 0; i < 40; i++) buf[k++] = ')';
    buf[k] = 0;
    CHECK(ts_dim_eq(P(buf), sym("n")));

    k = 0;
    for (int i = 0; i < 1000; i++) buf[k++] = '(';
    buf[k++] = 'n';
    for (int i = 0; i < 1000; i++) buf[k++] = ')';
    buf[k] = 0;
    ts_err err = {0};
    size_t used = 0;
    CHECK(parse_status(buf, &used, &err) == TS_ERR_PARSE);
    CHECK_MSG(strstr(err.msg, "nested too deeply") != NULL, "%s", err.msg);
    CHECK(used > 0 && used < 100);

    size_t big = 1000000;
    char *minus = malloc(big + 2);
    CHECK(minus != NULL);
    if (minus) {
        memset(minus, '-', big);
        minus[big] = 'n';
        minus[big + 1] = 0;
        ts_err_clear(&err);
        CHECK(parse_status(minus, &used, &err) == TS_ERR_PARSE);
        free(minus);
    }

    k = 0;
    for (int i = 0; i < 200; i++) k += snprintf(buf + k, sizeof buf - (size_t)k, "max(a,");
    buf[k++] = 'b';
    for (int i = 0; i < 200; i++) buf[k++] = ')';
    buf[k] = 0;
    ts_err_clear(&err);
    CHECK(parse_status(buf, &used, &err) == TS_ERR_PARSE);
}

/* Expressions built through the API are capped in depth too, so that the
 * recursive walks (compare, print, evaluate) cannot overflow the stack. */
static void test_node_depth(void)
{
    ts_symtab *t = ts_symtab_new();
    ts_dim acc, s;
    ts_err err = {0};
    ts_status st = ts_dim_sym(t, "base", &acc, NULL);
    int levels = 0;
    while (st == TS_OK && levels < 5000) {
        st = ts_dim_fresh(t, "v", &s, &err);
        if (st == TS_OK) st = ts_dim_max(t, acc, s, &acc, &err);
        levels++;
    }
    CHECK(st == TS_ERR_SHAPE && levels > 400 && levels < 5000);
    CHECK_MSG(strstr(err.msg, "deeper") != NULL, "%s", err.msg);
    ts_buf b = {0};
    ts_dim_print(&b, acc);   /* the deepest dim that was accepted */
    CHECK(b.data && !b.oom && strncmp(b.data, "max(v", 5) == 0 && strlen(b.data) > 4000);
    ts_buf_free(&b);
    ts_symbind sb = {0};
    CHECK(ts_dim_match(acc, 1, &sb, NULL) == TS_ERR_SHAPE);   /* unbound, not a crash */
    ts_symbind_free(&sb);
    ts_symtab_free(t);
}

/* ---- evaluation --------------------------------------------------------- */

static void test_eval(void)
{
    ts_symbind b = {0};
    ts_err err = {0};
    int64_t v = 0;
    ts_dim batch = sym("batch"), seq = sym("seq");
    CHECK(ts_symbind_set(&b, batch, 4, &err) == TS_OK);
    CHECK(ts_symbind_set(&b, seq, 3, &err) == TS_OK);
    CHECK(ts_symbind_set(&b, seq, 3, &err) == TS_OK);
    CHECK(b.n == 2);
    CHECK(ts_symbind_get(&b, seq, &v) && v == 3);
    CHECK(!ts_symbind_get(&b, sym("heads"), &v));
    CHECK(ts_symbind_set(&b, seq, 5, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strstr(err.msg, "seq") && strstr(err.msg, "5") && strstr(err.msg, "3"), "%s", err.msg);
    ts_err_clear(&err);
    CHECK(ts_symbind_set(&b, P("seq+1"), 5, &err) == TS_ERR_INVALID_ARG);
    CHECK(ts_symbind_set(&b, ts_dim_const(1), 5, NULL) == TS_ERR_INVALID_ARG);

    ts_err_clear(&err);
    CHECK(ts_dim_eval(P("batch*seq+1"), &b, &v, &err) == TS_OK && v == 13);
    CHECK(ts_dim_eval(P("max(batch, seq)*min(batch, seq)"), &b, &v, &err) == TS_OK && v == 12);
    CHECK(ts_dim_eval(ts_dim_const(-9), &b, &v, &err) == TS_OK && v == -9);
    CHECK(ts_dim_eval(P("batch*heads"), &b, &v, &err) == TS_ERR_SHAPE);
    CHECK_STR(err.msg, "unbound symbol 'heads'");
    CHECK(ts_dim_eval(P("batch"), NULL, &v, NULL) == TS_ERR_SHAPE);
    CHECK(ts_dim_is_bound(P("batch*seq/2"), &b));
    CHECK(!ts_dim_is_bound(P("batch*seq/heads"), &b));
    CHECK(ts_dim_is_bound(ts_dim_const(1), NULL));

    /* floor semantics survive canonicalisation */
    ts_symbind nb = {0};
    ts_dim n = sym("n"), s = sym("s");
    CHECK(ts_symbind_set(&nb, n, -7, NULL) == TS_OK);
    CHECK(ts_dim_eval(P("n/2"), &nb, &v, NULL) == TS_OK && v == -4);
    CHECK(ts_dim_eval(P("n%2"), &nb, &v, NULL) == TS_OK && v == 1);
    CHECK(ts_dim_eval(P("n/-2"), &nb, &v, NULL) == TS_OK && v == 3);
    CHECK(ts_dim_eval(P("n%-2"), &nb, &v, NULL) == TS_OK && v == -1);
    CHECK(ts_dim_eval(P("n/2/3"), &nb, &v, NULL) == TS_OK && v == -2);
    CHECK(ts_dim_eval(P("n*n*n"), &nb, &v, NULL) == TS_OK && v == -343);
    CHECK(ts_symbind_set(&nb, s, 0, NULL) == TS_OK);
    ts_err_clear(&err);
    CHECK(ts_dim_eval(P("n/s+1"), &nb, &v, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strstr(err.msg, "division by zero") && strstr(err.msg, "n/s"), "%s", err.msg);
    CHECK(ts_dim_eval(P("n%s"), &nb, &v, NULL) == TS_ERR_SHAPE);

    ts_symbind_clear(&nb);
    CHECK(nb.n == 0);
    CHECK(ts_symbind_set(&nb, n, (int64_t)1 << 32, NULL) == TS_OK);
    ts_err_clear(&err);
    CHECK(ts_dim_eval(P("n*n"), &nb, &v, &err) == TS_ERR_SHAPE);
    CHECK_MSG(strstr(err.msg, "overflow") && strstr(err.msg, "n*n"), "%s", err.msg);
    /* n*n/n is n before anything is evaluated (exact division by an atom
     * of every term); a quotient that is not exact still overflows */
    CHECK(ts_dim_eval(P("n*n/n"), &nb, &v, NULL) == TS_OK && v == (int64_t)1 << 32);
    CHECK(ts_dim_eval(P("(n*n+1)/n"), &nb, &v, NULL) == TS_ERR_SHAPE);
    CHECK(ts_dim_eval(P("n+n"), &nb, &v, NULL) == TS_OK && v == (int64_t)1 << 33);
    ts_symbind_clear(&nb);
    CHECK(ts_symbind_set(&nb, n, -2, NULL) == TS_OK);
    ts_dim p63 = ts_dim_const(1);
    for (int i = 0; i < 63; i++) p63 = op(ts_dim_mul, p63, n);
    CHECK(ts_dim_eval(p63, &nb, &v, NULL) == TS_OK && v == INT64_MIN);
    CHECK(ts_dim_eval(op(ts_dim_mul, p63, n), &nb, &v, NULL) == TS_ERR_SHAPE);

    ts_symbind_free(&nb);
    ts_symbind_free(&b);
    CHECK(b.syms == NULL && b.n == 0 && b.cap == 0);
}

static void test_match(void)
{
    ts_symbind b = {0};
    ts_err err = {0};
    ts_dim batch = sym("batch");
    CHECK(ts_dim_match(batch, 4, &b, &err) == TS_OK);
    CHECK(ts_dim_match(batch, 4, &b, &err) == TS_OK);
    CHECK(ts_dim_match(batch, 5, &b, &err) == TS_ERR_SHAPE);
    CHECK_STR(err.msg, "dim batch: expected 4, got 5");
    ts_err_clear(&err);
    CHECK(ts_dim_match(P("batch*2"), 8, &b, &err) == TS_OK);
    CHECK(ts_dim_match(P("batch*2"), 5, &b, &err) == TS_ERR_SHAPE);
    CHECK_STR(err.msg, "dim 2*batch: expected 8, got 5");
    ts_err_clear(&err);
    CHECK(ts_dim_match(ts_dim_const(3), 3, &b, &err) == TS_OK);
    CHECK(ts_dim_match(ts_dim_const(3), 4, &b, &err) == TS_ERR_SHAPE);
    ts_err_clear(&err);
    CHECK(ts_dim_match(P("seq+1"), 4, &b, &err) == TS_ERR_SHAPE);
    CHECK_STR(err.msg, "unbound symbol 'seq'");
    for (int i = 0; i < 100; i++) {
        ts_dim s;
        CHECK(ts_dim_fresh(T, "m", &s, NULL) == TS_OK);
        CHECK(ts_dim_match(s, i, &b, NULL) == TS_OK);
    }
    CHECK(b.n == 101);
    ts_symbind_free(&b);
}

/* ---- import ------------------------------------------------------------- */

static void test_import(void)
{
    static const char *const exprs[] = {
        "(h+2*p-k)/s+1", "max(a, b*b)", "n%3", "-(n/2)*m+7", "min(x, y)/max(x, y)%z", "n*n*n",
        "(-n)%5", "42",
    };
    ts_symtab *u = ts_symtab_new();
    ts_dim z;
    CHECK(ts_dim_sym(u, "zzz", &z, NULL) == TS_OK);   /* different creation order */
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
        ts_dim d = P(exprs[i]), a, b;
        ts_err err = {0};
        CHECK_MSG(ts_dim_import(u, d, &a, &err) == TS_OK, "%s", err.msg);
        CHECK(ts_dim_import(u, d, &b, &err) == TS_OK && ts_dim_eq(a, b));
        CHECK(ts_dim_eq(a, parse_in(u, exprs[i])));
        ts_buf buf = {0};
        ts_dim_print(&buf, a);
        CHECK_STR(buf.data, str(d));
        ts_buf_free(&buf);
        CHECK(ts_dim_import(T, d, &b, NULL) == TS_OK && ts_dim_eq(b, d));
        CHECK(ts_dim_import(T, a, &b, NULL) == TS_OK && ts_dim_eq(b, d));
    }
    ts_dim d, e = parse_in(u, "zzz");
    ts_err err = {0};
    CHECK(ts_dim_add(T, P("n"), e, &d, &err) == TS_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "another symbol table") != NULL);
    ts_symtab_free(u);
}

/* ---- randomised: simplification preserves value ------------------------- */

typedef struct rnode {
    int op;              /* 0 leaf; '+', '-', '*', '/', '%', 'M', 'm', 'n' (negate) */
    int sym;             /* leaf: -1 for constant */
    int64_t c;
    struct rnode *l, *r;
} rnode;

static uint64_t rng = 88172645463325252u;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static const char *const rsyms[] = {"a", "b", "c", "n"};

static rnode *rgen(rnode *pool, int *used, int depth)
{
    rnode *x = &pool[(*used)++];
    memset(x, 0, sizeof *x);
    if (depth == 0 || rnd(4) == 0) {
        x->sym = rnd(3) ? (int)rnd(4) : -1;
        x->c = (int64_t)rnd(9) - 3;
        return x;
    }
    static const char ops[] = "++--**/%Mmn";
    x->op = ops[rnd(sizeof ops - 1)];
    x->l = rgen(pool, used, depth - 1);
    if (x->op != 'n') x->r = rgen(pool, used, depth - 1);
    return x;
}

static bool ref_eval(const rnode *x, const int64_t *vals, int64_t *out)
{
    if (!x->op) {
        *out = x->sym < 0 ? x->c : vals[x->sym];
        return true;
    }
    int64_t l, r = 0;
    if (!ref_eval(x->l, vals, &l) || (x->r && !ref_eval(x->r, vals, &r))) return false;
    switch (x->op) {
    case '+': return !__builtin_add_overflow(l, r, out);
    case '-': return !__builtin_sub_overflow(l, r, out);
    case '*': return !__builtin_mul_overflow(l, r, out);
    case 'n': return !__builtin_sub_overflow(0, l, out);
    case 'M': *out = l > r ? l : r; return true;
    case 'm': *out = l < r ? l : r; return true;
    default: break;
    }
    if (r == 0 || (l == INT64_MIN && r == -1)) return false;
    int64_t q = l / r, m = l % r;
    if (m != 0 && ((m < 0) != (r < 0))) {
        q--;
        m += r;
    }
    *out = x->op == '/' ? q : m;
    return true;
}

/* Builds x in t; swap flips the operands of commutative operations. */
static ts_status rbuild(ts_symtab *t, const rnode *x, bool swap, ts_dim *out)
{
    if (!x->op) {
        if (x->sym < 0) {
            *out = ts_dim_const(x->c);
            return TS_OK;
        }
        return ts_dim_sym(t, rsyms[x->sym], out, NULL);
    }
    ts_dim l, r = ts_dim_const(0);
    TS_TRY(rbuild(t, x->l, swap, &l));
    if (x->r) TS_TRY(rbuild(t, x->r, swap, &r));
    bool comm = strchr("+*Mm", x->op) != NULL;
    if (swap && comm) {
        ts_dim tmp = l;
        l = r;
        r = tmp;
    }
    switch (x->op) {
    case '+': return ts_dim_add(t, l, r, out, NULL);
    case '-': return ts_dim_sub(t, l, r, out, NULL);
    case '*': return ts_dim_mul(t, l, r, out, NULL);
    case '/': return ts_dim_div(t, l, r, out, NULL);
    case '%': return ts_dim_mod(t, l, r, out, NULL);
    case 'M': return ts_dim_max(t, l, r, out, NULL);
    case 'm': return ts_dim_min(t, l, r, out, NULL);
    default: return ts_dim_sub(t, ts_dim_const(0), l, out, NULL);
    }
}

static void test_random(void)
{
    static const int64_t bindings[][4] = {
        {3, -2, 5, 7}, {0, 1, -1, 2}, {-5, 4, 3, -3}, {10, 10, -7, 1}, {1, 2, 3, 4}, {-1, -1, -1, -1},
    };
    ts_symtab *rev = ts_symtab_new();   /* symbols created in reverse order */
    for (int i = 3; i >= 0; i--) {
        ts_dim d;
        CHECK(ts_dim_sym(rev, rsyms[i], &d, NULL) == TS_OK);
    }
    int built = 0, compared = 0;
    for (int iter = 0; iter < 3000; iter++) {
        rnode pool[64];
        int used = 0;
        rnode *x = rgen(pool, &used, 4);
        ts_dim d, ds, dr;
        if (rbuild(T, x, false, &d) != TS_OK) continue;
        built++;
        CHECK(rbuild(T, x, true, &ds) == TS_OK && ts_dim_eq(d, ds));
        CHECK(rbuild(rev, x, true, &dr) == TS_OK);
        ts_buf b = {0};
        ts_dim_print(&b, dr);
        const char *text = str(d);
        CHECK_STR(b.data ? b.data : "", text);
        ts_buf_free(&b);
        ts_dim back = P(text);
        CHECK_MSG(ts_dim_eq(back, d), "round trip: %s -> %s", text, str(back));

        for (size_t k = 0; k < sizeof bindings / sizeof bindings[0]; k++) {
            int64_t want, got;
            if (!ref_eval(x, bindings[k], &want)) continue;
            ts_symbind sb = {0};
            for (int i = 0; i < 4; i++) ts_symbind_set(&sb, sym(rsyms[i]), bindings[k][i], NULL);
            ts_err err = {0};
            ts_status st = ts_dim_eval(d, &sb, &got, &err);
            CHECK_MSG(st == TS_OK && got == want, "%s at binding %zu: got %lld (%s), want %lld", text,
                      k, (long long)got, err.msg, (long long)want);
            compared++;
            ts_symbind_free(&sb);
        }
    }
    CHECK(built > 2000 && compared > 5000);
    ts_symtab_free(rev);
}

/* ---- allocation failure ------------------------------------------------- */

static long alloc_budget = -1, live_allocs, total_allocs;

static void *failing_alloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (n == 0) {
        if (p) live_allocs--;
        free(p);
        return NULL;
    }
    if (alloc_budget >= 0 && total_allocs >= alloc_budget) return NULL;
    total_allocs++;
    void *q = realloc(p, n);
    if (q && !p) live_allocs++;
    return q;
}

static ts_status oom_workload(void)
{
    static const char *const exprs[] = {
        "(h+2*p-k)/s+1", "(a+b+c+d)*(a+b+c+d)", "max(n, m)*min(n, m)%7", "n/2/3-(n%5)",
        "(x+1)*(y+2)*(z+3)/4",
    };
    ts_symtab *t = ts_symtab_new(), *u = ts_symtab_new();
    ts_symbind b = {0};
    ts_buf buf = {0};
    ts_err err = {0};
    ts_status s = t && u ? TS_OK : TS_ERR_OOM;
    for (size_t i = 0; s == TS_OK && i < sizeof exprs / sizeof exprs[0]; i++) {
        ts_dim d, e;
        size_t used;
        s = ts_dim_parse(t, exprs[i], strlen(exprs[i]), &d, &used, &err);
        if (s == TS_OK) s = ts_dim_import(u, d, &e, &err);
        if (s == TS_OK) ts_dim_print(&buf, e);
    }
    for (int i = 0; s == TS_OK && i < 150; i++) {
        ts_dim d;
        s = ts_dim_fresh(t, "q", &d, &err);
        if (s == TS_OK) s = ts_dim_match(d, i, &b, &err);
    }
    if (s == TS_OK && buf.oom) s = TS_ERR_OOM;
    CHECK_MSG(s == TS_OK || s == TS_ERR_OOM, "status %d: %s", (int)s, err.msg);
    CHECK(s == TS_OK || !t || !u || err.code == TS_ERR_OOM || buf.oom);
    ts_buf_free(&buf);
    ts_symbind_free(&b);
    ts_symtab_free(u);
    ts_symtab_free(t);
    return s;
}

static void test_oom(void)
{
    ts_set_allocator(failing_alloc, NULL);
    alloc_budget = -1;
    total_allocs = live_allocs = 0;
    CHECK(oom_workload() == TS_OK);
    long need = total_allocs;
    CHECK(live_allocs == 0);
    int failures = 0;
    for (long k = 0; k < need; k++) {
        alloc_budget = k;
        total_allocs = live_allocs = 0;
        if (oom_workload() != TS_OK) failures++;
        CHECK_MSG(live_allocs == 0, "budget %ld leaks %ld", k, live_allocs);
    }
    CHECK(failures > 0);
    ts_set_allocator(NULL, NULL);
}

int main(void)
{
    T = ts_symtab_new();
    CHECK(T != NULL);
    if (!T) return check_report();
    test_intern();
    test_fresh();
    test_fold();
    test_identities();
    test_div_zero();
    test_print();
    test_print_int64_min();
    test_roundtrip();
    test_parse();
    test_parse_depth();
    test_node_depth();
    test_eval();
    test_match();
    test_import();
    test_random();
    ts_symtab_free(T);
    test_oom();
    return check_report();
}
