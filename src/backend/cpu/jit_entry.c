/* jit_entry.c — one cache file at a time: durable writes (temporary file,
 * fsync, rename, directory fsync) and the trailer that lets a cached
 * shared object be checked before dlopen maps it. Format and contract in
 * jit_entry.h; why a trailer rather than a sidecar file in D89.
 *
 * Files are read with read()/pread() through one 16 KiB stack buffer:
 * never mmap (see ts_jit_entry_check), and no allocation, so there is no
 * out-of-memory path to test here. */
#include "backend/cpu/jit_entry.h"
#include "core/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CHUNK = 16384 };

/* ---- small I/O helpers ------------------------------------------------------ */

/* Read exactly n bytes at off; false on an error or an early end. */
static bool pread_full(int fd, void *buf, size_t n, off_t off)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

/* Write all n bytes at off; 0, or the errno of the failure. */
static int pwrite_full(int fd, const void *buf, size_t n, off_t off)
{
    for (size_t put = 0; put < n;) {
        ssize_t w = pwrite(fd, (const char *)buf + put, n - put, off + (off_t)put);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno;
        if (w == 0) return EIO;  /* no progress and no reason: do not spin */
        put += (size_t)w;
    }
    return 0;
}

/* SHA-256 of the first n bytes of fd; false if fewer could be read (the
 * file shrank, or the disk failed). */
static bool hash_prefix(int fd, uint64_t n, unsigned char out[32])
{
    unsigned char buf[CHUNK];
    ts_sha256 h;
    ts_sha256_init(&h);
    for (uint64_t off = 0; off < n;) {
        size_t want = n - off < CHUNK ? (size_t)(n - off) : CHUNK;
        if (!pread_full(fd, buf, want, (off_t)off)) return false;
        ts_sha256_update(&h, buf, want);
        off += want;
    }
    ts_sha256_final(&h, out);
    return true;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* A file system that cannot sync a directory at all (EINVAL) passes:
 * nothing better is to be had there, and a lost rename only costs a
 * rebuild, since every load is checked. */
ts_status ts_jit_entry_sync_dir(const char *dir, ts_err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot sync '%s': %s", dir, strerror(errno));
    int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
    close(fd);
    if (rc) return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot sync '%s': %s", dir, strerror(rc));
    return TS_OK;
}

/* ---- checking --------------------------------------------------------------- */

/* The check of an open file of `size` bytes (see ts_jit_entry_check). */
static const char *check_fd(int fd, uint64_t size)
{
    unsigned char t[TS_JIT_TRAILER_BYTES], d[32];
    if (size < TS_JIT_TRAILER_BYTES) return "too short";
    uint64_t body = size - TS_JIT_TRAILER_BYTES;
    if (!pread_full(fd, t, sizeof t, (off_t)body)) return "unreadable";
    if (memcmp(t + 40, TS_JIT_TRAILER_MAGIC, 8) != 0) return "no trailer";
    if (get_u64(t + 32) != body) return "wrong length";
    if (!hash_prefix(fd, body, d)) return "unreadable";
    return memcmp(d, t, 32) == 0 ? NULL : "wrong hash";
}

const char *ts_jit_entry_check(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? "missing" : "unreadable";
    struct stat st;
    const char *why = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ? "unreadable" : check_fd(fd, (uint64_t)st.st_size);
    close(fd);
    return why;
}

/* ---- the linker's output ----------------------------------------------------- */

/* a + b, or UINT64_MAX where that overflows (headers are not trusted) */
static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* An unsigned field of `bytes` bytes at p, in the file's byte order. */
static uint64_t field(const unsigned char *p, int bytes, bool big)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)p[big ? bytes - 1 - i : i] << (8 * i);
    return v;
}

/* The end of the furthest thing an ELF file's headers point at: the
 * program and section header tables and every segment's file bytes; 0
 * when fd holds no ELF file this can read (left to dlopen to judge). */
