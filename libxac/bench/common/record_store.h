/* record_store.h: the record file of concurrency_records (seeds 004:
 * Stevens and Rago, APUE 2nd ed., section 20.9), and its operations under
 * three kinds of locking.  bench/concurrency_records.c is the driver: the
 * processes, their workload, the transactions and the results
 * (docs/benchmarks-records.md).
 *
 * The store is one file: a header (free-list head and 137 hash-chain
 * heads, APUE's default hash size) and fixed 128-byte record slots from
 * offset 4096, each with a key, a version, a length and a checksum.  A
 * store pops a slot from the free list and links it at the head of its
 * chain; a replace rewrites the slot in place; a delete unlinks it, clears
 * its key and pushes it on the free list.
 *
 * A struct rs reaches the file through pread/pwrite (fd), or as memory
 * when base is set (a LIBXAC segment: the caller wraps each operation in a
 * transaction).  Its locking:
 *   RS_NOLOCK  none
 *   RS_COARSE  fcntl write lock on the whole file for a store or delete,
 *              read lock for a fetch (APUE section 20.6)
 *   RS_FINE    fcntl byte-range locks: one byte per hash chain (read lock
 *              to fetch, write lock to change it) and one for the free
 *              list, always taken after the chain's (APUE section 20.8)
 *
 * Every walk is bounded, so a corrupt file (what no locking leads to)
 * cannot hang or crash a process: a pointer out of range or a chain longer
 * than the store (a cycle) is an index error.  A failed pread, pwrite or
 * fcntl ends the process (_exit(1)) after a sentence on stderr.
 */
#ifndef XB_RECORD_STORE_H
#define XB_RECORD_STORE_H

#include <stddef.h>
#include <stdint.h>

#define RS_SLOT 128u
#define RS_SLOT_BASE 4096u
#define RS_DATA_MAX (RS_SLOT - 24u)
#define RS_DATA_MIN 16u

enum rs_locking { RS_NOLOCK, RS_COARSE, RS_FINE };

struct rs_slot {
    uint32_t sl_next; /* next slot in the chain or free list; 0 = none */
    uint32_t sl_len;  /* bytes of sl_data in use */
    uint64_t sl_key;  /* 0 in a free slot */
    uint32_t sl_sum;  /* rs_sum() over key, version, length and data */
    uint32_t sl_ver;
    unsigned char sl_data[RS_DATA_MAX];
};

struct rs {
    int fd;              /* pread/pwrite on it, unless base is set */
    unsigned char *base; /* the file as memory */
    uint32_t nslots;
    enum rs_locking locking;
    /* Slots read by chain walks, for the caller to count per operation:
     * the work of an operation grows with the records on its chain, that
     * is with every process's records, not with its own alone. */
    unsigned long long slots_read;
};

/* Bytes of a file of nslots slots, rounded up to whole pages. */
size_t rs_file_bytes(uint32_t nslots, size_t page);

/* Write an empty store of nslots slots, len bytes, to path (every slot on
 * the free list); ends the program on failure. */
void rs_create(const char *path, uint32_t nslots, size_t len);

/* The FNV-1a checksum of a record's key, version, length and data. */
uint32_t rs_sum(uint64_t key, uint32_t ver, uint32_t len,
                const unsigned char *data);

/* Fetch: 1 found (contents in *sl), 0 not found, -1 index error. */
int rs_fetch(struct rs *s, uint64_t key, struct rs_slot *sl);

/* Store a new record: 0 done, 1 key already there, -1 index error, -2 no
 * free slot. */
int rs_insert(struct rs *s, const struct rs_slot *rec);

/* Replace an existing record in place: 0 done, 1 not found, -1 index. */
int rs_replace(struct rs *s, const struct rs_slot *rec);

/* Delete: 0 done, 1 not found, -1 index error. */
int rs_delete(struct rs *s, uint64_t key);

/* After every process is done: every chain must be empty and every slot
 * on the free list exactly once.  The number of inconsistencies (records
 * nobody deleted, slots on two lists, lost slots, bad pointers). */
long long rs_final_check(const char *path, uint32_t nslots);

#endif
