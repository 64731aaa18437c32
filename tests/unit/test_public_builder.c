/* test_public_builder.c — the graph builder of tessera.h: graphs built
 * node by node print as the IR text expected, run on both targets, and
 * every misuse is a sticky, clear error; and ts_session_run's promise
 * that outputs own their memory (an identity graph, a reshape of an
 * input, a constant output, one value returned twice). */
#include "check.h"
#include "tessera.h"

#include <string.h>

static char *text_of(const ts_graph *g)
{
    char *t = NULL;
    return ts_graph_to_text(g, &t, NULL) == TS_OK ? t : NULL;
}

/* The error the builder holds after a misuse, and that it sticks. */
static void expect_error(ts_builder *b, ts_status code, const char *needle)
{
    ts_err e = {0};
    CHECK_MSG(ts_builder_status(b, &e) == code, "got %s: %s", ts_status_name(e.code), e.msg);
    CHECK_MSG(strstr(e.msg, needle) != NULL, "'%s' does not say '%s'", e.msg, needle);
    CHECK(ts_build_scalar(b, TS_DTYPE_F32, 1) == NULL);   /* sticky */
}

static void test_text(void)
{
    ts_err err = {0};
    ts_graph *g = NULL;
    ts_builder *b = NULL;
    CHECK(ts_graph_new("scale", &g, &err) == TS_OK);
    CHECK(ts_graph_builder(g, &b, &err) == TS_OK);
    ts_value *x = ts_build_input(b, "x", "f32[batch, 4]");
    ts_value *two = ts_build_scalar(b, TS_DTYPE_F32, 2.0);
    ts_value *y = ts_build2(b, "mul", x, two);
    ts_value *t = ts_build1(b, "transpose", y, "perm=[1, 0]");
    ts_value *s = ts_build1(b, "reduce_sum", t, "{axes=[1]}");
    ts_build_outputs(b, 2, (ts_value *[]){t, s}, (const char *[]){"y", NULL});
    CHECK_MSG(ts_builder_status(b, &err) == TS_OK, "%s", err.msg);
    char type[64];
    CHECK(ts_value_type(t, type, sizeof type) == strlen("f32[4, batch]"));
    CHECK_STR(type, "f32[4, batch]");
    CHECK(ts_value_dtype(s) == TS_DTYPE_F32 && ts_value_rank(s) == 1 && ts_value_rank(NULL) == -1);
    ts_builder_free(b);
    char *txt = text_of(g);
    CHECK_STR(txt, "graph @scale(%x: f32[batch, 4]) {\n"
                   "  %0: f32[] = const() {value=[2]}\n"
                   "  %1: f32[batch, 4] = broadcast(%0) {shape=[batch, 4], axes=[]}\n"
                   "  %2: f32[batch, 4] = mul(%x, %1)\n"
                   "  %y: f32[4, batch] = transpose(%2) {perm=[1, 0]}\n"
                   "  %3: f32[4] = reduce_sum(%y) {axes=[1]}\n"
                   "  return %y, %3\n"
                   "}\n");
    /* the text parses back to the same graph */
    ts_graph *g2 = NULL;
    CHECK(txt && ts_graph_parse(txt, strlen(txt), "built", &g2, &err) == TS_OK);
    char *txt2 = g2 ? text_of(g2) : NULL;
    CHECK_STR(txt2, txt);
    ts_free_string(txt);
    ts_free_string(txt2);
    ts_graph_free(g2);

    /* it runs, on both targets, at two batch sizes */
    for (int k = 0; k < 2; k++) {
        ts_session *sess = NULL;
        const char *target = k ? "interp" : "cpu";
        CHECK_MSG(ts_session_new(g, target, &sess, &err) == TS_OK, "%s", err.msg);
        for (int64_t batch = 1; sess && batch <= 3; batch += 2) {
            float xs[12];
            for (int i = 0; i < 12; i++) xs[i] = (float)i;
            ts_tensor *in = NULL, *out[2] = {NULL, NULL};
            ts_tensor_wrap(TS_DTYPE_F32, 2, (int64_t[]){batch, 4}, xs, &in, NULL);
            CHECK_MSG(ts_session_run(sess, 1, &in, 2, out, &err) == TS_OK, "%s", err.msg);
            if (out[0] && out[1]) {
                CHECK(ts_tensor_shape(out[0])[0] == 4 && ts_tensor_shape(out[0])[1] == batch);
                const float *o = ts_tensor_data(out[0]), *r = ts_tensor_data(out[1]);
                bool ok = true;
                for (int64_t i = 0; i < batch; i++)
                    for (int j = 0; j < 4; j++) ok = ok && o[j * batch + i] == 2 * xs[i * 4 + j];
                CHECK_MSG(ok, "%s batch %lld", target, (long long)batch);
                float want = 0;
                for (int64_t i = 0; i < batch; i++) want += 2 * xs[i * 4 + 3];
                CHECK(r[3] == want);
            }
            ts_tensor_release(out[0]);
            ts_tensor_release(out[1]);
            ts_tensor_release(in);
        }
        ts_session_free(sess);
    }
    /* the graph's edges as values, and a builder on a parsed graph */
    CHECK(ts_graph_input(g, 0) && ts_graph_input(g, 1) == NULL && ts_graph_output(g, 2) == NULL);
    char ty[32];
    ts_value_type(ts_graph_output(g, 1), ty, sizeof ty);
    CHECK_STR(ty, "f32[4]");
    ts_graph_free(g);

    const char *src = "graph @m(%a: f32[n, 3], %b: f32[3]) {\n  return %a\n}\n";
    CHECK(ts_graph_parse(src, strlen(src), "m", &g, &err) == TS_OK);
    CHECK(ts_graph_builder(g, &b, &err) == TS_OK);
    ts_value *mv = ts_build_matmul(b, ts_graph_input(g, 0), ts_graph_input(g, 1));
    ts_build_outputs(b, 1, &mv, (const char *[]){"mv"});
    CHECK_MSG(ts_builder_status(b, &err) == TS_OK, "%s", err.msg);
    ts_value_type(mv, ty, sizeof ty);
    CHECK_STR(ty, "f32[n]");
    ts_builder_free(b);
    ts_graph_free(g);
}