static uint64_t elf_extent(int fd)
{
    unsigned char e[64], ph[40];
    if (!pread_full(fd, e, sizeof e, 0) || memcmp(e, "\x7f" "ELF", 4) != 0) return 0;
    bool w = e[4] == 2, big = e[5] == 2;  /* ELFCLASS64, ELFDATA2MSB */
    int a = w ? 8 : 4;                    /* address size */
    uint64_t phoff = field(e + (w ? 32 : 28), a, big), shoff = field(e + (w ? 40 : 32), a, big);
    uint64_t phsz = field(e + (w ? 54 : 42), 2, big), phn = field(e + (w ? 56 : 44), 2, big);
    uint64_t shsz = field(e + (w ? 58 : 46), 2, big), shn = field(e + (w ? 60 : 48), 2, big);
    uint64_t end = add_sat(phoff, phn * phsz), sh = shn ? add_sat(shoff, shn * shsz) : 0;
    if (sh > end) end = sh;
    for (uint64_t i = 0; i < phn && phsz >= (w ? 40u : 32u); i++) {
        uint64_t at = add_sat(phoff, i * phsz);
        if (at > INT64_MAX || !pread_full(fd, ph, w ? 40 : 32, (off_t)at)) return UINT64_MAX;
        uint64_t seg = add_sat(field(ph + (w ? 8 : 4), a, big), field(ph + (w ? 32 : 16), a, big));
        if (seg > end) end = seg;
    }
    return end;
}

/* ---- writing ---------------------------------------------------------------- */

/* Hash what the linker wrote, append the trailer, fsync. 0, an errno, or
 * -1 when the output is shorter than its own headers say: GNU ld 2.40
 * exits 0 when its last write to a full disk is cut short (seen with a
 * file size limit), and sealing that would make a damaged object pass
 * every later check. */
static int seal_fd(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return errno;
    if (elf_extent(fd) > (uint64_t)st.st_size) return -1;
    unsigned char t[TS_JIT_TRAILER_BYTES];
    if (!hash_prefix(fd, (uint64_t)st.st_size, t)) return errno ? errno : EIO;
    put_u64(t + 32, (uint64_t)st.st_size);
    memcpy(t + 40, TS_JIT_TRAILER_MAGIC, 8);
    int rc = pwrite_full(fd, t, sizeof t, st.st_size);
    if (rc) return rc;
    return fsync(fd) == 0 ? 0 : errno;
}

ts_status ts_jit_entry_seal(const char *tmp_path, const char *final, ts_err *err)
{
    int fd = open(tmp_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write '%s': %s", final, strerror(errno));
    errno = 0;
    int rc = seal_fd(fd);
    if (close(fd) != 0 && !rc) rc = errno;  /* NFS reports a failed write-back at close */
    if (rc < 0)
        return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write '%s': the linker's output is cut short "
                          "(is the disk full?)", final);
    if (rc) return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write '%s': %s", final, strerror(rc));
    return TS_OK;
}

/* Write all of data to fd and fsync it. 0 or an errno. */
static int write_synced(int fd, const char *data, size_t len)
{
    int rc = pwrite_full(fd, data, len, 0);
    if (rc) return rc;
    return fsync(fd) == 0 ? 0 : errno;
}

ts_status ts_jit_entry_write(const char *dir, const char *final, const char *data, ts_err *err)
{
    char tmp[PATH_MAX];
    int fd = snprintf(tmp, sizeof tmp, "%s/.tmp-src-XXXXXX", dir) < (int)sizeof tmp ? mkstemp(tmp) : -1;
    if (fd < 0) return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write in '%s': %s", dir, strerror(errno));
    int rc = write_synced(fd, data, strlen(data));
    if (close(fd) != 0 && !rc) rc = errno;
    if (!rc && rename(tmp, final) != 0) rc = errno;
    if (rc) {
        unlink(tmp);
        return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write '%s': %s", final, strerror(rc));
    }
    return ts_jit_entry_sync_dir(dir, err);
}
