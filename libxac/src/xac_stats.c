/* xac_stats.c: xStats, the counters of every module in one struct. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xac.h"
#include "xac_atomic.h"
#include "xac_int.h"

int xStats(struct xac_stats *st)
{
    struct xac_env *e = &xac_env;
    const struct xtxn *tx = &e->xe_tx;
    const struct xlog *lg = &e->xe_log;
    const struct xcontend *cn = &e->xe_cn;
    struct xctl_hdr *h;
    size_t i;

    if (st == NULL)
        return XAC_EINVAL;
    memset(st, 0, sizeof *st);
    if (!e->xe_inited)
        return XAC_ENOTINIT;
    h = e->xe_ctl.cx_hdr;
    st->commits = tx->tx_commits;
    st->log_bytes_mine = lg->lg_mybytes;
    st->log_bytes = LD(&h->ch_log_bytes);
    st->log_records = LD(&h->ch_log_records);
    st->log_syncs = LD(&h->ch_log_syncs);
    st->log_payload = LD(&h->ch_log_payload);
    st->recoveries = LD(&h->ch_log_recovered);
    st->faults = e->xe_flt.ft_faults;
    st->extensions = tx->tx_extensions;
    for (i = 0; i < tx->tx_nkept; i++)
        st->kept_pages += (tx->tx_pstate[tx->tx_kept[i]] & XP_KEPT) != 0;
    st->failed = LD(&h->ch_log_failed);
    st->sync_method = lg->lg_sync;
    st->keep_pages = tx->tx_keep;
    st->working_mib =
        ((unsigned long long)e->xe_map.mp_trim_pages << e->xe_pshift) >> 20;
    st->uffd = e->xe_wp.wp_fd >= 0;
    st->direct_commits = tx->tx_direct;
    st->log_direct_writes = lg->lg_dwrites;
    st->log_leads = lg->lg_leads;
    st->log_deferred = lg->lg_deferred;
    st->pages_reused = e->xe_flt.ft_reused;
    st->page_table_access = e->xe_wp.wp_pte;
    st->conflict_aborts = cn->cn_aborts;
    st->retries_max = cn->cn_retry_max;
    st->aborted_ns = cn->cn_aborted_ns;
    st->backoff_ns = cn->cn_backoff_ns;
    st->escalations = cn->cn_escalations;
    st->admission_waits = cn->cn_admit_waits;
    st->admission_wait_ns = cn->cn_admit_ns;
    st->admission_overruns = cn->cn_admit_overruns;
    st->admission_turn_kept = cn->cn_turn_kept;
    st->admission_taken_over = cn->cn_taken_over;
    st->turn_us = (int)cn->cn_turn_us;
    st->irrevocable_wait_ns = cn->cn_irrev_ns;
    st->conflict_pages = cn->cn_npages;
    st->pages_around = e->xe_flt.ft_around;
    st->pages_shared = e->xe_flt.ft_shared;
    st->pages_copied = e->xe_flt.ft_copied;
    st->pages_new = e->xe_flt.ft_new;
    st->conflicts_untracked = cn->cn_untracked;
    st->writers = (int)cn->cn_writers;
    st->escalate_after = (int)cn->cn_escalate;
    st->lock_busy = e->xe_ctl.cx_lock_busy;
    st->lock_spun = e->xe_ctl.cx_lock_spun;
    st->lock_spin_us = (int)(e->xe_ctl.cx_spin_ns / 1000u);
    st->admission_handoffs = cn->cn_handoffs;
    st->handoff_us = (int)(cn->cn_handoff_ns / 1000u);
    st->gc_versions_walked = e->xe_seg.sg_gc_walked;
    st->gc_skipped = e->xe_seg.sg_gc_skipped;
    return 0;
}

static int by_aborts(const void *a, const void *b)
{
    const struct xac_conflict *x = a, *y = b;

    if (x->aborts != y->aborts)
        return x->aborts < y->aborts ? 1 : -1;
    return (x->page > y->page) - (x->page < y->page);
}

int xConflicts(struct xac_conflict *out, int n)
{
    const struct xcontend *cn = &xac_env.xe_cn;
    struct xac_conflict *all;
    size_t i, k = 0;

    if (n < 0 || (out == NULL && n > 0))
        return XAC_EINVAL;
    if (!xac_env.xe_inited)
        return XAC_ENOTINIT;
    if (n == 0 || cn->cn_npages == 0)
        return (int)cn->cn_npages;
    all = malloc(cn->cn_npages * sizeof *all);
    if (all == NULL)
        return ENOMEM;
    for (i = 0; i < XCN_PAGES; i++)
        if (cn->cn_pages[i].cp_pg1 != 0)
            all[k++] = (struct xac_conflict){cn->cn_pages[i].cp_pg1 - 1,
                                             cn->cn_pages[i].cp_aborts};
    qsort(all, k, sizeof *all, by_aborts);
    memcpy(out, all, (k < (size_t)n ? k : (size_t)n) * sizeof *all);
    free(all);
    return (int)k;
}
