/* test_text.c — the IR text form: every file under tests/ir/ is canonical
 * (reading and printing it gives its exact bytes), graphs built in C
 * round-trip print -> parse -> print byte for byte, and bad text fails with
 * the right code and a FILE:LINE:COL message. Runs from the repo root. */
#include "ir/ir.h"

#include "check.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- helpers ---------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

static char *print(const ts_graph *g)
{
    char *s = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_to_text(g, &s, &err) == TS_OK, "%s", err.msg);
    return s;
}

/* print -> parse -> print must repeat the first text exactly. Returns the
 * first text (free with ts_free_string) or NULL. */
static char *round_trip(const ts_graph *g, const char *label)
{
    char *a = print(g);
    if (!a) return NULL;
    ts_graph *g2 = NULL;
    ts_err err = {0};
    ts_status s = ts_graph_parse(a, strlen(a), label, &g2, &err);
    CHECK_MSG(s == TS_OK, "%s: %s\n%s", label, err.msg, a);
    if (s == TS_OK) {
        char *b = print(g2);
        CHECK_MSG(b && strcmp(a, b) == 0, "%s: second print differs:\n%s\n---\n%s", label, a, b ? b : "");
        ts_free_string(b);
    }
    ts_graph_free(g2);
    return a;
}

static ts_graph *parse_ok(const char *text)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(text, strlen(text), "t.ir", &g, &err) == TS_OK, "%s\n%s", err.msg, text);
    return g;
}

/* text must fail with `code` and a message containing `want`. */
static void parse_bad(const char *text, ts_status code, const char *want)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    ts_status s = ts_graph_parse(text, strlen(text), "t.ir", &g, &err);
    CHECK_MSG(s == code, "got %s (%s), expected %s for:\n%s", ts_status_name(s), err.msg,
              ts_status_name(code), text);
    CHECK_MSG(g == NULL, "graph handed out on failure");
    CHECK_MSG(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    ts_graph_free(g);
}

/* parse, then expect the canonical print `want`. */
static void parse_prints(const char *text, const char *want)
{
    ts_graph *g = parse_ok(text);
    if (!g) return;
    char *s = print(g);
    CHECK_STR(s, want);
    ts_free_string(s);
    ts_graph_free(g);
}

/* ---- the corpus ------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void check_file(const char *path)
{
    size_t len;
    char *text = read_file(path, &len);
    CHECK_MSG(text != NULL, "cannot read %s", path);
    ts_graph *g = NULL;
    ts_err err = {0};
    ts_status s = ts_graph_load_file(path, &g, &err);
    CHECK_MSG(s == TS_OK, "%s", err.msg);
    if (s == TS_OK && text) {
        char *out = round_trip(g, path);
        CHECK_MSG(out && strcmp(out, text) == 0, "%s is not canonical; it prints as:\n%s", path, out ? out : "");
        ts_free_string(out);
    }
    ts_graph_free(g);
    free(text);
}

/* Every .ir file under dir, recursively. */
static int walk_corpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            count += walk_corpus(path);
        } else if (ends_with(path, ".ir")) {
            check_file(path);
            count++;
        }
    }
    closedir(d);
    return count;
}

/* ---- graphs built in C -------------------------------------------------------- */

static ts_node *node(ts_graph *g, ts_block *b, ts_op op, int n_in, ts_value *const *in, ts_attr *attrs,
                     int n_regions, ts_block *const *regions)
{
    ts_node *n = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_ir_node_new(g, b, NULL, op, n_in, in, attrs, n_regions, regions, &n, &err) == TS_OK,
              "%s", err.msg);
    return n;
}

static ts_value *constant(ts_graph *g, ts_block *b, ts_tensor *t)
{
    ts_attr *a = ts_ir_attrs_new(g, TS_OP_CONST);
    CHECK(ts_attr_set_tensor(g, TS_OP_CONST, a, "value", t) == TS_OK);
    ts_tensor_release(t);
    ts_node *n = node(g, b, TS_OP_CONST, 0, NULL, a, 0, NULL);
    return n ? n->out[0] : NULL;
}

static ts_tensor *tensor_bits(ts_dtype dt, int64_t n, const void *bits)
{
    ts_tensor *t = NULL;
    CHECK(ts_tensor_new(dt, 1, &n, &t, NULL) == TS_OK);
    if (t) memcpy(t->data, bits, t->nbytes);
    return t;
}

static ts_graph *new_graph(const char *name)
{
    ts_graph *g = NULL;
    CHECK(ts_ir_graph_new(name, &g, NULL) == TS_OK);
    return g;
}

/* The constant line of a one-const graph, printed. */
static void check_const_text(ts_dtype dt, int64_t n, const void *bits, const char *want_value)
{
    ts_graph *g = new_graph("c");
    ts_value *v = constant(g, g->body, tensor_bits(dt, n, bits));
    ts_ir_block_set_results(g, g->body, 1, &v, NULL);
    char *text = round_trip(g, "const");
    char want[512];
    snprintf(want, sizeof want, "{value=%s}", want_value);
    CHECK_MSG(text && strstr(text, want), "want %s in:\n%s", want, text ? text : "");
    ts_free_string(text);
    ts_graph_free(g);
}

