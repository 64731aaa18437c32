/* jit_entry.h — writing JIT cache files durably, and checking a cached
 * shared object before it is loaded (jit_entry.c; used by jit.c, and by
 * tests that damage entries on purpose).
 *
 * A cached KEY.so is the linker's output (the body) followed by a fixed
 * 48-byte trailer:
 *
 *     offset  size  field
 *     0       32    SHA-256 of the body
 *     32      8     body length in bytes, little-endian
 *     40      8     magic "tsjit-1\n"
 *
 * ELF loaders read only what the headers point at, so the trailing bytes
 * change nothing for dlopen, gdb or perf. Record and object are one file
 * written with one rename: they cannot disagree (D89). */
#ifndef TS_JIT_ENTRY_H
#define TS_JIT_ENTRY_H

#include "core/core.h"

#define TS_JIT_TRAILER_BYTES 48
#define TS_JIT_TRAILER_MAGIC "tsjit-1\n"  /* 8 bytes, no NUL on disk */

/* Whether the shared object at path may be loaded: NULL when its trailer
 * is present and its body has the recorded length and hash; else a short
 * static reason ("missing", "unreadable", "too short", "no trailer",
 * "wrong length", "wrong hash"). Reads with read(), never mmap: a mapping
 * of a cut-short file raises SIGBUS on the first page past its end, which
 * is exactly what this check exists to prevent. */
const char *ts_jit_entry_check(const char *path);

/* Appends the trailer to the object at tmp_path (the linker's fresh
 * output, not yet under its final name) and makes it durable (fsync).
 * An ELF object shorter than its own headers say (a linker that missed
 * its last write failing) is refused, not sealed. TS_ERR_IO naming
 * `final` (what the user knows the file as) on that, or on a read, write
 * or sync failure (a full disk included); the caller removes tmp. */
ts_status ts_jit_entry_seal(const char *tmp_path, const char *final, ts_err *err);

/* fsync the directory, so the renames into it survive a crash. A file
 * system that cannot sync a directory (EINVAL) passes. TS_ERR_IO. */
ts_status ts_jit_entry_sync_dir(const char *dir, ts_err *err);

/* Writes data (a NUL-terminated string) to final atomically and durably:
 * a temporary file in dir, all of it written and fsync'ed, renamed onto
 * final, then dir synced. TS_ERR_IO on any failure, with no temporary
 * file left behind. */
ts_status ts_jit_entry_write(const char *dir, const char *final, const char *data, ts_err *err);

#endif
