/* test_31_torture: crash and fault torture of DURABLE mode.
 *
 * Two kinds of rounds, alternated, for XAC_TORTURE_SECONDS (default 20):
 *
 * - Power loss (like SQLite's test6.c + crash9.test): one writer whose
 *   file operations go through a fault layer swapped into the xos table.
 *   The layer keeps a shadow of every write not yet synced (the bytes it
 *   replaced), of every file truncated (ftruncate, open with O_TRUNC)
 *   since its last sync (a copy of the file as it was), and of every file
 *   unlinked since its directory's last sync (a hard link).  A write
 *   through an O_DSYNC descriptor (the lone writer's O_DIRECT log writes)
 *   is stable when it returns, as are older writes to its range.  At a random
 *   operation count it "loses power": it puts back the old bytes of all
 *   unsynced writes, or of a random subset of their 512-byte sectors
 *   (torn pages), the old contents and sizes of files truncated, and the
 *   files unlinked, and _exits.  Or instead it
 *   injects EIO or ENOSPC into one write, or EIO into one sync (and then,
 *   like Linux after a failed writeback, may drop the unsynced pages and
 *   call them clean: fsyncgate).  The count may fall in recovery, commit,
 *   group-commit sync, checkpoint or archive.
 * - Process kill: three writers on the real OS layer; the parent SIGKILLs
 *   all of them at a random moment (also the process recovering).
 *
 * Every transaction increments a counter at offset 0 and writes 1-4 random
 * bytes of an 8-page segment.  Writers journal each transaction to a side
 * file with O_APPEND: an intent (counter value + writes) before xend, the
 * outcome after.  The counter gives the commit order (every transaction
 * conflicts on it).  Each round begins with a process that recovers and
 * dumps the segment; the parent checks the dump against the last verified
 * image plus the journaled transactions: every transaction whose xend
 * returned COMMITTED must be there, nothing else may be (an intent with no
 * outcome, or an XAC_EIO, may be either), and the bytes must equal the
 * serial replay in counter order.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_os.h"

#define NPG 8
#define NWRITERS 3
#define MAXW 4
#define CRASH_EXIT 77

struct jrec {
    uint32_t kind; /* 1 intent, 2 committed, 3 aborted, 4 error */
    uint32_t v;    /* counter value it writes */
    uint32_t nw;
    uint32_t pad;
    struct {
        uint32_t page, off;
        uint32_t val;
    } w[MAXW];
};

static size_t PS;
static uint64_t rng;

/* A copy of the used bytes of p in want bytes; p is freed.  Stops the test
 * when memory runs out.  (Not realloc: gcc 12's analyser loses track of a
 * global that realloc moved and reports a double free.) */
static void *grow(void *p, size_t used, size_t want)
{
    void *q = malloc(want);

    E_ALLOC(q);
    if (used > 0)
        memcpy(q, p, used);
    free(p);
    return q;
}
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* ---- the fault layer (child side) ------------------------------------ */

struct shadow {
    char path[200];
    off_t off;
    size_t len;
    char *old;
    long seq; /* order among shadows and saved files */
};

static struct shadow *sh;
static size_t nsh, capsh;
static long seq;

/* A file as it was at its last sync, before a truncation ("<path>.pre",
 * kind 't'), or a file unlinked since its directory's last sync
 * ("<path>.unl", kind 'u'). */
struct saved {
    char path[200];
    char kind;
    long seq;
};

static struct saved sv[64];
static size_t nsv;
static char fdpath[1024][200];
static int fddsync[1024];
static long ops, crash_at, fault_at;
static int fault_kind; /* 1 write EIO, 2 write ENOSPC, 3 sync EIO */
static int fault_fired;

static void saved_name(char *buf, size_t n, const struct saved *v)
{
    if (snprintf(buf, n, "%s.%s", v->path, v->kind == 't' ? "pre" : "unl") >=
        (int)n)
        abort(); /* path is at most 199 bytes and buf 240 */
}