static void test_constants(void)
{
    float f32[] = {0.1f, 1.0f / 3, -0.0f, 1e-45f, 1.17549435e-38f, 3.40282347e38f, INFINITY, -INFINITY, NAN, 16777216.0f};
    check_const_text(TS_DTYPE_F32, 10, f32,
                     "[0.1, 0.33333334, -0, 1e-45, 1.1754944e-38, 3.4028235e+38, inf, -inf, nan, 16777216]");
    double f64[] = {0.1, 1.0 / 3, -0.0, 4.9406564584124654e-324, 1.7976931348623157e308, 0.1 + 0.2, NAN, -1e300};
    check_const_text(TS_DTYPE_F64, 8, f64,
                     "[0.1, 0.3333333333333333, -0, 5e-324, 1.7976931348623157e+308, 0.30000000000000004, nan, -1e+300]");
    uint16_t f16[] = {0x3c00, 0x2e66, 0x7bff, 0x0001, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3555};
    check_const_text(TS_DTYPE_F16, 9, f16, "[1, 0.1, 6.55e+04, 6e-08, -0, inf, -inf, nan, 0.3333]");
    uint16_t bf16[] = {0x3f80, 0x3dcd, 0x7f7f, 0x0001, 0x8000, 0x7fc1, 0xff80};
    check_const_text(TS_DTYPE_BF16, 7, bf16, "[1, 0.1, 3.39e+38, 9e-41, -0, nan, -inf]");
    /* NaNs of any sign and payload print alike, so they splat together */
    uint32_t nans[] = {0x7fc00000, 0xffc00000, 0x7f800001};
    check_const_text(TS_DTYPE_F32, 3, nans, "splat(nan)");
    /* -0 and 0 differ in bits and print differently: no splat */
    float zeros[] = {0.0f, -0.0f};
    check_const_text(TS_DTYPE_F32, 2, zeros, "[0, -0]");
    uint8_t bools[] = {0, 1, 2};  /* any nonzero byte is true */
    check_const_text(TS_DTYPE_BOOL, 3, bools, "[0, 1, 1]");
    uint8_t trues[] = {1, 7};
    check_const_text(TS_DTYPE_BOOL, 2, trues, "splat(1)");
    int8_t i8[] = {-128, 127, 0};
    check_const_text(TS_DTYPE_I8, 3, i8, "[-128, 127, 0]");
    uint8_t u8[] = {255, 0};
    check_const_text(TS_DTYPE_U8, 2, u8, "[255, 0]");
    int16_t i16[] = {-32768, 32767};
    check_const_text(TS_DTYPE_I16, 2, i16, "[-32768, 32767]");
    uint16_t u16[] = {65535, 1};
    check_const_text(TS_DTYPE_U16, 2, u16, "[65535, 1]");
    int32_t i32[] = {INT32_MIN, INT32_MAX};
    check_const_text(TS_DTYPE_I32, 2, i32, "[-2147483648, 2147483647]");
    uint32_t u32[] = {UINT32_MAX, 5};
    check_const_text(TS_DTYPE_U32, 2, u32, "[4294967295, 5]");
    int64_t i64[] = {INT64_MIN, INT64_MAX, -1};
    check_const_text(TS_DTYPE_I64, 3, i64, "[-9223372036854775808, 9223372036854775807, -1]");
    uint64_t u64[] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
    check_const_text(TS_DTYPE_U64, 3, u64, "splat(18446744073709551615)");
    /* the storage types print their values and read back to their codes */
    uint8_t e4m3[] = {0x7e, 0x01, 0xb8, 0x7f, 0x80};
    check_const_text(TS_DTYPE_F8E4M3FN, 5, e4m3, "[448, 0.001953125, -1, nan, -0]");
    uint8_t e5m2[] = {0x7b, 0x7c, 0xfc, 0x01};
    check_const_text(TS_DTYPE_F8E5M2, 4, e5m2, "[57344, inf, -inf, 1.52587890625e-05]");
    uint8_t fnuz[] = {0x7f, 0x80, 0x00};
    check_const_text(TS_DTYPE_F8E4M3FNUZ, 3, fnuz, "[240, nan, 0]");
    uint8_t e8m0[] = {0, 127, 254, 255};
    check_const_text(TS_DTYPE_F8E8M0, 4, e8m0, "[5.877471754111438e-39, 1, 1.7014118346046923e+38, nan]");
    uint8_t f4[] = {0x7, 0xf, 0x1, 0x8};
    check_const_text(TS_DTYPE_F4E2M1, 4, f4, "[6, -6, 0.5, -0]");
    int8_t i4[] = {-8, 7, -1};
    check_const_text(TS_DTYPE_I4, 3, i4, "[-8, 7, -1]");
    uint8_t u2[] = {3, 0};
    check_const_text(TS_DTYPE_U2, 2, u2, "[3, 0]");
    float one[] = {2.5f};
    check_const_text(TS_DTYPE_F32, 1, one, "[2.5]");  /* one element: a list, not a splat */
    check_const_text(TS_DTYPE_F32, 0, one, "[]");

    /* every f16 bit pattern reads back to itself (NaNs to the quiet NaN) */
    static uint16_t all[65536];
    for (int i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    ts_graph *g = new_graph("all_f16");
    ts_value *v = constant(g, g->body, tensor_bits(TS_DTYPE_F16, 65536, all));
    ts_ir_block_set_results(g, g->body, 1, &v, NULL);
    char *text = round_trip(g, "all_f16");
    ts_graph *g2 = text ? parse_ok(text) : NULL;
    if (g2) {
        const uint16_t *back = g2->body->results[0]->def->attrs[0].t->data;
        int bad = 0;
        for (int i = 0; i < 65536; i++) {
            bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
            if (nan ? (back[i] & 0x7fff) != 0x7e00 : back[i] != i) bad++;
        }
        CHECK_MSG(bad == 0, "%d f16 patterns changed", bad);
    }
    ts_graph_free(g2);
    ts_free_string(text);
    ts_graph_free(g);
}

/* f32 values chosen to need every digit count 1..9 read back exactly. */
static void test_float_digits(void)
{
    uint32_t seed = 12345;
    enum { N = 4096 };
    static float vals[N];
    for (int i = 0; i < N; i++) {
        seed = seed * 1664525u + 1013904223u;
        uint32_t bits = seed;
        memcpy(&vals[i], &bits, 4);
    }
    ts_graph *g = new_graph("random_f32");
    ts_value *v = constant(g, g->body, tensor_bits(TS_DTYPE_F32, N, vals));
    ts_ir_block_set_results(g, g->body, 1, &v, NULL);
    char *text = round_trip(g, "random_f32");
    ts_graph *g2 = text ? parse_ok(text) : NULL;
    if (g2) {
        const uint32_t *back = g2->body->results[0]->def->attrs[0].t->data;
        int bad = 0;
        for (int i = 0; i < N; i++) {
            uint32_t want;
            memcpy(&want, &vals[i], 4);
            if (!isnan(vals[i]) && back[i] != want) bad++;
        }
        CHECK_MSG(bad == 0, "%d random f32 values changed", bad);
    }
    ts_graph_free(g2);
    ts_free_string(text);
    ts_graph_free(g);
}

/* The fewest digits, by counting up: what the printer must agree with. */
static void shortest(char *out, size_t cap, ts_dtype dt, const void *bits)
{
    double v = ts_elem_get_f64(dt, bits, 0);
    if (isnan(v)) {
        snprintf(out, cap, "nan");
        return;
    }
    for (int d = 1; d <= 17; d++) {
        unsigned char back[8] = {0};
        snprintf(out, cap, "%.*g", d, v);
        ts_elem_set_f64(dt, back, 0, strtod(out, NULL));
        if (memcmp(back, bits, ts_dtype_size(dt)) == 0) return;
    }
}

/* Print n elements of dt and compare each token with shortest(). */
static void check_shortest(ts_dtype dt, int64_t n, const void *data)
{
    ts_graph *g = new_graph("digits");
    ts_value *v = constant(g, g->body, tensor_bits(dt, n, data));
    ts_ir_block_set_results(g, g->body, 1, &v, NULL);
    char *text = print(g);
    const char *p = text ? strstr(text, "{value=[") : NULL;
    int bad = 0;
    for (int64_t i = 0; p && i < n; i++) {
        p += i ? 2 : 8;
        size_t len = strcspn(p, ",]");
        char want[40];
        shortest(want, sizeof want, dt, (const char *)data + (size_t)i * ts_dtype_size(dt));
        if (strlen(want) != len || memcmp(want, p, len) != 0) {
            if (bad++ < 5) fprintf(stderr, "%s element %lld: printed %.*s, shortest is %s\n", ts_dtype_name(dt),
                                   (long long)i, (int)len, p, want);
        }
        p += len;
    }
    CHECK_MSG(p && bad == 0, "%d %s elements are not printed with the fewest digits", bad, ts_dtype_name(dt));
    ts_free_string(text);
    ts_graph_free(g);
}

static void test_fewest_digits(void)
{
    enum { N = 20000 };
    static uint32_t f32[N + 300];
    static uint64_t f64[N + 2100];
    static uint16_t half[65536];
    uint64_t x = 88172645463325252u;
    int n32 = 0, n64 = 0;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        f32[n32++] = (uint32_t)x;
        f64[n64++] = x;
    }
    for (uint32_t e = 0; e < 255; e++) f32[n32++] = e << 23;               /* powers of two */
    for (uint64_t e = 0; e < 2047; e++) f64[n64++] = e << 52;
    check_shortest(TS_DTYPE_F32, n32, f32);
    check_shortest(TS_DTYPE_F64, n64, f64);
    for (int i = 0; i < 65536; i++) half[i] = (uint16_t)i;
    check_shortest(TS_DTYPE_F16, 65536, half);
    check_shortest(TS_DTYPE_BF16, 65536, half);
}

