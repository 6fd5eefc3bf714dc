/* storage_journal: how fast a journal can be made durable, by write mode.
 *
 * Seeds 001 ("Fast transaction log: Linux"): 16 KiB chunks written
 * sequentially into a preallocated file, in six modes: buffered,
 * write+fsync, write+fdatasync, O_DSYNC, O_DIRECT, O_DIRECT|O_DSYNC.  One
 * repetition is one pass over the whole file.  Results (suite "storage",
 * sut "os", benchmark "journal", params mode, chunk_bytes, file_mib):
 *   "write_latency"    us per write (including its fsync/fdatasync), one
 *                      sample per write (more than 100,000 of them make
 *                      a histogram, result.h);
 *   "write_throughput" 16 KiB writes per second, one sample per pass.
 * A filesystem that refuses O_DIRECT (EINVAL, e.g. tmpfs before Linux 6.6)
 * gets no result for the O_DIRECT modes; that is said on stderr and is not
 * a failure.
 */
#include "clock.h"
#include "result.h"
#include "scratch.h"
#include "storage_opts.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (16 * 1024)

struct mode {
    const char *name;
    int open_flags;
    int sync_call; /* 0 none, 1 fsync, 2 fdatasync */
};

static const struct mode modes[] = {
    {"buffered", 0, 0},
    {"fsync", 0, 1},
    {"fdatasync", 0, 2},
    {"o_dsync", O_DSYNC, 0},
    {"o_direct", O_DIRECT, 0},
    {"o_direct_dsync", O_DIRECT | O_DSYNC, 0},
};
#define NMODES (sizeof modes / sizeof modes[0])

static void preallocate(const char *path, off_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        xb_die_errno("cannot create the journal file");
    int rc = posix_fallocate(fd, 0, size);
    if (rc != 0) {
        /* posix_fallocate returns the error instead of setting errno */
        errno = rc;
        xb_die_errno("cannot preallocate the journal file");
    }
    if (fsync(fd) != 0 || close(fd) != 0)
        xb_die_errno("cannot sync the journal file");
}

/* One pass; returns 0, or the errno of an O_DIRECT refusal. */
static int run_pass(const char *path, const struct mode *m, const void *buf,
                    long long nwrites, xb_result *lat, xb_result *thr)
{
    int fd = open(path, O_WRONLY | m->open_flags);
    if (fd < 0) {
        if (errno == EINVAL && (m->open_flags & O_DIRECT))
            return EINVAL;
        xb_die_errno("cannot open the journal file");
    }
    uint64_t start = xb_now_ns();
    for (long long i = 0; i < nwrites; i++) {
        uint64_t t0 = xb_now_ns();
        ssize_t n = write(fd, buf, CHUNK);
        if (n < 0 && errno == EINVAL && (m->open_flags & O_DIRECT) && i == 0) {
            close(fd);
            return EINVAL;
        }
        if (n != CHUNK)
            xb_die_errno("journal write failed");
        if ((m->sync_call == 1 && fsync(fd) != 0) ||
            (m->sync_call == 2 && fdatasync(fd) != 0))
            xb_die_errno("journal sync failed");
        uint64_t t1 = xb_now_ns();
        xb_sample(lat, (double)(t1 - t0) / 1e3);
    }
    uint64_t end = xb_now_ns();
    xb_sample(thr, (double)nwrites / ((double)(end - start) / 1e9));
    /* leave nothing dirty for the next mode to pay for */
    if (fsync(fd) != 0 || close(fd) != 0)
        xb_die_errno("cannot sync the journal file");
    return 0;
}

int main(int argc, char **argv)
{
    struct xb_storage_opts o;
    xb_storage_opts_parse(
        argc, argv,
        "Seeds 001: 16 KiB journal writes into a preallocated file, in six "
        "modes:\nbuffered, fsync, fdatasync, O_DSYNC, O_DIRECT, "
        "O_DIRECT|O_DSYNC.",
        "passes over the file for each mode (default 3, quick too)", NULL,
        "size of the preallocated journal file in MiB (default 256; quick 4)",
        &o);
    /* Quick passes are 4 MiB, a tenth of a second for all six modes; in
     * runs back to back one throughput sample a mode moved 5-13 %, the
     * median of 3 moves 1-3 % (docs/benchmarks-storage.md). */
    long long reps = xb_pick(o.reps, o.quick, 3, 3);
    long long mib = xb_pick(o.file_mib, o.quick, 4, 256);
    long long nwrites = mib * 1024 * 1024 / CHUNK;
    const char *dir = xb_scratch_create(o.dir, "storage_journal");
    char path[4096];
    xb_path(path, sizeof path, dir, "journal.log");

    void *buf;
    if (posix_memalign(&buf, CHUNK, CHUNK) != 0)
        xb_die_errno("posix_memalign");
    struct xb_rng rng;
    xb_rng_seed(&rng, XB_WORKLOAD_SEED);
    for (size_t i = 0; i < CHUNK / 8; i++)
        ((uint64_t *)buf)[i] = xb_rng_next(&rng);

    preallocate(path, (off_t)mib * 1024 * 1024);
    for (size_t k = 0; k < NMODES; k++) {
        const struct mode *m = &modes[k];
        xb_result *lat = xb_result_new("storage", "journal", "os",
                                       "write_latency", "us", XB_LOWER);
        xb_result *thr = xb_result_new("storage", "journal", "os",
                                       "write_throughput", "ops/s", XB_HIGHER);
        int refused = 0;
        for (long long r = 0; r < reps && !refused; r++) {
            refused = run_pass(path, m, buf, nwrites, lat, thr);
            xb_progress(((double)k + (double)(r + 1) / (double)reps) / NMODES,
                        "mode %s pass %lld of %lld", m->name, r + 1, reps);
        }
        if (refused) {
            fprintf(stderr,
                    "storage_journal: the filesystem of %s refuses O_DIRECT "
                    "(EINVAL); no result for mode %s.\n",
                    dir, m->name);
            xb_result_free(lat);
            xb_result_free(thr);
            continue;
        }
        xb_result *rs[] = {lat, thr};
        for (int j = 0; j < 2; j++) {
            xb_param_str(rs[j], "mode", m->name);
            xb_param_int(rs[j], "chunk_bytes", CHUNK);
            xb_param_int(rs[j], "file_mib", mib);
            xb_result_emit(rs[j]);
        }
    }
    free(buf);
    return 0;
}
