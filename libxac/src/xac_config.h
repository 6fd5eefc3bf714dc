/* xac_config.h: the XAC_* environment variables, one table for all
 * (xac_config.c).  xInit reads every one of them, whatever the mode, before
 * it changes any state; include/xac.h ("Environment") is their manual.
 */
#ifndef XAC_CONFIG_H
#define XAC_CONFIG_H

#include <stddef.h>

/* The values read, one field per variable (unset or empty: the default).
 * Flags are 0 or 1; enumerations are the index of the choice, which is
 * the matching XAC_POLICY_* or XAC_SYNC_* value. */
struct xcfg {
    unsigned long long cf_keep_pages;      /* XAC_KEEP_PAGES */
    unsigned long long cf_uffd;            /* XAC_UFFD */
    unsigned long long cf_pte;             /* XAC_PTE */
    unsigned long long cf_reuse;           /* XAC_REUSE */
    unsigned long long cf_share;           /* XAC_SHARE */
    unsigned long long cf_working_mib;     /* XAC_WORKING_MIB */
    unsigned long long cf_policy;          /* XAC_POLICY */
    unsigned long long cf_backoff_us;      /* XAC_BACKOFF_US */
    unsigned long long cf_writers;         /* XAC_WRITERS */
    unsigned long long cf_turn_us;         /* XAC_TURN_US */
    unsigned long long cf_escalate;        /* XAC_ESCALATE */
    unsigned long long cf_lock_spin_us;    /* XAC_LOCK_SPIN_US */
    unsigned long long cf_handoff_us;      /* XAC_HANDOFF_US */
    unsigned long long cf_sync;            /* XAC_SYNC */
    unsigned long long cf_log_limit;       /* XAC_LOG_LIMIT, bytes */
    unsigned long long cf_commit_delay_us; /* XAC_COMMIT_DELAY_US */
    unsigned long long cf_log_direct;      /* XAC_LOG_DIRECT */
    unsigned long long cf_lead_by_cpu;     /* XAC_LEAD_BY_CPU */
};

enum xcfg_kind {
    XCFG_FLAG,  /* 0 or 1 */
    XCFG_ENUM,  /* one of cv_choices */
    XCFG_RANGE, /* a decimal whole number in [cv_min, cv_max] */
    XCFG_SIZE   /* bytes, with an optional K, M or G suffix (binary), in
                 * [cv_min, cv_max] */
};

struct xcfg_var {
    const char *cv_name;
    enum xcfg_kind cv_kind;
    size_t cv_off;                 /* of the value in struct xcfg */
    const char *const *cv_choices; /* XCFG_ENUM: NULL-terminated; the
                                    * first is the default */
    unsigned long long cv_min, cv_max;
    unsigned long long cv_def;
    const char *cv_doc;            /* one line: what it sets */
};

extern const struct xcfg_var xcfg_vars[];
extern const size_t xcfg_nvars;

/* Read every variable of the table into *cf.  0, or XAC_EINVAL with msg
 * (n bytes) set to a sentence that names the first malformed variable,
 * its value and the values it takes.  Reads nothing but the environment
 * and changes nothing but *cf and msg. */
int xcfg_read(struct xcfg *cf, char *msg, size_t n);

#endif
