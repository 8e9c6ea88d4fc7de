/* forgetfs: a FUSE file system that forgets what was never synced, for power-loss crash tests.
 *
 *     forgetfs [--loss all|random|torn] [--names posix|ext4] [--seed N] [--log FILE] [--watch-fd FD]
 *              [--fault fsync-eio|write-eio|enospc [--fault-at N] [--fault-on REGEX] [--after-error keep|evict|late|drop]
 *               [--enospc-bytes B] [--fault-armed-later]] BACKING MOUNTPOINT
 *
 * Mounted over BACKING, it passes reads through and keeps every write in its own per-file buffer
 * (4 KiB pages) until that file is fsynced or fdatasynced; reads see the buffered writes.  Creates,
 * mkdirs, links, symlinks, renames, unlinks and rmdirs reach BACKING at once (so the namespace reads
 * naturally) but stay on an undo list until their parent directory (a rename: its destination's) is
 * fsynced; an unlinked or replaced entry waits in BACKING/.forgetfs-pending (hidden) until then.
 * BACKING therefore always holds the durable file contents plus the not-yet-durable namespace.
 * --names ext4: an fsync or fdatasync of any file also makes every pending namespace change durable,
 * in order (what ext4's data=ordered journal does: the commit an fsync forces carries every metadata
 * change made so far; POSIX promises only the directory fsync, the default, --names posix).
 *
 * Control, by signal:
 *   SIGUSR1  a power cut: stop serving, unmount (lazily), drop every pending write and undo every
 *            pending namespace change, newest first.  --loss random keeps a seeded random half of the
 *            pending pages; --loss torn keeps the first k of the n 512-byte sectors of the newest
 *            pending write (1 <= k < n, seeded; a write within one sector is atomic and dropped).
 *            Exit 0 after printing one JSON line: what was dropped, kept and undone.
 *   SIGTERM, SIGINT, SIGHUP, EOF on --watch-fd (the launcher died), an external unmount:
 *            a clean shutdown: everything pending is made durable, as a normal unmount would.
 * Stdout: "ready" once mounted, then the JSON summary.  --log FILE: one line per namespace change,
 * fsync and fsyncdir, and the cut (which pending writes and entries were dropped).
 *
 * Faults (--fault), on the files whose path (as first opened) matches --fault-on (POSIX extended; default all):
 *   fsync-eio  the --fault-at'th fsync or fdatasync of such a file that has pending writes fails with EIO, once.
 *              --after-error keep (ext4's behaviour, Rebello et al. ATC'20): its pending pages stay in the
 *              cache, readers see them (a process that opens the file later too), but they are clean: never
 *              written, lost at a cut; a later fsync succeeds without them.  evict: the same, but the cache
 *              drops them once the file is no longer open (the study's "page cache evicted").  drop
 *              (btrfs-like): the file reverts to its durable state at once, the kernel's cached pages of it
 *              invalidated (after the reply).  late (ext4 data=journal): as keep, but this fsync returns
 *              success; the next fsync of the file writes what is dirty then, and fails with EIO.
 *   write-eio  the --fault-at'th write to such a file fails with EIO, once, and writes nothing.
 *   enospc     writes and allocations that grow such files fail with ENOSPC once --enospc-bytes of growth
 *              are spent (statfs says what is left); space does not come back while mounted.
 * --fault-armed-later: no fault until SIGUSR2 arms it (the crash test arms it once the engine has opened, so that
 * --fault-at counts the writer's calls, not the open's); calls are counted from then on.
 * The JSON summary says what fired: {"fault": {"kind", "at", "errors", "file", "after"}}.
 *
 * Not modelled: the durability of attributes (chmod, chown, utimens reach BACKING at once);
 * sync_file_range (FUSE never sees it: it makes nothing durable here); syncfs/sync(2) (not offered
 * to FUSE by this libfuse: a machine-wide sync does not save pending state).  Refused: O_DIRECT
 * (EINVAL, as tmpfs does), RENAME_EXCHANGE/RENAME_WHITEOUT (EINVAL), fallocate modes other than
 * 0, KEEP_SIZE and PUNCH_HOLE|KEEP_SIZE (EOPNOTSUPP), mknod (no such operation: ENOSYS), extended
 * attributes (ENOTSUP).  O_SYNC/O_DSYNC handles make each write durable on return.
 * One thread serves requests (operations are serialised), so no locking is needed.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <fuse.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <regex.h>
#include <search.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define PAGE 4096
#define SECTOR 512
#define GRAVE ".forgetfs-pending"
#define NO_LIMIT INT64_MAX

enum loss { LOSS_ALL, LOSS_RANDOM, LOSS_TORN };
static const char *loss_names[] = {"all", "random", "torn"};

/* ---- state ------------------------------------------------------------------------------------- */

struct page { uint64_t index; char data[PAGE]; };

/* One backing inode that is open or has pending writes (keyed by its inode number: BACKING is one
   file system).  Its fd stays open while it has pending state, so the inode number cannot be reused. */
struct inode {
    ino_t ino;
    int fd;                 /* backing fd, O_RDWR where allowed */
    int opens;              /* open handles */
    int64_t vsize;          /* the size readers see */
    int64_t dsize;          /* the durable size (the backing file's) */
    int64_t limit;          /* backing bytes at or past this are gone (a pending truncate); NO_LIMIT */
    void *pages;            /* tsearch tree of struct page* by index */
    size_t npages;
    int dirty;
    int64_t last_off, last_len; uint64_t last_seq;   /* the newest pending write */
    char *name;             /* the path it was opened by (for the log only; may be stale) */
    void *lost;             /* fsync-eio, keep: pages whose fsync failed, in the cache only (never written) */
    size_t nlost;
    int late_eio;           /* fsync-eio, late: the next fsync of this file fails with EIO (the earlier one's error) */
    int fault_match;        /* its path matched --fault-on when it was first opened */
    struct inode *next;
};

enum fault { FAULT_NONE, FAULT_FSYNC_EIO, FAULT_WRITE_EIO, FAULT_ENOSPC };
static const char *fault_names[] = {"none", "fsync-eio", "write-eio", "enospc"};

enum nskind { NS_CREATE, NS_MKDIR, NS_LINK, NS_SYMLINK, NS_UNLINK, NS_RMDIR, NS_RENAME };
static const char *ns_names[] = {"create", "mkdir", "link", "symlink", "unlink", "rmdir", "rename"};