static ts_type type_of(ts_dtype dt, int rank, ts_dim *dims)
{
    ts_type t = {dt, rank, dims};
    return t;
}

static ts_value *param(ts_graph *g, ts_block *b, ts_type t)
{
    ts_value *v = NULL;
    CHECK(ts_ir_block_add_param(g, b, &t, &v, NULL) == TS_OK);
    return v;
}

/* Unnamed values, a symbolic dim expression, sort, nonzero, naming rules. */
static void test_built_graph(void)
{
    ts_graph *g = new_graph("my-model");  /* not a NAME: printed as my_model */
    ts_dim batch, seq, prod, dims[2];
    CHECK(ts_dim_sym(g->syms, "batch", &batch, NULL) == TS_OK);
    CHECK(ts_dim_sym(g->syms, "seq", &seq, NULL) == TS_OK);
    CHECK(ts_dim_mul(g->syms, batch, seq, &prod, NULL) == TS_OK);
    dims[0] = prod;
    dims[1] = ts_dim_const(4);
    ts_value *x = param(g, g->body, type_of(TS_DTYPE_F32, 2, dims));
    ts_value *y = param(g, g->body, type_of(TS_DTYPE_F32, 2, dims));
    y->name = "3";                      /* numbered names skip 3 */
    ts_value *in[2] = {x, y};
    ts_node *add = node(g, g->body, TS_OP_ADD, 2, in, NULL, 0, NULL);
    ts_attr *a = ts_ir_attrs_new(g, TS_OP_SORT);
    ts_attr_set_int(g, TS_OP_SORT, a, "axis", 1);
    ts_node *sort = node(g, g->body, TS_OP_SORT, 1, &add->out[0], a, 0, NULL);
    ts_node *nz = node(g, g->body, TS_OP_NONZERO, 1, &sort->out[0], NULL, 0, NULL);
    ts_node *neg = node(g, g->body, TS_OP_NEG, 1, &add->out[0], NULL, 0, NULL);
    ts_node *neg2 = node(g, g->body, TS_OP_NEG, 1, &neg->out[0], NULL, 0, NULL);
    ts_node *bad = node(g, g->body, TS_OP_NEG, 1, &neg2->out[0], NULL, 0, NULL);
    if (!add || !sort || !nz || !neg || !neg2 || !bad) {
        ts_graph_free(g);
        return;
    }
    neg->out[0]->name = "y";
    neg2->out[0]->name = "y";           /* a duplicate: the second is numbered */
    bad->out[0]->name = "not a name";   /* unspellable: numbered */
    ts_value *res[4] = {sort->out[1], nz->out[0], neg2->out[0], bad->out[0]};
    ts_ir_block_set_results(g, g->body, 4, res, NULL);
    char *text = round_trip(g, "built");
    CHECK_STR(text,
              "graph @my_model(%0: f32[batch*seq, 4], %3: f32[batch*seq, 4]) {\n"
              "  %1: f32[batch*seq, 4] = add(%0, %3)\n"
              "  %2: f32[batch*seq, 4], %4: i64[batch*seq, 4] = sort(%1) {axis=1}\n"
              "  %5: i64[2, nnz0] = nonzero(%2)\n"
              "  %y: f32[batch*seq, 4] = neg(%1)\n"
              "  %6: f32[batch*seq, 4] = neg(%y)\n"
              "  %7: f32[batch*seq, 4] = neg(%6)\n"
              "  return %4, %5, %6, %7\n"
              "}\n");
    ts_free_string(text);
    ts_graph_free(g);
}

