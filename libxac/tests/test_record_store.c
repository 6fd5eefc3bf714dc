/* test_record_store: the record file of concurrency_records
 * (bench/common/record_store.h): store, fetch, replace and delete through
 * pread/pwrite and through memory, a full free list, the final check on a
 * clean, a dirty and a damaged file, and two processes under fine locking
 * leaving a consistent file. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record_store.h"
#include "support/testhelp.h"
#include "support/tutil.h"

#define NSLOTS 64u
#define PATH "records.db"

static struct rs_slot record(uint64_t key, uint32_t ver)
{
    struct rs_slot sl;
    memset(&sl, 0, sizeof sl);
    sl.sl_key = key;
    sl.sl_ver = ver;
    sl.sl_len = RS_DATA_MIN + ver;
    memset(sl.sl_data, (int)(key + ver), sl.sl_len);
    sl.sl_sum = rs_sum(key, ver, sl.sl_len, sl.sl_data);
    return sl;
}

static int same(const struct rs_slot *a, const struct rs_slot *b)
{
    return a->sl_key == b->sl_key && a->sl_ver == b->sl_ver &&
           a->sl_len == b->sl_len && a->sl_sum == b->sl_sum &&
           memcmp(a->sl_data, b->sl_data, a->sl_len) == 0;
}

static void test_operations(size_t len)
{
    struct rs s = {.fd = open(PATH, O_RDWR), .nslots = NSLOTS,
                   .locking = RS_COARSE};
    struct rs_slot a = record(1001, 1), a2 = record(1001, 2), b = record(77, 1);
    struct rs_slot got;

    test_cond("a new record is stored", rs_insert(&s, &a) == 0);
    test_cond("a second store of its key finds it there",
              rs_insert(&s, &a) == 1);
    test_cond("fetch returns what was stored",
              rs_fetch(&s, 1001, &got) == 1 && same(&got, &a));
    unsigned long long walked = s.slots_read;
    (void)rs_fetch(&s, 1001, &got);
    test_cond("a fetch of the one record on its chain reads one slot",
              s.slots_read == walked + 1);
    test_cond("replace rewrites it", rs_replace(&s, &a2) == 0 &&
              rs_fetch(&s, 1001, &got) == 1 && same(&got, &a2));
    test_cond("a key never stored is not found",
              rs_fetch(&s, 77, &got) == 0 && rs_replace(&s, &b) == 1);
    test_cond("the file is dirty while it holds a record",
              rs_final_check(PATH, NSLOTS) == 1);
    test_cond("delete removes it", rs_delete(&s, 1001) == 0 &&
              rs_fetch(&s, 1001, &got) == 0 && rs_delete(&s, 1001) == 1);
    test_cond("and the file is clean again", rs_final_check(PATH, NSLOTS) == 0);

    /* The same file as memory, as the libxac variant reaches it. */
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
                            s.fd, 0);
    struct rs mem = {.fd = -1, .base = m, .nslots = NSLOTS,
                     .locking = RS_NOLOCK};
    test_cond("stored through memory", rs_insert(&mem, &a) == 0);
    test_cond("fetched through pread",
              rs_fetch(&s, 1001, &got) == 1 && same(&got, &a));
    int stored = 0, full = 0;
    for (uint64_t k = 1; k <= NSLOTS + 1; k++) {
        struct rs_slot r = record(k, 1);
        int rc = rs_insert(&mem, &r);
        stored += rc == 0;
        full += rc == -2;
    }
    test_cond("every slot is used once, then the free list is empty",
              stored == (int)NSLOTS - 1 && full == 2);
    munmap(m, len);

    /* Slot 1 holds the first record; point it outside the file. */
    uint32_t bad = NSLOTS + 9;
    (void)pwrite(s.fd, &bad, sizeof bad, RS_SLOT_BASE);
    test_cond("the final check notices a pointer out of range",
              rs_final_check(PATH, NSLOTS) > (long long)NSLOTS);
    close(s.fd);
}

/* A process's share under fine locking: store, fetch, delete its own
 * records; returns the errors it saw. */
static int own_records(uint64_t base)
{
    struct rs s = {.fd = open(PATH, O_RDWR), .nslots = NSLOTS,
                   .locking = RS_FINE};
    struct rs_slot got;
    int errors = 0;
    for (int round = 0; round < 50; round++) {
        for (uint64_t k = 0; k < 20; k++) {
            struct rs_slot r = record(base + k, (uint32_t)round % 7 + 1);
            errors += rs_insert(&s, &r) != 0;
        }
        for (uint64_t k = 0; k < 20; k++)
            errors += rs_fetch(&s, base + k, &got) != 1 ||
                      got.sl_key != base + k;
        for (uint64_t k = 0; k < 20; k++)
            errors += rs_delete(&s, base + k) != 0;
    }
    close(s.fd);
    return errors;
}

static void child_share(void *arg)
{
    (void)arg;
    if (own_records(1u << 20) != 0)
        _exit(1);
}

static void test_two_processes(size_t len)
{
    rs_create(PATH, NSLOTS, len);
    pid_t pid = fork();
    if (pid == 0) {
        child_share(NULL);
        _exit(0);
    }
    int errors = own_records(1u << 21);
    test_cond("two processes under fine locking see no errors",
              errors == 0 && tu_reap(pid));
    test_cond("and leave a consistent file",
              rs_final_check(PATH, NSLOTS) == 0);
}

int main(void)
{
    tu_tmpdir();
    size_t len = rs_file_bytes(NSLOTS, 4096);
    test_cond("the file is whole pages holding every slot",
              len % 4096 == 0 && len >= RS_SLOT_BASE + NSLOTS * RS_SLOT);
    rs_create(PATH, NSLOTS, len);
    test_cond("a new file is clean", rs_final_check(PATH, NSLOTS) == 0);
    test_operations(len);
    test_two_processes(len);
    return test_report();
}
