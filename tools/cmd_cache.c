/* cmd_cache.c — `tessera cache [info | clean [--max-mb N]]`: what the CPU
 * target's compiled-module cache holds, and emptying or trimming it. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int print_usage(const char *dir)
{
    int64_t entries, bytes;
    ts_err err = {0};
    if (ts_cache_usage(NULL, &entries, &bytes, &err) != TS_OK) return fail_err(&err);
    printf("cache dir=%s entries=%lld bytes=%lld limit_bytes=%lld\n", dir, (long long)entries, (long long)bytes,
           (long long)ts_cache_limit_bytes());
    return 0;
}

int cmd_cache(int argc, char **argv)
{
    char dir[PATH_MAX];
    ts_err err = {0};
    if (ts_cache_dir(NULL, dir, sizeof dir, &err) != TS_OK) return fail_err(&err);
    if (argc == 0 || strcmp(argv[0], "info") == 0) {
        if (argc > 1) return fail("cache info: unexpected argument '%s'", argv[1]);
        return print_usage(dir);
    }
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) return usage();
    if (strcmp(argv[0], "clean") != 0)
        return fail("cache: unknown subcommand '%s' (cache info, cache clean [--max-mb N])", argv[0]);
    int64_t max_bytes = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strncmp(argv[i], "--max-mb=", 9) == 0) v = argv[i] + 9;
        else if (strcmp(argv[i], "--max-mb") == 0 && i + 1 < argc) v = argv[++i];
        else if (strcmp(argv[i], "--max-mb") == 0) return fail("cache clean: --max-mb needs a value");
        else return fail("cache clean: unexpected argument '%s'", argv[i]);
        char *end;
        errno = 0;
        long long mb = strtoll(v, &end, 10);
        if (errno || !*v || *end || mb < 0 || mb >= (INT64_MAX >> 20))
            return fail("cache clean: --max-mb wants a whole number of megabytes >= 0, not '%s'", v);
        max_bytes = (int64_t)mb << 20;
    }
    int64_t removed;
    if (ts_cache_trim(NULL, max_bytes, &removed, &err) != TS_OK) return fail_err(&err);
    printf("removed %lld entries\n", (long long)removed);
    return print_usage(dir);
}
