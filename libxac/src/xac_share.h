/* xac_share.h: read-only transactions that read unchanged pages straight
 * from the data file's page cache, one copy for every process
 * (xac_share.c). */
#ifndef XAC_SHARE_H
#define XAC_SHARE_H

#include <stdint.h>

/* Pages in a window: mapped from the data file, and given back, together.
 * The same aligned windows as a query's fault-around (xac_fault.c). */
#define XSH_PAGES 64u

struct xac_env;

/* A query's read fault on pg (page-table access, pages kept): map pg's
 * window from the data file if every page of it is untouched, not kept,
 * and reads its snapshot version from the data file.  0 if mapped; -1 if
 * not (the caller copies as before).  Async-signal-safe. */
int xsh_map(struct xac_env *e, uint32_t pg);

/* Give back the window of pg if it is mapped from the data file: the
 * working memory is mapped there again, faults are seen again, and its
 * pages are no longer kept.  Call before revoking a kept page. */
void xsh_give_back(struct xac_env *e, uint32_t pg);

/* Give back every window mapped from the data file. */
void xsh_give_back_all(struct xac_env *e);

#endif