struct nsop {               /* a namespace change that reached BACKING but is not durable yet */
    enum nskind kind;
    ino_t dir;              /* the directory whose fsync makes it durable */
    char *path, *path2;     /* backing-relative; rename: path -> path2 */
    char *grave;            /* unlink/rmdir: where the entry waits; rename: the replaced entry, or NULL */
    struct nsop *prev, *next;
};

#define NBUCKET 1024
static struct inode *inodes[NBUCKET];
static struct nsop *ns_head, *ns_tail;
static int root_fd = -1;
static ino_t root_ino;
static const char *backing_path;
static enum loss loss_model = LOSS_ALL;
static int names_ext4;
static uint64_t rng_state = 1;
static uint64_t write_seq;
static unsigned grave_counter;
static FILE *logf;
static struct fuse *the_fuse;
static volatile sig_atomic_t cut_requested;
static pthread_t main_thread;
static enum fault fault_kind = FAULT_NONE;
static uint64_t fault_at = 1, fault_seen, fault_errors;
static char *fault_file;             /* the first file a fault fired on */
static regex_t fault_rx;
static int fault_rx_set, after_keep = 1, evict_at_close, after_late;
static int64_t enospc_left;
static volatile sig_atomic_t fault_armed = 1;   /* --fault-armed-later: 0 until SIGUSR2 */
static pthread_mutex_t inval_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t inval_cv = PTHREAD_COND_INITIALIZER;
static char *inval_path;             /* fsync-eio, drop: a file whose kernel cache is to be invalidated */

static void logmsg(const char *fmt, ...) {
    if (!logf) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(logf, fmt, ap);
    va_end(ap);
    fputc('\n', logf);
    fflush(logf);
}

