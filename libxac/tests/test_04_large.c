/* test_04_large: a 16 GiB segment, thousands of pages in one transaction,
 * and more pages than vm.max_map_count allows mappings (read from the
 * running kernel: when it is raised past what a test can touch, the
 * mprotect pass expects no coarse grant, and the forced-ENOMEM pass at
 * the end still takes them). */
#include <errno.h>
#include <string.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

/* Fails every one-page mprotect that grants access with ENOMEM, as the
 * kernel does at vm.max_map_count mappings. */
static int enomem_mprotect(void *addr, size_t len, int prot)
{
    if (len == PAGESIZE && prot != PROT_NONE) {
        errno = ENOMEM;
        return -1;
    }
    return mprotect(addr, len, prot);
}

/* Every other page read needs a mapping of its own under mprotect: does
 * reading sparse of them pass the kernel's vm.max_map_count? */
static int past_max_map_count(size_t sparse)
{
    long max = tu_max_map_count(), now = tu_maps_now();

    return max > 0 && now >= 0 && (long)sparse + now > max;
}

/* Read every other page of x (sparse of them), write two of them and
 * commit.  pass 0 runs under the default mechanism, pass 1 under mprotect
 * after page-table access was on in pass 0 (the values written are then
 * there already). */
static void sparse_pass(int *x, size_t sparse, size_t many, int pass)
{
    unsigned long esc = xac_env.xe_flt.ft_escalations;
    int v = 0, pte = tu_stats().page_table_access;
    int past = past_max_map_count(sparse);
    size_t i;

    E(xbegin());
    for (i = 0; i < sparse; i++)
        v += x[2 * i * tu_ipp()];
    x[2 * tu_ipp() + 1] = 555 + pass;
    x[(2 * sparse - 2) * tu_ipp() + 1] = 666 + pass;
    /* pages 0, 2, 4 ... below many hold 1, 3, 5 ... */
    test_cond("every other page read", v == (int)((many / 2) * (many / 2)));
    test_cond("commit after touching every other page",
              xend() == COMMITTED);
    if (pte)
        test_cond("page-table access took no coarse grant",
                  xac_env.xe_flt.ft_escalations == esc);
    else if (past)
        test_cond("mprotect took coarse grants past vm.max_map_count",
                  xac_env.xe_flt.ft_escalations > esc);
    else
        test_cond("mprotect took no coarse grant below vm.max_map_count",
                  xac_env.xe_flt.ft_escalations == esc);
    test_cond("its writes are in the file",
              tu_int_at("many.db", 2 * (off_t)PAGESIZE + 4) == 555 + pass &&
                  tu_int_at("many.db",
                            (off_t)(2 * sparse - 2) * (off_t)PAGESIZE + 4) ==
                      666 + pass);
    test_cond("the pages it only read are unchanged",
              tu_int_at("many.db", 3 * (off_t)PAGESIZE) == 4);
}

int main(void)
{
    int *x, ok, v, pte;
    size_t i, npg, big = (size_t)4 << 20; /* 4M pages = 16 GiB */
    size_t many = tu_valgrind() ? 3000 : 5000;
    long max = tu_max_map_count();
    /* Past the kernel's limit by 5,000 mappings, if that can be touched
     * here (each page read takes a page of memory); else 140,000. */
    size_t sparse = tu_valgrind()                     ? 8000
                    : max > 0 && max + 5000 <= 300000 ? (size_t)max + 5000
                                                      : 140000;
    unsigned long esc;

    tu_tmpdir();
    printf("# vm.max_map_count %ld: every other page of %zu read\n", max,
           2 * sparse);
    E(xInit(".", NONDURABLE));

    /* 16 GiB: the issue B target size; the file stays sparse. */
    x = xMmap("big.db", big * PAGESIZE);
    test_cond("xMmap of 16 GiB", x != MAP_FAILED);
    if (x == MAP_FAILED)
        return test_report();
    E(xbegin());
    x[0] = 1;
    x[(big / 2) * tu_ipp()] = 2;
    x[(big - 1) * tu_ipp() + tu_ipp() - 1] = 3;
    test_cond("commit at both ends of 16 GiB", xend() == COMMITTED);
    test_cond("the writes are in the file",
              tu_int_at("big.db", 0) == 1 &&
                  tu_int_at("big.db", (off_t)(big / 2) * (off_t)PAGESIZE) == 2 &&
                  tu_int_at("big.db", (off_t)big * (off_t)PAGESIZE - 4) == 3);
    E(xMunmap("big.db"));

    /* Thousands of written pages in one transaction. */
    npg = sparse * 2 + 16;
    x = xMmap("many.db", npg * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    E(xbegin());
    for (i = 0; i < many; i++)
        x[i * tu_ipp()] = (int)i + 1;
    test_cond("commit of thousands of written pages", xend() == COMMITTED);
    ok = 1;
    for (i = 0; i < many; i++)
        ok = ok && tu_int_at("many.db", (off_t)i * (off_t)PAGESIZE) ==
                       (int)i + 1;
    test_cond("every page is in the file", ok);

    /* Touching every other page: under page-table access no mapping is
     * split; under mprotect that makes one mapping per page, and past
     * vm.max_map_count (65530) the library must coarsen its grants. */
    pte = tu_stats().page_table_access;
    sparse_pass(x, sparse, many, 0);
    if (pte) {
        E(xMunmap("many.db"));
        xac_env.xe_wp.wp_pte_want = 0; /* as XAC_PTE=0 at xInit */
        x = xMmap("many.db", npg * PAGESIZE);
        if (x == MAP_FAILED)
            abort();
        test_cond("XAC_PTE off: the segment uses mprotect",
                  !tu_stats().page_table_access);
        sparse_pass(x, sparse, many, 1);
    }

    /* The same with writes, forced through the coarse path. */
    xos.mprotect = enomem_mprotect;
    esc = xac_env.xe_flt.ft_escalations;
    E(xbegin());
    x[700 * tu_ipp() + 2] = 7;
    v = x[1200 * tu_ipp()];
    E(xFail());
    test_cond("coarse grants abort", xend() == ABORTED &&
              tu_int_at("many.db", 700 * (off_t)PAGESIZE + 8) == 0);
    E(xbegin());
    x[700 * tu_ipp() + 2] = 7;
    test_cond("coarse writes commit", xend() == COMMITTED);
    xos_reset();
    test_cond("coarse grants were taken", xac_env.xe_flt.ft_escalations > esc);
    test_cond("a coarse write is in the file",
              tu_int_at("many.db", 700 * (off_t)PAGESIZE + 8) == 7);
    test_cond("its neighbours are unchanged",
              tu_int_at("many.db", 701 * (off_t)PAGESIZE) == 702 &&
                  tu_int_at("many.db", 699 * (off_t)PAGESIZE) == 700 &&
                  v == 1201);
    E(xShutdown());
    return test_report();
}
