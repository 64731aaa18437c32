/* dot.c — a graph as Graphviz (ts_graph_to_dot): a box per node with its
 * result types, an ellipse per parameter and per return or yield, a
 * dashed cluster per region, edges labelled with the value's name. */
#include "ir/ir.h"

/* ---- the writer ------------------------------------------------------------------ */

static void dot_value(ts_buf *f, const ts_value *v)
{
    if (v->name) ts_buf_printf(f, "%%%s", v->name);
    else ts_buf_printf(f, "%%%u", v->id);
}

static void dot_endpoint(ts_buf *f, const ts_value *v)
{
    if (v->def) ts_buf_printf(f, "n%u", v->def->id);
    else ts_buf_printf(f, "v%u", v->id);
}

static void dot_type(ts_buf *f, const ts_type *t) { ts_type_print(f, t); }

static void dot_indent(ts_buf *f, int depth)
{
    for (int i = 0; i < depth; i++) ts_buf_puts(f, "  ");
}

/* The return/yield node of a block: "ret" for the body, y<owner>_<region>
 * for a region. */
static void dot_result_id(ts_buf *f, const ts_block *b)
{
    if (!b->parent) {
        ts_buf_puts(f, "ret");
        return;
    }
    int r = 0;
    while (r + 1 < b->parent->n_regions && b->parent->regions[r] != b) r++;
    ts_buf_printf(f, "y%u_%d", b->parent->id, r);
}

static void dot_decls(ts_buf *f, const ts_block *b, int depth);

static void dot_node(ts_buf *f, const ts_node *n, int depth)
{
    const ts_op_info *info = ts_op_get(n->op);
    dot_indent(f, depth);
    ts_buf_printf(f, "n%u [label=\"%s", n->id, info->name);
    for (int k = 0; k < n->n_out; k++) {
        ts_buf_puts(f, "\\n");
        dot_type(f, &n->out[k]->type);
    }
    ts_buf_puts(f, n->op == TS_OP_CONST ? "\", style=filled, fillcolor=\"#eeeeee\"];\n" : "\"];\n");
    for (int r = 0; r < n->n_regions; r++) {
        dot_indent(f, depth);
        ts_buf_printf(f, "subgraph cluster_n%u_%d {\n", n->id, r);
        dot_indent(f, depth + 1);
        ts_buf_printf(f, "label=\"%s %s\"; style=dashed;\n", info->name, r < info->n_regions ? info->region_names[r] : "?");
        dot_decls(f, n->regions[r], depth + 1);
        dot_indent(f, depth);
        ts_buf_puts(f, "}\n");
    }
}

/* Declarations only: an edge that names a node inside a cluster statement
 * would pull that node into the cluster, so edges come after, at the top. */
static void dot_decls(ts_buf *f, const ts_block *b, int depth)
{
    for (int i = 0; i < b->n_params; i++) {
        dot_indent(f, depth);
        ts_buf_printf(f, "v%u [shape=ellipse, label=\"", b->params[i]->id);
        dot_value(f, b->params[i]);
        ts_buf_puts(f, "\\n");
        dot_type(f, &b->params[i]->type);
        ts_buf_puts(f, "\"];\n");
    }
    for (const ts_node *n = b->first; n; n = n->next) dot_node(f, n, depth);
    dot_indent(f, depth);
    dot_result_id(f, b);
    ts_buf_printf(f, " [shape=ellipse, label=\"%s\"];\n", b->parent ? "yield" : "return");
}

static void dot_edge(ts_buf *f, const ts_value *v, void (*to)(ts_buf *, const void *), const void *dest)
{
    ts_buf_puts(f, "  ");
    dot_endpoint(f, v);
    ts_buf_puts(f, " -> ");
    to(f, dest);
    ts_buf_puts(f, " [label=\"");
    dot_value(f, v);
    ts_buf_puts(f, "\"];\n");
}

static void to_node(ts_buf *f, const void *n) { ts_buf_printf(f, "n%u", ((const ts_node *)n)->id); }
static void to_result(ts_buf *f, const void *b) { dot_result_id(f, b); }

static void dot_edges(ts_buf *f, const ts_block *b)
{
    for (const ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_in; i++) dot_edge(f, n->in[i], to_node, n);
        for (int r = 0; r < n->n_regions; r++) {
            dot_edges(f, n->regions[r]);
            ts_buf_puts(f, "  ");
            dot_result_id(f, n->regions[r]);
            ts_buf_printf(f, " -> n%u [style=dashed];\n", n->id);
        }
    }
    for (int i = 0; i < b->n_results; i++) dot_edge(f, b->results[i], to_result, b);
}

static void print_dot(ts_buf *f, const ts_graph *g)
{
    ts_buf_puts(f, "digraph \"");
    for (const char *p = g->name ? g->name : "graph"; *p; p++)
        if (*p != '"' && *p != '\\') ts_buf_printf(f, "%c", *p);
    ts_buf_puts(f, "\" {\n  node [shape=box, fontname=\"monospace\"];\n  edge [fontname=\"monospace\", fontsize=10];\n");
    dot_decls(f, g->body, 1);
    dot_edges(f, g->body);
    ts_buf_puts(f, "}\n");
}


ts_status ts_graph_to_dot(const ts_graph *g, char **out, ts_err *err)
{
    if (!g || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_to_dot: NULL argument");
    ts_buf b = {0};
    print_dot(&b, g);
    if (b.oom || !b.data) {
        ts_buf_free(&b);
        return ts_err_set(err, TS_ERR_OOM, "out of memory writing the graph");
    }
    *out = b.data;
    return TS_OK;
}