/* A while loop: count i up to n, doubling x each round. */
static void test_regions(void)
{
    ts_err err = {0};
    ts_graph *g = NULL;
    ts_builder *b = NULL, *cond = NULL, *body = NULL;
    ts_graph_new("loop", &g, &err);
    ts_graph_builder(g, &b, &err);
    ts_value *x = ts_build_input(b, "x", "f32[3]");
    ts_value *n = ts_build_input(b, "n", "i64[]");
    ts_value *zero = ts_build_scalar(b, TS_DTYPE_I64, 0);
    CHECK(ts_builder_region(b, &cond, &err) == TS_OK && ts_builder_region(b, &body, &err) == TS_OK);
    ts_value *ci = ts_build_input(cond, "ci", "i64[]");
    ts_value *cn = ts_build_input(cond, "cn", "i64[]");
    ts_build_input(cond, "cx", "f32[3]");
    ts_value *go = ts_build2(cond, "lt", ci, cn);
    ts_build_outputs(cond, 1, &go, NULL);
    ts_value *bi = ts_build_input(body, "bi", "i64[]");
    ts_value *bn = ts_build_input(body, "bn", "i64[]");
    ts_value *bx = ts_build_input(body, "bx", "f32[3]");
    ts_value *one = ts_build_scalar(body, TS_DTYPE_I64, 1);
    ts_value *next[3] = {ts_build2(body, "add", bi, one), bn, ts_build2(body, "add", bx, bx)};
    ts_build_outputs(body, 3, next, NULL);
    ts_value *res[3];
    int n_res = 0;
    CHECK(ts_build_node(b, "while", 3, (ts_value *[]){zero, n, x}, NULL, 2, (ts_builder *[]){cond, body}, 3, res,
                        &n_res) == TS_OK);
    CHECK(n_res == 3);
    ts_build_outputs(b, 1, &res[2], (const char *[]){"y"});
    CHECK_MSG(ts_builder_status(b, &err) == TS_OK, "%s", err.msg);
    ts_builder_free(cond);
    ts_builder_free(body);
    ts_builder_free(b);
    ts_session *s = NULL;
    CHECK_MSG(ts_session_new(g, "interp", &s, &err) == TS_OK, "%s", err.msg);
    float xs[3] = {1, 2, 3};
    int64_t four = 4;
    ts_tensor *in[2] = {NULL, NULL}, *y = NULL;
    ts_tensor_wrap(TS_DTYPE_F32, 1, (int64_t[]){3}, xs, &in[0], NULL);
    ts_tensor_wrap(TS_DTYPE_I64, 0, NULL, &four, &in[1], NULL);
    CHECK_MSG(s && ts_session_run(s, 2, in, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(y && ((float *)ts_tensor_data(y))[2] == 48);
    ts_tensor_release(y);
    ts_tensor_release(in[0]);
    ts_tensor_release(in[1]);
    ts_session_free(s);
    ts_graph_free(g);
}

static void test_errors(void)
{
    ts_err err = {0};
    ts_graph *g = NULL;
    CHECK(ts_graph_new("bad name", &g, &err) == TS_ERR_INVALID_ARG && g == NULL);
    CHECK(ts_graph_new(NULL, &g, &err) == TS_OK);
    ts_builder *b = NULL;
    CHECK(ts_graph_builder(NULL, &b, &err) == TS_ERR_INVALID_ARG);

    struct {
        const char *what, *needle;
        ts_status code;
    } cases[] = {
        {"type", "unknown dtype 'q8'", TS_ERR_PARSE},
        {"name", "cannot be a value name", TS_ERR_INVALID_ARG},
        {"dup", "already used", TS_ERR_INVALID_ARG},
        {"op", "unknown primitive 'frobnicate'", TS_ERR_INVALID_ARG},
        {"attr", "transpose needs attribute 'perm'", TS_ERR_PARSE},
        {"attrname", "transpose has no attribute 'colour'", TS_ERR_PARSE},
        {"shape", "add", TS_ERR_SHAPE},
        {"dtype", "cast", TS_ERR_SHAPE},
        {"null", "NULL", TS_ERR_INVALID_ARG},
        {"foreign", "", TS_ERR_INVALID_ARG},
        {"trailing", "after the end", TS_ERR_PARSE},
        {"outname", "it is named 'x'", TS_ERR_INVALID_ARG},
    };
    ts_graph *other = NULL;
    ts_builder *ob = NULL;
    ts_graph_new("other", &other, NULL);
    ts_graph_builder(other, &ob, NULL);
    ts_value *foreign = ts_build_input(ob, "f", "f32[2]");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_graph *h = NULL;
        ts_graph_new("h", &h, NULL);
        ts_graph_builder(h, &b, NULL);
        ts_value *x = ts_build_input(b, "x", "f32[2, 3]");
        ts_value *v = ts_build_input(b, "v", "f32[4]");
        const char *w = cases[i].what;
        if (!strcmp(w, "type")) ts_build_input(b, "q", "q8[2]");
        if (!strcmp(w, "name")) ts_build_input(b, "2x", "f32[2]");
        if (!strcmp(w, "dup")) ts_build_input(b, "x", "f32[2]");
        if (!strcmp(w, "op")) ts_build1(b, "frobnicate", x, NULL);
        if (!strcmp(w, "attr")) ts_build1(b, "transpose", x, NULL);
        if (!strcmp(w, "attrname")) ts_build1(b, "transpose", x, "perm=[1, 0], colour=[2]");
        if (!strcmp(w, "shape")) ts_build2(b, "add", x, v);
        if (!strcmp(w, "dtype")) ts_build1(b, "exp", ts_build1(b, "cast", x, "dtype=i32"), NULL);
        if (!strcmp(w, "null")) ts_build2(b, "add", x, NULL);
        if (!strcmp(w, "foreign")) ts_build2(b, "add", foreign, foreign);
        if (!strcmp(w, "trailing")) ts_build_input(b, "t", "f32[2] junk");
        if (!strcmp(w, "outname")) ts_build_outputs(b, 1, &x, (const char *[]){"y"});
        if (!strcmp(w, "dtype")) cases[i].needle = "exp";
        expect_error(b, cases[i].code, cases[i].needle);
        ts_builder_free(b);
        ts_graph_free(h);
    }
    ts_builder_free(ob);
    ts_graph_free(other);
    /* NULL builders and values are answered, not dereferenced */
    CHECK(ts_build_input(NULL, "x", "f32[1]") == NULL && ts_build(NULL, "add", 0, NULL, NULL) == NULL);
    CHECK(ts_build_outputs(NULL, 0, NULL, NULL) == TS_ERR_INVALID_ARG);
    CHECK(ts_value_type(NULL, NULL, 0) == 0);
    ts_graph_free(g);
}

/* Outputs never share bytes with inputs, constants or each other. */
static void test_owned_outputs(void)
{
    const char *graphs[] = {
        "graph @id(%x: f32[4]) {\n  return %x\n}\n",
        "graph @view(%x: f32[4]) {\n  %y: f32[2, 2] = reshape(%x) {shape=[2, 2]}\n  return %y\n}\n",
        "graph @konst(%x: f32[4]) {\n  %c: f32[4] = const() {value=[1, 2, 3, 4]}\n  return %c, %x\n}\n",
        "graph @twice(%x: f32[4]) {\n  %y: f32[4] = add(%x, %x)\n  return %y, %y\n}\n",
    };
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++)
        for (int k = 0; k < 2; k++) {
            ts_err err = {0};
            ts_graph *g = NULL;
            ts_session *s = NULL;
            CHECK_MSG(ts_graph_parse(graphs[i], strlen(graphs[i]), "t", &g, &err) == TS_OK, "%s", err.msg);
            CHECK_MSG(g && ts_session_new(g, k ? "interp" : "cpu", &s, &err) == TS_OK, "%s", err.msg);
            if (!s) {
                ts_graph_free(g);
                continue;
            }
            float xs[4] = {5, 6, 7, 8};
            ts_tensor *x = NULL, *out[2] = {NULL, NULL}, *again[2] = {NULL, NULL};
            ts_tensor_wrap(TS_DTYPE_F32, 1, (int64_t[]){4}, xs, &x, NULL);
            int n = ts_graph_num_outputs(g);
            CHECK(ts_session_run(s, 1, &x, n, out, &err) == TS_OK);
            CHECK(ts_session_run(s, 1, &x, n, again, &err) == TS_OK);
            for (int o = 0; o < n; o++) {
                char *d = ts_tensor_data(out[o]);
                CHECK_MSG(out[o] != x && (d + 16 <= (char *)xs || d >= (char *)(xs + 4)), "%zu/%d", i, o);
                CHECK_MSG(ts_tensor_data(again[o]) != d, "%zu/%d: a constant handed out twice", i, o);
                if (o) CHECK(ts_tensor_data(out[0]) != d);
                ((float *)d)[0] = -1;   /* the caller's to write */
            }
            ts_tensor_release(again[0]);
            ts_tensor_release(again[1]);
            /* writing an output changed nothing the graph holds */
            CHECK(ts_session_run(s, 1, &x, n, again, &err) == TS_OK);
            CHECK(((float *)ts_tensor_data(again[0]))[0] != -1);
            for (int o = 0; o < 2; o++) {
                ts_tensor_release(out[o]);
                ts_tensor_release(again[o]);
            }
            ts_tensor_release(x);
            ts_session_free(s);
            ts_graph_free(g);
        }
}

