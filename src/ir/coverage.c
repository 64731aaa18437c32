/* coverage.c — which primitives a corpus of IR files exercises: the
 * "tests covering it" count of `tessera prims`, and what test_coverage
 * holds against ops.def. */
#include "ir/ir.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static void mark(ts_node *n, void *ud) { ((bool *)ud)[n->op] = true; }

/* One file: each op it uses, once, however many nodes use it. */
static ts_status count_file(const char *path, int counts[TS_OP_COUNT], ts_err *err)
{
    ts_graph *g = NULL;
    TS_TRY(ts_graph_load_file(path, &g, err));
    bool seen[TS_OP_COUNT] = {0};
    ts_ir_walk(g->body, mark, seen);
    for (int i = 0; i < TS_OP_COUNT; i++) counts[i] += seen[i];
    ts_graph_free(g);
    return TS_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static ts_status walk(const char *dir, int counts[TS_OP_COUNT], int *files, ts_err *err);

/* One directory entry. Symbolic links to directories are not followed, so
 * a link cycle cannot make the walk endless. */
static ts_status visit(const char *dir, const char *name, int counts[TS_OP_COUNT], int *files, ts_err *err)
{
    ts_buf path = {0};
    ts_buf_printf(&path, "%s/%s", dir, name);
    if (path.oom) return ts_err_set(err, TS_ERR_OOM, "out of memory walking %s", dir);
    ts_status s = TS_OK;
    struct stat st;
    if (lstat(path.data, &st) != 0)
        s = ts_err_set(err, TS_ERR_IO, "%s: cannot stat", path.data);
    else if (S_ISDIR(st.st_mode))
        s = walk(path.data, counts, files, err);
    else if (ends_with(name, ".ir")) {
        s = count_file(path.data, counts, err);
        if (s == TS_OK) (*files)++;
    }
    ts_buf_free(&path);
    return s;
}

static ts_status walk(const char *dir, int counts[TS_OP_COUNT], int *files, ts_err *err)
{
    DIR *d = opendir(dir);
    if (!d) return ts_err_set(err, TS_ERR_IO, "%s: cannot open the directory", dir);
    ts_status s = TS_OK;
    for (struct dirent *e; s == TS_OK && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') s = visit(dir, e->d_name, counts, files, err);
    closedir(d);
    return s;
}

int ts_ir_count_op_cases(const char *dir, int counts[TS_OP_COUNT], ts_err *err)
{
    if (!dir || !counts) {
        ts_err_set(err, TS_ERR_INVALID_ARG, "ts_ir_count_op_cases: NULL argument");
        return -1;
    }
    int files = 0;
    return walk(dir, counts, &files, err) == TS_OK ? files : -1;
}