/* The truncation copy of path, if it has one. */
static const struct saved *truncated(const char *path)
{
    size_t i;
    for (i = 0; i < nsv; i++)
        if (sv[i].kind == 't' && strcmp(sv[i].path, path) == 0)
            return &sv[i];
    return NULL;
}

static void lose_power(void)
{
    int torn = rnd(2), fd;
    size_t i, s;
    char old[240];
    const struct saved *t;

    /* Truncated files get their old contents back; then the writes made
     * before the truncation are undone on them, and the writes made
     * after it are gone with the truncated file. */
    for (i = 0; i < nsv; i++) {
        saved_name(old, sizeof old, &sv[i]);
        if (rename(old, sv[i].path) != 0)
            continue;
        /* Tell the parent (it counts these bytes). */
        fd = open("restored", O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            if (write(fd, &sv[i].kind, 1) != 1)
                (void)0;
            close(fd);
        }
    }
    for (i = nsh; i-- > 0;) {
        t = truncated(sh[i].path);
        if (t != NULL && sh[i].seq > t->seq)
            continue;
        fd = open(sh[i].path, O_WRONLY);
        if (fd < 0)
            continue;
        for (s = 0; s < sh[i].len; s += 512) {
            size_t n = sh[i].len - s < 512 ? sh[i].len - s : 512;
            if (!torn || rnd(2))
                if (pwrite(fd, sh[i].old + s, n, sh[i].off + (off_t)s) < 0)
                    break;
        }
        close(fd);
    }
    _exit(CRASH_EXIT);
}

static int tick(void)
{
    ops++;
    if (crash_at > 0 && ops == crash_at)
        lose_power();
    return fault_at > 0 && ops == fault_at;
}

/* Keep what power loss would bring back: a copy of path before its
 * first truncation since its last sync, or a link to it before an
 * unlink not yet made durable by a directory sync. */
static void save(const char *path, char kind)
{
    struct saved *v;
    char name[240], buf[65536];
    int in, out;
    ssize_t n;

    if (nsv == sizeof sv / sizeof sv[0] || strlen(path) >= sizeof v->path ||
        (kind == 't' && truncated(path) != NULL))
        return;
    v = &sv[nsv];
    snprintf(v->path, sizeof v->path, "%s", path);
    v->kind = kind;
    v->seq = ++seq;
    saved_name(name, sizeof name, v);
    if (kind == 'u') {
        if (link(path, name) == 0)
            nsv++;
        return;
    }
    in = open(path, O_RDONLY);
    if (in < 0)
        return; /* a new file: nothing to bring back */
    out = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) {
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                break;
        close(out);
        nsv++;
    }
    close(in);
}

/* path's state is durable now: drop its truncation copy (a file sync) or
 * the unlinked files of the directory (a directory sync). */
static void settle(const char *path)
{
    size_t i, j, dl = strlen(path);
    char name[240];

    for (i = j = 0; i < nsv; i++) {
        int done = (sv[i].kind == 't' && strcmp(sv[i].path, path) == 0) ||
                   (sv[i].kind == 'u' && strncmp(sv[i].path, path, dl) == 0 &&
                    sv[i].path[dl] == '/' && strchr(sv[i].path + dl + 1,
                                                    '/') == NULL);
        if (done) {
            saved_name(name, sizeof name, &sv[i]);
            unlink(name);
        } else {
            sv[j++] = sv[i];
        }
    }
    nsv = j;
}

static int f_ftruncate(int fd, off_t len)
{
    if (fd >= 0 && fd < 1024)
        save(fdpath[fd], 't');
    return ftruncate(fd, len);
}

static int f_unlink(const char *path)
{
    tick();
    save(path, 'u');
    return unlink(path);
}