/* if and while built in C, regions with unnamed values. */
static void test_built_regions(void)
{
    ts_graph *g = new_graph("loop");
    ts_dim n;
    CHECK(ts_dim_sym(g->syms, "n", &n, NULL) == TS_OK);
    ts_value *p = param(g, g->body, type_of(TS_DTYPE_BOOL, 0, NULL));
    ts_value *x = param(g, g->body, type_of(TS_DTYPE_F32, 1, &n));
    ts_block *th, *el, *cond, *body;
    ts_ir_block_new(g, &th, NULL);
    ts_ir_block_new(g, &el, NULL);
    ts_value *ta = param(g, th, type_of(TS_DTYPE_F32, 1, &n));
    ts_value *ea = param(g, el, type_of(TS_DTYPE_F32, 1, &n));
    ts_node *tn = node(g, th, TS_OP_EXP, 1, &ta, NULL, 0, NULL);
    if (!tn) return;
    ts_ir_block_set_results(g, th, 1, &tn->out[0], NULL);
    ts_ir_block_set_results(g, el, 1, &ea, NULL);
    ts_value *in[2] = {p, x};
    ts_block *regions[2] = {th, el};
    ts_node *iff = node(g, g->body, TS_OP_IF, 2, in, NULL, 2, regions);
    ts_ir_block_new(g, &cond, NULL);
    ts_ir_block_new(g, &body, NULL);
    ts_value *cx = param(g, cond, type_of(TS_DTYPE_F32, 1, &n));
    ts_value *bx = param(g, body, type_of(TS_DTYPE_F32, 1, &n));
    ts_value *sum_in[1] = {cx};
    ts_attr *a = ts_ir_attrs_new(g, TS_OP_REDUCE_SUM);
    ts_attr_set_ints(g, TS_OP_REDUCE_SUM, a, "axes", 1, (int64_t[]){0});
    ts_node *sum = node(g, cond, TS_OP_REDUCE_SUM, 1, sum_in, a, 0, NULL);
    float zero = 0;
    ts_value *z = constant(g, cond, tensor_bits(TS_DTYPE_F32, 1, &zero));
    ts_attr *ra = ts_ir_attrs_new(g, TS_OP_RESHAPE);
    ts_attr_set_dims(g, TS_OP_RESHAPE, ra, "shape", 0, NULL);
    ts_node *zs = node(g, cond, TS_OP_RESHAPE, 1, &z, ra, 0, NULL);
    if (!sum || !zs || !iff) return;
    ts_value *lt_in[2] = {sum->out[0], zs->out[0]};
    ts_node *lt = node(g, cond, TS_OP_LT, 2, lt_in, NULL, 0, NULL);
    ts_node *step = node(g, body, TS_OP_TANH, 1, &bx, NULL, 0, NULL);
    if (!lt || !step) return;
    ts_ir_block_set_results(g, cond, 1, &lt->out[0], NULL);
    ts_ir_block_set_results(g, body, 1, &step->out[0], NULL);
    ts_block *wr[2] = {cond, body};
    ts_node *loop = node(g, g->body, TS_OP_WHILE, 1, &iff->out[0], NULL, 2, wr);
    if (!loop) return;
    ts_ir_block_set_results(g, g->body, 1, &loop->out[0], NULL);
    char *text = round_trip(g, "regions");
    CHECK_STR(text,
              "graph @loop(%0: bool[], %1: f32[n]) {\n"
              "  %2: f32[n] = if(%0, %1) then(%3: f32[n]) {\n"
              "    %4: f32[n] = exp(%3)\n"
              "    yield %4\n"
              "  } else(%5: f32[n]) {\n"
              "    yield %5\n"
              "  }\n"
              "  %6: f32[n] = while(%2) cond(%7: f32[n]) {\n"
              "    %8: f32[] = reduce_sum(%7) {axes=[0]}\n"
              "    %9: f32[1] = const() {value=[0]}\n"
              "    %10: f32[] = reshape(%9) {shape=[]}\n"
              "    %11: bool[] = lt(%8, %10)\n"
              "    yield %11\n"
              "  } body(%12: f32[n]) {\n"
              "    %13: f32[n] = tanh(%12)\n"
              "    yield %13\n"
              "  }\n"
              "  return %6\n"
              "}\n");
    ts_free_string(text);
    ts_graph_free(g);
}

