/* xac_atomic.h: loads and stores of words that other processes change
 * at the same time (fields of the control file and of xac.seg read
 * without ch_lock).  Sequentially consistent, as every such access in
 * LIBXAC is: the protocols' arguments assume one order of them all. */
#ifndef XAC_ATOMIC_H
#define XAC_ATOMIC_H

#include <stdint.h>

#define LD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* Raise *p to v unless it is larger already: a mark that only grows. */
static inline void xac_store_max(uint64_t *p, uint64_t v)
{
    uint64_t cur = LD(p);

    while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, 0,
                                                   __ATOMIC_SEQ_CST,
                                                   __ATOMIC_SEQ_CST))
        ;
}

#endif
