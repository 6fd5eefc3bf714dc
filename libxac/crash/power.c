/* power.c: crash points by simulated power loss: record a store's
 * file-system calls under the recorder, then rebuild and recover the
 * states a power cut could leave (crash.h, trace.h,
 * docs/crash-consistency.md).
 *
 * The model (ext4 with data=ordered is its pattern):
 *  - a file's data: every write, truncate and size change of the file
 *    issued before its last sync (fsync or fdatasync of the file, an
 *    O_SYNC/O_DSYNC write, msync(MS_SYNC) of its mapping, sync/syncfs, an
 *    fsync of the directory) has reached the disk; of those after it, a
 *    random prefix has, in the order issued, and the first one that did
 *    not may be torn: each of its 512-byte sectors (aligned in the file)
 *    reached the disk or not, independently;
 *  - the directory: creates, mkdirs, renames and unlinks issued before the
 *    last sync of anything have reached the disk (a journal commit carries
 *    all of them); of those after it, a random prefix has;
 *  - files are rebuilt at the recorded directory's own path, so a store
 *    that keeps absolute paths finds itself.
 */
#include "crash.h"

#include "scratch.h"
#include "trace.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECTOR 512
#define POINTS_PER_TRACE 100
#define MAX_NAMES 1024

struct op {
    struct xt_rec r;
    const unsigned char *payload;
};

struct trace {
    unsigned char *raw;
    struct op *ops;
    size_t n;
    size_t ready; /* index of the READY mark */
    uint32_t nfid;
};

struct name {
    char path[256];
    int fid; /* -1: a directory */
};

static int load_trace(const char *path, struct trace *t, const char *prog)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "%s: crash: no trace %s\n", prog, path);
        if (f)
            fclose(f);
        return -1;
    }
    t->raw = malloc((size_t)st.st_size + 1);
    size_t size = t->raw ? fread(t->raw, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    size_t cap = 1024, at = 0;
    t->ops = calloc(cap, sizeof *t->ops);
    if (t->raw == NULL || t->ops == NULL)
        xb_die_errno("malloc");
    t->ready = SIZE_MAX;
    while (at + sizeof(struct xt_rec) <= size) {
        struct op o;
        memcpy(&o.r, t->raw + at, sizeof o.r);
        at += sizeof o.r;
        size_t payload = o.r.type == XT_ZERO ? 0 : (size_t)o.r.len;
        if (at + payload > size)
            break;
        o.payload = t->raw + at;
        at += payload;
        if (t->n == cap) {
            t->ops = realloc(t->ops, 2 * cap * sizeof *t->ops);
            if (t->ops == NULL)
                xb_die_errno("realloc");
            memset(t->ops + cap, 0, cap * sizeof *t->ops);
            cap *= 2;
        }
        if (o.r.type == XT_MARK && o.r.aux == XT_MARK_READY)
            t->ready = t->n;
        if (o.r.fid >= t->nfid)
            t->nfid = o.r.fid + 1;
        t->ops[t->n++] = o;
    }
    if (t->ready == SIZE_MAX) {
        fprintf(stderr, "%s: crash: the recording never got the store "
                "open (trace %s, %zu records)\n", prog, path, t->n);
        return -1;
    }
    return 0;
}

static int is_data(uint32_t type)
{
    return type == XT_WRITE || type == XT_ZERO || type == XT_SIZE;
}

static int is_meta(uint32_t type)
{
    return type == XT_CREATE || type == XT_MKDIR || type == XT_UNLINK ||
           type == XT_RENAME;
}

/* Write the sectors of op o that persist (all, or a random subset). */
static void apply_data(int fd, const struct op *o, int torn,
                       struct xb_rng *rng)
{
    if (o->r.type == XT_SIZE) {
        if (!torn && ftruncate(fd, (off_t)o->r.off) != 0)
            xb_die_errno("ftruncate");
        return;
    }
    static const unsigned char zeros[SECTOR];
    uint64_t off = o->r.off, end = o->r.off + o->r.len;
    while (off < end) {
        uint64_t next = (off / SECTOR + 1) * SECTOR;
        if (next > end)
            next = end;
        if (!torn || xb_rng_below(rng, 2)) {
            size_t n = (size_t)(next - off);
            const void *src = o->r.type == XT_ZERO
                                  ? (const void *)zeros
                                  : (const void *)(o->payload +
                                                   (off - o->r.off));
            if (pwrite(fd, src, n, (off_t)off) != (ssize_t)n)
                xb_die_errno("pwrite");
        }
        off = next;
    }
}

static int find_name(struct name *names, int n, const char *path)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i].path, path) == 0)
            return i;
    return -1;
}