static uint64_t rnd(void) {   /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* "/a/b" -> "a/b"; "/" -> "." */
static const char *rel(const char *path) {
    if (!path || !path[0] || (path[0] == '/' && !path[1])) return ".";
    return path[0] == '/' ? path + 1 : path;
}

static int hidden(const char *path) {
    const char *r = rel(path);
    size_t n = strlen(GRAVE);
    return strncmp(r, GRAVE, n) == 0 && (r[n] == 0 || r[n] == '/');
}
#define HIDE(p) do { if ((p) && hidden(p)) return -ENOENT; } while (0)

static char *parent_of(const char *r) {      /* backing-relative parent */
    char *s = strdup(r);
    char *slash = strrchr(s, '/');
    if (!slash) { free(s); return strdup("."); }
    *slash = 0;
    return s;
}

static ino_t dir_ino(const char *r) {
    char *p = parent_of(r);
    struct stat st;
    ino_t ino = fstatat(root_fd, p, &st, 0) == 0 ? st.st_ino : 0;
    free(p);
    return ino;
}

/* ---- pages and inodes ------------------------------------------------------------------------- */

static int page_cmp(const void *a, const void *b) {
    uint64_t x = ((const struct page *)a)->index, y = ((const struct page *)b)->index;
    return x < y ? -1 : x > y;
}

static struct page *page_in(void *const *tree, uint64_t index) {
    struct page key = {.index = index};
    void *r = tfind(&key, tree, page_cmp);
    return r ? *(struct page **)r : NULL;
}

static struct page *page_find(struct inode *in, uint64_t index) { return page_in(&in->pages, index); }

static void free_page(void *p) { free(p); }

static void drop_pages(struct inode *in) {
    tdestroy(in->pages, free_page);
    in->pages = NULL;
    in->npages = 0;
}

static void drop_lost(struct inode *in) {
    tdestroy(in->lost, free_page);
    in->lost = NULL;
    in->nlost = 0;
}

static struct inode *inode_find(ino_t ino) {
    for (struct inode *in = inodes[ino % NBUCKET]; in; in = in->next)
        if (in->ino == ino) return in;
    return NULL;
}

static struct inode *inode_get(int fd, const char *name) {   /* takes fd if it makes a new entry */
    struct stat st;
    if (fstat(fd, &st) < 0) return NULL;
    struct inode *in = inode_find(st.st_ino);
    if (in) { close(fd); return in; }
    in = calloc(1, sizeof *in);
    in->ino = st.st_ino;
    in->fd = fd;
    in->vsize = in->dsize = st.st_size;
    in->limit = NO_LIMIT;
    in->name = strdup(name);
    in->fault_match = !fault_rx_set || regexec(&fault_rx, name, 0, NULL, 0) == 0;
    in->next = inodes[st.st_ino % NBUCKET];
    inodes[st.st_ino % NBUCKET] = in;
    return in;
}

static void inode_maybe_free(struct inode *in) {
    if (in->opens > 0 || in->dirty || (in->nlost && !evict_at_close)) return;   /* keep: cached until the cut */
    struct inode **pp = &inodes[in->ino % NBUCKET];
    while (*pp != in) pp = &(*pp)->next;
    *pp = in->next;
    drop_pages(in);
    drop_lost(in);   /* no longer open (evict): the cache may drop a failed fsync's pages, and here it does */
    close(in->fd);
    free(in->name);
    free(in);
}

static int full_pwrite(int fd, const char *buf, size_t n, off_t off) {
    while (n > 0) {
        ssize_t w = pwrite(fd, buf, n, off);
        if (w < 0) { if (errno == EINTR) continue; return -errno; }
        buf += w; n -= (size_t)w; off += w;
    }
    return 0;
}

/* The volatile view: backing bytes below min(dsize, limit), then pending pages, zeros elsewhere. */
static ssize_t view_read(struct inode *in, char *buf, size_t len, int64_t off) {
    if (off >= in->vsize) return 0;
    size_t n = (size_t)(in->vsize - off < (int64_t)len ? in->vsize - off : (int64_t)len);
    memset(buf, 0, n);
    int64_t lim = in->dsize < in->limit ? in->dsize : in->limit;
    if (off < lim) {
        size_t want = (size_t)(lim - off < (int64_t)n ? lim - off : (int64_t)n), got = 0;
        while (got < want) {
            ssize_t r = pread(in->fd, buf + got, want - got, off + (int64_t)got);
            if (r < 0) { if (errno == EINTR) continue; return -errno; }
            if (r == 0) break;
            got += (size_t)r;
        }
    }
    if (in->npages || in->nlost) {
        for (uint64_t p = (uint64_t)off / PAGE; p <= (uint64_t)(off + (int64_t)n - 1) / PAGE; p++) {
            struct page *pg = page_find(in, p);
            if (!pg && in->nlost) pg = page_in(&in->lost, p);   /* a failed fsync's page, still cached */
            if (!pg) continue;
            int64_t ps = (int64_t)p * PAGE, a = off > ps ? off : ps;
            int64_t b = off + (int64_t)n < ps + PAGE ? off + (int64_t)n : ps + PAGE;
            memcpy(buf + (a - off), pg->data + (a - ps), (size_t)(b - a));
        }
    }
    return (ssize_t)n;
}

static int view_write(struct inode *in, const char *buf, size_t len, int64_t off) {
    if (len == 0) return 0;
    for (uint64_t p = (uint64_t)off / PAGE; p <= (uint64_t)(off + (int64_t)len - 1) / PAGE; p++) {
        struct page *pg = page_find(in, p);
        if (!pg) {
            pg = malloc(sizeof *pg);
            if (!pg) return -ENOMEM;
            pg->index = p;
            ssize_t r = view_read(in, pg->data, PAGE, (int64_t)p * PAGE);
            if (r < 0) { free(pg); return (int)r; }
            memset(pg->data + r, 0, PAGE - (size_t)r);
            tsearch(pg, &in->pages, page_cmp);
            in->npages++;
            /* a failed fsync's copy of this page was its base: the cache holds one page per index, and from now
               on it is this one (keeping the old copy would serve stale bytes once this one is synced) */
            struct page *old = in->nlost ? page_in(&in->lost, p) : NULL;
            if (old) {
                tdelete(old, &in->lost, page_cmp);
                free(old);
                in->nlost--;
            }
        }
        int64_t ps = (int64_t)p * PAGE, a = off > ps ? off : ps;
        int64_t b = off + (int64_t)len < ps + PAGE ? off + (int64_t)len : ps + PAGE;
        memcpy(pg->data + (a - ps), buf + (a - off), (size_t)(b - a));
    }
    if (off + (int64_t)len > in->vsize) in->vsize = off + (int64_t)len;
    in->dirty = 1;
    in->last_off = off;
    in->last_len = (int64_t)len;
    in->last_seq = ++write_seq;
    return 0;
}

/* pages at or past `size` go; the page holding `size` loses its tail */
static uint64_t trunc_first;
static struct page **trunc_doomed;
static size_t trunc_n;
static void collect_doomed(const void *node, VISIT v, int depth) {
    (void)depth;
    if (v != postorder && v != leaf) return;
    struct page *pg = *(struct page *const *)node;
    if (pg->index >= trunc_first) trunc_doomed[trunc_n++] = pg;
}

/* `tree`'s pages at or past `size` go (n counts them); the page holding `size` loses its tail */
static void trunc_tree(void **tree, size_t *n, int64_t size) {
    if (!*n) return;
    trunc_first = (uint64_t)((size + PAGE - 1) / PAGE);
    trunc_doomed = malloc(*n * sizeof *trunc_doomed);
    trunc_n = 0;
    twalk(*tree, collect_doomed);
    for (size_t i = 0; i < trunc_n; i++) {
        tdelete(trunc_doomed[i], tree, page_cmp);
        free(trunc_doomed[i]);
        (*n)--;
    }
    free(trunc_doomed);
    if (size % PAGE) {
        struct page *pg = page_in(tree, (uint64_t)size / PAGE);
        if (pg) memset(pg->data + size % PAGE, 0, PAGE - (size_t)(size % PAGE));
    }
}

static void view_truncate(struct inode *in, int64_t size) {
    if (size < in->vsize) {
        if (size < in->limit) in->limit = size;
        trunc_tree(&in->pages, &in->npages, size);
        trunc_tree(&in->lost, &in->nlost, size);   /* the cache drops a failed fsync's pages past the end too */
    }
    in->vsize = size;
    in->dirty = 1;
}

/* make an inode's pending state durable (or, with keep_random, a random half of its pages) */
static int apply_fd;
static int64_t apply_vsize;
static int apply_random, apply_err;
static size_t apply_kept, apply_dropped;
static void apply_page(const void *node, VISIT v, int depth) {
    (void)depth;
    if (v != postorder && v != leaf) return;
    struct page *pg = *(struct page *const *)node;
    if (apply_random && (rnd() & 1)) { apply_dropped++; return; }
    int64_t ps = (int64_t)pg->index * PAGE;
    int64_t w = apply_vsize - ps < PAGE ? apply_vsize - ps : PAGE;
    if (w > 0) {
        int rc = full_pwrite(apply_fd, pg->data, (size_t)w, ps);
        if (rc && !apply_err) apply_err = rc;
    }
    apply_kept++;
}

static int inode_sync(struct inode *in) {
    if (!in->dirty) return 0;
    if (in->limit < in->dsize && ftruncate(in->fd, in->limit) < 0) return -errno;
    apply_fd = in->fd; apply_vsize = in->vsize; apply_random = 0; apply_err = 0;
    twalk(in->pages, apply_page);
    if (apply_err) return apply_err;
    if (ftruncate(in->fd, in->vsize) < 0) return -errno;
    logmsg("fsync %s: %zu pages, size %" PRId64, in->name, in->npages, in->vsize);
    drop_pages(in);
    in->dsize = in->vsize;
    in->limit = NO_LIMIT;
    in->dirty = 0;
    in->last_seq = 0;
    return 0;
}

/* ---- the namespace undo list ------------------------------------------------------------------ */

static void ns_push(enum nskind kind, ino_t dir, const char *path, const char *path2, const char *grave) {
    struct nsop *op = calloc(1, sizeof *op);
    op->kind = kind;
    op->dir = dir;
    op->path = strdup(path);
    op->path2 = path2 ? strdup(path2) : NULL;
    op->grave = grave ? strdup(grave) : NULL;
    op->prev = ns_tail;
    if (ns_tail) ns_tail->next = op; else ns_head = op;
    ns_tail = op;
    logmsg("%s %s%s%s (pending until its directory is fsynced)", ns_names[kind], path, path2 ? " -> " : "",
           path2 ? path2 : "");
}

static void ns_unlink(struct nsop *op) {
    if (op->prev) op->prev->next = op->next; else ns_head = op->next;
    if (op->next) op->next->prev = op->prev; else ns_tail = op->prev;
    free(op->path); free(op->path2); free(op->grave); free(op);
}

static void rmtree_at(int dirfd, const char *name) {
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return;
    if (S_ISDIR(st.st_mode)) {
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (fd >= 0) {
            DIR *d = fdopendir(fd);
            struct dirent *e;
            while (d && (e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) rmtree_at(fd, e->d_name);
            if (d) closedir(d); else close(fd);
        }
        unlinkat(dirfd, name, AT_REMOVEDIR);
    } else {
        unlinkat(dirfd, name, 0);
    }
}

static char *new_grave(void) {
    char *g;
    if (asprintf(&g, GRAVE "/%u", ++grave_counter) < 0) return NULL;
    return g;
}

/* the entry is durable: a replaced or removed one is gone for good */
static void ns_commit(struct nsop *op) {
    if (op->grave) {
        struct stat st;
        if (fstatat(root_fd, op->grave, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
            struct inode *in = inode_find(st.st_ino);
            if (in && st.st_nlink <= 1 && in->opens == 0) { in->dirty = 0; inode_maybe_free(in); }
        }
        rmtree_at(root_fd, op->grave);
    }
    ns_unlink(op);
}

static int ns_undo(struct nsop *op) {
    int rc = 0;
    switch (op->kind) {
    case NS_CREATE: case NS_LINK: case NS_SYMLINK: rc = unlinkat(root_fd, op->path, 0); break;
    case NS_MKDIR: rmtree_at(root_fd, op->path); break;
    case NS_UNLINK: case NS_RMDIR: rc = renameat(root_fd, op->grave, root_fd, op->path); break;
    case NS_RENAME:
        rc = renameat(root_fd, op->path2, root_fd, op->path);
        if (rc == 0 && op->grave) rc = renameat(root_fd, op->grave, root_fd, op->path2);
        break;
    }
    if (rc < 0) logmsg("  undo %s %s failed: %s", ns_names[op->kind], op->path, strerror(errno));
    return rc;
}

static void journal_commit(void) {   /* --names ext4: the fsync commits every pending entry */
    if (!names_ext4 || !ns_head) return;
    int n = 0;
    while (ns_head) { ns_commit(ns_head); n++; }
    logmsg("journal commit (--names ext4): %d entries made durable", n);
}

/* ---- operations ------------------------------------------------------------------------------- */

/* both begin with the backing fd: the kernel may pass a directory's handle to chmod/chown/utimens */
struct fh { int fd; struct inode *in; int sync; };
struct dh { int fd; ino_t ino; char *name; };
#define FH(fi) ((struct fh *)(uintptr_t)(fi)->fh)
#define DH(fi) ((struct dh *)(uintptr_t)(fi)->fh)

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    cfg->use_ino = 1;
    cfg->nullpath_ok = 1;
    cfg->hard_remove = 1;       /* unlink an open file for real (no .fuse_hidden renames) */
    cfg->direct_io = 0;         /* the page cache, so shared writable mmap works */
    cfg->kernel_cache = 0;
    cfg->auto_cache = 0;
    cfg->negative_timeout = 0;
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;   /* backing mtimes do not move with pending writes */
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;   /* every write(2) reaches us when it is made */
    return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    int rc;
    if (fi && FH(fi)) rc = fstat(FH(fi)->fd, st);
    else { HIDE(path); rc = fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW); }
    if (rc < 0) return -errno;
    if (S_ISREG(st->st_mode)) {
        struct inode *in = inode_find(st->st_ino);
        if (in) { st->st_size = in->vsize; st->st_blocks = (in->vsize + 511) / 512; }
    }
    return 0;
}

static int fs_readlink(const char *path, char *buf, size_t size) {
    HIDE(path);
    ssize_t n = readlinkat(root_fd, rel(path), buf, size - 1);
    if (n < 0) return -errno;
    buf[n] = 0;
    return 0;
}

static int open_common(const char *path, int fd, int flags, struct fuse_file_info *fi) {
    struct inode *in = inode_get(fd, rel(path));
    if (!in) { int e = -errno; close(fd); return e; }
    struct fh *h = calloc(1, sizeof *h);
    h->fd = in->fd;
    h->in = in;
    h->sync = (flags & (O_SYNC | O_DSYNC)) != 0;
    in->opens++;
    if (flags & O_TRUNC) {
        view_truncate(in, 0);
        logmsg("truncate %s to 0 (O_TRUNC)", in->name);
    }
    fi->fh = (uint64_t)(uintptr_t)h;
    return 0;
}

static int backing_open(const char *r, int flags, mode_t mode) {
    int base = flags & ~(O_TRUNC | O_APPEND | O_ACCMODE | O_SYNC | O_DSYNC);
    int fd = openat(root_fd, r, base | O_RDWR, mode);
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EISDIR))
        fd = openat(root_fd, r, (flags & ~(O_TRUNC | O_APPEND | O_SYNC | O_DSYNC)), mode);
    return fd;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
    HIDE(path);
    if (fi->flags & O_DIRECT) return -EINVAL;
    int fd = backing_open(rel(path), fi->flags & ~O_CREAT, 0);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) { close(fd); return -EINVAL; }
    return open_common(path, fd, fi->flags, fi);
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    HIDE(path);
    if (fi->flags & O_DIRECT) return -EINVAL;
    const char *r = rel(path);
    struct stat st;
    int existed = fstatat(root_fd, r, &st, AT_SYMLINK_NOFOLLOW) == 0;
    int fd = backing_open(r, fi->flags | O_CREAT, mode);
    if (fd < 0) return -errno;
    if (!existed) ns_push(NS_CREATE, dir_ino(r), r, NULL, NULL);
    return open_common(path, fd, fi->flags, fi);
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)path;
    return (int)view_read(FH(fi)->in, buf, size, off);
}

