/* crash.h: the crash-consistency suite, run on any store of the
 * search-tree driver (kv_driver.h).  docs/crash-consistency.md.
 *
 *   <program> crash [--kind process|power|all] [--points N] [--seed S]
 *                   [--durability durable|nondurable | --mode M]
 *                   [--tree T] [--inserts M] [--dir D] [--keep] [--quick]
 *
 * Every program of the search-tree suite takes "crash" as its first
 * argument (xb_kv_main hands it here), so a system that has a store has
 * the suite.  For each of the store's configurations in the modes asked
 * for (default: its durable modes):
 *
 *   process  a child opens the store, inserts fresh keys one transaction
 *            each and writes each key's index on a pipe once its insert
 *            returned (the acknowledgement); the parent SIGKILLs it at a
 *            random point (after a random number of acknowledgements, then
 *            a random fraction of a commit's time), reopens the store as
 *            the first process after a crash does (XB_KV_RECOVER), timed,
 *            and checks it.  A store lives for XC_ROUNDS crash points,
 *            then a fresh one is made.
 *   power    the program runs itself again under the recorder
 *            (lib/xaclab-crashrec.so, LD_PRELOAD), which writes every
 *            file-system change of a fresh store and --inserts inserts to
 *            a trace (trace.h); then each crash point is a state of the
 *            directory a power cut could leave at a random place in that
 *            trace: what was synced, plus a random prefix of each file's
 *            unsynced writes, the last one possibly torn (512-byte
 *            sectors), and a random prefix of the unsynced creates,
 *            renames and unlinks.  The state is recovered and checked the
 *            same way.
 *
 * The check, after every crash point, in a child of its own (a recovery
 * that crashes or hangs is a finding, not the end of the run):
 *   acked_lost            acknowledged inserts whose key is missing
 *   uncommitted_visible   keys visible that were never acknowledged and
 *                         were not in flight at the crash
 *   in_flight_visible     the insert in flight at the crash, visible
 *                         after it (either outcome is correct)
 *   invariant_violations  recovery failed, crashed or took over 60 s, a
 *                         visible key with a wrong value, a scan that
 *                         disagrees with the lookups, the store's own
 *                         check (check) failed
 *   recovery_time         ms to reopen (XB_KV_RECOVER), per crash point
 * Results: suite "crash-consistency", benchmark "process-crash" or
 * "power-loss", sut = store->sut, those metrics (counts are one sample,
 * the total over all crash points) plus crash_points and acked_commits.
 * Every finding is described on stderr with what reproduces it.
 */
#ifndef XC_CRASH_H
#define XC_CRASH_H

#include "kv_driver.h"

#include <stddef.h>
#include <stdint.h>

#define XC_ROUNDS 20         /* process: crash points per store */
#define XC_RECOVER_LIMIT 60  /* s: a recovery longer than this is a finding */

/* What one check found. */
struct xc_check {
    long long acked, lost, uncommitted, in_flight, violations;
    int in_flight_present; /* the in-flight key is visible */
    double recovery_ms;
    int observed; /* counters holds the recovered store's (observe) */
    struct xb_kv_counters counters;
    char why[256]; /* the first violation, in words */
};

/* What one configuration and kind found, over all its crash points. */
struct xc_tally {
    long long points, acked, lost, uncommitted, in_flight, violations;
    double *recovery_ms; /* [points] */
    long long findings;  /* crash points with a loss or a violation */
    struct xb_kv_counters counters; /* the first recovery's, for params */
};

/* Key index i -> what the check expects of it. */
enum xc_expect {
    XC_ABSENT = 0,  /* never acknowledged, not in flight */
    XC_PRESENT,     /* acknowledged (or in flight and seen after) */
    XC_EITHER       /* in flight at the crash */
};

struct xc_run {
    const struct xb_kv_store *st;
    const struct xb_kv_config *cfg;
    const char *scratch;
    long long points, inserts;
    uint64_t seed;
    const uint64_t *keys; /* key index -> key */
    size_t nkeys;
    int keep;
    int argc;       /* the program's arguments after "crash", for the */
    char **argv;    /* power-loss recording run */
    int cfg_index;
};

/* Reopen the store in dir after a crash and check keys[0..n) against
 * expect[0..n), in a child process; fills *c.  0, or -1 if the child
 * could not be started. */
int xc_check_store(const struct xc_run *run, const char *dir,
                   const unsigned char *expect, size_t n,
                   struct xc_check *c);

/* Add one crash point's check to the tally; 1 if it was a finding. */
int xc_tally_add(struct xc_tally *t, const struct xc_check *c);

/* The kinds: fill the tally; 0, or -1 when the run could not go on (said
 * on stderr). */
int xc_process(const struct xc_run *run, struct xc_tally *t);
int xc_power(const struct xc_run *run, struct xc_tally *t);

/* The power-loss recording run (the program started again under the
 * recorder): make the store in dir, insert keys[first..first+n) with
 * marks.  Its exit status. */
int xc_record(const struct xb_kv_store *st, const struct xb_kv_config *cfg,
              const char *dir, const uint64_t *keys, long long n);

int xb_crash_main(int argc, char **argv, const struct xb_kv_store *st);

#endif
