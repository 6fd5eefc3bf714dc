/* test_25_tree_aborts: the store counts the transactions xend() aborted
 * (ts_aborts, reported per process by tree_insert and tree_blocks), and
 * nothing else: not commits, not read-only transactions, not the serial
 * version. */
#include <stdint.h>
#include <stdio.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "tree.h"

#define LEN (1u << 20)

int main(void)
{
    struct ts_store s;
    tu_tmpdir();

    E(ts_open(&s, TS_XAC, ".", "aborts.db", LEN, 0));
    test_cond("a fresh store has counted no aborts", s.ts_aborts == 0);
    ts_begin(&s);
    E(xFail());
    test_cond("a failed transaction ends ABORTED", ts_end(&s) == ABORTED);
    test_cond("that abort is counted", s.ts_aborts == 1);
    ts_begin(&s);
    test_cond("the next transaction commits", ts_end(&s) == COMMITTED);
    ts_begin_query(&s);
    test_cond("a read-only transaction commits",
              ts_end_query(&s) == COMMITTED);
    test_cond("commits are not counted", s.ts_aborts == 1);
    for (int i = 0; i < 4; i++) {
        ts_begin(&s);
        E(xFail());
        (void)ts_end(&s);
    }
    test_cond("every abort is counted", s.ts_aborts == 5);
    E(ts_close(&s));

    E(ts_open(&s, TS_XAC, ".", "aborts.db", LEN, 0));
    test_cond("reopening starts the count again", s.ts_aborts == 0);
    struct tr_config cfg = {TR_BTREE, 4096, 64};
    tr_tree *t;
    unsigned char v[64] = {7};
    E(tr_create(&s, &cfg));
    E(tr_open(&s, &t));
    for (uint64_t k = 0; k < 200; k++)
        E(tr_insert(t, k * 31, v));
    test_cond("one process's inserts never abort", s.ts_aborts == 0);
    tr_close(t);
    E(ts_close(&s));

    E(ts_open(&s, TS_SERIAL, ".", "serial.db", LEN, 0));
    ts_begin(&s);
    test_cond("the serial version always commits", ts_end(&s) == COMMITTED);
    test_cond("and counts nothing", s.ts_aborts == 0);
    E(ts_close(&s));
    return test_report();
}
