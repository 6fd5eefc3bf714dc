/* test_46_collect_skip: a collection walks no chain when every page in
 * the ring has been collected already for the same oldest running
 * snapshot m (xac_gc.c, nothing_older): each then holds only versions
 * newer than m, and every commit since has a stamp above m.
 *
 * A child holds a read-only transaction open, as a process descheduled
 * inside one does, so the oldest snapshot stands still.  We commit past
 * the pool's bound (then every commit collects) on two pages:
 * - While m stands still, the collections walk no versions at all
 *   (xStats gc_versions_walked) and say so (gc_skipped).  The code
 *   before walked each chain to its end at every commit: the counter
 *   grows by about the chain's length a commit.
 * - A page committed for the first time after the note (a new ring
 *   entry) is also skipped: its versions are newer than m.
 * - Once the reader moves on, the next commit collects again: a skip
 *   that outlived m would leave the file behind.  With 14 pages in the
 *   ring it copies the 10 that one collection takes (2w + 8), and the
 *   commit after it, at the same new m, the other 4, as their versions
 *   the reader's snapshot reads: the note skips only once every page in
 *   the ring has been collected for m.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_commit.h"
#include "xac_int.h"

#define FILE_ "d.db"
#define NPG 16
#define RING 14 /* pages with versions: more than one collection's
                 * 2w + 8 = 10 for a commit of one page */
#define MORE 200          /* commits while the reader's snapshot stands */

/* How many of the RING pages with versions the data file holds as the
 * reader's new snapshot reads them: page 0 at v0, page 1 at v1, the others
 * at 1. */
static int pages_current(int v0, int v1)
{
    int i, n = (tu_int_at(FILE_, 0) == v0) + (tu_int_at(FILE_, PAGESIZE) == v1);

    for (i = 2; i < RING; i++)
        n += tu_int_at(FILE_, (off_t)i * PAGESIZE) == 1;
    return n;
}

int main(void)
{
    int down[2], up[2], *x, ok = 1, v0 = 0, v1 = 0, seen, i;
    uint32_t bound;
    unsigned long long walked, skipped;
    const struct xseg *sg;
    struct xac_stats st;
    pid_t pid;

    x = tu_store_with_pipes(FILE_, NPG, down, up);
    sg = &xac_env.xe_seg;
    bound = (uint32_t)xcm_lazy_bound(sg);
    pid = tu_spawn_reader(down[0], up[1], FILE_, NPG);
    test_cond("a reader runs beside us", tu_hear(up[0]) == 'r');

    /* Past the bound on page 0, the reader's snapshot reading the file. */
    for (i = 0; (uint32_t)i <= bound + 1 && ok; i++, v0++)
        ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    test_cond("commits past the pool's bound", ok);
    test_cond("the pool holds them all",
              sg->sg_hdr->sh_used > bound && tu_int_at(FILE_, 0) == 0);

    st = tu_stats();
    walked = st.gc_versions_walked;
    skipped = st.gc_skipped;
    test_cond("the first collection for the reader's snapshot walked the "
              "chain",
              walked > bound / 2);
    for (i = 0; i < MORE && ok; i++, v0++)
        ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    /* Page 1 enters the ring after the note: its versions are newer than
     * the reader's snapshot too. */
    for (i = 0; i < MORE && ok; i++, v1++)
        ok &= tu_commit_add(x, PAGESIZE / sizeof(int), 1) == COMMITTED;
    for (i = 2; i < RING && ok; i++)
        ok &= tu_commit_add(x, (size_t)i * PAGESIZE / sizeof(int), 1) ==
              COMMITTED;
    test_cond("more commits on page 0, then on pages new to the ring", ok);
    st = tu_stats();
    test_cond("while the oldest snapshot stands, no collection walks a "
              "version",
              st.gc_versions_walked == walked);
    test_cond("and every one of them says so",
              st.gc_skipped - skipped >= 2 * MORE - 1);
    test_cond("the data file is still what the reader reads",
              tu_int_at(FILE_, 0) == 0 && tu_int_at(FILE_, PAGESIZE) == 0);

    tu_tell(down[1], 'n');
    test_cond("the reader moves on to the newest snapshot",
              tu_hear(up[0]) == 'r');
    seen = v0; /* page 0's version that the reader's snapshot reads */
    ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    v0++;
    test_cond("the next commit collects again",
              ok && tu_stats().gc_versions_walked > walked);
    test_cond("it copies no more pages than one collection takes",
              pages_current(seen, v1) == 10);
    ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    v0++;
    test_cond("the commit after it, at the same oldest snapshot, copies "
              "the rest",
              ok && pages_current(seen, v1) == RING);

    tu_tell(down[1], 'q');
    test_cond("the reader leaves cleanly", tu_reap(pid));
    E(xMunmap(FILE_));
    test_cond("every commit is in the file",
              tu_int_at(FILE_, 0) == v0 && tu_int_at(FILE_, PAGESIZE) == v1);
    E(xShutdown());
    E(xInit("ctl", NONDURABLE));
    st = tu_stats();
    test_cond("the counts start again at xInit",
              st.gc_versions_walked == 0 && st.gc_skipped == 0);
    E(xShutdown());
    return test_report();
}