static int f_open(const char *path, int flags, mode_t mode)
{
    int fd;

    if (flags & O_TRUNC)
        save(path, 't');
    fd = open(path, flags | O_CLOEXEC, mode);
    if (fd >= 0 && fd < 1024) {
        snprintf(fdpath[fd], sizeof fdpath[fd], "%s", path);
        fddsync[fd] = (flags & O_DSYNC) != 0;
    }
    return fd;
}

/* Drop the shadows of fd's file that overlap [off, off + n) (n == 0:
 * all of them), putting their old bytes back first if revert. */
static void forget_range(int fd, off_t off, size_t n, int revert)
{
    size_t i, j;
    for (i = j = 0; i < nsh; i++) {
        if (strcmp(sh[i].path, fdpath[fd]) == 0 &&
            (n == 0 || (sh[i].off < off + (off_t)n &&
                        off < sh[i].off + (off_t)sh[i].len))) {
            if (revert && pwrite(fd, sh[i].old, sh[i].len, sh[i].off) < 0)
                (void)0;
            free(sh[i].old);
        } else {
            sh[j++] = sh[i];
        }
    }
    nsh = j;
}

static ssize_t f_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    struct shadow *x;
    ssize_t r;

    if (tick() && (fault_kind == 1 || fault_kind == 2)) {
        fault_fired++;
        errno = fault_kind == 1 ? EIO : ENOSPC;
        return -1;
    }
    if (fd >= 0 && fd < 1024 && !fddsync[fd]) {
        if (nsh == capsh) {
            capsh = capsh ? 2 * capsh : 64;
            sh = realloc(sh, capsh * sizeof *sh);
            E_ALLOC(sh);
        }
        x = &sh[nsh++];
        snprintf(x->path, sizeof x->path, "%s", fdpath[fd]);
        x->off = off;
        x->len = n;
        x->old = calloc(1, n);
        x->seq = ++seq;
        r = pread(fd, x->old, n, off);
        (void)r;
    } else if (fd >= 0 && fd < 1024) {
        /* A synchronous write (O_DSYNC; LIBXAC's direct log writes are
         * also O_DIRECT) makes its range stable: the kernel writes back
         * cached writes there first, so power loss no longer undoes
         * them. */
        r = pwrite(fd, buf, n, off);
        if (r > 0)
            forget_range(fd, off, (size_t)r, 0);
        return r;
    }
    return pwrite(fd, buf, n, off);
}

static int f_sync(int fd, int data)
{
    if (tick() && fault_kind == 3) {
        fault_fired++;
        /* Linux may mark the failed pages clean and drop their contents. */
        if (fd >= 0 && fd < 1024 && rnd(2))
            forget_range(fd, 0, 0, 1);
        errno = EIO;
        return -1;
    }
    if (fd >= 0 && fd < 1024) {
        forget_range(fd, 0, 0, 0);
        settle(fdpath[fd]);
    }
    return data ? fdatasync(fd) : fsync(fd);
}

static int f_fdatasync(int fd)
{
    return f_sync(fd, 1);
}

static int f_fsync(int fd)
{
    return f_sync(fd, 0);
}

static void arm_faults(void)
{
    ops = 0;
    crash_at = fault_at = 0;
    fault_kind = 0;
    if (rnd(4) != 0) {
        crash_at = 1 + (long)rnd(120);
    } else {
        fault_at = 1 + (long)rnd(120);
        fault_kind = 1 + (int)rnd(3);
        if (rnd(2))
            crash_at = fault_at + 1 + (long)rnd(40);
    }
    nsv = 0;
    xos.open = f_open;
    xos.ftruncate = f_ftruncate;
    xos.unlink = f_unlink;
    xos.pwrite = f_pwrite;
    xos.fdatasync = f_fdatasync;
    xos.fsync = f_fsync;
}

/* ---- writers --------------------------------------------------------- */

static void jwrite(int jfd, const struct jrec *r)
{
    if (write(jfd, r, sizeof *r) != (ssize_t)sizeof *r)
        _exit(9);
}

