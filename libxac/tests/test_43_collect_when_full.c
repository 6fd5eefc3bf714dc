/* test_43_collect_when_full: a nondurable commit that writes its pages
 * into the pool (another transaction runs) collects versions into the data
 * file only once the pool holds more than XCM_LAZY_FRAMES frames, at most
 * a quarter of it; until then the versions wait in the pool, where later
 * commits of the same page replace them and one copy into the data file
 * serves many (xac_commit.c, pool_collect_due).
 *
 * A child holds a read-only transaction open the whole time, so that every
 * commit of ours goes through the pool, and on 'n' starts a new one at the
 * newest snapshot, so that the collector may copy everything up to it.
 * - Below the bound, a commit leaves the data file as it was, although a
 *   version every running snapshot reads is in the pool (a collection at
 *   every commit, the code before, copied it at once).
 * - Above it, the next commit copies the version the oldest snapshot reads
 *   into the data file, and once that reader has moved on, the frames it
 *   kept go back to the free list: the count of frames in use falls.
 * - sh_used counts the frames off the free list, whatever the path.
 * - Versions that waited in the pool of processes that died are still
 *   written into their data file by the next first process, also from a
 *   store of format 2, the format before sh_used.
 */
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_commit.h"
#include "xac_int.h"
#include "xac_os.h"

#define FILE_ "d.db"
#define NPG 4

/* In a child just forked: attach to store ctl and map file (NPG pages),
 * or exit with 3 or 4. */
static int *attach(const char *ctl, const char *file)
{
    int *y;

    xos_reset();
    if (xInit(ctl, NONDURABLE) != 0)
        _exit(3);
    y = xMmap(file, NPG * PAGESIZE);
    if (y == MAP_FAILED)
        _exit(4);
    return y;
}

/* In store "ctl2", file FILE2: a child that keeps a read-only
 * transaction open ('r') and dies on any byte without leaving; with
 * writer set, one that on 'g' commits 42 into the first int ('c'), then
 * dies the same way. */
#define FILE2 "e.db"
static pid_t dier(int hear, int tell, int writer)
{
    pid_t pid;
    int *y;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        y = attach("ctl2", FILE2);
        if (writer) {
            if (tu_hear(hear) != 'g')
                _exit(5);
            tu_tell(tell, tu_commit_add(y, 0, 42) == COMMITTED ? 'c' : 'n');
        } else {
            if (xbeginQuery() != 0)
                _exit(5);
            tu_tell(tell, 'r');
        }
        (void)tu_hear(hear);
        _exit(0); /* no xMunmap: the pool keeps what it holds */
    }
    return pid;
}

/* A child that attaches to store "ctl2" as its first process and says
 * 'y' if it reads 42 in the first int of FILE2. */
static pid_t heir(int tell)
{
    pid_t pid;
    int *y, ok;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        y = attach("ctl2", FILE2);
        xbeginQuery();
        ok = *(volatile int *)y == 42;
        xendQuery();
        tu_tell(tell, ok ? 'y' : 'n');
        _exit(xMunmap(FILE2) == 0 && xShutdown() == 0 ? 0 : 2);
    }
    return pid;
}

/* Set the format in ctl2's xac.seg. */
static int set_seg_format(uint32_t format)
{
    int fd = open("ctl2/" XSEG_NAME, O_RDWR);
    int ok = fd >= 0 &&
             pwrite(fd, &format, sizeof format,
                    offsetof(struct xseg_hdr, sh_format)) ==
                 (ssize_t)sizeof format;

    if (fd >= 0)
        close(fd);
    return ok;
}

/* Frames off the free list, by the frame table's states. */
static uint32_t frames_in_use(const struct xseg *sg)
{
    uint32_t f, n = 0;

    for (f = 1; f < sg->sg_hdr->sh_nframes; f++)
        if (sg->sg_fr[f].fr_state != FR_FREE)
            n++;
    return n;
}

int main(void)
{
    int down[2], up[2], *x, ok = 1, v = 0;
    uint32_t bound, i;
    const struct xseg *sg;
    pid_t pid;

    x = tu_store_with_pipes(FILE_, NPG, down, up);
    sg = &xac_env.xe_seg;
    bound = (uint32_t)xcm_lazy_bound(sg);
    pid = tu_spawn_reader(down[0], up[1], FILE_, NPG);
    test_cond("a reader runs beside us", tu_hear(up[0]) == 'r');

    ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    v++;
    tu_tell(down[1], 'n');
    test_cond("it moves on to a snapshot that reads our version",
              tu_hear(up[0]) == 'r');
    ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    v++;
    test_cond("two commits through the pool", ok);
    test_cond("below the bound the data file keeps its old page",
              tu_int_at(FILE_, 0) == 0);
    test_cond("two frames in use, and sh_used says so",
              frames_in_use(sg) == 2 && sg->sg_hdr->sh_used == 2);

    /* Fill the pool past the bound while the reader's snapshot keeps the
     * collector from copying anything newer than our first version. */
    for (i = 0; i <= bound && ok; i++, v++)
        ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    test_cond("commits past the bound", ok);
    test_cond("sh_used counts every frame they took",
              sg->sg_hdr->sh_used == frames_in_use(sg) &&
                  sg->sg_hdr->sh_used > bound);
    test_cond("the data file holds what the reader's snapshot reads",
              tu_int_at(FILE_, 0) == 1);

    tu_tell(down[1], 'n');
    test_cond("the reader moves on to the newest snapshot",
              tu_hear(up[0]) == 'r');
    ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    v++;
    test_cond("above the bound, the next commit copies that version",
              ok && tu_int_at(FILE_, 0) == v - 1);
    tu_tell(down[1], 'n');
    test_cond("the reader moves on again", tu_hear(up[0]) == 'r');
    ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    v++;
    test_cond("and the frames it kept are free again",
              ok && sg->sg_hdr->sh_used == frames_in_use(sg) &&
                  sg->sg_hdr->sh_used < bound);

    tu_tell(down[1], 'q');
    test_cond("the reader leaves cleanly", tu_reap(pid));
    E(xMunmap(FILE_));
    test_cond("every commit is in the file", tu_int_at(FILE_, 0) == v);
    E(xShutdown());

    /* Processes die with a version waiting in the pool; the store is made
     * to look like format 2's. */
    {
        int wdown[2];
        pid_t r, w;

        if (pipe(wdown) != 0)
            abort();
        r = dier(down[0], up[1], 0);
        test_cond("a reader of another store runs", tu_hear(up[0]) == 'r');
        w = dier(wdown[0], up[1], 1);
        tu_tell(wdown[1], 'g');
        test_cond("a writer commits beside it", tu_hear(up[0]) == 'c');
        test_cond("the version waits in the pool",
                  tu_int_at(FILE2, 0) == 0);
        tu_tell(down[1], 'q');
        tu_tell(wdown[1], 'q');
        test_cond("both die without leaving", tu_reap(r) && tu_reap(w));
        test_cond("their store is made format 2", set_seg_format(2));
        pid = heir(up[1]);
        test_cond("the next first process reads the version",
                  tu_hear(up[0]) == 'y');
        test_cond("and leaves cleanly", tu_reap(pid));
        test_cond("the data file holds it", tu_int_at(FILE2, 0) == 42);
    }
    return test_report();
}