/* ---- faults ----------------------------------------------------------------------------------- */

static void fault_fired(struct inode *in, const char *what) {
    fault_errors++;
    if (!fault_file) fault_file = strdup(in->name);
    logmsg("fault %s: %s on %s", fault_names[fault_kind], what, in->name);
}

/* enospc: whether growing `in` to `end` bytes fits what is left of the budget; spends it if so */
static int space_for(struct inode *in, int64_t end) {
    if (fault_kind != FAULT_ENOSPC || !fault_armed || !in->fault_match || end <= in->vsize) return 1;
    if (end - in->vsize > enospc_left) return 0;
    enospc_left -= end - in->vsize;
    return 1;
}

static struct inode *move_target;
static void move_to_lost(const void *node, VISIT v, int depth) {
    (void)depth;
    if (v != postorder && v != leaf) return;
    struct page *pg = *(struct page *const *)node;
    struct page **slot = tsearch(pg, &move_target->lost, page_cmp);
    if (*slot != pg) { free(*slot); *slot = pg; }   /* an older failed page of the same index */
    else move_target->nlost++;
}
static void keep_page(void *p) { (void)p; }

static void *invalidator(void *arg) {   /* drop: the kernel's cached pages of a reverted file, after the reply */
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&inval_mu);
        while (!inval_path) pthread_cond_wait(&inval_cv, &inval_mu);
        char *path = inval_path;
        inval_path = NULL;
        pthread_mutex_unlock(&inval_mu);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);   /* the failed fsync's reply goes first: its caller holds the file */
        int rc = the_fuse ? fuse_invalidate_path(the_fuse, path) : -1;
        logmsg("fault fsync-eio: the kernel's cache of %s invalidated (%d)", path, rc);
        free(path);
    }
    return NULL;
}