static void apply_meta(const struct op *o, struct name *names, int *n)
{
    const char *a = (const char *)o->payload;
    int i = find_name(names, *n, a);
    switch (o->r.type) {
    case XT_CREATE:
    case XT_MKDIR:
        if (i < 0 && *n < MAX_NAMES && strlen(a) < sizeof names[0].path)
            i = (*n)++;
        if (i >= 0) {
            snprintf(names[i].path, sizeof names[i].path, "%s", a);
            names[i].fid = o->r.type == XT_MKDIR ? -1 : (int)o->r.fid;
        }
        break;
    case XT_UNLINK:
        if (i >= 0)
            names[i] = names[--*n];
        break;
    case XT_RENAME: {
        const char *b = a + strlen(a) + 1;
        int j = find_name(names, *n, b);
        if (i < 0 || strlen(b) >= sizeof names[0].path)
            break;
        if (j >= 0 && j != i) {
            names[j] = names[i];
            names[i] = names[--*n];
        } else {
            snprintf(names[i].path, sizeof names[i].path, "%s", b);
        }
        break;
    }
    default:
        break;
    }
}

static int by_length(const void *x, const void *y)
{
    return (int)strlen(((const struct name *)x)->path) -
           (int)strlen(((const struct name *)y)->path);
}

/* Rebuild in dir the state a power cut after the first k operations
 * leaves, choosing the unsynced part with rng; stage is a scratch
 * directory for the files' contents.  Describes the choice in desc. */
static void rebuild(const struct trace *t, size_t k, const char *dir,
                    const char *stage, struct xb_rng *rng, char *desc,
                    size_t dlen)
{
    uint32_t nf = t->nfid;
    size_t *last_sync = calloc(nf, sizeof *last_sync);
    long long *unsynced = calloc(nf, sizeof *unsynced);
    long long *keep = calloc(nf, sizeof *keep);
    int *torn = calloc(nf, sizeof *torn), *fds = calloc(nf, sizeof *fds);
    struct name *names = calloc(MAX_NAMES, sizeof *names);
    if (!last_sync || !unsynced || !keep || !torn || !fds || !names)
        xb_die_errno("calloc");
    size_t meta_sync = 0; /* ops before this index: metadata persisted */
    for (size_t i = 0; i < k; i++) {
        const struct xt_rec *r = &t->ops[i].r;
        if (r->type == XT_SYNC && r->fid < nf) {
            last_sync[r->fid] = i;
            meta_sync = i;
        } else if (r->type == XT_SYNC_ALL) {
            for (uint32_t f = 0; f < nf; f++)
                last_sync[f] = i;
            meta_sync = i;
        }
    }
    long long meta_unsynced = 0, meta_keep, kept_total = 0, unsynced_total = 0;
    for (size_t i = 0; i < k; i++) {
        const struct xt_rec *r = &t->ops[i].r;
        if (is_data(r->type) && i > last_sync[r->fid])
            unsynced[r->fid]++;
        else if (is_meta(r->type) && i > meta_sync)
            meta_unsynced++;
    }
    for (uint32_t f = 0; f < nf; f++) {
        keep[f] = (long long)xb_rng_below(rng, (uint64_t)unsynced[f] + 1);
        torn[f] = keep[f] < unsynced[f] && xb_rng_below(rng, 2);
        kept_total += keep[f];
        unsynced_total += unsynced[f];
    }
    meta_keep = (long long)xb_rng_below(rng, (uint64_t)meta_unsynced + 1);
    snprintf(desc, dlen, "after operation %zu of %zu; unsynced data writes "
             "kept %lld of %lld, directory changes kept %lld of %lld",
             k, t->n, kept_total, unsynced_total, meta_keep, meta_unsynced);

    xb_remove_tree(stage);
    if (mkdir(stage, 0700) != 0)
        xb_die_errno("mkdir");
    int nnames = 0;
    long long *seen = calloc(nf, sizeof *seen);
    long long meta_seen = 0;
    if (seen == NULL)
        xb_die_errno("calloc");
    for (size_t i = 0; i < k; i++) {
        const struct op *o = &t->ops[i];
        uint32_t f = o->r.fid;
        if (is_meta(o->r.type)) {
            if (i < meta_sync || meta_seen++ < meta_keep)
                apply_meta(o, names, &nnames);
            continue;
        }
        if (!is_data(o->r.type) || f >= nf)
            continue;
        int whole = 1;
        if (i > last_sync[f]) {
            long long ord = seen[f]++;
            if (ord > keep[f] || (ord == keep[f] && !torn[f]))
                continue;
            whole = ord < keep[f];
        }
        if (fds[f] == 0) { /* 0: not open yet (stdin is never a stage file) */
            char path[4096], nm[32];
            snprintf(nm, sizeof nm, "%u", f);
            fds[f] = open(xb_path(path, sizeof path, stage, nm),
                          O_RDWR | O_CREAT, 0600);
            if (fds[f] < 0)
                xb_die_errno("open");
        }
        apply_data(fds[f], o, !whole, rng);
    }
    xb_remove_tree(dir);
    if (mkdir(dir, 0700) != 0)
        xb_die_errno("mkdir");
    qsort(names, (size_t)nnames, sizeof *names, by_length);
    for (int i = 0; i < nnames; i++) {
        char to[4096], from[4096], nm[32];
        xb_path(to, sizeof to, dir, names[i].path);
        if (names[i].fid < 0) {
            if (mkdir(to, 0700) != 0 && errno != EEXIST)
                xb_die_errno("mkdir");
            continue;
        }
        snprintf(nm, sizeof nm, "%d", names[i].fid);
        xb_path(from, sizeof from, stage, nm);
        if (link(from, to) != 0) { /* no data reached the disk: empty */
            int fd = open(to, O_WRONLY | O_CREAT, 0600);
            if (fd >= 0)
                close(fd);
        }
    }
    for (uint32_t f = 0; f < nf; f++)
        if (fds[f] > 0)
            close(fds[f]);
    free(seen);
    free(last_sync);
    free(unsynced);
    free(keep);
    free(torn);
    free(fds);
    free(names);
}