static ts_status same_shape(ts_graph *g, const ts_node *n, ts_type *outs, int cap, int *count, ts_err *err)
{
    outs[0] = n->in[0]->type;
    *count = 1;
    return TS_OK;
}

static void test_custom(void)
{
    ts_custom_op op = {"test.twice", same_shape, NULL};
    CHECK(ts_custom_register(&op, NULL) == TS_OK);
    const char *text =
        "graph @c(%x: f32[4]) {\n"
        "  %y: f32[4] = custom(%x) {name=\"test.twice\"}\n"
        "  %z: f32[4] = custom(%y) {name=\"test.twice\", params=[1, -2]}\n"
        "  %w: f32[4] = custom(%z) {name=\"test.\\\"q\\\"\\\\\\n\\t\\x01\\xff\"}\n"
        "  return %z\n"
        "}\n";
    ts_custom_op op2 = {"test.\"q\"\\\n\t\x01\xff", same_shape, NULL};
    CHECK(ts_custom_register(&op2, NULL) == TS_OK);
    parse_prints(text, text);
    parse_bad("graph @c(%x: f32[4]) {\n  %y = custom(%x) {name=\"nope\"}\n  return\n}\n", TS_ERR_UNSUPPORTED,
              "t.ir:2:8: custom: no kernel named 'nope'");
}

/* ---- lenient reading ----------------------------------------------------------- */

static void test_lenient(void)
{
    /* omitted types, attributes in any order, comments, odd blanks, CRLF,
     * true/false, a splat of one element */
    parse_prints("# a comment\r\n graph   @g ( %x : f32 [ 2 , n ] ) {   # trailing\r\n"
                 "%s = reduce_window(%x) {pad_hi=[0, 0], pad_lo=[0,0], kind=sum, dilations=[1, 1],\n"
                 "   strides=[1, 1], window=[1, 1]}\n"
                 "\t%b: bool[2] = const() {value=[true, false]}\n"
                 "%o: f32[1] = const() {value=splat(-1.50)}\n"
                 "%v, %i = sort(%x) {axis = 0, descending = 0}  return %s , %b,%o,%v\n"
                 "}   # done\n",
                 "graph @g(%x: f32[2, n]) {\n"
                 "  %s: f32[2, n] = reduce_window(%x) {kind=sum, window=[1, 1], strides=[1, 1], dilations=[1, 1], "
                 "pad_lo=[0, 0], pad_hi=[0, 0]}\n"
                 "  %b: bool[2] = const() {value=[1, 0]}\n"
                 "  %o: f32[1] = const() {value=[-1.5]}\n"
                 "  %v: f32[2, n], %i: i64[2, n] = sort(%x) {axis=0}\n"
                 "  return %s, %b, %o, %v\n"
                 "}\n");
    /* a data-dependent size takes the written symbol; omitted, a fresh one */
    parse_prints("graph @g(%x: f32[4]) {\n  %a: i64[1, k] = nonzero(%x)\n  %b = nonzero(%x)\n  return %a, %b\n}\n",
                 "graph @g(%x: f32[4]) {\n  %a: i64[1, k] = nonzero(%x)\n  %b: i64[1, nnz1] = nonzero(%x)\n"
                 "  return %a, %b\n}\n");
    /* dims are canonicalised; numbers in many spellings */
    parse_prints("graph @g(%x: f32[(n+2-3)/1+1, 2*m*1]) {\n"
                 "  %c: f64[4] = const() {value=[1e0, 0.5e1, 0.250, -0.0]}\n"
                 "  return %x, %c\n}\n",
                 "graph @g(%x: f32[n, 2*m]) {\n  %c: f64[4] = const() {value=[1, 5, 0.25, -0]}\n"
                 "  return %x, %c\n}\n");
    parse_prints("graph @g() {\n  return\n}\n", "graph @g() {\n  return\n}\n");
    parse_prints("graph @g(){return}", "graph @g() {\n  return\n}\n");
    /* empty attribute braces are fine */
    parse_prints("graph @g(%x: f32[]) {\n  %y = neg(%x) {}\n  return %y\n}\n",
                 "graph @g(%x: f32[]) {\n  %y: f32[] = neg(%x)\n  return %y\n}\n");
}

