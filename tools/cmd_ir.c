/* cmd_ir.c — `tessera ir FILE [--passes LIST] [--dump-after NAME] [--dot]`:
 * the model after the passes as canonical IR text, or as Graphviz. The dot
 * writer reads the IR's own structures (ir/ir.h). */
#include "cli.h"

#include "backend/cpu/cpu.h"
#include "ir/ir.h"
#include "passes/passes.h"

#include <string.h>

static int list_passes(void)
{
    int n;
    const ts_pass *p = ts_pass_table(&n);
    printf("passes, in pipeline order (\"default\" runs them all to a fixed point):\n");
    for (int i = 0; i < n; i++) printf("  %s\n", p[i].name);
    return 0;
}

static int run_passes(ts_graph *g, const cli *c)
{
    ts_err err = {0};
    ts_status s = TS_OK;
    if (c->dump_after)
        s = ts_graph_run_passes_dump(g, c->passes ? c->passes : "default", c->dump_after, stdout, &err);
    else if (c->passes)
        s = ts_graph_run_passes(g, c->passes, &err);
    return s == TS_OK ? 0 : fail_err(&err);
}

/* ---- --dot ------------------------------------------------------------------ */

static void dot_value(FILE *f, const ts_value *v)
{
    if (v->name) fprintf(f, "%%%s", v->name);
    else fprintf(f, "%%%u", v->id);
}

static void dot_endpoint(FILE *f, const ts_value *v)
{
    if (v->def) fprintf(f, "n%u", v->def->id);
    else fprintf(f, "v%u", v->id);
}

static void dot_type(FILE *f, const ts_type *t)
{
    ts_buf b = {0};
    ts_type_print(&b, t);
    fputs(b.data ? b.data : "?", f);
    ts_buf_free(&b);
}

static void dot_indent(FILE *f, int depth)
{
    for (int i = 0; i < depth; i++) fputs("  ", f);
}

/* The return/yield node of a block: "ret" for the body, y<owner>_<region>
 * for a region. */
static void dot_result_id(FILE *f, const ts_block *b)
{
    if (!b->parent) {
        fputs("ret", f);
        return;
    }
    int r = 0;
    while (r + 1 < b->parent->n_regions && b->parent->regions[r] != b) r++;
    fprintf(f, "y%u_%d", b->parent->id, r);
}

static void dot_decls(FILE *f, const ts_block *b, int depth);

static void dot_node(FILE *f, const ts_node *n, int depth)
{
    const ts_op_info *info = ts_op_get(n->op);
    dot_indent(f, depth);
    fprintf(f, "n%u [label=\"%s", n->id, info->name);
    for (int k = 0; k < n->n_out; k++) {
        fputs("\\n", f);
        dot_type(f, &n->out[k]->type);
    }
    fputs(n->op == TS_OP_CONST ? "\", style=filled, fillcolor=\"#eeeeee\"];\n" : "\"];\n", f);
    for (int r = 0; r < n->n_regions; r++) {
        dot_indent(f, depth);
        fprintf(f, "subgraph cluster_n%u_%d {\n", n->id, r);
        dot_indent(f, depth + 1);
        fprintf(f, "label=\"%s %s\"; style=dashed;\n", info->name, r < info->n_regions ? info->region_names[r] : "?");
        dot_decls(f, n->regions[r], depth + 1);
        dot_indent(f, depth);
        fputs("}\n", f);
    }
}

/* Declarations only: an edge that names a node inside a cluster statement
 * would pull that node into the cluster, so edges come after, at the top. */
static void dot_decls(FILE *f, const ts_block *b, int depth)
{
    for (int i = 0; i < b->n_params; i++) {
        dot_indent(f, depth);
        fprintf(f, "v%u [shape=ellipse, label=\"", b->params[i]->id);
        dot_value(f, b->params[i]);
        fputs("\\n", f);
        dot_type(f, &b->params[i]->type);
        fputs("\"];\n", f);
    }
    for (const ts_node *n = b->first; n; n = n->next) dot_node(f, n, depth);
    dot_indent(f, depth);
    dot_result_id(f, b);
    fprintf(f, " [shape=ellipse, label=\"%s\"];\n", b->parent ? "yield" : "return");
}

static void dot_edge(FILE *f, const ts_value *v, void (*to)(FILE *, const void *), const void *dest)
{
    fputs("  ", f);
    dot_endpoint(f, v);
    fputs(" -> ", f);
    to(f, dest);
    fputs(" [label=\"", f);
    dot_value(f, v);
    fputs("\"];\n", f);
}

static void to_node(FILE *f, const void *n) { fprintf(f, "n%u", ((const ts_node *)n)->id); }
static void to_result(FILE *f, const void *b) { dot_result_id(f, b); }

static void dot_edges(FILE *f, const ts_block *b)
{
    for (const ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_in; i++) dot_edge(f, n->in[i], to_node, n);
        for (int r = 0; r < n->n_regions; r++) {
            dot_edges(f, n->regions[r]);
            fputs("  ", f);
            dot_result_id(f, n->regions[r]);
            fprintf(f, " -> n%u [style=dashed];\n", n->id);
        }
    }
    for (int i = 0; i < b->n_results; i++) dot_edge(f, b->results[i], to_result, b);
}

static void print_dot(FILE *f, const ts_graph *g)
{
    fputs("digraph \"", f);
    for (const char *p = g->name ? g->name : "graph"; *p; p++)
        if (*p != '"' && *p != '\\') fputc(*p, f);
    fputs("\" {\n  node [shape=box, fontname=\"monospace\"];\n  edge [fontname=\"monospace\", fontsize=10];\n", f);
    dot_decls(f, g->body, 1);
    dot_edges(f, g->body);
    fputs("}\n", f);
}

static int print_text(const ts_graph *g)
{
    char *text = NULL;
    ts_err err = {0};
    if (ts_graph_to_text(g, &text, &err) != TS_OK) return fail_err(&err);
    fputs(text, stdout);
    ts_free_string(text);
    return 0;
}

/* --fusion, --loops, --emit c: what the cpu target makes of the graph. */
static int print_compiled(const ts_graph *g, const cli *c)
{
    char *text = NULL;
    ts_err err = {0};
    ts_status s = c->emit ? ts_cpu_source(g, &text, &err) : ts_cpu_loops_text(g, &text, &err);
    if (s != TS_OK) return fail_err(&err);
    if (c->fusion && !c->loops && !c->emit) {
        char *end = strstr(text, "\nkernel ");   /* the fusion listing comes first */
        if (end) end[1] = 0;
    }
    fputs(text, stdout);
    ts_mem_free(text);
    return 0;
}

int cmd_ir(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, OPT_PASSES | OPT_DUMP | OPT_DOT | OPT_FUSION | OPT_LOOPS | OPT_EMIT, 1)) return 1;
    if (c.help) return usage();
    if (c.passes && strcmp(c.passes, "help") == 0) return list_passes();
    if (!c.n_files) return no_file();
    ts_graph *g = NULL;
    ts_err err = {0};
    int r = load_model(c.files[0], 0, NULL, NULL, &g, &err) != TS_OK ? fail_err(&err) : 0;
    if (!r) r = run_passes(g, &c);
    if (!r && c.dump_after && !c.dot) printf("# final\n");
    if (!r && (c.fusion || c.loops || c.emit)) r = print_compiled(g, &c);
    else if (!r) r = c.dot ? (print_dot(stdout, g), 0) : print_text(g);
    ts_graph_free(g);
    return r;
}

