/* ops_table.c — the operator table: every ONNX operator tessera assembles,
 * with the opset range each function handles. The rows live in one table
 * per family (ops_*.c) so that each family's file stays whole; this file
 * joins them, and test_onnx_table checks that no (op_type, opset) is
 * claimed twice.
 *
 * A family belongs to one domain (D18): the default domain's families are
 * listed in `families`, those of other domains in `other_domains` with the
 * domain's name. A row's opset range then refers to the model's import of
 * that domain (ai.onnx.ml 5 for TreeEnsemble, not the default opset). */
#include "frontend/onnx/onnx.h"

#include <string.h>

#define COUNT(a) (sizeof (a) / sizeof (a)[0])

static const onnx_op_entry *const families[] = {
    onnx_ops_elementwise, onnx_ops_reduce, onnx_ops_nn, onnx_ops_conv, onnx_ops_einsum, onnx_ops_deform,
    onnx_ops_shape, onnx_ops_pad, onnx_ops_index, onnx_ops_resize,
    onnx_ops_rnn, onnx_ops_control, onnx_ops_quant, onnx_ops_random, onnx_ops_misc, onnx_ops_signal, onnx_ops_loss,
    onnx_ops_attention, onnx_ops_newer, onnx_ops_sequence,
};

/* Families of the other domains; a domain may have several rows. */
static const struct {
    const char *domain;
    const onnx_op_entry *ops;
} other_domains[] = {
    {"ai.onnx.ml", onnx_ops_ml},
    {"ai.onnx.ml", onnx_ops_tree},
    {"ai.onnx.preview", onnx_ops_preview},
    {"ai.onnx.preview.training", onnx_ops_training},
};

bool onnx_default_domain(const char *domain)
{
    return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

bool onnx_known_domain(const char *domain)
{
    if (onnx_default_domain(domain)) return true;
    for (size_t d = 0; d < COUNT(other_domains); d++)
        if (strcmp(other_domains[d].domain, domain) == 0) return true;
    return false;
}

static const onnx_op_entry *find_in(const onnx_op_entry *e, const char *op_type, int opset)
{
    for (; e->op_type; e++)
        if (strcmp(e->op_type, op_type) == 0 && opset >= e->since && opset <= e->until) return e;
    return NULL;
}

onnx_op_fn onnx_find_op(const char *domain, const char *op_type, int opset)
{
    const onnx_op_entry *e = NULL;
    if (onnx_default_domain(domain)) {
        for (size_t f = 0; f < COUNT(families) && !e; f++) e = find_in(families[f], op_type, opset);
    } else {
        for (size_t d = 0; d < COUNT(other_domains) && !e; d++)
            if (strcmp(other_domains[d].domain, domain) == 0) e = find_in(other_domains[d].ops, op_type, opset);
    }
    return e ? e->fn : NULL;
}

void onnx_each_op(void (*fn)(const char *domain, const onnx_op_entry *e, void *ud), void *ud)
{
    for (size_t f = 0; f < COUNT(families); f++)
        for (const onnx_op_entry *e = families[f]; e->op_type; e++) fn("", e, ud);
    for (size_t d = 0; d < COUNT(other_domains); d++)
        for (const onnx_op_entry *e = other_domains[d].ops; e->op_type; e++) fn(other_domains[d].domain, e, ud);
}

/* ---- the public table (tessera.h) -------------------------------------------------- */

typedef struct row_walk {
    int want, at;
    const char *domain;
    const onnx_op_entry *e;
} row_walk;

static void count_row(const char *domain, const onnx_op_entry *e, void *ud)
{
    row_walk *w = ud;
    if (w->at++ == w->want) w->domain = domain, w->e = e;
}

int ts_onnx_op_count(void)
{
    row_walk w = {-1, 0, NULL, NULL};
    onnx_each_op(count_row, &w);
    return w.at;
}

ts_status ts_onnx_op_at(int i, const char **domain, const char **op_type, int *since, int *until, ts_err *err)
{
    row_walk w = {i, 0, NULL, NULL};
    if (i >= 0) onnx_each_op(count_row, &w);
    if (!w.e) return ts_err_set(err, TS_ERR_INVALID_ARG, "ONNX operator row %d: the table has %d rows", i, w.at);
    if (domain) *domain = w.domain;
    if (op_type) *op_type = w.e->op_type;
    if (since) *since = w.e->since;
    if (until) *until = w.e->until == INT_MAX ? -1 : w.e->until;
    return TS_OK;
}