/* ---- errors ---------------------------------------------------------------------- */

static void test_errors(void)
{
    const ts_status P = TS_ERR_PARSE;
    parse_bad("", P, "t.ir:1:1: expected 'graph' but found end of input");
    parse_bad("graph @g(%x: f32[4]) {\n  %y: f32[4] = neg(%z)\n  return %y\n}\n", P,
              "t.ir:2:20: use of undefined value %z");
    parse_bad("graph @g(%x: f32[4]) {\n  %x: f32[4] = neg(%x)\n  return %x\n}\n", P,
              "t.ir:2:3: value %x is defined twice");
    parse_bad("graph @g(%x: f32[4], %x: f32[4]) {\n  return\n}\n", P, "t.ir:1:22: value %x is defined twice");
    parse_bad("graph @g(%x: f32[4]) {\n  %y = neg(%y)\n  return %y\n}\n", P, "use of undefined value %y");
    parse_bad("graph @g(%x: f32[4]) {\n  %y: f32[4] = frob(%x)\n  return %y\n}\n", P, "t.ir:2:16: unknown op 'frob'");
    parse_bad("graph @g(%x: f32[4]) {\n  %y: f32[4] = neg(%x) {axis=1}\n  return %y\n}\n", P,
              "t.ir:2:25: neg has no attributes, but 'axis' is given");
    parse_bad("graph @g(%x: f32[4]) {\n  %v, %i = sort(%x) {axis=0, axes=1}\n  return\n}\n", P,
              "t.ir:2:30: sort has no attribute 'axes' (it has: axis, descending)");
    parse_bad("graph @g(%x: f32[4]) {\n  %v, %i = sort(%x) {axis=0, axis=0}\n  return\n}\n", P,
              "t.ir:2:30: attribute 'axis' is given twice");
    parse_bad("graph @g(%x: f32[4]) {\n  %v, %i = sort(%x)\n  return\n}\n", P, "t.ir:2:12: sort needs attribute 'axis'");
    parse_bad("graph @g(%x: f32[4]) {\n  %v = sort(%x) {axis=0}\n  return\n}\n", P,
              "t.ir:2:8: sort yields 2 results but the line names 1");
    parse_bad("graph @g(%x: f32[4]) {\n  neg(%x)\n  return\n}\n", P, "neg yields 1 result but the line names 0");
    parse_bad("graph @g(%x: f32[4]) {\n  %y: f32[5] = neg(%x)\n  return %y\n}\n", TS_ERR_SHAPE,
              "t.ir:2:3: %y is declared f32[5] but neg yields f32[4]");
    parse_bad("graph @g(%x: f32[4]) {\n  %y: i64[1, 4] = nonzero(%x)\n  return %y\n}\n", TS_ERR_SHAPE,
              "(a data-dependent size is written as a symbol)");
    parse_bad("graph @g(%x: f32[4], %y: f32[5]) {\n  %z = add(%x, %y)\n  return %z\n}\n", TS_ERR_SHAPE,
              "t.ir:2:8: add: operands have different types f32[4] and f32[5]");
    parse_bad("graph @g(%x: bool[4]) {\n  %z = exp(%x)\n  return %z\n}\n", TS_ERR_SHAPE, "t.ir:2:8: exp: operand 0 is bool");
    parse_bad("graph @g(%x: f32[4]) {\n  %z = add(%x)\n  return %z\n}\n", TS_ERR_INVALID_MODEL,
              "t.ir:2:8: add takes 2 operands, got 1");
    /* constants */
    parse_bad("graph @g() {\n  %c: i8[2] = const() {value=[1, 128]}\n  return %c\n}\n", P,
              "t.ir:2:34: 128 is out of range for i8");
    parse_bad("graph @g() {\n  %c: u8[1] = const() {value=[-1]}\n  return %c\n}\n", P, "-1 is out of range for u8");
    parse_bad("graph @g() {\n  %c: u64[1] = const() {value=[18446744073709551616]}\n  return %c\n}\n", P,
              "out of range for u64");
    parse_bad("graph @g() {\n  %c: bool[1] = const() {value=[2]}\n  return %c\n}\n", P, "2 is out of range for bool");
    parse_bad("graph @g() {\n  %c: i32[1] = const() {value=[1.5]}\n  return %c\n}\n", P,
              "expected an integer for i32 but found '1.5'");
    parse_bad("graph @g() {\n  %c: f32[3] = const() {value=[1, 2]}\n  return %c\n}\n", P,
              "t.ir:2:31: 2 elements for f32[3], which holds 3");
    parse_bad("graph @g() {\n  %c: f32[1] = const() {value=[1, 2]}\n  return %c\n}\n", P,
              "t.ir:2:35: more than 1 elements for f32[1]");
    parse_bad("graph @g() {\n  %c: f32[n] = const() {value=splat(0)}\n  return %c\n}\n", P,
              "a constant needs a constant shape, not f32[n]");
    parse_bad("graph @g() {\n  %c = const() {value=[1]}\n  return %c\n}\n", P, "none is declared");
    parse_bad("graph @g() {\n  %c: f32[1000000000] = const() {value=splat(0)}\n  return %c\n}\n", P,
              "over the text form's limit");
    parse_bad("graph @g() {\n  %c: f32[4294967296, 4294967296] = const() {value=[]}\n  return %c\n}\n", P,
              "element count overflows");
    parse_bad("graph @g() {\n  %c: f32[1] = const() {value=[1.5.2]}\n  return %c\n}\n", P, "malformed number '1.5.2'");
    parse_bad("graph @g() {\n  %c: f32[1] = const() {value=[1e]}\n  return %c\n}\n", P, "malformed number");
    parse_bad("graph @g() {\n  %c: f32[1] = const() {value=[.5]}\n  return %c\n}\n", P, "expected a number but found '.5'");
    parse_bad("graph @g() {\n  %c: f32[1] = const() {value=[nope]}\n  return %c\n}\n", P,
              "expected a number but found 'nope'");
    parse_bad("graph @g() {\n  %c: f32[1] = const() {value=[1]\n  return %c\n}\n", P, "expected '}' but found 'return'");
    /* integers and attributes */
    parse_bad("graph @g(%x: f32[4]) {\n  %v, %i = sort(%x) {axis=9223372036854775808}\n  return\n}\n", P,
              "9223372036854775808 is out of range for axis");
    parse_bad("graph @g() {\n  %i = iota() {dtype=f33, shape=[2], axis=0}\n  return\n}\n", P, "unknown dtype 'f33'");
    parse_bad("graph @g(%x: f32[4]) {\n  %c = cumulative(%x) {kind=avg, axis=0}\n  return\n}\n", P,
              "'avg' is not a value of kind (one of: sum, prod, max, min)");
    parse_bad("graph @g(%x: f32[4]) {\n  %y = custom(%x) {name=\"abc}\n  return\n}\n", P, "line break inside a string");
    parse_bad("graph @g(%x: f32[4]) {\n  %y = custom(%x) {name=\"abc", P, "t.ir:2:25: unterminated string");
    parse_bad("graph @g(%x: f32[4]) {\n  %y = custom(%x) {name=\"a\\q\"}\n  return\n}\n", P, "unknown escape");
    parse_bad("graph @g(%x: f32[4]) {\n  %y = custom(%x) {name=\"a\\x00\"}\n  return\n}\n", P, "cannot hold a NUL byte");
    parse_bad("graph @g(%x: f32[4]) {\n  %y = custom(%x) {name=\"a\\x4\"}\n  return\n}\n", P, "two hex digits");
    /* types and dims */
    parse_bad("graph @g(%x: f33[4]) {\n  return\n}\n", P, "t.ir:1:14: unknown dtype 'f33'");
    parse_bad("graph @g(%x: f32[-4]) {\n  return\n}\n", P, "t.ir:1:18: negative dimension -4");
    parse_bad("graph @g(%x: f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]) {\n  return\n}\n", P, "at most 16 dims");
    parse_bad("graph @g(%x: f32[n+]) {\n  return\n}\n", P, "t.ir:1:20:");
    parse_bad("graph @g(%x: f32[n/0]) {\n  return\n}\n", P, "t.ir:1:19:");
    parse_bad("graph @g(%x: f32[4) {\n  return\n}\n", P, "expected ']' but found ')'");
    /* names and structure */
    parse_bad("graph @g(%1x: f32[4]) {\n  return\n}\n", P, "t.ir:1:10: '%1x' is not a value name");
    parse_bad("graph @g(% x: f32[4]) {\n  return\n}\n", P, "'%' is not a value name");
    parse_bad("graph g() {\n  return\n}\n", P, "t.ir:1:7: expected '@' but found 'g'");
    parse_bad("graph @g() {\n  yield\n}\n", P, "t.ir:2:3: 'yield' here: the graph body ends with 'return'");
    parse_bad("graph @g() {\n  return\n}\n}\n", P, "t.ir:4:1: expected the end of the text after the graph but found '}'");
    parse_bad("graph @g() {\n  return\n", P, "t.ir:3:1: expected '}' but found end of input");
    parse_bad("graph @g() {\n", P, "t.ir:2:1: expected a node or 'return' but found end of input");
    const char nul[] = "graph @g() {\n  re\0turn\n}\n";
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK(ts_graph_parse(nul, sizeof nul - 1, NULL, &g, &err) == P && g == NULL);
    CHECK_MSG(strstr(err.msg, "<input>:2:5: NUL byte in the text"), "%s", err.msg);
    /* regions */
    const char *outer =
        "graph @g(%p: bool[], %x: f32[4]) {\n"
        "  %r = if(%p, %x) then(%a: f32[4]) {\n"
        "    %b = add(%a, %x)\n"
        "    yield %b\n"
        "  } else(%c: f32[4]) {\n"
        "    yield %c\n"
        "  }\n"
        "  return %r\n"
        "}\n";
    parse_bad(outer, P, "t.ir:3:18: %x is defined outside this region; regions are isolated from above");
    const char *inner =
        "graph @g(%p: bool[], %x: f32[4]) {\n"
        "  %r = if(%p, %x) then(%a: f32[4]) {\n"
        "    yield %a\n"
        "  } else(%c: f32[4]) {\n"
        "    yield %c\n"
        "  }\n"
        "  return %a\n"
        "}\n";
    parse_bad(inner, P, "t.ir:7:10: %a is defined inside another region and is not visible here");
    parse_bad("graph @g(%p: bool[], %x: f32[4]) {\n  %r = if(%p, %x) then(%a: f32[4]) {\n    yield %a\n  } "
              "otherwise(%c: f32[4]) {\n    yield %c\n  }\n  return %r\n}\n",
              P, "t.ir:4:5: expected region 'else' of if but found 'otherwise'");
    parse_bad("graph @g(%p: bool[], %x: f32[4]) {\n  %r = if(%p, %x) then(%a: f32[4]) {\n    return %a\n  }\n}\n", P,
              "t.ir:3:5: 'return' here");
    parse_bad("graph @g(%p: bool[], %x: f32[4]) {\n  %r = if(%p, %x) then(%a: f32[3]) {\n    yield %a\n  } "
              "else(%c: f32[4]) {\n    yield %c\n  }\n  return %r\n}\n",
              TS_ERR_SHAPE, "t.ir:2:8: if: region 'then' parameter 0 differs in type from its operand");

}

