/* lower_int.h — what lower.c, lower_loop.c and lower_tmpl.c share: the lowering
 * context of one kernel and the expression and loop-nest builders
 * (internal to src/lower/). */
#ifndef TS_LOWER_LOWER_INT_H
#define TS_LOWER_LOWER_INT_H

#include "lower/lower.h"

typedef struct memo {
    const ts_value *v;
    ts_lx *coords[TS_MAX_RANK];
    ts_lx *x;
    struct memo *next;
} memo;

enum { NMEMO = 256 };

/* A delinearization done by this kernel: coords[0..n) of lin over dims,
 * so that re-linearizing them gives lin back without div/mod. */
typedef struct delin {
    int n;
    const ts_dim *dims;
    ts_lx *coords[TS_MAX_RANK];
    ts_lx *lin;
} delin;

typedef struct lctx {
    ts_lprog *p;
    const ts_fusion *f;
    ts_lkernel *k;
    memo *memos[NMEMO];
    const ts_value *block_src;   /* a template's output: read from the epilogue's block */
    ts_lx *block_index;          /* its element in the block */
    const ts_value *subst_v;     /* a value the epilogue computes otherwise (a folded affine chain) ... */
    ts_lx *subst_x;              /* ... and how */
    delin delins[4];
    int n_delins;
    const ts_value *row_val[64];   /* ROW: reductions already folded in this row ... */
    ts_lx *row_acc[64];            /* ... and their accumulators (cast to the value's dtype) */
    int n_row;
    /* ROW: a reduction's costly input, kept in the row of a later output's
     * buffer (stage_pick), is loaded from there by the phases that run
     * while the row holds it, at their row coords stage_xc (NULL: none) */
    const ts_value *stage_v, *stage_buf;
    ts_lx **stage_xc;
    /* ROW: the output whose row is built in the row scratch and streamed
     * out (stream_pick; NULL: none) */
    const ts_value *rowtmp_v;
} lctx;

typedef struct nest {
    ts_ls *first;        /* the outermost statement list */
    ts_ls **tail;        /* where the next statement at the current depth goes */
    int depth;
} nest;

/* The scalar expression for element `coords` of v (lower.c's head comment). */
ts_lx *ts_lw_value_at(lctx *c, const ts_value *v, ts_lx **coords, bool compute_root);
/* Run-time dim d as an expression of the kernel. */
ts_lx *ts_lw_dim(lctx *c, ts_dim d);
/* The row-major linear index of coords[0..r) over d (re-using a recorded
 * delinearization), and coords of lin over d (recorded). */
ts_lx *ts_lw_linear(lctx *c, int r, const ts_dim *d, ts_lx **coords);
void ts_lw_delinear(lctx *c, int r, const ts_dim *d, ts_lx *lin, ts_lx **coords);
/* ts_lw_delinear, recorded so that ts_lw_linear() turns the coords back
 * into lin (no division per element where they are read). */
void ts_lw_delinear_rec(lctx *c, int n, const ts_dim *dims, ts_lx *lin, ts_lx **coords);
/* Runs of alike top-level nests of k as one loop over tables (roll.c,
 * D132); after scheduling. */
void ts_roll_nests(ts_lprog *p, ts_lkernel *k);
/* x[0..r) (one nest's expressions, sharing its variables) as one
 * expression whose differing integer constants and load buffers are read
 * from tables of k indexed by `index` (roll.c, D185); NULL when they are
 * not alike or r is over 64. */
ts_lx *ts_roll_exprs(ts_lprog *p, ts_lkernel *k, ts_lx *const *x, int r, ts_lx *index);
/* Vector loops whose variable is divided by a constant k: over the
 * quotient, the body once per remainder (split.c, D143). */
void ts_split_divisors(ts_lprog *p, ts_lkernel *k);
/* The index of element coords of v in v's own buffer (a concat's part
 * keeps the concat's strides, D125). */
ts_lx *ts_lw_out_linear(lctx *c, const ts_value *v, ts_lx **coords);
/* Appends s at the nest's current position; opens a loop over [0, extent)
 * there and returns its variable. */
void ts_lw_append(nest *ns, ts_ls *s);
ts_lx *ts_lw_open_loop(lctx *c, nest *ns, ts_lx *extent);
/* Stores value at element coords of v (its buffer, or the row scratch). */
void ts_lw_store(lctx *c, nest *ns, const ts_value *v, ts_lx **coords, ts_lx *value);
/* A LOOP group (lower_loop.c): stored value v's nest(s); a merged group's
 * two values, w stored and then v reading it at its coordinates (D116). */
void ts_lw_loop(lctx *c, const ts_value *v);
void ts_lw_loop2(lctx *c, const ts_value *w, const ts_value *v);
/* Reductions' building blocks (lower.c): op's identity in dt; the
 * accumulator dtype of reduction op over dt; the binary op that folds it;
 * an accumulator with loops over the nred extents ext (vars into rv,
 * *inner: inside the innermost, ns goes on after them), returned as an
 * expression valid after the loops; the fold of value into acc at *inner;
 * ns moved to the end of its statement list. */
ts_lx *ts_lw_identity(lctx *c, ts_op op, ts_dtype dt);
ts_dtype ts_lw_acc_dtype(ts_op reduce, ts_dtype dt);
/* The same for a reduction of n terms (n < 0: not known): f32 for at
 * most two f32 terms (D192). */
ts_dtype ts_lw_acc_dtype_n(ts_op reduce, ts_dtype dt, int64_t n);
ts_op ts_lw_combine_op(ts_op reduce);
ts_lx *ts_lw_open_reduction(lctx *c, nest *ns, ts_op op, ts_dtype dt, int nred, ts_lx **ext, ts_lx **rv,
                            ts_ls ***inner, int *acc);
void ts_lw_update(lctx *c, ts_ls **inner, int acc, ts_op op, ts_lx *value);
void ts_lw_to_end(nest *ns);
/* dot and conv as loop nests (lower_contract.c, D177). */
void ts_lw_dot(lctx *c, const ts_node *n);
void ts_lw_conv(lctx *c, const ts_node *n);
/* argmax/argmin and cumulative nodes as kernels (lower_scan.c, D117). */
void ts_lw_arg_extreme(lctx *c, const ts_node *n);
void ts_lw_cumulative(lctx *c, const ts_node *n);
void ts_lw_sort(lctx *c, const ts_node *n);
/* A scatter node as a kernel (lower_scatter.c, D123). */
void ts_lw_scatter(lctx *c, const ts_node *n);
/* A row group as one kernel (lower_row.c). */
void ts_lw_row(lctx *c, const ts_group *g);
/* A reduce_window node as a kernel (lower_window.c). */
void ts_lw_window(lctx *c, const ts_node *n);
/* A runtime call of `kind` for the kernel being built (its tmpl, its
 * needs), arguments and buffers left to the caller (lower_tmpl.c). */
ts_ltmpl *ts_lw_tmpl_new(lctx *c, ts_tmpl_kind kind);
/* Group g (DOT or CONV) as a runtime template call with its epilogue
 * (lower_tmpl.c). */
void ts_lw_template(lctx *c, const ts_group *g);
/* The template's epilogue as data where it has that form (tmpl->te;
 * lower_tepi.c). */
void ts_lw_tile_epilogue(lctx *c);

#endif
