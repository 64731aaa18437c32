/* test_coverage.c — keeps the primitive table whole: every op of ops.def
 * has a well-formed row (unique name, parsed schema), a shape rule, an
 * interpreter kernel, and at least one golden case under tests/ops — or a
 * line in `elsewhere` below saying where its tests live instead.
 * Run from the repository root (ctest does). */
#include "check.h"
#include "interp/interp.h"
#include "ir/ir.h"

#define OPS_DIR "tests/ops"

/* Ops tested outside tests/ops. The list only shrinks: an op listed here
 * that gains a case in tests/ops fails this test until its line goes.
 * declared_only: the kernel exists and must answer TS_ERR_UNSUPPORTED. */
static const struct {
    ts_op op;
    const char *where;
    bool declared_only;
} elsewhere[] = {
    {TS_OP_RNG_UNIFORM, "Philox known-answer tests in test_interp_layout.c", false},
    {TS_OP_CUSTOM, "registered kernels in test_interp_misc.c", false},
    {TS_OP_SEND, "declared only: needs a multi-process runtime", true},
    {TS_OP_RECV, "declared only: needs a multi-process runtime", true},
};

#define N_ELSEWHERE ((int)(sizeof elsewhere / sizeof elsewhere[0]))

static int elsewhere_index(ts_op op)
{
    for (int i = 0; i < N_ELSEWHERE; i++)
        if (elsewhere[i].op == op) return i;
    return -1;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

/* Names unique and found again by name; attribute and region counts match
 * the row's text; every attribute found again by name. */
static void test_table(void)
{
    for (int i = 0; i < TS_OP_COUNT; i++) {
        const ts_op_info *info = ts_op_get((ts_op)i);
        ts_op back = TS_OP_COUNT;
        CHECK_MSG(ts_op_from_name(info->name, strlen(info->name), &back) && back == (ts_op)i, "%s", info->name);
        for (int j = 0; j < i; j++)
            CHECK_MSG(strcmp(info->name, ts_op_get((ts_op)j)->name) != 0, "%s twice", info->name);
        CHECK_MSG(info->n_attrs == count_char(info->schema_text, ':'), "%s: %d attributes parsed from \"%s\"",
                  info->name, info->n_attrs, info->schema_text);
        for (int a = 0; a < info->n_attrs; a++)
            CHECK_MSG(ts_op_attr_index((ts_op)i, info->attrs[a].name) == a, "%s.%s", info->name, info->attrs[a].name);
        CHECK_MSG(info->n_regions == 0 || (info->flags & TS_OPF_CONTROL), "%s has regions but no CONTROL flag",
                  info->name);
    }
    ts_op op;
    CHECK(!ts_op_from_name("no_such_op", 10, &op));
}

static void test_slots(void)
{
    for (int i = 0; i < TS_OP_COUNT; i++) {
        const char *name = ts_op_get((ts_op)i)->name;
        CHECK_MSG(ts_ir_has_shape_rule((ts_op)i), "%s has no shape rule", name);
        CHECK_MSG(ts_interp_kernel_of((ts_op)i) != NULL, "%s has no interpreter kernel", name);
    }
}

static void test_cases(void)
{
    int counts[TS_OP_COUNT] = {0};
    ts_err err = {0};
    int files = ts_ir_count_op_cases(OPS_DIR, counts, &err);
    CHECK_MSG(files > 0, "%s: %s", OPS_DIR, files < 0 ? err.msg : "no .ir files");
    for (int i = 0; i < TS_OP_COUNT; i++) {
        const char *name = ts_op_get((ts_op)i)->name;
        int e = elsewhere_index((ts_op)i);
        if (e < 0)
            CHECK_MSG(counts[i] > 0, "%s: no case under %s (add one to scripts/gen_op_tests.py)", name, OPS_DIR);
        else
            CHECK_MSG(counts[i] == 0, "%s: %d case(s) under %s now: remove it from `elsewhere` (%s)", name,
                      counts[i], OPS_DIR, elsewhere[e].where);
    }
}

/* Load and run text; its status. */
static ts_status run_text(const char *text, int n_in, ts_tensor **in, int n_out, ts_tensor **out, ts_err *err)
{
    ts_graph *g = NULL;
    ts_session *s = NULL;
    ts_status st = ts_graph_parse(text, strlen(text), "declared_only", &g, err);
    if (st == TS_OK) st = ts_session_new(g, "interp", &s, err);
    if (st == TS_OK) st = ts_session_run(s, n_in, in, n_out, out, err);
    ts_session_free(s);
    ts_graph_free(g);
    return st;
}

/* send and recv parse, verify and reach their kernels, which decline. */
static void test_declared_only(void)
{
    static const char send_ir[] =
        "graph @t(%a: f32[2]) {\n"
        "  send(%a) {peer=1}\n"
        "  return\n"
        "}\n";
    static const char recv_ir[] =
        "graph @t() {\n"
        "  %r: f32[2] = recv() {peer=0, dtype=f32, shape=[2]}\n"
        "  return %r\n"
        "}\n";
    for (int i = 0; i < N_ELSEWHERE; i++) {
        if (!elsewhere[i].declared_only) continue;
        ts_op op = elsewhere[i].op;
        CHECK_MSG(op == TS_OP_SEND || op == TS_OP_RECV, "no declared-only check for %s", ts_op_get(op)->name);
    }
    ts_err err = {0};
    ts_tensor *x = NULL, *y = NULL;
    int64_t shape[1] = {2};
    CHECK(ts_tensor_new(TS_DTYPE_F32, 1, shape, &x, &err) == TS_OK);
    ts_status s = run_text(send_ir, 1, &x, 0, NULL, &err);
    CHECK_MSG(s == TS_ERR_UNSUPPORTED, "send: %s: %s", ts_status_name(s), err.msg);
    ts_err_clear(&err);
    s = run_text(recv_ir, 0, NULL, 1, &y, &err);
    CHECK_MSG(s == TS_ERR_UNSUPPORTED, "recv: %s: %s", ts_status_name(s), err.msg);
    ts_tensor_release(x);
    ts_tensor_release(y);
}

static void test_count_errors(void)
{
    int counts[TS_OP_COUNT] = {0};
    ts_err err = {0};
    CHECK(ts_ir_count_op_cases("tests/no/such/dir", counts, &err) == -1);
    CHECK(err.code == TS_ERR_IO);
    for (int i = 0; i < TS_OP_COUNT; i++) CHECK(counts[i] == 0);
}

int main(void)
{
    test_table();
    test_slots();
    test_cases();
    test_declared_only();
    test_count_errors();
    return check_report();
}