/* Region nesting: N ifs inside each other. */
static void test_depth(void)
{
    /* 64 levels parse; one more fails cleanly */
    for (int depth = 64; depth <= 65; depth++) {
        ts_buf b = {0};
        ts_buf_puts(&b, "graph @deep(%q0: bool[]) {\n");
        for (int i = 0; i < depth; i++)
            ts_buf_printf(&b, "%%r%d = if(%%q%d, %%q%d) then(%%q%d: bool[]) {\n", i, i, i, i + 1);
        for (int i = depth - 1; i >= 0; i--)
            ts_buf_printf(&b, "yield %%q%d\n} else(%%e%d: bool[]) {\nyield %%e%d\n}\n", i + 1, i, i);
        ts_buf_puts(&b, "return %r0\n}\n");
        ts_graph *g = NULL;
        ts_err err = {0};
        ts_status s = ts_graph_parse(b.data, b.len, "deep.ir", &g, &err);
        if (depth <= 64) {
            CHECK_MSG(s == TS_OK, "%s", err.msg);
            char *t = g ? round_trip(g, "deep") : NULL;
            ts_free_string(t);
        } else {
            CHECK_MSG(s == TS_ERR_PARSE && strstr(err.msg, "regions nest more than 64 deep"), "%s", err.msg);
        }
        ts_graph_free(g);
        ts_buf_free(&b);
    }
}