/* fsync-eio on `in`: 1 when this fsync is the one that fails */
static int fsync_fails(struct inode *in) {
    if (fault_kind != FAULT_FSYNC_EIO || !fault_armed || !in->fault_match || !in->dirty || fault_errors) return 0;
    if (++fault_seen != fault_at) return 0;
    fault_fired(in, after_late ? "fsync returned success, its pages kept in the cache, never written; the next "
                                 "fsync of the file fails with EIO"
                    : after_keep ? "fsync failed with EIO, its pages kept in the cache, never written"
                                 : "fsync failed with EIO, the file reverted to its durable state");
    if (after_keep) {
        move_target = in;
        twalk(in->pages, move_to_lost);
        tdestroy(in->pages, keep_page);
        in->pages = NULL;
        in->npages = 0;
        if (after_late) {   /* ext4 data=journal: this fsync says nothing; the next one reports it */
            in->late_eio = 1;
            return 0;
        }
    } else {
        drop_pages(in);
        in->vsize = in->dsize;
        in->limit = NO_LIMIT;
        char *path;
        if (asprintf(&path, "/%s", in->name) >= 0) {
            pthread_mutex_lock(&inval_mu);
            free(inval_path);
            inval_path = path;
            pthread_cond_signal(&inval_cv);
            pthread_mutex_unlock(&inval_mu);
        }
    }
    in->dirty = 0;
    in->last_seq = 0;
    return 1;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)path;
    struct inode *in = FH(fi)->in;
    if (fault_kind == FAULT_WRITE_EIO && fault_armed && in->fault_match && !fault_errors && ++fault_seen == fault_at) {
        fault_fired(in, "write failed with EIO, nothing written");
        return -EIO;
    }
    if (!space_for(in, off + (int64_t)size)) {
        fault_fired(in, "write failed with ENOSPC");
        return -ENOSPC;
    }
    int rc = view_write(in, buf, size, off);
    if (rc) return rc;
    if (FH(fi)->sync) {
        if ((rc = inode_sync(in))) return rc;
        journal_commit();
    }
    return (int)size;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    struct inode *in;
    if (fi && FH(fi)) in = FH(fi)->in;
    else {
        HIDE(path);
        int fd = backing_open(rel(path), O_RDWR, 0);
        if (fd < 0) return -errno;
        in = inode_get(fd, rel(path));
        if (!in) { close(fd); return -EIO; }
    }
    view_truncate(in, size);
    logmsg("truncate %s to %lld", in->name, (long long)size);
    inode_maybe_free(in);
    return 0;
}

static int fs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi) {
    (void)path;
    if (!fi || !FH(fi)) return -EOPNOTSUPP;
    struct inode *in = FH(fi)->in;
    if (mode == FALLOC_FL_KEEP_SIZE) return 0;    /* space only: nothing a reader can see */
    if (mode == 0) {
        if (!space_for(in, off + len)) {
            fault_fired(in, "fallocate failed with ENOSPC");
            return -ENOSPC;
        }
        if (off + len > in->vsize) { in->vsize = off + len; in->dirty = 1; }
        return 0;
    }
    if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
        int64_t end = off + len < in->vsize ? off + len : in->vsize;
        if (end <= off) return 0;
        char *zeros = calloc(1, (size_t)(end - off));
        int rc = view_write(in, zeros, (size_t)(end - off), off);
        free(zeros);
        return rc;
    }
    return -EOPNOTSUPP;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path; (void)datasync;
    struct inode *in = FH(fi)->in;
    if (in->late_eio) {   /* late: this fsync writes what is dirty now, and reports the earlier one's error */
        in->late_eio = 0;
        int rc = inode_sync(in);
        if (!rc) journal_commit();
        logmsg("fault fsync-eio: the earlier failure reported late, at this fsync of %s (which wrote its pages: %d)",
               in->name, rc);
        return -EIO;
    }
    if (fsync_fails(in)) return -EIO;
    int rc = inode_sync(in);
    if (!rc) journal_commit();
    return rc;
}

static int fs_flush(const char *path, struct fuse_file_info *fi) { (void)path; (void)fi; return 0; }

static int fs_release(const char *path, struct fuse_file_info *fi) {
    (void)path;
    struct fh *h = FH(fi);
    h->in->opens--;
    if (evict_at_close && h->in->opens == 0) drop_lost(h->in);   /* evict: no longer open, the cache drops them */
    inode_maybe_free(h->in);
    free(h);
    return 0;
}

static int fs_mkdir(const char *path, mode_t mode) {
    HIDE(path);
    const char *r = rel(path);
    if (mkdirat(root_fd, r, mode) < 0) return -errno;
    ns_push(NS_MKDIR, dir_ino(r), r, NULL, NULL);
    return 0;
}

static int fs_symlink(const char *target, const char *path) {
    HIDE(path);
    const char *r = rel(path);
    if (symlinkat(target, root_fd, r) < 0) return -errno;
    ns_push(NS_SYMLINK, dir_ino(r), r, NULL, NULL);
    return 0;
}

static int fs_link(const char *from, const char *to) {
    HIDE(from); HIDE(to);
    if (linkat(root_fd, rel(from), root_fd, rel(to), 0) < 0) return -errno;
    ns_push(NS_LINK, dir_ino(rel(to)), rel(to), NULL, NULL);
    return 0;
}

static int dir_is_empty(const char *r) {
    int fd = openat(root_fd, r, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -errno;
    DIR *d = fdopendir(fd);
    if (!d) { close(fd); return -errno; }
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) { empty = 0; break; }
    closedir(d);
    return empty;
}

static int remove_common(const char *path, int want_dir) {
    HIDE(path);
    const char *r = rel(path);
    struct stat st;
    if (fstatat(root_fd, r, &st, AT_SYMLINK_NOFOLLOW) < 0) return -errno;
    if (want_dir && !S_ISDIR(st.st_mode)) return -ENOTDIR;
    if (!want_dir && S_ISDIR(st.st_mode)) return -EISDIR;
    if (want_dir) {
        int e = dir_is_empty(r);
        if (e < 0) return e;
        if (!e) return -ENOTEMPTY;
    }
    ino_t dir = dir_ino(r);
    char *g = new_grave();
    if (renameat(root_fd, r, root_fd, g) < 0) { int e = -errno; free(g); return e; }
    ns_push(want_dir ? NS_RMDIR : NS_UNLINK, dir, r, NULL, g);
    free(g);
    return 0;
}

