/* test_onnx_table.c — the ONNX operator table (ops_table.c) is whole: no
 * (domain, op_type, opset) is claimed by two rows, every range is sane,
 * onnx_find_op finds each row at both ends of its range in its own domain
 * and nowhere else, and the default domain answers to all its spellings. */
#include "check.h"
#include "frontend/onnx/onnx.h"

#include <limits.h>
#include <string.h>

#define MAX_ROWS 2000

typedef struct row {
    const char *domain;
    const onnx_op_entry *e;
} row;

static row rows[MAX_ROWS];
static int n_rows;

static void collect(const char *domain, const onnx_op_entry *e, void *ud)
{
    (void)ud;
    if (n_rows < MAX_ROWS) rows[n_rows].domain = domain, rows[n_rows++].e = e;
}

static void test_rows(void)
{
    onnx_each_op(collect, NULL);
    CHECK_MSG(n_rows > 200 && n_rows < MAX_ROWS, "%d rows", n_rows);
    for (int i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        CHECK_MSG(r->e->since >= 1 && r->e->since <= r->e->until && r->e->fn, "%s.%s: range %d..%d", r->domain,
                  r->e->op_type, r->e->since, r->e->until);
        CHECK_MSG(onnx_known_domain(r->domain), "%s: unknown domain '%s'", r->e->op_type, r->domain);
        CHECK_MSG(onnx_find_op(r->domain, r->e->op_type, r->e->since) == r->e->fn, "%s.%s at %d", r->domain,
                  r->e->op_type, r->e->since);
        if (r->e->until != INT_MAX)
            CHECK_MSG(onnx_find_op(r->domain, r->e->op_type, r->e->until) == r->e->fn, "%s.%s at %d", r->domain,
                      r->e->op_type, r->e->until);
        for (int j = i + 1; j < n_rows; j++) {
            const row *s = &rows[j];
            bool same = strcmp(r->domain, s->domain) == 0 && strcmp(r->e->op_type, s->e->op_type) == 0;
            CHECK_MSG(!same || r->e->until < s->e->since || s->e->until < r->e->since,
                      "%s.%s: rows %d..%d and %d..%d overlap", r->domain, r->e->op_type, r->e->since, r->e->until,
                      s->e->since, s->e->until);
        }
    }
}

static void test_domains(void)
{
    onnx_op_fn add = onnx_find_op("", "Add", 14);
    CHECK(add != NULL);
    CHECK(onnx_find_op(NULL, "Add", 14) == add && onnx_find_op("ai.onnx", "Add", 14) == add);
    CHECK(onnx_find_op("ai.onnx.ml", "Add", 14) == NULL);
    CHECK(onnx_find_op("com.microsoft", "Add", 14) == NULL);
    CHECK(onnx_default_domain(NULL) && onnx_default_domain("") && onnx_default_domain("ai.onnx"));
    CHECK(!onnx_default_domain("ai.onnx.ml"));
    CHECK(onnx_known_domain("ai.onnx.ml") && onnx_known_domain("ai.onnx.preview.training") &&
          onnx_known_domain("ai.onnx.preview"));
    CHECK(!onnx_known_domain("com.microsoft") && !onnx_known_domain("ai.onnx.mlx"));
    /* a row's range is in its own domain's opsets */
    CHECK(onnx_find_op("ai.onnx.ml", "TreeEnsemble", 5) != NULL);
    CHECK(onnx_find_op("ai.onnx.ml", "TreeEnsemble", 4) == NULL);
    CHECK(onnx_find_op("", "TreeEnsemble", 21) == NULL);
    CHECK(onnx_find_op("ai.onnx.preview.training", "Adam", 1) != NULL);
    CHECK(onnx_find_op("ai.onnx.preview", "FlexAttention", 1) != NULL);
    CHECK(onnx_find_op("", "Swish", 24) != NULL && onnx_find_op("", "Swish", 23) == NULL);
}

int main(void)
{
    test_rows();
    test_domains();
    return check_report();
}