/* The shared object to preload: $XACLAB_CRASHREC, else
 * <program's directory>/../lib/xaclab-crashrec.so. */
static int recorder_path(char buf[PATH_MAX], size_t len)
{
    const char *env = getenv("XACLAB_CRASHREC");
    if (env != NULL) {
        snprintf(buf, len, "%s", env);
    } else {
        char self[PATH_MAX - 64];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n < 0)
            return -1;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(buf, len, "%s/../lib/xaclab-crashrec.so", self);
    }
    return access(buf, R_OK);
}

/* Run this program again under the recorder: make a store in dir and
 * insert keys[first..first+inserts), tracing into trace. */
static int record(const struct xc_run *run, const char *dir,
                  const char *trace, long long first)
{
    char shim[PATH_MAX], absdir[PATH_MAX];
    if (recorder_path(shim, sizeof shim) != 0) {
        fprintf(stderr, "%s: crash: the recorder %s is missing (build "
                "libxac, or set XACLAB_CRASHREC).\n", run->st->prog, shim);
        return -1;
    }
    xb_remove_tree(dir);
    if (mkdir(dir, 0700) != 0 || realpath(dir, absdir) == NULL)
        xb_die_errno("mkdir");
    char idx[32], from[32];
    snprintf(idx, sizeof idx, "%d", run->cfg_index);
    snprintf(from, sizeof from, "%lld", first);
    char **argv = calloc((size_t)run->argc + 10, sizeof *argv);
    if (argv == NULL)
        xb_die_errno("calloc");
    int a = 0;
    argv[a++] = (char *)run->st->prog;
    argv[a++] = "crash";
    for (int i = 0; i < run->argc; i++)
        argv[a++] = run->argv[i];
    argv[a++] = "--record-config";
    argv[a++] = idx;
    argv[a++] = "--record-dir";
    argv[a++] = absdir;
    argv[a++] = "--record-first";
    argv[a++] = from;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        xb_die_errno("fork");
    if (pid == 0) {
        setenv("LD_PRELOAD", shim, 1);
        setenv("XACLAB_CRASH_DIR", absdir, 1);
        setenv("XACLAB_CRASH_TRACE", trace, 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    free(argv);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: crash: the recording run failed (status "
                "%d).\n", run->st->prog, status);
        return -1;
    }
    return 0;
}

int xc_record(const struct xb_kv_store *st, const struct xb_kv_config *cfg,
              const char *dir, const uint64_t *keys, long long n)
{
    void *sym = dlsym(RTLD_DEFAULT, XT_MARK_SYMBOL);
    xt_mark_fn mark = NULL;
    memcpy(&mark, &sym, sizeof mark);
    void *h;
    unsigned char v[XB_KV_MAX_VALUE];
    if (mark == NULL) {
        fprintf(stderr, "%s: crash: --record-* without the recorder "
                "preloaded.\n", st->prog);
        return 2;
    }
    if (st->create(cfg, dir) != 0 ||
        st->open(cfg, dir, XB_KV_MEASURE, &h) != 0)
        return 1;
    mark(XT_MARK_READY, 0);
    for (long long i = 0; i < n; i++) {
        struct xb_kv_key key = {keys[i], {0}};
        xb_key_encode(key.n, key.bytes);
        xb_workload_value(key.n, v, cfg->value_bytes);
        mark(XT_MARK_BEGIN, (uint64_t)i);
        if (st->insert(h, &key, v, cfg->value_bytes) != 0)
            return 1;
        mark(XT_MARK_ACK, (uint64_t)i);
    }
    fflush(NULL);
    _exit(0); /* no close: the trace ends as a crash would leave it */
}

/* What the check expects of each recorded insert after the first k
 * operations. */
static void expectations(const struct trace *t, size_t k, unsigned char *e,
                         long long n)
{
    memset(e, XC_ABSENT, (size_t)n);
    for (size_t i = 0; i < k; i++) {
        const struct xt_rec *r = &t->ops[i].r;
        if (r->type != XT_MARK || r->off >= (uint64_t)n)
            continue;
        if (r->aux == XT_MARK_BEGIN)
            e[r->off] = XC_EITHER;
        else if (r->aux == XT_MARK_ACK)
            e[r->off] = XC_PRESENT;
    }
}

static void keep_finding(const struct xc_run *run, const char *dir,
                         long long point)
{
    char to[4096], name[128];
    snprintf(name, sizeof name, "../xaclab-crash-finding-%s-%s-%lld",
             run->st->sut, run->cfg->mode, point);
    xb_path(to, sizeof to, run->scratch, name);
    if (rename(dir, to) == 0)
        fprintf(stderr, "%s: crash: the state is kept in %s\n",
                run->st->prog, to);
}

int xc_power(const struct xc_run *run, struct xc_tally *t)
{
    char dir[4096], stage[4096], trace_path[4096], name[64];
    snprintf(name, sizeof name, "power-%d", run->cfg_index);
    xb_path(dir, sizeof dir, run->scratch, name);
    snprintf(name, sizeof name, "stage-%d", run->cfg_index);
    xb_path(stage, sizeof stage, run->scratch, name);
    unsigned char *expect = malloc((size_t)run->inserts);
    if (expect == NULL)
        xb_die_errno("malloc");
    struct xb_rng rng;
    xb_rng_seed(&rng, run->seed ^ 0x706f776572ULL);
    struct trace tr = {0};
    long long ntraces = 0;
    for (long long p = 0; p < run->points; p++) {
        if (p % POINTS_PER_TRACE == 0) {
            long long first = ntraces++ * run->inserts;
            snprintf(name, sizeof name, "trace-%d", run->cfg_index);
            xb_path(trace_path, sizeof trace_path, run->scratch, name);
            free(tr.raw);
            free(tr.ops);
            if (first + run->inserts > (long long)run->nkeys ||
                record(run, dir, trace_path, first) != 0 ||
                load_trace(trace_path, &tr, run->st->prog) != 0) {
                free(tr.raw);
                free(tr.ops);
                free(expect);
                return -1;
            }
        }
        struct xc_run sub = *run;
        sub.keys = run->keys + (ntraces - 1) * run->inserts;
        sub.nkeys = (size_t)run->inserts;
        size_t k = tr.ready + 1 +
                   (size_t)xb_rng_below(&rng, tr.n - tr.ready);
        char desc[256];
        rebuild(&tr, k, dir, stage, &rng, desc, sizeof desc);
        expectations(&tr, k, expect, run->inserts);
        struct xc_check c;
        if (xc_check_store(&sub, dir, expect, (size_t)run->inserts, &c) != 0)
            xb_die_errno("fork");
        if (xc_tally_add(t, &c)) {
            fprintf(stderr, "%s: FINDING: power-loss crash point %lld (%s), "
                    "%s: %s; lost %lld, uncommitted visible %lld, "
                    "violations %lld. Reproduce: %s crash --kind power "
                    "--seed %llu --points %lld --keep.\n", run->st->prog,
                    p + 1, run->cfg->mode, desc, c.why, c.lost,
                    c.uncommitted, c.violations, run->st->prog,
                    (unsigned long long)run->seed, p + 1);
            if (run->keep)
                keep_finding(run, dir, p + 1);
        }
        if (p % 50 == 49)
            xb_progress((double)(p + 1) / (double)run->points,
                        "%s %s: power-loss crash point %lld of %lld",
                        run->st->sut, run->cfg->mode, p + 1, run->points);
    }
    free(tr.raw);
    free(tr.ops);
    free(expect);
    xb_remove_tree(stage);
    return 0;
}
