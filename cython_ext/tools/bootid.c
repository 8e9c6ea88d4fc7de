/* bootid: a process that sees another boot.  Loaded with LD_PRELOAD into a crash test's writers and readers, it
   serves the boot id in $KVLAB_BOOT_ID (read as the process starts, before anything can change its environment)
   to whoever opens /proc/sys/kernel/random/boot_id, and says that file is on procfs.  A power cut is a reboot:
   an engine that trusts what it wrote in "this boot" (libmdbx keeps a weak meta page when the boot id it recorded
   matches the current one, because the OS page cache would have survived) has to see a new id after a cut, and
   the host's id never changes.  libmdbx reads the id once, as it loads, with open(), fstatfs() (procfs only) and
   read(): those are the calls served here; nothing else is touched, and without $KVLAB_BOOT_ID nothing is.
   Each served open is told on stderr when $KVLAB_BOOT_ID_SAY is set (the crash test's log of who read it).
   Not served: glibc's fortified __open_2 family, fopen and C++ streams (glibc opens those inside itself), raw
   syscalls; an engine reading the id that way sees the host's, and its writer's stderr never says it read one.
   Built by kvlab/execution/crash/reboot.py. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define PROC_SUPER_MAGIC 0x9FA0

static char served[40];      /* the id, as the kernel writes it: 36 characters and a newline */
static int have_id;
static int say;

__attribute__((constructor)) static void bootid_load(void) {
    const char *id = getenv("KVLAB_BOOT_ID");
    if (id && strlen(id) == 36) {
        snprintf(served, sizeof served, "%s\n", id);
        have_id = 1;
    }
    say = getenv("KVLAB_BOOT_ID_SAY") != NULL;
}

static int serve(const char *path) {
    int fd = memfd_create("kvlab-boot-id", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (write(fd, served, 37) != 37 || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        errno = EIO;
        return -1;
    }
    if (say) {
        char line[160];
        int n = snprintf(line, sizeof line, "kvlab bootid: pid %d opened %s: served %.36s\n", (int)getpid(), path,
                         served);
        if (n > 0 && write(2, line, (size_t)n) < 0) { /* nothing to do */ }
    }
    return fd;
}

static int is_boot_id(const char *path) { return have_id && path && strcmp(path, BOOT_ID_PATH) == 0; }

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*fstatfs_fn)(int, struct statfs *);

static int mode_of(int flags, va_list ap) {
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? va_arg(ap, int) : 0;
}

/* open, open64, openat, openat64: the boot-id file served, anything else passed on to libc's */
#define OPEN_LIKE(name, fn_type, params, args)                  \
    int name params {                                           \
        va_list ap;                                             \
        va_start(ap, flags);                                    \
        int mode = mode_of(flags, ap);                          \
        va_end(ap);                                             \
        if (is_boot_id(path)) return serve(path);               \
        static fn_type real;                                    \
        if (!real) real = (fn_type)dlsym(RTLD_NEXT, #name);     \
        return real args;                                       \
    }

OPEN_LIKE(open, open_fn, (const char *path, int flags, ...), (path, flags, mode))
OPEN_LIKE(open64, open_fn, (const char *path, int flags, ...), (path, flags, mode))
OPEN_LIKE(openat, openat_fn, (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode))
OPEN_LIKE(openat64, openat_fn, (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode))

/* whether `fd` is one serve() made: its memfd's name, as /proc/self/fd shows it (a number alone could be reused) */
static int is_served(int fd) {
    char link[64], target[128];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = 0;
    return strncmp(target, "/memfd:kvlab-boot-id", 20) == 0;
}

static int on_procfs(int fd, struct statfs *buf, const char *name) {
    static fstatfs_fn real, real64;
    fstatfs_fn *slot = name[7] ? &real64 : &real;
    if (!*slot) *slot = (fstatfs_fn)dlsym(RTLD_NEXT, name);
    int rc = (*slot)(fd, buf);
    if (rc == 0 && have_id && is_served(fd)) buf->f_type = PROC_SUPER_MAGIC;
    return rc;
}

int fstatfs(int fd, struct statfs *buf) { return on_procfs(fd, buf, "fstatfs"); }
/* x86-64 and the other LP64 targets: struct statfs64 is struct statfs */
int fstatfs64(int fd, struct statfs64 *buf) { return on_procfs(fd, (struct statfs *)buf, "fstatfs64"); }
