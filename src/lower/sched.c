/* sched.c — the heuristic schedule: marks on the loop IR.
 *
 * - Parallel: the outermost loops of a nest, collapsed into one range as
 *   long as they nest perfectly (one loop directly inside the other) and
 *   are not the vector loop, so that a batch of 1 or a short leading axis
 *   still gives every thread work. The range is split in contiguous chunks
 *   (ith, nth): neighbouring iterations touch neighbouring memory.
 *   Loops after an accumulator at the same level are its reduction:
 *   they stay serial (a kernel without a parallel loop runs on thread 0).
 * - Vector: the innermost loop; the row-major index makes it the unit-
 *   stride one for every stored value the kernel writes.
 * Tiling and unrolling are left to the C compiler for loop kernels; the
 * contraction templates carry their own blocking (docs/kernels.md).
 */
#include "lower/lower.h"

static bool has_loop(const ts_ls *s)
{
    for (; s; s = s->next)
        if (s->k == TS_LS_FOR) return true;
    return false;
}

static void mark_vector(ts_ls *s)
{
    for (; s; s = s->next) {
        if (s->k != TS_LS_FOR) continue;
        if (has_loop(s->body)) mark_vector(s->body);
        else s->flags |= TS_LOOP_VECTOR;
    }
}

void ts_schedule(ts_lkernel *k)
{
    mark_vector(k->body);
    for (ts_ls *s = k->body; s && !k->serial; s = s->next) {
        if (s->k == TS_LS_ACC) break;   /* loops after an accumulator reduce into it: serial */
        if (s->k != TS_LS_FOR) continue;
        s->flags |= TS_LOOP_PARALLEL;
        s->collapse = 1;
        /* a loop whose body is exactly one loop that is not the vector loop */
        for (ts_ls *in = s->body; in && in->k == TS_LS_FOR && !in->next && !(in->flags & TS_LOOP_VECTOR);
             in = in->body)
            s->collapse++;
    }
}
