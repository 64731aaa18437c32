/* test_files.h — file-system helpers the unit tests share: counting a
 * cache directory's entries by prefix and removing a scratch tree (the JIT
 * tests), reading a whole file (the autodiff and OpenCL emitter tests). */
#ifndef TS_TEST_FILES_H
#define TS_TEST_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file at path, NUL-terminated, its length in *len (free it);
 * NULL if it cannot be read. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    fclose(f);
    if (s) s[n] = 0, *len = (size_t)n;
    return s;
}

/* Entries of dir whose name starts with prefix; -1 if dir cannot be read. */
static inline int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* rm -r path (best effort). */
static inline void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char p[1024];
            int len = snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            if (len > 0 && len < (int)sizeof p) remove_tree(p);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

#endif
