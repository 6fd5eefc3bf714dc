/* xac_stats.c: xStats, the counters of every module in one struct. */
#include <string.h>

#include "xac.h"
#include "xac_atomic.h"
#include "xac_int.h"

int xStats(struct xac_stats *st)
{
    struct xac_env *e = &xac_env;
    const struct xtxn *tx = &e->xe_tx;
    const struct xlog *lg = &e->xe_log;
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
    return 0;
}