static void dump(int *x, int round)
{
    char name[64], *buf = malloc(NPG * PS);
    int fd;

    E_ALLOC(buf);
    if (xbeginQuery() != 0)
        _exit(8);
    memcpy(buf, x, NPG * PS);
    xendQuery();
    snprintf(name, sizeof name, "dump.%d", round);
    fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, NPG * PS) != (ssize_t)(NPG * PS))
        _exit(8);
    close(fd);
    free(buf);
}

/* Run up to ntx transactions; stop at the first error. */
static void work(int *x, int jfd, int ntx, int faulty)
{
    struct jrec r;
    int i, rc, k;

    for (i = 0; i < ntx; i++) {
        memset(&r, 0, sizeof r);
        rc = xbegin();
        if (rc != 0)
            break;
        r.kind = 1;
        r.v = (uint32_t)x[0] + 1;
        x[0] = (int)r.v;
        r.nw = 1 + rnd(MAXW);
        for (k = 0; k < (int)r.nw; k++) {
            r.w[k].page = rnd(NPG);
            r.w[k].off = 8 + rnd((unsigned)PS - 8);
            r.w[k].val = rnd(256);
            ((unsigned char *)x)[r.w[k].page * PS + r.w[k].off] =
                (unsigned char)r.w[k].val;
        }
        jwrite(jfd, &r);
        rc = xend();
        r.kind = rc == COMMITTED ? 2 : rc == ABORTED ? 3 : 4;
        jwrite(jfd, &r);
        if (r.kind == 4)
            break;
        if (faulty && rnd(10) == 0 && xCheckpoint() != 0)
            break;
        if (faulty && rnd(20) == 0) {
            char **names = NULL;
            rc = xArchive(&names, XAC_ARCHIVE_REMOVE);
            free(names);
            if (rc != 0)
                break;
        }
    }
}