static int fs_unlink(const char *path) { return remove_common(path, 0); }
static int fs_rmdir(const char *path) { return remove_common(path, 1); }

static int fs_rename(const char *from, const char *to, unsigned int flags) {
    HIDE(from); HIDE(to);
    if (flags & ~RENAME_NOREPLACE) return -EINVAL;   /* RENAME_EXCHANGE, RENAME_WHITEOUT */
    const char *a = rel(from), *b = rel(to);
    struct stat sa, sb;
    if (fstatat(root_fd, a, &sa, AT_SYMLINK_NOFOLLOW) < 0) return -errno;
    char *g = NULL;
    if (fstatat(root_fd, b, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        if (flags & RENAME_NOREPLACE) return -EEXIST;
        if (sa.st_ino == sb.st_ino) return 0;
        if (S_ISDIR(sa.st_mode) && !S_ISDIR(sb.st_mode)) return -ENOTDIR;
        if (!S_ISDIR(sa.st_mode) && S_ISDIR(sb.st_mode)) return -EISDIR;
        if (S_ISDIR(sb.st_mode)) {
            int e = dir_is_empty(b);
            if (e < 0) return e;
            if (!e) return -ENOTEMPTY;
        }
        g = new_grave();
        if (renameat(root_fd, b, root_fd, g) < 0) { int e = -errno; free(g); return e; }
    }
    if (renameat(root_fd, a, root_fd, b) < 0) {
        int e = -errno;
        if (g) { renameat(root_fd, g, root_fd, b); free(g); }
        return e;
    }
    ns_push(NS_RENAME, dir_ino(b), a, b, g);
    free(g);
    return 0;
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    if (fi && FH(fi)) return fchmod(FH(fi)->fd, mode) < 0 ? -errno : 0;
    HIDE(path);
    return fchmodat(root_fd, rel(path), mode, 0) < 0 ? -errno : 0;
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    if (fi && FH(fi)) return fchown(FH(fi)->fd, uid, gid) < 0 ? -errno : 0;
    HIDE(path);
    return fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
    if (fi && FH(fi)) return futimens(FH(fi)->fd, tv) < 0 ? -errno : 0;
    HIDE(path);
    return utimensat(root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int fs_statfs(const char *path, struct statvfs *sv) {
    (void)path;
    if (fstatvfs(root_fd, sv) < 0) return -errno;
    if (fault_kind == FAULT_ENOSPC && sv->f_frsize) {   /* what the byte budget leaves */
        fsblkcnt_t left = (fsblkcnt_t)(enospc_left / (int64_t)sv->f_frsize);
        if (left < sv->f_bavail) sv->f_bavail = left;
        if (left < sv->f_bfree) sv->f_bfree = left;
    }
    return 0;
}

static int fs_access(const char *path, int mask) {
    HIDE(path);
    return faccessat(root_fd, rel(path), mask, 0) < 0 ? -errno : 0;
}

static int fs_opendir(const char *path, struct fuse_file_info *fi) {
    HIDE(path);
    int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -errno;
    struct stat st;
    fstat(fd, &st);
    struct dh *d = calloc(1, sizeof *d);
    d->fd = fd;
    d->ino = st.st_ino;
    d->name = strdup(rel(path));
    fi->fh = (uint64_t)(uintptr_t)d;
    return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
    (void)path; (void)off; (void)flags;
    int fd = openat(DH(fi)->fd, ".", O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -errno;
    DIR *d = fdopendir(fd);
    if (!d) { close(fd); return -errno; }
    int at_root = DH(fi)->ino == root_ino;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (at_root && strcmp(e->d_name, GRAVE) == 0) continue;
        struct stat st = {.st_ino = e->d_ino, .st_mode = (mode_t)DTTOIF(e->d_type)};
        if (filler(buf, e->d_name, &st, 0, 0)) break;
    }
    closedir(d);
    return 0;
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi) {
    (void)path;
    close(DH(fi)->fd);
    free(DH(fi)->name);
    free(DH(fi));
    return 0;
}

static int fs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path; (void)datasync;
    ino_t dir = DH(fi)->ino;
    int n = 0;
    for (struct nsop *op = ns_head, *next; op; op = next) {
        next = op->next;
        if (op->dir == dir) { ns_commit(op); n++; }
    }
    logmsg("fsyncdir %s: %d entries made durable", DH(fi)->name, n);
    return 0;
}

static const struct fuse_operations ops = {
    .init = fs_init, .getattr = fs_getattr, .readlink = fs_readlink, .mkdir = fs_mkdir, .unlink = fs_unlink,
    .rmdir = fs_rmdir, .symlink = fs_symlink, .rename = fs_rename, .link = fs_link, .chmod = fs_chmod,
    .chown = fs_chown, .truncate = fs_truncate, .open = fs_open, .read = fs_read, .write = fs_write,
    .statfs = fs_statfs, .flush = fs_flush, .release = fs_release, .fsync = fs_fsync, .opendir = fs_opendir,
    .readdir = fs_readdir, .releasedir = fs_releasedir, .fsyncdir = fs_fsyncdir, .access = fs_access,
    .create = fs_create, .utimens = fs_utimens, .fallocate = fs_fallocate,
};

/* ---- shutdown: a power cut, or a clean unmount ------------------------------------------------ */

static void for_each_inode(void (*f)(struct inode *)) {
    for (int b = 0; b < NBUCKET; b++)
        for (struct inode *in = inodes[b], *next; in; in = next) { next = in->next; f(in); }
}

static size_t n_files, n_pages;
static void count_pending(struct inode *in) {
    if (!in->dirty) return;
    n_files++;
    n_pages += in->npages;
    logmsg("  pending in %s: %zu pages, size %" PRId64 " (durable %" PRId64 ")%s", in->name, in->npages,
           in->vsize, in->dsize, in->limit != NO_LIMIT ? ", a truncate" : "");
}

static struct inode *newest;
static void find_newest(struct inode *in) {
    if (in->dirty && in->last_seq && (!newest || in->last_seq > newest->last_seq)) newest = in;
}

static void sync_one(struct inode *in) { inode_sync(in); }

static void drop_lost_one(struct inode *in) { drop_lost(in); }

static void power_cut(char *out, size_t outlen) {
    size_t kept = 0, dropped = 0;
    for_each_inode(drop_lost_one);   /* a failed fsync's pages were only ever in the cache */
    int64_t torn_kept = -1, torn_len = 0;
    char *torn_name = NULL;
    logmsg("power cut (loss %s)", loss_names[loss_model]);
    for_each_inode(count_pending);
    if (loss_model == LOSS_RANDOM) {
        for (int b = 0; b < NBUCKET; b++)
            for (struct inode *in = inodes[b]; in; in = in->next) {
                if (!in->dirty || !in->npages) continue;
                apply_fd = in->fd; apply_vsize = in->vsize; apply_random = 1; apply_err = 0;
                apply_kept = apply_dropped = 0;
                twalk(in->pages, apply_page);
                kept += apply_kept; dropped += apply_dropped;
                logmsg("  %s: kept %zu of %zu pending pages", in->name, apply_kept, in->npages);
            }
    } else if (loss_model == LOSS_TORN) {
        for_each_inode(find_newest);
        dropped = n_pages;
        if (newest) {
            int64_t off = newest->last_off, end = off + newest->last_len;
            int64_t pieces = (end - 1) / SECTOR - off / SECTOR + 1;
            torn_len = newest->last_len;
            torn_name = strdup(newest->name);
            for (char *c = torn_name; *c; c++) if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '_';
            torn_kept = 0;
            if (pieces >= 2) {
                int64_t k = 1 + (int64_t)(rnd() % (uint64_t)(pieces - 1));
                int64_t cut = (off / SECTOR + k) * SECTOR;
                char *buf = malloc((size_t)(cut - off));
                ssize_t r = view_read(newest, buf, (size_t)(cut - off), off);
                if (r > 0 && full_pwrite(newest->fd, buf, (size_t)r, off) == 0) torn_kept = r;
                free(buf);
            }
            logmsg("  torn: the newest pending write, %s at %" PRId64 " (%" PRId64 " bytes, %" PRId64
                   " sectors): %" PRId64 " bytes kept", newest->name, off, newest->last_len, pieces, torn_kept);
        }
    } else {
        dropped = n_pages;
    }
    int undone = 0, failed = 0;
    for (struct nsop *op = ns_tail; op; op = ns_tail) {
        logmsg("  undo %s %s%s%s", ns_names[op->kind], op->path, op->path2 ? " -> " : "", op->path2 ? op->path2 : "");
        if (ns_undo(op)) failed++;
        undone++;
        op->grave = NULL;     /* restored, or left: never removed */
        ns_unlink(op);
    }
    snprintf(out, outlen, "{\"event\": \"cut\", \"loss\": \"%s\", \"pending_files\": %zu, \"pending_pages\": %zu, "
           "\"pages_kept\": %zu, \"pages_dropped\": %zu, \"torn_write_bytes\": %" PRId64 ", "
           "\"torn_bytes_kept\": %" PRId64 ", \"torn_file\": \"%s\", \"entries_undone\": %d, \"undo_failures\": %d}",
           loss_names[loss_model], n_files, n_pages, kept, dropped, torn_len, torn_kept,
           torn_name ? torn_name : "", undone, failed);
}

/* the fault's part of a summary: `, "fault": {...}` or nothing */
static void fault_json(char *out, size_t outlen) {
    size_t n = strlen(out);
    if (fault_kind == FAULT_NONE || n < 1 || out[n - 1] != '}') return;
    char *file = strdup(fault_file ? fault_file : "");
    for (char *c = file; *c; c++) if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '_';
    snprintf(out + n - 1, outlen - (n - 1), ", \"fault\": {\"kind\": \"%s\", \"at\": %" PRIu64 ", \"errors\": %" PRIu64
             ", \"file\": \"%s\", \"after\": \"%s\", \"enospc_left\": %" PRId64 "}}", fault_names[fault_kind],
             fault_at, fault_errors, file,
             after_late ? "late" : after_keep ? (evict_at_close ? "evict" : "keep") : "drop",
             fault_kind == FAULT_ENOSPC ? enospc_left : -1);
    free(file);
}

static void clean_shutdown(char *out, size_t outlen) {
    size_t files = 0;
    for (int b = 0; b < NBUCKET; b++)
        for (struct inode *in = inodes[b]; in; in = in->next) files += in->dirty;
    for_each_inode(sync_one);
    int entries = 0;
    while (ns_head) { ns_commit(ns_head); entries++; }
    logmsg("clean shutdown: %zu files and %d entries made durable", files, entries);
    snprintf(out, outlen, "{\"event\": \"clean\", \"files_synced\": %zu, \"entries_committed\": %d}", files,
             entries);
}

/* ---- main ------------------------------------------------------------------------------------- */

static void on_arm(int sig) { (void)sig; fault_armed = 1; }

static void on_cut(int sig) {
    (void)sig;
    cut_requested = 1;
    if (the_fuse) fuse_exit(the_fuse);
}

static void *watch(void *arg) {   /* EOF on the launcher's pipe: it died; shut down cleanly */
    int fd = (int)(intptr_t)arg;
    char c;
    for (;;) {
        ssize_t r = read(fd, &c, 1);
        if (r == 0 || (r < 0 && errno != EINTR)) break;
    }
    pthread_kill(main_thread, SIGTERM);
    return NULL;
}

static void usage(void) {
    fprintf(stderr, "usage: forgetfs [--loss all|random|torn] [--names posix|ext4] [--seed N] [--log FILE] [--watch-fd FD] "
                    "[--fault fsync-eio|write-eio|enospc [--fault-at N] [--fault-on REGEX] [--after-error keep|evict|late|drop] "
                    "[--enospc-bytes B] [--fault-armed-later]] BACKING MOUNTPOINT\n");
    exit(2);
}

struct cmdline {
    const char *log_path, *backing, *mountpoint;
    int watch_fd;
    uint64_t seed;
};

/* The options set loss_model and names_ext4 as they are read; anything amiss prints the usage and exits 2. */
static struct cmdline parse_args(int argc, char **argv) {
    struct cmdline cl = {.log_path = NULL, .watch_fd = -1, .seed = 1};
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--loss") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "all")) loss_model = LOSS_ALL;
            else if (!strcmp(m, "random")) loss_model = LOSS_RANDOM;
            else if (!strcmp(m, "torn")) loss_model = LOSS_TORN;
            else usage();
        } else if (!strcmp(argv[i], "--names") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "posix")) names_ext4 = 0;
            else if (!strcmp(m, "ext4")) names_ext4 = 1;
            else usage();
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) cl.seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--log") && i + 1 < argc) cl.log_path = argv[++i];
        else if (!strcmp(argv[i], "--watch-fd") && i + 1 < argc) cl.watch_fd = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fault") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "fsync-eio")) fault_kind = FAULT_FSYNC_EIO;
            else if (!strcmp(m, "write-eio")) fault_kind = FAULT_WRITE_EIO;
            else if (!strcmp(m, "enospc")) fault_kind = FAULT_ENOSPC;
            else usage();
        } else if (!strcmp(argv[i], "--fault-at") && i + 1 < argc) {
            fault_at = strtoull(argv[++i], NULL, 10);
            if (fault_at < 1) usage();
        } else if (!strcmp(argv[i], "--fault-on") && i + 1 < argc) {
            if (regcomp(&fault_rx, argv[++i], REG_EXTENDED | REG_NOSUB) != 0) usage();
            fault_rx_set = 1;
        } else if (!strcmp(argv[i], "--after-error") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "keep")) after_keep = 1;
            else if (!strcmp(m, "evict")) after_keep = evict_at_close = 1;
            else if (!strcmp(m, "late")) after_keep = after_late = 1;
            else if (!strcmp(m, "drop")) after_keep = 0;
            else usage();
        } else if (!strcmp(argv[i], "--enospc-bytes") && i + 1 < argc) enospc_left = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--fault-armed-later")) fault_armed = 0;
        else if (argv[i][0] == '-' || npos == 2) usage();
        else pos[npos++] = argv[i];
    }
    if (npos != 2) usage();
    cl.backing = pos[0];
    cl.mountpoint = pos[1];
    return cl;
}

