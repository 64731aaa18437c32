/* test_files.h — file-system helpers the JIT tests share (test_jit.c,
 * test_jit_damage.c): counting a cache directory's entries by prefix and
 * removing a scratch tree. */
#ifndef TS_TEST_FILES_H
#define TS_TEST_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