/* ts_build_inline: a callee with a region and a symbolic dim, called twice
 * (text out); bad calls are clear errors. */
static void test_inline(void)
{
    const char *src = "graph @callee(%a: f32[n, 2], %p: bool[]) {\n"
                      "  %r: f32[n, 2] = if(%p, %a) then(%t: f32[n, 2]) {\n"
                      "    %e: f32[n, 2] = exp(%t)\n"
                      "    yield %e\n"
                      "  } else(%u: f32[n, 2]) {\n"
                      "    yield %u\n"
                      "  }\n"
                      "  %s: f32[2] = reduce_sum(%r) {axes=[0]}\n"
                      "  return %s\n"
                      "}\n";
    ts_err err = {0};
    ts_graph *callee = NULL, *g = NULL;
    ts_builder *b = NULL;
    CHECK(ts_graph_parse(src, strlen(src), "callee", &callee, &err) == TS_OK);
    CHECK(ts_graph_new("caller", &g, &err) == TS_OK && ts_graph_builder(g, &b, &err) == TS_OK);
    ts_value *x = ts_build_input(b, "x", "f32[n, 2]"), *p = ts_build_input(b, "p", "bool[]");
    ts_value *out[2] = {0}, *out2[1] = {0};
    int n = -1;
    CHECK(ts_build_inline(b, callee, 2, (ts_value *[]){x, p}, 2, out, &n) == TS_OK && n == 1);
    CHECK(ts_build_inline(b, callee, 2, (ts_value *[]){x, p}, 1, out2, &n) == TS_OK && n == 1);
    ts_build_outputs(b, 2, (ts_value *[]){out[0], out2[0]}, NULL);
    CHECK_MSG(ts_builder_status(b, &err) == TS_OK, "%s", err.msg);
    char *txt = text_of(g);
    CHECK_STR(txt, "graph @caller(%x: f32[n, 2], %p: bool[]) {\n"
                   "  %0: f32[n, 2] = if(%p, %x) then(%1: f32[n, 2]) {\n"
                   "    %2: f32[n, 2] = exp(%1)\n"
                   "    yield %2\n"
                   "  } else(%3: f32[n, 2]) {\n"
                   "    yield %3\n"
                   "  }\n"
                   "  %4: f32[2] = reduce_sum(%0) {axes=[0]}\n"
                   "  %5: f32[n, 2] = if(%p, %x) then(%6: f32[n, 2]) {\n"
                   "    %7: f32[n, 2] = exp(%6)\n"
                   "    yield %7\n"
                   "  } else(%8: f32[n, 2]) {\n"
                   "    yield %8\n"
                   "  }\n"
                   "  %9: f32[2] = reduce_sum(%5) {axes=[0]}\n"
                   "  return %4, %9\n"
                   "}\n");
    ts_free_string(txt);
    ts_value *y = ts_build_input(b, "y", "f32[3, 2]");
    ts_build_inline(b, callee, 2, (ts_value *[]){y, p}, 1, out, &n);
    expect_error(b, TS_ERR_INVALID_ARG, "input 0 is f32[n, 2], the value bound to it f32[3, 2]");
    ts_builder_free(b);
    CHECK(ts_graph_builder(g, &b, &err) == TS_OK);
    ts_build_inline(b, callee, 1, &x, 1, out, &n);
    expect_error(b, TS_ERR_INVALID_ARG, "1 values for 2 inputs");
    ts_builder_free(b);
    ts_graph_free(g);
    ts_graph_free(callee);
}

int main(void)
{
    test_text();
    test_regions();
    test_errors();
    test_owned_outputs();
    test_inline();
    return check_report();
}