static void test_files(void)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK(ts_graph_load_file("tests/ir/no-such-file.ir", &g, &err) == TS_ERR_IO && g == NULL);
    CHECK_MSG(strstr(err.msg, "tests/ir/no-such-file.ir"), "%s", err.msg);
    ts_err_clear(&err);
    CHECK(ts_graph_load_file("tests/ir", &g, &err) == TS_ERR_IO && g == NULL);
    CHECK_MSG(strstr(err.msg, "'tests/ir'"), "%s", err.msg);
    CHECK(ts_graph_load_file(NULL, &g, NULL) == TS_ERR_INVALID_ARG);
    CHECK(ts_graph_parse(NULL, 3, "x", &g, NULL) == TS_ERR_INVALID_ARG);
    CHECK(ts_graph_to_text(NULL, NULL, NULL) == TS_ERR_INVALID_ARG);
    ts_free_string(NULL);
}

int main(void)
{
    int files = walk_corpus("tests/ir");
    CHECK_MSG(files >= 15, "only %d .ir files found under tests/ir (run from the repo root)", files);
    test_constants();
    test_float_digits();
    test_fewest_digits();
    test_built_graph();
    test_built_regions();
    test_custom();
    test_lenient();
    test_errors();
    test_depth();
    test_files();
    return check_report();
}