/* root_fd on backing_path, its grave made (refused if a killed forgetfs left one), the log opened.  0 or 1. */
static int open_backing(const char *log_path) {
    root_fd = open(backing_path, O_RDONLY | O_DIRECTORY);
    if (root_fd < 0) { fprintf(stderr, "forgetfs: %s: %s\n", backing_path, strerror(errno)); return 1; }
    struct stat st;
    fstat(root_fd, &st);
    root_ino = st.st_ino;
    if (fstatat(root_fd, GRAVE, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        fprintf(stderr, "forgetfs: %s/%s exists: a forgetfs over this directory was killed before it could "
                        "finish; its pending unlinks are there (remove it to go on)\n", backing_path, GRAVE);
        return 1;
    }
    if (mkdirat(root_fd, GRAVE, 0700) < 0) {
        fprintf(stderr, "forgetfs: cannot make %s/%s: %s\n", backing_path, GRAVE, strerror(errno));
        return 1;
    }
    if (log_path && !(logf = fopen(log_path, "a"))) {
        fprintf(stderr, "forgetfs: %s: %s\n", log_path, strerror(errno));
        return 1;
    }
    return 0;
}

/* the_fuse, mounted on mountpoint with FUSE's signal handlers set; *se its session.  0 or 1. */
static int mount_fuse(const char *mountpoint, struct fuse_session **se) {
    char *shown = strdup(backing_path), *fsname;
    for (char *c = shown; *c; c++) if (*c == ',' || *c == '\\') *c = '_';   /* -o's separators */
    if (asprintf(&fsname, "fsname=forgetfs:%s,subtype=forgetfs", shown) < 0) return 1;
    char *fargv[] = {"forgetfs", "-o", fsname, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
    the_fuse = fuse_new(&args, &ops, sizeof ops, NULL);
    if (!the_fuse) { unlinkat(root_fd, GRAVE, AT_REMOVEDIR); return 1; }
    if (fuse_mount(the_fuse, mountpoint) != 0) {
        fuse_destroy(the_fuse);
        unlinkat(root_fd, GRAVE, AT_REMOVEDIR);
        return 1;
    }
    *se = fuse_get_session(the_fuse);
    if (fuse_set_signal_handlers(*se) != 0) { fuse_unmount(the_fuse); return 1; }
    return 0;
}

/* A detached helper thread that takes no signal: they all go to the loop's thread. */
static void start_helper(void *(*fn)(void *), void *arg) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    pthread_create(&t, NULL, fn, arg);
    pthread_detach(t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* SIGUSR1 cuts the power; with a watch fd, a thread that shuts down cleanly when the launcher dies. */
static void start_cut_and_watch(int watch_fd) {
    struct sigaction sa = {0};
    sa.sa_handler = on_cut;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    struct sigaction arm = {0};
    arm.sa_handler = on_arm;
    sigemptyset(&arm.sa_mask);
    arm.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &arm, NULL);
    main_thread = pthread_self();
    if (fault_kind == FAULT_FSYNC_EIO && !after_keep)   /* drop: invalidates the kernel's cache off the loop */
        start_helper(invalidator, NULL);
    if (watch_fd >= 0) start_helper(watch, (void *)(intptr_t)watch_fd);
}

/* After the loop: unmount, then the power cut or the clean shutdown, and its summary on stdout. */
static void shut_down(struct fuse_session *se) {
    fuse_remove_signal_handlers(se);
    signal(SIGPIPE, SIG_IGN);   /* a launcher that died leaves our stdout a broken pipe */
    fuse_unmount(the_fuse);
    char summary[2048];
    if (cut_requested) power_cut(summary, sizeof summary); else clean_shutdown(summary, sizeof summary);
    fault_json(summary, sizeof summary);
    for (int b = 0; b < NBUCKET; b++)
        for (struct inode *in = inodes[b]; in; in = in->next) close(in->fd);
    if (unlinkat(root_fd, GRAVE, AT_REMOVEDIR) < 0)
        logmsg("%s not removed: %s", GRAVE, strerror(errno));
    fuse_destroy(the_fuse);
    printf("%s\n", summary);
    fflush(stdout);
}

int main(int argc, char **argv) {
    struct cmdline cl = parse_args(argc, argv);
    rng_state = cl.seed;
    backing_path = cl.backing;
    if (open_backing(cl.log_path) != 0) return 1;
    struct fuse_session *se;
    if (mount_fuse(cl.mountpoint, &se) != 0) return 1;
    start_cut_and_watch(cl.watch_fd);
    printf("ready\n");
    fflush(stdout);
    logmsg("mounted %s on %s (loss %s, names %s, seed %" PRIu64 ", fault %s at %" PRIu64 ")", backing_path,
           cl.mountpoint, loss_names[loss_model], names_ext4 ? "ext4" : "posix", cl.seed, fault_names[fault_kind],
           fault_at);
    fuse_loop(the_fuse);
    shut_down(se);
    return 0;
}