static void writer(int round, int w, int faulty, int do_dump, int ntx)
{
    char name[64];
    int *x, jfd;

    rng ^= (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL;
    snprintf(name, sizeof name, "j.%d.%d", round, w);
    jfd = open(name, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (jfd < 0)
        _exit(7);
    if (faulty)
        arm_faults();
    if (xInit("ctl", DURABLE) != 0)
        _exit(10);
    x = xMmap("d.db", NPG * PS);
    if (x == MAP_FAILED)
        _exit(11);
    if (do_dump)
        dump(x, round);
    work(x, jfd, ntx, faulty);
    xShutdown();
    _exit(fault_fired ? 12 : 0);
}

/* ---- the parent's model ---------------------------------------------- */

/* Files of one kind that power losses brought back. */
static long count_restored(char kind)
{
    char buf[4096];
    long n = 0;
    ssize_t r, i;
    int fd = open("restored", O_RDONLY);

    if (fd < 0)
        return 0;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        for (i = 0; i < r; i++)
            n += buf[i] == kind;
    close(fd);
    return n;
}

static unsigned char *base; /* last verified image */
static uint32_t base_ctr;
static struct jrec *conf, *amb; /* confirmed / ambiguous, unverified */
static size_t nconf, namb, cconf, camb; /* counts and capacities */
static long verified, lost, bad;

static void collect(int round, int w)
{
    char name[64];
    struct jrec r, last;
    int fd, have = 0;

    snprintf(name, sizeof name, "j.%d.%d", round, w);
    fd = open(name, O_RDONLY);
    if (fd < 0)
        return;
    while (read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
        if (r.kind == 1) {
            last = r;
            have = 1;
        } else if (r.kind == 2) {
            if (nconf == cconf) {
                cconf = cconf ? 2 * cconf : 64;
                conf = grow(conf, nconf * sizeof *conf, cconf * sizeof *conf);
            }
            conf[nconf++] = r;
            have = 0;
        } else if (r.kind == 3) {
            have = 0;
        } else {
            have = 1; /* XAC_EIO: may or may not be in the log */
        }
    }
    close(fd);
    unlink(name);
    if (have) {
        if (namb == camb) {
            camb = camb ? 2 * camb : 64;
            amb = grow(amb, namb * sizeof *amb, camb * sizeof *amb);
        }
        amb[namb++] = last;
    }
}

static void apply(unsigned char *img, const struct jrec *r)
{
    uint32_t k;
    memcpy(img, &r->v, sizeof r->v);
    for (k = 0; k < r->nw; k++)
        img[r->w[k].page * PS + r->w[k].off] = (unsigned char)r->w[k].val;
}

/* Check dump d against base + journaled transactions. */
static void verify(const unsigned char *d)
{
    uint32_t c, v;
    size_t i, nv;
    unsigned char *img = malloc(NPG * PS);
    const struct jrec **pick;
    int ok = 1;

    E_ALLOC(img);
    memcpy(&c, d, sizeof c);
    for (i = 0; i < nconf; i++)
        if (conf[i].v > c || conf[i].v <= base_ctr) {
            lost++;
            ok = 0;
            fprintf(stderr, "torture: committed txn v=%u missing (counter "
                            "%u, base %u)\n",
                    conf[i].v, c, base_ctr);
        }
    nv = c >= base_ctr ? c - base_ctr : 0;
    pick = calloc(nv + 1, sizeof *pick);
    E_ALLOC(pick);
    if (c < base_ctr)
        ok = 0;
    for (v = base_ctr + 1; ok && v <= c; v++) {
        for (i = 0; i < nconf; i++)
            if (conf[i].v == v)
                pick[v - base_ctr - 1] = &conf[i];
        for (i = 0; !pick[v - base_ctr - 1] && i < namb; i++)
            if (amb[i].v == v)
                pick[v - base_ctr - 1] = &amb[i];
        if (pick[v - base_ctr - 1] == NULL) {
            fprintf(stderr, "torture: counter %u from no transaction\n", v);
            ok = 0;
        }
    }
    if (ok) {
        memcpy(img, base, NPG * PS);
        for (i = 0; i < nv; i++)
            apply(img, pick[i]);
        if (memcmp(img, d, NPG * PS) != 0) {
            /* Two ambiguous intents with one value: try the others. */
            ok = 0;
            for (i = 0; i < namb && !ok; i++) {
                if (amb[i].v <= base_ctr || amb[i].v > c)
                    continue;
                const struct jrec *save = pick[amb[i].v - base_ctr - 1];
                pick[amb[i].v - base_ctr - 1] = &amb[i];
                memcpy(img, base, NPG * PS);
                for (size_t j = 0; j < nv; j++)
                    apply(img, pick[j]);
                ok = memcmp(img, d, NPG * PS) == 0;
                if (!ok)
                    pick[amb[i].v - base_ctr - 1] = save;
            }
            if (!ok)
                fprintf(stderr, "torture: image differs from the serial "
                                "replay (counter %u, base %u)\n",
                        c, base_ctr);
        }
    }
    if (ok) {
        verified += (long)nconf;
    } else {
        bad++;
    }
    memcpy(base, d, NPG * PS);
    base_ctr = c;
    nconf = namb = 0;
    free(pick);
    free(img);
}

static int read_dump(int round, unsigned char *d)
{
    char name[64];
    int fd, ok;

    snprintf(name, sizeof name, "dump.%d", round);
    fd = open(name, O_RDONLY);
    if (fd < 0)
        return 0;
    ok = read(fd, d, NPG * PS) == (ssize_t)(NPG * PS);
    close(fd);
    unlink(name);
    return ok;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    const char *e = getenv("XAC_TORTURE_SECONDS");
    double secs = e ? atof(e) : 20.0, t0;
    long crashes = 0, kills = 0, faults = 0, rounds = 0, dumps = 0;
    char dir[128];
    unsigned char *d;
    pid_t pid[NWRITERS];
    int round, w, st, i;

    PS = (size_t)sysconf(_SC_PAGESIZE);
    if (tu_valgrind())
        secs = 2;
    rng = (uint64_t)time(NULL) * 2654435761u + (uint64_t)getpid();
    if (getenv("XAC_TORTURE_SEED"))
        rng = strtoull(getenv("XAC_TORTURE_SEED"), NULL, 10);
    printf("# seed %llu, %.0f s\n", (unsigned long long)rng, secs);
    /* tmpfs makes syncs free; the fault layer decides what was synced. */
    snprintf(dir, sizeof dir, "/dev/shm/xac-torture-%d", (int)getpid());
    if (mkdir(dir, 0700) != 0 || chdir(dir) != 0)
        tu_tmpdir();
    base = calloc(1, NPG * PS);
    d = malloc(NPG * PS);
    setenv("XAC_LOG_LIMIT", "65536", 1);
    t0 = now();
    for (round = 0; now() - t0 < secs; round++) {
        rounds++;
        if (round % 4 != 3) {
            /* power loss / fault round: one writer */
            pid[0] = fork();
            if (pid[0] == 0)
                writer(round, 0, 1, 1, 1 + (int)rnd(30));
            waitpid(pid[0], &st, 0);
            if (WIFEXITED(st) && WEXITSTATUS(st) == CRASH_EXIT)
                crashes++;
            else if (WIFEXITED(st) && WEXITSTATUS(st) >= 10 &&
                     WEXITSTATUS(st) <= 12)
                faults++;
            else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "torture: writer status %#x\n", st);
                bad++;
            }
            if (read_dump(round, d)) {
                dumps++;
                verify(d);
            }
            collect(round, 0);
        } else {
            /* kill round: a recovering dumper, then three writers */
            for (w = 0; w < NWRITERS; w++) {
                pid[w] = fork();
                if (pid[w] == 0) {
                    if (w > 0) {
                        /* wait for the dumper's image */
                        char name[64];
                        snprintf(name, sizeof name, "dump.%d", round);
                        for (i = 0; i < 2000 && access(name, F_OK) != 0; i++)
                            usleep(100);
                    }
                    writer(round, w, 0, w == 0, 1000);
                }
            }
            usleep(500 + rnd(20000));
            for (w = 0; w < NWRITERS; w++)
                kill(pid[w], SIGKILL);
            for (w = 0; w < NWRITERS; w++) {
                waitpid(pid[w], &st, 0);
                if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
                    kills++;
                else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                    bad++;
            }
            if (read_dump(round, d)) {
                dumps++;
                verify(d);
            }
            for (w = 0; w < NWRITERS; w++)
                collect(round, w);
        }
    }
    /* A last, clean recovery and check. */
    pid[0] = fork();
    if (pid[0] == 0)
        writer(round, 0, 0, 1, 0);
    waitpid(pid[0], &st, 0);
    if (read_dump(round, d)) {
        dumps++;
        verify(d);
    }
    printf("# rounds %ld, crash points %ld (power losses %ld, SIGKILLs %ld), "
           "faults injected %ld, images checked %ld, transactions "
           "verified %ld, transactions lost %ld, bad images %ld, "
           "truncated files restored %ld, unlinked files restored %ld\n",
           rounds, crashes + kills, crashes, kills, faults, dumps, verified,
           lost, bad, count_restored('t'), count_restored('u'));
    test_cond("at least 200 crash points", crashes + kills >= 200 ||
                                               secs < 10);
    test_cond("transactions were verified", verified > 0);
    test_cond("power losses undid truncations",
              count_restored('t') > 0 || crashes < 100);
    test_cond("no committed transaction lost", lost == 0);
    test_cond("every image is a serial replay of committed transactions",
              bad == 0);
    if (system("rm -rf ctl d.db dump.* j.* restored") != 0)
        (void)0;
    if (chdir("/") == 0)
        rmdir(dir);
    free(base);
    free(d);
    free(conf);
    free(amb);
    return test_report();
}
